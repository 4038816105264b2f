//! The `c2prover` command: prove, verify, inspect parameters, write
//! synthetic parameters and witnesses, and benchmark.

#[cfg(feature = "bench-supraseal")]
mod bench_supraseal;

use c2prover::params::format::Layout;
use c2prover::testkit::shaped::{PorepShape, ValueMix};
use c2prover::testkit::synthetic::Circuit;
use c2prover::testkit::witness_file;
use c2prover::{Error, Fr, LoadOptions, Parameters, Proof, Witness};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(name = "c2prover", version, about = "Groth16 prover for Filecoin (BLS12-381)")]
struct Cli {
    /// More log output: -v per-stage timings, -vv details (RUST_LOG overrides).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Prove circuits from a parameters file and a witness file, or a
    /// synthetic circuit built in memory; every proof is then verified.
    Prove(ProveArgs),
    /// Verify proofs against a parameters file and the witness's public inputs.
    Verify(VerifyArgs),
    /// Show what a parameters file holds and the memory proving with it needs.
    Info(InfoArgs),
    /// Write a synthetic circuit's parameters and witness files.
    GenSrs(GenSrsArgs),
    /// Benchmarks on this machine (medians after a warm-up).
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
}

#[derive(Args)]
struct ProveArgs {
    /// Parameters file (bellperson format).
    #[arg(long, required_unless_present = "synthetic")]
    params: Option<PathBuf>,
    /// Witness file (format in the README).
    #[arg(long, required_unless_present = "synthetic")]
    witness: Option<PathBuf>,
    /// Instead of files: a random circuit of 2^LOG2 constraints with its
    /// parameters and witness, built in memory.
    #[arg(long, value_name = "LOG2", conflicts_with_all = ["params", "witness"])]
    synthetic: Option<u32>,
    /// With --synthetic: circuits per call (same shape, different witnesses).
    #[arg(long, default_value_t = 1)]
    circuits: usize,
    /// Seed for the synthetic circuit and setup.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the proofs here (192 bytes each, compressed; 384 with --raw).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the raw 384-byte affine form instead of the compressed one.
    #[arg(long)]
    raw: bool,
}

#[derive(Args)]
struct VerifyArgs {
    #[arg(long)]
    params: PathBuf,
    /// Proof file: 192-byte compressed proofs, one per circuit of the witness.
    #[arg(long)]
    proof: PathBuf,
    /// Witness file whose public inputs the proofs are checked against.
    #[arg(long)]
    witness: PathBuf,
}

#[derive(Args)]
struct InfoArgs {
    /// Parameters file.
    file: PathBuf,
    /// Also decode every point (curve checks), as a load does.
    #[arg(long)]
    check: bool,
    /// With --check: subgroup checks too (slow on large files).
    #[arg(long)]
    subgroup: bool,
}

#[derive(Args)]
struct GenSrsArgs {
    /// Constraints: 2^LOG2.
    #[arg(long)]
    log2: u32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Witness circuits to write.
    #[arg(long, default_value_t = 1)]
    circuits: usize,
    #[arg(long)]
    params_out: PathBuf,
    #[arg(long)]
    witness_out: PathBuf,
}

#[derive(Subcommand)]
enum BenchWhat {
    /// Whole proofs of a synthetic circuit.
    Prove(BenchArgs),
    /// Forward NTTs on the GPU, data resident on the device.
    Ntt(BenchSizes),
    /// The H step on the GPU: upload of a, b, c, seven NTTs and the
    /// pointwise work, download of h.
    H(BenchSizes),
    /// Kernel-level figures: Fr multiplications per second, device copy rate.
    Kernels,
    /// GPU MSMs over resident points: dense G1 and G2, and a PoRep-shaped
    /// witness vector (mostly zeros and ones).
    Msm(BenchSizes),
}

