//! The CPU backend: NTTs with rayon, MSMs with blst's Pippenger, and the H
//! polynomial. It is the fallback where no GPU is present and the reference
//! every GPU kernel is checked against.

pub mod h;
pub mod msm;
pub mod ntt;
