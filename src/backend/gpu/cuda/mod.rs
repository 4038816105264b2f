//! The CUDA backend: safe wrappers over the `extern "C"` entry points that
//! `cuda/include/c2p_cuda.h` declares (`sys`). Every call returns a CUDA
//! status that becomes an `Error` (`OutOfMemory` for allocation failures,
//! `Gpu` otherwise) with the message the CUDA side recorded.

mod buffers;
mod device;
mod ops;
mod products;
mod quotient;
mod sys;

pub use buffers::*;
pub use device::*;
pub use ops::*;
pub use products::*;
pub use quotient::*;
