//! The reference side of the supraseal-path check: bellperson's own CPU
//! prover, on the circuits of compat/bellperson-tests with fixed setup
//! seeds, r and s, must produce exactly the proofs recorded in
//! compat/bellperson-tests/fixtures/proofs.txt. That crate proves the same
//! circuits through bellperson's `cuda-supraseal` path patched to c2prover
//! and compares with the same file, so the two paths are compared byte for
//! byte. `C2P_UPDATE_FIXTURES=1 cargo test --test supraseal_fixture`
//! rewrites the file.

#[path = "../compat/bellperson-tests/src/lib.rs"]
mod cases;

use bellperson::groth16::{create_proof_batch, prepare_verifying_key, verify_proof};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/compat/bellperson-tests/fixtures/proofs.txt"
);

#[test]
fn bellperson_cpu_proofs_equal_the_fixture() {
    let mut lines = vec![
        "# Compressed proofs (192 bytes) by bellperson 0.27's CPU prover for the cases of".to_string(),
        "# compat/bellperson-tests/src/lib.rs. Written by C2P_UPDATE_FIXTURES=1 cargo test --test supraseal_fixture.".to_string(),
    ];
    for case in cases::cases() {
        let params = case.setup();
        let proofs =
            create_proof_batch(case.circuits.clone(), &params, case.r.clone(), case.s.clone()).unwrap();
        let pvk = prepare_verifying_key(&params.vk);
        for (i, proof) in proofs.iter().enumerate() {
            assert!(
                verify_proof(&pvk, proof, &case.public_inputs[i]).unwrap(),
                "{} proof {i} does not verify",
                case.name
            );
            let mut bytes = Vec::new();
            proof.write(&mut bytes).unwrap();
            lines.push(format!("{} {i} {}", case.name, cases::hex(&bytes)));
        }
    }
    let text = lines.join("\n") + "\n";
    if std::env::var_os("C2P_UPDATE_FIXTURES").is_some() {
        std::fs::write(FIXTURE, &text).unwrap();
    }
    let recorded =
        std::fs::read_to_string(FIXTURE).expect("the fixture exists (C2P_UPDATE_FIXTURES=1 writes it)");
    assert_eq!(
        cases::parse_fixture(&recorded),
        cases::parse_fixture(&text),
        "bellperson's CPU proofs differ from {FIXTURE}"
    );
}
