//! `bench c2`: the whole C2 job at a real sector size without a real sector.
//! Synthetic C1 outputs (`testkit::porep_c1`: vanilla proofs of the real
//! shape, random values) go through the job as a caller's would; the real
//! circuit code synthesizes them with the real constraint counts, and the
//! parameters are quickly made points of the circuit's exact shape (the
//! proofs do not verify). First, partition 0 is synthesized by the recorder
//! and, beside it, by bellperson's own prover (filecoin-proofs' path), which
//! also gives the parameters' shape.

use crate::*;
use c2prover::porep::size_name;
use c2prover::porep::{self, RegisteredSealProof, SealJob, SealOptions};
use c2prover::stats::{Stage, STATS};
use c2prover::testkit::porep_c1::{
    record_partition_shared, synthesize_partition, synthetic_c1, PartitionSynthesis,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Args)]
pub(crate) struct BenchC2Args {
    /// The sector size: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB.
    #[arg(long, default_value = "32GiB")]
    sector_size: String,
    /// The synthetic-PoRep variant of the proof type.
    #[arg(long)]
    synthetic_porep: bool,
    /// C2 jobs to run (one proof each, sectors 1, 2, ..); 0 stops after
    /// partition 0's synthesis.
    #[arg(long, default_value_t = 1)]
    proofs: usize,
    /// Jobs in flight at once.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Leave out bellperson's synthesis of partition 0.
    #[arg(long)]
    no_bellperson: bool,
    /// Threads recording each partition (the shared recorder); default: the
    /// job's own choice.
    #[arg(long)]
    synthesis_threads: Option<usize>,
    /// Only the jobs: partition 0 recorded once by the shared recorder to
    /// size the parameters, no path timed or compared.
    #[arg(long)]
    job_only: bool,
    /// The values paths to run the jobs with, one set of jobs each, in
    /// order: `native` (the job's own: native values once a first partition
    /// matched its circuit's) and `circuit` (the circuit's code on the
    /// shared threads, the path before the native witness).
    #[arg(long, value_delimiter = ',', default_value = "native")]
    values_paths: Vec<ValuesPath>,
    /// Where the jobs keep the circuit's constraints file, as beside real
    /// parameters (these are made in memory): a later run loads it instead
    /// of learning the constraints. Default: `c2prover-bench-c2` in the
    /// temporary directory.
    #[arg(long)]
    rows_dir: Option<std::path::PathBuf>,
}

/// How the jobs' later partitions compute their values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ValuesPath {
    Native,
    Circuit,
}

/// The interactive PoRep proof type of a sector size.
fn proof_type(size: &str, synthetic: bool) -> Result<RegisteredSealProof, Error> {
    let synthetic_porep = filecoin_proofs_api::ApiFeature::SyntheticPoRep;
    porep::INTERACTIVE_PROOFS
        .into_iter()
        .filter(|p| p.feature_enabled(synthetic_porep) == synthetic)
        .find(|p| size_name(u64::from(p.sector_size())).eq_ignore_ascii_case(size))
        .ok_or_else(|| {
            Error::invalid(format!(
                "--sector-size {size}: not one of 2KiB, 8MiB, 512MiB, 32GiB, 64GiB"
            ))
        })
}

/// One C2 job's figures.
struct Done {
    sector: u64,
    ended: Instant,
    took: f64,
    /// Each partition's synthesis time, seconds.
    synthesis: Vec<f64>,
    /// The GPUs' lanes' time held so far when it ended, seconds.
    lanes_held: f64,
}

/// Seconds the GPUs' lanes were held since the stages were reset (lane
/// holds that have ended).
fn lanes_held() -> f64 {
    let (stages, _) = STATS.snapshot();
    stages
        .iter()
        .filter(|(stage, _)| *stage == Stage::GpuLane)
        .map(|(_, t)| t)
        .sum()
}

