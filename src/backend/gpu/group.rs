//! The circuits of one call proved together on a GPU whose points stream.
//! H's points go up once per batch of circuits whose h fit on the GPU
//! together (their H steps one after another, each h left there), and
//! each chunk of the witness queries' points goes up once and meets every
//! circuit's aux values, each chunk of which goes up once for the four
//! aux terms. A call of k circuits so moves the witness queries' points
//! (three quarters of the parameters) once rather than k times.
//!
//! Values not yet known to be below the modulus are checked as they go up
//! (a, b, c in the H step, aux with the witness MSMs); only the few inputs
//! are checked on the CPU.

use super::resident::{self, KeptPoints};
use super::{lanes, memory, Curve, ScalarsAt};
use crate::backend::gpu;
use crate::backend::{cpu, Call};
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{Assignment, Queries, Query, QuerySums, Term, WitnessSums};
use crate::math::{Fr, G1, G2};
use crate::params::Parameters;
use crate::stats::{Stage, STATS};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

/// The five sums of each of `circuits` (index in the call, assignment) on
/// GPU `gpu`, whose parameters are not resident, in the GPU's lane.
/// Circuits are proved together with those whose terms are theirs (the
/// same sizes and density bitmaps).
pub fn sums(call: &Call, circuits: &[(usize, &Assignment)], gpu: usize) -> Result<Vec<QuerySums>> {
    // Classes of circuits sharing their terms, as positions in `circuits`.
    let mut classes: Vec<Vec<usize>> = Vec::new();
    for (k, (_, w)) in circuits.iter().enumerate() {
        match classes
            .iter_mut()
            .find(|class| circuits[class[0]].1.shares_terms(w))
        {
            Some(class) => class.push(k),
            None => classes.push(vec![k]),
        }
    }
    let mut sums: Vec<Option<QuerySums>> = vec![None; circuits.len()];
    for class in classes {
        let members: Vec<(usize, &Assignment)> = class.iter().map(|&k| circuits[k]).collect();
        let proved = {
            let _lane = lanes::gpu_lane(gpu);
            // A bad value in a later class may come before this one's.
            sharing_terms(call, &members, gpu).map_err(|e| in_check_order(call, circuits, e))?
        };
        if proved.len() != class.len() {
            return Err(Error::new(ErrorKind::Gpu, "internal: a group's sums are missing"));
        }
        for (k, s) in class.into_iter().zip(proved) {
            sums[k] = Some(s);
        }
    }
    Ok(sums.into_iter().flatten().collect())
}

/// `sums` of circuits that share their terms, in the GPU's lane (the
/// caller holds it). MSMs without room on the GPU (other work holds its
/// memory) run on the CPU.
/// A bad value is named as the CPU's check names it (`in_check_order`).
pub(super) fn sharing_terms(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
) -> Result<Vec<QuerySums>> {
    sums_checked_on_the_way(call, circuits, gpu).map_err(|e| in_check_order(call, circuits, e))
}

/// `sharing_terms`, the values checked as they go up (the inputs first,
/// then a, b, c with each H step, then aux chunk by chunk).
fn sums_checked_on_the_way(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
) -> Result<Vec<QuerySums>> {
    if !call.values_checked {
        for &(index, w) in circuits {
            w.check_inputs_reduced(index)?;
        }
    }
    let Some(&(_, first)) = circuits.first() else {
        return Ok(Vec::new());
    };
    let kept = resident::kept(call.params, gpu, || work_beside_kept(call, first, gpu));
    let kept = &*kept;
    let (h, witness) = match plan(call, circuits, gpu, kept)? {
        Plan::Together { h_msm, witness } => {
            log::debug!(
                "GPU {gpu}: H side and witness MSMs of {} circuits at once ({} MiB for H's MSM beside h, {} MiB for \
                 the witness MSMs)",
                circuits.len(),
                h_msm >> 20,
                witness >> 20
            );
            together(call, circuits, gpu, kept, (h_msm, witness))?
        }
        Plan::InTurn => {
            let go_on = || call.check_cancelled();
            let h = h_sums(call, circuits, gpu, kept, None, &go_on)?;
            (h, witness_or_cpu(call, circuits, gpu, kept, &go_on)?)
        }
    };
    if h.len() != circuits.len() || witness.len() != circuits.len() {
        return Err(Error::new(
            ErrorKind::Gpu,
            "internal: a sum of a group is missing",
        ));
    }
    Ok(witness
        .into_iter()
        .zip(h)
        .map(|(sums, h)| sums.with_h(h))
        .collect())
}

