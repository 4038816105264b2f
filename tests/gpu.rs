//! The CUDA backend against the CPU: field arithmetic against blst on a
//! million random operations per routine plus edge cases, G1/G2 point
//! arithmetic on a million points, NTTs and the H step at many sizes, and
//! device memory flat over many calls. They exist with the `cuda` feature
//! and need a GPU, so they are marked ignored (the test summary counts them
//! as such); the GPU machine runs them with `--include-ignored`, and run that
//! way without a device they fail instead of passing silently. One test
//! needs no GPU and always runs with the feature: the CUDA field arithmetic
//! built for the host (its carry instructions emulated) against blst.

#![cfg(feature = "cuda")]

/// GPU tests run one at a time: the memory test reads the device's free
/// memory, which another test's allocations (and its cached twiddle tables)
/// would move.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes the GPU for one test; a test asked to run here needs a device.
fn gpu(test: &str) -> std::sync::MutexGuard<'static, ()> {
    assert!(
        c2prover::backend::gpu::available(),
        "{test} needs a CUDA device and none was found"
    );
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

mod with_cuda {
    use super::*;
    use c2prover::math::domain::Domain;
    use c2prover::math::{Fp, Fr};
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};

    use c2prover::backend::gpu::{
        driver_free_memory, field_op, free_memory, ntt_round_trip, quotient, reserve_device_memory,
        trim_memory_pool, FieldOp,
    };
    use c2prover::error::ErrorKind;

    const OPS: usize = 1 << 20;

    /// Random Fr values with the edge cases 0, 1 and r − 1 at the front,
    /// and the Montgomery words r − 1 and the largest below r with every
    /// lower limb all ones.
    fn fr_inputs(n: usize, seed: u64) -> Vec<Fr> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let raw = |l: [u64; 4]| {
            let mut x = Fr::ZERO;
            x.0.l = l;
            x
        };
        let mut v = vec![
            Fr::ZERO,
            Fr::ONE,
            -Fr::ONE,
            -Fr::ONE,
            Fr::ZERO,
            raw([
                0xffff_ffff_0000_0000,
                0x53bd_a402_fffe_5bfe,
                0x3339_d808_09a1_d805,
                0x73ed_a753_299d_7d48,
            ]),
            raw([u64::MAX, u64::MAX, u64::MAX, 0x73ed_a753_299d_7d47]),
        ];
        v.extend((v.len()..n).map(|_| Fr::random(&mut rng)));
        v
    }

    fn fp_inputs(n: usize, seed: u64) -> Vec<Fp> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let one = Fp::from_canonical_limbs(&[1, 0, 0, 0, 0, 0]);
        let raw = |l: [u64; 6]| {
            let mut x = Fp::default();
            x.0.l = l;
            x
        };
        let mut v = vec![
            Fp::default(),
            one,
            -one,
            -one,
            Fp::default(),
            // The Montgomery words p − 1 and the largest below p with every
            // lower limb all ones.
            raw([
                0xb9fe_ffff_ffff_aaaa,
                0x1eab_fffe_b153_ffff,
                0x6730_d2a0_f6b0_f624,
                0x6477_4b84_f385_12bf,
                0x4b1b_a7b6_434b_acd7,
                0x1a01_11ea_397f_e69a,
            ]),
            raw([
                u64::MAX,
                u64::MAX,
                u64::MAX,
                u64::MAX,
                u64::MAX,
                0x1a01_11ea_397f_e699,
            ]),
        ];
        v.extend((v.len()..n).map(|_| {
            let mut limbs = [0u64; 6];
            limbs.iter_mut().for_each(|l| *l = rng.next_u64());
            limbs[5] &= 0x0fff_ffff_ffff_ffff; // below p (p > 2^380)
            Fp::from_canonical_limbs(&limbs)
        }));
        v
    }

    /// An operation and what blst computes for it.
    type Case<T> = (FieldOp, fn(T, T) -> T);

    /// Where the CUDA arithmetic runs: `field_op` (the GPU) or
    /// `field_op_on_host` (its host emulation).
    type Runner<const L: usize> = fn(FieldOp, &[[u64; L]], &[[u64; L]]) -> c2prover::Result<Vec<[u64; L]>>;

    /// Runs every case and compares each result with the CPU's.
    fn check_cases<T: Copy, const L: usize>(
        run: Runner<L>,
        cases: &[Case<T>],
        a: &[T],
        b: &[T],
        limbs: fn(&T) -> [u64; L],
    ) {
        let la: Vec<[u64; L]> = a.iter().map(limbs).collect();
        let lb: Vec<[u64; L]> = b.iter().map(limbs).collect();
        for (op, cpu) in cases {
            let got = run(*op, &la, &lb).unwrap();
            for i in 0..a.len() {
                assert_eq!(got[i], limbs(&cpu(a[i], b[i])), "{op:?} at {i}");
            }
        }
    }

    fn fr_suite(run: Runner<4>, n: usize) {
        let a = fr_inputs(n, 1);
        let mut b = fr_inputs(n, 2);
        b.rotate_left(2); // pair the edge cases with each other differently
        let cases: [Case<Fr>; 5] = [
            (FieldOp::Mul, |x, y| x * y),
            (FieldOp::Add, |x, y| x + y),
            (FieldOp::Sub, |x, y| x - y),
            (FieldOp::Sqr, |x, _| x.square()),
            (FieldOp::Neg, |x, _| -x),
        ];
        check_cases(run, &cases, &a, &b, |x| x.0.l);
        // Montgomery conversions: to_mont(canonical) and back.
        let la: Vec<[u64; 4]> = a.iter().map(|x| x.0.l).collect();
        let canonical: Vec<[u64; 4]> = a
            .iter()
            .map(|x| {
                let b = x.to_scalar_bytes();
                std::array::from_fn(|i| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap()))
            })
            .collect();
        assert_eq!(run(FieldOp::ToMont, &canonical, &canonical).unwrap(), la);
        assert_eq!(run(FieldOp::FromMont, &la, &la).unwrap(), canonical);
        check_inverses(run, &a, |x| x.inverse(), |x| x.0.l);
    }

    /// The inverse (a product per exponent bit, so checked on the first
    /// INVERSES inputs only, edge cases included) against blst's.
    const INVERSES: usize = 1 << 9;
    fn check_inverses<T: Copy, const L: usize>(
        run: Runner<L>,
        a: &[T],
        cpu: fn(&T) -> T,
        limbs: fn(&T) -> [u64; L],
    ) {
        let a = &a[..a.len().min(INVERSES)];
        let la: Vec<[u64; L]> = a.iter().map(limbs).collect();
        let got = run(FieldOp::Inv, &la, &la).unwrap();
        for (i, x) in a.iter().enumerate() {
            assert_eq!(got[i], limbs(&cpu(x)), "Inv at {i}");
        }
    }

    fn fp_suite(run: Runner<6>, n: usize) {
        let a = fp_inputs(n, 3);
        let mut b = fp_inputs(n, 4);
        b.rotate_left(2);
        let cases: [Case<Fp>; 5] = [
            (FieldOp::Mul, |x, y| x * y),
            (FieldOp::Add, |x, y| x + y),
            (FieldOp::Sub, |x, y| x - y),
            (FieldOp::Sqr, |x, _| x.square()),
            (FieldOp::Neg, |x, _| -x),
        ];
        check_cases(run, &cases, &a, &b, |x| x.0.l);
        let la: Vec<[u64; 6]> = a.iter().map(|x| x.0.l).collect();
        let canonical: Vec<[u64; 6]> = a.iter().map(Fp::to_canonical_limbs).collect();
        assert_eq!(run(FieldOp::ToMont, &canonical, &canonical).unwrap(), la);
        assert_eq!(run(FieldOp::FromMont, &la, &la).unwrap(), canonical);
        check_inverses(run, &a, |x| x.inverse_vartime(), |x| x.0.l);
    }

    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn fr_arithmetic_equals_blst() {
        let _gpu = gpu("fr_arithmetic_equals_blst");
        fr_suite(field_op, OPS);
    }

    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn fp_arithmetic_equals_blst() {
        let _gpu = gpu("fp_arithmetic_equals_blst");
        fp_suite(field_op, OPS);
    }

    /// The same arithmetic, algorithm for algorithm, on the host (no GPU
    /// needed: this runs in CI).
    #[test]
    fn host_emulated_field_arithmetic_equals_blst() {
        fr_suite(c2prover::backend::gpu::field_op_on_host, 1 << 16);
        fp_suite(c2prover::backend::gpu::field_op_on_host, 1 << 16);
    }

    /// The staging copy's check below the modulus, on the host (no GPU
    /// needed: this runs in CI): copies whole, and names the first value
    /// not below r wherever it falls among the copy's 64 KiB checks, 2 MiB
    /// parts and 64 MiB staging pieces, on the caller alone (under 4 MiB)
    /// and over the copy workers.
    #[test]
    fn staging_copies_find_the_first_value_not_below_the_modulus() {
        use c2prover::backend::gpu::checked_copy_on_host;
        let r = [
            0xffffffff00000001u64,
            0x53bda402fffe5bfe,
            0x3339d80809a1d805,
            0x73eda753299d7d48,
        ];
        let limbs = |v: [u64; 4]| Fr::slice_from_limbs(&[v])[0];
        let bad = [
            limbs(r),
            limbs([r[0] + 1, r[1], r[2], r[3]]),
            limbs([0, r[1] + 1, r[2], r[3]]),
            limbs([0, 0, 0, u64::MAX]),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let (piece, part, stage) = (2048usize, 65536usize, 1usize << 21);
        for n in [0usize, 1, 1000, 100_000, stage + 3 * part + 5] {
            let mut values: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
            if n > 0 {
                values[n / 2] = limbs([r[0] - 1, r[1], r[2], r[3]]);
            }
            let (copy, found) = checked_copy_on_host(&values).unwrap();
            assert!(copy == values, "{n} values copied");
            assert_eq!(found, None, "{n} values below r");
            if n == 0 {
                continue;
            }
            let edges = [
                0,
                piece - 1,
                piece,
                part - 1,
                part,
                part + 1,
                stage - 1,
                stage,
                n - 1,
            ];
            for (k, at) in edges.into_iter().filter(|&at| at < n).enumerate() {
                let mut v = values.clone();
                v[at] = bad[k % bad.len()];
                // A later value does not hide it, in the same piece or after.
                for later in [at + 1, at + part, n - 1] {
                    if later > at && later < n {
                        v[later] = bad[(k + 1) % bad.len()];
                    }
                }
                let (copy, found) = checked_copy_on_host(&v).unwrap();
                assert!(copy == v, "{n} values, one not below r at {at}, copied");
                assert_eq!(found, Some(at), "{n} values, the first not below r at {at}");
            }
        }
    }

    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn ntt_equals_cpu_at_every_size() {
        let _gpu = gpu("ntt_equals_cpu_at_every_size");
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for log_m in (1..=20).chain([22, 24]) {
            let d = Domain::new(log_m).unwrap();
            let original: Vec<Fr> = (0..d.m).map(|_| Fr::random(&mut rng)).collect();
            let mut values = original.clone();
            let (forward, _) = ntt_round_trip(&d, &mut values, 0).unwrap();
            let mut expected = original.clone();
            d.fft(&mut expected);
            assert!(
                forward == expected,
                "forward NTT differs from the CPU at 2^{log_m}"
            );
            assert!(
                values == original,
                "inverse NTT does not restore the input at 2^{log_m}"
            );
        }
    }

    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn h_equals_cpu_at_every_size() {
        let _gpu = gpu("h_equals_cpu_at_every_size");
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        for log_m in (1..=20).chain([22]) {
            let d = Domain::new(log_m).unwrap();
            for abc in [d.m, d.m / 2 + 1, 1] {
                let mut vec = |zeros: u32| -> Vec<Fr> {
                    (0..abc)
                        .map(|_| {
                            if rng.next_u32() % 100 < zeros {
                                Fr::ZERO
                            } else {
                                Fr::random(&mut rng)
                            }
                        })
                        .collect()
                };
                let (a, b, c) = (vec(49), vec(49), vec(80));
                let cpu = c2prover::backend::cpu::h::quotient(&d, &a, &b, &c);
                let (gpu, _) = quotient(0, &d, &a, &b, &c, log_m % 2 == 0).unwrap();
                assert!(
                    gpu == cpu,
                    "GPU h differs from the CPU at 2^{log_m}, abc_size {abc}"
                );
            }
        }
    }

    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn h_on_a_full_device_is_out_of_memory_and_frees_what_it_took() {
        let _gpu = gpu("h_on_a_full_device_is_out_of_memory_and_frees_what_it_took");
        let d = Domain::new(22).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let v: Vec<Fr> = (0..d.m).map(|_| Fr::random(&mut rng)).collect();
        let expected = c2prover::backend::cpu::h::quotient(&d, &v, &v, &v);
        quotient(0, &d, &v, &v, &v, true).unwrap(); // caches the twiddle table
                                                    // The pool kept by earlier MSMs counts as used but a failing
                                                    // cudaMalloc takes it back: return it first, then leave 64 MiB free
                                                    // (a, b, c at 2^22 need 3 x 128 MiB).
        trim_memory_pool(0).unwrap();
        // The driver's free memory, not the budget's room: the reservation
        // stands for other processes' memory, which the budget does not see.
        let free = driver_free_memory(0).unwrap();
        let hold = reserve_device_memory(0, free - (64 << 20)).unwrap();
        let before = driver_free_memory(0).unwrap();
        for overlap in [false, true] {
            let err = quotient(0, &d, &v, &v, &v, overlap).unwrap_err();
            assert_eq!(err.kind, ErrorKind::OutOfMemory, "{err}");
            assert!(
                err.to_string().contains("cudaErrorMemoryAllocation"),
                "the CUDA message is missing: {err}"
            );
        }
        let after = driver_free_memory(0).unwrap();
        assert!(
            after + (1 << 20) >= before,
            "a failed H step kept device memory: {before} -> {after} bytes free"
        );
        drop(hold);
        let (h, _) = quotient(0, &d, &v, &v, &v, true).unwrap();
        assert!(h == expected, "H after the out-of-memory failures differs");
    }

    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn device_memory_is_flat_over_many_calls() {
        let _gpu = gpu("device_memory_is_flat_over_many_calls");
        let d = Domain::new(16).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let v: Vec<Fr> = (0..d.m).map(|_| Fr::random(&mut rng)).collect();
        for _ in 0..10 {
            quotient(0, &d, &v, &v, &v, true).unwrap(); // warm-up: twiddles and pools
        }
        let before = free_memory(0).unwrap();
        for _ in 0..2000 {
            quotient(0, &d, &v, &v, &v, true).unwrap();
        }
        let after = free_memory(0).unwrap();
        assert!(
            after + (1 << 20) >= before,
            "device memory fell from {before} to {after} bytes over 2000 calls"
        );
    }

    /// Device memory is charged to the budget while held and refunded when
    /// freed; an allocation past the budget fails as out of memory, naming
    /// the budget, and leaves the accounts as they were.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn device_allocations_are_charged_to_the_budget() {
        use c2prover::backend::gpu::memory;
        let _gpu = gpu("device_allocations_are_charged_to_the_budget");
        let scalars = vec![Fr::ONE; 1 << 20];
        let before = memory::of(0).unwrap();
        let held = c2prover::backend::gpu::upload_scalars(0, &scalars, None).unwrap();
        assert_eq!(
            memory::of(0).unwrap().in_use,
            before.in_use + (32 << 20),
            "charged while held"
        );
        drop(held);
        assert_eq!(
            memory::of(0).unwrap().in_use,
            before.in_use,
            "refunded when freed"
        );
        // A budget with less room than the upload needs.
        memory::set_budget(&[0], before.in_use + (16 << 20)).unwrap();
        let refused = c2prover::backend::gpu::upload_scalars(0, &scalars, None);
        memory::set_budget(&[0], 0).unwrap();
        let err = refused.err().expect("an upload past the budget fails");
        assert_eq!(err.kind, ErrorKind::OutOfMemory, "{err}");
        assert!(err.message.contains("device budget of GPU 0"), "{err}");
        assert_eq!(
            memory::of(0).unwrap().in_use,
            before.in_use,
            "nothing left charged"
        );
        assert!(
            memory::of(0).unwrap().budget > before.in_use,
            "the default budget is back"
        );
    }
}

