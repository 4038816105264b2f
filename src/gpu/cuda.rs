//! The CUDA backend: safe wrappers over the `extern "C"` entry points that
//! `cuda/include/c2p_cuda.h` declares (this extern block mirrors it, in its
//! order; `tests/cuda_header.rs` checks the names). Every call returns a CUDA status that becomes an `Error`
//! (`OutOfMemory` for allocation failures, `Gpu` otherwise) with the
//! message the CUDA side recorded.

use super::{Checked, Curve, DeviceMemory, HConstants, HTiming, ScalarsAt};
use crate::error::{Error, ErrorKind, Result};
use crate::math::domain::Domain;
use crate::math::{Fr, G1Affine, G2Affine, G1, G2};
use once_cell::sync::Lazy;
use std::ffi::{c_char, c_int, c_void, CStr};

extern "C" {
    fn c2p_cuda_configure(tuning: *const crate::config::GpuTuning) -> c_int;
    fn c2p_cuda_last_error() -> *const c_char;
    fn c2p_cuda_device_count(count: *mut c_int) -> c_int;
    fn c2p_cuda_device_info(
        device: c_int,
        name: *mut c_char,
        name_len: usize,
        free_bytes: *mut usize,
        total_bytes: *mut usize,
        major: *mut c_int,
        minor: *mut c_int,
    ) -> c_int;
    fn c2p_cuda_device_memory(
        device: c_int,
        budget: *mut usize,
        in_use: *mut usize,
        peak: *mut usize,
    ) -> c_int;
    fn c2p_cuda_set_device_budget(device: c_int, bytes: usize) -> c_int;
    fn c2p_cuda_reset_peak(device: c_int) -> c_int;
    fn c2p_cuda_pool_idle(device: c_int, idle_bytes: *mut usize) -> c_int;
    fn c2p_cuda_trim_pool(device: c_int) -> c_int;
    fn c2p_cuda_reserve(device: c_int, bytes: usize, out: *mut *mut c_void) -> c_int;
    fn c2p_cuda_release(device: c_int, ptr: *mut c_void) -> c_int;
    fn c2p_cuda_upload(
        device: c_int,
        host: *const c_void,
        bytes: usize,
        capacity: usize,
        unreduced: *mut usize,
        out: *mut *mut c_void,
    ) -> c_int;
    fn c2p_cuda_download(device: c_int, ptr: *const c_void, bytes: usize, host: *mut c_void) -> c_int;
    fn c2p_cuda_free(device: c_int, ptr: *mut c_void) -> c_int;
    fn c2p_cuda_checked_copy(
        dst: *mut c_void,
        src: *const c_void,
        bytes: usize,
        unreduced: *mut usize,
    ) -> c_int;
    fn c2p_cuda_msm(
        device: c_int,
        curve: Curve,
        points: *const c_void,
        offset: usize,
        scalars: *const c_void,
        scalars_at: ScalarsAt,
        density: *const u64,
        n: usize,
        out: *mut c_void,
        timing: *mut MsmTiming,
    ) -> c_int;
    fn c2p_cuda_msm_bytes(
        device: c_int,
        curve: Curve,
        n: usize,
        scalars_at: ScalarsAt,
        density: c_int,
        bytes: *mut usize,
    ) -> c_int;
    fn c2p_cuda_quotient(
        device: c_int,
        log_m: c_int,
        a: *const c_void,
        b: *const c_void,
        c: *const c_void,
        abc_size: usize,
        abc_device: *const *mut c_void,
        consts: *const HConstants,
        overlap: c_int,
        h_out: *mut c_void,
        h_device: *mut *mut c_void,
        unreduced: *mut usize,
        timing: *mut HTiming,
    ) -> c_int;
    fn c2p_cuda_h_bytes(device: c_int, log_m: c_int, abc_on_device: c_int, bytes: *mut usize) -> c_int;
    fn c2p_cuda_ntt(
        device: c_int,
        log_m: c_int,
        omega: *const c_void,
        m_inv: *const c_void,
        values: *mut c_void,
        forward: *mut c_void,
        iterations: c_int,
        median_ms: *mut f32,
    ) -> c_int;
    fn c2p_cuda_field_op(
        device: c_int,
        field: Field,
        op: FieldOp,
        a: *const c_void,
        b: *const c_void,
        out: *mut c_void,
        n: usize,
    ) -> c_int;
    fn c2p_cuda_curve_op(
        device: c_int,
        curve: Curve,
        op: CurveOp,
        p: *const c_void,
        q: *const c_void,
        out: *mut c_void,
        n: usize,
    ) -> c_int;
    fn c2p_cuda_microbench(device: c_int, log_m: c_int, results: *mut f32) -> c_int;
    fn c2p_cuda_instruction_rates(device: c_int, rates: *mut f32, count: c_int) -> c_int;
}

