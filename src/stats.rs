//! Where proving time goes: seconds per stage of a circuit's proof, summed
//! over every circuit proved in this process (cheap atomics, read by
//! `c2prover bench` and the logs).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Seconds per stage and circuits proved.
pub struct Stats {
    nanos: [AtomicU64; Stage::COUNT],
    circuits: AtomicU64,
}

/// A stage of one circuit's proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Checking the witness values are below the modulus, in the
    /// pipeline (calls on borrowed witnesses; copies are checked by
    /// `start` before it copies them).
    CheckValues,
    /// The parameters' upload on a GPU's first proof (with the wait for
    /// that GPU's lane it needs); near zero afterwards.
    ParamsUpload,
    /// The upload of a, b, c ahead of the GPU stage, outside the lane
    /// (while another circuit's GPU stage runs), with the wait for the
    /// GPU's upload slot.
    AbcAhead,
    /// a, b, c as products of the aux values on the GPU, for witnesses that
    /// leave them to their constraints (inside AbcAhead or GpuH).
    GpuProducts,
    /// Waiting for the GPU's lane (another circuit's GPU stage).
    LaneWait,
    /// A GPU's lane held, in wall time: a circuit's GPU stage, or a group's
    /// over streamed points, whatever overlaps inside (the GPU's busy
    /// time; the parameters' first upload included).
    GpuLane,
    /// The H step on the GPU (the upload of a, b, c unless it went ahead,
    /// the NTTs).
    GpuH,
    /// The five MSMs on the GPU (with resident points: from the end of the
    /// H step to the end of the last MSM).
    GpuMsm,
    /// The MSMs with resident points, one per query, in wall time: H
    /// (dense, the domain's size), L (the aux values), A, B in G1 and B in
    /// G2 (inputs and density-masked aux values each). When the witness
    /// MSMs run beside the H side, L to B_G2 overlap GpuH and MsmH (and
    /// share the GPU with them), so the stages no longer add up.
    MsmH,
    MsmL,
    MsmA,
    MsmBG1,
    MsmBG2,
    /// The witness MSMs of a call's circuits proved together over streamed
    /// points (each chunk of points up once for all of them), once per
    /// group: per circuit, this divided by the group's size.
    SharedMsm,
    /// The H step on the CPU backend.
    CpuH,
    /// MSMs on the CPU (the CPU backend, or a GPU short of memory).
    CpuMsm,
    /// Assembling the proof with r and s.
    Assembly,
}

impl Stage {
    const COUNT: usize = 17;
    pub const ALL: [Stage; Stage::COUNT] = [
        Stage::CheckValues,
        Stage::ParamsUpload,
        Stage::AbcAhead,
        Stage::GpuProducts,
        Stage::LaneWait,
        Stage::GpuLane,
        Stage::GpuH,
        Stage::GpuMsm,
        Stage::MsmH,
        Stage::MsmL,
        Stage::MsmA,
        Stage::MsmBG1,
        Stage::MsmBG2,
        Stage::SharedMsm,
        Stage::CpuH,
        Stage::CpuMsm,
        Stage::Assembly,
    ];
}

pub static STATS: Stats = Stats {
    nanos: [const { AtomicU64::new(0) }; Stage::COUNT],
    circuits: AtomicU64::new(0),
};

impl Stats {
    pub fn add(&self, stage: Stage, time: Duration) {
        self.nanos[stage as usize].fetch_add(time.as_nanos() as u64, Ordering::Relaxed);
    }

    pub fn circuit_done(&self) {
        self.circuits.fetch_add(1, Ordering::Relaxed);
    }

    /// Seconds per stage and circuits proved since the last reset.
    pub fn snapshot(&self) -> (Vec<(Stage, f64)>, u64) {
        let times = Stage::ALL
            .iter()
            .map(|&s| (s, self.nanos[s as usize].load(Ordering::Relaxed) as f64 * 1e-9))
            .collect();
        (times, self.circuits.load(Ordering::Relaxed))
    }

    pub fn reset(&self) {
        for n in &self.nanos {
            n.store(0, Ordering::Relaxed);
        }
        self.circuits.store(0, Ordering::Relaxed);
    }
}

/// Runs `step`, timed as `stage` when it succeeds.
pub fn timed<T, E>(stage: Stage, step: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    let started = Instant::now();
    let done = step()?;
    STATS.add(stage, started.elapsed());
    Ok(done)
}
