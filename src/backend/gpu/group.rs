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
    let h = h_sums(call, circuits, gpu, kept)?;
    let witness = witness_or_cpu(call, circuits, gpu, kept)?;
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

/// The aux values per chunk the witness MSMs need room for beside point
/// vectors kept on the GPU: in smaller chunks they slow down much more than
/// the uploads the kept vectors save (docs/decisions.md).
const WITNESS_CHUNKS_BESIDE_KEPT: usize = 4;

/// The device bytes the streamed path keeps for itself when it decides
/// which point vectors stay on GPU `gpu` (`resident::kept`), its slack
/// included: the H side (one circuit's H step in three vectors, then h and
/// H's MSM; or an H step in two vectors beside another circuit's h and H's
/// MSM, which saves more than a kept vector), or the witness MSMs of
/// `first`'s shape in chunks of a quarter of its aux values (their points
/// streamed) beside the tables the first H step leaves for good, whichever
/// is larger; everything when it cannot say.
fn work_beside_kept(call: &Call, first: &Assignment, gpu: usize) -> usize {
    let log_m = call.domain.log_m;
    let (Ok(alone), Ok(beside), Ok(tables)) = (
        memory::h_side(gpu, log_m, Some(gpu::HostVectors::Three)),
        step_beside_msm_bytes(call, gpu, &KeptPoints::default()),
        gpu::h_step_bytes(gpu, log_m, None),
    ) else {
        return usize::MAX;
    };
    let h = alone.max(beside.saturating_add(h_bytes(call)));
    let n = first.aux.len();
    let none = KeptPoints::default();
    let (g1, g2) = aux_terms(call.params, first, &none);
    let chunk = n.div_ceil(WITNESS_CHUNKS_BESIDE_KEPT);
    h.max(tables.saturating_add(gpu::shared_chunk_bytes(gpu, &g1, &g2, n, chunk)))
        .saturating_add(memory::SLACK)
}

