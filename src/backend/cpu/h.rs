//! The quotient polynomial h = (a·b − c) / Z of a Groth16 proof, with the
//! coefficients bellperson computes: bellperson interpolates a, b and c over
//! the domain, evaluates them on the coset g·⟨ω⟩ where Z is the non-zero
//! constant z = g^m − 1, combines them pointwise and interpolates back over
//! the coset. The interpolation back is linear, and c's interpolant C has
//! degree < m, so interpolating C's coset values gives C's coefficients
//! back: h = icoset(A·B / z) − C / z, for any a, b, c. c then needs only its
//! inverse transform: six transforms of the domain's size instead of seven,
//! field elements equal to bellperson's. Memory: two vectors of the domain
//! size at a time (64·m bytes; bellperson holds three).

use crate::math::Domain;
use crate::math::Fr;
use rayon::prelude::*;

/// The m − 1 coefficients of h for evaluation vectors a, b, c of length
/// ≤ m (missing entries are zero).
pub fn quotient(domain: &Domain, a: &[Fr], b: &[Fr], c: &[Fr]) -> Vec<Fr> {
    let padded = |evals: &[Fr]| {
        let mut v = vec![Fr::ZERO; domain.m];
        v[..evals.len()].copy_from_slice(evals);
        v
    };
    let on_coset = |evals: &[Fr]| {
        let mut v = padded(evals);
        domain.ifft(&mut v);
        domain.coset_fft(&mut v);
        v
    };
    let mut h = on_coset(a);
    let b = on_coset(b);
    let z_inv = domain.z_on_coset().inverse();
    h.par_iter_mut()
        .zip(b.par_iter())
        .for_each(|(a, b)| *a = *a * *b * z_inv);
    drop(b);
    domain.icoset_fft(&mut h);
    let mut c = padded(c);
    domain.ifft(&mut c);
    h.par_iter_mut()
        .zip(c.par_iter())
        .for_each(|(h, c)| *h -= *c * z_inv);
    h.truncate(domain.m - 1);
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    /// bellperson's order of operations: all three on the coset, combined,
    /// interpolated back.
    fn seven_transforms(domain: &Domain, a: &[Fr], b: &[Fr], c: &[Fr]) -> Vec<Fr> {
        let on_coset = |evals: &[Fr]| {
            let mut v = vec![Fr::ZERO; domain.m];
            v[..evals.len()].copy_from_slice(evals);
            domain.ifft(&mut v);
            domain.coset_fft(&mut v);
            v
        };
        let (mut h, b, c) = (on_coset(a), on_coset(b), on_coset(c));
        let z_inv = domain.z_on_coset().inverse();
        for i in 0..domain.m {
            h[i] = (h[i] * b[i] - c[i]) * z_inv;
        }
        domain.icoset_fft(&mut h);
        h.truncate(domain.m - 1);
        h
    }

    #[test]
    fn six_transforms_equal_bellpersons_seven_for_any_a_b_c() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for log_m in [1, 2, 5, 10, 13] {
            let d = Domain::new(log_m).unwrap();
            // Random vectors (no constraint system behind them: the identity
            // holds for any a, b, c) and shorter ones padded with zeros.
            for len in [d.m, d.m - 1, d.m / 2] {
                let v = |rng: &mut ChaCha8Rng| (0..len).map(|_| Fr::random(rng)).collect::<Vec<_>>();
                let (a, b, c) = (v(&mut rng), v(&mut rng), v(&mut rng));
                assert!(
                    quotient(&d, &a, &b, &c) == seven_transforms(&d, &a, &b, &c),
                    "2^{log_m}, {len} values"
                );
            }
        }
    }
}
