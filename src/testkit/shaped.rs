//! PoRep-shaped workloads of any size, for benchmarks: the counts and
//! densities of a 32 GiB PoRep partition (../anchors: 130,278,869
//! constraints at 2^27, 328 inputs, A-aux density 99.7 %, B-aux density
//! 25.4 %) scaled to a domain of 2^K, and witnesses with PoRep's mix of
//! zeros, ones and full field elements.
//!
//! The parameters are valid curve points but not a Groth16 setup: 2^16
//! random G1 and 2^14 random G2 points per vector, the others made from
//! them by one addition per point (see `distinct_points`), so no point
//! repeats (made in seconds where a setup of 2^27 would take hours).
//! Proofs from them have the real cost and do not verify.

use crate::groth16::Witness;
use crate::math::{Fr, G1Affine, G2Affine, G1, G2};
use crate::params::{Parameters, VerifyingKey};
use crate::testkit::synthetic::{FixedBase, FixedBaseGroup};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rayon::prelude::*;

/// Sizes of a PoRep partition scaled to 2^log2 constraints' domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PorepShape {
    pub log2: u32,
    /// Constraints (the a, b, c vectors have one more per input).
    pub constraints: usize,
    /// Public inputs, ONE included.
    pub inputs: usize,
    pub aux: usize,
}

/// The value mix of the aux assignment and of a, b, c, in percent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValueMix {
    pub aux_zeros: f64,
    pub aux_ones: f64,
    /// Zero evaluations among a, b and c.
    pub abc_zeros: [f64; 3],
}

impl Default for ValueMix {
    /// PoRep's (anchors.md): aux 51.19 % zeros, 47.17 % ones; a and b
    /// 49.2 % zeros, c 79.8 %.
    fn default() -> Self {
        ValueMix {
            aux_zeros: 51.19,
            aux_ones: 47.17,
            abc_zeros: [49.2, 49.2, 79.8],
        }
    }
}

// A 32 GiB PoRep partition.
const PARTITION_CONSTRAINTS: f64 = 130_278_869.0;
const PARTITION_AUX: f64 = 130_169_893.0;
const PARTITION_INPUTS: usize = 328;
/// Aux variables with A-density (a = 129,753,620 points less the inputs).
const A_AUX_DENSITY: f64 = (129_753_620.0 - 328.0) / 130_169_893.0;
/// Aux variables with B-density (b = 33,112,282 points less the inputs,
/// all of which are taken to have B-density).
const B_AUX_DENSITY: f64 = (33_112_282.0 - 328.0) / 130_169_893.0;

/// A uniform draw in [0, 100) from a position and a seed (a hash, so the
/// densities are fixed by the "circuit" and reproducible).
fn percent(index: usize, seed: u64) -> f64 {
    let mut x = (index as u64) ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (x >> 11) as f64 / (1u64 << 53) as f64 * 100.0
}

/// Bitmap words with bit i set where `keep(i)`.
fn bitmap(len: usize, keep: impl Fn(usize) -> bool + Sync) -> Vec<u64> {
    (0..len.div_ceil(64))
        .into_par_iter()
        .map(|w| {
            (0..64)
                .filter(|b| w * 64 + b < len && keep(w * 64 + b))
                .fold(0u64, |acc, b| acc | 1 << b)
        })
        .collect()
}

/// `len` distinct points of a group, made cheaply: `d` random points B_j
/// (a scalar multiplication each) and one more random point T; the point at
/// i = t·d + j is B_j + t·T, one addition per point. Repeated points would
/// be unlike real parameters: a peer's affine additions may not take the
/// doubling case that repeats make likely in an MSM's buckets.
fn distinct_points<P: FixedBaseGroup>(generator: P, len: usize, d: usize, seed: u64) -> Vec<P::Affine>
where
    P::Affine: Copy + Send + Sync,
{
    let d = d.clamp(1, len.max(1));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ks: Vec<Fr> = (0..=d).map(|_| Fr::random(&mut rng)).collect();
    let mut base = FixedBase::new(generator).mul_many(&ks);
    let step = base.pop().map_or_else(P::default, |t| P::from_affine(&t));
    // t·T for every tile t (index 0 unused: tile 0 is the B_j themselves).
    let offsets: Vec<P> = std::iter::successors(Some(P::default()), |o| Some(*o + step))
        .take(len.div_ceil(d))
        .collect();
    let offsets = P::batch_to_affine(&offsets);
    const CHUNK: usize = 1 << 12;
    let mut out = vec![P::Affine::default(); len];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let first = c * CHUNK;
        let range = first..first + chunk.len();
        let b: Vec<P::Affine> = range.clone().map(|i| base[i % d]).collect();
        let t: Vec<P::Affine> = range.map(|i| offsets[i / d]).collect();
        chunk.copy_from_slice(&P::pairwise_sums(&b, &t));
    });
    out
}

