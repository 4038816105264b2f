//! `bench prove`: rounds of whole proofs, synthetic or PoRep-shaped, with
//! stage times, memory peaks against the budgets, and the CPU check.

use crate::*;

pub(crate) fn bench(args: BenchArgs) -> Result<(), Error> {
    let most = args.circuits.iter().copied().max().unwrap_or(1).max(1);
    let device_free_at_start = gpu_free();
    let (params, witnesses) = if args.porep {
        if args.aux_zeros < 0.0 || args.aux_ones < 0.0 || args.aux_zeros + args.aux_ones > 100.0 {
            return Err(Error::invalid(
                "--aux-zeros and --aux-ones are percents summing to at most 100",
            ));
        }
        let shape = PorepShape::scaled(args.log2);
        let mix = ValueMix {
            aux_zeros: args.aux_zeros,
            aux_ones: args.aux_ones,
            ..ValueMix::default()
        };
        eprintln!("PoRep-shaped partition: {shape:?}, {mix:?}");
        let params = step("making parameters (distinct random points)", || {
            shape.parameters(1)
        });
        let witness = step("making a witness", || shape.witness(mix, 2));
        (params, vec![witness])
    } else {
        synthetic(args.log2, most, 1)?
    };
    // One r and s per circuit for every round, so that any round's proofs
    // can be compared with another prover's.
    let (r, s) = c2prover::random_r_s(most);
    let budgets = args
        .device_budget
        .iter()
        .map(|text| {
            c2prover::config::parse_bytes(text)
                .map(Some)
                .ok_or_else(|| Error::invalid(format!("--device-budget: `{text}` is not a size (e.g. 16G)")))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let budgets = if budgets.is_empty() { vec![None] } else { budgets };
    let gpus: Vec<usize> = (0..c2prover::backend::device_count()).collect();
    let peak_device = DevicePeak::start(device_free_at_start);
    let mut rounds = Vec::new();
    for budget in budgets {
        if let Some(bytes) = budget {
            c2prover::backend::set_device_budget(&gpus, bytes)?;
            // Resident or streamed is decided afresh under this budget.
            c2prover::backend::forget_gpu_copies(&params);
            println!("device budget {} per GPU", human(bytes as u64));
        }
        for &d in &gpus {
            c2prover::backend::reset_device_peak(d)?;
        }
        for &n in args.circuits.iter().filter(|_| !supraseal_alone(&args)) {
            for &jobs in &args.jobs {
                rounds.push(bench_round(
                    &args,
                    &params,
                    &witnesses,
                    (&r, &s),
                    n.max(1),
                    jobs.max(1),
                )?);
            }
        }
        if let Ok(m) = c2prover::backend::device_memory(0) {
            println!(
                "device budget of GPU 0: peak {} of the library's allocations against a budget of {} ({:.1} %)",
                human(m.peak as u64),
                human(m.budget as u64),
                100.0 * m.peak as f64 / m.budget.max(1) as f64
            );
        }
    }
    print_memory(&params, peak_device);
    // The proofs of the round with the most circuits (ties: the last).
    let ours = rounds.iter().max_by_key(|round| round.proofs.len());
    if args.check_cpu {
        if let Some(round) = ours {
            check_on_cpu(&params, &witnesses[0], (&r[0], &s[0]), &round.proofs[0])?;
        }
    }
    #[cfg(feature = "bench-supraseal")]
    if let Some(path) = &args.supraseal_params {
        // supraseal takes every circuit's density bitmaps from the first:
        // several circuits per call need the PoRep mode's shared witness.
        if !args.porep && args.supraseal_circuits.iter().any(|&n| n > 1) {
            return Err(Error::invalid(
                "--supraseal-circuits above 1 needs --porep (circuits sharing one witness)",
            ));
        }
        let cpu_proofs;
        let ours = match ours {
            Some(round) => &round.proofs,
            None => {
                let n = args
                    .supraseal_circuits
                    .iter()
                    .copied()
                    .max()
                    .unwrap_or(1)
                    .min(most);
                let assignments: Vec<_> = (0..n)
                    .map(|i| witnesses[i % witnesses.len()].as_assignment())
                    .collect();
                cpu_proofs = step("our proofs for the comparison, on the CPU backend", || {
                    c2prover::prove_on_cpu(&params, &assignments, &r[..n], &s[..n])
                })?;
                &cpu_proofs
            }
        };
        step(&format!("writing the parameters to {}", path.display()), || {
            let file = std::fs::File::create(path)?;
            params.write(std::io::BufWriter::with_capacity(64 << 20, file))
        })
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
        // Our parameters leave both memories before supraseal loads its own.
        drop(params);
        super::supraseal::compare(
            path,
            &witnesses[0],
            &args.supraseal_circuits,
            args.runs,
            (&r, &s),
            &rounds,
            ours,
        )?;
    }
    Ok(())
}

/// One `bench_round`'s outcome: what a comparison with another prover needs.
#[cfg_attr(not(feature = "bench-supraseal"), allow(dead_code))]
pub(crate) struct Round {
    pub(crate) circuits: usize,
    pub(crate) jobs: usize,
    pub(crate) per_circuit: f64,
    /// The last run's proofs of its first call.
    pub(crate) proofs: Vec<Proof>,
}

/// Proves the first circuit on the CPU backend and checks it against the
/// GPU's proof made with the same r and s.
pub(crate) fn check_on_cpu(
    params: &Parameters,
    witness: &Witness,
    (r, s): (&Fr, &Fr),
    gpu_proof: &Proof,
) -> Result<(), Error> {
    let cpu = step("proving the first circuit on the CPU backend", || {
        c2prover::prove_on_cpu(params, &[witness.as_assignment()], &[*r], &[*s])
    })?;
    if cpu[0] == *gpu_proof {
        println!("CPU check: the CPU backend's proof equals the GPU's, byte for byte");
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "CPU check FAILED: the CPU backend's proof {} differs from the GPU's {}",
            hex(&cpu[0].to_compressed()),
            hex(&gpu_proof.to_compressed())
        )))
    }
}

