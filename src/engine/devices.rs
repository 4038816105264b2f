//! Which GPUs a job may use, and the turn of jobs whose circuits do not
//! spread over them.

use crate::backend;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// The GPUs a job may use: bit d for GPU d; 0 means all of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceMask(pub u64);

impl DeviceMask {
    pub const ALL: DeviceMask = DeviceMask(0);

    /// Only GPU `index` (supraseal's `gpu_index`); a negative index is any.
    pub fn only(index: i64) -> Result<DeviceMask> {
        match u32::try_from(index) {
            Ok(i) if i < 64 => Ok(DeviceMask(1 << i)),
            Ok(i) => Err(Error::invalid(format!("GPU index {i} is out of range"))),
            Err(_) => Ok(DeviceMask::ALL),
        }
    }

    /// The present GPUs this mask allows, in order. An error when GPUs are
    /// present and the mask names none of them.
    pub fn devices(self) -> Result<Vec<usize>> {
        let present = backend::device_count().min(64);
        let chosen: Vec<usize> = (0..present)
            .filter(|&d| self.0 == 0 || (self.0 >> d) & 1 == 1)
            .collect();
        if chosen.is_empty() && present > 0 {
            return Err(Error::invalid(format!(
                "the device mask {:#x} selects none of this machine's {present} GPU(s)",
                self.0
            )));
        }
        Ok(chosen)
    }
}

/// The GPU for a job's circuits when they do not spread: the allowed GPUs
/// in turn, so jobs in flight share them out (0 when none is allowed: the
/// CPU backend ignores it).
pub fn next_device(allowed: &[usize]) -> usize {
    static TURN: AtomicU64 = AtomicU64::new(0);
    if allowed.is_empty() {
        return 0;
    }
    allowed[(TURN.fetch_add(1, Ordering::Relaxed) % allowed.len() as u64) as usize]
}
