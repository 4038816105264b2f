//! The C ABI called exactly as C calls it: raw pointers, status codes,
//! thread-local error messages. Every export, every documented error path.

use c2prover::capi::native::*;
use c2prover::capi::supraseal::*;
use c2prover::capi::*;
use c2prover::math::FR_MODULUS;
use c2prover::testkit::synthetic::Circuit;
use c2prover::{ErrorKind, Fr, Witness};
use std::ffi::{c_char, CStr};
use std::ptr::{null, null_mut};

mod c_fixture;
use c_fixture::*;

fn last_error() -> String {
    let mut buf = vec![0u8; 1024];
    let n = c2p_last_error(buf.as_mut_ptr().cast(), buf.len());
    CStr::from_bytes_until_nul(&buf)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string()[..n.min(1023)]
        .to_string()
}

/// Asserts `status` and that the thread's last error mentions `says`.
fn expect(status: i32, code: i32, says: &str) {
    assert_eq!(
        status,
        code,
        "status {} ({}), last error: {}",
        status,
        name(status),
        last_error()
    );
    let message = last_error();
    assert!(
        message.contains(says),
        "last error {message:?} should mention {says:?}"
    );
}

fn name(status: i32) -> String {
    let p = c2p_status_name(status);
    assert!(!p.is_null());
    c_str(p)
}

fn c_str(p: *const c_char) -> String {
    string_from_c(p).expect("a non-NULL C string")
}

fn r_s(n: usize, seed: u64) -> (Vec<u8>, Vec<u8>, Vec<Fr>, Vec<Fr>) {
    let frs = |k: u64| -> Vec<Fr> {
        (0..n as u64)
            .map(|i| Fr::from_u64(seed * 1000 + k * 100 + i + 1))
            .collect()
    };
    let (r, s) = (frs(1), frs(2));
    let bytes = |v: &[Fr]| v.iter().flat_map(|x| x.to_mont_bytes()).collect::<Vec<u8>>();
    (bytes(&r), bytes(&s), r, s)
}

/// What the Rust API proves for these witnesses with these r and s.
fn expected(ws: &[Witness], r: &[Fr], s: &[Fr]) -> Vec<u8> {
    let a: Vec<_> = ws.iter().map(Witness::as_assignment).collect();
    c2prover::prove(&fixture().params, &a, r, s)
        .unwrap()
        .iter()
        .flat_map(|p| p.to_compressed())
        .collect()
}

#[test]
fn version_status_names_and_last_error() {
    assert_eq!(c_str(c2p_version()), env!("CARGO_PKG_VERSION"));
    assert_eq!(name(C2P_OK), "C2P_OK");
    assert_eq!(name(ErrorKind::BadState.code()), "C2P_ERR_BAD_STATE");
    for kind in ErrorKind::ALL {
        assert_eq!(name(kind.code()), kind.c_name(), "{kind:?}");
    }
    assert_eq!(name(99), "C2P_UNKNOWN_STATUS");
    assert_eq!(name(-1), "C2P_UNKNOWN_STATUS");

    // A failure, then the message through small buffers.
    let mut out = null_mut();
    assert_eq!(
        c2p_params_load(null(), null(), &mut out),
        ErrorKind::NullPointer.code()
    );
    let full = c2p_last_error(null_mut(), 0);
    assert_eq!(full, "`path` is NULL".len());
    let mut small = [0x55u8; 5];
    assert_eq!(c2p_last_error(small.as_mut_ptr().cast(), small.len()), full);
    assert_eq!(&small, b"`pat\0");
    let mut one = [0x55u8; 1];
    c2p_last_error(one.as_mut_ptr().cast(), 1);
    assert_eq!(one[0], 0);
    // Another thread has its own (empty) last error.
    std::thread::spawn(|| assert_eq!(c2p_last_error(null_mut(), 0), 0))
        .join()
        .unwrap();
}

