//! The native C API, prefix `c2p_`.
//!
//! Ownership in one line: handles (`c2p_params *`, `c2p_job *`) belong to
//! c2prover and are released with their `_free` function (or, for a job,
//! by `c2p_prove_finish`); every other pointer belongs to the caller and is
//! only borrowed for the duration of the call.
//!
//! Handles are opaque tokens checked against a registry, so a freed or
//! finished handle passed again is reported as `C2P_ERR_BAD_STATE` rather
//! than touching freed memory.

use super::handles::Registry;
use super::witness::{borrow_assignments, own, r_and_s, read_scalars};
use super::{catch, copy_last_error, guard, non_null, slice, write_out};
use super::{C2P_PARAMS_ON_GPU_ALWAYS, C2P_PARAMS_ON_GPU_AUTO, C2P_PARAMS_ON_GPU_NEVER};
use crate::backend;
use crate::config::Residency;
use crate::engine::{admit, default_host_budget, host_budget, Admission, DeviceMask, Job};
use crate::error::Error;
use crate::params::{load_cached, LoadOptions, Parameters};
use crate::proof::Proof;
use std::ffi::{c_char, CStr};
use std::path::PathBuf;
use std::sync::Arc;

/// Loaded Groth16 parameters (opaque). Thread-safe: any number of threads
/// and jobs may use one handle at once.
pub struct c2p_params {
    _opaque: [u8; 0],
}

/// A proving job started by `c2p_prove_start` (opaque).
pub struct c2p_job {
    _opaque: [u8; 0],
}

/// An element of the BLS12-381 scalar field: four 64-bit limbs,
/// little-endian, Montgomery form (the memory layout of blst's `blst_fr`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct c2p_fr {
    pub l: [u64; 4],
}

/// Options for `c2p_params_load`. Zero-initialised means the defaults.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct c2p_params_options {
    /// Also check every point is in the prime-order subgroup (slow on large
    /// files). Counts, sizes, flag bits and the curve equation are always checked.
    pub check_subgroup: bool,
    /// Keep the parameters in a process-wide cache keyed by file (path,
    /// length, modification time) and reuse them on later loads. A cached
    /// handle keeps the `params_on_gpu` of the load that made it.
    pub use_cache: bool,
    /// Where the points live with a GPU: C2P_PARAMS_ON_GPU_AUTO (0),
    /// _ALWAYS or _NEVER. Ignored without a GPU.
    pub params_on_gpu: u32,
    /// The device budget of every GPU in bytes, set before the load (every
    /// device allocation of the library counts against it; what stays
    /// resident is chosen to fit). 0 leaves it: `C2P_DEVICE_BUDGET`, else
    /// the device's memory less max(1 GiB, 1/32 of it).
    pub device_budget: u64,
}

/// What `c2p_params_info` reports.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct c2p_params_info {
    /// NTT domain size (a power of two).
    pub domain_size: usize,
    /// Public inputs, the leading ONE included.
    pub num_inputs: usize,
    /// Auxiliary (private) variables.
    pub num_aux: usize,
    /// Points per vector.
    pub ic_len: usize,
    pub h_len: usize,
    pub l_len: usize,
    pub a_len: usize,
    pub b_g1_len: usize,
    pub b_g2_len: usize,
    /// Bytes of decoded parameters held in host memory.
    pub host_bytes: u64,
    /// Bytes held in GPU memory (0 on the CPU backend).
    pub device_bytes: u64,
}

/// One circuit's witness: supraseal's `Assignment`, field for field.
/// Density bitmaps hold bit i in bit i%64 of word i/64. All pointers are
/// borrowed; `c2p_prove_start` copies what it needs before returning.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct c2p_assignment {
    /// Aux variables in the A query: `a_aux_bit_len` (= aux size) bits.
    pub a_aux_density: *const u64,
    pub a_aux_bit_len: usize,
    pub a_aux_popcount: usize,
    /// Inputs in the B query: `b_inp_bit_len` (= input size) bits.
    pub b_inp_density: *const u64,
    pub b_inp_bit_len: usize,
    pub b_inp_popcount: usize,
    /// Aux variables in the B query: `b_aux_bit_len` (= aux size) bits.
    pub b_aux_density: *const u64,
    pub b_aux_bit_len: usize,
    pub b_aux_popcount: usize,
    /// A, B and C evaluated at each constraint, `abc_size` entries each
    /// (at most the domain size).
    pub a: *const c2p_fr,
    pub b: *const c2p_fr,
    pub c: *const c2p_fr,
    pub abc_size: usize,
    /// Input values, ONE at index 0.
    pub inp_assignment_data: *const c2p_fr,
    pub inp_assignment_size: usize,
    /// Aux values.
    pub aux_assignment_data: *const c2p_fr,
    pub aux_assignment_size: usize,
}

