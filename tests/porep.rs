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

/// Sizes to record a witness like `w` into.
fn capacity_of(w: &c2prover::Witness) -> porep::Capacity {
    porep::Capacity {
        constraints: w.a.len().next_power_of_two(),
        inputs: w.inputs.len(),
        aux: w.aux.len(),
    }
}

/// The shared recorder (the C2 job's path: a partition's challenges on
/// several threads) gives the sequential recorder's witness byte for byte,
/// on any number of threads, for the real 2 KiB circuit and a synthetic
/// 8 MiB one; it stops at its capacity and when cancelled as the
/// sequential one does.
#[test]
fn the_shared_recorder_gives_the_sequential_witness() {
    use c2prover::testkit::porep_c1::synthetic_c1;
    use filecoin_proofs::constants::{SectorShape2KiB, SectorShape8MiB};
    let partition = porep::partitions::<SectorShape2KiB>(porep::parse_c1(C1_API).unwrap())
        .unwrap()
        .remove(0);
    let shared = |partition: &porep::Partition<_>, cancelled, capacity, threads| {
        porep::record_shared(
            |some| partition.circuit_of(some),
            partition.challenges(),
            cancelled,
            capacity,
            threads,
            porep::is_challenge,
        )
    };
    assert!(partition.challenges() > 1);
    let sequential = porep::Recorder::record(partition.circuit().unwrap()).expect("recorded");
    let capacity = capacity_of(&sequential);
    let mut left_to_constraints = 0;
    for threads in [1, 2, 3, partition.challenges() + 1] {
        let witness = shared(&partition, None, capacity, threads)
            .unwrap_or_else(|e| panic!("{threads} threads: {e:?}"));
        assert!(witness == sequential, "{threads} threads: the same witness");
        // Once the constraints are learned (after the first), the job's
        // witness leaves a, b, c to them.
        let through_the_job = porep::record_partition(&partition, None, capacity, threads).expect("recorded");
        let expanded = match &through_the_job.products {
            Some(constraints) => {
                assert!(
                    through_the_job.a.is_empty(),
                    "a, b, c are left to the constraints"
                );
                left_to_constraints += 1;
                constraints
                    .witness(through_the_job.inputs.clone(), through_the_job.aux.clone())
                    .unwrap()
            }
            None => through_the_job,
        };
        assert!(expanded == sequential);
    }
    assert!(
        left_to_constraints >= 3,
        "the job's path after its first partition was taken"
    );
    let smaller = porep::Capacity {
        aux: sequential.aux.len() - 1,
        ..capacity
    };
    // Past its capacity, the shared recorder leaves it to the sequential
    // one, which says so; the shape it knows stays good for the next.
    match shared(&partition, None, smaller, 2) {
        Err(porep::SharedFailure::Dependent(why)) => {
            assert!(why.contains("larger than its parameters"), "{why}")
        }
        other => panic!("a circuit past its capacity: {:?}", other.map(|_| ())),
    }
    let e = porep::record_partition(&partition, None, smaller, 2).expect_err("too large");
    assert_eq!(e.kind, ErrorKind::InvalidArgument, "{e}");
    assert!(e.message.contains("larger than its parameters"), "{e}");
    assert!(shared(&partition, None, capacity, 2).expect("recorded") == sequential);
    let cancelled = std::sync::atomic::AtomicBool::new(true);
    match shared(&partition, Some(&cancelled), capacity, 2) {
        Err(porep::SharedFailure::Failed(e)) => assert_eq!(e.kind, ErrorKind::Cancelled, "{e}"),
        other => panic!("a cancelled recording: {:?}", other.map(|_| ())),
    }

    let proof = porep::RegisteredSealProof::StackedDrg8MiBV1_1;
    let prover = porep::prover_id(1000);
    let json = synthetic_c1(proof, &prover, 3, 3).expect("a synthetic 8 MiB C1");
    let partition = porep::partitions::<SectorShape8MiB>(porep::parse_c1_for(&json, &prover, 3).unwrap())
        .unwrap()
        .remove(0);
    let sequential = porep::Recorder::record(partition.circuit().unwrap()).expect("recorded");
    let witness = shared(&partition, None, capacity_of(&sequential), 4).expect("recorded on 4 threads");
    assert!(witness == sequential, "8 MiB: the same witness");
}

