//! supraseal-c2 0.1.2's public Rust API, implemented on c2prover.
//!
//! bellperson's `cuda-supraseal` feature proves through this API: it loads
//! parameters with `SRS::try_new` and hands per-circuit `Assignment`s (raw
//! pointers into its own vectors) to `generate_groth16_proofs`. With
//!
//! ```toml
//! [patch.crates-io]
//! supraseal-c2 = { path = "/path/to/c2prover/compat/supraseal-c2" }
//! ```
//!
//! those calls run on c2prover: the GPU when one is present (feature `cuda`,
//! on by default), the CPU otherwise, with proofs byte-identical to
//! bellperson's CPU prover for the same r and s.
//!
//! As in the original, the proving functions return nothing and panic on
//! failure (a Rust panic that unwinds, with c2prover's message), and the
//! generic parameters carry no bounds: `S` must have the memory layout of
//! blst's `blst_fr` in Montgomery form (blstrs' `Scalar`), `PR` that of
//! bellperson's `Proof<Bls12>` (A in G1, B in G2, C in G1, affine, 384
//! bytes). Both are checked by size and alignment before any pointer is
//! read. Unlike the original, calls are not serialised by a process-wide
//! lock, and the parameters' points are checked when loaded.

mod ffi;

use c2prover::params::{evict_cached, load_cached};
use c2prover::{ErrorKind, LoadOptions, Parameters};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// Loaded Groth16 parameters, shared by every clone of a handle.
#[repr(C)]
#[derive(Default)]
pub struct SRS {
    inner: Option<Arc<Loaded>>,
}

struct Loaded {
    params: Arc<Parameters>,
    path: PathBuf,
}

impl SRS {
    /// Loads a parameters file in bellperson's `Parameters::write` format.
    /// With `cache`, a process-wide cache (the three most recently used
    /// files, keyed by path, length and modification time) is consulted
    /// and filled; without, the file is always read afresh.
    pub fn try_new(srs_path: PathBuf, cache: bool) -> Result<Self, Error> {
        let options = LoadOptions::default();
        let loaded = if cache {
            load_cached(&srs_path, &options)
        } else {
            Parameters::load(&srs_path, &options).map(Arc::new)
        };
        let params = loaded.map_err(|e| Error::from_c2prover(&e, &srs_path))?;
        Ok(SRS {
            inner: Some(Arc::new(Loaded {
                params,
                path: srs_path,
            })),
        })
    }

    /// Removes this file from the process-wide cache. The memory is freed
    /// once no handle uses it.
    pub fn evict(&self) {
        if let Some(loaded) = &self.inner {
            evict_cached(&loaded.path);
        }
    }

    fn parameters(&self) -> &Parameters {
        match &self.inner {
            Some(loaded) => &loaded.params,
            None => panic!("supraseal-c2: the SRS is empty (SRS::default()); load one with SRS::try_new"),
        }
    }
}

impl Clone for SRS {
    /// Another handle to the same loaded parameters (no copy).
    fn clone(&self) -> Self {
        SRS {
            inner: self.inner.clone(),
        }
    }
}

impl Drop for SRS {
    /// Releases this handle; the last one frees the parameters (unless the
    /// cache still holds them).
    fn drop(&mut self) {
        self.inner.take();
    }
}

/// Why `SRS::try_new` failed: an errno-style `code` (ENOENT, EIO, EINVAL,
/// ENOMEM, ...) and c2prover's message.
pub struct Error {
    pub code: i32,
    message: String,
}

const ENOENT: i32 = 2;
const EIO: i32 = 5;
const ENOMEM: i32 = 12;
const ENODEV: i32 = 19;
const EINVAL: i32 = 22;

