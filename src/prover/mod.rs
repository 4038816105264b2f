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
pub(crate) mod job;

pub use assembly::{assemble, QuerySums};
pub use assignment::{Assignment, Density, Witness};
pub use job::Job;

use crate::cpu::h::quotient;
use crate::cpu::msm::{dense_msm, witness_msm, Selection};
use crate::error::{Error, ErrorKind, Result};
use crate::gpu;
use crate::math::domain::Domain;
use crate::math::{Fr, G1, G2};
use crate::params::Parameters;
use crate::proof::Proof;
use rand_core::{OsRng, RngCore};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, MutexGuard};
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

/// The witness scalars that meet points through the density bitmaps (the
/// rest of the MSMs take whole vectors).
struct DensitySelected {
    a_aux: Vec<Fr>,
    b_inp: Vec<Fr>,
    b_aux: Vec<Fr>,
}

impl DensitySelected {
    fn of(w: &Assignment) -> DensitySelected {
        DensitySelected {
            a_aux: select(w.aux, w.a_aux_density.words),
            b_inp: select(w.inputs, w.b_inp_density.words),
            b_aux: select(w.aux, w.b_aux_density.words),
        }
    }
}

/// The four witness MSMs (L, A, B_G1, B_G2) on the GPU over the device
/// copy of the parameters. The GPU splits each scalar vector itself (zeros
/// skipped, ones summed) and applies the density bitmaps to the aux vector
/// itself, so the CPU selects nothing but the few inputs of B.
fn witness_sums(
    device: &gpu::DeviceParams,
    gpu: usize,
    w: &Assignment,
    aux_ahead: Option<gpu::DeviceScalars>,
    cancelled: &AtomicBool,
    check: Option<usize>,
) -> Result<WitnessSums> {
    use engine::Stage;
    // The aux values go up once for the four MSMs that read them (L, A,
    // B_G1, B_G2), here (counted with L) unless they went up ahead; without
    // room for that copy, each MSM uploads them (checked here first when
    // `check` says they are not yet: the MSMs' own uploads do not check).
    let aux_on_gpu = match aux_ahead {
        Some(aux) => Some(aux),
        None => upload_aux(gpu, w, check)?,
    };
    let aux = || match &aux_on_gpu {
        Some(aux) => gpu::Scalars::Shared(aux),
        None => gpu::Scalars::Host(w.aux),
    };
    let n_in = w.inputs.len();
    let b_inp_points = w.b_inp_density.popcount;
    let b_inp = select(w.inputs, w.b_inp_density.words);
    let (a_aux, b_aux) = (w.a_aux_density.words, w.b_aux_density.words);
    let l = timed(Stage::MsmL, || gpu::msm_g1_from(&device.l, 0, aux()))?;
    check_cancelled(cancelled)?;
    let a = timed(Stage::MsmA, || {
        Ok(gpu::msm_g1(&device.a, 0, w.inputs)? + gpu::msm_g1_masked(&device.a, n_in, aux(), a_aux)?)
    })?;
    check_cancelled(cancelled)?;
    let b_g1 = timed(Stage::MsmBG1, || {
        Ok(gpu::msm_g1(&device.b_g1, 0, &b_inp)?
            + gpu::msm_g1_masked(&device.b_g1, b_inp_points, aux(), b_aux)?)
    })?;
    check_cancelled(cancelled)?;
    Ok(WitnessSums {
        l,
        a,
        b_g1,
        b_g2: timed(Stage::MsmBG2, || {
            Ok(gpu::msm_g2(&device.b_g2, 0, &b_inp)?
                + gpu::msm_g2_masked(&device.b_g2, b_inp_points, aux(), b_aux)?)
        })?,
    })
}

