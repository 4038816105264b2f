//! The C ABI: the native `c2p_*` API and the supraseal-compatible symbols.
//!
//! Every export runs inside `guard`, the panic boundary: a panic becomes
//! `C2P_ERR_PANIC` with its message and the caller's process lives on.
//! Pointer arguments are checked for NULL and lengths against each other
//! before anything is read; outputs are written only on success.
//!
//! The functions are `extern "C" fn`, not `unsafe extern "C" fn`: like
//! rustls-ffi they check what they are given, and Rust callers (the tests)
//! call them exactly as C does, with raw pointers and no `unsafe`.

// C names: `c2p_params`, `create_SRS`, as C callers spell them.
#![allow(non_camel_case_types, non_snake_case)]
#![allow(clippy::not_unsafe_ptr_arg_deref)]

mod handles;
pub mod native;
pub mod seal;
#[cfg(feature = "supraseal-abi")]
pub mod supraseal;
mod witness;

use crate::error::panic_message;
use crate::error::{Error, ErrorKind};
use std::cell::RefCell;
use std::ffi::CString;

/// Bytes of one compressed proof (bellperson's `Proof::write`).
pub const C2P_PROOF_BYTES: usize = 192;
/// Bytes of one raw affine proof (supraseal's `groth16_proof`).
pub const C2P_RAW_PROOF_BYTES: usize = 384;
/// Bytes of one scalar (r, s, public inputs, witness values).
pub const C2P_FR_BYTES: usize = 32;

/// `c2p_params_options.params_on_gpu`: keep the points on the GPU when it
/// has room, else stream them (the environment variable `C2P_PARAMS_ON_GPU`
/// may choose instead).
pub const C2P_PARAMS_ON_GPU_AUTO: u32 = 0;
/// Upload the points to the GPU whatever its free memory (streaming if the
/// upload fails).
pub const C2P_PARAMS_ON_GPU_ALWAYS: u32 = 1;
/// Stream the points from host memory for every MSM.
pub const C2P_PARAMS_ON_GPU_NEVER: u32 = 2;

/// Success.
pub const C2P_OK: i32 = 0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = guard(|| panic!("boom at the boundary"));
        assert_eq!(status, ErrorKind::Panic.code());
        let mut buf = [0u8; 128];
        let n = copy_last_error(buf.as_mut_ptr(), buf.len());
        let text = std::str::from_utf8(&buf[..n]).unwrap();
        assert!(text.contains("boom at the boundary"), "{text}");
        // The thread (and process) carry on: the next call works.
        assert_eq!(guard(|| Ok(())), C2P_OK);
        let status = guard(|| {
            let v: Vec<u8> = Vec::new();
            let _ = v[3]; // an index panic with a formatted message
            Ok(())
        });
        assert_eq!(status, ErrorKind::Panic.code());
    }

    #[cfg(feature = "supraseal-abi")]
    #[test]
    fn a_panic_in_a_supraseal_symbol_is_an_error_value() {
        let err = supraseal::guard(|| panic!("supraseal boom"));
        assert_ne!(err.code, 0);
        let text = string_from_c(err.message).unwrap();
        assert!(text.contains("supraseal boom"), "{text}");
        supraseal::c2p_supraseal_error_free(err.message);
    }
}

thread_local! {
    /// The message of this thread's last failure.
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// A C string of `message` (interior NULs replaced, so it never fails).
pub(crate) fn c_string(message: &str) -> CString {
    CString::new(message.replace('\0', "\u{FFFD}")).unwrap_or_default()
}

fn set_last_error(message: &str) {
    // try_with: during thread teardown the slot may be gone; the message is
    // then dropped rather than panicking outside the boundary.
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = Some(c_string(message)));
}

/// Copies the last error into `buf`; see `c2p_last_error`.
pub(crate) fn copy_last_error(buf: *mut u8, buf_len: usize) -> usize {
    LAST_ERROR
        .try_with(|slot| {
            let slot = slot.borrow();
            let Some(message) = slot.as_ref() else {
                if !buf.is_null() && buf_len > 0 {
                    write_bytes(buf, &[0]);
                }
                return 0;
            };
            let bytes = message.as_bytes();
            if !buf.is_null() && buf_len > 0 {
                let n = bytes.len().min(buf_len - 1);
                let mut out = bytes[..n].to_vec();
                out.push(0);
                write_bytes(buf, &out);
            }
            bytes.len()
        })
        .unwrap_or(0)
}

fn write_bytes(dst: *mut u8, src: &[u8]) {
    // SAFETY: callers pass a non-NULL `dst` with room for `src.len()` bytes
    // (checked against the caller's stated length).
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
}

/// The panic boundary and error recorder around every export that returns
/// a status: runs `work`, records a failure's message for `c2p_last_error`,
/// and returns its status code.
pub(crate) fn guard(work: impl FnOnce() -> Result<(), Error>) -> i32 {
    match catch(work) {
        Ok(()) => C2P_OK,
        Err(e) => {
            log::debug!("c2p call failed: {}", e.message);
            set_last_error(&e.message);
            e.kind.code()
        }
    }
}

/// Runs `work`, turning a panic into an `ErrorKind::Panic` error.
pub(crate) fn catch<T>(work: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .unwrap_or_else(|panic| Err(Error::new(ErrorKind::Panic, panic_message(&*panic))))
}

/// Fails with `C2P_ERR_NULL_POINTER` naming the argument when `ptr` is NULL.
pub(crate) fn non_null<T>(ptr: *const T, name: &str) -> Result<(), Error> {
    if ptr.is_null() {
        Err(Error::new(ErrorKind::NullPointer, format!("`{name}` is NULL")))
    } else {
        Ok(())
    }
}

/// Borrows `len` elements at `ptr`; NULL is allowed only when `len` is 0.
pub(crate) fn slice<'a, T>(ptr: *const T, len: usize, name: &str) -> Result<&'a [T], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    non_null(ptr, name)?;
    if ptr.align_offset(std::mem::align_of::<T>()) != 0 {
        return Err(Error::invalid(format!(
            "`{name}` is not aligned for its element type"
        )));
    }
    len.checked_mul(std::mem::size_of::<T>())
        .filter(|&bytes| bytes <= isize::MAX as usize)
        .ok_or_else(|| Error::invalid(format!("`{name}` length {len} is too large")))?;
    // SAFETY: non-NULL, aligned, and the caller promises `len` readable
    // elements that stay valid and unmodified for the duration of the call.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Reads a NUL-terminated string returned by this API (`c2p_version`,
/// `c2p_status_name`, supraseal error messages), for Rust callers and tests.
/// NULL gives `None`. The pointer must come from one of those functions.
pub fn string_from_c(p: *const std::ffi::c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL and, per the contract, a NUL-terminated string this
    // library returned (static, or malloc'd and not yet freed).
    Some(
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Writes `value` to a caller's output pointer (checked non-NULL first),
/// aligned or not.
pub(crate) fn write_out<T>(out: *mut T, value: T) {
    // SAFETY: `out` was checked non-NULL by the caller of this helper and
    // points to writable memory for one `T` per the function's contract;
    // an unaligned write accepts any address.
    unsafe { out.write_unaligned(value) };
}
