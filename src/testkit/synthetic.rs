//! Synthetic circuits for trying and benchmarking c2prover without real
//! Filecoin parameters: a random R1CS whose witness mixes zeros, ones and
//! full field elements in roughly PoRep's proportions, a Groth16 setup for it
//! from seeded toxic waste, and its witness in the prover's format.
//!
//! The setup is a real one (proofs verify), but its secrets come from a
//! seeded RNG and it uses variable-time arithmetic: it is for tests and
//! benchmarks only, never for production parameters.

use crate::error::{Error, Result};
use crate::groth16::Witness;
use crate::math::domain::Domain;
use crate::math::{Fr, G1Affine, G2Affine, G1, G2};
use crate::params::{Parameters, VerifyingKey};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rayon::prelude::*;
use std::ops::Range;

/// A variable: a public input (index 0 is ONE) or an aux variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Var {
    Input(usize),
    Aux(usize),
}

/// One constraint A·B = C, each side a range of `Circuit::terms`.
#[derive(Clone, Debug)]
struct Constraint {
    a: Range<usize>,
    b: Range<usize>,
    c: Range<usize>,
}

/// A rank-1 constraint system with a satisfying assignment.
#[derive(Clone, Debug, Default)]
pub struct Circuit {
    pub inputs: Vec<Fr>,
    pub aux: Vec<Fr>,
    terms: Vec<(Var, Fr)>,
    constraints: Vec<Constraint>,
}

/// Largest synthetic domain: its setup runs on the CPU.
pub const MAX_LOG2: u32 = 24;

impl Circuit {
    /// Constraints, counting the `input · 0 = 0` one each input gets.
    pub fn num_constraints(&self) -> usize {
        self.constraints.len() + self.inputs.len()
    }