/// The smallest chunk of aux values the witness MSMs run in beside the H
/// side; with less room than that takes they wait for it instead.
const LEAST_CHUNK_BESIDE_H: usize = 1 << 20;

/// How a group's GPU stage uses the GPU's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plan {
    /// The H side (circuit by circuit: its H step, then H's MSM with
    /// `h_msm` bytes beside h) and the witness MSMs (within `witness`
    /// bytes) at once, on threads and streams of their own: the H step is
    /// its upload of a, b and c, which leaves the GPU's cores to the
    /// witness MSMs, and the chunks of both sides' points go up while the
    /// other side computes.
    Together { h_msm: usize, witness: usize },
    /// The H side, then the witness MSMs, each with all the room.
    InTurn,
}

/// The plan for `circuits` on GPU `gpu`: together when the room holds one
/// circuit's H side (its H step, or its h and H's MSM in chunks of a
/// sixteenth of the domain) and, in the rest, the witness MSMs in chunks of
/// at least `LEAST_CHUNK_BESIDE_H` aux values; each side keeps a slack of
/// its own.
fn plan(call: &Call, circuits: &[(usize, &Assignment)], gpu: usize, kept: &KeptPoints) -> Result<Plan> {
    let Some(&(_, first)) = circuits.first() else {
        return Ok(Plan::InTurn);
    };
    let HSide {
        bytes: h_side,
        made_by_step,
    } = h_side(call, gpu)?;
    let Some(witness) = memory::room(gpu).checked_sub(h_side) else {
        return Ok(Plan::InTurn);
    };
    let m = call.domain.m;
    let n = first.aux.len();
    let (g1, g2) = aux_terms(call.params, first, kept);
    let chunk = gpu::shared_chunk_within(witness, gpu, &g1, &g2, n);
    let fits = gpu::shared_chunk_bytes(gpu, &g1, &g2, n, chunk).saturating_add(memory::SLACK) <= witness;
    Ok(if fits && chunk >= n.min(LEAST_CHUNK_BESIDE_H) {
        Plan::Together {
            h_msm: h_side - made_by_step - FR * m,
            witness,
        }
    } else {
        Plan::InTurn
    })
}

/// Bytes of one scalar (Fr).
const FR: usize = std::mem::size_of::<Fr>();

/// One circuit's H side on a GPU whose points stream.
struct HSide {
    /// Its device bytes, a slack included: its H step, or its h and H's
    /// MSM in chunks of a sixteenth of the domain beside what the step
    /// leaves, whichever is larger.
    bytes: usize,
    /// What the H step leaves allocated beyond h: the twiddles it makes on
    /// a GPU's first H step of this size (the few tables are counted too).
    made_by_step: usize,
}

fn h_side(call: &Call, gpu: usize) -> Result<HSide> {
    let log_m = call.domain.log_m;
    let m = call.domain.m;
    let made_by_step = gpu::h_step_bytes(gpu, log_m, None)?;
    let h_chunk = (m / 16).max(memory::MIN_STREAM_CHUNK).min(m);
    let h_msm_least = super::streamed::over_device_scalars_bytes::<G1>(gpu, h_chunk);
    let bytes = gpu::h_step_bytes(gpu, log_m, Some(gpu::HostVectors::Two))?
        .max(made_by_step + FR * m + h_msm_least)
        .saturating_add(memory::SLACK);
    Ok(HSide { bytes, made_by_step })
}