/// w's aux values on GPU `gpu` for the witness MSMs (counted with L), or
/// `None` without room for them (each MSM then uploads them); checked below
/// the modulus on the way with `check`, or on the CPU when they stay.
fn upload_aux(gpu: usize, w: &Assignment, check: Option<usize>) -> Result<Option<gpu::DeviceScalars>> {
    timed(engine::Stage::MsmL, || {
        match gpu::upload_scalars(gpu, w.aux, gpu::Checked::of(check, "aux")) {
            Ok(aux) => Ok(Some(aux)),
            Err(e) if e.kind == ErrorKind::OutOfMemory => {
                log::debug!("aux values not kept on GPU {gpu} ({e}); each MSM uploads them");
                if let Some(circuit) = check {
                    w.check_aux_reduced(circuit)?;
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    })
}

/// The MSMs over the witness: all of a circuit's but H's.
struct WitnessSums {
    l: G1,
    a: G1,
    b_g1: G1,
    b_g2: G2,
}

impl WitnessSums {
    fn with_h(self, h: G1) -> QuerySums {
        let WitnessSums { l, a, b_g1, b_g2 } = self;
        QuerySums { h, l, a, b_g1, b_g2 }
    }
}

/// Runs `step`, timed as the stage `stage` when it succeeds (each query's
/// MSMs, the witness checks).
fn timed<T>(stage: engine::Stage, step: impl FnOnce() -> Result<T>) -> Result<T> {
    let started = Instant::now();
    let done = step()?;
    engine::STATS.add(stage, started.elapsed());
    Ok(done)
}

/// The five MSMs on the GPU with the points streamed from host memory (the
/// parameters are not resident: too large for the GPU, or asked not to be).
fn streamed_sums(
    params: &Parameters,
    device: usize,
    w: &Assignment,
    sel: &DensitySelected,
    h: &[Fr],
) -> Result<QuerySums> {
    let g1 =
        |points: &[crate::math::G1Affine], scalars: &[Fr]| gpu::streamed_msm::<G1>(device, points, scalars);
    let g2 =
        |points: &[crate::math::G2Affine], scalars: &[Fr]| gpu::streamed_msm::<G2>(device, points, scalars);
    let n_in = w.inputs.len();
    let b_inp_points = w.b_inp_density.popcount;
    let (a_inp, a_aux) = params.a.split_at(n_in);
    let (b1_inp, b1_aux) = params.b_g1.split_at(b_inp_points);
    let (b2_inp, b2_aux) = params.b_g2.split_at(b_inp_points);
    Ok(QuerySums {
        h: g1(&params.h, &h[..h.len().min(params.h.len())])?,
        l: g1(&params.l, w.aux)?,
        a: g1(a_inp, w.inputs)? + g1(a_aux, &sel.a_aux)?,
        b_g1: g1(b1_inp, &sel.b_inp)? + g1(b1_aux, &sel.b_aux)?,
        b_g2: g2(b2_inp, &sel.b_inp)? + g2(b2_aux, &sel.b_aux)?,
    })
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

/// The GPU stage of one circuit, inside its GPU's lane: the H step, and
/// the MSMs over resident points or, without them, streamed points (with
/// the density selections `sel` made beforehand on the CPU). `Ok(Err(h))`
/// hands the MSMs back to the CPU (streamed MSMs out of device memory).
fn gpu_stage(
    call: &Call,
    device: Option<&Arc<gpu::DeviceParams>>,
    circuit: Circuit,
    sel: Option<&DensitySelected>,
    (ahead, lane): (Option<Ahead>, Option<MutexGuard<'static, ()>>),
    gpu: usize,
) -> Result<std::result::Result<QuerySums, Vec<Fr>>> {
    let Circuit { index, w, check } = circuit;
    let Call {
        params,
        domain,
        cancelled,
        ..
    } = *call;
    let queued = Instant::now();
    let _lane = lane.unwrap_or_else(|| engine::gpu_lane(gpu));
    let waited = Instant::now();
    engine::STATS.add(engine::Stage::LaneWait, waited - queued);
    // In the lane, this circuit's a, b, c no longer wait: the next
    // circuit's may go up.
    let (abc, aux) = match ahead {
        Some(Ahead { abc, aux, slot }) => {
            drop(slot);
            (gpu::Abc::Device(abc), aux)
        }
        None => (
            gpu::Abc::Host {
                a: w.a,
                b: w.b,
                c: w.c,
                check,
            },
            None,
        ),
    };
    // A job freed while it queued for the GPU gives the lane straight back.
    check_cancelled(cancelled)?;
    let sel = match (device, sel) {
        (Some(device), _) => return resident_stage(call, device, circuit, (abc, aux), gpu, waited).map(Ok),
        (None, Some(sel)) => sel,
        (None, None) => {
            return Err(Error::new(
                ErrorKind::Gpu,
                "internal: MSMs over streamed points without the density selections",
            ))
        }
    };
    let (h, t) = gpu::quotient(gpu, domain, w.a, w.b, w.c, true)?;
    log_h_step(index, &t);
    let h_done = Instant::now();
    engine::STATS.add(engine::Stage::GpuH, h_done - waited);
    check_cancelled(cancelled)?;
    let sums = match streamed_sums(params, gpu, w, sel, &h) {
        Err(e) if e.kind == ErrorKind::OutOfMemory => {
            // Other work holds the GPU's memory: this circuit's MSMs
            // are still owed, and the CPU can do them.
            log::warn!("circuit {index}: GPU MSMs out of memory ({e}); running them on the CPU");
            return Ok(Err(h));
        }
        other => other?,
    };
    engine::STATS.add(engine::Stage::GpuMsm, h_done.elapsed());
    Ok(Ok(sums))
}

fn log_h_step(index: usize, t: &gpu::HTiming) {
    log::debug!(
        "circuit {index}: GPU H: upload {:.1} ms, upload+compute {:.1} ms, download {:.1} ms",
        t.upload_ms,
        t.total_ms,
        t.download_ms
    );
}

/// The GPU stage over resident points: the H step leaves h on the GPU for
/// its MSM. The four witness MSMs run beside the H step and H's MSM, on a
/// thread (and streams) of their own, when the GPU's memory holds both
/// working sets: their many short phases (splits, sorts, a window
/// combination on one thread, host round trips) leave the GPU idle, and
/// the H side's kernels fill it. Otherwise, or when they run out of memory
/// beside the H side, they run after it.
fn resident_stage(
    call: &Call,
    device: &gpu::DeviceParams,
    circuit: Circuit,
    (abc, aux): (gpu::Abc, Option<gpu::DeviceScalars>),
    gpu: usize,
    waited: Instant,
) -> Result<QuerySums> {
    let Circuit { index, w, check } = circuit;
    let Call {
        domain, cancelled, ..
    } = *call;
    let beside = witness_beside_h(gpu, domain, w, matches!(abc, gpu::Abc::Device(_)), aux.is_some());
    log::debug!(
        "circuit {index}: witness MSMs {} the H side",
        if beside { "beside" } else { "after" }
    );
    // Σ h_i·H_i, and when its MSM began.
    let h_side = |abc: gpu::Abc| -> Result<(G1, Instant)> {
        let (h, t) = gpu::quotient_on_device(gpu, domain, abc)?;
        log_h_step(index, &t);
        let h_done = Instant::now();
        engine::STATS.add(engine::Stage::GpuH, h_done - waited);
        check_cancelled(cancelled)?;
        let sum = timed(engine::Stage::MsmH, || {
            gpu::msm_g1_from(&device.h, 0, gpu::Scalars::Device(h))
        })?;
        Ok((sum, h_done))
    };
    let (h, h_done, witness) = if beside {
        let (h, witness) = std::thread::scope(|scope| {
            let witness = scope.spawn(|| witness_sums(device, gpu, w, aux, cancelled, check));
            (h_side(abc), witness.join())
        });
        let witness =
            witness.map_err(|payload| Error::new(ErrorKind::Panic, job::panic_message(&*payload)))?;
        let h = h.and_then(|sum| {
            injected_out_of_memory(&engine::inject::H_BESIDE_OUT_OF_MEMORY, "H side").map(|()| sum)
        });
        let witness = witness.and_then(|sums| {
            injected_out_of_memory(&engine::inject::WITNESS_BESIDE_OUT_OF_MEMORY, "witness MSMs")
                .map(|()| sums)
        });
        // Out of memory beside each other: the side that failed runs again
        // on its own (H from the host's a, b, c: those on the GPU, if any,
        // were consumed by the failed H step).
        let (h, h_done) = match h {
            Err(e) if e.kind == ErrorKind::OutOfMemory => {
                log::debug!(
                    "circuit {index}: H side out of memory beside the witness MSMs ({e}); again alone"
                );
                check_cancelled(cancelled)?;
                engine::inject::BESIDE_RERUNS.fetch_add(1, Ordering::SeqCst);
                h_side(gpu::Abc::Host {
                    a: w.a,
                    b: w.b,
                    c: w.c,
                    check,
                })?
            }
            other => other?,
        };
        let witness = match witness {
            Err(e) if e.kind == ErrorKind::OutOfMemory => {
                log::debug!("circuit {index}: witness MSMs out of memory beside H's ({e}); again after it");
                check_cancelled(cancelled)?;
                engine::inject::BESIDE_RERUNS.fetch_add(1, Ordering::SeqCst);
                witness_sums(device, gpu, w, None, cancelled, check)?
            }
            other => other?,
        };
        (h, h_done, witness)
    } else {
        let (h, h_done) = h_side(abc)?;
        (h, h_done, witness_sums(device, gpu, w, aux, cancelled, check)?)
    };
    engine::STATS.add(engine::Stage::GpuMsm, h_done.elapsed());
    Ok(witness.with_h(h))
}

/// An out-of-memory error when `counter` says to inject one (see
/// `engine::inject`).
fn injected_out_of_memory(counter: &std::sync::atomic::AtomicUsize, side: &str) -> Result<()> {
    if engine::inject::take(counter) {
        return Err(Error::new(
            ErrorKind::OutOfMemory,
            format!("{side}: out of memory (injected for a test)"),
        ));
    }
    Ok(())
}

/// Whether the witness MSMs may run beside the H side on GPU `gpu`: when its
/// room holds both sides' working sets (the witness MSMs' as if no aux value
/// were 0 or 1) and the next circuit's a, b, c and aux going up meanwhile.
fn witness_beside_h(gpu: usize, domain: &Domain, w: &Assignment, abc_on_gpu: bool, aux_on_gpu: bool) -> bool {
    let (log_m, n) = (domain.log_m, w.aux.len());
    let need = gpu::memory::h_side(gpu, log_m, abc_on_gpu)
        .and_then(|h| Ok(h + gpu::memory::witness_side(gpu, n, aux_on_gpu)? + gpu::memory::ahead(log_m, n)));
    need.is_ok_and(|need| gpu::memory::fits(gpu, need, "witness MSMs beside H"))
}

/// A circuit's a, b, c uploaded ahead of its GPU stage, with the GPU's
/// upload slot held until the circuit is in the lane.
struct Ahead {
    abc: gpu::DeviceAbc,
    /// The aux values for the L, A and B MSMs (`None`: no room).
    aux: Option<gpu::DeviceScalars>,
    slot: MutexGuard<'static, ()>,
}

/// Uploads w's a, b, c and aux values to GPU `gpu` ahead of its lane, when
/// the GPU's upload slot is free and its room holds them beside the lane's
/// work (the H side and a witness MSM at once, for the largest domain proved
/// there); `None` leaves the uploads to the lane.
fn upload_ahead(
    domain: &Domain,
    w: &Assignment,
    gpu: usize,
    cancelled: &AtomicBool,
    check: Option<usize>,
) -> Result<Option<Ahead>> {
    let started = Instant::now();
    let slot = engine::upload_slot(gpu);
    check_cancelled(cancelled)?;
    let (abc_bytes, aux_bytes) = (gpu::memory::ahead(domain.log_m, 0), std::mem::size_of_val(w.aux));
    let largest = engine::largest_domain(gpu, domain.m).trailing_zeros();
    let lane = gpu::memory::h_side(gpu, largest, false)
        .and_then(|h| Ok(h + gpu::memory::witness_side(gpu, w.aux.len(), true)?))
        .unwrap_or(usize::MAX / 4);
    let ahead = if !gpu::memory::fits(gpu, abc_bytes + lane, "a, b, c ahead") {
        log::debug!("a, b, c not uploaded ahead: too little room on GPU {gpu}");
        None
    } else {
        match gpu::upload_abc(gpu, domain, w.a, w.b, w.c, check) {
            Ok(abc) => {
                // a, b, c are in the room's accounts now.
                let aux = if gpu::memory::fits(gpu, aux_bytes + lane, "aux ahead") {
                    match gpu::upload_scalars(gpu, w.aux, gpu::Checked::of(check, "aux")) {
                        Ok(aux) => Some(aux),
                        Err(e) if e.kind == ErrorKind::OutOfMemory => None,
                        Err(e) => return Err(e),
                    }
                } else {
                    None
                };
                Some(Ahead { abc, aux, slot })
            }
            Err(e) if e.kind == ErrorKind::OutOfMemory => {
                log::debug!("a, b, c not uploaded ahead ({e}): the H step uploads them");
                None
            }
            Err(e) => return Err(e),
        }
    };
    engine::STATS.add(engine::Stage::AbcAhead, started.elapsed());
    Ok(ahead)
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
        match gpu_sums(call, index, w, gpu)? {
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

/// A circuit's sums on GPU `gpu`, or its h for the CPU's MSMs when the
/// GPU's streamed MSMs ran out of memory.
fn gpu_sums(
    call: &Call,
    index: usize,
    w: &Assignment,
    gpu: usize,
) -> Result<std::result::Result<QuerySums, Vec<Fr>>> {
    let Call {
        params,
        domain,
        cancelled,
        values_checked,
        ..
    } = *call;
    let started = Instant::now();
    // The parameters go to the GPU on first use (or stay on the host),
    // inside the lane: the decision reads the GPU's free memory, which
    // another circuit's GPU stage would be using.
    let device = match params.device.decided(gpu) {
        Some(device) => device,
        None => {
            let _lane = engine::gpu_lane(gpu);
            params.device.get_or_upload(params, gpu)
        }
    };
    let selecting = Instant::now();
    engine::STATS.add(engine::Stage::ParamsUpload, selecting - started);
    // Values not known to be below the modulus: with resident points a, b,
    // c and aux go up through the staging copies, which check them on the
    // way (`gpu::Checked`), so only the inputs are checked here; with
    // streamed points all of them, before anything reads them. Checked
    // here, a call's first circuit would keep the GPU idle ~0.3 s at 2^27.
    // (With several vectors at fault, resident points name the inputs
    // before a, b, c, and aux last.)
    let check = match (values_checked, device) {
        (true, _) => None,
        (false, Some(_)) => {
            timed(engine::Stage::CheckValues, || w.check_inputs_reduced(index))?;
            Some(index)
        }
        (false, None) => {
            timed(engine::Stage::CheckValues, || w.check_reduced(index))?;
            None
        }
    };
    // Streamed MSMs take their density selections from the CPU, made
    // before the lane so that they overlap another circuit's GPU stage.
    let selecting = Instant::now();
    let sel = device.is_none().then(|| DensitySelected::of(w));
    engine::STATS.add(engine::Stage::CpuSelect, selecting.elapsed());
    check_cancelled(cancelled)?;
    // With resident points (h stays on the GPU), a, b, c go up while
    // another circuit's GPU stage runs; with the lane free, the H step
    // uploads them itself (overlapped with its transforms).
    let lane = engine::try_gpu_lane(gpu);
    let ahead = match (device, &lane) {
        (Some(_), None) => upload_ahead(domain, w, gpu, cancelled, check)?,
        _ => None,
    };
    let circuit = Circuit { index, w, check };
    gpu_stage(call, device, circuit, sel.as_ref(), (ahead, lane), gpu)
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
