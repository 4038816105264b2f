//! The C1 side of the whole C2 job (feature `porep`): the real 2 KiB C1
//! fixture (tests/fixtures/porep-2kib, made by compat/porep-fixtures)
//! synthesizes into its partitions' witnesses through filecoin-proofs' own
//! circuits, and every constraint holds (a·b = c); malformed C1 outputs,
//! fuzzed, are errors of the documented kinds, never a panic. The proofs
//! themselves, against bellperson and filecoin-proofs' `verify_seal`, are in
//! tests/seal.rs.
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

/// A synthetic C1 (random vanilla proofs of the real shape, what
/// `bench c2` proves at 32 GiB) synthesizes into circuits of exactly the
/// real C1's shape: the same constraints, variables and densities. Sized
/// vectors (`record_sized`) give the same witness as growing ones.
#[test]
fn a_synthetic_c1_has_the_real_circuit_shape() {
    use c2prover::testkit::porep_c1::synthetic_c1;
    use filecoin_proofs::constants::SectorShape2KiB;
    let sector: serde_json::Value =
        serde_json::from_slice(include_bytes!("fixtures/porep-2kib/sector.json")).unwrap();
    let (miner, sector_id) = (
        sector["miner_id"].as_u64().unwrap(),
        sector["sector_id"].as_u64().unwrap(),
    );
    let prover = porep::prover_id(miner);
    let proof = porep::RegisteredSealProof::StackedDrg2KiBV1_1;
    let json = synthetic_c1(proof, &prover, sector_id, 5).expect("a synthetic C1");
    let c1 = porep::parse_c1_for(&json, &prover, sector_id).expect("it parses as the API form");
    assert_eq!(c1.registered_proof, proof);
    let synthetic = porep::synthesize_partitions(c1).expect("it synthesizes");
    let real = porep::synthesize_partitions(porep::parse_c1(C1_API).unwrap()).unwrap();
    let shape = |w: &c2prover::Witness| {
        let ones = |bits: &[u64]| bits.iter().map(|w| w.count_ones()).sum::<u32>();
        (
            w.a.len(),
            w.inputs.len(),
            w.aux.len(),
            ones(&w.a_aux_density),
            ones(&w.b_inp_density),
            ones(&w.b_aux_density),
        )
    };
    assert_eq!(synthetic.len(), real.len());
    for (s, r) in synthetic.iter().zip(&real) {
        assert_eq!(
            shape(s),
            shape(r),
            "the synthetic circuit's shape is the real one"
        );
        assert_ne!(s.aux, r.aux, "with other values");
    }
    let circuit = porep::circuits_of::<SectorShape2KiB>(porep::parse_c1(C1_API).unwrap())
        .unwrap()
        .remove(0);
    let w = &real[0];
    let capacity = porep::Capacity {
        constraints: w.a.len().next_power_of_two(),
        inputs: w.inputs.len(),
        aux: w.aux.len(),
    };
    let sized = porep::Recorder::record_sized(circuit.clone(), None, capacity).expect("sized");
    assert!(sized.a == w.a && sized.b == w.b && sized.c == w.c);
    assert!(sized.inputs == w.inputs && sized.aux == w.aux);
    assert_eq!(
        (&sized.a_aux_density, &sized.b_inp_density, &sized.b_aux_density),
        (&w.a_aux_density, &w.b_inp_density, &w.b_aux_density)
    );
    // A circuit larger than its parameters stops at their sizes.
    for smaller in [
        porep::Capacity {
            constraints: w.a.len() - 1,
            ..capacity
        },
        porep::Capacity {
            aux: w.aux.len() - 1,
            ..capacity
        },
        porep::Capacity {
            inputs: w.inputs.len() - 1,
            ..capacity
        },
    ] {
        let e = porep::Recorder::record_sized(circuit.clone(), None, smaller).expect_err("too large");
        assert_eq!(e.kind, c2prover::ErrorKind::InvalidArgument, "{e}");
        assert!(e.message.contains("larger than its parameters"), "{e}");
    }
}

