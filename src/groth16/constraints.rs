//! The constraints of a circuit made of a common part and `units` units of
//! one shape, each unit reading only the common part and itself (a PoRep
//! partition: its challenges), as the rows of A, B and C of the common part
//! and of one unit. Unit u has unit 0's rows with its own variables: an
//! index of the one-unit circuit past the common part's moves by u whole
//! units. With them a witness needs only its values (inputs and aux, in
//! bellperson's order): a = A·w, b = B·w and c = C·w are sparse products,
//! and the densities follow from the rows.
//!
//! Memory: 8 bytes a term (variable, coefficient's index) and 4 a row per
//! matrix, for one unit; the whole circuit's three density bitmaps.

use crate::error::{Error, Result};
use crate::math::Fr;
use crate::Witness;
use rayon::prelude::*;
use std::sync::Arc;

/// A term's variable: an input when this bit is set, else an aux variable.
pub const INPUT: u32 = 1 << 31;

/// The most variables or constraints of a whole circuit (its density
/// bitmaps are made from the sizes alone).
const MAX_VARIABLES: u64 = 1 << 32;

/// Coefficients' indices fixed in advance, so that the products add or
/// subtract without multiplying: `coefficients[ONE]` is 1,
/// `coefficients[MINUS_ONE]` is −1.
pub const ONE: u32 = 0;
pub const MINUS_ONE: u32 = 1;

/// One non-zero entry of a row: a variable of the one-unit circuit (inputs
/// with `INPUT` set) and its coefficient's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Term {
    pub variable: u32,
    pub coefficient: u32,
}

/// Rows of one matrix: row r is `terms[starts[r]..starts[r + 1]]`.
#[derive(Debug, PartialEq, Eq)]
pub struct Rows {
    starts: Vec<u32>,
    terms: Vec<Term>,
}

impl Default for Rows {
    fn default() -> Rows {
        Rows {
            starts: vec![0],
            terms: Vec::new(),
        }
    }
}

impl Rows {
    /// Rows from their starts and terms (`parts`), checked: the starts
    /// begin at 0, never go down, and end at the terms' count.
    pub fn from_parts(starts: Vec<u32>, terms: Vec<Term>) -> Result<Rows> {
        if starts.first() != Some(&0) {
            return Err(Error::invalid("the row starts do not begin at 0"));
        }
        if let Some(r) = starts.windows(2).position(|w| w[1] < w[0]) {
            return Err(Error::invalid(format!("row {r} ends before it starts")));
        }
        if starts.last().map(|&end| end as usize) != Some(terms.len()) {
            return Err(Error::invalid(format!(
                "the rows end at term {}, with {} terms",
                starts.last().copied().unwrap_or(0),
                terms.len()
            )));
        }
        Ok(Rows { starts, terms })
    }

    /// Appends a row; `Err` past 2^32 terms.
    pub fn push(&mut self, terms: impl IntoIterator<Item = Term>) -> Result<()> {
        self.terms.extend(terms);
        let end = u32::try_from(self.terms.len())
            .map_err(|_| Error::invalid("more than 2^32 terms in one unit's rows"))?;
        self.starts.push(end);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn row(&self, r: usize) -> &[Term] {
        &self.terms[self.starts[r] as usize..self.starts[r + 1] as usize]
    }

    /// Row starts (one more than rows) and terms, for a copy on a GPU.
    pub fn parts(&self) -> (&[u32], &[Term]) {
        (&self.starts, &self.terms)
    }

    fn bytes(&self) -> usize {
        self.starts.len() * 4 + self.terms.len() * std::mem::size_of::<Term>()
    }
}

/// Sizes: aux variables, inputs (ONE included) and constraints (without
/// bellperson's `input · 0 = 0` constraints).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sizes {
    pub aux: usize,
    pub inputs: usize,
    pub constraints: usize,
}

impl Sizes {
    pub fn plus(self, unit: Sizes, times: usize) -> Sizes {
        Sizes {
            aux: self.aux + unit.aux * times,
            inputs: self.inputs + unit.inputs * times,
            constraints: self.constraints + unit.constraints * times,
        }
    }

