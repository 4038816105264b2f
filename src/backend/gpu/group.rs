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

use super::{lanes, memory};
use crate::backend::gpu;
use crate::backend::{cpu, Call};
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{Assignment, Queries, QuerySums, Term, WitnessSums};
use crate::math::{Fr, G1, G2};
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
    let h = h_sums(call, circuits, gpu)?;
    let started = Instant::now();
    let witness = match witness_sums(call, circuits, gpu) {
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
    }?;
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
fn witness_sums(call: &Call, circuits: &[(usize, &Assignment)], gpu: usize) -> Result<Vec<WitnessSums>> {
    let params = call.params;
    let first = circuits[0].1;
    let queries = Queries::of(first);
    let density = |t: &Term| t.mask.map(|mask| first.mask(mask));
    let g1_aux = [queries.l, queries.a[1], queries.b_g1[1]];
    let g2_aux = [queries.b_g2[1]];
    let aux: Vec<gpu::CheckedScalars> = circuits
        .iter()
        .map(|&(index, w)| gpu::CheckedScalars {
            values: w.aux,
            check: gpu::Checked::of((!call.values_checked).then_some(index), "aux"),
        })
        .collect();
    let mut shared = gpu::streamed_msms_sharing_scalars(
        gpu,
        &g1_aux.map(|t| gpu::HostTerm {
            points: &t.query.g1_points(params)[t.offset..],
            density: density(&t),
        }),
        &g2_aux.map(|t| gpu::HostTerm {
            points: &params.b_g2[t.offset..],
            density: density(&t),
        }),
        &aux,
        &|| call.check_cancelled(),
    )?;
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

/// Σ h·H of each circuit, in batches of as many circuits as the GPU holds
/// h for beside the next H step and a useful share of H's MSM (at least
/// one): their H steps (a, b, c checked on the way unless the call's
/// values are), each h left on the GPU, then one MSM over H's streamed
/// points for the batch, so that each chunk of H's points goes up once
/// per batch and h never comes back to the host. An H step without room
/// (other work took it since the estimate) closes the batch and waits for
/// the next; without room for the MSM, the batch's h come back and the
/// CPU runs it.
fn h_sums(call: &Call, circuits: &[(usize, &Assignment)], gpu: usize) -> Result<Vec<G1>> {
    let params = call.params;
    let mut sums = Vec::with_capacity(circuits.len());
    let mut pending = circuits.iter().peekable();
    while pending.peek().is_some() {
        let started = Instant::now();
        let mut batch: Vec<gpu::DeviceScalars> = Vec::new();
        while let Some(&&(index, w)) = pending.peek() {
            if !batch.is_empty() && !room_for_another_h(call, gpu)? {
                break;
            }
            call.check_cancelled()?;
            // Left to the constraints, a, b, c are made here, on the host:
            // the streamed path keeps no aux values on the GPU.
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
        call.check_cancelled()?;
        // H has one point fewer than the domain: h's last value meets none.
        match gpu::streamed_msms_over_device_scalars::<G1>(gpu, &params.h, &batch) {
            Err(e) if e.kind == ErrorKind::OutOfMemory => {
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
    let step = gpu::h_step_bytes(gpu, log_m, false)?;
    let chunk = (m / 16).max(memory::MIN_STREAM_CHUNK).min(m);
    let msm = super::streamed::over_device_scalars_bytes::<G1>(gpu, chunk);
    // The next h takes a scalar per constraint after its step.
    Ok(memory::fits(
        gpu,
        step.max((std::mem::size_of::<Fr>() * m).saturating_add(msm)),
        "another h in H's batch",
    ))
}
