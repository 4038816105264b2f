//! The GPU backend (built with the `cuda` feature): the safe calls into
//! the kernels in `cuda/` (`cuda`), the device memory model (`memory`),
//! each GPU's lane (`lanes`), the parameters' resident copies (`resident`),
//! the copies of circuits' constraints (`constraints`),
//! MSMs over streamed points (`streamed`), a circuit's GPU stage (`stage`)
//! and the circuits of a call proved together over streamed points
//! (`group`).

#[allow(unsafe_code)]
mod cuda;
pub use cuda::*;

pub mod constraints;
pub mod group;
pub mod lanes;
pub mod memory;
pub mod resident;
pub mod stage;
mod streamed;

pub use streamed::{
    msms_over_device_points_and_scalars, shared_chunk_bytes, streamed_msm, streamed_msm_in_chunks,
    streamed_msms, streamed_msms_over_device_scalars, streamed_msms_over_device_scalars_in_chunks,
    streamed_msms_sharing_scalars, streamed_msms_sharing_scalars_in_chunks, CheckedScalars, HostTerm,
    SharedSums,
};

pub use crate::backend::DeviceMemory;
use crate::error::{Error, Result};
use crate::math::domain::Domain;
use crate::math::Fr;
use crate::params::Parameters;

/// Witness values to check below the field modulus as they go up to a GPU:
/// the staging copies read every value anyway, so checked there the check
/// costs no pass of its own over host memory (16 GiB per 2^27 partition).
/// Which circuit and vector they are, for the error.
#[derive(Clone, Copy, Debug)]
pub struct Checked {
    pub circuit: usize,
    pub vector: &'static str,
    /// Where in the vector the values checked begin (a chunk of it).
    pub offset: usize,
}

impl Checked {
    /// `vector` of circuit `circuit`, when there is one to check.
    pub fn of(circuit: Option<usize>, vector: &'static str) -> Option<Checked> {
        circuit.map(|circuit| Checked {
            circuit,
            vector,
            offset: 0,
        })
    }

    /// The same check for the values from `offset` on.
    pub fn from(self, offset: usize) -> Checked {
        Checked {
            offset: self.offset + offset,
            ..self
        }
    }

    /// The error for the first value not below the modulus, at `index`
    /// of the values checked.
    pub fn error(&self, index: usize) -> Error {
        Error::unreduced(self.circuit, self.vector, self.offset + index)
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
