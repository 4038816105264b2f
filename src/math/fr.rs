//! The scalar field Fr over blst's `blst_fr` (Montgomery form, the layout of
//! blstrs and supraseal): arithmetic, conversions, inversion and powers.

use blst::*;
use std::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// The BLS12-381 scalar field modulus r, little-endian 64-bit limbs.
pub const FR_MODULUS: [u64; 4] = [
    0xffff_ffff_0000_0001,
    0x53bd_a402_fffe_5bfe,
    0x3339_d808_09a1_d805,
    0x73ed_a753_299d_7d48,
];

/// An element of Fr in Montgomery form, exactly blst's `blst_fr`.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
#[repr(transparent)]
pub struct Fr(pub blst_fr);

/// Zeroing for the secret r and s (and their products) once a proof no
/// longer needs them.
impl zeroize::Zeroize for Fr {
    fn zeroize(&mut self) {
        self.0.l.zeroize();
    }
}

impl Fr {
    pub const ZERO: Fr = Fr(blst_fr { l: [0; 4] });
    /// R mod r: the Montgomery form of one.
    pub const ONE: Fr = Fr(blst_fr {
        l: [
            0x0000_0001_ffff_fffe,
            0x5884_b7fa_0003_4802,
            0x998c_4fef_ecbc_4ff5,
            0x1824_b159_acc5_056f,
        ],
    });

    pub fn from_u64(v: u64) -> Fr {
        let mut out = blst_fr::default();
        let limbs = [v, 0, 0, 0];
        // SAFETY: both pointers are valid for four limbs.
        unsafe { blst_fr_from_uint64(&mut out, limbs.as_ptr()) };
        Fr(out)
    }

    /// Reduces 64 uniformly random bytes modulo r (bias below 2^-128).
    pub fn from_uniform_bytes(bytes: &[u8; 64]) -> Fr {
        let mut scalar = blst_scalar::default();
        let mut out = blst_fr::default();
        // SAFETY: `bytes` is 64 readable bytes; outputs are valid locals.
        unsafe {
            blst_scalar_from_le_bytes(&mut scalar, bytes.as_ptr(), bytes.len());
            blst_fr_from_scalar(&mut out, &scalar);
        }
        Fr(out)
    }

    /// A uniformly random element (64 random bytes reduced mod r).
    pub fn random<R: rand_core::RngCore + ?Sized>(rng: &mut R) -> Fr {
        let mut bytes = [0u8; 64];
        rng.fill_bytes(&mut bytes);
        Fr::from_uniform_bytes(&bytes)
    }

    /// Montgomery limbs as 32 little-endian bytes (the wire form of the witness).
    pub fn to_mont_bytes(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (chunk, limb) in out.chunks_exact_mut(8).zip(self.0.l.iter()) {
            chunk.copy_from_slice(&limb.to_le_bytes());
        }
        out
    }

    /// Reads Montgomery limbs; `None` when the limbs are not below r.
    pub fn from_mont_bytes(bytes: &[u8; 32]) -> Option<Fr> {
        let mut l = [0u64; 4];
        for (limb, chunk) in l.iter_mut().zip(bytes.chunks_exact(8)) {
            *limb = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        }
        let fr = Fr(blst_fr { l });
        fr.is_reduced().then_some(fr)
    }

    /// Reads a canonical little-endian value; `None` when it is not below r.
    pub fn from_canonical_bytes(bytes: &[u8; 32]) -> Option<Fr> {
        let mut scalar = blst_scalar::default();
        let mut out = blst_fr::default();
        // SAFETY: `bytes` is 32 readable bytes; outputs are valid locals.
        let reduced = unsafe {
            blst_scalar_from_lendian(&mut scalar, bytes.as_ptr());
            blst_scalar_fr_check(&scalar)
        };
        if !reduced {
            return None;
        }
        // SAFETY: valid input and output.
        unsafe { blst_fr_from_scalar(&mut out, &scalar) };
        Some(Fr(out))
    }

    /// Reads limbs that hold a canonical integer (not Montgomery form) and
    /// converts them to Montgomery form; the caller has checked they are
    /// below r.
    pub fn from_canonical_limbs(raw: &Fr) -> Fr {
        let mut out = blst_fr::default();
        // SAFETY: `raw.0.l` is four readable limbs; the output is a valid local.
        unsafe { blst_fr_from_uint64(&mut out, raw.0.l.as_ptr()) };
        Fr(out)
    }