    /// The circuit's own constraints (without the input constraints), each
    /// as its A, B and C terms: for replaying it into another prover.
    pub fn constraints(&self) -> impl Iterator<Item = [&[(Var, Fr)]; 3]> + '_ {
        self.constraints.iter().map(|c| {
            [
                &self.terms[c.a.clone()],
                &self.terms[c.b.clone()],
                &self.terms[c.c.clone()],
            ]
        })
    }

    fn value(&self, v: Var) -> Fr {
        match v {
            Var::Input(i) => self.inputs[i],
            Var::Aux(i) => self.aux[i],
        }
    }

    fn alloc(&mut self, value: Fr) -> Var {
        self.aux.push(value);
        Var::Aux(self.aux.len() - 1)
    }

    fn lc(&mut self, terms: &[(Var, Fr)]) -> Range<usize> {
        let start = self.terms.len();
        self.terms.extend_from_slice(terms);
        start..self.terms.len()
    }

    fn enforce(&mut self, a: &[(Var, Fr)], b: &[(Var, Fr)], c: &[(Var, Fr)]) {
        let (a, b, c) = (self.lc(a), self.lc(b), self.lc(c));
        self.constraints.push(Constraint { a, b, c });
    }

    /// A random circuit that fills a domain of 2^log2 (log2 in 4..=24),
    /// with 8 public inputs and a witness of mostly bits: booleanity checks,
    /// ANDs, 32-bit packings and a few full field products. The constraints
    /// come from `shape_seed`, the values from `witness_seed`: circuits with
    /// one shape seed share parameters.
    pub fn porep_like(log2: u32, shape_seed: u64, witness_seed: u64) -> Result<Circuit> {
        if !(4..=MAX_LOG2).contains(&log2) {
            return Err(Error::invalid(format!(
                "synthetic circuits span 2^4 to 2^{MAX_LOG2} constraints, 2^{log2} asked"
            )));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(shape_seed);
        let mut values = ChaCha8Rng::seed_from_u64(witness_seed ^ 0x7769_746e_6573_7321);
        let one = Fr::ONE;
        let minus_one = -one;
        let mut cs = Circuit::default();
        cs.inputs.push(one);
        let n_public = 8;
        let target = (1usize << log2) - (n_public + 1);
        let mut bits: Vec<Var> = Vec::new();
        let mut fields: Vec<Var> = Vec::new();
        let mut pending_pack: Vec<Var> = Vec::new();
        for i in 0..n_public {
            let x = Fr::random(&mut values);
            cs.inputs.push(x);
            let copy = cs.alloc(x);
            // x_i · 1 = copy
            cs.enforce(
                &[(Var::Input(i + 1), one)],
                &[(Var::Input(0), one)],
                &[(copy, one)],
            );
            fields.push(copy);
        }
        while cs.constraints.len() < target {
            let roll = rng.next_u32() % 100;
            if pending_pack.len() == 32 {
                // Σ 2^i b_i · 1 = word
                let word_value = pending_pack
                    .iter()
                    .enumerate()
                    .fold(Fr::ZERO, |acc, (i, b)| acc + cs.value(*b) * Fr::from_u64(1 << i));
                let word = cs.alloc(word_value);
                let sum: Vec<(Var, Fr)> = pending_pack
                    .iter()
                    .enumerate()
                    .map(|(i, b)| (*b, Fr::from_u64(1 << i)))
                    .collect();
                cs.enforce(&sum, &[(Var::Input(0), one)], &[(word, one)]);
                fields.push(word);
                pending_pack.clear();
            } else if roll < 50 || bits.len() < 2 {
                // A new bit; one in three also gets (1 − b)·b = 0, putting it in B.
                let bit = cs.alloc(if values.next_u32() % 2 == 0 { Fr::ZERO } else { one });
                if rng.next_u32() % 3 == 0 {
                    cs.enforce(&[(Var::Input(0), one), (bit, minus_one)], &[(bit, one)], &[]);
                } else {
                    cs.enforce(&[(bit, one)], &[(bit, one)], &[(bit, one)]);
                }
                bits.push(bit);
                pending_pack.push(bit);
            } else if roll < 96 {
                // z = x AND y = x·y
                let x = bits[rng.next_u32() as usize % bits.len()];
                let y = bits[rng.next_u32() as usize % bits.len()];
                let z = cs.alloc(cs.value(x) * cs.value(y));
                cs.enforce(&[(x, one)], &[(y, one)], &[(z, one)]);
                bits.push(z);
            } else {
                // A full field product t = (u + k)·v.
                let u = fields[rng.next_u32() as usize % fields.len()];
                let v = fields[rng.next_u32() as usize % fields.len()];
                let k = Fr::random(&mut rng);
                let t = cs.alloc((cs.value(u) + k) * cs.value(v));
                cs.enforce(&[(u, one), (Var::Input(0), k)], &[(v, one)], &[(t, one)]);
                fields.push(t);
            }
        }
        Ok(cs)
    }

    fn eval(&self, range: &Range<usize>) -> Fr {
        self.terms[range.clone()]
            .iter()
            .fold(Fr::ZERO, |acc, (v, k)| acc + self.value(*v) * *k)
    }

    /// Marks the variables of an LC with a non-zero coefficient.
    fn mark(&self, range: &Range<usize>, inputs: Option<&mut [bool]>, aux: &mut [bool]) {
        let mut inputs = inputs;
        for (v, k) in &self.terms[range.clone()] {
            if k.is_zero() {
                continue;
            }
            match v {
                Var::Input(i) => {
                    if let Some(d) = inputs.as_deref_mut() {
                        d[*i] = true;
                    }
                }
                Var::Aux(i) => aux[*i] = true,
            }
        }
    }

    /// Density bits as bellperson's prover records them: A over aux, B over
    /// inputs and aux.
    fn densities(&self) -> (Vec<bool>, Vec<bool>, Vec<bool>) {
        let mut a_aux = vec![false; self.aux.len()];
        let mut b_inp = vec![false; self.inputs.len()];
        let mut b_aux = vec![false; self.aux.len()];
        for c in &self.constraints {
            self.mark(&c.a, None, &mut a_aux);
            self.mark(&c.b, Some(&mut b_inp), &mut b_aux);
        }
        (a_aux, b_inp, b_aux)
    }

    /// The witness in the prover's format (input constraints appended).
    pub fn witness(&self) -> Witness {
        let (a_aux, b_inp, b_aux) = self.densities();
        let mut w = Witness {
            a_aux_density: pack_bits(&a_aux),
            b_inp_density: pack_bits(&b_inp),
            b_aux_density: pack_bits(&b_aux),
            a: self.constraints.par_iter().map(|c| self.eval(&c.a)).collect(),
            b: self.constraints.par_iter().map(|c| self.eval(&c.b)).collect(),
            c: self.constraints.par_iter().map(|c| self.eval(&c.c)).collect(),
            inputs: self.inputs.clone(),
            aux: self.aux.clone(),
            products: None,
        };
        w.a.extend_from_slice(&self.inputs);
        w.b.resize(w.a.len(), Fr::ZERO);
        w.c.resize(w.a.len(), Fr::ZERO);
        w
    }

    /// A Groth16 setup for this circuit from toxic waste drawn from `seed`.
    pub fn setup(&self, seed: u64) -> Parameters {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let [tau, alpha, beta, gamma, delta] = [(); 5].map(|_| Fr::random(&mut rng));
        let log_m = self.num_constraints().next_power_of_two().trailing_zeros().max(1);
        let domain = Domain::new(log_m).expect("domain within two-adicity");
        let lagrange = lagrange_at(&domain, tau);

        // A_k(τ), B_k(τ), C_k(τ) for every variable, inputs first.
        let n_in = self.inputs.len();
        let index = |v: &Var| match v {
            Var::Input(i) => *i,
            Var::Aux(i) => n_in + *i,
        };
        let n_vars = n_in + self.aux.len();
        let (mut at, mut bt, mut ct) = (
            vec![Fr::ZERO; n_vars],
            vec![Fr::ZERO; n_vars],
            vec![Fr::ZERO; n_vars],
        );
        for (j, c) in self.constraints.iter().enumerate() {
            for (range, acc) in [(&c.a, &mut at), (&c.b, &mut bt), (&c.c, &mut ct)] {
                for (v, k) in &self.terms[range.clone()] {
                    acc[index(v)] += *k * lagrange[j];
                }
            }
        }
        for i in 0..n_in {
            // input_i · 0 = 0, after the circuit's constraints.
            at[i] += lagrange[self.constraints.len() + i];
        }

        let z_tau = tau.pow(domain.m as u64) - Fr::ONE;
        let (gamma_inv, delta_inv) = (gamma.inverse(), delta.inverse());
        let combined = |k: usize, by: Fr| (beta * at[k] + alpha * bt[k] + ct[k]) * by;
        let (a_aux, b_inp, b_aux) = self.densities();

        let g1 = FixedBase::<G1>::new(G1::generator());
        let g2 = FixedBase::<G2>::new(G2::generator());
        let ic: Vec<Fr> = (0..n_in).map(|k| combined(k, gamma_inv)).collect();
        let l: Vec<Fr> = (n_in..n_vars)
            .into_par_iter()
            .map(|k| combined(k, delta_inv))
            .collect();
        let h: Vec<Fr> = {
            let scale = z_tau * delta_inv;
            let mut acc = scale;
            (0..domain.m - 1)
                .map(|_| {
                    let v = acc;
                    acc *= tau;
                    v
                })
                .collect()
        };
        let a: Vec<Fr> = (0..n_in)
            .map(|k| at[k])
            .chain((0..self.aux.len()).filter(|&i| a_aux[i]).map(|i| at[n_in + i]))
            .collect();
        let b: Vec<Fr> = (0..n_in)
            .filter(|&i| b_inp[i])
            .map(|k| bt[k])
            .chain((0..self.aux.len()).filter(|&i| b_aux[i]).map(|i| bt[n_in + i]))
            .collect();

        Parameters {
            vk: VerifyingKey {
                alpha_g1: g1.mul(&alpha).to_affine(),
                beta_g1: g1.mul(&beta).to_affine(),
                beta_g2: g2.mul(&beta).to_affine(),
                gamma_g2: g2.mul(&gamma).to_affine(),
                delta_g1: g1.mul(&delta).to_affine(),
                delta_g2: g2.mul(&delta).to_affine(),
                ic: g1.mul_many(&ic),
            },
            h: g1.mul_many(&h),
            l: g1.mul_many(&l),
            a: g1.mul_many(&a),
            b_g1: g1.mul_many(&b),
            b_g2: g2.mul_many(&b),
            residency: Default::default(),
            id: Default::default(),
        }
    }
}

