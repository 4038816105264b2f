//! MSMs on a GPU over points in host memory: the points go up in chunks,
//! each chunk's upload overlapping the previous chunk's MSM, and a density
//! bitmap, when there is one, is applied on the device chunk by chunk.

use super::{
    memory, msm, upload_scalars, Checked, DeviceGroup, DevicePoints, DeviceScalars, MsmSum, Scalars,
    ScalarsAt,
};
use crate::error::{Error, ErrorKind, Result};
use crate::math::{bits_set_below, Fr, G1, G2};
use std::ops::Range;

/// Σ scalars[i]·points[i] on GPU `device` with the points in host memory;
/// with `density`, the sum over the scalars whose bit is set, the k-th of
/// them times points[k] (the density is applied on the device, so the host
/// gathers nothing). The points go up in chunks, the next chunk's upload (a
/// thread of its own, through the pinned staging buffers) overlapping the
/// current chunk's MSM, and the chunks' sums are added here. Device memory:
/// two chunks of points plus one chunk's MSM buffers, within the room
/// (`memory::stream_chunk`).
pub fn streamed_msm<P: DeviceGroup>(
    device: usize,
    points: &[P::Affine],
    scalars: &[Fr],
    density: Option<&[u64]>,
) -> Result<P> {
    let sums = streamed_msms::<P>(device, points, &[scalars], density)?;
    Ok(sums[0])
}

/// `streamed_msm` with chunks of `chunk` scalars (rounded up to a multiple
/// of 64 with a density, so that each chunk starts at a word of it).
pub fn streamed_msm_in_chunks<P: DeviceGroup>(
    device: usize,
    points: &[P::Affine],
    scalars: &[Fr],
    density: Option<&[u64]>,
    chunk: usize,
) -> Result<P> {
    let sums = streamed_msms_in_chunks::<P>(device, points, &[scalars], density, chunk)?;
    Ok(sums[0])
}

/// `streamed_msm` for several scalar vectors of one length over the same
/// points and density: each chunk of points goes up once and meets every
/// vector's scalars before the next replaces it. One sum per vector.
pub fn streamed_msms<P: DeviceGroup>(
    device: usize,
    points: &[P::Affine],
    scalars: &[&[Fr]],
    density: Option<&[u64]>,
) -> Result<Vec<P>> {
    let n = scalars.first().map_or(0, |s| s.len());
    let chunk = memory::stream_chunk(device, P::CURVE, n, P::POINT_BYTES, density.is_some());
    streamed_msms_in_chunks(device, points, scalars, density, chunk)
}

/// `streamed_msms` with chunks of `chunk` scalars.
fn streamed_msms_in_chunks<P: DeviceGroup>(
    device: usize,
    points: &[P::Affine],
    scalars: &[&[Fr]],
    density: Option<&[u64]>,
    chunk: usize,
) -> Result<Vec<P>> {
    let n = scalars.first().map_or(0, |s| s.len());
    if scalars.iter().any(|s| s.len() != n) {
        return Err(Error::size_mismatch(
            "scalar vectors of different lengths over the same points",
        ));
    }
    let needed = match density {
        None => n,
        Some(words) if words.len() >= n.div_ceil(64) => bits_set_below(words, n),
        Some(words) => {
            return Err(Error::size_mismatch(format!(
                "a density bitmap of {} words for {n} scalars",
                words.len()
            )))
        }
    };
    if points.len() < needed {
        return Err(Error::size_mismatch(format!(
            "{needed} scalars for {} points",
            points.len()
        )));
    }
    let mut sums = vec![P::identity(); scalars.len()];
    over_chunks::<P>(device, points, &chunks(n, chunk, density), |current, c| {
        let (start, end) = (c.scalars.start, c.scalars.end);
        let words = density.map(|words| &words[start / 64..end.div_ceil(64)]);
        for (sum, scalars) in sums.iter_mut().zip(scalars) {
            *sum = *sum + msm::<P>(current, 0, Scalars::Host(&scalars[start..end]), words)?;
        }
        Ok(())
    })?;
    Ok(sums)
}

