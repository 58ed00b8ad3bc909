//! Predicted against measured: real kernels, timed on a machine, beside the time that machine's
//! own (measured) roofline predicts for them.
//!
//! A suite entry ([`SuiteKernel`]) is one or more kernel launches ([`Launch`]) run back to back
//! and timed together; each launch carries the FLOPs and bytes the analysis's cost model gives it
//! ([`crate::ops`], [`crate::fusion`]), the units it runs on, and its working set (the distinct
//! bytes of the buffers it touches). Each launch is predicted two ways:
//!
//! - **DRAM-only**: time = max(F / P, B / W_main), the roofline of [`crate::roofline`] with the
//!   main-memory bandwidth (Williams, Waterman and Patterson 2009);
//! - **hierarchical**: the same with the bandwidth of the smallest memory level whose capacity
//!   holds the working set ([`level_for`]): a kernel repeated on data that fits in L3 streams it
//!   from L3, not DRAM (Ilic, Pratas and Sousa, "Cache-aware Roofline model", IEEE CAL 2014).
//!
//! With a measurement at hand, each level's roof is the best bandwidth its sweep kernels reached
//! ([`device_with_best_bandwidths`]); with a chip file, the file's figure.
//!
//! The hierarchical prediction also takes the **ceilings of the matrix library** where they
//! were measured ([`Ceilings`]), each on a calibration shape that is not in the suite. A ceiling
//! is a line below a roof that a class of code cannot pass (Williams, Waterman and Patterson
//! 2009, §4 "Adding ceilings to the model"): a library GEMM packs its operands and runs loop
//! overhead, so it tops out below an FMA-only peak; its GEMV (m = 1) streams the weights with
//! one stream per thread, below what the sweep's multi-stream kernels draw from main memory.
//! Launches on the matrix units are held against min(peak, GEMM ceiling) and, when served from
//! main memory, min(bandwidth, GEMV ceiling). A launch that evaluates e^x takes at least
//! exps / (e^x per second): exponentials run on units of their own on a GPU (the SFU, whose
//! throughput FlashAttention-3 names as a bottleneck: Shah et al. 2024, §3) and as a
//! polynomial on the FMA units of a CPU, a ceiling the FLOP count (e^x = 1 FLOP) does not see.
//! Where the sweep is at hand, a launch's bandwidth is that of its own share of stores
//! ([`LevelMix`]: a store costs what the sweep's copy and triad kernels showed, twice a load on
//! a write-allocate cache), and every launch pays the runtime's measured fork/join
//! ([`Ceilings::launch`]). The DRAM-only prediction keeps the plain roofs.
//!
//! An entry's prediction is the sum over its launches; its error is
//! `|predicted − measured| / measured` ([`relative_error`]); the suite's figure of merit is the
//! median error over its entries ([`SuiteCheck::median_error`]). A fused kernel and the separate
//! kernels it replaces give a measured speedup and a predicted one ([`SpeedupCheck`]).
//!
//! Everything here is arithmetic on values the caller measured; nothing is timed here.

use crate::analysis::peak_for;
use crate::cited::Cited;
use crate::device::{Device, DeviceError, MemoryKind, MemoryLevel};
use crate::measured::{Measurement, Stat};
use crate::ops::{Compute, Cost};
use crate::precision::Precision;
use crate::roofline::{Bound, Roof, RooflinePoint};
use crate::units::{Bytes, BytesPerSec, FlopPerByte, FlopPerSec, Seconds};
use serde::Serialize;

/// The accuracy goal of the suite: a median error of 15 % or less.
pub const GOAL: f64 = 0.15;

/// One kernel launch of a suite entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Launch {
    /// What it computes (`rmsnorm`, `linear1`, `qk_matmul`).
    pub name: String,
    /// FLOPs and bytes from the analysis's cost model (one multiply-add = 2 FLOP; each tensor
    /// crosses main memory once).
    pub cost: Cost,
    /// The units it runs on: selects the peak ([`crate::analysis::peak_for`]).
    pub compute: Compute,
    /// Distinct bytes of the buffers it reads and writes: selects the memory level.
    pub working_set: Bytes,
    /// Evaluations of e^x (softmax, SiLU): each one FLOP in the cost model, but a polynomial
    /// of about twenty vector instructions on a CPU; held against the e^x ceiling
    /// ([`Ceilings::exp`]) where one was measured.
    pub exps: f64,
    /// Whether its exponentials run in a pass of their own over data already loaded (a row's
    /// maximum is found before any e^x of the row, and each row is scaled only after its sum):
    /// then the e^x time adds to the memory time instead of hiding under it, as in a kernel that
    /// streams each element once (SiLU).
    pub exp_pass: bool,
}

/// A suite entry as timed on the machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteKernel {
    /// Short unique name (`gemm 1×4096×4096`).
    pub name: String,
    /// Family: `gemm`, `elementwise`, `norm`, `softmax`, `attention`, `chain`.
    pub family: String,
    /// Where the shape comes from (`Llama-2-7B decode: q_proj, k_proj, v_proj, o_proj`).
    pub note: String,
    /// The launches, in the order they run.
    pub launches: Vec<Launch>,
    /// Seconds per execution of all its launches (median, min, max of the repetitions).
    pub time: Stat,
    /// What its author knows limits it beyond the roofline (a polynomial e^x counted as one
    /// FLOP, one weight stream per thread), said when the prediction misses.
    pub caveat: Option<String>,
}

/// The memory level a working set of `working_set` bytes is served from: the smallest cache
/// level (by capacity) with a known bandwidth whose capacity holds it, else main memory.
/// Capacities are what the threads can use together (for a measured CPU: each private cache
/// times the threads). `None` when the chip has neither such a cache nor a main-memory
/// bandwidth.
pub fn level_for(device: &Device, working_set: Bytes) -> Option<&MemoryLevel> {
    let mut caches: Vec<&MemoryLevel> = device
        .memory
        .iter()
        .filter(|l| l.kind != MemoryKind::Main && l.bandwidth.is_some())
        .filter(|l| l.capacity.as_ref().is_some_and(|c| c.value.get() > 0.0))
        .collect();
    caches.sort_by(|a, b| {
        let cap = |l: &MemoryLevel| l.capacity.as_ref().map_or(0.0, |c| c.value.get());
        cap(a).total_cmp(&cap(b))
    });
    caches
        .into_iter()
        .find(|l| {
            l.capacity
                .as_ref()
                .is_some_and(|c| working_set.get() <= c.value.get())
        })
        .or_else(|| device.main_memory().filter(|m| m.bandwidth.is_some()))
}

