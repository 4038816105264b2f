//! The constraints of a circuit made of a common part and units of one
//! shape (see `shared_recorder`), recorded once from its circuit of one
//! unit: the rows of A, B and C of the common part and of one unit. With
//! them, a partition needs only its values (inputs and aux, in bellperson's
//! order): a = A·w, b = B·w and c = C·w are sparse products over the rows,
//! in parallel, and the densities follow from the rows alone.
//!
//! Unit u of the whole circuit has unit 0's rows with its own variables: an
//! index of the one-unit circuit past the common part's moves by u whole
//! units. That every unit has these rows is checked, not assumed: rows are
//! kept (`learn`) only once they give back, byte for byte, the a, b, c and
//! densities of a whole partition the recorder made.
//!
//! Memory: a term is 8 bytes (variable, coefficient's index), so a 32 GiB
//! PoRep partition's rows are those of one challenge (some 40 M terms,
//! about 0.4 GiB with the whole partition's density bitmaps), not of its
//! 18; they stay for the process's life, one set per parameters used, and
//! are not counted in the host budget (a permit held for ever would stop a
//! job larger than the budget from ever running alone).

use super::shared_recorder::{Counts, Values};
use crate::math::Fr;
use crate::Witness;
use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blst::blst_fr;
use blstrs::Scalar;
use ff::Field;
use once_cell::sync::Lazy;
use rayon::prelude::*;
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A term's variable: an input when this bit is set, else an aux variable.
const INPUT: u32 = 1 << 31;

/// Coefficients' indices known in advance: the products add or subtract.
const ONE: u32 = 0;
const MINUS_ONE: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Term {
    variable: u32,
    coefficient: u32,
}

/// Rows of one matrix: row r is `terms[starts[r]..starts[r + 1]]`.
#[derive(Debug, PartialEq, Eq)]
struct Rows {
    starts: Vec<u32>,
    terms: Vec<Term>,
}

impl Rows {
    fn new() -> Rows {
        Rows {
            starts: vec![0],
            terms: Vec::new(),
        }
    }

    fn row(&self, r: usize) -> &[Term] {
        &self.terms[self.starts[r] as usize..self.starts[r + 1] as usize]
    }

    fn len(&self) -> usize {
        self.starts.len() - 1
    }
}

/// A units circuit's constraints, for a circuit of `units` units.
#[derive(Debug)]
pub struct UnitsR1cs {
    units: usize,
    common: Counts,
    unit: Counts,
    coefficients: Vec<Scalar>,
    a: Rows,
    b: Rows,
    c: Rows,
    a_aux_density: Vec<u64>,
    b_inp_density: Vec<u64>,
    b_aux_density: Vec<u64>,
}

/// The products of one matrix, or the values of one row.
#[derive(Clone, Copy)]
enum Matrix {
    A,
    B,
    C,
}

impl UnitsR1cs {
    /// Records the constraints of `one_unit` (the circuit of the first unit
    /// alone) and checks them against `whole`, the recorder's witness of the
    /// circuit of `units` units. `Err` says why they cannot stand for it.
    pub fn learn<C: Circuit<Scalar>>(
        one_unit: C,
        units: usize,
        whole: &Witness,
    ) -> std::result::Result<UnitsR1cs, String> {
        let mut cs = Structure::default();
        cs.alloc_input(|| "one", || Ok(Scalar::ONE))
            .and_then(|_| one_unit.synthesize(&mut cs))
            .map_err(|e| format!("recording one unit: {e}"))?;
        if let Some(why) = cs.refused {
            return Err(why);
        }
        let one = Counts {
            aux: cs.aux,
            inputs: cs.inputs,
            constraints: cs.a.len(),
        };
        let total = Counts {
            aux: whole.aux.len(),
            inputs: whole.inputs.len(),
            constraints: whole.a.len().saturating_sub(whole.inputs.len()),
        };
        let (common, unit) = split(one, total, units).ok_or_else(|| {
            format!("{units} units of {total:?} are not a common part and units of {one:?}")
        })?;
        let (a_aux, b_inp, b_aux) = cs.local_densities();
        let expand = |marks: &[bool], common: usize, unit: usize, total: usize| -> Vec<u64> {
            bits(total, |g| {
                marks[if g < common {
                    g
                } else {
                    common + (g - common) % unit
                }]
            })
        };
        let r1cs = UnitsR1cs {
            units,
            common,
            unit,
            coefficients: cs.coefficients.values,
            a_aux_density: expand(&a_aux, common.aux, unit.aux, total.aux),
            b_inp_density: expand(&b_inp, common.inputs, unit.inputs, total.inputs),
            b_aux_density: expand(&b_aux, common.aux, unit.aux, total.aux),
            a: cs.a,
            b: cs.b,
            c: cs.c,
        };
        r1cs.check(whole)?;
        Ok(r1cs)
    }

