//! Multi-scalar multiplication over witness vectors. Filecoin witnesses are
//! mostly 0 and 1 (SHA-256 bits), so each vector is split first: zeros are
//! skipped, the points of ones are summed with batched affine additions, and
//! only the remaining scalars go through blst's parallel Pippenger.

use crate::math::{bits_set_below, Fr, G1Affine, G2Affine, G1, G2};
use rayon::prelude::*;
use std::ops::Add;

/// An affine point type with a summation and a Pippenger MSM.
pub trait MsmPoint: Copy + Default + Send + Sync {
    type Projective: Copy + Send + Add<Output = Self::Projective>;
    fn sum(points: &[Self]) -> Self::Projective;
    fn msm(points: &[Self], scalars: &[[u8; 32]]) -> Self::Projective;
}

impl MsmPoint for G1Affine {
    type Projective = G1;
    fn sum(points: &[Self]) -> G1 {
        G1Affine::sum(points)
    }
    fn msm(points: &[Self], scalars: &[[u8; 32]]) -> G1 {
        G1Affine::msm(points, scalars)
    }
}

impl MsmPoint for G2Affine {
    type Projective = G2;
    fn sum(points: &[Self]) -> G2 {
        G2Affine::sum(points)
    }
    fn msm(points: &[Self], scalars: &[[u8; 32]]) -> G2 {
        G2Affine::msm(points, scalars)
    }
}

/// Which scalars of a vector take part: all of them, or those whose bit is
/// set in a density bitmap (bit i is bit i % 64 of word i / 64). The points
/// are paired, in order, with the scalars that take part.
#[derive(Clone, Copy, Debug)]
pub enum Selection<'a> {
    All,
    Density(&'a [u64]),
}

impl Selection<'_> {
    fn contains(&self, i: usize) -> bool {
        match self {
            Selection::All => true,
            Selection::Density(words) => (words[i / 64] >> (i % 64)) & 1 == 1,
        }
    }

    /// How many of the first `end` scalars (a multiple of 64, or the length)
    /// take part.
    fn count_before(&self, end: usize) -> usize {
        match self {
            Selection::All => end,
            Selection::Density(words) => bits_set_below(words, end),
        }
    }
}

/// Scalars classified per parallel task (a multiple of 64, for the bitmap).
const BLOCK: usize = 1 << 16;

/// The witness split of one vector: points to add, and points with scalars
/// to multiply.
struct Split<P> {
    ones: Vec<P>,
    others: Vec<P>,
    other_scalars: Vec<[u8; 32]>,
}

impl<P> Split<P> {
    fn empty() -> Self {
        Split {
            ones: Vec::new(),
            others: Vec::new(),
            other_scalars: Vec::new(),
        }
    }

    fn append(mut self, mut rhs: Split<P>) -> Self {
        self.ones.append(&mut rhs.ones);
        self.others.append(&mut rhs.others);
        self.other_scalars.append(&mut rhs.other_scalars);
        self
    }
}

