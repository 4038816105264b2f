//! The witness value check (every a, b, c, input and aux value below the
//! modulus), which every proof pays once per circuit: bytes scanned per
//! second on all cores. 2^22 values per vector by default (512 MiB in all;
//! C2P_BENCH_LOG2 overrides); a 2^27 PoRep partition scans 16 GiB.

use c2prover::{Fr, Witness};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::time::Duration;

fn check_values(c: &mut Criterion) {
    let log2: u32 = std::env::var("C2P_BENCH_LOG2")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(22);
    let n = 1usize << log2;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let random: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
    let w = Witness {
        a: random.clone(),
        b: random.clone(),
        c: random.clone(),
        inputs: vec![Fr::ONE],
        aux: random,
        ..Witness::default()
    };
    let a = w.as_assignment();
    let mut group = c.benchmark_group("check_values");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .throughput(Throughput::Bytes((4 * n * std::mem::size_of::<Fr>()) as u64));
    group.bench_function(format!("4 x 2^{log2} values"), |b| {
        b.iter(|| a.check_reduced(0).expect("all values are reduced"))
    });
    group.finish();
}

criterion_group!(benches, check_values);
criterion_main!(benches);
