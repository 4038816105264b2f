//! The GPU backend's Rust side: device discovery and the GPU steps of a
//! proof. Built with the `cuda` feature this is `cuda.rs` over the kernels in
//! `cuda/`; without it, `standin.rs` answers that no GPU is present, so the
//! prover calls the same functions either way and picks the CPU.

#[cfg(feature = "cuda")]
#[allow(unsafe_code)]
mod cuda;
#[cfg(feature = "cuda")]
pub use cuda::*;

pub mod memory;

#[cfg(not(feature = "cuda"))]
mod standin;
#[cfg(not(feature = "cuda"))]
pub use standin::*;

use crate::error::{Error, Result};
use crate::math::domain::Domain;
use crate::math::Fr;
use crate::math::{G1Affine, G2Affine, G1, G2};
use crate::params::Parameters;
use once_cell::sync::OnceCell;
use std::sync::Arc;

/// Witness values to check below the field modulus as they go up to a GPU:
/// the staging copies read every value anyway, so checked there the check
/// costs no pass of its own over host memory (16 GiB per 2^27 partition).
/// Which circuit and vector they are, for the error.
#[derive(Clone, Copy, Debug)]
pub struct Checked {
    pub circuit: usize,
    pub vector: &'static str,
}

impl Checked {
    /// `vector` of circuit `circuit`, when there is one to check.
    pub fn of(circuit: Option<usize>, vector: &'static str) -> Option<Checked> {
        circuit.map(|circuit| Checked { circuit, vector })
    }

    /// The error for the first value not below the modulus, at `index`.
    pub fn error(&self, index: usize) -> Error {
        Error::unreduced(self.circuit, self.vector, index)
    }
}

/// Which group a device point vector holds (`enum c2p_curve`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Curve {
    G1 = 1,
    G2 = 2,
}

/// Where an MSM's scalars are (`enum c2p_scalars_at`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarsAt {
    Host = 0,
    DeviceConsumed = 1,
    DeviceShared = 2,
}

/// A GPU's device budget, the bytes of the library's allocations there now,
/// and their peak since it was last reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceMemory {
    pub budget: usize,
    pub in_use: usize,
    pub peak: usize,
}

/// The per-domain constants of the H step, as the CUDA code takes them
/// (all Montgomery form, the layout of `c2p_h_consts`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HConstants {
    pub omega: Fr,
    pub m_inv: Fr,
    pub g: Fr,
    pub g_2_14: Fr,
    pub g_inv: Fr,
    pub g_inv_2_14: Fr,
    /// 1/(m·Z) with Z = g^m − 1 on the coset.
    pub m_inv_z_inv: Fr,
}

impl HConstants {
    pub fn of(domain: &Domain) -> HConstants {
        let (g, g_inv) = domain.shift();
        HConstants {
            omega: domain.omega,
            m_inv: domain.m_inv(),
            g,
            g_2_14: g.pow(1 << 14),
            g_inv,
            g_inv_2_14: g_inv.pow(1 << 14),
            m_inv_z_inv: domain.m_inv() * domain.z_on_coset().inverse(),
        }
    }
}

/// Timings of one GPU H step (CUDA events), in milliseconds
/// (the layout of `c2p_h_timing`): the upload of a, b, c; the compute after
/// the last upload (all of it when uploads do not overlap, the tail when
/// they do); the download of h; and from the first upload to the end of the
/// compute.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct HTiming {
    pub upload_ms: f32,
    pub compute_ms: f32,
    pub download_ms: f32,
    pub total_ms: f32,
}

/// A parameter set's point vectors in GPU memory, for the life of the
/// parameters: 96 bytes per G1 point and 192 per G2 point (the size of the
/// file's point sections).
pub struct DeviceParams {
    pub h: DevicePoints,
    pub l: DevicePoints,
    pub a: DevicePoints,
    pub b_g1: DevicePoints,
    pub b_g2: DevicePoints,
}

impl DeviceParams {
    /// Device bytes `params` would take.
    pub fn bytes_for(params: &Parameters) -> usize {
        96 * (params.h.len() + params.l.len() + params.a.len() + params.b_g1.len()) + 192 * params.b_g2.len()
    }

    pub fn upload(params: &Parameters, device: usize) -> Result<DeviceParams> {
        Ok(DeviceParams {
            h: upload_g1(device, &params.h)?,
            l: upload_g1(device, &params.l)?,
            a: upload_g1(device, &params.a)?,
            b_g1: upload_g1(device, &params.b_g1)?,
            b_g2: upload_g2(device, &params.b_g2)?,
        })
    }

