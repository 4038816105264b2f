//! Groth16 parameters (the SRS): bellperson's file format, read with
//! positional reads and decoded in parallel as it is read, and a small
//! cache keyed by path.
//!
//! Memory: a loaded `Parameters` holds the decoded points on the host, the
//! same size as the file (96 bytes per G1 point, 192 per G2 point); while
//! loading, `READ_AHEAD` + 2 blocks of `BLOCK_BYTES` more.

mod cache;
pub mod format;
pub mod source;

pub use cache::{evict_cached, load_cached};

use crate::error::{Error, ErrorKind, Result};
use crate::math::{G1Affine, G2Affine, PointError};
use format::{Group, Layout, Section, VK_HEAD_BYTES, VK_POINTS};
use once_cell::sync::OnceCell;
use rayon::prelude::*;
use source::{FileSource, Source};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// How much checking a load does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Check every point is in the prime-order subgroup (costly on 47 GB:
    /// a scalar multiplication per point). Counts, sizes, flag bits and the
    /// curve equation are always checked.
    pub check_subgroup: bool,
    /// Whether the points live on the GPU (see `Residency`).
    pub residency: crate::config::Residency,
}

/// The verifying key: what `verify` needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    pub alpha_g1: G1Affine,
    pub beta_g1: G1Affine,
    pub beta_g2: G2Affine,
    pub gamma_g2: G2Affine,
    pub delta_g1: G1Affine,
    pub delta_g2: G2Affine,
    /// One point per public input, ONE first.
    pub ic: Vec<G1Affine>,
}

/// Proving parameters, exactly the vectors of bellperson's `Parameters`,
/// and how they are to be used. The point vectors are not resized once
/// made: layers above may hold their memory locked while `id` lives.
#[derive(Clone, Debug)]
pub struct Parameters {
    /// This parameter set's identity, for what layers above keep beside it
    /// (the GPU copies of its points, the page locks on them). First, so
    /// that it is dropped first: those layers let go before the vectors
    /// are freed.
    pub id: ParamsId,
    pub vk: VerifyingKey,
    /// τ^i·Z(τ)/δ for i < domain − 1.
    pub h: Vec<G1Affine>,
    /// One per aux variable.
    pub l: Vec<G1Affine>,
    /// All inputs, then the aux variables with A-density.
    pub a: Vec<G1Affine>,
    /// Inputs with B-density, then aux with B-density.
    pub b_g1: Vec<G1Affine>,
    pub b_g2: Vec<G2Affine>,
    /// Whether the points live on the GPU (see `Residency`).
    pub residency: crate::config::Residency,
}

impl PartialEq for Parameters {
    /// Parameters are equal when their points are.
    fn eq(&self, other: &Self) -> bool {
        self.vk == other.vk
            && self.h == other.h
            && self.l == other.l
            && self.a == other.a
            && self.b_g1 == other.b_g1
            && self.b_g2 == other.b_g2
    }
}

impl Eq for Parameters {}

/// The identity of one parameter set in this process: a new one per load,
/// decode or clone. When it is dropped (with its parameters), the hook
/// registered with `on_release` hears of it, so a layer above can free
/// what it keeps for those parameters (their GPU copies) without the
/// parameters holding it.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ParamsId(u64);

static RELEASE_HOOK: OnceCell<fn(u64)> = OnceCell::new();

/// Registers the one hook told of every parameter set dropped from now on.
pub fn on_release(hook: fn(u64)) {
    let _ = RELEASE_HOOK.set(hook);
}

