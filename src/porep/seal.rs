//! The whole C2 job: a C1 output to the bytes filecoin-ffi's
//! `SealCommitPhase2` returns (192 per partition, in partition order).
//!
//! `SealJob::start` parses the C1 output, checks it against the prover and
//! sector ids and against the parameters file's sizes, and returns (with
//! `no_wait`, once it has the host budget for its first partition, or
//! `Busy`). A thread of its own then loads the parameters (once per file,
//! cached) and runs a pool of synthesis workers over the partitions in
//! order: each worker reserves the host budget for a partition, takes its
//! threads from the process's synthesis slots (one per core, shared by
//! every job in flight, first come first served; a partition takes fewer
//! than it asks, down to half, rather than leave cores idle), synthesizes
//! the partition (filecoin-proofs' circuit into the shared recorder, its
//! challenges on those threads) and hands the witness, with that
//! reservation, to an engine job. So the GPU proves partition k while k+1
//! synthesizes, a partition's memory is freed when its job ends, and at
//! most the partitions the budget admits are in memory at once. A partition
//! recorded whole on a GPU reserves its witness and its h (16.7 and 4.3 GB
//! at 2^27), on the CPU also the CPU prover's working set. One whose
//! constraints are learned (`synthesize_partition`) and whose GPUs hold the
//! parameters reserves its values and its h (4.2 and 4.3 GB): a, b and c
//! are products on the GPU. The proofs are checked against the verifying key
//! beside the parameters (unless the options say not to), as filecoin-
//! proofs' own `seal_commit_phase2` does.

use super::r1cs::RowsFile;
use super::{
    invalid, on_c1, parse_c1_for, partitions, synthesize_partition, threads_for, values_path, Capacity,
    Memory, Partition,
};
use crate::backend;
use crate::engine::job::{largest_circuit_bytes, values_circuit_bytes};
use crate::engine::{host_budget, Budget, DeviceMask, Job, Permit};
use crate::error::{panic_message, Error, ErrorKind, Result};
use crate::groth16::{check_call, random_r_s};
use crate::math::Fr;
use crate::params::format::{Layout, VK_HEAD_BYTES};
use crate::params::source::{FileSource, Source};
use crate::params::{load_cached, LoadOptions, Parameters, VerifyingKey};
use crate::proof::Proof;
use crate::Witness;
use filecoin_hashers::Domain;
use filecoin_proofs::constants::DefaultPieceDomain;
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::RegisteredSealProof;
use once_cell::sync::Lazy;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::{parameter_id, verifying_key_id};
use storage_proofs_porep::stacked::generate_replica_id;

/// Where filecoin-proofs looks for parameters when nothing says otherwise.
pub const DEFAULT_PARAMS_DIR: &str = "/var/tmp/filecoin-proof-parameters";

/// How a C2 job runs. `SealOptions::default()` is what filecoin-ffi's
/// `SealCommitPhase2` does: parameters where filecoin-proofs finds them,
/// every GPU, wait for memory, verify before returning.
#[derive(Clone, Debug)]
pub struct SealOptions {
    /// The directory of the `.params` and `.vk` files, named as filecoin-
    /// proofs names them. `None`: `$FIL_PROOFS_PARAMETER_CACHE`, else
    /// `/var/tmp/filecoin-proof-parameters`.
    pub params_dir: Option<PathBuf>,
    /// The GPUs the partitions may use.
    pub devices: DeviceMask,
    /// Fail with `Busy` at the start, instead of waiting, when the host
    /// budget cannot take the first partition now.
    pub no_wait: bool,
    /// Check every partition's proof against the `.vk` beside the
    /// parameters; a proof that does not verify is an error, never returned.
    pub verify: bool,
    /// Tests only: the r and s of every partition (bellperson's proof bytes
    /// are reproducible only with known r and s). Never set it in production:
    /// known r and s reveal the witness.
    #[doc(hidden)]
    pub fixed_r_s: Option<(Fr, Fr)>,
    /// Benchmarks only: parameters in memory instead of the directory's
    /// files (quickly made ones of the real shape, `c2prover bench c2`).
    /// Proofs are not verified with them.
    #[doc(hidden)]
    pub parameters: Option<Arc<Parameters>>,
    /// Benchmarks only: threads recording each partition instead of
    /// `partition_threads()`.
    #[doc(hidden)]
    pub synthesis_threads: Option<usize>,
}