/// The aux values per chunk of the witness MSMs that point vectors kept on
/// the GPU leave room for.
const WITNESS_CHUNK_BESIDE_KEPT: usize = 1 << 22;

/// The device bytes the streamed path keeps for itself when it decides
/// which point vectors stay on GPU `gpu` (`resident::kept`): one circuit's
/// H side and, beside it, the witness MSMs of `first`'s shape in chunks of
/// `WITNESS_CHUNK_BESIDE_KEPT` (their points streamed); everything when it
/// cannot say.
fn work_beside_kept(call: &Call, first: &Assignment, gpu: usize) -> usize {
    let Ok(h) = h_side(call, gpu) else {
        return usize::MAX;
    };
    let n = first.aux.len();
    let none = KeptPoints::default();
    let (g1, g2) = aux_terms(call.params, first, &none);
    let chunk = n.min(WITNESS_CHUNK_BESIDE_KEPT);
    h.bytes
        .saturating_add(gpu::shared_chunk_bytes(gpu, &g1, &g2, n, chunk))
        .saturating_add(memory::SLACK)
}

/// Which side of `together` failed first, so that its error is the one
/// returned (the other side's is only that it was stopped).
const NEITHER: u8 = 0;
const H_SIDE: u8 = 1;
const WITNESS_SIDE: u8 = 2;

/// The H side and the witness MSMs of `circuits` at once (`Plan::Together`):
/// the witness MSMs on a thread of their own within `witness` bytes, the H
/// side here with `h_msm` bytes for H's MSM beside h. A side that fails
/// stops the other; a side out of memory beside the other (other work took
/// the room since the plan) runs again on its own after it.
fn together(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
    kept: &KeptPoints,
    (h_msm, witness): (usize, usize),
) -> Result<(Vec<G1>, Vec<WitnessSums>)> {
    let failed = AtomicU8::new(NEITHER);
    let go_on = || {
        call.check_cancelled()?;
        match failed.load(Ordering::Relaxed) {
            NEITHER => Ok(()),
            _ => Err(Error::new(
                ErrorKind::Cancelled,
                "stopped: the other side of the GPU stage failed",
            )),
        }
    };
    // Out of memory is not a failure here: the side runs again below.
    let note = |side: u8, error: Option<&Error>| {
        if error.is_some_and(|e| e.kind != ErrorKind::OutOfMemory) {
            let _ = failed.compare_exchange(NEITHER, side, Ordering::Relaxed, Ordering::Relaxed);
        }
    };
    let (h, shared) = std::thread::scope(|scope| {
        let shared = scope.spawn(|| {
            let started = Instant::now();
            let sums = witness_sums(call, circuits, gpu, kept, Some(witness), &go_on);
            STATS.add(Stage::SharedMsm, started.elapsed());
            note(WITNESS_SIDE, sums.as_ref().err());
            sums
        });
        let h = h_sums(call, circuits, gpu, kept, Some(h_msm), &go_on);
        note(H_SIDE, h.as_ref().err());
        let shared = shared.join().unwrap_or_else(|_| {
            Err(Error::new(
                ErrorKind::Panic,
                "internal error: the witness MSMs' thread panicked",
            ))
        });
        (h, shared)
    });
    match failed.load(Ordering::Relaxed) {
        H_SIDE => {
            return Err(h
                .err()
                .unwrap_or_else(|| Error::new(ErrorKind::Gpu, "internal: H side")))
        }
        WITNESS_SIDE => {
            return Err(shared
                .err()
                .unwrap_or_else(|| Error::new(ErrorKind::Gpu, "internal: witness side")))
        }
        _ => {}
    }
    let go_on = || call.check_cancelled();
    let h = match h {
        Err(e) if e.kind == ErrorKind::OutOfMemory => {
            log::warn!("GPU {gpu}: H side out of memory beside the witness MSMs ({e}); again on its own");
            h_sums(call, circuits, gpu, kept, None, &go_on)?
        }
        other => other?,
    };
    let witness = match shared {
        Err(e) if e.kind == ErrorKind::OutOfMemory => {
            log::warn!("GPU {gpu}: witness MSMs out of memory beside the H side ({e}); again on their own");
            witness_or_cpu(call, circuits, gpu, kept, &go_on)?
        }
        other => other?,
    };
    Ok((h, witness))
}

