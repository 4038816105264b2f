//! The supraseal-compatible symbols (Cargo feature `supraseal-abi`, on by
//! default): the names, layouts and semantics of supraseal C2 and Curio's
//! fork of it, implemented on c2prover.
//!
//! Differences from the peers, all on the side of not crashing the caller:
//! size checks return errors instead of asserting; a failed start hands out
//! no handle; handles are checked, so a destroyed SRS or pending proof
//! passed again is an error rather than a use-after-free; a witness value
//! not below the modulus is an error (EINVAL), not a wrong proof.
//!
//! Memory: the synchronous calls prove on the caller's buffers (no copy);
//! the split form copies them, so that they may be freed once it returns.
//!
//! Signatures: upstream's synchronous `generate_groth16_proofs_c` takes 6
//! arguments; Curio's takes two more (`gpu_mtx`, `gpu_index`). The 6-argument
//! form keeps the name; the 8-argument form is
//! `generate_groth16_proofs_curio_c`. The GPU mutex is accepted and ignored:
//! c2prover needs no process-wide lock.

use super::handles::Registry;
use super::native::{c2p_assignment, c2p_fr, handle, path_from_c, token};
use super::witness::{borrow_assignments, own};
use super::{catch, non_null, slice, write_out};
use crate::engine::{admit, prove_cancellable, Admission, DeviceMask, Job, Permit};
use crate::error::{Error, ErrorKind};
use crate::groth16::Assignment;
use crate::math::Fr;
use crate::params::{evict_cached, load_cached, LoadOptions, Parameters};
use crate::proof::Proof;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// supraseal's error, returned by value: `code` 0 is success, positive is
/// errno-style, negative a negated CUDA error. `message` is NULL or a
/// malloc'd NUL-terminated string the caller frees with `free()`.
#[repr(C)]
pub struct c2p_supraseal_error {
    pub code: c_int,
    pub message: *mut c_char,
}

/// supraseal's SRS: one word naming loaded parameters. Functions take it by
/// reference (a pointer to this struct).
#[repr(C)]
pub struct c2p_supraseal_srs {
    pub ptr: *mut c_void,
}

/// supraseal's `groth16_proof`: A (G1), B (G2), C (G1) as affine points,
/// Montgomery limbs (blst's in-memory layout), 384 bytes, identical to
/// bellperson's `#[repr(C)] Proof<Bls12>` over blstrs.
#[repr(C)]
pub struct c2p_supraseal_proof {
    pub a: [u64; 12],
    pub b: [u64; 24],
    pub c: [u64; 12],
}

/// errno values used for our error kinds (supraseal's codes are errno-style).
fn errno_of(kind: ErrorKind) -> c_int {
    match kind {
        ErrorKind::NullPointer | ErrorKind::InvalidArgument | ErrorKind::SizeMismatch => libc::EINVAL,
        ErrorKind::Io => libc::EIO,
        ErrorKind::ParamsFormat => libc::EILSEQ,
        ErrorKind::OutOfMemory => libc::ENOMEM,
        ErrorKind::Gpu => libc::ENODEV,
        ErrorKind::Busy => libc::EBUSY,
        ErrorKind::Cancelled => libc::ECANCELED,
        ErrorKind::BadState => libc::EBADF,
        ErrorKind::Panic => libc::EFAULT,
        ErrorKind::Unsupported => libc::ENOTSUP,
    }
}

/// A malloc'd copy of `text` (what the caller frees with `free()`), or NULL
/// when malloc fails.
fn malloc_string(text: &str) -> *mut c_char {
    let c = super::c_string(text);
    let bytes = c.as_bytes_with_nul();
    // SAFETY: malloc of a positive size; checked for NULL before writing.
    let ptr = unsafe { libc::malloc(bytes.len()) }.cast::<u8>();
    if !ptr.is_null() {
        // SAFETY: `ptr` has room for `bytes.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len()) };
    }
    ptr.cast()
}

