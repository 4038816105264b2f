//! Safe value types over blst's C arithmetic: the base field Fp, the groups
//! G1 and G2 (projective and affine), multi-scalar multiplication and the
//! pairing check (Fr is in `fr.rs`). Every call into blst happens in these
//! two files, so the rest of the crate is free of `unsafe`.
//!
//! Layouts are blst's own (`#[repr(transparent)]` over `blst_fr`,
//! `blst_p1_affine`, ...): Montgomery limbs, little-endian words, affine
//! infinity as all zeros. That is also the layout of blstrs and supraseal, so
//! caller memory can be viewed as these types without conversion.

use super::Fr;
use blst::*;
use std::ops::{Add, AddAssign, Mul, Neg, Sub};

/// An element of the base field Fp in Montgomery form, exactly blst's
/// `blst_fp` (six little-endian 64-bit limbs). Used to check the GPU's field
/// arithmetic against blst.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
#[repr(transparent)]
pub struct Fp(pub blst_fp);

impl Fp {
    /// Montgomery form of a canonical value given as six limbs (< p).
    pub fn from_canonical_limbs(limbs: &[u64; 6]) -> Fp {
        let mut out = blst_fp::default();
        // SAFETY: six readable limbs; valid output.
        unsafe { blst_fp_from_uint64(&mut out, limbs.as_ptr()) };
        Fp(out)
    }

    /// The canonical value of a Montgomery element, as six limbs.
    pub fn to_canonical_limbs(&self) -> [u64; 6] {
        let mut out = [0u64; 6];
        // SAFETY: valid input; six writable limbs.
        unsafe { blst_uint64_from_fp(out.as_mut_ptr(), &self.0) };
        out
    }

    pub fn square(&self) -> Fp {
        let mut out = blst_fp::default();
        // SAFETY: valid input and output.
        unsafe { blst_fp_sqr(&mut out, &self.0) };
        Fp(out)
    }
}

macro_rules! fp_binary_op {
    ($trait:ident, $method:ident, $blst:ident) => {
        impl $trait for Fp {
            type Output = Fp;
            fn $method(self, rhs: Fp) -> Fp {
                let mut out = blst_fp::default();
                // SAFETY: valid inputs and output.
                unsafe { $blst(&mut out, &self.0, &rhs.0) };
                Fp(out)
            }
        }
    };
}

fp_binary_op!(Add, add, blst_fp_add);
fp_binary_op!(Sub, sub, blst_fp_sub);
fp_binary_op!(Mul, mul, blst_fp_mul);

impl Neg for Fp {
    type Output = Fp;
    fn neg(self) -> Fp {
        Fp::default() - self
    }
}

impl Fp {
    pub fn is_zero(&self) -> bool {
        *self == Fp::default()
    }

    /// 1/self (0 for 0), in variable time: for public values only.
    pub fn inverse_vartime(&self) -> Fp {
        let mut out = blst_fp::default();
        // SAFETY: valid input and output.
        unsafe { blst_fp_eucl_inverse(&mut out, &self.0) };
        Fp(out)
    }
}

impl G1Affine {
    /// p[i] + q[i] for every i, in affine coordinates with one shared
    /// inversion (Montgomery's trick: ~6 products per sum instead of a
    /// Jacobian addition and a conversion back). Pairs with equal x (a
    /// doubling or a sum to infinity) and infinities take blst's complete
    /// addition. Variable time: for public points only.
    pub fn pairwise_sums(p: &[G1Affine], q: &[G1Affine]) -> Vec<G1Affine> {
        let x = |a: &G1Affine| Fp(a.0.x);
        let y = |a: &G1Affine| Fp(a.0.y);
        let general = |a: &G1Affine, b: &G1Affine| !a.is_identity() && !b.is_identity() && x(a) != x(b);
        // dx = x_q − x_p, and their running products (1 where not general).
        let dx: Vec<Fp> = p
            .iter()
            .zip(q)
            .map(|(a, b)| if general(a, b) { x(b) - x(a) } else { Fp::default() })
            .collect();
        let one = Fp::from_canonical_limbs(&[1, 0, 0, 0, 0, 0]);
        let mut prefix = Vec::with_capacity(dx.len());
        let mut acc = one;
        for d in &dx {
            prefix.push(acc);
            if !d.is_zero() {
                acc = acc * *d;
            }
        }
        // Backwards: inv holds 1/(product of dx[..=i]) before step i.
        let mut inv = acc.inverse_vartime();
        let mut out = vec![G1Affine::default(); p.len()];
        for i in (0..p.len()).rev() {
            let (a, b) = (&p[i], &q[i]);
            if dx[i].is_zero() {
                out[i] = a.to_projective().add_affine(b).to_affine();
                continue;
            }
            let dx_inv = inv * prefix[i];
            inv = inv * dx[i];
            let lambda = (y(b) - y(a)) * dx_inv;
            let x3 = lambda.square() - x(a) - x(b);
            let y3 = lambda * (x(a) - x3) - y(a);
            out[i] = G1Affine(blst_p1_affine { x: x3.0, y: y3.0 });
        }
        out
    }
}