#[test]
fn load_info_prove_verify() {
    let f = fixture();
    let params = load();
    let mut info = c2p_params_info::default();
    assert_eq!(c2p_params_info(params, &mut info), C2P_OK);
    assert_eq!(info.domain_size, 256);
    assert_eq!(info.num_inputs, 9);
    assert_eq!(info.num_aux, f.params.num_aux());
    assert_eq!(info.b_g2_len, f.params.b_g2.len());
    assert_eq!(info.host_bytes as usize, f.params.host_bytes());
    assert_eq!(info.device_bytes, 0);

    let circuits: Vec<c2p_assignment> = f.witnesses.iter().map(assignment).collect();
    let (r, s, r_fr, s_fr) = r_s(3, 1);
    let mut job = null_mut();
    assert_eq!(
        c2p_prove_start(
            params,
            circuits.as_ptr(),
            3,
            r.as_ptr(),
            s.as_ptr(),
            null(),
            &mut job
        ),
        C2P_OK
    );
    let mut proofs = vec![0u8; 3 * C2P_PROOF_BYTES];
    assert_eq!(c2p_prove_finish(job, proofs.as_mut_ptr(), proofs.len()), C2P_OK);
    assert_eq!(
        proofs,
        expected(&f.witnesses, &r_fr, &s_fr),
        "C ABI proofs equal the Rust API's"
    );

    // The one-call form gives the same bytes.
    let mut again = vec![0u8; 3 * C2P_PROOF_BYTES];
    let status = c2p_prove(
        params,
        circuits.as_ptr(),
        3,
        r.as_ptr(),
        s.as_ptr(),
        null(),
        again.as_mut_ptr(),
        again.len(),
    );
    assert_eq!(status, C2P_OK);
    assert_eq!(again, proofs);

    for (i, w) in f.witnesses.iter().enumerate() {
        let inputs: Vec<u8> = w.inputs[1..].iter().flat_map(|x| x.to_mont_bytes()).collect();
        let proof = &proofs[i * 192..(i + 1) * 192];
        let mut valid = false;
        assert_eq!(
            c2p_verify(
                params,
                inputs.as_ptr(),
                w.inputs.len() - 1,
                proof.as_ptr(),
                &mut valid
            ),
            C2P_OK
        );
        assert!(valid, "proof {i} verifies");
        let mut tampered = inputs.clone();
        tampered[0] ^= 1;
        let mut valid = true;
        let status = c2p_verify(
            params,
            tampered.as_ptr(),
            w.inputs.len() - 1,
            proof.as_ptr(),
            &mut valid,
        );
        assert!(status == C2P_OK && !valid || status == ErrorKind::InvalidArgument.code());
        let mut valid = true;
        let other = &proofs[((i + 1) % 3) * 192..((i + 1) % 3 + 1) * 192];
        assert_eq!(
            c2p_verify(
                params,
                inputs.as_ptr(),
                w.inputs.len() - 1,
                other.as_ptr(),
                &mut valid
            ),
            C2P_OK
        );
        assert!(!valid, "another circuit's proof does not verify");
    }
    c2p_params_free(params);
}

