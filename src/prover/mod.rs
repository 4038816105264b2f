//! Proving: for each circuit, the H polynomial, the five multi-scalar
//! multiplications, and the assembly with r and s.
//!
//! Memory on the CPU backend, per circuit in flight: the three evaluation
//! vectors of H on the domain (96·m bytes, m the domain size), plus copies of
//! the points that take part in each MSM (at most the size of the largest
//! parameter vector). Circuits are proved one after another; each step is
//! parallel inside.

mod assembly;
mod assignment;
pub mod engine;
mod gpu_stage;
pub(crate) mod job;

pub use assembly::{assemble, QuerySums};
pub use assignment::{Assignment, Density, Witness};
pub use job::Job;

use crate::cpu::h::quotient;
use crate::cpu::msm::{dense_msm, witness_msm, Selection};
use crate::error::{Error, ErrorKind, Result};
use crate::gpu;
use crate::math::domain::Domain;
use crate::math::Fr;
use crate::params::Parameters;
use crate::proof::Proof;
use rand_core::{OsRng, RngCore};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Proves every circuit with its own r and s (`r[i]`, `s[i]` for circuit i).
/// Everything is checked before any work starts.
pub fn prove(params: &Parameters, circuits: &[Assignment], r: &[Fr], s: &[Fr]) -> Result<Vec<Proof>> {
    prove_cancellable(
        params,
        circuits,
        r,
        s,
        &AtomicBool::new(false),
        gpu::DeviceMask::ALL,
    )
}

/// `prove` on the GPUs `devices` allows, giving up with
/// `ErrorKind::Cancelled` soon after `cancelled` is set (it is looked at
/// between circuits and between proving stages).
///
/// On the CPU the circuits are proved one after another. With GPUs, each
/// allowed GPU has a worker (two when the next circuit's inputs can go up
/// ahead: resident parameters, an H step on the GPU) that takes the next
/// circuit not yet started, so a job's circuits spread over the GPUs, and
/// on each GPU one circuit's a, b, c and aux go up while the other's GPU
/// stage runs; each circuit holds only its own GPU's lane.
pub fn prove_cancellable(
    params: &Parameters,
    circuits: &[Assignment],
    r: &[Fr],
    s: &[Fr],
    cancelled: &AtomicBool,
    devices: gpu::DeviceMask,
) -> Result<Vec<Proof>> {
    prove_job(params, circuits, r, s, cancelled, devices, false)
}

