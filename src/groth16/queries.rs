//! The query split: which witness scalars meet which parameter points in
//! each of a proof's five MSMs. Written once here; every backend evaluates
//! the same terms over its own copy of the points (host slices, points
//! streamed in chunks, or points resident on a GPU).
//!
//! ΣH = Σ h_i·H_i                       (h: the quotient, dense)
//! ΣL = Σ aux_i·L_i
//! ΣA = Σ inp_i·A_i + Σ_{i ∈ A-dense} aux_i·A_{n_in + k}
//! ΣB = Σ_{i ∈ B-dense} inp_i·B_k + Σ_{i ∈ B-dense} aux_i·B_{n_b + k}   (in G1 and G2)
//!
//! where k counts the dense variables before i and n_b the B-dense inputs.

use super::{Assignment, QuerySums};
use crate::error::{Error, ErrorKind, Result};
use crate::math::{Fr, G1Affine, G1, G2};
use crate::params::Parameters;
use rayon::prelude::*;

/// The parameter vector a term's points come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    H,
    L,
    A,
    BG1,
    BG2,
}

impl Query {
    /// This query's G1 points in `params` (none for B_G2, whose points are
    /// `params.b_g2`, in G2).
    pub fn g1_points(self, params: &Parameters) -> &[G1Affine] {
        match self {
            Query::H => &params.h,
            Query::L => &params.l,
            Query::A => &params.a,
            Query::BG1 => &params.b_g1,
            Query::BG2 => &[],
        }
    }
}

/// The witness vector a term's scalars come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vector {
    /// The quotient polynomial h (the H step's output).
    H,
    Inputs,
    Aux,
}

/// A density bitmap of the assignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mask {
    AAux,
    BInputs,
    BAux,
}

/// One MSM term: the scalars of `vector` (those whose bit is set in `mask`,
/// or all of them) with the points of `query` from `offset` on, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    pub query: Query,
    pub offset: usize,
    pub vector: Vector,
    pub mask: Option<Mask>,
}

/// The terms of a circuit's MSMs: H's, and the witness queries' (L, A, and
/// B in G1 and G2, the last three over inputs then aux).
#[derive(Clone, Copy, Debug)]
pub struct Queries {
    pub h: Term,
    pub l: Term,
    pub a: [Term; 2],
    pub b_g1: [Term; 2],
    pub b_g2: [Term; 2],
}

impl Queries {
    /// The split of `w`'s MSMs (its sizes are checked against the
    /// parameters by `Assignment::check`).
    pub fn of(w: &Assignment) -> Queries {
        let term = |query, offset, vector, mask| Term {
            query,
            offset,
            vector,
            mask,
        };
        let n_in = w.inputs.len();
        let b_inputs = w.b_inp_density.popcount;
        let b = |query| {
            [
                term(query, 0, Vector::Inputs, Some(Mask::BInputs)),
                term(query, b_inputs, Vector::Aux, Some(Mask::BAux)),
            ]
        };
        Queries {
            h: term(Query::H, 0, Vector::H, None),
            l: term(Query::L, 0, Vector::Aux, None),
            a: [
                term(Query::A, 0, Vector::Inputs, None),
                term(Query::A, n_in, Vector::Aux, Some(Mask::AAux)),
            ],
            b_g1: b(Query::BG1),
            b_g2: b(Query::BG2),
        }
    }

    /// The witness sums, each term's MSM from `g1` or `g2` (called in the
    /// order L, A, B_G1, B_G2, so a caller can time each query).
    pub fn witness_sums(
        &self,
        mut g1: impl FnMut(&Term) -> Result<G1>,
        mut g2: impl FnMut(&Term) -> Result<G2>,
    ) -> Result<WitnessSums> {
        // One circuit: the many-circuit sums of a group of one.
        let sums = self.witness_sums_of_many(|t| Ok(vec![g1(t)?]), |t| Ok(vec![g2(t)?]))?;
        sums.into_iter()
            .next()
            .ok_or_else(|| Error::new(ErrorKind::Panic, "internal error: no witness sums"))
    }

    /// The witness sums of several circuits whose terms are these (see
    /// `Assignment::shares_terms`): each term's MSMs for all of them at once
    /// from `g1` or `g2`, one sum per circuit in order, so a backend can
    /// bring each point to them once.
    pub fn witness_sums_of_many(
        &self,
        mut g1: impl FnMut(&Term) -> Result<Vec<G1>>,
        mut g2: impl FnMut(&Term) -> Result<Vec<G2>>,
    ) -> Result<Vec<WitnessSums>> {
        let add = |x: Vec<G1>, y: Vec<G1>| x.into_iter().zip(y).map(|(x, y)| x + y).collect::<Vec<_>>();
        let l = g1(&self.l)?;
        let a = add(g1(&self.a[0])?, g1(&self.a[1])?);
        let b_g1 = add(g1(&self.b_g1[0])?, g1(&self.b_g1[1])?);
        let b_g2: Vec<G2> = g2(&self.b_g2[0])?
            .into_iter()
            .zip(g2(&self.b_g2[1])?)
            .map(|(x, y)| x + y)
            .collect();
        let n = l.len();
        if [a.len(), b_g1.len(), b_g2.len()] != [n; 3] {
            return Err(Error::new(
                ErrorKind::Panic,
                "internal error: the terms' MSMs gave different numbers of sums",
            ));
        }
        Ok((0..n)
            .map(|j| WitnessSums {
                l: l[j],
                a: a[j],
                b_g1: b_g1[j],
                b_g2: b_g2[j],
            })
            .collect())
    }

