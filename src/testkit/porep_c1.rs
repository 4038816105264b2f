//! C1 outputs of the real shape for any sector size, without a sector: every
//! vanilla proof has the lengths filecoin-proofs' circuit expects for the
//! proof type (challenges per partition, layers, Merkle paths of the sector's
//! trees, DRG and expansion parents), filled with random field elements. The
//! real circuit code synthesizes them with the real constraint counts; the
//! values satisfy nothing, so the proofs made from them do not verify. For
//! benchmarks of the whole C2 job at 32 GiB, where sealing a sector would take
//! hours.

use crate::error::{Error, Result};
use crate::porep::size_name;
use crate::Witness;
use bellperson::SynthesisError;
use blstrs::{Bls12, G1Affine, G2Affine, Scalar};
use ff::Field;
use filecoin_hashers::Domain;
use filecoin_proofs::constants::{DefaultPieceDomain, DefaultTreeHasher};
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::RegisteredSealProof;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_porep::stacked::generate_replica_id;
use typenum::Unsigned;

/// The lengths of a proof type's vanilla proofs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VanillaShape {
    pub partitions: usize,
    pub challenges_per_partition: usize,
    pub layers: usize,
    /// Nodes of the sector (32 bytes each).
    pub nodes: usize,
    pub drg_parents: usize,
    pub exp_parents: usize,
    /// The arities of the replica trees (tree_c and tree_r_last): base, sub
    /// and top (0: none).
    pub arities: [usize; 3],
}

/// The parents a labeling proof hashes (the DRG and expansion parents,
/// repeated to this count).
const LABEL_PARENTS: usize = storage_proofs_porep::stacked::TOTAL_PARENTS;

impl VanillaShape {
    /// The shape of `proof`'s vanilla proofs, from filecoin-proofs' own setup.
    pub fn of(proof: RegisteredSealProof) -> Result<VanillaShape> {
        crate::porep::by_shape!(proof, shape_of(proof))
    }
}

fn shape_of<Tree: 'static + MerkleTreeTrait>(proof: RegisteredSealProof) -> Result<VanillaShape> {
    let config = proof.as_v1_config();
    let setup = filecoin_proofs::parameters::setup_params(&config)
        .map_err(|e| Error::invalid(format!("{proof:?}'s setup parameters: {e}")))?;
    Ok(VanillaShape {
        partitions: usize::from(config.partitions),
        challenges_per_partition: setup.challenges.num_challenges_per_partition(),
        layers: setup.num_layers,
        nodes: setup.nodes,
        drg_parents: setup.degree,
        exp_parents: setup.expansion_degree,
        arities: [
            Tree::Arity::to_usize(),
            Tree::SubTreeArity::to_usize(),
            Tree::TopTreeArity::to_usize(),
        ],
    })
}

/// Random values of the vanilla proofs' JSON, and the roots of the three
/// trees, one each for the whole sector (filecoin-proofs refuses vanilla
/// proofs whose roots differ).
struct Draws {
    rng: ChaCha8Rng,
    comm_d_root: Value,
    comm_r_last: Value,
    comm_c: Value,
}

impl Draws {
    /// A field element's 32 bytes (little-endian, below 2^254 so below the
    /// modulus), as serde writes a domain element.
    fn element(&mut self) -> Value {
        let mut bytes = [0u8; 32];
        self.rng.fill_bytes(&mut bytes);
        bytes[31] &= 0x3f;
        json!(bytes)
    }