/// `prove_cancellable`; `values_checked` says the caller has already
/// checked every witness value is below the modulus (`start` does, before
/// it copies them), else each circuit's are checked when its turn comes
/// (overlapped with another circuit's GPU stage).
pub(crate) fn prove_job(
    params: &Parameters,
    circuits: &[Assignment],
    r: &[Fr],
    s: &[Fr],
    cancelled: &AtomicBool,
    devices: gpu::DeviceMask,
    values_checked: bool,
) -> Result<Vec<Proof>> {
    check_call(params, circuits, r, s)?;
    let allowed = devices.devices()?;
    let domain = domain_of(params)?;
    if gpu::available() && gpu::handles_domain(domain.log_m) {
        // A budget no plan fits fails now, saying what it needs.
        for &d in &allowed {
            gpu::memory::check_budget(d, domain.log_m)?;
        }
    }
    let call = Call {
        params,
        domain: &domain,
        cancelled,
        on_gpu: true,
        values_checked,
    };
    let prove_on = |i: usize, device: usize| prove_one(&call, i, &circuits[i], &r[i], &s[i], device);
    // Workers in GPU order (0, 1, .., 0, 1, ..), so that a few circuits
    // still spread over the GPUs.
    let ahead = gpu::available()
        && gpu::handles_domain(domain.log_m)
        && params.device.residency().resolve() != gpu::Residency::Never;
    let per_gpu = if ahead { WORKERS_PER_GPU } else { 1 };
    let workers: Vec<usize> = (0..per_gpu)
        .flat_map(|_| allowed.iter().copied())
        .take(circuits.len())
        .collect();
    if workers.len() <= 1 {
        let device = engine::next_device(&allowed);
        return (0..circuits.len()).map(|i| prove_on(i, device)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Vec<std::sync::Mutex<Option<Result<Proof>>>> =
        circuits.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for device in workers {
            let (next, failed, results, prove_on) = (&next, &failed, &results, &prove_on);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= circuits.len() || failed.load(Ordering::Relaxed) {
                    break;
                }
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| prove_on(i, device)))
                    .unwrap_or_else(|panic| Err(Error::new(ErrorKind::Panic, job::panic_message(&*panic))));
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

/// Workers per GPU in one call: one in the GPU's lane, one uploading the
/// next circuit's a, b, c and waiting for the lane.
const WORKERS_PER_GPU: usize = 2;

fn check_cancelled(cancelled: &AtomicBool) -> Result<()> {
    if cancelled.load(Ordering::Relaxed) {
        Err(Error::new(ErrorKind::Cancelled, "the job was cancelled"))
    } else {
        Ok(())
    }
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
        on_gpu: false,
        values_checked: false,
    };
    (0..circuits.len())
        .map(|i| prove_one(&call, i, &circuits[i], &r[i], &s[i], 0))
        .collect()
}

/// The NTT domain of the parameters.
fn domain_of(params: &Parameters) -> Result<Domain> {
    Domain::new(params.domain_size().trailing_zeros())
        .ok_or_else(|| Error::invalid("domain larger than 2^32"))
}

/// Draws r and s for `n` circuits from the operating system's RNG.
pub fn random_r_s(n: usize) -> (Vec<Fr>, Vec<Fr>) {
    let draw = || {
        let mut bytes = [0u8; 64];
        OsRng.fill_bytes(&mut bytes);
        Fr::from_uniform_bytes(&bytes)
    };
    let r = (0..n).map(|_| draw()).collect();
    let s = (0..n).map(|_| draw()).collect();
    (r, s)
}

/// Validation of a whole call, before any work.
pub fn check_call(params: &Parameters, circuits: &[Assignment], r: &[Fr], s: &[Fr]) -> Result<()> {
    // A malformed knob fails the call instead of being ignored.
    crate::config::get()?;
    if circuits.is_empty() {
        return Err(Error::invalid("no circuits to prove"));
    }
    if r.len() != circuits.len() || s.len() != circuits.len() {
        return Err(Error::size_mismatch(format!(
            "{} circuits need {0} r and {0} s values, got {} and {}",
            circuits.len(),
            r.len(),
            s.len()
        )));
    }
    // In parallel (a 2^27 circuit's density bitmaps take a few ms to
    // count), the first failure in circuit order reported.
    let checked: Vec<Result<()>> = circuits
        .par_iter()
        .enumerate()
        .map(|(i, c)| c.check(i, params))
        .collect();
    checked.into_iter().collect::<Result<()>>()?;
    for (name, values) in [("r", r), ("s", s)] {
        if let Some(i) = values.iter().position(|v| !v.is_reduced()) {
            return Err(Error::invalid(format!(
                "{name}[{i}] is not a field element (not below r)"
            )));
        }
    }
    Ok(())
}

/// Runs `step`, timed as the stage `stage` when it succeeds (each query's
/// MSMs, the witness checks).
fn timed<T>(stage: engine::Stage, step: impl FnOnce() -> Result<T>) -> Result<T> {
    let started = Instant::now();
    let done = step()?;
    engine::STATS.add(stage, started.elapsed());
    Ok(done)
}

/// The five MSMs on the CPU.
fn cpu_sums(params: &Parameters, w: &Assignment, h: &[Fr]) -> QuerySums {
    let n_in = w.inputs.len();
    let b_inp_points = w.b_inp_density.popcount;
    let (a_inp, a_aux) = params.a.split_at(n_in);
    let (b1_inp, b1_aux) = params.b_g1.split_at(b_inp_points);
    let (b2_inp, b2_aux) = params.b_g2.split_at(b_inp_points);
    let a_sel = Selection::Density(w.a_aux_density.words);
    let b_inp_sel = Selection::Density(w.b_inp_density.words);
    let b_aux_sel = Selection::Density(w.b_aux_density.words);
    QuerySums {
        h: dense_msm(&params.h, h),
        l: witness_msm(&params.l, w.aux, Selection::All),
        a: witness_msm(a_inp, w.inputs, Selection::All) + witness_msm(a_aux, w.aux, a_sel),
        b_g1: witness_msm(b1_inp, w.inputs, b_inp_sel) + witness_msm(b1_aux, w.aux, b_aux_sel),
        b_g2: witness_msm(b2_inp, w.inputs, b_inp_sel) + witness_msm(b2_aux, w.aux, b_aux_sel),
    }
}

/// The scalars whose bit is set in `density` (bit i = bit i % 64 of word
/// i / 64), in order. In parallel over blocks of bitmap words: each block's
/// popcount gives where its scalars go in the output, so every block
/// writes its own part of one preallocated vector.
fn select(scalars: &[Fr], density: &[u64]) -> Vec<Fr> {
    const WORDS: usize = 1 << 10; // 65536 scalars per block
    let n_words = scalars.len().div_ceil(64).min(density.len());
    // Bits past the last scalar are not selections (callers may leave any
    // value there): the last word is masked.
    let word = |k: usize| -> u64 {
        let bits_left = scalars.len() - k * 64;
        if bits_left >= 64 {
            density[k]
        } else {
            density[k] & ((1u64 << bits_left) - 1)
        }
    };
    let counts: Vec<usize> = (0..n_words)
        .into_par_iter()
        .chunks(WORDS)
        .map(|block| block.into_iter().map(|k| word(k).count_ones() as usize).sum())
        .collect();
    let total = counts.iter().sum();
    let mut out = vec![Fr::ZERO; total];
    let mut parts = Vec::with_capacity(counts.len());
    let mut rest = out.as_mut_slice();
    for &count in &counts {
        let (part, tail) = rest.split_at_mut(count);
        parts.push(part);
        rest = tail;
    }
    parts.into_par_iter().enumerate().for_each(|(block, part)| {
        let mut next = 0;
        for k in block * WORDS..((block + 1) * WORDS).min(n_words) {
            let base = k * 64;
            let mut bits = word(k);
            while bits != 0 {
                let i = base + bits.trailing_zeros() as usize;
                part[next] = scalars[i];
                next += 1;
                bits &= bits - 1;
            }
        }
    });
    out
}

/// What every circuit of one call shares.
#[derive(Clone, Copy)]
struct Call<'a> {
    params: &'a Parameters,
    domain: &'a Domain,
    cancelled: &'a AtomicBool,
    /// Whether the GPU may take the circuit (when one is present).
    on_gpu: bool,
    /// Whether the witness values are known to be below the modulus.
    values_checked: bool,
}

