//! The circuits of one call proved together on a GPU whose points stream:
//! each chunk of a witness query's points goes up once and meets every
//! circuit's scalars, so a call of k circuits moves the witness queries'
//! points (three quarters of the parameters) once rather than k times.
//! H's step and MSM follow circuit by circuit (h differs per circuit).

use super::{lanes, stage};
use crate::backend::gpu;
use crate::backend::{cpu, Call};
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{Assignment, Queries, QuerySums, Term, WitnessSums};
use crate::math::{G1, G2};
use crate::stats::{timed, Stage, STATS};
use std::time::Instant;

/// The five sums of each of `circuits` (index in the call, assignment) on
/// GPU `gpu`, whose parameters are not resident. Circuits are proved
/// together with those whose terms are theirs (the same sizes and density
/// bitmaps); one left alone is proved on its own.
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
        let proved = sharing_terms(call, &members, gpu)?;
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
fn sharing_terms(call: &Call, circuits: &[(usize, &Assignment)], gpu: usize) -> Result<Vec<QuerySums>> {
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
    circuits
        .iter()
        .zip(witness)
        .map(|(&(index, w), sums)| Ok(sums.with_h(h_sum(call, index, w, gpu)?)))
        .collect()
}

/// The witness sums of circuits that share their terms, each chunk of
/// points streamed once for all of them.
fn witness_sums(call: &Call, circuits: &[(usize, &Assignment)], gpu: usize) -> Result<Vec<WitnessSums>> {
    let params = call.params;
    let first = circuits[0].1;
    let scalars = |t: &Term| -> Vec<_> { circuits.iter().map(|(_, w)| w.vector(t.vector, &[])).collect() };
    let density = |t: &Term| t.mask.map(|mask| first.mask(mask));
    Queries::of(first).witness_sums_of_many(
        |t| {
            call.check_cancelled()?;
            let points = &t.query.g1_points(params)[t.offset..];
            gpu::streamed_msms::<G1>(gpu, points, &scalars(t), density(t))
        },
        |t| {
            call.check_cancelled()?;
            gpu::streamed_msms::<G2>(gpu, &params.b_g2[t.offset..], &scalars(t), density(t))
        },
    )
}

/// Circuit `index`'s H step and H's MSM over streamed points, in the GPU's
/// lane; the MSM runs on the CPU when other work holds the GPU's memory.
fn h_sum(call: &Call, index: usize, w: &Assignment, gpu: usize) -> Result<G1> {
    call.check_cancelled()?;
    let params = call.params;
    let _lane = lanes::gpu_lane(gpu);
    let started = Instant::now();
    let (h, _) = gpu::quotient(gpu, call.domain, w.a, w.b, w.c, true)?;
    let h_done = Instant::now();
    STATS.add(Stage::GpuH, h_done - started);
    call.check_cancelled()?;
    // H has one point fewer than the domain: h's last value meets none.
    let h = &h[..h.len().min(params.h.len())];
    let sum = match gpu::streamed_msm::<G1>(gpu, &params.h, h, None) {
        Err(e) if e.kind == ErrorKind::OutOfMemory => {
            log::warn!("circuit {index}: H's MSM out of GPU memory ({e}); running it on the CPU");
            cpu::msm::dense_msm(&params.h, h)
        }
        other => other?,
    };
    STATS.add(Stage::MsmH, h_done.elapsed());
    Ok(sum)
}
