//! Device arrays (points and scalars) freed on drop, uploads, and the MSMs
//! over device points.
use super::device::configure;
use super::sys::*;
use crate::backend::gpu::{Checked, Curve, ScalarsAt};
use crate::error::{Error, Result};
use crate::groth16::Query;
use crate::math::{Fr, G1Affine, G2Affine, G1, G2};
use crate::params::Parameters;
use std::ffi::{c_int, c_void};

/// An array in one GPU's memory, freed on drop: the storage of
/// `DevicePoints` and `DeviceScalars`.
pub(super) struct DeviceBuffer {
    pub(super) device: c_int,
    pub(super) ptr: *mut c_void,
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
    pub(super) fn upload<T>(device: usize, values: &[T], what: &str) -> Result<DeviceBuffer> {
        DeviceBuffer::upload_padded(device, values, std::mem::size_of_val(values), what, None)
    }

    /// A copy of `values` in a device array of `capacity` bytes (at least
    /// the values' size), zero past the values. With `check`, the values
    /// are witness values checked below the modulus as they are copied
    /// (an error names the first that is not).
    pub(super) fn upload_padded<T>(
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

    pub fn curve(&self) -> Curve {
        self.curve
    }

    /// `scalars` as an MSM over these points from `offset` takes them
    /// (their address, where they are, how many), once they, the density
    /// bitmap and the points they meet are checked to fit.
    fn msm_scalars(
        &self,
        offset: usize,
        scalars: &Scalars,
        density: Option<&[u64]>,
    ) -> Result<(*const c_void, ScalarsAt, usize)> {
        let (ptr, on_device, n, gpu) = match scalars {
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
            Scalars::SharedPart(d, range) => {
                if range.start > range.end || range.end > d.len {
                    return Err(Error::size_mismatch(format!(
                        "scalars {range:?} of {} on the GPU",
                        d.len
                    )));
                }
                (
                    d.buf
                        .ptr
                        .cast::<u8>()
                        .wrapping_add(range.start * std::mem::size_of::<Fr>())
                        .cast_const()
                        .cast::<c_void>(),
                    ScalarsAt::DeviceShared,
                    range.len(),
                    d.buf.device,
                )
            }
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
        Ok((ptr, on_device, n))
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
        let (ptr, on_device, n) = self.msm_scalars(offset, &scalars, density)?;
        let mut timing = MsmTiming::default();
        // SAFETY: the points are this handle's live device array, with
        // offset + (points the scalars meet) in range (checked); the
        // scalars are n valid Fr on the host, or a device buffer of n on the
        // points' GPU (checked) that this call consumes (converted in place,
        // and `scalars` is dropped after) or only reads (shared; a part: n
        // from an offset within the buffer, checked); the density, when
        // given, has ceil(n / 64) words
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

/// One MSM whose scalars come in chunks (H's MSM over streamed points):
/// each chunk adds into buckets kept on the GPU, reduced once by `total`,
/// where an MSM per chunk reduces its own each time. Freed on drop.
pub struct MsmSum<P: DeviceGroup> {
    sum: *mut c_void,
    device: usize,
    _group: std::marker::PhantomData<P>,
}

// SAFETY: the sum is the library's device state behind a handle, used by
// one thread at a time (`add` and `total` take it mutably) from any thread
// (the CUDA calls set the device themselves).
unsafe impl<P: DeviceGroup> Send for MsmSum<P> {}

impl<P: DeviceGroup> MsmSum<P> {
    /// An empty sum on GPU `device` for an MSM of `n` scalars in all (its
    /// windows as wide as that MSM's).
    pub fn new(device: usize, n: usize) -> Result<Self> {
        let mut sum = std::ptr::null_mut();
        // SAFETY: `sum` is a valid location; the function checks its
        // arguments and writes a live sum there only on success.
        let status = unsafe { c2p_cuda_msm_sum_new(device as c_int, P::CURVE, n, &mut sum) };
        check(status, "a GPU MSM's sum")?;
        Ok(MsmSum {
            sum,
            device,
            _group: std::marker::PhantomData,
        })
    }

    /// Adds Σ scalars[i]·points[offset + i] (with a density, as `msm`).
    pub fn add(
        &mut self,
        points: &DevicePoints,
        offset: usize,
        scalars: Scalars,
        density: Option<&[u64]>,
    ) -> Result<MsmTiming> {
        if points.curve != P::CURVE || points.buf.device as usize != self.device {
            return Err(Error::invalid(format!(
                "{:?} points on GPU {} for a {:?} sum on GPU {}",
                points.curve,
                points.buf.device,
                P::CURVE,
                self.device
            )));
        }
        let (ptr, on_device, n) = points.msm_scalars(offset, &scalars, density)?;
        let mut timing = MsmTiming::default();
        // SAFETY: the sum is live (freed only on drop); the points, the
        // scalars and the density are checked as for `msm` (same GPU, in
        // range, consumed scalars dropped after); timing is a valid location.
        let status = unsafe {
            c2p_cuda_msm_sum_add(
                self.sum,
                points.buf.ptr,
                offset,
                ptr,
                on_device,
                density.map_or(std::ptr::null(), <[u64]>::as_ptr),
                n,
                &mut timing,
            )
        };
        drop(scalars);
        check(status, "GPU MSM (a chunk of a sum)")?;
        log::trace!("GPU MSM of {n} into a sum: {timing:?}");
        Ok(timing)
    }

    /// The sum of every chunk added.
    pub fn total(mut self) -> Result<P> {
        let mut out = P::identity();
        // SAFETY: the sum is live; `out` has room for one Jacobian point of
        // the sum's curve (P::CURVE, as made).
        let status = unsafe { c2p_cuda_msm_sum_total(self.sum, (&mut out as *mut P).cast()) };
        check(status, "GPU MSM (a sum's total)")?;
        self.free();
        Ok(out)
    }

    fn free(&mut self) {
        // SAFETY: the sum was made by c2p_cuda_msm_sum_new and is freed
        // once (the pointer cleared after).
        let status = unsafe { c2p_cuda_msm_sum_free(self.sum) };
        self.sum = std::ptr::null_mut();
        if let Err(e) = check(status, "freeing a GPU MSM's sum") {
            log::warn!("GPU {}: {e}", self.device);
        }
    }
}

impl<P: DeviceGroup> Drop for MsmSum<P> {
    fn drop(&mut self) {
        self.free();
    }
}

/// Device bytes of an `MsmSum` for `n` scalars in all with a chunk of
/// `chunk` going in (scalars at `at`, with a density or not).
pub fn msm_sum_bytes(
    device: usize,
    curve: Curve,
    n: usize,
    chunk: usize,
    at: ScalarsAt,
    density: bool,
) -> Result<usize> {
    let mut bytes = 0usize;
    // SAFETY: `bytes` is a valid location; the function checks its arguments.
    let status =
        unsafe { c2p_cuda_msm_sum_bytes(device as c_int, curve, n, chunk, at, density as c_int, &mut bytes) };
    check(status, "querying a GPU MSM sum's device memory")?;
    Ok(bytes)
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
    /// A range of scalars on the device, only read like shared ones (the
    /// H step's h, met by streamed points one chunk at a time: left whole,
    /// so that the CPU can take over from it when an MSM fails).
    SharedPart(&'a DeviceScalars, std::ops::Range<usize>),
}

/// Scalars in device memory (the H step's h, left there for its MSM; the
/// witness, uploaded once for the MSMs that read it), freed on drop.
pub struct DeviceScalars {
    pub(super) buf: DeviceBuffer,
    pub(super) len: usize,
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

/// A group whose MSMs run on the GPU.
pub trait DeviceGroup: Sized + Copy + std::ops::Add<Output = Self> + Send {
    type Affine: Sync;
    const CURVE: Curve;
    /// Bytes of one affine point on the device.
    const POINT_BYTES: usize;
    fn identity() -> Self;
    /// `points` on GPU `device`.
    fn upload(device: usize, points: &[Self::Affine]) -> Result<DevicePoints>;
}

impl DeviceGroup for G1 {
    type Affine = G1Affine;
    const CURVE: Curve = Curve::G1;
    const POINT_BYTES: usize = 96;
    fn identity() -> Self {
        G1::identity()
    }
    fn upload(device: usize, points: &[G1Affine]) -> Result<DevicePoints> {
        upload_g1(device, points)
    }
}

impl DeviceGroup for G2 {
    type Affine = G2Affine;
    const CURVE: Curve = Curve::G2;
    const POINT_BYTES: usize = 192;
    fn identity() -> Self {
        G2::identity()
    }
    fn upload(device: usize, points: &[G2Affine]) -> Result<DevicePoints> {
        upload_g2(device, points)
    }
}

/// Σ scalars[i]·points[offset + i] on the GPU; with `density`, the sum over
/// the scalars whose bit is set (bit i % 64 of word i / 64), the k-th of
/// them times points[offset + k], selected on the device.
pub fn msm<P: DeviceGroup>(
    points: &DevicePoints,
    offset: usize,
    scalars: Scalars,
    density: Option<&[u64]>,
) -> Result<P> {
    msm_timed(points, offset, scalars, density).map(|(p, _)| p)
}

/// `msm`, and where its time went.
pub fn msm_timed<P: DeviceGroup>(
    points: &DevicePoints,
    offset: usize,
    scalars: Scalars,
    density: Option<&[u64]>,
) -> Result<(P, MsmTiming)> {
    if points.curve != P::CURVE {
        return Err(Error::invalid(format!(
            "an MSM in {:?} over points of {:?}",
            P::CURVE,
            points.curve
        )));
    }
    let mut out = P::identity();
    let timing = points.msm_into(offset, scalars, density, (&mut out as *mut P).cast())?;
    Ok((out, timing))
}

/// Points of G1 on GPU `device`.
pub fn upload_g1(device: usize, points: &[G1Affine]) -> Result<DevicePoints> {
    DevicePoints::upload(device, Curve::G1, points)
}

/// Points of G2 on GPU `device`.
pub fn upload_g2(device: usize, points: &[G2Affine]) -> Result<DevicePoints> {
    DevicePoints::upload(device, Curve::G2, points)
}

/// Host memory page-locked for DMA (`c2p_cuda_host_register`) until this is
/// dropped: uploads from inside it go up straight from it, without the
/// staging copy.
pub struct PinnedHost {
    ptr: *const c_void,
    bytes: usize,
}

// SAFETY: an address and a length; the CUDA calls on it take any thread.
unsafe impl Send for PinnedHost {}
// SAFETY: as above; nothing is written through it.
unsafe impl Sync for PinnedHost {}

impl PinnedHost {
    /// `query`'s points in `params`, page-locked from GPU `device`'s context
    /// until the handle is dropped, which its holder (`resident`) does no
    /// later than the parameters' identity is dropped: before their vectors
    /// are freed.
    pub(in crate::backend::gpu) fn points(
        params: &Parameters,
        query: Query,
        device: usize,
    ) -> Result<PinnedHost> {
        // SAFETY: the parameters' identity, declared before their vectors,
        // is dropped first, and its release hook drops the last holder of
        // this handle then (a call in flight holds one only while it
        // borrows the parameters). A vector replaced meanwhile through the
        // public fields is caught by `covers` before the next upload.
        unsafe {
            match query {
                Query::BG2 => PinnedHost::pin(device, &params.b_g2),
                _ => PinnedHost::pin(device, query.g1_points(params)),
            }
        }
    }

    /// Page-locks `values`' memory.
    ///
    /// # Safety
    /// The memory must stay allocated, and not be moved, until the handle
    /// is dropped: the driver keeps its pages locked, and uploads read it.
    unsafe fn pin<T>(device: usize, values: &[T]) -> Result<PinnedHost> {
        let bytes = std::mem::size_of_val(values);
        // SAFETY: `values` is a live slice of `bytes` bytes (the caller keeps
        // it so until the handle is dropped).
        let status = unsafe { c2p_cuda_host_register(device as c_int, values.as_ptr().cast(), bytes) };
        check(status, "page-locking host memory")?;
        Ok(PinnedHost {
            ptr: values.as_ptr().cast(),
            bytes,
        })
    }

    /// Whether this lock still covers `query`'s points in `params` exactly.
    pub(in crate::backend::gpu) fn covers(&self, params: &Parameters, query: Query) -> bool {
        let (ptr, bytes): (*const c_void, usize) = match query {
            Query::BG2 => (
                params.b_g2.as_ptr().cast(),
                std::mem::size_of_val(&params.b_g2[..]),
            ),
            _ => {
                let points = query.g1_points(params);
                (points.as_ptr().cast(), std::mem::size_of_val(points))
            }
        };
        ptr == self.ptr && bytes == self.bytes
    }

    /// The bytes locked.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for PinnedHost {
    fn drop(&mut self) {
        // SAFETY: ptr was registered by `pin` and is unregistered once, here,
        // while still allocated (pin's contract).
        let status = unsafe { c2p_cuda_host_unregister(self.ptr) };
        if let Err(e) = check(status, "unlocking host memory") {
            log::warn!("{e}");
        }
    }
}