    /// Views caller memory of four-limb elements as `Fr`s.
    pub fn slice_from_limbs(limbs: &[[u64; 4]]) -> &[Fr] {
        // SAFETY: `Fr` is repr(transparent) over `blst_fr`, which is
        // repr(C) holding exactly `[u64; 4]`: same size, alignment and
        // layout; the length and lifetime are carried over.
        unsafe { std::slice::from_raw_parts(limbs.as_ptr().cast(), limbs.len()) }
    }

    /// True when the limbs are a canonical residue (below the modulus).
    pub fn is_reduced(&self) -> bool {
        for i in (0..4).rev() {
            if self.0.l[i] != FR_MODULUS[i] {
                return self.0.l[i] < FR_MODULUS[i];
            }
        }
        false
    }

    /// The canonical (non-Montgomery) value as little-endian bytes, the
    /// scalar encoding blst's multiplications take.
    pub fn to_scalar_bytes(&self) -> [u8; 32] {
        let mut scalar = blst_scalar::default();
        // SAFETY: valid input and output.
        unsafe { blst_scalar_from_fr(&mut scalar, &self.0) };
        scalar.b
    }

    pub fn is_zero(&self) -> bool {
        self.0.l == [0; 4]
    }

    pub fn is_one(&self) -> bool {
        self.0.l == Fr::ONE.0.l
    }

    pub fn square(&self) -> Fr {
        let mut out = blst_fr::default();
        // SAFETY: valid input and output.
        unsafe { blst_fr_sqr(&mut out, &self.0) };
        Fr(out)
    }

    /// The multiplicative inverse; zero maps to zero.
    pub fn inverse(&self) -> Fr {
        let mut out = blst_fr::default();
        // SAFETY: valid input and output.
        unsafe { blst_fr_eucl_inverse(&mut out, &self.0) };
        Fr(out)
    }

    /// self^e by square-and-multiply (public exponents only: not constant time).
    pub fn pow(&self, e: u64) -> Fr {
        let mut acc = Fr::ONE;
        for bit in (0..64).rev() {
            acc = acc.square();
            if (e >> bit) & 1 == 1 {
                acc *= *self;
            }
        }
        acc
    }

    /// Cooley-Tukey butterfly: (x0, x1) <- (x0 + w·x1, x0 - w·x1).
    #[inline]
    pub fn butterfly_ct(x0: &mut Fr, x1: &mut Fr, w: &Fr) {
        // SAFETY: three distinct valid elements.
        unsafe { blst_fr_ct_bfly(&mut x0.0, &mut x1.0, &w.0) };
    }

    /// Gentleman-Sande butterfly: (x0, x1) <- (x0 + x1, (x0 - x1)·w).
    #[inline]
    pub fn butterfly_gs(x0: &mut Fr, x1: &mut Fr, w: &Fr) {
        // SAFETY: three distinct valid elements.
        unsafe { blst_fr_gs_bfly(&mut x0.0, &mut x1.0, &w.0) };
    }
}

impl Add for Fr {
    type Output = Fr;
    #[inline]
    fn add(self, rhs: Fr) -> Fr {
        let mut out = blst_fr::default();
        // SAFETY: valid inputs and output.
        unsafe { blst_fr_add(&mut out, &self.0, &rhs.0) };
        Fr(out)
    }
}

impl Sub for Fr {
    type Output = Fr;
    #[inline]
    fn sub(self, rhs: Fr) -> Fr {
        let mut out = blst_fr::default();
        // SAFETY: valid inputs and output.
        unsafe { blst_fr_sub(&mut out, &self.0, &rhs.0) };
        Fr(out)
    }
}

impl Mul for Fr {
    type Output = Fr;
    #[inline]
    fn mul(self, rhs: Fr) -> Fr {
        let mut out = blst_fr::default();
        // SAFETY: valid inputs and output.
        unsafe { blst_fr_mul(&mut out, &self.0, &rhs.0) };
        Fr(out)
    }
}

impl Neg for Fr {
    type Output = Fr;
    fn neg(self) -> Fr {
        Fr::ZERO - self
    }
}

impl AddAssign for Fr {
    #[inline]
    fn add_assign(&mut self, rhs: Fr) {
        *self = *self + rhs;
    }
}

impl SubAssign for Fr {
    #[inline]
    fn sub_assign(&mut self, rhs: Fr) {
        *self = *self - rhs;
    }
}

impl MulAssign for Fr {
    #[inline]
    fn mul_assign(&mut self, rhs: Fr) {
        *self = *self * rhs;
    }
}
