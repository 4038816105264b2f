//! Device faults: an allocation that fails at each of the library's device
//! allocation sites in turn (at each of its first uses in a call) comes back as an out-of-memory error (or the
//! library recovers and the proofs equal the CPU's), the next job on the
//! same parameters proves, and the library's device memory returns to what
//! it was; a job cancelled in its GPU stage gives its device memory back.
//! GPU tests: ignored without a GPU (run them on the GPU machine with
//! --include-ignored, one thread). A process of their own: the twiddle
//! tables the H step keeps for the process's life start uncached, so their
//! allocation site is reached too. Built with the `cuda` feature only.
#![cfg(feature = "cuda")]

use c2prover::backend::gpu::{self, allocation_sites, fail_allocation, record_allocation_sites};
use c2prover::testkit::synthetic::Circuit;
use c2prover::{DeviceMask, ErrorKind, Fr, Job, Parameters, Residency, Witness};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// GPU tests run one at a time: each reads the library's device memory.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn gpu(test: &str) -> std::sync::MutexGuard<'static, ()> {
    assert!(gpu::available(), "{test} needs a CUDA device and none was found");
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The library's device memory in use on every GPU, and once their work is
/// done.
fn live() -> usize {
    (0..gpu::device_count())
        .map(|d| c2prover::backend::device_memory(d).unwrap().in_use)
        .sum()
}

fn in_use() -> usize {
    for d in 0..gpu::device_count() {
        gpu::trim_memory_pool(d).unwrap();
    }
    live()
}

/// Disarms the injected failure when a test ends, passed or not.
struct Disarm;

impl Drop for Disarm {
    fn drop(&mut self) {
        let _ = fail_allocation("", 0, 0);
    }
}

/// Uses of a site failed in turn: the first ones of a call (the same line
/// serves the uploads of points and of a, b, c, the MSMs of all queries).
const USES: usize = 3;

/// Three circuits of one shape filling a domain of 2^log2, their
/// parameters with the points where `residency` says, and the CPU's proofs.
struct Calls {
    params: Parameters,
    witnesses: Vec<Witness>,
    r: Vec<Fr>,
    s: Vec<Fr>,
    want: Vec<Vec<u8>>,
}

impl Calls {
    fn new(log2: u32, residency: Residency) -> Calls {
        let circuits: Vec<Circuit> = (0..3)
            .map(|k| Circuit::porep_like(log2, 70 + log2 as u64, 80 + k).unwrap())
            .collect();
        let mut params = circuits[0].setup(90 + log2 as u64);
        params.residency = residency;
        let witnesses: Vec<Witness> = circuits.iter().map(Circuit::witness).collect();
        let (r, s) = c2prover::random_r_s(witnesses.len());
        let assignments: Vec<_> = witnesses.iter().map(|w| w.as_assignment()).collect();
        let want = c2prover::prove_on_cpu(&params, &assignments, &r, &s)
            .unwrap()
            .iter()
            .map(|p| p.to_compressed().to_vec())
            .collect();
        Calls {
            params,
            witnesses,
            r,
            s,
            want,
        }
    }

    /// The proofs of one call on `params`, compressed.
    fn prove(&self, params: &Parameters) -> c2prover::Result<Vec<Vec<u8>>> {
        let assignments: Vec<_> = self.witnesses.iter().map(|w| w.as_assignment()).collect();
        let proofs = c2prover::prove(params, &assignments, &self.r, &self.s)?;
        Ok(proofs.iter().map(|p| p.to_compressed().to_vec()).collect())
    }
}

/// What one injected failure led to.
enum Outcome {
    /// The call failed with the injected out-of-memory error.
    Failed,
    /// The library recovered (another path, or the CPU) and proved.
    Recovered,
    /// The site was not reached again (allocations made once per process).
    NotReached,
}

/// One call on a fresh copy of `calls`' parameters (its own GPU copy of
/// the points when they are resident) with the allocation at `site` after
/// `skip` others there failing, then a call on the same parameters without failures; the
/// library's device memory after both equals what it was before, plus
/// `kept` (the twiddle table a domain new to the process leaves behind).
fn fail_once_at(site: &str, skip: usize, calls: &Calls, kept: usize) -> Outcome {
    let before = in_use();
    let params = calls.params.clone();
    fail_allocation(site, skip, 1).unwrap();
    // For the messages: the site and which of its uses failed.
    let site = format!("{site} (use {})", skip + 1);
    let result = calls.prove(&params);
    let reached = fail_allocation("", 0, 0).unwrap() == 0;
    let outcome = match result {
        Err(e) => {
            assert!(
                reached,
                "{site}: the call failed without the injected failure: {e}"
            );
            assert_eq!(e.kind, ErrorKind::OutOfMemory, "{site}: {e}");
            assert!(
                e.message.contains("injected"),
                "{site}: the error names the failure: {e}"
            );
            Outcome::Failed
        }
        Ok(got) => {
            assert!(
                got == calls.want,
                "{site}: proofs after the failure equal the CPU's"
            );
            if reached {
                Outcome::Recovered
            } else {
                Outcome::NotReached
            }
        }
    };
    let next = calls
        .prove(&params)
        .unwrap_or_else(|e| panic!("{site}: the next call on the same parameters fails: {e}"));
    assert!(
        next == calls.want,
        "{site}: the next call's proofs equal the CPU's"
    );
    drop(params);
    let after = in_use();
    if !matches!(outcome, Outcome::NotReached) {
        assert_eq!(
            after,
            before + kept,
            "{site}: the library's device memory is back where it was (+{kept} bytes kept)"
        );
    }
    outcome
}