impl Default for SealOptions {
    fn default() -> SealOptions {
        SealOptions {
            params_dir: None,
            devices: DeviceMask::ALL,
            no_wait: false,
            verify: true,
            fixed_r_s: None,
            parameters: None,
            synthesis_threads: None,
        }
    }
}

impl SealOptions {
    /// The parameters directory in effect.
    pub fn resolved_params_dir(&self) -> Result<PathBuf> {
        if let Some(dir) = &self.params_dir {
            return Ok(dir.clone());
        }
        let configured = crate::config::get()?.filecoin_parameter_cache.clone();
        Ok(configured.unwrap_or_else(|| PathBuf::from(DEFAULT_PARAMS_DIR)))
    }
}

/// The parameters file and verifying key of `proof` in the parameters
/// directory `dir`, as filecoin-proofs names them (what to fetch before a C2).
pub fn parameter_files(proof: RegisteredSealProof, dir: &Path) -> Result<(PathBuf, PathBuf)> {
    let cache_id = by_shape!(proof, cache_id_of(proof))?;
    Ok((
        dir.join(parameter_id(&cache_id)),
        dir.join(verifying_key_id(&cache_id)),
    ))
}

/// filecoin-proofs' identifier of the parameters of `proof`.
fn cache_id_of<Tree: 'static + MerkleTreeTrait>(proof: RegisteredSealProof) -> Result<String> {
    proof
        .as_v1_config()
        .get_cache_identifier::<Tree>()
        .map_err(|e| invalid("the proof's parameter identifier", e))
}

/// filecoin-ffi's `SealCommitPhase2`: the proof of the sector `sector_id`
/// of prover `prover_id` from its C1 output (filecoin-proofs-api's
/// `SealCommitPhase1Output` as JSON, or filecoin-proofs' own; see
/// `parse_c1_for`). Blocks until the proof is made.
pub fn seal_commit_phase2(
    c1_json: &[u8],
    prover_id: [u8; 32],
    sector_id: u64,
    opts: &SealOptions,
) -> Result<Vec<u8>> {
    SealJob::start(c1_json, prover_id, sector_id, opts)?.finish()
}

/// A C2 job of the split API: dropping it unfinished cancels it, synthesis
/// included, and its memory is released as soon as its workers notice.
pub struct SealJob {
    progress: Arc<Progress>,
    cancelled: Arc<AtomicBool>,
    result: Receiver<Result<Vec<u8>>>,
}

/// How far a C2 job has come (`SealJob::progress`), for progress bars.
#[derive(Debug, Default)]
pub struct Progress {
    pub partitions: usize,
    /// Partitions synthesized and handed to the prover.
    pub synthesized: AtomicUsize,
    /// Partitions whose proof is made (counted in partition order).
    pub proved: AtomicUsize,
    /// Each synthesized partition's index and synthesis time, in the order
    /// they end.
    pub synthesis_times: Mutex<Vec<(usize, Duration)>>,
}