/// The panic boundary for these symbols: the outcome as supraseal's error.
pub(crate) fn guard(work: impl FnOnce() -> Result<(), Error>) -> c2p_supraseal_error {
    match catch(work) {
        Ok(()) => c2p_supraseal_error {
            code: 0,
            message: std::ptr::null_mut(),
        },
        Err(e) => c2p_supraseal_error {
            code: errno_of(e.kind),
            message: malloc_string(&e.message),
        },
    }
}

/// Loaded parameters and the path they came from (for `evict_SRS`).
struct Srs {
    params: Arc<Parameters>,
    path: PathBuf,
}

static SRS: Registry<Srs> = Registry::new("SRS");
static PENDING: Registry<Job> = Registry::new("pending proof");
static GPU_MUTEXES: Registry<()> = Registry::new("gpu mutex");

/// The handle in the caller's SRS word (checked non-NULL first).
fn srs_word(srs: *const c2p_supraseal_srs) -> Result<*mut c_void, Error> {
    non_null(srs, "srs")?;
    // SAFETY: non-NULL, points to the caller's SRS word.
    Ok(unsafe { std::ptr::addr_of!((*srs).ptr).read_unaligned() })
}

fn srs_params(srs: *const c2p_supraseal_srs) -> Result<Arc<Parameters>, Error> {
    let word = srs_word(srs)?;
    non_null(word, "srs->ptr")?;
    SRS.with(token(word), |s| s.params.clone())
}

/// Loads parameters from `path` into `*ret`. With `cache`, loaded
/// parameters are kept in a small cache keyed by file and reused.
#[no_mangle]
pub extern "C" fn create_SRS(
    ret: *mut c2p_supraseal_srs,
    path: *const c_char,
    cache: bool,
) -> c2p_supraseal_error {
    guard(|| {
        non_null(ret, "ret")?;
        non_null(path, "path")?;
        // SAFETY: non-NULL and, per the contract, NUL-terminated.
        let path = PathBuf::from(path_from_c(unsafe { CStr::from_ptr(path) }));
        let options = LoadOptions::default();
        let params = if cache {
            load_cached(&path, &options)?
        } else {
            Arc::new(Parameters::load(&path, &options)?)
        };
        let srs = SRS.insert(Srs { params, path });
        write_out(ret, c2p_supraseal_srs { ptr: handle(srs) });
        Ok(())
    })
}

/// Drops the cache's copy of this SRS's file (handles stay usable).
#[no_mangle]
pub extern "C" fn evict_SRS(srs: *const c2p_supraseal_srs) {
    let _ = catch(|| {
        let path = SRS.with(token(srs_word(srs)?), |s| s.path.clone())?;
        evict_cached(&path);
        Ok(())
    });
}

/// Releases this reference (the parameters are freed with the last one)
/// and clears the word. NULL and unknown handles are ignored.
#[no_mangle]
pub extern "C" fn drop_SRS(srs: *mut c2p_supraseal_srs) {
    let _ = catch(|| {
        SRS.free(token(srs_word(srs)?), "drop_SRS");
        // SAFETY: non-NULL (checked by srs_word); the word is cleared so a
        // second drop is a no-op.
        unsafe { std::ptr::addr_of_mut!((*srs).ptr).write_unaligned(std::ptr::null_mut()) };
        Ok(())
    });
}

/// A new reference to the same parameters (NULL word when `srs` is unknown).
#[no_mangle]
pub extern "C" fn clone_SRS(srs: *const c2p_supraseal_srs) -> c2p_supraseal_srs {
    catch(|| {
        let copy = SRS.with(token(srs_word(srs)?), |s| Srs {
            params: s.params.clone(),
            path: s.path.clone(),
        })?;
        Ok(c2p_supraseal_srs {
            ptr: handle(SRS.insert(copy)),
        })
    })
    .unwrap_or(c2p_supraseal_srs {
        ptr: std::ptr::null_mut(),
    })
}

