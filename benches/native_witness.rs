//! Witness values of one PoRep label's SHA-256 (create_label's input: 39
//! blocks of 256 bits, 20 compressions): computed natively
//! (`porep::native::sha256`) against bellpepper's `sha256` gadget into
//! bellperson's values-only `WitnessCS`, the way the C2 job's values path
//! computes them today. A 32 GiB partition computes 18 × 11 of these.

use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::util_cs::witness_cs::WitnessCS;
use bellperson::ConstraintSystem;
use blstrs::Scalar;
use c2prover::porep::native::bits::Bit;
use c2prover::porep::native::{sha256, Aux};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

/// create_label's layout: replica id (256 allocated bits), layer index
/// (constants) and node (64 allocated bits), zeros to 512 bits, then 37
/// parents of 255 allocated bits and a zero each.
fn label_input() -> Vec<Bit> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        Bit::Is(state & 1 == 1)
    };
    let mut input: Vec<Bit> = (0..256).map(|_| random()).collect();
    input.extend((0..32).map(|i| Bit::Const(i == 30)));
    input.extend((0..64).map(|_| random()));
    input.resize(512, Bit::Const(false));
    for _ in 0..37 {
        input.extend((0..255).map(|_| random()));
        input.push(Bit::Const(false));
    }
    input
}

fn label_sha256(c: &mut Criterion) {
    let input = label_input();
    let mut group = c.benchmark_group("label_sha256_witness");
    group.sample_size(10).warm_up_time(Duration::from_secs(1));
    group.bench_function("native", |b| {
        b.iter_with_large_drop(|| {
            let mut aux = Aux::with_capacity(600_000);
            let bits: Vec<Bit> = input
                .iter()
                .map(|&bit| match bit {
                    Bit::Is(v) => Bit::alloc(&mut aux, v),
                    other => other,
                })
                .collect();
            sha256::sha256(&mut aux, &bits);
            aux
        })
    });
    group.bench_function("bellpepper gadget into WitnessCS", |b| {
        b.iter_with_large_drop(|| {
            let mut cs = WitnessCS::<Scalar>::new();
            let bits: Vec<Boolean> = input
                .iter()
                .enumerate()
                .map(|(i, &bit)| match bit {
                    Bit::Is(v) => AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), Some(v))
                        .map(Boolean::from)
                        .expect("a bit allocates"),
                    other => Boolean::constant(other.value()),
                })
                .collect();
            bellperson::gadgets::sha256::sha256(cs.namespace(|| "sha256"), &bits).expect("the gadget runs");
            cs
        })
    });
    group.finish();
}

criterion_group!(benches, label_sha256);
criterion_main!(benches);