impl SealJob {
    /// Parses and checks the C1 output and starts the job in the
    /// background; it waits there for memory, cancellably. With `no_wait`,
    /// it first takes the host budget for its first partition, or fails
    /// with `Busy` when that is full. Nothing of the caller's is borrowed
    /// once it returns. Errors here mean nothing was started.
    pub fn start(c1_json: &[u8], prover_id: [u8; 32], sector_id: u64, opts: &SealOptions) -> Result<SealJob> {
        opts.devices.devices()?;
        let c1 = parse_c1_for(c1_json, &prover_id, sector_id)?;
        let dir = opts.resolved_params_dir()?;
        let plan = prepare(c1, &prover_id, sector_id, &dir, opts)?;
        let first = if opts.no_wait {
            Some(host_budget().acquire(plan.partition.reserve, false)?)
        } else {
            None
        };
        let progress = Arc::new(Progress {
            partitions: plan.circuits.len(),
            ..Progress::default()
        });
        let cancelled = Arc::new(AtomicBool::new(false));
        let (send, result) = sync_channel(1);
        let (flag, opts, counts) = (cancelled.clone(), opts.clone(), progress.clone());
        std::thread::Builder::new()
            .name("c2p-seal".into())
            .spawn(move || {
                let outcome =
                    std::panic::catch_unwind(AssertUnwindSafe(|| run(plan, first, &opts, &flag, &counts)))
                        .unwrap_or_else(|panic| Err(Error::new(ErrorKind::Panic, panic_message(&*panic))));
                // The receiver is gone when the job was abandoned.
                let _ = send.send(outcome);
            })
            .map_err(|e| Error::new(ErrorKind::OutOfMemory, format!("cannot start a C2 thread: {e}")))?;
        Ok(SealJob {
            progress,
            cancelled,
            result,
        })
    }

    /// How many partitions the proof has (192 bytes each).
    pub fn partitions(&self) -> usize {
        self.progress.partitions
    }

    /// The job's counters, updated as it runs (they outlive the job).
    pub fn progress(&self) -> Arc<Progress> {
        self.progress.clone()
    }

    /// Waits for the proof bytes.
    pub fn finish(self) -> Result<Vec<u8>> {
        self.result.recv().unwrap_or_else(|_| {
            Err(Error::new(
                ErrorKind::Panic,
                "the C2 thread ended without a result",
            ))
        })
    }

    /// The flag `cancel` sets, for a caller that cancels from another thread
    /// while this one waits in `finish`.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancelled.clone()
    }

    /// Asks the job to stop; `finish` then reports `Cancelled` unless the
    /// proof was already done.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }
}

impl Drop for SealJob {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// A partition's circuit, synthesized on demand.
trait PartitionWork: Send {
    /// Whether it takes the values path now (`porep::values_path`).
    fn values_path(&self) -> bool;

    /// Its witness on `threads` threads into vectors of `capacity` within
    /// `memory`, stopping when `stop` is set (`synthesize_partition`).
    fn synthesize(
        &self,
        stop: &AtomicBool,
        capacity: Capacity,
        threads: usize,
        memory: Memory,
        cores_done: &mut dyn FnMut(),
    ) -> Result<Option<Witness>>;

    /// The file its circuit's rows are kept in between processes, if any.
    fn rows_file(&self) -> Option<&Path>;
}

impl<Tree: 'static + MerkleTreeTrait> PartitionWork for Partition<Tree> {
    fn values_path(&self) -> bool {
        values_path(self)
    }

    fn synthesize(
        &self,
        stop: &AtomicBool,
        capacity: Capacity,
        threads: usize,
        memory: Memory,
        cores_done: &mut dyn FnMut(),
    ) -> Result<Option<Witness>> {
        synthesize_partition(self, Some(stop), capacity, threads, memory, cores_done)
    }

    fn rows_file(&self) -> Option<&Path> {
        self.rows_file.as_ref().map(|f| f.path.as_path())
    }
}

type PartitionCircuit = Box<dyn PartitionWork>;

/// A checked C1 output, ready to prove.
struct Plan {
    circuits: Vec<PartitionCircuit>,
    /// Challenges per partition (the shared recorder's units).
    challenges: usize,
    /// Each partition's public inputs (without the leading ONE).
    inputs: Vec<Vec<Fr>>,
    params_path: PathBuf,
    vk_path: PathBuf,
    /// The verifying key when the proofs are to be checked.
    vk: Option<VerifyingKey>,
    /// The parameters given in the options, if any.
    params: Option<Arc<Parameters>>,
    partition: PartitionSize,
}