/// cudaErrorMemoryAllocation.
const CUDA_ERROR_MEMORY_ALLOCATION: c_int = 2;

fn check(status: c_int, what: &str) -> Result<()> {
    if status == 0 {
        return Ok(());
    }
    // SAFETY: the CUDA side returns a pointer to its thread-local,
    // NUL-terminated message, valid until the next failing call on this thread.
    let message = unsafe { CStr::from_ptr(c2p_cuda_last_error()) }
        .to_string_lossy()
        .into_owned();
    let kind = if status == CUDA_ERROR_MEMORY_ALLOCATION {
        ErrorKind::OutOfMemory
    } else {
        ErrorKind::Gpu
    };
    Err(Error::new(kind, format!("{what}: {message}")))
}

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
fn configure() -> Result<()> {
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

/// Device bytes an H step of 2^log_m allocates on GPU `device` (its twiddle
/// table only while the device has none of that size).
pub fn h_step_bytes(device: usize, log_m: u32, abc_on_device: bool) -> Result<usize> {
    let mut bytes = 0usize;
    // SAFETY: `bytes` is a valid location; the function checks its arguments.
    let status = unsafe {
        c2p_cuda_h_bytes(
            device as c_int,
            log_m as c_int,
            abc_on_device as c_int,
            &mut bytes,
        )
    };
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

/// The H step on GPU `device`: the m − 1 coefficients of h, exactly the CPU's.
/// Device memory: 3 × 32 × m bytes during the call, plus the twiddle table
/// (16 × m bytes) kept per device and domain size. With `overlap` (the
/// prover's mode) the transforms of a run while b and c upload; without,
/// everything is uploaded first, which times the compute on its own.
pub fn quotient(
    device: usize,
    domain: &Domain,
    a: &[Fr],
    b: &[Fr],
    c: &[Fr],
    overlap: bool,
) -> Result<(Vec<Fr>, HTiming)> {
    let n = a.len();
    if b.len() != n || c.len() != n || n > domain.m {
        return Err(Error::size_mismatch(
            "a, b, c must have one length, at most the domain size",
        ));
    }
    if domain.log_m > MAX_LOG_M {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "the GPU H step handles domains up to 2^{MAX_LOG_M}, not 2^{}",
                domain.log_m
            ),
        ));
    }
    let consts = HConstants::of(domain);
    let mut h: Vec<Fr> = Vec::new();
    h.try_reserve_exact(domain.m - 1).map_err(|e| {
        Error::new(
            ErrorKind::OutOfMemory,
            format!("cannot hold h ({} elements): {e}", domain.m - 1),
        )
    })?;
    // h is not zeroed first: at 2^27 that is 4 GiB written twice. The call
    // writes all m − 1 elements on success.
    let mut timing = HTiming::default();
    // SAFETY: a, b, c hold n elements each; h has capacity for m − 1; the
    // constants and timing are valid for the call.
    let status = unsafe {
        c2p_cuda_quotient(
            device as c_int,
            domain.log_m as c_int,
            a.as_ptr().cast(),
            b.as_ptr().cast(),
            c.as_ptr().cast(),
            n,
            std::ptr::null(),
            &consts,
            c_int::from(overlap),
            h.as_mut_ptr().cast(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut timing,
        )
    };
    check(status, "GPU H step")?;
    // SAFETY: on success the call wrote m − 1 elements, and any bytes are a
    // valid Fr (plain limbs), within the capacity reserved above.
    unsafe { h.set_len(domain.m - 1) };
    Ok((h, timing))
}