    pub fn bytes(&self) -> usize {
        [&self.h, &self.l, &self.a, &self.b_g1, &self.b_g2]
            .iter()
            .map(|p| p.bytes())
            .sum()
    }
}

pub use crate::config::Residency;

impl Residency {
    /// The choice in effect: an explicit one, or the environment's
    /// (`C2P_PARAMS_ON_GPU`; a malformed value was refused by
    /// `config::get` before any proof or load got here).
    pub fn resolve(self) -> Residency {
        if self != Residency::Auto {
            return self;
        }
        crate::config::get().map_or(Residency::Auto, |c| c.params_on_gpu)
    }
}

/// The device copies of a parameter set, one per GPU, each made on the
/// first GPU proof there and freed with the parameters. A failed or
/// declined upload is remembered (logged once); that GPU's MSMs then stream
/// the points.
pub struct DeviceCache {
    residency: Residency,
    copies: Vec<OnceCell<Option<Arc<DeviceParams>>>>,
}

impl DeviceCache {
    pub fn new(residency: Residency) -> DeviceCache {
        DeviceCache {
            residency,
            copies: (0..device_count()).map(|_| OnceCell::new()).collect(),
        }
    }

    pub fn residency(&self) -> Residency {
        self.residency
    }

    /// The parameters' copy on GPU `device` once the first proof there has
    /// made it or declined it (`Some(None)`: the points stay on the host);
    /// `None` before that.
    pub fn decided(&self, device: usize) -> Option<Option<&Arc<DeviceParams>>> {
        self.copies.get(device)?.get().map(Option::as_ref)
    }