/// What a partition takes.
#[derive(Clone, Copy, Debug, Default)]
struct PartitionSize {
    /// Host bytes its job holds at most (reserved before its synthesis).
    reserve: usize,
    /// Those of a partition on the values path whose a, b, c are products
    /// on a GPU (`values_circuit_bytes`).
    values_reserve: usize,
    /// The sizes of its circuit, from the parameters.
    capacity: Capacity,
    /// Its challenges (the shared recorder's units).
    challenges: usize,
    /// The threads recording it (synthesis slots it asks for; it takes
    /// down to half of them when fewer are free).
    threads: usize,
}

fn prepare(
    c1: SealCommitPhase1Output,
    prover_id: &[u8; 32],
    sector_id: u64,
    dir: &Path,
    opts: &SealOptions,
) -> Result<Plan> {
    let proof = c1.registered_proof;
    let mut plan = on_c1(|| by_shape!(proof, prepare_shape(c1, prover_id, sector_id, dir)))?;
    plan.params = opts.parameters.clone();
    let sizes = match &opts.parameters {
        Some(params) => Sizes {
            inputs: params.num_inputs(),
            domain: params.domain_size(),
            aux: params.num_aux(),
        },
        None => params_file_sizes(&plan.params_path, proof)?,
    };
    check_inputs(&plan, &sizes, proof)?;
    plan.partition = PartitionSize {
        reserve: largest_circuit_bytes(sizes.domain, sizes.inputs, sizes.aux, opts.devices)?,
        values_reserve: values_circuit_bytes(sizes.domain, sizes.inputs, sizes.aux),
        challenges: plan.challenges,
        capacity: Capacity {
            constraints: sizes.domain,
            inputs: sizes.inputs,
            aux: sizes.aux,
        },
        threads: threads_for(
            plan.challenges,
            opts.synthesis_threads
                .unwrap_or_else(partition_threads)
                .clamp(1, cores()),
        ),
    };
    if opts.verify && plan.params.is_none() {
        let vk = VerifyingKey::load(&plan.vk_path).map_err(|e| {
            Error::new(
                e.kind,
                format!("{} (the verifying key, needed to verify the proof)", e.message),
            )
        })?;
        check_vk_matches(&plan, &vk)?;
        plan.vk = Some(vk);
    }
    Ok(plan)
}

fn prepare_shape<Tree: 'static + MerkleTreeTrait>(
    c1: SealCommitPhase1Output,
    prover_id: &[u8; 32],
    sector_id: u64,
    dir: &Path,
) -> Result<Plan> {
    let config = c1.registered_proof.as_v1_config();
    for (name, bytes) in [("comm_d", &c1.comm_d), ("comm_r", &c1.comm_r), ("seed", &c1.seed)] {
        if *bytes == [0; 32] {
            return Err(Error::invalid(format!("the C1 output's {name} is all zeros")));
        }
    }
    // filecoin-proofs takes the replica id from the C1 output to prove and
    // recomputes it from the prover and sector ids to verify: they must agree.
    let comm_d = DefaultPieceDomain::try_from_bytes(&c1.comm_d).map_err(|e| invalid("comm_d", e))?;
    let replica_id: blstrs::Scalar =
        generate_replica_id::<Tree::Hasher, _>(prover_id, sector_id, &c1.ticket, comm_d, &config.porep_id)
            .into();
    if replica_id != c1.replica_id.into() {
        return Err(Error::invalid(format!(
            "the C1 output is not that of sector {sector_id} of this prover id: its replica id differs \
             from the one the prover id, sector id, ticket and comm_d give"
        )));
    }
    let inputs = filecoin_proofs::get_seal_inputs::<Tree>(
        &config,
        c1.comm_r,
        c1.comm_d,
        *prover_id,
        sector_id.into(),
        c1.ticket,
        c1.seed,
    )
    .map_err(|e| invalid("the C1 output's public inputs", e))?
    .into_iter()
    .map(|partition| partition.into_iter().map(|x| Fr(x.into())).collect())
    .collect();
    let cache_id = cache_id_of::<Tree>(c1.registered_proof)?;
    let params_path = dir.join(parameter_id(&cache_id));
    let partitions = partitions::<Tree>(c1)?;
    let challenges = partitions.first().map_or(1, Partition::challenges);
    let circuits = partitions
        .into_iter()
        .map(|mut partition| -> PartitionCircuit {
            partition.rows_file = Some(RowsFile::beside(
                &params_path,
                &partition.parameters_id(),
                partition.challenges(),
            ));
            Box::new(partition)
        })
        .collect();
    Ok(Plan {
        circuits,
        challenges,
        inputs,
        params_path,
        vk_path: dir.join(verifying_key_id(&cache_id)),
        vk: None,
        params: None,
        partition: PartitionSize::default(),
    })
}

