//! The whole C2 job in C: filecoin-ffi's `SealCommitPhase2` inputs (the C1
//! output as JSON, the prover id, the sector id) to its proof bytes, in one
//! call or split into start and finish. The symbols exist in every build;
//! without the Cargo feature `porep` they return `C2P_ERR_UNSUPPORTED`.

use super::handles::Registry;
use super::native::{handle, path_from_c, token};
use super::{catch, guard, non_null, slice, write_out};
use crate::error::Error;
use once_cell::sync::Lazy;
use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, CStr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Options of `c2p_seal_commit_phase2` and `c2p_seal_start`.
/// Zero-initialised (or a NULL pointer) means the defaults, which are what
/// filecoin-ffi's `SealCommitPhase2` does.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct c2p_seal_options {
    /// The directory of the parameters (`.params`) and verifying keys
    /// (`.vk`), named as filecoin-proofs names them; NUL-terminated,
    /// borrowed for the call. NULL: `$FIL_PROOFS_PARAMETER_CACHE`, else
    /// `/var/tmp/filecoin-proof-parameters`.
    pub params_dir: *const c_char,
    /// The GPUs the partitions may use, bit d for GPU d; 0 means all.
    pub device_mask: u64,
    /// When the host memory budget cannot take the first partition now,
    /// fail with C2P_ERR_BUSY instead of waiting.
    pub no_wait: bool,
    /// Skip verify-after-prove. By default every partition's proof is
    /// checked against the `.vk` beside the parameters (a missing `.vk` is
    /// then C2P_ERR_IO) and a proof that does not verify is an error, never
    /// returned.
    pub skip_verify: bool,
}

impl Default for c2p_seal_options {
    fn default() -> Self {
        c2p_seal_options {
            params_dir: std::ptr::null(),
            device_mask: 0,
            no_wait: false,
            skip_verify: false,
        }
    }
}

/// A C2 job started by `c2p_seal_start` (opaque).
pub struct c2p_seal_job {
    _opaque: [u8; 0],
}

/// Proves a sector's C2: `c1_json` (`c1_len` bytes) is filecoin-proofs-
/// api's `SealCommitPhase1Output` serialised as JSON, what filecoin-ffi's
/// `SealCommitPhase2` receives; `prover_id` points to 32 bytes (filecoin-
/// ffi's: the miner's ID-address payload, zero-padded); `opts` may be NULL.
///
/// On success `*proof_out` holds `*proof_len` bytes, the proof filecoin-ffi
/// returns (192 per partition, in partition order), owned by the caller and
/// released with `c2p_bytes_free(*proof_out, *proof_len)`. On failure the
/// outputs are untouched. Blocks until the proof is made. Thread-safe; jobs
/// in flight share the host memory budget.
///
/// Returns C2P_OK, C2P_ERR_NULL_POINTER, C2P_ERR_INVALID_ARGUMENT
/// (malformed JSON, a C1 output of another prover or sector id, a wrong
/// partition count, a proof that does not verify), C2P_ERR_UNSUPPORTED
/// (non-interactive PoRep, an unknown proof type, or a library built
/// without the `porep` feature), C2P_ERR_IO (no parameters file or `.vk`),
/// C2P_ERR_PARAMS_FORMAT, C2P_ERR_SIZE_MISMATCH (parameters of another
/// circuit), C2P_ERR_BUSY (`no_wait`), C2P_ERR_OUT_OF_MEMORY, C2P_ERR_GPU,
/// C2P_ERR_PANIC.
#[no_mangle]
pub extern "C" fn c2p_seal_commit_phase2(
    c1_json: *const u8,
    c1_len: usize,
    prover_id: *const u8,
    sector_id: u64,
    opts: *const c2p_seal_options,
    proof_out: *mut *mut u8,
    proof_len: *mut usize,
) -> i32 {
    guard(|| {
        non_null(proof_out, "proof_out")?;
        non_null(proof_len, "proof_len")?;
        let job = start(c1_json, c1_len, prover_id, sector_id, opts)?;
        hand_over(job.finish()?, proof_out, proof_len);
        Ok(())
    })
}

/// The first half of `c2p_seal_commit_phase2`: returns once the C1 output is
/// parsed and checked and the job holds its own copy of everything (the
/// caller may then free its buffers), with a job handle in `*out`. The
/// partitions are synthesized and proved in the background. The job is
/// released by `c2p_seal_finish` or `c2p_seal_job_free`. Same inputs and
/// statuses as `c2p_seal_commit_phase2`; on failure `*out` is untouched and
/// nothing runs. Thread-safe.
#[no_mangle]
pub extern "C" fn c2p_seal_start(
    c1_json: *const u8,
    c1_len: usize,
    prover_id: *const u8,
    sector_id: u64,
    opts: *const c2p_seal_options,
    out: *mut *mut c2p_seal_job,
) -> i32 {
    guard(|| {
        non_null(out, "out")?;
        let job = start(c1_json, c1_len, prover_id, sector_id, opts)?;
        write_out(out, handle(SEAL_JOBS.insert(job)));
        Ok(())
    })
}

/// Waits for a job and hands over its proof as `c2p_seal_commit_phase2`
/// does. Once the arguments are checked (non-NULL) the job is consumed,
/// whatever this returns; passed again it is C2P_ERR_BAD_STATE. Another
/// thread may cancel the wait with `c2p_seal_job_free` (then
/// C2P_ERR_CANCELLED). Thread-safe (each job is finished once).
#[no_mangle]
pub extern "C" fn c2p_seal_finish(
    job: *mut c2p_seal_job,
    proof_out: *mut *mut u8,
    proof_len: *mut usize,
) -> i32 {
    guard(|| {
        non_null(job, "job")?;
        non_null(proof_out, "proof_out")?;
        non_null(proof_len, "proof_len")?;
        let token = token(job);
        let job = {
            // FINISHING before SEAL_JOBS, here and in `c2p_seal_job_free`: a
            // free never falls between the job leaving one and entering the other.
            let mut finishing = finishing();
            let job = SEAL_JOBS.remove(token)?;
            finishing.insert(token, job.cancel_flag());
            job
        };
        let outcome = job.finish();
        finishing().remove(&token);
        hand_over(outcome?, proof_out, proof_len);
        Ok(())
    })
}

