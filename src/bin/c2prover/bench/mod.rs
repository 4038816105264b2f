//! `c2prover bench`: whole proofs (`prove.rs`, with supraseal beside them in
//! `supraseal.rs`), the whole C2 job at a real sector size (`c2.rs`), the
//! GPU kernels one by one (`kernels.rs`) and a soak of the split API
//! (`soak.rs`).

#[cfg(feature = "porep")]
mod c2;
mod kernels;
mod prove;
mod soak;
#[cfg(feature = "bench-supraseal")]
mod supraseal;

#[cfg(feature = "porep")]
pub(crate) use c2::*;
pub(crate) use kernels::*;
pub(crate) use prove::*;
pub(crate) use soak::*;
