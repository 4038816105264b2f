//! The whole PoRep C2 job (feature `porep`): a C1 output as filecoin-ffi
//! passes it (filecoin-proofs-api's `SealCommitPhase1Output` as JSON, or
//! filecoin-proofs' own form) to the witnesses of its partitions,
//! synthesized by filecoin-proofs' own circuit code (`StackedCompound`, as
//! its `seal_commit_phase2` builds them) into the recorder, and proved
//! through the engine in bounded host memory (`seal`).

/// `$f::<Shape>(args)` for the proof's sector shape (the `Tree` of
/// filecoin-proofs' generic code), or `Unsupported`.
macro_rules! by_shape {
    ($proof:expr, $f:ident($($arg:expr),* $(,)?)) => {{
        use filecoin_proofs::constants as c;
        let proof: filecoin_proofs_api::RegisteredSealProof = $proof;
        $crate::porep::check_supported(proof).and_then(|()| match u64::from(proof.sector_size()) {
            c::SECTOR_SIZE_2_KIB => $f::<c::SectorShape2KiB>($($arg),*),
            c::SECTOR_SIZE_8_MIB => $f::<c::SectorShape8MiB>($($arg),*),
            c::SECTOR_SIZE_512_MIB => $f::<c::SectorShape512MiB>($($arg),*),
            c::SECTOR_SIZE_32_GIB => $f::<c::SectorShape32GiB>($($arg),*),
            c::SECTOR_SIZE_64_GIB => $f::<c::SectorShape64GiB>($($arg),*),
            _ => Err($crate::porep::unsupported(proof, "a sector size without production parameters")),
        })
    }};
}
pub(crate) use by_shape;

#[doc(hidden)]
pub mod native;
mod r1cs;
mod recorder;
mod seal;
mod shared_recorder;

pub use r1cs::{learn as learn_constraints, learned_count};
pub use recorder::{Capacity, Recorder};
pub use seal::{
    parameter_files, partition_threads, seal_commit_phase2, Progress, SealJob, SealOptions,
    DEFAULT_PARAMS_DIR,
};
pub use shared_recorder::{record_shared, threads_for, values_shared, SharedFailure, Values};

/// filecoin-ffi's prover id for a miner: the payload of its ID address (the
/// miner id as an unsigned LEB128 varint) in 32 zeroed bytes.
pub fn prover_id(miner_id: u64) -> [u8; 32] {
    let mut id = [0u8; 32];
    let mut rest = miner_id;
    for byte in id.iter_mut() {
        *byte = (rest & 0x7f) as u8;
        rest >>= 7;
        if rest == 0 {
            break;
        }
        *byte |= 0x80;
    }
    id
}

use crate::error::{Error, ErrorKind, Result};
use crate::Witness;
use filecoin_hashers::Domain;
use filecoin_hashers::Hasher;
use filecoin_proofs::constants::{DefaultPieceDomain, DefaultPieceHasher, DefaultTreeHasher};
use filecoin_proofs::types::VanillaSealProof;
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::ApiFeature;
pub use filecoin_proofs_api::RegisteredSealProof;
use r1cs::Route;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::ParameterSetMetadata;
use storage_proofs_porep::stacked::{self, generate_replica_id, StackedCircuit, StackedCompound, StackedDrg};

/// A C1 output from filecoin-proofs-api's JSON.
pub fn parse_c1(json: &[u8]) -> Result<SealCommitPhase1Output> {
    serde_json::from_slice(json).map_err(|e| {
        Error::invalid(format!(
            "the C1 output is not filecoin-proofs-api's SealCommitPhase1Output JSON: {e}"
        ))
    })
}

/// The interactive seal proofs of API 1.1 that C2 proves, every sector
/// size, with and without synthetic PoRep.
pub const INTERACTIVE_PROOFS: [RegisteredSealProof; 10] = {
    use RegisteredSealProof::*;
    [
        StackedDrg2KiBV1_1,
        StackedDrg8MiBV1_1,
        StackedDrg512MiBV1_1,
        StackedDrg32GiBV1_1,
        StackedDrg64GiBV1_1,
        StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
        StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
    ]
};

