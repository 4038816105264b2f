//! `c2prover c2`: the whole C2 job from a C1 output file, as
//! `lotus-bench prove` runs it, with a progress bar per stage.

use super::*;
use c2prover::porep::{self, SealJob, SealOptions};
use indicatif::MultiProgress;
use std::sync::atomic::Ordering;

#[derive(Args)]
pub(crate) struct C2Args {
    /// The C1 output: filecoin-proofs-api's SealCommitPhase1Output as JSON.
    #[arg(long)]
    c1: PathBuf,
    /// The prover id: 64 hex digits.
    #[arg(long, required_unless_present = "miner_id", conflicts_with = "miner_id")]
    prover_id: Option<String>,
    /// The miner's actor id; the prover id is derived from it as filecoin-ffi does.
    #[arg(long)]
    miner_id: Option<u64>,
    #[arg(long)]
    sector_id: u64,
    /// Write the proof here (192 bytes per partition).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Where the .params and .vk files are (default: $FIL_PROOFS_PARAMETER_CACHE,
    /// else /var/tmp/filecoin-proof-parameters).
    #[arg(long)]
    params_dir: Option<PathBuf>,
}

pub(crate) fn c2(args: C2Args) -> Result<(), Error> {
    let json =
        std::fs::read(&args.c1).map_err(|e| Error::io(format!("cannot read {}", args.c1.display()), e))?;
    let prover_id = match (&args.prover_id, args.miner_id) {
        (Some(hex), _) => prover_id_from_hex(hex)?,
        (None, Some(miner)) => porep::prover_id(miner),
        (None, None) => return Err(Error::invalid("give --prover-id or --miner-id")),
    };
    let mut opts = SealOptions {
        params_dir: args.params_dir.clone(),
        ..SealOptions::default()
    };
    let proof_type = porep::parse_c1_for(&json, &prover_id, args.sector_id)?.registered_proof;
    let (params, vk) = porep::parameter_files(proof_type, &opts.resolved_params_dir()?)?;
    println!("parameters: {}", params.display());
    // Verified against the .vk when it is there, as lotus-bench does.
    opts.verify = vk.exists();
    let started = Instant::now();
    let job = SealJob::start(&json, prover_id, args.sector_id, &opts)?;
    let proof = with_progress(job)?;
    let took = started.elapsed();
    println!("proof: {}", hex(&proof));
    println!(
        "{} partition(s) in {:.3} s, {}",
        proof.len() / Proof::COMPRESSED_BYTES,
        took.as_secs_f64(),
        if opts.verify {
            format!("verified against {}", vk.display())
        } else {
            format!("NOT verified: no {}", vk.display())
        }
    );
    if let Some(out) = &args.out {
        std::fs::write(out, &proof).map_err(|e| Error::io(format!("cannot write {}", out.display()), e))?;
        println!("wrote {}", out.display());
    }
    Ok(())
}

/// Waits for the job with a bar for synthesis and one for the proofs
/// (hidden when stderr is not a terminal).
fn with_progress(job: SealJob) -> Result<Vec<u8>, Error> {
    let progress = job.progress();
    let bars = MultiProgress::new();
    let style = ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} partitions {elapsed}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    let bar = |prefix: &'static str| {
        let b = bars.add(ProgressBar::new(progress.partitions as u64));
        b.set_style(style.clone());
        b.set_prefix(prefix);
        b
    };
    let (synthesis, proofs) = (bar("synthesis"), bar("proofs"));
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                synthesis.set_position(progress.synthesized.load(Ordering::Relaxed) as u64);
                proofs.set_position(progress.proved.load(Ordering::Relaxed) as u64);
                std::thread::sleep(Duration::from_millis(100));
            }
            synthesis.finish();
            proofs.finish();
        });
        let proof = job.finish();
        done.store(true, Ordering::Relaxed);
        proof
    })
}

fn prover_id_from_hex(text: &str) -> Result<[u8; 32], Error> {
    let text = text.trim().trim_start_matches("0x");
    let bad = || Error::invalid(format!("--prover-id {text:?}: expected 64 hex digits (32 bytes)"));
    if text.len() != 64 || !text.is_ascii() {
        return Err(bad());
    }
    let mut id = [0u8; 32];
    for (i, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(id)
}

#[derive(Args)]
pub(crate) struct GenPorepParamsArgs {
    /// The seal proof type, as filecoin-proofs-api names it (2 KiB and 8 MiB only).
    #[arg(long, default_value = "StackedDrg2KiBV1_1")]
    proof: String,
    /// The directory to write the .params and .vk into (filecoin-proofs' names).
    #[arg(long)]
    dir: PathBuf,
}

/// Random parameters of a real PoRep circuit, made as filecoin-proofs'
/// paramcache makes them: for tests and benchmarks, never for a sector.
pub(crate) fn gen_porep_params(args: GenPorepParamsArgs) -> Result<(), Error> {
    let proof: porep::RegisteredSealProof =
        serde_json::from_str(&format!("{:?}", args.proof)).map_err(|_| {
            Error::invalid(format!(
                "--proof {:?}: not a seal proof type of filecoin-proofs-api",
                args.proof
            ))
        })?;
    let started = Instant::now();
    let (params, vk) = step(&format!("making the parameters of {proof:?}"), || {
        c2prover::testkit::porep_params::generate(proof, &args.dir)
    })?;
    println!(
        "{}\n{}\nin {:.1} s",
        params.display(),
        vk.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