mod curves {
    use super::gpu;
    use c2prover::backend::gpu::{curve_op, CurveOp, GpuCurve};
    use c2prover::math::{Fr, G1Affine, G2Affine, G1, G2};
    use std::ops::{Add, Neg};

    /// Operations per routine and curve.
    const OPS: usize = 1_000_000;

    /// The group operations the check needs from blst's types.
    trait Point:
        GpuCurve + PartialEq + std::fmt::Debug + Add<Output = Self> + Neg<Output = Self> + Send + Sync
    {
        fn generator() -> Self;
        fn identity() -> Self;
        fn double(&self) -> Self;
        fn mul(&self, k: &Fr) -> Self;
        fn to_affines(points: &[Self]) -> Vec<Self::Affine>;
        fn add_affine(&self, q: &Self::Affine) -> Self;
        fn affine_identity() -> Self::Affine;
    }

    macro_rules! point {
        ($p:ident, $a:ident) => {
            impl Point for $p {
                fn generator() -> Self {
                    $p::generator()
                }
                fn identity() -> Self {
                    $p::identity()
                }
                fn double(&self) -> Self {
                    $p::double(self)
                }
                fn mul(&self, k: &Fr) -> Self {
                    $p::mul(self, k)
                }
                fn to_affines(points: &[Self]) -> Vec<$a> {
                    $p::batch_to_affine(points)
                }
                fn add_affine(&self, q: &$a) -> Self {
                    $p::add_affine(self, q)
                }
                fn affine_identity() -> $a {
                    $a::identity()
                }
            }
        };
    }
    point!(G1, G1Affine);
    point!(G2, G2Affine);

    /// n points in Jacobian form with varied Z: a random start plus
    /// multiples of a random step, with the edge cases at the front.
    fn points<P: Point>(n: usize, seed: u64) -> Vec<P> {
        let start = P::generator().mul(&Fr::from_u64(seed * 7919 + 13));
        let step = P::generator().mul(&Fr::from_u64(seed * 104729 + 7));
        let mut acc = start;
        let mut v: Vec<P> = vec![P::identity(), start, start, -start, start.double()];
        while v.len() < n {
            acc = acc + step;
            v.push(acc);
        }
        v
    }

