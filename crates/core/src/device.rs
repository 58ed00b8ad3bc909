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

/// Which level of the memory hierarchy a [`MemoryLevel`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
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

/// A link between chips or to the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// Name of the link (`NVLink 4 (18 links)`).
    pub name: String,
    /// Bandwidth in B/s (bidirectional aggregate per device unless the source says otherwise).
    pub bandwidth: Option<Cited<BytesPerSec>>,
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
    /// Fixed cost of launching one kernel, in seconds.
    pub launch_overhead: Cited<Seconds>,
    /// Chip-to-chip fabric, where it has one.
    pub interconnect: Option<Link>,
    /// Link to the host, where known.
    pub host_link: Option<Link>,
    /// Caveats about the figures (conflicts, derivations, unverified values).
    pub notes: Vec<String>,
}

/// A question the device cannot answer: a precision it has no peak for, or no main-memory
/// bandwidth.
#[derive(Debug, Clone, PartialEq, Eq)]
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
                let list: Vec<&str> = available.iter().map(|p| p.name()).collect();
                write!(
                    f,
                    "chip `{device}` has no published dense peak for `{precision}`; it has: {}",
                    if list.is_empty() {
                        "none".to_string()
                    } else {
                        list.join(", ")
                    }
                )
            }
            DeviceError::NoBandwidth { device } => {
                write!(f, "chip `{device}` has no main-memory bandwidth figure")
            }
        }
    }
}
impl std::error::Error for DeviceError {}

impl Device {
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The H100 SXM with its datasheet figures (dense BF16 989.5 TFLOP/s = 1,979/2; FP32 67;
    /// HBM3 3.35 TB/s; 228 KiB shared memory per SM), for tests across the crate.
    pub fn h100_sxm() -> Device {
        Device {
            id: "h100-sxm".into(),
            name: "NVIDIA H100 SXM5 80GB".into(),
            vendor: "NVIDIA".into(),
            peaks: vec![
                (Precision::Fp32, Cited::new(FlopPerSec(67e12), "datasheet")),
                (
                    Precision::Bf16,
                    Cited::new(FlopPerSec(989.5e12), "datasheet"),
                ),
                (
                    Precision::Fp16,
                    Cited::new(FlopPerSec(989.5e12), "datasheet"),
                ),
                (Precision::Fp8, Cited::new(FlopPerSec(1979e12), "datasheet")),
            ],
            memory: vec![MemoryLevel {
                kind: MemoryKind::Main,
                name: "HBM3".into(),
                bandwidth: Some(Cited::new(BytesPerSec(3.35e12), "datasheet")),
                capacity: Some(Cited::new(Bytes(80e9), "datasheet")),
            }],
            sm_count: Some(Cited::new(132, "whitepaper")),
            shared_memory_per_sm: Some(Cited::new(Bytes(228.0 * 1024.0), "tuning guide")),
            launch_overhead: Cited::new(Seconds(5e-6), "typical"),
            interconnect: None,
            host_link: None,
            notes: vec![],
        }
    }

    #[test]
    fn ridge_point_h100_bf16() -> Result<(), Box<dyn std::error::Error>> {
        let r = h100_sxm().ridge(Precision::Bf16)?;
        assert!((r.get() - 989.5 / 3.35).abs() < 1e-9);
        Ok(())
    }

    #[test]
    fn missing_peak_names_what_exists() {
        let e = h100_sxm().peak(Precision::Int4).unwrap_err().to_string();
        assert!(e.contains("int4") && e.contains("bf16"), "{e}");
    }
}