/// Why a serialized point was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointError {
    /// Flag bits or a coordinate not below p.
    BadEncoding,
    NotOnCurve,
    NotInSubgroup,
}

impl std::fmt::Display for PointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PointError::BadEncoding => "bad encoding (flag bits or a coordinate not below p)",
            PointError::NotOnCurve => "point not on the curve",
            PointError::NotInSubgroup => "point not in the prime-order subgroup",
        })
    }
}

fn point_result(err: BLST_ERROR) -> Result<(), PointError> {
    match err {
        BLST_ERROR::BLST_SUCCESS => Ok(()),
        BLST_ERROR::BLST_POINT_NOT_ON_CURVE => Err(PointError::NotOnCurve),
        BLST_ERROR::BLST_POINT_NOT_IN_GROUP => Err(PointError::NotInSubgroup),
        _ => Err(PointError::BadEncoding),
    }
}

/// Defines a projective point type, its affine companion and their
/// operations for one of blst's two groups; G1 and G2 differ only in names
/// and sizes.
macro_rules! curve_group {
    (
        $proj:ident, $affine:ident, $blst:ty, $blst_affine:ty,
        uncompressed = $ulen:expr, compressed = $clen:expr,
        generator = $gen:ident, add = $add:ident, add_affine = $add_aff:ident,
        double = $dbl:ident, mult = $mult:ident, cneg = $cneg:ident,
        to_affine = $to_aff:ident, from_affine = $from_aff:ident,
        batch_to_affine = $batch:ident, is_inf = $is_inf:ident,
        affine_is_inf = $aff_is_inf:ident, is_equal = $is_eq:ident,
        in_group = $in_group:ident, deserialize = $deser:ident,
        serialize = $ser:ident, compress = $compress:ident,
        uncompress = $uncompress:ident, affines = $affines:ty
    ) => {
        /// A point in projective (Jacobian) coordinates.
        #[derive(Clone, Copy, Default, Debug)]
        #[repr(transparent)]
        pub struct $proj(pub $blst);

        /// A point in affine coordinates, Montgomery limbs; infinity is all zeros.
        #[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
        #[repr(transparent)]
        pub struct $affine(pub $blst_affine);

        impl $proj {
            /// Size of the uncompressed big-endian encoding (bellperson's file form).
            pub const UNCOMPRESSED_BYTES: usize = $ulen;
            /// Size of the compressed encoding (bellperson's proof form).
            pub const COMPRESSED_BYTES: usize = $clen;

            pub fn identity() -> Self {
                Self::default()
            }

            pub fn generator() -> Self {
                // SAFETY: blst returns a pointer to a static constant.
                Self(unsafe { *$gen() })
            }

            pub fn is_identity(&self) -> bool {
                // SAFETY: valid point.
                unsafe { $is_inf(&self.0) }
            }

            pub fn double(&self) -> Self {
                let mut out = <$blst>::default();
                // SAFETY: valid input and output.
                unsafe { $dbl(&mut out, &self.0) };
                Self(out)
            }

            pub fn add_affine(&self, rhs: &$affine) -> Self {
                let mut out = <$blst>::default();
                // SAFETY: valid inputs and output; handles doubling and infinity.
                unsafe { $add_aff(&mut out, &self.0, &rhs.0) };
                Self(out)
            }

            /// Multiplication by a scalar in constant time (safe for the
            /// secret r and s).
            /// The scalar's bytes are zeroed after.
            pub fn mul(&self, k: &Fr) -> Self {
                let mut bytes = k.to_scalar_bytes();
                let mut out = <$blst>::default();
                // SAFETY: `bytes` holds 255 bits little-endian as blst expects.
                unsafe { $mult(&mut out, &self.0, bytes.as_ptr(), 255) };
                zeroize::Zeroize::zeroize(&mut bytes);
                Self(out)
            }

            pub fn to_affine(&self) -> $affine {
                let mut out = <$blst_affine>::default();
                // SAFETY: valid input and output.
                unsafe { $to_aff(&mut out, &self.0) };
                $affine(out)
            }

            /// Converts many points at once with one shared inversion.
            pub fn batch_to_affine(points: &[Self]) -> Vec<$affine> {
                let mut out = vec![$affine::default(); points.len()];
                if points.is_empty() {
                    return out;
                }
                let ptrs: [*const $blst; 2] = [&points[0].0, std::ptr::null()];
                // SAFETY: `points` is a contiguous array of `points.len()`
                // blst points (repr(transparent)) and `out` has room for as many.
                unsafe { $batch(&mut out[0].0, ptrs.as_ptr(), points.len()) };
                out
            }
        }

        impl PartialEq for $proj {
            fn eq(&self, other: &Self) -> bool {
                // SAFETY: valid inputs.
                unsafe { $is_eq(&self.0, &other.0) }
            }
        }
        impl Eq for $proj {}

        impl Add for $proj {
            type Output = Self;
            fn add(self, rhs: Self) -> Self {
                let mut out = <$blst>::default();
                // SAFETY: valid inputs and output; handles doubling and infinity.
                unsafe { $add(&mut out, &self.0, &rhs.0) };
                Self(out)
            }
        }

        impl AddAssign for $proj {
            fn add_assign(&mut self, rhs: Self) {
                *self = *self + rhs;
            }
        }

        impl Neg for $proj {
            type Output = Self;
            fn neg(self) -> Self {
                let mut out = self;
                // SAFETY: valid point, negated in place.
                unsafe { $cneg(&mut out.0, true) };
                out
            }
        }

        impl $affine {
            pub fn identity() -> Self {
                Self::default()
            }

            pub fn is_identity(&self) -> bool {
                // SAFETY: valid point.
                unsafe { $aff_is_inf(&self.0) }
            }

            pub fn to_projective(&self) -> $proj {
                let mut out = <$blst>::default();
                // SAFETY: valid input and output.
                unsafe { $from_aff(&mut out, &self.0) };
                $proj(out)
            }

            pub fn in_subgroup(&self) -> bool {
                // SAFETY: valid point.
                unsafe { $in_group(&self.0) }
            }

            /// Parses bellperson's uncompressed big-endian encoding: flag bits,
            /// coordinates below p and the curve equation are checked; the
            /// subgroup is not (see `in_subgroup`).
            pub fn from_uncompressed(bytes: &[u8]) -> Result<Self, PointError> {
                // blst would read a compressed point from the first half of the
                // slot; bellperson's files hold only uncompressed points.
                if bytes.len() != $ulen || bytes[0] & 0x80 != 0 {
                    return Err(PointError::BadEncoding);
                }
                let mut out = <$blst_affine>::default();
                // SAFETY: `bytes` is exactly the encoded length blst reads.
                let err = unsafe { $deser(&mut out, bytes.as_ptr()) };
                point_result(err).map(|()| Self(out))
            }

            pub fn to_uncompressed(&self) -> [u8; $ulen] {
                let mut out = [0u8; $ulen];
                let p = self.to_projective();
                // SAFETY: `out` has the encoded length blst writes.
                unsafe { $ser(out.as_mut_ptr(), &p.0) };
                out
            }

            /// The compressed (zcash-flag) encoding bellperson writes in proofs.
            pub fn to_compressed(&self) -> [u8; $clen] {
                let mut out = [0u8; $clen];
                let p = self.to_projective();
                // SAFETY: `out` has the encoded length blst writes.
                unsafe { $compress(out.as_mut_ptr(), &p.0) };
                out
            }

            /// Parses a compressed point and checks it is in the subgroup.
            pub fn from_compressed(bytes: &[u8]) -> Result<Self, PointError> {
                if bytes.len() != $clen {
                    return Err(PointError::BadEncoding);
                }
                let p = Self::from_compressed_unchecked(bytes)?;
                if p.in_subgroup() {
                    Ok(p)
                } else {
                    Err(PointError::NotInSubgroup)
                }
            }

            /// Parses a compressed point checking only that it is on the curve
            /// (for tests that need points outside the subgroup).
            pub fn from_compressed_unchecked(bytes: &[u8]) -> Result<Self, PointError> {
                if bytes.len() != $clen {
                    return Err(PointError::BadEncoding);
                }
                let mut out = <$blst_affine>::default();
                // SAFETY: `bytes` is exactly the encoded length blst reads.
                let err = unsafe { $uncompress(&mut out, bytes.as_ptr()) };
                point_result(err).map(|()| Self(out))
            }

            /// Σ points, with blst's batched affine additions (parallel).
            pub fn sum(points: &[Self]) -> $proj {
                if points.is_empty() {
                    return $proj::identity();
                }
                $proj(<$affines as MultiPoint>::add(Self::as_blst(points)))
            }

            /// Σ scalars[i]·points[i] with blst's parallel Pippenger.
            /// `scalars` holds 32-byte canonical little-endian scalars.
            pub fn msm(points: &[Self], scalars: &[[u8; 32]]) -> $proj {
                let n = points.len().min(scalars.len());
                if n == 0 {
                    return $proj::identity();
                }
                let bytes = scalars[..n].as_flattened();
                $proj(<$affines as MultiPoint>::mult(
                    Self::as_blst(&points[..n]),
                    bytes,
                    255,
                ))
            }

            fn as_blst(points: &[Self]) -> &[$blst_affine] {
                // SAFETY: `Self` is repr(transparent) over the blst type, so
                // the slice has the same layout, length and lifetime.
                unsafe { std::slice::from_raw_parts(points.as_ptr().cast(), points.len()) }
            }
        }
    };
}

