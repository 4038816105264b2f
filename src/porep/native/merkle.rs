//! Merkle inclusion paths as storage-proofs' `PoRCircuit` proves them:
//! per level the index bits, the siblings, the current node inserted among
//! them (`insert_2`, `insert_8`, made of `pick`s), and the node hash
//! (SHA-256 of the leaves' bytes for tree D; Poseidon for trees R and C).

use super::bits::Bit;
use super::num::{alloc, pack_bits, reverse_bit_numbering, to_bits_le};
use super::sha256::sha256;
use super::Aux;
use crate::math::Fr;

/// insertion's `pick`: `a` when `condition` holds, else `b`, allocated.
pub fn pick(aux: &mut Aux, condition: bool, a: Fr, b: Fr) -> Fr {
    alloc(aux, if condition { a } else { b })
}

/// `insert_2`: `element` and its sibling in the order the index bit says.
pub fn insert_2(aux: &mut Aux, element: Fr, bit: bool, sibling: Fr) -> [Fr; 2] {
    [pick(aux, bit, sibling, element), pick(aux, bit, element, sibling)]
}

/// `insert_8`: `element` among its 7 siblings at index b0 + 2·b1 + 4·b2,
/// through the gadget's two conjunctions and 20 picks, in its order.
pub fn insert_8(aux: &mut Aux, element: Fr, bits: [bool; 3], siblings: &[Fr; 7]) -> [Fr; 8] {
    let [b0, b1, b2] = bits;
    let [b, c, d, e, f, g, h] = *siblings;
    let a = element;
    let nor = !b0 & !b1;
    aux.bit(nor);
    let and = b0 & b1;
    aux.bit(and);
    let mut pick = |condition: bool, x: Fr, y: Fr| pick(aux, condition, x, y);
    let p0_xx0 = pick(nor, a, b);
    let p0 = pick(b2, b, p0_xx0);
    let p1_x00 = pick(b0, a, b);
    let p1_xx0 = pick(b1, c, p1_x00);
    let p1 = pick(b2, c, p1_xx0);
    let p2_x10 = pick(b0, d, a);
    let p2_xx0 = pick(b1, p2_x10, c);
    let p2 = pick(b2, d, p2_xx0);
    let p3_xx0 = pick(and, a, d);
    let p3 = pick(b2, e, p3_xx0);
    let p4_xx1 = pick(nor, a, f);
    let p4 = pick(b2, p4_xx1, e);
    let p5_x01 = pick(b0, a, f);
    let p5_xx1 = pick(b1, g, p5_x01);
    let p5 = pick(b2, p5_xx1, f);
    let p6_x11 = pick(b0, h, a);
    let p6_xx1 = pick(b1, p6_x11, g);
    let p6 = pick(b2, p6_xx1, g);
    let p7_xx1 = pick(and, a, h);
    let p7 = pick(b2, p7_xx1, h);
    [p0, p1, p2, p3, p4, p5, p6, p7]
}

/// filecoin-hashers' `Sha256Function::hash_circuit`: SHA-256 of `bits`,
/// the digest's bytes read little-endian, its low 254 bits packed.
pub fn sha256_packed(aux: &mut Aux, bits: &[Bit]) -> Fr {
    let digest = sha256(aux, bits);
    pack_bits(aux, &reverse_bit_numbering(digest))
}

/// `Sha256Function::hash_multi_leaf_circuit`: each leaf's 255 bits
/// (`to_bits_le`), then SHA-256 of the leaves' little-endian bytes.
pub fn sha256_leaves(aux: &mut Aux, leaves: &[Fr]) -> Fr {
    let mut preimage = Vec::with_capacity(256 * leaves.len());
    for leaf in leaves {
        preimage.extend(reverse_bit_numbering(to_bits_le(aux, leaf)));
    }
    sha256_packed(aux, &preimage)
}