impl ParamsId {
    fn new() -> ParamsId {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ParamsId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    pub fn get(&self) -> u64 {
        self.0
    }
}

impl Default for ParamsId {
    /// A new identity.
    fn default() -> Self {
        ParamsId::new()
    }
}

impl Clone for ParamsId {
    /// A copy of the parameters is a parameter set of its own.
    fn clone(&self) -> Self {
        ParamsId::new()
    }
}

impl Drop for ParamsId {
    fn drop(&mut self) {
        if let Some(hook) = RELEASE_HOOK.get() {
            hook(self.0);
        }
    }
}

impl VerifyingKey {
    /// Loads a verifying key file: bellperson's `VerifyingKey::write`, as
    /// filecoin's `.vk` files hold it (the six points of a parameters
    /// file's head, then the count of IC points, u32 big-endian, and the
    /// points, all uncompressed). Every point is checked on the curve and
    /// in its subgroup: the file is small.
    pub fn load(path: &Path) -> Result<VerifyingKey> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path.display(), e))?;
        VerifyingKey::decode(&bytes)
            .map_err(|e| Error::new(e.kind, format!("{}: {}", path.display(), e.message)))
    }

    /// Decodes a verifying key held in memory (see `load`).
    pub fn decode(bytes: &[u8]) -> Result<VerifyingKey> {
        let checked = LoadOptions {
            check_subgroup: true,
            ..LoadOptions::default()
        };
        let count_at = VK_HEAD_BYTES;
        let Some(count_bytes) = bytes.get(count_at..count_at + 4) else {
            return Err(Error::params_format(format!(
                "verifying key truncated: {} bytes, its head and IC count need {}",
                bytes.len(),
                count_at + 4
            )));
        };
        let mut count = [0u8; 4];
        count.copy_from_slice(count_bytes);
        let count = u32::from_be_bytes(count) as usize;
        let point = crate::math::G1::UNCOMPRESSED_BYTES;
        let expected = count_at + 4 + count * point;
        if bytes.len() != expected {
            return Err(Error::params_format(format!(
                "verifying key of {} bytes: its {count} IC points need exactly {expected}",
                bytes.len()
            )));
        }
        let head = decode_vk_head(&bytes[..VK_HEAD_BYTES], &checked)?;
        let ic = (0..count)
            .map(|i| {
                let offset = count_at + 4 + i * point;
                let p = G1Affine::from_uncompressed(&bytes[offset..offset + point])
                    .map_err(|e| point_error("ic", i, offset, e))?;
                if !p.in_subgroup() {
                    return Err(point_error("ic", i, offset, PointError::NotInSubgroup));
                }
                Ok(p)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(VerifyingKey::from_parts(head, ic))
    }

    fn from_parts(head: VkHead, ic: Vec<G1Affine>) -> VerifyingKey {
        let (alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2) = head;
        VerifyingKey {
            alpha_g1,
            beta_g1,
            beta_g2,
            gamma_g2,
            delta_g1,
            delta_g2,
            ic,
        }
    }
}

impl Parameters {
    /// Loads and checks a parameters file (see `LoadOptions`). A file that
    /// shrinks or fails to read during the load is an `Io` error.
    pub fn load(path: &Path, options: &LoadOptions) -> Result<Parameters> {
        crate::config::get()?;
        let started = Instant::now();
        let file = FileSource::open(path)?;
        let params = Parameters::decode_from(&file, options)
            .map_err(|e| Error::new(e.kind, format!("{}: {}", path.display(), e.message)))?;
        log::info!(
            "loaded parameters {} ({} bytes, domain 2^{}, {} inputs, {} aux) in {:.3} s",
            path.display(),
            file.len(),
            params.domain_size().trailing_zeros(),
            params.num_inputs(),
            params.num_aux(),
            started.elapsed().as_secs_f64()
        );
        Ok(params)
    }

    /// Decodes a whole parameters file held in memory.
    pub fn decode(bytes: &[u8], options: &LoadOptions) -> Result<Parameters> {
        Parameters::decode_from(bytes, options)
    }

    /// Decodes a parameters file from `file`, front to back.
    pub fn decode_from<S: Source + ?Sized>(file: &S, options: &LoadOptions) -> Result<Parameters> {
        let layout = Layout::parse(file)?;
        let vk_head = decode_vk_head(&file.bytes_at(0, VK_HEAD_BYTES)?, options)?;
        let g1 = |s: &Section| decode_section::<G1Affine, S>(file, s, options, G1Affine::from_uncompressed);
        let ic = g1(&layout.ic)?;
        let h = g1(&layout.h)?;
        let l = g1(&layout.l)?;
        let a = g1(&layout.a)?;
        let b_g1 = g1(&layout.b_g1)?;
        let b_g2 = decode_section::<G2Affine, S>(file, &layout.b_g2, options, G2Affine::from_uncompressed)?;
        Ok(Parameters {
            vk: VerifyingKey::from_parts(vk_head, ic),
            h,
            l,
            a,
            b_g1,
            b_g2,
            residency: options.residency,
            id: ParamsId::new(),
        })
    }

    /// Writes the parameters in bellperson's `Parameters::write` format.
    /// Points are encoded in parallel, a block at a time, and written in
    /// order (a 2^27 PoRep file has ~0.5 G points).
    pub fn write<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        let vk = &self.vk;
        w.write_all(&vk.alpha_g1.to_uncompressed())?;
        w.write_all(&vk.beta_g1.to_uncompressed())?;
        w.write_all(&vk.beta_g2.to_uncompressed())?;
        w.write_all(&vk.gamma_g2.to_uncompressed())?;
        w.write_all(&vk.delta_g1.to_uncompressed())?;
        w.write_all(&vk.delta_g2.to_uncompressed())?;
        for section in [&vk.ic, &self.h, &self.l, &self.a, &self.b_g1] {
            write_section(&mut w, section, |p| p.to_uncompressed())?;
        }
        write_section(&mut w, &self.b_g2, |p| p.to_uncompressed())
    }

    /// The NTT domain size (a power of two): one more than the h points.
    pub fn domain_size(&self) -> usize {
        self.h.len() + 1
    }

    /// Public inputs including the leading ONE.
    pub fn num_inputs(&self) -> usize {
        self.vk.ic.len()
    }

    pub fn num_aux(&self) -> usize {
        self.l.len()
    }

    /// Bytes of decoded points held on the host.
    pub fn host_bytes(&self) -> usize {
        let g1 = self.vk.ic.len() + self.h.len() + self.l.len() + self.a.len() + self.b_g1.len() + 3;
        let g2 = self.b_g2.len() + 3;
        g1 * std::mem::size_of::<G1Affine>() + g2 * std::mem::size_of::<G2Affine>()
    }
}