/// The sizes of a parameter set.
struct Sizes {
    /// Inputs, ONE included.
    inputs: usize,
    domain: usize,
    aux: usize,
}

/// The parameters file's sizes, read from its counts (not its points).
fn params_file_sizes(path: &Path, proof: RegisteredSealProof) -> Result<Sizes> {
    let layout = FileSource::open(path)
        .and_then(|file| Layout::parse(&file))
        .map_err(|e| {
            Error::new(
                e.kind,
                format!(
                    "{}: {} (the parameters of {proof:?}: fetch them as for filecoin-proofs, or set the \
                     parameters directory)",
                    path.display(),
                    e.message
                ),
            )
        })?;
    Ok(Sizes {
        inputs: layout.ic.count,
        domain: layout.h.count + 1,
        aux: layout.l.count,
    })
}

/// The parameters must be for the partitions' public inputs.
fn check_inputs(plan: &Plan, sizes: &Sizes, proof: RegisteredSealProof) -> Result<()> {
    let inputs = plan.inputs.first().map_or(0, Vec::len) + 1;
    if sizes.inputs != inputs {
        return Err(Error::size_mismatch(format!(
            "{}: parameters for {} public inputs, the partitions of {proof:?} have {inputs}",
            if plan.params.is_some() {
                "the parameters given".into()
            } else {
                plan.params_path.display().to_string()
            },
            sizes.inputs
        )));
    }
    Ok(())
}

/// The `.vk` must be that of the parameters file (the same six head
/// points) and of these partitions' inputs: a mismatch found only after the
/// GPU work would cost the whole proof.
fn check_vk_matches(plan: &Plan, vk: &VerifyingKey) -> Result<()> {
    let inputs = plan.inputs.first().map_or(0, Vec::len) + 1;
    let params_head = FileSource::open(&plan.params_path)?.bytes_at(0, VK_HEAD_BYTES)?;
    let vk_head = std::fs::read(&plan.vk_path).map_err(|e| Error::io(plan.vk_path.display(), e))?;
    if vk.ic.len() != inputs || vk_head.get(..VK_HEAD_BYTES) != Some(&params_head[..]) {
        return Err(Error::size_mismatch(format!(
            "{} is not the verifying key of {} (its {} public inputs, or its points, differ)",
            plan.vk_path.display(),
            plan.params_path.display(),
            vk.ic.len().saturating_sub(1)
        )));
    }
    Ok(())
}

/// The job's thread: loads the parameters, synthesizes and proves every
/// partition, checks the proofs, and returns their bytes.
fn run(
    plan: Plan,
    first: Option<Permit>,
    opts: &SealOptions,
    cancelled: &AtomicBool,
    progress: &Progress,
) -> Result<Vec<u8>> {
    let Plan {
        circuits,
        inputs,
        params_path,
        vk_path,
        vk,
        params,
        partition,
        ..
    } = plan;
    let params = match params {
        Some(params) => params,
        None => load_cached(&params_path, &LoadOptions::default())?,
    };
    upload_ahead(&params, opts.devices);
    let rows_file = circuits
        .first()
        .and_then(|c| c.rows_file())
        .map(Path::to_path_buf);
    let jobs = synthesize_and_start(&params, circuits, first, partition, opts, cancelled, progress)?;
    let mut bytes = Vec::with_capacity(jobs.len() * 192);
    let mut proofs = Vec::with_capacity(jobs.len());
    for job in jobs {
        let proof: Vec<Proof> = job.finish_unless(cancelled)?;
        proofs.extend(proof);
        progress.proved.fetch_add(1, Ordering::Relaxed);
    }
    if let Some(vk) = vk {
        for (k, (proof, inputs)) in proofs.iter().zip(&inputs).enumerate() {
            if !crate::verify(&vk, inputs, proof)? {
                // Rows from a file are not checked against a partition:
                // they may be what is wrong, so they are learned again.
                let rows = match rows_file.as_deref().filter(|f| super::r1cs::forget_loaded(f)) {
                    Some(f) => {
                        let removed = std::fs::remove_file(f).is_ok();
                        format!(
                            ", or the constraints loaded from {} are not this circuit's ({}: the next job learns \
                             them again and records them anew)",
                            f.display(),
                            if removed { "removed" } else { "forgotten" }
                        )
                    }
                    None => String::new(),
                };
                return Err(Error::invalid(format!(
                    "partition {k}'s proof does not verify against {}: the C1 output's vanilla proofs do not \
                     satisfy the circuit, or the parameters and the verifying key disagree{rows}",
                    vk_path.display()
                )));
            }
        }
    }
    for proof in &proofs {
        bytes.extend_from_slice(&proof.to_compressed());
    }
    Ok(bytes)
}