fn prove_one(call: &Call, index: usize, w: &Assignment, r: &Fr, s: &Fr, gpu: usize) -> Result<Proof> {
    let Call {
        params,
        domain,
        cancelled,
        on_gpu,
        values_checked,
    } = *call;
    check_cancelled(cancelled)?;
    let begun = Instant::now();
    let sums = if on_gpu && gpu::available() && gpu::handles_domain(domain.log_m) {
        match gpu_stage::gpu_sums(call, index, w, gpu)? {
            Ok(sums) => sums,
            Err(h) => {
                let cpu = Instant::now();
                let sums = cpu_sums(params, w, &h);
                engine::STATS.add(engine::Stage::CpuMsm, cpu.elapsed());
                sums
            }
        }
    } else {
        if !values_checked {
            timed(engine::Stage::CheckValues, || w.check_reduced(index))?;
        }
        let started = Instant::now();
        let h = quotient(domain, w.a, w.b, w.c);
        let h_done = Instant::now();
        engine::STATS.add(engine::Stage::CpuH, h_done - started);
        check_cancelled(cancelled)?;
        let sums = cpu_sums(params, w, &h);
        engine::STATS.add(engine::Stage::CpuMsm, h_done.elapsed());
        sums
    };
    let assembling = Instant::now();
    let proof = assemble(&params.vk, &sums, r, s);
    engine::STATS.add(engine::Stage::Assembly, assembling.elapsed());
    engine::STATS.circuit_done();
    log::debug!("circuit {index}: {:.3} s in all", begun.elapsed().as_secs_f64());
    Ok(proof)
}

/// One circuit of a call on its way through the GPU stage.
#[derive(Clone, Copy)]
struct Circuit<'a> {
    index: usize,
    w: &'a Assignment<'a>,
    /// `Some(index)`: its values are still to be checked below the modulus,
    /// as they go up to the GPU (see `gpu::Checked`).
    check: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn select_takes_the_scalars_whose_bits_are_set() {
        for n in [0usize, 1, 63, 64, 65, 1000, (1 << 16) + 3, 3 << 16] {
            let scalars: Vec<Fr> = (0..n as u64).map(Fr::from_u64).collect();
            // A pseudo-random bitmap with stray bits set past the end.
            let mut words: Vec<u64> = (0..n.div_ceil(64) as u64)
                .map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (k << 7))
                .collect();
            if let Some(last) = words.last_mut() {
                *last |= !0u64 << (n % 64).min(63) & if n % 64 == 0 { 0 } else { !0 };
            }
            let want: Vec<Fr> = (0..n)
                .filter(|&i| (words[i / 64] >> (i % 64)) & 1 == 1)
                .map(|i| scalars[i])
                .collect();
            assert_eq!(select(&scalars, &words), want, "n = {n}");
        }
    }
}