/// Σ scalars[i]·P_k over the selected i, where P_k is the next point in
/// `points` (the caller has checked there is one per selected scalar).
pub fn witness_msm<P: MsmPoint>(points: &[P], scalars: &[Fr], selection: Selection) -> P::Projective {
    let n = scalars.len();
    let blocks = n.div_ceil(BLOCK);
    // Index of the first point of each block.
    let first_point: Vec<usize> = (0..blocks)
        .into_par_iter()
        .map(|b| selection.count_before(b * BLOCK))
        .collect();

    let split = (0..blocks)
        .into_par_iter()
        .map(|b| {
            let mut part = Split::empty();
            let mut k = first_point[b];
            for (i, s) in scalars
                .iter()
                .enumerate()
                .take(n.min((b + 1) * BLOCK))
                .skip(b * BLOCK)
            {
                if !selection.contains(i) {
                    continue;
                }
                let point = points[k];
                k += 1;
                if s.is_zero() {
                    continue;
                }
                if s.is_one() {
                    part.ones.push(point);
                } else {
                    part.others.push(point);
                    part.other_scalars.push(s.to_scalar_bytes());
                }
            }
            part
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold(Split::empty(), Split::append);

    log::trace!(
        "msm over {n} scalars: {} ones, {} others",
        split.ones.len(),
        split.others.len()
    );
    let (ones, others) = rayon::join(
        || P::sum(&split.ones),
        || P::msm(&split.others, &split.other_scalars),
    );
    ones + others
}

/// Σ scalars[i]·points[i] for a dense vector with few zeros and ones (the
/// H polynomial), without copying the points.
pub fn dense_msm<P: MsmPoint>(points: &[P], scalars: &[Fr]) -> P::Projective {
    let n = points.len().min(scalars.len());
    let bytes: Vec<[u8; 32]> = scalars[..n].par_iter().map(Fr::to_scalar_bytes).collect();
    P::msm(&points[..n], &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};

    /// Points k·G for k = 1..=n, and a witness mixing 0, 1 and random values.
    fn fixture(n: usize, seed: u64) -> (Vec<G1Affine>, Vec<Fr>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let g = G1::generator();
        let mut acc = G1::identity();
        let proj: Vec<G1> = (0..n)
            .map(|_| {
                acc += g;
                acc
            })
            .collect();
        let scalars = (0..n)
            .map(|_| match rng.next_u32() % 3 {
                0 => Fr::ZERO,
                1 => Fr::ONE,
                _ => Fr::random(&mut rng),
            })
            .collect();
        (G1::batch_to_affine(&proj), scalars)
    }

    fn naive(points: impl Iterator<Item = G1Affine>, scalars: impl Iterator<Item = Fr>) -> G1 {
        points
            .zip(scalars)
            .fold(G1::identity(), |acc, (p, s)| acc + p.to_projective().mul(&s))
    }

    #[test]
    fn msm_equals_naive_sum() {
        for n in [0usize, 1, 2, 31, 64, 100, 1000, BLOCK + 77] {
            let (points, scalars) = fixture(n, n as u64);
            let expected = naive(points.iter().copied(), scalars.iter().copied());
            assert_eq!(witness_msm(&points, &scalars, Selection::All), expected, "n {n}");
            assert_eq!(dense_msm(&points, &scalars), expected, "dense n {n}");
        }
    }

    #[test]
    fn density_pairs_points_with_selected_scalars() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for n in [1usize, 63, 64, 65, 500, 2 * BLOCK + 3] {
            let (points, scalars) = fixture(n, 100 + n as u64);
            let words: Vec<u64> = (0..n.div_ceil(64)).map(|_| rng.next_u64()).collect();
            let selected: Vec<usize> = (0..n).filter(|&i| (words[i / 64] >> (i % 64)) & 1 == 1).collect();
            let expected = naive(points.iter().copied(), selected.iter().map(|&i| scalars[i]));
            let got = witness_msm(&points[..selected.len()], &scalars, Selection::Density(&words));
            assert_eq!(got, expected, "n {n}");
        }
    }

    #[test]
    fn infinity_and_repeated_points() {
        let (mut points, scalars) = fixture(300, 5);
        points[3] = G1Affine::identity();
        points[10] = points[11];
        let expected = naive(points.iter().copied(), scalars.iter().copied());
        assert_eq!(witness_msm(&points, &scalars, Selection::All), expected);
    }

    #[test]
    fn g2_msm_equals_naive_sum() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut acc = G2::identity();
        let proj: Vec<G2> = (0..200)
            .map(|_| {
                acc += G2::generator();
                acc
            })
            .collect();
        let points = G2::batch_to_affine(&proj);
        let scalars: Vec<Fr> = (0..200)
            .map(|i| if i % 2 == 0 { Fr::ONE } else { Fr::random(&mut rng) })
            .collect();
        let expected = points
            .iter()
            .zip(&scalars)
            .fold(G2::identity(), |acc, (p, s)| acc + p.to_projective().mul(s));
        assert_eq!(witness_msm(&points, &scalars, Selection::All), expected);
    }
}