/// The witness sums of `circuits` on GPU `gpu` with all its room, or on the
/// CPU when that is out of memory (other work holds the GPU's).
fn witness_or_cpu(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
    kept: &KeptPoints,
) -> Result<Vec<WitnessSums>> {
    let started = Instant::now();
    match witness_sums(call, circuits, gpu, kept) {
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
/// all the circuits (their copies read where `kept` has them); the few
/// inputs' terms each on their own.
fn witness_sums(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
    kept: &KeptPoints,
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
    let mut shared = gpu::streamed_msms_sharing_scalars(gpu, &g1, &g2, &aux, &|| call.check_cancelled())?;
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
                call.check_cancelled()?;
                let points = &t.query.g1_points(params)[t.offset..];
                gpu::streamed_msms::<G1>(gpu, points, &inputs(t), density(t))
            }
        },
        |t| match (t == &g2_aux[0]).then(|| b_g2_aux.take()).flatten() {
            Some(sums) => Ok(sums),
            None => {
                call.check_cancelled()?;
                gpu::streamed_msms::<G2>(gpu, &params.b_g2[t.offset..], &inputs(t), density(t))
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

/// Σ h·H of each circuit: each H step beside the previous circuit's MSM
/// where the room holds both (`overlaps`), else in batches.
fn h_sums(call: &Call, circuits: &[(usize, &Assignment)], gpu: usize, kept: &KeptPoints) -> Result<Vec<G1>> {
    if overlaps(call, circuits.len(), gpu, kept)? {
        h_sums_overlapped(call, circuits, gpu, kept)
    } else {
        h_sums_in_batches(call, circuits, gpu, kept)
    }
}

/// Whether each H step can run beside the previous circuit's H MSM on GPU
/// `gpu`: more than one circuit, and room for an H step in two vectors, an
/// h and H's MSM in chunks of `least_h_chunk` at once.
fn overlaps(call: &Call, circuits: usize, gpu: usize, kept: &KeptPoints) -> Result<bool> {
    if circuits < 2 {
        return Ok(false);
    }
    let need = step_beside_msm_bytes(call, gpu, kept)?.saturating_add(h_bytes(call));
    Ok(memory::fits(gpu, need, "an H step beside H's MSM"))
}

/// Device bytes of an H step in two vectors beside H's MSM in chunks of
/// `least_h_chunk` (the MSM's h not counted), as they are now: the first
/// step's tables are counted until it has made them.
fn step_beside_msm_bytes(call: &Call, gpu: usize, kept: &KeptPoints) -> Result<usize> {
    let step = gpu::h_step_bytes(gpu, call.domain.log_m, Some(gpu::HostVectors::Two))?;
    let m = call.domain.m;
    Ok(step.saturating_add(h_msm_bytes(gpu, kept, m, least_h_chunk(m), 1)))
}

/// Device bytes of one circuit's h (a scalar per constraint).
fn h_bytes(call: &Call) -> usize {
    std::mem::size_of::<Fr>() * call.domain.m
}

/// The least chunk of H's MSM worth planning for over a domain of m: a
/// sixteenth of it (smaller chunks cost more than another pass over H's
/// points; never below the smallest streamed chunk).
fn least_h_chunk(m: usize) -> usize {
    (m / 16).max(memory::MIN_STREAM_CHUNK).min(m)
}

/// Σ h·H of each circuit, circuit i + 1's H step (its a, b, c going up in
/// turn with H's points) beside circuit i's MSM over H's points: the GPU
/// computes while the step's upload runs. Each chunk of H's points goes up
/// once per circuit. Device memory: one h and H's MSM, beside one H step
/// in two vectors (the step is hidden behind the MSM, whose chunks lose
/// more speed than the step gains from a third vector; each MSM's chunks
/// sized to leave the step its room). A step that no longer fits beside
/// the MSM, or finds no room (other work took it), runs after it.
fn h_sums_overlapped(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
    kept: &KeptPoints,
) -> Result<Vec<G1>> {
    let step = |circuit: (usize, &Assignment), vectors: gpu::HostVectors, upload: gpu::StepUpload| {
        call.check_cancelled()?;
        let started = Instant::now();
        let h = h_step(call, circuit, gpu, vectors, upload);
        STATS.add(Stage::GpuH, started.elapsed());
        h
    };
    let mut sums = Vec::with_capacity(circuits.len());
    std::thread::scope(|scope| {
        let mut h = step(circuits[0], step_vectors(call, gpu)?, gpu::StepUpload::First)?;
        for (i, &circuit) in circuits.iter().enumerate() {
            let next = circuits.get(i + 1).copied();
            // The step's bytes now (the first step left its tables): beside
            // the MSM while the room still holds both (other work may have
            // taken some), else after it.
            let reserve = match next {
                Some(_)
                    if memory::fits(
                        gpu,
                        step_beside_msm_bytes(call, gpu, kept)?,
                        "the next H step beside H's MSM",
                    ) =>
                {
                    gpu::h_step_bytes(gpu, call.domain.log_m, Some(gpu::HostVectors::Two))?
                }
                _ => 0,
            };
            let chunk = memory::largest_chunk(gpu, call.domain.m, |chunk| {
                h_msm_bytes(gpu, kept, call.domain.m, chunk, 1).saturating_add(reserve)
            });
            let step = &step;
            let beside = next
                .filter(|_| reserve > 0)
                .map(|next| scope.spawn(move || step(next, gpu::HostVectors::Two, gpu::StepUpload::InTurn)));
            let started = Instant::now();
            let sum = h_msm(call, gpu, kept, std::slice::from_ref(&h), chunk);
            STATS.add(Stage::MsmH, started.elapsed());
            log::trace!("circuit {}: H's MSM in chunks of {chunk}", circuit.0);
            // The step beside ends before anything is reported.
            let stepped = beside.map(|beside| {
                beside.join().unwrap_or_else(|_| {
                    Err(Error::new(
                        ErrorKind::Panic,
                        "internal error: an H step's thread panicked",
                    ))
                })
            });
            if let (Err(_), Some(Err(e))) = (&sum, &stepped) {
                log::debug!("the H step beside a failed H MSM failed too: {e}");
            }
            sums.extend(sum?);
            let Some(next) = next else {
                break;
            };
            h = match stepped {
                Some(Err(e)) if e.kind == ErrorKind::OutOfMemory => {
                    log::debug!(
                        "circuit {}: no room for its H step beside H's MSM ({e}); after it",
                        next.0
                    );
                    drop(h);
                    step(next, step_vectors(call, gpu)?, gpu::StepUpload::First)?
                }
                Some(stepped) => stepped?,
                None => {
                    drop(h);
                    step(next, step_vectors(call, gpu)?, gpu::StepUpload::First)?
                }
            };
        }
        Ok(sums)
    })
}

/// Σ h·H of each circuit, in batches of as many circuits as the GPU holds
/// h for beside the next H step and a useful share of H's MSM (at least
/// one): their H steps, each h left on the GPU, then one MSM over H's
/// streamed points for the batch, so that each chunk of H's points goes up
/// once per batch and h never comes back to the host. An H step without
/// room (other work took it since the estimate) closes the batch and waits
/// for the next.
fn h_sums_in_batches(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
    kept: &KeptPoints,
) -> Result<Vec<G1>> {
    let mut sums = Vec::with_capacity(circuits.len());
    let mut pending = circuits.iter().peekable();
    while pending.peek().is_some() {
        let started = Instant::now();
        let mut batch: Vec<gpu::DeviceScalars> = Vec::new();
        while let Some(&&circuit) = pending.peek() {
            if !batch.is_empty() && !room_for_another_h(call, gpu, batch.len())? {
                break;
            }
            call.check_cancelled()?;
            match h_step(
                call,
                circuit,
                gpu,
                step_vectors(call, gpu)?,
                gpu::StepUpload::First,
            ) {
                Err(e) if e.kind == ErrorKind::OutOfMemory && !batch.is_empty() => {
                    log::debug!(
                        "circuit {}: no room for its H step beside {} h ({e})",
                        circuit.0,
                        batch.len()
                    );
                    break;
                }
                Err(e) => return Err(e),
                Ok(h) => {
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
        call.check_cancelled()?;
        let m = call.domain.m;
        let chunk = memory::largest_chunk(gpu, m, |chunk| h_msm_bytes(gpu, kept, m, chunk, batch.len()));
        sums.extend(h_msm(call, gpu, kept, &batch, chunk)?);
        STATS.add(Stage::MsmH, h_done.elapsed());
    }
    Ok(sums)
}

/// Circuit `index`'s H step on GPU `gpu` in `vectors`, h left there: a, b,
/// c from the host (made there first when `w` leaves them to its
/// constraints: the streamed path keeps no aux values on the GPU), checked
/// on the way unless the call's values are.
fn h_step(
    call: &Call,
    (index, w): (usize, &Assignment),
    gpu: usize,
    vectors: gpu::HostVectors,
    upload: gpu::StepUpload,
) -> Result<gpu::DeviceScalars> {
    let products = w.host_products()?;
    let [a, b, c] = match &products {
        Some([a, b, c]) => [&a[..], b, c],
        None => [w.a, w.b, w.c],
    };
    let abc = gpu::Abc::Host {
        a,
        b,
        c,
        check: (!call.values_checked).then_some(index),
        vectors,
        upload,
    };
    let (h, t) = gpu::quotient_on_device(gpu, call.domain, abc)?;
    log::debug!(
        "circuit {index}: GPU H: upload {:.1} ms, upload+compute {:.1} ms",
        t.upload_ms,
        t.total_ms
    );
    Ok(h)
}

/// Device bytes of H's MSM for `circuits` h of m scalars on GPU `gpu` in
/// chunks of `chunk` scalars beside the h: two chunks of H's points going
/// up, each circuit's buckets and a chunk's MSM, or the MSM alone over H's
/// points kept on the GPU.
fn h_msm_bytes(gpu: usize, kept: &KeptPoints, m: usize, chunk: usize, circuits: usize) -> usize {
    match kept.of(Query::H) {
        Some(_) => {
            gpu::msm_bytes(gpu, Curve::G1, chunk, ScalarsAt::DeviceShared, false).unwrap_or(usize::MAX)
        }
        None => super::streamed::over_device_scalars_bytes::<G1>(gpu, m, chunk, circuits),
    }
}

/// Σ h·H for each h of `batch` (left on GPU `gpu` by their H steps), in
/// chunks of `chunk` scalars: over H's points streamed, or its copy kept on
/// the GPU. Without room for it, the h come back and the CPU runs it.
fn h_msm(
    call: &Call,
    gpu: usize,
    kept: &KeptPoints,
    batch: &[gpu::DeviceScalars],
    chunk: usize,
) -> Result<Vec<G1>> {
    let params = call.params;
    let msm = match kept.of(Query::H) {
        Some(points) => gpu::msms_over_device_points_and_scalars::<G1>(points, batch, chunk),
        None => gpu::streamed_msms_over_device_scalars_in_chunks::<G1>(gpu, &params.h, batch, chunk),
    };
    match msm {
        Err(e) if e.kind == ErrorKind::OutOfMemory => {
            log::warn!(
                "GPU {gpu}: H's MSM for {} circuits out of memory ({e}); running it on the CPU",
                batch.len()
            );
            // H has one point fewer than the domain: h's last value meets none.
            batch
                .iter()
                .map(|h| Ok(cpu::msm::dense_msm(&params.h, &h.to_host()?)))
                .collect()
        }
        other => other,
    }
}

/// The vectors the next H step on GPU `gpu` uploads a, b, c into: three
/// where the room holds them (c's upload then overlaps the way back from
/// the coset), else two.
fn step_vectors(call: &Call, gpu: usize) -> Result<gpu::HostVectors> {
    let three = gpu::h_step_bytes(gpu, call.domain.log_m, Some(gpu::HostVectors::Three))?;
    Ok(if memory::fits(gpu, three, "an H step in three vectors") {
        gpu::HostVectors::Three
    } else {
        gpu::HostVectors::Two
    })
}

/// Whether GPU `gpu` has room, beside the `held` h it holds now, for
/// another H step and then for H's MSM over streamed chunks of
/// `least_h_chunk` for them all.
fn room_for_another_h(call: &Call, gpu: usize, held: usize) -> Result<bool> {
    let log_m = call.domain.log_m;
    let m = 1usize << log_m;
    let step = gpu::h_step_bytes(gpu, log_m, Some(gpu::HostVectors::Two))?;
    let msm = super::streamed::over_device_scalars_bytes::<G1>(gpu, m, least_h_chunk(m), held + 1);
    // The next h takes a scalar per constraint after its step.
    Ok(memory::fits(
        gpu,
        step.max(h_bytes(call).saturating_add(msm)),
        "another h in H's batch",
    ))
}