/// Measured ceilings of the matrix library, below the chip's roofs (module docs).
#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
pub struct Ceilings {
    /// FLOP/s the library's GEMM reaches on a compute-bound calibration shape.
    pub gemm: Option<Cited<FlopPerSec>>,
    /// Bytes/s the library's GEMV (m = 1) draws from main memory on a calibration shape.
    pub gemv: Option<Cited<BytesPerSec>>,
    /// e^x evaluations per second of the kernels' exponential, all threads, on data in L1.
    pub exp: Option<Cited<f64>>,
    /// Seconds one launch costs on the suite's runtime before any work: an empty parallel
    /// region over every thread (CPU: the thread pool's fork/join), timed back to back as the
    /// kernels are. Added to each launch's hierarchical time.
    #[serde(default)]
    pub launch: Option<Cited<Seconds>>,
    /// Each measured level's bandwidth per access mix ([`LevelMix`]): the hierarchical
    /// prediction takes the bandwidth of a launch's own mix of loads and stores instead of the
    /// level's single roof. Empty with a chip file (no sweep at hand).
    #[serde(default)]
    pub mix: Vec<LevelMix>,
}

impl Ceilings {
    /// No ceilings: the plain roofs.
    pub const NONE: Ceilings = Ceilings {
        gemm: None,
        gemv: None,
        exp: None,
        launch: None,
        mix: Vec::new(),
    };
}

/// What one memory level delivers to the sweep's three kernels, B/s, bytes counted as the
/// kernels name them ([`crate::measured::BandwidthKernel`]): read (no stores), triad (one
/// store in four accesses) and copy (one in two). A store that misses a write-allocate cache
/// reads its line first, so on such a machine copy and triad count less than read moves (copy
/// moves 24 bytes for the 16 it names): the sweep has measured what stores cost on this
/// machine, and a launch's bandwidth follows its own share of stores
/// ([`LevelMix::bandwidth`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LevelMix {
    /// The level.
    pub kind: MemoryKind,
    /// The read kernel's bandwidth, B/s.
    pub read: Option<f64>,
    /// The triad kernel's (a quarter of its accesses stores), B/s.
    pub triad: Option<f64>,
    /// The copy kernel's (half of its accesses stores), B/s.
    pub copy: Option<f64>,
}

impl LevelMix {
    /// The bandwidth, B/s, of a launch whose stores are `write_fraction` of its bytes (0–1):
    /// the seconds per byte interpolated linearly between the kernels' store shares (read 0,
    /// triad ¼, copy ½), held at the last one beyond it. `None` when the level has no figure.
    pub fn bandwidth(&self, write_fraction: f64) -> Option<f64> {
        let pts: Vec<(f64, f64)> = [(0.0, self.read), (0.25, self.triad), (0.5, self.copy)]
            .into_iter()
            .filter_map(|(w, b)| {
                b.filter(|b| b.is_finite() && *b > 0.0)
                    .map(|b| (w, 1.0 / b))
            })
            .collect();
        let w = if write_fraction.is_finite() {
            write_fraction.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let (first, last) = (pts.first()?, pts.last()?);
        if w <= first.0 {
            return Some(1.0 / first.1);
        }
        if w >= last.0 {
            return Some(1.0 / last.1);
        }
        pts.windows(2).find(|p| w <= p[1].0).map(|p| {
            let f = (w - p[0].0) / (p[1].0 - p[0].0);
            1.0 / (p[0].1 + f * (p[1].1 - p[0].1))
        })
    }
}

/// Every level of a measurement as a [`LevelMix`].
pub fn level_mixes(m: &Measurement) -> Vec<LevelMix> {
    m.levels
        .iter()
        .map(|l| LevelMix {
            kind: l.kind,
            read: l.read,
            triad: l.triad,
            copy: l.copy,
        })
        .collect()
}

/// One launch placed on both roofs.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LaunchPrediction {
    /// The launch's name.
    pub name: String,
    /// Peak that applies, FLOP/s (the DRAM-only roof's).
    pub peak: FlopPerSec,
    /// The compute roof of the hierarchical prediction, FLOP/s: the peak, or the GEMM
    /// ceiling where one applies and is lower.
    pub hier_peak: FlopPerSec,
    /// Against main memory.
    pub dram: RooflinePoint,
    /// Against the level its working set fits in.
    pub hier: RooflinePoint,
    /// That level's kind.
    pub level: MemoryKind,
    /// That level's name (`L3`, `DRAM`).
    pub level_name: String,
    /// That level's bandwidth, B/s (the GEMV ceiling where it applies).
    pub bandwidth: BytesPerSec,
    /// The launch's e^x evaluations.
    pub exps: f64,
    /// exps / the e^x ceiling, seconds; zero without exponentials or a ceiling. The
    /// hierarchical time is at least this.
    pub exp_time: Seconds,
    /// The launch cost added to the hierarchical time ([`Ceilings::launch`]), seconds.
    pub launch: Seconds,
    /// Whether the e^x time was added to the memory time ([`Launch::exp_pass`]) rather than
    /// taken as a ceiling beside it.
    pub exp_pass: bool,
}