fn montgomery(values: *const c2p_fr, n: usize, name: &str) -> Result<Vec<Fr>, Error> {
    let raw = slice(values.cast::<[u64; 4]>(), n, name)?;
    let values = Fr::slice_from_limbs(raw);
    if let Some(i) = values.iter().position(|v| !v.is_reduced()) {
        return Err(Error::invalid(format!(
            "{name}[{i}] is not below the field modulus"
        )));
    }
    Ok(values.to_vec())
}

/// A supraseal call's arguments, read and checked against each other.
struct Call<'a> {
    params: Arc<Parameters>,
    assignments: Vec<Assignment<'a>>,
    r: Vec<Fr>,
    s: Vec<Fr>,
    devices: DeviceMask,
}

impl Call<'_> {
    /// The call through the engine's one admission path: supraseal's calls
    /// block while the host budget is full.
    fn admit(&self, copied: bool) -> Result<Permit, Error> {
        let how = Admission {
            devices: self.devices,
            device_budget: None,
            wait: true,
            copied,
        };
        admit(&self.params, &self.assignments, &self.r, &self.s, &how)
    }
}

/// Reads a supraseal call's arguments (the caller's buffers are borrowed).
fn read_call<'a>(
    provers: *const c2p_assignment,
    n: usize,
    r_s: *const c2p_fr,
    s_s: *const c2p_fr,
    srs: *const c2p_supraseal_srs,
    gpu_index: c_int,
) -> Result<Call<'a>, Error> {
    let devices = DeviceMask::only(i64::from(gpu_index))?;
    let params = srs_params(srs)?;
    let assignments: Vec<Assignment> = borrow_assignments(provers, n)?;
    let r = montgomery(r_s, n, "r_s")?;
    let s = montgomery(s_s, n, "s_s")?;
    Ok(Call {
        params,
        assignments,
        r,
        s,
        devices,
    })
}

/// The split form: checks every witness value, then copies the witnesses
/// (the caller may free them when this returns) and starts the job.
/// supraseal's calls block; so does this one while the budget is full.
fn start(call: Call) -> Result<Job, Error> {
    let permit = call.admit(true)?;
    let witnesses = call
        .assignments
        .iter()
        .map(|a| own(a, false))
        .collect::<Result<Vec<_>, _>>()?;
    Job::start_admitted(call.params, witnesses, call.r, call.s, permit, call.devices, true)
}

/// The synchronous form: proves on the caller's buffers, which stay valid
/// for the call, instead of copying them (16 GiB per 2^27 partition). The
/// budget holds only the working set; each circuit's values are checked
/// when its turn comes.
fn prove_now(call: Call) -> Result<Vec<Proof>, Error> {
    let _permit = call.admit(false)?;
    prove_cancellable(
        &call.params,
        &call.assignments,
        &call.r,
        &call.s,
        &AtomicBool::new(false),
        call.devices,
    )
}

fn write_raw_proofs(proved: Vec<Proof>, proofs: *mut c2p_supraseal_proof) -> Result<(), Error> {
    non_null(proofs, "proofs")?;
    let raw: Vec<u8> = proved.iter().flat_map(Proof::to_raw).collect();
    debug_assert_eq!(
        raw.len(),
        proved.len() * std::mem::size_of::<c2p_supraseal_proof>()
    );
    // SAFETY: `proofs` is non-NULL and, per the contract, has room for
    // one 384-byte proof per circuit.
    unsafe { std::ptr::copy_nonoverlapping(raw.as_ptr(), proofs.cast::<u8>(), raw.len()) };
    Ok(())
}

/// Upstream supraseal: proves `num_circuits` circuits synchronously and
/// writes 384-byte raw proofs. `r_s`, `s_s`: one Montgomery scalar each per circuit.
#[no_mangle]
pub extern "C" fn generate_groth16_proofs_c(
    provers: *const c2p_assignment,
    num_circuits: usize,
    r_s: *const c2p_fr,
    s_s: *const c2p_fr,
    proofs: *mut c2p_supraseal_proof,
    srs: *mut c2p_supraseal_srs,
) -> c2p_supraseal_error {
    guard(|| {
        non_null(proofs, "proofs")?;
        let call = read_call(provers, num_circuits, r_s, s_s, srs, -1)?;
        write_raw_proofs(prove_now(call)?, proofs)
    })
}

