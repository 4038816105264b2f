//! A witness that leaves a, b, c to its constraints (`Witness::products`,
//! the C2 job's partitions once their circuit's constraints are learned)
//! proves exactly as the same witness with a, b, c given: on the CPU here,
//! and on the GPU where there is one (the GPU machine runs the ignored
//! test, with the points resident and, with `C2P_PARAMS_ON_GPU=never`,
//! streamed).

use c2prover::testkit::shaped::parameters_for;
use c2prover::testkit::synthetic::unit_constraints;
use c2prover::{Fr, Witness};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// Two circuits of one shape with different values, each as a witness with
/// a, b, c and as one leaving them to the constraints; their parameters;
/// r and s.
fn circuits() -> (Vec<Witness>, Vec<Witness>, c2prover::Parameters, Vec<Fr>, Vec<Fr>) {
    let (constraints, ..) = unit_constraints(300, 1, 5).unwrap();
    let total = constraints.total();
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let (given, left): (Vec<Witness>, Vec<Witness>) = (0..2)
        .map(|_| {
            let mut inputs: Vec<Fr> = (0..total.inputs).map(|_| Fr::random(&mut rng)).collect();
            inputs[0] = Fr::ONE;
            let aux: Vec<Fr> = (0..total.aux).map(|_| Fr::random(&mut rng)).collect();
            (
                constraints.witness(inputs.clone(), aux.clone()).unwrap(),
                constraints.values_witness(inputs, aux).unwrap(),
            )
        })
        .unzip();
    let params = parameters_for(&given[0], 11);
    let r = (0..2).map(|_| Fr::random(&mut rng)).collect();
    let s = (0..2).map(|_| Fr::random(&mut rng)).collect();
    (given, left, params, r, s)
}

fn assignments(ws: &[Witness]) -> Vec<c2prover::Assignment<'_>> {
    ws.iter().map(Witness::as_assignment).collect()
}

#[test]
fn a_witness_left_to_its_constraints_proves_as_the_one_with_a_b_c() {
    let (given, left, params, r, s) = circuits();
    assert!(left.iter().all(|w| w.a.is_empty() && w.products.is_some()));
    let expected = c2prover::prove_on_cpu(&params, &assignments(&given), &r, &s).expect("proved");
    let ours = c2prover::prove_on_cpu(&params, &assignments(&left), &r, &s).expect("proved");
    assert_eq!(ours, expected, "on the CPU");
    // Given and left at once, or with another size, it is refused.
    let mut both = left[0].clone();
    both.a = given[0].a.clone();
    let e = c2prover::prove_on_cpu(&params, &[both.as_assignment()], &r[..1], &s[..1]).expect_err("both");
    assert_eq!(e.kind, c2prover::ErrorKind::SizeMismatch, "{e}");
    let mut short = left[0].clone();
    short.aux.pop();
    assert!(c2prover::prove_on_cpu(&params, &[short.as_assignment()], &r[..1], &s[..1]).is_err());
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
fn on_the_gpu_a_witness_left_to_its_constraints_proves_as_on_the_cpu() {
    assert!(
        c2prover::backend::gpu::available(),
        "needs a CUDA device and none was found"
    );
    let (given, left, params, r, s) = circuits();
    let expected = c2prover::prove_on_cpu(&params, &assignments(&given), &r, &s).expect("proved");
    for round in 0..3 {
        let ours = c2prover::prove(&params, &assignments(&left), &r, &s).expect("proved on the GPU");
        assert_eq!(ours, expected, "round {round}");
    }
}
