//! The parameters' copies in GPU memory, one per parameter set and GPU,
//! keyed by the parameters' identity (`params::ParamsId`): each is made on
//! the first GPU proof there (or declined, and the MSM points stream) and
//! freed when the parameters are dropped (the parameters tell this module
//! through `params::on_release`; they hold nothing of the GPU's). Where the
//! whole set is declined, some of its point vectors may stay (`kept`): those
//! that fit beside the streamed path's work, H's first; the rest are
//! page-locked in host memory while the parameters live (`pin_streamed`).

use super::{memory, upload_g1, upload_g2, DeviceParams, DevicePoints, PinnedHost};
use crate::config::Residency;
use crate::groth16::Query;
use crate::params::{self, Parameters};
use once_cell::sync::{Lazy, OnceCell};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// One parameter set's copies: per GPU, undecided, declined (`None`) or
/// made; where declined, the vectors kept (none, some or all of them); and
/// the host memory of the vectors that stream, page-locked once (`None`
/// until then).
struct Copies {
    per_device: Vec<OnceCell<Option<Arc<DeviceParams>>>>,
    kept: Vec<OnceCell<Arc<KeptPoints>>>,
    pinned: Mutex<Option<Arc<Pins>>>,
}

/// The page locks on a parameter set's streamed vectors, each with its
/// vector. Held by the set's `Copies` and by each streamed call (through
/// its `KeptPoints`), so that a set forgotten while a call uploads from
/// them is unlocked when that call ends; when the parameters are dropped
/// no call holds them, and they are unlocked before the vectors are freed.
struct Pins {
    locked: Mutex<Vec<(Query, PinnedHost)>>,
}

impl Pins {
    fn locked(&self) -> std::sync::MutexGuard<'_, Vec<(Query, PinnedHost)>> {
        self.locked.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bytes(&self) -> usize {
        self.locked().iter().map(|(_, pin)| pin.bytes()).sum()
    }

