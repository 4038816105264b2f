//! Poseidon as neptune's circuit (`neptune::circuit::poseidon_hash`, which
//! filecoin-hashers' tree hashes and the column hash use) allocates it,
//! over neptune's precomputed constants (filecoin-hashers'
//! `POSEIDON_CONSTANTS_*`): the state [domain tag, preimage...] through
//! the optimized schedule (compressed round constants; the first half's
//! last MDS the pre-sparse matrix, the partial rounds' sparse ones), the
//! s-boxes' values allocated as the circuit allocates them.

use super::{from_scalar as fr, to_scalar as scalar, Aux};
use crate::math::Fr;
use blstrs::Scalar;
use ff::Field;
use filecoin_hashers::{POSEIDON_CONSTANTS_11, POSEIDON_CONSTANTS_2, POSEIDON_CONSTANTS_8};
use once_cell::sync::Lazy;

/// One arity's constants, as the optimized schedule reads them.
struct Schedule {
    domain_tag: Scalar,
    /// Consumed in order: t for the first round's pre-keys, t per full
    /// round after s-boxes but the last, one per partial round.
    round_constants: Vec<Scalar>,
    mds: Vec<Vec<Scalar>>,
    pre_sparse: Vec<Vec<Scalar>>,
    /// Per partial round: the sparse matrix's first column (w_hat) and the
    /// rest of its first row (v_rest).
    sparse: Vec<(Vec<Scalar>, Vec<Scalar>)>,
    half_full_rounds: usize,
    partial_rounds: usize,
}

macro_rules! schedule_of {
    ($constants:expr) => {{
        let c = &*$constants;
        Schedule {
            domain_tag: c.domain_tag,
            round_constants: c.compressed_round_constants.clone(),
            mds: c.mds_matrices.m.clone(),
            pre_sparse: c.pre_sparse_matrix.clone(),
            sparse: c
                .sparse_matrixes
                .iter()
                .map(|s| (s.w_hat.clone(), s.v_rest.clone()))
                .collect(),
            half_full_rounds: c.half_full_rounds,
            partial_rounds: c.partial_rounds,
        }
    }};
}

static ARITY_2: Lazy<Schedule> = Lazy::new(|| schedule_of!(POSEIDON_CONSTANTS_2));
static ARITY_8: Lazy<Schedule> = Lazy::new(|| schedule_of!(POSEIDON_CONSTANTS_8));
static ARITY_11: Lazy<Schedule> = Lazy::new(|| schedule_of!(POSEIDON_CONSTANTS_11));

/// Poseidon of 2 elements (`hash2`: comm_r = H(comm_c, comm_r_last)).
pub fn poseidon_2(aux: &mut Aux, preimage: &[Fr; 2]) -> Fr {
    hash(aux, &ARITY_2, preimage)
}

/// Poseidon of 8 elements (a tree R or C node).
pub fn poseidon_8(aux: &mut Aux, preimage: &[Fr; 8]) -> Fr {
    hash(aux, &ARITY_8, preimage)
}

/// Poseidon of 11 elements (a column of labels).
pub fn poseidon_11(aux: &mut Aux, preimage: &[Fr; 11]) -> Fr {
    hash(aux, &ARITY_11, preimage)
}

/// x^5 + key with x², x⁴ and the result allocated: the circuit's quintic
/// s-box.
fn s_box(aux: &mut Aux, x: Scalar, key: Option<Scalar>) -> Scalar {
    let x2 = x.square();
    aux.push(fr(x2));
    let x4 = x2.square();
    aux.push(fr(x4));
    let x5 = x4 * x + key.unwrap_or(Scalar::ZERO);
    aux.push(fr(x5));
    x5
}

/// new[j] = Σ_i old[i]·matrix[i][j].
fn times(state: &[Scalar], matrix: &[Vec<Scalar>]) -> Vec<Scalar> {
    (0..state.len())
        .map(|j| state.iter().zip(matrix).map(|(s, row)| *s * row[j]).sum())
        .collect()
}

