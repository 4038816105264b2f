//! The CPU backend: MSMs with blst's Pippenger and the H polynomial (its
//! NTTs are the domain's, in `math`). It is the fallback where no GPU is present and the reference
//! every GPU kernel is checked against.

pub mod h;
pub mod msm;
