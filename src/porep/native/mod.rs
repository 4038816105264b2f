//! Witness values computed natively (issue 31): the aux values that
//! bellpepper's gadgets allocate, in the order they allocate them, from
//! plain values, without the gadgets' linear combinations or constraints.
//!
//! Each function here follows its bellpepper counterpart allocation by
//! allocation, folding constants exactly where the gadget folds them, so
//! that its values line up with the circuit's aux variables. The tests put
//! each beside its gadget and compare the aux values one by one.

pub mod bits;
pub mod merkle;
pub mod num;
pub mod poseidon;
pub mod sha256;
pub mod stacked;

use crate::math::Fr;

/// The aux values of a witness, in the order they are allocated.
#[derive(Debug, Default)]
pub struct Aux {
    values: Vec<Fr>,
}

impl Aux {
    /// An empty witness with room for `capacity` values.
    pub fn with_capacity(capacity: usize) -> Aux {
        Aux {
            values: Vec::with_capacity(capacity),
        }
    }

    /// Allocates a value.
    pub fn push(&mut self, value: Fr) {
        self.values.push(value);
    }

    /// Allocates a bit (0 or 1).
    pub fn bit(&mut self, value: bool) {
        self.values.push(if value { Fr::ONE } else { Fr::ZERO });
    }

    /// The values, given up.
    pub fn into_values(self) -> Vec<Fr> {
        self.values
    }

    /// The values allocated so far.
    pub fn values(&self) -> &[Fr] {
        &self.values
    }

    /// How many values were allocated.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}