/// Forward NTT of `values` on GPU 0 (returned in natural order), the inverse
/// back into `values`, and the median time of `iterations` forward
/// transforms of device-resident data.
pub fn ntt_round_trip(domain: &Domain, values: &mut [Fr], iterations: usize) -> Result<(Vec<Fr>, f32)> {
    if values.len() != domain.m {
        return Err(Error::size_mismatch("values must fill the domain"));
    }
    let mut forward = vec![Fr::ZERO; domain.m];
    let mut median = 0f32;
    let m_inv = domain.m_inv();
    // SAFETY: both buffers hold m elements; scalars are valid for the call.
    let status = unsafe {
        c2p_cuda_ntt(
            0,
            domain.log_m as c_int,
            (&domain.omega as *const Fr).cast(),
            (&m_inv as *const Fr).cast(),
            values.as_mut_ptr().cast(),
            forward.as_mut_ptr().cast(),
            iterations.min(64) as c_int,
            &mut median,
        )
    };
    check(status, "GPU NTT")?;
    Ok((forward, median))
}

/// Kernel-level figures on GPU 0: (G Fr multiplications per second, GB/s
/// of an element-wise device copy of 2^log_m elements).
pub fn microbench(log_m: u32) -> Result<(f32, f32)> {
    let mut results = [0f32; 2];
    // SAFETY: `results` has room for the two figures written.
    check(
        unsafe { c2p_cuda_microbench(0, log_m as c_int, results.as_mut_ptr()) },
        "GPU microbenchmark",
    )?;
    Ok((results[0], results[1]))
}

/// The instruction-rate probes of `instruction_rates`, in its order.
pub const INSTRUCTION_PROBES: [&str; 7] = [
    "IMAD (mad.lo.u32)",
    "IMAD.HI (mad.hi.u32)",
    "IMAD.WIDE (mad.lo.cc + madc.hi, 64-bit multiply-add)",
    "integer add (add.u32: IADD3 / IMAD.IADD)",
    "DFMA (fma.rn.f64)",
    "IMAD.WIDE and DFMA alternating",
    "IMAD.WIDE and two adds alternating",
];

/// Instructions per clock per SM (summed over a warp's lanes, at the SM's
/// maximum clock) of each of `INSTRUCTION_PROBES` on GPU 0: independent
/// chains of one instruction (or two, alternating), to tell which pipe an
/// instruction mix is bound by.
pub fn instruction_rates() -> Result<Vec<(&'static str, f32)>> {
    let mut rates = [0f32; INSTRUCTION_PROBES.len()];
    // SAFETY: `rates` has room for the `count` figures written.
    check(
        unsafe { c2p_cuda_instruction_rates(0, rates.as_mut_ptr(), rates.len() as c_int) },
        "GPU instruction rates",
    )?;
    Ok(INSTRUCTION_PROBES.iter().copied().zip(rates).collect())
}

/// Element-wise field operations on GPU 0, for tests against blst
/// (`enum c2p_field_op`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldOp {
    Mul = 0,
    Add = 1,
    Sub = 2,
    Sqr = 3,
    ToMont = 4,
    FromMont = 5,
    Neg = 6,
    /// 1/a (0 for 0).
    Inv = 7,
}

/// A field of the test operations (`enum c2p_field`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Fr = 0,
    Fp = 1,
}

/// The field of elements of `L` 64-bit limbs.
fn field_of<const L: usize>(a: &[[u64; L]], b: &[[u64; L]]) -> Result<Field> {
    if a.len() != b.len() {
        return Err(Error::size_mismatch("a and b differ in length"));
    }
    match L {
        4 => Ok(Field::Fr),
        6 => Ok(Field::Fp),
        _ => Err(Error::invalid("field elements have 4 (Fr) or 6 (Fp) limbs")),
    }
}

