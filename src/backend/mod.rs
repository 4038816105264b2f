//! The backends that compute a circuit's H and five MSMs: the CPU's, always
//! built, and the GPUs', with the `cuda` feature. One interface for both
//! (`sums`, and the device queries below), and the one module that knows
//! whether CUDA is built in: without it no GPU is ever found, so callers ask
//! the same questions either way and get the CPU.

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod gpu;

use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{Assignment, QuerySums};
use crate::math::domain::Domain;
use crate::params::Parameters;
use std::sync::atomic::{AtomicBool, Ordering};

/// Where a circuit's H step and MSMs run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Cpu,
    /// The GPU of this index.
    Gpu(usize),
}

/// What every circuit of one call shares.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    pub params: &'a Parameters,
    pub domain: &'a Domain,
    pub cancelled: &'a AtomicBool,
    /// Whether the witness values are known to be below the modulus.
    pub values_checked: bool,
}

impl Call<'_> {
    /// `Cancelled` once the call's job was cancelled (looked at between
    /// circuits and between proving stages).
    pub fn check_cancelled(&self) -> Result<()> {
        check_cancelled(self.cancelled)
    }
}

/// `Cancelled` once `cancelled` is set.
pub fn check_cancelled(cancelled: &AtomicBool) -> Result<()> {
    if cancelled.load(Ordering::Relaxed) {
        Err(Error::new(ErrorKind::Cancelled, "the job was cancelled"))
    } else {
        Ok(())
    }
}

/// Circuit `index`'s five sums (its H step included) on `backend`.
pub fn sums(backend: Backend, call: &Call, index: usize, w: &Assignment) -> Result<QuerySums> {
    match backend {
        Backend::Cpu => cpu::sums(call, index, w),
        Backend::Gpu(device) => gpu_sums(call, index, w, device),
    }
}

/// The sums of several circuits of one call on `backend` (index in the
/// call, assignment), proved together where that saves work: on a GPU
/// whose points stream, each chunk of points goes up once for all of them
/// (H's once per batch of circuits whose h fit on the GPU together).
pub fn sums_of_group(
    backend: Backend,
    call: &Call,
    circuits: &[(usize, &Assignment)],
) -> Result<Vec<QuerySums>> {
    match backend {
        Backend::Cpu => circuits.iter().map(|&(i, w)| cpu::sums(call, i, w)).collect(),
        Backend::Gpu(device) if points_stream(call.params, device) => gpu_group_sums(call, circuits, device),
        Backend::Gpu(device) => circuits
            .iter()
            .map(|&(i, w)| gpu_sums(call, i, w, device))
            .collect(),
    }
}

/// A GPU's device budget, the bytes of the library's allocations there now,
/// and their peak since it was last reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceMemory {
    pub budget: usize,
    pub in_use: usize,
    pub peak: usize,
}

#[cfg(feature = "cuda")]
mod present {
    //! The answers of a build with the GPU backend.
    use super::*;

    pub fn gpu_sums(call: &Call, index: usize, w: &Assignment, device: usize) -> Result<QuerySums> {
        gpu::stage::sums(call, index, w, device)
    }

    pub fn gpu_group_sums(
        call: &Call,
        circuits: &[(usize, &Assignment)],
        device: usize,
    ) -> Result<Vec<QuerySums>> {
        gpu::group::sums(call, circuits, device)
    }

    pub fn points_stream(params: &Parameters, device: usize) -> bool {
        gpu::stage::resident_copy(params, device).is_none()
    }

    pub fn points_likely_resident(params: &Parameters, device: usize) -> bool {
        gpu::resident::likely(params, device)
    }

    pub fn device_count() -> usize {
        gpu::device_count()
    }

    pub fn gpus_take(log_m: u32) -> bool {
        gpu::available() && gpu::handles_domain(log_m)
    }

    pub fn check_budget(device: usize, log_m: u32) -> Result<()> {
        gpu::memory::check_budget(device, log_m)
    }

    pub fn device_memory(device: usize) -> Result<DeviceMemory> {
        gpu::device_memory(device)
    }

