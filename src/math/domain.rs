//! Number-theoretic transforms over Fr on radix-2 domains, parallel with
//! rayon. The domain and its root of unity are bellperson's (ω = the
//! 2^32-th root of unity 7^((r−1)/2^32), raised to 2^(32−log m)), so the
//! evaluations and coefficients agree with bellperson index for index.

use crate::math::Fr;
use once_cell::sync::OnceCell;
use rayon::prelude::*;

/// log2 of the largest power-of-two subgroup of Fr*.
pub const TWO_ADICITY: u32 = 32;

/// Fr's multiplicative generator, also the coset shift bellperson uses.
pub const GENERATOR: u64 = 7;

/// (r − 1) / 2^32, little-endian limbs: ROOT_OF_UNITY = 7^this.
const ODD_PART_OF_R_MINUS_1: [u64; 4] = [
    0xfffe_5bfe_ffff_ffff,
    0x09a1_d805_53bd_a402,
    0x299d_7d48_3339_d808,
    0x0000_0000_73ed_a753,
];

/// base^e for a multi-limb public exponent (little-endian limbs).
fn pow_limbs(base: Fr, e: &[u64]) -> Fr {
    let mut acc = Fr::ONE;
    for limb in e.iter().rev() {
        for bit in (0..64).rev() {
            acc = acc.square();
            if (limb >> bit) & 1 == 1 {
                acc *= base;
            }
        }
    }
    acc
}

/// The primitive 2^32-th root of unity of Fr (blstrs' `ROOT_OF_UNITY`).
pub fn root_of_unity() -> Fr {
    pow_limbs(Fr::from_u64(GENERATOR), &ODD_PART_OF_R_MINUS_1)
}

/// Elements handled by one parallel task in a butterfly stage.
const PAR_CHUNK: usize = 1 << 12;

/// A multiplicative subgroup of size m = 2^log_m with its twiddle table.
pub struct Domain {
    pub log_m: u32,
    pub m: usize,
    pub omega: Fr,
    /// ω^j for j < m/2: 16·m bytes, built on the first CPU transform (a
    /// prover whose H step runs on the GPU never needs them).
    twiddles: OnceCell<Vec<Fr>>,
    m_inv: Fr,
    shift: Fr,
    shift_inv: Fr,
}

impl Domain {
    /// The domain of size 2^log_m; `None` above Fr's two-adicity.
    pub fn new(log_m: u32) -> Option<Domain> {
        if log_m > TWO_ADICITY {
            return None;
        }
        let m = 1usize << log_m;
        let mut omega = root_of_unity();
        for _ in log_m..TWO_ADICITY {
            omega = omega.square();
        }
        let shift = Fr::from_u64(GENERATOR);
        Some(Domain {
            log_m,
            m,
            omega,
            twiddles: OnceCell::new(),
            m_inv: Fr::from_u64(m as u64).inverse(),
            shift,
            shift_inv: shift.inverse(),
        })
    }

    /// Evaluations at ω^i from coefficients (both in natural order).
    pub fn fft(&self, values: &mut [Fr]) {
        debug_assert_eq!(values.len(), self.m);
        bit_reverse_permute(values);
        self.butterflies(values);
    }

    /// Coefficients from evaluations at ω^i: the forward transform with
    /// ω^−1, which is the forward one with outputs 1..m reversed, over m.
    pub fn ifft(&self, values: &mut [Fr]) {
        self.fft(values);
        values[1..].reverse();
        let m_inv = self.m_inv;
        values.par_chunks_mut(PAR_CHUNK).for_each(|chunk| {
            for v in chunk {
                *v *= m_inv;
            }
        });
    }

    /// Evaluations on the coset g·⟨ω⟩ (g = 7) from coefficients.
    pub fn coset_fft(&self, values: &mut [Fr]) {
        scale_by_powers(values, self.shift, Fr::ONE);
        self.fft(values);
    }

    /// Coefficients from evaluations on the coset g·⟨ω⟩.
    pub fn icoset_fft(&self, values: &mut [Fr]) {
        self.fft(values);
        values[1..].reverse();
        scale_by_powers(values, self.shift_inv, self.m_inv);
    }

    /// 1/m.
    pub fn m_inv(&self) -> Fr {
        self.m_inv
    }

    /// The coset shift g (= 7) and its inverse.
    pub fn shift(&self) -> (Fr, Fr) {
        (self.shift, self.shift_inv)
    }

    /// The vanishing polynomial Z(x) = x^m − 1 at every point of the coset
    /// g·⟨ω⟩: the constant g^m − 1.
    pub fn z_on_coset(&self) -> Fr {
        self.shift.pow(self.m as u64) - Fr::ONE
    }

