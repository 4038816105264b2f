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
use crate::ffi::blst::Fr;

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