/// Options for `c2p_prove_start` and `c2p_prove`. Zero-initialised means
/// the defaults.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct c2p_prove_options {
    /// Witness scalars, r and s are canonical little-endian integers instead
    /// of Montgomery form (each must be below the field modulus).
    pub canonical_scalars: bool,
    /// When the host memory budget is full, fail with C2P_ERR_BUSY instead
    /// of waiting for jobs in flight to end.
    pub no_wait: bool,
    /// The GPUs this job may use, bit d for GPU d; 0 means all. A job's
    /// circuits spread over them. A mask naming no GPU of the machine is
    /// C2P_ERR_INVALID_ARGUMENT; without GPUs it is ignored.
    pub device_mask: u64,
    /// The device budget in bytes of the GPUs `device_mask` allows, set
    /// before the job starts (as `c2p_params_options.device_budget`); 0
    /// leaves it. A budget below what any plan needs is
    /// C2P_ERR_OUT_OF_MEMORY, with the size it needs in the message.
    pub device_budget: u64,
}

pub(crate) static PARAMS: Registry<Arc<Parameters>> = Registry::new("c2p_params");
static JOBS: Registry<Job> = Registry::new("c2p_job");

pub(crate) fn token<T>(handle: *const T) -> u64 {
    handle as usize as u64
}

pub(crate) fn handle<T>(token: u64) -> *mut T {
    token as usize as *mut T
}

pub(crate) fn params_of(params: *const c2p_params) -> Result<Arc<Parameters>, Error> {
    non_null(params, "params")?;
    PARAMS.with(token(params), Arc::clone)
}

/// The library version, e.g. "0.1.0". Static; never free it. Thread-safe.
#[no_mangle]
pub extern "C" fn c2p_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The name of a status code ("C2P_OK", "C2P_ERR_IO", ...), or
/// "C2P_UNKNOWN_STATUS". Static; never free it. Thread-safe.
#[no_mangle]
pub extern "C" fn c2p_status_name(status: i32) -> *const c_char {
    // The names of ErrorKind's codes, made once (static for the process).
    static NAMES: once_cell::sync::Lazy<Vec<std::ffi::CString>> = once_cell::sync::Lazy::new(|| {
        crate::error::ErrorKind::ALL
            .iter()
            .map(|kind| super::c_string(&kind.c_name()))
            .collect()
    });
    match crate::error::ErrorKind::from_code(status) {
        Some(kind) => NAMES[kind.code() as usize - 1].as_ptr(),
        None if status == super::C2P_OK => c"C2P_OK".as_ptr(),
        None => c"C2P_UNKNOWN_STATUS".as_ptr(),
    }
}

/// Copies the message of the calling thread's last failed call into `buf`
/// (`buf_len` bytes, NUL-terminated, truncated to fit) and returns the full
/// message length without the NUL (0 when no call on this thread has failed).
/// `buf` may be NULL (or `buf_len` 0) to ask only for the length.
/// Thread-safe: each thread has its own last error.
#[no_mangle]
pub extern "C" fn c2p_last_error(buf: *mut c_char, buf_len: usize) -> usize {
    catch(|| Ok(copy_last_error(buf.cast(), buf_len))).unwrap_or(0)
}

