//! `bench prove --porep --supraseal-params FILE` (feature `bench-supraseal`):
//! supraseal's C2 prover (crates.io supraseal-c2 0.1.2) on the parameters
//! our rounds used (written to FILE in bellperson's format), the same
//! witness and the same r and s, in the same process after ours. It prints
//! its times, memory and the ratio to ours, and checks that its proofs are
//! ours byte for byte (both compute the same Groth16 sums, so they must be).

use super::kernels::median;
use super::prove::{gpu_free, peak_rss, DevicePeak, Round};
use crate::{human, step};
use c2prover::{Error, Fr, Proof, Witness};
use std::path::Path;
use std::time::Instant;

/// supraseal's `groth16_proof`: A, B, C as blst affine points, Montgomery
/// limbs; the layout of `Proof::to_raw`.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawProof([u64; 48]);

impl RawProof {
    fn bytes(&self) -> [u8; Proof::RAW_BYTES] {
        let mut out = [0u8; Proof::RAW_BYTES];
        for (chunk, limb) in out.chunks_exact_mut(8).zip(self.0) {
            chunk.copy_from_slice(&limb.to_le_bytes());
        }
        out
    }
}

/// Which of A, B and C differ between two raw proofs (A and C: G1, 96
/// bytes each; B: G2, 192 bytes, between them), to tell which sums disagree.
fn differing_parts(theirs: &[u8], mine: &[u8]) -> Vec<&'static str> {
    [("A", 0..96), ("B", 96..288), ("C", 288..384)]
        .into_iter()
        .filter(|(_, range)| theirs[range.clone()] != mine[range.clone()])
        .map(|(name, _)| name)
        .collect()
}

/// "circuit i: B, C" for each circuit whose proofs differ.
fn differing_circuits(theirs: &[[u8; Proof::RAW_BYTES]], ours: &[Proof]) -> Vec<String> {
    theirs
        .iter()
        .zip(ours)
        .enumerate()
        .filter_map(|(i, (theirs, mine))| {
            let parts = differing_parts(theirs, &mine.to_raw());
            (!parts.is_empty()).then(|| format!("circuit {i}: {}", parts.join(", ")))
        })
        .collect()
}

/// Runs supraseal with each count in `circuits` per call (`runs` timed runs
/// after a warm-up) and compares with `ours` (proofs of circuits 0, 1, ...
/// made with r[i], s[i]).
pub fn compare(
    path: &Path,
    witness: &Witness,
    circuits: &[usize],
    runs: usize,
    (r, s): (&[Fr], &[Fr]),
    rounds: &[Round],
    ours: &[Proof],
) -> Result<(), Error> {
    if let Some(&n) = circuits.iter().find(|&&n| n == 0 || n > ours.len()) {
        return Err(Error::invalid(format!(
            "--supraseal-circuits {n}: between 1 and the largest --circuits ({})",
            ours.len()
        )));
    }
    reset_peak_rss();
    let device_free_at_start = gpu_free();
    let peak_device = DevicePeak::start(device_free_at_start);
    let srs = step("supraseal: loading the parameters (create_SRS)", || {
        supraseal_c2::SRS::try_new(path.to_path_buf(), false)
    })
    .map_err(|e| {
        Error::invalid(format!(
            "supraseal could not load {}: {}",
            path.display(),
            String::from(e)
        ))
    })?;
    let w = witness.as_assignment();
    let mut mismatches = 0;
    for &n in circuits {
        let mut times = Vec::new();
        let mut proofs = vec![RawProof([0; 48]); n];
        let mut previous: Option<Vec<[u8; Proof::RAW_BYTES]>> = None;
        let mut unstable_runs = 0;
        let mut differing = Vec::new();
        for run in 0..=runs {
            let started = Instant::now();
            // supraseal panics on errors; the panic message is its error.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                supraseal_c2::generate_groth16_proof(
                    &vec![w.a.as_ptr(); n],
                    &vec![w.b.as_ptr(); n],
                    &vec![w.c.as_ptr(); n],
                    w.a.len(),
                    &vec![w.inputs.as_ptr(); n],
                    &vec![w.aux.as_ptr(); n],
                    w.inputs.len(),
                    w.aux.len(),
                    w.a_aux_density.words,
                    w.b_inp_density.words,
                    w.b_aux_density.words,
                    w.a_aux_density.popcount,
                    w.b_inp_density.popcount,
                    w.b_aux_density.popcount,
                    n,
                    &r[..n],
                    &s[..n],
                    &mut proofs,
                    &srs,
                )
            }))
            .map_err(|_| {
                Error::invalid("supraseal's generate_groth16_proof failed (see its message above)")
            })?;
            let t = started.elapsed().as_secs_f64();
            // Each run is checked: a proof that changes between runs on the
            // same inputs is a race, not a different formula.
            let bytes: Vec<_> = proofs.iter().map(RawProof::bytes).collect();
            differing = differing_circuits(&bytes, ours);
            let unstable = previous.as_ref().is_some_and(|p| *p != bytes);
            unstable_runs += usize::from(unstable);
            previous = Some(bytes);
            eprintln!(
                "supraseal {} {t:.3} s{}{}",
                if run == 0 { "warm-up" } else { "run" },
                if differing.is_empty() {
                    String::new()
                } else {
                    format!("; differs from ours in {}", differing.join("; "))
                },
                if unstable {
                    "; NOT the proofs of its previous run"
                } else {
                    ""
                },
            );
            if run > 0 {
                times.push(t);
            }
        }
        let per_circuit = median(times.clone()) / n as f64;
        // Ours with the same circuits per call and one call in flight, else
        // our fastest round.
        let mine = rounds
            .iter()
            .find(|round| round.circuits == n && round.jobs == 1)
            .or_else(|| {
                rounds
                    .iter()
                    .min_by(|a, b| a.per_circuit.total_cmp(&b.per_circuit))
            });
        let same = n - differing.len();
        mismatches += differing.len();
        println!(
            "supraseal-c2 0.1.2, {n} circuit(s) per call: median {:.3} s per call, {per_circuit:.3} s per circuit, {:.0} circuits per hour over {} runs (min {:.3}, max {:.3}); proofs equal to ours: {same} of {n}; runs whose proofs changed from the run before: {unstable_runs}",
            per_circuit * n as f64,
            3600.0 / per_circuit,
            times.len(),
            times.iter().copied().fold(f64::INFINITY, f64::min),
            times.iter().copied().fold(0.0, f64::max),
        );
        if let Some(mine) = mine {
            println!(
                "ratio: supraseal {per_circuit:.3} s / c2prover {:.3} s per circuit ({} per call, {} in flight) = {:.2}x",
                mine.per_circuit,
                mine.circuits,
                mine.jobs,
                per_circuit / mine.per_circuit
            );
        }
    }
    drop(srs);
    println!(
        "supraseal memory: peak host RSS {} (since its parameters load; includes our witness), peak device memory in use {}",
        human(peak_rss()),
        peak_device.finish().map_or("n/a (no GPU)".into(), human),
    );
    if mismatches > 0 {
        return Err(Error::invalid(format!(
            "{mismatches} of supraseal's proofs differ from ours for the same inputs"
        )));
    }
    Ok(())
}

/// Starts the process's peak resident set (VmHWM) again from its current
/// size, so supraseal's peak is not ours (Linux: `5` to clear_refs).
fn reset_peak_rss() {
    if let Err(e) = c2prover::procfs::reset_peak_resident() {
        log::warn!("could not reset the peak RSS ({e}): supraseal's peak includes ours");
    }
}