/// The lengths of a parameter set's vectors.
struct QuerySizes {
    log2: u32,
    inputs: usize,
    aux: usize,
    /// Inputs and aux variables with A-density, and with B-density.
    a: usize,
    b: usize,
}

impl QuerySizes {
    /// Distinct random points of these lengths (see the module comment), the
    /// verifying key random too.
    fn parameters(&self, seed: u64) -> Parameters {
        // Few random points (a scalar multiplication each, ~25 µs in G1 and
        // ~60 µs in G2 on one core), the rest an addition each (~0.8 / 1.9 µs).
        let g1 = |len: usize, s: u64| distinct_points(G1::generator(), len, 1 << 16, seed ^ s);
        let g2 = |len: usize, s: u64| distinct_points(G2::generator(), len, 1 << 14, seed ^ s);
        let one_g1 = |s: u64| -> G1Affine { g1(1, s)[0] };
        let one_g2 = |s: u64| -> G2Affine { g2(1, s)[0] };
        Parameters {
            vk: VerifyingKey {
                alpha_g1: one_g1(11),
                beta_g1: one_g1(12),
                beta_g2: one_g2(13),
                gamma_g2: one_g2(14),
                delta_g1: one_g1(15),
                delta_g2: one_g2(16),
                ic: g1(self.inputs, 17),
            },
            h: g1((1 << self.log2) - 1, 1),
            l: g1(self.aux, 2),
            a: g1(self.a, 3),
            b_g1: g1(self.b, 4),
            b_g2: g2(self.b, 5),
            residency: Default::default(),
            id: Default::default(),
        }
    }
}

/// Parameters of distinct random points (see the module comment) sized for
/// `witness`'s circuit: its domain, inputs, aux and densities. What `bench
/// c2` proves real circuits against, where a real setup of 2^27 would take
/// hours.
pub fn parameters_for(witness: &Witness, seed: u64) -> Parameters {
    let ones = |bits: &[u64]| bits.iter().map(|w| w.count_ones() as usize).sum::<usize>();
    let inputs = witness.inputs.len();
    QuerySizes {
        log2: witness.a.len().next_power_of_two().trailing_zeros(),
        inputs,
        aux: witness.aux.len(),
        a: inputs + ones(&witness.a_aux_density),
        b: ones(&witness.b_inp_density) + ones(&witness.b_aux_density),
    }
    .parameters(seed)
}

impl PorepShape {
    /// A partition's shape for a domain of 2^log2 (log2 = 27 is the real one).
    pub fn scaled(log2: u32) -> PorepShape {
        let scale = (1u64 << log2) as f64 / (1u64 << 27) as f64;
        let inputs = PARTITION_INPUTS.min(1 << log2.saturating_sub(4)).max(2);
        // Room in the domain for the input constraints.
        let constraints =
            ((PARTITION_CONSTRAINTS * scale) as usize).min((1usize << log2).saturating_sub(inputs));
        let aux = ((PARTITION_AUX * scale) as usize).max(1);
        PorepShape {
            log2,
            constraints,
            inputs,
            aux,
        }
    }

    fn a_aux(&self, i: usize) -> bool {
        percent(i, 1) < A_AUX_DENSITY * 100.0
    }

    fn b_aux(&self, i: usize) -> bool {
        percent(i, 2) < B_AUX_DENSITY * 100.0
    }

    /// Parameters of this shape: distinct random points (see the module
    /// comment), the verifying key random too.
    pub fn parameters(&self, seed: u64) -> Parameters {
        let a_aux = (0..self.aux).into_par_iter().filter(|&i| self.a_aux(i)).count();
        let b_aux = (0..self.aux).into_par_iter().filter(|&i| self.b_aux(i)).count();
        let sizes = QuerySizes {
            log2: self.log2,
            inputs: self.inputs,
            aux: self.aux,
            a: self.inputs + a_aux,
            b: self.inputs + b_aux,
        };
        sizes.parameters(seed)
    }