/// `jobs` calls of `n` circuits each at once, `args.runs` times after a
/// warm-up; the median and its stage times.
pub(crate) fn bench_round(
    args: &BenchArgs,
    params: &Parameters,
    witnesses: &[Witness],
    (r, s): (&[Fr], &[Fr]),
    n: usize,
    jobs: usize,
) -> Result<Round, Error> {
    use c2prover::stats::STATS;
    // Every call proves n circuits; PoRep-shaped calls repeat one witness.
    let assignments: Vec<_> = (0..n)
        .map(|i| witnesses[i % witnesses.len()].as_assignment())
        .collect();
    let (r, s) = (&r[..n], &s[..n]);
    let mut proofs = Vec::new();
    let mut times = Vec::new();
    let mut stages = Vec::new();
    for run in 0..=args.runs {
        STATS.reset();
        let started = Instant::now();
        std::thread::scope(|scope| {
            let calls: Vec<_> = (0..jobs)
                .map(|_| scope.spawn(|| c2prover::prove(params, &assignments, r, s)))
                .collect();
            calls
                .into_iter()
                .map(|c| {
                    c.join()
                        .unwrap_or_else(|_| Err(Error::invalid("a proving thread panicked")))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .map(|mut calls| proofs = calls.swap_remove(0))?;
        let t = started.elapsed().as_secs_f64();
        if run > 0 {
            times.push(t);
            stages.push(STATS.snapshot());
        }
        eprintln!(
            "{} {:.3} s",
            if run == 0 {
                "warm-up (parameters to the GPU on first use)"
            } else {
                "run"
            },
            t
        );
    }
    let median = median(times.clone());
    let per_circuit = median / (n * jobs) as f64;
    // What ran: the GPU takes H and the MSMs when present, over resident
    // points when the parameters went to its memory, streamed otherwise.
    // (Decided by the runs; some vectors may stay while the others stream.)
    let backend = if c2prover::backend::device_count() == 0 {
        "CPU"
    } else if !c2prover::backend::points_stream(params, 0) {
        "GPU (H and MSMs, points resident)"
    } else if c2prover::backend::resident_bytes(params) > 0 {
        "GPU (H and MSMs, points streamed but for those kept on the GPU)"
    } else {
        "GPU (H and MSMs, points streamed)"
    };
    println!(
        "backend {backend} ({} CPU threads), {} 2^{}, {n} circuit(s) per call, {jobs} call(s) in flight: median {median:.3} s per round, {per_circuit:.3} s per circuit, {:.0} circuits per hour over {} runs (min {:.3}, max {:.3})",
        rayon::current_num_threads(),
        if args.porep { "PoRep-shaped" } else { "synthetic" },
        args.log2,
        3600.0 / per_circuit,
        times.len(),
        times.iter().copied().fold(f64::INFINITY, f64::min),
        times.iter().copied().fold(0.0, f64::max),
    );
    // Stage times of the median run, per circuit (summed over threads, so
    // with several calls in flight they add up to more than the wall time).
    if let Some((stage_times, circuits)) = median_run(&times, &stages) {
        let per: Vec<String> = stage_times
            .iter()
            .filter(|(_, t)| *t > 0.0)
            .map(|(stage, t)| format!("{stage:?} {:.3} s", t / (*circuits).max(1) as f64))
            .collect();
        println!("stages per circuit: {}", per.join(", "));
    }
    Ok(Round {
        circuits: n,
        jobs,
        per_circuit,
        proofs,
    })
}

/// The stage snapshot of the run whose time is the median.
pub(crate) fn median_run<'a, T>(times: &[f64], stages: &'a [T]) -> Option<&'a T> {
    let median = median(times.to_vec());
    let i = times.iter().position(|&t| t == median)?;
    stages.get(i)
}

/// The run's memory line: peak host RSS, the parameters on the host and on
/// the GPU, and the GPU's peak in use.
pub(crate) fn print_memory(params: &Parameters, peak_device: DevicePeak) {
    println!(
        "memory: peak host RSS {}, parameters {} on the host and {} on the GPU, peak device memory in use {} (driver)",
        human(peak_rss()),
        human(params.host_bytes() as u64),
        human(c2prover::backend::resident_bytes(params) as u64),
        peak_device.finish().map_or("n/a (no GPU)".into(), human),
    );
}

/// The process's peak resident set (VmHWM), 0 where /proc has none.
pub(crate) fn peak_rss() -> u64 {
    c2prover::procfs::peak_resident().unwrap_or(0)
}

/// GPU 0's free memory as the driver counts it: the memory pool's idle
/// bytes are held by the process, so the peak below includes them.
pub(crate) fn gpu_free() -> Option<usize> {
    c2prover::backend::device_free(0)
}

/// Samples the GPU's free memory every 5 ms; the peak in use is the
/// largest drop below the free memory at the start.
pub(crate) struct DevicePeak {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    sampler: Option<std::thread::JoinHandle<usize>>,
    start: Option<usize>,
}

impl DevicePeak {
    pub(crate) fn start(free_at_start: Option<usize>) -> DevicePeak {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let sampler = free_at_start.map(|free| {
            std::thread::spawn(move || {
                let mut lowest = free;
                while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                    lowest = lowest.min(gpu_free().unwrap_or(lowest));
                    std::thread::sleep(Duration::from_millis(5));
                }
                lowest
            })
        });
        DevicePeak {
            stop,
            sampler,
            start: free_at_start,
        }
    }

    pub(crate) fn finish(self) -> Option<u64> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let lowest = self.sampler?.join().ok()?;
        Some(self.start?.saturating_sub(lowest) as u64)
    }
}