#[derive(Args)]
struct BenchSizes {
    /// Domain sizes, as a comma-separated list of log2.
    #[arg(long, value_delimiter = ',', default_values_t = [24u32, 26, 27])]
    log2: Vec<u32>,
    /// Timed runs after one warm-up run.
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

#[derive(Args)]
struct BenchArgs {
    /// Constraints: 2^LOG2.
    #[arg(long, default_value_t = 16)]
    log2: u32,
    /// Circuits (partitions) per call; a comma-separated list runs each.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize])]
    circuits: Vec<usize>,
    /// Timed runs after one warm-up run.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// PoRep-shaped partitions (anchors' counts and densities scaled to
    /// 2^LOG2) over quickly made parameters of valid, distinct points instead
    /// of a synthetic circuit with a real setup: the real cost, but the
    /// proofs do not verify. The partitions of a call share one witness.
    #[arg(long)]
    porep: bool,
    /// Calls in flight at once (each on its own thread); a comma-separated
    /// list runs each.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize])]
    jobs: Vec<usize>,
    /// With --porep: percent of aux values that are 0.
    #[arg(long, default_value_t = 51.19)]
    aux_zeros: f64,
    /// With --porep: percent of aux values that are 1.
    #[arg(long, default_value_t = 47.17)]
    aux_ones: f64,
    /// Also prove the first circuit on the CPU backend and check that the
    /// proof is the same (minutes at 2^26 and up).
    #[arg(long)]
    check_cpu: bool,
    /// Also run supraseal's prover on the same parameters
    /// (written to this file first), witnesses, r and s, and compare.
    #[cfg(feature = "bench-supraseal")]
    #[arg(long)]
    supraseal_params: Option<PathBuf>,
    /// Circuits per supraseal call, a comma-separated list (at most the
    /// largest of --circuits).
    #[cfg(feature = "bench-supraseal")]
    #[arg(long, value_delimiter = ',', default_values_t = [1usize])]
    supraseal_circuits: Vec<usize>,
    /// Run supraseal without our GPU rounds before it in the process (the
    /// proofs it is compared with come from our CPU backend).
    #[cfg(feature = "bench-supraseal")]
    #[arg(long)]
    supraseal_alone: bool,
}

/// Whether our rounds are left out (`--supraseal-alone`).
fn supraseal_alone(args: &BenchArgs) -> bool {
    #[cfg(feature = "bench-supraseal")]
    return args.supraseal_alone;
    #[cfg(not(feature = "bench-supraseal"))]
    return {
        let _ = args;
        false
    };
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let level = match cli.verbose {
        0 => "c2prover=warn",
        1 => "c2prover=debug",
        _ => "c2prover=trace",
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level))
        .format_timestamp_millis()
        .init();
    let result = match cli.command {
        Command::Prove(a) => prove(a),
        Command::Verify(a) => verify(a),
        Command::Info(a) => info(a),
        Command::GenSrs(a) => gen_srs(a),
        Command::Bench {
            what: BenchWhat::Prove(a),
        } => bench(a),
        Command::Bench {
            what: BenchWhat::Ntt(a),
        } => bench_ntt(a),
        Command::Bench {
            what: BenchWhat::H(a),
        } => bench_h(a),
        Command::Bench {
            what: BenchWhat::Kernels,
        } => bench_kernels(),
        Command::Bench {
            what: BenchWhat::Msm(a),
        } => bench_msm(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A spinner for one long step; hidden when stderr is not a terminal.
fn step<T>(what: &str, work: impl FnOnce() -> T) -> T {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(100));
    let started = Instant::now();
    let out = work();
    bar.finish_and_clear();
    eprintln!("{what}: {:.3} s", started.elapsed().as_secs_f64());
    out
}

/// A synthetic circuit's parameters and `n` witnesses (seeds seed, seed+1, ...).
fn synthetic(log2: u32, n: usize, seed: u64) -> Result<(Parameters, Vec<Witness>), Error> {
    let circuits = step(&format!("building {n} synthetic circuit(s) of 2^{log2}"), || {
        (0..n as u64)
            .map(|i| Circuit::porep_like(log2, seed, seed + i))
            .collect::<Result<Vec<_>, _>>()
    })?;
    let params = step("generating parameters (synthetic setup)", || {
        circuits[0].setup(seed)
    });
    let witnesses = circuits.iter().map(Circuit::witness).collect();
    Ok((params, witnesses))
}

fn load(path: &Path) -> Result<Parameters, Error> {
    step(&format!("loading {}", path.display()), || {
        Parameters::load(path, &LoadOptions::default())
    })
}

fn prove(args: ProveArgs) -> Result<(), Error> {
    let (params, witnesses) = match (args.synthetic, &args.params, &args.witness) {
        (Some(log2), _, _) => synthetic(log2, args.circuits.max(1), args.seed)?,
        (None, Some(p), Some(w)) => (load(p)?, witness_file::read(w)?),
        _ => return Err(Error::invalid("give --params and --witness, or --synthetic LOG2")),
    };
    let assignments: Vec<_> = witnesses.iter().map(Witness::as_assignment).collect();
    let (r, s) = c2prover::random_r_s(assignments.len());
    let proofs = step(&format!("proving {} circuit(s)", assignments.len()), || {
        c2prover::prove(&params, &assignments, &r, &s)
    })?;
    let mut all_valid = true;
    for (i, (proof, w)) in proofs.iter().zip(&witnesses).enumerate() {
        let valid = c2prover::verify(&params.vk, &w.inputs[1..], proof)?;
        all_valid &= valid;
        println!(
            "proof {i}: {} {}",
            hex(&proof.to_compressed()),
            if valid { "verified" } else { "INVALID" }
        );
    }
    if let Some(out) = &args.out {
        let bytes: Vec<u8> = proofs
            .iter()
            .flat_map(|p| {
                if args.raw {
                    p.to_raw().to_vec()
                } else {
                    p.to_compressed().to_vec()
                }
            })
            .collect();
        std::fs::write(out, bytes).map_err(|e| Error::io(format!("cannot write {}", out.display()), e))?;
        println!("wrote {} proof(s) to {}", proofs.len(), out.display());
    }
    if all_valid {
        Ok(())
    } else {
        Err(Error::invalid("a proof did not verify"))
    }
}

fn verify(args: VerifyArgs) -> Result<(), Error> {
    let params = load(&args.params)?;
    let witnesses = witness_file::read(&args.witness)?;
    let bytes = std::fs::read(&args.proof)
        .map_err(|e| Error::io(format!("cannot read {}", args.proof.display()), e))?;
    if bytes.len() != witnesses.len() * Proof::COMPRESSED_BYTES {
        return Err(Error::size_mismatch(format!(
            "{} holds {} bytes; {} circuit(s) need {} bytes of compressed proofs",
            args.proof.display(),
            bytes.len(),
            witnesses.len(),
            witnesses.len() * Proof::COMPRESSED_BYTES
        )));
    }
    let mut all_valid = true;
    for (i, (chunk, w)) in bytes
        .chunks_exact(Proof::COMPRESSED_BYTES)
        .zip(&witnesses)
        .enumerate()
    {
        let public: &[Fr] = w.inputs.get(1..).unwrap_or(&[]);
        let valid = c2prover::verify(&params.vk, public, &Proof::from_compressed(chunk)?)?;
        all_valid &= valid;
        println!("proof {i}: {}", if valid { "valid" } else { "INVALID" });
    }
    if all_valid {
        Ok(())
    } else {
        Err(Error::invalid("a proof did not verify"))
    }
}

fn info(args: InfoArgs) -> Result<(), Error> {
    let open_err = |e| Error::io(format!("cannot read {}", args.file.display()), e);
    let file = std::fs::File::open(&args.file).map_err(open_err)?;
    let bytes = c2prover::params::mmap::MappedFile::open(&file).map_err(open_err)?;
    let layout = Layout::parse(&bytes)?;
    let domain = layout.h.count + 1;
    println!("file          {} ({} bytes)", args.file.display(), bytes.len());
    println!("domain        2^{} ({domain})", domain.trailing_zeros());
    println!("inputs        {} (with ONE)", layout.ic.count);
    println!("aux           {}", layout.l.count);
    for s in layout.sections() {
        println!("{:<13} {:>12} points at offset {}", s.name, s.count, s.offset);
    }
    let g1 = 96u64;
    let host = bytes.len() as u64;
    let per_circuit = 3 * 32 * domain as u64 + (g1 * layout.l.count.max(layout.h.count) as u64);
    println!(
        "memory        parameters {} on the host; proving adds about {} per circuit in flight",
        human(host),
        human(per_circuit)
    );
    if args.check {
        let options = LoadOptions {
            check_subgroup: args.subgroup,
            ..Default::default()
        };
        drop(bytes);
        step("loading: decoding and checking every point", || {
            Parameters::load(&args.file, &options)
        })?;
        println!(
            "check         every point decoded and on its curve{}",
            if args.subgroup { ", in its subgroup" } else { "" }
        );
    }
    Ok(())
}

fn gen_srs(args: GenSrsArgs) -> Result<(), Error> {
    let (params, witnesses) = synthetic(args.log2, args.circuits.max(1), args.seed)?;
    let write_err = |p: &Path, e| Error::io(format!("cannot write {}", p.display()), e);
    let file = std::fs::File::create(&args.params_out).map_err(|e| write_err(&args.params_out, e))?;
    params
        .write(std::io::BufWriter::new(file))
        .map_err(|e| write_err(&args.params_out, e))?;
    let file = std::fs::File::create(&args.witness_out).map_err(|e| write_err(&args.witness_out, e))?;
    witness_file::write(std::io::BufWriter::new(file), &witnesses)
        .map_err(|e| write_err(&args.witness_out, e))?;
    println!(
        "wrote {} and {} ({} circuit(s))",
        args.params_out.display(),
        args.witness_out.display(),
        witnesses.len()
    );
    Ok(())
}

fn bench(args: BenchArgs) -> Result<(), Error> {
    let most = args.circuits.iter().copied().max().unwrap_or(1).max(1);
    let device_free_at_start = gpu_free();
    let (params, witnesses) = if args.porep {
        if args.aux_zeros < 0.0 || args.aux_ones < 0.0 || args.aux_zeros + args.aux_ones > 100.0 {
            return Err(Error::invalid(
                "--aux-zeros and --aux-ones are percents summing to at most 100",
            ));
        }
        let shape = PorepShape::scaled(args.log2);
        let mix = ValueMix {
            aux_zeros: args.aux_zeros,
            aux_ones: args.aux_ones,
            ..ValueMix::default()
        };
        eprintln!("PoRep-shaped partition: {shape:?}, {mix:?}");
        let params = step("making parameters (distinct random points)", || {
            shape.parameters(1)
        });
        let witness = step("making a witness", || shape.witness(mix, 2));
        (params, vec![witness])
    } else {
        synthetic(args.log2, most, 1)?
    };
    // One r and s per circuit for every round, so that any round's proofs
    // can be compared with another prover's.
    let (r, s) = c2prover::random_r_s(most);
    let peak_device = DevicePeak::start(device_free_at_start);
    if c2prover::gpu::available() {
        c2prover::gpu::reset_device_peak(0)?;
    }
    let mut rounds = Vec::new();
    for &n in args.circuits.iter().filter(|_| !supraseal_alone(&args)) {
        for &jobs in &args.jobs {
            rounds.push(bench_round(
                &args,
                &params,
                &witnesses,
                (&r, &s),
                n.max(1),
                jobs.max(1),
            )?);
        }
    }
    println!(
        "memory: peak host RSS {}, parameters {} on the host and {} on the GPU, peak device memory in use {} (driver)",
        human(peak_rss()),
        human(params.host_bytes() as u64),
        human(params.device.bytes() as u64),
        peak_device.finish().map_or("n/a (no GPU)".into(), human),
    );
    if let Ok(m) = c2prover::gpu::memory::of(0) {
        println!(
            "device budget of GPU 0: peak {} of the library's allocations against a budget of {} ({:.1} %)",
            human(m.peak as u64),
            human(m.budget as u64),
            100.0 * m.peak as f64 / m.budget.max(1) as f64
        );
    }
    // The proofs of the round with the most circuits (ties: the last).
    let ours = rounds.iter().max_by_key(|round| round.proofs.len());
    if args.check_cpu {
        if let Some(round) = ours {
            check_on_cpu(&params, &witnesses[0], (&r[0], &s[0]), &round.proofs[0])?;
        }
    }
    #[cfg(feature = "bench-supraseal")]
    if let Some(path) = &args.supraseal_params {
        // supraseal takes every circuit's density bitmaps from the first:
        // several circuits per call need the PoRep mode's shared witness.
        if !args.porep && args.supraseal_circuits.iter().any(|&n| n > 1) {
            return Err(Error::invalid(
                "--supraseal-circuits above 1 needs --porep (circuits sharing one witness)",
            ));
        }
        let cpu_proofs;
        let ours = match ours {
            Some(round) => &round.proofs,
            None => {
                let n = args
                    .supraseal_circuits
                    .iter()
                    .copied()
                    .max()
                    .unwrap_or(1)
                    .min(most);
                let assignments: Vec<_> = (0..n)
                    .map(|i| witnesses[i % witnesses.len()].as_assignment())
                    .collect();
                cpu_proofs = step("our proofs for the comparison, on the CPU backend", || {
                    c2prover::prove_on_cpu(&params, &assignments, &r[..n], &s[..n])
                })?;
                &cpu_proofs
            }
        };
        step(&format!("writing the parameters to {}", path.display()), || {
            let file = std::fs::File::create(path)?;
            params.write(std::io::BufWriter::with_capacity(64 << 20, file))
        })
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
        // Our parameters leave both memories before supraseal loads its own.
        drop(params);
        bench_supraseal::compare(
            path,
            &witnesses[0],
            &args.supraseal_circuits,
            args.runs,
            (&r, &s),
            &rounds,
            ours,
        )?;
    }
    Ok(())
}

/// One `bench_round`'s outcome: what a comparison with another prover needs.
#[cfg_attr(not(feature = "bench-supraseal"), allow(dead_code))]
struct Round {
    circuits: usize,
    jobs: usize,
    per_circuit: f64,
    /// The last run's proofs of its first call.
    proofs: Vec<Proof>,
}

/// Proves the first circuit on the CPU backend and checks it against the
/// GPU's proof made with the same r and s.
fn check_on_cpu(
    params: &Parameters,
    witness: &Witness,
    (r, s): (&Fr, &Fr),
    gpu_proof: &Proof,
) -> Result<(), Error> {
    let cpu = step("proving the first circuit on the CPU backend", || {
        c2prover::prove_on_cpu(params, &[witness.as_assignment()], &[*r], &[*s])
    })?;
    if cpu[0] == *gpu_proof {
        println!("CPU check: the CPU backend's proof equals the GPU's, byte for byte");
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "CPU check FAILED: the CPU backend's proof {} differs from the GPU's {}",
            hex(&cpu[0].to_compressed()),
            hex(&gpu_proof.to_compressed())
        )))
    }
}