curve_group!(
    G1,
    G1Affine,
    blst_p1,
    blst_p1_affine,
    uncompressed = 96,
    compressed = 48,
    generator = blst_p1_generator,
    add = blst_p1_add_or_double,
    add_affine = blst_p1_add_or_double_affine,
    double = blst_p1_double,
    mult = blst_p1_mult,
    cneg = blst_p1_cneg,
    to_affine = blst_p1_to_affine,
    from_affine = blst_p1_from_affine,
    batch_to_affine = blst_p1s_to_affine,
    is_inf = blst_p1_is_inf,
    affine_is_inf = blst_p1_affine_is_inf,
    is_equal = blst_p1_is_equal,
    in_group = blst_p1_affine_in_g1,
    deserialize = blst_p1_deserialize,
    serialize = blst_p1_serialize,
    compress = blst_p1_compress,
    uncompress = blst_p1_uncompress,
    affines = [blst_p1_affine]
);

curve_group!(
    G2,
    G2Affine,
    blst_p2,
    blst_p2_affine,
    uncompressed = 192,
    compressed = 96,
    generator = blst_p2_generator,
    add = blst_p2_add_or_double,
    add_affine = blst_p2_add_or_double_affine,
    double = blst_p2_double,
    mult = blst_p2_mult,
    cneg = blst_p2_cneg,
    to_affine = blst_p2_to_affine,
    from_affine = blst_p2_from_affine,
    batch_to_affine = blst_p2s_to_affine,
    is_inf = blst_p2_is_inf,
    affine_is_inf = blst_p2_affine_is_inf,
    is_equal = blst_p2_is_equal,
    in_group = blst_p2_affine_in_g2,
    deserialize = blst_p2_deserialize,
    serialize = blst_p2_serialize,
    compress = blst_p2_compress,
    uncompress = blst_p2_uncompress,
    affines = [blst_p2_affine]
);

