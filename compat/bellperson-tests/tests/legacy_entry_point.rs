//! supraseal-c2's older entry point, `generate_groth16_proof` (one pointer
//! per circuit per vector, density bitmaps shared by all circuits), which
//! bellperson 0.27 no longer calls but forks still do: its proofs must equal
//! `generate_groth16_proofs`' and c2prover's own for the same witnesses, r
//! and s, and verify.

use c2prover::testkit::synthetic::Circuit;
use c2prover::{Fr, Proof};
use std::mem::MaybeUninit;

/// A proof in the caller's layout: bellperson's `Proof<Bls12>` is 384 bytes
/// of blst affine points; any 384-byte type will do for the API.
type RawProof = [u8; Proof::RAW_BYTES];

#[test]
fn the_legacy_entry_point_equals_the_batch_one_and_verifies() {
    // Circuits of one shape (shape seed 5), different witnesses.
    let circuits: Vec<Circuit> = (0..3)
        .map(|w| Circuit::porep_like(10, 5, 100 + w).unwrap())
        .collect();
    let params = circuits[0].setup(9);
    let path = std::env::temp_dir().join(format!("c2prover-legacy-{}.params", std::process::id()));
    params
        .write(std::io::BufWriter::new(std::fs::File::create(&path).unwrap()))
        .unwrap();
    let srs = supraseal_c2::SRS::try_new(path.clone(), false).unwrap();
    std::fs::remove_file(&path).unwrap();

    let witnesses: Vec<_> = circuits.iter().map(Circuit::witness).collect();
    let r: Vec<Fr> = (0..3).map(|i| Fr::from_u64(1000 + i)).collect();
    let s: Vec<Fr> = (0..3).map(|i| Fr::from_u64(2000 + i)).collect();
    let ptrs = |f: fn(&c2prover::Witness) -> &Vec<Fr>| -> Vec<*const Fr> {
        witnesses.iter().map(|w| f(w).as_ptr()).collect()
    };
    let w0 = &witnesses[0];
    let popcount = |words: &[u64]| words.iter().map(|w| w.count_ones() as usize).sum::<usize>();
    let mut legacy = vec![MaybeUninit::<RawProof>::uninit(); 3];
    supraseal_c2::generate_groth16_proof(
        &ptrs(|w| &w.a),
        &ptrs(|w| &w.b),
        &ptrs(|w| &w.c),
        w0.a.len(),
        &ptrs(|w| &w.inputs),
        &ptrs(|w| &w.aux),
        w0.inputs.len(),
        w0.aux.len(),
        &w0.a_aux_density,
        &w0.b_inp_density,
        &w0.b_aux_density,
        popcount(&w0.a_aux_density),
        popcount(&w0.b_inp_density),
        popcount(&w0.b_aux_density),
        3,
        &r,
        &s,
        &mut legacy,
        &srs,
    );

    let assignments: Vec<supraseal_c2::Assignment<Fr>> = witnesses
        .iter()
        .map(|w| supraseal_c2::Assignment {
            a_aux_density: w.a_aux_density.as_ptr().cast(),
            a_aux_bit_len: w.aux.len(),
            a_aux_popcount: popcount(&w.a_aux_density),
            b_inp_density: w.b_inp_density.as_ptr().cast(),
            b_inp_bit_len: w.inputs.len(),
            b_inp_popcount: popcount(&w.b_inp_density),
            b_aux_density: w.b_aux_density.as_ptr().cast(),
            b_aux_bit_len: w.aux.len(),
            b_aux_popcount: popcount(&w.b_aux_density),
            a: w.a.as_ptr(),
            b: w.b.as_ptr(),
            c: w.c.as_ptr(),
            abc_size: w.a.len(),
            inp_assignment_data: w.inputs.as_ptr(),
            inp_assignment_size: w.inputs.len(),
            aux_assignment_data: w.aux.as_ptr(),
            aux_assignment_size: w.aux.len(),
        })
        .collect();
    let mut batch = vec![MaybeUninit::<RawProof>::uninit(); 3];
    supraseal_c2::generate_groth16_proofs(&assignments, &r, &s, &mut batch, &srs);

    let native_inputs: Vec<_> = witnesses.iter().map(|w| w.as_assignment()).collect();
    let native = c2prover::prove(&params, &native_inputs, &r, &s).unwrap();
    for i in 0..3 {
        // SAFETY: both calls write every proof slot (they panic otherwise).
        let (a, b) = unsafe { (legacy[i].assume_init(), batch[i].assume_init()) };
        assert_eq!(
            a, b,
            "proof {i}: the legacy entry point differs from the batch one"
        );
        assert_eq!(a, native[i].to_raw(), "proof {i}: differs from c2prover's own");
        assert!(
            c2prover::verify(&params.vk, &witnesses[i].inputs[1..], &native[i]).unwrap(),
            "proof {i} does not verify"
        );
    }
}

#[test]
#[should_panic(expected = "one entry per circuit")]
fn the_legacy_entry_point_checks_its_lengths() {
    let srs = supraseal_c2::SRS::default();
    let one: Vec<*const Fr> = vec![std::ptr::null()];
    let mut proofs = vec![MaybeUninit::<RawProof>::uninit(); 2];
    supraseal_c2::generate_groth16_proof::<Fr, u64, _>(
        &one,
        &one,
        &one,
        0,
        &one,
        &one,
        0,
        0,
        &[],
        &[],
        &[],
        0,
        0,
        0,
        2,
        &[],
        &[],
        &mut proofs,
        &srs,
    );
}