    /// The whole circuit's sizes.
    fn total(&self) -> Counts {
        self.common.plus(self.unit, self.units)
    }

    /// How many terms the rows hold (A, B and C).
    pub fn terms(&self) -> usize {
        self.a.terms.len() + self.b.terms.len() + self.c.terms.len()
    }

    /// The host memory it holds.
    pub fn host_bytes(&self) -> usize {
        let rows = |r: &Rows| r.starts.len() * 4 + r.terms.len() * std::mem::size_of::<Term>();
        let densities = self.a_aux_density.len() + self.b_inp_density.len() + self.b_aux_density.len();
        rows(&self.a) + rows(&self.b) + rows(&self.c) + self.coefficients.len() * 32 + densities * 8
    }

    /// The witness of the values `values`: a, b and c evaluated in parallel,
    /// bellperson's `input · 0 = 0` constraint appended per input.
    pub fn witness(&self, values: Values) -> crate::error::Result<Witness> {
        let total = self.total();
        if values.inputs.len() != total.inputs || values.aux.len() != total.aux {
            return Err(crate::error::Error::invalid(format!(
                "{} inputs and {} aux values for a circuit of {} and {}",
                values.inputs.len(),
                values.aux.len(),
                total.inputs,
                total.aux
            )));
        }
        let rows = total.constraints + total.inputs;
        let products = |m| -> Vec<Fr> {
            (0..rows)
                .into_par_iter()
                .map(|k| Fr(self.value(m, k, &values).into()))
                .collect()
        };
        Ok(Witness {
            a: products(Matrix::A),
            b: products(Matrix::B),
            c: products(Matrix::C),
            a_aux_density: self.a_aux_density.clone(),
            b_inp_density: self.b_inp_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
            inputs: values.inputs,
            aux: values.aux,
        })
    }

    /// Whether these rows give `whole` back; the first difference if not.
    fn check(&self, whole: &Witness) -> std::result::Result<(), String> {
        let total = self.total();
        let rows = total.constraints + total.inputs;
        if whole.a.len() != rows || whole.b.len() != rows || whole.c.len() != rows {
            return Err(format!("the witness has not {rows} constraints"));
        }
        let densities = [
            ("A's aux", &self.a_aux_density, &whole.a_aux_density),
            ("B's inputs", &self.b_inp_density, &whole.b_inp_density),
            ("B's aux", &self.b_aux_density, &whole.b_aux_density),
        ];
        for (name, ours, theirs) in densities {
            if ours != theirs {
                return Err(format!("the density of {name} differs"));
            }
        }
        let differs = |m: Matrix, recorded: &[Fr]| {
            (0..rows)
                .into_par_iter()
                .find_first(|&k| Fr(self.value_in(m, k, &whole.inputs, &whole.aux).into()) != recorded[k])
        };
        for (name, m, recorded) in [
            ("a", Matrix::A, &whole.a),
            ("b", Matrix::B, &whole.b),
            ("c", Matrix::C, &whole.c),
        ] {
            if let Some(k) = differs(m, recorded) {
                return Err(format!("{name} of constraint {k} differs"));
            }
        }
        Ok(())
    }

    fn value(&self, m: Matrix, k: usize, values: &Values) -> Scalar {
        self.value_in(m, k, &values.inputs, &values.aux)
    }