#[test]
fn random_r_s_and_canonical_scalars() {
    let f = fixture();
    let params = load();
    let circuits = [assignment(&f.witnesses[0])];
    let mut proof = [0u8; 192];
    assert_eq!(
        c2p_prove(
            params,
            circuits.as_ptr(),
            1,
            null(),
            null(),
            null(),
            proof.as_mut_ptr(),
            192
        ),
        C2P_OK
    );
    let inputs: Vec<u8> = f.witnesses[0].inputs[1..]
        .iter()
        .flat_map(|x| x.to_mont_bytes())
        .collect();
    let mut valid = false;
    assert_eq!(
        c2p_verify(params, inputs.as_ptr(), 8, proof.as_ptr(), &mut valid),
        C2P_OK
    );
    assert!(valid, "a proof with OS-drawn r and s verifies");

    // The same witness, r and s in canonical form give the Montgomery result.
    let canon = |v: &[Fr]| -> Vec<Fr> {
        v.iter()
            .map(|x| Fr::from_mont_bytes(&x.to_scalar_bytes()).unwrap())
            .collect()
    };
    let w = &f.witnesses[0];
    let cw = Witness {
        a: canon(&w.a),
        b: canon(&w.b),
        c: canon(&w.c),
        inputs: canon(&w.inputs),
        aux: canon(&w.aux),
        ..w.clone()
    };
    let (_, _, r_fr, s_fr) = r_s(1, 2);
    let r: Vec<u8> = r_fr.iter().flat_map(|x| x.to_scalar_bytes()).collect();
    let s: Vec<u8> = s_fr.iter().flat_map(|x| x.to_scalar_bytes()).collect();
    // GPU 0 only: valid with a GPU, ignored without one.
    let opts = c2p_prove_options {
        canonical_scalars: true,
        device_mask: 1,
        ..Default::default()
    };
    let circuits = [assignment(&cw)];
    // A mask naming only GPU 63: no machine here has it.
    let far = c2p_prove_options {
        device_mask: 1 << 63,
        ..opts
    };
    let status = c2p_prove(
        params,
        circuits.as_ptr(),
        1,
        r.as_ptr(),
        s.as_ptr(),
        &far,
        proof.as_mut_ptr(),
        192,
    );
    let gpus = c2prover::backend::device_count();
    assert_eq!(
        status,
        if gpus > 0 {
            ErrorKind::InvalidArgument.code()
        } else {
            C2P_OK
        },
        "{}",
        last_error()
    );
    let status = c2p_prove(
        params,
        circuits.as_ptr(),
        1,
        r.as_ptr(),
        s.as_ptr(),
        &opts,
        proof.as_mut_ptr(),
        192,
    );
    assert_eq!(status, C2P_OK, "{}", last_error());
    assert_eq!(proof.to_vec(), expected(std::slice::from_ref(w), &r_fr, &s_fr));
    c2p_params_free(params);
}

#[test]
fn null_pointers_everywhere() {
    let f = fixture();
    let params = load();
    let path = c_path(&f.path);
    let circuits = [assignment(&f.witnesses[0])];
    let (r, s, _, _) = r_s(1, 3);
    let mut out = null_mut();
    let mut job: *mut c2p_job = null_mut();
    let mut info = c2p_params_info::default();
    let mut proof = [0u8; 192];
    let mut valid = false;
    let inputs = vec![0u8; 8 * 32];

    expect(
        c2p_params_load(null(), null(), &mut out),
        ErrorKind::NullPointer.code(),
        "`path`",
    );
    expect(
        c2p_params_load(path.as_ptr(), null(), null_mut()),
        ErrorKind::NullPointer.code(),
        "`out`",
    );
    expect(
        c2p_params_info(null(), &mut info),
        ErrorKind::NullPointer.code(),
        "`params`",
    );
    expect(
        c2p_params_info(params, null_mut()),
        ErrorKind::NullPointer.code(),
        "`out`",
    );
    let start = |p, c, rr, ss, o| c2p_prove_start(p, c, 1, rr, ss, null(), o);
    expect(
        start(null(), circuits.as_ptr(), r.as_ptr(), s.as_ptr(), &mut job),
        ErrorKind::NullPointer.code(),
        "`params`",
    );
    expect(
        start(params, null(), r.as_ptr(), s.as_ptr(), &mut job),
        ErrorKind::NullPointer.code(),
        "`circuits`",
    );
    expect(
        start(params, circuits.as_ptr(), r.as_ptr(), s.as_ptr(), null_mut()),
        ErrorKind::NullPointer.code(),
        "`out`",
    );
    expect(
        c2p_prove_finish(null_mut(), proof.as_mut_ptr(), 192),
        ErrorKind::NullPointer.code(),
        "`job`",
    );
    expect(
        c2p_prove(
            params,
            circuits.as_ptr(),
            1,
            r.as_ptr(),
            s.as_ptr(),
            null(),
            null_mut(),
            192,
        ),
        ErrorKind::NullPointer.code(),
        "`proofs`",
    );
    expect(
        c2p_verify(null(), inputs.as_ptr(), 8, proof.as_ptr(), &mut valid),
        ErrorKind::NullPointer.code(),
        "`params`",
    );
    expect(
        c2p_verify(params, null(), 8, proof.as_ptr(), &mut valid),
        ErrorKind::NullPointer.code(),
        "`public_inputs`",
    );
    expect(
        c2p_verify(params, inputs.as_ptr(), 8, null(), &mut valid),
        ErrorKind::NullPointer.code(),
        "`proof`",
    );
    expect(
        c2p_verify(params, inputs.as_ptr(), 8, proof.as_ptr(), null_mut()),
        ErrorKind::NullPointer.code(),
        "`valid`",
    );

    // Every pointer inside an assignment.
    type Field = fn(&mut c2p_assignment);
    let fields: [(&str, Field); 8] = [
        ("a_aux_density", |c| c.a_aux_density = null()),
        ("b_inp_density", |c| c.b_inp_density = null()),
        ("b_aux_density", |c| c.b_aux_density = null()),
        ("circuits[0].a`", |c| c.a = null()),
        ("circuits[0].b`", |c| c.b = null()),
        ("circuits[0].c`", |c| c.c = null()),
        ("inp_assignment_data", |c| c.inp_assignment_data = null()),
        ("aux_assignment_data", |c| c.aux_assignment_data = null()),
    ];
    for (says, clear) in fields {
        let mut bad = circuits;
        clear(&mut bad[0]);
        expect(
            start(params, bad.as_ptr(), r.as_ptr(), s.as_ptr(), &mut job),
            ErrorKind::NullPointer.code(),
            says,
        );
    }
    // NULL handles to the void functions are fine.
    c2p_params_free(null_mut());
    c2p_job_free(null_mut());
    c2p_params_free(params);
}