/// Loads a parameters file (bellperson `Parameters::write` format) and
/// writes a handle to `*out`. `path` is a NUL-terminated file name; `opts`
/// may be NULL for the defaults. On failure `*out` is left untouched.
/// The handle is released with `c2p_params_free`. Thread-safe.
///
/// Returns C2P_OK, C2P_ERR_NULL_POINTER (path or out), C2P_ERR_IO (cannot
/// open or map), C2P_ERR_PARAMS_FORMAT (truncated, corrupted or inconsistent
/// file; the message names the section, point and byte offset),
/// C2P_ERR_PANIC.
#[no_mangle]
pub extern "C" fn c2p_params_load(
    path: *const c_char,
    opts: *const c2p_params_options,
    out: *mut *mut c2p_params,
) -> i32 {
    guard(|| {
        non_null(path, "path")?;
        non_null(out, "out")?;
        // SAFETY: non-NULL and, per the contract, NUL-terminated.
        let path = PathBuf::from(path_from_c(unsafe { CStr::from_ptr(path) }));
        let opts = options_or_default(opts);
        let residency = match opts.params_on_gpu {
            C2P_PARAMS_ON_GPU_AUTO => Residency::Auto,
            C2P_PARAMS_ON_GPU_ALWAYS => Residency::Always,
            C2P_PARAMS_ON_GPU_NEVER => Residency::Never,
            other => {
                return Err(Error::invalid(format!(
                    "params_on_gpu is {other}: use C2P_PARAMS_ON_GPU_AUTO, _ALWAYS or _NEVER"
                )))
            }
        };
        let options = LoadOptions {
            check_subgroup: opts.check_subgroup,
            residency,
        };
        crate::config::get()?;
        if opts.device_budget != 0 {
            backend::set_device_budget(&DeviceMask::ALL.devices()?, opts.device_budget as usize)?;
        }
        let params = if opts.use_cache {
            load_cached(&path, &options)?
        } else {
            Arc::new(Parameters::load(&path, &options)?)
        };
        write_out(out, handle(PARAMS.insert(params)));
        Ok(())
    })
}

/// The caller's options, or the defaults when `opts` is NULL.
fn options_or_default<T: Copy + Default>(opts: *const T) -> T {
    if opts.is_null() {
        T::default()
    } else {
        // SAFETY: non-NULL, points to a caller-owned options struct (read
        // unaligned: any address is accepted).
        unsafe { opts.read_unaligned() }
    }
}

#[cfg(unix)]
pub(crate) fn path_from_c(path: &CStr) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(path.to_bytes()).to_owned()
}

#[cfg(not(unix))]
pub(crate) fn path_from_c(path: &CStr) -> std::ffi::OsString {
    path.to_string_lossy().into_owned().into()
}

/// Releases a parameters handle. NULL is ignored; an unknown handle is
/// ignored (and logged). Jobs already started on these parameters keep
/// them alive until they end. Thread-safe.
#[no_mangle]
pub extern "C" fn c2p_params_free(params: *mut c2p_params) {
    PARAMS.free(token(params), "c2p_params_free");
}

/// Describes loaded parameters into `*out`. Thread-safe.
///
/// Returns C2P_OK, C2P_ERR_NULL_POINTER, C2P_ERR_BAD_STATE (unknown handle),
/// C2P_ERR_PANIC.
#[no_mangle]
pub extern "C" fn c2p_params_info(params: *const c2p_params, out: *mut c2p_params_info) -> i32 {
    guard(|| {
        let p = params_of(params)?;
        non_null(out, "out")?;
        write_out(
            out,
            c2p_params_info {
                domain_size: p.domain_size(),
                num_inputs: p.num_inputs(),
                num_aux: p.num_aux(),
                ic_len: p.vk.ic.len(),
                h_len: p.h.len(),
                l_len: p.l.len(),
                a_len: p.a.len(),
                b_g1_len: p.b_g1.len(),
                b_g2_len: p.b_g2.len(),
                host_bytes: p.host_bytes() as u64,
                device_bytes: backend::resident_bytes(&p) as u64,
            },
        );
        Ok(())
    })
}

fn start(
    params: *const c2p_params,
    circuits: *const c2p_assignment,
    n_circuits: usize,
    r: *const u8,
    s: *const u8,
    opts: *const c2p_prove_options,
) -> Result<Job, Error> {
    let params = params_of(params)?;
    let opts = options_or_default(opts);
    let assignments = borrow_assignments(circuits, n_circuits)?;
    let (r, s) = r_and_s(r, s, n_circuits, opts.canonical_scalars)?;
    // Everything is checked before anything is copied or started, and the
    // budget admits the job before its copies are made.
    let devices = DeviceMask(opts.device_mask);
    let how = Admission {
        devices,
        device_budget: (opts.device_budget != 0).then_some(opts.device_budget as usize),
        wait: !opts.no_wait,
        copied: true,
    };
    let permit = admit(&params, &assignments, &r, &s, &how)?;
    let witnesses = assignments
        .iter()
        .map(|a| own(a, opts.canonical_scalars))
        .collect::<Result<Vec<_>, _>>()?;
    Job::start_admitted(params, witnesses, r, s, permit, devices, true)
}

