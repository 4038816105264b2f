//! The CUDA entry points as Rust declares them: this extern block mirrors
//! `cuda/include/c2p_cuda.h`, in its order (`tests/cuda_header.rs` checks the
//! names), and `check` turns a returned CUDA status into an `Error`.
use super::buffers::MsmTiming;
use super::ops::{CurveOp, Field, FieldOp};
use crate::backend::gpu::{Curve, HConstants, HTiming, ScalarsAt};
use crate::error::{Error, ErrorKind, Result};
use std::ffi::{c_char, c_int, c_void, CStr};

/// `c2p_unit_shape`: a units circuit's sizes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct UnitShape {
    pub common_aux: u64,
    pub common_inputs: u64,
    pub common_constraints: u64,
    pub unit_aux: u64,
    pub unit_inputs: u64,
    pub unit_constraints: u64,
    pub units: u64,
    pub inputs: u64,
}

/// `c2p_unit_rows`: the rows of A, B and C on a device.
#[repr(C)]
pub(super) struct UnitRows {
    pub starts: [*const c_void; 3],
    pub terms: [*const c_void; 3],
    pub coefficients: *const c_void,
    pub shape: UnitShape,
}

extern "C" {
    pub(super) fn c2p_cuda_configure(tuning: *const crate::config::GpuTuning) -> c_int;
    pub(super) fn c2p_cuda_last_error() -> *const c_char;
    pub(super) fn c2p_cuda_device_count(count: *mut c_int) -> c_int;
    pub(super) fn c2p_cuda_device_info(
        device: c_int,
        name: *mut c_char,
        name_len: usize,
        free_bytes: *mut usize,
        total_bytes: *mut usize,
        major: *mut c_int,
        minor: *mut c_int,
    ) -> c_int;
    pub(super) fn c2p_cuda_device_memory(
        device: c_int,
        budget: *mut usize,
        in_use: *mut usize,
        peak: *mut usize,
    ) -> c_int;
    pub(super) fn c2p_cuda_set_device_budget(device: c_int, bytes: usize) -> c_int;
    pub(super) fn c2p_cuda_reset_peak(device: c_int) -> c_int;
    pub(super) fn c2p_cuda_pool_idle(device: c_int, idle_bytes: *mut usize) -> c_int;
    pub(super) fn c2p_cuda_trim_pool(device: c_int) -> c_int;
    pub(super) fn c2p_cuda_reserve(device: c_int, bytes: usize, out: *mut *mut c_void) -> c_int;
    pub(super) fn c2p_cuda_release(device: c_int, ptr: *mut c_void) -> c_int;
    pub(super) fn c2p_cuda_canary(device: c_int, bytes: usize, pattern: u32, out: *mut *mut c_void) -> c_int;
    pub(super) fn c2p_cuda_canary_changed(
        device: c_int,
        ptr: *const c_void,
        bytes: usize,
        pattern: u32,
        changed: *mut u64,
    ) -> c_int;
    pub(super) fn c2p_cuda_record_allocation_sites(on: c_int) -> c_int;
    pub(super) fn c2p_cuda_allocation_sites(out: *mut c_char, len: usize, needed: *mut usize) -> c_int;
    pub(super) fn c2p_cuda_fail_allocation(
        site: *const c_char,
        skip: c_int,
        count: c_int,
        left: *mut c_int,
    ) -> c_int;
    pub(super) fn c2p_cuda_upload(
        device: c_int,
        host: *const c_void,
        bytes: usize,
        capacity: usize,
        unreduced: *mut usize,
        out: *mut *mut c_void,
    ) -> c_int;
    pub(super) fn c2p_cuda_download(
        device: c_int,
        ptr: *const c_void,
        bytes: usize,
        host: *mut c_void,
    ) -> c_int;
    pub(super) fn c2p_cuda_free(device: c_int, ptr: *mut c_void) -> c_int;
    pub(super) fn c2p_cuda_host_register(device: c_int, host: *const c_void, bytes: usize) -> c_int;
    pub(super) fn c2p_cuda_host_unregister(host: *const c_void) -> c_int;
    pub(super) fn c2p_cuda_checked_copy(
        dst: *mut c_void,
        src: *const c_void,
        bytes: usize,
        unreduced: *mut usize,
    ) -> c_int;
    pub(super) fn c2p_cuda_msm(
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
    pub(super) fn c2p_cuda_msm_bytes(
        device: c_int,
        curve: Curve,
        n: usize,
        scalars_at: ScalarsAt,
        density: c_int,
        bytes: *mut usize,
    ) -> c_int;
    pub(super) fn c2p_cuda_msm_sum_new(device: c_int, curve: Curve, n: usize, out: *mut *mut c_void)
        -> c_int;
    pub(super) fn c2p_cuda_msm_sum_add(
        sum: *mut c_void,
        points: *const c_void,
        offset: usize,
        scalars: *const c_void,
        scalars_at: ScalarsAt,
        density: *const u64,
        n: usize,
        timing: *mut MsmTiming,
    ) -> c_int;
    pub(super) fn c2p_cuda_msm_sum_total(sum: *mut c_void, out: *mut c_void) -> c_int;
    pub(super) fn c2p_cuda_msm_sum_free(sum: *mut c_void) -> c_int;
    pub(super) fn c2p_cuda_msm_sum_bytes(
        device: c_int,
        curve: Curve,
        n: usize,
        chunk: usize,
        scalars_at: ScalarsAt,
        density: c_int,
        bytes: *mut usize,
    ) -> c_int;
    pub(super) fn c2p_cuda_quotient(
        device: c_int,
        log_m: c_int,
        a: *const c_void,
        b: *const c_void,
        c: *const c_void,
        abc_size: usize,
        abc_device: *const *mut c_void,
        consts: *const HConstants,
        overlap: c_int,
        in_pieces: c_int,
        h_out: *mut c_void,
        h_device: *mut *mut c_void,
        unreduced: *mut usize,
        timing: *mut HTiming,
    ) -> c_int;
    pub(super) fn c2p_cuda_unit_products(
        device: c_int,
        log_m: c_int,
        rows: *const UnitRows,
        inputs: *const c_void,
        aux: *const c_void,
        abc_out: *mut *mut c_void,
    ) -> c_int;
    pub(super) fn c2p_cuda_h_bytes(
        device: c_int,
        log_m: c_int,
        host_vectors: c_int,
        bytes: *mut usize,
    ) -> c_int;
    pub(super) fn c2p_cuda_ntt(
        device: c_int,
        log_m: c_int,
        omega: *const c_void,
        m_inv: *const c_void,
        values: *mut c_void,
        forward: *mut c_void,
        iterations: c_int,
        median_ms: *mut f32,
    ) -> c_int;
    pub(super) fn c2p_cuda_field_op(
        device: c_int,
        field: Field,
        op: FieldOp,
        a: *const c_void,
        b: *const c_void,
        out: *mut c_void,
        n: usize,
    ) -> c_int;
    pub(super) fn c2p_cuda_curve_op(
        device: c_int,
        curve: Curve,
        op: CurveOp,
        p: *const c_void,
        q: *const c_void,
        out: *mut c_void,
        n: usize,
    ) -> c_int;
    pub(super) fn c2p_cuda_microbench(device: c_int, log_m: c_int, results: *mut f32) -> c_int;
    pub(super) fn c2p_cuda_instruction_rates(device: c_int, rates: *mut f32, count: c_int) -> c_int;
}

/// cudaErrorMemoryAllocation.
const CUDA_ERROR_MEMORY_ALLOCATION: c_int = 2;

pub(super) fn check(status: c_int, what: &str) -> Result<()> {
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