/// Σ h_i·points[i] for each of `scalars` (h of several circuits, left on
/// GPU `device` by their H steps), with the points in host memory: each
/// chunk of points goes up once for all of them, and each circuit's chunks
/// add into buckets kept on the GPU until the last (one reduction per
/// circuit, not per chunk). The MSMs only read the scalars (each converts a
/// copy of its chunk), so they stay whole for whatever runs after, the CPU
/// included if this fails. Device memory beside the scalars: two chunks of
/// points, every circuit's buckets and one chunk's MSM, within the room.
pub fn streamed_msms_over_device_scalars<P: DeviceGroup>(
    device: usize,
    points: &[P::Affine],
    scalars: &[DeviceScalars],
) -> Result<Vec<P>> {
    let n = scalars.first().map_or(0, |s| s.len());
    let chunk = memory::largest_chunk(device, n, |chunk| {
        over_device_scalars_bytes::<P>(device, n, chunk, scalars.len())
    });
    streamed_msms_over_device_scalars_in_chunks(device, points, scalars, chunk)
}

/// Device bytes of `streamed_msms_over_device_scalars` for `vectors`
/// vectors of `n` scalars in chunks of `chunk`, beside the scalars: one
/// chunk's MSM with its buckets, and the others' buckets.
pub(super) fn over_device_scalars_bytes<P: DeviceGroup>(
    device: usize,
    n: usize,
    chunk: usize,
    vectors: usize,
) -> usize {
    let at = ScalarsAt::DeviceShared;
    let (Ok(first), Ok(each)) = (
        super::msm_sum_bytes(device, P::CURVE, n, chunk, at, false),
        super::msm_sum_bytes(device, P::CURVE, n, 0, at, false),
    ) else {
        return usize::MAX;
    };
    (2 * chunk * P::POINT_BYTES)
        .saturating_add(first)
        .saturating_add(each.saturating_mul(vectors.saturating_sub(1)))
}

/// `streamed_msms_over_device_scalars` with chunks of `chunk` scalars.
pub fn streamed_msms_over_device_scalars_in_chunks<P: DeviceGroup>(
    device: usize,
    points: &[P::Affine],
    scalars: &[DeviceScalars],
    chunk: usize,
) -> Result<Vec<P>> {
    let n = device_scalars_over(scalars, points.len())?;
    let mut sums = scalars
        .iter()
        .map(|_| MsmSum::<P>::new(device, n))
        .collect::<Result<Vec<_>>>()?;
    over_chunks::<P>(device, points, &chunks(n, chunk, None), |current, c| {
        for (sum, scalars) in sums.iter_mut().zip(scalars) {
            sum.add(current, 0, Scalars::SharedPart(scalars, c.scalars.clone()), None)?;
        }
        Ok(())
    })?;
    sums.into_iter().map(MsmSum::total).collect()
}

/// The length of `scalars`' vectors, once they are checked to be of one
/// length and to meet no more than `points` points.
fn device_scalars_over(scalars: &[DeviceScalars], points: usize) -> Result<usize> {
    let n = scalars.first().map_or(0, |s| s.len());
    if scalars.iter().any(|s| s.len() != n) || points < n {
        return Err(Error::size_mismatch(format!(
            "scalar vectors of lengths {:?} over {points} points",
            scalars.iter().map(DeviceScalars::len).collect::<Vec<_>>(),
        )));
    }
    Ok(n)
}

