//! A machine's roofline as measured on it: peak FLOP/s per precision, bandwidth per memory level,
//! the working-set sweep behind them, and the theoretical limits they were checked against.
//!
//! These are plain values: `roofline-measure` produces them (it owns the clock and the kernels),
//! `roofline-report` renders them, and [`Measurement::to_device`] turns them into the [`Device`]
//! the cost model uses. Nothing here times anything.
//!
//! Units: FLOP/s (OP/s for integer formats), B/s, bytes, seconds, Hz. Bandwidths count the bytes
//! a kernel's loads and stores name ([`BandwidthKernel::bytes_per_element`]); the extra read a
//! store miss costs on a write-allocate cache is **not** counted, as STREAM and likwid-bench do
//! not count it.

use crate::cited::Cited;
use crate::device::{Device, MemoryKind, MemoryLevel};
use crate::precision::Precision;
use crate::units::{Bytes, BytesPerSec, FlopPerSec, Seconds};
use serde::{Deserialize, Serialize};

/// Summary of repeated timings of one kernel: the median and the spread of the repetitions kept.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Stat {
    /// Median of the kept repetitions, in the quantity's base unit.
    pub median: f64,
    /// Smallest kept repetition.
    pub min: f64,
    /// Largest kept repetition.
    pub max: f64,
    /// Repetitions kept (after warm-up).
    pub samples: u32,
    /// Whether the kept repetitions agreed within the method's tolerance before the repetition
    /// or time limit was reached.
    pub stable: bool,
}

impl Stat {
    /// Relative spread `(max − min) / median`; 0 for a single sample or a zero median.
    pub fn spread(&self) -> f64 {
        if self.median > 0.0 {
            (self.max - self.min) / self.median
        } else {
            0.0
        }
    }

    /// The statistic of the reciprocal quantity: from a rate (units per second) the time per
    /// unit, and back. The median inverts; the smallest becomes the largest and the largest the
    /// smallest. Samples and stability carry over.
    pub fn reciprocal(&self) -> Stat {
        Stat {
            median: 1.0 / self.median,
            min: 1.0 / self.max,
            max: 1.0 / self.min,
            ..*self
        }
    }

    /// Median, min, max of `values` (unsorted, finite). `None` when empty.
    ///
    /// The median of an even count is the mean of the two middle values.
    pub fn of(values: &[f64], stable: bool) -> Option<Stat> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Stat {
            median,
            min: v[0],
            max: v[n - 1],
            samples: n as u32,
            stable,
        })
    }
}

/// A measured peak: one compute kernel at one thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MeasuredPeak {
    /// The number format the kernel computes in.
    pub precision: Precision,
    /// The kernel (`avx2 vfmadd231ps ymm`), naming its instruction.
    pub kernel: String,
    /// FLOPs (OPs for integer formats) one instruction (or one named instruction sequence) does,
    /// as the vendor manuals define it: a fused multiply-add is 2 per lane.
    pub flop_per_instruction: f64,
    /// Threads that ran the kernel together.
    pub threads: u32,
    /// Measured throughput, FLOP/s (OP/s for integer formats).
    pub value: Stat,
    /// The datasheet-style theoretical peak, FLOP/s: threads × clock × FLOP per instruction ×
    /// instructions per cycle of this core (its FMA units). `None` when the clock is unknown.
    /// (The fault check uses a generic bound at least as high, so a misreported core model can
    /// never get a real figure rejected.)
    pub theoretical: Option<f64>,
}

/// A bandwidth kernel of the working-set sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BandwidthKernel {
    /// `s += a[i]`: loads only (likwid-bench `load`).
    Read,
    /// `b[i] = a[i]`: one load, one store (STREAM `copy`).
    Copy,
    /// `a[i] = b[i] + c[i] · d[i]`: three loads, one store (likwid-bench `triad`, the Schönauer
    /// vector triad).
    Triad,
}

