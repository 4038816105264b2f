//! One circuit's witness as the prover takes it: supraseal's `Assignment`
//! (density bitmaps, the a/b/c evaluations over the constraints, and the
//! input and aux values), borrowed from the caller.

use super::UnitConstraints;
use crate::error::{Error, Result};
use crate::math::bits_set_below;
use crate::math::Fr;
use crate::params::Parameters;
use rayon::prelude::*;
use std::sync::Arc;

/// Values one rayon task scans when looking for one not below the modulus.
const SCAN_CHUNK: usize = 1 << 16;

/// The index of the first of `values` whose limbs are not below the field
/// modulus (a Montgomery or canonical residue always is), scanned in
/// parallel: at 2^27 a partition's witness is 16 GiB.
pub fn first_unreduced(values: &[Fr]) -> Option<usize> {
    values
        .par_chunks(SCAN_CHUNK)
        .enumerate()
        .find_map_first(|(k, chunk)| {
            chunk
                .iter()
                .position(|v| !v.is_reduced())
                .map(|j| k * SCAN_CHUNK + j)
        })
}

/// A density bitmap: bit i (bit i % 64 of word i / 64) says variable i
/// appears in the query; `popcount` is how many bits are set below `bit_len`.
#[derive(Clone, Copy, Debug)]
pub struct Density<'a> {
    pub words: &'a [u64],
    pub bit_len: usize,
    pub popcount: usize,
}

impl Density<'_> {
    /// Bits set among the first `bit_len`.
    pub fn count(&self) -> usize {
        bits_set_below(self.words, self.bit_len)
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Assignment<'a> {
    /// Aux variables in the A query.
    pub a_aux_density: Density<'a>,
    /// Inputs in the B query.
    pub b_inp_density: Density<'a>,
    /// Aux variables in the B query.
    pub b_aux_density: Density<'a>,
    /// A, B and C evaluated at each constraint (abc_size entries each);
    /// empty when `products` gives them.
    pub a: &'a [Fr],
    pub b: &'a [Fr],
    pub c: &'a [Fr],
    /// Input values, ONE first.
    pub inputs: &'a [Fr],
    pub aux: &'a [Fr],
    /// The circuit's constraints, when a, b and c are to be computed from
    /// the values by the prover (on a GPU, where the H step reads them).
    pub products: Option<&'a Arc<UnitConstraints>>,
}

impl Assignment<'_> {
    /// Checks the assignment is internally consistent and fits `params`;
    /// `index` names the circuit in messages.
    pub fn check(&self, index: usize, params: &Parameters) -> Result<()> {
        let at = |msg: String| Error::size_mismatch(format!("circuit {index}: {msg}"));
        let (n_in, n_aux) = (self.inputs.len(), self.aux.len());
        if n_in != params.num_inputs() || n_aux != params.num_aux() {
            return Err(at(format!(
                "{n_in} inputs and {n_aux} aux variables, but the parameters are for {} inputs and {} aux \
                 (parameters for a different circuit?)",
                params.num_inputs(),
                params.num_aux()
            )));
        }
        if let Some(p) = self.products {
            let total = p.total();
            if !self.a.is_empty() || !self.b.is_empty() || !self.c.is_empty() {
                return Err(at(
                    "a, b and c are given and left to the constraints at once".into()
                ));
            }
            if (total.inputs, total.aux) != (n_in, n_aux) {
                return Err(at(format!(
                    "{n_in} inputs and {n_aux} aux values for constraints of {} and {}",
                    total.inputs, total.aux
                )));
            }
        }
        let abc = self.abc_len();
        if self.products.is_none() && (self.b.len() != abc || self.c.len() != abc) {
            return Err(at(format!(
                "a, b and c must have the same length, got {}, {} and {}",
                abc,
                self.b.len(),
                self.c.len()
            )));
        }
        if abc > params.domain_size() {
            return Err(at(format!(
                "abc_size {abc} exceeds the parameters' domain size {}",
                params.domain_size()
            )));
        }
        for (name, density, expected) in [
            ("a_aux", &self.a_aux_density, n_aux),
            ("b_inp", &self.b_inp_density, n_in),
            ("b_aux", &self.b_aux_density, n_aux),
        ] {
            if density.bit_len != expected {
                return Err(at(format!(
                    "{name}_bit_len is {} but must be {expected}",
                    density.bit_len
                )));
            }
            if density.words.len() < expected.div_ceil(64) {
                return Err(at(format!(
                    "{name} density has {} words, {} needed for {expected} bits",
                    density.words.len(),
                    expected.div_ceil(64)
                )));
            }
            let actual = density.count();
            if density.popcount != actual {
                return Err(at(format!(
                    "{name}_popcount is {} but the bitmap has {actual} bits set",
                    density.popcount
                )));
            }
        }
        if params.a.len() != n_in + self.a_aux_density.popcount {
            return Err(at(format!(
                "the parameters have {} A points, the witness needs {} ({n_in} inputs + {} aux) \
                 (parameters for a different circuit?)",
                params.a.len(),
                n_in + self.a_aux_density.popcount,
                self.a_aux_density.popcount
            )));
        }
        let b_needed = self.b_inp_density.popcount + self.b_aux_density.popcount;
        if params.b_g1.len() != b_needed {
            return Err(at(format!(
                "the parameters have {} B points, the witness needs {b_needed} \
                 (parameters for a different circuit?)",
                params.b_g1.len()
            )));
        }
        Ok(())
    }

    /// Entries of a, b and c.
    pub fn abc_len(&self) -> usize {
        self.products.map_or(self.a.len(), |p| p.abc_len())
    }

    /// a, b and c on the host: `None` when given, else the products of the
    /// values (for the CPU's H step, and a GPU stage that cannot make them
    /// on the device).
    pub fn host_products(&self) -> Result<Option<[Vec<Fr>; 3]>> {
        self.products
            .map(|p| p.products(self.inputs, self.aux))
            .transpose()
    }

    /// Checks every a, b, c, input and aux value is below the modulus:
    /// bellperson never produces one that is not, and the GPU and CPU
    /// backends would not agree on it. `index` names the circuit.
    pub fn check_reduced(&self, index: usize) -> Result<()> {
        check_vectors(
            index,
            &[
                ("a", self.a),
                ("b", self.b),
                ("c", self.c),
                ("inputs", self.inputs),
                ("aux", self.aux),
            ],
        )
    }

    /// `check_reduced` of the inputs alone.
    pub fn check_inputs_reduced(&self, index: usize) -> Result<()> {
        check_vectors(index, &[("inputs", self.inputs)])
    }

    /// `check_reduced` of the aux values alone.
    pub fn check_aux_reduced(&self, index: usize) -> Result<()> {
        check_vectors(index, &[("aux", self.aux)])
    }
}

