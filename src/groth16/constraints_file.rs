//! A units circuit's constraints (`UnitConstraints`) as bytes, for a file
//! kept beside its parameters: recorded once, then loaded by every process
//! that proves the circuit.
//!
//! Layout, little-endian:
//!
//! | bytes | what |
//! |---|---|
//! | 8 | `MAGIC` |
//! | 4 | `VERSION` |
//! | 8 + n | the shape's name (what the rows stand for: circuit, parameters, units), UTF-8 |
//! | 8 | units |
//! | 3 × 8, 3 × 8 | the common part's and a unit's sizes: aux, inputs, constraints |
//! | 8 + 32 k | k coefficients, canonical little-endian |
//! | 3 × (8 + 4 s + 8 + 8 t) | per matrix A, B, C: s row starts, then t terms (variable, coefficient index) |
//! | 32 | SHA-256 of every byte before it |
//!
//! Loading checks the magic and version, then the digest (a damaged or cut
//! file), then the shape's name and sizes against those expected (before
//! anything is allocated from them), each count against the bytes left
//! before allocating for it, then what `UnitConstraints::new` checks of any
//! rows (every term within the one-unit circuit): a bad file is an error
//! saying what is wrong, never a crash. A file of another version or shape
//! is `Stale`: not wrong, only not this build's or this circuit's.

use super::constraints::{Matrix, Rows, Sizes, Term, UnitConstraints};
use crate::error::{Error, Result};
use crate::math::{sha256, Fr};

pub const MAGIC: &[u8; 8] = b"C2PR1CS\0";
/// Bumped whenever the layout or the rows' meaning changes; a file of
/// another version is not read.
pub const VERSION: u32 = 1;
const DIGEST: usize = 32;

/// The bytes of `constraints`, named by `shape`.
pub fn encode(constraints: &UnitConstraints, shape: &str) -> Vec<u8> {
    let (common, unit, units) = constraints.shape();
    let mut out = Vec::with_capacity(constraints.host_bytes() + 4096);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    put_u64(&mut out, shape.len());
    out.extend_from_slice(shape.as_bytes());
    put_u64(&mut out, units);
    for sizes in [common, unit] {
        for n in [sizes.aux, sizes.inputs, sizes.constraints] {
            put_u64(&mut out, n);
        }
    }
    put_u64(&mut out, constraints.coefficients().len());
    for c in constraints.coefficients() {
        out.extend_from_slice(&c.to_scalar_bytes());
    }
    for m in [Matrix::A, Matrix::B, Matrix::C] {
        let (starts, terms) = constraints.rows(m).parts();
        put_u64(&mut out, starts.len());
        out.extend(starts.iter().flat_map(|s| s.to_le_bytes()));
        put_u64(&mut out, terms.len());
        out.extend(terms.iter().flat_map(|t| {
            let [v, c] = [t.variable.to_le_bytes(), t.coefficient.to_le_bytes()];
            [v[0], v[1], v[2], v[3], c[0], c[1], c[2], c[3]]
        }));
    }
    let digest = sha256(&out);
    out.extend_from_slice(&digest);
    out
}

/// What a file must hold: the rows of `units` units named `shape`, whose
/// whole circuit has `aux` aux variables and `inputs` inputs (ONE
/// included) and at most `abc` entries of a, b, c (the parameters' sizes).
pub struct Expected<'a> {
    pub shape: &'a str,
    pub units: usize,
    pub aux: usize,
    pub inputs: usize,
    pub abc: usize,
}

/// What `decode` found.
#[derive(Debug)]
pub enum Decoded {
    Rows(Box<UnitConstraints>),
    /// A whole file of another version or of another shape (named): to be
    /// recorded anew.
    Stale(String),
}