impl BandwidthKernel {
    /// Every kernel, in sweep order.
    pub const ALL: [BandwidthKernel; 3] = [
        BandwidthKernel::Read,
        BandwidthKernel::Copy,
        BandwidthKernel::Triad,
    ];

    /// Lowercase name (`read`).
    pub fn name(self) -> &'static str {
        match self {
            BandwidthKernel::Read => "read",
            BandwidthKernel::Copy => "copy",
            BandwidthKernel::Triad => "triad",
        }
    }

    /// Arrays the kernel streams through (the working set is split evenly between them).
    pub fn streams(self) -> u32 {
        match self {
            BandwidthKernel::Read => 1,
            BandwidthKernel::Copy => 2,
            BandwidthKernel::Triad => 4,
        }
    }

    /// Bytes counted per 8-byte element: every load and store the kernel names, 8 bytes each.
    /// The write-allocate read of a store that misses the cache is not counted (STREAM and
    /// likwid-bench count the same way), so on a write-allocate cache copy and triad move
    /// 1.5× and 1.25× these bytes.
    pub fn bytes_per_element(self) -> f64 {
        8.0 * f64::from(self.streams())
    }
}

/// One point of the working-set sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BandwidthPoint {
    /// The kernel.
    pub kernel: BandwidthKernel,
    /// Working set of all threads together, bytes (every array of every thread).
    pub working_set: f64,
    /// Bandwidth of all threads together, B/s.
    pub bandwidth: Stat,
}

/// One memory level as the sweep found it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MeasuredLevel {
    /// Which level.
    pub kind: MemoryKind,
    /// Name (`L1d`, `DRAM`).
    pub name: String,
    /// Capacity the threads measured can use together, bytes (sum over the cache instances they
    /// run on; the OS's total memory for DRAM). `None` when unknown.
    pub capacity: Option<f64>,
    /// The capacity the sweep shows, bytes: the working set at which the read bandwidth falls
    /// to the geometric mean of this level's figure and the next level's (interpolated in log
    /// size between the two sweep points around it). In a guest whose last-level cache is
    /// shared with other guests, far less than the size the OS reports. `None` for main memory
    /// or where the curve never falls that far. [`Measurement::to_device`] takes the smaller of
    /// this and [`MeasuredLevel::capacity`].
    #[serde(default)]
    pub effective_capacity: Option<f64>,
    /// Smallest and largest working set whose points gave the figures, bytes.
    pub window: (f64, f64),
    /// Sweep points in the window (per kernel).
    pub points: u32,
    /// Read bandwidth, B/s: the median of the window's read points. The level's roof.
    pub read: Option<f64>,
    /// Copy bandwidth, B/s (median of the window).
    pub copy: Option<f64>,
    /// Triad bandwidth, B/s (median of the window).
    pub triad: Option<f64>,
    /// Theoretical read bandwidth, B/s, from bytes per cycle × clock × cores (an upper bound
    /// stated in the source); `None` where the hardware does not tell (DRAM in a VM).
    pub theoretical: Option<f64>,
    /// How the bytes-per-cycle of [`MeasuredLevel::theoretical`] were chosen.
    pub theoretical_source: Option<String>,
}