/// Σ h_i·points[i] for each of `scalars` (h of several circuits) with the
/// points kept on their GPU too, `chunk` scalars at a time so that each
/// MSM's working memory is a chunk's. The scalars are only read.
pub fn msms_over_device_points_and_scalars<P: DeviceGroup>(
    points: &DevicePoints,
    scalars: &[DeviceScalars],
    chunk: usize,
) -> Result<Vec<P>> {
    let n = device_scalars_over(scalars, points.len())?;
    let mut sums = vec![P::identity(); scalars.len()];
    for start in (0..n).step_by(chunk.max(1)) {
        let range = start..n.min(start + chunk.max(1));
        for (sum, scalars) in sums.iter_mut().zip(scalars) {
            *sum = *sum + msm::<P>(points, start, Scalars::SharedPart(scalars, range.clone()), None)?;
        }
    }
    Ok(sums)
}

/// Runs `each` on every chunk with its points on GPU `device`: the next
/// chunk's points go up while `each` runs on the current one.
fn over_chunks<P: DeviceGroup>(
    device: usize,
    points: &[P::Affine],
    chunks: &[Chunk],
    mut each: impl FnMut(&DevicePoints, &Chunk) -> Result<()>,
) -> Result<()> {
    pipelined(
        chunks,
        |c| P::upload(device, &points[c.points.clone()]),
        |current, c| each(&current, c),
    )
}

/// Runs `each` on every chunk with what `upload` made of it, the next
/// chunk's upload (a thread of its own, through the pinned staging
/// buffers) going on while `each` runs on the current one: at most two
/// chunks' uploads are alive at once.
fn pipelined<C: Sync, T: Send>(
    chunks: &[C],
    upload: impl Fn(&C) -> Result<T> + Sync,
    mut each: impl FnMut(T, &C) -> Result<()>,
) -> Result<()> {
    std::thread::scope(|scope| {
        let upload = &upload;
        let start = |i: usize| chunks.get(i).map(|c| scope.spawn(move || upload(c)));
        let mut next = start(0);
        // Time spent waiting for uploads beyond the first: where it is
        // large, the link (or the staging buffers' turns), not the MSMs,
        // is the bound.
        let mut waited = std::time::Duration::ZERO;
        for (i, c) in chunks.iter().enumerate() {
            let Some(pending) = next.take() else { break };
            let asked = std::time::Instant::now();
            let current = pending.join().unwrap_or_else(|_| {
                Err(Error::new(
                    ErrorKind::Panic,
                    "internal error: the point upload thread panicked",
                ))
            })?;
            if i > 0 {
                waited += asked.elapsed();
            }
            next = start(i + 1);
            each(current, c)?;
        }
        log::trace!(
            "streamed chunks: {} chunks, {:.1} ms waiting for the next chunk's points",
            chunks.len(),
            waited.as_secs_f64() * 1e3
        );
        Ok(())
    })
}

/// One query's points in host memory for `streamed_msms_sharing_scalars`,
/// with the density bitmap that picks the scalars meeting them (none: all
/// of them, in order), and, when a copy of them stays on the GPU, that copy
/// and where in it `points` begin: its chunks are then read there instead
/// of going up.
pub struct HostTerm<'a, P: DeviceGroup> {
    pub points: &'a [P::Affine],
    pub density: Option<&'a [u64]>,
    pub resident: Option<(&'a DevicePoints, usize)>,
}