#[test]
fn bad_calls_are_refused_with_reasons() {
    let f = fixture();
    let params = load();
    let good = assignment(&f.witnesses[0]);
    let (r, s, _, _) = r_s(2, 4);
    let mut job = null_mut();
    let start = |c: &[c2p_assignment], n: usize, rr: *const u8, ss: *const u8, job: &mut *mut c2p_job| {
        c2p_prove_start(params, c.as_ptr(), n, rr, ss, null(), job)
    };

    expect(
        start(&[good], 0, r.as_ptr(), s.as_ptr(), &mut job),
        ErrorKind::InvalidArgument.code(),
        "n_circuits is 0",
    );
    expect(
        start(&[good], 1, r.as_ptr(), null(), &mut job),
        ErrorKind::InvalidArgument.code(),
        "r and s must both",
    );
    expect(
        start(&[good], 1, null(), s.as_ptr(), &mut job),
        ErrorKind::InvalidArgument.code(),
        "r and s must both",
    );

    let mut bad = good;
    bad.a_aux_bit_len += 1;
    expect(
        start(&[bad], 1, r.as_ptr(), s.as_ptr(), &mut job),
        ErrorKind::SizeMismatch.code(),
        "a_aux_bit_len",
    );
    let mut bad = good;
    bad.b_inp_bit_len -= 1;
    expect(
        start(&[bad], 1, r.as_ptr(), s.as_ptr(), &mut job),
        ErrorKind::SizeMismatch.code(),
        "b_inp_bit_len",
    );
    let mut bad = good;
    bad.b_aux_popcount += 1;
    expect(
        start(&[bad], 1, r.as_ptr(), s.as_ptr(), &mut job),
        ErrorKind::SizeMismatch.code(),
        "b_aux_popcount",
    );
    let mut bad = good;
    bad.aux_assignment_size -= 1;
    expect(
        start(&[bad], 1, r.as_ptr(), s.as_ptr(), &mut job),
        ErrorKind::SizeMismatch.code(),
        "aux",
    );

    // abc_size above the domain (the vectors are long enough to read).
    let long = vec![Fr::ZERO; 300];
    let mut bad = good;
    (bad.a, bad.b, bad.c, bad.abc_size) = (
        long.as_ptr().cast(),
        long.as_ptr().cast(),
        long.as_ptr().cast(),
        300,
    );
    expect(
        start(&[bad], 1, r.as_ptr(), s.as_ptr(), &mut job),
        ErrorKind::SizeMismatch.code(),
        "exceeds the parameters' domain",
    );

    // r not below the modulus.
    let mut big = r.clone();
    big[..32].fill(0xff);
    expect(
        start(&[good], 1, big.as_ptr(), s.as_ptr(), &mut job),
        ErrorKind::InvalidArgument.code(),
        "r[0]",
    );

    // A witness value (Montgomery form) not below the modulus: r itself in
    // aux, then r + 1 in c, both refused with the place named.
    for (vector, value) in [
        ("aux", FR_MODULUS),
        (
            "c",
            [FR_MODULUS[0] + 1, FR_MODULUS[1], FR_MODULUS[2], FR_MODULUS[3]],
        ),
    ] {
        let mut w = f.witnesses[0].clone();
        let target = if vector == "aux" { &mut w.aux } else { &mut w.c };
        let at = target.len() / 2;
        target[at] = Fr::slice_from_limbs(&[value])[0];
        expect(
            start(&[assignment(&w)], 1, r.as_ptr(), s.as_ptr(), &mut job),
            ErrorKind::InvalidArgument.code(),
            &format!("circuits[0].{vector}[{at}] is not below the field modulus"),
        );
    }

    // Output buffer of the wrong size.
    let mut proofs = vec![0u8; 191];
    let status = c2p_prove(
        params,
        [good].as_ptr(),
        1,
        r.as_ptr(),
        s.as_ptr(),
        null(),
        proofs.as_mut_ptr(),
        191,
    );
    expect(status, ErrorKind::SizeMismatch.code(), "proofs_len is 191");

    // Parameters for a different circuit.
    let other = Circuit::porep_like(9, 1, 1).unwrap();
    let ow = other.witness();
    expect(
        start(&[assignment(&ow)], 1, r.as_ptr(), s.as_ptr(), &mut job),
        ErrorKind::SizeMismatch.code(),
        "different circuit",
    );

    // Public inputs of the wrong count.
    let mut valid = false;
    let inputs = vec![0u8; 7 * 32];
    let proof = [0u8; 192];
    let status = c2p_verify(params, inputs.as_ptr(), 7, proof.as_ptr(), &mut valid);
    assert!(
        status == ErrorKind::InvalidArgument.code() || status == ErrorKind::SizeMismatch.code(),
        "{}",
        last_error()
    );
    assert!(job.is_null(), "no failed start handed out a job");
    c2p_params_free(params);
}