fn pack_bits(bits: &[bool]) -> Vec<u64> {
    let mut words = vec![0u64; bits.len().div_ceil(64)];
    for (i, _) in bits.iter().enumerate().filter(|(_, b)| **b) {
        words[i / 64] |= 1 << (i % 64);
    }
    words
}

/// L_j(τ) for every j: the Lagrange basis of the domain at τ,
/// L_j(τ) = (τ^m − 1)/m · ω^j / (τ − ω^j).
fn lagrange_at(domain: &Domain, tau: Fr) -> Vec<Fr> {
    let m = domain.m;
    let scale = (tau.pow(m as u64) - Fr::ONE) * Fr::from_u64(m as u64).inverse();
    let omegas: Vec<Fr> = {
        let mut acc = Fr::ONE;
        (0..m)
            .map(|_| {
                let v = acc;
                acc *= domain.omega;
                v
            })
            .collect()
    };
    omegas
        .par_iter()
        .map(|w| scale * *w * (tau - *w).inverse())
        .collect()
}

/// The group operations fixed-base multiplication needs.
pub(crate) trait FixedBaseGroup: Copy + Default + Send + Sync + std::ops::Add<Output = Self> {
    type Affine: Copy + Default + Send + Sync;
    fn double(&self) -> Self;
    fn add_affine(&self, p: &Self::Affine) -> Self;
    fn batch_to_affine(points: &[Self]) -> Vec<Self::Affine>;
    fn from_affine(p: &Self::Affine) -> Self;
    /// p[i] + q[i] for every i.
    fn pairwise_sums(p: &[Self::Affine], q: &[Self::Affine]) -> Vec<Self::Affine> {
        let sums: Vec<Self> = p
            .iter()
            .zip(q)
            .map(|(a, b)| Self::from_affine(a).add_affine(b))
            .collect();
        Self::batch_to_affine(&sums)
    }
}

