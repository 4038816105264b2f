//! Shared test and bench support: a constraint system that records the
//! witness exactly as bellperson's prover sees it, and circuits of the
//! shapes the cross-checks need.

#![allow(dead_code)]

use bellperson::groth16;
use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::{Bls12, Scalar};
use ff::Field;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

pub fn fr(x: Scalar) -> c2prover::Fr {
    c2prover::Fr(x.into())
}

/// How long a fuzz target runs random inputs after its corpus:
/// `C2P_FUZZ_SECONDS`, default 5.
pub fn fuzz_time() -> std::time::Duration {
    let seconds = std::env::var("C2P_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    std::time::Duration::from_secs(seconds)
}

/// Records a circuit's assignment the way bellperson's `ProvingAssignment`
/// does: a, b, c evaluated per constraint, density bits for variables with a
/// non-zero coefficient in A (aux) and B (inputs and aux), and an
/// `input · 0 = 0` constraint appended for every input.
#[derive(Default)]
pub struct Recorder {
    a_aux: Vec<bool>,
    b_inp: Vec<bool>,
    b_aux: Vec<bool>,
    a: Vec<Scalar>,
    b: Vec<Scalar>,
    c: Vec<Scalar>,
    inputs: Vec<Scalar>,
    aux: Vec<Scalar>,
}

impl Recorder {
    fn eval(
        &self,
        lc: &LinearCombination<Scalar>,
        mut inp_density: Option<&mut Vec<bool>>,
        mut aux_density: Option<&mut Vec<bool>>,
    ) -> Scalar {
        let mut acc = Scalar::ZERO;
        for (&i, coeff) in lc.iter_inputs() {
            if !bool::from(coeff.is_zero()) {
                acc += self.inputs[i] * coeff;
                if let Some(d) = inp_density.as_deref_mut() {
                    d[i] = true;
                }
            }
        }
        for (&i, coeff) in lc.iter_aux() {
            if !bool::from(coeff.is_zero()) {
                acc += self.aux[i] * coeff;
                if let Some(d) = aux_density.as_deref_mut() {
                    d[i] = true;
                }
            }
        }
        acc
    }

    /// Synthesizes `circuit` (after allocating ONE) and returns its witness.
    pub fn record<C: Circuit<Scalar>>(circuit: C) -> c2prover::Witness {
        let mut cs = Recorder::default();
        cs.alloc_input(|| "one", || Ok(Scalar::ONE)).expect("one");
        circuit.synthesize(&mut cs).expect("synthesis");
        for i in 0..cs.inputs.len() {
            cs.enforce(
                || "",
                |lc| lc + Variable::new_unchecked(Index::Input(i)),
                |lc| lc,
                |lc| lc,
            );
        }
        let bits = |v: &[bool]| {
            let mut words = vec![0u64; v.len().div_ceil(64)];
            for (i, _) in v.iter().enumerate().filter(|(_, &b)| b) {
                words[i / 64] |= 1 << (i % 64);
            }
            words
        };
        let frs = |v: &[Scalar]| v.iter().copied().map(fr).collect::<Vec<_>>();
        c2prover::Witness {
            a_aux_density: bits(&cs.a_aux),
            b_inp_density: bits(&cs.b_inp),
            b_aux_density: bits(&cs.b_aux),
            a: frs(&cs.a),
            b: frs(&cs.b),
            c: frs(&cs.c),
            inputs: frs(&cs.inputs),
            aux: frs(&cs.aux),
            products: None,
        }
    }
}

impl ConstraintSystem<Scalar> for Recorder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        self.a_aux.push(false);
        self.b_aux.push(false);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        self.b_inp.push(false);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let (a, b, c) = (
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        );
        let mut a_aux = std::mem::take(&mut self.a_aux);
        let mut b_inp = std::mem::take(&mut self.b_inp);
        let mut b_aux = std::mem::take(&mut self.b_aux);
        let va = self.eval(&a, None, Some(&mut a_aux));
        let vb = self.eval(&b, Some(&mut b_inp), Some(&mut b_aux));
        let vc = self.eval(&c, None, None);
        (self.a_aux, self.b_inp, self.b_aux) = (a_aux, b_inp, b_aux);
        self.a.push(va);
        self.b.push(vb);
        self.c.push(vc);
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

/// The circuit shapes of the cross-check suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Every variable is a public input; no aux at all.
    InputsOnly,
    /// No constraint has a B term: b is all zero, the B query empty.
    NoB,
    /// SHA-256-like bit gadgets: booleanity, AND, XOR, packing; a witness
    /// of mostly zeros and ones.
    Bits,
    /// 2^k + 1 constraints, so the evaluations fill just over half the domain.
    HalfDomain,
    /// Random linear combinations with random coefficients and values.
    RandomDense,
}