/// The C2 job on parameters in memory, as `bench c2` runs it at 32 GiB: a
/// synthetic 2 KiB C1 output against parameters made for its circuit's
/// shape gives one proof per partition, of valid points. (Neither the
/// circuit, random vanilla proofs, nor the parameters, random points, make
/// a proof that verifies.)
#[test]
fn a_synthetic_c1_proves_against_parameters_of_its_shape() {
    use c2prover::testkit::porep_c1::synthetic_c1;
    use c2prover::testkit::shaped::parameters_for;
    let prover = porep::prover_id(77);
    let json = synthetic_c1(porep::RegisteredSealProof::StackedDrg2KiBV1_1, &prover, 3, 4).unwrap();
    let witness = porep::synthesize_partitions(porep::parse_c1(&json).unwrap())
        .unwrap()
        .remove(0);
    let unsatisfied = (0..witness.a.len()).any(|i| witness.a[i] * witness.b[i] != witness.c[i]);
    assert!(unsatisfied, "random vanilla proofs leave constraints unsatisfied");
    let opts = porep::SealOptions {
        parameters: Some(std::sync::Arc::new(parameters_for(&witness, 1))),
        verify: false,
        ..porep::SealOptions::default()
    };
    let bytes = porep::seal_commit_phase2(&json, prover, 3, &opts).expect("a proof");
    assert_eq!(bytes.len(), c2prover::Proof::COMPRESSED_BYTES, "one partition");
    c2prover::Proof::from_compressed(&bytes).expect("points of the curve's subgroups");
}

/// Every interactive proof type, 2 KiB to 64 GiB, with and without
/// synthetic PoRep: a C1 output of its shape parses, is found to be of
/// that type, and filecoin-proofs builds one circuit per partition from it
/// (the Merkle proofs of 32 GiB's and 64 GiB's trees are the Sub and Top
/// forms).
#[test]
fn every_interactive_proof_type_builds_its_circuits() {
    use c2prover::testkit::porep_c1::synthetic_c1;
    use filecoin_proofs::constants::*;
    let prover = porep::prover_id(1234);
    for proof in porep::INTERACTIVE_PROOFS {
        let json = synthetic_c1(proof, &prover, 9, 1).expect("a C1 of the shape");
        let c1 = porep::parse_c1_for(&json, &prover, 9).expect("it parses");
        assert_eq!(c1.registered_proof, proof);
        let partitions = usize::from(proof.as_v1_config().partitions);
        let circuits = match u64::from(proof.sector_size()) {
            SECTOR_SIZE_2_KIB => porep::circuits_of::<SectorShape2KiB>(c1).map(|c| c.len()),
            SECTOR_SIZE_8_MIB => porep::circuits_of::<SectorShape8MiB>(c1).map(|c| c.len()),
            SECTOR_SIZE_512_MIB => porep::circuits_of::<SectorShape512MiB>(c1).map(|c| c.len()),
            SECTOR_SIZE_32_GIB => porep::circuits_of::<SectorShape32GiB>(c1).map(|c| c.len()),
            _ => porep::circuits_of::<SectorShape64GiB>(c1).map(|c| c.len()),
        };
        assert_eq!(
            circuits.expect("filecoin-proofs builds its circuits"),
            partitions,
            "{proof:?}"
        );
    }
}

#[test]
fn synthesis_stops_when_cancelled() {
    use filecoin_proofs::constants::SectorShape2KiB;
    let circuit = porep::circuits_of::<SectorShape2KiB>(porep::parse_c1(C1_API).unwrap())
        .unwrap()
        .remove(0);
    let cancelled = std::sync::atomic::AtomicBool::new(true);
    let e = porep::Recorder::record_unless(circuit, Some(&cancelled)).expect_err("stopped");
    assert_eq!(e.kind, ErrorKind::Cancelled, "{e}");
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