impl<P: DeviceGroup> HostTerm<'_, P> {
    /// How many of scalars `start..end` meet a point (`start` a multiple
    /// of 64 with a density; its words checked to cover `end`).
    fn meets(&self, start: usize, end: usize) -> usize {
        match self.density {
            None => end - start,
            Some(words) => bits_set_below(&words[start / 64..], end - start),
        }
    }

    /// Checks the density and the points against `n` scalars.
    fn check(&self, n: usize) -> Result<()> {
        if let Some(words) = self.density {
            if words.len() < n.div_ceil(64) {
                return Err(Error::size_mismatch(format!(
                    "a density bitmap of {} words for {n} scalars",
                    words.len()
                )));
            }
        }
        let needed = self.meets(0, n);
        if self.points.len() < needed {
            return Err(Error::size_mismatch(format!(
                "{needed} scalars for {} points",
                self.points.len()
            )));
        }
        if let Some((copy, from)) = self.resident {
            if copy.curve() != P::CURVE || !from.checked_add(needed).is_some_and(|end| end <= copy.len()) {
                return Err(Error::size_mismatch(format!(
                    "{needed} scalars from point {from} of a copy of {} {:?} points on the GPU",
                    copy.len(),
                    copy.curve()
                )));
            }
        }
        Ok(())
    }

    /// Device bytes of the points `range` when they go up (none when a copy
    /// stays on the GPU).
    fn upload_bytes(&self, range: &Range<usize>) -> usize {
        match self.resident {
            Some(_) => 0,
            None => range.len() * P::POINT_BYTES,
        }
    }

    /// The device memory of one chunk's MSM of `chunk` scalars on the
    /// device (read by several MSMs).
    fn msm_bytes(&self, device: usize, chunk: usize) -> usize {
        super::msm_bytes(
            device,
            P::CURVE,
            chunk,
            ScalarsAt::DeviceShared,
            self.density.is_some(),
        )
        .unwrap_or(usize::MAX)
    }

    /// The points of `range` on GPU `device`, or none for an empty range or
    /// a term whose copy stays there.
    fn upload(&self, device: usize, range: &Range<usize>) -> Result<Option<DevicePoints>> {
        if range.is_empty() || self.resident.is_some() {
            return Ok(None);
        }
        P::upload(device, &self.points[range.clone()]).map(Some)
    }

    /// Adds to `sum` this term's MSM over its points `range` (their chunk
    /// uploaded, `points`, or its copy on the GPU) and the chunk `scalars`
    /// of the scalars at `on_device`.
    fn add_msm(
        &self,
        sum: &mut P,
        (points, range): (&Option<DevicePoints>, &Range<usize>),
        scalars: &Range<usize>,
        on_device: &DeviceScalars,
    ) -> Result<()> {
        let (points, offset) = match (points, self.resident) {
            (Some(points), _) => (points, 0),
            (None, Some((copy, from))) if !range.is_empty() => (copy, from + range.start),
            (None, _) => return Ok(()),
        };
        let words = self
            .density
            .map(|words| &words[scalars.start / 64..scalars.end.div_ceil(64)]);
        *sum = *sum + msm::<P>(points, offset, Scalars::Shared(on_device), words)?;
        Ok(())
    }
}

/// A scalar vector of `streamed_msms_sharing_scalars`, checked below the
/// modulus as it goes up when `check` says so.
#[derive(Clone, Copy)]
pub struct CheckedScalars<'a> {
    pub values: &'a [Fr],
    pub check: Option<Checked>,
}

/// Each term's sum for each scalar vector, `[term][vector]`.
pub struct SharedSums {
    pub g1: Vec<Vec<G1>>,
    pub g2: Vec<Vec<G2>>,
}

/// MSMs over the same scalar vectors (a call's circuits' aux values) and
/// several terms' points in host memory (L, A, B_G1 in G1; B_G2 in G2): for
/// each term and vector, the sum over the scalars the term's density picks
/// (all without one), the k-th of them times the term's k-th point. The
/// scalars go up in chunks of a multiple of 64, each chunk of a vector once
/// for every term (not once per term: the aux values were three quarters
/// of a streamed call's uploads), and each chunk of a term's points once
/// for every vector, the next chunk's points going up (a thread of its
/// own) during the current chunk's MSMs. `between` runs before each
/// vector's chunk (a cancelled call stops there). Device memory: two
/// chunks of every term's points, one chunk of scalars and the four
/// MSMs' working sets together, within the room.
pub fn streamed_msms_sharing_scalars(
    device: usize,
    g1: &[HostTerm<G1>],
    g2: &[HostTerm<G2>],
    scalars: &[CheckedScalars],
    between: &dyn Fn() -> Result<()>,
) -> Result<SharedSums> {
    let n = check_shared(g1, g2, scalars)?;
    let chunk = memory::largest_chunk(device, n, |chunk| shared_chunk_bytes(device, g1, g2, n, chunk));
    streamed_msms_sharing_scalars_in_chunks(device, g1, g2, scalars, between, chunk)
}

