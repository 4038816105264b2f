//! The CPU backend: MSMs with blst's Pippenger and the H polynomial (its
//! NTTs are the domain's, in `math`). It is the fallback where no GPU is
//! present and the reference every GPU kernel is checked against.

pub mod h;
pub mod msm;

use super::Call;
use crate::error::Result;
use crate::groth16::{Assignment, Queries, QuerySums, Term, WitnessSums};
use crate::math::Fr;
use crate::params::Parameters;
use crate::stats::{timed, Stage, STATS};
use msm::{dense_msm, witness_msm, Selection};
use std::time::Instant;

/// Circuit `index`'s H step and five MSMs on the CPU.
pub fn sums(call: &Call, index: usize, w: &Assignment) -> Result<QuerySums> {
    if !call.values_checked {
        timed(Stage::CheckValues, || w.check_reduced(index))?;
    }
    let started = Instant::now();
    let h = match w.host_products()? {
        Some([a, b, c]) => h::quotient(call.domain, &a, &b, &c),
        None => h::quotient(call.domain, w.a, w.b, w.c),
    };
    let h_done = Instant::now();
    STATS.add(Stage::CpuH, h_done - started);
    call.check_cancelled()?;
    let sums = msm_sums(call.params, w, &h);
    STATS.add(Stage::CpuMsm, h_done.elapsed());
    sums
}

/// The five MSMs of `w` and its quotient `h` over the parameters' points
/// in host memory.
pub fn msm_sums(params: &Parameters, w: &Assignment, h: &[Fr]) -> Result<QuerySums> {
    let h = dense_msm(&params.h, &h[..h.len().min(params.h.len())]);
    Ok(witness_sums(params, w)?.with_h(h))
}

/// The four witness MSMs of `w` (all but H's) over the parameters' points
/// in host memory.
pub fn witness_sums(params: &Parameters, w: &Assignment) -> Result<WitnessSums> {
    let selection = |t: &Term| t.mask.map_or(Selection::All, |m| Selection::Density(w.mask(m)));
    Queries::of(w).witness_sums(
        |t| {
            let points = &t.query.g1_points(params)[t.offset..];
            Ok(witness_msm(points, w.vector(t.vector, &[]), selection(t)))
        },
        |t| {
            Ok(witness_msm(
                &params.b_g2[t.offset..],
                w.vector(t.vector, &[]),
                selection(t),
            ))
        },
    )
}
