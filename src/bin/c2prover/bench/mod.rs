//! `c2prover bench`: whole proofs (`prove.rs`, with supraseal beside them in
//! `supraseal.rs`) and the GPU kernels one by one (`kernels.rs`).

mod kernels;
mod prove;
#[cfg(feature = "bench-supraseal")]
mod supraseal;

pub(crate) use kernels::*;
pub(crate) use prove::*;
