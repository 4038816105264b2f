//! The whole C2 job (feature `porep`) on the real 2 KiB sector
//! (tests/fixtures/porep-2kib): `porep::seal_commit_phase2` and its split
//! form prove the C1 output into bytes filecoin-proofs' own `verify_seal`
//! accepts, equal to bellperson's `create_proof` for the same r and s; bad
//! input is an error of the documented kind that names what is wrong.
//!
//! The 2 KiB parameters are made as filecoin-proofs' paramcache makes them
//! (random, ~10 minutes on 2 cores) into `$C2P_TEST_CACHE` (default
//! `~/.cache/c2prover`), outside the clone, and reused while they are there.
//! Every test asks for them first: filecoin-proofs reads
//! `FIL_PROOFS_PARAMETER_CACHE` once, on its first use in the process.
#![cfg(feature = "porep")]

use c2prover::porep::{self, SealJob, SealOptions};
use c2prover::{ErrorKind, Fr};
use filecoin_proofs::constants::SectorShape2KiB;
use filecoin_proofs_api::RegisteredSealProof;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const C1_API: &[u8] = include_bytes!("fixtures/porep-2kib/c1-api.json");
const SECTOR: &str = include_str!("fixtures/porep-2kib/sector.json");
const PROOF: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1;

/// The fixture sector's identity (sector.json).
struct Sector {
    prover_id: [u8; 32],
    sector_id: u64,
    comm_r: [u8; 32],
    comm_d: [u8; 32],
    ticket: [u8; 32],
    seed: [u8; 32],
}

fn sector() -> Sector {
    sector_of(SECTOR)
}

fn sector_of(sector_json: &str) -> Sector {
    let json: serde_json::Value = serde_json::from_str(sector_json).unwrap();
    let bytes = |name: &str| -> [u8; 32] {
        let hex = json[name].as_str().unwrap();
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
        }
        out
    };
    Sector {
        prover_id: bytes("prover_id"),
        sector_id: json["sector_id"].as_u64().unwrap(),
        comm_r: bytes("comm_r"),
        comm_d: bytes("comm_d"),
        ticket: bytes("ticket"),
        seed: bytes("seed"),
    }
}

/// The directory holding the 2 KiB `.params` and `.vk` (made on first use
/// in the cache), as links in a directory of this process's own: the
/// constraints file the jobs record beside them lasts as long as the
/// process, so each run learns the constraints again (and tests that path).
fn params_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let cache = std::env::var_os("C2P_TEST_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/c2prover"));
        let made = cache.join("filecoin-proof-parameters-2kib");
        c2prover::testkit::porep_params::generate(PROOF, &made).unwrap();
        // Those of earlier runs whose process is gone are removed.
        const PREFIX: &str = "c2p-seal-params-";
        for entry in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix(PREFIX) {
                if !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = std::env::temp_dir().join(format!("{PREFIX}{}", std::process::id()));
        link_params(&made, &dir);
        dir
    })
}

/// `dir`, made anew, with links to the `.params` and `.vk` files of `made`.
fn link_params(made: &Path, dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    for entry in std::fs::read_dir(made).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "params" || e == "vk") {
            std::os::unix::fs::symlink(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
}

/// One test at a time: the budget test looks at the whole process's budget.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn options() -> SealOptions {
    SealOptions {
        params_dir: Some(params_dir().to_path_buf()),
        ..SealOptions::default()
    }
}

fn verify_seal(s: &Sector, sector_id: u64, proof: &[u8]) -> bool {
    verify_seal_of(PROOF, s, sector_id, proof)
}

fn verify_seal_of(proof_type: RegisteredSealProof, s: &Sector, sector_id: u64, proof: &[u8]) -> bool {
    filecoin_proofs_api::seal::verify_seal(
        proof_type,
        s.comm_r,
        s.comm_d,
        s.prover_id,
        sector_id.into(),
        s.ticket,
        s.seed,
        proof,
    )
    .unwrap_or(false)
}

