//! `bench ntt`, `bench h`, `bench msm`, `bench kernels`: the GPU kernels one
//! by one (medians of CUDA-event or wall times after a warm-up).

use crate::*;

/// `n` values, `zeros` % of them 0 and `ones` % 1 (to a hundredth of a
/// percent), the rest random.
#[cfg(feature = "cuda")]
pub(crate) fn porep_aux(n: usize, zeros: f64, ones: f64, seed: u64) -> Vec<Fr> {
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};
    use rayon::prelude::*;
    let zero_below = (zeros * 100.0) as u32;
    let one_below = zero_below + (ones * 100.0) as u32;
    let mut out = vec![Fr::ZERO; n];
    out.par_chunks_mut(1 << 16).enumerate().for_each(|(i, chunk)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((i as u64) << 20));
        for v in chunk {
            let roll = rng.next_u32() % 10_000;
            if roll >= one_below {
                let mut bytes = [0u8; 64];
                rng.fill_bytes(&mut bytes);
                *v = Fr::from_uniform_bytes(&bytes);
            } else if roll >= zero_below {
                *v = Fr::ONE;
            }
        }
    });
    out
}

#[cfg(feature = "cuda")]
/// Random evaluations with `zeros` percent zeros (PoRep's a, b: 49 %, c: 80 %).
pub(crate) fn random_evals(n: usize, zeros: u32, seed: u64) -> Vec<Fr> {
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};
    use rayon::prelude::*;
    let mut out = vec![Fr::ZERO; n];
    out.par_chunks_mut(1 << 16).enumerate().for_each(|(i, chunk)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((i as u64) << 20));
        for v in chunk {
            if rng.next_u32() % 100 >= zeros {
                let mut bytes = [0u8; 64];
                rng.fill_bytes(&mut bytes);
                *v = Fr::from_uniform_bytes(&bytes);
            }
        }
    });
    out
}

/// The median of timings (the upper one of an even count).
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

pub(crate) fn require_gpu() -> Result<(), Error> {
    if c2prover::backend::device_count() > 0 {
        Ok(())
    } else {
        Err(Error::new(
            c2prover::ErrorKind::Unsupported,
            "no GPU: build with --features cuda and run on a machine with a CUDA device",
        ))
    }
}

#[cfg(feature = "cuda")]
pub(crate) fn bench_ntt(args: BenchSizes) -> Result<(), Error> {
    require_gpu()?;
    for log2 in args.log2 {
        let domain =
            c2prover::math::domain::Domain::new(log2).ok_or_else(|| Error::invalid("domain too large"))?;
        let mut values = random_evals(domain.m, 0, log2 as u64);
        let (_, ms) = c2prover::backend::gpu::ntt_round_trip(&domain, &mut values, args.runs.max(1))?;
        println!(
            "ntt 2^{log2}: median {ms:.2} ms over {} runs ({:.1} M elements/s)",
            args.runs.max(1),
            domain.m as f64 / ms as f64 / 1e3
        );
    }
    Ok(())
}

#[cfg(feature = "cuda")]
pub(crate) fn bench_h(args: BenchSizes) -> Result<(), Error> {
    require_gpu()?;
    for log2 in args.log2 {
        let domain =
            c2prover::math::domain::Domain::new(log2).ok_or_else(|| Error::invalid("domain too large"))?;
        let (a, b, c) = step("generating a, b, c (49/49/80 % zeros)", || {
            (
                random_evals(domain.m, 49, 1),
                random_evals(domain.m, 49, 2),
                random_evals(domain.m, 80, 3),
            )
        });
        // Sequential uploads time the compute on its own; overlapped ones
        // are the prover's mode (upload and compute together).
        let (mut compute, mut up, mut down, mut total, mut wall) = (vec![], vec![], vec![], vec![], vec![]);
        for run in 0..=args.runs {
            let (_, t) = c2prover::backend::gpu::quotient(0, &domain, &a, &b, &c, false)?;
            let started = Instant::now();
            let (_, o) = c2prover::backend::gpu::quotient(0, &domain, &a, &b, &c, true)?;
            let elapsed = started.elapsed().as_secs_f64() * 1e3;
            if run > 0 {
                compute.push(t.compute_ms as f64);
                up.push(o.upload_ms as f64);
                down.push(o.download_ms as f64);
                total.push(o.total_ms as f64);
                wall.push(elapsed);
            }
        }
        println!(
            "h 2^{log2}: median compute {:.1} ms (data on the device), upload+compute {:.1} ms \
             (overlapped; the upload of a,b,c alone {:.1} ms), download h {:.1} ms, whole call {:.1} ms \
             ({} runs after a warm-up)",
            median(compute),
            median(total),
            median(up),
            median(down),
            median(wall),
            args.runs
        );
    }
    Ok(())
}

#[cfg(feature = "cuda")]
pub(crate) fn bench_kernels() -> Result<(), Error> {
    require_gpu()?;
    let (muls, copy) = c2prover::backend::gpu::microbench(27)?;
    println!(
        "kernels: {muls:.1} G Fr multiplications/s, device copy {copy:.0} GB/s (read + write, 2^27 x 32 B)"
    );
    for (probe, rate) in c2prover::backend::gpu::instruction_rates()? {
        println!("kernels: {probe}: {rate:.1} instructions per clock per SM");
    }
    Ok(())
}

/// Median wall time in ms of `runs` calls after one warm-up.
#[cfg(feature = "cuda")]
pub(crate) fn time_runs<T>(runs: usize, mut f: impl FnMut() -> Result<T, Error>) -> Result<f64, Error> {
    f()?;
    let mut times = Vec::new();
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        f()?;
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(times))
}