/// A section: its big-endian count, then every point's encoding.
fn write_section<W, P, const B: usize>(
    w: &mut W,
    points: &[P],
    encode: impl Fn(&P) -> [u8; B] + Sync,
) -> std::io::Result<()>
where
    W: Write,
    P: Sync,
{
    use rayon::prelude::*;
    const BLOCK: usize = 1 << 16;
    write_count(w, points.len())?;
    let mut encoded = Vec::new();
    for group in points.chunks(BLOCK * rayon::current_num_threads().max(1)) {
        group
            .par_chunks(BLOCK)
            .map(|block| block.iter().flat_map(&encode).collect::<Vec<u8>>())
            .collect_into_vec(&mut encoded);
        for bytes in &encoded {
            w.write_all(bytes)?;
        }
    }
    Ok(())
}

fn write_count<W: Write>(w: &mut W, count: usize) -> std::io::Result<()> {
    let count = u32::try_from(count).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "section longer than 2^32 points",
        )
    })?;
    w.write_all(&count.to_be_bytes())
}

/// Bytes read at once by the loader (a multiple of both point sizes).
const BLOCK_BYTES: usize = 192 << 17;

/// Blocks read ahead of the one being decoded.
const READ_AHEAD: usize = 2;

/// Runs `each` on blocks `0..blocks` of `file` in order (block k holds the
/// bytes `range(k)`), a thread of its own reading up to `READ_AHEAD`
/// blocks ahead while `each` works: reading and decoding overlap, and the
/// reads go front to back, so the kernel reads ahead at the disk's rate.
/// The first read that fails is the error.
fn read_ahead<S: Source + ?Sized>(
    file: &S,
    blocks: usize,
    range: impl Fn(usize) -> std::ops::Range<usize> + Sync,
    mut each: impl FnMut(usize, &[u8]),
) -> Result<()> {
    std::thread::scope(|scope| {
        // Receivers live in this closure: an early return drops them, so
        // the reader's next send fails and it stops.
        let (full, read) = std::sync::mpsc::sync_channel::<Result<Vec<u8>>>(READ_AHEAD);
        let (spent, empty) = std::sync::mpsc::channel::<Vec<u8>>();
        let range = &range;
        scope.spawn(move || {
            for k in 0..blocks {
                let r = range(k);
                let mut buf = empty.try_recv().unwrap_or_default();
                buf.resize(r.len(), 0);
                let block = file.read_at(r.start, &mut buf).map(|()| buf);
                let failed = block.is_err();
                if full.send(block).is_err() || failed {
                    break;
                }
            }
        });
        for k in 0..blocks {
            let block = read.recv().map_err(|_| {
                Error::new(ErrorKind::Panic, "internal error: the parameters reader stopped")
            })??;
            each(k, &block);
            let _ = spent.send(block);
        }
        Ok(())
    })
}

/// A decodable point type: affine G1 or G2.
trait CheckedPoint: Copy + Default + Send + Sync {
    fn in_subgroup(&self) -> bool;
}

impl CheckedPoint for G1Affine {
    fn in_subgroup(&self) -> bool {
        G1Affine::in_subgroup(self)
    }
}

impl CheckedPoint for G2Affine {
    fn in_subgroup(&self) -> bool {
        G2Affine::in_subgroup(self)
    }
}

fn point_error(section: &str, index: usize, offset: usize, err: PointError) -> Error {
    Error::new(
        ErrorKind::ParamsFormat,
        format!("section `{section}`, point {index} at byte offset {offset}: {err}"),
    )
}

type VkHead = (G1Affine, G1Affine, G2Affine, G2Affine, G1Affine, G2Affine);

