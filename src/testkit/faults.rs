//! Fault injection for tests of the GPU's recovery paths (see the crate's
//! `faults` module): the next `n` H sides or witness MSMs run beside each
//! other fail as out of memory.

use crate::faults;
use std::sync::atomic::Ordering;

/// Makes the next `h_side` H sides and `witness` witness-MSM runs beside
/// each other fail as out of memory; returns the counts that were still
/// pending before.
pub fn fail_beside(h_side: usize, witness: usize) -> (usize, usize) {
    (
        faults::H_BESIDE_OUT_OF_MEMORY.swap(h_side, Ordering::SeqCst),
        faults::WITNESS_BESIDE_OUT_OF_MEMORY.swap(witness, Ordering::SeqCst),
    )
}

/// Sides run again alone after running out of memory beside the other,
/// since the process started.
pub fn beside_reruns() -> usize {
    faults::BESIDE_RERUNS.load(Ordering::SeqCst)
}
