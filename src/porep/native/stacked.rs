//! A PoRep partition's aux values computed natively: the allocations of
//! filecoin-proofs' `StackedCircuit`, in its order (docs/native-witness-
//! spec.md), from the partition's vanilla proofs.

use super::bits::Bit;
use super::merkle::{insert_2, insert_8, sha256_level, sha256_packed};
use super::num::{alloc, reverse_bit_numbering, to_bits_le};
use super::poseidon::{poseidon_11, poseidon_2, poseidon_8};
use super::Aux;
use crate::error::{Error, ErrorKind, Result};
use crate::math::Fr;
use crate::porep::{Partition, VanillaSealProof};
use blst::blst_fr;
use storage_proofs_core::merkle::{MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_porep::stacked::ColumnProof;

/// A Merkle path as the circuit walks it: per level the siblings and the
/// node's index among the level's arity.
type Path = Vec<(Vec<Fr>, usize)>;

fn fr(value: impl Into<blstrs::Scalar>) -> Fr {
    Fr(blst_fr::from(value.into()))
}

fn path_of<P: MerkleProofTrait>(proof: &P) -> Path {
    proof
        .path()
        .into_iter()
        .map(|(siblings, index)| (siblings.into_iter().map(fr).collect(), index))
        .collect()
}

/// A column proof's inclusion path (the field is the crate's own: read
/// through the proof's serialized form).
fn inclusion_path<P: MerkleProofTrait>(column: &ColumnProof<P>) -> Result<Path> {
    let broken = |e: serde_json::Error| Error::invalid(format!("a column proof's inclusion path: {e}"));
    let mut value = serde_json::to_value(column).map_err(broken)?;
    let proof: P = serde_json::from_value(value["inclusion_proof"].take()).map_err(broken)?;
    Ok(path_of(&proof))
}

/// The column's rows (labels of layers 1, 2, ...).
fn rows<P: MerkleProofTrait>(column: &ColumnProof<P>, layers: usize) -> Result<Vec<Fr>> {
    (1..=layers)
        .map(|layer| {
            column
                .get_node_at_layer(layer)
                .map(|&node| fr(node))
                .map_err(|e| Error::invalid(format!("a column's layer {layer}: {e}")))
        })
        .collect()
}

/// A Poseidon tree path (trees R and C) from `node`: per level its index
/// bits (least significant first), its siblings, the insertion, the hash.
fn poseidon_path(aux: &mut Aux, mut node: Fr, path: &Path) -> Result<Fr> {
    for (siblings, index) in path {
        node = match siblings.len() {
            1 => {
                let right = index & 1 == 1;
                aux.bit(right);
                let sibling = alloc(aux, siblings[0]);
                let pair = insert_2(aux, node, right, sibling);
                poseidon_2(aux, &pair)
            }
            7 => {
                let bits = [index & 1 == 1, index & 2 == 2, index & 4 == 4];
                bits.iter().for_each(|&b| aux.bit(b));
                let siblings: [Fr; 7] = std::array::from_fn(|i| alloc(aux, siblings[i]));
                let eight = insert_8(aux, node, bits, &siblings);
                poseidon_8(aux, &eight)
            }
            n => {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!("native witness: a tree level of arity {}", n + 1),
                ))
            }
        };
    }
    Ok(node)
}

/// `partition`'s aux values, in `StackedCircuit`'s order.
pub fn partition_aux<Tree: 'static + MerkleTreeTrait>(partition: &Partition<Tree>) -> Result<Vec<Fr>> {
    let Some(first) = partition.vanilla.first() else {
        return Err(Error::invalid("a partition without vanilla proofs"));
    };
    let tau = partition
        .public_inputs
        .tau
        .as_ref()
        .ok_or_else(|| Error::invalid("a partition without comm_d and comm_r"))?;
    let mut aux = Aux::default();
    let replica_id = alloc(&mut aux, fr(partition.public_inputs.replica_id));
    let replica_id_bits = reverse_bit_numbering(to_bits_le(&mut aux, &replica_id));
    alloc(&mut aux, fr(tau.comm_d));
    alloc(&mut aux, fr(tau.comm_r));
    let comm_r_last = alloc(&mut aux, fr(first.comm_r_last()));
    let comm_c = alloc(&mut aux, fr(first.comm_c()));
    poseidon_2(&mut aux, &[comm_c, comm_r_last]);
    for proof in &partition.vanilla {
        challenge(&mut aux, proof, &replica_id_bits)?;
    }
    Ok(aux.into_values())
}