pub(crate) fn bench_c2(args: BenchC2Args) -> Result<(), Error> {
    let proof = proof_type(&args.sector_size, args.synthetic_porep)?;
    let prover = porep::prover_id(1000);
    let device_free_at_start = gpu_free();
    let peak_device = DevicePeak::start(device_free_at_start);
    let c1_of = |sector: u64| synthetic_c1(proof, &prover, sector, sector);
    let first = step(&format!("a synthetic C1 output of {proof:?}"), || c1_of(1))?;
    println!("{proof:?}: C1 output of {} (JSON)", human(first.len() as u64));
    let threads = args.synthesis_threads.unwrap_or_else(porep::partition_threads);
    let partition0 = if args.job_only {
        step(
            "partition 0 by the shared recorder (sizes the parameters)",
            || record_partition_shared(porep::parse_c1(&first)?, 0, threads),
        )?
    } else {
        let partition0 = compare_paths(&first, &args, threads)?;
        partition0.witness
    };
    drop(first);
    let w = &partition0;
    if args.proofs == 0 {
        println!("memory: peak host RSS {}", human(peak_rss()));
        return Ok(());
    }
    let params = step(
        "making parameters of the circuit's shape (distinct random points)",
        || c2prover::testkit::shaped::parameters_for(w, 1),
    );
    drop(partition0);
    let params = Arc::new(params);
    println!(
        "parameters: {} on the host; host budget {} for jobs in flight",
        human(params.host_bytes() as u64),
        human(c2prover::engine::host_budget().limit() as u64)
    );
    let rows_dir = args
        .rows_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("c2prover-bench-c2"));
    std::fs::create_dir_all(&rows_dir).map_err(|e| Error::io(rows_dir.display(), e))?;
    // An earlier run's file is loaded instead of learned: say which.
    let there = std::fs::read_dir(&rows_dir)
        .map_err(|e| Error::io(rows_dir.display(), e))?
        .flatten()
        .any(|f| f.file_name().to_string_lossy().contains(".c2p-r1cs-v"));
    println!(
        "constraints file in {}: {}",
        rows_dir.display(),
        if there {
            "there from an earlier run (loaded, not learned)"
        } else {
            "none yet (the first job learns and records it)"
        }
    );
    let opts = SealOptions {
        params_dir: Some(rows_dir),
        parameters: Some(params.clone()),
        verify: false,
        synthesis_threads: args.synthesis_threads,
        ..SealOptions::default()
    };
    let mut steady = Vec::new();
    for &path in &args.values_paths {
        porep::set_native_witness(path == ValuesPath::Native);
        println!("== jobs with the {path:?} values path");
        steady.push((path, run_jobs(&args, &opts, &c1_of, prover)?));
    }
    porep::set_native_witness(true);
    if let [(first, Some(a)), (second, Some(b))] = steady[..] {
        println!(
            "steady state per proof: {first:?} {a:.1} s, {second:?} {b:.1} s ({first:?} / {second:?} = {:.2})",
            a / b
        );
    }
    print_memory(&params, peak_device);
    Ok(())
}