/// The witness sums of `circuits` on GPU `gpu` with all its room, or on the
/// CPU when that is out of memory (other work holds the GPU's).
fn witness_or_cpu(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
    kept: &KeptPoints,
    go_on: &dyn Fn() -> Result<()>,
) -> Result<Vec<WitnessSums>> {
    let started = Instant::now();
    match witness_sums(call, circuits, gpu, kept, None, go_on) {
        Err(e) if e.kind == ErrorKind::OutOfMemory => {
            log::warn!("GPU {gpu}: witness MSMs out of memory ({e}); running them on the CPU");
            let started = Instant::now();
            let sums = circuits
                .iter()
                .map(|&(index, w)| {
                    if !call.values_checked {
                        w.check_aux_reduced(index)?;
                    }
                    cpu::witness_sums(call.params, w)
                })
                .collect::<Result<Vec<_>>>();
            STATS.add(Stage::CpuMsm, started.elapsed());
            sums
        }
        other => {
            STATS.add(Stage::SharedMsm, started.elapsed());
            other
        }
    }
}

/// In place of `e`, a value not below the modulus that the checks on the
/// way up found (in the order of the uploads: inputs, then a, b, c of a
/// batch, then aux chunk by chunk), the first the CPU's check finds in
/// `circuits` (a, b, c, inputs, aux of each in turn), so that the error
/// names the same value on every path.
fn in_check_order(call: &Call, circuits: &[(usize, &Assignment)], e: Error) -> Error {
    if call.values_checked || e.kind != ErrorKind::InvalidArgument {
        return e;
    }
    circuits
        .iter()
        .find_map(|&(index, w)| w.check_reduced(index).err())
        .unwrap_or(e)
}

/// The witness sums of circuits that share their terms, over streamed
/// points: the aux terms (L, A's, B_G1's and B_G2's) in one pass, each
/// chunk of a circuit's aux values going up once for the four (checked on
/// the way unless the call's values are) and each chunk of points once for
/// all the circuits; the few inputs' terms each on their own.
/// With `room`, within that many bytes of the GPU's memory (the H side
/// running beside them); `go_on` runs between chunks (a cancelled call, or
/// a failed H side beside them, stops there).
fn witness_sums(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
    kept: &KeptPoints,
    room: Option<usize>,
    go_on: &dyn Fn() -> Result<()>,
) -> Result<Vec<WitnessSums>> {
    let params = call.params;
    let first = circuits[0].1;
    let queries = Queries::of(first);
    let density = |t: &Term| t.mask.map(|mask| first.mask(mask));
    let g1_aux = aux_g1_terms(&queries);
    let g2_aux = [queries.b_g2[1]];
    let aux: Vec<gpu::CheckedScalars> = circuits
        .iter()
        .map(|&(index, w)| gpu::CheckedScalars {
            values: w.aux,
            check: gpu::Checked::of((!call.values_checked).then_some(index), "aux"),
        })
        .collect();
    let (g1, g2) = aux_terms(params, first, kept);
    let room = || room.unwrap_or_else(|| memory::room(gpu));
    let chunk = gpu::shared_chunk_within(room(), gpu, &g1, &g2, first.aux.len());
    let mut shared = gpu::streamed_msms_sharing_scalars_in_chunks(gpu, &g1, &g2, &aux, go_on, chunk)?;
    // Each aux term's sums, taken once by the combination below.
    let mut take = |t: &Term| -> Option<Vec<G1>> {
        let k = g1_aux.iter().position(|a| a == t)?;
        Some(std::mem::take(&mut shared.g1[k]))
    };
    let mut b_g2_aux = Some(std::mem::take(&mut shared.g2[0]));
    let inputs = |t: &Term| -> Vec<&[Fr]> { circuits.iter().map(|(_, w)| w.vector(t.vector, &[])).collect() };
    queries.witness_sums_of_many(
        |t| match take(t) {
            Some(sums) => Ok(sums),
            None => {
                go_on()?;
                let points = &t.query.g1_points(params)[t.offset..];
                let scalars = inputs(t);
                let n = scalars.first().map_or(0, |s| s.len());
                let chunk = memory::stream_chunk_within(room(), gpu, Curve::G1, n, 96, t.mask.is_some());
                gpu::streamed_msms_in_chunks::<G1>(gpu, points, &scalars, density(t), chunk)
            }
        },
        |t| match (t == &g2_aux[0]).then(|| b_g2_aux.take()).flatten() {
            Some(sums) => Ok(sums),
            None => {
                go_on()?;
                let scalars = inputs(t);
                let n = scalars.first().map_or(0, |s| s.len());
                let chunk = memory::stream_chunk_within(room(), gpu, Curve::G2, n, 192, t.mask.is_some());
                gpu::streamed_msms_in_chunks::<G2>(gpu, &params.b_g2[t.offset..], &scalars, density(t), chunk)
            }
        },
    )
}