/// Everything one `roofline measure` run found out about a machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Measurement {
    /// Host name.
    pub host: String,
    /// Processor (or GPU) model name.
    pub processor: String,
    /// Vendor (`AMD`, `Intel`, `NVIDIA`).
    pub vendor: String,
    /// The date the caller gave (`2025-01-31`), written into every source.
    pub date: String,
    /// Instruction sets the kernels used (`avx2 fma`).
    pub isa: String,
    /// Threads of the all-threads runs (GPU: streaming multiprocessors).
    pub threads: u32,
    /// Whether every thread was pinned to its own logical CPU.
    pub pinned: bool,
    /// Core clock measured with one thread busy, Hz (dependent `imul` and `add` chains that
    /// agree; `None` when they do not, see [`Measurement::clock_source`]).
    pub clock_hz: Option<f64>,
    /// Core clock measured with all threads busy, Hz.
    pub clock_all_hz: Option<f64>,
    /// How the clock was found (each dependency chain's figure and whether they agreed), or
    /// why it was left out.
    #[serde(default)]
    pub clock_source: String,
    /// The figures of the chip file that did not settle ([`Measurement::unsettled_figures`]),
    /// one line each; empty when every one did. `roofline measure --out` refuses to write them
    /// without `--accept-unsettled`.
    #[serde(default)]
    pub unsettled: Vec<String>,
    /// Peaks: every kernel at one thread and at all threads.
    pub peaks: Vec<MeasuredPeak>,
    /// The working-set sweep, every kernel at every size, all threads.
    pub sweep: Vec<BandwidthPoint>,
    /// Memory levels, innermost first, main memory last.
    pub levels: Vec<MeasuredLevel>,
    /// Fork/join of an empty parallel region across all threads, seconds: a CPU's "kernel
    /// launch". `None` when not measured.
    pub launch_overhead: Option<Stat>,
    /// Results above their theoretical limit, rejected as measurement faults (never reported as
    /// figures), one line each.
    pub rejected: Vec<String>,
    /// Caveats: unstable figures, disagreements between the sweep and the OS cache sizes, …
    pub notes: Vec<String>,
    /// Method, one line: warm-up, repetitions, stop rule, statistic.
    pub method: String,
}

impl Measurement {
    /// The all-threads peak for `precision`, if measured (the largest if several kernels).
    pub fn peak(&self, precision: Precision) -> Option<&MeasuredPeak> {
        self.peaks
            .iter()
            .filter(|p| p.precision == precision && p.threads == self.threads)
            .max_by(|a, b| a.value.median.total_cmp(&b.value.median))
    }

    /// The figures [`Measurement::to_device`] takes that did not settle, one line each: an
    /// all-threads peak whose repetitions did not agree within the method's tolerance, and a
    /// level more than half of whose window's sweep points (every kernel) did not.
    pub fn unsettled_figures(&self) -> Vec<String> {
        let mut out = Vec::new();
        for p in Precision::ALL {
            if let Some(m) = self.peak(p).filter(|m| !m.value.stable) {
                out.push(format!(
                    "{p} peak ({}, {} threads): spread {:.1} %",
                    m.kernel,
                    m.threads,
                    100.0 * m.value.spread()
                ));
            }
        }
        for l in &self.levels {
            let (unstable, all) = self.level_stability(l);
            if 2 * unstable > all {
                out.push(format!(
                    "{}: {unstable} of its {all} sweep points did not settle",
                    l.name
                ));
            }
        }
        out
    }

    /// Sweep points in `l`'s window that did not settle, and all of them.
    fn level_stability(&self, l: &MeasuredLevel) -> (usize, usize) {
        let pts: Vec<&BandwidthPoint> = self
            .sweep
            .iter()
            .filter(|p| p.working_set >= l.window.0 && p.working_set <= l.window.1)
            .collect();
        (
            pts.iter().filter(|p| !p.bandwidth.stable).count(),
            pts.len(),
        )
    }

    /// Whether more than half of `l`'s window's sweep points did not settle.
    fn level_unsettled(&self, l: &MeasuredLevel) -> bool {
        let (unstable, all) = self.level_stability(l);
        2 * unstable > all
    }

    /// The level of `kind`, if placed.
    pub fn level(&self, kind: MemoryKind) -> Option<&MeasuredLevel> {
        self.levels.iter().find(|l| l.kind == kind)
    }