    fn elements(&mut self, n: usize) -> Value {
        Value::Array((0..n).map(|_| self.element()).collect())
    }

    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }

    /// An inclusion path through `levels` levels of a tree of `arity`.
    fn path(&mut self, arity: usize, levels: usize) -> Value {
        let elements: Vec<Value> = (0..levels)
            .map(|_| json!({ "hashes": self.elements(arity - 1), "index": self.below(arity) }))
            .collect();
        json!({ "path": elements })
    }

    /// A Merkle proof of a leaf of a tree over `nodes` leaves with these
    /// arities (base, sub, top; 0 for none) and this root, in storage-proofs'
    /// serde form.
    fn merkle_proof(&mut self, nodes: usize, [base, sub, top]: [usize; 3], root: Value) -> Value {
        let base_leaves = nodes / sub.max(1) / top.max(1);
        let levels = levels_of(base_leaves, base);
        let data = match (sub, top) {
            (0, _) => json!({ "Single": {
                "root": root, "leaf": self.element(), "path": self.path(base, levels),
            }}),
            (_, 0) => json!({ "Sub": {
                "base_proof": self.path(base, levels),
                "sub_proof": self.path(sub, 1),
                "root": root, "leaf": self.element(),
            }}),
            _ => json!({ "Top": {
                "base_proof": self.path(base, levels),
                "sub_proof": self.path(sub, 1),
                "top_proof": self.path(top, 1),
                "root": root, "leaf": self.element(),
            }}),
        };
        json!({ "data": data })
    }

    /// A column of the replica (one label per layer) and its opening in tree_c.
    fn column_proof(&mut self, shape: &VanillaShape) -> Value {
        json!({
            "column": { "index": self.below(shape.nodes), "rows": self.elements(shape.layers), "_h": null },
            "inclusion_proof": self.merkle_proof(shape.nodes, shape.arities, self.comm_c.clone()),
        })
    }

    fn labeling_proof(&mut self, layer_index: usize, node: usize) -> Value {
        json!({ "parents": self.elements(LABEL_PARENTS), "layer_index": layer_index, "node": node })
    }

    /// One challenge's vanilla proof.
    fn challenge_proof(&mut self, shape: &VanillaShape) -> Value {
        let node = self.below(shape.nodes);
        let columns = |d: &mut Draws, n: usize| Value::Array((0..n).map(|_| d.column_proof(shape)).collect());
        json!({
            "comm_d_proofs": self.merkle_proof(shape.nodes, [2, 0, 0], self.comm_d_root.clone()),
            "comm_r_last_proof": self.merkle_proof(shape.nodes, shape.arities, self.comm_r_last.clone()),
            "replica_column_proofs": {
                "c_x": self.column_proof(shape),
                "drg_parents": columns(self, shape.drg_parents),
                "exp_parents": columns(self, shape.exp_parents),
            },
            "labeling_proofs": Value::Array(
                (1..=shape.layers).map(|layer| self.labeling_proof(layer, node)).collect()
            ),
            "encoding_proof": self.labeling_proof(shape.layers, node),
        })
    }
}

/// The levels of a tree of `arity` over `leaves` leaves (a power of it).
fn levels_of(leaves: usize, arity: usize) -> usize {
    let mut levels = 0;
    let mut width = 1;
    while width < leaves {
        width *= arity;
        levels += 1;
    }
    levels
}

/// filecoin-proofs-api's `SealCommitPhase1Output` JSON of sector `sector_id`
/// of `prover_id` for `proof`: vanilla proofs of the real shape with random
/// values (see the module comment), and a replica id that matches the prover
/// and sector ids, so that the C2 job's checks pass and its circuits are the
/// real ones.
pub fn synthetic_c1(
    proof: RegisteredSealProof,
    prover_id: &[u8; 32],
    sector_id: u64,
    seed: u64,
) -> Result<Vec<u8>> {
    let shape = VanillaShape::of(proof)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut element = || -> [u8; 32] {
        let mut bytes = [0u8; 32];
        rng.fill_bytes(&mut bytes);
        bytes[31] &= 0x3f;
        bytes
    };
    let (comm_d, comm_r, ticket, seed_bytes) = (element(), element(), element(), element());
    let (comm_r_last, comm_c) = (json!(element()), json!(element()));
    let mut draws = Draws {
        rng,
        comm_d_root: json!(comm_d),
        comm_r_last,
        comm_c,
    };
    let piece_domain =
        DefaultPieceDomain::try_from_bytes(&comm_d).map_err(|e| Error::invalid(format!("comm_d: {e}")))?;
    let porep_id = proof.as_v1_config().porep_id;
    let replica_id =
        generate_replica_id::<DefaultTreeHasher, _>(prover_id, sector_id, &ticket, piece_domain, &porep_id);
    let replica_id: [u8; 32] = AsRef::<[u8]>::as_ref(&replica_id)
        .try_into()
        .map_err(|_| Error::invalid("a replica id is not 32 bytes"))?;
    let partitions: Vec<Value> = (0..shape.partitions)
        .map(|_| {
            Value::Array(
                (0..shape.challenges_per_partition)
                    .map(|_| draws.challenge_proof(&shape))
                    .collect(),
            )
        })
        .collect();
    let variant = format!("StackedDrg{}V1", size_name(u64::from(proof.sector_size())));
    let c1 = json!({
        "registered_proof": proof,
        "vanilla_proofs": { variant: partitions },
        "comm_r": comm_r,
        "comm_d": comm_d,
        "replica_id": replica_id,
        "seed": seed_bytes,
        "ticket": ticket,
    });
    serde_json::to_vec(&c1).map_err(|e| Error::invalid(format!("the synthetic C1 output: {e}")))
}

