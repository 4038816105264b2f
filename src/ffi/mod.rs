//! The foreign boundary, in both directions, and the only place (with
//! `src/gpu`) where `unsafe` is allowed:
//! - `blst`: safe value types over blst's C field and curve arithmetic;
//! - `mmap`: the read-only file mapping the parameter loader decodes from.
//!
//! The C ABI that callers use (`c2p_*` and the supraseal-compatible symbols)
//! lives here too as it is added.

pub mod blst;
pub mod mmap;
