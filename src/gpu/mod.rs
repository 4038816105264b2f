//! The GPU backend's Rust side: device discovery and the GPU steps of a
//! proof. Built with the `cuda` feature this is `cuda.rs` over the kernels in
//! `cuda/`; without it, `standin.rs` answers that no GPU is present, so the
//! prover calls the same functions either way and picks the CPU.

#[cfg(feature = "cuda")]
mod cuda;
#[cfg(feature = "cuda")]
pub use cuda::*;

#[cfg(not(feature = "cuda"))]
mod standin;
#[cfg(not(feature = "cuda"))]
pub use standin::*;

use crate::cpu::ntt::Domain;
use crate::error::Result;
use crate::ffi::blst::Fr;
use crate::params::Parameters;
use once_cell::sync::OnceCell;
use std::sync::Arc;

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

    pub fn upload(params: &Parameters) -> Result<DeviceParams> {
        Ok(DeviceParams {
            h: upload_g1(&params.h)?,
            l: upload_g1(&params.l)?,
            a: upload_g1(&params.a)?,
            b_g1: upload_g1(&params.b_g1)?,
            b_g2: upload_g2(&params.b_g2)?,
        })
    }

    pub fn bytes(&self) -> usize {
        [&self.h, &self.l, &self.a, &self.b_g1, &self.b_g2]
            .iter()
            .map(|p| p.bytes())
            .sum()
    }
}

/// Whether a parameter set's points go to the GPU, from `C2P_PARAMS_ON_GPU`:
/// `auto` (the default: when the GPU's free memory holds them and the
/// proving work beside them), `always`, or `never` (MSMs on the CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residency {
    Auto,
    Always,
    Never,
}

impl Residency {
    pub fn from_env() -> Residency {
        match std::env::var("C2P_PARAMS_ON_GPU").as_deref() {
            Ok("always") | Ok("1") => Residency::Always,
            Ok("never") | Ok("0") => Residency::Never,
            _ => Residency::Auto,
        }
    }
}

/// The device copy of a parameter set, made on first use by a GPU proof
/// and freed with the parameters. A failed or declined upload is
/// remembered (logged once); the MSMs then run on the CPU.
#[derive(Default)]
pub struct DeviceCache(OnceCell<Option<Arc<DeviceParams>>>);

impl DeviceCache {
    pub fn get_or_upload(&self, params: &Parameters) -> Option<&Arc<DeviceParams>> {
        self.0
            .get_or_init(|| {
                if !available() {
                    return None;
                }
                let need = DeviceParams::bytes_for(params);
                // Room for the H step (3 domain vectors and the twiddles)
                // and the MSM working memory beside the points.
                let headroom = 112 * params.domain_size() + (3 << 30);
                let decision = Residency::from_env();
                let free = free_memory(0).unwrap_or(0);
                if decision == Residency::Never
                    || (decision == Residency::Auto && need + headroom > free)
                {
                    log::info!(
                        "parameters stay on the host ({} MiB needed on the GPU, {} MiB free, C2P_PARAMS_ON_GPU={decision:?}): MSMs on the CPU",
                        need >> 20,
                        free >> 20
                    );
                    return None;
                }
                let started = std::time::Instant::now();
                match DeviceParams::upload(params) {
                    Ok(d) => {
                        log::info!(
                            "parameters on the GPU: {} MiB in {:.2} s",
                            d.bytes() >> 20,
                            started.elapsed().as_secs_f64()
                        );
                        Some(Arc::new(d))
                    }
                    Err(e) => {
                        log::warn!("parameters could not go to the GPU ({e}): MSMs on the CPU");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// Device bytes held (0 before the first GPU proof or on the CPU).
    pub fn bytes(&self) -> usize {
        self.0.get().and_then(|d| d.as_ref()).map_or(0, |d| d.bytes())
    }
}

impl Clone for DeviceCache {
    /// A copy of the parameters gets its own device copy when used.
    fn clone(&self) -> Self {
        DeviceCache::default()
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
