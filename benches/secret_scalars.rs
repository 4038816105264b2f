//! r and s are secret: the assembly's multiplications by r, s and rs take
//! the same time whatever they are. `assemble` is timed with two very
//! different pairs in turn — r = s = 1 (one bit set) and r, s of full width
//! (random) — and Welch's t is computed over the samples below the pooled
//! 90th percentile (dudect's test, cropped against interrupts). |t| above
//! 10 means the time depends on the scalars: the bench fails.
//! `cargo bench --bench secret_scalars` (C2P_BENCH_SAMPLES, default 3000
//! per pair).

use c2prover::groth16::{assemble, QuerySums};
use c2prover::testkit::synthetic::Circuit;
use c2prover::{Fr, G1, G2};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

/// Mean, variance and count of `xs`.
fn moments(xs: &[f64]) -> (f64, f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var, n)
}

fn main() -> ExitCode {
    let samples: usize = std::env::var("C2P_BENCH_SAMPLES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(3000);
    let vk = Circuit::porep_like(4, 1, 1).unwrap().setup(2).vk;
    let g1 = G1::generator();
    let sums = QuerySums {
        a: g1.mul(&Fr::from_u64(3)),
        b_g1: g1.mul(&Fr::from_u64(5)),
        b_g2: G2::generator().mul(&Fr::from_u64(7)),
        h: g1.mul(&Fr::from_u64(11)),
        l: g1.mul(&Fr::from_u64(13)),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let pairs = [(Fr::ONE, Fr::ONE), (Fr::random(&mut rng), Fr::random(&mut rng))];
    let mut times = [Vec::with_capacity(samples), Vec::with_capacity(samples)];
    for i in 0..2 * samples + 200 {
        let k = i % 2;
        let (r, s) = &pairs[k];
        let started = Instant::now();
        black_box(assemble(&vk, black_box(&sums), black_box(r), black_box(s)));
        let ns = started.elapsed().as_nanos() as f64;
        if i >= 200 {
            times[k].push(ns); // after a warm-up
        }
    }
    let mut pooled: Vec<f64> = times.iter().flatten().copied().collect();
    pooled.sort_by(f64::total_cmp);
    let crop = pooled[pooled.len() * 9 / 10];
    let kept: Vec<Vec<f64>> = times
        .iter()
        .map(|t| t.iter().copied().filter(|&x| x <= crop).collect())
        .collect();
    let (m0, v0, n0) = moments(&kept[0]);
    let (m1, v1, n1) = moments(&kept[1]);
    let t = (m0 - m1) / (v0 / n0 + v1 / n1).sqrt();
    println!(
        "assemble: r = s = 1 {:.1} µs (n {}), r, s random {:.1} µs (n {}); Welch's t = {t:.2} (|t| > 10 fails)",
        m0 / 1e3,
        n0,
        m1 / 1e3,
        n1
    );
    if t.abs() > 10.0 {
        eprintln!("the assembly's time depends on r and s");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