/// `args.proofs` C2 jobs, `args.jobs` at a time, each reported, then their
/// summary.
fn run_jobs(
    args: &BenchC2Args,
    opts: &SealOptions,
    c1_of: &(dyn Fn(u64) -> Result<Vec<u8>, Error> + Sync),
    prover: [u8; 32],
) -> Result<Option<f64>, Error> {
    let next = AtomicUsize::new(1);
    let done: Mutex<Vec<Done>> = Mutex::new(Vec::new());
    STATS.reset();
    let started = Instant::now();
    std::thread::scope(|scope| -> Result<(), Error> {
        let workers: Vec<_> = (0..args.jobs.max(1))
            .map(|_| {
                scope.spawn(|| -> Result<(), Error> {
                    loop {
                        let sector = next.fetch_add(1, Ordering::Relaxed) as u64;
                        if sector > args.proofs as u64 {
                            return Ok(());
                        }
                        let c1 = c1_of(sector)?;
                        let begun = Instant::now();
                        let job = SealJob::start(&c1, prover, sector, opts)?;
                        drop(c1);
                        let progress = job.progress();
                        job.finish()?;
                        let mut synthesis: Vec<(usize, Duration)> = progress
                            .synthesis_times
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .clone();
                        synthesis.sort();
                        let d = Done {
                            sector,
                            ended: Instant::now(),
                            took: begun.elapsed().as_secs_f64(),
                            synthesis: synthesis.iter().map(|(_, t)| t.as_secs_f64()).collect(),
                            lanes_held: lanes_held(),
                        };
                        report(&d);
                        done.lock().unwrap_or_else(|e| e.into_inner()).push(d);
                    }
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| {
            w.join()
                .unwrap_or_else(|_| Err(Error::invalid("a C2 job thread panicked")))
        })
    })?;
    let wall = started.elapsed().as_secs_f64();
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|d| d.ended);
    Ok(summary(&done, wall, started, args.jobs.max(1)))
}

/// Partition 0 through every synthesis path, timed and compared (each
/// path's witness must equal the one-thread recorder's), printed.
fn compare_paths(first: &[u8], args: &BenchC2Args, threads: usize) -> Result<PartitionSynthesis, Error> {
    let what = if args.no_bellperson {
        "partition 0 by the recorder"
    } else {
        "partition 0 by the recorder and by bellperson, side by side"
    };
    let partition0 = step(what, || {
        synthesize_partition(porep::parse_c1(first)?, 0, !args.no_bellperson, Some(threads))
    })?;
    let w = &partition0.witness;
    println!(
        "partition 0: {} constraints, {} inputs, {} aux; synthesis {:.1} s by the recorder{}",
        w.a.len(),
        w.inputs.len(),
        w.aux.len(),
        partition0.recorder.as_secs_f64(),
        partition0.bellperson.map_or(String::new(), |t| format!(
            ", {:.1} s by bellperson's prover (ProvingAssignment)",
            t.as_secs_f64()
        ))
    );
    println!(
        "partition 0: {:.1} s for its values alone on one thread (no a, b, c)",
        partition0.values_only.as_secs_f64()
    );
    println!(
        "partition 0: {:.2} s for its aux values computed natively on one thread (porep::native), equal to the \
         recorder's",
        partition0.native.as_secs_f64()
    );
    if let Some(shared) = partition0.shared {
        println!(
            "partition 0: {:.1} s by the shared recorder on {threads} threads (the job's path), the same witness",
            shared.as_secs_f64()
        );
    }
    if let Some(path) = &partition0.constraints {
        println!(
            "partition 0: constraints recorded and checked in {:.1} s ({} terms, {}); then {:.1} s for the values on \
             {threads} threads and {:.1} s for a, b, c as products: {:.1} s (the job's path after its first \
             partition), the same witness",
            path.learned.as_secs_f64(),
            path.terms,
            human(path.host_bytes as u64),
            path.values.as_secs_f64(),
            path.products.as_secs_f64(),
            (path.values + path.products).as_secs_f64()
        );
    }
    Ok(partition0)
}

fn report(d: &Done) {
    let (min, max) = d
        .synthesis
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &t| (lo.min(t), hi.max(t)));
    println!(
        "sector {}: proof in {:.1} s; synthesis per partition median {:.1} s (min {:.1}, max {:.1}) over {} partitions",
        d.sector,
        d.took,
        median(d.synthesis.clone()),
        min,
        max,
        d.synthesis.len()
    );
}

/// The run's figures, printed: GPU time and idle fraction over the whole
/// run, stages and synthesis per partition, and the time per proof in
/// steady state (between the first and the last proof's ends; returned
/// too) with the GPU's busy fraction then. A steady state only when some
/// proof started after another ended (more proofs than jobs in flight).
fn summary(done: &[Done], wall: f64, started: Instant, jobs: usize) -> Option<f64> {
    let (stages, circuits) = STATS.snapshot();
    // The lanes' time held: with streamed points the H steps overlap H's
    // MSMs, so the stages inside do not add up to it.
    let gpu = lanes_held();
    let per_partition = gpu / circuits.max(1) as f64;
    let gpus = c2prover::backend::device_count().max(1) as f64;
    if c2prover::backend::device_count() == 0 {
        println!(
            "{} proof(s) in {wall:.1} s, proved on the CPU (no GPU)",
            done.len()
        );
    } else {
        println!(
        "{} proof(s) in {wall:.1} s; GPU {:.2} s per partition ({circuits} partitions), busy {:.1} % of the time (idle {:.1} %)",
        done.len(),
        per_partition,
        100.0 * gpu / wall / gpus,
        100.0 - 100.0 * gpu / wall / gpus
        );
    }
    let per_stage: Vec<String> = stages
        .iter()
        .filter(|(_, t)| *t > 0.0)
        .map(|(stage, t)| format!("{stage:?} {:.2} s", t / circuits.max(1) as f64))
        .collect();
    println!(
        "stages per partition (summed over threads): {}",
        per_stage.join(", ")
    );
    let all: Vec<f64> = done.iter().flat_map(|d| d.synthesis.iter().copied()).collect();
    if !all.is_empty() {
        println!(
            "synthesis per partition: median {:.2} s over {} partitions",
            median(all.clone()),
            all.len()
        );
    }
    let ([first, .., last], true) = (done, done.len() > jobs) else {
        return None;
    };
    let window = (last.ended - first.ended).as_secs_f64();
    let steady = window / (done.len() - 1) as f64;
    let busy = if c2prover::backend::device_count() == 0 {
        String::new()
    } else {
        format!(
            "; GPU busy {:.1} % of that time",
            100.0 * (last.lanes_held - first.lanes_held) / window / gpus
        )
    };
    println!(
        "steady state: {steady:.1} s per proof (first proof ended at {:.1} s){busy}",
        (first.ended - started).as_secs_f64()
    );
    Some(steady)
}