#[test]
fn handles_cannot_be_used_twice() {
    let f = fixture();
    let params = load();
    let circuits = [assignment(&f.witnesses[1])];
    let (r, s, _, _) = r_s(1, 5);
    let mut job = null_mut();
    assert_eq!(
        c2p_prove_start(
            params,
            circuits.as_ptr(),
            1,
            r.as_ptr(),
            s.as_ptr(),
            null(),
            &mut job
        ),
        C2P_OK
    );
    let mut proof = [0u8; 192];
    assert_eq!(c2p_prove_finish(job, proof.as_mut_ptr(), 192), C2P_OK);
    expect(
        c2p_prove_finish(job, proof.as_mut_ptr(), 192),
        ErrorKind::BadState.code(),
        "already freed or finished",
    );
    c2p_job_free(job); // free after finish: ignored

    // A job whose finish fails (wrong length) is still consumed.
    assert_eq!(
        c2p_prove_start(
            params,
            circuits.as_ptr(),
            1,
            r.as_ptr(),
            s.as_ptr(),
            null(),
            &mut job
        ),
        C2P_OK
    );
    expect(
        c2p_prove_finish(job, proof.as_mut_ptr(), 100),
        ErrorKind::SizeMismatch.code(),
        "proofs_len",
    );
    expect(
        c2p_prove_finish(job, proof.as_mut_ptr(), 192),
        ErrorKind::BadState.code(),
        "c2p_job",
    );

    // Freed before it finished: cancelled, and finish then knows nothing of it.
    assert_eq!(
        c2p_prove_start(
            params,
            circuits.as_ptr(),
            1,
            r.as_ptr(),
            s.as_ptr(),
            null(),
            &mut job
        ),
        C2P_OK
    );
    c2p_job_free(job);
    expect(
        c2p_prove_finish(job, proof.as_mut_ptr(), 192),
        ErrorKind::BadState.code(),
        "c2p_job",
    );

    // Parameters freed twice, or used after free.
    c2p_params_free(params);
    c2p_params_free(params);
    let mut info = c2p_params_info::default();
    expect(
        c2p_params_info(params, &mut info),
        ErrorKind::BadState.code(),
        "c2p_params",
    );
    // A job handle is not a parameters handle.
    expect(
        c2p_params_info(job.cast(), &mut info),
        ErrorKind::BadState.code(),
        "c2p_params",
    );
}

