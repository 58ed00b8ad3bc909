//! The CPU measurement: clock, peaks per precision (one thread, all threads), fork/join, the
//! working-set sweep, the levels, each figure checked against its theoretical limit.

use crate::bench_kernels::{self, ClockChain, ComputeKernel, Simd};
use crate::clock::{self, ChainTiming, ClockEstimate};
use crate::host::{cache_levels, caches_of_cpu, host_info, CacheLevel};
use crate::limits::{self, FALLBACK_CLOCK_HZ, FAULT_TOLERANCE};
use crate::method::Method;
use crate::pool::{with_pool, Driver, Job};
use crate::sweep::{place_levels, sweep_sizes};
use crate::{MeasureError, Progress};
use roofline_core::measured::{BandwidthKernel, BandwidthPoint, MeasuredPeak, Measurement, Stat};
use std::time::Instant;

/// Smallest working set of the sweep, bytes (16 KiB).
pub const SWEEP_MIN: f64 = 16.0 * 1024.0;
/// Largest working set of the default sweep, bytes (1 GiB).
pub const SWEEP_MAX: f64 = 1024.0 * 1024.0 * 1024.0;
/// Largest working set of the `--quick` sweep, bytes (256 MiB).
pub const SWEEP_MAX_QUICK: f64 = 256.0 * 1024.0 * 1024.0;
/// Relative tolerance of the sweep's plateaus.
pub const PLATEAU_TOLERANCE: f64 = 0.12;
/// Elements per stream are a multiple of this (the widest kernel's unroll: 64 f64 = 512 B).
const ELEM_QUANTUM: usize = 64;
/// Padding between streams, elements: 72 × 8 = 576 bytes, which is not a multiple of 512, so two
/// streams never sit a multiple of 4 KiB apart (4K aliasing of loads and stores on Intel).
const STREAM_PAD: usize = 72;

/// What to measure and how.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuOptions {
    /// `--quick`: short repetitions, a 2× (not √2) sweep up to 256 MiB.
    pub quick: bool,
    /// Threads of the all-threads runs; `None`: every logical CPU this process may use.
    pub threads: Option<usize>,
    /// Largest working set, bytes; `None`: 1 GiB (256 MiB with `quick`), less if memory is
    /// short.
    pub max_working_set: Option<f64>,
    /// The date to write into every source (`2025-01-31`): the caller's clock, not ours.
    pub date: String,
}

