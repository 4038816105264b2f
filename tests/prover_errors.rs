//! Bad calls to the prover are refused before any work, with the kind and a
//! message that says what is wrong.

use c2prover::testkit::synthetic::Circuit;
use c2prover::{prove, random_r_s, Assignment, ErrorKind, Fr, Parameters, Witness};

fn fixture() -> (Parameters, Witness) {
    let cs = Circuit::porep_like(7, 1, 1).unwrap();
    (cs.setup(1), cs.witness())
}

fn refuse(params: &Parameters, circuits: &[Assignment], r: &[Fr], s: &[Fr], kind: ErrorKind, says: &str) {
    match prove(params, circuits, r, s) {
        Ok(_) => panic!("accepted a bad call (expected: {says})"),
        Err(e) => {
            assert_eq!(e.kind, kind, "{}", e.message);
            assert!(
                e.message.contains(says),
                "message {:?} should say {:?}",
                e.message,
                says
            );
        }
    }
}

#[test]
fn the_fixture_proves() {
    let (params, w) = fixture();
    let (r, s) = random_r_s(1);
    let proof = prove(&params, &[w.as_assignment()], &r, &s).unwrap();
    assert!(c2prover::verify(&params.vk, &w.inputs[1..], &proof[0]).unwrap());
}

#[test]
fn zero_circuits_and_r_s_counts() {
    let (params, w) = fixture();
    let (r, s) = random_r_s(2);
    refuse(&params, &[], &[], &[], ErrorKind::InvalidArgument, "no circuits");
    refuse(
        &params,
        &[w.as_assignment()],
        &r,
        &s[..1],
        ErrorKind::SizeMismatch,
        "need 1 r and 1 s",
    );
    refuse(
        &params,
        &[w.as_assignment()],
        &r[..1],
        &[],
        ErrorKind::SizeMismatch,
        "got 1 and 0",
    );
    let mut unreduced = Fr::ONE;
    unreduced.0.l = [u64::MAX; 4];
    refuse(
        &params,
        &[w.as_assignment()],
        &[unreduced],
        &s[..1],
        ErrorKind::InvalidArgument,
        "r[0] is not a field element",
    );
}

#[test]
fn mismatched_densities() {
    let (params, w) = fixture();
    let (r, s) = random_r_s(1);
    let good = w.as_assignment();

    let mut bad = good;
    bad.a_aux_density.bit_len -= 1;
    refuse(
        &params,
        &[bad],
        &r,
        &s,
        ErrorKind::SizeMismatch,
        "a_aux_bit_len is",
    );

    let mut bad = good;
    bad.b_inp_density.popcount += 1;
    refuse(
        &params,
        &[bad],
        &r,
        &s,
        ErrorKind::SizeMismatch,
        "b_inp_popcount is",
    );

    let mut bad = good;
    bad.b_aux_density.words = &bad.b_aux_density.words[..1];
    refuse(
        &params,
        &[bad],
        &r,
        &s,
        ErrorKind::SizeMismatch,
        "b_aux density has 1 words",
    );

    // A flipped bit with its popcount kept consistent: the parameters no
    // longer have one point per selected variable.
    let mut flipped = w.clone();
    let i = (0..flipped.aux.len())
        .find(|i| flipped.a_aux_density[i / 64] >> (i % 64) & 1 == 0)
        .unwrap();
    flipped.a_aux_density[i / 64] |= 1 << (i % 64);
    refuse(
        &params,
        &[flipped.as_assignment()],
        &r,
        &s,
        ErrorKind::SizeMismatch,
        "A points",
    );
}

#[test]
fn abc_vectors() {
    let (params, w) = fixture();
    let (r, s) = random_r_s(1);
    let mut long = w.clone();
    long.a.resize(params.domain_size() + 1, Fr::ZERO);
    long.b.resize(params.domain_size() + 1, Fr::ZERO);
    long.c.resize(params.domain_size() + 1, Fr::ZERO);
    refuse(
        &params,
        &[long.as_assignment()],
        &r,
        &s,
        ErrorKind::SizeMismatch,
        "exceeds the parameters' domain size",
    );

    let mut ragged = w.clone();
    ragged.c.pop();
    refuse(
        &params,
        &[ragged.as_assignment()],
        &r,
        &s,
        ErrorKind::SizeMismatch,
        "same length",
    );
}

#[test]
fn parameters_for_a_different_circuit() {
    let (_, w) = fixture();
    let other = Circuit::porep_like(8, 2, 2).unwrap().setup(2);
    let (r, s) = random_r_s(1);
    refuse(
        &other,
        &[w.as_assignment()],
        &r,
        &s,
        ErrorKind::SizeMismatch,
        "different circuit",
    );

    // Same sizes, different structure: the density counts disagree.
    let same_size = Circuit::porep_like(7, 99, 1).unwrap().setup(3);
    refuse(
        &same_size,
        &[w.as_assignment()],
        &r,
        &s,
        ErrorKind::SizeMismatch,
        "different circuit",
    );
}

#[test]
fn second_circuit_is_named() {
    let (params, w) = fixture();
    let (r, s) = random_r_s(2);
    let mut bad = w.as_assignment();
    bad.inputs = &bad.inputs[1..];
    refuse(
        &params,
        &[w.as_assignment(), bad],
        &r,
        &s,
        ErrorKind::SizeMismatch,
        "circuit 1:",
    );
}

#[test]
fn witness_values_not_below_the_modulus_are_refused() {
    let (params, w) = fixture();
    let (r, s) = random_r_s(2);
    // Above the modulus in the top limb, in each vector of the second
    // circuit; the CPU backend refuses the same.
    for vector in ["a", "b", "c", "inputs", "aux"] {
        let mut bad = w.clone();
        let target = match vector {
            "a" => &mut bad.a,
            "b" => &mut bad.b,
            "c" => &mut bad.c,
            "inputs" => &mut bad.inputs,
            _ => &mut bad.aux,
        };
        let at = target.len() - 1;
        target[at].0.l[3] = u64::MAX;
        let circuits = [w.as_assignment(), bad.as_assignment()];
        let says = format!("circuits[1].{vector}[{at}] is not below the field modulus");
        refuse(&params, &circuits, &r, &s, ErrorKind::InvalidArgument, &says);
        let e = c2prover::prove_on_cpu(&params, &circuits, &r, &s).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgument);
        assert!(e.message.contains(&says), "{}", e.message);
    }
}
