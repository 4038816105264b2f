//! Element-wise field and curve operations, NTT round trips and kernel
//! figures: for the tests against blst and the benchmarks.
use super::sys::*;
use crate::backend::gpu::Curve;
use crate::error::{Error, Result};
use crate::math::domain::Domain;
use crate::math::Fr;
use std::ffi::{c_int, c_void};

/// Forward NTT of `values` on GPU 0 (returned in natural order), the inverse
/// back into `values`, and the median time of `iterations` forward
/// transforms of device-resident data.
pub fn ntt_round_trip(domain: &Domain, values: &mut [Fr], iterations: usize) -> Result<(Vec<Fr>, f32)> {
    if values.len() != domain.m {
        return Err(Error::size_mismatch("values must fill the domain"));
    }
    let mut forward = vec![Fr::ZERO; domain.m];
    let mut median = 0f32;
    let m_inv = domain.m_inv();
    // SAFETY: both buffers hold m elements; scalars are valid for the call.
    let status = unsafe {
        c2p_cuda_ntt(
            0,
            domain.log_m as c_int,
            (&domain.omega as *const Fr).cast(),
            (&m_inv as *const Fr).cast(),
            values.as_mut_ptr().cast(),
            forward.as_mut_ptr().cast(),
            iterations.min(64) as c_int,
            &mut median,
        )
    };
    check(status, "GPU NTT")?;
    Ok((forward, median))
}

/// Kernel-level figures on GPU 0: (G Fr multiplications per second, GB/s
/// of an element-wise device copy of 2^log_m elements).
pub fn microbench(log_m: u32) -> Result<(f32, f32)> {
    let mut results = [0f32; 2];
    // SAFETY: `results` has room for the two figures written.
    check(
        unsafe { c2p_cuda_microbench(0, log_m as c_int, results.as_mut_ptr()) },
        "GPU microbenchmark",
    )?;
    Ok((results[0], results[1]))
}

/// The instruction-rate probes of `instruction_rates`, in its order.
pub const INSTRUCTION_PROBES: [&str; 7] = [
    "IMAD (mad.lo.u32)",
    "IMAD.HI (mad.hi.u32)",
    "IMAD.WIDE (mad.lo.cc + madc.hi, 64-bit multiply-add)",
    "integer add (add.u32: IADD3 / IMAD.IADD)",
    "DFMA (fma.rn.f64)",
    "IMAD.WIDE and DFMA alternating",
    "IMAD.WIDE and two adds alternating",
];

/// Instructions per clock per SM (summed over a warp's lanes, at the SM's
/// maximum clock) of each of `INSTRUCTION_PROBES` on GPU 0: independent
/// chains of one instruction (or two, alternating), to tell which pipe an
/// instruction mix is bound by.
pub fn instruction_rates() -> Result<Vec<(&'static str, f32)>> {
    let mut rates = [0f32; INSTRUCTION_PROBES.len()];
    // SAFETY: `rates` has room for the `count` figures written.
    check(
        unsafe { c2p_cuda_instruction_rates(0, rates.as_mut_ptr(), rates.len() as c_int) },
        "GPU instruction rates",
    )?;
    Ok(INSTRUCTION_PROBES.iter().copied().zip(rates).collect())
}

/// Element-wise field operations on GPU 0, for tests against blst
/// (`enum c2p_field_op`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldOp {
    Mul = 0,
    Add = 1,
    Sub = 2,
    Sqr = 3,
    ToMont = 4,
    FromMont = 5,
    Neg = 6,
    /// 1/a (0 for 0).
    Inv = 7,
}

/// A field of the test operations (`enum c2p_field`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    Fr = 0,
    Fp = 1,
}

/// The field of elements of `L` 64-bit limbs.
fn field_of<const L: usize>(a: &[[u64; L]], b: &[[u64; L]]) -> Result<Field> {
    if a.len() != b.len() {
        return Err(Error::size_mismatch("a and b differ in length"));
    }
    match L {
        4 => Ok(Field::Fr),
        6 => Ok(Field::Fp),
        _ => Err(Error::invalid("field elements have 4 (Fr) or 6 (Fp) limbs")),
    }
}

/// `field_op` computed on the host by the CUDA code's own arithmetic (its
/// carry-flag instructions emulated): checks the device algorithms where
/// there is no GPU.
pub fn field_op_on_host<const L: usize>(
    op: FieldOp,
    a: &[[u64; L]],
    b: &[[u64; L]],
) -> Result<Vec<[u64; L]>> {
    field_op_at(-1, op, a, b)
}

/// out[i] = a[i] op b[i] over Fr (`L` = 4 limbs of 64 bits) or Fp (`L` = 6).
pub fn field_op<const L: usize>(op: FieldOp, a: &[[u64; L]], b: &[[u64; L]]) -> Result<Vec<[u64; L]>> {
    field_op_at(0, op, a, b)
}

/// `field_op` on GPU `device`, or on the host for a negative `device`.
fn field_op_at<const L: usize>(
    device: c_int,
    op: FieldOp,
    a: &[[u64; L]],
    b: &[[u64; L]],
) -> Result<Vec<[u64; L]>> {
    let field = field_of(a, b)?;
    let mut out = vec![[0u64; L]; a.len()];
    // SAFETY: a, b and out hold a.len() elements of the field's size.
    let status = unsafe {
        c2p_cuda_field_op(
            device,
            field,
            op,
            a.as_ptr().cast(),
            b.as_ptr().cast(),
            out.as_mut_ptr().cast(),
            a.len(),
        )
    };
    check(status, "field operation")?;
    Ok(out)
}

/// Element-wise point operations on GPU 0, for tests against blst
/// (`enum c2p_curve_op`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurveOp {
    /// out = 2·p
    Double = 0,
    /// out = p + q, both Jacobian
    Add = 1,
    /// out = p + q, q affine
    AddAffine = 2,
    /// out = −p
    Neg = 3,
}

/// A group whose points the GPU operates on: G1 or G2.
pub trait GpuCurve: Copy + Default {
    type Affine: Copy + Default;
    const CURVE: Curve;
}

impl GpuCurve for crate::math::G1 {
    type Affine = crate::math::G1Affine;
    const CURVE: Curve = Curve::G1;
}

impl GpuCurve for crate::math::G2 {
    type Affine = crate::math::G2Affine;
    const CURVE: Curve = Curve::G2;
}

/// out[i] = p[i] op q[i]; `q_affine` is read for `AddAffine`, `q` otherwise.
pub fn curve_op<P: GpuCurve>(op: CurveOp, p: &[P], q: &[P], q_affine: &[P::Affine]) -> Result<Vec<P>> {
    let n = p.len();
    let q_ptr: *const c_void = if op == CurveOp::AddAffine {
        if q_affine.len() != n {
            return Err(Error::size_mismatch("p and q differ in length"));
        }
        q_affine.as_ptr().cast()
    } else {
        if q.len() != n {
            return Err(Error::size_mismatch("p and q differ in length"));
        }
        q.as_ptr().cast()
    };
    let mut out = vec![P::default(); n];
    // SAFETY: p, q (of the kind `op` reads) and out hold n points in blst's
    // layouts, which the CUDA side shares.
    let status = unsafe {
        c2p_cuda_curve_op(
            0,
            P::CURVE,
            op,
            p.as_ptr().cast(),
            q_ptr,
            out.as_mut_ptr().cast(),
            n,
        )
    };
    check(status, "GPU curve operation")?;
    Ok(out)
}