    /// Row `k` of matrix `m` times the values: the common part's rows as
    /// they are, unit u's with its variables moved by u units.
    fn value_in(&self, m: Matrix, k: usize, inputs: &[Fr], aux: &[Fr]) -> Scalar {
        let (common, unit) = (self.common, self.unit);
        let unit_rows = common.constraints + self.units * unit.constraints;
        let (row, u) = if k < common.constraints {
            (k, 0)
        } else if k < unit_rows {
            let j = k - common.constraints;
            (common.constraints + j % unit.constraints, j / unit.constraints)
        } else {
            // bellperson's `input · 0 = 0`.
            return match m {
                Matrix::A => Scalar::from(inputs[k - unit_rows].0),
                Matrix::B | Matrix::C => Scalar::ZERO,
            };
        };
        let rows = match m {
            Matrix::A => &self.a,
            Matrix::B => &self.b,
            Matrix::C => &self.c,
        };
        let mut sum = Scalar::ZERO;
        for term in rows.row(row) {
            let i = (term.variable & !INPUT) as usize;
            let x = if term.variable & INPUT != 0 {
                inputs[if i < common.inputs { i } else { i + u * unit.inputs }]
            } else {
                aux[if i < common.aux { i } else { i + u * unit.aux }]
            };
            let x = Scalar::from(x.0);
            match term.coefficient {
                ONE => sum += x,
                MINUS_ONE => sum -= x,
                c => sum += x * self.coefficients[c as usize],
            }
        }
        sum
    }
}

/// The common part's and a unit's sizes from those of one unit and of
/// `units` units.
fn split(one: Counts, total: Counts, units: usize) -> Option<(Counts, Counts)> {
    let per_unit = |one: usize, total: usize| {
        let more = total.checked_sub(one)?;
        (units >= 2 && more % (units - 1) == 0).then(|| more / (units - 1))
    };
    let unit = Counts {
        aux: per_unit(one.aux, total.aux)?,
        inputs: per_unit(one.inputs, total.inputs)?,
        constraints: per_unit(one.constraints, total.constraints)?,
    };
    let common = Counts {
        aux: one.aux.checked_sub(unit.aux)?,
        inputs: one.inputs.checked_sub(unit.inputs)?,
        constraints: one.constraints.checked_sub(unit.constraints)?,
    };
    // Every unit must have variables to move, and rows.
    (unit.aux > 0 && unit.constraints > 0).then_some((common, unit))
}

/// `n` bits, LSB first in 64-bit words, bit i set where `set(i)`.
fn bits(n: usize, set: impl Fn(usize) -> bool + Sync) -> Vec<u64> {
    (0..n.div_ceil(64))
        .into_par_iter()
        .map(|w| {
            (w * 64..(w * 64 + 64).min(n))
                .filter(|&i| set(i))
                .fold(0u64, |word, i| word | 1 << (i - w * 64))
        })
        .collect()
}

/// Distinct coefficients, each once.
#[derive(Default)]
struct Coefficients {
    values: Vec<Scalar>,
    index: HashMap<[u64; 4], u32>,
}

impl Coefficients {
    fn index_of(&mut self, c: &Scalar) -> u32 {
        if self.values.is_empty() {
            for known in [Scalar::ONE, -Scalar::ONE] {
                self.index
                    .insert(blst_fr::from(known).l, self.values.len() as u32);
                self.values.push(known);
            }
        }
        let next = self.values.len() as u32;
        let i = *self.index.entry(blst_fr::from(*c).l).or_insert(next);
        if i == next {
            self.values.push(*c);
        }
        i
    }
}

/// A constraint system that records rows and calls no value closure (as
/// parameter generation does).
struct Structure {
    inputs: usize,
    aux: usize,
    coefficients: Coefficients,
    a: Rows,
    b: Rows,
    c: Rows,
    /// Why the rows cannot be kept (too many variables or terms).
    refused: Option<String>,
}

impl Default for Structure {
    fn default() -> Structure {
        Structure {
            inputs: 0,
            aux: 0,
            coefficients: Coefficients::default(),
            a: Rows::new(),
            b: Rows::new(),
            c: Rows::new(),
            refused: None,
        }
    }
}

impl Structure {
    fn push(&mut self, m: Matrix, lc: &LinearCombination<Scalar>) {
        let mut terms = Vec::new();
        let variables = lc
            .iter_inputs()
            .map(|(&i, c)| (i, INPUT, c))
            .chain(lc.iter_aux().map(|(&i, c)| (i, 0, c)));
        for (i, kind, c) in variables {
            // A zero coefficient neither adds nor marks a density (as the
            // recorder).
            if bool::from(c.is_zero()) {
                continue;
            }
            match u32::try_from(i) {
                Ok(i) if i < INPUT => terms.push(Term {
                    variable: i | kind,
                    coefficient: self.coefficients.index_of(c),
                }),
                _ => self.refused = Some(format!("variable {i} is past 2^31")),
            }
        }
        let rows = match m {
            Matrix::A => &mut self.a,
            Matrix::B => &mut self.b,
            Matrix::C => &mut self.c,
        };
        rows.terms.extend(terms);
        match u32::try_from(rows.terms.len()) {
            Ok(end) => rows.starts.push(end),
            Err(_) => {
                self.refused = Some("more than 2^32 terms in one unit".into());
                rows.starts.push(u32::MAX);
            }
        }
    }