/// `jobs` calls of `n` circuits each at once, `args.runs` times after a
/// warm-up; the median and its stage times.
fn bench_round(
    args: &BenchArgs,
    params: &Parameters,
    witnesses: &[Witness],
    (r, s): (&[Fr], &[Fr]),
    n: usize,
    jobs: usize,
) -> Result<Round, Error> {
    use c2prover::prover::engine::STATS;
    // Every call proves n circuits; PoRep-shaped calls repeat one witness.
    let assignments: Vec<_> = (0..n)
        .map(|i| witnesses[i % witnesses.len()].as_assignment())
        .collect();
    let (r, s) = (&r[..n], &s[..n]);
    let mut proofs = Vec::new();
    let mut times = Vec::new();
    let mut stages = Vec::new();
    for run in 0..=args.runs {
        STATS.reset();
        let started = Instant::now();
        std::thread::scope(|scope| {
            let calls: Vec<_> = (0..jobs)
                .map(|_| scope.spawn(|| c2prover::prove(params, &assignments, r, s)))
                .collect();
            calls
                .into_iter()
                .map(|c| {
                    c.join()
                        .unwrap_or_else(|_| Err(Error::invalid("a proving thread panicked")))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .map(|mut calls| proofs = calls.swap_remove(0))?;
        let t = started.elapsed().as_secs_f64();
        if run > 0 {
            times.push(t);
            stages.push(STATS.snapshot());
        }
        eprintln!(
            "{} {:.3} s",
            if run == 0 {
                "warm-up (parameters to the GPU on first use)"
            } else {
                "run"
            },
            t
        );
    }
    let median = median(times.clone());
    let per_circuit = median / (n * jobs) as f64;
    // What ran: the GPU takes H and the MSMs when present, over resident
    // points when the parameters went to its memory, streamed otherwise.
    let backend = match (c2prover::gpu::available(), params.device.bytes() > 0) {
        (true, true) => "GPU (H and MSMs, points resident)",
        (true, false) => "GPU (H and MSMs, points streamed)",
        _ => "CPU",
    };
    println!(
        "backend {backend} ({} CPU threads), {} 2^{}, {n} circuit(s) per call, {jobs} call(s) in flight: median {median:.3} s per round, {per_circuit:.3} s per circuit, {:.0} circuits per hour over {} runs (min {:.3}, max {:.3})",
        rayon::current_num_threads(),
        if args.porep { "PoRep-shaped" } else { "synthetic" },
        args.log2,
        3600.0 / per_circuit,
        times.len(),
        times.iter().copied().fold(f64::INFINITY, f64::min),
        times.iter().copied().fold(0.0, f64::max),
    );
    // Stage times of the median run, per circuit (summed over threads, so
    // with several calls in flight they add up to more than the wall time).
    if let Some((stage_times, circuits)) = median_run(&times, &stages) {
        let per: Vec<String> = stage_times
            .iter()
            .filter(|(_, t)| *t > 0.0)
            .map(|(stage, t)| format!("{stage:?} {:.3} s", t / (*circuits).max(1) as f64))
            .collect();
        println!("stages per circuit: {}", per.join(", "));
    }
    Ok(Round {
        circuits: n,
        jobs,
        per_circuit,
        proofs,
    })
}

/// The stage snapshot of the run whose time is the median.
fn median_run<'a, T>(times: &[f64], stages: &'a [T]) -> Option<&'a T> {
    let median = median(times.to_vec());
    let i = times.iter().position(|&t| t == median)?;
    stages.get(i)
}

/// The process's peak resident set (VmHWM), 0 where /proc has none.
fn peak_rss() -> u64 {
    c2prover::procfs::peak_resident().unwrap_or(0)
}

/// GPU 0's free memory as the driver counts it: the memory pool's idle
/// bytes are held by the process, so the peak below includes them.
fn gpu_free() -> Option<usize> {
    if c2prover::gpu::available() {
        let free = c2prover::gpu::driver_free_memory(0).ok()?;
        let idle = c2prover::gpu::pool_idle_memory(0).unwrap_or(0);
        Some(free.saturating_sub(idle))
    } else {
        None
    }
}

/// Samples the GPU's free memory every 5 ms; the peak in use is the
/// largest drop below the free memory at the start.
struct DevicePeak {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    sampler: Option<std::thread::JoinHandle<usize>>,
    start: Option<usize>,
}

impl DevicePeak {
    fn start(free_at_start: Option<usize>) -> DevicePeak {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let sampler = free_at_start.map(|free| {
            std::thread::spawn(move || {
                let mut lowest = free;
                while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                    lowest = lowest.min(gpu_free().unwrap_or(lowest));
                    std::thread::sleep(Duration::from_millis(5));
                }
                lowest
            })
        });
        DevicePeak {
            stop,
            sampler,
            start: free_at_start,
        }
    }

    fn finish(self) -> Option<u64> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let lowest = self.sampler?.join().ok()?;
        Some(self.start?.saturating_sub(lowest) as u64)
    }
}

