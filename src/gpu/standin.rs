//! No CUDA in this build: no device is ever found, and the GPU entry points
//! report `Unsupported` (the prover never calls them, since `available()`
//! is false).

use super::{Curve, DeviceMemory, HTiming, ScalarsAt};
use crate::error::{Error, ErrorKind, Result};
use crate::math::domain::Domain;
use crate::math::{Fr, G1Affine, G2Affine, G1, G2};

/// Whether the GPU H step handles a domain of 2^log_m (never, here).
pub fn handles_domain(_log_m: u32) -> bool {
    false
}

/// Whether proving runs on a GPU: never, in a build without `cuda`.
pub fn available() -> bool {
    false
}

/// CUDA devices usable by this build: none.
pub fn device_count() -> usize {
    0
}

fn unsupported() -> Error {
    Error::new(
        ErrorKind::Unsupported,
        "this build of c2prover has no CUDA backend (feature `cuda`)",
    )
}

/// The H step on the GPU (unavailable in this build).
pub fn quotient(
    _device: usize,
    _domain: &Domain,
    _a: &[Fr],
    _b: &[Fr],
    _c: &[Fr],
    _overlap: bool,
) -> Result<(Vec<Fr>, HTiming)> {
    Err(unsupported())
}

/// Device points (never created in this build).
pub struct DevicePoints(());

impl DevicePoints {
    pub fn len(&self) -> usize {
        0
    }

    pub fn is_empty(&self) -> bool {
        true
    }

    pub fn bytes(&self) -> usize {
        0
    }
}

pub fn upload_g1(_device: usize, _points: &[G1Affine]) -> Result<DevicePoints> {
    Err(unsupported())
}

pub fn upload_g2(_device: usize, _points: &[G2Affine]) -> Result<DevicePoints> {
    Err(unsupported())
}

pub fn msm_g1(_points: &DevicePoints, _offset: usize, _scalars: &[Fr]) -> Result<G1> {
    Err(unsupported())
}

pub fn msm_g2(_points: &DevicePoints, _offset: usize, _scalars: &[Fr]) -> Result<G2> {
    Err(unsupported())
}

pub fn msm_g1_masked(
    _points: &DevicePoints,
    _offset: usize,
    _scalars: Scalars,
    _density: &[u64],
) -> Result<G1> {
    Err(unsupported())
}

pub fn msm_g2_masked(
    _points: &DevicePoints,
    _offset: usize,
    _scalars: Scalars,
    _density: &[u64],
) -> Result<G2> {
    Err(unsupported())
}

/// Free device memory (no device in this build).
pub fn free_memory(_device: usize) -> Result<usize> {
    Err(unsupported())
}

/// Free device memory as the driver reports it (no device in this build).
pub fn driver_free_memory(_device: usize) -> Result<usize> {
    Err(unsupported())
}

/// A device's budget and use (no device in this build).
pub fn device_memory(_device: usize) -> Result<DeviceMemory> {
    Err(unsupported())
}

/// Sets a device budget: nothing to set in this build.
pub fn set_device_budget(_device: usize, _bytes: usize) -> Result<()> {
    Ok(())
}

/// Always an error: this build has no CUDA.
pub fn reset_device_peak(_device: usize) -> Result<()> {
    Err(unsupported())
}

/// An H step's device memory (no device in this build).
pub fn h_step_bytes(_device: usize, _log_m: u32, _abc_on_device: bool) -> Result<usize> {
    Err(unsupported())
}

/// An MSM's device memory (no device in this build).
pub fn msm_bytes(_device: usize, _curve: Curve, _n: usize, _at: ScalarsAt, _density: bool) -> Result<usize> {
    Err(unsupported())
}

/// Pool memory kept idle (no device in this build).
pub fn pool_idle_memory(_device: usize) -> Result<usize> {
    Err(unsupported())
}

/// Always an error: this build has no CUDA.
pub fn trim_memory_pool(_device: usize) -> Result<()> {
    Err(unsupported())
}

/// Scalars in device memory (never created in this build).
pub struct DeviceScalars(());

impl DeviceScalars {
    pub fn len(&self) -> usize {
        0
    }

    pub fn to_host(&self) -> Result<Vec<Fr>> {
        Err(unsupported())
    }

    pub fn is_empty(&self) -> bool {
        true
    }
}

/// Where an MSM's scalars are.
pub enum Scalars<'a> {
    Host(&'a [Fr]),
    Device(DeviceScalars),
    Shared(&'a DeviceScalars),
}

pub fn upload_scalars(
    _device: usize,
    _scalars: &[Fr],
    _check: Option<super::Checked>,
) -> Result<DeviceScalars> {
    Err(unsupported())
}

/// a, b, c on a GPU (never created in this build).
pub struct DeviceAbc(());

pub fn upload_abc(
    _device: usize,
    _domain: &Domain,
    _a: &[Fr],
    _b: &[Fr],
    _c: &[Fr],
    _check: Option<usize>,
) -> Result<DeviceAbc> {
    Err(unsupported())
}

/// The H step's inputs: on the host, or already on the GPU.
pub enum Abc<'a> {
    Host {
        a: &'a [Fr],
        b: &'a [Fr],
        c: &'a [Fr],
        check: Option<usize>,
    },
    Device(DeviceAbc),
}

pub fn quotient_on_device(_device: usize, _domain: &Domain, _abc: Abc) -> Result<(DeviceScalars, HTiming)> {
    Err(unsupported())
}

pub fn msm_g1_from(_points: &DevicePoints, _offset: usize, _scalars: Scalars) -> Result<G1> {
    Err(unsupported())
}
