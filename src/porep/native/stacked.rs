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
use crate::porep::{Partition, Values, VanillaSealProof};
use blst::blst_fr;
use filecoin_hashers::Hasher;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
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

/// A column proof's rows (labels of layers 1, 2, ...) and inclusion path
/// (fields of the crate's own: read through the proof's serialized form).
fn column_of<P: MerkleProofTrait>(column: &ColumnProof<P>) -> Result<(Vec<Fr>, Path)> {
    let broken = |e: serde_json::Error| Error::invalid(format!("a column proof: {e}"));
    let mut value = serde_json::to_value(column).map_err(broken)?;
    let rows: Vec<<P::Hasher as Hasher>::Domain> =
        serde_json::from_value(value["column"]["rows"].take()).map_err(broken)?;
    let proof: P = serde_json::from_value(value["inclusion_proof"].take()).map_err(broken)?;
    Ok((rows.into_iter().map(fr).collect(), path_of(&proof)))
}

/// A Poseidon tree path (trees R and C) from `node`: per level its index
/// bits (least significant first), its siblings, the insertion, the hash.
/// The root, and the path's bits packed (the public input `PoRCircuit`
/// makes of them).
fn poseidon_path(aux: &mut Aux, mut node: Fr, path: &Path) -> Result<(Fr, u64)> {
    let mut packed = Packed::default();
    for (siblings, index) in path {
        node = match siblings.len() {
            1 => {
                let right = index & 1 == 1;
                packed.bit(aux, right);
                let sibling = alloc(aux, siblings[0]);
                let pair = insert_2(aux, node, right, sibling);
                poseidon_2(aux, &pair)
            }
            7 => {
                let bits = [index & 1 == 1, index & 2 == 2, index & 4 == 4];
                bits.iter().for_each(|&b| packed.bit(aux, b));
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
    Ok((node, packed.value))
}

/// A path's index bits as they are allocated, and packed.
#[derive(Default)]
struct Packed {
    value: u64,
    bits: u32,
}

impl Packed {
    fn bit(&mut self, aux: &mut Aux, bit: bool) {
        aux.bit(bit);
        if self.bits < 64 {
            self.value |= u64::from(bit) << self.bits;
        }
        self.bits += 1;
    }
}

/// `partition`'s witness values, inputs (ONE first) and aux, as a
/// values-only synthesis of `StackedCircuit` gives them: the common part,
/// then the challenges on `threads` threads, each written in its place (a
/// challenge's values have the first one's count). `cancelled` is looked at
/// before each challenge.
pub fn partition_values<Tree: 'static + MerkleTreeTrait>(
    partition: &Partition<Tree>,
    threads: usize,
    cancelled: Option<&AtomicBool>,
) -> Result<Values> {
    let Some((first, rest)) = partition.vanilla.split_first() else {
        return Err(Error::invalid("a partition without vanilla proofs"));
    };
    let tau = partition
        .public_inputs
        .tau
        .as_ref()
        .ok_or_else(|| Error::invalid("a partition without comm_d and comm_r"))?;
    let check_cancelled = || match cancelled {
        Some(flag) => crate::backend::check_cancelled(flag),
        None => Ok(()),
    };
    let mut common = Aux::default();
    let replica_id = alloc(&mut common, fr(partition.public_inputs.replica_id));
    let replica_id_bits = reverse_bit_numbering(to_bits_le(&mut common, &replica_id));
    let comm_d = alloc(&mut common, fr(tau.comm_d));
    let comm_r = alloc(&mut common, fr(tau.comm_r));
    let comm_r_last = alloc(&mut common, fr(first.comm_r_last()));
    let comm_c = alloc(&mut common, fr(first.comm_c()));
    poseidon_2(&mut common, &[comm_c, comm_r_last]);
    let mut inputs = vec![Fr::ONE, replica_id, comm_d, comm_r];
    check_cancelled()?;
    let mut aux = common.into_values();
    let start = aux.len();
    let mut one = Aux::default();
    inputs.extend(challenge(&mut one, first, &replica_id_bits)?);
    let each = one.len();
    aux.extend_from_slice(one.values());
    drop(one);
    aux.resize(start + each * partition.vanilla.len(), Fr::ZERO);
    // Each thread takes the next challenge and writes its values in place.
    let places: Vec<Mutex<Option<&mut [Fr]>>> = aux[start + each..]
        .chunks_mut(each)
        .map(|place| Mutex::new(Some(place)))
        .collect();
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<Vec<Fr>>>>> = rest.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, rest.len().max(1)) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let (Some(place), Some(proof)) = (places.get(k), rest.get(k)) else {
                    break;
                };
                let Some(place) = place.lock().ok().and_then(|mut p| p.take()) else {
                    break;
                };
                let outcome = check_cancelled().and_then(|()| {
                    let mut values = Aux::into_slice(place);
                    let inputs = challenge(&mut values, proof, &replica_id_bits)?;
                    if values.len() != each {
                        return Err(Error::invalid(format!(
                            "native witness: a challenge of {} aux values beside one of {each}",
                            values.len()
                        )));
                    }
                    Ok(inputs)
                });
                let failed = outcome.is_err();
                if let Ok(mut slot) = results[k].lock() {
                    *slot = Some(outcome);
                }
                if failed {
                    // The others stop at their next challenge.
                    next.store(rest.len(), Ordering::Relaxed);
                }
            });
        }
    });
    let mut rest_inputs = Vec::with_capacity(rest.len());
    for slot in results {
        let outcome = slot.into_inner().ok().flatten();
        match outcome {
            Some(inputs) => rest_inputs.push(inputs?),
            None => {
                return Err(Error::new(
                    ErrorKind::Panic,
                    "internal: a challenge of the native witness was not computed",
                ))
            }
        }
    }
    inputs.extend(rest_inputs.into_iter().flatten());
    Ok(Values { inputs, aux })
}