/// Starts proving `n_circuits` circuits and writes a job handle to `*out`.
///
/// `r` and `s` are `n_circuits` × 32 bytes each (one per circuit, Montgomery
/// form like the witness, or canonical with `opts->canonical_scalars`), or
/// both NULL to draw them from the OS RNG. `opts` may be NULL.
///
/// Everything is validated before any work. When this returns, c2prover no
/// longer needs any input buffer: the caller may free or overwrite them.
/// The job is released by `c2p_prove_finish` or `c2p_job_free`. On failure
/// `*out` is untouched and nothing is left running. Thread-safe; many jobs
/// may run on one parameters handle at once.
///
/// Every witness value, r and s must be below the field modulus (in
/// Montgomery form or, with `canonical_scalars`, as integers); the values
/// are checked on all cores before anything is copied.
///
/// Returns C2P_OK, C2P_ERR_NULL_POINTER, C2P_ERR_INVALID_ARGUMENT (zero
/// circuits, r without s, a witness value, r or s not below the modulus),
/// C2P_ERR_SIZE_MISMATCH
/// (witness against parameters, bit lengths, popcounts, abc_size above the
/// domain), C2P_ERR_BAD_STATE (unknown parameters handle), C2P_ERR_BUSY
/// (the budget is full and `opts->no_wait` is set), C2P_ERR_OUT_OF_MEMORY,
/// C2P_ERR_PANIC.
///
/// Backpressure: a job is admitted only while the host memory budget (see
/// `c2p_set_host_budget`) has room for its copies of the inputs and its
/// working set; otherwise this call waits for jobs in flight to end (or,
/// with `opts->no_wait`, returns C2P_ERR_BUSY). A job gives its share back
/// when its proofs are done, before `c2p_prove_finish` collects them.
#[no_mangle]
pub extern "C" fn c2p_prove_start(
    params: *const c2p_params,
    circuits: *const c2p_assignment,
    n_circuits: usize,
    r: *const u8,
    s: *const u8,
    opts: *const c2p_prove_options,
    out: *mut *mut c2p_job,
) -> i32 {
    guard(|| {
        non_null(out, "out")?;
        let job = start(params, circuits, n_circuits, r, s, opts)?;
        write_out(out, handle(JOBS.insert(job)));
        Ok(())
    })
}

fn write_proofs(job: Job, proofs: *mut u8, proofs_len: usize) -> Result<(), Error> {
    let expected = job.circuits() * Proof::COMPRESSED_BYTES;
    non_null(proofs, "proofs")?;
    if proofs_len != expected {
        return Err(Error::size_mismatch(format!(
            "proofs_len is {proofs_len}; {} circuits need {expected} bytes (192 each)",
            job.circuits()
        )));
    }
    let bytes: Vec<u8> = job.finish()?.iter().flat_map(|p| p.to_compressed()).collect();
    // SAFETY: `proofs` is non-NULL with `proofs_len` == bytes.len() writable bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), proofs, bytes.len()) };
    Ok(())
}

/// Waits for a job and writes its proofs: `n_circuits` compressed proofs of
/// 192 bytes each (bellperson's `Proof::write` bytes), so `proofs_len` must
/// be `n_circuits × 192`. The job is consumed whatever this returns; a job
/// passed again is reported as C2P_ERR_BAD_STATE. `proofs` is written only
/// on success. Thread-safe (each job is finished once).
///
/// Returns C2P_OK, C2P_ERR_NULL_POINTER, C2P_ERR_SIZE_MISMATCH (proofs_len),
/// C2P_ERR_BAD_STATE (unknown or already finished job), C2P_ERR_CANCELLED,
/// C2P_ERR_OUT_OF_MEMORY, C2P_ERR_GPU, C2P_ERR_PANIC.
#[no_mangle]
pub extern "C" fn c2p_prove_finish(job: *mut c2p_job, proofs: *mut u8, proofs_len: usize) -> i32 {
    guard(|| {
        non_null(job, "job")?;
        let job = JOBS.remove(token(job))?;
        write_proofs(job, proofs, proofs_len)
    })
}