/// One challenge's allocations (`Proof::synthesize` of the circuit).
fn challenge<Tree: 'static + MerkleTreeTrait>(
    aux: &mut Aux,
    proof: &VanillaSealProof<Tree>,
    replica_id_bits: &[Bit],
) -> Result<()> {
    let data_leaf = alloc(aux, fr(proof.comm_d_proofs.leaf()));
    let mut node = data_leaf;
    for (siblings, index) in path_of(&proof.comm_d_proofs) {
        let [sibling] = siblings[..] else {
            return Err(Error::invalid("tree D is not binary"));
        };
        node = sha256_level(aux, node, index & 1 == 1, sibling);
    }
    let columns = &proof.replica_column_proofs;
    let layers = proof.labeling_proofs.len();
    // The parents' columns: each allocated, hashed and proved in comm_c,
    // the DRG parents' first.
    let mut parent_column = |column| -> Result<Vec<Fr>> {
        let rows: Vec<Fr> = rows(column, layers)?.into_iter().map(|r| alloc(aux, r)).collect();
        let hash = column_hash(aux, &rows)?;
        poseidon_path(aux, hash, &inclusion_path(column)?)?;
        Ok(rows)
    };
    let drg = columns
        .drg_parents
        .iter()
        .map(&mut parent_column)
        .collect::<Result<Vec<_>>>()?;
    let exp = columns
        .exp_parents
        .iter()
        .map(&mut parent_column)
        .collect::<Result<Vec<_>>>()?;
    // The challenged node, as the circuit takes it: the first labeling
    // proof's (a field of the crate's own: read through its serialized form).
    let node_value = proof
        .labeling_proofs
        .first()
        .and_then(|l| serde_json::to_value(l).ok())
        .and_then(|l| l["node"].as_u64())
        .ok_or_else(|| Error::invalid("a challenge without a labeling proof's node"))?;
    let node_bits: Vec<Bit> = (0..64)
        .map(|i| Bit::alloc(aux, (node_value >> i) & 1 == 1))
        .collect();
    let mut labels = Vec::with_capacity(layers);
    for layer in 1..=layers {
        let mut parents: Vec<Vec<Bit>> = drg
            .iter()
            .map(|rows| reverse_bit_numbering(to_bits_le(aux, &rows[layer - 1])))
            .collect();
        if layer > 1 {
            parents.extend(
                exp.iter()
                    .map(|rows| reverse_bit_numbering(to_bits_le(aux, &rows[layer - 2]))),
            );
        }
        let expanded: Vec<&Vec<Bit>> = if layer > 1 {
            parents.iter().chain(&parents).chain(&parents[..9]).collect()
        } else {
            (0..6).flat_map(|_| parents.iter()).chain(&parents[..1]).collect()
        };
        let mut preimage: Vec<Bit> = replica_id_bits.to_vec();
        preimage.extend((0..32).rev().map(|i| Bit::Const((layer as u32 >> i) & 1 == 1)));
        preimage.extend(node_bits.iter().rev());
        preimage.resize(512, Bit::Const(false));
        for parent in expanded {
            preimage.extend(parent);
        }
        labels.push(sha256_packed(aux, &preimage));
    }
    let key = *labels
        .last()
        .ok_or_else(|| Error::invalid("a challenge without layers"))?;
    let encoded = alloc(aux, key + data_leaf);
    poseidon_path(aux, encoded, &path_of(&proof.comm_r_last_proof))?;
    let c_x = column_hash(aux, &labels)?;
    poseidon_path(aux, c_x, &inclusion_path(&columns.c_x)?)?;
    Ok(())
}

/// The column hash (storage-proofs' `hash_single_column`): Poseidon of
/// the column's 2 or 11 labels.
fn column_hash(aux: &mut Aux, rows: &[Fr]) -> Result<Fr> {
    match rows {
        [a, b] => Ok(poseidon_2(aux, &[*a, *b])),
        _ => match <&[Fr; 11]>::try_from(rows) {
            Ok(rows) => Ok(poseidon_11(aux, rows)),
            Err(_) => Err(Error::new(
                ErrorKind::Unsupported,
                format!("native witness: columns of {} layers", rows.len()),
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::porep::{parse_c1, parse_c1_for, partitions, prover_id, Recorder, RegisteredSealProof};
    use crate::testkit::porep_c1::synthetic_c1;
    use filecoin_proofs::constants::{SectorShape2KiB, SectorShape8MiB};

    const C1_API: &[u8] = include_bytes!("../../../tests/fixtures/porep-2kib/c1-api.json");

    /// Every partition's native aux values equal those filecoin-proofs'
    /// circuit allocates (recorded), one by one.
    fn assert_equals_circuit<Tree: 'static + MerkleTreeTrait>(
        c1: filecoin_proofs_api::seal::SealCommitPhase1Output,
        what: &str,
    ) {
        for (k, partition) in partitions::<Tree>(c1).unwrap().iter().enumerate() {
            let recorded = Recorder::record(partition.circuit().unwrap()).unwrap();
            let native = partition_aux(partition).unwrap();
            assert_eq!(
                native.len(),
                recorded.aux.len(),
                "{what}, partition {k}: aux count"
            );
            if let Some(i) = (0..native.len()).find(|&i| native[i] != recorded.aux[i]) {
                panic!("{what}, partition {k}: aux value {i} of {} differs", native.len());
            }
        }
    }

    #[test]
    fn the_2kib_fixture_equals_the_circuit() {
        assert_equals_circuit::<SectorShape2KiB>(parse_c1(C1_API).unwrap(), "the 2 KiB fixture");
    }

    #[test]
    fn synthetic_c1s_equal_the_circuit() {
        let prover = prover_id(1000);
        for (proof, seed) in [
            (RegisteredSealProof::StackedDrg2KiBV1_1, 3),
            (RegisteredSealProof::StackedDrg8MiBV1_1, 4),
        ] {
            let json = synthetic_c1(proof, &prover, 7, seed).unwrap();
            let c1 = parse_c1_for(&json, &prover, 7).unwrap();
            if proof == RegisteredSealProof::StackedDrg2KiBV1_1 {
                assert_equals_circuit::<SectorShape2KiB>(c1, "a synthetic 2 KiB C1");
            } else {
                assert_equals_circuit::<SectorShape8MiB>(c1, "a synthetic 8 MiB C1");
            }
        }
    }
}