/// `n` values, `zeros` % of them 0 and `ones` % 1 (to a hundredth of a
/// percent), the rest random.
#[cfg(feature = "cuda")]
fn porep_aux(n: usize, zeros: f64, ones: f64, seed: u64) -> Vec<Fr> {
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};
    use rayon::prelude::*;
    let zero_below = (zeros * 100.0) as u32;
    let one_below = zero_below + (ones * 100.0) as u32;
    let mut out = vec![Fr::ZERO; n];
    out.par_chunks_mut(1 << 16).enumerate().for_each(|(i, chunk)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((i as u64) << 20));
        for v in chunk {
            let roll = rng.next_u32() % 10_000;
            if roll >= one_below {
                let mut bytes = [0u8; 64];
                rng.fill_bytes(&mut bytes);
                *v = Fr::from_uniform_bytes(&bytes);
            } else if roll >= zero_below {
                *v = Fr::ONE;
            }
        }
    });
    out
}

#[cfg(feature = "cuda")]
/// Random evaluations with `zeros` percent zeros (PoRep's a, b: 49 %, c: 80 %).
fn random_evals(n: usize, zeros: u32, seed: u64) -> Vec<Fr> {
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};
    use rayon::prelude::*;
    let mut out = vec![Fr::ZERO; n];
    out.par_chunks_mut(1 << 16).enumerate().for_each(|(i, chunk)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((i as u64) << 20));
        for v in chunk {
            if rng.next_u32() % 100 >= zeros {
                let mut bytes = [0u8; 64];
                rng.fill_bytes(&mut bytes);
                *v = Fr::from_uniform_bytes(&bytes);
            }
        }
    });
    out
}

