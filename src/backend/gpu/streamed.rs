//! MSMs on a GPU over points in host memory: the points go up in chunks,
//! each chunk's upload overlapping the previous chunk's MSM.

use super::{memory, msm, DeviceGroup, DevicePoints, Scalars};
use crate::error::{Error, ErrorKind, Result};
use crate::math::Fr;

/// Σ scalars[i]·points[i] on GPU `device` with the points in host memory: they
/// go up in chunks, the next chunk's upload (a thread of its own, through
/// the pinned staging buffers) overlapping the current chunk's MSM, and the
/// chunks' sums are added here. Device memory: two chunks of points plus
/// one chunk's MSM buffers, within the room (`memory::stream_chunk`).
pub fn streamed_msm<P: DeviceGroup>(device: usize, points: &[P::Affine], scalars: &[Fr]) -> Result<P> {
    let chunk = memory::stream_chunk(device, P::CURVE, scalars.len(), P::POINT_BYTES);
    streamed_msm_in_chunks(device, points, scalars, chunk)
}

/// `streamed_msm` with chunks of `chunk` points.
pub fn streamed_msm_in_chunks<P: DeviceGroup>(
    device: usize,
    points: &[P::Affine],
    scalars: &[Fr],
    chunk: usize,
) -> Result<P> {
    let n = scalars.len();
    if points.len() < n {
        return Err(Error::size_mismatch(format!(
            "{n} scalars for {} points",
            points.len()
        )));
    }
    if n == 0 {
        return Ok(P::identity());
    }
    let chunk = chunk.max(1);
    let join = |h: std::thread::ScopedJoinHandle<'_, Result<DevicePoints>>| {
        h.join().unwrap_or_else(|_| {
            Err(Error::new(
                ErrorKind::Panic,
                "internal error: the point upload thread panicked",
            ))
        })
    };
    std::thread::scope(|scope| {
        let upload = |start: usize| {
            let part = &points[start..n.min(start + chunk)];
            scope.spawn(move || P::upload(device, part))
        };
        let mut next = Some(upload(0));
        let mut sum = P::identity();
        let mut start = 0;
        while let Some(pending) = next.take() {
            let current = join(pending)?;
            let end = n.min(start + chunk);
            if end < n {
                next = Some(upload(end));
            }
            sum = sum + msm::<P>(&current, 0, Scalars::Host(&scalars[start..end]), None)?;
            start = end;
        }
        Ok(sum)
    })
}