/// `partition`'s aux values, in `StackedCircuit`'s order, on one thread.
pub fn partition_aux<Tree: 'static + MerkleTreeTrait>(partition: &Partition<Tree>) -> Result<Vec<Fr>> {
    partition_values(partition, 1, None).map(|values| values.aux)
}

/// One challenge's allocations (`Proof::synthesize` of the circuit).
fn challenge<Tree: 'static + MerkleTreeTrait>(
    aux: &mut Aux,
    proof: &VanillaSealProof<Tree>,
    replica_id_bits: &[Bit],
) -> Result<Vec<Fr>> {
    let data_leaf = alloc(aux, fr(proof.comm_d_proofs.leaf()));
    let mut node = data_leaf;
    let mut comm_d_index = 0u64;
    for (level, (siblings, index)) in path_of(&proof.comm_d_proofs).into_iter().enumerate() {
        let [sibling] = siblings[..] else {
            return Err(Error::invalid("tree D is not binary"));
        };
        let right = index & 1 == 1;
        comm_d_index |= u64::from(right) << level.min(63);
        node = sha256_level(aux, node, right, sibling);
    }
    let mut inputs = vec![Fr::from_u64(comm_d_index)];
    let columns = &proof.replica_column_proofs;
    let layers = proof.labeling_proofs.len();
    // The parents' columns: each allocated, hashed and proved in comm_c,
    // the DRG parents' first.
    if columns.drg_parents.len() != 6 || columns.exp_parents.len() != 8 {
        return Err(Error::invalid(format!(
            "a challenge with {} DRG and {} expander parents (the circuit takes 6 and 8)",
            columns.drg_parents.len(),
            columns.exp_parents.len()
        )));
    }
    let mut parent_column = |column| -> Result<Vec<Fr>> {
        let (rows, path) = column_of(column)?;
        if rows.len() != layers {
            return Err(Error::invalid(format!(
                "a column of {} rows for {layers} layers",
                rows.len()
            )));
        }
        let rows: Vec<Fr> = rows.into_iter().map(|r| alloc(aux, r)).collect();
        let hash = column_hash(aux, &rows)?;
        let (_, index) = poseidon_path(aux, hash, &path)?;
        inputs.push(Fr::from_u64(index));
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
    inputs.push(Fr::from_u64(node_value));
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
    let (_, comm_r_last_index) = poseidon_path(aux, encoded, &path_of(&proof.comm_r_last_proof))?;
    inputs.push(Fr::from_u64(comm_r_last_index));
    let c_x = column_hash(aux, &labels)?;
    let (_, c_x_index) = poseidon_path(aux, c_x, &column_of(&columns.c_x)?.1)?;
    inputs.push(Fr::from_u64(c_x_index));
    Ok(inputs)
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
            for threads in [1, 3] {
                let native = partition_values(partition, threads, None).unwrap();
                assert_eq!(
                    native.inputs, recorded.inputs,
                    "{what}, partition {k}: the inputs"
                );
                let native = native.aux;
                assert_eq!(
                    native.len(),
                    recorded.aux.len(),
                    "{what}, partition {k}: aux count"
                );
                if let Some(i) = (0..native.len()).find(|&i| native[i] != recorded.aux[i]) {
                    panic!(
                        "{what}, partition {k}, {threads} threads: aux value {i} of {} differs",
                        native.len()
                    );
                }
            }
        }
    }

    /// A 32 GiB partition (18 challenges of 11 layers, trees of arity 8
    /// with a sub-tree level): the native values equal the circuit's, on
    /// the shared threads' values path (4.2 GB of aux each).
    #[test]
    #[ignore = "a 32 GiB partition: minutes and ~10 GiB of host memory (run with --ignored)"]
    fn a_synthetic_32gib_partition_equals_the_circuit() {
        use crate::porep::{is_challenge, values_shared, Capacity};
        use filecoin_proofs::constants::SectorShape32GiB;
        let prover = prover_id(1000);
        let json = synthetic_c1(RegisteredSealProof::StackedDrg32GiBV1_1, &prover, 7, 5).unwrap();
        let c1 = parse_c1_for(&json, &prover, 7).unwrap();
        drop(json);
        let partition = partitions::<SectorShape32GiB>(c1).unwrap().swap_remove(0);
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let native = partition_values(&partition, threads, None).unwrap();
        assert_eq!(native.aux.len(), 130_169_893, "the known count");
        let capacity = Capacity {
            constraints: 1 << 27,
            inputs: native.inputs.len(),
            aux: native.aux.len(),
        };
        let circuit = values_shared(
            |some| partition.circuit_of(some),
            partition.challenges(),
            None,
            capacity,
            threads,
            is_challenge,
        )
        .unwrap_or_else(|e| panic!("the circuit's values: {e:?}"));
        assert_eq!(native.inputs, circuit.inputs, "the inputs");
        if let Some(i) = (0..native.aux.len()).find(|&i| native.aux[i] != circuit.aux[i]) {
            panic!("aux value {i} of {} differs", native.aux.len());
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
