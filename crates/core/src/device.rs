//! A chip: dense peak FLOP/s per precision, memory levels, on-chip resources, launch overhead.
//!
//! Values come from datasheets (the embedded catalog cites each one) or from a measurement.
//! Peaks are always **dense**: NVIDIA prints tensor-core figures with 2:4 structured sparsity,
//! which are twice the dense rate and never reachable by a dense GEMM.

use crate::cited::Cited;
use crate::precision::Precision;
use crate::units::{Bytes, BytesPerSec, FlopPerByte, FlopPerSec, Seconds};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Plausible ranges of a chip's figures, in SI base units, shared by chip files and by the
/// CLI's overrides (`--peak`, `--bandwidth`). Outside them a value is taken for a wrong
/// exponent or unit: a peak of 1e-300 FLOP/s would print infinite times and NaN shares.
pub mod limits {
    /// Smallest dense peak, FLOP/s: 1 MFLOP/s, 10^4 below one CPU core (≈ 10^10 FLOP/s);
    /// a 7B-parameter decode step at it already takes hours.
    pub const MIN_PEAK: f64 = 1e6;
    /// Largest dense peak, FLOP/s: 1 EFLOP/s, 100× the fastest chip's densest figure (GB200:
    /// 10 PFLOP/s dense FP4 per GPU).
    pub const MAX_PEAK: f64 = 1e18;
    /// Smallest bandwidth, B/s: 1 MB/s, below any memory or link of the last 40 years (one
    /// DDR5 channel moves ≈ 5·10^10 B/s).
    pub const MIN_BANDWIDTH: f64 = 1e6;
    /// Largest bandwidth, B/s: 1 PB/s, 125× the fastest HBM (B200: 8 TB/s).
    pub const MAX_BANDWIDTH: f64 = 1e15;
    /// Smallest memory capacity, bytes: 1 kB, below any cache level (an L1 holds ≥ 16 KiB).
    pub const MIN_CAPACITY: f64 = 1e3;
    /// Largest memory capacity, bytes: 1 PB, over 5,000× the largest accelerator memory
    /// (MI325X: 256 GB) and 20× the largest single-system DRAM (48 TB).
    pub const MAX_CAPACITY: f64 = 1e15;
    /// Smallest shared memory per SM, bytes: 1 kB (the first CUDA GPUs had 16 KiB).
    pub const MIN_SHARED_MEMORY: f64 = 1e3;
    /// Largest shared memory per SM, bytes: 16 MiB, 70× the H100's 228 KiB and 10× a
    /// Tenstorrent Tensix core's 1.5 MB of SRAM.
    pub const MAX_SHARED_MEMORY: f64 = 16.0 * 1024.0 * 1024.0;
    /// Largest count of SMs (compute units, cores): 10^7, over 10× the 900,000 cores of the
    /// largest chip built (Cerebras WSE-3).
    pub const MAX_SM_COUNT: u32 = 10_000_000;
    /// Smallest kernel launch overhead, seconds: 1 ns, one clock cycle at 1 GHz.
    pub const MIN_LAUNCH: f64 = 1e-9;
    /// Largest kernel launch overhead, seconds: 1 s, 10^5 above a CUDA launch (≈ 5 µs).
    pub const MAX_LAUNCH: f64 = 1.0;
    /// Smallest latency of one collective step over a link, seconds: 1 ns, one clock cycle at
    /// 1 GHz (NCCL's smallest per-step figure, NVLink with the LL protocol, is 0.6 µs).
    pub const MIN_LATENCY: f64 = 1e-9;
    /// Largest latency of one collective step over a link, seconds: 10 ms, 700× NCCL's
    /// network figure for a ring step with the Simple protocol (14 µs).
    pub const MAX_LATENCY: f64 = 1e-2;
    /// Most GPUs in one node (one scale-up domain): 2^20, the most devices a system holds
    /// ([`crate::comm::system::MAX_DEVICES`]).
    pub const MAX_GPUS_PER_NODE: u32 = 1 << 20;
}