    fn check_curve<P: Point>(name: &str) {
        let p: Vec<P> = points(OPS, 1);
        let mut q: Vec<P> = points(OPS, 2);
        // Edge pairs: O + O, P + P, P + (−P), P + O, O + P.
        q[0] = P::identity();
        q[1] = p[1];
        q[2] = -p[2];
        q[3] = P::identity();
        q[4] = p[4];
        let mut qa = P::to_affines(&q);
        qa[0] = P::affine_identity();

        let dbl = curve_op(CurveOp::Double, &p, &q, &qa).unwrap();
        let add = curve_op(CurveOp::Add, &p, &q, &qa).unwrap();
        let madd = curve_op(CurveOp::AddAffine, &p, &q, &qa).unwrap();
        let neg = curve_op(CurveOp::Neg, &p, &q, &qa).unwrap();
        for i in 0..OPS {
            assert_eq!(dbl[i], p[i].double(), "{name} double at {i}");
            assert_eq!(add[i], p[i] + q[i], "{name} add at {i}");
            assert_eq!(madd[i], p[i].add_affine(&qa[i]), "{name} mixed add at {i}");
            assert_eq!(neg[i], -p[i], "{name} negation at {i}");
        }
        assert!(add[2] == P::identity(), "{name}: P + (−P) is infinity");
    }

    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn g1_arithmetic_equals_blst() {
        let _gpu = gpu("g1_arithmetic_equals_blst");
        check_curve::<G1>("G1");
    }

    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn g2_arithmetic_equals_blst() {
        let _gpu = gpu("g2_arithmetic_equals_blst");
        check_curve::<G2>("G2");
    }
}

mod msm {
    use super::gpu;
    use c2prover::backend::cpu::msm::dense_msm;
    use c2prover::backend::gpu::{
        msm, msms_over_device_points_and_scalars, streamed_msm, streamed_msm_in_chunks,
        streamed_msms_over_device_scalars, streamed_msms_over_device_scalars_in_chunks,
        streamed_msms_sharing_scalars, streamed_msms_sharing_scalars_in_chunks, upload_g1, upload_g2,
        upload_scalars, Checked, CheckedScalars, HostTerm, Scalars,
    };
    use c2prover::math::{Fr, G1Affine, G2Affine, G1, G2};
    use rand_chacha::ChaCha8Rng;
    use rand_core::{RngCore, SeedableRng};
    use rayon::prelude::*;