/// The G1 queries that meet the aux values in the witness MSMs: L, A's and
/// B_G1's aux parts (B_G2's is the G2 one).
fn aux_g1_terms(queries: &Queries) -> [Term; 3] {
    [queries.l, queries.a[1], queries.b_g1[1]]
}

/// The points and densities of the aux terms of `first` (and of every
/// circuit sharing its terms): L, A, B_G1 in G1, B_G2 in G2, each with its
/// copy on the GPU where `kept` has one.
fn aux_terms<'a>(
    params: &'a Parameters,
    first: &'a Assignment,
    kept: &'a KeptPoints,
) -> ([gpu::HostTerm<'a, G1>; 3], [gpu::HostTerm<'a, G2>; 1]) {
    let queries = Queries::of(first);
    let density = |t: &Term| t.mask.map(|mask| first.mask(mask));
    let resident = |t: &Term| kept.of(t.query).map(|copy| (copy, t.offset));
    let g1 = aux_g1_terms(&queries).map(|t| gpu::HostTerm {
        points: &t.query.g1_points(params)[t.offset..],
        density: density(&t),
        resident: resident(&t),
    });
    let g2 = [queries.b_g2[1]].map(|t| gpu::HostTerm {
        points: &params.b_g2[t.offset..],
        density: density(&t),
        resident: resident(&t),
    });
    (g1, g2)
}

