//! Groth16 verification: e(A, B) = e(α, β) · e(Σ x_i·IC_i, γ) · e(C, δ).

use crate::error::{Error, Result};
use crate::math::{Fr, Gt};
use crate::params::VerifyingKey;
use crate::proof::Proof;

/// Checks `proof` against the public inputs (without the leading ONE).
/// A well-formed proof that does not verify is `Ok(false)`; inputs of the
/// wrong count are an error.
pub fn verify(vk: &VerifyingKey, public_inputs: &[Fr], proof: &Proof) -> Result<bool> {
    if public_inputs.len() + 1 != vk.ic.len() {
        return Err(Error::size_mismatch(format!(
            "the verifying key has {} public inputs, {} given",
            vk.ic.len().saturating_sub(1),
            public_inputs.len()
        )));
    }
    let ic = public_inputs
        .iter()
        .zip(&vk.ic[1..])
        .fold(vk.ic[0].to_projective(), |acc, (x, p)| {
            acc + p.to_projective().mul(x)
        });
    let lhs = Gt::pairing_product(&[(proof.a, proof.b)]);
    let rhs = Gt::pairing_product(&[
        (vk.alpha_g1, vk.beta_g2),
        (ic.to_affine(), vk.gamma_g2),
        (proof.c, vk.delta_g2),
    ]);
    Ok(lhs == rhs)
}