/// How long partition `k` of a C1 output takes to synthesize: the
/// recorder's witness with its time on one thread (with vectors that grow:
/// the parameters that would size them are not made yet); when
/// `with_bellperson`, the time of bellperson's own prover on the same
/// circuit (filecoin-proofs' C2 path), in another thread at the same time;
/// then, when `shared_threads` is set, the time of the shared recorder on
/// that many threads, and of the recorded constraints' path (the C2 job's
/// paths before and after its first partition), whose witnesses must equal
/// the first one byte for byte.
pub struct PartitionSynthesis {
    pub witness: Witness,
    pub recorder: Duration,
    pub bellperson: Option<Duration>,
    pub shared: Option<Duration>,
    pub constraints: Option<ConstraintsPath>,
    /// The values alone on one thread (aux and inputs, no linear
    /// combination evaluated), beside the recorder: what witness-only
    /// synthesis would start from.
    pub values_only: Duration,
    /// Its aux values computed natively (`porep::native`) on one thread,
    /// checked equal to the recorder's.
    pub native: Duration,
}

/// The recorded constraints' path (`UnitConstraints`) on a partition.
pub struct ConstraintsPath {
    /// Recording one challenge's constraints and checking them against
    /// the recorder's witness (once per process).
    pub learned: Duration,
    /// Terms of A, B and C kept, and the host memory they hold.
    pub terms: usize,
    pub host_bytes: usize,
    /// The values alone on the shared threads.
    pub values: Duration,
    /// a, b and c as products over the constraints.
    pub products: Duration,
}

/// See `PartitionSynthesis`.
pub fn synthesize_partition(
    c1: SealCommitPhase1Output,
    k: usize,
    with_bellperson: bool,
    shared_threads: Option<usize>,
) -> Result<PartitionSynthesis> {
    let proof = c1.registered_proof;
    crate::porep::by_shape!(proof, synthesize_shape(c1, k, with_bellperson, shared_threads))
}

/// Partition `k` of a C1 output.
fn partition_of<Tree: 'static + MerkleTreeTrait>(
    c1: SealCommitPhase1Output,
    k: usize,
) -> Result<crate::porep::Partition<Tree>> {
    let mut partitions = crate::porep::partitions::<Tree>(c1)?;
    if k >= partitions.len() {
        return Err(Error::invalid(format!("the proof has no partition {k}")));
    }
    Ok(partitions.swap_remove(k))
}