#[test]
fn bad_parameter_files() {
    let f = fixture();
    let bytes = std::fs::read(&f.path).unwrap();
    let dir = f.path.parent().unwrap();
    let mut out = null_mut();
    let write = |name: &str, b: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, b).unwrap();
        c_path(&p)
    };
    let truncated = write("truncated.params", &bytes[..bytes.len() - 10]);
    expect(
        c2p_params_load(truncated.as_ptr(), null(), &mut out),
        ErrorKind::ParamsFormat.code(),
        "truncated",
    );
    let mut corrupt = bytes.clone();
    corrupt[bytes.len() - 100] ^= 0x10;
    let corrupted = write("corrupted.params", &corrupt);
    expect(
        c2p_params_load(corrupted.as_ptr(), null(), &mut out),
        ErrorKind::ParamsFormat.code(),
        "section `b_g2`",
    );
    let empty = write("empty.params", &[]);
    expect(
        c2p_params_load(empty.as_ptr(), null(), &mut out),
        ErrorKind::ParamsFormat.code(),
        "empty",
    );
    let missing = c_path(&dir.join("missing.params"));
    expect(
        c2p_params_load(missing.as_ptr(), null(), &mut out),
        ErrorKind::Io.code(),
        "missing.params",
    );
    assert!(out.is_null(), "no handle on failure");

    // Cached loads of one file share parameters; both handles work and free.
    let path = c_path(&f.path);
    // An unknown residency is refused before any work.
    let bad = c2p_params_options {
        params_on_gpu: 7,
        ..Default::default()
    };
    expect(
        c2p_params_load(path.as_ptr(), &bad, &mut out),
        ErrorKind::InvalidArgument.code(),
        "params_on_gpu is 7",
    );
    assert!(out.is_null(), "no handle on failure");

    let opts = c2p_params_options {
        check_subgroup: true,
        use_cache: true,
        params_on_gpu: C2P_PARAMS_ON_GPU_NEVER,
        device_budget: 0,
    };
    let (mut a, mut b) = (null_mut(), null_mut());
    assert_eq!(c2p_params_load(path.as_ptr(), &opts, &mut a), C2P_OK);
    assert_eq!(c2p_params_load(path.as_ptr(), &opts, &mut b), C2P_OK);
    assert_ne!(a, b, "each load returns its own handle");
    c2p_params_free(a);
    let mut info = c2p_params_info::default();
    assert_eq!(c2p_params_info(b, &mut info), C2P_OK);
    c2p_params_free(b);
}

#[test]
fn start_returns_once_inputs_are_no_longer_needed() {
    let f = fixture();
    let params = load();
    let mut copies: Vec<Witness> = f.witnesses.clone();
    let circuits: Vec<c2p_assignment> = copies.iter().map(assignment).collect();
    let (mut r, mut s, r_fr, s_fr) = r_s(3, 6);
    let mut job = null_mut();
    assert_eq!(
        c2p_prove_start(
            params,
            circuits.as_ptr(),
            3,
            r.as_ptr(),
            s.as_ptr(),
            null(),
            &mut job
        ),
        C2P_OK
    );
    // Overwrite every input buffer, then free them.
    for w in copies.iter_mut() {
        for v in [&mut w.a, &mut w.b, &mut w.c, &mut w.inputs, &mut w.aux] {
            v.iter_mut().for_each(|x| *x = Fr::from_u64(12345));
        }
        for d in [&mut w.a_aux_density, &mut w.b_inp_density, &mut w.b_aux_density] {
            d.iter_mut().for_each(|x| *x = !*x);
        }
    }
    r.fill(7);
    s.fill(9);
    drop(circuits);
    drop(copies);
    let mut proofs = vec![0u8; 3 * 192];
    assert_eq!(c2p_prove_finish(job, proofs.as_mut_ptr(), proofs.len()), C2P_OK);
    assert_eq!(proofs, expected(&f.witnesses, &r_fr, &s_fr));
    c2p_params_free(params);
}