/// Places `launch` on `device`'s roofs: the peak of its units (vector work: fp32, else
/// `act`'s), main memory, and the level of [`level_for`]. A launch on the matrix units is held
/// against the library's `ceilings` too in the hierarchical prediction, where they are lower.
///
/// # Errors
/// The chip has no peak for the precision, or no main-memory bandwidth.
pub fn predict_launch(
    launch: &Launch,
    device: &Device,
    act: Precision,
    ceilings: &Ceilings,
) -> Result<LaunchPrediction, DeviceError> {
    let peak = peak_for(device, launch.compute, act)?;
    let matrix = matches!(launch.compute, Compute::Matrix(_));
    let lower = |roof: f64, ceiling: Option<f64>| match ceiling {
        Some(c) if matrix && c > 0.0 && c < roof => c,
        _ => roof,
    };
    let hier_peak = FlopPerSec(lower(
        peak.get(),
        ceilings.gemm.as_ref().map(|c| c.value.get()),
    ));
    let main = device.bandwidth()?;
    let dram = Roof {
        peak,
        bandwidth: main,
    }
    .evaluate(&launch.cost);
    let (level, level_name, bandwidth) = match level_for(device, launch.working_set) {
        Some(l) => (
            l.kind,
            l.name.clone(),
            l.bandwidth.as_ref().map_or(main, |b| b.value),
        ),
        None => (MemoryKind::Main, "main memory".to_string(), main),
    };
    // The level's bandwidth at this launch's share of stores, where the sweep measured it.
    let bytes = launch.cost.bytes().get();
    let write_fraction = if bytes > 0.0 {
        launch.cost.bytes_written.get() / bytes
    } else {
        0.0
    };
    let bandwidth = match ceilings
        .mix
        .iter()
        .find(|m| m.kind == level)
        .and_then(|m| m.bandwidth(write_fraction))
    {
        Some(b) => BytesPerSec(b),
        None => bandwidth,
    };
    let bandwidth = if level == MemoryKind::Main {
        BytesPerSec(lower(
            bandwidth.get(),
            ceilings.gemv.as_ref().map(|c| c.value.get()),
        ))
    } else {
        bandwidth
    };
    let mut hier = Roof {
        peak: hier_peak,
        bandwidth,
    }
    .evaluate(&launch.cost);
    let exp_time = match &ceilings.exp {
        Some(c) if c.value > 0.0 && launch.exps > 0.0 => Seconds(launch.exps / c.value),
        _ => Seconds::ZERO,
    };
    if launch.exp_pass && exp_time.get() > 0.0 {
        // A pass of exponentials between the row's loads and its stores: the phases follow
        // one another.
        hier.time = Seconds(hier.time.get() + exp_time.get());
        hier.attainable = FlopPerSec(launch.cost.flops.get() / hier.time.get());
    } else if exp_time.get() > hier.time.get() {
        // Bound by its exponentials: an in-core ceiling, so compute-bound.
        hier.time = exp_time;
        hier.bound = Bound::Compute;
        hier.attainable = FlopPerSec(launch.cost.flops.get() / exp_time.get());
    }
    let launch_cost = match &ceilings.launch {
        Some(c) if c.value.get() > 0.0 => c.value,
        _ => Seconds::ZERO,
    };
    if launch_cost.get() > 0.0 {
        hier.time = Seconds(hier.time.get() + launch_cost.get());
        hier.attainable = FlopPerSec(launch.cost.flops.get() / hier.time.get());
    }
    Ok(LaunchPrediction {
        name: launch.name.clone(),
        peak,
        hier_peak,
        dram,
        hier,
        level,
        level_name,
        bandwidth,
        exps: launch.exps,
        exp_time,
        launch: launch_cost,
        exp_pass: launch.exp_pass && exp_time.get() > 0.0,
    })
}

/// The chip a measurement makes ([`Measurement::to_device`]) with each memory level's roof
/// raised to the highest bandwidth any of the sweep's kernels reached in that level's window
/// (read, copy or triad, bytes counted as the kernels name them), with a source that says so.
///
/// A roof is what a level can deliver. [`Measurement::to_device`] takes the read kernel's
/// figure, one stream per thread; where DRAM bandwidth grows with the streams in flight (a
/// latency-bound core, as on a small VM), kernels that read two arrays and write a third beat
/// that figure, and the copy and triad kernels (two and four streams) show it.
pub fn device_with_best_bandwidths(m: &Measurement, id: &str, name: &str) -> Device {
    let mut d = m.to_device(id, name);
    for level in &mut d.memory {
        let Some(l) = m.level(level.kind) else {
            continue;
        };
        let best = [(l.read, "read"), (l.copy, "copy"), (l.triad, "triad")]
            .into_iter()
            .filter_map(|(v, k)| v.filter(|v| v.is_finite() && *v > 0.0).map(|v| (v, k)))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let (Some((v, kernel)), Some(bw)) = (best, level.bandwidth.as_mut()) else {
            continue;
        };
        if v > bw.value.get() {
            bw.value = BytesPerSec(v);
            bw.source = format!(
                "the {kernel} kernel, the highest of read/copy/triad over {} working sets from {} to {} bytes (roof of `roofline measure kernels`); {}",
                l.points, l.window.0, l.window.1, bw.source
            );
        }
    }
    d
}

/// `|predicted − measured| / measured`; infinite when nothing was measured.
pub fn relative_error(predicted: Seconds, measured: Seconds) -> f64 {
    if measured.get() > 0.0 {
        (predicted.get() - measured.get()).abs() / measured.get()
    } else {
        f64::INFINITY
    }
}

/// A suite entry: measured beside predicted.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SuiteKernelCheck {
    /// Name.
    pub name: String,
    /// Family.
    pub family: String,
    /// Where the shape comes from.
    pub note: String,
    /// FLOPs and bytes of all its launches.
    pub cost: Cost,
    /// Arithmetic intensity of all its launches, FLOP/byte.
    pub intensity: FlopPerByte,
    /// Largest working set of its launches, bytes.
    pub working_set: Bytes,
    /// Measured seconds per execution (median of the repetitions, with their min and max).
    pub measured: Stat,
    /// FLOPs / measured median, FLOP/s: its measured point on the roofline.
    pub achieved: FlopPerSec,
    /// Bytes / measured median, B/s.
    pub achieved_bandwidth: BytesPerSec,
    /// Levels its launches are predicted from, joined with `+` (`L3`, `L2+DRAM`).
    pub level: String,
    /// The bound of the launch with the longest hierarchical time.
    pub bound: Bound,
    /// Σ launches' DRAM-only roofline time.
    pub predicted_dram: Seconds,
    /// Σ launches' hierarchical roofline time: the prediction.
    pub predicted: Seconds,
    /// FLOPs / predicted time, FLOP/s: its predicted point on the roofline.
    pub predicted_attainable: FlopPerSec,
    /// Error of the DRAM-only prediction.
    pub error_dram: f64,
    /// Error of the hierarchical prediction.
    pub error: f64,
    /// Each launch on the roofs.
    pub launches: Vec<LaunchPrediction>,
    /// What the kernel's author knows limits it beyond the roofline.
    pub caveat: Option<String>,
    /// Why the prediction misses by more than [`GOAL`], from the numbers; `None` within it.
    pub diagnosis: Option<String>,
}

/// A fused kernel against the kernels it replaces.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SpeedupCheck {
    /// What was fused (`rmsnorm → linear → silu → linear`).
    pub name: String,
    /// The entry of the separate kernels.
    pub before: String,
    /// The entry of the fused kernel.
    pub after: String,
    /// Measured time before / measured time after.
    pub measured: f64,
    /// Predicted (hierarchical) time before / after.
    pub predicted: f64,
    /// Predicted (DRAM-only) time before / after.
    pub predicted_dram: f64,
}

/// The whole suite on one machine.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SuiteCheck {
    /// The chip predicted from (`host`).
    pub device: String,
    /// One row per entry, in suite order.
    pub rows: Vec<SuiteKernelCheck>,
    /// Fused against separate.
    pub speedups: Vec<SpeedupCheck>,
    /// Median over the rows of the hierarchical error.
    pub median_error: f64,
    /// Median over the rows of the DRAM-only error.
    pub median_error_dram: f64,
    /// The goal the median is held against ([`GOAL`]).
    pub goal: f64,
    /// The matrix library's ceilings the hierarchical prediction used, with how they were
    /// measured.
    pub ceilings: Ceilings,
}

fn median(v: &[f64]) -> f64 {
    Stat::of(v, true).map_or(f64::NAN, |s| s.median)
}