/// Device bytes of `streamed_msms_sharing_scalars` in chunks of `chunk`
/// scalars (rounded up to a multiple of 64): two chunks of every term's
/// points, one chunk of scalars and the terms' MSMs' working sets together (they
/// run at once).
pub fn shared_chunk_bytes(
    device: usize,
    g1: &[HostTerm<G1>],
    g2: &[HostTerm<G2>],
    n: usize,
    chunk: usize,
) -> usize {
    let chunk = chunk.next_multiple_of(64);
    let points = shared_chunks(n, chunk, g1, g2)
        .iter()
        .map(|c| c.upload_bytes(g1, g2))
        .max()
        .unwrap_or(0);
    // The terms' MSMs run at once.
    let msm = g1
        .iter()
        .map(|t| t.msm_bytes(device, chunk))
        .chain(g2.iter().map(|t| t.msm_bytes(device, chunk)))
        .fold(0usize, usize::saturating_add);
    (2 * points)
        .saturating_add(std::mem::size_of::<Fr>() * chunk)
        .saturating_add(msm)
}

/// The length of `scalars`' vectors, once they and the terms are checked
/// to fit each other.
fn check_shared(g1: &[HostTerm<G1>], g2: &[HostTerm<G2>], scalars: &[CheckedScalars]) -> Result<usize> {
    let n = scalars.first().map_or(0, |s| s.values.len());
    if scalars.iter().any(|s| s.values.len() != n) {
        return Err(Error::size_mismatch(
            "scalar vectors of different lengths over the same points",
        ));
    }
    for t in g1 {
        t.check(n)?;
    }
    for t in g2 {
        t.check(n)?;
    }
    Ok(n)
}

/// `streamed_msms_sharing_scalars` with chunks of `chunk` scalars (rounded
/// up to a multiple of 64).
pub fn streamed_msms_sharing_scalars_in_chunks(
    device: usize,
    g1: &[HostTerm<G1>],
    g2: &[HostTerm<G2>],
    scalars: &[CheckedScalars],
    between: &dyn Fn() -> Result<()>,
    chunk: usize,
) -> Result<SharedSums> {
    let n = check_shared(g1, g2, scalars)?;
    let mut sums = SharedSums {
        g1: vec![vec![G1::identity(); scalars.len()]; g1.len()],
        g2: vec![vec![G2::identity(); scalars.len()]; g2.len()],
    };
    // Each term's points of the chunk on the device (none where it meets none).
    type OnDevice = (Vec<Option<DevicePoints>>, Vec<Option<DevicePoints>>);
    let upload = |c: &SharedChunk| -> Result<OnDevice> {
        let up_g1 = g1.iter().zip(&c.g1).map(|(t, r)| t.upload(device, r));
        let up_g2 = g2.iter().zip(&c.g2).map(|(t, r)| t.upload(device, r));
        Ok((up_g1.collect::<Result<_>>()?, up_g2.collect::<Result<_>>()?))
    };
    pipelined(
        &shared_chunks(n, chunk, g1, g2),
        upload,
        |(points_g1, points_g2), c| {
            for (v, values) in scalars.iter().enumerate() {
                between()?;
                let check = values.check.map(|check| check.from(c.scalars.start));
                let on_device = upload_scalars(device, &values.values[c.scalars.clone()], check)?;
                // The terms' MSMs at once, each on its own stream: an MSM
                // over few scalars other than 0 and 1 waits on the host
                // between its kernels, and the others fill the GPU then.
                std::thread::scope(|scope| {
                    let at = (v, &c.scalars, &on_device);
                    let g1_msms = spawn_msms(scope, g1, &points_g1, &mut sums.g1, &c.g1, at);
                    let g2_msms = spawn_msms(scope, g2, &points_g2, &mut sums.g2, &c.g2, at);
                    // Every MSM ends before the first error is reported.
                    let ended: Vec<Result<()>> = g1_msms.into_iter().chain(g2_msms).map(joined).collect();
                    ended.into_iter().collect::<Result<()>>()
                })?;
            }
            Ok(())
        },
    )?;
    Ok(sums)
}