    /// `plus`, `None` on overflow.
    pub fn checked_plus(self, unit: Sizes, times: usize) -> Option<Sizes> {
        let sum = |n: usize, u: usize| u.checked_mul(times)?.checked_add(n);
        Some(Sizes {
            aux: sum(self.aux, unit.aux)?,
            inputs: sum(self.inputs, unit.inputs)?,
            constraints: sum(self.constraints, unit.constraints)?,
        })
    }

    /// These sizes less `earlier` (at most these).
    pub fn minus(self, earlier: Sizes) -> Sizes {
        Sizes {
            aux: self.aux - earlier.aux,
            inputs: self.inputs - earlier.inputs,
            constraints: self.constraints - earlier.constraints,
        }
    }
}

/// Which matrix.
#[derive(Clone, Copy, Debug)]
pub enum Matrix {
    A,
    B,
    C,
}

/// See the module.
#[derive(Debug, PartialEq, Eq)]
pub struct UnitConstraints {
    units: usize,
    common: Sizes,
    unit: Sizes,
    coefficients: Vec<Fr>,
    rows: [Rows; 3],
    a_aux_density: Vec<u64>,
    b_inp_density: Vec<u64>,
    b_aux_density: Vec<u64>,
}

impl UnitConstraints {
    /// The constraints of `units` units from the rows `[a, b, c]` of the
    /// one-unit circuit (the common part's, then the unit's) and their
    /// `coefficients` (`ONE` and `MINUS_ONE` first). Every term is checked
    /// to name a variable of the one-unit circuit and a coefficient, so the
    /// products (on the CPU or a GPU) read only within the values.
    pub fn new(
        units: usize,
        common: Sizes,
        unit: Sizes,
        coefficients: Vec<Fr>,
        rows: [Rows; 3],
    ) -> Result<Self> {
        let within = |times| {
            common.checked_plus(unit, times).filter(|t: &Sizes| {
                [t.aux, t.inputs, t.constraints]
                    .iter()
                    .all(|&n| n as u64 <= MAX_VARIABLES)
            })
        };
        let (Some(total), Some(one)) = (within(units), within(1)) else {
            return Err(Error::invalid(format!(
                "{units} units of {unit:?} and a common part of {common:?}: more than 2^32 variables or \
                 constraints"
            )));
        };
        if units == 0 || unit.constraints == 0 || unit.aux == 0 {
            return Err(Error::invalid(format!(
                "{units} units of {unit:?}: no unit to repeat"
            )));
        }
        if coefficients.len() < 2
            || coefficients[ONE as usize] != Fr::ONE
            || coefficients[MINUS_ONE as usize] != -Fr::ONE
        {
            return Err(Error::invalid("the coefficients do not begin with 1 and −1"));
        }
        for (m, rows) in rows.iter().enumerate() {
            if rows.len() != one.constraints {
                return Err(Error::invalid(format!(
                    "matrix {m} has {} rows, the one-unit circuit {} constraints",
                    rows.len(),
                    one.constraints
                )));
            }
            let out_of_range = rows.terms.iter().find(|t| {
                let i = (t.variable & !INPUT) as usize;
                let n = if t.variable & INPUT != 0 {
                    one.inputs
                } else {
                    one.aux
                };
                i >= n || t.coefficient as usize >= coefficients.len()
            });
            if let Some(t) = out_of_range {
                return Err(Error::invalid(format!(
                    "matrix {m}: term {t:?} is outside the one-unit circuit ({one:?}, {} coefficients)",
                    coefficients.len()
                )));
            }
        }
        let marks = |rows: &Rows, kind: u32, n: usize| {
            let mut marks = vec![false; n];
            for t in rows.terms.iter().filter(|t| t.variable & INPUT == kind) {
                marks[(t.variable & !INPUT) as usize] = true;
            }
            marks
        };
        // Unit u's variables are marked as unit 0's are; a common variable
        // is marked when the common part or any unit (all read alike) reads it.
        let expand = |marks: Vec<bool>, common: usize, unit: usize, total: usize| {
            bits(total, |g| {
                marks[if g < common {
                    g
                } else {
                    common + (g - common) % unit
                }]
            })
        };
        let [a, b, _] = &rows;
        Ok(UnitConstraints {
            a_aux_density: expand(marks(a, 0, one.aux), common.aux, unit.aux, total.aux),
            b_inp_density: expand(
                marks(b, INPUT, one.inputs),
                common.inputs,
                unit.inputs.max(1),
                total.inputs,
            ),
            b_aux_density: expand(marks(b, 0, one.aux), common.aux, unit.aux, total.aux),
            units,
            common,
            unit,
            coefficients,
            rows,
        })
    }