/// Abandons a C2 job at any stage, including while another thread waits
/// for it in `c2p_seal_finish`: synthesis and proving stop as soon as they
/// notice, and its memory is released. NULL and unknown handles are
/// ignored. Thread-safe.
#[no_mangle]
pub extern "C" fn c2p_seal_job_free(job: *mut c2p_seal_job) {
    let token = token(job);
    let finishing = finishing();
    match finishing.get(&token) {
        Some(flag) => flag.store(true, Ordering::Relaxed),
        None => SEAL_JOBS.free(token, "c2p_seal_job_free"),
    }
}

/// Jobs that `c2p_seal_finish` is waiting for, by handle: their cancel flags.
static FINISHING: Lazy<Mutex<HashMap<u64, Arc<AtomicBool>>>> = Lazy::new(|| Mutex::new(HashMap::new()));

fn finishing() -> std::sync::MutexGuard<'static, HashMap<u64, Arc<AtomicBool>>> {
    FINISHING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Releases bytes this library handed over (`c2p_seal_commit_phase2`'s
/// proof), with the length it gave. NULL, and a pointer or length it did not
/// give, are ignored (and logged). Thread-safe.
#[no_mangle]
pub extern "C" fn c2p_bytes_free(bytes: *mut u8, len: usize) {
    if bytes.is_null() {
        return;
    }
    let freed = catch(|| {
        let known = GIVEN
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(bytes as usize, len));
        if !known {
            return Err(Error::new(
                crate::error::ErrorKind::BadState,
                format!("{bytes:p} ({len} bytes) was not handed over by c2prover, or was freed already"),
            ));
        }
        // SAFETY: `(bytes, len)` was recorded by `hand_over` from a boxed
        // slice of exactly `len` bytes and is removed from the record once, here.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(bytes, len)) });
        Ok(())
    });
    if let Err(e) = freed {
        log::warn!("c2p_bytes_free: {}", e.message);
    }
}

/// Byte buffers handed over to callers and not yet freed, by address and length.
static GIVEN: Lazy<Mutex<HashSet<(usize, usize)>>> = Lazy::new(|| Mutex::new(HashSet::new()));

fn hand_over(bytes: Vec<u8>, out: *mut *mut u8, len: *mut usize) {
    let n = bytes.len();
    let ptr = Box::into_raw(bytes.into_boxed_slice()).cast::<u8>();
    GIVEN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert((ptr as usize, n));
    write_out(out, ptr);
    write_out(len, n);
}

#[cfg(feature = "porep")]
type SealJob = crate::porep::SealJob;

#[cfg(not(feature = "porep"))]
struct SealJob;

#[cfg(not(feature = "porep"))]
impl SealJob {
    fn finish(self) -> Result<Vec<u8>, Error> {
        Err(unsupported())
    }

    fn cancel_flag(&self) -> Arc<AtomicBool> {
        Arc::default()
    }
}

static SEAL_JOBS: Registry<SealJob> = Registry::new("c2p_seal_job");

fn start(
    c1_json: *const u8,
    c1_len: usize,
    prover_id: *const u8,
    sector_id: u64,
    opts: *const c2p_seal_options,
) -> Result<SealJob, Error> {
    let c1_json = slice(c1_json, c1_len, "c1_json")?;
    non_null(prover_id, "prover_id")?;
    let prover_id: [u8; 32] = slice(prover_id, 32, "prover_id")?
        .try_into()
        .map_err(|_| Error::invalid("prover_id is not 32 bytes"))?;
    let opts = if opts.is_null() {
        c2p_seal_options::default()
    } else {
        // SAFETY: non-NULL, a caller-owned options struct (read unaligned).
        unsafe { opts.read_unaligned() }
    };
    let params_dir = if opts.params_dir.is_null() {
        None
    } else {
        // SAFETY: non-NULL and, per the contract, NUL-terminated.
        Some(PathBuf::from(path_from_c(unsafe {
            CStr::from_ptr(opts.params_dir)
        })))
    };
    seal_start(c1_json, prover_id, sector_id, params_dir, &opts)
}

#[cfg(feature = "porep")]
fn seal_start(
    c1_json: &[u8],
    prover_id: [u8; 32],
    sector_id: u64,
    params_dir: Option<PathBuf>,
    opts: &c2p_seal_options,
) -> Result<SealJob, Error> {
    let opts = crate::porep::SealOptions {
        params_dir,
        devices: crate::engine::DeviceMask(opts.device_mask),
        no_wait: opts.no_wait,
        verify: !opts.skip_verify,
        ..crate::porep::SealOptions::default()
    };
    SealJob::start(c1_json, prover_id, sector_id, &opts)
}

#[cfg(not(feature = "porep"))]
fn seal_start(
    _: &[u8],
    _: [u8; 32],
    _: u64,
    _: Option<PathBuf>,
    _: &c2p_seal_options,
) -> Result<SealJob, Error> {
    Err(unsupported())
}

#[cfg(not(feature = "porep"))]
fn unsupported() -> Error {
    Error::new(
        crate::error::ErrorKind::Unsupported,
        "this c2prover was built without the `porep` feature: the C2 job needs it",
    )
}
