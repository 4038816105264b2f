//! c2prover: Groth16 proofs over BLS12-381 for Filecoin, byte-identical to
//! bellperson's, on NVIDIA GPUs with a complete CPU fallback.
//!
//! Layers, each using only those above it in this list: `math` (Fr, Fp,
//! G1, G2 over blst; the NTT domain), `config`, `error`, `stats` and
//! `faults`, `params` (the file format, loader and cache), `groth16` (the
//! witness and its checks, the query split, the assembly), `backend` (the
//! CPU's and the GPUs' H step and MSMs behind one interface), `engine`
//! (jobs, admission, budgets, the pipeline over the GPUs), `capi` (the C
//! ABI). `unsafe` is denied everywhere but in blst's wrappers, the file
//! mapping, the CUDA backend's calls and the C ABI (docs/architecture.md).
#![deny(unsafe_code)]

// supraseal's crate exports the C symbols `supraseal-abi` defines here; one
// binary cannot hold both (and must not call ours thinking it calls theirs).
#[cfg(all(feature = "supraseal-abi", feature = "bench-supraseal"))]
compile_error!(
    "build `bench-supraseal` with --no-default-features: supraseal-abi's C symbols clash with supraseal's"
);

pub mod backend;
#[allow(unsafe_code)]
pub mod capi;
pub mod config;
pub mod engine;
pub mod error;
mod faults;
pub mod groth16;
pub mod math;
pub mod params;
#[cfg(feature = "porep")]
pub mod porep;
pub mod procfs;
pub mod proof;
pub mod stats;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod verify;

pub use config::Residency;
pub use engine::{prove, prove_on_cpu, DeviceMask, Job};
pub use error::{Error, ErrorKind, Result};
pub use groth16::{random_r_s, Assignment, Density, Witness};
pub use math::{Fr, G1Affine, G2Affine, G1, G2};
pub use params::{LoadOptions, Parameters, VerifyingKey};
pub use proof::Proof;
pub use verify::verify;

/// The crate version, as reported by `c2prover info` and the C ABI.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
