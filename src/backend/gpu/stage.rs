//! A circuit's GPU stage: its parameters' residency, the uploads ahead of
//! the lane, the H step and the five MSMs over resident or streamed points,
//! with the witness MSMs beside H's when the device budget holds both.

use super::{constraints, group, lanes, resident};
use crate::backend::gpu;
use crate::backend::{check_cancelled, Call};
use crate::error::{Error, ErrorKind, Result};
use crate::faults;
use crate::groth16::{select, Assignment, Queries, Query, QuerySums, Term, Vector, WitnessSums};
use crate::math::domain::Domain;
use crate::math::{Fr, G1};
use crate::params::Parameters;
use crate::stats::{timed, Stage, STATS};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, MutexGuard};
use std::time::Instant;

/// One circuit of a call on its way through the GPU stage.
#[derive(Clone, Copy)]
struct Circuit<'a> {
    index: usize,
    w: &'a Assignment<'a>,
    /// `Some(index)`: its values are still to be checked below the modulus,
    /// as they go up to the GPU (see `gpu::Checked`).
    check: Option<usize>,
}

/// The four witness MSMs (L, A, B_G1, B_G2) on the GPU over the device
/// copy of the parameters. The GPU splits each scalar vector itself (zeros
/// skipped, ones summed) and applies the density bitmaps to the aux vector
/// itself, so the CPU selects nothing but the few inputs of B.
fn witness_sums(
    device: &gpu::DeviceParams,
    gpu: usize,
    w: &Assignment,
    aux_ahead: Option<gpu::DeviceScalars>,
    cancelled: &AtomicBool,
    check: Option<usize>,
) -> Result<WitnessSums> {
    // The aux values go up once for the four MSMs that read them (L, A,
    // B_G1, B_G2), here (counted with L) unless they went up ahead; without
    // room for that copy, each MSM uploads them (checked here first when
    // `check` says they are not yet: the MSMs' own uploads do not check).
    let aux_on_gpu = match aux_ahead {
        Some(aux) => Some(aux),
        None => upload_aux(gpu, w, check)?,
    };
    let aux = aux_on_gpu.as_ref();
    Queries::of(w).witness_sums(
        |t| {
            check_cancelled(cancelled).and_then(|()| timed(stage_of(t.query), || term_msm(device, w, aux, t)))
        },
        |t| {
            check_cancelled(cancelled).and_then(|()| timed(stage_of(t.query), || term_msm(device, w, aux, t)))
        },
    )
}

/// The device points of `query`.
fn points_of(device: &gpu::DeviceParams, query: Query) -> &gpu::DevicePoints {
    match query {
        Query::H => &device.h,
        Query::L => &device.l,
        Query::A => &device.a,
        Query::BG1 => &device.b_g1,
        Query::BG2 => &device.b_g2,
    }
}

/// The stage a query's MSMs are timed as.
fn stage_of(query: Query) -> Stage {
    match query {
        Query::H => Stage::MsmH,
        Query::L => Stage::MsmL,
        Query::A => Stage::MsmA,
        Query::BG1 => Stage::MsmBG1,
        Query::BG2 => Stage::MsmBG2,
    }
}

/// One witness term's MSM over resident points: the aux values (on the
/// GPU as `aux`, or uploaded by the MSM) with their density applied on the
/// device; the few inputs selected here.
fn term_msm<P: gpu::DeviceGroup>(
    device: &gpu::DeviceParams,
    w: &Assignment,
    aux: Option<&gpu::DeviceScalars>,
    term: &Term,
) -> Result<P> {
    let points = points_of(device, term.query);
    let density = term.mask.map(|mask| w.mask(mask));
    match term.vector {
        Vector::Aux => {
            let scalars = aux.map_or(gpu::Scalars::Host(w.aux), gpu::Scalars::Shared);
            gpu::msm(points, term.offset, scalars, density)
        }
        Vector::Inputs | Vector::H => {
            let values = w.vector(term.vector, &[]);
            let selected = density.map_or_else(|| values.to_vec(), |d| select(values, d));
            gpu::msm(points, term.offset, gpu::Scalars::Host(&selected), None)
        }
    }
}