/// The proof types a C1 output in filecoin-proofs' own form may be of (it
/// does not name its own): the interactive ones and API 1.0's.
fn v1_form_proofs() -> impl Iterator<Item = RegisteredSealProof> {
    use RegisteredSealProof::*;
    let api_1_0 = [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
    ];
    INTERACTIVE_PROOFS.into_iter().chain(api_1_0)
}

/// The C1 output of sector `sector_id` of `prover_id` in either JSON form a
/// caller may hold: filecoin-proofs-api's `SealCommitPhase1Output` (what
/// filecoin-ffi passes), or filecoin-proofs' own `SealCommitPhase1Output<Tree>`.
/// The latter does not name its proof type. It is the one type whose porep id
/// gives the output's replica id for this prover, sector, ticket and comm_d.
pub fn parse_c1_for(json: &[u8], prover_id: &[u8; 32], sector_id: u64) -> Result<SealCommitPhase1Output> {
    let api_form = parse_c1(json);
    if api_form.is_ok() {
        return api_form;
    }
    let mut value: serde_json::Value = match serde_json::from_slice(json) {
        Ok(value @ serde_json::Value::Object(_)) => value,
        _ => return api_form,
    };
    // filecoin-proofs' own form has vanilla proofs and no proof type.
    if value.get("registered_proof").is_some() || value.get("vanilla_proofs").is_none() {
        return api_form;
    }
    let bytes = |name: &str| -> Result<[u8; 32]> {
        serde_json::from_value(value.get(name).cloned().unwrap_or_default()).map_err(|e| {
            Error::invalid(format!(
                "the C1 output (filecoin-proofs' JSON form) has no {name}: {e}"
            ))
        })
    };
    let (comm_d, ticket, replica_id) = (bytes("comm_d")?, bytes("ticket")?, bytes("replica_id")?);
    let comm_d = DefaultPieceDomain::try_from_bytes(&comm_d).map_err(|e| invalid("comm_d", e))?;
    let proof = v1_form_proofs()
        .find(|proof| {
            let porep_id = proof.as_v1_config().porep_id;
            let id =
                generate_replica_id::<DefaultTreeHasher, _>(prover_id, sector_id, &ticket, comm_d, &porep_id);
            AsRef::<[u8]>::as_ref(&id) == replica_id.as_slice()
        })
        .ok_or_else(|| {
            Error::invalid(format!(
                "the C1 output (filecoin-proofs' form, without its proof type) is not that of sector \
                 {sector_id} of this prover id: no seal proof type's porep id gives its replica id"
            ))
        })?;
    // filecoin-proofs-api's form: the proof type, and the vanilla proofs
    // under their sector size's variant.
    let size = size_name(u64::from(proof.sector_size()));
    let vanilla = value["vanilla_proofs"].take();
    value["vanilla_proofs"] = serde_json::json!({ format!("StackedDrg{size}V1"): vanilla });
    value["registered_proof"] = serde_json::to_value(proof).map_err(|e| invalid("the proof type", e))?;
    serde_json::from_value(value).map_err(|e| {
        Error::invalid(format!(
            "the C1 output is not filecoin-proofs' SealCommitPhase1Output JSON of {proof:?}: {e}"
        ))
    })
}

/// A sector size as filecoin-proofs-api names its vanilla proofs' variants
/// ("2KiB", "32GiB"); bytes where no unit divides it.
pub fn size_name(sector_bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    UNITS
        .iter()
        .find(|&&(unit, _)| sector_bytes >= unit && sector_bytes % unit == 0)
        .map_or_else(
            || format!("{sector_bytes}B"),
            |&(unit, name)| format!("{}{name}", sector_bytes / unit),
        )
}

/// The witnesses of every partition of `c1`'s proof, in partition order.
/// filecoin-proofs' circuit code panics on some malformed vanilla proofs:
/// such a panic is caught and is an `InvalidArgument` naming it.
pub fn synthesize_partitions(c1: SealCommitPhase1Output) -> Result<Vec<Witness>> {
    on_c1(|| synthesize_checked(c1))
}

