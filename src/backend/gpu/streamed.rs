//! MSMs on a GPU over points in host memory: the points go up in chunks,
//! each chunk's upload overlapping the previous chunk's MSM, and a density
//! bitmap, when there is one, is applied on the device chunk by chunk.

use super::{memory, msm, DeviceGroup, DevicePoints, Scalars};
use crate::error::{Error, ErrorKind, Result};
use crate::math::{bits_set_below, Fr};
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
    if n == 0 {
        return Ok(sums);
    }
    let join = |h: std::thread::ScopedJoinHandle<'_, Result<DevicePoints>>| {
        h.join().unwrap_or_else(|_| {
            Err(Error::new(
                ErrorKind::Panic,
                "internal error: the point upload thread panicked",
            ))
        })
    };
    let chunks = chunks(n, chunk, density);
    std::thread::scope(|scope| {
        let upload = |c: &Chunk| {
            let part = &points[c.points.clone()];
            scope.spawn(move || P::upload(device, part))
        };
        let mut next = chunks.first().map(upload);
        for (i, c) in chunks.iter().enumerate() {
            let (start, end) = (c.scalars.start, c.scalars.end);
            let Some(pending) = next.take() else { break };
            let current = join(pending)?;
            next = chunks.get(i + 1).map(upload);
            let words = density.map(|words| &words[start / 64..end.div_ceil(64)]);
            for (sum, scalars) in sums.iter_mut().zip(scalars) {
                *sum = *sum + msm::<P>(&current, 0, Scalars::Host(&scalars[start..end]), words)?;
            }
        }
        Ok(sums)
    })
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
}
