//! `bench soak`: proofs for minutes on end through the split API (`Job`):
//! mixed sizes, several jobs in flight, cancellation at random points, bad
//! inputs and injected device faults, with a line of what was made, what
//! failed and the memory every few seconds. A proof that does not verify or
//! a failure nobody asked for fails the run.

use crate::*;
use c2prover::{DeviceMask, ErrorKind, Job};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// One size's parameters, two valid witnesses and one with a value not
/// below the modulus.
struct Size {
    params: Arc<Parameters>,
    witnesses: Vec<Witness>,
    bad: Witness,
}

/// What the workers have done so far.
#[derive(Default)]
struct Tally {
    proofs: AtomicU64,
    verified: AtomicU64,
    cancelled: AtomicU64,
    refused: AtomicU64,
    /// Device faults armed, and those overwritten (or left at the end)
    /// before any allocation or GPU side met them: the difference was
    /// injected.
    faults_armed: AtomicU64,
    faults_missed: AtomicU64,
    /// Jobs that an injected allocation failure made fail (as out of
    /// memory): any job in flight may meet it, not only the one after it.
    failed_by_faults: AtomicU64,
    unexpected: AtomicU64,
    /// The first unexpected failures, for the summary.
    messages: Mutex<Vec<String>>,
}

impl Tally {
    fn unexpected(&self, what: String) {
        self.unexpected.fetch_add(1, Ordering::Relaxed);
        let mut messages = self.messages.lock().unwrap_or_else(|e| e.into_inner());
        if messages.len() < 10 {
            messages.push(what);
        }
    }

    /// Counts a job's failure: expected when an injected allocation
    /// failure caused it.
    fn failed(&self, what: &str, e: Error) {
        if e.kind == ErrorKind::OutOfMemory && e.message.contains("injected for a test") {
            self.failed_by_faults.fetch_add(1, Ordering::Relaxed);
        } else {
            self.unexpected(format!("{what}: {e}"));
        }
    }

    /// Counts `proofs` of `witnesses` and those that verify.
    fn proved(&self, params: &Parameters, witnesses: &[Witness], proofs: &[Proof]) {
        self.proofs.fetch_add(proofs.len() as u64, Ordering::Relaxed);
        for (w, proof) in witnesses.iter().zip(proofs) {
            match c2prover::verify(&params.vk, &w.inputs[1..], proof) {
                Ok(true) => {
                    self.verified.fetch_add(1, Ordering::Relaxed);
                }
                other => self.unexpected(format!("a proof did not verify: {other:?}")),
            }
        }
    }

    fn line(&self) -> String {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "proofs {} (verified {}), cancelled {}, bad inputs refused {}, injected faults {} of {} armed (jobs failed by one {}), unexpected failures {}",
            get(&self.proofs),
            get(&self.verified),
            get(&self.cancelled),
            get(&self.refused),
            get(&self.faults_armed) - get(&self.faults_missed),
            get(&self.faults_armed),
            get(&self.failed_by_faults),
            get(&self.unexpected)
        )
    }
}

/// A small xorshift generator: the soak's choices, reproducible from --seed.
struct Choices(u64);

