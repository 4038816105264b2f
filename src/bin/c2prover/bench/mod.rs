//! `c2prover bench`: whole proofs (`prove.rs`, with supraseal beside them in
//! `supraseal.rs`), the GPU kernels one by one (`kernels.rs`) and a soak of
//! the split API (`soak.rs`).

mod kernels;
mod prove;
mod soak;
#[cfg(feature = "bench-supraseal")]
mod supraseal;

pub(crate) use kernels::*;
pub(crate) use prove::*;
pub(crate) use soak::*;