/// `field_op` computed on the host by the CUDA code's own arithmetic (its
/// carry-flag instructions emulated): checks the device algorithms where
/// there is no GPU.
pub fn field_op_on_host<const L: usize>(
    op: FieldOp,
    a: &[[u64; L]],
    b: &[[u64; L]],
) -> Result<Vec<[u64; L]>> {
    field_op_at(-1, op, a, b)
}

/// out[i] = a[i] op b[i] over Fr (`L` = 4 limbs of 64 bits) or Fp (`L` = 6).
pub fn field_op<const L: usize>(op: FieldOp, a: &[[u64; L]], b: &[[u64; L]]) -> Result<Vec<[u64; L]>> {
    field_op_at(0, op, a, b)
}

/// `field_op` on GPU `device`, or on the host for a negative `device`.
fn field_op_at<const L: usize>(
    device: c_int,
    op: FieldOp,
    a: &[[u64; L]],
    b: &[[u64; L]],
) -> Result<Vec<[u64; L]>> {
    let field = field_of(a, b)?;
    let mut out = vec![[0u64; L]; a.len()];
    // SAFETY: a, b and out hold a.len() elements of the field's size.
    let status = unsafe {
        c2p_cuda_field_op(
            device,
            field,
            op,
            a.as_ptr().cast(),
            b.as_ptr().cast(),
            out.as_mut_ptr().cast(),
            a.len(),
        )
    };
    check(status, "field operation")?;
    Ok(out)
}

/// Element-wise point operations on GPU 0, for tests against blst
/// (`enum c2p_curve_op`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurveOp {
    /// out = 2·p
    Double = 0,
    /// out = p + q, both Jacobian
    Add = 1,
    /// out = p + q, q affine
    AddAffine = 2,
    /// out = −p
    Neg = 3,
}

/// A group whose points the GPU operates on: G1 or G2.
pub trait GpuCurve: Copy + Default {
    type Affine: Copy + Default;
    const CURVE: Curve;
}

impl GpuCurve for crate::math::G1 {
    type Affine = crate::math::G1Affine;
    const CURVE: Curve = Curve::G1;
}

impl GpuCurve for crate::math::G2 {
    type Affine = crate::math::G2Affine;
    const CURVE: Curve = Curve::G2;
}

/// out[i] = p[i] op q[i]; `q_affine` is read for `AddAffine`, `q` otherwise.
pub fn curve_op<P: GpuCurve>(op: CurveOp, p: &[P], q: &[P], q_affine: &[P::Affine]) -> Result<Vec<P>> {
    let n = p.len();
    let q_ptr: *const c_void = if op == CurveOp::AddAffine {
        if q_affine.len() != n {
            return Err(Error::size_mismatch("p and q differ in length"));
        }
        q_affine.as_ptr().cast()
    } else {
        if q.len() != n {
            return Err(Error::size_mismatch("p and q differ in length"));
        }
        q.as_ptr().cast()
    };
    let mut out = vec![P::default(); n];
    // SAFETY: p, q (of the kind `op` reads) and out hold n points in blst's
    // layouts, which the CUDA side shares.
    let status = unsafe {
        c2p_cuda_curve_op(
            0,
            P::CURVE,
            op,
            p.as_ptr().cast(),
            q_ptr,
            out.as_mut_ptr().cast(),
            n,
        )
    };
    check(status, "GPU curve operation")?;
    Ok(out)
}

/// An array in one GPU's memory, freed on drop: the storage of
/// `DevicePoints` and `DeviceScalars`.
struct DeviceBuffer {
    device: c_int,
    ptr: *mut c_void,
}

// SAFETY: a device address with no host-side state, usable from any thread
// (the CUDA calls set the device themselves); kernels read it only after
// the call that wrote it returned.
unsafe impl Send for DeviceBuffer {}
// SAFETY: as above; nothing writes it through a shared reference (the one
// writer, a consuming MSM, takes the owning handle by value).
unsafe impl Sync for DeviceBuffer {}

impl DeviceBuffer {
    /// A copy of `values` on GPU `device`, through the pinned staging
    /// buffers.
    fn upload<T>(device: usize, values: &[T], what: &str) -> Result<DeviceBuffer> {
        DeviceBuffer::upload_padded(device, values, std::mem::size_of_val(values), what, None)
    }

