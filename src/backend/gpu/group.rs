//! The circuits of one call proved together on a GPU whose points stream:
//! each chunk of a witness query's points goes up once and meets every
//! circuit's scalars, so a call of k circuits moves the witness queries'
//! points (three quarters of the parameters) once rather than k times.
//! H's points likewise go up once per batch of circuits whose h wait in
//! host memory (as many as the host budget lets wait).

use super::{lanes, stage};
use crate::backend::gpu;
use crate::backend::{cpu, Call};
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{Assignment, Queries, QuerySums, Term, WitnessSums};
use crate::math::{Fr, G1, G2};
use crate::stats::{timed, Stage, STATS};
use std::time::Instant;

/// The five sums of each of `circuits` (index in the call, assignment) on
/// GPU `gpu`, whose parameters are not resident. Circuits are proved
/// together with those whose terms are theirs (the same sizes and density
/// bitmaps); one left alone is proved on its own. H's MSM runs for
/// `waiting_h` circuits at a time (at least one).
pub fn sums(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
    waiting_h: usize,
) -> Result<Vec<QuerySums>> {
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
        let proved = sharing_terms(call, &members, gpu, waiting_h)?;
        if proved.len() != class.len() {
            return Err(Error::new(ErrorKind::Gpu, "internal: a group's sums are missing"));
        }
        for (k, s) in class.into_iter().zip(proved) {
            sums[k] = Some(s);
        }
    }
    Ok(sums.into_iter().flatten().collect())
}

/// `sums` of circuits that share their terms. When the shared MSMs run out
/// of device memory, the circuits are proved one by one.
fn sharing_terms(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
    waiting_h: usize,
) -> Result<Vec<QuerySums>> {
    let one_by_one = |call: &Call| -> Result<Vec<QuerySums>> {
        circuits
            .iter()
            .map(|&(index, w)| stage::sums(call, index, w, gpu))
            .collect()
    };
    if circuits.len() < 2 {
        return one_by_one(call);
    }
    // Every value is checked before any MSM reads it.
    if !call.values_checked {
        for &(index, w) in circuits {
            timed(Stage::CheckValues, || w.check_reduced(index))?;
        }
    }
    let call = &Call {
        values_checked: true,
        ..*call
    };
    let witness = {
        let _lane = lanes::gpu_lane(gpu);
        let started = Instant::now();
        let witness = witness_sums(call, circuits, gpu);
        STATS.add(Stage::SharedMsm, started.elapsed());
        witness
    };
    let witness = match witness {
        Err(e) if e.kind == ErrorKind::OutOfMemory => {
            log::warn!("GPU {gpu}: shared witness MSMs out of memory ({e}); proving the circuits one by one");
            return one_by_one(call);
        }
        other => other?,
    };
    let h = h_sums(call, circuits, gpu, waiting_h)?;
    if h.len() != circuits.len() {
        return Err(Error::new(
            ErrorKind::Gpu,
            "internal: an H sum of a group is missing",
        ));
    }
    Ok(witness
        .into_iter()
        .zip(h)
        .map(|(sums, h)| sums.with_h(h))
        .collect())
}

/// The witness sums of circuits that share their terms, over streamed
/// points: the aux terms (L, A's, B_G1's and B_G2's) in one pass, each
/// chunk of a circuit's aux values going up once for the four and each
/// chunk of points once for all the circuits; the few inputs' terms each
/// on their own.
pub(super) fn witness_sums(
    call: &Call,
    circuits: &[(usize, &Assignment)],
    gpu: usize,
) -> Result<Vec<WitnessSums>> {
    let params = call.params;
    let first = circuits[0].1;
    let queries = Queries::of(first);
    let density = |t: &Term| t.mask.map(|mask| first.mask(mask));
    let g1_aux = [queries.l, queries.a[1], queries.b_g1[1]];
    let g2_aux = [queries.b_g2[1]];
    let aux: Vec<&[Fr]> = circuits.iter().map(|(_, w)| w.aux).collect();
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

/// Σ h·H of each circuit, `batch` circuits at a time in the GPU's lane:
/// their H steps, each h downloaded to wait in host memory, then one
/// streamed MSM over H's points for all of them, so that each chunk of H's
/// points goes up once per batch. The batch's MSMs run on the CPU when
/// other work holds the GPU's memory.
fn h_sums(call: &Call, circuits: &[(usize, &Assignment)], gpu: usize, batch: usize) -> Result<Vec<G1>> {
    let params = call.params;
    let mut sums = Vec::with_capacity(circuits.len());
    for batch in circuits.chunks(batch.max(1)) {
        let _lane = lanes::gpu_lane(gpu);
        let started = Instant::now();
        let h: Vec<Vec<Fr>> = batch
            .iter()
            .map(|&(_, w)| {
                call.check_cancelled()?;
                Ok(gpu::quotient(gpu, call.domain, w.a, w.b, w.c, true)?.0)
            })
            .collect::<Result<_>>()?;
        let h_done = Instant::now();
        STATS.add(Stage::GpuH, h_done - started);
        call.check_cancelled()?;
        // H has one point fewer than the domain: h's last value meets none.
        let h: Vec<&[Fr]> = h.iter().map(|h| &h[..h.len().min(params.h.len())]).collect();
        match gpu::streamed_msms::<G1>(gpu, &params.h, &h, None) {
            Err(e) if e.kind == ErrorKind::OutOfMemory => {
                log::warn!(
                    "GPU {gpu}: H's MSM for {} circuits out of memory ({e}); running them on the CPU",
                    h.len()
                );
                for h in h {
                    sums.push(cpu::msm::dense_msm(&params.h, h));
                }
            }
            other => sums.extend(other?),
        }
        STATS.add(Stage::MsmH, h_done.elapsed());
    }
    Ok(sums)
}