/// Measures this machine's CPU roofline.
///
/// # Errors
/// [`MeasureError`] when `threads` is 0, or a worker cannot allocate its share of the sweep's
/// buffer.
pub fn measure_cpu(
    opts: &CpuOptions,
    progress: &mut dyn Progress,
) -> Result<Measurement, MeasureError> {
    let host = host_info();
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let available = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .max(1);
    let threads = match opts.threads {
        Some(0) => {
            return Err(MeasureError::usage(
                "`--threads` must be at least 1".to_string(),
                Some(format!("this machine has {available} logical CPUs")),
            ))
        }
        Some(t) => t,
        None => available,
    };
    if threads > available {
        // More threads than CPUs: each worker times only its own slices of CPU, not the wait
        // for them, so the figures would come out far above what the machine does.
        return Err(MeasureError::usage(
            format!("`--threads {threads}`: this process may use {available} logical CPUs"),
            Some(format!(
                "give at most {available} (one benchmark thread per logical CPU)"
            )),
        ));
    }
    let mut notes = Vec::new();
    let cpus: Vec<core_affinity::CoreId> = cores.iter().copied().take(threads).collect();
    let cpu_ids: Vec<usize> = if cpus.len() == threads {
        cpus.iter().map(|c| c.id).collect()
    } else {
        (0..threads.min(available)).collect()
    };
    let caches = cache_levels(
        &cpu_ids
            .iter()
            .flat_map(|&c| caches_of_cpu(c))
            .collect::<Vec<_>>(),
    );
    let simd = Simd::detect();
    let widths = limits::core_widths(&host.vendor, host.family_model, simd);
    let compute = ComputeKernel::available();
    let method = if opts.quick {
        Method::quick()
    } else {
        Method::standard()
    };

    // The sweep's sizes, within the memory there is.
    let mut max_ws = opts.max_working_set.unwrap_or(if opts.quick {
        SWEEP_MAX_QUICK
    } else {
        SWEEP_MAX
    });
    if let Some(avail) = host.mem_available {
        if max_ws > avail / 2.0 {
            let capped = (avail / 2.0).max(SWEEP_MIN);
            notes.push(format!(
                "largest working set capped at {:.0} MiB (half the available memory)",
                capped / 1048576.0
            ));
            max_ws = capped;
        }
    }
    let sizes = sweep_sizes(SWEEP_MIN, max_ws, if opts.quick { 1 } else { 2 });
    let t = threads;
    let buffer_elems = (max_ws / (8.0 * t as f64)) as usize + 4 * STREAM_PAD + ELEM_QUANTUM;

    let clock_reps = if opts.quick { 10 } else { 40 };
    let total =
        2 + (if threads > 1 { 2 } else { 1 }) * compute.len() as u64 + 1 + (sizes.len() * 3) as u64;
    progress.start(total);

    let mut rejected = Vec::new();
    let mut peaks = Vec::new();

    // One thread: clock and peaks, pinned to the first CPU.
    let one_cpu: Vec<_> = cpus.iter().copied().take(1).collect();
    let (clock_1_estimate, pinned_1) = with_pool(1, &one_cpu, 0, simd, |d, info| {
        progress.step("clock, 1 thread");
        let estimate = measure_clock(d, clock_reps, host.nominal_hz.as_ref());
        let clock = estimate.hz;
        for &k in &compute {
            progress.step(&format!("{} peak, 1 thread", k.precision()));
            let stat = measure_compute(d, k, &method.for_peaks());
            push_peak(&mut peaks, &mut rejected, k, 1, stat, &widths, clock, clock);
        }
        (estimate, info.pinned == 1 || one_cpu.is_empty())
    });
    let clock_1 = clock_1_estimate.hz;

    // All threads: clock, peaks, fork/join, the sweep.
    let tn = t as u32;
    let all = with_pool(t, &cpus, buffer_elems, simd, |d, info| {
        if info.failed > 0 {
            return Err(MeasureError::new(
                format!(
                    "{} of {t} threads could not allocate their {:.0} MiB of the sweep's buffer",
                    info.failed,
                    buffer_elems as f64 * 8.0 / 1048576.0
                ),
                Some("free some memory, or pass --quick (256 MiB) or fewer --threads".into()),
            ));
        }
        progress.step(&format!("clock, {t} threads"));
        let estimate = measure_clock(d, clock_reps, None);
        let clock = estimate.hz;
        // With one thread, the one-thread peaks are the all-threads peaks.
        for &k in compute.iter().filter(|_| t > 1) {
            progress.step(&format!("{} peak, {t} threads", k.precision()));
            let stat = measure_compute(d, k, &method.for_peaks());
            // The fault check takes the highest clock seen (turbo with one thread busy).
            let limit_clock = match (clock, clock_1) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            push_peak(
                &mut peaks,
                &mut rejected,
                k,
                tn,
                stat,
                &widths,
                clock,
                limit_clock,
            );
        }
        progress.step("fork/join");
        let fork_join = measure_fork_join(d, if opts.quick { 50 } else { 200 });
        let mut sweep = Vec::new();
        for &size in &sizes {
            for kernel in BandwidthKernel::ALL {
                progress.step(&format!("{} {}", kernel.name(), human_size(size)));
                let streams = kernel.streams() as usize;
                let n =
                    (size / (8.0 * (t * streams) as f64)) as usize / ELEM_QUANTUM * ELEM_QUANTUM;
                if n == 0 {
                    continue;
                }
                let ws = (n * 8 * streams * t) as f64;
                let bytes = n as f64 * t as f64 * kernel.bytes_per_element();
                let stride = n + STREAM_PAD;
                let Some(stat) = measure_rate(
                    d,
                    &method,
                    |passes| Job::Bandwidth {
                        kernel,
                        n,
                        stride,
                        passes,
                    },
                    bytes,
                ) else {
                    continue;
                };
                let limit = limits::bandwidth_limit(
                    kernel,
                    simd,
                    tn,
                    clock
                        .into_iter()
                        .chain(clock_1)
                        .fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.max(c))))
                        .unwrap_or(FALLBACK_CLOCK_HZ),
                );
                if stat.median > limit * FAULT_TOLERANCE {
                    rejected.push(format!(
                        "{} at {}: {:.1} GB/s is above the {:.1} GB/s the load/store ports allow; rejected",
                        kernel.name(),
                        human_size(ws),
                        stat.median / 1e9,
                        limit / 1e9
                    ));
                    continue;
                }
                sweep.push(BandwidthPoint {
                    kernel,
                    working_set: ws,
                    bandwidth: stat,
                });
            }
        }
        Ok((
            estimate,
            fork_join,
            sweep,
            info.pinned == t || cpus.is_empty(),
        ))
    });
    progress.finish();
    let (clock_all_estimate, fork_join, sweep, pinned_all) = all?;
    let clock_all = clock_all_estimate.hz;

    let placement = place_levels(&sweep, &caches, host.mem_total, PLATEAU_TOLERANCE);
    let mut levels = placement.levels;
    notes.extend(placement.notes);
    if let Some(c) = clock_all {
        for l in &mut levels {
            if let Some((v, src)) = limits::level_theoretical(l.kind, &widths, tn, c) {
                l.theoretical = Some(v);
                l.theoretical_source = Some(src);
            }
        }
    }
    let cache_list = cache_line(&caches);
    if !cache_list.is_empty() {
        notes.push(format!("caches the OS reports, per instance: {cache_list}"));
    }
    notes.push(format!(
        "theoretical roofs: {} FMA per cycle, L1 {} / L2 {} / L3 {} B per cycle per core ({})",
        widths.fma_per_cycle,
        widths.l1_bytes_per_cycle,
        widths.l2_bytes_per_cycle,
        widths.l3_bytes_per_cycle,
        widths.source
    ));
    if let Some(n) = bench_kernels::amx_refused() {
        notes.push(n);
    }
    let pinned = (pinned_1 && pinned_all) && !cpus.is_empty();
    if !pinned {
        notes.push("threads could not be pinned to CPUs: figures may be noisier".into());
    }
    for p in &peaks {
        if !p.value.stable {
            notes.push(format!(
                "{} peak ({} threads) did not settle within {:.0} % (spread {:.1} %)",
                p.precision,
                p.threads,
                method.tolerance * 100.0,
                p.value.spread() * 100.0
            ));
        }
    }
    let unstable = sweep.iter().filter(|p| !p.bandwidth.stable).count();
    if unstable > 0 {
        notes.push(format!(
            "{unstable} of {} sweep points did not settle within {:.0} %",
            sweep.len(),
            method.tolerance * 100.0
        ));
    }
    if clock_1.is_none() || clock_all.is_none() {
        notes.push(format!(
            "no trustworthy clock ({}): no theoretical roofs, and the fault check assumes {} GHz",
            if clock_1.is_none() {
                &clock_1_estimate.how
            } else {
                &clock_all_estimate.how
            },
            FALLBACK_CLOCK_HZ / 1e9
        ));
    }

    let mut m = Measurement {
        host: host.hostname.clone(),
        processor: host.model.clone(),
        vendor: host.vendor.clone(),
        date: opts.date.clone(),
        isa: bench_kernels::features(),
        threads: tn,
        pinned,
        clock_hz: clock_1,
        clock_all_hz: clock_all,
        unsettled: vec![],
        clock_source: format!(
            "1 thread: {}; {tn} threads: {}",
            clock_1_estimate.how, clock_all_estimate.how
        ),
        peaks,
        sweep,
        levels,
        launch_overhead: fork_join,
        rejected,
        notes,
        method: format!(
            "{}; bandwidth kernels {} (bytes counted: loads and stores named, no write-allocate)",
            method.describe(),
            simd.name()
        ),
    };
    m.unsettled = m.unsettled_figures();
    Ok(m)
}