/// Each of `terms`' MSMs over its chunk's points (`points`, the points
/// `ranges` of its own) and the chunk `scalars` of the v-th vector at
/// `on_device`, added to its v-th sum, on a thread of its own in `scope`.
fn spawn_msms<'scope, P: DeviceGroup>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    terms: &'scope [HostTerm<'_, P>],
    points: &'scope [Option<DevicePoints>],
    sums: &'scope mut [Vec<P>],
    ranges: &'scope [Range<usize>],
    (v, scalars, on_device): (usize, &'scope Range<usize>, &'scope DeviceScalars),
) -> Vec<std::thread::ScopedJoinHandle<'scope, Result<()>>> {
    terms
        .iter()
        .zip(points)
        .zip(sums)
        .zip(ranges)
        .map(|(((t, points), sums), range)| {
            scope.spawn(move || t.add_msm(&mut sums[v], (points, range), scalars, on_device))
        })
        .collect()
}

/// What a scoped thread returned, its panic as an error.
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, Result<T>>) -> Result<T> {
    handle.join().unwrap_or_else(|_| {
        Err(Error::new(
            ErrorKind::Panic,
            "internal error: an MSM's thread panicked",
        ))
    })
}

/// One chunk of `streamed_msms_sharing_scalars`: its scalars, and the
/// points each term's scalars among them meet.
#[derive(Clone, Debug, PartialEq, Eq)]
struct SharedChunk {
    scalars: Range<usize>,
    g1: Vec<Range<usize>>,
    g2: Vec<Range<usize>>,
}

impl SharedChunk {
    /// Device bytes of the chunk's points that go up (those of `g1` and
    /// `g2`, the terms it was made for, whose copies are not on the GPU).
    fn upload_bytes(&self, g1: &[HostTerm<G1>], g2: &[HostTerm<G2>]) -> usize {
        let g1: usize = g1.iter().zip(&self.g1).map(|(t, r)| t.upload_bytes(r)).sum();
        let g2: usize = g2.iter().zip(&self.g2).map(|(t, r)| t.upload_bytes(r)).sum();
        g1 + g2
    }
}

/// The chunks of `n` scalars, `chunk` at a time rounded up to a multiple of
/// 64 (so that each starts at a word of every density), each with every
/// term's points, counted as the chunks go.
fn shared_chunks(n: usize, chunk: usize, g1: &[HostTerm<G1>], g2: &[HostTerm<G2>]) -> Vec<SharedChunk> {
    let chunk = chunk.clamp(1, n.max(1)).next_multiple_of(64);
    let mut at_g1 = vec![0; g1.len()];
    let mut at_g2 = vec![0; g2.len()];
    (0..n)
        .step_by(chunk)
        .map(|start| {
            let end = n.min(start + chunk);
            SharedChunk {
                scalars: start..end,
                g1: advance(&mut at_g1, |k| g1[k].meets(start, end)),
                g2: advance(&mut at_g2, |k| g2[k].meets(start, end)),
            }
        })
        .collect()
}

/// The next `meets(k)` points of each term k from `at[k]` on, moving `at`
/// past them.
fn advance(at: &mut [usize], meets: impl Fn(usize) -> usize) -> Vec<Range<usize>> {
    at.iter_mut()
        .enumerate()
        .map(|(k, point)| {
            let first = *point;
            *point += meets(k);
            first..*point
        })
        .collect()
}

/// One chunk of a streamed MSM: its scalars, and the points they meet.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Chunk {
    scalars: Range<usize>,
    points: Range<usize>,
}

