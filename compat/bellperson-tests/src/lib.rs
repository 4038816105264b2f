//! Circuits for the supraseal-path checks, shared with the main crate's
//! `tests/supraseal_fixture.rs` (which includes this file by path), so both
//! sides prove exactly the same statements: MiMC (the classic bellperson
//! example, written here) alone and in a batch, and a circuit mixing public
//! inputs in B, aux variables outside A and B, zeros and ones.
//!
//! Every case is deterministic: constants, witnesses, parameters (bellperson's
//! `generate_random_parameters` with a seeded ChaCha8) and r, s.

use bellperson::groth16::{generate_random_parameters, Parameters};
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::{Bls12, Scalar};
use ff::Field;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// MiMC rounds (LongsightF322p3: x ↦ x^3 over 322 rounds).
pub const MIMC_ROUNDS: usize = 322;

/// MiMC on (xl, xr): per round, (xl, xr) ← (xr + (xl + c)^3, xl); the image is
/// the final xl.
pub fn mimc(mut xl: Scalar, mut xr: Scalar, constants: &[Scalar]) -> Scalar {
    for c in constants {
        let t = xl + c;
        let next = t.square() * t + xr;
        xr = xl;
        xl = next;
    }
    xl
}

/// Knowledge of a MiMC preimage (xl, xr) of the public image.
#[derive(Clone)]
pub struct Mimc {
    pub xl: Option<Scalar>,
    pub xr: Option<Scalar>,
    pub constants: Vec<Scalar>,
}

impl Circuit<Scalar> for Mimc {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut xl_value = self.xl;
        let mut xl = cs.alloc(|| "xl", || xl_value.ok_or(SynthesisError::AssignmentMissing))?;
        let mut xr_value = self.xr;
        let mut xr = cs.alloc(|| "xr", || xr_value.ok_or(SynthesisError::AssignmentMissing))?;
        let last = self.constants.len() - 1;
        for (i, c) in self.constants.iter().enumerate() {
            // t2 = (xl + c)^2
            let t_value = xl_value.map(|x| x + c);
            let t2_value = t_value.map(|t| t.square());
            let t2 = cs.alloc(
                || format!("t2 {i}"),
                || t2_value.ok_or(SynthesisError::AssignmentMissing),
            )?;
            cs.enforce(
                || format!("square {i}"),
                |lc| lc + xl + (*c, CS::one()),
                |lc| lc + xl + (*c, CS::one()),
                |lc| lc + t2,
            );
            // next = t2·(xl + c) + xr, public after the last round
            let next_value = t2_value
                .zip(t_value)
                .zip(xr_value)
                .map(|((t2, t), xr)| t2 * t + xr);
            let next = if i == last {
                cs.alloc_input(|| "image", || next_value.ok_or(SynthesisError::AssignmentMissing))?
            } else {
                cs.alloc(
                    || format!("xl {i}"),
                    || next_value.ok_or(SynthesisError::AssignmentMissing),
                )?
            };
            cs.enforce(
                || format!("cube {i}"),
                |lc| lc + t2,
                |lc| lc + xl + (*c, CS::one()),
                |lc| lc + next - xr,
            );
            xr = xl;
            xr_value = xl_value;
            xl = next;
            xl_value = next_value;
        }
        Ok(())
    }
}

/// Public inputs p_j, a product chain over them, aux values that are zero or
/// one, and an aux variable that appears only in C: every density case.
#[derive(Clone)]
pub struct Mixed {
    pub inputs: Vec<Option<Scalar>>,
}

impl Mixed {
    pub const INPUTS: usize = 4;

    pub fn with(seed: u64) -> (Mixed, Vec<Scalar>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let values: Vec<Scalar> = (0..Self::INPUTS).map(|_| Scalar::random(&mut rng)).collect();
        let product = values.iter().fold(Scalar::ONE, |acc, v| acc * v);
        let mut public = values.clone();
        public.push(product);
        (
            Mixed {
                inputs: values.into_iter().map(Some).collect(),
            },
            public,
        )
    }

    pub fn blank() -> Mixed {
        Mixed {
            inputs: vec![None; Self::INPUTS],
        }
    }
}

