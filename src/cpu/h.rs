//! The quotient polynomial h = (a·b − c) / Z of a Groth16 proof, computed as
//! bellperson does: interpolate a, b and c over the domain, evaluate them on
//! the coset g·⟨ω⟩ where Z is a non-zero constant, combine pointwise, and
//! interpolate back. Memory: three vectors of the domain size (96·m bytes).

use super::ntt::Domain;
use crate::ffi::blst::Fr;
use rayon::prelude::*;

/// The m − 1 coefficients of h for evaluation vectors a, b, c of length
/// ≤ m (missing entries are zero).
pub fn quotient(domain: &Domain, a: &[Fr], b: &[Fr], c: &[Fr]) -> Vec<Fr> {
    let on_coset = |evals: &[Fr]| {
        let mut v = vec![Fr::ZERO; domain.m];
        v[..evals.len()].copy_from_slice(evals);
        domain.ifft(&mut v);
        domain.coset_fft(&mut v);
        v
    };
    let mut h = on_coset(a);
    let b = on_coset(b);
    let c = on_coset(c);
    let z_inv = domain.z_on_coset().inverse();
    h.par_iter_mut()
        .zip(b.par_iter().zip(c.par_iter()))
        .for_each(|(a, (b, c))| *a = (*a * *b - *c) * z_inv);
    drop(b);
    drop(c);
    domain.icoset_fft(&mut h);
    h.truncate(domain.m - 1);
    h
}