/// The first value not below the modulus in the named vectors of circuit
/// `index`, in their order, as an error.
fn check_vectors(index: usize, vectors: &[(&str, &[Fr])]) -> Result<()> {
    for &(name, values) in vectors {
        if let Some(j) = first_unreduced(values) {
            return Err(Error::unreduced(index, name, j));
        }
    }
    Ok(())
}

/// An owned witness, for callers that build one in Rust (tests, the
/// command-line tool, the synthetic circuits).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Witness {
    pub a_aux_density: Vec<u64>,
    pub b_inp_density: Vec<u64>,
    pub b_aux_density: Vec<u64>,
    pub a: Vec<Fr>,
    pub b: Vec<Fr>,
    pub c: Vec<Fr>,
    pub inputs: Vec<Fr>,
    pub aux: Vec<Fr>,
    /// The constraints a, b and c come from when they are left empty (see
    /// `UnitConstraints::values_witness`).
    pub products: Option<Arc<UnitConstraints>>,
}

impl Witness {
    /// This witness with its a, b, c made on the host from the constraints
    /// it leaves them to (`products`); as it is when it gives them.
    pub fn with_host_products(mut self) -> Result<Witness> {
        if let Some(constraints) = self.products.take() {
            [self.a, self.b, self.c] = constraints.products(&self.inputs, &self.aux)?;
        }
        Ok(self)
    }

    pub fn as_assignment(&self) -> Assignment<'_> {
        fn density(words: &[u64], bit_len: usize) -> Density<'_> {
            let d = Density {
                words,
                bit_len,
                popcount: 0,
            };
            // Too short a bitmap is reported by `Assignment::check`.
            let popcount = if words.len() * 64 >= bit_len { d.count() } else { 0 };
            Density { popcount, ..d }
        }
        Assignment {
            a_aux_density: density(&self.a_aux_density, self.aux.len()),
            b_inp_density: density(&self.b_inp_density, self.inputs.len()),
            b_aux_density: density(&self.b_aux_density, self.aux.len()),
            a: &self.a,
            b: &self.b,
            c: &self.c,
            inputs: &self.inputs,
            aux: &self.aux,
            products: self.products.as_ref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::FR_MODULUS;

    fn raw(limbs: [u64; 4]) -> Fr {
        Fr::slice_from_limbs(&[limbs])[0]
    }

    #[test]
    fn first_unreduced_finds_the_first_value_at_or_above_the_modulus() {
        let r_minus_1 = raw([FR_MODULUS[0] - 1, FR_MODULUS[1], FR_MODULUS[2], FR_MODULUS[3]]);
        let top = raw([0, 0, 0, u64::MAX]);
        let n = 3 * SCAN_CHUNK + 5;
        let mut values = vec![Fr::ONE; n];
        values[7] = r_minus_1;
        assert_eq!(first_unreduced(&values), None, "r - 1 is reduced");
        // In each chunk, at its edges and past the last whole chunk; a later
        // bad value does not hide an earlier one.
        for at in [0, SCAN_CHUNK - 1, SCAN_CHUNK, 2 * SCAN_CHUNK + 3, n - 1] {
            let mut v = values.clone();
            v[at] = raw(FR_MODULUS);
            v[n - 1] = top;
            assert_eq!(first_unreduced(&v), Some(at));
        }
        assert_eq!(first_unreduced(&[]), None);
    }
}