    /// A copy of `values` in a device array of `capacity` bytes (at least
    /// the values' size), zero past the values. With `check`, the values
    /// are witness values checked below the modulus as they are copied
    /// (an error names the first that is not).
    fn upload_padded<T>(
        device: usize,
        values: &[T],
        capacity: usize,
        what: &str,
        checked: Option<Checked>,
    ) -> Result<DeviceBuffer> {
        let mut ptr = std::ptr::null_mut();
        let mut unreduced = usize::MAX;
        // SAFETY: `values` is a live slice of size_of_val(values) bytes; ptr
        // and unreduced are valid output locations; the call checks
        // capacity >= bytes (and whole field elements when checking).
        let status = unsafe {
            c2p_cuda_upload(
                device as c_int,
                values.as_ptr().cast(),
                std::mem::size_of_val(values),
                capacity,
                if checked.is_some() {
                    &mut unreduced
                } else {
                    std::ptr::null_mut()
                },
                &mut ptr,
            )
        };
        // A value not below the modulus is the caller's error whatever
        // failed after it was found; the array (freed on drop) exists only
        // when the call succeeded.
        let buf = check(status, what).map(|()| DeviceBuffer {
            device: device as c_int,
            ptr,
        });
        match checked {
            Some(checked) if unreduced != usize::MAX => Err(checked.error(unreduced)),
            _ => buf,
        }
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: ptr came from c2p_cuda_upload or c2p_cuda_quotient on this
        // device and is freed once, here.
        let status = unsafe { c2p_cuda_free(self.device, self.ptr) };
        if status != 0 {
            log::warn!("freeing device memory failed (CUDA error {status})");
        }
    }
}

/// Affine points held in device memory until dropped.
pub struct DevicePoints {
    buf: DeviceBuffer,
    curve: Curve,
    len: usize,
}