    /// The whole circuit's sizes.
    pub fn total(&self) -> Sizes {
        self.common.plus(self.unit, self.units)
    }

    /// Entries of a, b and c: the constraints and bellperson's one per input.
    pub fn abc_len(&self) -> usize {
        let total = self.total();
        total.constraints + total.inputs
    }

    /// How many terms the rows hold (A, B and C).
    pub fn terms(&self) -> usize {
        self.rows.iter().map(|r| r.terms.len()).sum()
    }

    pub fn coefficients(&self) -> &[Fr] {
        &self.coefficients
    }

    pub fn rows(&self, m: Matrix) -> &Rows {
        &self.rows[m as usize]
    }

    /// The common part's and a unit's sizes, and the units.
    pub fn shape(&self) -> (Sizes, Sizes, usize) {
        (self.common, self.unit, self.units)
    }

    /// The host memory it holds.
    pub fn host_bytes(&self) -> usize {
        let densities = self.a_aux_density.len() + self.b_inp_density.len() + self.b_aux_density.len();
        self.rows.iter().map(Rows::bytes).sum::<usize>() + self.coefficients.len() * 32 + densities * 8
    }

    /// The witness of these values: a, b and c evaluated in parallel.
    pub fn witness(&self, inputs: Vec<Fr>, aux: Vec<Fr>) -> Result<Witness> {
        let [a, b, c] = self.products(&inputs, &aux)?;
        Ok(Witness {
            a,
            b,
            c,
            a_aux_density: self.a_aux_density.clone(),
            b_inp_density: self.b_inp_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
            inputs,
            aux,
            products: None,
        })
    }

    /// The witness of these values with a, b and c left to the prover
    /// (`Witness::products`): on a GPU they are products there, and only
    /// the values cross PCIe.
    pub fn values_witness(self: &Arc<Self>, inputs: Vec<Fr>, aux: Vec<Fr>) -> Result<Witness> {
        self.check_sizes(&inputs, &aux)?;
        Ok(Witness {
            a: Vec::new(),
            b: Vec::new(),
            c: Vec::new(),
            a_aux_density: self.a_aux_density.clone(),
            b_inp_density: self.b_inp_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
            inputs,
            aux,
            products: Some(self.clone()),
        })
    }

    /// a, b and c of these values, bellperson's `input · 0 = 0` constraint
    /// appended per input.
    pub fn products(&self, inputs: &[Fr], aux: &[Fr]) -> Result<[Vec<Fr>; 3]> {
        self.check_sizes(inputs, aux)?;
        let products = |m| -> Vec<Fr> {
            (0..self.abc_len())
                .into_par_iter()
                .map(|k| self.value(m, k, inputs, aux))
                .collect()
        };
        Ok([products(Matrix::A), products(Matrix::B), products(Matrix::C)])
    }

    fn check_sizes(&self, inputs: &[Fr], aux: &[Fr]) -> Result<()> {
        let total = self.total();
        if inputs.len() != total.inputs || aux.len() != total.aux {
            return Err(Error::invalid(format!(
                "{} inputs and {} aux values for a circuit of {} and {}",
                inputs.len(),
                aux.len(),
                total.inputs,
                total.aux
            )));
        }
        Ok(())
    }

    /// Where these constraints do not give `whole` back (its densities, or
    /// its a, b, c from its values), if anywhere.
    pub fn first_difference(&self, whole: &Witness) -> Option<String> {
        let rows = self.abc_len();
        if let Err(e) = self.check_sizes(&whole.inputs, &whole.aux) {
            return Some(e.message);
        }
        if whole.a.len() != rows || whole.b.len() != rows || whole.c.len() != rows {
            return Some(format!("the witness has not {rows} entries of a, b and c"));
        }
        let densities = [
            ("A's aux", &self.a_aux_density, &whole.a_aux_density),
            ("B's inputs", &self.b_inp_density, &whole.b_inp_density),
            ("B's aux", &self.b_aux_density, &whole.b_aux_density),
        ];
        if let Some((name, _, _)) = densities.iter().find(|(_, ours, theirs)| ours != theirs) {
            return Some(format!("the density of {name} differs"));
        }
        // Compared as they are computed: no second copy of a partition.
        let recorded = [
            ("a", Matrix::A, &whole.a),
            ("b", Matrix::B, &whole.b),
            ("c", Matrix::C, &whole.c),
        ];
        recorded.into_iter().find_map(|(name, m, recorded)| {
            (0..rows)
                .into_par_iter()
                .find_first(|&k| self.value(m, k, &whole.inputs, &whole.aux) != recorded[k])
                .map(|k| format!("{name} of constraint {k} differs"))
        })
    }