/// While the first partition of a shape is recorded whole and its
/// constraints learned, the others synthesize their values, give their
/// cores back, and wait for the rows: their witnesses then equal the
/// recorder's. Before anyone learns, a partition held to its values'
/// memory asks for the whole reservation instead.
#[test]
fn partitions_wait_for_the_one_learning_their_constraints() {
    use c2prover::testkit::porep_c1::synthetic_c1;
    use filecoin_proofs::constants::SectorShape8MiB;
    // 8 MiB: no other test of this binary learns it through the process's cache.
    let proof = porep::RegisteredSealProof::StackedDrg8MiBV1_1;
    let prover = porep::prover_id(1000);
    let json = synthetic_c1(proof, &prover, 4, 4).expect("a synthetic 8 MiB C1");
    // 8 MiB has one partition: two copies of it stand for two partitions.
    let partition = || {
        porep::partitions::<SectorShape8MiB>(porep::parse_c1_for(&json, &prover, 4).unwrap())
            .unwrap()
            .remove(0)
    };
    let (first, second) = (partition(), partition());
    let recorded = porep::Recorder::record(second.circuit().unwrap()).expect("recorded");
    let capacity = capacity_of(&recorded);
    let values = porep::Memory::Values;
    let unlearned = porep::synthesize_partition(&second, None, capacity, 2, values, &mut || {}).unwrap();
    assert!(
        unlearned.is_none(),
        "no rows yet: the whole reservation is needed"
    );
    assert!(!porep::values_path(&second));
    std::thread::scope(|scope| {
        let learner = scope.spawn(|| {
            porep::synthesize_partition(&first, None, capacity, 2, porep::Memory::Whole, &mut || {})
        });
        while !porep::values_path(&second) {
            assert!(!learner.is_finished(), "the first partition learned nothing");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let mut cores_given_back = 0;
        let witness =
            porep::synthesize_partition(&second, None, capacity, 2, values, &mut || cores_given_back += 1)
                .expect("synthesized")
                .expect("the values path");
        assert_eq!(cores_given_back, 1);
        let rows = witness.products.clone().expect("a, b, c left to the rows");
        assert!(witness.a.is_empty());
        assert!(rows.witness(witness.inputs, witness.aux).unwrap() == recorded);
        let whole = learner.join().unwrap().expect("recorded").expect("whole");
        assert!(
            whole.products.is_none() && !whole.a.is_empty(),
            "the learner recorded whole"
        );
    });
    // The values path found the native values equal to the circuit's:
    // from now on it computes them natively, the same witness.
    assert_eq!(porep::native_trusted(&second.parameters_id()), Some(true));
    let native = porep::synthesize_partition(&second, None, capacity, 2, values, &mut || {})
        .expect("synthesized")
        .expect("the values path");
    let rows = native.products.clone().expect("a, b, c left to the rows");
    assert!(rows.witness(native.inputs, native.aux).unwrap() == recorded);
}

/// The constraints recorded from one challenge (the job's path once a
/// partition was recorded) give back the recorder's witness byte for byte
/// from the values alone, on any number of threads; rows that do not give a
/// recorded witness back are refused.
#[test]
fn the_recorded_constraints_give_the_recorders_witness() {
    use blstrs::Scalar;
    use c2prover::testkit::porep_c1::synthetic_c1;
    use filecoin_proofs::constants::{SectorShape2KiB, SectorShape8MiB};
    let values = |partition: &porep::Partition<_>, capacity, threads| {
        porep::values_shared(
            |some| partition.circuit_of(some),
            partition.challenges(),
            None,
            capacity,
            threads,
            porep::is_challenge,
        )
        .unwrap_or_else(|e| panic!("{threads} threads: {e:?}"))
    };
    let partition = porep::partitions::<SectorShape2KiB>(porep::parse_c1(C1_API).unwrap())
        .unwrap()
        .remove(0);
    let units = partition.challenges();
    let recorded = porep::Recorder::record(partition.circuit().unwrap()).expect("recorded");
    let r1cs = porep::learn_constraints(partition.circuit_of(&[0]).unwrap(), units, &recorded)
        .expect("one challenge's constraints stand for the partition's");
    for threads in [1, 2, 3, units + 1] {
        let values = values(&partition, capacity_of(&recorded), threads);
        assert!(
            r1cs.witness(values.inputs, values.aux).expect("evaluated") == recorded,
            "{threads} threads"
        );
    }
    // Values of another size are refused.
    let mut short = values(&partition, capacity_of(&recorded), 2);
    short.aux.pop();
    assert_eq!(
        r1cs.witness(short.inputs, short.aux).expect_err("short").kind,
        ErrorKind::InvalidArgument
    );
    // A witness the rows do not give back: one value, one density bit.
    let mut wrong = recorded.clone();
    let last = wrong.c.len() - wrong.inputs.len() - 1;
    wrong.c[last] = c2prover::math::Fr(Scalar::from(12345u64).into());
    let why =
        porep::learn_constraints(partition.circuit_of(&[0]).unwrap(), units, &wrong).expect_err("a wrong c");
    assert!(why.contains("c of constraint"), "{why}");
    let mut wrong = recorded.clone();
    wrong.b_aux_density[0] ^= 1;
    let why = porep::learn_constraints(partition.circuit_of(&[0]).unwrap(), units, &wrong)
        .expect_err("a wrong density");
    assert!(why.contains("density"), "{why}");

    let proof = porep::RegisteredSealProof::StackedDrg8MiBV1_1;
    let prover = porep::prover_id(1000);
    let json = synthetic_c1(proof, &prover, 3, 3).expect("a synthetic 8 MiB C1");
    let partition = porep::partitions::<SectorShape8MiB>(porep::parse_c1_for(&json, &prover, 3).unwrap())
        .unwrap()
        .remove(0);
    let recorded = porep::Recorder::record(partition.circuit().unwrap()).expect("recorded");
    let r1cs = porep::learn_constraints(
        partition.circuit_of(&[0]).unwrap(),
        partition.challenges(),
        &recorded,
    )
    .expect("8 MiB: learned");
    let values = values(&partition, capacity_of(&recorded), 4);
    assert!(
        r1cs.witness(values.inputs, values.aux).expect("evaluated") == recorded,
        "8 MiB: the same witness"
    );
}

/// Circuits that are not a common part and units of one shape, each
/// reading only the common part, are found out (`Dependent`): the job
/// then records them on one thread.
#[test]
fn circuits_off_the_units_shape_are_refused() {
    use bellperson::{Circuit, ConstraintSystem, SynthesisError};
    use blstrs::Scalar;
    /// A common variable, then one unit per entry of `units` (its index);
    /// `twisted` breaks the shape in the way it names.
    #[derive(Clone, Copy, Debug)]
    enum Twist {
        None,
        /// Unit 1 is larger than the others.
        UnevenUnits,
        /// Each unit but the first reads the unit before it.
        ChainedUnits,
        /// A top-level constraint after the units.
        Trailer,
        /// Units of one shape whose constraints differ (a coefficient
        /// per unit): the shared recorder takes them; their constraints
        /// are not one unit's.
        UnitCoefficients,
    }
    struct Toy(Vec<usize>, Twist);
    impl Circuit<Scalar> for Toy {
        fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            let base = cs.alloc(|| "base", || Ok(Scalar::from(2)))?;
            let mut last = None;
            for &u in &self.0 {
                let mut cs = cs.namespace(|| format!("challenge_{u}"));
                let x = cs.alloc(|| "x", || Ok(Scalar::from(u as u64 + 3)))?;
                let read = match (self.1, last) {
                    (Twist::ChainedUnits, Some(previous)) => previous,
                    _ => base,
                };
                let k = match self.1 {
                    Twist::UnitCoefficients => Scalar::from(u as u64 + 1),
                    _ => Scalar::from(1),
                };
                cs.enforce(|| "x·read", |lc| lc + (k, x), |lc| lc + read, |lc| lc);
                if u == 1 && matches!(self.1, Twist::UnevenUnits) {
                    cs.alloc(|| "extra", || Ok(Scalar::from(1)))?;
                }
                last = Some(x);
            }
            if matches!(self.1, Twist::Trailer) {
                cs.enforce(|| "after", |lc| lc + base, |lc| lc, |lc| lc);
            }
            Ok(())
        }
    }
    let capacity = porep::Capacity {
        constraints: 16,
        inputs: 1,
        aux: 8,
    };
    let all = [0, 1, 2, 3];
    for twist in [
        Twist::None,
        Twist::UnevenUnits,
        Twist::ChainedUnits,
        Twist::Trailer,
        Twist::UnitCoefficients,
    ] {
        let outcome = porep::record_shared(
            |some| Ok(Toy(some.to_vec(), twist)),
            all.len(),
            None,
            capacity,
            2,
            porep::is_challenge,
        );
        match (twist, outcome) {
            (Twist::None | Twist::UnitCoefficients, Ok(witness)) => {
                let sequential = porep::Recorder::record(Toy(all.to_vec(), twist)).unwrap();
                assert!(witness == sequential, "the toy's witness");
                let learned = porep::learn_constraints(Toy(vec![0], twist), all.len(), &witness);
                match (twist, learned) {
                    (Twist::None, Ok(r1cs)) => {
                        let values = porep::values_shared(
                            |some| Ok(Toy(some.to_vec(), twist)),
                            all.len(),
                            None,
                            capacity,
                            2,
                            porep::is_challenge,
                        )
                        .expect("the toy's values");
                        assert!(r1cs.witness(values.inputs, values.aux).unwrap() == sequential);
                    }
                    (Twist::UnitCoefficients, Err(why)) => assert!(why.contains("differs"), "{why}"),
                    (twist, other) => panic!("{twist:?}: {:?}", other.map(|_| ())),
                }
            }
            (_, Err(porep::SharedFailure::Dependent(why))) if !matches!(twist, Twist::None) => {
                assert!(!why.is_empty())
            }
            (twist, other) => panic!("{twist:?}: {:?}", other.map(|_| ())),
        }
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