/// Runs filecoin-proofs' code on the caller's C1 output: a panic there is
/// the input's fault, an `InvalidArgument` naming it.
fn on_c1<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        Err(Error::invalid(format!(
            "the C1 output is malformed: filecoin-proofs' circuit code panicked on it ({})",
            crate::error::panic_message(&*payload)
        )))
    })
}

fn synthesize_checked(c1: SealCommitPhase1Output) -> Result<Vec<Witness>> {
    by_shape!(c1.registered_proof, witnesses_of(c1))
}

/// The interactive PoRep of API version 1 (every seal proof filecoin-proofs
/// proves in C2, but non-interactive PoRep's aggregate).
pub(crate) fn check_supported(proof: RegisteredSealProof) -> Result<()> {
    if proof.major_version() != 1 {
        return Err(unsupported(proof, "not a version 1 proof"));
    }
    if proof.feature_enabled(ApiFeature::NonInteractivePoRep) {
        return Err(unsupported(proof, "non-interactive PoRep"));
    }
    Ok(())
}

pub(crate) fn unsupported(proof: RegisteredSealProof, why: &str) -> Error {
    Error::new(ErrorKind::Unsupported, format!("{proof:?}: {why}"))
}

/// A failure of filecoin-proofs on the caller's C1 output.
fn invalid(what: &str, e: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{what}: {e}"))
}

fn witnesses_of<Tree: 'static + MerkleTreeTrait>(c1: SealCommitPhase1Output) -> Result<Vec<Witness>> {
    circuits_of::<Tree>(c1)?
        .into_iter()
        .map(Recorder::record)
        .collect()
}

/// A partition's units for the shared recorder: its challenges, each a
/// namespace of its own in filecoin-proofs' `StackedCircuit`, reading only
/// what comes before them (replica id, comm_d, comm_c, comm_r_last).
pub fn is_challenge(namespace: &str) -> bool {
    namespace.starts_with("challenge_")
}

/// A partition's witness. Once the process knows the constraints of its
/// circuit (`UnitConstraints`, learned from the first partition recorded with
/// the same parameters), only its values are synthesized, on `threads`
/// threads, and a, b, c are left to the prover (products over the
/// constraints, on the GPU where it proves there). Until then, or
/// when its values do not fit their shape, it is recorded on `threads`
/// threads (`record_shared`), or on one when the shared recorder finds the
/// circuit is not what it expects.
pub fn record_partition<Tree: 'static + MerkleTreeTrait>(
    partition: &Partition<Tree>,
    cancelled: Option<&AtomicBool>,
    capacity: Capacity,
    threads: usize,
) -> Result<Witness> {
    loop {
        // `None` only after a wait for another thread's learning that came
        // to nothing: then the route is to learn or to record whole.
        let witness =
            synthesize_partition(partition, cancelled, capacity, threads, Memory::Whole, &mut || {})?;
        if let Some(witness) = witness {
            return Ok(witness);
        }
    }
}

/// What a partition's synthesis may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    /// A whole recording: a, b and c beside the values.
    Whole,
    /// Its values only (a, b, c are the prover's products).
    Values,
}

/// Whether a partition of `partition`'s shape now takes the values path (its
/// constraints are learned, or being learned by another partition).
pub fn values_path<Tree: 'static + MerkleTreeTrait>(partition: &Partition<Tree>) -> bool {
    r1cs::values_path::<PartitionCircuit<Tree>>(&partition.parameters_id(), partition.challenges())
}

type PartitionCircuit<Tree> = StackedCircuit<Tree, DefaultPieceHasher>;