/// A deterministic circuit of a shape, about `size` constraints, witness
/// drawn from `seed`.
#[derive(Clone, Copy, Debug)]
pub struct TestCircuit {
    pub shape: Shape,
    pub size: usize,
    pub seed: u64,
}

fn random_scalar(rng: &mut ChaCha8Rng) -> Scalar {
    Scalar::random(&mut *rng)
}

impl Circuit<Scalar> for TestCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let one = CS::one();
        match self.shape {
            Shape::InputsOnly => {
                // x_{i+1} = x_i · y_i, all public.
                let mut x_val = random_scalar(&mut rng);
                let mut x = cs.alloc_input(|| "x0", || Ok(x_val))?;
                for _ in 0..self.size {
                    let y_val = random_scalar(&mut rng);
                    let y = cs.alloc_input(|| "y", || Ok(y_val))?;
                    let z_val = x_val * y_val;
                    let z = cs.alloc_input(|| "z", || Ok(z_val))?;
                    cs.enforce(|| "mul", |lc| lc + x, |lc| lc + y, |lc| lc + z);
                    (x, x_val) = (z, z_val);
                }
            }
            Shape::NoB => {
                // (Σ k·v_k) · 0 = 0 constraints over aux and a few inputs.
                let pub_val = random_scalar(&mut rng);
                let p = cs.alloc_input(|| "p", || Ok(pub_val))?;
                let mut vars = vec![p];
                for i in 0..self.size {
                    let v = random_scalar(&mut rng);
                    let var = cs.alloc(|| "v", || Ok(v))?;
                    let prev = vars[i / 2];
                    cs.enforce(
                        || "no b",
                        |lc| lc + var + (Scalar::from(3u64), prev),
                        |lc| lc,
                        |lc| lc,
                    );
                    vars.push(var);
                }
            }
            Shape::Bits => {
                // Booleans with AND and XOR, packed into words, some public.
                let mut bits: Vec<(Variable, bool)> = Vec::new();
                let packed_input = cs.alloc_input(|| "packed", || Ok(Scalar::ZERO))?;
                let _ = packed_input;
                while cs_len_estimate(&bits) < self.size {
                    let v = rng.next_u32() % 2 == 1;
                    let var = cs.alloc(|| "bit", || Ok(if v { Scalar::ONE } else { Scalar::ZERO }))?;
                    // (1 − b) · b = 0
                    cs.enforce(|| "boolean", |lc| lc + one - var, |lc| lc + var, |lc| lc);
                    bits.push((var, v));
                    if bits.len() >= 2 {
                        let (x, xv) = bits[bits.len() - 2];
                        let (y, yv) = bits[bits.len() - 1];
                        // AND: x · y = z
                        let zv = xv & yv;
                        let z = cs.alloc(|| "and", || Ok(Scalar::from(zv as u64)))?;
                        cs.enforce(|| "and", |lc| lc + x, |lc| lc + y, |lc| lc + z);
                        // XOR: 2x · y = x + y − w
                        let wv = xv ^ yv;
                        let w = cs.alloc(|| "xor", || Ok(Scalar::from(wv as u64)))?;
                        cs.enforce(
                            || "xor",
                            |lc| lc + (Scalar::from(2u64), x),
                            |lc| lc + y,
                            |lc| lc + x + y - w,
                        );
                        bits.push((z, zv));
                        bits.push((w, wv));
                    }
                    if bits.len() % 32 == 0 {
                        // Pack the last 32 bits into a word: Σ 2^i b_i · 1 = word.
                        let tail = &bits[bits.len() - 32..];
                        let value: u64 = tail.iter().enumerate().map(|(i, (_, b))| (*b as u64) << i).sum();
                        let word = cs.alloc(|| "word", || Ok(Scalar::from(value)))?;
                        let tail = tail.to_vec();
                        cs.enforce(
                            || "pack",
                            |mut lc| {
                                for (i, (b, _)) in tail.iter().enumerate() {
                                    lc = lc + (Scalar::from(1u64 << i), *b);
                                }
                                lc
                            },
                            |lc| lc + one,
                            |lc| lc + word,
                        );
                    }
                }
            }
            Shape::HalfDomain => {
                // Squarings: x_{i+1} = x_i², with the count chosen so that the
                // constraints (plus the 2 input constraints) are 2^k + 1.
                let target = self.size.next_power_of_two() + 1;
                let seed_val = random_scalar(&mut rng);
                let inp = cs.alloc_input(|| "seed", || Ok(seed_val))?;
                let mut x_val = seed_val;
                let mut x = inp;
                for _ in 0..target - 2 {
                    let y_val = x_val.square();
                    let y = cs.alloc(|| "sq", || Ok(y_val))?;
                    cs.enforce(|| "sq", |lc| lc + x, |lc| lc + x, |lc| lc + y);
                    (x, x_val) = (y, y_val);
                }
            }
            Shape::RandomDense => {
                let n_inputs = 4;
                let mut vars = Vec::new();
                for _ in 0..n_inputs {
                    let v = random_scalar(&mut rng);
                    vars.push((cs.alloc_input(|| "in", || Ok(v))?, v));
                }
                for _ in 0..8 {
                    let v = random_scalar(&mut rng);
                    vars.push((cs.alloc(|| "seed", || Ok(v))?, v));
                }
                for _ in 0..self.size {
                    let pick = |rng: &mut ChaCha8Rng| {
                        let terms: Vec<(Scalar, Variable, Scalar)> = (0..3)
                            .map(|_| {
                                let (var, val) = vars[rng.next_u32() as usize % vars.len()];
                                (random_scalar(rng), var, val)
                            })
                            .collect();
                        terms
                    };
                    let ta = pick(&mut rng);
                    let tb = pick(&mut rng);
                    let eval = |t: &[(Scalar, Variable, Scalar)]| {
                        t.iter().fold(Scalar::ZERO, |acc, (k, _, v)| acc + *k * v)
                    };
                    let pv = eval(&ta) * eval(&tb);
                    let p = cs.alloc(|| "prod", || Ok(pv))?;
                    cs.enforce(
                        || "rand",
                        |mut lc| {
                            for (k, var, _) in &ta {
                                lc = lc + (*k, *var);
                            }
                            lc
                        },
                        |mut lc| {
                            for (k, var, _) in &tb {
                                lc = lc + (*k, *var);
                            }
                            lc
                        },
                        |lc| lc + p,
                    );
                    vars.push((p, pv));
                }
            }
        }
        Ok(())
    }
}