fn pct(x: f64) -> String {
    format!("{:.0} %", 100.0 * x)
}

fn rate(v: f64, unit: &str) -> String {
    // The prefix of the value as printed (one decimal): 999.99e6 prints as 1.0 G, not 1000.0 M.
    let (s, p) = if v >= 0.99995e12 {
        (1e12, "T")
    } else if v >= 0.99995e9 {
        (1e9, "G")
    } else if v >= 0.99995e6 {
        (1e6, "M")
    } else {
        (1.0, "")
    };
    format!("{:.1} {p}{unit}", v / s)
}

/// Why a row misses: which roof it was held against, how far from it it ran, and, for a
/// memory-bound kernel that stores to main memory, the write-allocate traffic the cost model
/// does not count (a store that misses the cache first reads the line: main memory moves
/// R + 2·W, not R + W, unless the kernel uses non-temporal stores).
pub fn diagnose(row: &SuiteKernelCheck) -> Option<String> {
    if row.error <= GOAL || !row.error.is_finite() {
        return None;
    }
    let slower = row.measured.median > row.predicted.get();
    // The launch that dominates the prediction.
    let main = row
        .launches
        .iter()
        .max_by(|a, b| a.hier.time.get().total_cmp(&b.hier.time.get()))?;
    let exp_bound = main.exp_time.get() > 0.0 && main.exp_time == main.hier.time;
    let mut why = match (row.bound, slower) {
        (Bound::Compute, true) if exp_bound => {
            let exps: f64 = row.launches.iter().map(|l| l.exps).sum();
            let exp_time: f64 = row.launches.iter().map(|l| l.exp_time.get()).sum();
            format!(
                "bound by its e^x evaluations: {} of them take {:.3} ms at the measured e^x ceiling, of the {:.3} ms it ran; the rest of its work (memory traffic, its other arithmetic) does not hide behind them as the roofline's max assumes",
                rate(exps, ""),
                exp_time * 1e3,
                row.measured.median * 1e3,
            )
        }
        (Bound::Compute, true) if main.hier_peak.get() < main.peak.get() => format!(
            "compute-bound: runs at {} of the {} GEMM ceiling ({}; the FMA peak is {}); its shape keeps the library further below the peak than the calibration GEMM (a skinny or small shape, tiles packed per call)",
            rate(row.achieved.get(), "FLOP/s"),
            rate(main.hier_peak.get(), "FLOP/s"),
            pct(row.achieved.get() / main.hier_peak.get()),
            rate(main.peak.get(), "FLOP/s"),
        ),
        (Bound::Compute, true) => format!(
            "compute-bound: runs at {} of the {} peak ({}); the kernel does not keep the FMA units busy (packing, loop overhead, a small or skinny shape)",
            rate(row.achieved.get(), "FLOP/s"),
            rate(main.peak.get(), "FLOP/s"),
            pct(row.achieved.get() / main.peak.get()),
        ),
        (Bound::Compute, false) if exp_bound => {
            let exps: f64 = row.launches.iter().map(|l| l.exps).sum();
            let exp_time: f64 = row.launches.iter().map(|l| l.exp_time.get()).sum();
            format!(
                "bound by its e^x evaluations, but faster than the e^x ceiling ({} e^x/s against {} e^x/s): the ceiling was measured low (a busy machine: its calibration runs on every thread at once)",
                rate(exps / row.measured.median, ""),
                rate(exps / exp_time, ""),
            )
        }
        (Bound::Compute, false) => format!(
            "compute-bound, but faster than its roof ({} against {}): the roof was measured low (a busy machine, or a calibration GEMM slower than this shape)",
            rate(row.achieved.get(), "FLOP/s"),
            rate(main.hier_peak.get(), "FLOP/s"),
        ),
        (Bound::Memory, true) => format!(
            "memory-bound on {}: moves {} of its {} ({})",
            row.level,
            rate(row.achieved_bandwidth.get(), "B/s"),
            rate(main.bandwidth.get(), "B/s"),
            pct(row.achieved_bandwidth.get() / main.bandwidth.get()),
        ),
        (Bound::Memory, false)
            if row.achieved_bandwidth.get() <= main.bandwidth.get() && main.exp_time.get() > 0.0 =>
        {
            format!(
                "memory-bound on {}: moves {} of its {} ({}), faster than predicted: its e^x overlap its memory traffic more than the prediction ({}) assumes",
                row.level,
                rate(row.achieved_bandwidth.get(), "B/s"),
                rate(main.bandwidth.get(), "B/s"),
                pct(row.achieved_bandwidth.get() / main.bandwidth.get()),
                if main.exp_pass {
                    "the memory time plus the e^x pass"
                } else {
                    "the larger of the two"
                },
            )
        }
        (Bound::Memory, false) if row.achieved_bandwidth.get() <= main.bandwidth.get() => format!(
            "memory-bound on {}: moves {} of its {} ({}), faster than predicted: {}",
            row.level,
            rate(row.achieved_bandwidth.get(), "B/s"),
            rate(main.bandwidth.get(), "B/s"),
            pct(row.achieved_bandwidth.get() / main.bandwidth.get()),
            if main.launch.get() > 0.0 {
                format!(
                    "it paid less than the {} fork/join measured on an empty parallel region",
                    rate(main.launch.get(), "s")
                )
            } else {
                "its bytes counted high, or its level's bandwidth measured low".to_string()
            },
        ),
        (Bound::Memory, false) => format!(
            "memory-bound on {}, but moves {}, above the {} it is held against (the level's roof, or the GEMV ceiling for a matrix-unit launch): its access pattern gets more than the kernels that measured it did (more streams in flight, part of the working set in a faster level, or a quieter machine)",
            row.level,
            rate(row.achieved_bandwidth.get(), "B/s"),
            rate(main.bandwidth.get(), "B/s"),
        ),
        // Kernels timed on one chip never run on a link.
        (Bound::Network | Bound::Latency, _) => return None,
    };
    if slower && row.bound == Bound::Memory && row.cost.bytes_written.get() > 0.0 {
        // Write-allocate: each written byte is also read.
        let extra = row
            .launches
            .iter()
            .map(|l| l.hier.memory_time.get())
            .sum::<f64>()
            * (row.cost.bytes_written.get() / row.cost.bytes().get());
        let with = Seconds(row.predicted.get() + extra);
        let e = relative_error(with, Seconds(row.measured.median));
        // Said only where it explains the miss (one point of error or more).
        if e < row.error - 0.01 {
            why.push_str(&format!(
                "; with write-allocate (each stored line read first: {} more) it would be predicted {:.3} ms, error {}",
                rate(row.cost.bytes_written.get(), "B"),
                with.get() * 1e3,
                pct(e)
            ));
        }
    }
    if let Some(c) = &row.caveat {
        why.push_str("; ");
        why.push_str(c);
    }
    if row.error_dram < row.error {
        why.push_str(&format!("; DRAM-only is closer ({})", pct(row.error_dram)));
    }
    Some(why)
}