/// `record_partition` within `memory`: `Ok(None)` when the partition is to
/// be synthesized again, with the whole reservation and its cores taken
/// anew: it needs a whole recording and `memory` is `Values`, or it gave
/// its cores back to wait for another partition's learning, which came to
/// nothing. `cores_done` is called once the synthesis no longer needs its
/// threads (before such a wait).
///
/// While one partition learns the constraints (it was first), the others
/// synthesize their values and wait for the outcome: they record whole
/// only if the constraints are refused.
pub fn synthesize_partition<Tree: 'static + MerkleTreeTrait>(
    partition: &Partition<Tree>,
    cancelled: Option<&AtomicBool>,
    capacity: Capacity,
    threads: usize,
    memory: Memory,
    cores_done: &mut dyn FnMut(),
) -> Result<Option<Witness>> {
    let (challenges, parameters) = (partition.challenges(), partition.parameters_id());
    let shared = || -> Result<Option<Values>> {
        match values_shared(
            |some| partition.circuit_of(some),
            challenges,
            cancelled,
            capacity,
            threads,
            is_challenge,
        ) {
            Ok(values) => Ok(Some(values)),
            Err(SharedFailure::Failed(e)) => Err(e),
            Err(SharedFailure::Dependent(why)) => {
                log::warn!("recording partition {} whole: {why}", partition.k);
                Ok(None)
            }
        }
    };
    let values = || native_values(partition, &parameters, capacity, threads, cancelled, &shared);
    let may_learn = memory == Memory::Whole;
    let (rows, claim) = match r1cs::route::<PartitionCircuit<Tree>>(&parameters, challenges, may_learn) {
        Route::Learned(r1cs) => (Some(r1cs), None),
        Route::Pending => {
            // Values that do not fit their shape: recorded whole at once,
            // on the cores still held.
            let Some(values) = values()? else {
                return if memory == Memory::Whole {
                    record_whole(partition, cancelled, capacity, threads).map(Some)
                } else {
                    Ok(None)
                };
            };
            cores_done();
            let learned = r1cs::wait_learned::<PartitionCircuit<Tree>>(&parameters, challenges, cancelled);
            if let Some(r1cs) = learned {
                return r1cs.values_witness(values.inputs, values.aux).map(Some);
            }
            if cancelled.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return Err(Error::new(ErrorKind::Cancelled, "cancelled during synthesis"));
            }
            // Its cores are given back: the caller takes them again (and
            // the whole reservation) and calls again.
            log::info!(
                "partition {}: its constraints were not learned; synthesized again",
                partition.k
            );
            return Ok(None);
        }
        // Rows recorded beside the parameters by an earlier process are
        // loaded instead of learned.
        Route::Learn(claim) => match &partition.rows_file {
            Some(file) => match claim.load(file, capacity)? {
                Ok(rows) => (Some(rows), None),
                Err(claim) => (None, Some(claim)),
            },
            None => (None, Some(claim)),
        },
        Route::Whole => (None, None),
    };
    if let Some(r1cs) = rows {
        if let Some(values) = values()? {
            cores_done();
            return r1cs.values_witness(values.inputs, values.aux).map(Some);
        }
    }
    if memory == Memory::Values {
        return Ok(None);
    }
    let witness = record_whole(partition, cancelled, capacity, threads)?;
    if let Some(claim) = claim {
        let learned = claim.learn(partition.circuit_of(&[0])?, challenges, &witness);
        if let (Some(rows), Some(file)) = (learned, &partition.rows_file) {
            file.store(&rows);
        }
    }
    Ok(Some(witness))
}

/// Where the values path stands with the native witness of a parameter
/// set (`native::stacked`): a first partition checks its native values
/// against its circuit's, then they are trusted, or left aside for good.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Native {
    Checking,
    Trusted,
    Refused,
}

/// Whether the values path may compute values natively: on, unless a
/// benchmark times the circuit's values path beside it (`bench c2
/// --values-paths`).
static NATIVE_WITNESS: AtomicBool = AtomicBool::new(true);

#[doc(hidden)]
pub fn set_native_witness(on: bool) {
    NATIVE_WITNESS.store(on, Ordering::Relaxed);
}

static NATIVE: once_cell::sync::Lazy<std::sync::Mutex<std::collections::HashMap<String, Native>>> =
    once_cell::sync::Lazy::new(Default::default);

fn native_state() -> std::sync::MutexGuard<'static, std::collections::HashMap<String, Native>> {
    NATIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether the values path computes the values of parameter set
/// `parameters` natively (true), from its circuit (false), or has not
/// decided yet (none).
#[doc(hidden)]
pub fn native_trusted(parameters: &str) -> Option<bool> {
    match native_state().get(parameters) {
        Some(Native::Trusted) => Some(true),
        Some(Native::Refused) => Some(false),
        _ => None,
    }
}

