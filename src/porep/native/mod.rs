//! Witness values computed natively (issue 31): the aux values that
//! bellpepper's gadgets allocate, in the order they allocate them, from
//! plain values, without the gadgets' linear combinations or constraints.
//!
//! Each function here follows its bellpepper counterpart allocation by
//! allocation, folding constants exactly where the gadget folds them, so
//! that its values line up with the circuit's aux variables. The tests put
//! each beside its gadget and compare the aux values one by one.

pub mod bits;
pub(crate) mod merkle;
pub(crate) mod num;
pub(crate) mod poseidon;
pub mod sha256;
pub(crate) mod stacked;

use crate::math::Fr;
use blstrs::Scalar;

/// A field element of blstrs (the circuits' and hashers' type) as ours:
/// both are blst's Montgomery form.
pub(crate) fn from_scalar(value: Scalar) -> Fr {
    Fr(blst::blst_fr::from(value))
}

/// Ours as blstrs'.
pub(crate) fn to_scalar(value: &Fr) -> Scalar {
    Scalar::from(value.0)
}

/// The aux values of a witness, in the order they are allocated: grown in
/// a vector of their own, or written into a slice given ahead (a
/// challenge's place in its partition's aux values).
#[derive(Debug, Default)]
pub struct Aux<'a> {
    grown: Vec<Fr>,
    /// The slice and how many values were allocated into it (those past
    /// its end are counted, not kept: the caller compares the count).
    into: Option<(&'a mut [Fr], usize)>,
}

impl<'a> Aux<'a> {
    /// An empty witness with room for `capacity` values.
    pub fn with_capacity(capacity: usize) -> Aux<'a> {
        Aux {
            grown: Vec::with_capacity(capacity),
            into: None,
        }
    }

    /// Values allocated into `slice`, from its start.
    pub fn into_slice(slice: &'a mut [Fr]) -> Aux<'a> {
        Aux {
            grown: Vec::new(),
            into: Some((slice, 0)),
        }
    }

    /// Allocates a value.
    #[inline]
    pub fn push(&mut self, value: Fr) {
        match &mut self.into {
            None => self.grown.push(value),
            Some((slice, at)) => {
                if let Some(slot) = slice.get_mut(*at) {
                    *slot = value;
                }
                *at += 1;
            }
        }
    }

    /// Allocates a bit (0 or 1).
    #[inline]
    pub fn bit(&mut self, value: bool) {
        self.push(if value { Fr::ONE } else { Fr::ZERO });
    }

    /// The values grown, given up (none when written into a slice).
    pub fn into_values(self) -> Vec<Fr> {
        self.grown
    }

    /// The values allocated so far (those kept).
    pub fn values(&self) -> &[Fr] {
        match &self.into {
            None => &self.grown,
            Some((slice, at)) => &slice[..(*at).min(slice.len())],
        }
    }

    /// How many values were allocated.
    pub fn len(&self) -> usize {
        match &self.into {
            None => self.grown.len(),
            Some((_, at)) => *at,
        }
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