/// Constraints the Bits shape has made so far (about 3 per pushed triple).
fn cs_len_estimate(bits: &[(Variable, bool)]) -> usize {
    bits.len() + bits.len() / 32
}

/// bellperson's setup for a circuit, with a seeded RNG.
pub fn setup(circuit: TestCircuit, seed: u64) -> groth16::Parameters<Bls12> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    groth16::generate_random_parameters::<Bls12, _, _>(circuit, &mut rng).expect("setup")
}

/// The same parameters in c2prover's type, through bellperson's file format.
pub fn to_ours(params: &groth16::Parameters<Bls12>) -> (Vec<u8>, c2prover::Parameters) {
    let mut bytes = Vec::new();
    params.write(&mut bytes).expect("write");
    let ours = c2prover::Parameters::decode(&bytes, &Default::default()).expect("decode");
    (bytes, ours)
}

/// The public inputs of a witness as bellperson's verifier takes them
/// (without ONE).
pub fn public_inputs(w: &c2prover::Witness) -> Vec<Scalar> {
    w.inputs[1..].iter().map(|x| Scalar::from(x.0)).collect()
}

pub fn random_pairs(n: usize, seed: u64) -> (Vec<Scalar>, Vec<Scalar>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let r = (0..n).map(|_| Scalar::random(&mut rng)).collect();
    let s = (0..n).map(|_| Scalar::random(&mut rng)).collect();
    (r, s)
}

/// A c2prover synthetic circuit replayed through bellperson's API, so both
/// provers work on the very same constraints and witness.
#[derive(Clone)]
pub struct Replay<'a>(pub &'a c2prover::testkit::synthetic::Circuit);

impl Circuit<Scalar> for Replay<'_> {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        use c2prover::testkit::synthetic::Var;
        let cs_circuit = self.0;
        let mut inputs = vec![CS::one()];
        for x in &cs_circuit.inputs[1..] {
            inputs.push(cs.alloc_input(|| "in", || Ok(Scalar::from(x.0)))?);
        }
        let mut aux = Vec::with_capacity(cs_circuit.aux.len());
        for x in &cs_circuit.aux {
            aux.push(cs.alloc(|| "aux", || Ok(Scalar::from(x.0)))?);
        }
        let var = |v: &Var| match v {
            Var::Input(i) => inputs[*i],
            Var::Aux(i) => aux[*i],
        };
        for [a, b, c] in cs_circuit.constraints() {
            let lc = |terms: &[(Var, c2prover::Fr)]| {
                terms.iter().fold(LinearCombination::zero(), |lc, (v, k)| {
                    lc + (Scalar::from(k.0), var(v))
                })
            };
            let (a, b, c) = (lc(a), lc(b), lc(c));
            cs.enforce(|| "c", |_| a, |_| b, |_| c);
        }
        Ok(())
    }
}

/// bellperson's `Parameters` read from c2prover's parameters (same bytes).
pub fn to_bellperson(params: &c2prover::Parameters) -> groth16::Parameters<Bls12> {
    let mut bytes = Vec::new();
    params.write(&mut bytes).expect("write");
    groth16::Parameters::read(&bytes[..], false).expect("bellperson reads our file")
}