/// The median of timings (the upper one of an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn require_gpu() -> Result<(), Error> {
    if c2prover::gpu::available() {
        Ok(())
    } else {
        Err(Error::new(
            c2prover::ErrorKind::Unsupported,
            "no GPU: build with --features cuda and run on a machine with a CUDA device",
        ))
    }
}

#[cfg(feature = "cuda")]
fn bench_ntt(args: BenchSizes) -> Result<(), Error> {
    require_gpu()?;
    for log2 in args.log2 {
        let domain =
            c2prover::math::domain::Domain::new(log2).ok_or_else(|| Error::invalid("domain too large"))?;
        let mut values = random_evals(domain.m, 0, log2 as u64);
        let (_, ms) = c2prover::gpu::ntt_round_trip(&domain, &mut values, args.runs.max(1))?;
        println!(
            "ntt 2^{log2}: median {ms:.2} ms over {} runs ({:.1} M elements/s)",
            args.runs.max(1),
            domain.m as f64 / ms as f64 / 1e3
        );
    }
    Ok(())
}

#[cfg(feature = "cuda")]
fn bench_h(args: BenchSizes) -> Result<(), Error> {
    require_gpu()?;
    for log2 in args.log2 {
        let domain =
            c2prover::math::domain::Domain::new(log2).ok_or_else(|| Error::invalid("domain too large"))?;
        let (a, b, c) = step("generating a, b, c (49/49/80 % zeros)", || {
            (
                random_evals(domain.m, 49, 1),
                random_evals(domain.m, 49, 2),
                random_evals(domain.m, 80, 3),
            )
        });
        // Sequential uploads time the compute on its own; overlapped ones
        // are the prover's mode (upload and compute together).
        let (mut compute, mut up, mut down, mut total, mut wall) = (vec![], vec![], vec![], vec![], vec![]);
        for run in 0..=args.runs {
            let (_, t) = c2prover::gpu::quotient(0, &domain, &a, &b, &c, false)?;
            let started = Instant::now();
            let (_, o) = c2prover::gpu::quotient(0, &domain, &a, &b, &c, true)?;
            let elapsed = started.elapsed().as_secs_f64() * 1e3;
            if run > 0 {
                compute.push(t.compute_ms as f64);
                up.push(o.upload_ms as f64);
                down.push(o.download_ms as f64);
                total.push(o.total_ms as f64);
                wall.push(elapsed);
            }
        }
        println!(
            "h 2^{log2}: median compute {:.1} ms (data on the device), upload+compute {:.1} ms \
             (overlapped; the upload of a,b,c alone {:.1} ms), download h {:.1} ms, whole call {:.1} ms \
             ({} runs after a warm-up)",
            median(compute),
            median(total),
            median(up),
            median(down),
            median(wall),
            args.runs
        );
    }
    Ok(())
}