fn synthesize_shape<Tree: 'static + MerkleTreeTrait>(
    c1: SealCommitPhase1Output,
    k: usize,
    with_bellperson: bool,
    shared_threads: Option<usize>,
) -> Result<PartitionSynthesis> {
    let partition = partition_of::<Tree>(c1, k)?;
    let ours = partition.circuit()?;
    let theirs = if with_bellperson {
        Some(partition.circuit()?)
    } else {
        None
    };
    let values_circuit = partition.circuit()?;
    let (witness, recorder, bellperson, values) = std::thread::scope(|scope| -> Result<_> {
        let bellperson = theirs.map(|circuit| scope.spawn(move || bellperson_synthesis(circuit)));
        let values = scope.spawn(move || values_only(values_circuit));
        let begun = Instant::now();
        let witness = crate::porep::Recorder::record(ours);
        let recorder = begun.elapsed();
        let bellperson = bellperson
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::invalid("bellperson's synthesis panicked")))
            })
            .transpose()?;
        let values = values
            .join()
            .unwrap_or_else(|_| Err(Error::invalid("the values-only synthesis panicked")))?;
        Ok((witness?, recorder, bellperson, values))
    })?;
    let shared = match shared_threads {
        None => None,
        Some(threads) => {
            let capacity = crate::porep::Capacity {
                constraints: witness.a.len().next_power_of_two(),
                inputs: witness.inputs.len(),
                aux: witness.aux.len(),
            };
            let begun = Instant::now();
            let again = crate::porep::record_shared(
                |some| partition.circuit_of(some),
                partition.challenges(),
                None,
                capacity,
                threads,
                crate::porep::is_challenge,
            )
            .map_err(|e| Error::invalid(format!("the shared recorder: {e:?}")))?;
            let took = begun.elapsed();
            if again != witness {
                return Err(Error::invalid(format!(
                    "partition {k}: the shared recorder's witness on {threads} threads differs from the \
                     recorder's on one"
                )));
            }
            Some(took)
        }
    };
    let constraints = match shared_threads {
        None => None,
        Some(threads) => Some(constraints_path(&partition, &witness, threads)?),
    };
    let (values_only, aux) = values;
    if aux != witness.aux.len() {
        return Err(Error::invalid("values only: another number of aux variables"));
    }
    let begun = Instant::now();
    let native_aux = crate::porep::native::stacked::partition_aux(&partition, witness.aux.len())?;
    let native = begun.elapsed();
    if native_aux != witness.aux {
        return Err(Error::invalid(format!(
            "partition {k}: the native aux values differ from the recorder's"
        )));
    }
    drop(native_aux);
    Ok(PartitionSynthesis {
        witness,
        recorder,
        bellperson,
        shared,
        constraints,
        values_only,
        native,
    })
}

/// Partition `k`'s witness by the shared recorder on `threads` threads
/// alone (no other path timed or compared, nothing learned): what `bench
/// c2 --job-only` sizes its parameters from.
pub fn record_partition_shared(c1: SealCommitPhase1Output, k: usize, threads: usize) -> Result<Witness> {
    let proof = c1.registered_proof;
    crate::porep::by_shape!(proof, record_shared_shape(c1, k, threads))
}

fn record_shared_shape<Tree: 'static + MerkleTreeTrait>(
    c1: SealCommitPhase1Output,
    k: usize,
    threads: usize,
) -> Result<Witness> {
    let partition = partition_of::<Tree>(c1, k)?;
    // No limit: the shared recorder allocates what its counting pass finds.
    let unbounded = usize::MAX / 4;
    let capacity = crate::porep::Capacity {
        constraints: unbounded,
        inputs: unbounded,
        aux: unbounded,
    };
    crate::porep::record_shared(
        |some| partition.circuit_of(some),
        partition.challenges(),
        None,
        capacity,
        threads,
        crate::porep::is_challenge,
    )
    .map_err(|e| Error::invalid(format!("the shared recorder: {e:?}")))
}

/// `ConstraintsPath` on `partition`, whose recorded witness is `witness`.
fn constraints_path<Tree: 'static + MerkleTreeTrait>(
    partition: &crate::porep::Partition<Tree>,
    witness: &Witness,
    threads: usize,
) -> Result<ConstraintsPath> {
    let k = partition.challenges();
    let begun = Instant::now();
    let r1cs = crate::porep::learn_constraints(partition.circuit_of(&[0])?, k, witness)
        .map_err(|why| Error::invalid(format!("recording the constraints: {why}")))?;
    let learned = begun.elapsed();
    let capacity = crate::porep::Capacity {
        constraints: witness.a.len(),
        inputs: witness.inputs.len(),
        aux: witness.aux.len(),
    };
    let begun = Instant::now();
    let values = crate::porep::values_shared(
        |some| partition.circuit_of(some),
        k,
        None,
        capacity,
        threads,
        crate::porep::is_challenge,
    )
    .map_err(|e| Error::invalid(format!("the values on {threads} threads: {e:?}")))?;
    let values_took = begun.elapsed();
    let begun = Instant::now();
    let again = r1cs.witness(values.inputs, values.aux)?;
    let products = begun.elapsed();
    if again != *witness {
        return Err(Error::invalid(
            "the recorded constraints' witness differs from the recorder's",
        ));
    }
    Ok(ConstraintsPath {
        learned,
        terms: r1cs.terms(),
        host_bytes: r1cs.host_bytes(),
        values: values_took,
        products,
    })
}