#[test]
fn eight_threads_ten_jobs_each_on_one_handle() {
    let f = fixture();
    let params = load() as usize;
    let threads: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                let params = params as *mut c2p_params;
                let f = fixture();
                let mut jobs = Vec::new();
                for j in 0..10 {
                    let w = &f.witnesses[(t + j) % 3];
                    let circuits = [assignment(w)];
                    let mut job = null_mut();
                    assert_eq!(
                        c2p_prove_start(params, circuits.as_ptr(), 1, null(), null(), null(), &mut job),
                        C2P_OK
                    );
                    jobs.push((job as usize, (t + j) % 3));
                }
                for (job, wi) in jobs {
                    let mut proof = [0u8; 192];
                    assert_eq!(
                        c2p_prove_finish(job as *mut c2p_job, proof.as_mut_ptr(), 192),
                        C2P_OK
                    );
                    let w = &f.witnesses[wi];
                    let inputs: Vec<u8> = w.inputs[1..].iter().flat_map(|x| x.to_mont_bytes()).collect();
                    let mut valid = false;
                    assert_eq!(
                        c2p_verify(params, inputs.as_ptr(), 8, proof.as_ptr(), &mut valid),
                        C2P_OK
                    );
                    assert!(valid);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let _ = f;
    c2p_params_free(params as *mut c2p_params);
}

#[test]
fn supraseal_symbols_match_the_native_api() {
    let f = fixture();
    let path = c_path(&f.path);
    let mut srs = c2p_supraseal_srs { ptr: null_mut() };
    let err = create_SRS(&mut srs, path.as_ptr(), true);
    assert_eq!(err.code, 0);
    assert!(err.message.is_null());

    let circuits: Vec<c2p_assignment> = f.witnesses.iter().map(assignment).collect();
    let (_, _, r_fr, s_fr) = r_s(3, 7);
    let mut raw = [0u64; 3 * 48];
    let proofs = raw.as_mut_ptr().cast::<c2p_supraseal_proof>();
    let err = generate_groth16_proofs_c(
        circuits.as_ptr(),
        3,
        r_fr.as_ptr().cast(),
        s_fr.as_ptr().cast(),
        proofs,
        &mut srs,
    );
    assert_eq!(err.code, 0);
    let a: Vec<_> = f.witnesses.iter().map(Witness::as_assignment).collect();
    let mine = c2prover::prove(&f.params, &a, &r_fr, &s_fr).unwrap();
    let expected_raw: Vec<u8> = mine.iter().flat_map(|p| p.to_raw()).collect();
    let got: Vec<u8> = raw.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(got, expected_raw, "raw proofs equal the native ones");

    // Curio's split form, through a cloned SRS and a GPU mutex.
    let mut clone = clone_SRS(&srs);
    assert!(!clone.ptr.is_null() && clone.ptr != srs.ptr);
    let mtx = create_gpu_mutex();
    assert!(!mtx.is_null());
    let mut pending = null_mut();
    let err = generate_groth16_proofs_start_c(
        circuits.as_ptr(),
        3,
        r_fr.as_ptr().cast(),
        s_fr.as_ptr().cast(),
        &mut clone,
        mtx,
        -1,
        &mut pending,
    );
    assert_eq!(err.code, 0);
    let mut raw2 = [0u64; 3 * 48];
    let err = finalize_groth16_proof_c(pending, raw2.as_mut_ptr().cast());
    assert_eq!(err.code, 0);
    assert_eq!(raw2, raw);
    // Finalizing twice is an error with a message, not a crash.
    let err = finalize_groth16_proof_c(pending, raw2.as_mut_ptr().cast());
    assert_eq!(err.code, libc::EBADF);
    assert!(!err.message.is_null());
    c2p_supraseal_error_free(err.message);

    // The 8-argument sync form.
    let mut raw3 = [0u64; 3 * 48];
    let err = generate_groth16_proofs_curio_c(
        circuits.as_ptr(),
        3,
        r_fr.as_ptr().cast(),
        s_fr.as_ptr().cast(),
        raw3.as_mut_ptr().cast(),
        &mut clone,
        null_mut(),
        0,
    );
    assert_eq!(err.code, 0);
    assert_eq!(raw3, raw);

    // Errors: a size mismatch is an error (supraseal asserts), a failed start
    // hands out nothing, destroy of a started proof cancels it, and a GPU
    // index no machine has is an error (supraseal would index past its GPU
    // list).
    let mut start = |circuits: &[c2p_assignment], gpu_index: i32| {
        let mut pending = null_mut();
        let err = generate_groth16_proofs_start_c(
            circuits.as_ptr(),
            3,
            r_fr.as_ptr().cast(),
            s_fr.as_ptr().cast(),
            &mut srs,
            null_mut(),
            gpu_index,
            &mut pending,
        );
        (err, pending)
    };
    let mut bad = circuits.clone();
    bad[1].b_aux_popcount += 1;
    for (input, gpu_index) in [(&bad, -1), (&circuits, 64)] {
        let (err, pending) = start(input, gpu_index);
        assert_eq!(err.code, libc::EINVAL, "gpu_index {gpu_index}");
        assert!(pending.is_null());
        c2p_supraseal_error_free(err.message);
    }
    let (err, pending) = start(&circuits, -1);
    assert_eq!(err.code, 0);
    destroy_pending_proof(pending);

    // A witness value not below the modulus in the last circuit: both forms
    // refuse it with the place named (the synchronous one, which proves on
    // the caller's buffers, finds it when that circuit's turn comes).
    let mut w = f.witnesses[2].clone();
    let at = w.aux.len() - 1;
    w.aux[at] = Fr::slice_from_limbs(&[FR_MODULUS])[0];
    let mut unreduced = circuits.clone();
    unreduced[2] = assignment(&w);
    let says = format!("circuits[2].aux[{at}] is not below the field modulus");
    let (err, pending) = start(&unreduced, -1);
    assert_eq!(err.code, libc::EINVAL);
    assert!(pending.is_null());
    assert!(c_str(err.message).contains(&says), "{}", c_str(err.message));
    c2p_supraseal_error_free(err.message);
    let err = generate_groth16_proofs_c(
        unreduced.as_ptr(),
        3,
        r_fr.as_ptr().cast(),
        s_fr.as_ptr().cast(),
        raw3.as_mut_ptr().cast(),
        &mut srs,
    );
    assert_eq!(err.code, libc::EINVAL);
    assert!(c_str(err.message).contains(&says), "{}", c_str(err.message));
    c2p_supraseal_error_free(err.message);
    destroy_pending_proof(pending); // unknown now: ignored

    let missing = c_path(&f.path.with_extension("nope"));
    let mut none = c2p_supraseal_srs { ptr: null_mut() };
    let err = create_SRS(&mut none, missing.as_ptr(), false);
    assert_eq!(err.code, libc::EIO);
    assert!(none.ptr.is_null());
    c2p_supraseal_error_free(err.message);

    evict_SRS(&srs);
    destroy_gpu_mutex(mtx);
    drop_SRS(&mut clone);
    assert!(clone.ptr.is_null());
    drop_SRS(&mut clone); // cleared word: no-op
    drop_SRS(&mut srs);
    let err = generate_groth16_proofs_c(
        circuits.as_ptr(),
        3,
        r_fr.as_ptr().cast(),
        s_fr.as_ptr().cast(),
        raw.as_mut_ptr().cast(),
        &mut srs,
    );
    assert_eq!(err.code, libc::EINVAL, "a dropped SRS (NULL word) is refused");
    c2p_supraseal_error_free(err.message);
}
