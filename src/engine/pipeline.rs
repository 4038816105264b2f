//! A call's circuits through the backends: each allowed GPU gets a worker
//! (two when the next circuit's inputs can go up ahead of its lane) that
//! takes the next circuit not yet started, so a call's circuits spread
//! over the GPUs; without a GPU they are proved one after another on the
//! CPU. Each circuit is proved in the phases of `groth16`.

use super::{next_device, DeviceMask};
use crate::backend::{self, Backend, Call};
use crate::config::Residency;
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{assemble, check_call, domain_of, Assignment};
use crate::math::Fr;
use crate::params::Parameters;
use crate::proof::Proof;
use crate::stats::{Stage, STATS};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Workers per GPU in one call: one in the GPU's lane, one uploading the
/// next circuit's a, b, c and waiting for the lane.
const WORKERS_PER_GPU: usize = 2;

/// Proves every circuit with its own r and s (`r[i]`, `s[i]` for circuit i).
/// Everything is checked before any work starts.
pub fn prove(params: &Parameters, circuits: &[Assignment], r: &[Fr], s: &[Fr]) -> Result<Vec<Proof>> {
    prove_cancellable(params, circuits, r, s, &AtomicBool::new(false), DeviceMask::ALL)
}

/// `prove` on the GPUs `devices` allows, giving up with
/// `ErrorKind::Cancelled` soon after `cancelled` is set (it is looked at
/// between circuits and between proving stages).
pub fn prove_cancellable(
    params: &Parameters,
    circuits: &[Assignment],
    r: &[Fr],
    s: &[Fr],
    cancelled: &AtomicBool,
    devices: DeviceMask,
) -> Result<Vec<Proof>> {
    prove_job(params, circuits, r, s, cancelled, devices, false)
}

/// `prove` on the CPU backend whatever GPUs are present: the reference
/// the GPU path is checked against at sizes bellperson takes too long for.
pub fn prove_on_cpu(params: &Parameters, circuits: &[Assignment], r: &[Fr], s: &[Fr]) -> Result<Vec<Proof>> {
    check_call(params, circuits, r, s)?;
    let domain = domain_of(params)?;
    let call = Call {
        params,
        domain: &domain,
        cancelled: &AtomicBool::new(false),
        values_checked: false,
    };
    (0..circuits.len())
        .map(|i| prove_circuit(&call, Backend::Cpu, i, &circuits[i], &r[i], &s[i]))
        .collect()
}

/// `prove_cancellable`; `values_checked` says the caller has already
/// checked every witness value is below the modulus (`admit` does, before
/// the witnesses are copied), else each circuit's are checked when its turn
/// comes (overlapped with another circuit's GPU stage).
pub(crate) fn prove_job(
    params: &Parameters,
    circuits: &[Assignment],
    r: &[Fr],
    s: &[Fr],
    cancelled: &AtomicBool,
    devices: DeviceMask,
    values_checked: bool,
) -> Result<Vec<Proof>> {
    check_call(params, circuits, r, s)?;
    let domain = domain_of(params)?;
    let allowed = devices.devices()?;
    let gpus = if backend::gpus_take(domain.log_m) {
        allowed
    } else {
        Vec::new()
    };
    // A budget no plan fits fails now, saying what it needs.
    for &d in &gpus {
        backend::check_budget(d, domain.log_m)?;
    }
    let call = Call {
        params,
        domain: &domain,
        cancelled,
        values_checked,
    };
    let prove_on = |i: usize, backend: Backend| prove_circuit(&call, backend, i, &circuits[i], &r[i], &s[i]);
    if gpus.is_empty() {
        return (0..circuits.len()).map(|i| prove_on(i, Backend::Cpu)).collect();
    }
    // With the points streamed, each GPU proves its share of the call's
    // circuits together, so that each point goes up once for all of them
    // (where circuits share their terms, as a PoRep call's partitions do).
    if proved_together(&call, &gpus, circuits)? {
        return prove_in_groups(&call, &gpus, circuits, r, s);
    }
    // Workers in GPU order (0, 1, .., 0, 1, ..), so that a few circuits
    // still spread over the GPUs; uploads ahead need resident points.
    let per_gpu = if params.residency.resolve() == Residency::Never {
        1
    } else {
        WORKERS_PER_GPU
    };
    let workers: Vec<usize> = (0..per_gpu)
        .flat_map(|_| gpus.iter().copied())
        .take(circuits.len())
        .collect();
    if workers.len() <= 1 {
        let device = Backend::Gpu(next_device(&gpus));
        return (0..circuits.len()).map(|i| prove_on(i, device)).collect();
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Vec<Mutex<Option<Result<Proof>>>> = circuits.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for device in workers {
            let (next, failed, results, prove_on) = (&next, &failed, &results, &prove_on);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= circuits.len() || failed.load(Ordering::Relaxed) {
                    break;
                }
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    prove_on(i, Backend::Gpu(device))
                }))
                .unwrap_or_else(|panic| {
                    Err(Error::new(ErrorKind::Panic, crate::error::panic_message(&*panic)))
                });
                if outcome.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
            });
        }
    });
    // The first error in circuit order, else every proof.
    results
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or_else(|| {
                    Err(Error::new(
                        ErrorKind::Cancelled,
                        "not proved: another circuit failed",
                    ))
                })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .try_fold(Vec::with_capacity(circuits.len()), |mut proofs, outcome| {
            proofs.push(outcome?);
            Ok(proofs)
        })
}