/// The constraints in `bytes`, which must be a whole file of this version
/// holding what `expected` says. Errors say what is wrong (the caller names
/// the file).
pub fn decode(bytes: &[u8], expected: &Expected) -> Result<Decoded> {
    let body_len = bytes
        .len()
        .checked_sub(DIGEST)
        .filter(|&n| n >= MAGIC.len() + 4)
        .ok_or_else(|| {
            bad(format!(
                "{} bytes: too short to be a constraints file",
                bytes.len()
            ))
        })?;
    let (body, digest) = bytes.split_at(body_len);
    let mut r = Reader { bytes: body };
    if r.take(MAGIC.len())? != MAGIC {
        return Err(bad("not a constraints file (its first bytes are not C2PR1CS)"));
    }
    let version = r.u32()?;
    if version != VERSION {
        return Ok(Decoded::Stale(format!(
            "version {version}, this build's is {VERSION}"
        )));
    }
    if sha256(body) != digest {
        return Err(bad(
            "its SHA-256 does not match its contents (damaged or cut short)",
        ));
    }
    let named = r.count(1)?;
    let named = std::str::from_utf8(r.take(named)?).map_err(|_| bad("its shape's name is not UTF-8"))?;
    if named != expected.shape {
        return Ok(Decoded::Stale(format!("the constraints of {named}")));
    }
    let units = r.u64()?;
    let mut sizes = || -> Result<Sizes> {
        Ok(Sizes {
            aux: r.u64()?,
            inputs: r.u64()?,
            constraints: r.u64()?,
        })
    };
    let (common, unit) = (sizes()?, sizes()?);
    // The sizes the rows claim, against the parameters', before anything is
    // sized from them.
    let total = common.checked_plus(unit, units);
    let fits = total.is_some_and(|t| {
        t.aux == expected.aux
            && t.inputs == expected.inputs
            && t.constraints
                .checked_add(t.inputs)
                .is_some_and(|abc| abc <= expected.abc)
    });
    if units != expected.units || !fits {
        return Err(Error::size_mismatch(format!(
            "constraints of {units} units of {unit:?} and a common part of {common:?}, the parameters are for \
             {} units, {} aux and {} inputs in a domain of {}",
            expected.units, expected.aux, expected.inputs, expected.abc
        )));
    }
    let coefficients = (0..r.count(32)?)
        .map(|i| {
            let bytes: [u8; 32] = r
                .take(32)?
                .try_into()
                .map_err(|_| bad("a coefficient cut short"))?;
            Fr::from_canonical_bytes(&bytes).ok_or_else(|| bad(format!("coefficient {i} is not below r")))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut matrix = |m: usize| -> Result<Rows> {
        let starts = (0..r.count(4)?).map(|_| r.u32()).collect::<Result<Vec<_>>>()?;
        let terms = (0..r.count(8)?)
            .map(|_| {
                Ok(Term {
                    variable: r.u32()?,
                    coefficient: r.u32()?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Rows::from_parts(starts, terms).map_err(|e| bad(format!("matrix {m}: {}", e.message)))
    };
    let rows = [matrix(0)?, matrix(1)?, matrix(2)?];
    if !r.bytes.is_empty() {
        return Err(bad(format!("{} bytes past its last matrix", r.bytes.len())));
    }
    UnitConstraints::new(units, common, unit, coefficients, rows)
        .map(|rows| Decoded::Rows(Box::new(rows)))
        .map_err(|e| bad(e.message))
}

fn bad(message: impl Into<String>) -> Error {
    Error::params_format(message)
}

fn put_u64(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u64).to_le_bytes());
}

/// Reads the body front to back; every read checks the bytes left.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.bytes.len() {
            return Err(bad(format!(
                "cut short: {n} bytes wanted, {} left",
                self.bytes.len()
            )));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<usize> {
        let b = self.take(8)?;
        let n = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        usize::try_from(n).map_err(|_| bad(format!("a count of {n}")))
    }

    /// A count of items of `size` bytes each, which the bytes left must hold.
    fn count(&mut self, size: usize) -> Result<usize> {
        let n = self.u64()?;
        match n.checked_mul(size) {
            Some(bytes) if bytes <= self.bytes.len() => Ok(n),
            _ => Err(bad(format!(
                "a count of {n} items of {size} bytes, with {} bytes left",
                self.bytes.len()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn constraints() -> std::sync::Arc<UnitConstraints> {
        crate::testkit::synthetic::unit_constraints(3, 2, 11).unwrap().0
    }

    fn expected<'a>(c: &UnitConstraints, shape: &'a str) -> Expected<'a> {
        let total = c.total();
        Expected {
            shape,
            units: c.shape().2,
            aux: total.aux,
            inputs: total.inputs,
            abc: c.abc_len(),
        }
    }

    fn rows(d: Result<Decoded>) -> Result<UnitConstraints> {
        d.map(|d| match d {
            Decoded::Rows(rows) => *rows,
            Decoded::Stale(what) => panic!("stale: {what}"),
        })
    }

    #[test]
    fn constraints_come_back_from_their_bytes() {
        let c = constraints();
        let bytes = encode(&c, "shape");
        assert_eq!(rows(decode(&bytes, &expected(&c, "shape"))).unwrap(), *c);
    }

    #[test]
    fn a_file_of_another_version_or_shape_is_stale() {
        let c = constraints();
        let bytes = encode(&c, "shape");
        let stale = |bytes: &[u8], shape: &str| match decode(bytes, &expected(&c, shape)) {
            Ok(Decoded::Stale(what)) => what,
            other => panic!("{other:?}"),
        };
        assert!(stale(&bytes, "other").contains("constraints of shape"));
        let mut version = bytes.clone();
        version[8] = 9;
        assert!(stale(&version, "shape").contains("version 9"));
    }

    #[test]
    fn sizes_other_than_the_parameters_are_refused_before_anything_is_made_of_them() {
        let c = constraints();
        let bytes = encode(&c, "shape");
        for edit in [
            |e: &mut Expected| e.units += 1,
            |e: &mut Expected| e.aux -= 1,
            |e: &mut Expected| e.inputs += 1,
            |e: &mut Expected| e.abc -= 1,
        ] {
            let mut other = expected(&c, "shape");
            edit(&mut other);
            let e = decode(&bytes, &other).map(|_| ()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::SizeMismatch, "{}", e.message);
        }
    }

    #[test]
    fn a_bad_file_is_an_error_saying_what_is_wrong() {
        let c = constraints();
        let bytes = encode(&c, "shape");
        let error = |bytes: &[u8], shape: &str| {
            let e = rows(decode(bytes, &expected(&c, shape))).expect_err("a bad file is refused");
            assert!(matches!(
                e.kind,
                ErrorKind::ParamsFormat | ErrorKind::SizeMismatch
            ));
            e.message
        };
        assert!(error(&bytes[..bytes.len() - 1], "shape").contains("SHA-256"));
        assert!(error(&bytes[..60], "shape").contains("SHA-256"));
        assert!(error(&bytes[..3], "shape").contains("too short"));
        assert!(error(&[], "shape").contains("too short"));
        let mut flipped = bytes.clone();
        flipped[bytes.len() / 2] ^= 1;
        assert!(error(&flipped, "shape").contains("SHA-256"));
        let mut magic = bytes.clone();
        magic[0] = b'X';
        assert!(error(&magic, "shape").contains("not a constraints file"));
        // Well-formed bytes whose contents are wrong (their digest made
        // anew): caught by the counts and the rows' own checks.
        let with_digest = |mut body: Vec<u8>| {
            body.truncate(body.len() - DIGEST);
            let d = sha256(&body);
            body.extend_from_slice(&d);
            body
        };
        let units_at = MAGIC.len() + 4 + 8 + "shape".len();
        let mut units = bytes.clone();
        units[units_at..units_at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(error(&with_digest(units), "shape").contains("the parameters are for 3 units"));
        let coefficients_at = units_at + 8 + 48;
        let mut count = bytes.clone();
        count[coefficients_at..coefficients_at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(error(&with_digest(count), "shape").contains("items of 32 bytes"));
        let mut unreduced = bytes.clone();
        unreduced[coefficients_at + 8..coefficients_at + 40].fill(0xff);
        assert!(error(&with_digest(unreduced), "shape").contains("coefficient 0 is not below r"));
        let mut term = bytes.clone();
        let last_term = bytes.len() - DIGEST - 8;
        term[last_term..last_term + 4].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
        assert!(error(&with_digest(term), "shape").contains("outside the one-unit circuit"));
        let mut longer = bytes.clone();
        longer.splice(bytes.len() - DIGEST..bytes.len() - DIGEST, [0u8; 3]);
        assert!(error(&with_digest(longer), "shape").contains("3 bytes past"));
    }
}
