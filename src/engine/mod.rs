//! The engine: jobs of the split API and their one admission path, the host
//! memory budget, which GPUs a job may use, and the pipeline that spreads a
//! call's circuits over them.
//!
//! Circuits take their GPU's lane (`backend::gpu::lanes`) for the H step and
//! the MSMs only; the CPU work around them (checks, selections, assembly)
//! runs outside it, so one job's CPU tail overlaps the next job's GPU work.

mod budget;
mod devices;
pub mod job;
mod pipeline;

pub use budget::{default_host_budget, host_budget, Budget, Permit};
pub use devices::{next_device, DeviceMask};
pub use job::{admit, Admission, Job};
pub(crate) use pipeline::prove_job;
pub use pipeline::{prove, prove_cancellable, prove_on_cpu};
