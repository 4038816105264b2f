//! The raw-pointer side of supraseal's API: the only `unsafe` of this crate.
//! bellperson hands over pointers into its own vectors, valid for the call;
//! each one is checked for NULL (with a non-zero length) and alignment, and
//! the generic types for their size and alignment, before it is read.

use crate::Assignment;
use c2prover::{Density, Fr, Proof};
use std::mem::{align_of, size_of};

#[cfg(not(target_pointer_width = "64"))]
compile_error!("supraseal-c2's density bitmaps are words of usize, read as 64-bit words");

/// `S` must be laid out as `Fr` (blst_fr: four u64 limbs, Montgomery form,
/// no padding); supraseal's API cannot say so in its bounds, so only the
/// size and alignment are checked.
fn check_scalar_type<S>() {
    assert!(
        size_of::<S>() == size_of::<Fr>() && align_of::<S>() >= align_of::<Fr>(),
        "supraseal-c2: the scalar type must be a BLS12-381 Fr of 32 bytes (blstrs::Scalar), got {} bytes",
        size_of::<S>()
    );
}

/// `len` elements at `ptr`, or an empty slice for a length of zero.
fn slice<'a, T>(ptr: *const T, len: usize, what: &str) -> &'a [T] {
    if len == 0 {
        return &[];
    }
    assert!(!ptr.is_null(), "supraseal-c2: {what} is NULL with {len} entries");
    assert!(ptr.is_aligned(), "supraseal-c2: {what} is not aligned");
    assert!(
        len.checked_mul(size_of::<T>()).is_some_and(|bytes| bytes <= isize::MAX as usize),
        "supraseal-c2: {what} claims {len} entries, more than memory can hold"
    );
    // SAFETY: supraseal's contract: the caller's pointer addresses `len`
    // initialised elements that stay valid and unmodified for this call;
    // it is non-null and aligned (checked above).
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

/// The caller's scalars as `Fr`.
fn fr_slice<'a, S>(ptr: *const S, len: usize, what: &str) -> &'a [Fr] {
    check_scalar_type::<S>();
    slice(ptr.cast::<Fr>(), len, what)
}

pub fn scalars<S>(values: &[S]) -> &[Fr] {
    fr_slice(values.as_ptr(), values.len(), "r_s / s_s")
}

fn density<'a>(words: *const usize, bit_len: usize, popcount: usize, what: &str) -> Density<'a> {
    Density {
        words: slice(words.cast::<u64>(), bit_len.div_ceil(64), what),
        bit_len,
        popcount,
    }
}

/// c2prover's view of one of supraseal's assignments (c2prover checks
/// every length and count against the parameters before proving).
pub fn assignment<S>(p: &Assignment<S>) -> c2prover::Assignment<'_> {
    c2prover::Assignment {
        a_aux_density: density(p.a_aux_density, p.a_aux_bit_len, p.a_aux_popcount, "a_aux_density"),
        b_inp_density: density(p.b_inp_density, p.b_inp_bit_len, p.b_inp_popcount, "b_inp_density"),
        b_aux_density: density(p.b_aux_density, p.b_aux_bit_len, p.b_aux_popcount, "b_aux_density"),
        a: fr_slice(p.a, p.abc_size, "a"),
        b: fr_slice(p.b, p.abc_size, "b"),
        c: fr_slice(p.c, p.abc_size, "c"),
        inputs: fr_slice(p.inp_assignment_data, p.inp_assignment_size, "inp_assignment_data"),
        aux: fr_slice(p.aux_assignment_data, p.aux_assignment_size, "aux_assignment_data"),
        products: None,
    }
}

/// Writes `proof` into the caller's slot (possibly uninitialised memory),
/// in blst's in-memory layout: what bellperson's `Proof<Bls12>` is.
pub fn write_proof<PR>(slot: &mut PR, proof: &Proof) {
    assert_eq!(
        size_of::<PR>(),
        Proof::RAW_BYTES,
        "supraseal-c2: the proof type must be 384 bytes (bellperson's Proof<Bls12>)"
    );
    let raw = proof.to_raw();
    // SAFETY: `slot` is valid for writes of size_of::<PR>() = 384 bytes
    // (checked), and a byte copy needs no alignment. The bytes are blst's
    // affine points, the layout the caller's type has by supraseal's
    // contract; the old contents (maybe uninitialised) are not read.
    unsafe { std::ptr::copy_nonoverlapping(raw.as_ptr(), (slot as *mut PR).cast::<u8>(), raw.len()) }
}
