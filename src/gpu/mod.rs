//! The GPU backend's Rust side. Until the CUDA kernels land this is the
//! stand-in: no device is ever found, and the prover runs on the CPU.

/// Whether a usable CUDA device is present (never, in this build).
pub fn available() -> bool {
    false
}