/// The synthesis workers: partitions are taken in order; each is
/// synthesized under a reservation of the host budget and started as an
/// engine job holding it. Returns the jobs in partition order, or the first
/// failure (the jobs already started are cancelled as they drop).
fn synthesize_and_start(
    params: &Arc<Parameters>,
    circuits: Vec<PartitionCircuit>,
    first: Option<Permit>,
    size: PartitionSize,
    opts: &SealOptions,
    cancelled: &AtomicBool,
    progress: &Progress,
) -> Result<Vec<Job>> {
    let n = circuits.len();
    let workers = n.min(cores()).max(1);
    // The next partition to take, its circuit, and the start's permit for
    // whichever worker takes partition 0.
    let queue = Mutex::new((circuits.into_iter().enumerate(), first));
    let slots: Vec<Mutex<Option<Result<Job>>>> = (0..n).map(|_| Mutex::new(None)).collect();
    // Set when the job is cancelled or a partition fails: the other
    // workers' syntheses stop too.
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                if cancelled.load(Ordering::Relaxed) {
                    stop.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        });
        let pool: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| loop {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let (k, circuit, permit) = {
                        let mut queue = lock(&queue);
                        let Some((k, circuit)) = queue.0.next() else {
                            return;
                        };
                        (k, circuit, queue.1.take())
                    };
                    let outcome = prove_partition(params, k, circuit, permit, size, opts, &stop).map(
                        |(job, synthesis)| {
                            lock(&progress.synthesis_times).push((k, synthesis));
                            progress.synthesized.fetch_add(1, Ordering::Relaxed);
                            job
                        },
                    );
                    if outcome.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    *lock(&slots[k]) = Some(outcome);
                })
            })
            .collect();
        for worker in pool {
            let _ = worker.join();
        }
        stop.store(true, Ordering::Relaxed);
        let _ = watcher.join();
    });
    let outcomes: Vec<Option<Result<Job>>> = slots
        .into_iter()
        .map(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    if cancelled.load(Ordering::Relaxed) {
        return Err(Error::new(ErrorKind::Cancelled, "the C2 job was cancelled"));
    }
    // The failure that stopped the others: the first in partition order
    // that is not a partition stopped because of it.
    let errors: Vec<&Error> = outcomes
        .iter()
        .flatten()
        .filter_map(|o| o.as_ref().err())
        .collect();
    if let Some(e) = errors
        .iter()
        .find(|e| e.kind != ErrorKind::Cancelled)
        .or(errors.first())
    {
        return Err((*e).clone());
    }
    outcomes
        .into_iter()
        .map(|outcome| {
            outcome.unwrap_or_else(|| Err(Error::new(ErrorKind::Panic, "a partition was never taken")))
        })
        .collect()
}

/// Threads asked to record one partition: half the cores, so that two
/// partitions record at once. Its challenges record in parallel
/// (`record_shared`); each thread also computes the partition's common
/// part and a counting pass precedes them, so a partition's last threads
/// are worth less than a second partition's first.
pub fn partition_threads() -> usize {
    cores().div_ceil(2)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |c| c.get())
}

