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
use filecoin_hashers::{Domain, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use storage_proofs_core::merkle::{MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_porep::stacked::ColumnProof;
use typenum::Unsigned;

/// A Merkle path as the circuit walks it: per level the siblings and the
/// node's index among the level's arity.
type Path = Vec<(Vec<Fr>, usize)>;

/// A domain element (a commitment, a node, a label) as a field element;
/// an error for bytes that are not one (filecoin-hashers' own conversion
/// panics on them).
fn fr<D: Domain>(value: &D) -> Result<Fr> {
    let bytes: [u8; 32] = value
        .into_bytes()
        .try_into()
        .map_err(|_| Error::invalid("a domain element not of 32 bytes"))?;
    Fr::from_canonical_bytes(&bytes)
        .ok_or_else(|| Error::invalid("a domain element not below the field modulus"))
}

fn path_of<P: MerkleProofTrait>(proof: &P) -> Result<Path> {
    proof
        .path()
        .into_iter()
        .map(|(siblings, index)| Ok((siblings.iter().map(fr).collect::<Result<_>>()?, index)))
        .collect()
}

/// A column proof as JSON: its fields are the crate's own, so its rows
/// and inclusion path are read through its serialized form.
fn column_json<P: MerkleProofTrait>(column: &ColumnProof<P>) -> Result<serde_json::Value> {
    serde_json::to_value(column).map_err(|e| Error::invalid(format!("a column proof: {e}")))
}

/// The inclusion path of a column proof in JSON (taken out of it).
fn inclusion_path<P: MerkleProofTrait>(column: &mut serde_json::Value) -> Result<Path> {
    let proof: P = serde_json::from_value(column["inclusion_proof"].take())
        .map_err(|e| Error::invalid(format!("a column proof's inclusion path: {e}")))?;
    path_of(&proof)
}

/// A column proof's inclusion path.
fn column_path<P: MerkleProofTrait>(column: &ColumnProof<P>) -> Result<Path> {
    inclusion_path::<P>(&mut column_json(column)?)
}

/// A column proof's rows (labels of layers 1, 2, ...) and inclusion path.
fn column_of<P: MerkleProofTrait>(column: &ColumnProof<P>) -> Result<(Vec<Fr>, Path)> {
    let mut value = column_json(column)?;
    let rows: Vec<<P::Hasher as Hasher>::Domain> = serde_json::from_value(value["column"]["rows"].take())
        .map_err(|e| Error::invalid(format!("a column proof's rows: {e}")))?;
    Ok((
        rows.iter().map(fr).collect::<Result<_>>()?,
        inclusion_path::<P>(&mut value)?,
    ))
}

/// A Poseidon tree path (trees R and C) from `node`: per level its index
/// bits (least significant first), its siblings, the insertion, the hash.
/// The path's bits packed (the public input `PoRCircuit` makes of them).
fn poseidon_path(aux: &mut Aux, mut node: Fr, path: &Path) -> Result<Fr> {
    let mut packed = Packed::default();
    for (siblings, index) in path {
        node = match siblings.len() {
            1 => {
                let right = index & 1 == 1;
                packed.bit(aux, right)?;
                let sibling = alloc(aux, siblings[0]);
                let pair = insert_2(aux, node, right, sibling);
                poseidon_2(aux, &pair)
            }
            7 => {
                let bits = [index & 1 == 1, index & 2 == 2, index & 4 == 4];
                for &b in &bits {
                    packed.bit(aux, b)?;
                }
                let siblings: [Fr; 7] = std::array::from_fn(|i| alloc(aux, siblings[i]));
                let eight = insert_8(aux, node, bits, &siblings);
                poseidon_8(aux, &eight)
            }
            n => return Err(Error::invalid(format!("a tree level of {n} siblings (1 or 7)"))),
        };
    }
    Ok(Fr::from_u64(packed.value))
}

/// A path's index bits as they are allocated, and packed (a path of the
/// trees proved here has at most 31).
#[derive(Default)]
struct Packed {
    value: u64,
    bits: u32,
}

impl Packed {
    /// The next index bit (allocated elsewhere).
    fn note(&mut self, bit: bool) -> Result<()> {
        if self.bits == 64 {
            return Err(Error::invalid("a Merkle path of more than 64 index bits"));
        }
        self.value |= u64::from(bit) << self.bits;
        self.bits += 1;
        Ok(())
    }

    /// The next index bit, allocated.
    fn bit(&mut self, aux: &mut Aux, bit: bool) -> Result<()> {
        self.note(bit)?;
        aux.bit(bit);
        Ok(())
    }
}

/// Whether the native witness computes `Tree`'s partitions of `layers`
/// layers: trees of arity 8 with sub- and top-tree levels of arity 2 or 8,
/// columns of 2 or 11 labels (every production shape).
fn supported<Tree: MerkleTreeTrait>(layers: usize) -> Result<()> {
    let arity = |a: usize, optional: bool| a == 8 || a == 2 && optional || a == 0 && optional;
    if !(arity(Tree::Arity::to_usize(), false)
        && arity(Tree::SubTreeArity::to_usize(), true)
        && arity(Tree::TopTreeArity::to_usize(), true)
        && matches!(layers, 2 | 11))
    {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "native witness: trees of arities {}, {}, {} and {layers} layers",
                Tree::Arity::to_usize(),
                Tree::SubTreeArity::to_usize(),
                Tree::TopTreeArity::to_usize()
            ),
        ));
    }
    Ok(())
}