/// Which level of the memory hierarchy a [`MemoryLevel`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum MemoryKind {
    /// Off-chip main memory: HBM, GDDR or DRAM. The roofline's memory roof uses it.
    Main,
    /// Last-level on-chip cache shared by all cores (L2 on GPUs).
    L2,
    /// A cache beyond L2 (AMD Infinity Cache, TPU CMEM, CPU L3).
    L3,
    /// Per-core first-level cache (CPU L1).
    L1,
    /// Software-managed on-chip memory (Gaudi SRAM) that is not a cache.
    Sram,
}

impl MemoryKind {
    /// The lowercase name used in chip files and JSON (`main`, `l2`, `l3`, `l1`, `sram`).
    pub fn name(self) -> &'static str {
        match self {
            MemoryKind::Main => "main",
            MemoryKind::L2 => "l2",
            MemoryKind::L3 => "l3",
            MemoryKind::L1 => "l1",
            MemoryKind::Sram => "sram",
        }
    }
}

/// One level of a chip's memory hierarchy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryLevel {
    /// Which level this is.
    pub kind: MemoryKind,
    /// Human name (`HBM3`, `L2`, `GDDR6`).
    pub name: String,
    /// Peak bandwidth in B/s, where known.
    pub bandwidth: Option<Cited<BytesPerSec>>,
    /// Capacity in bytes, where known.
    pub capacity: Option<Cited<Bytes>>,
}

impl MemoryLevel {
    /// A level of `kind` called `name` (`HBM3`), its bandwidth and capacity unknown until
    /// [`MemoryLevel::with_bandwidth`] and [`MemoryLevel::with_capacity`].
    ///
    /// ```
    /// use roofline_core::device::{MemoryKind, MemoryLevel};
    /// use roofline_core::units::{Bytes, BytesPerSec};
    /// // The H100 SXM's L2: 50 MiB (Hopper whitepaper).
    /// let l2 = MemoryLevel::new(MemoryKind::L2, "L2")
    ///     .with_capacity(Bytes(50.0 * 1024.0 * 1024.0), "Hopper whitepaper: 50 MB L2");
    /// assert_eq!(l2.capacity.map(|c| c.value), Some(Bytes(52_428_800.0)));
    /// assert!(l2.bandwidth.is_none());
    /// ```
    pub fn new(kind: MemoryKind, name: impl Into<String>) -> Self {
        Self {
            kind,
            name: name.into(),
            bandwidth: None,
            capacity: None,
        }
    }

    /// Peak bandwidth in B/s, with its source.
    #[must_use]
    pub fn with_bandwidth(mut self, bandwidth: BytesPerSec, source: impl Into<String>) -> Self {
        self.bandwidth = Some(Cited::new(bandwidth, source));
        self
    }

    /// Capacity in bytes, with its source.
    #[must_use]
    pub fn with_capacity(mut self, capacity: Bytes, source: impl Into<String>) -> Self {
        self.capacity = Some(Cited::new(capacity, source));
        self
    }
}

/// A link between chips or to the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Link {
    /// Name of the link (`NVLink 4 (18 links)`).
    pub name: String,
    /// Bandwidth in B/s (bidirectional aggregate per device unless the source says otherwise).
    pub bandwidth: Option<Cited<BytesPerSec>>,
}

impl Link {
    /// A link called `name` with `bandwidth` in B/s (bidirectional aggregate per device), if
    /// known.
    pub fn new(name: impl Into<String>, bandwidth: Option<Cited<BytesPerSec>>) -> Self {
        Self {
            name: name.into(),
            bandwidth,
        }
    }
}

/// How a chip's runtime launches the kernels of one step.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LaunchModel {
    /// Each kernel is one host launch costing the launch overhead: CUDA and HIP streams,
    /// Metal dispatches ("the launch time on the CPU side is between 5-20 microseconds",
    /// Meta HolisticTraceAnalysis, CUDA kernel launch statistics).
    #[default]
    PerKernel,
    /// The step is one compiled program launched once (XLA on TPUs, SynapseAI graph mode on
    /// Gaudi): no per-kernel host launch, one launch overhead per step.
    PerProgram,
}

impl LaunchModel {
    /// Launches a step of `kernels` kernels costs: `kernels` per kernel, 1 per program (0 for
    /// an empty step).
    #[inline]
    pub fn launches(self, kernels: u64) -> u64 {
        match self {
            LaunchModel::PerKernel => kernels,
            LaunchModel::PerProgram => kernels.min(1),
        }
    }

