//! The whole C2 job (feature `porep`, in progress): the real 2 KiB C1
//! fixtures (tests/fixtures/porep-2kib, made by compat/porep-fixtures)
//! synthesize into their partitions' witnesses through filecoin-proofs' own
//! circuits, and every constraint holds (a·b = c); malformed C1 outputs,
//! fuzzed, are errors of the documented kinds, never a panic.
#![cfg(feature = "porep")]

mod common;

use bolero::check;
use c2prover::{porep, ErrorKind};
use common::fuzz_time;

const C1_API: &[u8] = include_bytes!("fixtures/porep-2kib/c1-api.json");

#[test]
fn the_2kib_c1_synthesizes_into_satisfied_partitions() {
    let c1 = porep::parse_c1(C1_API).expect("the fixture parses");
    let witnesses = porep::synthesize_partitions(c1).expect("the fixture synthesizes");
    assert_eq!(witnesses.len(), 1, "2 KiB sectors prove in one partition");
    for (k, w) in witnesses.iter().enumerate() {
        assert!(
            w.aux.len() > 1000 && w.inputs.len() > 1,
            "partition {k}: a circuit"
        );
        assert_eq!(w.a.len(), w.b.len());
        assert_eq!(w.a.len(), w.c.len());
        let unsatisfied = (0..w.a.len()).filter(|&i| w.a[i] * w.b[i] != w.c[i]).count();
        assert_eq!(unsatisfied, 0, "partition {k}: every constraint holds");
    }
}

/// The real 2 KiB circuit proved by bellperson's CPU prover and by
/// c2prover from the recorded witness, over the same parameters (distinct
/// random points sized for the circuit: a real setup takes ~10 minutes
/// here) and the same r and s: the proof bytes are equal, so the recorded
/// a, b, c, densities, inputs and aux are bellperson's own.
#[test]
fn the_2kib_partition_proves_as_bellperson_does() {
    use bellperson::groth16;
    use blstrs::{Bls12, Scalar};
    use ff::Field;
    use filecoin_proofs::constants::SectorShape2KiB;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    let c1 = porep::parse_c1(C1_API).unwrap();
    let circuit = porep::circuits_of::<SectorShape2KiB>(c1).unwrap().remove(0);
    let witness = porep::Recorder::record(circuit.clone()).unwrap();
    let ours = c2prover::testkit::shaped::parameters_for(&witness, 3);
    let mut bytes = Vec::new();
    ours.write(&mut bytes).unwrap();
    let theirs = groth16::Parameters::<Bls12>::read(&bytes[..], false).unwrap();

    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let mut expected = Vec::new();
    groth16::create_proof(circuit, &theirs, r, s)
        .unwrap()
        .write(&mut expected)
        .unwrap();
    let fr = |x: Scalar| c2prover::Fr(x.into());
    let proofs = c2prover::prove_on_cpu(&ours, &[witness.as_assignment()], &[fr(r)], &[fr(s)]).unwrap();
    assert_eq!(
        proofs[0].to_compressed().as_slice(),
        expected.as_slice(),
        "the proof bytes equal bellperson's"
    );
}

#[test]
fn a_c1_that_is_not_json_is_an_invalid_argument() {
    for bad in [&b""[..], b"{", b"[]", &C1_API[..C1_API.len() / 2]] {
        let e = porep::parse_c1(bad).expect_err("refused");
        assert_eq!(e.kind, c2prover::ErrorKind::InvalidArgument, "{e}");
    }
}

/// The fixture with the fuzzer's bytes read as edits: pairs of (where,
/// what) replace digits with digits (still JSON, other numbers: hashes,
/// paths and indices of the vanilla proofs go wrong), and a last byte of
/// 0xff cuts the text short.
fn edited_c1(input: &[u8]) -> Vec<u8> {
    let mut json = C1_API.to_vec();
    for pair in input.chunks(4) {
        if let [a, b, c, digit] = *pair {
            let at = u32::from_le_bytes([a, b, c, 0]) as usize % json.len();
            if json[at].is_ascii_digit() {
                json[at] = b'0' + digit % 10;
            }
        }
    }
    if input.last() == Some(&0xff) {
        json.truncate(input.len() * 97 % json.len());
    }
    json
}

/// Every input, as raw bytes and as edits to the real fixture: parsed and,
/// when it parses, synthesized; an error is an invalid argument or an
/// unsupported proof, never a panic or another kind.
#[test]
fn fuzz_c1_json() {
    check!().with_test_time(fuzz_time()).for_each(|input: &[u8]| {
        for json in [input.to_vec(), edited_c1(input)] {
            let outcome = porep::parse_c1(&json).and_then(porep::synthesize_partitions);
            if let Err(e) = outcome {
                assert!(
                    matches!(e.kind, ErrorKind::InvalidArgument | ErrorKind::Unsupported),
                    "{e:?}"
                );
            }
        }
    });
}