    /// The chip this measurement describes, for the cost model and the catalog's TOML format.
    ///
    /// Peaks: the all-threads median of each precision (the fastest kernel where several ran:
    /// AMX beside AVX512-BF16); bf16, when not measured, takes the fp32 peak (its math converts
    /// to fp32), with a source that says so; fp16 only where measured. Memory: every level with a read
    /// bandwidth, main memory first (the roofline's memory roof is the measured DRAM read
    /// bandwidth). `sm_count`: the threads measured. Launch overhead: the measured fork/join,
    /// or 1 µs (stated as assumed) when not measured. Every source names the host, the kernel,
    /// the statistic and `self.date`.
    pub fn to_device(&self, id: &str, name: &str) -> Device {
        let by = format!(
            "measured by `roofline measure` on {} ({}), {}",
            self.host, self.processor, self.date
        );
        let mut peaks = Vec::new();
        for p in Precision::ALL {
            if let Some(m) = self.peak(p) {
                peaks.push((
                    p,
                    Cited::new(
                        FlopPerSec(m.value.median),
                        format!(
                            "{by}: {}, {} threads, median of {} (spread {:.1} %{})",
                            m.kernel,
                            m.threads,
                            m.value.samples,
                            100.0 * m.value.spread(),
                            if m.value.stable {
                                ""
                            } else {
                                "; did not settle"
                            }
                        ),
                    ),
                ));
            }
        }
        // Without native bf16 arithmetic (no AVX512-BF16, no AMX), bf16 math converts to fp32
        // and runs on the fp32 FMA units (PyTorch's CPU kernels do), so the fp32 peak is
        // bf16's: derived, and the source says so. fp16 is never derived: a chip file has an
        // fp16 peak only where a native fp16 kernel (AVX512-FP16) measured one.
        if let Some(f32p) = self.peak(Precision::Fp32) {
            let p = Precision::Bf16;
            if self.peak(p).is_none() {
                peaks.push((
                    p,
                    Cited::new(
                        FlopPerSec(f32p.value.median),
                        format!(
                            "derived: no native {p} arithmetic measured, so {p} math converts to fp32 and runs at the fp32 peak ({}, {by})",
                            f32p.kernel
                        ),
                    ),
                ));
            }
            peaks.sort_by_key(|(p, _)| *p);
        }
        let mut memory = Vec::new();
        let ordered = self
            .levels
            .iter()
            .filter(|l| l.kind == MemoryKind::Main)
            .chain(self.levels.iter().filter(|l| l.kind != MemoryKind::Main));
        for l in ordered {
            let Some(read) = l.read else { continue };
            memory.push(MemoryLevel {
                kind: l.kind,
                name: l.name.clone(),
                bandwidth: Some(Cited::new(
                    BytesPerSec(read),
                    format!(
                        "{by}: read kernel, {} threads, median of {} working sets from {} to {} bytes{}",
                        self.threads,
                        l.points,
                        l.window.0,
                        l.window.1,
                        if self.level_unsettled(l) { "; did not settle" } else { "" }
                    ),
                )),
                capacity: match (l.capacity, l.effective_capacity) {
                    (Some(c), Some(e)) if e < c && l.kind != MemoryKind::Main => Some(Cited::new(
                        Bytes(e),
                        format!(
                            "{by}: the working set where the read bandwidth falls half-way (geometrically) to the next level's, below the {c} bytes the OS reports for the {} threads' instances (a share of a shared cache)",
                            self.threads
                        ),
                    )),
                    (c, e) => c.or(e.filter(|_| l.kind != MemoryKind::Main)).map(|c| {
                        Cited::new(
                            Bytes(c),
                            if l.kind == MemoryKind::Main {
                                "total memory the OS reports (/proc/meminfo MemTotal)".to_string()
                            } else if l.capacity.is_none() {
                                format!("{by}: the working set where the read bandwidth falls half-way (geometrically) to the next level's")
                            } else {
                                format!(
                                    "cache size the OS reports, summed over the {} threads' instances",
                                    self.threads
                                )
                            },
                        )
                    }),
                },
            });
        }
        let launch = match &self.launch_overhead {
            Some(s) if s.median > 0.0 => Cited::new(
                Seconds(s.median),
                format!(
                    "{by}: fork/join of an empty parallel region over {} threads, median of {}",
                    self.threads, s.samples
                ),
            ),
            _ => Cited::new(
                Seconds(1e-6),
                "assumed 1 µs: fork/join not measured".to_string(),
            ),
        };
        let mut notes = vec![format!(
            "measured, not a datasheet: {} threads{}, {}; {}",
            self.threads,
            if self.pinned {
                " pinned"
            } else {
                " (not pinned)"
            },
            self.isa,
            self.method
        )];
        notes.extend(self.notes.iter().cloned());
        Device {
            id: id.to_string(),
            name: name.to_string(),
            vendor: self.vendor.clone(),
            peaks,
            memory,
            sm_count: Some(Cited::new(
                self.threads,
                format!("{by}: threads (logical CPUs or SMs) measured"),
            )),
            shared_memory_per_sm: None,
            launch_overhead: launch,
            launch_model: crate::device::LaunchModel::PerKernel,
            interconnect: None,
            host_link: None,
            platform: None,
            notes,
            efficiency: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(v: f64) -> Stat {
        Stat {
            median: v,
            min: v * 0.99,
            max: v * 1.01,
            samples: 7,
            stable: true,
        }
    }

    fn sample() -> Measurement {
        let level = |kind, name: &str, read: f64| MeasuredLevel {
            kind,
            name: name.into(),
            capacity: Some(65536.0),
            effective_capacity: None,
            window: (16384.0, 32768.0),
            points: 3,
            read: Some(read),
            copy: None,
            triad: None,
            theoretical: None,
            theoretical_source: None,
        };
        Measurement {
            host: "box".into(),
            processor: "Test CPU".into(),
            vendor: "AMD".into(),
            date: "2025-01-31".into(),
            isa: "avx2 fma".into(),
            threads: 2,
            pinned: true,
            clock_hz: Some(3.5e9),
            clock_all_hz: Some(3.5e9),
            clock_source: String::new(),
            unsettled: vec![],
            peaks: vec![
                MeasuredPeak {
                    precision: Precision::Fp32,
                    kernel: "k".into(),
                    flop_per_instruction: 16.0,
                    threads: 1,
                    value: stat(100e9),
                    theoretical: None,
                },
                MeasuredPeak {
                    precision: Precision::Fp32,
                    kernel: "k".into(),
                    flop_per_instruction: 16.0,
                    threads: 2,
                    value: stat(200e9),
                    theoretical: None,
                },
            ],
            sweep: vec![],
            levels: vec![
                level(MemoryKind::L1, "L1d", 300e9),
                level(MemoryKind::Main, "DRAM", 40e9),
            ],
            launch_overhead: Some(stat(20e-6)),
            rejected: vec![],
            notes: vec![],
            method: "m".into(),
        }
    }

    #[test]
    fn unsettled_figures_name_the_peak_and_the_level() {
        let mut m = sample();
        assert!(m.unsettled_figures().is_empty());
        // The all-threads peak did not settle (the one-thread one is not in the chip file).
        m.peaks[1].value.stable = false;
        m.peaks[0].value.stable = false;
        // Two of the three points in L1d's window did not settle; the point outside it does
        // not count.
        let pt = |ws: f64, stable: bool| BandwidthPoint {
            kernel: BandwidthKernel::Read,
            working_set: ws,
            bandwidth: Stat {
                stable,
                ..stat(1e9)
            },
        };
        m.levels[1].window = (5e8, 2e9);
        m.sweep = vec![
            pt(16384.0, false),
            pt(24576.0, true),
            pt(32768.0, false),
            pt(1e6, false),
            pt(1e9, true),
        ];
        let u = m.unsettled_figures();
        assert_eq!(u.len(), 2, "{u:?}");
        assert!(u[0].starts_with("fp32 peak (k, 2 threads)"), "{u:?}");
        assert_eq!(u[1], "L1d: 2 of its 3 sweep points did not settle");
        // The chip file's sources say so, for the peak and the level.
        let d = m.to_device("host", "Host");
        let l1 = d
            .memory
            .iter()
            .find(|l| l.name == "L1d")
            .and_then(|l| l.bandwidth.clone());
        assert!(l1.is_some_and(|b| b.source.ends_with("did not settle")));
        let src = &d
            .peaks
            .iter()
            .find(|(p, _)| *p == Precision::Fp32)
            .map(|(_, c)| c.source.clone());
        assert!(
            src.as_deref().is_some_and(|s| s.contains("did not settle")),
            "{src:?}"
        );
    }

    #[test]
    fn a_rate_statistic_inverts_to_seconds_per_unit() -> Result<(), Box<dyn std::error::Error>> {
        // 4, 5 and 8 units/s: median 5 → 0.2 s per unit; the fastest rate (8) is the shortest
        // time (0.125 s), the slowest (4) the longest (0.25 s).
        let rate = Stat::of(&[8.0, 4.0, 5.0], true).ok_or("three samples")?;
        let t = rate.reciprocal();
        assert_eq!((t.median, t.min, t.max), (0.2, 0.125, 0.25));
        assert_eq!((t.samples, t.stable), (3, true));
        Ok(())
    }

    #[test]
    fn stat_median_and_spread_by_hand() -> Result<(), Box<dyn std::error::Error>> {
        // Sorted 1, 2, 3, 10: median (2 + 3) / 2 = 2.5; spread (10 − 1) / 2.5 = 3.6.
        let s = Stat::of(&[3.0, 10.0, 1.0, 2.0], true).ok_or("expected a value, got None")?;
        assert_eq!(s.median, 2.5);
        assert_eq!((s.min, s.max, s.samples), (1.0, 10.0, 4));
        assert!((s.spread() - 3.6).abs() < 1e-12);
        assert_eq!(
            Stat::of(&[4.0, 1.0, 9.0], false)
                .ok_or("expected a value, got None")?
                .median,
            4.0
        );
        assert!(Stat::of(&[], true).is_none());
        assert!(Stat::of(&[1.0, f64::NAN], true).is_none());
        Ok(())
    }

    #[test]
    fn bytes_per_element_count_loads_and_stores_only() {
        // read: 1 load; copy: 1 load + 1 store; triad: 3 loads + 1 store; 8 bytes each.
        assert_eq!(BandwidthKernel::Read.bytes_per_element(), 8.0);
        assert_eq!(BandwidthKernel::Copy.bytes_per_element(), 16.0);
        assert_eq!(BandwidthKernel::Triad.bytes_per_element(), 32.0);
    }

    #[test]
    fn device_takes_all_thread_peaks_and_main_memory_first(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let d = sample().to_device("host", "Host");
        assert_eq!(d.peak(Precision::Fp32)?.get(), 200e9);
        assert_eq!(d.memory[0].kind, MemoryKind::Main);
        assert_eq!(d.bandwidth()?.get(), 40e9);
        assert_eq!(d.memory[1].kind, MemoryKind::L1);
        // Ridge: 200e9 / 40e9 = 5 FLOP/byte.
        assert_eq!(d.ridge(Precision::Fp32)?.get(), 5.0);
        assert_eq!(d.launch_overhead.value.get(), 20e-6);
        assert_eq!(
            d.sm_count
                .as_ref()
                .ok_or("expected a value, got None")?
                .value,
            2
        );
        let src = &d
            .peak_cited(Precision::Fp32)
            .ok_or("expected a value, got None")?
            .source;
        assert!(src.contains("box") && src.contains("2025-01-31") && src.contains("median of 7"));
        // No bf16 kernel was measured: bf16 takes the fp32 peak, flagged as derived; fp16 has
        // none (no native fp16 kernel).
        assert_eq!(d.peak(Precision::Bf16)?.get(), 200e9);
        assert!(d.peak(Precision::Fp16).is_err());
        assert!(d
            .peak_cited(Precision::Bf16)
            .ok_or("expected a value, got None")?
            .source
            .starts_with("derived"));
        assert!(d.peak(Precision::Int8).is_err());
        let order: Vec<Precision> = d.peaks.iter().map(|(p, _)| *p).collect();
        assert_eq!(order, [Precision::Fp32, Precision::Bf16]);
        Ok(())
    }
}