    /// Short id as chip files spell it (`per_kernel`, `per_program`).
    pub fn id(self) -> &'static str {
        match self {
            LaunchModel::PerKernel => "per_kernel",
            LaunchModel::PerProgram => "per_program",
        }
    }
}

/// A chip, as the cost model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// Short id (`h100-sxm`).
    pub id: String,
    /// Full name (`NVIDIA H100 SXM5 80GB`).
    pub name: String,
    /// Vendor (`NVIDIA`).
    pub vendor: String,
    /// Dense peak throughput per precision in FLOP/s (integer formats: OP/s). Precisions the
    /// chip has no figure for are absent.
    pub peaks: Vec<(Precision, Cited<FlopPerSec>)>,
    /// Memory levels, main memory first.
    pub memory: Vec<MemoryLevel>,
    /// Streaming multiprocessors (NVIDIA), compute units (AMD) or cores, where known.
    pub sm_count: Option<Cited<u32>>,
    /// Largest shared memory (software-managed SRAM) one SM can use, in bytes, where known.
    pub shared_memory_per_sm: Option<Cited<Bytes>>,
    /// Fixed cost of launching one kernel, in seconds (one compiled program per step under
    /// [`LaunchModel::PerProgram`]).
    pub launch_overhead: Cited<Seconds>,
    /// How the chip's runtime launches a step's kernels: one host launch per kernel (CUDA,
    /// HIP, Metal) or one compiled program per step (XLA on TPUs, graph-compiled SynapseAI on
    /// Gaudi).
    #[serde(default)]
    pub launch_model: LaunchModel,
    /// Chip-to-chip fabric, where it has one.
    pub interconnect: Option<Link>,
    /// Link to the host, where known.
    pub host_link: Option<Link>,
    /// The node the chip is sold in (GPUs per node, the links inside and between nodes),
    /// where it has one: the system `--hardware CHIP --devices N` builds
    /// ([`crate::comm::System::of_chip`]).
    #[serde(default)]
    pub platform: Option<crate::comm::Platform>,
    /// Caveats about the figures (conflicts, derivations, unverified values).
    pub notes: Vec<String>,
    /// The shares of its roofs real kernels reach on this chip, with their source, where the
    /// chip file gives them (`[efficiency]`); `None`: the published shares
    /// ([`Device::efficiency`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<Cited<crate::pricing::Efficiency>>,
}

/// A question the device cannot answer: a precision it has no peak for, or no main-memory
/// bandwidth.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceError {
    /// The chip has no dense peak for this precision.
    NoPeak {
        /// Chip id.
        device: String,
        /// The precision asked for.
        precision: Precision,
        /// Precisions the chip does have.
        available: Vec<Precision>,
    },
    /// The chip has no main-memory bandwidth figure.
    NoBandwidth {
        /// Chip id.
        device: String,
    },
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceError::NoPeak {
                device,
                precision,
                available,
            } => {
                if available.is_empty() {
                    return write!(
                        f,
                        "chip `{device}` has no dense peak for any precision (none is \
                         published): it is not usable for a roofline, only for its memory figures"
                    );
                }
                let list: Vec<&str> = available.iter().map(|p| p.name()).collect();
                write!(
                    f,
                    "chip `{device}` has no published dense peak for `{precision}`; it has: {}",
                    list.join(", ")
                )
            }
            DeviceError::NoBandwidth { device } => {
                write!(f, "chip `{device}` has no main-memory bandwidth figure")
            }
        }
    }
}
impl std::error::Error for DeviceError {}

impl DeviceError {
    /// Whether the chip has no dense peak for any precision: no precision can be chosen
    /// instead, and only a measured or cited peak makes it usable for a roofline.
    pub fn no_peak_at_all(&self) -> bool {
        matches!(self, DeviceError::NoPeak { available, .. } if available.is_empty())
    }