impl FixedBaseGroup for G1 {
    type Affine = G1Affine;
    fn double(&self) -> Self {
        G1::double(self)
    }
    fn add_affine(&self, p: &G1Affine) -> Self {
        G1::add_affine(self, p)
    }
    fn batch_to_affine(points: &[Self]) -> Vec<G1Affine> {
        G1::batch_to_affine(points)
    }
    fn from_affine(p: &G1Affine) -> Self {
        p.to_projective()
    }
    fn pairwise_sums(p: &[G1Affine], q: &[G1Affine]) -> Vec<G1Affine> {
        G1Affine::pairwise_sums(p, q)
    }
}

impl FixedBaseGroup for G2 {
    type Affine = G2Affine;
    fn double(&self) -> Self {
        G2::double(self)
    }
    fn add_affine(&self, p: &G2Affine) -> Self {
        G2::add_affine(self, p)
    }
    fn batch_to_affine(points: &[Self]) -> Vec<G2Affine> {
        G2::batch_to_affine(points)
    }
    fn from_affine(p: &G2Affine) -> Self {
        p.to_projective()
    }
}

/// Multiples d·2^(8w)·P for every byte d and window w: a scalar
/// multiplication is then 32 mixed additions.
pub(crate) struct FixedBase<P: FixedBaseGroup> {
    table: Vec<P::Affine>,
}

impl<P: FixedBaseGroup> FixedBase<P> {
    pub(crate) fn new(base: P) -> Self {
        let mut proj = Vec::with_capacity(32 * 256);
        let mut window_base = base;
        for _ in 0..32 {
            let mut acc = P::default();
            for _ in 0..256 {
                proj.push(acc);
                acc = acc + window_base;
            }
            for _ in 0..8 {
                window_base = window_base.double();
            }
        }
        FixedBase {
            table: P::batch_to_affine(&proj),
        }
    }

    fn mul(&self, k: &Fr) -> P {
        k.to_scalar_bytes()
            .iter()
            .enumerate()
            .fold(P::default(), |acc, (w, d)| {
                acc.add_affine(&self.table[w * 256 + *d as usize])
            })
    }