/// The Go package's proof of the fixture (go/seal_test.go writes it where
/// `C2P_GO_PROOF_OUT` says; .ci/run runs the Go tests, then this test with
/// `C2P_GO_PROOF` naming the file) passes filecoin-proofs' `verify_seal`,
/// and fails it with a bit flipped.
#[test]
fn the_go_packages_proof_is_accepted_by_verify_seal() {
    let Some(path) = std::env::var_os("C2P_GO_PROOF") else {
        eprintln!("SKIPPED: C2P_GO_PROOF names no proof of the Go package (.ci/run sets it)");
        return;
    };
    params_dir(); // filecoin-proofs finds the .vk through it
    let proof = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", Path::new(&path).display()));
    let s = sector();
    assert_eq!(proof.len(), 192, "one partition");
    assert!(
        verify_seal(&s, s.sector_id, &proof),
        "verify_seal accepts the Go package's proof"
    );
    let mut flipped = proof.clone();
    flipped[100] ^= 1;
    assert!(!verify_seal(&s, s.sector_id, &flipped));
}

#[test]
fn the_2kib_c2_is_accepted_by_verify_seal_and_tampering_is_not() {
    let opts = options();
    let _serial = one_at_a_time();
    let s = sector();
    assert_eq!(
        porep::prover_id(1000),
        s.prover_id,
        "filecoin-ffi's prover id of miner 1000"
    );
    let proof = porep::seal_commit_phase2(C1_API, s.prover_id, s.sector_id, &opts).expect("proved");
    assert_eq!(proof.len(), 192, "one partition");
    assert!(
        verify_seal(&s, s.sector_id, &proof),
        "filecoin-proofs accepts the proof"
    );
    assert!(
        !verify_seal(&s, s.sector_id + 1, &proof),
        "another sector id is refused"
    );
    let mut ticket = s.ticket;
    ticket[0] ^= 1;
    assert!(
        !verify_seal(&Sector { ticket, ..sector() }, s.sector_id, &proof),
        "another ticket is refused"
    );
    for at in [0, 100, 191] {
        let mut tampered = proof.clone();
        tampered[at] ^= 0x10;
        assert!(
            !verify_seal(&s, s.sector_id, &tampered),
            "byte {at} changed: refused"
        );
    }
}

/// With the same r and s, the proof bytes equal bellperson's `create_proof`
/// over the same real parameters and filecoin-proofs' own circuit.
#[test]
fn the_2kib_c2_equals_bellperson_for_the_same_r_and_s() {
    use bellperson::groth16;
    use blstrs::{Bls12, Scalar};
    use ff::Field;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    let opts = options();
    let _serial = one_at_a_time();
    let s = sector();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (r, sv) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let fr = |x: Scalar| Fr(x.into());
    // Recorded on one thread, and its challenges on two (the shared
    // recorder, the job's path on hosts with four cores or more); once a
    // partition was recorded, values and the learned constraints (the
    // job's path after its first partition).
    let proofs: Vec<Vec<u8>> = [1, 2, 2]
        .into_iter()
        .enumerate()
        .map(|(run, threads)| {
            if run > 0 {
                assert!(
                    porep::learned_count() > 0,
                    "the constraints are learned from the first proof"
                );
            }
            porep::seal_commit_phase2(
                C1_API,
                s.prover_id,
                s.sector_id,
                &SealOptions {
                    fixed_r_s: Some((fr(r), fr(sv))),
                    synthesis_threads: Some(threads),
                    ..opts.clone()
                },
            )
            .unwrap()
        })
        .collect();

    let (path, _) = porep::parameter_files(PROOF, params_dir()).unwrap();
    let file = std::fs::read(path).unwrap();
    let params = groth16::Parameters::<Bls12>::read(&file[..], false).unwrap();
    let circuit = porep::circuits_of::<SectorShape2KiB>(porep::parse_c1(C1_API).unwrap())
        .unwrap()
        .remove(0);
    let mut theirs = Vec::new();
    groth16::create_proof(circuit, &params, r, sv)
        .unwrap()
        .write(&mut theirs)
        .unwrap();
    for ours in proofs {
        assert_eq!(ours, theirs, "the proof bytes equal bellperson's");
    }
}