/// Whether the call's circuits go to the GPUs in groups: several circuits
/// sharing their terms (those of the first, at least), over GPUs that all
/// stream the points. Asking decides the residency on each GPU the call
/// uses (uploading the points where they stay), at once on all of them.
fn proved_together(call: &Call, gpus: &[usize], circuits: &[Assignment]) -> Result<bool> {
    let Some((first, rest)) = circuits.split_first() else {
        return Ok(false);
    };
    if !rest.iter().any(|w| first.shares_terms(w)) {
        return Ok(false);
    }
    call.check_cancelled()?;
    let used = &gpus[..gpus.len().min(circuits.len())];
    let params = call.params;
    let streams: Vec<bool> = if used.len() == 1 {
        vec![backend::points_stream(params, used[0])]
    } else {
        std::thread::scope(|scope| {
            let asked: Vec<_> = used
                .iter()
                .map(|&d| scope.spawn(move || backend::points_stream(params, d)))
                .collect();
            // A panicked decision counts as resident: the worker path decides again.
            asked.into_iter().map(|h| h.join().unwrap_or(false)).collect()
        })
    };
    Ok(streams.iter().all(|&s| s))
}

/// The call's circuits over GPUs whose points stream: circuit i goes to
/// GPU i mod (the number of GPUs), and each GPU proves its circuits as one
/// group (`backend::sums_of_group`). The first failed group's error (in
/// GPU order), else every proof.
fn prove_in_groups(
    call: &Call,
    gpus: &[usize],
    circuits: &[Assignment],
    r: &[Fr],
    s: &[Fr],
) -> Result<Vec<Proof>> {
    let group_of = |k: usize| -> Vec<(usize, &Assignment)> {
        (k..circuits.len())
            .step_by(gpus.len())
            .map(|i| (i, &circuits[i]))
            .collect()
    };
    let prove_group = |k: usize| -> Result<Vec<(usize, Proof)>> {
        let group = group_of(k);
        call.check_cancelled()?;
        let begun = Instant::now();
        let sums = backend::sums_of_group(Backend::Gpu(gpus[k]), call, &group)?;
        let proofs = group
            .iter()
            .zip(sums)
            .map(|(&(i, _), sums)| {
                let assembling = Instant::now();
                let proof = assemble(&call.params.vk, &sums, &r[i], &s[i]);
                STATS.add(Stage::Assembly, assembling.elapsed());
                STATS.circuit_done();
                (i, proof)
            })
            .collect();
        log::debug!(
            "GPU {}: {} circuits together in {:.3} s",
            gpus[k],
            group.len(),
            begun.elapsed().as_secs_f64()
        );
        Ok(proofs)
    };
    let groups: Vec<Result<Vec<(usize, Proof)>>> = if gpus.len() == 1 {
        vec![prove_group(0)]
    } else {
        std::thread::scope(|scope| {
            let running: Vec<_> = (0..gpus.len())
                .map(|k| scope.spawn(move || prove_group(k)))
                .collect();
            running
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|panic| {
                        Err(Error::new(ErrorKind::Panic, crate::error::panic_message(&*panic)))
                    })
                })
                .collect()
        })
    };
    // The first group's error, else every proof in circuit order.
    let mut proofs: Vec<Option<Proof>> = vec![None; circuits.len()];
    for group in groups {
        group?.into_iter().for_each(|(i, proof)| proofs[i] = Some(proof));
    }
    proofs
        .into_iter()
        .map(|p| p.ok_or_else(|| Error::new(ErrorKind::Gpu, "internal: a circuit of a group was not proved")))
        .collect()
}

/// One circuit's proof: its H step and five MSMs on `backend`, then the
/// assembly with r and s.
fn prove_circuit(
    call: &Call,
    backend: Backend,
    index: usize,
    w: &Assignment,
    r: &Fr,
    s: &Fr,
) -> Result<Proof> {
    call.check_cancelled()?;
    let begun = Instant::now();
    let sums = backend::sums(backend, call, index, w)?;
    let assembling = Instant::now();
    let proof = assemble(&call.params.vk, &sums, r, s);
    STATS.add(Stage::Assembly, assembling.elapsed());
    STATS.circuit_done();
    log::debug!("circuit {index}: {:.3} s in all", begun.elapsed().as_secs_f64());
    Ok(proof)
}
