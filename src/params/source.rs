//! What the loader reads a parameters file through: positional reads of
//! the open file (never a memory map: a file that shrinks, or a disk that
//! fails, during a load is an I/O error and not a SIGBUS in the caller's
//! process), or bytes already in memory.

use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Bytes the loader can read at any offset, from any thread.
pub trait Source: Sync {
    /// Bytes in the source when it was opened.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fills `buf` with the bytes from `offset` on.
    fn read_at(&self, offset: usize, buf: &mut [u8]) -> Result<()>;

    /// `len` bytes from `offset` on.
    fn bytes_at(&self, offset: usize, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0; len];
        self.read_at(offset, &mut buf)?;
        Ok(buf)
    }
}

impl Source for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }

    fn read_at(&self, offset: usize, buf: &mut [u8]) -> Result<()> {
        let bytes = offset
            .checked_add(buf.len())
            .and_then(|end| self.get(offset..end))
            .ok_or_else(|| {
                Error::params_format(format!(
                    "{} bytes at offset {offset} of {} are past the end",
                    buf.len(),
                    <[u8]>::len(self)
                ))
            })?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

/// A parameters file read with `pread`, its length as it was opened.
pub struct FileSource {
    file: File,
    len: usize,
    path: PathBuf,
}

impl FileSource {
    pub fn open(path: &Path) -> Result<FileSource> {
        let file = File::open(path)
            .map_err(|e| Error::io(format!("cannot open parameters file {}", path.display()), e))?;
        let len = file
            .metadata()
            .map_err(|e| Error::io(format!("cannot stat parameters file {}", path.display()), e))?
            .len();
        let len = usize::try_from(len)
            .map_err(|_| Error::params_format(format!("parameters file {} is too large", path.display())))?;
        Ok(FileSource {
            file,
            len,
            path: path.to_path_buf(),
        })
    }
}

impl Source for FileSource {
    fn len(&self) -> usize {
        self.len
    }

    fn read_at(&self, offset: usize, buf: &mut [u8]) -> Result<()> {
        self.file.read_exact_at(buf, offset as u64).map_err(|e| {
            let what = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                format!(
                    "parameters file {} ended before offset {} while loading (it was {} bytes when opened: \
                     truncated or replaced during the load?)",
                    self.path.display(),
                    offset + buf.len(),
                    self.len
                )
            } else {
                format!(
                    "cannot read parameters file {} at offset {offset}",
                    self.path.display()
                )
            };
            Error::io(what, e)
        })
    }
}