    /// The chip-file field the missing figure belongs in: `peak_flops_per_s.<precision>`
    /// (`peak_flops_per_s.bf16`) or `memory.bandwidth_bytes_per_s` (of the main level), as in
    /// the catalog's TOML files.
    ///
    /// ```
    /// use roofline_core::device::Device;
    /// use roofline_core::precision::Precision;
    /// let chip = Device::builder("x", "X").build();
    /// assert_eq!(chip.peak(Precision::Int4).unwrap_err().field(), "peak_flops_per_s.int4");
    /// assert_eq!(chip.bandwidth().unwrap_err().field(), "memory.bandwidth_bytes_per_s");
    /// ```
    pub fn field(&self) -> String {
        match self {
            DeviceError::NoPeak { precision, .. } => format!("peak_flops_per_s.{precision}"),
            DeviceError::NoBandwidth { .. } => "memory.bandwidth_bytes_per_s".to_string(),
        }
    }
}

impl Device {
    /// The shares of its roofs an estimate on this chip is priced at: the chip file's own
    /// (`[efficiency]`), else [`crate::pricing::Efficiency::published`].
    pub fn efficiency(&self) -> crate::pricing::Efficiency {
        self.efficiency
            .as_ref()
            .map_or_else(crate::pricing::Efficiency::published, |c| c.value)
    }

    /// Where [`Device::efficiency`] comes from, in words.
    pub fn efficiency_source(&self) -> &str {
        match &self.efficiency {
            Some(c) => &c.source,
            None => crate::pricing::PUBLISHED_SOURCE,
        }
    }

    /// The dense peak for `precision`, if the chip has one.
    pub fn peak(&self, precision: Precision) -> Result<FlopPerSec, DeviceError> {
        self.peaks
            .iter()
            .find(|(p, _)| *p == precision)
            .map(|(_, c)| c.value)
            .ok_or_else(|| self.no_peak(precision))
    }

    /// The error for a peak this chip lacks: its id, the precision, the precisions it has.
    pub fn no_peak(&self, precision: Precision) -> DeviceError {
        DeviceError::NoPeak {
            device: self.id.clone(),
            precision,
            available: self.peaks.iter().map(|(p, _)| *p).collect(),
        }
    }

    /// The cited peak entry for `precision`, if any.
    pub fn peak_cited(&self, precision: Precision) -> Option<&Cited<FlopPerSec>> {
        self.peaks
            .iter()
            .find(|(p, _)| *p == precision)
            .map(|(_, c)| c)
    }

    /// Why the chip cannot be used for a roofline analysis, if it cannot: it has no dense peak
    /// for any precision (Apple publishes no GPU FLOP/s for the M3 Max, and the catalog does not
    /// use third-party estimates). `None` for a usable chip.
    ///
    /// ```
    /// use roofline_core::device::Device;
    /// use roofline_core::precision::Precision;
    /// use roofline_core::units::{BytesPerSec, FlopPerSec};
    /// let bare = Device::builder("m3-max", "Apple M3 Max")
    ///     .main_memory("LPDDR5", BytesPerSec(400e9), None, "Apple newsroom");
    /// assert!(bare.clone().build().unusable_reason().is_some());
    /// let measured = bare.peak(Precision::Fp32, FlopPerSec(1e13), "measured").build();
    /// assert!(measured.unusable_reason().is_none());
    /// ```
    pub fn unusable_reason(&self) -> Option<&'static str> {
        if self.peaks.is_empty() {
            Some("no published dense peak for any precision: measure the chip for a roofline")
        } else if self.bandwidth().is_err() {
            Some("no main-memory bandwidth")
        } else {
            None
        }
    }

    /// The cost of launching one kernel, seconds: the launch overhead where each kernel is a
    /// host launch ([`LaunchModel::PerKernel`]), 0 where a step is one compiled program
    /// ([`LaunchModel::PerProgram`], which pays the overhead once per step).
    pub fn kernel_launch(&self) -> Seconds {
        match self.launch_model {
            LaunchModel::PerKernel => self.launch_overhead.value,
            LaunchModel::PerProgram => Seconds::ZERO,
        }
    }

    /// The main-memory level (HBM, GDDR, DRAM), if described.
    pub fn main_memory(&self) -> Option<&MemoryLevel> {
        self.memory.iter().find(|m| m.kind == MemoryKind::Main)
    }

    /// Main-memory bandwidth: the slope of the roofline's memory roof.
    pub fn bandwidth(&self) -> Result<BytesPerSec, DeviceError> {
        self.main_memory()
            .and_then(|m| m.bandwidth.as_ref())
            .map(|c| c.value)
            .ok_or_else(|| DeviceError::NoBandwidth {
                device: self.id.clone(),
            })
    }

    /// Main-memory capacity, if known.
    pub fn capacity(&self) -> Option<Bytes> {
        self.main_memory()
            .and_then(|m| m.capacity.as_ref())
            .map(|c| c.value)
    }

    /// Ridge point for `precision`: peak / main-memory bandwidth, in FLOP/byte (Williams,
    /// Waterman and Patterson, "Roofline", CACM 2009). An operator with a higher arithmetic
    /// intensity is compute-bound.
    pub fn ridge(&self, precision: Precision) -> Result<FlopPerByte, DeviceError> {
        Ok(self.peak(precision)? / self.bandwidth()?)
    }
}

