//! The H step on the GPU: from host or device a, b, c to h on the host or the device.
use super::buffers::{DeviceBuffer, DeviceScalars};
use super::device::MAX_LOG_M;
use super::sys::*;
use crate::backend::gpu::{Checked, HConstants, HTiming};
use crate::error::{Error, ErrorKind, Result};
use crate::math::domain::Domain;
use crate::math::Fr;
use std::ffi::{c_int, c_void};

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
            0,
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

/// A circuit's a, b, c on one GPU ahead of its H step, each zero-padded to
/// the domain (3 × 32 × m bytes), freed on drop unless an H step takes them.
pub struct DeviceAbc {
    bufs: [DeviceBuffer; 3],
    /// Entries of a, b, c before the padding.
    len: usize,
    log_m: u32,
}

impl DeviceAbc {
    /// Three device arrays of 2^log_m elements, zero past `len`.
    pub(super) fn from_arrays(bufs: [DeviceBuffer; 3], len: usize, log_m: u32) -> DeviceAbc {
        DeviceAbc { bufs, len, log_m }
    }
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

/// The device vectors an H step uploads a, b, c from the host into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostVectors {
    /// Three: c goes up while the way back from the coset runs.
    Three = 3,
    /// Two: c goes up into a's once the way back has left it (a vector
    /// less where memory is short; the way back no longer overlaps c's
    /// upload).
    Two = 2,
}

/// How an H step's a, b, c go up from the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepUpload {
    /// Ahead of every other upload to the GPU, holding the staging buffers
    /// throughout: the GPU waits for them.
    First,
    /// Piece by piece, in turn with other uploads: the step runs beside an
    /// MSM whose next points must not wait for all of a, b and c.
    InTurn,
}

/// The H step's inputs: on the host (with `check`, a circuit's index, the
/// values are checked below the modulus as they go up; uploaded into
/// `vectors`), or already on the GPU.
pub enum Abc<'a> {
    Host {
        a: &'a [Fr],
        b: &'a [Fr],
        c: &'a [Fr],
        check: Option<usize>,
        vectors: HostVectors,
        upload: StepUpload,
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
    // The overlapped mode, in three vectors (1) or two (2).
    let (a, b, c, n, on_device, checked_circuit, mode, in_pieces) = match abc {
        Abc::Host {
            a,
            b,
            c,
            check,
            vectors,
            upload,
        } => {
            check_abc(domain, a.len(), b.len(), c.len())?;
            let mode = match vectors {
                HostVectors::Three => 1,
                HostVectors::Two => 2,
            };
            (
                a.as_ptr().cast(),
                b.as_ptr().cast(),
                c.as_ptr().cast(),
                a.len(),
                None,
                check,
                mode,
                c_int::from(upload == StepUpload::InTurn),
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
            (host, host, host, len, Some(ptrs), None, 1, 0)
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
            mode,
            in_pieces,
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
                return Err(Checked {
                    circuit,
                    vector,
                    offset: 0,
                }
                .error(at));
            }
        }
    }
    Ok((h?, timing))
}
