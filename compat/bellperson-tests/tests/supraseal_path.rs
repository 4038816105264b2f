//! bellperson 0.27 with `cuda-supraseal`, its supraseal-c2 patched to
//! c2prover's drop-in crate: the cases of src/lib.rs prove through
//! `SuprasealParameters` and supraseal_c2::generate_groth16_proofs, verify
//! with bellperson's verifier, and equal bellperson's CPU proofs (the
//! fixture, checked against bellperson's CPU prover by the main crate's
//! tests/supraseal_fixture.rs) byte for byte.

use bellperson::groth16::{
    create_proof_batch, create_random_proof, prepare_verifying_key, verify_proof, Parameters,
    SuprasealParameters,
};
use blstrs::{Bls12, Scalar};
use c2prover_bellperson_tests::{cases, parse_fixture, Mixed, TestCircuit};
use ff::Field;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

const FIXTURE: &str = include_str!("../fixtures/proofs.txt");

/// A parameters file in the system's temporary directory, removed on drop.
struct TempParams(PathBuf);

impl TempParams {
    fn write(params: &Parameters<Bls12>) -> TempParams {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "c2prover-compat-{}-{}.params",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        params.write(&mut file).unwrap();
        drop(file);
        TempParams(path)
    }
}

impl Drop for TempParams {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn proofs_through_the_supraseal_path_equal_bellpersons_cpu_proofs() {
    let expected = parse_fixture(FIXTURE);
    let mut compared = 0;
    for case in cases() {
        let params = case.setup();
        let file = TempParams::write(&params);
        let supraseal = SuprasealParameters::<Bls12>::new(file.0.clone()).unwrap();
        let proofs =
            create_proof_batch(case.circuits.clone(), &supraseal, case.r.clone(), case.s.clone()).unwrap();
        assert_eq!(proofs.len(), case.circuits.len());
        let pvk = prepare_verifying_key(&params.vk);
        for (i, proof) in proofs.iter().enumerate() {
            assert!(
                verify_proof(&pvk, proof, &case.public_inputs[i]).unwrap(),
                "{} proof {i} does not verify",
                case.name
            );
            let mut wrong = case.public_inputs[i].clone();
            wrong[0] += Scalar::ONE;
            assert!(
                !verify_proof(&pvk, proof, &wrong).unwrap(),
                "{} proof {i} verifies a wrong public input",
                case.name
            );
            let mut bytes = Vec::new();
            proof.write(&mut bytes).unwrap();
            let (_, _, want) = expected
                .iter()
                .find(|(name, index, _)| name == case.name && *index == i)
                .unwrap_or_else(|| panic!("{} proof {i} is missing from the fixture", case.name));
            assert_eq!(
                &bytes, want,
                "{} proof {i} differs from bellperson's CPU proof",
                case.name
            );
            compared += 1;
        }
    }
    assert_eq!(compared, expected.len(), "every fixture proof was compared");
}

#[test]
fn random_proofs_verify_and_batches_run_concurrently() {
    let case = &cases()[1];
    let params = case.setup();
    let file = TempParams::write(&params);
    let supraseal = SuprasealParameters::<Bls12>::new(file.0.clone()).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let (supraseal, pvk) = (&supraseal, &pvk);
            scope.spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(100 + t);
                for (circuit, inputs) in case.circuits.iter().zip(&case.public_inputs) {
                    let proof = create_random_proof(circuit.clone(), supraseal, &mut rng).unwrap();
                    assert!(verify_proof(pvk, &proof, inputs).unwrap());
                }
            });
        }
    });
}

#[test]
fn a_missing_parameters_file_is_an_error_with_a_message() {
    let err = SuprasealParameters::<Bls12>::new(PathBuf::from("/nonexistent/c2prover.params"))
        .err()
        .expect("loading a missing file fails");
    assert!(err.to_string().contains("/nonexistent/c2prover.params"), "{err}");

    let err = supraseal_c2::SRS::try_new(PathBuf::from("/nonexistent/c2prover.params"), true)
        .err()
        .expect("loading a missing file fails");
    assert_eq!(err.code, 2, "ENOENT");
    assert!(String::from(&err).contains("/nonexistent/c2prover.params"));
}

#[test]
fn a_truncated_parameters_file_is_an_error() {
    let case = &cases()[0];
    let file = TempParams::write(&case.setup());
    let bytes = std::fs::read(&file.0).unwrap();
    std::fs::write(&file.0, &bytes[..bytes.len() - 10]).unwrap();
    let err = supraseal_c2::SRS::try_new(file.0.clone(), false)
        .err()
        .expect("a truncated file fails");
    assert_eq!(err.code, 22, "EINVAL: {err}");
}

#[test]
fn a_witness_of_another_shape_panics_with_c2provers_message() {
    // MiMC parameters, a Mixed witness: the supraseal API has no error return,
    // so the failure is a panic (that unwinds), as with the original.
    let params = cases()[0].setup();
    let file = TempParams::write(&params);
    let supraseal = SuprasealParameters::<Bls12>::new(file.0.clone()).unwrap();
    let (mixed, _) = Mixed::with(1);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        create_proof_batch(
            vec![TestCircuit::Mixed(mixed)],
            &supraseal,
            vec![Scalar::ONE],
            vec![Scalar::ONE],
        )
    }));
    let Err(panic) = result else {
        panic!("proving a witness of another shape succeeded");
    };
    let message = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(message.contains("supraseal-c2 (c2prover)"), "{message}");
}

#[test]
fn srs_handles_are_shared_cached_and_evicted() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<supraseal_c2::SRS>();
    let case = &cases()[0];
    let file = TempParams::write(&case.setup());
    let first = supraseal_c2::SRS::try_new(file.0.clone(), true).unwrap();
    let second = supraseal_c2::SRS::try_new(file.0.clone(), true).unwrap();
    let clone = first.clone();
    first.evict();
    second.evict(); // already gone: a no-op
    drop(first);
    drop(second);
    drop(clone);
    // After eviction a cached load reads the file again: a file that changed
    // (here truncated) is now an error instead of the cached copy.
    let bytes = std::fs::read(&file.0).unwrap();
    std::fs::write(&file.0, &bytes[..bytes.len() / 2]).unwrap();
    assert!(supraseal_c2::SRS::try_new(file.0.clone(), true).is_err());
    drop(supraseal_c2::SRS::default()); // an empty handle drops quietly
}
