//! c2prover: Groth16 proofs over BLS12-381 for Filecoin, byte-identical to
//! bellperson's, on the CPU (and, as the CUDA backend lands, on NVIDIA GPUs).
//!
//! Layout: `params` reads bellperson parameter files; `prover` turns
//! supraseal-shaped assignments into proofs; `cpu` holds the NTT, MSM and H
//! computations; `ffi` is the only place with `unsafe` besides `gpu` (blst,
//! mmap, and the C ABI); `proof` and `verify` are the output side.

// supraseal's crate exports the C symbols `supraseal-abi` defines here; one
// binary cannot hold both (and must not call ours thinking it calls theirs).
#[cfg(all(feature = "supraseal-abi", feature = "bench-supraseal"))]
compile_error!(
    "build `bench-supraseal` with --no-default-features: supraseal-abi's C symbols clash with supraseal's"
);

pub mod config;
pub mod cpu;
pub mod error;
pub mod ffi;
pub mod gpu;
pub mod params;
pub mod procfs;
pub mod proof;
pub mod prover;
pub mod shaped;
pub mod synthetic;
pub mod verify;
pub mod witness_file;

pub use error::{Error, ErrorKind, Result};
pub use ffi::blst::{Fr, G1Affine, G2Affine, G1, G2};
pub use gpu::Residency;
pub use params::{LoadOptions, Parameters, VerifyingKey};
pub use proof::Proof;
pub use prover::{prove, prove_on_cpu, random_r_s, Assignment, Density, Witness};
pub use verify::verify;

/// The crate version, as reported by `c2prover info` and the C ABI.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
