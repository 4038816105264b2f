//! The caller's circuits and scalars, read from C memory: borrowed as
//! assignments (every pointer and length checked first), r and s decoded,
//! and owned copies for the split API's jobs.

use super::native::{c2p_assignment, c2p_fr};
use super::slice;
use crate::error::Error;
use crate::groth16::{random_r_s, Assignment, Density, Witness};
use crate::math::Fr;
use rayon::prelude::*;

pub(crate) fn scalars<'a>(ptr: *const c2p_fr, len: usize, name: &str) -> Result<&'a [Fr], Error> {
    // c2p_fr and Fr share blst's layout: four u64 limbs.
    Ok(Fr::slice_from_limbs(slice(ptr.cast::<[u64; 4]>(), len, name)?))
}

/// Borrows the caller's assignments (checking every pointer) as the
/// prover's type.
pub(crate) fn borrow_assignments<'a>(
    circuits: *const c2p_assignment,
    n_circuits: usize,
) -> Result<Vec<Assignment<'a>>, Error> {
    if n_circuits == 0 {
        return Err(Error::invalid("n_circuits is 0: nothing to prove"));
    }
    let raw = slice(circuits, n_circuits, "circuits")?;
    raw.iter()
        .enumerate()
        .map(|(i, c)| {
            let name = |field: &str| format!("circuits[{i}].{field}");
            let density = |ptr: *const u64, bits: usize, popcount: usize, field: &str| {
                Ok::<_, Error>(Density {
                    words: slice(ptr, bits.div_ceil(64), &name(field))?,
                    bit_len: bits,
                    popcount,
                })
            };
            Ok(Assignment {
                a_aux_density: density(
                    c.a_aux_density,
                    c.a_aux_bit_len,
                    c.a_aux_popcount,
                    "a_aux_density",
                )?,
                b_inp_density: density(
                    c.b_inp_density,
                    c.b_inp_bit_len,
                    c.b_inp_popcount,
                    "b_inp_density",
                )?,
                b_aux_density: density(
                    c.b_aux_density,
                    c.b_aux_bit_len,
                    c.b_aux_popcount,
                    "b_aux_density",
                )?,
                a: scalars(c.a, c.abc_size, &name("a"))?,
                b: scalars(c.b, c.abc_size, &name("b"))?,
                c: scalars(c.c, c.abc_size, &name("c"))?,
                inputs: scalars(
                    c.inp_assignment_data,
                    c.inp_assignment_size,
                    &name("inp_assignment_data"),
                )?,
                aux: scalars(
                    c.aux_assignment_data,
                    c.aux_assignment_size,
                    &name("aux_assignment_data"),
                )?,
                products: None,
            })
        })
        .collect()
}

/// Reads n 32-byte scalars (Montgomery, or canonical when asked).
pub(crate) fn read_scalars(bytes: &[u8], canonical: bool, name: &str) -> Result<Vec<Fr>, Error> {
    bytes
        .chunks_exact(32)
        .enumerate()
        .map(|(i, chunk)| {
            let chunk: &[u8; 32] = chunk.try_into().map_err(|_| Error::invalid("short scalar"))?;
            let value = if canonical {
                Fr::from_canonical_bytes(chunk)
            } else {
                Fr::from_mont_bytes(chunk)
            };
            value.ok_or_else(|| Error::invalid(format!("{name}[{i}] is not below the field modulus")))
        })
        .collect()
}

/// r and s from the caller, or from the OS RNG when both are NULL.
pub(crate) fn r_and_s(
    r: *const u8,
    s: *const u8,
    n: usize,
    canonical: bool,
) -> Result<(Vec<Fr>, Vec<Fr>), Error> {
    match (r.is_null(), s.is_null()) {
        (true, true) => Ok(random_r_s(n)),
        (false, false) => {
            let len = n
                .checked_mul(32)
                .ok_or_else(|| Error::invalid("n_circuits is too large"))?;
            Ok((
                read_scalars(slice(r, len, "r")?, canonical, "r")?,
                read_scalars(slice(s, len, "s")?, canonical, "s")?,
            ))
        }
        _ => Err(Error::invalid(
            "r and s must both be given or both be NULL (NULL draws them from the OS RNG)",
        )),
    }
}

/// An owned copy of a borrowed assignment (values already checked to be
/// below the modulus), converting canonical scalars to Montgomery form when
/// asked. The copies run on all cores: `start` returns sooner.
pub(crate) fn own(a: &Assignment, canonical: bool) -> Result<Witness, Error> {
    let copy = |v: &[Fr]| -> Result<Vec<Fr>, Error> {
        let mut out = try_with_capacity(v.len())?;
        // Indexed parallel iterators extend in place: no reallocation.
        if canonical {
            out.par_extend(v.par_iter().map(Fr::from_canonical_limbs));
        } else {
            out.par_extend(v.par_iter().copied());
        }
        Ok(out)
    };
    let words = |d: &Density| -> Result<Vec<u64>, Error> {
        let src = &d.words[..d.bit_len.div_ceil(64)];
        let mut out = try_with_capacity(src.len())?;
        out.extend_from_slice(src);
        Ok(out)
    };
    Ok(Witness {
        a_aux_density: words(&a.a_aux_density)?,
        b_inp_density: words(&a.b_inp_density)?,
        b_aux_density: words(&a.b_aux_density)?,
        a: copy(a.a)?,
        b: copy(a.b)?,
        c: copy(a.c)?,
        inputs: copy(a.inputs)?,
        aux: copy(a.aux)?,
        products: None,
    })
}

/// An empty vector with room for `n` elements, or `OutOfMemory` (instead of
/// the abort a failed allocation would be).
pub(crate) fn try_with_capacity<T>(n: usize) -> Result<Vec<T>, Error> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|e| {
        Error::new(
            crate::error::ErrorKind::OutOfMemory,
            format!("cannot copy the witness ({n} elements): {e}"),
        )
    })?;
    Ok(v)
}