    /// Unlocks every vector whose lock no longer covers it as it is now
    /// (a caller replaced it through the public fields: its old memory
    /// must not be read as if locked), before the next upload from it.
    fn drop_stale(&self, params: &Parameters) {
        self.locked().retain(|(q, pin)| {
            let covers = pin.covers(params, *q);
            if !covers {
                log::warn!("{q:?}'s points were replaced since they were page-locked: unlocked, they stream through the staging buffers");
            }
            covers
        });
    }
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

/// Drops the copies of the parameter set `id` (called as it is dropped, or
/// by `forget`); device memory is freed, and its host memory unlocked, once
/// no circuit in flight still uses them: as the parameters are dropped
/// none does, so they are unlocked here, before the vectors are freed.
fn release(id: u64) {
    let gone = copies_map().remove(&id);
    if let Some(copies) = gone {
        // The locks go with the last holder: here, unless a call in
        // flight (after `forget`) still uploads from them.
        drop(copies.pinned.lock().unwrap_or_else(|e| e.into_inner()).take());
        let bytes: usize = copies.per_device.iter().map(made_bytes).sum::<usize>() + kept_bytes(&copies);
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
                kept: (0..super::device_count()).map(|_| OnceCell::new()).collect(),
                pinned: Mutex::new(None),
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
    let working = memory::h_side(device, log_m, Some(super::HostVectors::Three))
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
    copies.map_or(0, |c| {
        c.per_device.iter().map(made_bytes).sum::<usize>() + kept_bytes(&c)
    })
}

/// Host bytes of `params`' points page-locked for streaming (0 before its
/// first streamed proof, where they could not be locked, and after
/// `forget`).
pub fn pinned_bytes(params: &Parameters) -> usize {
    let copies = copies_map().get(&params.id.get()).cloned();
    copies.map_or(0, |c| {
        let pinned = c.pinned.lock().unwrap_or_else(|e| e.into_inner());
        pinned.as_ref().map_or(0, |pins| pins.bytes())
    })
}

fn kept_bytes(copies: &Copies) -> usize {
    copies
        .kept
        .iter()
        .filter_map(OnceCell::get)
        .map(|k| k.bytes())
        .sum()
}

/// The point vectors of a parameter set kept on a GPU whose whole set does
/// not stay there: MSMs read these where they are, and only the others
/// stream.
#[derive(Default)]
pub struct KeptPoints {
    h: Option<DevicePoints>,
    l: Option<DevicePoints>,
    a: Option<DevicePoints>,
    b_g1: Option<DevicePoints>,
    b_g2: Option<DevicePoints>,
    /// The locks on the vectors that stream, held while a call uses these.
    pins: Option<Arc<Pins>>,
}

impl KeptPoints {
    /// The copy of `query`'s points, if kept.
    pub fn of(&self, query: Query) -> Option<&DevicePoints> {
        match query {
            Query::H => self.h.as_ref(),
            Query::L => self.l.as_ref(),
            Query::A => self.a.as_ref(),
            Query::BG1 => self.b_g1.as_ref(),
            Query::BG2 => self.b_g2.as_ref(),
        }
        .filter(|p| !p.is_empty())
    }

    pub fn bytes(&self) -> usize {
        [&self.h, &self.l, &self.a, &self.b_g1, &self.b_g2]
            .iter()
            .filter_map(|p| p.as_ref())
            .map(DevicePoints::bytes)
            .sum()
    }

    fn slot(&mut self, query: Query) -> &mut Option<DevicePoints> {
        match query {
            Query::H => &mut self.h,
            Query::L => &mut self.l,
            Query::A => &mut self.a,
            Query::BG1 => &mut self.b_g1,
            Query::BG2 => &mut self.b_g2,
        }
    }
}

/// The vectors of `params` kept on GPU `device`, whose points stream
/// (`get_or_upload` declined them), decided on the first call there: those
/// that fit its room beside `work()` bytes (the streamed path's own, its
/// slack included), under residency `Auto`. Call it inside the GPU's lane.
pub fn kept(params: &Parameters, device: usize, work: impl FnOnce() -> usize) -> Arc<KeptPoints> {
    let copies = copies_of(params);
    let Some(cell) = copies.kept.get(device) else {
        return Arc::default();
    };
    let kept = cell
        .get_or_init(|| {
            let mut kept = if params.residency.resolve() == Residency::Auto {
                let room = memory::room(device).saturating_sub(work());
                let sizes = QUERIES.map(|q| (q, vector_bytes(params, q)));
                upload_kept(params, device, &choose_kept(&sizes, room))
            } else {
                KeptPoints::default()
            };
            kept.pins = Some(pin_streamed(params, &copies, &kept, device));
            Arc::new(kept)
        })
        .clone();
    if let Some(pins) = &kept.pins {
        pins.drop_stale(params);
    }
    kept
}

/// The five point vectors, in the order they are kept.
const QUERIES: [Query; 5] = [Query::H, Query::L, Query::A, Query::BG1, Query::BG2];

/// Page-locks `params`' point vectors that stream on GPU `device` (those
/// `kept` does not hold), once per parameter set (from the first GPU that
/// streams), so that their chunks go up by DMA straight from them instead
/// of through the staging copy. The pages are the parameters' own: locking
/// takes no more memory, but keeps them in RAM until the parameters are
/// dropped. A vector that cannot be locked streams through the staging
/// buffers, as before.
fn pin_streamed(params: &Parameters, copies: &Copies, kept: &KeptPoints, device: usize) -> Arc<Pins> {
    let mut pinned = copies.pinned.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(pins) = pinned.as_ref() {
        return pins.clone();
    }
    let started = std::time::Instant::now();
    let mut locked = Vec::new();
    for q in QUERIES.into_iter().filter(|&q| kept.of(q).is_none()) {
        if vector_bytes(params, q) == 0 {
            continue;
        }
        match PinnedHost::points(params, q, device) {
            Ok(pin) => locked.push((q, pin)),
            Err(e) => log::warn!(
                "{q:?}'s points could not be page-locked ({e}): they stream through the staging buffers"
            ),
        }
    }
    let pins = Arc::new(Pins {
        locked: Mutex::new(locked),
    });
    let bytes = pins.bytes();
    if bytes > 0 {
        log::info!(
            "streamed points page-locked in host memory: {} MiB in {:.2} s",
            bytes >> 20,
            started.elapsed().as_secs_f64()
        );
    }
    *pinned = Some(pins.clone());
    pins
}

/// Keeps `chosen` of `params`' vectors on GPU `device` for its streamed
/// calls from now on, whatever the room (unless decided already: `false`).
/// For tests: at the sizes they run, a GPU that can keep H can keep
/// everything, and the whole set stays.
#[doc(hidden)]
pub fn keep(params: &Parameters, device: usize, chosen: &[Query]) -> bool {
    let copies = copies_of(params);
    let Some(cell) = copies.kept.get(device) else {
        return false;
    };
    if cell.get().is_some() {
        return false;
    }
    let mut kept = upload_kept(params, device, chosen);
    kept.pins = Some(pin_streamed(params, &copies, &kept, device));
    cell.set(Arc::new(kept)).is_ok()
}

/// Device bytes of `query`'s points in `params`.
fn vector_bytes(params: &Parameters, query: Query) -> usize {
    match query {
        Query::BG2 => 192 * params.b_g2.len(),
        _ => 96 * query.g1_points(params).len(),
    }
}

/// The vectors to keep within `room` bytes, of `sizes`: H first (with
/// streamed points its chunks go up once per batch of circuits, the
/// others' once per call), then the largest of the others that fit, in
/// turn.
fn choose_kept(sizes: &[(Query, usize)], room: usize) -> Vec<Query> {
    let mut order: Vec<(Query, usize)> = sizes.iter().copied().filter(|&(_, bytes)| bytes > 0).collect();
    order.sort_by_key(|&(q, bytes)| (q != Query::H, std::cmp::Reverse(bytes)));
    let mut left = room;
    let mut chosen = Vec::new();
    for (q, bytes) in order {
        if bytes <= left {
            left -= bytes;
            chosen.push(q);
        }
    }
    chosen
}

/// `chosen`'s copies on GPU `device`, as many as go up (one that fails is
/// logged, and it and the rest stream).
fn upload_kept(params: &Parameters, device: usize, chosen: &[Query]) -> KeptPoints {
    let started = std::time::Instant::now();
    let mut kept = KeptPoints::default();
    let mut made = Vec::new();
    for &q in chosen {
        let copy = match q {
            Query::BG2 => upload_g2(device, &params.b_g2),
            _ => upload_g1(device, q.g1_points(params)),
        };
        match copy {
            Ok(points) => {
                *kept.slot(q) = Some(points);
                made.push(q);
            }
            Err(e) => {
                log::warn!("{q:?}'s points could not stay on GPU {device} ({e}): they and the rest stream");
                break;
            }
        }
    }
    if kept.bytes() > 0 {
        log::info!(
            "parameters partly on GPU {device}: {:?}, {} MiB in {:.2} s; the other points stream",
            made,
            kept.bytes() >> 20,
            started.elapsed().as_secs_f64()
        );
    }
    kept
}

/// Frees `params`' copies on every GPU and forgets the decisions, so that
/// the next GPU proof decides afresh (under a new device budget, say).
/// Circuits in flight keep the copies they hold until they end.
pub fn forget(params: &Parameters) {
    release(params.id.get());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h_is_kept_first_then_the_largest_that_fit() {
        let sizes = [
            (Query::H, 40),
            (Query::L, 39),
            (Query::A, 20),
            (Query::BG1, 20),
            (Query::BG2, 41),
        ];
        assert_eq!(
            choose_kept(&sizes, 39),
            vec![Query::L],
            "H does not fit; the largest other that does"
        );
        assert_eq!(choose_kept(&sizes, 40), vec![Query::H]);
        assert_eq!(choose_kept(&sizes, 85), vec![Query::H, Query::BG2]);
        assert_eq!(
            choose_kept(&sizes, 100),
            vec![Query::H, Query::BG2],
            "then neither 39 nor 20 fits 19"
        );
        assert_eq!(choose_kept(&sizes, 101), vec![Query::H, Query::BG2, Query::A]);
        assert_eq!(
            choose_kept(&sizes, 160),
            vec![Query::H, Query::BG2, Query::L, Query::A, Query::BG1]
        );
        let empty_h = [(Query::H, 0), (Query::L, 10)];
        assert_eq!(
            choose_kept(&empty_h, 10),
            vec![Query::L],
            "an empty vector is never kept"
        );
    }
}