    /// Row `k` of matrix `m` times the values: the common part's rows as
    /// they are, unit u's with its variables moved by u units.
    fn value(&self, m: Matrix, k: usize, inputs: &[Fr], aux: &[Fr]) -> Fr {
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
                Matrix::A => inputs[k - unit_rows],
                Matrix::B | Matrix::C => Fr::ZERO,
            };
        };
        let mut sum = Fr::ZERO;
        for term in self.rows[m as usize].row(row) {
            let i = (term.variable & !INPUT) as usize;
            let x = if term.variable & INPUT != 0 {
                inputs[if i < common.inputs { i } else { i + u * unit.inputs }]
            } else {
                aux[if i < common.aux { i } else { i + u * unit.aux }]
            };
            match term.coefficient {
                ONE => sum += x,
                MINUS_ONE => sum -= x,
                c => sum += x * self.coefficients[c as usize],
            }
        }
        sum
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A common aux variable `base`, then units of one aux variable x and
    /// one constraint x · base = 0 (rows of the one-unit circuit).
    fn toy(a_term: Term, units: usize) -> Result<UnitConstraints> {
        let row = |terms: Vec<Term>| {
            let mut rows = Rows::default();
            rows.push(terms).unwrap();
            rows
        };
        let base = Term {
            variable: 0,
            coefficient: ONE,
        };
        UnitConstraints::new(
            units,
            Sizes {
                aux: 1,
                inputs: 1,
                constraints: 0,
            },
            Sizes {
                aux: 1,
                inputs: 0,
                constraints: 1,
            },
            vec![Fr::ONE, -Fr::ONE, Fr::from_u64(7)],
            [row(vec![a_term]), row(vec![base]), row(vec![])],
        )
    }

    #[test]
    fn units_read_their_own_variables_and_the_common_ones() {
        let x_times_7 = Term {
            variable: 1,
            coefficient: 2,
        };
        let constraints = toy(x_times_7, 3).unwrap();
        let aux: Vec<Fr> = [2, 3, 4, 5].map(Fr::from_u64).to_vec();
        let w = constraints.witness(vec![Fr::ONE], aux).unwrap();
        let seven = |x: u64| Fr::from_u64(7 * x);
        assert_eq!(w.a, vec![seven(3), seven(4), seven(5), Fr::ONE]);
        assert_eq!(
            w.b,
            vec![Fr::from_u64(2), Fr::from_u64(2), Fr::from_u64(2), Fr::ZERO]
        );
        assert_eq!(w.c, vec![Fr::ZERO; 4]);
        assert_eq!(
            (
                w.a_aux_density.clone(),
                w.b_aux_density.clone(),
                w.b_inp_density.clone()
            ),
            (vec![0b1110], vec![0b0001], vec![0])
        );
        assert_eq!(constraints.first_difference(&w), None);
        let mut wrong = w.clone();
        wrong.a[1] = Fr::ZERO;
        assert_eq!(
            constraints.first_difference(&wrong).as_deref(),
            Some("a of constraint 1 differs")
        );
        assert!(
            constraints.witness(vec![Fr::ONE], vec![Fr::ONE; 3]).is_err(),
            "too few values"
        );
    }

    #[test]
    fn terms_outside_the_one_unit_circuit_are_refused() {
        let past_aux = Term {
            variable: 2,
            coefficient: ONE,
        };
        let past_inputs = Term {
            variable: INPUT | 1,
            coefficient: ONE,
        };
        let past_coefficients = Term {
            variable: 1,
            coefficient: 3,
        };
        for term in [past_aux, past_inputs, past_coefficients] {
            let e = toy(term, 2).expect_err("outside");
            assert!(e.message.contains("outside the one-unit circuit"), "{e}");
        }
    }
}