impl Device {
    /// A builder for a chip with short id `id` (`h100-sxm`) and full name `name`: no peaks,
    /// no memory, a launch overhead of 0 s, until the setters add them.
    ///
    /// ```
    /// use roofline_core::device::Device;
    /// use roofline_core::precision::Precision;
    /// use roofline_core::units::{Bytes, BytesPerSec, FlopPerSec, Seconds};
    /// // The H100 SXM's datasheet: 989.5 TFLOP/s dense bf16 (1,979 with 2:4 sparsity, halved),
    /// // 3.35 TB/s and 80 GB of HBM3.
    /// let h100 = Device::builder("h100-sxm", "NVIDIA H100 SXM5 80GB")
    ///     .vendor("NVIDIA")
    ///     .peak(Precision::Bf16, FlopPerSec(989.5e12), "datasheet, dense")
    ///     .main_memory("HBM3", BytesPerSec(3.35e12), Some(Bytes(80e9)), "datasheet")
    ///     .launch_overhead(Seconds(5e-6), "typical")
    ///     .build();
    /// // Ridge point: 989.5e12 / 3.35e12 = 295.37 FLOP/byte.
    /// assert!((h100.ridge(Precision::Bf16)?.get() - 989.5 / 3.35).abs() < 1e-9);
    /// assert_eq!(h100.capacity(), Some(Bytes(80e9)));
    /// # Ok::<(), roofline_core::device::DeviceError>(())
    /// ```
    pub fn builder(id: impl Into<String>, name: impl Into<String>) -> DeviceBuilder {
        DeviceBuilder {
            device: Device {
                id: id.into(),
                name: name.into(),
                vendor: String::new(),
                peaks: Vec::new(),
                memory: Vec::new(),
                sm_count: None,
                shared_memory_per_sm: None,
                launch_overhead: Cited::new(Seconds::ZERO, "not given"),
                launch_model: LaunchModel::PerKernel,
                interconnect: None,
                host_link: None,
                platform: None,
                notes: Vec::new(),
                efficiency: None,
            },
        }
    }
}

/// Builds a [`Device`]; made by [`Device::builder`]. Every figure takes its source (a
/// datasheet, a paper, a measurement), as the catalog's files do.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct DeviceBuilder {
    device: Device,
}