/// The time to synthesize `circuit`'s values alone (bellperson's
/// `WitnessCS`), and how many aux variables it has.
fn values_only<C: bellperson::Circuit<Scalar>>(circuit: C) -> Result<(Duration, usize)> {
    use bellperson::util_cs::witness_cs::WitnessCS;
    use bellperson::ConstraintSystem;
    let begun = Instant::now();
    let mut values = WitnessCS::<Scalar>::new();
    circuit
        .synthesize(&mut values)
        .map_err(|e| Error::invalid(format!("values only: {e}")))?;
    Ok((begun.elapsed(), values.aux_slice().len()))
}

/// bellperson's synthesis of `circuit`: the time its prover (`create_proof`)
/// takes until it first asks for the parameters, which this parameter
/// source answers with an error. bellperson's prover keeps its synthesis
/// (`ProvingAssignment`) private; this is the way to time it alone.
fn bellperson_synthesis<C: bellperson::Circuit<Scalar> + Send>(circuit: C) -> Result<Duration> {
    let source = FirstAsk(Mutex::new(None));
    let begun = Instant::now();
    let refused =
        bellperson::groth16::create_proof::<Bls12, _, _>(circuit, &source, Scalar::ONE, Scalar::ONE);
    let asked = source.0.lock().unwrap_or_else(|e| e.into_inner()).take();
    match (refused, asked) {
        (Err(_), Some(at)) => Ok(at - begun),
        (_, _) => Err(Error::invalid(
            "bellperson's prover ended without asking for the parameters",
        )),
    }
}

/// A bellperson parameter source that notes when it is first asked and
/// refuses.
struct FirstAsk(Mutex<Option<Instant>>);

impl FirstAsk {
    fn refuse<T>(&self) -> std::result::Result<T, SynthesisError> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(Instant::now);
        Err(SynthesisError::AssignmentMissing)
    }
}

type Points<G> = (Arc<Vec<G>>, usize);

impl bellperson::groth16::ParameterSource<Bls12> for &FirstAsk {
    type G1Builder = Points<G1Affine>;
    type G2Builder = Points<G2Affine>;

    fn get_vk(
        &self,
        _: usize,
    ) -> std::result::Result<&bellperson::groth16::VerifyingKey<Bls12>, SynthesisError> {
        self.refuse()
    }
    fn get_h(&self, _: usize) -> std::result::Result<Self::G1Builder, SynthesisError> {
        self.refuse()
    }
    fn get_l(&self, _: usize) -> std::result::Result<Self::G1Builder, SynthesisError> {
        self.refuse()
    }
    fn get_a(
        &self,
        _: usize,
        _: usize,
    ) -> std::result::Result<(Self::G1Builder, Self::G1Builder), SynthesisError> {
        self.refuse()
    }
    fn get_b_g1(
        &self,
        _: usize,
        _: usize,
    ) -> std::result::Result<(Self::G1Builder, Self::G1Builder), SynthesisError> {
        self.refuse()
    }
    fn get_b_g2(
        &self,
        _: usize,
        _: usize,
    ) -> std::result::Result<(Self::G2Builder, Self::G2Builder), SynthesisError> {
        self.refuse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_32gib_shape_is_filecoin_proofs() {
        let shape = VanillaShape::of(RegisteredSealProof::StackedDrg32GiBV1_1).expect("shape");
        assert_eq!(
            shape,
            VanillaShape {
                partitions: 10,
                challenges_per_partition: 18,
                layers: 11,
                nodes: 1 << 30,
                drg_parents: 6,
                exp_parents: 8,
                arities: [8, 8, 0],
            }
        );
        assert_eq!(levels_of((1 << 30) / 8, 8), 9);
        assert_eq!(size_name(32 << 30), "32GiB");
        assert_eq!(size_name(2 << 10), "2KiB");
        assert_eq!(size_name(512 << 20), "512MiB");
        assert_eq!(size_name(64 << 30), "64GiB");
        assert_eq!(
            (size_name(100), size_name(1536)),
            ("100B".to_string(), "1536B".to_string())
        );
    }
}