impl Error {
    fn from_c2prover(err: &c2prover::Error, path: &std::path::Path) -> Error {
        let code = match err.kind {
            ErrorKind::Io if !path.exists() => ENOENT,
            ErrorKind::Io => EIO,
            ErrorKind::OutOfMemory => ENOMEM,
            ErrorKind::Gpu | ErrorKind::Unsupported => ENODEV,
            _ => EINVAL,
        };
        Error {
            code,
            message: err.to_string(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "supraseal_c2::Error {{ code: {}, message: {:?} }}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

impl From<Error> for String {
    fn from(e: Error) -> String {
        e.message
    }
}

impl From<&Error> for String {
    fn from(e: &Error) -> String {
        e.message.clone()
    }
}

/// One circuit's witness, borrowed through raw pointers that must stay
/// valid for the proving call: density bitmaps (bit i in bit i % 64 of word
/// i / 64), A/B/C evaluations, input values (ONE first) and aux values.
#[repr(C)]
pub struct Assignment<Scalar> {
    // Density of queries
    pub a_aux_density: *const usize,
    pub a_aux_bit_len: usize,
    pub a_aux_popcount: usize,

    pub b_inp_density: *const usize,
    pub b_inp_bit_len: usize,
    pub b_inp_popcount: usize,

    pub b_aux_density: *const usize,
    pub b_aux_bit_len: usize,
    pub b_aux_popcount: usize,

    // Evaluations of A, B, C polynomials
    pub a: *const Scalar,
    pub b: *const Scalar,
    pub c: *const Scalar,
    pub abc_size: usize,

    // Assignments of variables
    pub inp_assignment_data: *const Scalar,
    pub inp_assignment_size: usize,

    pub aux_assignment_data: *const Scalar,
    pub aux_assignment_size: usize,
}

/// Proves every circuit of `provers` with blinding factors `r_s[i]`,
/// `s_s[i]`, writing `proofs[i]` (which may be uninitialised memory).
/// Panics if the lengths differ or proving fails.
pub fn generate_groth16_proofs<S, PR>(provers: &[Assignment<S>], r_s: &[S], s_s: &[S], proofs: &mut [PR], srs: &SRS) {
    assert_eq!(r_s.len(), provers.len(), "supraseal-c2: one r per circuit");
    assert_eq!(s_s.len(), provers.len(), "supraseal-c2: one s per circuit");
    assert_eq!(proofs.len(), provers.len(), "supraseal-c2: one proof slot per circuit");
    let params = srs.parameters();
    let circuits: Vec<c2prover::Assignment> = provers.iter().map(|p| ffi::assignment(p)).collect();
    let made = c2prover::prove(params, &circuits, ffi::scalars(r_s), ffi::scalars(s_s))
        .unwrap_or_else(|e| panic!("supraseal-c2 (c2prover): {e}"));
    for (slot, proof) in proofs.iter_mut().zip(&made) {
        ffi::write_proof(slot, proof);
    }
}

/// The older entry point: one pointer per circuit for each vector, the
/// density bitmaps and their popcounts shared by all circuits.
#[allow(clippy::too_many_arguments)]
pub fn generate_groth16_proof<S, D, PR>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
    proofs: &mut [PR],
    srs: &SRS,
) {
    for (len, what) in [
        (ntt_a_scalars.len(), "ntt_a_scalars"),
        (ntt_b_scalars.len(), "ntt_b_scalars"),
        (ntt_c_scalars.len(), "ntt_c_scalars"),
        (input_assignments.len(), "input_assignments"),
        (aux_assignments.len(), "aux_assignments"),
    ] {
        assert_eq!(len, num_circuits, "supraseal-c2: {what} needs one entry per circuit");
    }
    assert_eq!(
        std::mem::size_of::<D>(),
        8,
        "supraseal-c2: only 64-bit elements in bit vectors are supported"
    );
    for (words, what) in [
        (a_aux_density_bv.len(), "a_aux_density_bv"),
        (b_g1_aux_density_bv.len(), "b_g1_aux_density_bv"),
    ] {
        assert!(
            words * 64 >= aux_assignments_size,
            "supraseal-c2: {what} has {words} words, too few for {aux_assignments_size} aux variables"
        );
    }
    assert!(
        b_g1_input_density_bv.len() * 64 >= input_assignments_size,
        "supraseal-c2: b_g1_input_density_bv is too short for {input_assignments_size} inputs"
    );
    let provers: Vec<Assignment<S>> = (0..num_circuits)
        .map(|i| Assignment {
            a_aux_density: a_aux_density_bv.as_ptr().cast(),
            a_aux_bit_len: aux_assignments_size,
            a_aux_popcount: a_aux_total_density,
            b_inp_density: b_g1_input_density_bv.as_ptr().cast(),
            b_inp_bit_len: input_assignments_size,
            b_inp_popcount: b_g1_input_total_density,
            b_aux_density: b_g1_aux_density_bv.as_ptr().cast(),
            b_aux_bit_len: aux_assignments_size,
            b_aux_popcount: b_g1_aux_total_density,
            a: ntt_a_scalars[i],
            b: ntt_b_scalars[i],
            c: ntt_c_scalars[i],
            abc_size: ntt_scalars_actual_size,
            inp_assignment_data: input_assignments[i],
            inp_assignment_size: input_assignments_size,
            aux_assignment_data: aux_assignments[i],
            aux_assignment_size: aux_assignments_size,
        })
        .collect();
    generate_groth16_proofs(&provers, r_s, s_s, proofs, srs);
}