fn kind_and_message(outcome: c2prover::Result<Vec<u8>>) -> (ErrorKind, String) {
    let e = outcome.expect_err("refused");
    (e.kind, e.message)
}

/// The fixture's JSON with `from` replaced by `to` (once).
fn edited(from: &str, to: &str) -> Vec<u8> {
    let text = std::str::from_utf8(C1_API).unwrap();
    assert!(text.contains(from), "the fixture holds {from}");
    text.replacen(from, to, 1).into_bytes()
}

#[test]
fn bad_c2_inputs_are_errors_that_say_what_is_wrong() {
    let opts = options();
    let _serial = one_at_a_time();
    let s = sector();
    let seal = |json: &[u8], prover_id: [u8; 32], sector_id: u64, opts: &SealOptions| {
        kind_and_message(porep::seal_commit_phase2(json, prover_id, sector_id, opts))
    };

    let (kind, message) = seal(&C1_API[..C1_API.len() / 3], s.prover_id, s.sector_id, &opts);
    assert_eq!(kind, ErrorKind::InvalidArgument, "{message}");
    assert!(message.contains("JSON"), "{message}");

    let (kind, message) = seal(C1_API, s.prover_id, s.sector_id + 1, &opts);
    assert_eq!(kind, ErrorKind::InvalidArgument, "{message}");
    assert!(message.contains("sector 8"), "{message}");
    let mut other_prover = s.prover_id;
    other_prover[0] ^= 1;
    let (kind, message) = seal(C1_API, other_prover, s.sector_id, &opts);
    assert_eq!(kind, ErrorKind::InvalidArgument, "{message}");
    assert!(message.contains("replica id"), "{message}");

    // Another proof type than the sector's: its porep id gives another replica id.
    let json = edited("\"StackedDrg2KiBV1_1\"", "\"StackedDrg8MiBV1_1\"");
    let (kind, message) = seal(&json, s.prover_id, s.sector_id, &opts);
    assert_eq!(kind, ErrorKind::InvalidArgument, "{message}");
    assert!(message.contains("replica id"), "{message}");

    // Non-interactive PoRep is proved as an aggregate: not here.
    let json = edited(
        "\"StackedDrg2KiBV1_1\"",
        "\"StackedDrg2KiBV1_2_Feat_NonInteractivePoRep\"",
    );
    let (kind, message) = seal(&json, s.prover_id, s.sector_id, &opts);
    assert_eq!(kind, ErrorKind::Unsupported, "{message}");
    assert!(message.contains("non-interactive"), "{message}");

    // Two partitions' vanilla proofs where the proof has one.
    let text = std::str::from_utf8(C1_API).unwrap();
    let start = text.find("\"StackedDrg2KiBV1\":[").unwrap() + "\"StackedDrg2KiBV1\":[".len();
    let end = text.find("]},\"comm_r\"").unwrap();
    let partition = &text[start..end];
    let json = format!("{}{partition},{}", &text[..start], &text[start..]);
    let (kind, message) = seal(json.as_bytes(), s.prover_id, s.sector_id, &opts);
    assert_eq!(kind, ErrorKind::InvalidArgument, "{message}");
    assert!(message.contains("2 partitions"), "{message}");

    // No parameters there, or no verifying key beside them.
    let empty = std::env::temp_dir().join(format!("c2p-seal-empty-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&empty);
    std::fs::create_dir_all(&empty).unwrap();
    let elsewhere = SealOptions {
        params_dir: Some(empty.clone()),
        ..SealOptions::default()
    };
    let (kind, message) = seal(C1_API, s.prover_id, s.sector_id, &elsewhere);
    assert_eq!(kind, ErrorKind::Io, "{message}");
    assert!(
        message.contains(".params") && message.contains(&empty.display().to_string()),
        "{message}"
    );
    for entry in std::fs::read_dir(params_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "params") {
            std::os::unix::fs::symlink(&path, empty.join(path.file_name().unwrap())).unwrap();
        }
    }
    let (kind, message) = seal(C1_API, s.prover_id, s.sector_id, &elsewhere);
    assert_eq!(kind, ErrorKind::Io, "{message}");
    assert!(
        message.contains(".vk") && message.contains("verifying key"),
        "{message}"
    );
    let unverified = SealOptions {
        verify: false,
        ..elsewhere
    };
    let proof = porep::seal_commit_phase2(C1_API, s.prover_id, s.sector_id, &unverified).unwrap();
    assert!(
        verify_seal(&s, s.sector_id, &proof),
        "without verify-after-prove the proof is still right"
    );
    std::fs::remove_dir_all(&empty).unwrap();
}

#[test]
fn dropped_c2_jobs_stop_and_give_their_memory_back() {
    let opts = options();
    let _serial = one_at_a_time();
    let s = sector();
    let budget = c2prover::engine::host_budget();
    // Cancelled at once: synthesis alone takes seconds, so it is stopped.
    let job = SealJob::start(C1_API, s.prover_id, s.sector_id, &opts).unwrap();
    job.cancel();
    let e = job.finish().expect_err("cancelled");
    assert_eq!(e.kind, ErrorKind::Cancelled, "{e}");
    for _ in 0..3 {
        let job = SealJob::start(C1_API, s.prover_id, s.sector_id, &opts).unwrap();
        drop(job);
    }
    // The workers notice between steps; the budget empties once they have.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while budget.in_use() != (0, 0) {
        assert!(
            std::time::Instant::now() < deadline,
            "the budget still holds {:?}",
            budget.in_use()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // A job whose memory is not there yet: start returns at once, and the
    // job waits in the background until cancelled; with no_wait, Busy.
    let everything = budget.acquire(budget.limit(), false).expect("an idle budget");
    let waiting = SealJob::start(C1_API, s.prover_id, s.sector_id, &opts).expect("started");
    std::thread::sleep(std::time::Duration::from_millis(200));
    waiting.cancel();
    let e = waiting.finish().expect_err("cancelled while waiting for memory");
    assert_eq!(e.kind, ErrorKind::Cancelled, "{e}");
    let no_wait = SealOptions {
        no_wait: true,
        ..opts.clone()
    };
    let e = SealJob::start(C1_API, s.prover_id, s.sector_id, &no_wait)
        .err()
        .expect("no memory, no wait");
    assert_eq!(e.kind, ErrorKind::Busy, "{e}");
    drop(everything);
    assert_eq!(budget.in_use(), (0, 0), "the cancelled job held nothing");
}

/// The C entry points, called as C calls them: the proof verifies, a split
/// job can be abandoned, every failure is a status with a message, and the
/// outputs are written only on success.
#[test]
fn the_c_api_proves_the_2kib_c2() {
    use c2prover::capi::seal::*;
    use std::ffi::CString;
    let dir = CString::new(params_dir().to_str().unwrap()).unwrap();
    let _serial = one_at_a_time();
    let s = sector();
    let opts = c2p_seal_options {
        params_dir: dir.as_ptr(),
        ..c2p_seal_options::default()
    };
    let (mut out, mut len) = (std::ptr::null_mut::<u8>(), 0usize);
    let status = c2p_seal_commit_phase2(
        C1_API.as_ptr(),
        C1_API.len(),
        s.prover_id.as_ptr(),
        s.sector_id,
        &opts,
        &mut out,
        &mut len,
    );
    assert_eq!(status, 0, "{}", last_error());
    assert_eq!(len, 192);
    let proof = unsafe { std::slice::from_raw_parts(out, len) }.to_vec();
    c2p_bytes_free(out, len);
    assert!(verify_seal(&s, s.sector_id, &proof));
    // Freeing again, or what was never handed over, is ignored.
    c2p_bytes_free(out, len);
    let mut mine = [0u8; 4];
    c2p_bytes_free(mine.as_mut_ptr(), mine.len());

    // The split form (proved through it by the Go tests): a job freed
    // unfinished is cancelled, and is gone.
    let mut job = std::ptr::null_mut::<c2p_seal_job>();
    let status = c2p_seal_start(
        C1_API.as_ptr(),
        C1_API.len(),
        s.prover_id.as_ptr(),
        s.sector_id,
        &opts,
        &mut job,
    );
    assert_eq!(status, 0, "{}", last_error());
    c2p_seal_job_free(job);
    // Freed, the handle is unknown.
    let (mut out, mut len) = (std::ptr::null_mut::<u8>(), 0usize);
    assert_eq!(
        c2p_seal_finish(job, &mut out, &mut len),
        ErrorKind::BadState.code()
    );
    assert!(out.is_null() && len == 0, "outputs untouched on failure");
    c2p_seal_job_free(job); // freeing twice is ignored

    // Failures: statuses, messages, untouched outputs.
    let cases: [(&[u8], *const u8, ErrorKind, &str); 3] = [
        (
            b"{\"not\": \"a C1\"}",
            s.prover_id.as_ptr(),
            ErrorKind::InvalidArgument,
            "JSON",
        ),
        (C1_API, std::ptr::null(), ErrorKind::NullPointer, "prover_id"),
        (
            &C1_API[..0],
            s.prover_id.as_ptr(),
            ErrorKind::InvalidArgument,
            "JSON",
        ),
    ];
    for (json, prover_id, kind, says) in cases {
        let status = c2p_seal_commit_phase2(
            json.as_ptr(),
            json.len(),
            prover_id,
            s.sector_id,
            &opts,
            &mut out,
            &mut len,
        );
        assert_eq!(status, kind.code());
        assert!(last_error().contains(says), "{}", last_error());
        assert!(out.is_null() && len == 0, "outputs untouched on failure");
    }
    let status = c2p_seal_commit_phase2(
        C1_API.as_ptr(),
        C1_API.len(),
        s.prover_id.as_ptr(),
        s.sector_id,
        &opts,
        std::ptr::null_mut(),
        &mut len,
    );
    assert_eq!(status, ErrorKind::NullPointer.code());
    assert!(last_error().contains("proof_out"), "{}", last_error());
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn last_error() -> String {
    let mut buf = vec![0u8; 4096];
    let n = c2prover::capi::native::c2p_last_error(buf.as_mut_ptr().cast(), buf.len());
    String::from_utf8_lossy(&buf[..n.min(buf.len() - 1)]).into_owned()
}

/// `c2prover c2`, as an operator runs it: the proof file verifies with
/// filecoin-proofs, and a missing parameters directory is a clear failure.
#[test]
fn the_c2_command_proves_the_2kib_sector() {
    use std::process::Command;
    let dir = params_dir();
    let _serial = one_at_a_time();
    let s = sector();
    let c1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/porep-2kib/c1-api.json");
    let out = std::env::temp_dir().join(format!("c2p-c2-proof-{}", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_c2prover"))
        .args(["c2", "--miner-id", "1000", "--sector-id", "7", "--c1"])
        .arg(&c1)
        .arg("--params-dir")
        .arg(dir)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("verified against"), "{stdout}");
    let proof = std::fs::read(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    assert!(verify_seal(&s, s.sector_id, &proof));

    let run = Command::new(env!("CARGO_BIN_EXE_c2prover"))
        .args([
            "c2",
            "--prover-id",
            &hex(&s.prover_id),
            "--sector-id",
            "7",
            "--c1",
        ])
        .arg(&c1)
        .arg("--params-dir")
        .arg(std::env::temp_dir().join("c2p-no-such-dir"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(
        stderr.contains("c2p-no-such-dir") && stderr.contains(".params"),
        "{stderr}"
    );
}

/// filecoin-proofs' own C1 form (no proof type in it) is the same C1 output
/// as filecoin-proofs-api's, its type found from the replica id; of another
/// sector it is refused.
#[test]
fn filecoin_proofs_own_c1_form_is_accepted() {
    const C1_V1: &[u8] = include_bytes!("fixtures/porep-2kib/c1-v1.json");
    params_dir(); // before anything reads filecoin-proofs' settings
    let s = sector();
    let from_v1 = porep::parse_c1_for(C1_V1, &s.prover_id, s.sector_id).unwrap();
    assert_eq!(from_v1.registered_proof, PROOF);
    let from_api = porep::parse_c1_for(C1_API, &s.prover_id, s.sector_id).unwrap();
    assert_eq!(
        serde_json::to_value(&from_v1).unwrap(),
        serde_json::to_value(&from_api).unwrap()
    );
    let e = porep::parse_c1_for(C1_V1, &s.prover_id, s.sector_id + 1).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArgument, "{e}");
    assert!(e.message.contains("porep id"), "{e}");
}

/// Synthetic PoRep (the V1_2 feature, published as `..V1_1_Feat_SyntheticPoRep`)
/// proves through the same path, on the same parameters, and filecoin-proofs
/// accepts it; its C1 in filecoin-proofs' own form is recognised as synthetic.
#[test]
fn the_2kib_synthetic_porep_c2_is_accepted_by_verify_seal() {
    const C1: &[u8] = include_bytes!("fixtures/porep-2kib-synthetic/c1-api.json");
    const C1_V1: &[u8] = include_bytes!("fixtures/porep-2kib-synthetic/c1-v1.json");
    const SYNTHETIC: RegisteredSealProof = RegisteredSealProof::StackedDrg2KiBV1_1_Feat_SyntheticPoRep;
    let opts = options();
    let _serial = one_at_a_time();
    let s = sector_of(include_str!("fixtures/porep-2kib-synthetic/sector.json"));
    let from_v1 = porep::parse_c1_for(C1_V1, &s.prover_id, s.sector_id).unwrap();
    assert_eq!(from_v1.registered_proof, SYNTHETIC);
    assert_eq!(
        porep::parameter_files(SYNTHETIC, params_dir()).unwrap(),
        porep::parameter_files(PROOF, params_dir()).unwrap(),
        "synthetic PoRep has no parameters of its own"
    );
    let proof = porep::seal_commit_phase2(C1, s.prover_id, s.sector_id, &opts).unwrap();
    assert!(
        verify_seal_of(SYNTHETIC, &s, s.sector_id, &proof),
        "filecoin-proofs accepts it"
    );
    assert!(
        !verify_seal_of(PROOF, &s, s.sector_id, &proof),
        "not as a non-synthetic proof"
    );
}

/// The constraints learned by a first process are recorded beside the
/// parameters and loaded by the next, whose proof still verifies; a
/// damaged file is a clear failure naming it, one of another version is
/// recorded anew, and one whose proof does not verify is removed.
#[test]
fn the_constraints_are_recorded_beside_the_parameters_for_later_processes() {
    use std::process::Command;
    let s = sector();
    let dir = std::env::temp_dir().join(format!("c2p-rows-file-{}", std::process::id()));
    link_params(params_dir(), &dir);
    let (params, _) = porep::parameter_files(PROOF, &dir).unwrap();
    let mut rows = params.file_name().unwrap().to_os_string();
    rows.push(".c2p-r1cs-v1");
    let rows = dir.join(rows);
    let c1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/porep-2kib/c1-api.json");
    let out = dir.join("proof");
    let c2 = || {
        let run = Command::new(env!("CARGO_BIN_EXE_c2prover"))
            .args(["c2", "-v", "--miner-id", "1000", "--sector-id", "7", "--c1"])
            .arg(&c1)
            .arg("--params-dir")
            .arg(&dir)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        (run.status.success(), log)
    };
    let proves = |log: &str| {
        let proof = std::fs::read(&out).unwrap_or_else(|e| panic!("{e}: {log}"));
        std::fs::remove_file(&out).unwrap();
        assert!(verify_seal(&s, s.sector_id, &proof), "{log}");
    };

    let (ok, log) = c2();
    assert!(ok, "{log}");
    assert!(log.contains("constraints recorded into"), "{log}");
    proves(&log);
    let recorded = std::fs::read(&rows).expect("the constraints file, beside the parameters");

    let (ok, log) = c2();
    assert!(ok, "{log}");
    assert!(log.contains("constraints loaded from"), "{log}");
    assert!(!log.contains("constraints recorded into"), "{log}");
    proves(&log);
    assert_eq!(
        std::fs::read(&rows).unwrap(),
        recorded,
        "loaded, not written again"
    );

    let mut damaged = recorded.clone();
    damaged[recorded.len() / 2] ^= 0x10;
    std::fs::write(&rows, &damaged).unwrap();
    let (ok, log) = c2();
    assert!(!ok, "a damaged constraints file fails the job: {log}");
    assert!(
        log.contains(&rows.display().to_string()) && log.contains("SHA-256"),
        "{log}"
    );
    assert!(!out.exists());

    // Of another version (a later build's, say): not this build's to read,
    // so recorded anew.
    let mut other_version = recorded.clone();
    other_version[8] ^= 0x40;
    std::fs::write(&rows, &other_version).unwrap();
    let (ok, log) = c2();
    assert!(ok, "{log}");
    assert!(
        log.contains("recorded anew") && log.contains("constraints recorded into"),
        "{log}"
    );
    proves(&log);
    assert_eq!(std::fs::read(&rows).unwrap(), recorded, "recorded alike");

    // Well formed but not this circuit's (C's coefficients 1 and −1
    // swapped, the digest made anew): the proof does not verify, the file is
    // named and removed, and the next process learns and records it again.
    std::fs::write(&rows, with_c_negated(&recorded)).unwrap();
    let (ok, log) = c2();
    assert!(!ok, "{log}");
    assert!(
        log.contains("does not verify") && log.contains(&rows.display().to_string()),
        "{log}"
    );
    assert!(!rows.exists(), "removed: {log}");
    let (ok, log) = c2();
    assert!(ok, "{log}");
    assert!(log.contains("constraints recorded into"), "{log}");
    proves(&log);
    assert_eq!(std::fs::read(&rows).unwrap(), recorded, "recorded alike");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A constraints file (`<params>.c2p-r1cs-v1`) with every coefficient of C
/// that is 1 made −1 and back, its SHA-256 made anew.
fn with_c_negated(file: &[u8]) -> Vec<u8> {
    let mut bytes = file[..file.len() - 32].to_vec();
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
    // Magic, version, the shape's name, units, two sizes, coefficients.
    let mut at = 12;
    at += 8 + u64_at(&bytes, at);
    at += 8 + 48;
    at += 8 + 32 * u64_at(&bytes, at);
    for matrix in 0..3 {
        at += 8 + 4 * u64_at(&bytes, at);
        let terms = u64_at(&bytes, at);
        at += 8;
        if matrix == 2 {
            for t in 0..terms {
                let c = at + 8 * t + 4;
                let coefficient = u32::from_le_bytes(bytes[c..c + 4].try_into().unwrap());
                if coefficient < 2 {
                    bytes[c..c + 4].copy_from_slice(&(1 - coefficient).to_le_bytes());
                }
            }
        }
        at += 8 * terms;
    }
    assert_eq!(at, bytes.len(), "the whole file read");
    let digest = c2prover::math::sha256(&bytes);
    bytes.extend_from_slice(&digest);
    bytes
}