/// A partition's values on the values path: computed natively (several
/// times faster than its circuit's code) once a first partition of its
/// parameter set gave the same inputs and aux values natively as `shared`
/// (the circuit's, on the shared threads); `shared`'s while another
/// partition checks, and for good where they differed or the shape is not
/// supported. An input the native witness refuses goes to `shared` too
/// (which names what is wrong), without deciding anything. While it
/// checks, the partition holds both sets of values (8.3 GB at 2^27: its
/// share holds its values and its h, which comes only after synthesis).
fn native_values<Tree: 'static + MerkleTreeTrait>(
    partition: &Partition<Tree>,
    parameters: &str,
    capacity: Capacity,
    threads: usize,
    cancelled: Option<&AtomicBool>,
    shared: &dyn Fn() -> Result<Option<Values>>,
) -> Result<Option<Values>> {
    if !NATIVE_WITNESS.load(Ordering::Relaxed) {
        return shared();
    }
    let state = {
        let mut states = native_state();
        let state = states.get(parameters).copied();
        if state.is_none() {
            states.insert(parameters.to_string(), Native::Checking);
        }
        state
    };
    let decide = |decision: Option<Native>| {
        let mut states = native_state();
        match decision {
            Some(d) => states.insert(parameters.to_string(), d),
            None => states.remove(parameters),
        };
    };
    if matches!(state, Some(Native::Checking | Native::Refused)) {
        return shared();
    }
    let checking = state.is_none();
    match native::stacked::partition_values(partition, capacity.aux, threads, cancelled) {
        Ok(native) if !checking => Ok(Some(native)),
        Ok(native) => {
            let circuit = shared();
            let decision = match &circuit {
                Ok(Some(circuit)) if *circuit == native => {
                    log::info!(
                        "partition {}: the native witness equals its circuit's; native from now on",
                        partition.k
                    );
                    Some(Native::Trusted)
                }
                Ok(Some(_)) => {
                    log::warn!(
                        "partition {}: the native witness differs from its circuit's; the circuit's code from now on",
                        partition.k
                    );
                    Some(Native::Refused)
                }
                _ => None,
            };
            decide(decision);
            circuit
        }
        Err(e) => {
            if checking {
                decide((e.kind == ErrorKind::Unsupported).then_some(Native::Refused));
            }
            if e.kind == ErrorKind::Cancelled {
                return Err(e);
            }
            log::warn!(
                "partition {}: no native witness ({e}); its circuit's values",
                partition.k
            );
            shared()
        }
    }
}

/// A partition's witness by the recorder, on `threads` threads
/// (`record_shared`, its challenges dealt out); on one thread when the
/// shared recorder finds the circuit is not what it expects.
pub fn record_whole<Tree: 'static + MerkleTreeTrait>(
    partition: &Partition<Tree>,
    cancelled: Option<&AtomicBool>,
    capacity: Capacity,
    threads: usize,
) -> Result<Witness> {
    if threads > 1 {
        let challenges = partition.challenges();
        match record_shared(
            |some| partition.circuit_of(some),
            challenges,
            cancelled,
            capacity,
            threads,
            is_challenge,
        ) {
            Ok(witness) => return Ok(witness),
            Err(SharedFailure::Failed(e)) => return Err(e),
            Err(SharedFailure::Dependent(why)) => {
                log::warn!("recording partition {} on one thread: {why}", partition.k)
            }
        }
    }
    Recorder::record_sized(partition.circuit()?, cancelled, capacity)
}

/// One partition of a C1 output: its challenges' vanilla proofs and the
/// public inputs filecoin-proofs' `StackedCompound::circuit` builds its
/// circuit from.
pub struct Partition<Tree: 'static + MerkleTreeTrait> {
    k: usize,
    vanilla: Vec<VanillaSealProof<Tree>>,
    public_inputs: Arc<StackedInputs<Tree>>,
    public_params: Arc<stacked::PublicParams<Tree>>,
    /// Where its circuit's rows are kept between processes (beside the
    /// parameters file), if anywhere.
    rows_file: Option<r1cs::RowsFile>,
}

type StackedInputs<Tree> =
    stacked::PublicInputs<<<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain, DefaultPieceDomain>;