/// Holds every timing against `device`'s roofs; `pairs` names (what, separate entry, fused
/// entry) for the speedups (pairs whose entries are missing are skipped). `act` is the
/// precision vector work falls back to on chips without an fp32 peak; `ceilings` the matrix
/// library's measured ceilings for the hierarchical prediction ([`Ceilings::NONE`]: none).
///
/// # Errors
/// The chip lacks a peak or the main-memory bandwidth a launch needs.
pub fn check_suite(
    timings: &[SuiteKernel],
    pairs: &[(&str, &str, &str)],
    device: &Device,
    act: Precision,
    ceilings: &Ceilings,
) -> Result<SuiteCheck, DeviceError> {
    let mut rows = Vec::with_capacity(timings.len());
    for t in timings {
        let launches = t
            .launches
            .iter()
            .map(|l| predict_launch(l, device, act, ceilings))
            .collect::<Result<Vec<_>, _>>()?;
        let cost: Cost = t.launches.iter().map(|l| l.cost).sum();
        let predicted_dram = Seconds(launches.iter().map(|p| p.dram.time.get()).sum());
        let predicted = Seconds(launches.iter().map(|p| p.hier.time.get()).sum());
        let measured = Seconds(t.time.median);
        let mut levels: Vec<String> = Vec::new();
        for p in &launches {
            if !levels.contains(&p.level_name) {
                levels.push(p.level_name.clone());
            }
        }
        let bound = launches
            .iter()
            .max_by(|a, b| a.hier.time.get().total_cmp(&b.hier.time.get()))
            .map_or(Bound::Memory, |p| p.hier.bound);
        let per_sec = |x: f64, t: Seconds| if t.get() > 0.0 { x / t.get() } else { 0.0 };
        let mut row = SuiteKernelCheck {
            name: t.name.clone(),
            family: t.family.clone(),
            note: t.note.clone(),
            cost,
            intensity: cost.intensity(),
            working_set: Bytes(
                t.launches
                    .iter()
                    .map(|l| l.working_set.get())
                    .fold(0.0, f64::max),
            ),
            measured: t.time,
            achieved: FlopPerSec(per_sec(cost.flops.get(), measured)),
            achieved_bandwidth: BytesPerSec(per_sec(cost.bytes().get(), measured)),
            level: levels.join("+"),
            bound,
            predicted_dram,
            predicted,
            predicted_attainable: FlopPerSec(per_sec(cost.flops.get(), predicted)),
            error_dram: relative_error(predicted_dram, measured),
            error: relative_error(predicted, measured),
            launches,
            caveat: t.caveat.clone(),
            diagnosis: None,
        };
        row.diagnosis = diagnose(&row);
        rows.push(row);
    }
    let find = |n: &str| rows.iter().find(|r| r.name == n);
    let speedups = pairs
        .iter()
        .filter_map(|(what, before, after)| {
            let (b, a) = (find(before)?, find(after)?);
            Some(SpeedupCheck {
                name: (*what).to_string(),
                before: b.name.clone(),
                after: a.name.clone(),
                measured: b.measured.median / a.measured.median,
                predicted: b.predicted / a.predicted,
                predicted_dram: b.predicted_dram / a.predicted_dram,
            })
        })
        .collect();
    Ok(SuiteCheck {
        device: device.id.clone(),
        median_error: median(&rows.iter().map(|r| r.error).collect::<Vec<_>>()),
        median_error_dram: median(&rows.iter().map(|r| r.error_dram).collect::<Vec<_>>()),
        rows,
        speedups,
        goal: GOAL,
        ceilings: ceilings.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cited::Cited;
    use crate::ops::{Elementwise, Gemm, ADD_FLOPS_PER_ELEMENT};

    /// A machine with a 100 GFLOP/s fp32 peak, a 1 MiB L2 at 100 GB/s, an 8 MiB L3 at 50 GB/s
    /// and DRAM at 10 GB/s (listed out of capacity order, as a chip file may).
    fn machine() -> Device {
        let level = |kind, name: &str, bw: f64, cap: Option<f64>| MemoryLevel {
            kind,
            name: name.into(),
            bandwidth: Some(Cited::new(BytesPerSec(bw), "test")),
            capacity: cap.map(|c| Cited::new(Bytes(c), "test")),
        };
        Device {
            id: "box".into(),
            name: "Box".into(),
            vendor: String::new(),
            peaks: vec![(Precision::Fp32, Cited::new(FlopPerSec(100e9), "test"))],
            memory: vec![
                level(MemoryKind::Main, "DRAM", 10e9, Some(16e9)),
                level(MemoryKind::L3, "L3", 50e9, Some(8.0 * 1048576.0)),
                level(MemoryKind::L2, "L2", 100e9, Some(1048576.0)),
            ],
            sm_count: None,
            shared_memory_per_sm: None,
            launch_overhead: Cited::new(Seconds(1e-6), "test"),
            launch_model: crate::device::LaunchModel::PerKernel,
            interconnect: None,
            host_link: None,
            platform: None,
            notes: vec![],
            efficiency: None,
        }
    }

    fn stat(t: f64) -> Stat {
        Stat {
            median: t,
            min: t,
            max: t,
            samples: 5,
            stable: true,
        }
    }

    fn add(n: u64) -> Launch {
        let cost = Elementwise {
            elements: n,
            inputs: 2,
            flops_per_element: ADD_FLOPS_PER_ELEMENT,
            precision: Precision::Fp32,
        }
        .cost();
        Launch {
            name: "add".into(),
            cost,
            compute: Compute::Vector,
            working_set: cost.bytes(),
            exps: 0.0,
            exp_pass: false,
        }
    }

    fn gemm(m: u64, n: u64, k: u64) -> Launch {
        let cost = Gemm::uniform(m, n, k, Precision::Fp32).cost();
        Launch {
            name: "gemm".into(),
            cost,
            compute: Compute::Matrix(Precision::Fp32),
            working_set: cost.bytes(),
            exps: 0.0,
            exp_pass: false,
        }
    }

    fn timing(name: &str, launches: Vec<Launch>, t: f64) -> SuiteKernel {
        SuiteKernel {
            name: name.into(),
            family: "test".into(),
            note: String::new(),
            launches,
            time: stat(t),
            caveat: None,
        }
    }

    #[test]
    fn the_level_is_the_smallest_that_holds_the_working_set(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let d = machine();
        assert_eq!(
            level_for(&d, Bytes(1000.0))
                .ok_or("expected a value, got None")?
                .name,
            "L2"
        );
        assert_eq!(
            level_for(&d, Bytes(1048576.0))
                .ok_or("expected a value, got None")?
                .name,
            "L2"
        );
        assert_eq!(
            level_for(&d, Bytes(1048577.0))
                .ok_or("expected a value, got None")?
                .name,
            "L3"
        );
        assert_eq!(
            level_for(&d, Bytes(9e6))
                .ok_or("expected a value, got None")?
                .name,
            "DRAM"
        );
        Ok(())
    }

    #[test]
    fn a_launch_takes_the_bandwidth_of_its_share_of_stores(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // A write-allocate DRAM: read 30 GB/s; copy names 16 B per element but moves 24, so it
        // counts 30 × 16/24 = 20 GB/s; triad names 32 and moves 40: 24 GB/s.
        let mix = LevelMix {
            kind: MemoryKind::Main,
            read: Some(30e9),
            triad: Some(24e9),
            copy: Some(20e9),
        };
        assert_eq!(mix.bandwidth(0.0), Some(30e9));
        assert_eq!(mix.bandwidth(0.5), Some(20e9));
        assert_eq!(mix.bandwidth(0.9), Some(20e9));
        // An add (two loads, one store): a third of its bytes are stores, between triad (¼) and
        // copy (½): 1/24 + (1/3 − 1/4)/(1/4) × (1/20 − 1/24) = 0.0444… ns per byte: 22.5 GB/s.
        let b = mix.bandwidth(1.0 / 3.0).ok_or("none")?;
        assert!((b - 22.5e9).abs() < 1e3, "{b}");
        // Without copy and triad the read figure stands; without any, none.
        let read_only = LevelMix {
            triad: None,
            copy: None,
            ..mix
        };
        assert_eq!(read_only.bandwidth(0.5), Some(30e9));
        let empty = LevelMix {
            read: None,
            ..read_only
        };
        assert_eq!(empty.bandwidth(0.2), None);

        // 2^22-element add from DRAM (48 MiB = 50,331,648 B, a third stores) on the test
        // machine with that mix and a 20 µs launch: 50331648 / 22.5e9 + 20e-6 = 2.25696 ms.
        let ceilings = Ceilings {
            mix: vec![mix],
            launch: Some(Cited::new(Seconds(20e-6), "test")),
            ..Ceilings::NONE
        };
        let p = predict_launch(&add(1 << 22), &machine(), Precision::Fp32, &ceilings)?;
        assert_eq!(p.level_name, "DRAM");
        assert!((p.bandwidth.get() - 22.5e9).abs() < 1e3);
        assert!((p.hier.time.get() - (50_331_648.0 / 22.5e9 + 20e-6)).abs() < 1e-12);
        assert_eq!(p.launch, Seconds(20e-6));
        // The DRAM-only prediction keeps the plain roof: 50331648 / 10e9.
        assert!((p.dram.time.get() - 5.0331648e-3).abs() < 1e-12);
        Ok(())
    }

    #[test]
    fn exponentials_in_a_pass_of_their_own_add_to_the_memory_time(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // A 2^22-element add from DRAM with 2^22 e^x at 2 G/s: memory 50331648 / 10e9 =
        // 5.0331648 ms, e^x 4194304 / 2e9 = 2.097152 ms. Streamed once, the e^x hide under the
        // memory time; in a pass of their own (softmax's rows), they add: 7.1303168 ms.
        let mut l = add(1 << 22);
        l.exps = 4_194_304.0;
        let ceilings = Ceilings {
            exp: Some(Cited::new(2e9, "test")),
            ..Ceilings::NONE
        };
        let once = predict_launch(&l, &machine(), Precision::Fp32, &ceilings)?;
        assert!((once.hier.time.get() - 5.0331648e-3).abs() < 1e-12);
        l.exp_pass = true;
        let passes = predict_launch(&l, &machine(), Precision::Fp32, &ceilings)?;
        assert!((passes.hier.time.get() - 7.1303168e-3).abs() < 1e-12);
        assert!(passes.exp_pass && !once.exp_pass);

        // Measured 5.5 ms: faster than the 7.13 ms predicted (error 29.6 %), yet below the
        // 10 GB/s roof (50331648 B / 5.5 ms = 9.15 GB/s, 91.5 %, printed to two figures): the
        // diagnosis says the e^x overlapped, not that the kernel beat its roof.
        let s = check_suite(
            &[timing("softmax-like", vec![l], 5.5e-3)],
            &[],
            &machine(),
            Precision::Fp32,
            &ceilings,
        )?;
        let why = s.rows[0].diagnosis.as_deref().ok_or("no diagnosis")?;
        assert!(
            why.contains("moves 9.2 GB/s of its 10.0 GB/s (92 %)"),
            "{why}"
        );
        assert!(why.contains("the memory time plus the e^x pass"), "{why}");
        assert!(!why.contains("above the"), "{why}");
        Ok(())
    }

    #[test]
    fn an_l3_resident_add_is_predicted_from_l3() -> Result<(), Box<dyn std::error::Error>> {
        // 2^18 elements: 3 × 2^18 × 4 = 3 MiB (3,145,728 B) read and written, 2^18 FLOP; it
        // fits in L3 (8 MiB), not L2. DRAM: 3145728 / 10e9 = 314.5728 µs; L3: / 50e9 =
        // 62.91456 µs. Measured 70 µs: hierarchical error (70 − 62.91456) / 70 = 10.12 %,
        // DRAM-only (314.5728 − 70) / 70 = 349.4 %.
        let p = predict_launch(&add(1 << 18), &machine(), Precision::Fp32, &Ceilings::NONE)?;
        assert_eq!(p.level_name, "L3");
        assert!((p.dram.time.get() - 314.5728e-6).abs() < 1e-12);
        assert!((p.hier.time.get() - 62.91456e-6).abs() < 1e-12);
        let s = check_suite(
            &[timing("add", vec![add(1 << 18)], 70e-6)],
            &[],
            &machine(),
            Precision::Fp32,
            &Ceilings::NONE,
        )?;
        let r = &s.rows[0];
        assert!((r.error - (70.0 - 62.91456) / 70.0).abs() < 1e-9);
        assert!((r.error_dram - (314.5728 - 70.0) / 70.0).abs() < 1e-9);
        assert_eq!(r.level, "L3");
        assert_eq!(r.bound, Bound::Memory);
        // Achieved: 3145728 B / 70 µs = 44.94 GB/s; 262144 FLOP / 70 µs = 3.745 GFLOP/s.
        assert!((r.achieved_bandwidth.get() - 3145728.0 / 70e-6).abs() < 1.0);
        assert!((r.achieved.get() - 262144.0 / 70e-6).abs() < 1e-3);
        assert!(r.diagnosis.is_none(), "within 15 %");
        Ok(())
    }

    #[test]
    fn a_square_gemm_is_compute_bound_and_the_join_sums_launches(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // 1024³ fp32: 2 × 1024³ = 2,147,483,648 FLOP at 100 GFLOP/s = 21.47483648 ms;
        // 12 MiB of operands > L3, from DRAM: 12,582,912 B / 10e9 = 1.258 ms < compute.
        let g = gemm(1024, 1024, 1024);
        let both = timing("two", vec![g.clone(), g.clone()], 50e-3);
        let one = timing("one", vec![g], 30e-3);
        let s = check_suite(
            &[both, one],
            &[("twice", "two", "one"), ("absent", "x", "one")],
            &machine(),
            Precision::Fp32,
            &Ceilings::NONE,
        )?;
        let (two, one) = (&s.rows[0], &s.rows[1]);
        assert_eq!(one.bound, Bound::Compute);
        assert!((one.predicted.get() - 21.47483648e-3).abs() < 1e-12);
        assert!((two.predicted.get() - 2.0 * 21.47483648e-3).abs() < 1e-12);
        assert_eq!(two.predicted, two.predicted_dram);
        // Errors: (30 − 21.4748) / 30 = 28.417 %; (50 − 42.9497) / 50 = 14.101 %.
        assert!((one.error - (30.0 - 21.47483648) / 30.0).abs() < 1e-9);
        assert!((two.error - (50.0 - 42.94967296) / 50.0).abs() < 1e-9);
        // The median of two is their mean.
        assert!((s.median_error - (one.error + two.error) / 2.0).abs() < 1e-12);
        // One pair: measured 50 / 30 = 1.667, predicted 2.
        assert_eq!(s.speedups.len(), 1);
        assert!((s.speedups[0].measured - 50.0 / 30.0).abs() < 1e-12);
        assert!((s.speedups[0].predicted - 2.0).abs() < 1e-12);
        // 2147483648 / 30 ms = 71.58 GFLOP/s = 72 % of the peak, said in the diagnosis.
        let why = one
            .diagnosis
            .as_deref()
            .ok_or("expected a value, got None")?;
        assert!(
            why.contains("compute-bound") && why.contains("72 %"),
            "{why}"
        );
        assert!(two.diagnosis.is_none());
        Ok(())
    }

    #[test]
    fn a_matrix_ceiling_lowers_the_compute_roof_of_gemms_only(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // Ceiling 80 GFLOP/s under the 100 GFLOP/s peak. 1024³: 2,147,483,648 FLOP / 80e9 =
        // 26.84354560 ms hierarchical, / 100e9 = 21.47483648 ms DRAM-only. Measured 28 ms:
        // errors (28 − 26.8435456) / 28 = 4.13 % and (28 − 21.47483648) / 28 = 23.30 %.
        // The add (vector units) keeps the peak: memory-bound either way, 62.91456 µs from L3.
        let ceiling = Ceilings {
            gemm: Some(Cited::new(FlopPerSec(80e9), "calibration GEMM")),
            gemv: None,
            exp: None,
            ..Ceilings::NONE
        };
        let s = check_suite(
            &[
                timing("gemm", vec![gemm(1024, 1024, 1024)], 28e-3),
                timing("add", vec![add(1 << 18)], 70e-6),
            ],
            &[],
            &machine(),
            Precision::Fp32,
            &ceiling,
        )?;
        let (g, a) = (&s.rows[0], &s.rows[1]);
        assert!((g.predicted.get() - 26.8435456e-3).abs() < 1e-12);
        assert!((g.predicted_dram.get() - 21.47483648e-3).abs() < 1e-12);
        assert!((g.error - (28.0 - 26.8435456) / 28.0).abs() < 1e-9);
        assert!((g.error_dram - (28.0 - 21.47483648) / 28.0).abs() < 1e-9);
        assert_eq!(g.launches[0].hier_peak.get(), 80e9);
        assert_eq!(g.launches[0].peak.get(), 100e9);
        assert_eq!(a.launches[0].hier_peak.get(), 100e9);
        assert!((a.predicted.get() - 62.91456e-6).abs() < 1e-12);
        assert_eq!(s.ceilings, ceiling);
        // A ceiling above the peak does not raise the roof.
        let high = Ceilings {
            gemm: Some(Cited::new(FlopPerSec(120e9), "calibration GEMM")),
            gemv: None,
            exp: None,
            ..Ceilings::NONE
        };
        let s = check_suite(
            &[timing("gemm", vec![gemm(1024, 1024, 1024)], 28e-3)],
            &[],
            &machine(),
            Precision::Fp32,
            &high,
        )?;
        assert!((s.rows[0].predicted.get() - 21.47483648e-3).abs() < 1e-12);
        // 2147483648 FLOP / 40 ms = 53.69 GFLOP/s = 67 % of the ceiling: said so.
        let s = check_suite(
            &[timing("gemm", vec![gemm(1024, 1024, 1024)], 40e-3)],
            &[],
            &machine(),
            Precision::Fp32,
            &ceiling,
        )?;
        let why = s.rows[0]
            .diagnosis
            .as_deref()
            .ok_or("expected a value, got None")?;
        assert!(
            why.contains("GEMM ceiling") && why.contains("67 %"),
            "{why}"
        );
        Ok(())
    }

    #[test]
    fn a_gemv_ceiling_lowers_main_memory_bandwidth_of_matrix_launches_only(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // GEMV ceiling 8 GB/s under the 10 GB/s DRAM roof. 1×4096×4096 fp32 moves
        // (4096 + 4096² + 4096)·4 = 67,141,632 B: 8.392704 ms at 8 GB/s (hierarchical),
        // 6.7141632 ms at 10 GB/s (DRAM-only). The 2^24 add (vector units, DRAM) keeps 10 GB/s:
        // 201,326,592 B / 10e9 = 20.1326592 ms. The 2^18 add from L3 is untouched.
        let ceilings = Ceilings {
            gemm: None,
            gemv: Some(Cited::new(BytesPerSec(8e9), "calibration GEMV")),
            exp: None,
            ..Ceilings::NONE
        };
        let s = check_suite(
            &[
                timing("gemv", vec![gemm(1, 4096, 4096)], 9e-3),
                timing("add", vec![add(1 << 24)], 21e-3),
            ],
            &[],
            &machine(),
            Precision::Fp32,
            &ceilings,
        )?;
        let (g, a) = (&s.rows[0], &s.rows[1]);
        assert!((g.predicted.get() - 8.392704e-3).abs() < 1e-12);
        assert!((g.predicted_dram.get() - 6.7141632e-3).abs() < 1e-12);
        assert_eq!(g.launches[0].bandwidth.get(), 8e9);
        assert!((a.predicted.get() - 20.1326592e-3).abs() < 1e-12);
        assert_eq!(a.launches[0].bandwidth.get(), 10e9);
        Ok(())
    }

    #[test]
    fn an_exp_ceiling_bounds_a_launch_by_its_exponentials() -> Result<(), Box<dyn std::error::Error>>
    {
        // A softmax-like launch: 2^24 elements, 2^24 e^x, 2^24·4 B read and written
        // (134,217,728 B): 13.4217728 ms from DRAM at 10 GB/s. At 1e9 e^x/s its exponentials
        // take 16.777216 ms: that is the prediction, compute-bound (an in-core ceiling).
        // Measured 20 ms: error (20 − 16.777216) / 20 = 16.11 %; DRAM-only (20 − 13.42) / 20.
        let mut l = add(1 << 24);
        l.cost = Cost::new(5.0 * 16777216.0, 67108864.0, 67108864.0);
        l.working_set = l.cost.bytes();
        l.exps = 16777216.0;
        let ceilings = Ceilings {
            exp: Some(Cited::new(1e9, "calibration")),
            ..Ceilings::NONE
        };
        let s = check_suite(
            &[timing("softmax", vec![l.clone()], 20e-3)],
            &[],
            &machine(),
            Precision::Fp32,
            &ceilings,
        )?;
        let r = &s.rows[0];
        assert!((r.predicted.get() - 16.777216e-3).abs() < 1e-12);
        assert!((r.predicted_dram.get() - 13.4217728e-3).abs() < 1e-12);
        assert_eq!(r.bound, Bound::Compute);
        assert!((r.error - (20.0 - 16.777216) / 20.0).abs() < 1e-9);
        let why = r.diagnosis.as_deref().ok_or("expected a value, got None")?;
        assert!(why.contains("e^x") && why.contains("16.777 ms"), "{why}");
        // Faster than the ceiling allows (14 ms < 16.78 ms, error 19.8 %): the ceiling was
        // measured low, said with both rates: 16,777,216 / 14 ms = 1.2 G e^x/s against 1.0 G.
        let s = check_suite(
            &[timing("softmax", vec![l.clone()], 14e-3)],
            &[],
            &machine(),
            Precision::Fp32,
            &ceilings,
        )?;
        let why = s.rows[0]
            .diagnosis
            .as_deref()
            .ok_or("expected a value, got None")?;
        assert!(
            why.contains("faster than the e^x ceiling (1.2 G e^x/s against 1.0 G e^x/s)"),
            "{why}"
        );
        // Without exponentials the ceiling does nothing: memory-bound, 13.42 ms.
        l.exps = 0.0;
        let s = check_suite(
            &[timing("copy", vec![l], 20e-3)],
            &[],
            &machine(),
            Precision::Fp32,
            &ceilings,
        )?;
        assert!((s.rows[0].predicted.get() - 13.4217728e-3).abs() < 1e-12);
        assert_eq!(s.rows[0].bound, Bound::Memory);
        Ok(())
    }

    #[test]
    fn a_slow_dram_kernel_is_explained_by_write_allocate() -> Result<(), Box<dyn std::error::Error>>
    {
        // 2^24 elements: 2^24 × 12 = 201,326,592 B, 1/3 of it written; DRAM 10 GB/s:
        // 20.1326592 ms predicted. Measured 26.8 ms: error 24.88 %. With write-allocate the
        // written third is moved twice: 20.1327 × 4/3 = 26.8435 ms, error 0.16 %.
        let s = check_suite(
            &[timing("add", vec![add(1 << 24)], 26.8e-3)],
            &[],
            &machine(),
            Precision::Fp32,
            &Ceilings::NONE,
        )?;
        let r = &s.rows[0];
        assert!((r.predicted.get() - 20.1326592e-3).abs() < 1e-12);
        assert!((r.error - (26.8 - 20.1326592) / 26.8).abs() < 1e-9);
        let why = r.diagnosis.as_deref().ok_or("expected a value, got None")?;
        assert!(why.contains("memory-bound on DRAM"), "{why}");
        assert!(
            why.contains("26.844 ms") && why.contains("error 0 %"),
            "{why}"
        );
        Ok(())
    }

    #[test]
    fn each_level_takes_its_best_kernel() -> Result<(), Box<dyn std::error::Error>> {
        use crate::measured::{MeasuredLevel, MeasuredPeak};
        let level = |kind, name: &str, r: f64, c: f64, t: f64| MeasuredLevel {
            kind,
            name: name.into(),
            capacity: Some(1e9),
            effective_capacity: None,
            window: (1.0, 2.0),
            points: 2,
            read: Some(r),
            copy: Some(c),
            triad: Some(t),
            theoretical: None,
            theoretical_source: None,
        };
        let m = Measurement {
            host: "box".into(),
            processor: "cpu".into(),
            vendor: String::new(),
            date: "d".into(),
            isa: String::new(),
            threads: 2,
            pinned: true,
            clock_hz: None,
            clock_all_hz: None,
            clock_source: String::new(),
            unsettled: vec![],
            peaks: vec![MeasuredPeak {
                precision: Precision::Fp32,
                kernel: "k".into(),
                flop_per_instruction: 16.0,
                threads: 2,
                value: stat(80e9),
                theoretical: None,
            }],
            sweep: vec![],
            // L1: read is the best (100 > 90, 95); DRAM: triad 21 beats read 10 and copy 12.
            levels: vec![
                level(MemoryKind::L1, "L1d", 100e9, 90e9, 95e9),
                level(MemoryKind::Main, "DRAM", 10e9, 12e9, 21e9),
            ],
            launch_overhead: None,
            rejected: vec![],
            notes: vec![],
            method: String::new(),
        };
        let d = device_with_best_bandwidths(&m, "host", "Host");
        assert_eq!(d.bandwidth()?.get(), 21e9);
        let dram = d
            .main_memory()
            .ok_or("expected a value, got None")?
            .bandwidth
            .as_ref()
            .ok_or("expected a value, got None")?;
        assert!(
            dram.source.starts_with("the triad kernel"),
            "{}",
            dram.source
        );
        let l1 = d
            .memory
            .iter()
            .find(|l| l.kind == MemoryKind::L1)
            .ok_or("no L1")?;
        assert_eq!(
            l1.bandwidth
                .as_ref()
                .ok_or("expected a value, got None")?
                .value
                .get(),
            100e9
        );
        assert_eq!(d.peak(Precision::Fp32)?.get(), 80e9);
        Ok(())
    }

    #[test]
    fn errors_are_relative_to_the_measurement() {
        assert_eq!(
            relative_error(Seconds(1.2), Seconds(1.0)),
            0.19999999999999996
        );
        assert_eq!(relative_error(Seconds(0.5), Seconds(1.0)), 0.5);
        assert!(relative_error(Seconds(1.0), Seconds(0.0)).is_infinite());
    }
}