impl DevicePoints {
    fn upload<T>(device: usize, curve: Curve, points: &[T]) -> Result<DevicePoints> {
        // `points` are blst affine points (G1Affine / G2Affine are
        // repr(transparent) over them) of the curve named.
        Ok(DevicePoints {
            buf: DeviceBuffer::upload(device, points, "uploading points to the GPU")?,
            curve,
            len: points.len(),
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Device bytes held.
    pub fn bytes(&self) -> usize {
        self.len * if self.curve == Curve::G1 { 96 } else { 192 }
    }

    /// Σ scalars[i]·points[offset + i] on the GPU, into `out` (a blst
    /// Jacobian point of this vector's group); with a density bitmap, only
    /// the scalars whose bit is set, the k-th meeting points[offset + k].
    fn msm_into(
        &self,
        offset: usize,
        scalars: Scalars,
        density: Option<&[u64]>,
        out: *mut c_void,
    ) -> Result<MsmTiming> {
        let (ptr, on_device, n, gpu) = match &scalars {
            Scalars::Host(s) => (
                s.as_ptr().cast::<c_void>(),
                ScalarsAt::Host,
                s.len(),
                self.buf.device,
            ),
            Scalars::Device(d) => (
                d.buf.ptr.cast_const(),
                ScalarsAt::DeviceConsumed,
                d.len,
                d.buf.device,
            ),
            Scalars::Shared(d) => (
                d.buf.ptr.cast_const(),
                ScalarsAt::DeviceShared,
                d.len,
                d.buf.device,
            ),
        };
        if gpu != self.buf.device {
            return Err(Error::invalid(format!(
                "scalars on GPU {gpu} for points on GPU {}",
                self.buf.device
            )));
        }
        let points_needed = match density {
            None => n,
            Some(words) => {
                if words.len() < n.div_ceil(64) {
                    return Err(Error::size_mismatch(format!(
                        "a density bitmap of {} words for {n} scalars",
                        words.len()
                    )));
                }
                crate::math::bits_set_below(words, n)
            }
        };
        if !offset
            .checked_add(points_needed)
            .is_some_and(|end| end <= self.len)
        {
            return Err(Error::size_mismatch(format!(
                "{points_needed} scalars from point {offset} of {}",
                self.len
            )));
        }
        let mut timing = MsmTiming::default();
        // SAFETY: the points are this handle's live device array, with
        // offset + (points the scalars meet) in range (checked); the
        // scalars are n valid Fr on the host, or a device buffer of n on the
        // points' GPU (checked) that this call consumes (converted in place,
        // and `scalars` is dropped after) or only reads (shared); the density, when given, has ceil(n / 64) words
        // (checked); `out` has room for one Jacobian point of the curve (the
        // callers pass a G1 or G2 that matches `self.curve`); timing is a
        // valid location.
        let status = unsafe {
            c2p_cuda_msm(
                self.buf.device,
                self.curve,
                self.buf.ptr,
                offset,
                ptr,
                on_device,
                density.map_or(std::ptr::null(), <[u64]>::as_ptr),
                n,
                out,
                &mut timing,
            )
        };
        drop(scalars);
        check(status, "GPU MSM")?;
        log::trace!("GPU MSM of {n}: {timing:?}");
        Ok(timing)
    }
}

/// Where one GPU MSM's time went, in ms (the layout of `c2p_msm_timing`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MsmTiming {
    pub upload_ms: f32,
    pub split_ms: f32,
    pub sort_ms: f32,
    pub buckets_ms: f32,
    pub reduce_ms: f32,
}

/// Where an MSM's scalars are. Device scalars are consumed by the MSM
/// (converted in place, then freed); shared ones are only read (the MSM
/// converts a copy), so several MSMs can use one upload.
pub enum Scalars<'a> {
    Host(&'a [Fr]),
    Device(DeviceScalars),
    Shared(&'a DeviceScalars),
}

/// Scalars in device memory (the H step's h, left there for its MSM; the
/// witness, uploaded once for the MSMs that read it), freed on drop.
pub struct DeviceScalars {
    buf: DeviceBuffer,
    len: usize,
}

impl DeviceScalars {
    pub fn len(&self) -> usize {
        self.len
    }

    /// A copy on the host (for checks: h as the H step left it).
    pub fn to_host(&self) -> Result<Vec<Fr>> {
        let mut out = vec![Fr::ZERO; self.len];
        // SAFETY: the buffer holds at least len elements on its device (an
        // upload of len scalars, or h's m elements for len = m − 1); `out`
        // has room for len.
        let status = unsafe {
            c2p_cuda_download(
                self.buf.device,
                self.buf.ptr.cast_const(),
                std::mem::size_of_val(out.as_slice()),
                out.as_mut_ptr().cast(),
            )
        };
        check(status, "copying scalars from the GPU")?;
        Ok(out)
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The staging copy's check on the host alone (no GPU needed: for tests):
/// a copy of `values` through the copy workers, and the index of the first
/// value not below the modulus, if any.
pub fn checked_copy_on_host(values: &[Fr]) -> Result<(Vec<Fr>, Option<usize>)> {
    configure()?;
    let mut out = vec![Fr::ZERO; values.len()];
    let mut unreduced = usize::MAX;
    // SAFETY: `values` and `out` are live slices of the same length in
    // bytes; `unreduced` is a valid output location.
    let status = unsafe {
        c2p_cuda_checked_copy(
            out.as_mut_ptr().cast(),
            values.as_ptr().cast(),
            std::mem::size_of_val(values),
            &mut unreduced,
        )
    };
    check(status, "checked copy")?;
    Ok((out, (unreduced != usize::MAX).then_some(unreduced)))
}

/// A copy of `scalars` (Montgomery form, as given) on GPU `device`, with
/// `check` checked below the modulus on the way.
pub fn upload_scalars(device: usize, scalars: &[Fr], check: Option<Checked>) -> Result<DeviceScalars> {
    Ok(DeviceScalars {
        buf: DeviceBuffer::upload_padded(
            device,
            scalars,
            std::mem::size_of_val(scalars),
            "uploading scalars to the GPU",
            check,
        )?,
        len: scalars.len(),
    })
}

/// A circuit's a, b, c on one GPU ahead of its H step, each zero-padded to
/// the domain (3 × 32 × m bytes), freed on drop unless an H step takes them.
pub struct DeviceAbc {
    bufs: [DeviceBuffer; 3],
    /// Entries of a, b, c before the padding.
    len: usize,
    log_m: u32,
}

/// a, b, c (one length, at most the domain's size) to GPU `device` for an H
/// step over `domain`, through the pinned staging buffers taken piece by
/// piece, so that another circuit's MSMs upload their scalars in between.
/// With `check` (a circuit's index), the values are checked below the
/// modulus on the way (see `Checked`).
pub fn upload_abc(
    device: usize,
    domain: &Domain,
    a: &[Fr],
    b: &[Fr],
    c: &[Fr],
    check: Option<usize>,
) -> Result<DeviceAbc> {
    check_abc(domain, a.len(), b.len(), c.len())?;
    let capacity = domain.m * std::mem::size_of::<Fr>();
    let up = |v: &[Fr], vector: &'static str| {
        DeviceBuffer::upload_padded(
            device,
            v,
            capacity,
            "uploading a, b, c to the GPU",
            Checked::of(check, vector),
        )
    };
    Ok(DeviceAbc {
        bufs: [up(a, "a")?, up(b, "b")?, up(c, "c")?],
        len: a.len(),
        log_m: domain.log_m,
    })
}

/// The H step's inputs: on the host (with `check`, a circuit's index, the
/// values are checked below the modulus as they go up), or already on the
/// GPU.
pub enum Abc<'a> {
    Host {
        a: &'a [Fr],
        b: &'a [Fr],
        c: &'a [Fr],
        check: Option<usize>,
    },
    Device(DeviceAbc),
}

fn check_abc(domain: &Domain, a: usize, b: usize, c: usize) -> Result<()> {
    if b != a || c != a || a > domain.m {
        return Err(Error::size_mismatch(
            "a, b, c must have one length, at most the domain size",
        ));
    }
    if domain.log_m > MAX_LOG_M {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("the GPU H step handles domains up to 2^{MAX_LOG_M}"),
        ));
    }
    Ok(())
}

/// The H step on GPU `device` with h left in its memory (the m − 1
/// coefficients, for `msm_g1` over the h points): no download; a, b, c
/// uploaded here unless they are on the device already (then consumed).
pub fn quotient_on_device(device: usize, domain: &Domain, abc: Abc) -> Result<(DeviceScalars, HTiming)> {
    let consts = HConstants::of(domain);
    let host = std::ptr::null::<c_void>();
    let (a, b, c, n, on_device, checked_circuit) = match abc {
        Abc::Host { a, b, c, check } => {
            check_abc(domain, a.len(), b.len(), c.len())?;
            (
                a.as_ptr().cast(),
                b.as_ptr().cast(),
                c.as_ptr().cast(),
                a.len(),
                None,
                check,
            )
        }
        Abc::Device(abc) => {
            if abc.log_m != domain.log_m || abc.bufs.iter().any(|buf| buf.device != device as c_int) {
                return Err(Error::invalid(format!(
                    "a, b, c uploaded for 2^{} on GPU {} used for 2^{} on GPU {device}",
                    abc.log_m, abc.bufs[0].device, domain.log_m
                )));
            }
            // The H step takes the arrays over (it frees them, or hands b's
            // back as h), so they leave their owners here.
            let len = abc.len;
            let ptrs = abc.bufs.map(|buf| std::mem::ManuallyDrop::new(buf).ptr);
            (host, host, host, len, Some(ptrs), None)
        }
    };
    let mut timing = HTiming::default();
    let mut h = std::ptr::null_mut();
    let mut unreduced = [usize::MAX; 3];
    // SAFETY: a, b, c hold n elements each on the host, or `on_device` holds
    // three live device arrays of m elements on this GPU (checked above)
    // that the call takes over on every path; the constants, timing, the
    // device-pointer output and the three-entry `unreduced` (when passed)
    // are valid for the call; h_out is unused.
    let status = unsafe {
        c2p_cuda_quotient(
            device as c_int,
            domain.log_m as c_int,
            a,
            b,
            c,
            n,
            on_device.as_ref().map_or(std::ptr::null(), |p| p.as_ptr()),
            &consts,
            1,
            std::ptr::null_mut(),
            &mut h,
            if checked_circuit.is_some() {
                unreduced.as_mut_ptr()
            } else {
                std::ptr::null_mut()
            },
            &mut timing,
        )
    };
    // h (freed on drop) exists only when the call succeeded.
    let h = check(status, "GPU H step").map(|()| DeviceScalars {
        buf: DeviceBuffer {
            device: device as c_int,
            ptr: h,
        },
        len: domain.m - 1,
    });
    if let Some(circuit) = checked_circuit {
        // The first vector in a, b, c order with a value not below the
        // modulus, whatever failed after it was found; h, computed from
        // it, is dropped.
        for (vector, &at) in ["a", "b", "c"].into_iter().zip(&unreduced) {
            if at != usize::MAX {
                return Err(Checked { circuit, vector }.error(at));
            }
        }
    }
    Ok((h?, timing))
}

/// Σ scalars[i]·points[offset + i] over G1 on the GPU.
pub fn msm_g1(points: &DevicePoints, offset: usize, scalars: &[Fr]) -> Result<G1> {
    msm_g1_timed(points, offset, Scalars::Host(scalars)).map(|(p, _)| p)
}

/// `msm_g1` from host or device scalars.
pub fn msm_g1_from(points: &DevicePoints, offset: usize, scalars: Scalars) -> Result<G1> {
    msm_g1_timed(points, offset, scalars).map(|(p, _)| p)
}

/// `msm_g1` from host or device scalars, and where its time went.
pub fn msm_g1_timed(points: &DevicePoints, offset: usize, scalars: Scalars) -> Result<(G1, MsmTiming)> {
    if points.curve != Curve::G1 {
        return Err(Error::invalid("G1 MSM over G2 points"));
    }
    let mut out = G1::identity();
    let timing = points.msm_into(offset, scalars, None, (&mut out as *mut G1).cast())?;
    Ok((out, timing))
}

/// Σ over the scalars whose bit is set in `density` (bit i of word i / 64),
/// the k-th of them times points[offset + k], over G1 on the GPU: the
/// selection is made on the device.
pub fn msm_g1_masked(points: &DevicePoints, offset: usize, scalars: Scalars, density: &[u64]) -> Result<G1> {
    if points.curve != Curve::G1 {
        return Err(Error::invalid("G1 MSM over G2 points"));
    }
    let mut out = G1::identity();
    points.msm_into(offset, scalars, Some(density), (&mut out as *mut G1).cast())?;
    Ok(out)
}

/// `msm_g1_masked` over G2.
pub fn msm_g2_masked(points: &DevicePoints, offset: usize, scalars: Scalars, density: &[u64]) -> Result<G2> {
    if points.curve != Curve::G2 {
        return Err(Error::invalid("G2 MSM over G1 points"));
    }
    let mut out = G2::identity();
    points.msm_into(offset, scalars, Some(density), (&mut out as *mut G2).cast())?;
    Ok(out)
}

/// Σ scalars[i]·points[offset + i] over G2 on the GPU.
pub fn msm_g2(points: &DevicePoints, offset: usize, scalars: &[Fr]) -> Result<G2> {
    if points.curve != Curve::G2 {
        return Err(Error::invalid("G2 MSM over G1 points"));
    }
    let mut out = G2::identity();
    points.msm_into(offset, Scalars::Host(scalars), None, (&mut out as *mut G2).cast())?;
    Ok(out)
}

/// Points of G1 on GPU `device`.
pub fn upload_g1(device: usize, points: &[G1Affine]) -> Result<DevicePoints> {
    DevicePoints::upload(device, Curve::G1, points)
}

/// Points of G2 on GPU `device`.
pub fn upload_g2(device: usize, points: &[G2Affine]) -> Result<DevicePoints> {
    DevicePoints::upload(device, Curve::G2, points)
}
