//! A proving job of the split API: `start` checks the call, takes owned
//! copies of what it needs and returns at once; the work runs on a thread of
//! its own; `finish` waits for the proofs; dropping an unfinished job
//! cancels it, and its memory is released as soon as the worker notices
//! (between circuits or proving stages). Every job comes in through
//! `admit` and holds a permit of the host memory budget
//! (`engine::host_budget`) for as long as its worker runs.

use super::{host_budget, prove_job, DeviceMask, Permit};
use crate::backend;
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{check_call, Assignment, Witness};
use crate::math::Fr;
use crate::params::Parameters;
use crate::proof::Proof;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use zeroize::Zeroize;

pub struct Job {
    circuits: usize,
    cancelled: Arc<AtomicBool>,
    result: Receiver<Result<Vec<Proof>>>,
}

impl Job {
    /// Checks the witnesses against the parameters and starts proving them
    /// in the background, first waiting while the host memory budget is
    /// full (or failing with `Busy` when `wait` is false). Errors here mean
    /// nothing was started. The circuits run on the GPUs `devices` allows.
    pub fn start(
        params: Arc<Parameters>,
        witnesses: Vec<Witness>,
        r: Vec<Fr>,
        s: Vec<Fr>,
        wait: bool,
        devices: DeviceMask,
    ) -> Result<Job> {
        let permit = {
            let assignments: Vec<_> = witnesses.iter().map(Witness::as_assignment).collect();
            let how = Admission {
                devices,
                device_budget: None,
                wait,
                copied: true,
            };
            admit(&params, &assignments, &r, &s, &how)?
        };
        Job::start_admitted(params, witnesses, r, s, permit, devices, true)
    }

    /// `start` for a job already admitted by the budget (the C API takes
    /// the permit before it copies the caller's buffers);
    /// `values_checked`: every witness value is known to be below the
    /// modulus (the C API checks them before it copies them).
    pub(crate) fn start_admitted(
        params: Arc<Parameters>,
        witnesses: Vec<Witness>,
        r: Vec<Fr>,
        s: Vec<Fr>,
        permit: Permit,
        devices: DeviceMask,
        values_checked: bool,
    ) -> Result<Job> {
        devices.devices()?;
        let circuits = witnesses.len();
        let cancelled = Arc::new(AtomicBool::new(false));
        let (send, result) = sync_channel(1);
        let flag = cancelled.clone();
        std::thread::Builder::new()
            .name("c2p-job".into())
            .spawn(move || {
                let (mut r, mut s) = (r, s);
                let assignments: Vec<_> = witnesses.iter().map(Witness::as_assignment).collect();
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    prove_job(&params, &assignments, &r, &s, &flag, devices, values_checked)
                }))
                .unwrap_or_else(|panic| {
                    Err(Error::new(ErrorKind::Panic, crate::error::panic_message(&*panic)))
                });
                // The memory goes back to the budget before the result is
                // handed over: proofs waiting for `finish` hold no more.
                // The job's copies of the secret r and s are zeroed.
                drop(assignments);
                drop(witnesses);
                r.zeroize();
                s.zeroize();
                drop(permit);
                // The receiver is gone when the job was abandoned: nothing to do.
                let _ = send.send(outcome);
            })
            .map_err(|e| {
                Error::new(
                    ErrorKind::OutOfMemory,
                    format!("cannot start a proving thread: {e}"),
                )
            })?;
        Ok(Job {
            circuits,
            cancelled,
            result,
        })
    }

    pub fn circuits(&self) -> usize {
        self.circuits
    }

    /// Waits for the proofs, one per circuit in order.
    pub fn finish(self) -> Result<Vec<Proof>> {
        self.result.recv().unwrap_or_else(|_| {
            Err(Error::new(
                ErrorKind::Panic,
                "the proving thread ended without a result",
            ))
        })
    }

    /// `finish`, cancelling the job as soon as `stop` is set (a caller that
    /// waits on several jobs and is itself cancelled).
    pub fn finish_unless(self, stop: &AtomicBool) -> Result<Vec<Proof>> {
        use std::sync::mpsc::RecvTimeoutError;
        loop {
            match self.result.recv_timeout(std::time::Duration::from_millis(20)) {
                Ok(outcome) => return outcome,
                Err(RecvTimeoutError::Timeout) => {
                    if stop.load(Ordering::Relaxed) {
                        self.cancel();
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Error::new(
                        ErrorKind::Panic,
                        "the proving thread ended without a result",
                    ))
                }
            }
        }
    }

    /// Asks the worker to stop; `finish` then reports `Cancelled` unless the
    /// proofs were already done.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// How a call comes in.
