//! Fixtures for tests and benchmarks, not part of the proving API: PoRep-shaped
//! partitions (`shaped`), synthetic circuits with a real setup (`synthetic`),
//! and the witness file the command-line tool reads and writes
//! (`witness_file`). Behind the default feature `testkit`; a build with
//! `default-features = false` (the supraseal-c2 drop-in) leaves it out.

pub mod faults;
#[cfg(feature = "porep")]
pub mod porep_c1;
#[cfg(feature = "porep")]
pub mod porep_params;
pub mod shaped;
pub mod synthetic;
pub mod witness_file;