#[cfg(feature = "cuda")]
pub(crate) fn bench_msm(args: BenchSizes) -> Result<(), Error> {
    use c2prover::{G1, G2};
    use rayon::prelude::*;
    require_gpu()?;
    let max = args.log2.iter().copied().max().unwrap_or(20);
    // 2^16 distinct random points, tiled: the MSM's cost does not depend
    // on the points being distinct.
    let distinct = 1usize << 16;
    let ks = random_evals(distinct, 0, 7);
    let g1 = step("generating points", || {
        let base: Vec<G1> = ks.par_iter().map(|k| G1::generator().mul(k)).collect();
        let base = G1::batch_to_affine(&base);
        (0..1usize << max).map(|i| base[i % distinct]).collect::<Vec<_>>()
    });
    let device_g1 = c2prover::backend::gpu::upload_g1(0, &g1)?;
    drop(g1);
    for &log2 in &args.log2 {
        let n = 1usize << log2;
        let dense = random_evals(n, 0, 11);
        let mut phases = None;
        let ms = time_runs(args.runs, || {
            c2prover::backend::gpu::msm_timed::<G1>(
                &device_g1,
                0,
                c2prover::backend::gpu::Scalars::Host(&dense),
                None,
            )
            .map(|(_, t)| phases = Some(t))
        })?;
        println!(
            "msm g1 2^{log2} dense: median {ms:.1} ms ({:.1} M points/s, scalars uploaded from the host); last run: {:?}",
            n as f64 / ms / 1e3,
            phases.unwrap_or_default()
        );
        // The same scalars already in device memory (the prover's MSM over
        // h finds h there): no upload from the host. Shared scalars are
        // converted into a copy of the MSM's own (the prover's MSM over h
        // converts h in place): the same traffic.
        let resident = c2prover::backend::gpu::upload_scalars(0, &dense, None)?;
        let mut phases = None;
        let ms = time_runs(args.runs, || {
            c2prover::backend::gpu::msm_timed::<G1>(
                &device_g1,
                0,
                c2prover::backend::gpu::Scalars::Shared(&resident),
                None,
            )
            .map(|(_, t)| phases = Some(t))
        })?;
        drop(resident);
        println!(
            "msm g1 2^{log2} dense, scalars on the device: median {ms:.1} ms ({:.1} M points/s); last run: {:?}",
            n as f64 / ms / 1e3,
            phases.unwrap_or_default()
        );
        // PoRep's L vector: about half zeros, most of the rest ones.
        let witness: Vec<Fr> = random_evals(n, 49, 12)
            .into_iter()
            .enumerate()
            .map(|(i, v)| if !v.is_zero() && i % 10 < 8 { Fr::ONE } else { v })
            .collect();
        let mut phases = None;
        let ms = time_runs(args.runs, || {
            c2prover::backend::gpu::msm_timed::<G1>(
                &device_g1,
                0,
                c2prover::backend::gpu::Scalars::Host(&witness),
                None,
            )
            .map(|(_, t)| phases = Some(t))
        })?;
        // split_ms covers the zero/one/other split and the sum of the ones.
        println!(
            "msm g1 2^{log2} witness (49 % zeros, ~41 % ones): median {ms:.1} ms; last run: {:?}",
            phases.unwrap_or_default()
        );
        // PoRep's aux vector itself (anchors.md): 1.64 % of the values are
        // neither 0 nor 1 (2.1 M at 2^27, where c = 17 once left the top
        // window only carries: one huge bucket).
        let mix = c2prover::testkit::shaped::ValueMix::default();
        let aux = porep_aux(n, mix.aux_zeros, mix.aux_ones, 14);
        let mut phases = None;
        let ms = time_runs(args.runs, || {
            c2prover::backend::gpu::msm_timed::<G1>(
                &device_g1,
                0,
                c2prover::backend::gpu::Scalars::Host(&aux),
                None,
            )
            .map(|(_, t)| phases = Some(t))
        })?;
        println!(
            "msm g1 2^{log2} PoRep aux ({} % zeros, {} % ones): median {ms:.1} ms; last run: {:?}",
            mix.aux_zeros,
            mix.aux_ones,
            phases.unwrap_or_default()
        );
    }
    drop(device_g1);
    let g2_log2: Vec<u32> = args.log2.iter().copied().filter(|&l| l <= 24).collect();
    if let Some(&g2_max) = g2_log2.iter().max() {
        let g2 = step("generating G2 points", || {
            let base: Vec<G2> = ks[..4096].par_iter().map(|k| G2::generator().mul(k)).collect();
            let base = G2::batch_to_affine(&base);
            (0..1usize << g2_max).map(|i| base[i % 4096]).collect::<Vec<_>>()
        });
        let device_g2 = c2prover::backend::gpu::upload_g2(0, &g2)?;
        for log2 in g2_log2 {
            let dense = random_evals(1 << log2, 0, 13);
            let ms = time_runs(args.runs, || {
                c2prover::backend::gpu::msm::<G2>(
                    &device_g2,
                    0,
                    c2prover::backend::gpu::Scalars::Host(&dense),
                    None,
                )
            })?;
            println!("msm g2 2^{log2} dense: median {ms:.1} ms");
        }
    }
    Ok(())
}

#[cfg(not(feature = "cuda"))]
pub(crate) fn bench_msm(_: BenchSizes) -> Result<(), Error> {
    require_gpu()
}

#[cfg(not(feature = "cuda"))]
pub(crate) fn bench_kernels() -> Result<(), Error> {
    require_gpu()
}

#[cfg(not(feature = "cuda"))]
pub(crate) fn bench_ntt(_: BenchSizes) -> Result<(), Error> {
    require_gpu()
}

#[cfg(not(feature = "cuda"))]
pub(crate) fn bench_h(_: BenchSizes) -> Result<(), Error> {
    require_gpu()
}