#[derive(Clone, Copy, Debug)]
pub struct Admission {
    /// The GPUs it may use.
    pub devices: DeviceMask,
    /// Their device budget, set before it starts (`None`: as it is).
    pub device_budget: Option<usize>,
    /// Wait while the host budget is full, else fail with `Busy`.
    pub wait: bool,
    /// The job proves on copies of the witnesses (the split API), not on
    /// the caller's buffers.
    pub copied: bool,
}

/// Checks a call and takes its share of the host budget: the one way in
/// for every job (the Rust API's, the `c2p_*` API's, supraseal's). Copied
/// witnesses have every value checked below the modulus now, before
/// anything is copied (in parallel: 16 GiB per 2^27 partition), and the
/// permit covers the copies; a call on the caller's buffers holds only its
/// working set, and each circuit's values are checked when its turn comes.
pub fn admit(
    params: &Parameters,
    circuits: &[Assignment],
    r: &[Fr],
    s: &[Fr],
    how: &Admission,
) -> Result<Permit> {
    check_call(params, circuits, r, s)?;
    if how.copied {
        for (i, a) in circuits.iter().enumerate() {
            a.check_reduced(i)?;
        }
    }
    let devices = how.devices.devices()?;
    if let Some(bytes) = how.device_budget {
        backend::set_device_budget(&devices, bytes)?;
    }
    let bytes = if how.copied {
        job_bytes(params, circuits, devices.len())
    } else {
        working_bytes(params, circuits, devices.len())
    };
    host_budget().acquire(bytes, how.wait)
}

/// Host bytes a job holds while it runs: its copies of the witnesses, and
/// its working set (`working_bytes`).
pub fn job_bytes(params: &Parameters, circuits: &[Assignment], gpus: usize) -> usize {
    let witnesses: usize = circuits
        .iter()
        .map(|c| witness_bytes(c.abc_len(), c.inputs.len(), c.aux.len()))
        .sum();
    witnesses + working_bytes(params, circuits, gpus)
}

/// Host bytes of a job's working set: that of each circuit in flight (the
/// H step's three domain vectors on the CPU, or h and the density-selected
/// scalars beside the GPU), one per GPU the job may use at once (`gpus`,
/// at least one). All a call on borrowed witnesses holds.
pub fn working_bytes(params: &Parameters, circuits: &[Assignment], gpus: usize) -> usize {
    let working = circuit_working_bytes(params.domain_size(), params.num_inputs(), params.num_aux());
    working * gpus.clamp(1, circuits.len().max(1))
}

/// Host bytes of a one-circuit job at its largest on parameters of these
/// sizes (a constraint per domain point), proved on the GPUs `devices`
/// allows: what a caller that synthesizes the circuit itself reserves
/// before the witness exists. On a GPU the H step and the MSMs work in
/// device memory and at most the circuit's h comes back to wait on the
/// host; on the CPU the working set is `circuit_working_bytes`. A GPU stage
/// over streamed points that runs out of device memory and falls back to
/// the CPU for its MSMs works beyond this share (docs/operating.md).
pub fn largest_circuit_bytes(domain: usize, inputs: usize, aux: usize, devices: DeviceMask) -> Result<usize> {
    let on_gpu = backend::gpus_take(domain.trailing_zeros()) && !devices.devices()?.is_empty();
    let working = if on_gpu {
        domain * std::mem::size_of::<Fr>()
    } else {
        circuit_working_bytes(domain, inputs, aux)
    };
    Ok(witness_bytes(domain, inputs, aux) + working)
}

/// Host bytes of a one-circuit job on parameters of these sizes whose a, b,
/// c are products on a GPU that holds the parameters (`Witness::products`):
/// its inputs, aux and density bitmaps, and h waiting on the host. When the
/// GPU has no room for the products after all, the host makes them beyond
/// this share, as a GPU stage falling back to the CPU does.
pub fn values_circuit_bytes(domain: usize, inputs: usize, aux: usize) -> usize {
    witness_bytes(0, inputs, aux) + domain * std::mem::size_of::<Fr>()
}

/// A witness's a, b, c, inputs and aux, and its three density bitmaps.
fn witness_bytes(constraints: usize, inputs: usize, aux: usize) -> usize {
    let values = 3 * constraints + inputs + aux;
    values * std::mem::size_of::<Fr>() + 3 * (aux / 8 + 8)
}

fn circuit_working_bytes(domain: usize, inputs: usize, aux: usize) -> usize {
    (3 * domain + 2 * (inputs + aux)) * std::mem::size_of::<Fr>()
}
