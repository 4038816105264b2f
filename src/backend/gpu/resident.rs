//! The parameters' copies in GPU memory, one per parameter set and GPU,
//! keyed by the parameters' identity (`params::ParamsId`): each is made on
//! the first GPU proof there (or declined, and the MSM points stream) and
//! freed when the parameters are dropped (the parameters tell this module
//! through `params::on_release`; they hold nothing of the GPU's).

use super::{memory, DeviceParams};
use crate::config::Residency;
use crate::params::{self, Parameters};
use once_cell::sync::{Lazy, OnceCell};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// One parameter set's copies: per GPU, undecided, declined (`None`) or
/// made.
struct Copies {
    per_device: Vec<OnceCell<Option<Arc<DeviceParams>>>>,
}

/// Every parameter set's copies, by `ParamsId`.
static COPIES: Lazy<Mutex<HashMap<u64, Arc<Copies>>>> = Lazy::new(|| {
    params::on_release(release);
    Mutex::new(HashMap::new())
});

fn copies_map() -> MutexGuard<'static, HashMap<u64, Arc<Copies>>> {
    // A panic elsewhere cannot leave the map inconsistent.
    COPIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Drops the copies of the parameter set `id` (called as it is dropped);
/// device memory is freed once no circuit in flight still uses them.
fn release(id: u64) {
    let gone = copies_map().remove(&id);
    if let Some(copies) = gone {
        let bytes: usize = copies.per_device.iter().map(made_bytes).sum();
        if bytes > 0 {
            log::info!("parameters released: {} MiB of GPU copies freed", bytes >> 20);
        }
    }
}

fn made_bytes(cell: &OnceCell<Option<Arc<DeviceParams>>>) -> usize {
    cell.get().and_then(Option::as_ref).map_or(0, |d| d.bytes())
}

fn copies_of(params: &Parameters) -> Arc<Copies> {
    copies_map()
        .entry(params.id.get())
        .or_insert_with(|| {
            Arc::new(Copies {
                per_device: (0..super::device_count()).map(|_| OnceCell::new()).collect(),
            })
        })
        .clone()
}

/// `params`' copy on GPU `device` once the first proof there has made or
/// declined it (`Some(None)`: the points stay on the host); `None` before.
pub fn decided(params: &Parameters, device: usize) -> Option<Option<Arc<DeviceParams>>> {
    copies_of(params).per_device.get(device)?.get().cloned()
}

/// `params`' copy on GPU `device`, uploaded now if this is the first proof
/// there and the residency and the device budget allow it; `None` when the
/// points stay on the host. Call it inside the GPU's lane: the decision
/// reads the room the budget leaves, which a circuit's GPU stage would be
/// using.
pub fn get_or_upload(params: &Parameters, device: usize) -> Option<Arc<DeviceParams>> {
    let copies = copies_of(params);
    let cell = copies.per_device.get(device)?;
    cell.get_or_init(|| upload(params, device)).clone()
}

/// Whether `params`' points are resident on GPU `device`, or would be if
/// its first proof came now (`upload`'s decision, without the upload).
pub fn likely(params: &Parameters, device: usize) -> bool {
    match decided(params, device) {
        Some(copy) => copy.is_some(),
        None => would_stay(params, device).is_ok(),
    }
}

/// `Ok` when `params`' points go to GPU `device` under its residency and
/// the room in its budget; else why not.
fn would_stay(params: &Parameters, device: usize) -> std::result::Result<(), String> {
    let points = DeviceParams::bytes_for(params);
    // The points, and beside them one circuit's H side (its a, b, c
    // uploaded in the lane) and witness MSMs after it.
    let log_m = params.domain_size().trailing_zeros();
    let working = memory::h_side(device, log_m, false)
        .and_then(|h| Ok(h.max(memory::witness_side(device, params.l.len(), false)?)))
        .ok();
    let decision = params.residency.resolve();
    let fits = working.is_some_and(|w| memory::fits(device, points + w, "parameters resident"));
    if decision == Residency::Never || (decision == Residency::Auto && !fits) {
        return Err(format!(
            "{} MiB of points and {} MiB of work on GPU {device}, {} MiB of room, residency {decision:?}",
            points >> 20,
            working.unwrap_or(0) >> 20,
            memory::room(device) >> 20
        ));
    }
    Ok(())
}

fn upload(params: &Parameters, device: usize) -> Option<Arc<DeviceParams>> {
    if let Err(why) = would_stay(params, device) {
        log::info!("parameters stay on the host ({why}): MSM points stream to the GPU");
        return None;
    }
    let started = std::time::Instant::now();
    match DeviceParams::upload(params, device) {
        Ok(d) => {
            log::info!(
                "parameters on GPU {device}: {} MiB in {:.2} s",
                d.bytes() >> 20,
                started.elapsed().as_secs_f64()
            );
            Some(Arc::new(d))
        }
        Err(e) => {
            log::warn!("parameters could not go to GPU {device} ({e}): MSM points stream to the GPU");
            None
        }
    }
}

/// Device bytes of `params`' copies over all GPUs.
pub fn bytes(params: &Parameters) -> usize {
    let copies = copies_map().get(&params.id.get()).cloned();
    copies.map_or(0, |c| c.per_device.iter().map(made_bytes).sum())
}

/// Frees `params`' copies on every GPU and forgets the decisions, so that
/// the next GPU proof decides afresh (under a new device budget, say).
/// Circuits in flight keep the copies they hold until they end.
pub fn forget(params: &Parameters) {
    release(params.id.get());
}
