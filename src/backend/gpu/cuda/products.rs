//! A units circuit's constraints (`UnitConstraints`) on a GPU, and a, b, c
//! as products there: only the values cross PCIe, and the H step takes the
//! products where they are.
use super::buffers::{DeviceBuffer, DeviceScalars};
use super::quotient::DeviceAbc;
use super::sys::*;
use crate::error::{Error, Result};
use crate::groth16::constraints::{Matrix, Rows};
use crate::groth16::UnitConstraints;
use crate::math::domain::Domain;
use crate::math::Fr;
use std::ffi::{c_int, c_void};

/// The rows of A, B and C of the one-unit circuit and their coefficients
/// on one GPU, freed on drop.
pub struct DeviceConstraints {
    device: usize,
    starts: [DeviceBuffer; 3],
    terms: [DeviceBuffer; 3],
    coefficients: DeviceBuffer,
    shape: UnitShape,
    bytes: usize,
}

/// A copy of `values` on `device`, at least one byte long (an empty row
/// set still has a device address).
fn upload<T>(device: usize, values: &[T]) -> Result<DeviceBuffer> {
    let bytes = std::mem::size_of_val(values);
    DeviceBuffer::upload_padded(
        device,
        values,
        bytes.max(8),
        "uploading constraints to the GPU",
        None,
    )
}

impl DeviceConstraints {
    /// `constraints` on GPU `device` (device memory: `bytes()`).
    pub fn upload(device: usize, constraints: &UnitConstraints) -> Result<DeviceConstraints> {
        let rows = |m| constraints.rows(m).parts();
        let matrices = [Matrix::A, Matrix::B, Matrix::C];
        let starts = [
            upload(device, rows(matrices[0]).0)?,
            upload(device, rows(matrices[1]).0)?,
            upload(device, rows(matrices[2]).0)?,
        ];
        let terms = [
            upload(device, rows(matrices[0]).1)?,
            upload(device, rows(matrices[1]).1)?,
            upload(device, rows(matrices[2]).1)?,
        ];
        let coefficients = upload(device, constraints.coefficients())?;
        let (common, unit, units) = constraints.shape();
        let total = constraints.total();
        let bytes = matrices
            .iter()
            .map(|&m| {
                let (s, t) = rows(m);
                std::mem::size_of_val(s).max(8) + std::mem::size_of_val(t).max(8)
            })
            .sum::<usize>()
            + std::mem::size_of_val(constraints.coefficients());
        Ok(DeviceConstraints {
            device,
            starts,
            terms,
            coefficients,
            shape: UnitShape {
                common_aux: common.aux as u64,
                common_inputs: common.inputs as u64,
                common_constraints: common.constraints as u64,
                unit_aux: unit.aux as u64,
                unit_inputs: unit.inputs as u64,
                unit_constraints: unit.constraints as u64,
                units: units as u64,
                inputs: total.inputs as u64,
            },
            bytes,
        })
    }

    /// Device bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Device bytes `constraints` takes on a GPU.
    pub fn bytes_for(constraints: &UnitConstraints) -> usize {
        let rows = |r: &Rows| {
            let (s, t) = r.parts();
            std::mem::size_of_val(s).max(8) + std::mem::size_of_val(t).max(8)
        };
        [Matrix::A, Matrix::B, Matrix::C]
            .iter()
            .map(|&m| rows(constraints.rows(m)))
            .sum::<usize>()
            + std::mem::size_of_val(constraints.coefficients())
    }

    fn aux_len(&self) -> usize {
        (self.shape.common_aux + self.shape.units * self.shape.unit_aux) as usize
    }

    fn abc_len(&self) -> usize {
        let s = self.shape;
        (s.common_constraints + s.units * s.unit_constraints + s.inputs) as usize
    }
}

/// a, b, c over `domain` on GPU `device` from the circuit's inputs (here,
/// a few hundred values: uploaded) and aux values (on the device), ready
/// for the H step (`Abc::Device`).
pub fn unit_products(
    device: usize,
    domain: &Domain,
    constraints: &DeviceConstraints,
    inputs: &[Fr],
    aux: &DeviceScalars,
) -> Result<DeviceAbc> {
    let on = |d: c_int| d as usize == device;
    if constraints.device != device || !on(aux.buf.device) {
        return Err(Error::invalid(format!(
            "constraints on GPU {} and values on GPU {} used on GPU {device}",
            constraints.device, aux.buf.device
        )));
    }
    if inputs.len() as u64 != constraints.shape.inputs || aux.len() != constraints.aux_len() {
        return Err(Error::size_mismatch(format!(
            "{} inputs and {} aux values for constraints of {} and {}",
            inputs.len(),
            aux.len(),
            constraints.shape.inputs,
            constraints.aux_len()
        )));
    }
    let abc_len = constraints.abc_len();
    if abc_len > domain.m {
        return Err(Error::size_mismatch(format!(
            "{abc_len} constraints for a domain of {}",
            domain.m
        )));
    }
    let inputs_on_gpu = upload(device, inputs)?;
    let rows = UnitRows {
        starts: constraints.starts.each_ref().map(|b| b.ptr.cast_const()),
        terms: constraints.terms.each_ref().map(|b| b.ptr.cast_const()),
        coefficients: constraints.coefficients.ptr.cast_const(),
        shape: constraints.shape,
    };
    let mut out: [*mut c_void; 3] = [std::ptr::null_mut(); 3];
    // SAFETY: the rows, coefficients, inputs and aux are live device arrays
    // on this GPU (checked), their terms checked on the host to stay inside
    // the one-unit circuit (`UnitConstraints::new`) and the sizes above
    // against the values; `out` has room for the three arrays the call
    // hands out on success (NULLs on failure).
    let status = unsafe {
        c2p_cuda_unit_products(
            device as c_int,
            domain.log_m as c_int,
            &rows,
            inputs_on_gpu.ptr.cast_const(),
            aux.buf.ptr.cast_const(),
            out.as_mut_ptr(),
        )
    };
    check(status, "a, b, c as products on the GPU")?;
    let bufs = out.map(|ptr| DeviceBuffer {
        device: device as c_int,
        ptr,
    });
    Ok(DeviceAbc::from_arrays(bufs, abc_len, domain.log_m))
}
