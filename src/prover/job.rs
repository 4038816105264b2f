//! A proving job of the split API: `start` checks the call, takes owned
//! copies of what it needs and returns at once; the work runs on a thread of
//! its own; `finish` waits for the proofs; dropping an unfinished job
//! cancels it, and its memory is released as soon as the worker notices
//! (between circuits or proving stages). Every job holds a permit of the
//! host memory budget (`engine::host_budget`) for as long as its worker
//! runs.

use super::engine::{host_budget, Permit};
use super::{check_call, prove_job, Assignment, Witness};
use crate::error::{Error, ErrorKind, Result};
use crate::gpu::DeviceMask;
use crate::math::Fr;
use crate::params::Parameters;
use crate::proof::Proof;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

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
            check_call(&params, &assignments, &r, &s)?;
            let parallel = devices.devices()?.len();
            host_budget().acquire(job_bytes(&params, &assignments, parallel), wait)?
        };
        Job::start_admitted(params, witnesses, r, s, permit, devices, false)
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
                let assignments: Vec<_> = witnesses.iter().map(Witness::as_assignment).collect();
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    prove_job(&params, &assignments, &r, &s, &flag, devices, values_checked)
                }))
                .unwrap_or_else(|panic| Err(Error::new(ErrorKind::Panic, panic_message(&*panic))));
                // The memory goes back to the budget before the result is
                // handed over: proofs waiting for `finish` hold no more.
                drop(assignments);
                drop(witnesses);
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

/// Host bytes a job holds while it runs: its copies of the witnesses, and
/// its working set (`working_bytes`).
pub fn job_bytes(params: &Parameters, circuits: &[Assignment], gpus: usize) -> usize {
    let fr = std::mem::size_of::<Fr>();
    let witnesses: usize = circuits
        .iter()
        .map(|c| {
            let values = 3 * c.a.len() + c.inputs.len() + c.aux.len();
            values * fr + 3 * (c.aux.len() / 8 + 8)
        })
        .sum();
    witnesses + working_bytes(params, circuits, gpus)
}

/// Host bytes of a job's working set: that of each circuit in flight (the
/// H step's three domain vectors on the CPU, or h and the density-selected
/// scalars beside the GPU), one per GPU the job may use at once (`gpus`,
/// at least one). All a call on borrowed witnesses holds.
pub fn working_bytes(params: &Parameters, circuits: &[Assignment], gpus: usize) -> usize {
    let fr = std::mem::size_of::<Fr>();
    let working = 3 * params.domain_size() * fr + 2 * (params.num_inputs() + params.num_aux()) * fr;
    working * gpus.clamp(1, circuits.len().max(1))
}

/// The text of a panic payload (a `&str` or a `String`; anything else is
/// reported generically).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic payload".into());
    format!("internal error (panic): {text}")
}