impl<Tree: 'static + MerkleTreeTrait> Partition<Tree> {
    /// How many challenges it proves.
    pub fn challenges(&self) -> usize {
        self.vanilla.len()
    }

    /// filecoin-proofs' identifier of its parameters (of its circuit's
    /// constraints).
    pub fn parameters_id(&self) -> String {
        self.public_params.identifier()
    }

    /// Its circuit, as filecoin-proofs' `seal_commit_phase2` builds it.
    pub fn circuit(&self) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> {
        self.circuit_over(&self.vanilla)
    }

    /// The circuit filecoin-proofs builds for the given challenges alone
    /// (ascending indices): the same common part, then those challenges.
    pub fn circuit_of(&self, challenges: &[usize]) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> {
        let some = challenges
            .iter()
            .map(|&i| {
                self.vanilla
                    .get(i)
                    .cloned()
                    .ok_or_else(|| Error::invalid(format!("partition {}: no challenge {i}", self.k)))
            })
            .collect::<Result<Vec<_>>>()?;
        self.circuit_over(&some)
    }

    fn circuit_over(
        &self,
        vanilla: &Vec<VanillaSealProof<Tree>>,
    ) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> {
        <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
            StackedDrg<'_, Tree, DefaultPieceHasher>,
            _,
        >>::circuit(
            &self.public_inputs,
            (), // the stacked circuit has no component private inputs
            vanilla,
            &self.public_params,
            Some(self.k),
        )
        .map_err(|e| invalid(&format!("partition {}'s circuit", self.k), e))
    }
}

/// The circuits of every partition of `c1`'s proof (its sector shape
/// `Tree`), as filecoin-proofs' `seal_commit_phase2` builds them.
pub fn circuits_of<Tree: 'static + MerkleTreeTrait>(
    c1: SealCommitPhase1Output,
) -> Result<Vec<StackedCircuit<Tree, DefaultPieceHasher>>> {
    partitions::<Tree>(c1)?.iter().map(Partition::circuit).collect()
}

/// The partitions of `c1`'s proof (its sector shape `Tree`), each checked
/// by building its circuit once.
pub fn partitions<Tree: 'static + MerkleTreeTrait>(
    c1: SealCommitPhase1Output,
) -> Result<Vec<Partition<Tree>>> {
    let config = c1.registered_proof.as_v1_config();
    // A `Tree` other than the proof's shape fails the conversion below.
    let vanilla: Vec<Vec<VanillaSealProof<Tree>>> = c1
        .vanilla_proofs
        .try_into()
        .map_err(|e| invalid("the C1 output's vanilla proofs", e))?;
    if vanilla.len() != usize::from(config.partitions) || vanilla.iter().any(Vec::is_empty) {
        return Err(Error::invalid(format!(
            "the C1 output holds {} partitions' vanilla proofs, {:?} proves {}",
            vanilla.len(),
            c1.registered_proof,
            usize::from(config.partitions)
        )));
    }
    let replica_id: blstrs::Scalar = c1.replica_id.into();
    let public_inputs = stacked::PublicInputs {
        replica_id: replica_id.into(),
        tau: Some(stacked::Tau {
            comm_d: DefaultPieceDomain::try_from_bytes(&c1.comm_d).map_err(|e| invalid("comm_d", e))?,
            comm_r: filecoin_proofs::as_safe_commitment(&c1.comm_r, "comm_r")
                .map_err(|e| invalid("comm_r", e))?,
        }),
        k: None,
        seed: Some(c1.seed),
    };
    let setup = compound_proof::SetupParams {
        vanilla_params: filecoin_proofs::parameters::setup_params(&config)
            .map_err(|e| invalid("the proof's setup parameters", e))?,
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    };
    let public_params = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::setup(&setup)
    .map_err(|e| invalid("the proof's public parameters", e))?;
    let (public_inputs, public_params) = (Arc::new(public_inputs), Arc::new(public_params.vanilla_params));
    vanilla
        .into_iter()
        .enumerate()
        .map(|(k, vanilla)| {
            let partition = Partition {
                k,
                vanilla,
                public_inputs: public_inputs.clone(),
                public_params: public_params.clone(),
                rows_file: None,
            };
            partition.circuit().map(|_| partition)
        })
        .collect()
}
