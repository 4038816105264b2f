//! The device memory model: each GPU's budget, and what each GPU stage of a
//! proof allocates, so that the prover's choices fit the budget.
//!
//! Every device allocation the library makes is charged to its GPU's budget
//! on the CUDA side (`cuda/api/memory.cuh`): one that would pass it fails as
//! out of memory. The budget defaults to the device's memory less
//! max(1 GiB, 1/32 of it); `C2P_DEVICE_BUDGET`, the options' `device_budget`
//! and [`set_budget`] change it. The sizes here come from the CUDA side's own
//! queries (`h_step_bytes`, `msm_bytes`: the arithmetic its buffers are sized
//! with), and the choices (resident or streamed points, witness MSMs beside
//! H, the next circuit's inputs ahead, streamed chunk sizes) compare them with
//! [`room`]: what the budget and the device still let the library allocate.

use super::{Curve, DeviceMemory, HostVectors, ScalarsAt};
use crate::error::{Error, ErrorKind, Result};

/// Kept free beyond every plan: for the few small allocations no query
/// counts (an MSM's inputs, one-point results) and the pool's fragmentation.
pub const SLACK: usize = 256 << 20;

/// Bytes of one scalar (Fr).
const FR: usize = 32;

/// The smallest chunk of points a streamed MSM uploads at once.
pub const MIN_STREAM_CHUNK: usize = 1 << 16;

/// Sets the budget of the GPUs in `devices` (0: the default).
pub fn set_budget(devices: &[usize], bytes: usize) -> Result<()> {
    for &d in devices {
        super::set_device_budget(d, bytes)?;
        log::info!(
            "GPU {d}: device budget {} MiB",
            super::device_memory(d)?.budget >> 20
        );
    }
    Ok(())
}

/// GPU `device`'s budget, use and peak.
pub fn of(device: usize) -> Result<DeviceMemory> {
    super::device_memory(device)
}

/// What the library may still allocate on GPU `device` now: the room in its
/// budget, within the device's free memory (0 when it cannot say).
pub fn room(device: usize) -> usize {
    super::free_memory(device).unwrap_or(0)
}

/// New device bytes of one circuit's H side on GPU `device`: the H step
/// (a, b and c in `vectors` unless they went up ahead, the coset tables, a
/// first twiddle table), then H's MSM over h on the device (h is b's
/// buffer; the others are freed before it).
pub fn h_side(device: usize, log_m: u32, vectors: Option<HostVectors>) -> Result<usize> {
    let m = 1usize << log_m;
    let step = super::h_step_bytes(device, log_m, vectors)?;
    let h = if vectors.is_none() { 0 } else { FR * m };
    let msm = h + super::msm_bytes(device, Curve::G1, m - 1, ScalarsAt::DeviceConsumed, false)?;
    Ok(step.max(msm))
}

/// New device bytes of one circuit's witness MSMs (L, A, B_G1, B_G2, one
/// after another) over `n_aux` aux values: their copy unless it went up
/// ahead, and the largest of the MSMs.
pub fn witness_side(device: usize, n_aux: usize, aux_on_device: bool) -> Result<usize> {
    let shared = ScalarsAt::DeviceShared;
    let largest = [
        super::msm_bytes(device, Curve::G1, n_aux, shared, false)?,
        super::msm_bytes(device, Curve::G1, n_aux, shared, true)?,
        super::msm_bytes(device, Curve::G2, n_aux, shared, true)?,
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    Ok(if aux_on_device { 0 } else { FR * n_aux } + largest)
}

/// Device bytes of a circuit's a, b, c (padded to the domain) and aux
/// values uploaded ahead of its GPU stage.
pub fn ahead(log_m: u32, n_aux: usize) -> usize {
    3 * FR * (1usize << log_m) + FR * n_aux
}

/// Whether `need` bytes fit in GPU `device`'s room with the slack to spare;
/// logged at trace level with `what` the plan asks for.
pub fn fits(device: usize, need: usize, what: &str) -> bool {
    let room = room(device);
    log::trace!(
        "GPU {device}: {what}: {} MiB wanted, {} MiB of room",
        (need + SLACK) >> 20,
        room >> 20
    );
    need + SLACK <= room
}

/// Scalars per chunk of a streamed MSM of `n` scalars over points of
/// `point_bytes` on GPU `device` (with a `density`, a chunk's scalars meet
/// at most as many points): the largest of n, n/2, n/4, .. (at least
/// MIN_STREAM_CHUNK) whose two chunks of points (one in use, the next going
/// up) and one chunk's MSM fit the room.
pub fn stream_chunk(device: usize, curve: Curve, n: usize, point_bytes: usize, density: bool) -> usize {
    largest_chunk(device, n, |chunk| {
        let msm = super::msm_bytes(device, curve, chunk, ScalarsAt::Host, density).unwrap_or(usize::MAX);
        (2 * chunk * point_bytes).saturating_add(msm)
    })
}

/// The largest of n, n/2, n/4, .. (at least MIN_STREAM_CHUNK) whose device
/// bytes, `bytes(chunk)`, fit GPU `device`'s room with the slack to spare.
pub fn largest_chunk(device: usize, n: usize, bytes: impl Fn(usize) -> usize) -> usize {
    let room = room(device).saturating_sub(SLACK);
    let mut chunk = n.max(1);
    while chunk > MIN_STREAM_CHUNK && bytes(chunk) > room {
        chunk = chunk.div_ceil(2);
    }
    chunk
}

/// The least device memory any plan for a domain of 2^log_m needs on GPU
/// `device`: the H side with everything uploaded in the lane (in two
/// vectors, as the streamed path does), or the witness MSMs over the
/// smallest chunks (two chunks of the four aux terms' points, a chunk of
/// aux values and the four MSMs' working sets, as they run at once),
/// whichever is larger, and the slack.
pub fn smallest_plan(device: usize, log_m: u32) -> Result<usize> {
    let chunk = MIN_STREAM_CHUNK;
    let shared = ScalarsAt::DeviceShared;
    // L without a density; A and B_G1 in G1 and B_G2 in G2 with one.
    let msms = super::msm_bytes(device, Curve::G1, chunk, shared, false)?
        + 2 * super::msm_bytes(device, Curve::G1, chunk, shared, true)?
        + super::msm_bytes(device, Curve::G2, chunk, shared, true)?;
    let witness = 2 * chunk * (3 * 96 + 192) + FR * chunk + msms;
    Ok(h_side(device, log_m, Some(HostVectors::Two))?.max(witness) + SLACK)
}

/// Fails with `OutOfMemory` before any work when GPU `device`'s budget is
/// below the smallest plan for 2^log_m, saying how much it needs.
pub fn check_budget(device: usize, log_m: u32) -> Result<()> {
    let need = smallest_plan(device, log_m)?;
    let budget = of(device)?.budget;
    if need > budget {
        return Err(Error::new(
            ErrorKind::OutOfMemory,
            format!(
                "GPU {device}: a circuit of 2^{log_m} constraints needs a device budget of at least {} MiB; \
                 the budget is {} MiB (set C2P_DEVICE_BUDGET or the options' device_budget higher, or prove on \
                 the CPU)",
                need.div_ceil(1 << 20),
                budget >> 20
            ),
        ));
    }
    Ok(())
}