/// w's aux values on GPU `gpu` for the witness MSMs (counted with L), or
/// `None` without room for them (each MSM then uploads them); checked below
/// the modulus on the way with `check`, or on the CPU when they stay.
fn upload_aux(gpu: usize, w: &Assignment, check: Option<usize>) -> Result<Option<gpu::DeviceScalars>> {
    timed(Stage::MsmL, || {
        match gpu::upload_scalars(gpu, w.aux, gpu::Checked::of(check, "aux")) {
            Ok(aux) => Ok(Some(aux)),
            Err(e) if e.kind == ErrorKind::OutOfMemory => {
                log::debug!("aux values not kept on GPU {gpu} ({e}); each MSM uploads them");
                if let Some(circuit) = check {
                    w.check_aux_reduced(circuit)?;
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    })
}

/// The GPU stage of one circuit, inside its GPU's lane: the H step, and
/// the MSMs over resident points or, without them, streamed points (the
/// circuit a group of one: `group::sharing_terms`).
fn gpu_stage(
    call: &Call,
    device: Option<&gpu::DeviceParams>,
    circuit: Circuit,
    (ahead, lane): (Option<Ahead>, Option<lanes::Lane>),
    gpu: usize,
) -> Result<QuerySums> {
    let Circuit { index, w, .. } = circuit;
    let cancelled = call.cancelled;
    let queued = Instant::now();
    let _lane = lane.unwrap_or_else(|| lanes::gpu_lane(gpu));
    let waited = Instant::now();
    STATS.add(Stage::LaneWait, waited - queued);
    // In the lane, this circuit's a, b, c no longer wait: the next
    // circuit's may go up.
    let (abc, aux) = match ahead {
        Some(Ahead { abc, aux, slot }) => {
            drop(slot);
            (Some(abc), aux)
        }
        None => (None, None),
    };
    // A job freed while it queued for the GPU gives the lane straight back.
    check_cancelled(cancelled)?;
    if let Some(device) = device {
        return resident_stage(call, device, circuit, (abc, aux), gpu, waited);
    }
    // The points stream: the circuit is a group of one.
    let mut sums = group::sharing_terms(call, &[(index, w)], gpu)?;
    sums.pop()
        .ok_or_else(|| Error::new(ErrorKind::Gpu, "internal: a circuit's sums are missing"))
}

fn log_h_step(index: usize, t: &gpu::HTiming) {
    log::debug!(
        "circuit {index}: GPU H: upload {:.1} ms, upload+compute {:.1} ms, download {:.1} ms",
        t.upload_ms,
        t.total_ms,
        t.download_ms
    );
}

/// a, b, c from the host for an H step: `w`'s own, or `made` (the products
/// of its values, when it leaves them to its constraints).
fn host_abc<'a>(w: &'a Assignment, made: &'a Option<[Vec<Fr>; 3]>, check: Option<usize>) -> gpu::Abc<'a> {
    match made {
        // With the points resident, memory is not short: c goes up while
        // the way back runs.
        Some([a, b, c]) => gpu::Abc::Host {
            a,
            b,
            c,
            check,
            vectors: gpu::HostVectors::Three,
            upload: gpu::StepUpload::First,
        },
        None => gpu::Abc::Host {
            a: w.a,
            b: w.b,
            c: w.c,
            check,
            vectors: gpu::HostVectors::Three,
            upload: gpu::StepUpload::First,
        },
    }
}

/// `w`'s a, b, c on GPU `gpu` when it leaves them to its constraints:
/// products there of its aux values, uploaded here unless they are already
/// (`aux`, which keeps them for the MSMs); `None` without room.
fn products_in_lane(
    gpu: usize,
    domain: &Domain,
    w: &Assignment,
    aux: &mut Option<gpu::DeviceScalars>,
    check: Option<usize>,
) -> Result<Option<gpu::DeviceAbc>> {
    if w.products.is_none() {
        return Ok(None);
    }
    if aux.is_none() {
        *aux = upload_aux(gpu, w, check)?;
    }
    let Some(on_gpu) = aux.as_ref() else {
        return Ok(None);
    };
    match timed(Stage::GpuProducts, || {
        constraints::products_on_device(gpu, domain, w, on_gpu)
    }) {
        Ok(abc) => Ok(Some(abc)),
        Err(e) if e.kind == ErrorKind::OutOfMemory => {
            log::debug!("a, b, c made on the host: no room for them on GPU {gpu} ({e})");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The GPU stage over resident points: the H step leaves h on the GPU for
/// its MSM. The four witness MSMs run beside the H step and H's MSM, on a
/// thread (and streams) of their own, when the GPU's memory holds both
/// working sets: their many short phases (splits, sorts, a window
/// combination on one thread, host round trips) leave the GPU idle, and
/// the H side's kernels fill it. Otherwise, or when they run out of memory
/// beside the H side, they run after it.
fn resident_stage(
    call: &Call,
    device: &gpu::DeviceParams,
    circuit: Circuit,
    (ahead, aux): (Option<gpu::DeviceAbc>, Option<gpu::DeviceScalars>),
    gpu: usize,
    waited: Instant,
) -> Result<QuerySums> {
    let Circuit { index, w, check } = circuit;
    let Call {
        domain, cancelled, ..
    } = *call;
    let mut aux = aux;
    let on_device = match ahead {
        Some(abc) => Some(abc),
        None => products_in_lane(gpu, domain, w, &mut aux, check)?,
    };
    // Otherwise a, b, c go up from the host (made there when `w` leaves
    // them to its constraints).
    let made = match on_device {
        Some(_) => None,
        None => w.host_products()?,
    };
    let abc = match on_device {
        Some(abc) => gpu::Abc::Device(abc),
        None => host_abc(w, &made, check),
    };
    let beside = witness_beside_h(gpu, domain, w, matches!(abc, gpu::Abc::Device(_)), aux.is_some());
    log::debug!(
        "circuit {index}: witness MSMs {} the H side",
        if beside { "beside" } else { "after" }
    );
    // Σ h_i·H_i, and when its MSM began.
    let h_side = |abc: gpu::Abc| -> Result<(G1, Instant)> {
        let (h, t) = gpu::quotient_on_device(gpu, domain, abc)?;
        log_h_step(index, &t);
        let h_done = Instant::now();
        STATS.add(Stage::GpuH, h_done - waited);
        check_cancelled(cancelled)?;
        let sum = timed(Stage::MsmH, || {
            gpu::msm(&device.h, 0, gpu::Scalars::Device(h), None)
        })?;
        Ok((sum, h_done))
    };
    let (h, h_done, witness) = if beside {
        let (h, witness) = std::thread::scope(|scope| {
            let witness = scope.spawn(|| witness_sums(device, gpu, w, aux, cancelled, check));
            (h_side(abc), witness.join())
        });
        let witness = witness
            .map_err(|payload| Error::new(ErrorKind::Panic, crate::error::panic_message(&*payload)))?;
        let h =
            h.and_then(|sum| injected_out_of_memory(&faults::H_BESIDE_OUT_OF_MEMORY, "H side").map(|()| sum));
        let witness = witness.and_then(|sums| {
            injected_out_of_memory(&faults::WITNESS_BESIDE_OUT_OF_MEMORY, "witness MSMs").map(|()| sums)
        });
        // Out of memory beside each other: the side that failed runs again
        // on its own (H from the host's a, b, c: those on the GPU, if any,
        // were consumed by the failed H step).
        let (h, h_done) = match h {
            Err(e) if e.kind == ErrorKind::OutOfMemory => {
                log::debug!(
                    "circuit {index}: H side out of memory beside the witness MSMs ({e}); again alone"
                );
                check_cancelled(cancelled)?;
                faults::BESIDE_RERUNS.fetch_add(1, Ordering::SeqCst);
                let again = match made {
                    Some(_) => None,
                    None => w.host_products()?,
                };
                h_side(host_abc(w, if again.is_some() { &again } else { &made }, check))?
            }
            other => other?,
        };
        let witness = match witness {
            Err(e) if e.kind == ErrorKind::OutOfMemory => {
                log::debug!("circuit {index}: witness MSMs out of memory beside H's ({e}); again after it");
                check_cancelled(cancelled)?;
                faults::BESIDE_RERUNS.fetch_add(1, Ordering::SeqCst);
                witness_sums(device, gpu, w, None, cancelled, check)?
            }
            other => other?,
        };
        (h, h_done, witness)
    } else {
        let (h, h_done) = h_side(abc)?;
        (h, h_done, witness_sums(device, gpu, w, aux, cancelled, check)?)
    };
    STATS.add(Stage::GpuMsm, h_done.elapsed());
    Ok(witness.with_h(h))
}

/// An out-of-memory error when `counter` says to inject one (see
/// `faults`).
fn injected_out_of_memory(counter: &std::sync::atomic::AtomicUsize, side: &str) -> Result<()> {
    if faults::take(counter) {
        return Err(Error::new(
            ErrorKind::OutOfMemory,
            format!("{side}: out of memory (injected for a test)"),
        ));
    }
    Ok(())
}

/// Whether the witness MSMs may run beside the H side on GPU `gpu`: when its
/// room holds both sides' working sets (the witness MSMs' as if no aux value
/// were 0 or 1) and the next circuit's a, b, c and aux going up meanwhile.
fn witness_beside_h(gpu: usize, domain: &Domain, w: &Assignment, abc_on_gpu: bool, aux_on_gpu: bool) -> bool {
    let (log_m, n) = (domain.log_m, w.aux.len());
    let vectors = (!abc_on_gpu).then_some(gpu::HostVectors::Three);
    let need = gpu::memory::h_side(gpu, log_m, vectors)
        .and_then(|h| Ok(h + gpu::memory::witness_side(gpu, n, aux_on_gpu)? + gpu::memory::ahead(log_m, n)));
    need.is_ok_and(|need| gpu::memory::fits(gpu, need, "witness MSMs beside H"))
}

/// A circuit's a, b, c uploaded ahead of its GPU stage, with the GPU's
/// upload slot held until the circuit is in the lane.
struct Ahead {
    abc: gpu::DeviceAbc,
    /// The aux values for the L, A and B MSMs (`None`: no room).
    aux: Option<gpu::DeviceScalars>,
    slot: MutexGuard<'static, ()>,
}

/// Uploads w's a, b, c and aux values to GPU `gpu` ahead of its lane, when
/// the GPU's upload slot is free and its room holds them beside the lane's
/// work (the H side and a witness MSM at once, for the largest domain proved
/// there); `None` leaves the uploads to the lane.
fn upload_ahead(
    domain: &Domain,
    w: &Assignment,
    gpu: usize,
    cancelled: &AtomicBool,
    check: Option<usize>,
) -> Result<Option<Ahead>> {
    let started = Instant::now();
    let slot = lanes::upload_slot(gpu);
    check_cancelled(cancelled)?;
    let (abc_bytes, aux_bytes) = (gpu::memory::ahead(domain.log_m, 0), std::mem::size_of_val(w.aux));
    let largest = lanes::largest_domain(gpu, domain.m).trailing_zeros();
    let lane = gpu::memory::h_side(gpu, largest, Some(gpu::HostVectors::Three))
        .and_then(|h| Ok(h + gpu::memory::witness_side(gpu, w.aux.len(), true)?))
        .unwrap_or(usize::MAX / 4);
    let ahead = if !gpu::memory::fits(gpu, abc_bytes + lane, "a, b, c ahead") {
        log::debug!("a, b, c not uploaded ahead: too little room on GPU {gpu}");
        None
    } else if w.products.is_some() {
        // Left to the constraints: products of the aux values, which go up
        // first (and stay for the MSMs).
        if gpu::memory::fits(gpu, abc_bytes + aux_bytes + lane, "aux ahead for a, b, c") {
            let mut aux = None;
            products_in_lane(gpu, domain, w, &mut aux, check)?.map(|abc| Ahead { abc, aux, slot })
        } else {
            None
        }
    } else {
        match gpu::upload_abc(gpu, domain, w.a, w.b, w.c, check) {
            Ok(abc) => {
                // a, b, c are in the room's accounts now.
                let aux = if gpu::memory::fits(gpu, aux_bytes + lane, "aux ahead") {
                    match gpu::upload_scalars(gpu, w.aux, gpu::Checked::of(check, "aux")) {
                        Ok(aux) => Some(aux),
                        Err(e) if e.kind == ErrorKind::OutOfMemory => None,
                        Err(e) => return Err(e),
                    }
                } else {
                    None
                };
                Some(Ahead { abc, aux, slot })
            }
            Err(e) if e.kind == ErrorKind::OutOfMemory => {
                log::debug!("a, b, c not uploaded ahead ({e}): the H step uploads them");
                None
            }
            Err(e) => return Err(e),
        }
    };
    STATS.add(Stage::AbcAhead, started.elapsed());
    Ok(ahead)
}

/// `params`' copy on GPU `gpu`, uploaded on the first proof there (or
/// declined: `None`, the points stream), inside the GPU's lane: the decision
/// reads the room the budget leaves, which a circuit's GPU stage would be
/// using.
pub fn resident_copy(params: &Parameters, gpu: usize) -> Option<Arc<gpu::DeviceParams>> {
    let started = Instant::now();
    let device = match resident::decided(params, gpu) {
        Some(device) => device,
        None => {
            let _lane = lanes::gpu_lane(gpu);
            resident::get_or_upload(params, gpu)
        }
    };
    STATS.add(Stage::ParamsUpload, started.elapsed());
    device
}

/// Circuit `index`'s H step and five MSMs on GPU `gpu`: its parameters'
/// residency decided on the first proof there, its checks and selections
/// outside the lane, its a, b, c uploaded ahead while another circuit holds
/// the lane, then its GPU stage in the lane.
pub fn sums(call: &Call, index: usize, w: &Assignment, gpu: usize) -> Result<QuerySums> {
    let Call {
        params,
        domain,
        cancelled,
        values_checked,
        ..
    } = *call;
    let device = resident_copy(params, gpu);
    // Values not known to be below the modulus: a, b, c and aux go up
    // through the staging copies, which check them on the way
    // (`gpu::Checked`), so only the inputs are checked on the CPU (here with
    // resident points, in the group's stage with streamed ones). Checked
    // here, a call's first circuit would keep the GPU idle ~0.3 s at 2^27.
    // (With several vectors at fault, the inputs are named before a, b, c,
    // and aux last.)
    let check = match (values_checked, &device) {
        (true, _) => None,
        (false, Some(_)) => {
            timed(Stage::CheckValues, || w.check_inputs_reduced(index))?;
            Some(index)
        }
        // Streamed points: checked as they go up (`group::sharing_terms`).
        (false, None) => None,
    };
    check_cancelled(cancelled)?;
    // With resident points (h stays on the GPU), a, b, c go up while
    // another circuit's GPU stage runs; with the lane free, the H step
    // uploads them itself (overlapped with its transforms).
    let lane = lanes::try_gpu_lane(gpu);
    let ahead = match (&device, &lane) {
        (Some(_), None) => upload_ahead(domain, w, gpu, cancelled, check)?,
        _ => None,
    };
    let circuit = Circuit { index, w, check };
    gpu_stage(call, device.as_deref(), circuit, (ahead, lane), gpu)
}