/// Every site the library allocates device memory at while proving (over
/// streamed and over resident points, several circuits per call), made to
/// fail in turn at each of its first `USES` uses in a call: each failure is
/// an out-of-memory error or a recovery, and leaves nothing allocated. A
/// site reached once per process (the twiddle table of a domain size) is
/// failed on a domain new to the process.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
fn a_failed_allocation_at_each_site_is_an_error_and_leaks_nothing() {
    let _gpu = gpu("a_failed_allocation_at_each_site_is_an_error_and_leaks_nothing");
    let _disarm = Disarm;
    // Domain sizes per residency, none shared: the first is the calls'
    // size, the others new domains for sites reached once per process.
    for (residency, sizes) in [
        (Residency::Never, [10u32, 11, 12]),
        (Residency::Always, [13, 14, 15]),
    ] {
        let calls = Calls::new(sizes[0], residency);
        record_allocation_sites(true);
        let first = calls.prove(&calls.params).unwrap();
        record_allocation_sites(false);
        assert!(first == calls.want, "{residency:?}: proofs equal the CPU's");
        let sites = allocation_sites();
        for file in ["h.cu", "msm.cu", "transfer.cu"] {
            assert!(
                sites.iter().any(|s| s.starts_with(file)),
                "{residency:?}: a site in {file} among {sites:?}"
            );
        }
        let mut fresh = sizes[1..].iter();
        let (mut failed, mut recovered) = (Vec::new(), Vec::new());
        for site in &sites {
            let outcome = match fail_once_at(site, 0, &calls, 0) {
                Outcome::NotReached => {
                    // Made once per process: again on a domain it has not seen.
                    let log2 = *fresh
                        .next()
                        .unwrap_or_else(|| panic!("{site}: not reached again, and no new domain is left"));
                    let calls = Calls::new(log2, residency);
                    match fail_once_at(site, 0, &calls, 16 << log2) {
                        Outcome::NotReached => panic!("{site}: not reached on a new domain either"),
                        other => other,
                    }
                }
                other => other,
            };
            let mut uses = vec![outcome];
            for skip in 1..USES {
                match fail_once_at(site, skip, &calls, 0) {
                    Outcome::NotReached => break,
                    other => uses.push(other),
                }
            }
            let tell = |o: &Outcome| match o {
                Outcome::Failed => 'F',
                _ => 'r',
            };
            let uses: String = uses.iter().map(tell).collect();
            if uses.contains('F') {
                failed.push(format!("{site} {uses}"));
            } else {
                recovered.push(format!("{site} {uses}"));
            }
        }
        eprintln!(
            "{residency:?}: {} sites (per use: F failed the call, r recovered); failing the call at some use: {failed:?}; recovering at every use: {recovered:?}",
            sites.len()
        );
    }
}

/// A job cancelled while its GPU stage runs (the library holds device
/// memory for it) ends as cancelled, and the library's device memory goes
/// back to what it was before the job; the next job proves.
#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
fn a_job_cancelled_in_its_gpu_stage_gives_its_device_memory_back() {
    let _gpu = gpu("a_job_cancelled_in_its_gpu_stage_gives_its_device_memory_back");
    for residency in [Residency::Never, Residency::Always] {
        let calls = Calls::new(18, residency);
        let params = Arc::new(calls.params.clone());
        // The points go up (when resident) and the twiddle table is made.
        assert!(calls.prove(&params).unwrap() == calls.want);
        let before = in_use();
        let witnesses: Vec<Witness> = (0..4).flat_map(|_| calls.witnesses.clone()).collect();
        let r: Vec<Fr> = (0..4).flat_map(|_| calls.r.clone()).collect();
        let s: Vec<Fr> = (0..4).flat_map(|_| calls.s.clone()).collect();
        let job = Job::start(params.clone(), witnesses, r, s, true, DeviceMask::ALL).unwrap();
        // Cancelled once the library holds device memory for the job.
        let started = Instant::now();
        while live() <= before {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{residency:?}: the job's GPU stage never began"
            );
            std::thread::yield_now();
        }
        job.cancel();
        let ended = job.finish();
        assert!(
            matches!(&ended, Err(e) if e.kind == ErrorKind::Cancelled),
            "{residency:?}: the job ends as cancelled, not {:?}",
            ended.map(|p| p.len())
        );
        assert_eq!(
            in_use(),
            before,
            "{residency:?}: the cancelled job's device memory is given back"
        );
        assert!(
            calls.prove(&params).unwrap() == calls.want,
            "{residency:?}: the next job proves"
        );
    }
}