    pub fn set_device_budget(devices: &[usize], bytes: usize) -> Result<()> {
        gpu::memory::set_budget(devices, bytes)
    }

    pub fn reset_device_peak(device: usize) -> Result<()> {
        gpu::reset_device_peak(device)
    }

    pub fn device_free(device: usize) -> Option<usize> {
        let free = gpu::driver_free_memory(device).ok()?;
        Some(free.saturating_sub(gpu::pool_idle_memory(device).unwrap_or(0)))
    }

    pub fn resident_bytes(params: &Parameters) -> usize {
        gpu::resident::bytes(params)
    }

    pub fn forget_gpu_copies(params: &Parameters) {
        gpu::resident::forget(params)
    }
}

#[cfg(not(feature = "cuda"))]
mod present {
    //! The answers of a build without CUDA: no GPU.
    use super::*;

    fn no_cuda() -> Error {
        Error::new(
            ErrorKind::Unsupported,
            "this build of c2prover has no CUDA backend (feature `cuda`)",
        )
    }

    pub fn gpu_sums(_: &Call, _: usize, _: &Assignment, _: usize) -> Result<QuerySums> {
        Err(no_cuda())
    }

    pub fn gpu_group_sums(_: &Call, _: &[(usize, &Assignment)], _: usize) -> Result<Vec<QuerySums>> {
        Err(no_cuda())
    }

    pub fn points_stream(_params: &Parameters, _device: usize) -> bool {
        false
    }

    pub fn points_likely_resident(_params: &Parameters, _device: usize) -> bool {
        false
    }

    pub fn device_count() -> usize {
        0
    }

    pub fn gpus_take(_log_m: u32) -> bool {
        false
    }

    pub fn check_budget(_device: usize, _log_m: u32) -> Result<()> {
        Ok(())
    }

    pub fn device_memory(_device: usize) -> Result<DeviceMemory> {
        Err(no_cuda())
    }

    pub fn set_device_budget(_devices: &[usize], _bytes: usize) -> Result<()> {
        Ok(())
    }

    pub fn reset_device_peak(_device: usize) -> Result<()> {
        Err(no_cuda())
    }

    pub fn device_free(_device: usize) -> Option<usize> {
        None
    }

    pub fn resident_bytes(_params: &Parameters) -> usize {
        0
    }

    pub fn forget_gpu_copies(_params: &Parameters) {}
}

use present::{gpu_group_sums, gpu_sums};

/// Whether GPU `device` proves with `params`' points streamed from host
/// memory (not resident there): decided, and the points uploaded when they
/// stay, on the first call that asks (never without CUDA).
pub use present::points_stream;

/// Whether GPU `device` holds `params`' points, or would if its first proof
/// came now (the same decision as `points_stream`'s, uploading nothing;
/// never without CUDA).
pub use present::points_likely_resident;

/// CUDA devices this build can use (none without the `cuda` feature).
pub use present::device_count;

/// Whether the GPUs take a domain of 2^log_m (never without CUDA).
pub use present::gpus_take;

/// Fails with `OutOfMemory` before any work when GPU `device`'s budget is
/// below the smallest plan for 2^log_m, saying how much it needs.
pub use present::check_budget;

/// GPU `device`'s budget, use and peak.
pub use present::device_memory;

/// Sets the device budget of the GPUs `devices` (0: the default); nothing
/// to set without CUDA.
pub use present::set_device_budget;

/// Resets GPU `device`'s peak to what is in use now.
pub use present::reset_device_peak;

/// GPU `device`'s free memory as the driver reports it, less what the
/// library's pool holds idle (held by this process all the same; `None`
/// without a GPU).
pub use present::device_free;

/// Device bytes of `params`' resident copies over all GPUs (0 before the
/// first GPU proof, on the CPU, and after the parameters are dropped).
pub use present::resident_bytes;

/// Frees `params`' copies on every GPU and forgets whether they stay there,
/// so that the next GPU proof decides afresh (after a new device budget);
/// circuits in flight keep what they hold until they end. Nothing without
/// CUDA.
pub use present::forget_gpu_copies;
