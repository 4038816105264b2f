//! The foreign boundary, in both directions, and the only place (with
//! `src/gpu`) where `unsafe` is allowed:
//! - `blst`: safe value types over blst's C field and curve arithmetic;
//! - `mmap`: the read-only file mapping the parameter loader decodes from.
//!
//! - `capi`: the C ABI callers use (`c2p_*` and the supraseal-compatible
//!   symbols).

pub mod blst;
pub mod capi;
pub mod mmap;