    /// Which variables of the one-unit circuit A's aux, B's inputs and B's
    /// aux read.
    fn local_densities(&self) -> (Vec<bool>, Vec<bool>, Vec<bool>) {
        let marks = |rows: &Rows, kind: u32, n: usize| {
            let mut marks = vec![false; n];
            for t in rows.terms.iter().filter(|t| t.variable & INPUT == kind) {
                marks[(t.variable & !INPUT) as usize] = true;
            }
            marks
        };
        (
            marks(&self.a, 0, self.aux),
            marks(&self.b, INPUT, self.inputs),
            marks(&self.b, 0, self.aux),
        )
    }
}

impl ConstraintSystem<Scalar> for Structure {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.push(Matrix::A, &a(LinearCombination::zero()));
        self.push(Matrix::B, &b(LinearCombination::zero()));
        self.push(Matrix::C, &c(LinearCombination::zero()));
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

/// What the process knows of a circuit type's constraints, by circuit type
/// and units.
#[derive(Clone)]
enum Known {
    Learned(Arc<UnitsR1cs>),
    /// The rows did not give a recorded witness back so many times (a
    /// malformed C1 output can do that once; a circuit whose units differ
    /// always does).
    Refused(usize),
}

/// Refusals after which a circuit type is no longer tried.
const TRIES: usize = 3;

/// A circuit's shape: its type, its parameters' identifier (one set of
/// parameters proves one set of constraints) and its units.
type Key = (TypeId, String, usize);

static KNOWN: Lazy<Mutex<HashMap<Key, Known>>> = Lazy::new(Default::default);

fn known() -> std::sync::MutexGuard<'static, HashMap<Key, Known>> {
    KNOWN.lock().unwrap_or_else(|e| e.into_inner())
}

fn key<C: 'static>(parameters: &str, units: usize) -> Key {
    (TypeId::of::<C>(), parameters.to_owned(), units)
}

/// The constraints learned for circuits of type `C` with the parameters
/// `parameters` (their identifier) and `units` units.
pub fn learned<C: 'static>(parameters: &str, units: usize) -> Option<Arc<UnitsR1cs>> {
    match known().get(&key::<C>(parameters, units)) {
        Some(Known::Learned(r1cs)) => Some(r1cs.clone()),
        _ => None,
    }
}

/// How many circuits' constraints the process has learned.
pub fn learned_count() -> usize {
    known()
        .values()
        .filter(|k| matches!(k, Known::Learned(_)))
        .count()
}

/// Whether `learn_once` would try these circuits now.
pub fn worth_learning<C: 'static>(parameters: &str, units: usize) -> bool {
    match known().get(&key::<C>(parameters, units)) {
        None => true,
        Some(Known::Refused(tries)) => *tries < TRIES,
        Some(Known::Learned(_)) => false,
    }
}

/// Learns the constraints of circuits of type `C` from a circuit of one
/// unit and a recorded witness of `units` units, once per process; a type
/// whose rows do not give the witness back is tried `TRIES` times.
pub fn learn_once<C: Circuit<Scalar> + 'static>(
    one_unit: C,
    parameters: &str,
    units: usize,
    whole: &Witness,
) {
    if !worth_learning::<C>(parameters, units) {
        return;
    }
    let key = key::<C>(parameters, units);
    let learned = match UnitsR1cs::learn(one_unit, units, whole) {
        Ok(r1cs) => {
            log::info!(
                "constraints of {} recorded: {} terms, {} coefficients, {} MiB",
                std::any::type_name::<C>(),
                r1cs.terms(),
                r1cs.coefficients.len(),
                r1cs.host_bytes() >> 20
            );
            Known::Learned(Arc::new(r1cs))
        }
        Err(why) => {
            log::warn!("{}: recorded whole again: {why}", std::any::type_name::<C>());
            Known::Refused(1)
        }
    };
    let mut known = known();
    match (known.get_mut(&key), learned) {
        (Some(Known::Learned(_)), _) => {}
        (Some(Known::Refused(tries)), Known::Refused(_)) => *tries += 1,
        (_, learned) => {
            known.insert(key, learned);
        }
    }
}