fn hash(aux: &mut Aux, s: &Schedule, preimage: &[Fr]) -> Fr {
    let t = preimage.len() + 1;
    let mut state: Vec<Scalar> = std::iter::once(s.domain_tag)
        .chain(preimage.iter().map(scalar))
        .collect();
    let mut keys = s.round_constants.iter().copied();
    let mut next_keys = |n: usize| -> Vec<Scalar> { keys.by_ref().take(n).collect() };
    let full_rounds = 2 * s.half_full_rounds;
    let rounds = full_rounds + s.partial_rounds;
    // Round 0: the preimage's elements take their pre-key and s-box
    // (allocating x², x⁴ and x⁵ + post-key); the tag is a constant.
    let pre = next_keys(t);
    let post = next_keys(t);
    for (i, x) in state.iter_mut().enumerate() {
        let y = *x + pre[i];
        *x = if i == 0 {
            y.square().square() * y + post[i]
        } else {
            s_box(aux, y, Some(post[i]))
        };
    }
    for round in 0..rounds {
        // The MDS after round `round`'s s-boxes.
        state = if round + 1 == s.half_full_rounds {
            times(&state, &s.pre_sparse)
        } else if (s.half_full_rounds..s.half_full_rounds + s.partial_rounds).contains(&round) {
            let (w_hat, v_rest) = &s.sparse[round - s.half_full_rounds];
            let first: Scalar = state.iter().zip(w_hat).map(|(x, w)| *x * w).sum();
            std::iter::once(first)
                .chain((1..t).map(|j| state[j] + v_rest[j - 1] * state[0]))
                .collect()
        } else {
            times(&state, &s.mds)
        };
        let next = round + 1;
        if next == rounds {
            break;
        }
        let partial = next >= s.half_full_rounds && next < s.half_full_rounds + s.partial_rounds;
        let last = next + 1 == rounds;
        // Round `next`: each s-boxed element allocated first (the circuit
        // holds it as a sum), then its s-box.
        let width = if partial { 1 } else { t };
        let post = if last { vec![] } else { next_keys(width) };
        for (i, x) in state.iter_mut().take(width).enumerate() {
            aux.push(fr(*x));
            *x = s_box(aux, *x, post.get(i).copied());
        }
    }
    let out = fr(state[1]);
    aux.push(out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::porep::Recorder;
    use bellperson::gadgets::num::AllocatedNum;
    use bellperson::{Circuit, ConstraintSystem, SynthesisError};
    use filecoin_hashers::poseidon::{PoseidonDomain, PoseidonFunction};
    use filecoin_hashers::HashFunction;
    use rand_core::SeedableRng;

    /// The preimage allocated, then filecoin-hashers' Poseidon circuit of
    /// its arity (2, 8 or 11).
    struct Gadget<'a> {
        preimage: &'a [Fr],
    }

    impl Circuit<Scalar> for Gadget<'_> {
        fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            let leaves = self
                .preimage
                .iter()
                .enumerate()
                .map(|(i, v)| AllocatedNum::alloc(cs.namespace(|| format!("x {i}")), || Ok(scalar(v))))
                .collect::<Result<Vec<_>, _>>()?;
            let cs = cs.namespace(|| "hash");
            match leaves.len() {
                2 => PoseidonFunction::hash_multi_leaf_circuit::<typenum::U2, _>(cs, &leaves, 0),
                8 => PoseidonFunction::hash_multi_leaf_circuit::<typenum::U8, _>(cs, &leaves, 0),
                _ => PoseidonFunction::hash_multi_leaf_circuit::<typenum::U11, _>(cs, &leaves, 0),
            }
            .map(|_| ())
        }
    }

    fn assert_equals_gadget(preimage: &[Fr], ours: impl Fn(&mut Aux) -> Fr) -> Fr {
        let mut aux = Aux::default();
        preimage.iter().for_each(|v| aux.push(*v));
        let out = ours(&mut aux);
        let witness = Recorder::record(Gadget { preimage }).unwrap();
        let arity = preimage.len();
        assert_eq!(aux.len(), witness.aux.len(), "arity {arity}: aux count");
        if let Some(k) = (0..aux.len()).find(|&k| aux.values()[k] != witness.aux[k]) {
            panic!("arity {arity}: aux value {k} of {} differs", aux.len());
        }
        out
    }

    #[test]
    fn equals_the_circuit_at_arities_2_8_and_11() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut random = |n: usize| -> Vec<Fr> { (0..n).map(|_| Fr::random(&mut rng)).collect() };
        let two = random(2);
        let out = assert_equals_gadget(&two, |aux| poseidon_2(aux, &[two[0], two[1]]));
        let domain = |v: &Fr| PoseidonDomain::from(scalar(v));
        let vanilla = PoseidonFunction::hash2(&domain(&two[0]), &domain(&two[1]));
        assert!(Scalar::from(vanilla) == scalar(&out), "the vanilla hash of 2");
        assert_eq!(
            311 + 2,
            Recorder::record(Gadget { preimage: &two }).unwrap().aux.len()
        );
        let eight = random(8);
        assert_equals_gadget(&eight, |aux| poseidon_8(aux, &std::array::from_fn(|i| eight[i])));
        let eleven = random(11);
        assert_equals_gadget(&eleven, |aux| {
            poseidon_11(aux, &std::array::from_fn(|i| eleven[i]))
        });
        let zeros = vec![Fr::ZERO; 8];
        assert_equals_gadget(&zeros, |aux| poseidon_8(aux, &[Fr::ZERO; 8]));
    }
}