/// An element of the pairing target group Fp12 (before or after the final
/// exponentiation).
#[derive(Clone, Copy)]
pub struct Gt(blst_fp12);

impl Gt {
    /// Π e(p_i, q_i): one shared Miller loop per pair, one final exponentiation.
    pub fn pairing_product(pairs: &[(G1Affine, G2Affine)]) -> Gt {
        // SAFETY: blst returns a pointer to a static constant.
        let mut acc = unsafe { *blst_fp12_one() };
        for (p, q) in pairs {
            if p.is_identity() || q.is_identity() {
                continue; // e(O, Q) = e(P, O) = 1
            }
            // SAFETY: the output is a valid uninitialised-free local; inputs valid.
            let mut ml = unsafe { *blst_fp12_one() };
            // SAFETY: valid affine points on their curves.
            unsafe {
                blst_miller_loop(&mut ml, &q.0, &p.0);
                blst_fp12_mul(&mut acc, &acc, &ml);
            }
        }
        let mut out = acc;
        // SAFETY: valid input and output.
        unsafe { blst_final_exp(&mut out, &acc) };
        Gt(out)
    }
}

impl PartialEq for Gt {
    fn eq(&self, other: &Self) -> bool {
        // SAFETY: valid inputs.
        unsafe { blst_fp12_is_equal(&self.0, &other.0) }
    }
}

/// The SHA-256 digest of `bytes` (blst's, with the CPU's SHA extensions
/// where it has them): the checksum of files this crate writes.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut digest = [0u8; 32];
    // SAFETY: `digest` is 32 writable bytes; `bytes` is readable for its length.
    unsafe { blst_sha256(digest.as_mut_ptr(), bytes.as_ptr(), bytes.len()) };
    digest
}
