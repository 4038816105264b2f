//! CPU proving, c2prover beside bellperson's CPU prover, on the same
//! PoRep-like synthetic circuit, parameters, r and s, in the same run.
//! Both timings include recording the witness from the circuit (bellperson
//! synthesizes inside `create_proof`). Sizes: 2^14, 2^16, 2^18 constraints
//! (override with C2P_BENCH_LOG2="14,16").

#[path = "../tests/common/mod.rs"]
mod common;

use bellperson::groth16;
use common::{fr, random_pairs, to_bellperson, Recorder, Replay};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::time::Duration;

fn sizes() -> Vec<u32> {
    std::env::var("C2P_BENCH_LOG2")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![14, 16, 18])
}

fn prove_cpu(c: &mut Criterion) {
    let mut group = c.benchmark_group("prove_cpu");
    group.sample_size(10).warm_up_time(Duration::from_secs(1));
    for log2 in sizes() {
        let circuit = c2prover::testkit::synthetic::Circuit::porep_like(log2, 1, 1).expect("circuit");
        let ours = circuit.setup(2);
        let theirs = to_bellperson(&ours);
        let (r, s) = random_pairs(1, 3);
        let (r_ours, s_ours) = ([fr(r[0])], [fr(s[0])]);

        // The two must agree before their times mean anything.
        let witness = Recorder::record(Replay(&circuit));
        let mine = c2prover::prove(&ours, &[witness.as_assignment()], &r_ours, &s_ours).expect("prove");
        let expected = groth16::create_proof(Replay(&circuit), &theirs, r[0], s[0]).expect("bellperson");
        let mut expected_bytes = Vec::new();
        expected.write(&mut expected_bytes).expect("write");
        assert_eq!(
            mine[0].to_compressed().as_slice(),
            expected_bytes.as_slice(),
            "proofs differ at 2^{log2}"
        );

        group.measurement_time(Duration::from_secs(if log2 >= 18 { 40 } else { 10 }));
        group.bench_with_input(BenchmarkId::new("c2prover", log2), &log2, |b, _| {
            b.iter(|| {
                let w = Recorder::record(Replay(&circuit));
                c2prover::prove(&ours, &[w.as_assignment()], &r_ours, &s_ours).expect("prove")
            })
        });
        group.bench_with_input(BenchmarkId::new("bellperson", log2), &log2, |b, _| {
            b.iter(|| groth16::create_proof(Replay(&circuit), &theirs, r[0], s[0]).expect("prove"))
        });
    }
    group.finish();
}

criterion_group!(benches, prove_cpu);
criterion_main!(benches);
