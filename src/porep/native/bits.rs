//! Bits and 32-bit words as bellpepper's `Boolean` and `UInt32` gadgets
//! hold them, and the gadgets' operations on them (`Boolean::xor`, `and`,
//! `sha256_ch`, `sha256_maj`; `UInt32::xor`, `addmany`, `rotr`, `shr`):
//! each allocates what its gadget allocates, into `Aux`.

use super::Aux;

/// A circuit Boolean: a constant, or an allocated bit taken as it is or
/// negated (bellpepper's `Boolean::{Constant, Is, Not}`). `Is(v)` and
/// `Not(v)` carry the allocated variable's value `v`, not the Boolean's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bit {
    Const(bool),
    Is(bool),
    Not(bool),
}

impl Bit {
    /// A newly allocated bit.
    pub fn alloc(aux: &mut Aux, value: bool) -> Bit {
        aux.bit(value);
        Bit::Is(value)
    }

    /// The Boolean's value.
    pub fn value(self) -> bool {
        match self {
            Bit::Const(b) | Bit::Is(b) => b,
            Bit::Not(v) => !v,
        }
    }

    pub fn is_constant(self) -> bool {
        matches!(self, Bit::Const(_))
    }
}

impl std::ops::Not for Bit {
    type Output = Bit;

    /// The negation (`Boolean::not`): no allocation.
    fn not(self) -> Bit {
        match self {
            Bit::Const(b) => Bit::Const(!b),
            Bit::Is(v) => Bit::Not(v),
            Bit::Not(v) => Bit::Is(v),
        }
    }
}

/// a ⊕ b as `Boolean::xor`: constants fold; an allocated bit of the two
/// variables' xor otherwise (negated when exactly one is negated).
pub fn xor(aux: &mut Aux, a: Bit, b: Bit) -> Bit {
    match (a, b) {
        (Bit::Const(false), x) | (x, Bit::Const(false)) => x,
        (Bit::Const(true), x) | (x, Bit::Const(true)) => !x,
        (Bit::Is(x), Bit::Not(y)) | (Bit::Not(y), Bit::Is(x)) => !Bit::alloc(aux, x ^ y),
        (Bit::Is(x), Bit::Is(y)) | (Bit::Not(x), Bit::Not(y)) => Bit::alloc(aux, x ^ y),
    }
}

/// a ∧ b as `Boolean::and`: constants fold; otherwise one allocated bit
/// of the Booleans' conjunction.
pub fn and(aux: &mut Aux, a: Bit, b: Bit) -> Bit {
    match (a, b) {
        (Bit::Const(false), _) | (_, Bit::Const(false)) => Bit::Const(false),
        (Bit::Const(true), x) | (x, Bit::Const(true)) => x,
        (x, y) => Bit::alloc(aux, x.value() & y.value()),
    }
}

/// SHA-256's choice, (a ∧ b) ⊕ (¬a ∧ c), as `Boolean::sha256_ch`.
pub fn ch(aux: &mut Aux, a: Bit, b: Bit, c: Bit) -> Bit {
    let value = (a.value() & b.value()) ^ (!a.value() & c.value());
    match (a, b, c) {
        (Bit::Const(_), Bit::Const(_), Bit::Const(_)) => Bit::Const(value),
        (Bit::Const(false), _, c) => c,
        (a, Bit::Const(false), c) => and(aux, !a, c),
        (a, b, Bit::Const(false)) => and(aux, a, b),
        (a, b, Bit::Const(true)) => !and(aux, a, !b),
        (a, Bit::Const(true), c) => !and(aux, !a, !c),
        // The gadget folds no more (a true constant included).
        _ => Bit::alloc(aux, value),
    }
}