/// Abandons a job at any stage: queued or running work is cancelled and its
/// memory released as soon as the worker notices. NULL and unknown handles
/// are ignored. Thread-safe.
#[no_mangle]
pub extern "C" fn c2p_job_free(job: *mut c2p_job) {
    JOBS.free(token(job), "c2p_job_free");
}

/// The host memory budget that bounds jobs in flight (see
/// `c2p_prove_start`), as `c2p_host_budget` reports it.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct c2p_budget_info {
    /// The limit in bytes.
    pub limit_bytes: u64,
    /// Bytes held by jobs in flight.
    pub in_use_bytes: u64,
    /// Jobs in flight (started, proofs not yet done).
    pub jobs: u64,
}

/// Sets the host memory budget for jobs in flight, in bytes; 0 restores the
/// default (the environment variable `C2P_HOST_BUDGET`, e.g. "64G", else
/// half of the machine's memory). Jobs already running are not affected;
/// waiting starts are re-examined at once. Thread-safe.
#[no_mangle]
pub extern "C" fn c2p_set_host_budget(bytes: u64) {
    let budget = host_budget();
    let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
    budget.set_limit(if bytes == 0 { default_host_budget() } else { bytes });
}

/// Describes the host memory budget into `*out`. Thread-safe.
///
/// Returns C2P_OK, C2P_ERR_NULL_POINTER.
#[no_mangle]
pub extern "C" fn c2p_host_budget(out: *mut c2p_budget_info) -> i32 {
    guard(|| {
        non_null(out, "out")?;
        let budget = host_budget();
        let (used, jobs) = budget.in_use();
        write_out(
            out,
            c2p_budget_info {
                limit_bytes: budget.limit() as u64,
                in_use_bytes: used as u64,
                jobs: jobs as u64,
            },
        );
        Ok(())
    })
}

/// `c2p_prove_start` then `c2p_prove_finish`: proves and writes
/// `n_circuits × 192` bytes of compressed proofs to `proofs`. Arguments,
/// ownership and statuses as those two functions. Thread-safe.
#[no_mangle]
pub extern "C" fn c2p_prove(
    params: *const c2p_params,
    circuits: *const c2p_assignment,
    n_circuits: usize,
    r: *const u8,
    s: *const u8,
    opts: *const c2p_prove_options,
    proofs: *mut u8,
    proofs_len: usize,
) -> i32 {
    guard(|| {
        non_null(proofs, "proofs")?;
        let expected = n_circuits.saturating_mul(Proof::COMPRESSED_BYTES);
        if proofs_len != expected {
            return Err(Error::size_mismatch(format!(
                "proofs_len is {proofs_len}; {n_circuits} circuits need {expected} bytes (192 each)"
            )));
        }
        let job = start(params, circuits, n_circuits, r, s, opts)?;
        write_proofs(job, proofs, proofs_len)
    })
}

/// Verifies a 192-byte compressed proof against `n_inputs` public inputs
/// (32 bytes each, Montgomery form, without the leading ONE) and writes the
/// verdict to `*valid`. A well-formed proof that does not verify is C2P_OK
/// with `*valid = false`. Thread-safe.
///
/// Returns C2P_OK, C2P_ERR_NULL_POINTER, C2P_ERR_SIZE_MISMATCH (n_inputs
/// against the parameters), C2P_ERR_INVALID_ARGUMENT (a proof point not on
/// its curve or subgroup, an input not below the modulus),
/// C2P_ERR_BAD_STATE, C2P_ERR_PANIC.
#[no_mangle]
pub extern "C" fn c2p_verify(
    params: *const c2p_params,
    public_inputs: *const u8,
    n_inputs: usize,
    proof: *const u8,
    valid: *mut bool,
) -> i32 {
    guard(|| {
        let params = params_of(params)?;
        let len = n_inputs
            .checked_mul(32)
            .ok_or_else(|| Error::invalid("n_inputs is too large"))?;
        let inputs = slice(public_inputs, len, "public_inputs")?;
        let proof = slice(proof, Proof::COMPRESSED_BYTES, "proof")?;
        non_null(valid, "valid")?;
        let proof = Proof::from_compressed(proof)?;
        let inputs = read_scalars(inputs, false, "public_inputs")?;
        let ok = crate::verify::verify(&params.vk, &inputs, &proof)?;
        write_out(valid, ok);
        Ok(())
    })
}
