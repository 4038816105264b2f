//! The witness file the `c2prover` command reads: one or more circuits'
//! assignments, exactly the fields of the C ABI's assignment.
//!
//! ```text
//! magic         8 bytes  "C2PWIT01"
//! n_circuits    u64 LE
//! per circuit:
//!   n_inputs    u64 LE   (including ONE at index 0)
//!   n_aux       u64 LE
//!   abc_size    u64 LE
//!   a_aux_density  ceil(n_aux/64)    u64 LE words, bit i = bit i%64 of word i/64
//!   b_inp_density  ceil(n_inputs/64) u64 LE words
//!   b_aux_density  ceil(n_aux/64)    u64 LE words
//!   a, b, c     abc_size scalars each
//!   inputs      n_inputs scalars
//!   aux         n_aux scalars
//! ```
//!
//! A scalar is 32 bytes: an Fr element in Montgomery form, four u64 LE limbs
//! (blst's `blst_fr`, blstrs' `Scalar` in memory).

use crate::error::{Error, Result};
use crate::groth16::Witness;
use crate::math::Fr;
use std::io::{Read, Write};

pub const MAGIC: &[u8; 8] = b"C2PWIT01";

/// Writes circuits' witnesses in the format above.
pub fn write<W: Write>(mut w: W, witnesses: &[Witness]) -> std::io::Result<()> {
    w.write_all(MAGIC)?;
    w.write_all(&(witnesses.len() as u64).to_le_bytes())?;
    for wit in witnesses {
        for n in [wit.inputs.len(), wit.aux.len(), wit.a.len()] {
            w.write_all(&(n as u64).to_le_bytes())?;
        }
        for words in [&wit.a_aux_density, &wit.b_inp_density, &wit.b_aux_density] {
            for word in words.iter() {
                w.write_all(&word.to_le_bytes())?;
            }
        }
        for v in [&wit.a, &wit.b, &wit.c, &wit.inputs, &wit.aux] {
            for x in v.iter() {
                w.write_all(&x.to_mont_bytes())?;
            }
        }
    }
    Ok(())
}

/// A reader over the file's bytes that names what was being read when the
/// file ends early.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| {
            Error::invalid(format!(
                "witness file truncated: {what} needs {n} bytes at offset {}, the file has {}",
                self.pos,
                self.bytes.len()
            ))
        })?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes([
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
        ]))
    }

    fn count(&mut self, what: &str) -> Result<usize> {
        let n = self.u64(what)?;
        // Each counted item takes at least 32 bytes; a count beyond the file
        // is a corrupt file, not a reason to allocate.
        if n > (self.bytes.len() / 32) as u64 {
            return Err(Error::invalid(format!(
                "witness file corrupt: {what} is {n}, more than the file can hold"
            )));
        }
        Ok(n as usize)
    }

    fn words(&mut self, n: usize, what: &str) -> Result<Vec<u64>> {
        let raw = self.take(n * 8, what)?;
        Ok(raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect())
    }

    fn scalars(&mut self, n: usize, what: &str) -> Result<Vec<Fr>> {
        let start = self.pos;
        let raw = self.take(n * 32, what)?;
        raw.chunks_exact(32)
            .enumerate()
            .map(|(i, c)| {
                let bytes: &[u8; 32] = c.try_into().map_err(|_| Error::invalid("short scalar"))?;
                Fr::from_mont_bytes(bytes).ok_or_else(|| {
                    Error::invalid(format!(
                        "witness file: {what}[{i}] at offset {} is not below the field modulus",
                        start + 32 * i
                    ))
                })
            })
            .collect()
    }
}

/// Parses a witness file held in memory.
pub fn parse(bytes: &[u8]) -> Result<Vec<Witness>> {
    let mut cur = Cursor { bytes, pos: 0 };
    if cur.take(8, "magic")? != MAGIC {
        return Err(Error::invalid(
            "not a c2prover witness file (bad magic; expected C2PWIT01)",
        ));
    }
    let n = cur.count("n_circuits")?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let at = |field: &str| format!("circuit {i} {field}");
        let n_inputs = cur.count(&at("n_inputs"))?;
        let n_aux = cur.count(&at("n_aux"))?;
        let abc = cur.count(&at("abc_size"))?;
        let a_aux_density = cur.words(n_aux.div_ceil(64), &at("a_aux_density"))?;
        let b_inp_density = cur.words(n_inputs.div_ceil(64), &at("b_inp_density"))?;
        let b_aux_density = cur.words(n_aux.div_ceil(64), &at("b_aux_density"))?;
        out.push(Witness {
            a_aux_density,
            b_inp_density,
            b_aux_density,
            a: cur.scalars(abc, &at("a"))?,
            b: cur.scalars(abc, &at("b"))?,
            c: cur.scalars(abc, &at("c"))?,
            inputs: cur.scalars(n_inputs, &at("inputs"))?,
            aux: cur.scalars(n_aux, &at("aux"))?,
            products: None,
        });
    }
    if cur.pos != bytes.len() {
        return Err(Error::invalid(format!(
            "witness file has {} unexpected bytes after the last circuit",
            bytes.len() - cur.pos
        )));
    }
    Ok(out)
}

/// Reads a witness file from disk.
pub fn read(path: &std::path::Path) -> Result<Vec<Witness>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| Error::io(format!("cannot read witness file {}", path.display()), e))?;
    parse(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::synthetic::Circuit;

    #[test]
    fn round_trip_and_truncation() {
        let w = Circuit::porep_like(6, 9, 9).unwrap().witness();
        let mut bytes = Vec::new();
        write(&mut bytes, &[w.clone(), w.clone()]).unwrap();
        assert_eq!(parse(&bytes).unwrap(), vec![w.clone(), w]);
        for cut in [0, 7, 8, 20, bytes.len() / 2, bytes.len() - 1] {
            assert!(parse(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(parse(&extra).is_err());
        let mut unreduced = bytes.clone();
        let last = unreduced.len() - 32;
        unreduced[last..].fill(0xff);
        assert!(parse(&unreduced)
            .unwrap_err()
            .message
            .contains("not below the field modulus"));
    }
}