/// One level of a binary SHA-256 path (tree D) from `node`: the index bit,
/// the sibling, `insert_2`, the hash. The parent node.
pub fn sha256_level(aux: &mut Aux, node: Fr, right: bool, sibling: Fr) -> Fr {
    aux.bit(right);
    let sibling = alloc(aux, sibling);
    let pair = insert_2(aux, node, right, sibling);
    sha256_leaves(aux, &pair)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::porep::native::to_scalar as scalar;
    use crate::porep::Recorder;
    use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
    use bellperson::gadgets::num::AllocatedNum;
    use bellperson::{Circuit, ConstraintSystem, SynthesisError};
    use blstrs::Scalar;
    use filecoin_hashers::sha256::Sha256Function;
    use filecoin_hashers::HashFunction;
    use rand_core::SeedableRng;
    use storage_proofs_core::gadgets::insertion::insert;

    /// A node, its index bits and siblings, as `PoRCircuit` allocates a
    /// level: the node first, then the bits, the siblings, the insertion,
    /// and (with `hash`) the SHA-256 node hash of the two.
    struct Level<'a> {
        node: Fr,
        bits: &'a [bool],
        siblings: &'a [Fr],
        hash: bool,
    }

    impl Circuit<Scalar> for Level<'_> {
        fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            let node = AllocatedNum::alloc(cs.namespace(|| "node"), || Ok(scalar(&self.node)))?;
            let bits = self
                .bits
                .iter()
                .enumerate()
                .map(|(i, &b)| {
                    AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), Some(b)).map(Boolean::from)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let siblings = self
                .siblings
                .iter()
                .enumerate()
                .map(|(i, s)| AllocatedNum::alloc(cs.namespace(|| format!("sibling {i}")), || Ok(scalar(s))))
                .collect::<Result<Vec<_>, _>>()?;
            let inserted = insert(&mut cs.namespace(|| "insert"), &node, &bits, &siblings)?;
            if self.hash {
                Sha256Function::hash_multi_leaf_circuit::<typenum::U2, _>(
                    cs.namespace(|| "hash"),
                    &inserted,
                    0,
                )?;
            }
            Ok(())
        }
    }

    fn assert_same(ours: &Aux, circuit: Level, what: &str) {
        let witness = Recorder::record(circuit).unwrap();
        assert_eq!(ours.len(), witness.aux.len(), "{what}: aux count");
        if let Some(k) = (0..ours.len()).find(|&k| ours.values()[k] != witness.aux[k]) {
            panic!("{what}: aux value {k} of {} differs", ours.len());
        }
    }

    #[test]
    fn insertions_equal_the_gadgets_at_every_index() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        let node = Fr::random(&mut rng);
        let siblings: [Fr; 7] = std::array::from_fn(|_| Fr::random(&mut rng));
        for index in 0..8usize {
            let bits = [index & 1 == 1, index & 2 == 2, index & 4 == 4];
            let mut aux = Aux::default();
            let node = alloc(&mut aux, node);
            bits.iter().for_each(|&b| aux.bit(b));
            let siblings = siblings.map(|s| alloc(&mut aux, s));
            let inserted = insert_8(&mut aux, node, bits, &siblings);
            let mut expected = siblings.to_vec();
            expected.insert(index, node);
            assert_eq!(inserted.to_vec(), expected, "insert_8 at {index}");
            let level = Level {
                node,
                bits: &bits,
                siblings: &siblings,
                hash: false,
            };
            assert_same(&aux, level, &format!("insert_8 at {index}"));
        }
        for right in [false, true] {
            let mut aux = Aux::default();
            let node = alloc(&mut aux, node);
            aux.bit(right);
            let sibling = alloc(&mut aux, siblings[0]);
            insert_2(&mut aux, node, right, sibling);
            let level = Level {
                node,
                bits: &[right],
                siblings: &siblings[..1],
                hash: false,
            };
            assert_same(&aux, level, &format!("insert_2, right {right}"));
        }
    }

    #[test]
    fn a_sha256_level_equals_the_gadgets_and_the_vanilla_hash() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for right in [false, true] {
            let (node, sibling) = (Fr::random(&mut rng), Fr::random(&mut rng));
            let mut aux = Aux::default();
            let node = alloc(&mut aux, node);
            let parent = sha256_level(&mut aux, node, right, sibling);
            let level = Level {
                node,
                bits: &[right],
                siblings: &[sibling],
                hash: true,
            };
            assert_same(&aux, level, &format!("SHA-256 level, right {right}"));
            let (left, right_node) = if right { (sibling, node) } else { (node, sibling) };
            let domain = |v: &Fr| filecoin_hashers::sha256::Sha256Domain::from(v.to_scalar_bytes());
            let vanilla = Sha256Function::hash2(&domain(&left), &domain(&right_node));
            let vanilla: &[u8] = vanilla.as_ref();
            assert_eq!(
                &parent.to_scalar_bytes()[..],
                vanilla,
                "the parent is the vanilla hash"
            );
        }
    }
}