    /// `distinct` random points (with infinity, P and −P among them),
    /// repeated to n: repeated points are a case of their own.
    fn g1_points(n: usize, distinct: usize, seed: u64) -> Vec<G1Affine> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ks: Vec<Fr> = (0..distinct).map(|_| Fr::random(&mut rng)).collect();
        let mut base: Vec<G1> = ks.par_iter().map(|k| G1::generator().mul(k)).collect();
        if distinct > 3 {
            base[1] = G1::identity();
            base[2] = -base[0];
        }
        let base = G1::batch_to_affine(&base);
        (0..n).map(|i| base[i % distinct]).collect()
    }

    fn g2_points(n: usize, distinct: usize, seed: u64) -> Vec<G2Affine> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ks: Vec<Fr> = (0..distinct).map(|_| Fr::random(&mut rng)).collect();
        let mut base: Vec<G2> = ks.par_iter().map(|k| G2::generator().mul(k)).collect();
        if distinct > 3 {
            base[1] = G2::identity();
            base[2] = -base[0];
        }
        let base = G2::batch_to_affine(&base);
        (0..n).map(|i| base[i % distinct]).collect()
    }

    /// Scalars: `zeros` % zeros, `ones` % ones, a few r − 1 and small
    /// values, the rest random.
    fn scalars(n: usize, zeros: u32, ones: u32, seed: u64) -> Vec<Fr> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let roll = rng.next_u32() % 100;
                if roll < zeros {
                    Fr::ZERO
                } else if roll < zeros + ones {
                    Fr::ONE
                } else if roll == 99 {
                    -Fr::ONE
                } else if roll == 98 {
                    Fr::from_u64(rng.next_u64() % 1000)
                } else {
                    Fr::random(&mut rng)
                }
            })
            .collect()
    }

    /// a, b, c as products on the GPU over a units circuit's rows (random
    /// rows of 0 to 5 terms, coefficients 1, −1 and others, inputs in the
    /// common part and in the units) give the CPU's products' h, with and
    /// without padding to the domain; values of the wrong size are refused.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn h_from_products_on_the_gpu_equals_cpu() {
        use c2prover::backend::gpu::{
            quotient_on_device, unit_products, upload_scalars, Abc, DeviceConstraints,
        };
        use c2prover::error::ErrorKind;
        use c2prover::math::domain::Domain;
        let _gpu = gpu("h_from_products_on_the_gpu_equals_cpu");
        for (units, unit_inputs) in [(1usize, 0usize), (5, 1), (37, 2), (1000, 1)] {
            let (constraints, inputs, aux) =
                c2prover::testkit::synthetic::unit_constraints(units, unit_inputs, 31).unwrap();
            let [a, b, c] = constraints.products(&inputs, &aux).unwrap();
            let on_gpu = DeviceConstraints::upload(0, &constraints).unwrap();
            assert_eq!(on_gpu.bytes(), DeviceConstraints::bytes_for(&constraints));
            let aux_on_gpu = upload_scalars(0, &aux, None).unwrap();
            let log_m = constraints.abc_len().next_power_of_two().trailing_zeros().max(1);
            for log_m in [log_m, log_m + 1] {
                let d = Domain::new(log_m).unwrap();
                let cpu = c2prover::backend::cpu::h::quotient(&d, &a, &b, &c);
                let abc = unit_products(0, &d, &on_gpu, &inputs, &aux_on_gpu).unwrap();
                let (h, _) = quotient_on_device(0, &d, Abc::Device(abc)).unwrap();
                assert!(
                    h.to_host().unwrap() == cpu,
                    "h of the GPU's products differs from the CPU's: {units} units, 2^{log_m}"
                );
            }
            let d = Domain::new(log_m + 1).unwrap();
            let short = upload_scalars(0, &aux[1..], None).unwrap();
            let e = unit_products(0, &d, &on_gpu, &inputs, &short)
                .err()
                .expect("short aux");
            assert_eq!(e.kind, ErrorKind::SizeMismatch, "{e}");
        }
    }

    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn h_from_a_b_c_uploaded_ahead_equals_cpu() {
        use c2prover::backend::gpu::{
            free_memory, quotient_on_device, upload_abc, Abc, HostVectors, StepUpload,
        };
        use c2prover::math::domain::Domain;
        let _gpu = gpu("h_from_a_b_c_uploaded_ahead_equals_cpu");
        // h as the H step leaves it on the device, copied back.
        let h_of = |d: &Domain, abc: Abc<'_>| {
            let (h, _) = quotient_on_device(0, d, abc).unwrap();
            assert_eq!(h.len(), d.m - 1);
            h.to_host().unwrap()
        };
        for log_m in [1u32, 2, 7, 12, 16, 20, 22] {
            let d = Domain::new(log_m).unwrap();
            for len in [d.m, d.m / 2 + 1, 1] {
                let (a, b, c) = (
                    scalars(len, 49, 10, 40 + log_m as u64),
                    scalars(len, 49, 10, 60 + log_m as u64),
                    scalars(len, 80, 10, 80 + log_m as u64),
                );
                let cpu = c2prover::backend::cpu::h::quotient(&d, &a, &b, &c);
                for vectors in [HostVectors::Three, HostVectors::Two] {
                    for upload in [StepUpload::First, StepUpload::InTurn] {
                        assert!(
                            h_of(
                                &d,
                                Abc::Host {
                                    a: &a,
                                    b: &b,
                                    c: &c,
                                    check: Some(0),
                                    vectors,
                                    upload,
                                }
                            ) == cpu,
                            "h with a, b, c from the host in {vectors:?} vectors, uploaded {upload:?}, differs from \
                             the CPU's, 2^{log_m}, {len} entries"
                        );
                    }
                }
                let ahead = upload_abc(0, &d, &a, &b, &c, Some(0)).unwrap();
                assert!(
                    h_of(&d, Abc::Device(ahead)) == cpu,
                    "h with a, b, c uploaded ahead (zero-padded) differs from the CPU's, 2^{log_m}, {len} entries"
                );
            }
        }
        // a, b, c uploaded for one domain are refused for another, and freed.
        let (d12, d13) = (Domain::new(12).unwrap(), Domain::new(13).unwrap());
        let v = scalars(d12.m, 0, 0, 99);
        let before = free_memory(0).unwrap();
        for _ in 0..200 {
            let ahead = upload_abc(0, &d12, &v, &v, &v, None).unwrap();
            assert!(quotient_on_device(0, &d13, Abc::Device(ahead)).is_err());
            let ahead = upload_abc(0, &d12, &v, &v, &v, None).unwrap();
            drop(quotient_on_device(0, &d12, Abc::Device(ahead)).unwrap());
        }
        let after = free_memory(0).unwrap();
        assert!(
            after + (1 << 20) >= before,
            "device memory fell from {before} to {after} bytes over 400 uploads ahead"
        );
        assert!(
            upload_abc(0, &d12, &v, &v[1..], &v, None).is_err(),
            "lengths differ"
        );
        // Uploaded scalars come back as they went.
        let s = scalars(100_003, 30, 30, 98);
        assert!(upload_scalars(0, &s, None).unwrap().to_host().unwrap() == s);
    }

    /// Witness values checked below the modulus as they go up (the staging
    /// copy's check): the first one at or above it is named, wherever it
    /// falls among the copy's pieces (64 KiB checks, 2 MiB parts, 64 MiB
    /// staging buffers, 256 MiB uploads), and a later one does not hide
    /// it; r − 1 passes; nothing leaks.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn uploads_name_the_first_value_not_below_the_modulus() {
        use c2prover::backend::gpu::{
            free_memory, quotient_on_device, upload_abc, Abc, Checked, HostVectors, StepUpload,
        };
        use c2prover::error::ErrorKind;
        use c2prover::math::domain::Domain;
        let _gpu = gpu("uploads_name_the_first_value_not_below_the_modulus");
        let limbs = |v: [u64; 4]| Fr::slice_from_limbs(&[v])[0];
        let r = [
            0xffffffff00000001u64,
            0x53bda402fffe5bfe,
            0x3339d80809a1d805,
            0x73eda753299d7d48,
        ];
        let bad = [
            limbs(r),
            limbs([r[0] + 1, r[1], r[2], r[3]]),
            limbs([0, 0, r[2] + 1, r[3]]),
            limbs([0, 0, 0, u64::MAX]),
        ];
        let checked = Checked::of(Some(3), "aux");
        // 2^24 + 5 values (512 MiB and a bit): over two 256 MiB pieces.
        let n = (1usize << 24) + 5;
        let mut values = scalars(n, 30, 30, 97);
        values[n / 2] = limbs([r[0] - 1, r[1], r[2], r[3]]);
        let before = free_memory(0).unwrap();
        let up = upload_scalars(0, &values, checked).expect("r - 1 and smaller pass");
        assert!(up.to_host().unwrap() == values);
        drop(up);
        let part = (2usize << 20) / 32;
        for (k, at) in [
            0,
            2047,
            2048,
            part - 1,
            part + 7,
            3 * part,
            (2 << 20) + 1,
            (8 << 20) + 9,
            n - 1,
        ]
        .into_iter()
        .enumerate()
        {
            let mut v = values.clone();
            v[at] = bad[k % bad.len()];
            if at + 1000 < n {
                v[at + 1000] = bad[(k + 1) % bad.len()];
                v[n - 1] = bad[(k + 2) % bad.len()];
            }
            let e = upload_scalars(0, &v, checked)
                .err()
                .expect("a value not below r fails");
            assert_eq!(e.kind, ErrorKind::InvalidArgument);
            assert_eq!(
                e.message,
                format!("circuits[3].aux[{at}] is not below the field modulus"),
                "value at {at}"
            );
            assert!(
                upload_scalars(0, &v, None).is_ok(),
                "unchecked, the same values go up"
            );
        }
        // a, b, c: ahead and in the H step; the first vector with one is named.
        let d = Domain::new(16).unwrap();
        let (a, mut b, mut c) = (
            scalars(d.m, 49, 10, 1),
            scalars(d.m, 49, 10, 2),
            scalars(d.m, 80, 10, 3),
        );
        b[7000] = bad[0];
        c[5] = bad[3];
        for (ahead, vectors, upload) in [
            (false, HostVectors::Three, StepUpload::First),
            (false, HostVectors::Two, StepUpload::First),
            (false, HostVectors::Two, StepUpload::InTurn),
            (true, HostVectors::Three, StepUpload::First),
        ] {
            let e = if ahead {
                upload_abc(0, &d, &a, &b, &c, Some(1)).err()
            } else {
                quotient_on_device(
                    0,
                    &d,
                    Abc::Host {
                        a: &a,
                        b: &b,
                        c: &c,
                        check: Some(1),
                        vectors,
                        upload,
                    },
                )
                .err()
            }
            .expect("b and c hold values not below r");
            assert_eq!(e.message, "circuits[1].b[7000] is not below the field modulus");
        }
        assert!(upload_abc(0, &d, &a, &b, &c, None).is_ok(), "unchecked");
        let after = free_memory(0).unwrap();
        assert!(
            after + (1 << 20) >= before,
            "device memory fell from {before} to {after} bytes over failed checked uploads"
        );
    }

    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn g1_msm_equals_blst() {
        let _gpu = gpu("g1_msm_equals_blst");
        let sizes = [
            1usize,
            2,
            3,
            7,
            64,
            100,
            1000,
            4099,
            1 << 14,
            1 << 16,
            (1 << 18) + 5,
            1 << 20,
            1 << 22,
        ];
        let points = g1_points(1 << 22, 1 << 14, 1);
        let device = upload_g1(0, &points).unwrap();
        for (k, &n) in sizes.iter().enumerate() {
            for (zeros, ones) in [(0, 0), (49, 30), (100, 0), (0, 100)] {
                let s = scalars(n, zeros, ones, 100 + k as u64);
                let want = dense_msm(&points[..n], &s).to_affine();
                let got = msm::<G1>(&device, 0, Scalars::Host(&s), None)
                    .unwrap()
                    .to_affine();
                assert_eq!(got, want, "G1 MSM of {n} points ({zeros} % zeros, {ones} % ones)");
            }
        }
        // 64-bit scalars over 2^22 points: more windows than one group
        // holds, and the high groups have only zero digits.
        let mut rng = ChaCha8Rng::seed_from_u64(300);
        let small: Vec<Fr> = (0..1 << 22).map(|_| Fr::from_u64(rng.next_u64())).collect();
        let want = dense_msm(&points, &small).to_affine();
        assert_eq!(
            msm::<G1>(&device, 0, Scalars::Host(&small), None)
                .unwrap()
                .to_affine(),
            want,
            "64-bit scalars"
        );
        // With an offset into the resident vector, and all scalars equal
        // (every point in one bucket per window).
        let s = vec![Fr::from_u64(123456789); 100_000];
        let want = dense_msm(&points[777..777 + s.len()], &s).to_affine();
        assert_eq!(
            msm::<G1>(&device, 777, Scalars::Host(&s), None)
                .unwrap()
                .to_affine(),
            want,
            "one bucket"
        );
        assert!(
            msm::<G1>(&device, points.len() - 10, Scalars::Host(&s), None).is_err(),
            "out of range"
        );
        let empty: Vec<Fr> = Vec::new();
        assert!(msm::<G1>(&device, 0, Scalars::Host(&empty), None)
            .unwrap()
            .is_identity());
    }

    /// The batch-affine bucket sums meet every exceptional pair: P + (−P),
    /// P + P, infinity on either side, and sums of such. Points repeat the
    /// pattern P, −P, P, P, Q, −Q, O, R (O infinity); with all scalars equal
    /// every window has one bucket holding all of them in this order, and
    /// 2^17 points make every window group large enough for the batch-affine
    /// path. Random scalars then pair them by chance.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn g1_msm_exceptional_pairs_equal_blst() {
        let _gpu = gpu("g1_msm_exceptional_pairs_equal_blst");
        let base = g1_points(4, 4, 11); // P, O, −P, R
        let q = g1_points(1, 1, 12)[0];
        let neg = |p: &G1Affine| (-p.to_projective()).to_affine();
        let (p, o, minus_p, r) = (base[0], base[1], base[2], base[3]);
        let pattern = [p, minus_p, p, p, q, neg(&q), o, r];
        let n = 1 << 17;
        let points: Vec<G1Affine> = (0..n).map(|i| pattern[i % pattern.len()]).collect();
        let device = upload_g1(0, &points).unwrap();
        for (k, count) in [n, n - 1, n - 3, 9].into_iter().enumerate() {
            let equal = vec![Fr::from_u64(987654321); count];
            let want = dense_msm(&points[..count], &equal).to_affine();
            assert_eq!(
                msm::<G1>(&device, 0, Scalars::Host(&equal), None)
                    .unwrap()
                    .to_affine(),
                want,
                "{count} points in one bucket per window"
            );
            let s = scalars(count, 10, 10, 400 + k as u64);
            let want = dense_msm(&points[..count], &s).to_affine();
            assert_eq!(
                msm::<G1>(&device, 0, Scalars::Host(&s), None)
                    .unwrap()
                    .to_affine(),
                want,
                "{count} points, random scalars"
            );
        }
    }

    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn g2_msm_equals_blst() {
        let _gpu = gpu("g2_msm_equals_blst");
        let points = g2_points(1 << 18, 1 << 12, 2);
        let device = upload_g2(0, &points).unwrap();
        for (k, &n) in [1usize, 2, 5, 100, 1000, 1 << 14, 1 << 18].iter().enumerate() {
            for (zeros, ones) in [(0, 0), (49, 30)] {
                let s = scalars(n, zeros, ones, 200 + k as u64);
                let want = dense_msm(&points[..n], &s).to_affine();
                let got = msm::<G2>(&device, 0, Scalars::Host(&s), None)
                    .unwrap()
                    .to_affine();
                assert_eq!(got, want, "G2 MSM of {n} points ({zeros} % zeros, {ones} % ones)");
            }
        }
    }

    /// A density bitmap applied on the device gives the MSM of the scalars
    /// selected on the host, over the points from the offset on.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn masked_msm_equals_host_selection() {
        let _gpu = gpu("masked_msm_equals_host_selection");
        let points = g1_points(1 << 20, 1 << 12, 7);
        let g2 = g2_points(1 << 16, 1 << 10, 8);
        let device = upload_g1(0, &points).unwrap();
        let device_g2 = upload_g2(0, &g2).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(700);
        for (n, keep) in [
            (1usize, 100u32),
            (1000, 25),
            (100_003, 25),
            (1 << 20, 99),
            (1 << 20, 0),
        ] {
            let s = scalars(n, 49, 45, 800 + n as u64);
            // Bits past n are set too: they must not count.
            let words: Vec<u64> = (0..n.div_ceil(64) + 1)
                .map(|_| (0..64).fold(0u64, |w, b| w | (((rng.next_u32() % 100) < keep) as u64) << b))
                .collect();
            let picked: Vec<Fr> = (0..n)
                .filter(|&i| (words[i / 64] >> (i % 64)) & 1 == 1)
                .map(|i| s[i])
                .collect();
            let offset = (points.len() - picked.len()).min(5);
            let want = dense_msm(&points[offset..offset + picked.len()], &picked).to_affine();
            let got = msm::<G1>(&device, offset, Scalars::Host(&s), Some(&words))
                .unwrap()
                .to_affine();
            assert_eq!(got, want, "G1, {n} scalars, {keep} % kept");
            // The same scalars uploaded once and shared: read, not consumed,
            // so a second MSM over them gives the same sum.
            let shared = upload_scalars(0, &s, None).unwrap();
            for round in 0..2 {
                let got = msm::<G1>(&device, offset, Scalars::Shared(&shared), Some(&words))
                    .unwrap()
                    .to_affine();
                assert_eq!(got, want, "G1 shared, {n} scalars, {keep} % kept, round {round}");
            }
            if n <= g2.len() {
                let want = dense_msm(&g2[..picked.len()], &picked).to_affine();
                let got = msm::<G2>(&device_g2, 0, Scalars::Host(&s), Some(&words))
                    .unwrap()
                    .to_affine();
                assert_eq!(got, want, "G2, {n} scalars, {keep} % kept");
                let got = msm::<G2>(&device_g2, 0, Scalars::Shared(&shared), Some(&words))
                    .unwrap()
                    .to_affine();
                assert_eq!(got, want, "G2 shared, {n} scalars, {keep} % kept");
            }
            let unmasked = msm::<G1>(&device, 0, Scalars::Shared(&shared), None)
                .unwrap()
                .to_affine();
            assert_eq!(
                unmasked,
                dense_msm(&points[..n], &s).to_affine(),
                "G1 shared, unmasked, {n}"
            );
        }
        let s = scalars(1000, 0, 0, 900);
        let all = vec![!0u64; 16];
        assert!(
            msm::<G1>(&device, points.len() - 999, Scalars::Host(&s), Some(&all)).is_err(),
            "selected past the points"
        );
        assert!(
            msm::<G1>(&device, 0, Scalars::Host(&s), Some(&all[..10])).is_err(),
            "bitmap too short"
        );
    }

    /// A job's circuits spread over every GPU give the proofs of one GPU,
    /// byte for byte; each GPU used holds its own copy of the parameters.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn circuits_spread_over_gpus_give_the_same_proofs() {
        use c2prover::engine::DeviceMask;
        use c2prover::testkit::synthetic::Circuit;
        use std::sync::atomic::AtomicBool;
        let _gpu = gpu("circuits_spread_over_gpus_give_the_same_proofs");
        let circuits: Vec<Circuit> = (0..4)
            .map(|i| Circuit::porep_like(14, 3, 30 + i).unwrap())
            .collect();
        let params = circuits[0].setup(4);
        let witnesses: Vec<_> = circuits.iter().map(Circuit::witness).collect();
        let assignments: Vec<_> = witnesses.iter().map(|w| w.as_assignment()).collect();
        let (r, s) = c2prover::random_r_s(4);
        let never = AtomicBool::new(false);
        let prove = |mask| c2prover::engine::prove_cancellable(&params, &assignments, &r, &s, &never, mask);
        let one = prove(DeviceMask(1)).unwrap();
        let all = prove(DeviceMask::ALL).unwrap();
        assert_eq!(one, all, "GPU 0 alone = all GPUs");
        let gpus = c2prover::backend::gpu::device_count();
        let per_copy = c2prover::backend::gpu::DeviceParams::bytes_for(&params);
        assert_eq!(
            c2prover::backend::resident_bytes(&params),
            per_copy * gpus.min(4),
            "one copy per GPU used"
        );
        eprintln!("{gpus} GPU(s): 4 circuits spread over {}", gpus.min(4));
        if gpus >= 2 {
            assert_eq!(prove(DeviceMask(2)).unwrap(), one, "GPU 1 alone");
        }
        let missing = DeviceMask(1 << gpus.min(63));
        assert!(prove(missing).is_err(), "a mask naming no present GPU");
    }

    /// A call of several circuits on one GPU: two workers, the next
    /// circuit's a, b, c and aux uploaded while the other holds the lane;
    /// the proofs are the CPU backend's.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn inputs_uploaded_ahead_give_the_cpu_proofs() {
        use c2prover::engine::DeviceMask;
        use c2prover::stats::{Stage, STATS};
        use c2prover::testkit::synthetic::Circuit;
        use std::sync::atomic::AtomicBool;
        let _gpu = gpu("inputs_uploaded_ahead_give_the_cpu_proofs");
        let n = 6;
        let circuits: Vec<Circuit> = (0..n)
            .map(|i| Circuit::porep_like(16, 3, 50 + i as u64).unwrap())
            .collect();
        let params = circuits[0].setup(5);
        let witnesses: Vec<_> = circuits.iter().map(Circuit::witness).collect();
        let assignments: Vec<_> = witnesses.iter().map(|w| w.as_assignment()).collect();
        let (r, s) = c2prover::random_r_s(n);
        let never = AtomicBool::new(false);
        let ahead_seconds = || {
            STATS
                .snapshot()
                .0
                .iter()
                .find(|(stage, _)| *stage == Stage::AbcAhead)
                .map_or(0.0, |(_, t)| *t)
        };
        let before = ahead_seconds();
        let gpu = c2prover::engine::prove_cancellable(&params, &assignments, &r, &s, &never, DeviceMask(1))
            .unwrap();
        assert!(
            ahead_seconds() > before,
            "no circuit went through the upload ahead"
        );
        let cpu = c2prover::prove_on_cpu(&params, &assignments, &r, &s).unwrap();
        assert_eq!(gpu, cpu, "proofs with inputs uploaded ahead = the CPU backend's");
    }

    /// The re-runs after running out of memory beside each other: the H
    /// side again from the host's a, b, c (those uploaded ahead consumed by
    /// the failed attempt), the witness MSMs again after it from the host's
    /// aux values. Out-of-memory errors are injected (`testkit::faults`); a
    /// healthy GPU never takes these paths. The proofs are the CPU
    /// backend's either way.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn reruns_after_out_of_memory_beside_h_give_the_cpu_proofs() {
        use c2prover::engine::DeviceMask;
        use c2prover::testkit::faults;
        use c2prover::testkit::synthetic::Circuit;
        use std::sync::atomic::AtomicBool;
        let _gpu = gpu("reruns_after_out_of_memory_beside_h_give_the_cpu_proofs");
        let circuits: Vec<Circuit> = (0..3)
            .map(|i| Circuit::porep_like(16, 3, 70 + i).unwrap())
            .collect();
        let params = circuits[0].setup(7);
        let witnesses: Vec<_> = circuits.iter().map(Circuit::witness).collect();
        let assignments: Vec<_> = witnesses.iter().map(|w| w.as_assignment()).collect();
        let (r, s) = c2prover::random_r_s(circuits.len());
        let cpu = c2prover::prove_on_cpu(&params, &assignments, &r, &s).unwrap();
        let never = AtomicBool::new(false);
        for (h_fails, witness_fails) in [(1, 0), (0, 1), (1, 1), (2, 3)] {
            faults::fail_beside(h_fails, witness_fails);
            let before = faults::beside_reruns();
            let gpu =
                c2prover::engine::prove_cancellable(&params, &assignments, &r, &s, &never, DeviceMask(1));
            let left = faults::fail_beside(0, 0);
            let reruns = faults::beside_reruns() - before;
            let gpu = gpu.unwrap();
            assert_eq!(
                left,
                (0, 0),
                "injected failures ({h_fails}, {witness_fails}) not met: the witness MSMs did not run \
                 beside the H side (too little GPU memory, or streamed points?)"
            );
            assert_eq!(
                reruns,
                h_fails + witness_fails,
                "one re-run per failure ({h_fails}, {witness_fails})"
            );
            assert_eq!(
                gpu, cpu,
                "proofs after re-runs ({h_fails}, {witness_fails}) = the CPU backend's"
            );
        }
    }

    /// Points streamed from host memory in chunks (the last one short)
    /// give the MSM of the whole vector.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn streamed_msm_equals_blst() {
        let _gpu = gpu("streamed_msm_equals_blst");
        let points = g1_points((1 << 20) + 3, 1 << 12, 5);
        let s = scalars(points.len(), 49, 30, 500);
        let want = dense_msm(&points, &s).to_affine();
        for chunk in [100_000, 1 << 20, 1 << 21] {
            let got: G1 = streamed_msm_in_chunks(0, &points, &s, None, chunk).unwrap();
            assert_eq!(got.to_affine(), want, "G1 streamed in chunks of {chunk}");
        }
        let points = g2_points((1 << 16) + 1, 1 << 10, 6);
        let s = scalars(points.len(), 49, 30, 600);
        let want = dense_msm(&points, &s).to_affine();
        let got: G2 = streamed_msm_in_chunks(0, &points, &s, None, 10_000).unwrap();
        assert_eq!(got.to_affine(), want, "G2 streamed in chunks of 10000");
        let got: G2 = streamed_msm(0, &points, &s, None).unwrap();
        assert_eq!(got.to_affine(), want, "G2 streamed in default chunks");
        assert!(
            streamed_msm::<G2>(0, &points[..10], &s, None).is_err(),
            "more scalars than points"
        );
    }

    /// Streamed points with a density applied on the device, chunk by
    /// chunk, give the MSM of the scalars selected on the host: chunks not
    /// a multiple of 64, a stretch of clear bits longer than a chunk (a
    /// chunk that meets no point), bits set past the end.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn streamed_masked_msm_equals_host_selection() {
        let _gpu = gpu("streamed_masked_msm_equals_host_selection");
        let n = (1 << 20) + 77;
        let s = scalars(n, 40, 40, 900);
        let mut rng = ChaCha8Rng::seed_from_u64(901);
        let mut words: Vec<u64> = (0..n.div_ceil(64)).map(|_| rng.next_u64()).collect();
        words[100..3000].iter_mut().for_each(|w| *w = 0);
        *words.last_mut().unwrap() = u64::MAX;
        let picked: Vec<Fr> = (0..n)
            .filter(|&i| (words[i / 64] >> (i % 64)) & 1 == 1)
            .map(|i| s[i])
            .collect();
        let points = g1_points(picked.len() + 3, 1 << 12, 9);
        let want = dense_msm(&points[..picked.len()], &picked).to_affine();
        for chunk in [100_000, 150_001, 1 << 21] {
            let got: G1 = streamed_msm_in_chunks(0, &points, &s, Some(&words), chunk).unwrap();
            assert_eq!(got.to_affine(), want, "G1 with a density, chunks of {chunk}");
        }
        let got: G1 = streamed_msm(0, &points, &s, Some(&words)).unwrap();
        assert_eq!(got.to_affine(), want, "G1 with a density, default chunks");
        let g2 = g2_points(picked.len(), 1 << 10, 10);
        let want = dense_msm(&g2, &picked).to_affine();
        let got: G2 = streamed_msm_in_chunks(0, &g2, &s, Some(&words), 200_000).unwrap();
        assert_eq!(got.to_affine(), want, "G2 with a density");
        assert!(
            streamed_msm::<G1>(0, &points[..picked.len() - 1], &s, Some(&words)).is_err(),
            "fewer points than bits set"
        );
        assert!(
            streamed_msm::<G1>(0, &points, &s, Some(&words[..10])).is_err(),
            "a bitmap too short"
        );
    }

    /// MSMs of several terms over shared scalar vectors (each chunk of a
    /// vector uploaded once for all the terms) equal the MSMs of the
    /// scalars selected on the host, term by term and vector by vector:
    /// a dense G1 term, G1 and G2 terms with densities (a stretch of clear
    /// bits longer than a chunk), chunks not a multiple of 64, one chunk.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn streamed_msms_sharing_scalars_equal_host_selection() {
        let _gpu = gpu("streamed_msms_sharing_scalars_equal_host_selection");
        let n = (1 << 19) + 77;
        let vectors = [scalars(n, 40, 40, 910), scalars(n, 51, 47, 911)];
        let mut rng = ChaCha8Rng::seed_from_u64(912);
        let mut words: Vec<u64> = (0..n.div_ceil(64))
            .map(|_| rng.next_u64() & rng.next_u64())
            .collect();
        words[100..3000].iter_mut().for_each(|w| *w = 0);
        let pick = |s: &[Fr]| -> Vec<Fr> {
            (0..n)
                .filter(|&i| (words[i / 64] >> (i % 64)) & 1 == 1)
                .map(|i| s[i])
                .collect()
        };
        let picked = pick(&vectors[0]).len();
        let dense = g1_points(n, 1 << 12, 913);
        let sparse = g1_points(picked, 1 << 11, 914);
        let sparse_g2 = g2_points(picked + 5, 1 << 10, 915);
        let g1 = [
            HostTerm::<G1> {
                points: &dense,
                density: None,
                resident: None,
            },
            HostTerm::<G1> {
                points: &sparse,
                density: Some(&words),
                resident: None,
            },
        ];
        let g2 = [HostTerm::<G2> {
            points: &sparse_g2,
            density: Some(&words),
            resident: None,
        }];
        let refs: Vec<CheckedScalars> = vectors
            .iter()
            .map(|v| CheckedScalars {
                values: v,
                check: None,
            })
            .collect();
        let none = || Ok(());
        let mut runs = vec![streamed_msms_sharing_scalars(0, &g1, &g2, &refs, &none).unwrap()];
        for chunk in [100_000, 150_001] {
            runs.push(streamed_msms_sharing_scalars_in_chunks(0, &g1, &g2, &refs, &none, chunk).unwrap());
        }
        // Copies kept on the GPU, read there chunk by chunk: the dense
        // term's, and the sparse G1 term's from point 3 of its copy.
        let dense_copy = upload_g1(0, &dense).unwrap();
        let shifted: Vec<_> = dense[..3].iter().chain(&sparse).copied().collect();
        let sparse_copy = upload_g1(0, &shifted).unwrap();
        let kept = [
            HostTerm::<G1> {
                points: &dense,
                density: None,
                resident: Some((&dense_copy, 0)),
            },
            HostTerm::<G1> {
                points: &sparse,
                density: Some(&words),
                resident: Some((&sparse_copy, 3)),
            },
        ];
        runs.push(streamed_msms_sharing_scalars_in_chunks(0, &kept, &g2, &refs, &none, 100_000).unwrap());
        let short_copy = [HostTerm::<G1> {
            points: &sparse,
            density: Some(&words),
            resident: Some((&sparse_copy, 4)),
        }];
        assert!(
            streamed_msms_sharing_scalars(0, &short_copy, &[], &refs, &none).is_err(),
            "a copy with fewer points past its start than bits set"
        );
        for (run, got) in runs.iter().enumerate() {
            for (v, s) in vectors.iter().enumerate() {
                let selected = pick(s);
                assert_eq!(
                    got.g1[0][v].to_affine(),
                    dense_msm(&dense, s).to_affine(),
                    "run {run}, vector {v}: dense"
                );
                assert_eq!(
                    got.g1[1][v].to_affine(),
                    dense_msm(&sparse, &selected).to_affine(),
                    "run {run}, vector {v}: G1 with a density"
                );
                assert_eq!(
                    got.g2[0][v].to_affine(),
                    dense_msm(&sparse_g2[..picked], &selected).to_affine(),
                    "run {run}, vector {v}: G2 with a density"
                );
            }
        }
        let short = [HostTerm::<G1> {
            points: &sparse[..picked - 1],
            density: Some(&words),
            resident: None,
        }];
        assert!(
            streamed_msms_sharing_scalars(0, &short, &[], &refs, &none).is_err(),
            "fewer points than bits set"
        );
        let uneven = [
            refs[0],
            CheckedScalars {
                values: &vectors[1][1..],
                check: None,
            },
        ];
        assert!(
            streamed_msms_sharing_scalars(0, &g1, &g2, &uneven, &none).is_err(),
            "vectors of different lengths"
        );
        // Checked as they go up: a value not below r in a later chunk of
        // the second vector is named at its place in the whole vector.
        let mut bad = vectors[1].clone();
        let at = 300_017;
        bad[at].0.l = [u64::MAX; 4];
        let checked = [
            refs[0],
            CheckedScalars {
                values: &bad,
                check: Checked::of(Some(5), "aux"),
            },
        ];
        let e = streamed_msms_sharing_scalars_in_chunks(0, &g1, &g2, &checked, &none, 100_000)
            .err()
            .expect("a value not below r fails");
        assert_eq!(
            e.message,
            format!("circuits[5].aux[{at}] is not below the field modulus")
        );
        let cancelled = || Err(c2prover::Error::new(c2prover::ErrorKind::Cancelled, "stop"));
        let e = streamed_msms_sharing_scalars(0, &g1, &g2, &refs, &cancelled)
            .err()
            .expect("stops");
        assert_eq!(e.kind, c2prover::ErrorKind::Cancelled);
    }

    /// H's MSM over h left on the GPU, for several circuits at once with
    /// each chunk of points going up once: equal to the CPU's, in one chunk
    /// and in chunks that do not divide the length, and h left whole (the
    /// same h serve every run; the CPU takes over from them on a failure).
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn streamed_msms_over_device_scalars_equal_cpu() {
        let _gpu = gpu("streamed_msms_over_device_scalars_equal_cpu");
        let n = (1 << 19) + 5;
        let points = g1_points(n + 3, 1 << 12, 920);
        let vectors = [scalars(n, 5, 5, 921), scalars(n, 49, 40, 922)];
        let want: Vec<_> = vectors
            .iter()
            .map(|v| dense_msm(&points[..n], v).to_affine())
            .collect();
        let on_gpu: Vec<_> = vectors
            .iter()
            .map(|v| upload_scalars(0, v, None).unwrap())
            .collect();
        for chunk in [None, Some(100_003)] {
            let got: Vec<G1> = match chunk {
                None => streamed_msms_over_device_scalars(0, &points, &on_gpu),
                Some(chunk) => streamed_msms_over_device_scalars_in_chunks(0, &points, &on_gpu, chunk),
            }
            .unwrap();
            let got: Vec<_> = got.iter().map(|p| p.to_affine()).collect();
            assert_eq!(got, want, "chunks of {chunk:?}");
        }
        // The points kept on the GPU too (H kept beside streamed others).
        let points_on_gpu = upload_g1(0, &points).unwrap();
        for chunk in [n, 100_003] {
            let got: Vec<G1> = msms_over_device_points_and_scalars(&points_on_gpu, &on_gpu, chunk).unwrap();
            let got: Vec<_> = got.iter().map(|p| p.to_affine()).collect();
            assert_eq!(got, want, "points on the GPU, chunks of {chunk}");
        }
        let few = upload_g1(0, &points[..n - 1]).unwrap();
        assert!(
            msms_over_device_points_and_scalars::<G1>(&few, &on_gpu, n).is_err(),
            "fewer points on the GPU than scalars"
        );
        for (k, (h, v)) in on_gpu.iter().zip(&vectors).enumerate() {
            assert!(h.to_host().unwrap() == *v, "h {k} left as it was");
        }
        assert!(
            streamed_msms_over_device_scalars::<G1>(0, &points[..n - 1], &on_gpu[..1]).is_err(),
            "fewer points than scalars"
        );
    }

    /// A proof with the parameters streamed equals one with them resident,
    /// byte for byte, and verifies. (Byte identity with bellperson on the
    /// streamed path: `bellperson_identity` run with C2P_PARAMS_ON_GPU=never.)
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn streamed_and_resident_proofs_are_identical() {
        use c2prover::testkit::synthetic::Circuit;
        use c2prover::Residency;
        let _gpu = gpu("streamed_and_resident_proofs_are_identical");
        let circuit = Circuit::porep_like(16, 7, 8).unwrap();
        let setup = circuit.setup(9);
        let witness = circuit.witness();
        let (r, s) = c2prover::random_r_s(1);
        let mut proofs = Vec::new();
        for residency in [Residency::Never, Residency::Always] {
            // A copy is a parameter set of its own, with its own residency.
            let mut params = setup.clone();
            params.residency = residency;
            let proof = c2prover::prove(&params, &[witness.as_assignment()], &r, &s).unwrap();
            assert_eq!(
                c2prover::backend::resident_bytes(&params) > 0,
                residency == Residency::Always
            );
            assert!(c2prover::verify(&params.vk, &witness.inputs[1..], &proof[0]).unwrap());
            proofs.push(proof[0].to_compressed());
        }
        assert_eq!(proofs[0], proofs[1], "streamed = resident");
    }

    /// A call of several circuits with the points streamed proves those
    /// that share their terms together (each chunk of points up once for
    /// all of them) and gives the CPU backend's proofs byte for byte; the
    /// valid ones verify. A circuit whose density differs from the others'
    /// (one bit of A's moved: the same count, other points) is proved on its
    /// own, also as the CPU proves it.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn streamed_circuits_proved_together_equal_cpu() {
        use c2prover::stats::{Stage, STATS};
        use c2prover::testkit::synthetic::Circuit;
        use c2prover::Residency;
        let _gpu = gpu("streamed_circuits_proved_together_equal_cpu");
        let circuits: Vec<Circuit> = (0..3)
            .map(|k| Circuit::porep_like(16, 11, 30 + k).unwrap())
            .collect();
        let mut params = circuits[0].setup(12);
        params.residency = Residency::Never;
        let mut witnesses: Vec<_> = circuits.iter().map(Circuit::witness).collect();
        let mut odd = witnesses[1].clone();
        let word = odd.a_aux_density[1];
        assert!(word != 0 && word != u64::MAX, "a word with bits set and clear");
        odd.a_aux_density[1] ^= (1 << word.trailing_zeros()) | (1 << (!word).trailing_zeros());
        witnesses.push(odd);
        let assignments: Vec<_> = witnesses.iter().map(|w| w.as_assignment()).collect();
        let (r, s) = c2prover::random_r_s(assignments.len());
        let shared = |stats: (Vec<(Stage, f64)>, u64)| {
            stats
                .0
                .iter()
                .find(|(stage, _)| *stage == Stage::SharedMsm)
                .unwrap()
                .1
        };
        let before = shared(STATS.snapshot());
        let gpu = c2prover::prove(&params, &assignments, &r, &s).unwrap();
        assert!(shared(STATS.snapshot()) > before, "the shared witness MSMs ran");
        assert_eq!(
            c2prover::backend::resident_bytes(&params),
            0,
            "the points streamed"
        );
        let cpu = c2prover::prove_on_cpu(&params, &assignments, &r, &s).unwrap();
        for (i, (g, c)) in gpu.iter().zip(&cpu).enumerate() {
            assert_eq!(g.to_compressed(), c.to_compressed(), "circuit {i}: GPU = CPU");
        }
        for (i, w) in witnesses.iter().enumerate() {
            let valid = c2prover::verify(&params.vk, &w.inputs[1..], &gpu[i]).unwrap();
            assert_eq!(valid, i < 3, "circuit {i} verifies only with its own density");
        }
    }

    /// Circuits proved together over streamed points (each H step beside
    /// the previous circuit's H MSM, or H's MSM for a batch of h left on
    /// the GPU; the aux terms sharing each upload of the aux values): every
    /// sum equals the CPU backend's.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn streamed_group_sums_equal_cpu() {
        use c2prover::backend::{self, Backend, Call};
        use c2prover::testkit::synthetic::Circuit;
        use c2prover::Residency;
        let _gpu = gpu("streamed_group_sums_equal_cpu");
        let circuits: Vec<Circuit> = (0..3)
            .map(|k| Circuit::porep_like(16, 11, 40 + k).unwrap())
            .collect();
        let mut params = circuits[0].setup(13);
        params.residency = Residency::Never;
        let witnesses: Vec<_> = circuits.iter().map(Circuit::witness).collect();
        let assignments: Vec<_> = witnesses.iter().map(|w| w.as_assignment()).collect();
        let domain = c2prover::groth16::domain_of(&params).unwrap();
        let cancelled = std::sync::atomic::AtomicBool::new(false);
        let call = Call {
            params: &params,
            domain: &domain,
            cancelled: &cancelled,
            values_checked: false,
        };
        let group: Vec<(usize, &c2prover::Assignment)> = assignments.iter().enumerate().collect();
        let cpu: Vec<_> = group
            .iter()
            .map(|&(i, w)| backend::sums(Backend::Cpu, &call, i, w).unwrap())
            .collect();
        // With the default budget each H step runs beside the previous
        // circuit's H MSM (its a, b, c going up in turn with H's points);
        // with the least budget a plan fits, one at a time and chunks of
        // the least.
        let need = c2prover::backend::gpu::memory::smallest_plan(0, domain.log_m).unwrap();
        for budget in [None, Some(need)] {
            let _restore = budget.map(|need| {
                let in_use = c2prover::backend::device_memory(0).unwrap().in_use;
                c2prover::backend::gpu::memory::set_budget(&[0], in_use + need).unwrap();
                RestoreBudget
            });
            let on_gpu = backend::sums_of_group(Backend::Gpu(0), &call, &group).unwrap();
            assert_eq!(on_gpu.len(), cpu.len());
            for (i, (g, c)) in on_gpu.iter().zip(&cpu).enumerate() {
                assert!(g.h == c.h, "budget {budget:?}, circuit {i}: H");
                assert!(
                    g.l == c.l && g.a == c.a && g.b_g1 == c.b_g1 && g.b_g2 == c.b_g2,
                    "budget {budget:?}, circuit {i}: the witness sums"
                );
            }
        }
        assert_eq!(backend::resident_bytes(&params), 0, "the points streamed");
        // Some vectors kept on the GPU and the others streamed: H alone,
        // then L, A, B_G1 and B_G2 without H; under the default budget and
        // under the least one.
        use c2prover::groth16::Query;
        let need = c2prover::backend::gpu::memory::smallest_plan(0, domain.log_m).unwrap();
        let kept_sets: [&[Query]; 2] = [&[Query::H], &[Query::L, Query::A, Query::BG1, Query::BG2]];
        for kept in kept_sets {
            for budget in [None, Some(need)] {
                backend::forget_gpu_copies(&params);
                assert!(c2prover::backend::gpu::resident::keep(&params, 0, kept));
                let bytes = backend::resident_bytes(&params);
                assert!(bytes > 0, "{kept:?} kept");
                let _restore = budget.map(|need| {
                    let in_use = c2prover::backend::device_memory(0).unwrap().in_use;
                    c2prover::backend::gpu::memory::set_budget(&[0], in_use + need).unwrap();
                    RestoreBudget
                });
                let on_gpu = backend::sums_of_group(Backend::Gpu(0), &call, &group).unwrap();
                for (i, (g, c)) in on_gpu.iter().zip(&cpu).enumerate() {
                    assert!(
                        g.h == c.h && g.l == c.l && g.a == c.a && g.b_g1 == c.b_g1 && g.b_g2 == c.b_g2,
                        "{kept:?} kept, budget {budget:?}, circuit {i}"
                    );
                }
                assert_eq!(backend::resident_bytes(&params), bytes, "{kept:?} kept, no more");
            }
        }
        backend::forget_gpu_copies(&params);
    }

    /// Puts the default device budget of GPU 0 back when dropped.
    struct RestoreBudget;

    impl Drop for RestoreBudget {
        fn drop(&mut self) {
            let _ = c2prover::backend::gpu::memory::set_budget(&[0], 0);
        }
    }

    /// Values not below the modulus in several circuits and vectors of a
    /// call over streamed points (checked on the GPU as they go up, in the
    /// order of the uploads) give the error the CPU backend gives: the
    /// first bad value in circuit order, a, b, c, inputs, aux within one.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn streamed_bad_values_are_named_as_the_cpu_names_them() {
        use c2prover::testkit::synthetic::Circuit;
        use c2prover::Residency;
        let _gpu = gpu("streamed_bad_values_are_named_as_the_cpu_names_them");
        let circuits: Vec<Circuit> = (0..3)
            .map(|k| Circuit::porep_like(16, 11, 50 + k).unwrap())
            .collect();
        let mut params = circuits[0].setup(14);
        params.residency = Residency::Never;
        let witnesses: Vec<_> = circuits.iter().map(Circuit::witness).collect();
        let mut bad = Fr::ONE;
        bad.0.l = [u64::MAX; 4];
        // (circuit, vector, index) spoiled, in the order they are spoiled;
        // the last aux value goes up in the last chunk.
        let last_aux = witnesses[0].aux.len() - 1;
        let cases: [&[(usize, &str, usize)]; 3] = [
            &[(2, "a", 5), (1, "aux", 300)],
            &[(1, "aux", 70), (1, "c", 9), (2, "inputs", 1)],
            &[(0, "aux", last_aux), (0, "inputs", 1)],
        ];
        for spoiled in cases {
            let mut ws = witnesses.clone();
            for &(k, vector, at) in spoiled {
                let w = &mut ws[k];
                match vector {
                    "a" => w.a[at] = bad,
                    "c" => w.c[at] = bad,
                    "inputs" => w.inputs[at] = bad,
                    _ => w.aux[at] = bad,
                }
            }
            let assignments: Vec<_> = ws.iter().map(|w| w.as_assignment()).collect();
            let (r, s) = c2prover::random_r_s(assignments.len());
            let gpu = c2prover::prove(&params, &assignments, &r, &s).expect_err("GPU: fails");
            let cpu = c2prover::prove_on_cpu(&params, &assignments, &r, &s).expect_err("CPU: fails");
            assert_eq!(gpu.kind, c2prover::ErrorKind::InvalidArgument, "{spoiled:?}");
            assert_eq!(gpu.message, cpu.message, "{spoiled:?}");
        }
    }

    /// The library never writes device memory it has freed (the caller's
    /// process runs other GPU code beside it): jobs over streamed and
    /// resident points, cancelled at once, cancelled a little later or
    /// failing on a bad value mid-call, and as each ends, before the device
    /// is waited for, a canary takes nearly all free device memory (the
    /// buffers the job gave back among it). A proof made then equals the
    /// CPU's, and no word of the canary changes.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn freed_device_memory_is_never_written() {
        use c2prover::backend::gpu::{canary, driver_free_memory};
        use c2prover::testkit::synthetic::Circuit;
        use c2prover::{DeviceMask, Job, Residency};
        use std::sync::Arc;
        let _gpu = gpu("freed_device_memory_is_never_written");
        let circuits: Vec<Circuit> = (0..4)
            .map(|k| Circuit::porep_like(16, 23, 60 + k).unwrap())
            .collect();
        let mut streamed = circuits[0].setup(24);
        streamed.residency = Residency::Never;
        let mut resident = streamed.clone();
        resident.residency = Residency::Always;
        let (streamed, resident) = (Arc::new(streamed), Arc::new(resident));
        let witnesses: Vec<_> = circuits.iter().map(Circuit::witness).collect();
        let assignments: Vec<_> = witnesses.iter().map(|w| w.as_assignment()).collect();
        let (r, s) = c2prover::random_r_s(witnesses.len());
        let want: Vec<_> = c2prover::prove_on_cpu(&streamed, &assignments, &r, &s)
            .unwrap()
            .iter()
            .map(|p| p.to_compressed())
            .collect();
        let mut bad = witnesses.clone();
        bad[2].aux[100].0.l = [u64::MAX; 4];
        let mut rng = ChaCha8Rng::seed_from_u64(61);
        for round in 0..12 {
            let params = if round % 2 == 0 { &streamed } else { &resident };
            let how = round % 3;
            if how == 2 {
                // The values are checked as the call goes (the Job API
                // checks them before it starts): it fails mid-call.
                let bad: Vec<_> = bad.iter().map(|w| w.as_assignment()).collect();
                let ended = c2prover::prove(params, &bad, &r, &s);
                assert!(ended.is_err(), "round {round}: a bad value fails");
            } else {
                let job = Job::start(
                    params.clone(),
                    witnesses.clone(),
                    r.clone(),
                    s.clone(),
                    true,
                    DeviceMask::ALL,
                )
                .unwrap();
                if how == 1 {
                    std::thread::sleep(std::time::Duration::from_millis(rng.next_u64() % 40));
                }
                job.cancel();
                let _ = job.finish();
            }
            let pattern = rng.next_u64() as u32;
            let bytes = (driver_free_memory(0).unwrap().saturating_sub(4 << 30)) & !3;
            let watch = canary(0, bytes, pattern).unwrap();
            let proofs = c2prover::prove(params, &assignments, &r, &s).unwrap();
            let got: Vec<_> = proofs.iter().map(|p| p.to_compressed()).collect();
            assert!(got == want, "round {round}: the next proofs equal the CPU's");
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert_eq!(
                watch.changed().unwrap(),
                0,
                "round {round}: words changed in {} GiB of memory the library gave back",
                bytes >> 30
            );
        }
    }

    /// The parameters' GPU copy is freed when the parameters are dropped:
    /// the library's device memory in use goes back to what it was.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn dropping_the_parameters_frees_their_gpu_copy() {
        use c2prover::testkit::synthetic::Circuit;
        use c2prover::Residency;
        let _gpu = gpu("dropping_the_parameters_frees_their_gpu_copy");
        let circuit = Circuit::porep_like(16, 7, 18).unwrap();
        let mut params = circuit.setup(19);
        params.residency = Residency::Always;
        let witness = circuit.witness();
        let (r, s) = c2prover::random_r_s(1);
        c2prover::backend::gpu::trim_memory_pool(0).unwrap();
        let before = c2prover::backend::device_memory(0).unwrap().in_use;
        c2prover::prove(&params, &[witness.as_assignment()], &r, &s).unwrap();
        let copy = c2prover::backend::resident_bytes(&params);
        assert!(copy > 0, "the points went to the GPU");
        let held = c2prover::backend::device_memory(0).unwrap().in_use;
        assert!(
            held >= before + copy,
            "the copy is charged while the parameters live"
        );
        drop(params);
        c2prover::backend::gpu::trim_memory_pool(0).unwrap();
        let after = c2prover::backend::device_memory(0).unwrap().in_use;
        assert!(
            after + copy <= held,
            "dropped parameters free their copy: {} MiB in use before, {} MiB with the copy, {} MiB after",
            before >> 20,
            held >> 20,
            after >> 20
        );
    }

    /// At 2^26 and 2^27 a CPU MSM would take minutes: points (i + 1)·G and
    /// scalars s_i give (Σ (i + 1)·s_i)·G, a single scalar multiplication.
    #[test]
    #[ignore = "needs a CUDA GPU (run with --include-ignored on the GPU machine)"]
    fn g1_msm_closed_form_at_2_26_and_2_27() {
        let _gpu = gpu("g1_msm_closed_form_at_2_26_and_2_27");
        const CHUNK: usize = 1 << 16;
        let n = 1usize << 27;
        let g = G1::generator();
        let points: Vec<G1Affine> = (0..n / CHUNK)
            .into_par_iter()
            .flat_map_iter(|c| {
                let mut acc = g.mul(&Fr::from_u64((c * CHUNK + 1) as u64));
                let mut run = Vec::with_capacity(CHUNK);
                for _ in 0..CHUNK {
                    run.push(acc);
                    acc += g;
                }
                G1::batch_to_affine(&run)
            })
            .collect();
        let scalars: Vec<Fr> = (0..n / CHUNK)
            .into_par_iter()
            .flat_map_iter(|c| {
                let mut rng = ChaCha8Rng::seed_from_u64(c as u64);
                (0..CHUNK).map(move |_| Fr::random(&mut rng))
            })
            .collect();
        let device = upload_g1(0, &points).unwrap();
        drop(points);
        for m in [1usize << 26, 1 << 27] {
            let k = scalars[..m]
                .par_iter()
                .enumerate()
                .map(|(i, s)| Fr::from_u64(i as u64 + 1) * *s)
                .reduce(|| Fr::ZERO, |a, b| a + b);
            let want = g.mul(&k).to_affine();
            let got = msm::<G1>(&device, 0, Scalars::Host(&scalars[..m]), None)
                .unwrap()
                .to_affine();
            assert_eq!(
                got,
                want,
                "G1 MSM of 2^{} points against the closed form",
                m.trailing_zeros()
            );
        }
    }
}
