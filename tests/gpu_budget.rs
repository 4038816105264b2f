//! The device budget on a GPU: a 2^24 PoRep-shaped call proves under a 4 GiB
//! budget, its GPU stages on the GPU, the library's device memory within
//! the budget and the streamed points page-locked; a budget no plan fits
//! fails before any work, saying what it needs. GPU tests: ignored without a GPU (run them on the GPU machine with
//! --include-ignored, one thread). Built with the `cuda` feature only.
#![cfg(feature = "cuda")]

use c2prover::backend::gpu::{self, memory};
use c2prover::engine::DeviceMask;
use c2prover::stats::{Stage, STATS};
use c2prover::testkit::shaped::{PorepShape, ValueMix};
use c2prover::ErrorKind;
use std::sync::atomic::AtomicBool;

/// Puts GPU 0's default budget back when a test ends, passed or not.
struct DefaultBudget;

impl Drop for DefaultBudget {
    fn drop(&mut self) {
        let _ = memory::set_budget(&[0], 0);
    }
}

fn gpu_stage_seconds() -> f64 {
    let (times, _) = STATS.snapshot();
    times
        .iter()
        .filter(|(stage, _)| matches!(stage, Stage::GpuH | Stage::GpuMsm))
        .map(|(_, t)| t)
        .sum()
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
fn a_2_24_porep_call_proves_within_a_4_gib_budget() {
    assert!(gpu::available(), "this test needs a CUDA device");
    const BUDGET: usize = 4 << 30;
    let shape = PorepShape::scaled(24);
    let mut params = shape.parameters(1);
    let witness = shape.witness(ValueMix::default(), 2);
    let circuits = [witness.as_assignment()];
    let (r, s) = c2prover::random_r_s(1);
    let cpu = c2prover::prove_on_cpu(&params, &circuits, &r, &s).unwrap();

    let _restore = DefaultBudget;
    memory::set_budget(&[0], BUDGET).unwrap();
    gpu::reset_device_peak(0).unwrap();
    let before = gpu_stage_seconds();
    let never = AtomicBool::new(false);
    let proofs =
        c2prover::engine::prove_cancellable(&params, &circuits, &r, &s, &never, DeviceMask(1)).unwrap();
    let used = memory::of(0).unwrap();
    assert_eq!(proofs, cpu, "the proof under a 4 GiB budget = the CPU backend's");
    assert!(gpu_stage_seconds() > before, "the GPU stages ran on the GPU");
    // Partial residency may keep the vectors that fit beside the work.
    let kept = c2prover::backend::resident_bytes(&params);
    let all =
        96 * (params.h.len() + params.l.len() + params.a.len() + params.b_g1.len()) + 192 * params.b_g2.len();
    assert!(
        kept < all,
        "the points ({} MiB) do not fit the budget: streamed but for vectors kept beside the work ({} MiB)",
        all >> 20,
        kept >> 20
    );
    let locked = gpu::resident::pinned_bytes(&params);
    assert_eq!(
        kept + locked,
        all,
        "every vector not kept on the GPU streams from page-locked memory ({} MiB kept, {} MiB locked)",
        kept >> 20,
        locked >> 20
    );
    let prove = |params: &c2prover::params::Parameters| {
        c2prover::engine::prove_cancellable(params, &circuits, &r, &s, &never, DeviceMask(1)).unwrap()
    };
    c2prover::backend::forget_gpu_copies(&params);
    assert_eq!(
        gpu::resident::pinned_bytes(&params),
        0,
        "forgotten parameters are unlocked"
    );
    assert_eq!(
        prove(&params),
        cpu,
        "the proof after forgetting = the CPU backend's"
    );
    assert_eq!(
        c2prover::backend::resident_bytes(&params) + gpu::resident::pinned_bytes(&params),
        all,
        "the next streamed call locks them again"
    );
    // Vectors replaced through the public fields (the same points, new
    // memory) are unlocked before the next call uploads from them.
    params.h = params.h.clone();
    params.l = params.l.clone();
    params.a = params.a.clone();
    params.b_g1 = params.b_g1.clone();
    params.b_g2 = params.b_g2.clone();
    assert_eq!(
        prove(&params),
        cpu,
        "the proof over replaced vectors = the CPU backend's"
    );
    assert_eq!(
        gpu::resident::pinned_bytes(&params),
        0,
        "replaced vectors are unlocked"
    );
    assert!(
        used.peak <= BUDGET,
        "peak {} MiB within the {} MiB budget",
        used.peak >> 20,
        BUDGET >> 20
    );
    assert!(
        used.peak > 1 << 30,
        "the H step's 1.6 GiB of a, b, c was charged (peak {} MiB)",
        used.peak >> 20
    );
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
fn a_budget_no_plan_fits_fails_at_once_with_the_size_it_needs() {
    assert!(gpu::available(), "this test needs a CUDA device");
    let shape = PorepShape::scaled(20);
    let params = shape.parameters(3);
    let witness = shape.witness(ValueMix::default(), 4);
    let circuits = [witness.as_assignment()];
    let (r, s) = c2prover::random_r_s(1);
    let _restore = DefaultBudget;
    memory::set_budget(&[0], 64 << 20).unwrap();
    let never = AtomicBool::new(false);
    let err =
        c2prover::engine::prove_cancellable(&params, &circuits, &r, &s, &never, DeviceMask(1)).unwrap_err();
    assert_eq!(err.kind, ErrorKind::OutOfMemory, "{err}");
    let need = memory::smallest_plan(0, 20).unwrap();
    assert!(
        err.message
            .contains(&format!("at least {} MiB", need.div_ceil(1 << 20))),
        "the message gives the size it needs ({} MiB): {err}",
        need >> 20
    );
    // With that much room beside what the process holds already (the
    // twiddle tables other tests left), the same call proves.
    memory::set_budget(&[0], need + memory::of(0).unwrap().in_use).unwrap();
    let proofs =
        c2prover::engine::prove_cancellable(&params, &circuits, &r, &s, &never, DeviceMask(1)).unwrap();
    let cpu = c2prover::prove_on_cpu(&params, &circuits, &r, &s).unwrap();
    assert_eq!(
        proofs, cpu,
        "the proof at the smallest budget = the CPU backend's"
    );
}