    /// All five sums: H's term from `g1` first, then the witness sums.
    pub fn sums(
        &self,
        mut g1: impl FnMut(&Term) -> Result<G1>,
        g2: impl FnMut(&Term) -> Result<G2>,
    ) -> Result<QuerySums> {
        let h = g1(&self.h)?;
        Ok(self.witness_sums(g1, g2)?.with_h(h))
    }
}

impl Assignment<'_> {
    /// The values of `vector` (`h` is the quotient, for `Vector::H`).
    pub fn vector<'a>(&'a self, vector: Vector, h: &'a [Fr]) -> &'a [Fr] {
        match vector {
            Vector::H => h,
            Vector::Inputs => self.inputs,
            Vector::Aux => self.aux,
        }
    }

    /// Whether `other`'s terms are this assignment's: the same numbers of
    /// inputs and aux values and the same density bitmaps, so that their
    /// witness MSMs meet the same points in the same order.
    pub fn shares_terms(&self, other: &Assignment) -> bool {
        fn densities<'a>(w: &Assignment<'a>) -> [(&'a [u64], usize, usize); 3] {
            [w.a_aux_density, w.b_inp_density, w.b_aux_density].map(|d| (d.words, d.bit_len, d.popcount))
        }
        self.inputs.len() == other.inputs.len()
            && self.aux.len() == other.aux.len()
            && densities(self) == densities(other)
    }

    /// The bitmap words of `mask`.
    pub fn mask(&self, mask: Mask) -> &[u64] {
        match mask {
            Mask::AAux => self.a_aux_density.words,
            Mask::BInputs => self.b_inp_density.words,
            Mask::BAux => self.b_aux_density.words,
        }
    }
}

/// The MSMs over the witness: all of a circuit's but H's.
#[derive(Clone, Copy, Debug)]
pub struct WitnessSums {
    pub l: G1,
    pub a: G1,
    pub b_g1: G1,
    pub b_g2: G2,
}

impl WitnessSums {
    pub fn with_h(self, h: G1) -> QuerySums {
        let WitnessSums { l, a, b_g1, b_g2 } = self;
        QuerySums { h, l, a, b_g1, b_g2 }
    }
}

/// The scalars whose bit is set in `density` (bit i = bit i % 64 of word
/// i / 64), in order. In parallel over blocks of bitmap words: each block's
/// popcount gives where its scalars go in the output, so every block
/// writes its own part of one preallocated vector.
pub fn select(scalars: &[Fr], density: &[u64]) -> Vec<Fr> {
    const WORDS: usize = 1 << 10; // 65536 scalars per block
    let n_words = scalars.len().div_ceil(64).min(density.len());
    // Bits past the last scalar are not selections (callers may leave any
    // value there): the last word is masked.
    let word = |k: usize| -> u64 {
        let bits_left = scalars.len() - k * 64;
        if bits_left >= 64 {
            density[k]
        } else {
            density[k] & ((1u64 << bits_left) - 1)
        }
    };
    let counts: Vec<usize> = (0..n_words)
        .into_par_iter()
        .chunks(WORDS)
        .map(|block| block.into_iter().map(|k| word(k).count_ones() as usize).sum())
        .collect();
    let total = counts.iter().sum();
    let mut out = vec![Fr::ZERO; total];
    let mut parts = Vec::with_capacity(counts.len());
    let mut rest = out.as_mut_slice();
    for &count in &counts {
        let (part, tail) = rest.split_at_mut(count);
        parts.push(part);
        rest = tail;
    }
    parts.into_par_iter().enumerate().for_each(|(block, part)| {
        let mut next = 0;
        for k in block * WORDS..((block + 1) * WORDS).min(n_words) {
            let base = k * 64;
            let mut bits = word(k);
            while bits != 0 {
                let i = base + bits.trailing_zeros() as usize;
                part[next] = scalars[i];
                next += 1;
                bits &= bits - 1;
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn select_takes_the_scalars_whose_bits_are_set() {
        for n in [0usize, 1, 63, 64, 65, 1000, (1 << 16) + 3, 3 << 16] {
            let scalars: Vec<Fr> = (0..n as u64).map(Fr::from_u64).collect();
            // A pseudo-random bitmap with stray bits set past the end.
            let mut words: Vec<u64> = (0..n.div_ceil(64) as u64)
                .map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (k << 7))
                .collect();
            if let Some(last) = words.last_mut() {
                *last |= !0u64 << (n % 64).min(63) & if n % 64 == 0 { 0 } else { !0 };
            }
            let want: Vec<Fr> = (0..n)
                .filter(|&i| (words[i / 64] >> (i % 64)) & 1 == 1)
                .map(|i| scalars[i])
                .collect();
            assert_eq!(select(&scalars, &words), want, "n = {n}");
        }
    }
}