/// The chunks of `n` scalars, `chunk` at a time (with a density a multiple
/// of 64, so that each starts at a word of it), each with the points its
/// scalars meet: theirs without a density, else one per bit set, counted
/// as the chunks go. Chunks that meet no point are left out. The density,
/// when given, has at least ceil(n / 64) words.
fn chunks(n: usize, chunk: usize, density: Option<&[u64]>) -> Vec<Chunk> {
    let chunk = chunk.clamp(1, n.max(1));
    let chunk = if density.is_some() {
        chunk.next_multiple_of(64)
    } else {
        chunk
    };
    let mut out = Vec::with_capacity(n.div_ceil(chunk));
    let mut point = 0;
    for start in (0..n).step_by(chunk) {
        let end = n.min(start + chunk);
        let meets = match density {
            None => end - start,
            Some(words) => bits_set_below(&words[start / 64..], end - start),
        };
        if meets > 0 {
            out.push(Chunk {
                scalars: start..end,
                points: point..point + meets,
            });
        }
        point += meets;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_scalars_and_their_points() {
        assert_eq!(chunks(0, 10, None), vec![]);
        assert_eq!(
            chunks(25, 10, None),
            vec![
                Chunk {
                    scalars: 0..10,
                    points: 0..10
                },
                Chunk {
                    scalars: 10..20,
                    points: 10..20
                },
                Chunk {
                    scalars: 20..25,
                    points: 20..25
                },
            ]
        );
        // With a density: chunks of 64, the middle word clear (no chunk),
        // bits at and past n = 150 not counted; 100 rounds up to 128.
        let words = [0b1011u64, 0, u64::MAX];
        assert_eq!(
            chunks(150, 64, Some(&words)),
            vec![
                Chunk {
                    scalars: 0..64,
                    points: 0..3
                },
                Chunk {
                    scalars: 128..150,
                    points: 3..25
                },
            ]
        );
        assert_eq!(
            chunks(150, 100, Some(&words)),
            vec![
                Chunk {
                    scalars: 0..128,
                    points: 0..3
                },
                Chunk {
                    scalars: 128..150,
                    points: 3..25
                },
            ]
        );
        // A chunk larger than anything: one chunk, no overflow.
        assert_eq!(
            chunks(150, usize::MAX, Some(&words)),
            vec![Chunk {
                scalars: 0..150,
                points: 0..25
            }]
        );
        assert_eq!(chunks(5, 0, None).len(), 5, "a chunk of at least one");
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // one G2 term: a vector of one range
    fn shared_chunks_advance_every_term_by_its_own_points() {
        assert_eq!(shared_chunks(0, 64, &[], &[]), vec![]);
        let words = [0b1011u64, 0, u64::MAX];
        let points = [crate::math::G1Affine::default(); 200];
        let g2_points = [crate::math::G2Affine::default(); 200];
        let all = HostTerm::<G1> {
            points: &points,
            density: None,
            resident: None,
        };
        let some = HostTerm::<G1> {
            points: &points,
            density: Some(&words),
            resident: None,
        };
        let g2 = HostTerm::<G2> {
            points: &g2_points,
            density: Some(&words),
            resident: None,
        };
        // 100 rounds up to 128; bits past n = 150 are not counted; a chunk
        // whose terms meet no point is still a chunk (the dense term's).
        let (g1, g2) = ([all, some], [g2]);
        let got = shared_chunks(150, 100, &g1, &g2);
        assert_eq!(
            got,
            vec![
                SharedChunk {
                    scalars: 0..128,
                    g1: vec![0..128, 0..3],
                    g2: vec![0..3],
                },
                SharedChunk {
                    scalars: 128..150,
                    g1: vec![128..150, 3..25],
                    g2: vec![3..25],
                },
            ]
        );
        assert_eq!(got[0].upload_bytes(&g1, &g2), 131 * 96 + 3 * 192);
        assert_eq!(shared_chunks(150, 0, &[], &[]).len(), 3, "a chunk of at least 64");
    }
}
