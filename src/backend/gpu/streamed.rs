//! MSMs on a GPU over points in host memory: the points go up in chunks,
//! each chunk's upload overlapping the previous chunk's MSM, and a density
//! bitmap, when there is one, is applied on the device chunk by chunk.

use super::{memory, msm, DeviceGroup, DevicePoints, Scalars};
use crate::error::{Error, ErrorKind, Result};
use crate::math::{bits_set_below, Fr};

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
pub fn streamed_msms_in_chunks<P: DeviceGroup>(
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
    let chunk = match density {
        Some(_) => chunk.max(1).next_multiple_of(64),
        None => chunk.max(1),
    };
    // Chunk i covers scalars [i·chunk, (i+1)·chunk) and the points they
    // meet: all of theirs without a density, else one per bit set.
    let points_of = |start: usize, end: usize| match density {
        None => start..end,
        Some(words) => {
            let before = bits_set_below(words, start);
            before..before + bits_set_below(&words[start / 64..], end - start)
        }
    };
    let join = |h: std::thread::ScopedJoinHandle<'_, Result<DevicePoints>>| {
        h.join().unwrap_or_else(|_| {
            Err(Error::new(
                ErrorKind::Panic,
                "internal error: the point upload thread panicked",
            ))
        })
    };
    // Chunks whose scalars meet no point (all their bits clear) are left out.
    let chunks: Vec<(usize, usize)> = (0..n)
        .step_by(chunk)
        .map(|start| (start, n.min(start + chunk)))
        .filter(|&(start, end)| !points_of(start, end).is_empty())
        .collect();
    std::thread::scope(|scope| {
        let upload = |(start, end): (usize, usize)| {
            let part = &points[points_of(start, end)];
            scope.spawn(move || P::upload(device, part))
        };
        let mut next = chunks.first().map(|&c| upload(c));
        for (i, &(start, end)) in chunks.iter().enumerate() {
            let Some(pending) = next.take() else { break };
            let current = join(pending)?;
            next = chunks.get(i + 1).map(|&c| upload(c));
            let words = density.map(|words| &words[start / 64..end.div_ceil(64)]);
            for (sum, scalars) in sums.iter_mut().zip(scalars) {
                *sum = *sum + msm::<P>(&current, 0, Scalars::Host(&scalars[start..end]), words)?;
            }
        }
        Ok(sums)
    })
}
