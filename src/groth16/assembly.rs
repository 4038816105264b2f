//! The last step of a proof: the MSM sums, r and s and the verifying key
//! combined exactly as bellperson does.
//!
//! A = α₁ + ΣA + r·δ₁
//! B = β₂ + ΣB₂ + s·δ₂
//! C = s·ΣA + r·ΣB₁ + rs·δ₁ + s·α₁ + r·β₁ + ΣH + ΣL

use crate::math::{Fr, G1, G2};
use crate::params::VerifyingKey;
use crate::proof::Proof;

/// The five multi-scalar multiplications of one circuit.
#[derive(Clone, Copy, Debug)]
pub struct QuerySums {
    /// Σ over the A query (inputs and A-dense aux).
    pub a: G1,
    /// Σ over the B query in G1 and in G2.
    pub b_g1: G1,
    pub b_g2: G2,
    /// Σ h_i·H_i.
    pub h: G1,
    /// Σ aux_i·L_i.
    pub l: G1,
}

/// r and s are secret: every multiplication by them is constant-time
/// (blst's), and their product is zeroed after use.
pub fn assemble(vk: &VerifyingKey, sums: &QuerySums, r: &Fr, s: &Fr) -> Proof {
    let delta_g1 = vk.delta_g1.to_projective();
    let a = vk.alpha_g1.to_projective() + sums.a + delta_g1.mul(r);
    let b = vk.beta_g2.to_projective() + sums.b_g2 + vk.delta_g2.to_projective().mul(s);
    let mut rs = *r * *s;
    let c = sums.a.mul(s)
        + sums.b_g1.mul(r)
        + delta_g1.mul(&rs)
        + vk.alpha_g1.to_projective().mul(s)
        + vk.beta_g1.to_projective().mul(r)
        + sums.h
        + sums.l;
    zeroize::Zeroize::zeroize(&mut rs);
    Proof {
        a: a.to_affine(),
        b: b.to_affine(),
        c: c.to_affine(),
    }
}