#[cfg(feature = "cuda")]
fn bench_kernels() -> Result<(), Error> {
    require_gpu()?;
    let (muls, copy) = c2prover::gpu::microbench(27)?;
    println!(
        "kernels: {muls:.1} G Fr multiplications/s, device copy {copy:.0} GB/s (read + write, 2^27 x 32 B)"
    );
    for (probe, rate) in c2prover::gpu::instruction_rates()? {
        println!("kernels: {probe}: {rate:.1} instructions per clock per SM");
    }
    Ok(())
}

/// Median wall time in ms of `runs` calls after one warm-up.
#[cfg(feature = "cuda")]
fn time_runs<T>(runs: usize, mut f: impl FnMut() -> Result<T, Error>) -> Result<f64, Error> {
    f()?;
    let mut times = Vec::new();
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        f()?;
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(times))
}

#[cfg(feature = "cuda")]
fn bench_msm(args: BenchSizes) -> Result<(), Error> {
    use c2prover::{G1, G2};
    use rayon::prelude::*;
    require_gpu()?;
    let max = args.log2.iter().copied().max().unwrap_or(20);
    // 2^16 distinct random points, tiled: the MSM's cost does not depend
    // on the points being distinct.
    let distinct = 1usize << 16;
    let ks = random_evals(distinct, 0, 7);
    let g1 = step("generating points", || {
        let base: Vec<G1> = ks.par_iter().map(|k| G1::generator().mul(k)).collect();
        let base = G1::batch_to_affine(&base);
        (0..1usize << max).map(|i| base[i % distinct]).collect::<Vec<_>>()
    });
    let device_g1 = c2prover::gpu::upload_g1(0, &g1)?;
    drop(g1);
    for &log2 in &args.log2 {
        let n = 1usize << log2;
        let dense = random_evals(n, 0, 11);
        let mut phases = None;
        let ms = time_runs(args.runs, || {
            c2prover::gpu::msm_g1_timed(&device_g1, 0, c2prover::gpu::Scalars::Host(&dense))
                .map(|(_, t)| phases = Some(t))
        })?;
        println!(
            "msm g1 2^{log2} dense: median {ms:.1} ms ({:.1} M points/s, scalars uploaded from the host); last run: {:?}",
            n as f64 / ms / 1e3,
            phases.unwrap_or_default()
        );
        // The same scalars already in device memory (the prover's MSM over
        // h finds h there): no upload from the host. Shared scalars are
        // converted into a copy of the MSM's own (the prover's MSM over h
        // converts h in place): the same traffic.
        let resident = c2prover::gpu::upload_scalars(0, &dense, None)?;
        let mut phases = None;
        let ms = time_runs(args.runs, || {
            c2prover::gpu::msm_g1_timed(&device_g1, 0, c2prover::gpu::Scalars::Shared(&resident))
                .map(|(_, t)| phases = Some(t))
        })?;
        drop(resident);
        println!(
            "msm g1 2^{log2} dense, scalars on the device: median {ms:.1} ms ({:.1} M points/s); last run: {:?}",
            n as f64 / ms / 1e3,
            phases.unwrap_or_default()
        );
        // PoRep's L vector: about half zeros, most of the rest ones.
        let witness: Vec<Fr> = random_evals(n, 49, 12)
            .into_iter()
            .enumerate()
            .map(|(i, v)| if !v.is_zero() && i % 10 < 8 { Fr::ONE } else { v })
            .collect();
        let mut phases = None;
        let ms = time_runs(args.runs, || {
            c2prover::gpu::msm_g1_timed(&device_g1, 0, c2prover::gpu::Scalars::Host(&witness))
                .map(|(_, t)| phases = Some(t))
        })?;
        // split_ms covers the zero/one/other split and the sum of the ones.
        println!(
            "msm g1 2^{log2} witness (49 % zeros, ~41 % ones): median {ms:.1} ms; last run: {:?}",
            phases.unwrap_or_default()
        );
        // PoRep's aux vector itself (anchors.md): 1.64 % of the values are
        // neither 0 nor 1 (2.1 M at 2^27, where c = 17 once left the top
        // window only carries: one huge bucket).
        let mix = c2prover::testkit::shaped::ValueMix::default();
        let aux = porep_aux(n, mix.aux_zeros, mix.aux_ones, 14);
        let mut phases = None;
        let ms = time_runs(args.runs, || {
            c2prover::gpu::msm_g1_timed(&device_g1, 0, c2prover::gpu::Scalars::Host(&aux))
                .map(|(_, t)| phases = Some(t))
        })?;
        println!(
            "msm g1 2^{log2} PoRep aux ({} % zeros, {} % ones): median {ms:.1} ms; last run: {:?}",
            mix.aux_zeros,
            mix.aux_ones,
            phases.unwrap_or_default()
        );
    }
    drop(device_g1);
    let g2_log2: Vec<u32> = args.log2.iter().copied().filter(|&l| l <= 24).collect();
    if let Some(&g2_max) = g2_log2.iter().max() {
        let g2 = step("generating G2 points", || {
            let base: Vec<G2> = ks[..4096].par_iter().map(|k| G2::generator().mul(k)).collect();
            let base = G2::batch_to_affine(&base);
            (0..1usize << g2_max).map(|i| base[i % 4096]).collect::<Vec<_>>()
        });
        let device_g2 = c2prover::gpu::upload_g2(0, &g2)?;
        for log2 in g2_log2 {
            let dense = random_evals(1 << log2, 0, 13);
            let ms = time_runs(args.runs, || c2prover::gpu::msm_g2(&device_g2, 0, &dense))?;
            println!("msm g2 2^{log2} dense: median {ms:.1} ms");
        }
    }
    Ok(())
}

#[cfg(not(feature = "cuda"))]
fn bench_msm(_: BenchSizes) -> Result<(), Error> {
    require_gpu()
}

#[cfg(not(feature = "cuda"))]
fn bench_kernels() -> Result<(), Error> {
    require_gpu()
}

#[cfg(not(feature = "cuda"))]
fn bench_ntt(_: BenchSizes) -> Result<(), Error> {
    require_gpu()
}

#[cfg(not(feature = "cuda"))]
fn bench_h(_: BenchSizes) -> Result<(), Error> {
    require_gpu()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}
