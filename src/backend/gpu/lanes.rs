//! Each GPU's lane and upload slot: one circuit's GPU stage at a time holds
//! the lane, and one circuit's a, b, c waiting for it hold the slot, so
//! device memory holds at most one working set per GPU beside the resident
//! parameters and one circuit's inputs going up ahead.

use crate::stats::{Stage, STATS};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// A GPU's lane, held until dropped; the time it was held counts as
/// `Stage::GpuLane` (the GPU's busy time, whatever overlaps inside).
pub struct Lane {
    _held: MutexGuard<'static, ()>,
    since: Instant,
}

impl Lane {
    fn new(held: MutexGuard<'static, ()>) -> Lane {
        Lane {
            _held: held,
            since: Instant::now(),
        }
    }
}

impl Drop for Lane {
    fn drop(&mut self) {
        STATS.add(Stage::GpuLane, self.since.elapsed());
    }
}

/// The lane of GPU `device`: held for one circuit's GPU stage.
pub fn gpu_lane(device: usize) -> Lane {
    Lane::new(lane(device).lock().unwrap_or_else(|e| e.into_inner()))
}

/// The lane of GPU `device` if no circuit holds it now.
pub fn try_gpu_lane(device: usize) -> Option<Lane> {
    match lane(device).try_lock() {
        Ok(guard) => Some(Lane::new(guard)),
        Err(std::sync::TryLockError::Poisoned(e)) => Some(Lane::new(e.into_inner())),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

fn lane(device: usize) -> &'static Mutex<()> {
    const LANES: usize = 64;
    static LANE: [Mutex<()>; LANES] = [const { Mutex::new(()) }; LANES];
    &LANE[device % LANES]
}

/// The upload slot of GPU `device`: held by a circuit from the upload of
/// its a, b, c ahead of its GPU stage until it holds the lane, so that GPU
/// memory holds at most one circuit's waiting a, b, c.
pub fn upload_slot(device: usize) -> MutexGuard<'static, ()> {
    const SLOTS: usize = 64;
    static SLOT: [Mutex<()>; SLOTS] = [const { Mutex::new(()) }; SLOTS];
    SLOT[device % SLOTS].lock().unwrap_or_else(|e| e.into_inner())
}

/// The largest domain (elements) proved on GPU `device` so far, after
/// counting `m`: the size of the work that may hold its lane, for the
/// headroom left beside a, b, c uploaded ahead.
pub fn largest_domain(device: usize, m: usize) -> usize {
    const GPUS: usize = 64;
    static LARGEST: [AtomicU64; GPUS] = [const { AtomicU64::new(0) }; GPUS];
    let before = LARGEST[device % GPUS].fetch_max(m as u64, Ordering::Relaxed);
    (before as usize).max(m)
}
