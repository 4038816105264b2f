//! Field elements as bellpepper's `AllocatedNum` gadgets allocate them and
//! take them apart: `alloc`, `to_bits_le`, and multipack's `pack_bits`.

use super::bits::Bit;
use super::Aux;
use crate::math::Fr;

/// Bits of a field element (`Scalar::NUM_BITS`).
const NUM_BITS: usize = 255;

/// Bits a packed number holds (`Scalar::CAPACITY`).
const CAPACITY: usize = 254;

/// `AllocatedNum::alloc`: the value.
pub fn alloc(aux: &mut Aux, value: Fr) -> Fr {
    aux.push(value);
    value
}

/// The value's bits, least significant first (its canonical form).
fn bits_le(value: &Fr) -> [bool; NUM_BITS] {
    let bytes = value.to_scalar_bytes();
    std::array::from_fn(|i| (bytes[i / 8] >> (i % 8)) & 1 == 1)
}

/// `AllocatedNum::to_bits_le`: the value's 255 bits, each allocated, least
/// significant first.
pub fn to_bits_le(aux: &mut Aux, value: &Fr) -> Vec<Bit> {
    bits_le(value).iter().map(|&b| Bit::alloc(aux, b)).collect()
}

/// multipack's `pack_bits`: Σ bitᵢ·2^i over the first 254 bits (least
/// significant first), allocated.
pub fn pack_bits(aux: &mut Aux, bits: &[Bit]) -> Fr {
    let mut bytes = [0u8; 32];
    for (i, bit) in bits.iter().take(CAPACITY).enumerate() {
        bytes[i / 8] |= u8::from(bit.value()) << (i % 8);
    }
    // Below 2^254 < r: always canonical.
    let value = Fr::from_canonical_bytes(&bytes).unwrap_or(Fr::ZERO);
    alloc(aux, value)
}

/// storage-proofs' `reverse_bit_numbering`: padded with constant zeros to
/// whole bytes, each byte's bits in reverse order.
pub fn reverse_bit_numbering(mut bits: Vec<Bit>) -> Vec<Bit> {
    bits.resize(bits.len().next_multiple_of(8), Bit::Const(false));
    bits.chunks(8)
        .flat_map(|byte| byte.iter().rev().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::porep::native::to_scalar as scalar;
    use crate::porep::Recorder;
    use bellperson::gadgets::multipack;
    use bellperson::gadgets::num::AllocatedNum;
    use bellperson::{Circuit, ConstraintSystem, SynthesisError};
    use blstrs::Scalar;
    use rand_core::SeedableRng;

    /// Each value allocated, taken apart by `to_bits_le`, and its bits,
    /// renumbered, packed back.
    struct Gadgets<'a> {
        values: &'a [Fr],
    }

    impl Circuit<Scalar> for Gadgets<'_> {
        fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            for (i, v) in self.values.iter().enumerate() {
                let cs = &mut cs.namespace(|| format!("value {i}"));
                let num = AllocatedNum::alloc(cs.namespace(|| "num"), || Ok(scalar(v)))?;
                let bits = num.to_bits_le(cs.namespace(|| "bits"))?;
                let renumbered = storage_proofs_core::util::reverse_bit_numbering(bits);
                multipack::pack_bits(cs.namespace(|| "pack"), &renumbered[..]).map(|_| ())?;
            }
            Ok(())
        }
    }

    fn native(values: &[Fr]) -> Vec<Fr> {
        let mut aux = Aux::default();
        for v in values {
            let v = alloc(&mut aux, *v);
            let bits = to_bits_le(&mut aux, &v);
            pack_bits(&mut aux, &reverse_bit_numbering(bits));
        }
        aux.values().to_vec()
    }

    #[test]
    fn equal_the_gadgets_at_the_edges_and_at_random() {
        let mut values = vec![
            Fr::ZERO,
            Fr::ONE,
            -Fr::ONE,
            -Fr::from_u64(2),
            Fr::from_u64(u64::MAX),
            // 2^254 − 1: every bit below the top one.
            Fr::from_canonical_bytes(&std::array::from_fn(|i| if i < 31 { 0xff } else { 0x3f })).unwrap(),
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(31);
        values.extend((0..50).map(|_| Fr::random(&mut rng)));
        let witness = Recorder::record(Gadgets { values: &values }).unwrap();
        let ours = native(&values);
        assert_eq!(ours.len(), witness.aux.len(), "aux count");
        if let Some(k) = (0..ours.len()).find(|&k| ours[k] != witness.aux[k]) {
            panic!("aux value {k} of {} differs", ours.len());
        }
    }
}