    /// A witness of this shape. The positions of full field elements are
    /// the circuit's (the same for every seed, as in PoRep); which of the
    /// others are 0 or 1, and the a, b, c evaluations, depend on `seed`.
    pub fn witness(&self, mix: ValueMix, seed: u64) -> Witness {
        let other = 100.0 - mix.aux_zeros - mix.aux_ones;
        // The draws of this witness, apart from the circuit's (seeds 1–3).
        let draw = |stream: u64| (seed.wrapping_add(1) << 8) | stream;
        let aux: Vec<Fr> = (0..self.aux)
            .into_par_iter()
            .map(|i| {
                if percent(i, 3) < other {
                    return full(i, seed ^ 0x5eed);
                }
                if percent(i, draw(4)) * (100.0 - other) / 100.0 < mix.aux_zeros {
                    Fr::ZERO
                } else {
                    Fr::ONE
                }
            })
            .collect();
        let inputs: Vec<Fr> = (0..self.inputs)
            .map(|i| if i == 0 { Fr::ONE } else { full(i, draw(5)) })
            .collect();
        let n = self.constraints + self.inputs;
        let evals = |zeros: f64, s: u64| -> Vec<Fr> {
            (0..n)
                .into_par_iter()
                .map(|i| {
                    if percent(i, draw(s)) < zeros {
                        Fr::ZERO
                    } else {
                        full(i, draw(s))
                    }
                })
                .collect()
        };
        Witness {
            a_aux_density: bitmap(self.aux, |i| self.a_aux(i)),
            b_inp_density: bitmap(self.inputs, |_| true),
            b_aux_density: bitmap(self.aux, |i| self.b_aux(i)),
            a: evals(mix.abc_zeros[0], 6),
            b: evals(mix.abc_zeros[1], 7),
            c: evals(mix.abc_zeros[2], 8),
            inputs,
            aux,
            products: None,
        }
    }
}

/// A full field element from a position and a seed.
fn full(index: usize, seed: u64) -> Fr {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (index as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let mut bytes = [0u8; 64];
    rng.fill_bytes(&mut bytes);
    Fr::from_uniform_bytes(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_at_2_27_is_a_porep_partition() {
        let s = PorepShape::scaled(27);
        assert_eq!((s.constraints, s.inputs, s.aux), (130_278_869, 328, 130_169_893));
    }

    #[test]
    fn affine_pairwise_sums_equal_blst() {
        let pts = distinct_points(G1::generator(), 64, 64, 9);
        let mut p: Vec<G1Affine> = pts[..32].to_vec();
        let mut q: Vec<G1Affine> = pts[32..].to_vec();
        // Doubling, a sum to infinity, and infinity on either side.
        q[0] = p[0];
        q[1] = (-p[1].to_projective()).to_affine();
        p[2] = G1Affine::identity();
        q[3] = G1Affine::identity();
        let want: Vec<G1Affine> = p
            .iter()
            .zip(&q)
            .map(|(a, b)| a.to_projective().add_affine(b).to_affine())
            .collect();
        assert_eq!(G1Affine::pairwise_sums(&p, &q), want);
        assert!(want[1].is_identity());
    }

    #[test]
    fn points_are_valid_and_distinct_beyond_the_random_ones() {
        let g1 = distinct_points(G1::generator(), 1000, 64, 5);
        let g2 = distinct_points(G2::generator(), 300, 16, 6);
        assert!(g1.iter().all(|p| p.in_subgroup() && !p.is_identity()));
        assert!(g2.iter().all(|p| p.in_subgroup() && !p.is_identity()));
        let g1_set: std::collections::HashSet<_> = g1.iter().map(|p| p.to_compressed()).collect();
        let g2_set: std::collections::HashSet<_> = g2.iter().map(|p| p.to_compressed()).collect();
        assert_eq!((g1_set.len(), g2_set.len()), (1000, 300));
    }

    #[test]
    fn small_shape_has_the_densities_and_mix() {
        let s = PorepShape::scaled(14);
        let params = s.parameters(1);
        let w = s.witness(ValueMix::default(), 2);
        let a = w.as_assignment();
        a.check(0, &params).expect("witness fits its parameters");
        let frac = |k: usize| k as f64 / s.aux as f64 * 100.0;
        assert!((frac(a.a_aux_density.popcount) - 99.68).abs() < 0.5);
        assert!((frac(a.b_aux_density.popcount) - 25.44).abs() < 1.5);
        let zeros = w.aux.iter().filter(|v| v.is_zero()).count();
        let ones = w.aux.iter().filter(|v| **v == Fr::ONE).count();
        assert!((frac(zeros) - 51.19).abs() < 2.0, "zeros {}", frac(zeros));
        assert!((frac(ones) - 47.17).abs() < 2.0, "ones {}", frac(ones));
        let c_zeros = w.c.iter().filter(|v| v.is_zero()).count() as f64 / w.c.len() as f64;
        assert!((c_zeros * 100.0 - 79.8).abs() < 2.0);
        // The full elements sit at the same positions for every seed.
        let w2 = s.witness(ValueMix::default(), 3);
        let full_at = |w: &Witness| -> Vec<usize> {
            (0..s.aux)
                .filter(|&i| !w.aux[i].is_zero() && w.aux[i] != Fr::ONE)
                .collect()
        };
        assert_eq!(full_at(&w), full_at(&w2));
        assert_ne!(w.aux, w2.aux);
    }
}
