//! SHA-256 as bellpepper's `sha256` gadget computes it in a circuit: the
//! message schedule, the 64 rounds with `a` and `e` left as sums until a
//! round reads them (the gadget's `Maybe::Deferred`), and the additions
//! into the chaining value, each allocating what its gadget allocates.

use super::bits::{Bit, Word};
use super::Aux;

const ROUND_CONSTANTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The digest of `input` (a whole number of bytes, most significant bit
/// first), 256 bits most significant first, as `sha256` returns them: the
/// padding (constants) appended, then one compression per 512 bits.
pub fn sha256(aux: &mut Aux, input: &[Bit]) -> Vec<Bit> {
    debug_assert!(input.len() % 8 == 0, "SHA-256 input of whole bytes");
    let mut padded = input.to_vec();
    let length = input.len() as u64;
    padded.push(Bit::Const(true));
    while (padded.len() + 64) % 512 != 0 {
        padded.push(Bit::Const(false));
    }
    padded.extend((0..64).rev().map(|i| Bit::Const((length >> i) & 1 == 1)));
    let mut state = IV.map(Word::constant);
    for block in padded.chunks(512) {
        state = compress(aux, block, &state);
    }
    state.iter().flat_map(Word::bits_be).collect()
}

/// A word the gadget keeps as the operands of a sum until it is read.
enum Deferred {
    Sum(Vec<Word>),
    Word(Word),
}

impl Deferred {
    /// The word, its sum (with `more` added) allocated now if deferred.
    fn word(self, aux: &mut Aux, more: &[Word]) -> Word {
        match self {
            Deferred::Word(w) => w,
            Deferred::Sum(mut operands) => {
                operands.extend_from_slice(more);
                Word::add_many(aux, &operands)
            }
        }
    }
}

/// `sha256_compression_function`: the state after one 512-bit block.
fn compress(aux: &mut Aux, block: &[Bit], state: &[Word; 8]) -> [Word; 8] {
    let mut w: Vec<Word> = block.chunks(32).map(Word::from_bits_be).collect();
    for i in 16..64 {
        let x = w[i - 15];
        let s0 = x.rotr(7).xor(aux, &x.rotr(18)).xor(aux, &x.shr(3));
        let y = w[i - 2];
        let s1 = y.rotr(17).xor(aux, &y.rotr(19)).xor(aux, &y.shr(10));
        let next = Word::add_many(aux, &[w[i - 16], s0, w[i - 7], s1]);
        w.push(next);
    }
    let mut a = Deferred::Word(state[0]);
    let [_, mut b, mut c, mut d, _, mut f, mut g, mut h] = *state;
    let mut e = Deferred::Word(state[4]);
    for (i, &k) in ROUND_CONSTANTS.iter().enumerate() {
        let new_e = e.word(aux, &[]);
        let s1 = new_e.rotr(6).xor(aux, &new_e.rotr(11)).xor(aux, &new_e.rotr(25));
        let choice = Word::ch(aux, &new_e, &f, &g);
        let temp1 = [h, s1, choice, Word::constant(k), w[i]];
        let new_a = a.word(aux, &[]);
        let s0 = new_a.rotr(2).xor(aux, &new_a.rotr(13)).xor(aux, &new_a.rotr(22));
        let majority = Word::maj(aux, &new_a, &b, &c);
        h = g;
        g = f;
        f = new_e;
        e = Deferred::Sum(temp1.iter().copied().chain([d]).collect());
        d = c;
        c = b;
        b = new_a;
        a = Deferred::Sum(temp1.iter().copied().chain([s0, majority]).collect());
    }
    let h0 = a.word(aux, &[state[0]]);
    let h1 = Word::add_many(aux, &[state[1], b]);
    let h2 = Word::add_many(aux, &[state[2], c]);
    let h3 = Word::add_many(aux, &[state[3], d]);
    let h4 = e.word(aux, &[state[4]]);
    let h5 = Word::add_many(aux, &[state[5], f]);
    let h6 = Word::add_many(aux, &[state[6], g]);
    let h7 = Word::add_many(aux, &[state[7], h]);
    [h0, h1, h2, h3, h4, h5, h6, h7]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::porep::Recorder;
    use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
    use bellperson::{Circuit, ConstraintSystem, SynthesisError};
    use blstrs::Scalar;
    use std::cell::RefCell;

    /// bellpepper's `sha256` gadget over `input` (its allocated bits
    /// allocated first, in order), its digest left in `digest`.
    struct Gadget<'a> {
        input: &'a [Bit],
        digest: &'a RefCell<Vec<Bit>>,
    }

    impl Circuit<Scalar> for Gadget<'_> {
        fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            let mut bits = Vec::with_capacity(self.input.len());
            for (i, &bit) in self.input.iter().enumerate() {
                let mut alloc =
                    |v| AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), Some(v)).map(Boolean::from);
                bits.push(match bit {
                    Bit::Const(v) => Boolean::constant(v),
                    Bit::Is(v) => alloc(v)?,
                    Bit::Not(v) => alloc(v)?.not(),
                });
            }
            let digest = bellperson::gadgets::sha256::sha256(cs.namespace(|| "sha256"), &bits)?;
            *self.digest.borrow_mut() = digest
                .iter()
                .map(|b| match b {
                    Boolean::Constant(v) => Bit::Const(*v),
                    Boolean::Is(a) => Bit::Is(a.get_value().unwrap_or_default()),
                    Boolean::Not(a) => Bit::Not(a.get_value().unwrap_or_default()),
                })
                .collect();
            Ok(())
        }
    }

    /// Our aux values and digest for `input`, its allocated bits first.
    fn native(input: &[Bit]) -> (Vec<crate::math::Fr>, Vec<Bit>) {
        let mut aux = Aux::default();
        let bits: Vec<Bit> = input
            .iter()
            .map(|&bit| match bit {
                Bit::Const(v) => Bit::Const(v),
                Bit::Is(v) => Bit::alloc(&mut aux, v),
                Bit::Not(v) => !Bit::alloc(&mut aux, v),
            })
            .collect();
        let digest = sha256(&mut aux, &bits);
        (aux.values().to_vec(), digest)
    }

    fn assert_equals_gadget(input: &[Bit], what: &str) {
        let digest = RefCell::new(Vec::new());
        let witness = Recorder::record(Gadget {
            input,
            digest: &digest,
        })
        .unwrap();
        let (aux, ours) = native(input);
        assert_eq!(aux.len(), witness.aux.len(), "{what}: aux count");
        if let Some(k) = (0..aux.len()).find(|&k| aux[k] != witness.aux[k]) {
            panic!("{what}: aux value {k} of {} differs", aux.len());
        }
        assert_eq!(ours, *digest.borrow(), "{what}: digest bits");
    }

    /// Bits of a small xorshift generator: constants, allocated bits and
    /// negated ones, as `kinds` allows.
    fn random_bits(n: usize, seed: u64, kinds: u64) -> Vec<Bit> {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let v = state & 1 == 1;
                match (state >> 8) % kinds {
                    0 => Bit::Is(v),
                    1 => Bit::Not(v),
                    _ => Bit::Const(v),
                }
            })
            .collect()
    }

    fn digest_hex(bits: &[Bit]) -> String {
        bits.chunks(8)
            .map(|byte| {
                format!(
                    "{:02x}",
                    byte.iter().fold(0u8, |b, bit| b << 1 | u8::from(bit.value()))
                )
            })
            .collect()
    }

    #[test]
    fn constant_inputs_give_the_standard_digests() {
        let bytes = |s: &[u8]| -> Vec<Bit> {
            s.iter()
                .flat_map(|&b| (0..8).rev().map(move |i| Bit::Const((b >> i) & 1 == 1)))
                .collect()
        };
        let mut aux = Aux::default();
        assert_eq!(
            digest_hex(&sha256(&mut aux, &[])),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            digest_hex(&sha256(&mut aux, &bytes(b"abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(aux.is_empty(), "constants allocate nothing");
    }

    #[test]
    fn equals_the_gadget_on_allocated_negated_and_constant_bits() {
        assert_equals_gadget(&[], "empty");
        assert_equals_gadget(&random_bits(512, 1, 2), "one block of allocated and negated bits");
        assert_equals_gadget(&random_bits(1000, 2, 3), "1000 bits of all kinds");
        assert_equals_gadget(&random_bits(448, 3, 5), "448 bits, mostly constants");
        let mut not_only = random_bits(1024, 4, 2);
        not_only.iter_mut().for_each(|b| *b = Bit::Not(b.value()));
        assert_equals_gadget(&not_only, "negated bits only");
    }

    #[test]
    fn equals_the_gadget_on_a_label_input() {
        // create_label's layout: replica id (256 allocated bits), layer
        // index (32 constant bits) and node (64 allocated), zeros to 512,
        // then 37 parents of 255 allocated bits and a zero each.
        let mut input = random_bits(256, 5, 1);
        input.extend((0..32).map(|i| Bit::Const(i == 30)));
        input.extend(random_bits(64, 6, 1));
        input.resize(512, Bit::Const(false));
        for parent in 0..37 {
            input.extend(random_bits(255, 7 + parent, 1));
            input.push(Bit::Const(false));
        }
        assert_eq!(input.len(), 39 * 256);
        assert_equals_gadget(&input, "a label's input");
    }
}