impl DeviceBuilder {
    /// Vendor (`NVIDIA`).
    pub fn vendor(mut self, vendor: impl Into<String>) -> Self {
        self.device.vendor = vendor.into();
        self
    }
    /// The dense peak for `precision` in FLOP/s (integer formats: OP/s), replacing any earlier
    /// one for it. Never a 2:4-sparse figure.
    pub fn peak(
        mut self,
        precision: Precision,
        peak: FlopPerSec,
        source: impl Into<String>,
    ) -> Self {
        self.device.peaks.retain(|(p, _)| *p != precision);
        self.device
            .peaks
            .push((precision, Cited::new(peak, source)));
        self
    }
    /// The main memory (HBM, GDDR, DRAM) called `name`: `bandwidth` in B/s (the roofline's
    /// memory roof) and `capacity` in bytes if known, both from `source`. It goes first, before
    /// any level added with [`DeviceBuilder::memory`].
    pub fn main_memory(
        mut self,
        name: impl Into<String>,
        bandwidth: BytesPerSec,
        capacity: Option<Bytes>,
        source: impl Into<String>,
    ) -> Self {
        let source = source.into();
        let mut level = MemoryLevel::new(MemoryKind::Main, name).with_bandwidth(bandwidth, &source);
        if let Some(c) = capacity {
            level = level.with_capacity(c, source);
        }
        self.device.memory.retain(|m| m.kind != MemoryKind::Main);
        self.device.memory.insert(0, level);
        self
    }
    /// Another memory level (L2, L3, SRAM), after those already added.
    pub fn memory(mut self, level: MemoryLevel) -> Self {
        self.device.memory.push(level);
        self
    }
    /// Streaming multiprocessors (or compute units, cores).
    pub fn sm_count(mut self, n: u32, source: impl Into<String>) -> Self {
        self.device.sm_count = Some(Cited::new(n, source));
        self
    }
    /// Largest shared memory one SM can use, in bytes.
    pub fn shared_memory_per_sm(mut self, bytes: Bytes, source: impl Into<String>) -> Self {
        self.device.shared_memory_per_sm = Some(Cited::new(bytes, source));
        self
    }
    /// The shares of the roofs real kernels reach on this chip ([`Device::efficiency`]).
    pub fn efficiency(
        mut self,
        efficiency: crate::pricing::Efficiency,
        source: impl Into<String>,
    ) -> Self {
        self.device.efficiency = Some(Cited::new(efficiency, source));
        self
    }
    /// Fixed cost of launching one kernel, in seconds.
    pub fn launch_overhead(mut self, seconds: Seconds, source: impl Into<String>) -> Self {
        self.device.launch_overhead = Cited::new(seconds, source);
        self
    }
    /// The chip-to-chip fabric.
    pub fn interconnect(mut self, link: Link) -> Self {
        self.device.interconnect = Some(link);
        self
    }
    /// The node the chip is sold in ([`Device::platform`]).
    pub fn platform(mut self, platform: crate::comm::Platform) -> Self {
        self.device.platform = Some(platform);
        self
    }
    /// The link to the host.
    pub fn host_link(mut self, link: Link) -> Self {
        self.device.host_link = Some(link);
        self
    }
    /// A caveat about the figures.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.device.notes.push(note.into());
        self
    }
    /// The chip. A chip without a peak or a main-memory bandwidth is allowed (a profile's
    /// empirical roof may lack one); asking it for the missing figure gives a [`DeviceError`].
    pub fn build(self) -> Device {
        self.device
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The fixture under the path the analysis, explain and sweep tests name.
    pub use crate::fixtures::h100_sxm;

    #[test]
    fn ridge_point_h100_bf16() -> Result<(), Box<dyn std::error::Error>> {
        let r = h100_sxm().ridge(Precision::Bf16)?;
        assert!((r.get() - 989.5 / 3.35).abs() < 1e-9);
        Ok(())
    }

    #[test]
    fn builder_gives_the_datasheet_chip() {
        let ds = "datasheet";
        let built = Device::builder("h100-sxm", "NVIDIA H100 SXM5 80GB")
            .vendor("NVIDIA")
            .peak(Precision::Fp32, FlopPerSec(67e12), ds)
            .peak(Precision::Bf16, FlopPerSec(1e15), ds)
            .peak(Precision::Fp16, FlopPerSec(989.5e12), ds)
            .peak(Precision::Fp8, FlopPerSec(1979e12), ds)
            // a second figure for bf16 replaces the first, in its place at the end
            .peak(Precision::Bf16, FlopPerSec(989.5e12), ds)
            .main_memory("HBM3", BytesPerSec(3.35e12), Some(Bytes(80e9)), ds)
            .sm_count(132, "whitepaper")
            .shared_memory_per_sm(Bytes(228.0 * 1024.0), "tuning guide")
            .launch_overhead(Seconds(5e-6), "typical")
            .build();
        let mut expected = h100_sxm();
        let bf16 = expected.peaks.remove(1);
        expected.peaks.push(bf16);
        assert_eq!(built, expected);
    }

    #[test]
    fn missing_peak_names_what_exists() {
        let e = h100_sxm().peak(Precision::Int4).unwrap_err().to_string();
        assert!(e.contains("int4") && e.contains("bf16"), "{e}");
    }
}