/// `partition`'s witness values, inputs (ONE first) and its `aux_count`
/// aux values, as a values-only synthesis of `StackedCircuit` gives them:
/// the common part, then the challenges on `threads` threads, each
/// written in its place (every challenge has the same count). Memory: the
/// aux values and a challenge's inputs; a challenge that would pass its
/// place stops being kept there and is an error. `cancelled` is looked at
/// before each challenge.
pub fn partition_values<Tree: 'static + MerkleTreeTrait>(
    partition: &Partition<Tree>,
    aux_count: usize,
    threads: usize,
    cancelled: Option<&AtomicBool>,
) -> Result<Values> {
    let layers = partition.public_params.num_layers;
    supported::<Tree>(layers)?;
    let proofs = &partition.vanilla;
    let Some(first) = proofs.first() else {
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
    let replica_id = alloc(&mut common, fr(&partition.public_inputs.replica_id)?);
    let replica_id_bits = reverse_bit_numbering(to_bits_le(&mut common, &replica_id));
    let comm_d = alloc(&mut common, fr(&tau.comm_d)?);
    let comm_r = alloc(&mut common, fr(&tau.comm_r)?);
    let comm_r_last = alloc(&mut common, fr(&first.comm_r_last())?);
    let comm_c = alloc(&mut common, fr(&first.comm_c())?);
    poseidon_2(&mut common, &[comm_c, comm_r_last]);
    let start = common.len();
    let per_challenge = aux_count
        .checked_sub(start)
        .map(|rest| (rest / proofs.len(), rest % proofs.len()));
    let each = match per_challenge {
        Some((each, 0)) if each > 0 => each,
        _ => {
            return Err(Error::invalid(format!(
                "{aux_count} aux values for {} challenges after {start}",
                proofs.len()
            )))
        }
    };
    let mut aux = common.into_values();
    aux.try_reserve_exact(aux_count - start).map_err(|e| {
        Error::new(
            ErrorKind::OutOfMemory,
            format!("the native witness's {aux_count} aux values: {e}"),
        )
    })?;
    aux.resize(aux_count, Fr::ZERO);
    check_cancelled()?;
    // Each thread takes the next challenge and writes its values in place;
    // after an error the others take no more.
    let work = Mutex::new(aux[start..].chunks_mut(each).zip(proofs).enumerate());
    let failed = AtomicBool::new(false);
    let one = |k: usize, place: &mut [Fr], proof| -> Result<Vec<Fr>> {
        check_cancelled()?;
        let mut values = Aux::into_slice(place);
        let inputs = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            challenge(&mut values, proof, layers, &replica_id_bits)
        }))
        .unwrap_or_else(|payload| {
            Err(Error::new(
                ErrorKind::Panic,
                format!(
                    "the native witness of challenge {k} panicked ({})",
                    crate::error::panic_message(&*payload)
                ),
            ))
        })?;
        if values.len() != each {
            return Err(Error::invalid(format!(
                "challenge {k}: {} aux values where the partition has room for {each}",
                values.len()
            )));
        }
        Ok(inputs)
    };
    let mut outcomes: Vec<(usize, Result<Vec<Fr>>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.clamp(1, proofs.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    while !failed.load(Ordering::Relaxed) {
                        let taken = work.lock().ok().and_then(|mut w| w.next());
                        let Some((k, (place, proof))) = taken else {
                            break;
                        };
                        let outcome = one(k, place, proof);
                        failed.fetch_or(outcome.is_err(), Ordering::Relaxed);
                        done.push((k, outcome));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    // In challenge order: the first error, or every challenge's inputs.
    outcomes.sort_by_key(|&(k, _)| k);
    let computed = outcomes.len();
    let mut inputs = vec![Fr::ONE, replica_id, comm_d, comm_r];
    for (_, challenge_inputs) in outcomes {
        inputs.extend(challenge_inputs?);
    }
    if computed != proofs.len() {
        return Err(Error::new(
            ErrorKind::Panic,
            "internal: a challenge of the native witness was not computed",
        ));
    }
    Ok(Values { inputs, aux })
}

/// `partition`'s `aux_count` aux values, in `StackedCircuit`'s order, on
/// one thread.
pub fn partition_aux<Tree: 'static + MerkleTreeTrait>(
    partition: &Partition<Tree>,
    aux_count: usize,
) -> Result<Vec<Fr>> {
    partition_values(partition, aux_count, 1, None).map(|values| values.aux)
}

/// One challenge's allocations (`Proof::synthesize` of the circuit).
fn challenge<Tree: 'static + MerkleTreeTrait>(
    aux: &mut Aux,
    proof: &VanillaSealProof<Tree>,
    layers: usize,
    replica_id_bits: &[Bit],
) -> Result<Vec<Fr>> {
    let data_leaf = alloc(aux, fr(&proof.comm_d_proofs.leaf())?);
    let mut node = data_leaf;
    // Tree D's levels, as `sha256_level` allocates them, its index bits packed.
    let mut comm_d_index = Packed::default();
    for (siblings, index) in path_of(&proof.comm_d_proofs)? {
        let [sibling] = siblings[..] else {
            return Err(Error::invalid("tree D is not binary"));
        };
        let right = index & 1 == 1;
        comm_d_index.note(right)?;
        node = sha256_level(aux, node, right, sibling);
    }
    let mut inputs = vec![Fr::from_u64(comm_d_index.value)];
    let columns = &proof.replica_column_proofs;
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
        inputs.push(poseidon_path(aux, hash, &path)?);
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
    inputs.push(poseidon_path(aux, encoded, &path_of(&proof.comm_r_last_proof)?)?);
    let c_x = column_hash(aux, &labels)?;
    inputs.push(poseidon_path(aux, c_x, &column_path(&columns.c_x)?)?);
    Ok(inputs)
}

/// The column hash (storage-proofs' `hash_single_column`): Poseidon of
/// the column's 2 or 11 labels.
fn column_hash(aux: &mut Aux, rows: &[Fr]) -> Result<Fr> {
    match rows {
        [a, b] => Ok(poseidon_2(aux, &[*a, *b])),
        _ => match <&[Fr; 11]>::try_from(rows) {
            Ok(rows) => Ok(poseidon_11(aux, rows)),
            Err(_) => Err(Error::invalid(format!(
                "a column of {} labels (2 or 11)",
                rows.len()
            ))),
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
                let native = partition_values(partition, recorded.aux.len(), threads, None).unwrap();
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
        let native = partition_values(&partition, 130_169_893, threads, None).unwrap();
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
    fn the_2kib_fixtures_equal_the_circuit() {
        assert_equals_circuit::<SectorShape2KiB>(parse_c1(C1_API).unwrap(), "the 2 KiB fixture");
        let synthetic_porep = include_bytes!("../../../tests/fixtures/porep-2kib-synthetic/c1-api.json");
        assert_equals_circuit::<SectorShape2KiB>(
            parse_c1(synthetic_porep).unwrap(),
            "the 2 KiB synthetic-PoRep fixture",
        );
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