fn cache_line(caches: &[CacheLevel]) -> String {
    caches
        .iter()
        .map(|c| format!("L{} {}", c.level, human_size(c.instance_size as f64)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn human_size(bytes: f64) -> String {
    const KI: f64 = 1024.0;
    if bytes >= KI * KI * KI {
        format!("{:.2} GiB", bytes / (KI * KI * KI))
    } else if bytes >= KI * KI {
        format!("{:.1} MiB", bytes / (KI * KI))
    } else {
        format!("{:.1} KiB", bytes / KI)
    }
}

/// Repeats `job(units)` until the method is satisfied; `work_per_unit` is the work (FLOP,
/// bytes) all threads do together per unit. Returns the rate, or `None` if nothing could be
/// timed.
fn measure_rate(
    d: &mut Driver<'_>,
    method: &Method,
    job: impl Fn(u64) -> Job,
    work_per_unit: f64,
) -> Option<Stat> {
    let started = Instant::now();
    // Calibrate (these rounds are the warm-up): grow until a round lasts a quarter of the
    // target, then scale to the target.
    let mut units: u64 = 1;
    let mut secs = d.round(job(units)).slowest;
    while secs < method.target_rep / 4.0 && units < u64::MAX / 16 {
        units = method.units_for(units, secs).max(units.saturating_mul(2));
        secs = d.round(job(units)).slowest;
    }
    units = method.units_for(units, secs);
    d.round(job(units));
    let mut samples = Vec::new();
    loop {
        let r = d.round(job(units));
        if r.slowest > 0.0 {
            samples.push(work_per_unit * units as f64 / r.slowest);
        }
        let elapsed = started.elapsed().as_secs_f64();
        if let Some(s) = method.done(&samples, elapsed) {
            return Some(s);
        }
        if samples.is_empty() && elapsed > method.max_task_secs {
            return None;
        }
    }
}

/// The clock ([`crate::clock::estimate`]): every worker runs each chain of
/// [`ClockChain::ALL`] for about 1 ms, `reps` times; each chain's figure is its **fastest**
/// repetition's instructions × latency / the slowest worker's time. Unlike the figures, not a
/// median: a repetition can only be slowed (preempted, interrupted), never sped up, so the
/// fastest one is the truest, and a clock read low would make the fault check reject real
/// figures.
fn measure_clock(
    d: &mut Driver<'_>,
    reps: usize,
    nominal: Option<&(f64, String)>,
) -> ClockEstimate {
    let mut timings = Vec::new();
    for chain in ClockChain::ALL {
        if bench_kernels::clock_chain(chain, 1).is_none() {
            continue;
        }
        let mut iters: u64 = 10_000;
        let t = d.round(Job::Clock { chain, iters }).slowest;
        if t > 0.0 {
            iters = ((iters as f64 * 1e-3 / t).ceil() as u64).max(1000);
        }
        let best = (0..reps)
            .map(|_| d.round(Job::Clock { chain, iters }).slowest)
            .filter(|s| *s > 0.0)
            .fold(f64::INFINITY, f64::min);
        if best.is_finite() {
            timings.push(ChainTiming {
                chain,
                instructions: 128.0 * iters as f64,
                seconds: best,
            });
        }
    }
    clock::estimate(&timings, nominal)
}

/// FLOP/s of all workers together running `kernel`.
fn measure_compute(d: &mut Driver<'_>, kernel: ComputeKernel, method: &Method) -> Option<Stat> {
    let per_unit = 1000.0 * kernel.flop_per_iteration() * d.threads() as f64;
    measure_rate(
        d,
        method,
        |units| Job::Compute {
            kernel,
            iters: units * 1000,
        },
        per_unit,
    )
}

/// Fork/join of an empty round, seconds: the median of `reps` rounds after 10 of warm-up.
fn measure_fork_join(d: &mut Driver<'_>, reps: usize) -> Option<Stat> {
    for _ in 0..10 {
        d.round(Job::Empty);
    }
    let v: Vec<f64> = (0..reps).map(|_| d.round(Job::Empty).wall).collect();
    Stat::of(&v, true)
}

#[allow(clippy::too_many_arguments)]
fn push_peak(
    peaks: &mut Vec<MeasuredPeak>,
    rejected: &mut Vec<String>,
    k: ComputeKernel,
    threads: u32,
    stat: Option<Stat>,
    widths: &limits::CoreWidths,
    clock: Option<f64>,
    limit_clock: Option<f64>,
) {
    let Some(stat) = stat else {
        rejected.push(format!(
            "{} ({threads} threads): could not be timed",
            k.name()
        ));
        return;
    };
    let theoretical = clock.map(|c| limits::peak_theoretical(k, widths, threads, c));
    let limit = limits::peak_limit(k, threads, limit_clock.unwrap_or(FALLBACK_CLOCK_HZ));
    if stat.median > limit * FAULT_TOLERANCE {
        rejected.push(format!(
            "{} ({threads} threads): {:.1} GFLOP/s is above the theoretical {:.1} GFLOP/s; rejected as a measurement fault",
            k.name(),
            stat.median / 1e9,
            limit / 1e9
        ));
        return;
    }
    peaks.push(MeasuredPeak {
        precision: k.precision(),
        kernel: k.name().to_string(),
        flop_per_instruction: k.flop_per_instruction(),
        threads,
        value: stat,
        theoretical,
    });
}
