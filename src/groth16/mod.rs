//! The Groth16 prover's math, apart from where it runs: the witness and its
//! checks, the query split of the five MSMs, and the proof's assembly with
//! r and s. The backends (`backend`) compute H and the MSMs; the engine
//! (`engine`) runs a call's circuits through them:
//!
//! 1. check the call (`check_call`) and each witness's values;
//! 2. h = (a·b − c)/Z on a coset of the domain (`backend::*::h`);
//! 3. the five MSMs of the query split (`queries`);
//! 4. assemble A, B, C with r and s (`assembly`).

mod assembly;
mod assignment;
pub mod constraints;
pub mod constraints_file;
pub mod queries;

pub use assembly::{assemble, QuerySums};
pub use assignment::{Assignment, Density, Witness};
pub use constraints::UnitConstraints;
pub use queries::{select, Mask, Queries, Query, Term, Vector, WitnessSums};

use crate::error::{Error, Result};
use crate::math::domain::Domain;
use crate::math::Fr;
use crate::params::Parameters;
use rand_core::{OsRng, RngCore};
use rayon::prelude::*;

/// Validation of a whole call, before any work.
pub fn check_call(params: &Parameters, circuits: &[Assignment], r: &[Fr], s: &[Fr]) -> Result<()> {
    // A malformed knob fails the call instead of being ignored.
    crate::config::get()?;
    if circuits.is_empty() {
        return Err(Error::invalid("no circuits to prove"));
    }
    if r.len() != circuits.len() || s.len() != circuits.len() {
        return Err(Error::size_mismatch(format!(
            "{} circuits need {0} r and {0} s values, got {} and {}",
            circuits.len(),
            r.len(),
            s.len()
        )));
    }
    // In parallel (a 2^27 circuit's density bitmaps take a few ms to
    // count), the first failure in circuit order reported.
    let checked: Vec<Result<()>> = circuits
        .par_iter()
        .enumerate()
        .map(|(i, c)| c.check(i, params))
        .collect();
    checked.into_iter().collect::<Result<()>>()?;
    for (name, values) in [("r", r), ("s", s)] {
        if let Some(i) = values.iter().position(|v| !v.is_reduced()) {
            return Err(Error::invalid(format!(
                "{name}[{i}] is not a field element (not below r)"
            )));
        }
    }
    Ok(())
}

/// The NTT domain of the parameters.
pub fn domain_of(params: &Parameters) -> Result<Domain> {
    Domain::new(params.domain_size().trailing_zeros())
        .ok_or_else(|| Error::invalid("domain larger than 2^32"))
}

/// Draws r and s for `n` circuits from the operating system's RNG.
pub fn random_r_s(n: usize) -> (Vec<Fr>, Vec<Fr>) {
    let draw = || {
        let mut bytes = [0u8; 64];
        OsRng.fill_bytes(&mut bytes);
        Fr::from_uniform_bytes(&bytes)
    };
    let r = (0..n).map(|_| draw()).collect();
    let s = (0..n).map(|_| draw()).collect();
    (r, s)
}