impl Circuit<Scalar> for Mixed {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let missing = || SynthesisError::AssignmentMissing;
        let mut vars = Vec::new();
        for (j, v) in self.inputs.iter().enumerate() {
            vars.push(cs.alloc_input(|| format!("p{j}"), || v.ok_or_else(missing))?);
        }
        // acc_j = acc_{j-1}·p_j with the inputs in B.
        let mut acc = vars[0];
        let mut acc_value = self.inputs[0];
        for (j, (&var, value)) in vars.iter().zip(&self.inputs).enumerate().skip(1) {
            let next_value = acc_value.zip(*value).map(|(a, p)| a * p);
            let next = cs.alloc(|| format!("acc{j}"), || next_value.ok_or_else(missing))?;
            cs.enforce(|| format!("mul{j}"), |lc| lc + acc, |lc| lc + var, |lc| lc + next);
            acc = next;
            acc_value = next_value;
        }
        let product = cs.alloc_input(|| "product", || acc_value.ok_or_else(missing))?;
        cs.enforce(
            || "product",
            |lc| lc + acc,
            |lc| lc + CS::one(),
            |lc| lc + product,
        );
        // zero and one, in A and B: zero·x = 0, one·one = one.
        let zero = cs.alloc(|| "zero", || Ok(Scalar::ZERO))?;
        let one = cs.alloc(|| "one", || Ok(Scalar::ONE))?;
        cs.enforce(|| "zero", |lc| lc + zero, |lc| lc + acc, |lc| lc);
        cs.enforce(|| "one", |lc| lc + one, |lc| lc + one, |lc| lc + one);
        // c_only = 2·p0, used only in C.
        let c_only_value = self.inputs[0].map(|p| p.double());
        let c_only = cs.alloc(|| "c_only", || c_only_value.ok_or_else(missing))?;
        cs.enforce(
            || "double",
            |lc| lc + vars[0],
            |lc| lc + (Scalar::from(2u64), CS::one()),
            |lc| lc + c_only,
        );
        Ok(())
    }
}

/// Either circuit, so one case can hold several of one kind.
#[derive(Clone)]
pub enum TestCircuit {
    Mimc(Mimc),
    Mixed(Mixed),
}

impl Circuit<Scalar> for TestCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            TestCircuit::Mimc(c) => c.synthesize(cs),
            TestCircuit::Mixed(c) => c.synthesize(cs),
        }
    }
}

/// A batch of circuits of one shape: the blank circuit for the setup, the
/// circuits with witnesses, their public inputs, r and s.
pub struct Case {
    pub name: &'static str,
    pub setup_seed: u64,
    pub blank: TestCircuit,
    pub circuits: Vec<TestCircuit>,
    pub public_inputs: Vec<Vec<Scalar>>,
    pub r: Vec<Scalar>,
    pub s: Vec<Scalar>,
}

impl Case {
    /// The case's parameters: bellperson's setup from the seeded RNG (the
    /// same with and without `cuda-supraseal`).
    pub fn setup(&self) -> Parameters<Bls12> {
        generate_random_parameters::<Bls12, _, _>(
            self.blank.clone(),
            &mut ChaCha8Rng::seed_from_u64(self.setup_seed),
        )
        .expect("the setup of a test circuit")
    }
}

fn mimc_constants(seed: u64) -> Vec<Scalar> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..MIMC_ROUNDS).map(|_| Scalar::random(&mut rng)).collect()
}

fn mimc_case(name: &'static str, seed: u64, n: usize) -> Case {
    let constants = mimc_constants(seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed + 1);
    let mut circuits = Vec::new();
    let mut public_inputs = Vec::new();
    for _ in 0..n {
        let (xl, xr) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        public_inputs.push(vec![mimc(xl, xr, &constants)]);
        circuits.push(TestCircuit::Mimc(Mimc {
            xl: Some(xl),
            xr: Some(xr),
            constants: constants.clone(),
        }));
    }
    let blank = TestCircuit::Mimc(Mimc {
        xl: None,
        xr: None,
        constants,
    });
    let (r, s) = blinding(seed + 2, n);
    Case {
        name,
        setup_seed: seed + 3,
        blank,
        circuits,
        public_inputs,
        r,
        s,
    }
}

fn blinding(seed: u64, n: usize) -> (Vec<Scalar>, Vec<Scalar>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let r = (0..n).map(|_| Scalar::random(&mut rng)).collect();
    let s = (0..n).map(|_| Scalar::random(&mut rng)).collect();
    (r, s)
}

/// Every case the fixture holds.
pub fn cases() -> Vec<Case> {
    let mut mixed = Vec::new();
    let mut public_inputs = Vec::new();
    for i in 0..3 {
        let (c, p) = Mixed::with(40 + i);
        mixed.push(TestCircuit::Mixed(c));
        public_inputs.push(p);
    }
    let (r, s) = blinding(50, 3);
    vec![
        mimc_case("mimc", 10, 1),
        mimc_case("mimc-batch", 20, 4),
        Case {
            name: "mixed-batch",
            setup_seed: 51,
            blank: TestCircuit::Mixed(Mixed::blank()),
            circuits: mixed,
            public_inputs,
            r,
            s,
        },
    ]
}

/// Parses fixtures/proofs.txt: `case index hex` lines (192-byte compressed
/// proofs); `#` starts a comment.
pub fn parse_fixture(text: &str) -> Vec<(String, usize, Vec<u8>)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.split_whitespace();
            let name = parts.next().expect("case name").to_string();
            let index = parts.next().expect("index").parse().expect("index is a number");
            let hex = parts.next().expect("proof hex");
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            (name, index, bytes)
        })
        .collect()
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