/// The synthesis threads of every C2 job in the process together: one per
/// core, taken in the order the partitions ask (first come, first served),
/// so that jobs in flight share the cores rather than each running a full
/// pool of its own.
fn synthesis_slots() -> &'static Budget {
    static SLOTS: Lazy<Budget> = Lazy::new(|| Budget::new(cores()));
    &SLOTS
}

/// Puts the parameters on the job's GPUs now, in a thread of their own,
/// where they will stay: the upload (44 GiB at 32 GiB sectors) then runs
/// while the first partition synthesizes instead of after it. A GPU that
/// already decided, or will not hold them, costs nothing.
fn upload_ahead(params: &Arc<Parameters>, devices: DeviceMask) {
    for gpu in job_gpus(params, devices) {
        if !backend::points_likely_resident(params, gpu) {
            continue;
        }
        let params = params.clone();
        let spawned = std::thread::Builder::new()
            .name("c2p-params-upload".into())
            .spawn(move || backend::points_stream(&params, gpu));
        if let Err(e) = spawned {
            log::debug!("parameters go to GPU {gpu} with the first proof: no thread for it ({e})");
        }
    }
}

/// The GPUs a job on `params` proves on: those of `devices`, when they take
/// its domain (none otherwise, or on a bad mask, which the engine reports).
fn job_gpus(params: &Parameters, devices: DeviceMask) -> Vec<usize> {
    let log_m = params.domain_size().trailing_zeros();
    match devices.devices() {
        Ok(gpus) if backend::gpus_take(log_m) => gpus,
        _ => Vec::new(),
    }
}

/// Synthesis slots for a partition: those it asks for, or as few as half
/// of them when no more are free; given back down to the threads its
/// challenges use (18 challenges on 7 slots use 6).
fn synthesis_cores(size: PartitionSize, stop: &AtomicBool) -> Result<Permit> {
    let most = size.threads.max(1);
    let mut slot = synthesis_slots().acquire_some_unless(most.div_ceil(2), most, stop)?;
    let threads = threads_for(size.challenges, slot.units());
    slot.shrink_to(threads);
    Ok(slot)
}

/// Whether a partition's a, b, c will be products on its GPUs: they take
/// its size and every one holds the parameters (or would).
fn products_on_gpus(params: &Parameters, devices: DeviceMask) -> bool {
    let gpus = job_gpus(params, devices);
    !gpus.is_empty()
        && gpus
            .iter()
            .all(|&gpu| backend::points_likely_resident(params, gpu))
}

/// Whether a witness's a, b, c are to be made on the host as soon as it is
/// synthesized: it leaves them to its constraints, its GPUs will not make
/// them (their points stream, or there are none), and its reservation
/// holds them (`Memory::Whole`). Made later, in the GPU stage, they kept
/// the GPU waiting: 3.45 s of a 2^27 partition's 5.5 s there under a 16 GiB
/// device budget.
fn needs_products_ahead(witness: &Witness, params: &Parameters, devices: DeviceMask, memory: Memory) -> bool {
    witness.products.is_some() && memory == Memory::Whole && !products_on_gpus(params, devices)
}

/// Partition `k`'s witness with a, b, c made on `threads` host threads (its
/// synthesis cores, taken again).
fn products_ahead(witness: Witness, threads: usize, k: usize) -> Result<Witness> {
    let started = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| {
            Error::new(
                ErrorKind::OutOfMemory,
                format!("partition {k}: no threads for a, b, c: {e}"),
            )
        })?;
    let witness = pool.install(|| witness.with_host_products())?;
    log::debug!(
        "partition {k}: a, b, c made on the host in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    Ok(witness)
}