/// SHA-256's majority, (a ∧ b) ⊕ (a ∧ c) ⊕ (b ∧ c), as
/// `Boolean::sha256_maj`: in general the majority bit, then b ∧ c.
pub fn maj(aux: &mut Aux, a: Bit, b: Bit, c: Bit) -> Bit {
    let value = (a.value() & b.value()) ^ (a.value() & c.value()) ^ (b.value() & c.value());
    match (a, b, c) {
        (Bit::Const(_), Bit::Const(_), Bit::Const(_)) => Bit::Const(value),
        (Bit::Const(false), b, c) => and(aux, b, c),
        (a, Bit::Const(false), c) => and(aux, a, c),
        (a, b, Bit::Const(false)) => and(aux, a, b),
        (a, b, Bit::Const(true)) => !and(aux, !a, !b),
        (a, Bit::Const(true), c) => !and(aux, !a, !c),
        (Bit::Const(true), b, c) => !and(aux, !b, !c),
        (_, b, c) => {
            let majority = Bit::alloc(aux, value);
            and(aux, b, c);
            majority
        }
    }
}

/// A 32-bit word as `UInt32` holds it: its bits, least significant first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Word {
    pub bits: [Bit; 32],
}

impl Word {
    /// `UInt32::constant`.
    pub fn constant(value: u32) -> Word {
        Word {
            bits: std::array::from_fn(|i| Bit::Const((value >> i) & 1 == 1)),
        }
    }

    /// `UInt32::from_bits_be`: 32 bits, most significant first.
    pub fn from_bits_be(bits: &[Bit]) -> Word {
        Word {
            bits: std::array::from_fn(|i| bits[31 - i]),
        }
    }

    /// `UInt32::into_bits_be`.
    pub fn bits_be(&self) -> impl Iterator<Item = Bit> + '_ {
        self.bits.iter().rev().copied()
    }

    /// The word's value.
    pub fn value(&self) -> u32 {
        self.bits
            .iter()
            .enumerate()
            .fold(0, |v, (i, b)| v | (u32::from(b.value()) << i))
    }

    /// `UInt32::rotr`: no allocation.
    pub fn rotr(&self, by: usize) -> Word {
        Word {
            bits: std::array::from_fn(|i| self.bits[(i + by) % 32]),
        }
    }

    /// `UInt32::shr`: no allocation; zeros shifted in are constants.
    pub fn shr(&self, by: usize) -> Word {
        Word {
            bits: std::array::from_fn(|i| self.bits.get(i + by).copied().unwrap_or(Bit::Const(false))),
        }
    }

    /// `UInt32::xor`, bit by bit from the least significant.
    pub fn xor(&self, aux: &mut Aux, other: &Word) -> Word {
        let mut bits = [Bit::Const(false); 32];
        for (i, bit) in bits.iter_mut().enumerate() {
            *bit = xor(aux, self.bits[i], other.bits[i]);
        }
        Word { bits }
    }

    /// `UInt32::sha256_ch`, bit by bit from the least significant.
    pub fn ch(aux: &mut Aux, a: &Word, b: &Word, c: &Word) -> Word {
        let mut bits = [Bit::Const(false); 32];
        for (i, bit) in bits.iter_mut().enumerate() {
            *bit = ch(aux, a.bits[i], b.bits[i], c.bits[i]);
        }
        Word { bits }
    }

    /// `UInt32::sha256_maj`, bit by bit from the least significant.
    pub fn maj(aux: &mut Aux, a: &Word, b: &Word, c: &Word) -> Word {
        let mut bits = [Bit::Const(false); 32];
        for (i, bit) in bits.iter_mut().enumerate() {
            *bit = maj(aux, a.bits[i], b.bits[i], c.bits[i]);
        }
        Word { bits }
    }

    /// `UInt32::addmany` (2 to 10 operands): a constant when every bit of
    /// every operand is one; otherwise every bit of the whole sum (as many
    /// as n·(2^32 − 1) has), of which the word keeps the low 32.
    pub fn add_many(aux: &mut Aux, operands: &[Word]) -> Word {
        let sum: u64 = operands.iter().map(|w| u64::from(w.value())).sum();
        if operands.iter().all(|w| w.bits.iter().all(|b| b.is_constant())) {
            return Word::constant(sum as u32);
        }
        let max = operands.len() as u64 * u64::from(u32::MAX);
        let width = 64 - max.leading_zeros() as usize;
        let mut bits = [Bit::Const(false); 32];
        for i in 0..width {
            let bit = Bit::alloc(aux, (sum >> i) & 1 == 1);
            if let Some(slot) = bits.get_mut(i) {
                *slot = bit;
            }
        }
        Word { bits }
    }
}
