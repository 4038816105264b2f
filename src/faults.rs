//! Failures injected on purpose, for tests of recovery paths that a healthy
//! GPU rarely takes: the memory estimate sends a GPU short of memory down
//! the sequential path before the witness MSMs could run out of memory
//! beside the H side, so only an estimate that is wrong reaches the re-runs
//! after such a failure, and no test would. Each counter is the number of
//! failures still to inject; zero (the default) injects none. Set only
//! through `testkit::faults`; not part of the prover's interface.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The next H sides that run beside the witness MSMs fail as out of memory
/// once their work is done (their a, b, c and h consumed, as after a real
/// failure in H's MSM).
pub(crate) static H_BESIDE_OUT_OF_MEMORY: AtomicUsize = AtomicUsize::new(0);
/// The same for the witness MSMs run beside the H side (their aux values
/// on the GPU consumed).
pub(crate) static WITNESS_BESIDE_OUT_OF_MEMORY: AtomicUsize = AtomicUsize::new(0);
/// Sides run again alone after running out of memory beside the other
/// (injected or not), since the process started.
pub(crate) static BESIDE_RERUNS: AtomicUsize = AtomicUsize::new(0);

/// Whether to fail now: takes one from `counter` when it is not zero.
// Only the GPU backend injects: a build without CUDA never asks.
#[allow(dead_code)]
pub(crate) fn take(counter: &AtomicUsize) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}