    /// In-place decimation-in-time stages on bit-reversed input.
    fn butterflies(&self, values: &mut [Fr]) {
        let m = self.m;
        let twiddles = self.twiddles.get_or_init(|| powers(self.omega, Fr::ONE, m / 2));
        // Stages whose butterflies stay inside one PAR_CHUNK block run per
        // block, so each block is read from memory once for all of them.
        let block = m.min(PAR_CHUNK);
        values.par_chunks_mut(block).for_each(|chunk| {
            let mut half = 1;
            while half < block {
                let stride = m / (2 * half);
                for group in chunk.chunks_mut(2 * half) {
                    let (lo, hi) = group.split_at_mut(half);
                    for (j, (x0, x1)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                        Fr::butterfly_ct(x0, x1, &twiddles[j * stride]);
                    }
                }
                half *= 2;
            }
        });
        // Wider stages: split each group's halves into parallel pieces.
        let mut half = block;
        while half < m {
            let stride = m / (2 * half);
            values.chunks_mut(2 * half).for_each(|group| {
                let (lo, hi) = group.split_at_mut(half);
                lo.par_chunks_mut(PAR_CHUNK)
                    .zip(hi.par_chunks_mut(PAR_CHUNK))
                    .enumerate()
                    .for_each(|(piece, (lo, hi))| {
                        let first = piece * PAR_CHUNK;
                        for (j, (x0, x1)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                            Fr::butterfly_ct(x0, x1, &twiddles[(first + j) * stride]);
                        }
                    });
            });
            half *= 2;
        }
    }
}

/// [start·base^0, start·base^1, ..., start·base^(n−1)], built in parallel.
fn powers(base: Fr, start: Fr, n: usize) -> Vec<Fr> {
    let mut out = vec![Fr::ZERO; n];
    out.par_chunks_mut(PAR_CHUNK)
        .enumerate()
        .for_each(|(piece, chunk)| {
            let mut acc = start * base.pow((piece * PAR_CHUNK) as u64);
            for v in chunk {
                *v = acc;
                acc *= base;
            }
        });
    out
}

/// values[i] *= start·base^i.
fn scale_by_powers(values: &mut [Fr], base: Fr, start: Fr) {
    values
        .par_chunks_mut(PAR_CHUNK)
        .enumerate()
        .for_each(|(piece, chunk)| {
            let mut acc = start * base.pow((piece * PAR_CHUNK) as u64);
            for v in chunk {
                *v *= acc;
                acc *= base;
            }
        });
}

fn bit_reverse_permute(values: &mut [Fr]) {
    let n = values.len();
    if n <= 2 {
        return;
    }
    let shift = usize::BITS - n.trailing_zeros();
    for i in 0..n {
        let j = i.reverse_bits() >> shift;
        if i < j {
            values.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    /// Evaluation by Horner's rule, the definition the transform must match.
    fn evaluate(coeffs: &[Fr], x: Fr) -> Fr {
        coeffs.iter().rev().fold(Fr::ZERO, |acc, c| acc * x + *c)
    }

    #[test]
    fn root_has_order_two_to_the_32() {
        let w = root_of_unity();
        let mut x = w;
        for _ in 0..31 {
            x = x.square();
        }
        assert_ne!(x, Fr::ONE, "ω^(2^31) must be −1, not 1");
        assert_eq!(x.square(), Fr::ONE);
    }

    #[test]
    fn fft_matches_naive_evaluation() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for log_m in [0, 1, 2, 3, 5, 8] {
            let d = Domain::new(log_m).unwrap();
            let coeffs: Vec<Fr> = (0..d.m).map(|_| Fr::random(&mut rng)).collect();
            let mut evals = coeffs.clone();
            d.fft(&mut evals);
            for (i, e) in evals.iter().enumerate() {
                assert_eq!(
                    *e,
                    evaluate(&coeffs, d.omega.pow(i as u64)),
                    "log_m {log_m} i {i}"
                );
            }
            let mut coset = coeffs.clone();
            d.coset_fft(&mut coset);
            let g = Fr::from_u64(GENERATOR);
            for (i, e) in coset.iter().enumerate() {
                assert_eq!(*e, evaluate(&coeffs, g * d.omega.pow(i as u64)));
            }
        }
    }

    #[test]
    fn inverse_transforms_are_identities() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        // Sizes on both sides of the block boundary of the parallel stages.
        for log_m in [1, 4, 11, 12, 13, 15, 17] {
            let d = Domain::new(log_m).unwrap();
            let original: Vec<Fr> = (0..d.m).map(|_| Fr::random(&mut rng)).collect();
            let mut v = original.clone();
            d.fft(&mut v);
            d.ifft(&mut v);
            assert_eq!(v, original, "fft/ifft at 2^{log_m}");
            d.coset_fft(&mut v);
            assert_ne!(v, original);
            d.icoset_fft(&mut v);
            assert_eq!(v, original, "coset round trip at 2^{log_m}");
        }
    }

    #[test]
    fn large_fft_agrees_with_naive_at_sampled_points() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let d = Domain::new(14).unwrap();
        let coeffs: Vec<Fr> = (0..d.m).map(|_| Fr::random(&mut rng)).collect();
        let mut evals = coeffs.clone();
        d.fft(&mut evals);
        for i in [0usize, 1, 4095, 4096, 8191, 12345, d.m - 1] {
            assert_eq!(evals[i], evaluate(&coeffs, d.omega.pow(i as u64)), "i {i}");
        }
    }
}