impl Choices {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

pub(crate) fn bench_soak(args: SoakArgs) -> Result<(), Error> {
    if args.log2.is_empty() || args.jobs == 0 {
        return Err(Error::invalid("--log2 needs a size and --jobs at least 1"));
    }
    let sizes = args
        .log2
        .iter()
        .map(|&log2| {
            let (params, witnesses) = synthetic(log2, 2, args.seed + u64::from(log2))?;
            let mut bad = witnesses[1].clone();
            bad.aux[0].0.l = [u64::MAX; 4];
            Ok(Size {
                params: Arc::new(params),
                witnesses,
                bad,
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    allocation_sites(true);
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(args.minutes.max(0.0) * 60.0);
    let tally = Tally::default();
    let running = AtomicUsize::new(args.jobs);
    let memory = |t: f64| {
        let rss = c2prover::procfs::resident().unwrap_or(0);
        let device = c2prover::backend::device_memory(0)
            .map(|m| human(m.in_use as u64))
            .unwrap_or_else(|_| "no GPU".into());
        (rss, format!("host RSS {}, device in use {device}", human(rss)), t)
    };
    let mut samples = Vec::new();
    std::thread::scope(|scope| {
        for worker in 0..args.jobs {
            let (sizes, tally, running) = (&sizes, &tally, &running);
            let mut choices = Choices(args.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (worker as u64 + 1));
            scope.spawn(move || {
                while Instant::now() < deadline {
                    soak_one(
                        &sizes[choices.below(sizes.len() as u64) as usize],
                        &mut choices,
                        tally,
                    );
                }
                running.fetch_sub(1, Ordering::Relaxed);
            });
        }
        let report = Duration::from_secs_f64(args.report_seconds.max(0.1));
        while running.load(Ordering::Relaxed) > 0 {
            std::thread::sleep(report.min(Duration::from_millis(200)));
            let t = started.elapsed().as_secs_f64();
            let due = samples
                .last()
                .map_or(report.as_secs_f64(), |s: &(u64, String, f64)| {
                    s.2 + report.as_secs_f64()
                });
            if t >= due {
                let sample = memory(t);
                println!("{t:7.1} s: {}; {}", tally.line(), sample.1);
                samples.push(sample);
            }
        }
    });
    let (h, witness) = c2prover::testkit::faults::fail_beside(0, 0);
    let missed = allocation_sites(false) + h + witness;
    tally.faults_missed.fetch_add(missed as u64, Ordering::Relaxed);
    let end = memory(started.elapsed().as_secs_f64());
    println!(
        "soak of {:.1} min over 2^{:?}, {} jobs in flight: {}",
        args.minutes,
        args.log2,
        args.jobs,
        tally.line()
    );
    // Drift: from the first sample (the warm-up is over by then) to the end.
    if let Some(first) = samples.first() {
        println!(
            "host RSS {} after {:.1} s, {} at the end: drift {:+.1} MiB; {}",
            human(first.0),
            first.2,
            human(end.0),
            (end.0 as f64 - first.0 as f64) / (1 << 20) as f64,
            end.1
        );
    }
    let messages = tally.messages.lock().unwrap_or_else(|e| e.into_inner());
    for m in messages.iter() {
        println!("unexpected: {m}");
    }
    if tally.unexpected.load(Ordering::Relaxed) > 0 {
        return Err(Error::new(ErrorKind::Panic, "the soak saw unexpected failures"));
    }
    if tally.proofs.load(Ordering::Relaxed) == 0 {
        return Err(Error::invalid("the soak made no proof (too short?)"));
    }
    Ok(())
}

/// One job on `size`: proved and verified, cancelled at a random point,
/// refused for a bad value, or proved after an injected device fault.
fn soak_one(size: &Size, choices: &mut Choices, tally: &Tally) {
    let n = 1 + choices.below(2) as usize;
    let witnesses = size.witnesses[..n].to_vec();
    let (r, s) = c2prover::random_r_s(n);
    let start = |witnesses: Vec<Witness>| {
        Job::start(
            size.params.clone(),
            witnesses,
            r.clone(),
            s.clone(),
            true,
            DeviceMask::ALL,
        )
    };
    match choices.below(10) {
        // Cancelled after 0 to 30 ms: cancelled, or done first.
        6 | 7 => match start(witnesses.clone()) {
            Ok(job) => {
                std::thread::sleep(Duration::from_millis(choices.below(30)));
                job.cancel();
                match job.finish() {
                    Ok(proofs) => tally.proved(&size.params, &witnesses, &proofs),
                    Err(e) if e.kind == ErrorKind::Cancelled => {
                        tally.cancelled.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => tally.failed("a cancelled job", e),
                }
            }
            Err(e) => tally.failed("starting a job", e),
        },
        // A value not below the modulus: refused, at the start or the end.
        8 => {
            let mut bad = witnesses;
            bad[0] = size.bad.clone();
            match start(bad).and_then(Job::finish) {
                Err(e) if e.kind == ErrorKind::InvalidArgument => {
                    tally.refused.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => tally.failed("a job with a bad value", e),
                other => tally.unexpected(format!(
                    "a bad value was not refused: {:?}",
                    other.map(|p| p.len())
                )),
            }
        }
        // Half the time the next device allocation at a site seen so far
        // fails (the job, or another in flight, fails as out of memory or
        // recovers); otherwise the next H side and witness MSMs run beside
        // each other fail as out of memory (on a GPU whose points are
        // resident), and the job still proves.
        9 => {
            let missed = match choices.below(2) {
                0 => fail_an_allocation(choices),
                _ => None,
            }
            .unwrap_or_else(|| {
                let (h, witness) = c2prover::testkit::faults::fail_beside(1, 1);
                tally.faults_armed.fetch_add(1, Ordering::Relaxed);
                h + witness
            });
            tally.faults_armed.fetch_add(1, Ordering::Relaxed);
            tally.faults_missed.fetch_add(missed as u64, Ordering::Relaxed);
            match start(witnesses.clone()).and_then(Job::finish) {
                Ok(proofs) => tally.proved(&size.params, &witnesses, &proofs),
                Err(e) => tally.failed("a job after an injected fault", e),
            }
        }
        _ => match start(witnesses.clone()).and_then(Job::finish) {
            Ok(proofs) => tally.proved(&size.params, &witnesses, &proofs),
            Err(e) => tally.failed("a job", e),
        },
    }
}

/// Starts or stops recording the device allocation sites (the GPU build);
/// stopping disarms and returns the armed failure no allocation met.
fn allocation_sites(on: bool) -> usize {
    #[cfg(feature = "cuda")]
    {
        c2prover::backend::gpu::record_allocation_sites(on);
        if !on {
            return c2prover::backend::gpu::fail_allocation("", 0, 0).unwrap_or(0);
        }
    }
    #[cfg(not(feature = "cuda"))]
    let _ = on;
    0
}

/// Makes the next device allocation at a site seen so far fail; returns
/// the previous arming's failure if no allocation met it, or `None` where
/// there is no site (no GPU, or none recorded yet).
fn fail_an_allocation(choices: &mut Choices) -> Option<usize> {
    #[cfg(feature = "cuda")]
    {
        let sites = c2prover::backend::gpu::allocation_sites();
        let site = sites.get(choices.below(sites.len() as u64) as usize)?;
        c2prover::backend::gpu::fail_allocation(site, 0, 1).ok()
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = choices;
        None
    }
}
