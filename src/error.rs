//! One error type for the crate: a stable kind (it becomes the C status code)
//! and a message that says what is wrong and where.

use std::fmt;

/// What went wrong; the numbers are the C ABI status codes and never change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorKind {
    NullPointer = 1,
    InvalidArgument = 2,
    Io = 3,
    ParamsFormat = 4,
    SizeMismatch = 5,
    OutOfMemory = 6,
    Gpu = 7,
    Busy = 8,
    Cancelled = 9,
    BadState = 10,
    Panic = 11,
    Unsupported = 12,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    /// Witness value `circuits[circuit].vector[index]` is not below the
    /// field modulus.
    pub fn unreduced(circuit: usize, vector: &str, index: usize) -> Error {
        Error::invalid(format!(
            "circuits[{circuit}].{vector}[{index}] is not below the field modulus"
        ))
    }

    pub fn size_mismatch(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::SizeMismatch, message)
    }

    pub fn params_format(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::ParamsFormat, message)
    }

    pub fn io(context: impl fmt::Display, err: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, format!("{context}: {err}"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
