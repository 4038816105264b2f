//! The `c2prover` command: prove, verify, inspect parameters, write
//! synthetic parameters and witnesses, and benchmark.

mod bench;
#[cfg(feature = "porep")]
mod c2;
mod commands;

use bench::*;
#[cfg(feature = "porep")]
use c2::*;
use commands::*;

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
    /// The whole C2 job, as lotus-bench prove: a sector's C1 output
    /// (filecoin-proofs-api's JSON) to its proof, verified when the .vk is there.
    #[cfg(feature = "porep")]
    C2(C2Args),
    /// Random parameters of a real small PoRep circuit (2 KiB, 8 MiB), made
    /// as filecoin-proofs' paramcache makes them: for tests and benchmarks.
    #[cfg(feature = "porep")]
    GenPorepParams(GenPorepParamsArgs),
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
    /// The whole C2 job at a real sector size: synthetic C1 outputs of the
    /// real shape, parameters of the circuit's shape (proofs do not verify);
    /// synthesis per partition (also by bellperson), GPU time and idle
    /// fraction, time per proof, peak memory.
    #[cfg(feature = "porep")]
    C2(BenchC2Args),
    /// Proofs for minutes through the split API: mixed sizes, jobs in
    /// flight, cancellation at random points, bad inputs, injected device
    /// faults; what was made and the memory every few seconds.
    Soak(SoakArgs),
}

#[derive(Args)]
struct SoakArgs {
    /// How long to run, in minutes (fractions allowed).
    #[arg(long, default_value_t = 1.0)]
    minutes: f64,
    /// Sizes of the synthetic circuits, as a comma-separated list of log2.
    #[arg(long, value_delimiter = ',', default_values_t = [10u32, 12, 14])]
    log2: Vec<u32>,
    /// Jobs in flight at once (one worker thread each).
    #[arg(long, default_value_t = 4)]
    jobs: usize,
    /// Seconds between the report lines.
    #[arg(long, default_value_t = 10.0)]
    report_seconds: f64,
    /// Seed of the circuits and of the workers' choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
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
    /// Device budgets per GPU to run every round under, a comma-separated
    /// list (e.g. 16G,24G); the parameters' residency is decided afresh
    /// under each. None: the budget as it is (C2P_DEVICE_BUDGET or the
    /// default).
    #[arg(long, value_delimiter = ',')]
    device_budget: Vec<String>,
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
        #[cfg(feature = "porep")]
        Command::C2(a) => c2(a),
        #[cfg(feature = "porep")]
        Command::GenPorepParams(a) => gen_porep_params(a),
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
        Command::Bench {
            what: BenchWhat::Soak(a),
        } => bench_soak(a),
        #[cfg(feature = "porep")]
        Command::Bench {
            what: BenchWhat::C2(a),
        } => bench_c2(a),
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