/// A mutex's value; a panic elsewhere leaves nothing here half-written.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Synthesizes partition `k` under a reservation of the host budget (the
/// start's, for the first one taken) and starts its engine job; returns
/// it and the synthesis time.
fn prove_partition(
    params: &Arc<Parameters>,
    k: usize,
    circuit: PartitionCircuit,
    permit: Option<Permit>,
    size: PartitionSize,
    opts: &SealOptions,
    stop: &AtomicBool,
) -> Result<(Job, Duration)> {
    let stopped = || Error::new(ErrorKind::Cancelled, format!("partition {k}: stopped"));
    if stop.load(Ordering::Relaxed) {
        return Err(stopped());
    }
    // Waits for memory and a core end when the job stops.
    let stopped_waiting = |e: Error| {
        if e.kind == ErrorKind::Cancelled {
            stopped()
        } else {
            e
        }
    };
    let reserve = |bytes: usize| host_budget().acquire_unless(bytes, stop).map_err(stopped_waiting);
    // The values path's smaller reservation where its products will be made
    // on GPUs holding the parameters; the whole one otherwise (and the
    // start's, taken for the job's first partition).
    let values_fit = || circuit.values_path() && products_on_gpus(params, opts.devices);
    let (mut permit, mut memory) = match permit {
        Some(permit) => (permit, Memory::Whole),
        None if values_fit() => (reserve(size.values_reserve)?, Memory::Values),
        None => (reserve(size.reserve)?, Memory::Whole),
    };
    // A whole reservation asked for before the shape was being learned (the
    // partitions of a job ask at once), or the start's: given back down to
    // the values' once its turn comes, if they now fit.
    if memory == Memory::Whole && values_fit() {
        permit.shrink_to(size.values_reserve);
        memory = Memory::Values;
    }
    // From its first cores to its witness (waits for learning, and for
    // cores and memory again after a wait that came to nothing, included).
    let mut begun = None;
    let witness = loop {
        let mut slot = Some(synthesis_cores(size, stop).map_err(stopped_waiting)?);
        begun.get_or_insert_with(Instant::now);
        let threads = slot.as_ref().map_or(1, Permit::units);
        let made =
            on_c1(|| circuit.synthesize(stop, size.capacity, threads, memory, &mut || drop(slot.take())))
                .map_err(|e| {
                    if stop.load(Ordering::Relaxed) {
                        // Whatever the circuit code made of the recorder's refusal.
                        stopped()
                    } else {
                        Error::new(e.kind, format!("partition {k}: {}", e.message))
                    }
                })?;
        if let Some(witness) = made {
            break witness;
        }
        // To be recorded whole (its constraints were refused, or its values
        // do not fit their shape): again, on cores taken anew and under the
        // whole reservation.
        drop(slot);
        if stop.load(Ordering::Relaxed) {
            return Err(stopped());
        }
        if memory == Memory::Values {
            drop(permit);
            permit = reserve(size.reserve)?;
            memory = Memory::Whole;
        }
    };
    let witness = if needs_products_ahead(&witness, params, opts.devices, memory) {
        let cores = synthesis_cores(size, stop).map_err(stopped_waiting)?;
        products_ahead(witness, cores.units(), k)?
    } else {
        witness
    };
    // A values witness whose products the GPUs will make holds no more
    // than the values' reservation, however much it was given.
    if witness.products.is_some() && products_on_gpus(params, opts.devices) {
        permit.shrink_to(size.values_reserve);
    }
    let synthesis = begun.map_or(Duration::ZERO, |t| t.elapsed());
    log::debug!("partition {k}: synthesized in {:.1} s", synthesis.as_secs_f64());
    let (r, s) = match opts.fixed_r_s {
        Some((r, s)) => (vec![r], vec![s]),
        None => random_r_s(1),
    };
    // The parameters' input count was checked at the start: a circuit of
    // another shape comes from malformed vanilla proofs.
    check_call(params, &[witness.as_assignment()], &r, &s).map_err(|e| {
        Error::invalid(format!(
            "partition {k}'s circuit does not have the shape of the parameters (malformed vanilla \
             proofs in the C1 output?): {}",
            e.message
        ))
    })?;
    // The recorder's values are field elements: reduced.
    let job = Job::start_admitted(params.clone(), vec![witness], r, s, permit, opts.devices, true)?;
    Ok((job, synthesis))
}
