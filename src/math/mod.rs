//! The bottom layer: the field and group types over blst (Fr, Fp, G1, G2)
//! and the NTT domain with its CPU transforms. Everything else builds on it.

// blst's C arithmetic behind safe value types: the one place below the C
// ABI and the GPU backend where `unsafe` is allowed (blst.rs and fr.rs).
mod bitmap;
#[allow(unsafe_code)]
mod blst;
pub mod domain;
#[allow(unsafe_code)]
mod fr;

pub use bitmap::bits_set_below;
pub use blst::*;
pub use domain::Domain;
pub use fr::*;
