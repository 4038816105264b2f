//! A Groth16 proof and its two encodings: bellperson's 192-byte compressed
//! form (`Proof::write`), and the 384-byte raw affine form supraseal writes
//! (blst's in-memory Montgomery limbs, G1 then G2 then G1).

use crate::error::{Error, Result};
use crate::math::{G1Affine, G2Affine, PointError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub a: G1Affine,
    pub b: G2Affine,
    pub c: G1Affine,
}

impl Proof {
    /// Size of the compressed encoding.
    pub const COMPRESSED_BYTES: usize = 192;
    /// Size of the raw affine encoding.
    pub const RAW_BYTES: usize = 384;

    /// bellperson's `Proof::write`: A (48 B), B (96 B), C (48 B), compressed
    /// with the zcash flag bits.
    pub fn to_compressed(&self) -> [u8; 192] {
        let mut out = [0u8; 192];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    /// Parses a compressed proof; every point must be on its curve and in
    /// the prime-order subgroup.
    pub fn from_compressed(bytes: &[u8]) -> Result<Proof> {
        if bytes.len() != Self::COMPRESSED_BYTES {
            return Err(Error::size_mismatch(format!(
                "a compressed proof is 192 bytes, got {}",
                bytes.len()
            )));
        }
        let bad = |which: &str, e: PointError| Error::invalid(format!("proof point {which}: {e}"));
        Ok(Proof {
            a: G1Affine::from_compressed(&bytes[..48]).map_err(|e| bad("A", e))?,
            b: G2Affine::from_compressed(&bytes[48..144]).map_err(|e| bad("B", e))?,
            c: G1Affine::from_compressed(&bytes[144..]).map_err(|e| bad("C", e))?,
        })
    }

    /// The raw form: each coordinate's Montgomery limbs, little-endian, in
    /// blst's struct order (x then y; Fp2 as c0 then c1).
    pub fn to_raw(&self) -> [u8; 384] {
        let mut limbs: Vec<u64> = Vec::with_capacity(48);
        limbs.extend_from_slice(&self.a.0.x.l);
        limbs.extend_from_slice(&self.a.0.y.l);
        for fp in self.b.0.x.fp.iter().chain(self.b.0.y.fp.iter()) {
            limbs.extend_from_slice(&fp.l);
        }
        limbs.extend_from_slice(&self.c.0.x.l);
        limbs.extend_from_slice(&self.c.0.y.l);
        let mut out = [0u8; 384];
        for (chunk, limb) in out.chunks_exact_mut(8).zip(limbs) {
            chunk.copy_from_slice(&limb.to_le_bytes());
        }
        out
    }
}