/// Curio's synchronous form with `gpu_mtx` (NULL or from `create_gpu_mutex`;
/// not needed) and `gpu_index` (the GPU to use, -1 for any: a job's
/// circuits then spread over all GPUs); otherwise as
/// `generate_groth16_proofs_c`.
#[no_mangle]
pub extern "C" fn generate_groth16_proofs_curio_c(
    provers: *const c2p_assignment,
    num_circuits: usize,
    r_s: *const c2p_fr,
    s_s: *const c2p_fr,
    proofs: *mut c2p_supraseal_proof,
    srs: *mut c2p_supraseal_srs,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
) -> c2p_supraseal_error {
    let _ = gpu_mtx; // accepted for compatibility, not needed
    guard(|| {
        non_null(proofs, "proofs")?;
        let call = read_call(provers, num_circuits, r_s, s_s, srs, gpu_index)?;
        write_raw_proofs(prove_now(call)?, proofs)
    })
}

/// Curio's split API: starts proving and writes a pending handle to
/// `*pending_out`; the witness buffers may be freed as soon as this
/// returns. On failure no handle is written.
#[no_mangle]
pub extern "C" fn generate_groth16_proofs_start_c(
    provers: *const c2p_assignment,
    num_circuits: usize,
    r_s: *const c2p_fr,
    s_s: *const c2p_fr,
    srs: *mut c2p_supraseal_srs,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
    pending_out: *mut *mut c_void,
) -> c2p_supraseal_error {
    let _ = gpu_mtx; // accepted for compatibility, not needed
    guard(|| {
        non_null(pending_out, "pending_out")?;
        let job = start(read_call(provers, num_circuits, r_s, s_s, srs, gpu_index)?)?;
        write_out(pending_out, handle(PENDING.insert(job)));
        Ok(())
    })
}

/// Waits for a pending proof and writes its raw proofs; consumes the handle
/// whatever it returns.
#[no_mangle]
pub extern "C" fn finalize_groth16_proof_c(
    pending: *mut c_void,
    proofs: *mut c2p_supraseal_proof,
) -> c2p_supraseal_error {
    guard(|| {
        non_null(pending, "pending")?;
        let job = PENDING.remove(token(pending))?;
        non_null(proofs, "proofs")?;
        write_raw_proofs(job.finish()?, proofs)
    })
}

/// Abandons a pending proof (NULL and unknown handles are ignored).
#[no_mangle]
pub extern "C" fn destroy_pending_proof(pending: *mut c_void) {
    PENDING.free(token(pending), "destroy_pending_proof");
}

/// Frees the `message` of a `c2p_supraseal_error` (the same as `free()`,
/// for callers that cannot reach the C library's `free`). NULL is ignored.
#[no_mangle]
pub extern "C" fn c2p_supraseal_error_free(message: *mut c_char) {
    if !message.is_null() {
        // SAFETY: `message` came from `malloc_string`, i.e. from malloc.
        unsafe { libc::free(message.cast()) };
    }
}

/// A GPU mutex handle for Curio's API. c2prover needs no lock between
/// callers, so this is a token that is accepted and otherwise unused.
#[no_mangle]
pub extern "C" fn create_gpu_mutex() -> *mut c_void {
    catch(|| Ok(handle(GPU_MUTEXES.insert(())))).unwrap_or(std::ptr::null_mut())
}

/// Releases a handle from `create_gpu_mutex` (NULL and unknown are ignored).
#[no_mangle]
pub extern "C" fn destroy_gpu_mutex(mtx: *mut c_void) {
    GPU_MUTEXES.free(token(mtx), "destroy_gpu_mutex");
}
