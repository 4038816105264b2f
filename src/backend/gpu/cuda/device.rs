//! Device discovery, the budget and memory queries, and test reservations.
use super::sys::*;
use super::HostVectors;
use crate::backend::gpu::{Curve, DeviceMemory, ScalarsAt};
use crate::error::Result;
use once_cell::sync::Lazy;
use std::ffi::{c_int, c_void, CStr};

/// A CUDA device, as found at first use.
#[derive(Clone, Debug)]
pub struct Device {
    pub index: usize,
    pub name: String,
    pub total_bytes: usize,
    pub compute_capability: (i32, i32),
}

static DEVICES: Lazy<Vec<Device>> = Lazy::new(|| match discover() {
    Ok(devices) => {
        for d in &devices {
            log::info!(
                "GPU {}: {} ({} GiB, sm_{}{})",
                d.index,
                d.name,
                d.total_bytes >> 30,
                d.compute_capability.0,
                d.compute_capability.1
            );
        }
        if devices.is_empty() {
            log::info!("no CUDA device found: proving on the CPU");
        }
        devices
    }
    Err(e) => {
        log::warn!("CUDA unusable ({e}): proving on the CPU");
        Vec::new()
    }
});

/// Name, free and total memory, and compute capability of a device.
fn device_info(device: c_int) -> Result<(String, usize, usize, (i32, i32))> {
    let mut name = [0u8; 256];
    let (mut free, mut total, mut major, mut minor) = (0usize, 0usize, 0, 0);
    // SAFETY: every output is a valid location; `name` has the stated length.
    let status = unsafe {
        c2p_cuda_device_info(
            device,
            name.as_mut_ptr().cast(),
            name.len(),
            &mut free,
            &mut total,
            &mut major,
            &mut minor,
        )
    };
    check(status, "querying a CUDA device")?;
    let name = CStr::from_bytes_until_nul(&name)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((name, free, total, (major, minor)))
}

/// Hands the configuration's GPU tuning to the CUDA side (once; before any
/// other CUDA call of this process).
pub(super) fn configure() -> Result<()> {
    static DONE: once_cell::sync::OnceCell<()> = once_cell::sync::OnceCell::new();
    DONE.get_or_try_init(|| {
        let tuning = crate::config::get()?.gpu;
        // SAFETY: `tuning` is a live c2p_tuning (same layout), copied by the call.
        check(
            unsafe { c2p_cuda_configure(&tuning) },
            "configuring the CUDA backend",
        )
    })
    .map(|_| ())
}

