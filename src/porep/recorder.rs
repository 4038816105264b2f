//! A bellperson constraint system that records a circuit's witness as
//! bellperson's prover sees it (its private `ProvingAssignment`): a, b and c
//! evaluated per constraint; the density bits of aux variables with a
//! non-zero coefficient in A, and of inputs and aux in B; and an
//! `input · 0 = 0` constraint appended for every input.

use crate::error::{Error, ErrorKind, Result};
use crate::math::Fr;
use crate::Witness;
use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use std::sync::atomic::{AtomicBool, Ordering};

/// Aux allocations between two looks at the cancel flag.
const CANCEL_EVERY: usize = 1 << 14;

/// The sizes a circuit reaches, as its parameters give them: constraints
/// (the a, b, c vectors, inputs' constraints included), inputs (ONE
/// included) and aux variables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capacity {
    pub constraints: usize,
    pub inputs: usize,
    pub aux: usize,
}

#[derive(Default)]
pub struct Recorder<'a> {
    cancelled: Option<&'a AtomicBool>,
    /// The sizes the circuit may reach (`record_sized`), and whether it
    /// tried to pass them.
    limit: Option<Capacity>,
    oversized: bool,
    a_aux: Vec<bool>,
    b_inp: Vec<bool>,
    b_aux: Vec<bool>,
    a: Vec<Scalar>,
    b: Vec<Scalar>,
    c: Vec<Scalar>,
    inputs: Vec<Scalar>,
    aux: Vec<Scalar>,
}

/// Which density a linear combination's variables mark.
struct Marks<'a> {
    inputs: Option<&'a mut Vec<bool>>,
    aux: Option<&'a mut Vec<bool>>,
}

impl<'a> Recorder<'a> {
    /// Synthesizes `circuit` after allocating ONE, and returns its witness.
    pub fn record<C: Circuit<Scalar>>(circuit: C) -> Result<Witness> {
        Recorder::record_unless(circuit, None)
    }

    /// `record`, stopping with `Cancelled` soon after `cancelled` is set
    /// (a 32 GiB partition synthesizes for tens of seconds).
    pub fn record_unless<C: Circuit<Scalar>>(
        circuit: C,
        cancelled: Option<&'a AtomicBool>,
    ) -> Result<Witness> {
        Recorder::record_sized(circuit, cancelled, Capacity::default())
    }

    /// `record_unless` with the vectors allocated at once for a circuit of
    /// at most `capacity`: a 2^27 partition's a, b, c and aux are 16 GiB,
    /// which growing by doubling would copy and could overshoot. A circuit
    /// that grows past `capacity` (malformed vanilla proofs: more challenges
    /// or longer paths than its parameters) stops there with
    /// `InvalidArgument`, inside the memory reserved for it.
    pub fn record_sized<C: Circuit<Scalar>>(
        circuit: C,
        cancelled: Option<&'a AtomicBool>,
        capacity: Capacity,
    ) -> Result<Witness> {
        let Capacity {
            constraints,
            inputs,
            aux,
        } = capacity;
        let mut cs = Recorder {
            cancelled,
            limit: (capacity != Capacity::default()).then_some(capacity),
            oversized: false,
            a_aux: Vec::with_capacity(aux),
            b_inp: Vec::with_capacity(inputs),
            b_aux: Vec::with_capacity(aux),
            a: Vec::with_capacity(constraints),
            b: Vec::with_capacity(constraints),
            c: Vec::with_capacity(constraints),
            inputs: Vec::with_capacity(inputs),
            aux: Vec::with_capacity(aux),
        };
        let synthesized = cs
            .alloc_input(|| "one", || Ok(Scalar::ONE))
            .and_then(|_| circuit.synthesize(&mut cs));
        if cs.is_cancelled() {
            return Err(Error::new(ErrorKind::Cancelled, "cancelled during synthesis"));
        }
        if !cs.oversized {
            synthesized
                .map_err(|e| Error::new(ErrorKind::InvalidArgument, format!("synthesis failed: {e}")))?;
            for i in 0..cs.inputs.len() {
                cs.enforce(
                    || "",
                    |lc| lc + Variable::new_unchecked(Index::Input(i)),
                    |lc| lc,
                    |lc| lc,
                );
            }
        }
        if cs.oversized {
            return Err(larger_than(capacity));
        }
        Ok(cs.into_witness())
    }