    pub(crate) fn mul_many(&self, scalars: &[Fr]) -> Vec<P::Affine> {
        scalars
            .par_chunks(1 << 12)
            .flat_map_iter(|chunk| {
                let proj: Vec<P> = chunk.iter().map(|k| self.mul(k)).collect();
                P::batch_to_affine(&proj)
            })
            .collect()
    }
}

/// Random constraints of `units` units of one shape (`UnitConstraints`: a
/// common part of 3 aux variables, 2 inputs and 4 constraints; units of 50
/// aux variables, `unit_inputs` inputs and 40 constraints; rows of 0 to 5
/// terms, a quarter of them inputs, with the coefficients 1, −1 and ten
/// others) and random values for them, ONE first.
pub fn unit_constraints(
    units: usize,
    unit_inputs: usize,
    seed: u64,
) -> Result<(std::sync::Arc<crate::groth16::UnitConstraints>, Vec<Fr>, Vec<Fr>)> {
    use crate::groth16::constraints::{Rows, Sizes, Term, INPUT};
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let common = Sizes {
        aux: 3,
        inputs: 2,
        constraints: 4,
    };
    let unit = Sizes {
        aux: 50,
        inputs: unit_inputs,
        constraints: 40,
    };
    let one = common.plus(unit, 1);
    let coefficients: Vec<Fr> = [Fr::ONE, -Fr::ONE]
        .into_iter()
        .chain((0..10).map(|_| Fr::random(&mut rng)))
        .collect();
    let mut rows: [Rows; 3] = Default::default();
    for matrix in &mut rows {
        for _ in 0..one.constraints {
            let terms: Vec<Term> = (0..rng.next_u32() % 6)
                .map(|_| Term {
                    variable: if rng.next_u32() % 4 == 0 {
                        INPUT | (rng.next_u32() % one.inputs as u32)
                    } else {
                        rng.next_u32() % one.aux as u32
                    },
                    coefficient: rng.next_u32() % coefficients.len() as u32,
                })
                .collect();
            matrix.push(terms)?;
        }
    }
    let constraints = crate::groth16::UnitConstraints::new(units, common, unit, coefficients, rows)?;
    let total = constraints.total();
    let mut inputs: Vec<Fr> = (0..total.inputs).map(|_| Fr::random(&mut rng)).collect();
    inputs[0] = Fr::ONE;
    let aux = (0..total.aux).map(|_| Fr::random(&mut rng)).collect();
    Ok((std::sync::Arc::new(constraints), inputs, aux))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_base_matches_constant_time_multiplication() {
        let table = FixedBase::<G1>::new(G1::generator());
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..20 {
            let k = Fr::random(&mut rng);
            assert_eq!(table.mul(&k), G1::generator().mul(&k));
        }
        assert!(table.mul(&Fr::ZERO).is_identity());
    }

    #[test]
    fn synthetic_witness_satisfies_its_constraints() {
        let cs = Circuit::porep_like(8, 1, 1).unwrap();
        let w = cs.witness();
        assert_eq!(w.a.len(), cs.num_constraints());
        assert!(cs.num_constraints() <= 256);
        for j in 0..w.a.len() {
            assert_eq!(w.a[j] * w.b[j], w.c[j], "constraint {j}");
        }
        let zeros = cs.aux.iter().filter(|x| x.is_zero()).count();
        let ones = cs.aux.iter().filter(|x| x.is_one()).count();
        assert!(
            zeros + ones > cs.aux.len() * 3 / 4,
            "mostly bits: {zeros} zeros, {ones} ones"
        );
    }

    #[test]
    fn synthetic_proof_verifies_and_rejects_tampering() {
        let cs = Circuit::porep_like(9, 2, 2).unwrap();
        let params = cs.setup(3);
        let w = cs.witness();
        let (r, s) = crate::groth16::random_r_s(1);
        let proof = crate::prove(&params, &[w.as_assignment()], &r, &s).unwrap()[0];
        let public = &w.inputs[1..];
        assert!(crate::verify(&params.vk, public, &proof).unwrap());
        let mut wrong = public.to_vec();
        wrong[3] += Fr::ONE;
        assert!(!crate::verify(&params.vk, &wrong, &proof).unwrap());
    }
}