fn decode_vk_head(bytes: &[u8], options: &LoadOptions) -> Result<VkHead> {
    let mut g1s = Vec::new();
    let mut g2s = Vec::new();
    let mut offset = 0;
    for (name, group) in VK_POINTS {
        let raw = &bytes[offset..offset + group.point_bytes()];
        let subgroup_err = |ok: bool| {
            if options.check_subgroup && !ok {
                Err(point_error(name, 0, offset, PointError::NotInSubgroup))
            } else {
                Ok(())
            }
        };
        match group {
            Group::G1 => {
                let p = G1Affine::from_uncompressed(raw).map_err(|e| point_error(name, 0, offset, e))?;
                subgroup_err(p.in_subgroup())?;
                g1s.push(p);
            }
            Group::G2 => {
                let p = G2Affine::from_uncompressed(raw).map_err(|e| point_error(name, 0, offset, e))?;
                subgroup_err(p.in_subgroup())?;
                g2s.push(p);
            }
        }
        offset += group.point_bytes();
    }
    Ok((g1s[0], g1s[1], g2s[0], g2s[1], g1s[2], g2s[2]))
}

/// Decodes one section in parallel as it is read (`read_ahead`), straight
/// into its vector: each point is written once, by the thread that
/// decodes it (no zero-filling pass, and the output's pages are first
/// touched in parallel). The first bad point (lowest index) is reported.
fn decode_section<P: CheckedPoint, S: Source + ?Sized>(
    file: &S,
    section: &Section,
    options: &LoadOptions,
    parse: fn(&[u8]) -> Result<P, PointError>,
) -> Result<Vec<P>> {
    let size = section.group.point_bytes();
    let first_bad = AtomicUsize::new(usize::MAX);
    let check = |enc: &[u8]| -> Result<P, PointError> {
        let p = parse(enc)?;
        if options.check_subgroup && !p.in_subgroup() {
            return Err(PointError::NotInSubgroup);
        }
        Ok(p)
    };
    let mut out = Vec::new();
    out.try_reserve_exact(section.count).map_err(|e| {
        Error::new(
            ErrorKind::OutOfMemory,
            format!(
                "section `{}`: cannot hold {} points: {e}",
                section.name, section.count
            ),
        )
    })?;
    let per_block = BLOCK_BYTES / size;
    let blocks = section.count.div_ceil(per_block);
    let range = |k: usize| {
        let first = k * per_block;
        let points = per_block.min(section.count - first);
        section.point_offset(first)..section.point_offset(first + points)
    };
    read_ahead(file, blocks, range, |k, block| {
        let first = k * per_block;
        out.par_extend(block.par_chunks_exact(size).enumerate().map(|(i, enc)| {
            check(enc).unwrap_or_else(|_| {
                first_bad.fetch_min(first + i, Ordering::Relaxed);
                P::default()
            })
        }));
    })?;
    match first_bad.into_inner() {
        usize::MAX => Ok(out),
        i => {
            let enc = file.bytes_at(section.point_offset(i), size)?;
            let err = check(&enc).err().unwrap_or(PointError::BadEncoding);
            Err(point_error(section.name, i, section.point_offset(i), err))
        }
    }
}

/// A stable identity for a parameters file: its canonical path, length and
/// modification time, so a replaced file is not served from the cache.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FileKey {
    path: PathBuf,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileKey {
    pub(crate) fn of(path: &Path) -> Result<FileKey> {
        let canonical = path
            .canonicalize()
            .map_err(|e| Error::io(format!("cannot open parameters file {}", path.display()), e))?;
        let meta = std::fs::metadata(&canonical)
            .map_err(|e| Error::io(format!("cannot stat parameters file {}", path.display()), e))?;
        Ok(FileKey {
            path: canonical,
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks come to `each` in order with the bytes of their ranges,
    /// whatever the read-ahead; a read past the end stops at that block
    /// with its error, the blocks before it delivered.
    #[test]
    fn read_ahead_delivers_blocks_in_order_and_stops_at_a_failed_read() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        let file: &[u8] = &bytes;
        let range = |k: usize| 7 * k..(7 * k + 7).min(1000);
        let mut seen = Vec::new();
        read_ahead(file, 1000usize.div_ceil(7), range, |k, block| {
            assert_eq!(block, &bytes[range(k)], "block {k}");
            seen.push(k);
        })
        .unwrap();
        assert_eq!(seen, (0..143).collect::<Vec<_>>());
        let mut delivered = 0;
        let past_end = |k: usize| if k < 5 { 10 * k..10 * k + 10 } else { 995..1005 };
        let err = read_ahead(file, 100, past_end, |_, _| delivered += 1).unwrap_err();
        assert_eq!(delivered, 5);
        assert_eq!(err.kind, ErrorKind::ParamsFormat, "{err:?}");
    }
}
