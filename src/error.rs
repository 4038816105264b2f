//! One error type for the crate: a stable kind (it becomes the C status code)
//! and a message that says what is wrong and where.

use std::fmt;

// The one list of the C API's status codes: cbindgen writes it into the
// header as `enum C2P_ERR` (cbindgen.toml), `c2p_status_name` and the
// supraseal errno mapping derive from it, and Go takes the header's names.

/// The status of a failed call (`C2P_OK`, 0, is success). The numbers never
/// change and are never reused.
/// cbindgen:prefix-with-name
/// cbindgen:rename-all=ScreamingSnakeCase
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorKind {
    /// A required pointer argument was NULL.
    NullPointer = 1,
    /// An argument is out of range or inconsistent (zero circuits, r without s, ...).
    InvalidArgument = 2,
    /// A file could not be opened or read (or shrank while it was read).
    Io = 3,
    /// A parameters file is malformed (truncated, corrupted, inconsistent counts, bad points).
    ParamsFormat = 4,
    /// Lengths disagree: witness against parameters, bitmaps against bit lengths, output buffers.
    SizeMismatch = 5,
    /// Memory (host or device, or the device budget) or a thread could not be obtained.
    OutOfMemory = 6,
    /// A GPU call failed; the message carries the CUDA error.
    Gpu = 7,
    /// The memory budget is full and the options asked not to wait.
    Busy = 8,
    /// The job was cancelled before it finished.
    Cancelled = 9,
    /// A handle is unknown: already freed, already finished, or never valid.
    BadState = 10,
    /// An internal error (a Rust panic) was caught at the boundary.
    Panic = 11,
    /// The request needs something this build or machine lacks.
    Unsupported = 12,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl ErrorKind {
    /// Every kind, in code order (1, 2, ...).
    pub const ALL: [ErrorKind; 12] = [
        ErrorKind::NullPointer,
        ErrorKind::InvalidArgument,
        ErrorKind::Io,
        ErrorKind::ParamsFormat,
        ErrorKind::SizeMismatch,
        ErrorKind::OutOfMemory,
        ErrorKind::Gpu,
        ErrorKind::Busy,
        ErrorKind::Cancelled,
        ErrorKind::BadState,
        ErrorKind::Panic,
        ErrorKind::Unsupported,
    ];

    /// The C status code.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The kind of C status `code`, if it is one.
    pub fn from_code(code: i32) -> Option<ErrorKind> {
        ErrorKind::ALL
            .get(usize::try_from(code).ok()?.checked_sub(1)?)
            .copied()
    }

    /// The C name: "C2P_ERR_" and the variant's name in capitals, words
    /// split at its capitals ("C2P_ERR_NULL_POINTER"), as the header spells it.
    pub fn c_name(self) -> String {
        let mut name = String::from("C2P_ERR");
        for c in format!("{self:?}").chars() {
            if c.is_ascii_uppercase() {
                name.push('_');
            }
            name.push(c.to_ascii_uppercase());
        }
        name
    }
}

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

/// The text of a panic payload (a `&str` or a `String`; anything else is
/// reported generically).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic payload".into());
    format!("internal error (panic): {text}")
}

#[cfg(test)]
mod tests {
    use super::ErrorKind;

    #[test]
    fn every_kind_is_listed_in_code_order() {
        for (i, kind) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(kind.code(), i as i32 + 1, "{kind:?}");
            assert_eq!(ErrorKind::from_code(kind.code()), Some(*kind));
        }
        assert_eq!(ErrorKind::from_code(0), None);
        assert_eq!(ErrorKind::from_code(13), None);
        assert_eq!(ErrorKind::from_code(-1), None);
    }

    #[test]
    fn c_names_are_the_headers() {
        assert_eq!(ErrorKind::NullPointer.c_name(), "C2P_ERR_NULL_POINTER");
        assert_eq!(ErrorKind::Io.c_name(), "C2P_ERR_IO");
        assert_eq!(ErrorKind::Gpu.c_name(), "C2P_ERR_GPU");
        let header = include_str!("../include/c2prover.h");
        for kind in ErrorKind::ALL {
            let line = format!("{} = {},", kind.c_name(), kind.code());
            assert!(header.contains(&line), "the header has `{line}`");
        }
    }
}
