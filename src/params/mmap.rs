//! A read-only memory map of a file, so the parameter decoder can read the
//! 47 GB PoRep file in parallel without a second copy in our heap.

use std::fs::File;
use std::io;
use std::ops::Deref;

pub struct MappedFile {
    map: Option<memmap2::Mmap>,
}

impl MappedFile {
    /// Maps the whole file read-only. An empty file maps to an empty slice
    /// (mapping zero bytes is an error on Linux).
    pub fn open(file: &File) -> io::Result<MappedFile> {
        if file.metadata()?.len() == 0 {
            return Ok(MappedFile { map: None });
        }
        // SAFETY: the mapping is read-only and private to this process. If
        // another process truncates the file while it is mapped, reads past
        // the new end raise SIGBUS; parameter files are written once and
        // never modified in place, which is the documented contract.
        let map = unsafe { memmap2::MmapOptions::new().map(file)? };
        // The loader reads the map front to back from one thread while others
        // decode: sequential advice lets the kernel read ahead in large steps.
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(MappedFile { map: Some(map) })
    }
}

impl Deref for MappedFile {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}