    /// The parameters' copy on GPU `device`, uploaded now if this is the
    /// first proof there and the residency allows it; `None` when the
    /// points stay on the host.
    pub fn get_or_upload(&self, params: &Parameters, device: usize) -> Option<&Arc<DeviceParams>> {
        self.copies
            .get(device)?
            .get_or_init(|| {
                let points = DeviceParams::bytes_for(params);
                // The points, and beside them one circuit's H side (its
                // a, b, c uploaded in the lane) and witness MSMs after it.
                let log_m = params.domain_size().trailing_zeros();
                let working = memory::h_side(device, log_m, false)
                    .and_then(|h| Ok(h.max(memory::witness_side(device, params.l.len(), false)?)))
                    .ok();
                let decision = self.residency.resolve();
                let fits = working.is_some_and(|w| memory::fits(device, points + w, "parameters resident"));
                if decision == Residency::Never || (decision == Residency::Auto && !fits) {
                    log::info!(
                        "parameters stay on the host ({} MiB of points and {} MiB of work on GPU {device}, {} MiB of room, residency {decision:?}): MSM points stream to the GPU",
                        points >> 20,
                        working.unwrap_or(0) >> 20,
                        memory::room(device) >> 20
                    );
                    return None;
                }
                let started = std::time::Instant::now();
                match DeviceParams::upload(params, device) {
                    Ok(d) => {
                        log::info!(
                            "parameters on GPU {device}: {} MiB in {:.2} s",
                            d.bytes() >> 20,
                            started.elapsed().as_secs_f64()
                        );
                        Some(Arc::new(d))
                    }
                    Err(e) => {
                        log::warn!("parameters could not go to GPU {device} ({e}): MSM points stream to the GPU");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// Device bytes held over all GPUs (0 before the first GPU proof or on
    /// the CPU).
    pub fn bytes(&self) -> usize {
        self.copies
            .iter()
            .filter_map(|c| c.get().and_then(|d| d.as_ref()))
            .map(|d| d.bytes())
            .sum()
    }
}

impl Default for DeviceCache {
    fn default() -> Self {
        DeviceCache::new(Residency::Auto)
    }
}

impl Clone for DeviceCache {
    /// A copy of the parameters gets its own device copy when used.
    fn clone(&self) -> Self {
        DeviceCache::new(self.residency)
    }
}

impl PartialEq for DeviceCache {
    /// Parameters compare by their points; the device copy is a cache.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for DeviceCache {}

impl std::fmt::Debug for DeviceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceCache({} bytes)", self.bytes())
    }
}

/// A group whose MSMs can run on the GPU over points streamed from host
/// memory.
pub trait StreamedGroup: Sized + Copy + std::ops::Add<Output = Self> + Send {
    type Affine: Sync;
    const CURVE: Curve;
    /// Bytes of one affine point on the device.
    const POINT_BYTES: usize;
    fn identity() -> Self;
    fn upload(device: usize, points: &[Self::Affine]) -> Result<DevicePoints>;
    fn msm(points: &DevicePoints, scalars: &[Fr]) -> Result<Self>;
}

impl StreamedGroup for G1 {
    type Affine = G1Affine;
    const CURVE: Curve = Curve::G1;
    const POINT_BYTES: usize = 96;
    fn identity() -> Self {
        G1::identity()
    }
    fn upload(device: usize, points: &[G1Affine]) -> Result<DevicePoints> {
        upload_g1(device, points)
    }
    fn msm(points: &DevicePoints, scalars: &[Fr]) -> Result<Self> {
        msm_g1(points, 0, scalars)
    }
}

impl StreamedGroup for G2 {
    type Affine = G2Affine;
    const CURVE: Curve = Curve::G2;
    const POINT_BYTES: usize = 192;
    fn identity() -> Self {
        G2::identity()
    }
    fn upload(device: usize, points: &[G2Affine]) -> Result<DevicePoints> {
        upload_g2(device, points)
    }
    fn msm(points: &DevicePoints, scalars: &[Fr]) -> Result<Self> {
        msm_g2(points, 0, scalars)
    }
}

/// Σ scalars[i]·points[i] on GPU `device` with the points in host memory: they
/// go up in chunks, the next chunk's upload (a thread of its own, through
/// the pinned staging buffers) overlapping the current chunk's MSM, and the
/// chunks' sums are added here. Device memory: two chunks of points plus
/// one chunk's MSM buffers, within the room (`memory::stream_chunk`).
pub fn streamed_msm<P: StreamedGroup>(device: usize, points: &[P::Affine], scalars: &[Fr]) -> Result<P> {
    let chunk = memory::stream_chunk(device, P::CURVE, scalars.len(), P::POINT_BYTES);
    streamed_msm_in_chunks(device, points, scalars, chunk)
}

/// `streamed_msm` with chunks of `chunk` points.
pub fn streamed_msm_in_chunks<P: StreamedGroup>(
    device: usize,
    points: &[P::Affine],
    scalars: &[Fr],
    chunk: usize,
) -> Result<P> {
    let n = scalars.len();
    if points.len() < n {
        return Err(crate::error::Error::size_mismatch(format!(
            "{n} scalars for {} points",
            points.len()
        )));
    }
    if n == 0 {
        return Ok(P::identity());
    }
    let chunk = chunk.max(1);
    let join = |h: std::thread::ScopedJoinHandle<'_, Result<DevicePoints>>| {
        h.join().unwrap_or_else(|_| {
            Err(crate::error::Error::new(
                crate::error::ErrorKind::Panic,
                "internal error: the point upload thread panicked",
            ))
        })
    };
    std::thread::scope(|scope| {
        let upload = |start: usize| {
            let part = &points[start..n.min(start + chunk)];
            scope.spawn(move || P::upload(device, part))
        };
        let mut next = Some(upload(0));
        let mut sum = P::identity();
        let mut start = 0;
        while let Some(pending) = next.take() {
            let current = join(pending)?;
            let end = n.min(start + chunk);
            if end < n {
                next = Some(upload(end));
            }
            sum = sum + P::msm(&current, &scalars[start..end])?;
            start = end;
        }
        Ok(sum)
    })
}

/// The GPUs a job may use: bit d for GPU d; 0 means all of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceMask(pub u64);

impl DeviceMask {
    pub const ALL: DeviceMask = DeviceMask(0);

    /// Only GPU `index` (supraseal's `gpu_index`); a negative index is any.
    pub fn only(index: i64) -> Result<DeviceMask> {
        match u32::try_from(index) {
            Ok(i) if i < 64 => Ok(DeviceMask(1 << i)),
            Ok(i) => Err(crate::error::Error::invalid(format!(
                "GPU index {i} is out of range"
            ))),
            Err(_) => Ok(DeviceMask::ALL),
        }
    }

    /// The present GPUs this mask allows, in order. An error when GPUs are
    /// present and the mask names none of them.
    pub fn devices(self) -> Result<Vec<usize>> {
        let present = device_count().min(64);
        let chosen: Vec<usize> = (0..present)
            .filter(|&d| self.0 == 0 || (self.0 >> d) & 1 == 1)
            .collect();
        if chosen.is_empty() && present > 0 {
            return Err(crate::error::Error::invalid(format!(
                "the device mask {:#x} selects none of this machine's {present} GPU(s)",
                self.0
            )));
        }
        Ok(chosen)
    }
}