fn discover() -> Result<Vec<Device>> {
    configure()?;
    let mut count: c_int = 0;
    // SAFETY: `count` is a valid output location.
    check(
        unsafe { c2p_cuda_device_count(&mut count) },
        "listing CUDA devices",
    )?;
    let devices = (0..count)
        .map(|i| {
            let (name, _, total_bytes, compute_capability) = device_info(i)?;
            Ok(Device {
                index: i as usize,
                name,
                total_bytes,
                compute_capability,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if let Some(bytes) = crate::config::get()?.device_budget {
        for d in &devices {
            set_device_budget(d.index, bytes)?;
        }
    }
    Ok(devices)
}

/// What the library may still allocate on GPU `device` now, in bytes: the
/// room left in its device budget, within the driver's free memory and
/// what the memory pool keeps idle between MSMs (an allocation that finds
/// the driver short takes that back first).
pub fn free_memory(device: usize) -> Result<usize> {
    let free = driver_free_memory(device)?;
    let memory = device_memory(device)?;
    Ok(free.min(memory.budget.saturating_sub(memory.in_use)))
}

/// Free memory on GPU `device` as the driver reports it, with what the
/// memory pool keeps idle, whatever the budget says.
pub fn driver_free_memory(device: usize) -> Result<usize> {
    Ok(device_info(device as c_int)?.1)
}

/// Bytes GPU `device`'s memory pool keeps idle for the next MSM: part of
/// `free_memory`, but held by this process as the driver counts it.
pub fn pool_idle_memory(device: usize) -> Result<usize> {
    let mut idle = 0usize;
    // SAFETY: `idle` is a valid location; the function checks the device.
    let status = unsafe { c2p_cuda_pool_idle(device as c_int, &mut idle) };
    check(status, "querying the device memory pool")?;
    Ok(idle)
}

/// GPU `device`'s budget, what the library holds there now, and the peak.
pub fn device_memory(device: usize) -> Result<DeviceMemory> {
    let (mut budget, mut in_use, mut peak) = (0usize, 0usize, 0usize);
    // SAFETY: the outputs are valid locations; the function checks the device.
    let status = unsafe { c2p_cuda_device_memory(device as c_int, &mut budget, &mut in_use, &mut peak) };
    check(status, "querying the device budget")?;
    Ok(DeviceMemory { budget, in_use, peak })
}

/// Sets GPU `device`'s budget (0: the default).
pub fn set_device_budget(device: usize, bytes: usize) -> Result<()> {
    // SAFETY: plain call on a device index the function checks.
    check(
        unsafe { c2p_cuda_set_device_budget(device as c_int, bytes) },
        "setting the device budget",
    )
}

/// Restarts GPU `device`'s peak from what the library holds now.
pub fn reset_device_peak(device: usize) -> Result<()> {
    // SAFETY: plain call on a device index the function checks.
    check(
        unsafe { c2p_cuda_reset_peak(device as c_int) },
        "resetting the device memory peak",
    )
}

/// Device bytes an H step of 2^log_m allocates on GPU `device`: a, b, c
/// uploaded into `vectors` (none when they went up ahead), and its twiddle
/// table only while the device has none of that size.
pub fn h_step_bytes(device: usize, log_m: u32, vectors: Option<HostVectors>) -> Result<usize> {
    let mut bytes = 0usize;
    let vectors = vectors.map_or(0, |v| v as c_int);
    // SAFETY: `bytes` is a valid location; the function checks its arguments.
    let status = unsafe { c2p_cuda_h_bytes(device as c_int, log_m as c_int, vectors, &mut bytes) };
    check(status, "querying the H step's device memory")?;
    Ok(bytes)
}

/// Device bytes an MSM of `n` scalars allocates on GPU `device` at most.
pub fn msm_bytes(device: usize, curve: Curve, n: usize, at: ScalarsAt, density: bool) -> Result<usize> {
    let mut bytes = 0usize;
    // SAFETY: `bytes` is a valid location; the function checks its arguments.
    let status = unsafe { c2p_cuda_msm_bytes(device as c_int, curve, n, at, density as c_int, &mut bytes) };
    check(status, "querying an MSM's device memory")?;
    Ok(bytes)
}

/// Waits for GPU `device`'s work, then returns the memory its stream-ordered
/// pool keeps between MSMs (up to `C2P_POOL_KEEP_MIB`) to the driver, so that
/// `free_memory` counts it as free: for tests that fill the device.
pub fn trim_memory_pool(device: usize) -> Result<()> {
    // SAFETY: plain call on a device index the function checks.
    let status = unsafe { c2p_cuda_trim_pool(device as c_int) };
    check(status, "trimming the device memory pool")
}

/// Device memory held until dropped (see `reserve_device_memory`).
pub struct DeviceReservation {
    device: c_int,
    ptr: *mut c_void,
}

impl Drop for DeviceReservation {
    fn drop(&mut self) {
        // SAFETY: ptr came from c2p_cuda_reserve on this device and is freed
        // once, here.
        let status = unsafe { c2p_cuda_release(self.device, self.ptr) };
        if status != 0 {
            log::warn!("releasing reserved device memory failed (CUDA error {status})");
        }
    }
}

/// Takes `bytes` of device memory on `device` until the result is dropped:
/// for tests that run the GPU steps with the device (nearly) full.
pub fn reserve_device_memory(device: usize, bytes: usize) -> Result<DeviceReservation> {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: ptr is a valid out-pointer for the call.
    let status = unsafe { c2p_cuda_reserve(device as c_int, bytes, &mut ptr) };
    check(status, "reserving device memory")?;
    Ok(DeviceReservation {
        device: device as c_int,
        ptr,
    })
}

/// Device memory outside the library's pool and budget, each 32-bit word
/// `pattern ^ index`, freed when dropped (see `canary`).
pub struct Canary {
    device: c_int,
    ptr: *mut c_void,
    bytes: usize,
    pattern: u32,
}

impl Canary {
    /// The words no longer as they were filled.
    pub fn changed(&self) -> Result<u64> {
        let mut changed = 0u64;
        // SAFETY: ptr is this canary's live allocation of `bytes` on its
        // device; changed is a valid out-pointer.
        let status =
            unsafe { c2p_cuda_canary_changed(self.device, self.ptr, self.bytes, self.pattern, &mut changed) };
        check(status, "checking a canary")?;
        Ok(changed)
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        // SAFETY: ptr came from c2p_cuda_canary on this device and is freed
        // once, here.
        let status = unsafe { c2p_cuda_release(self.device, self.ptr) };
        if status != 0 {
            log::warn!("releasing a canary failed (CUDA error {status})");
        }
    }
}

/// A canary of `bytes` (a multiple of 4) on GPU `device`, taken after the
/// library's pool has handed its idle memory to the driver (without waiting
/// for the device's work): for tests that the library never writes memory
/// it has freed, which the canary may now hold.
pub fn canary(device: usize, bytes: usize, pattern: u32) -> Result<Canary> {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: ptr is a valid out-pointer for the call.
    let status = unsafe { c2p_cuda_canary(device as c_int, bytes, pattern, &mut ptr) };
    check(status, "making a canary")?;
    Ok(Canary {
        device: device as c_int,
        ptr,
        bytes,
        pattern,
    })
}

/// Starts (forgetting what was recorded) or stops recording the sites at
/// which the library allocates device memory: for the tests that a failure
/// at each of them comes back as an error (see `fail_allocation`).
pub fn record_allocation_sites(on: bool) {
    // SAFETY: plain call; the function only sets host state.
    let status = unsafe { c2p_cuda_record_allocation_sites(on as c_int) };
    debug_assert_eq!(status, 0, "recording sites cannot fail");
}

/// The allocation sites recorded ("file:line"), first seen first.
pub fn allocation_sites() -> Vec<String> {
    let mut needed = 0usize;
    // SAFETY: a zero-length buffer is never written; needed is valid.
    unsafe { c2p_cuda_allocation_sites(std::ptr::null_mut(), 0, &mut needed) };
    let mut buf = Vec::new();
    // The list may grow between the calls (recording goes on): until it fits.
    while needed > buf.len() {
        buf = vec![0u8; needed.max(1)];
        // SAFETY: buf holds `buf.len()` writable bytes; the function writes
        // a NUL-terminated string within them.
        unsafe { c2p_cuda_allocation_sites(buf.as_mut_ptr().cast(), buf.len(), &mut needed) };
    }
    let text =
        CStr::from_bytes_until_nul(&buf).map_or_else(|_| String::new(), |s| s.to_string_lossy().into_owned());
    text.lines().map(str::to_owned).collect()
}

/// After `skip` device allocations at `site` (as recorded) go through,
/// makes the next `count` fail as out of memory; returns the failures the
/// previous call asked for that were not injected (`count` 0 disarms and
/// tells). A site holding a NUL (never one recorded) is an error.
pub fn fail_allocation(site: &str, skip: usize, count: usize) -> Result<usize> {
    let site = std::ffi::CString::new(site)
        .map_err(|_| crate::error::Error::invalid("an allocation site with a NUL byte"))?;
    let clamp = |n: usize| n.min(c_int::MAX as usize) as c_int;
    let mut left: c_int = 0;
    // SAFETY: site is a NUL-terminated string the call only reads; left is
    // a valid out-pointer.
    unsafe { c2p_cuda_fail_allocation(site.as_ptr(), clamp(skip), clamp(count), &mut left) };
    Ok(left.max(0) as usize)
}

/// The CUDA devices of this machine (empty without a driver or device).
pub fn devices() -> &'static [Device] {
    &DEVICES
}

/// Whether proving runs on a GPU: a device is present.
pub fn available() -> bool {
    !DEVICES.is_empty()
}

pub fn device_count() -> usize {
    DEVICES.len()
}

/// Largest domain the GPU H step handles (its coset power tables cover
/// exponents below 2^28); larger domains are proved on the CPU.
pub const MAX_LOG_M: u32 = 28;

/// Whether the GPU H step handles a domain of 2^log_m.
pub fn handles_domain(log_m: u32) -> bool {
    log_m <= MAX_LOG_M
}