/// Σ h·H of each circuit, in batches of as many circuits as the GPU holds
/// h for beside the next H step and a useful share of H's MSM (at least
/// one): their H steps (a, b, c checked on the way unless the call's
/// values are), each h left on the GPU, then one MSM over H's streamed
/// points for the batch, so that each chunk of H's points goes up once
/// per batch and h never comes back to the host. An H step without room
/// (other work took it since the estimate) closes the batch and waits for
/// the next; without room for the MSM, the batch's h come back and the
/// CPU runs it.
///
/// With `h_msm` (the witness MSMs running beside, `Plan::Together`), a
/// batch is one circuit, H's MSM plans with that many bytes beside h, and
/// out of memory is returned (the caller runs the side again on its own);
/// `go_on` runs between the steps (a cancelled call, or a failed side
/// beside, stops there).
fn h_sums(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
    kept: &KeptPoints,
    h_msm: Option<usize>,
    go_on: &dyn Fn() -> Result<()>,
) -> Result<Vec<G1>> {
    let params = call.params;
    let mut sums = Vec::with_capacity(circuits.len());
    let mut pending = circuits.iter().peekable();
    while pending.peek().is_some() {
        let started = Instant::now();
        let mut batch: Vec<gpu::DeviceScalars> = Vec::new();
        while let Some(&&(index, w)) = pending.peek() {
            if !batch.is_empty() && (h_msm.is_some() || !room_for_another_h(call, gpu)?) {
                break;
            }
            go_on()?;
            // Left to the constraints, a, b, c are made here, on the host:
            // the streamed path keeps no aux values on the GPU.
            let products = w.host_products()?;
            let [a, b, c] = match &products {
                Some([a, b, c]) => [&a[..], b, c],
                None => [w.a, w.b, w.c],
            };
            // In two vectors: memory is short where the points stream.
            let abc = gpu::Abc::Host {
                a,
                b,
                c,
                check: (!call.values_checked).then_some(index),
                vectors: gpu::HostVectors::Two,
            };
            match gpu::quotient_on_device(gpu, call.domain, abc) {
                Err(e) if e.kind == ErrorKind::OutOfMemory && !batch.is_empty() => {
                    log::debug!(
                        "circuit {index}: no room for its H step beside {} h ({e})",
                        batch.len()
                    );
                    break;
                }
                Err(e) => return Err(e),
                Ok((h, t)) => {
                    log::debug!(
                        "circuit {index}: GPU H: upload {:.1} ms, upload+compute {:.1} ms",
                        t.upload_ms,
                        t.total_ms
                    );
                    batch.push(h);
                    pending.next();
                }
            }
        }
        let h_done = Instant::now();
        STATS.add(Stage::GpuH, h_done - started);
        log::debug!(
            "GPU {gpu}: H's MSM over streamed points for a batch of {} circuits",
            batch.len()
        );
        go_on()?;
        // H has one point fewer than the domain: h's last value meets none.
        let m = call.domain.m;
        let room = h_msm.unwrap_or_else(|| memory::room(gpu));
        let msm = match kept.of(Query::H) {
            Some(points) => {
                let chunk = memory::largest_chunk_within(room, m, |chunk| {
                    gpu::msm_bytes(gpu, Curve::G1, chunk, ScalarsAt::DeviceShared, false)
                        .unwrap_or(usize::MAX)
                });
                gpu::msms_over_device_points_and_scalars::<G1>(points, &batch, chunk)
            }
            None => {
                let chunk = memory::largest_chunk_within(room, m, |chunk| {
                    super::streamed::over_device_scalars_bytes::<G1>(gpu, chunk)
                });
                gpu::streamed_msms_over_device_scalars_in_chunks::<G1>(gpu, &params.h, &batch, chunk)
            }
        };
        match msm {
            // Beside the witness MSMs, the side runs again on its own instead.
            Err(e) if e.kind == ErrorKind::OutOfMemory && h_msm.is_none() => {
                log::warn!(
                    "GPU {gpu}: H's MSM for {} circuits out of memory ({e}); running it on the CPU",
                    batch.len()
                );
                for h in &batch {
                    sums.push(cpu::msm::dense_msm(&params.h, &h.to_host()?));
                }
            }
            other => sums.extend(other?),
        }
        STATS.add(Stage::MsmH, h_done.elapsed());
    }
    Ok(sums)
}

/// Whether GPU `gpu` has room, beside the h it holds now, for another H
/// step and then for H's MSM over streamed chunks of a sixteenth of the
/// domain (smaller chunks cost more than another pass over H's points;
/// never below the smallest streamed chunk).
fn room_for_another_h(call: &Call, gpu: usize) -> Result<bool> {
    let log_m = call.domain.log_m;
    let m = 1usize << log_m;
    let step = gpu::h_step_bytes(gpu, log_m, Some(gpu::HostVectors::Two))?;
    let chunk = (m / 16).max(memory::MIN_STREAM_CHUNK).min(m);
    let msm = super::streamed::over_device_scalars_bytes::<G1>(gpu, chunk);
    // The next h takes a scalar per constraint after its step.
    Ok(memory::fits(
        gpu,
        step.max((std::mem::size_of::<Fr>() * m).saturating_add(msm)),
        "another h in H's batch",
    ))
}
