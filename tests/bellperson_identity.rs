//! The primary correctness test: for the same parameters, circuit, r and s,
//! c2prover's proof bytes equal bellperson's CPU prover's; every proof
//! verifies with bellperson's verifier and ours; a changed public input
//! fails both.

mod common;

use bellperson::groth16;
use blstrs::{Bls12, Scalar};
use common::*;
use ff::Field;

/// Proves `circuits` (one shape, one parameter set) with both provers and
/// checks everything the suite promises. Returns the proofs.
fn cross_check(circuits: &[TestCircuit], setup_seed: u64) -> Vec<[u8; 192]> {
    let params = setup(circuits[0], setup_seed);
    let (_, ours) = to_ours(&params);
    let witnesses: Vec<c2prover::Witness> = circuits.iter().map(|c| Recorder::record(*c)).collect();
    let (r, s) = random_pairs(circuits.len(), setup_seed ^ 0x5eed);

    let theirs = groth16::create_proof_batch(circuits.to_vec(), &params, r.clone(), s.clone())
        .expect("bellperson proves");
    let assignments: Vec<c2prover::Assignment> = witnesses.iter().map(|w| w.as_assignment()).collect();
    let r_ours: Vec<c2prover::Fr> = r.iter().copied().map(fr).collect();
    let s_ours: Vec<c2prover::Fr> = s.iter().copied().map(fr).collect();
    let mine = c2prover::prove(&ours, &assignments, &r_ours, &s_ours).expect("c2prover proves");

    let pvk = groth16::prepare_verifying_key(&params.vk);
    let mut out = Vec::new();
    for (i, (theirs, mine)) in theirs.iter().zip(&mine).enumerate() {
        let mut expected = Vec::new();
        theirs.write(&mut expected).unwrap();
        let got = mine.to_compressed();
        assert_eq!(
            got.as_slice(),
            expected.as_slice(),
            "circuit {i}: proof bytes differ from bellperson"
        );

        let inputs = public_inputs(&witnesses[i]);
        let parsed = groth16::Proof::<Bls12>::read(&got[..]).expect("bellperson reads our proof");
        assert!(
            groth16::verify_proof(&pvk, &parsed, &inputs).unwrap(),
            "circuit {i}: bellperson rejects"
        );
        let ours_inputs: Vec<c2prover::Fr> = witnesses[i].inputs[1..].to_vec();
        assert!(
            c2prover::verify(&ours.vk, &ours_inputs, mine).unwrap(),
            "circuit {i}: we reject"
        );

        // A changed public input must fail (circuits here have at least one).
        let mut tampered = inputs.clone();
        tampered[0] += Scalar::ONE;
        assert!(
            !groth16::verify_proof(&pvk, &parsed, &tampered).unwrap(),
            "circuit {i}: tampered accepted"
        );
        let mut tampered_ours = ours_inputs.clone();
        tampered_ours[0] += c2prover::Fr::ONE;
        assert!(!c2prover::verify(&ours.vk, &tampered_ours, mine).unwrap());
        out.push(got);
    }
    out
}

#[test]
fn inputs_only() {
    cross_check(
        &[TestCircuit {
            shape: Shape::InputsOnly,
            size: 100,
            seed: 1,
        }],
        11,
    );
}

#[test]
fn no_b_terms() {
    cross_check(
        &[TestCircuit {
            shape: Shape::NoB,
            size: 700,
            seed: 2,
        }],
        12,
    );
}

#[test]
fn bits_heavy_witness() {
    cross_check(
        &[TestCircuit {
            shape: Shape::Bits,
            size: 3000,
            seed: 3,
        }],
        13,
    );
}

#[test]
fn abc_size_just_over_half_the_domain() {
    let circuit = TestCircuit {
        shape: Shape::HalfDomain,
        size: 1024,
        seed: 4,
    };
    let w = Recorder::record(circuit);
    assert_eq!(
        w.a.len(),
        1025,
        "the shape must leave 1023 of 2048 domain points empty"
    );
    cross_check(&[circuit], 14);
}

#[test]
fn random_dense() {
    cross_check(
        &[TestCircuit {
            shape: Shape::RandomDense,
            size: 2000,
            seed: 5,
        }],
        15,
    );
}

#[test]
fn batch_of_ten_with_different_witnesses() {
    let circuits: Vec<TestCircuit> = (0..10)
        .map(|i| TestCircuit {
            shape: Shape::Bits,
            size: 600,
            seed: 100 + i,
        })
        .collect();
    let proofs = cross_check(&circuits, 16);
    for i in 1..proofs.len() {
        assert_ne!(
            proofs[0], proofs[i],
            "different witnesses and r, s give different proofs"
        );
    }
}

#[test]
fn proving_twice_with_the_same_r_s_is_deterministic() {
    let circuit = TestCircuit {
        shape: Shape::RandomDense,
        size: 300,
        seed: 6,
    };
    let a = cross_check(&[circuit], 17);
    let b = cross_check(&[circuit], 17);
    assert_eq!(a, b);
}

#[test]
fn synthetic_circuit_and_setup_agree_with_bellperson() {
    // Our synthetic setup read by bellperson, our circuit replayed through
    // bellperson's API: bellperson's proof equals ours and verifies.
    let circuit = c2prover::testkit::synthetic::Circuit::porep_like(10, 21, 22).unwrap();
    let ours = circuit.setup(23);
    let theirs = to_bellperson(&ours);
    let witness = circuit.witness();
    assert_eq!(
        Recorder::record(Replay(&circuit)),
        witness,
        "the replay records our witness"
    );
    let (r, s) = random_pairs(1, 24);
    let expected = groth16::create_proof(Replay(&circuit), &theirs, r[0], s[0]).unwrap();
    let mine = c2prover::prove(&ours, &[witness.as_assignment()], &[fr(r[0])], &[fr(s[0])]).unwrap();
    let mut expected_bytes = Vec::new();
    expected.write(&mut expected_bytes).unwrap();
    assert_eq!(mine[0].to_compressed().as_slice(), expected_bytes.as_slice());
    let pvk = groth16::prepare_verifying_key(&theirs.vk);
    assert!(groth16::verify_proof(&pvk, &expected, &public_inputs(&witness)).unwrap());
}