    fn is_cancelled(&self) -> bool {
        self.cancelled.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    fn into_witness(self) -> Witness {
        let bits = |v: &[bool]| {
            let mut words = vec![0u64; v.len().div_ceil(64)];
            for (i, _) in v.iter().enumerate().filter(|(_, &set)| set) {
                words[i / 64] |= 1 << (i % 64);
            }
            words
        };
        let frs = |v: Vec<Scalar>| v.into_iter().map(|x| Fr(x.into())).collect::<Vec<_>>();
        Witness {
            a_aux_density: bits(&self.a_aux),
            b_inp_density: bits(&self.b_inp),
            b_aux_density: bits(&self.b_aux),
            a: frs(self.a),
            b: frs(self.b),
            c: frs(self.c),
            inputs: frs(self.inputs),
            aux: frs(self.aux),
            products: None,
        }
    }

    /// Σ coefficient · value over `lc`, marking the variables of non-zero
    /// coefficients where `marks` says. Most coefficients of PoRep's
    /// circuits are 1: their terms are added without a multiplication.
    fn eval(inputs: &[Scalar], aux: &[Scalar], lc: &LinearCombination<Scalar>, marks: Marks) -> Scalar {
        let Marks {
            inputs: mut inp_marks,
            aux: mut aux_marks,
        } = marks;
        let mut sum = Scalar::ZERO;
        for (&i, coeff) in lc.iter_inputs() {
            if !bool::from(coeff.is_zero()) {
                sum += times(inputs[i], coeff);
                if let Some(m) = inp_marks.as_deref_mut() {
                    m[i] = true;
                }
            }
        }
        for (&i, coeff) in lc.iter_aux() {
            if !bool::from(coeff.is_zero()) {
                sum += times(aux[i], coeff);
                if let Some(m) = aux_marks.as_deref_mut() {
                    m[i] = true;
                }
            }
        }
        sum
    }
}

/// The error of a circuit that grows past `capacity`.
pub(super) fn larger_than(capacity: Capacity) -> Error {
    let Capacity {
        constraints,
        inputs,
        aux,
    } = capacity;
    Error::invalid(format!(
        "the circuit is larger than its parameters ({constraints} constraints, {inputs} inputs and {aux} aux \
         variables at most): malformed vanilla proofs in the C1 output?"
    ))
}

/// value · coefficient, without the multiplication when the coefficient is 1.
pub(super) fn times(value: Scalar, coeff: &Scalar) -> Scalar {
    if *coeff == Scalar::ONE {
        value
    } else {
        value * coeff
    }
}

impl ConstraintSystem<Scalar> for Recorder<'_> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if self.aux.len() % CANCEL_EVERY == 0 && self.is_cancelled() {
            // Any error ends the synthesis; `record_unless` reports it as cancelled.
            return Err(SynthesisError::AssignmentMissing);
        }
        if self.limit.is_some_and(|l| self.aux.len() >= l.aux) {
            self.oversized = true;
            return Err(SynthesisError::AssignmentMissing);
        }
        self.aux.push(f()?);
        self.a_aux.push(false);
        self.b_aux.push(false);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if self.limit.is_some_and(|l| self.inputs.len() >= l.inputs) {
            self.oversized = true;
            return Err(SynthesisError::AssignmentMissing);
        }
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
        // Past the limit nothing more is kept (enforce cannot fail): the
        // synthesis runs on to its next allocation, which stops it.
        if self.oversized || self.limit.is_some_and(|l| self.a.len() >= l.constraints) {
            self.oversized = true;
            return;
        }
        let (a, b, c) = (
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        );
        let (inputs, aux) = (&self.inputs, &self.aux);
        let none = || Marks {
            inputs: None,
            aux: None,
        };
        let va = Self::eval(
            inputs,
            aux,
            &a,
            Marks {
                inputs: None,
                aux: Some(&mut self.a_aux),
            },
        );
        let vb = Self::eval(
            inputs,
            aux,
            &b,
            Marks {
                inputs: Some(&mut self.b_inp),
                aux: Some(&mut self.b_aux),
            },
        );
        let vc = Self::eval(inputs, aux, &c, none());
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
