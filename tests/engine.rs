//! The engine through the C API: backpressure (a full budget makes
//! `c2p_prove_start` wait, or fail with ErrorKind::Busy.code() when asked not to
//! wait), and a thousand jobs leaving host memory (and, with a GPU, device
//! memory) flat. Its own test binary: the budget and the resident set are
//! process-wide, and the tests here take turns.

mod c_fixture;
use c_fixture::*;

use c2prover::capi::native::*;
use c2prover::capi::*;
use c2prover::engine::host_budget;
use c2prover::ErrorKind;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn start(params: *mut c2p_params, circuits: &[c2p_assignment], no_wait: bool) -> (i32, *mut c2p_job) {
    let opts = c2p_prove_options {
        no_wait,
        ..Default::default()
    };
    let mut job = null_mut();
    let status = c2p_prove_start(
        params,
        circuits.as_ptr(),
        circuits.len(),
        null(),
        null(),
        &opts,
        &mut job,
    );
    (status, job)
}

fn finish(job: *mut c2p_job, n: usize) -> i32 {
    let mut proofs = vec![0u8; n * C2P_PROOF_BYTES];
    c2p_prove_finish(job, proofs.as_mut_ptr(), proofs.len())
}

fn budget() -> c2p_budget_info {
    let mut info = c2p_budget_info::default();
    assert_eq!(c2p_host_budget(&mut info), C2P_OK);
    info
}

#[test]
fn a_full_budget_waits_or_is_busy() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let f = fixture();
    let params = load();
    let circuits: Vec<c2p_assignment> = f.witnesses.iter().map(assignment).collect();
    assert_eq!(c2p_host_budget(null_mut()), ErrorKind::NullPointer.code());

    // Something else holds the whole budget.
    let limit = budget().limit_bytes as usize;
    assert!(limit > 0);
    let held = host_budget().acquire(limit, true).unwrap();
    assert_eq!(budget().in_use_bytes as usize, limit);

    let (status, job) = start(params, &circuits, true);
    assert_eq!(status, ErrorKind::Busy.code(), "no_wait on a full budget");
    assert!(job.is_null(), "no job on failure");
    let mut message = [0 as std::ffi::c_char; 512];
    c2p_last_error(message.as_mut_ptr(), message.len());
    // SAFETY: c2p_last_error NUL-terminates what it writes.
    let text = unsafe { std::ffi::CStr::from_ptr(message.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    assert!(text.contains("budget is full"), "message: {text}");

    // A waiting start returns once the budget has room.
    let started = Arc::new(AtomicBool::new(false));
    let flag = started.clone();
    let circuits_addr = circuits.as_ptr() as usize;
    let n = circuits.len();
    let params_addr = params as usize;
    let waiter = std::thread::spawn(move || {
        // SAFETY (test): `circuits` outlives the thread (joined below).
        let circuits = unsafe { std::slice::from_raw_parts(circuits_addr as *const c2p_assignment, n) };
        let (status, job) = start(params_addr as *mut c2p_params, circuits, false);
        flag.store(true, Ordering::SeqCst);
        assert_eq!(status, C2P_OK);
        assert_eq!(finish(job, n), C2P_OK);
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !started.load(Ordering::SeqCst),
        "start waited while the budget was full"
    );
    drop(held);
    waiter.join().unwrap();
    assert!(started.load(Ordering::SeqCst));

    // A smaller limit set through the C API, then the default back.
    c2p_set_host_budget(1);
    assert_eq!(budget().limit_bytes, 1);
    let (status, job) = start(params, &circuits, true);
    assert_eq!(status, C2P_OK, "a job larger than the budget runs when alone");
    assert_eq!(finish(job, circuits.len()), C2P_OK);
    c2p_set_host_budget(0);
    assert_eq!(budget().limit_bytes as usize, limit);
    assert_eq!((budget().in_use_bytes, budget().jobs), (0, 0));
    c2p_params_free(params);
}

/// Resident set size in bytes, from /proc (Linux).
fn rss() -> Option<usize> {
    c2prover::procfs::resident().map(|bytes| bytes as usize)
}

#[test]
fn a_thousand_jobs_keep_memory_flat() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let f = fixture();
    let params = load();
    let circuits: Vec<c2p_assignment> = f.witnesses.iter().map(assignment).take(1).collect();
    const JOBS: usize = 1000;
    const IN_FLIGHT: usize = 4;
    const WARM_UP: usize = 100;
    let mut pending = std::collections::VecDeque::new();
    let (mut rss_warm, mut device_warm) = (0, None);
    for i in 0..JOBS {
        if pending.len() == IN_FLIGHT {
            assert_eq!(finish(pending.pop_front().unwrap(), 1), C2P_OK);
        }
        // Every tenth job is abandoned instead of finished.
        let (status, job) = start(params, &circuits, false);
        assert_eq!(status, C2P_OK, "job {i}");
        if i % 10 == 9 {
            c2p_job_free(job);
        } else {
            pending.push_back(job);
        }
        if i == WARM_UP {
            rss_warm = rss().unwrap_or(0);
            device_warm = c2prover::backend::device_free(0);
        }
    }
    while let Some(job) = pending.pop_front() {
        assert_eq!(finish(job, 1), C2P_OK);
    }
    // Abandoned jobs give their budget back when their workers notice.
    for _ in 0..200 {
        if budget().jobs == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        (budget().in_use_bytes, budget().jobs),
        (0, 0),
        "every job gave its budget back"
    );
    let rss_end = rss().unwrap_or(0);
    let growth = rss_end.saturating_sub(rss_warm);
    eprintln!(
        "resident set after {WARM_UP} jobs {} KiB, after {JOBS} {} KiB",
        rss_warm >> 10,
        rss_end >> 10
    );
    assert!(
        growth < 32 << 20,
        "host memory grew by {} KiB over {} jobs",
        growth >> 10,
        JOBS - WARM_UP
    );
    match device_warm {
        Some(before) => {
            let after = c2prover::backend::device_free(0).unwrap_or(0);
            assert!(
                before.saturating_sub(after) < 64 << 20,
                "device memory grew by {} KiB",
                before.saturating_sub(after) >> 10
            );
        }
        None => eprintln!("SKIPPED: device memory check (no GPU)"),
    }
    c2p_params_free(params);
}
