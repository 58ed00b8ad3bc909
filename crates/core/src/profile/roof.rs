//! Empirical roofs: the peaks and bandwidths a microbenchmark reached on a machine (mixbench,
//! the Empirical Roofline Toolkit), as values, and the [`Device`] they make.

use crate::cited::Cited;
use crate::device::{Device, DeviceError, MemoryKind, MemoryLevel};
use crate::precision::Precision;
use crate::units::{BytesPerSec, FlopPerByte, FlopPerSec, Seconds};
use serde::Serialize;

/// Which microbenchmark output a roof was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoofFormat {
    /// mixbench's log (CUDA/HIP/OpenCL/SYCL): a device header and a CSV sweep of operational
    /// intensity per precision.
    Mixbench,
    /// ERT's summary database `roofline.json` (`empirical.gbytes`, `empirical.gflops`).
    ErtJson,
    /// ERT's per-configuration `sum` file: `value GFLOPs`, `value L1` … `value DRAM`.
    ErtSum,
    /// ERT's raw trial file `try.NNN`: working set, trials, microseconds, bytes, FLOPs.
    ErtTrials,
}

impl RoofFormat {
    /// The name printed in reports.
    pub fn name(self) -> &'static str {
        match self {
            RoofFormat::Mixbench => "mixbench log",
            RoofFormat::ErtJson => "ERT roofline.json",
            RoofFormat::ErtSum => "ERT sum file",
            RoofFormat::ErtTrials => "ERT trial file",
        }
    }
}

/// A compute peak the benchmark reached.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmpiricalPeak {
    /// The precision, when it is one the cost model knows (mixbench's 32-bit integer peak is
    /// not: `None`).
    pub precision: Option<Precision>,
    /// The file's own label (`Single Precision`, `GFLOPs`, `Integer operations`).
    pub label: String,
    /// The peak, FLOP/s (OP/s for integers): the largest rate any experiment reached.
    pub value: FlopPerSec,
    /// The operational intensity at which it was reached, FLOP/byte, where the file tells.
    pub at_intensity: Option<FlopPerByte>,
    /// The largest bandwidth this precision's experiments reached (mixbench's GB/s plateau),
    /// B/s, where the file tells.
    pub plateau: Option<BytesPerSec>,
}

/// A bandwidth the benchmark reached at one level of the memory hierarchy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmpiricalLevel {
    /// Which level (ERT's `DRAM` is main memory, `L4` a cache beyond L2).
    pub kind: MemoryKind,
    /// The file's own name for it (`DRAM`, `L1`, `global memory`).
    pub name: String,
    /// Bandwidth, B/s.
    pub bandwidth: BytesPerSec,
}

/// One experiment of a sweep: what one run of the benchmark reached.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoofSample {
    /// Series label (`SP`, `DP`, `int`, `working set 8 B`).
    pub label: String,
    /// Operational intensity, FLOP/byte.
    pub intensity: FlopPerByte,
    /// Achieved FLOP/s.
    pub flops_per_s: FlopPerSec,
    /// Achieved B/s.
    pub bytes_per_s: BytesPerSec,
}

/// A machine's roofline as a microbenchmark measured it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmpiricalRoof {
    /// The output format it was read from.
    pub format: RoofFormat,
    /// The file, as named in messages.
    pub origin: String,
    /// The machine (mixbench's `Device:`, ERT's host name).
    pub machine: String,
    /// Whether the file says it measured a GPU (`None` when it does not say).
    pub gpu: Option<bool>,
    /// Compute peaks, in file order.
    pub peaks: Vec<EmpiricalPeak>,
    /// Memory levels, innermost first as the file lists them; at most one of kind `Main`.
    pub levels: Vec<EmpiricalLevel>,
    /// The sweep behind the figures (mixbench's experiments), empty where the file has none.
    pub samples: Vec<RoofSample>,
    /// Caveats: figures the cost model cannot use, assumptions made.
    pub notes: Vec<String>,
}

/// Launch overhead assumed for a GPU roof, seconds: the 5 µs of a CUDA kernel launch the
/// catalog uses (`crates/inputs/catalog/hardware/*.toml`), since no roof file measures it.
pub const ASSUMED_GPU_LAUNCH: f64 = 5e-6;
/// Launch overhead assumed for a CPU roof, seconds: 1 µs, as `roofline measure` assumes when it
/// does not measure the fork/join.
pub const ASSUMED_CPU_LAUNCH: f64 = 1e-6;

impl EmpiricalRoof {
    /// The main-memory level, if the file has one.
    pub fn main(&self) -> Option<&EmpiricalLevel> {
        self.levels.iter().find(|l| l.kind == MemoryKind::Main)
    }

    /// The peak for `p`, if measured.
    pub fn peak(&self, p: Precision) -> Option<&EmpiricalPeak> {
        self.peaks.iter().find(|x| x.precision == Some(p))
    }

    /// The chip this roof describes, for placing kernels under it and for the catalog's TOML:
    /// every peak with a known precision, every level (main memory first), and an assumed
    /// launch overhead ([`ASSUMED_GPU_LAUNCH`] unless the file says it measured a CPU, then
    /// [`ASSUMED_CPU_LAUNCH`]). Every source names the file and the format.
    ///
    /// # Errors
    /// [`DeviceError::NoBandwidth`] when the file has no main-memory bandwidth.
    pub fn to_device(&self, id: &str) -> Result<Device, DeviceError> {
        let by = format!("{} `{}`", self.format.name(), self.origin);
        if self.main().is_none() {
            return Err(DeviceError::NoBandwidth { device: id.into() });
        }
        let peaks = self
            .peaks
            .iter()
            .filter_map(|p| {
                p.precision.map(|prec| {
                    (
                        prec,
                        Cited::new(
                            p.value,
                            format!(
                                "{by}: {} peak, the largest rate of the sweep{}",
                                p.label,
                                p.at_intensity
                                    .map(|i| format!(" (at {:.3} FLOP/byte)", i.get()))
                                    .unwrap_or_default()
                            ),
                        ),
                    )
                })
            })
            .collect();
        let memory = self
            .levels
            .iter()
            .filter(|l| l.kind == MemoryKind::Main)
            .chain(self.levels.iter().filter(|l| l.kind != MemoryKind::Main))
            .map(|l| MemoryLevel {
                kind: l.kind,
                name: l.name.clone(),
                bandwidth: Some(Cited::new(l.bandwidth, format!("{by}: {}", l.name))),
                capacity: None,
            })
            .collect();
        let launch = if self.gpu == Some(false) {
            ASSUMED_CPU_LAUNCH
        } else {
            ASSUMED_GPU_LAUNCH
        };
        let mut notes = vec![format!(
            "empirical roof from {by}: what a benchmark reached, not a datasheet"
        )];
        notes.extend(self.notes.iter().cloned());
        Ok(Device {
            id: id.to_string(),
            name: format!("{} (measured, {})", self.machine, self.format.name()),
            vendor: String::new(),
            peaks,
            memory,
            sm_count: None,
            shared_memory_per_sm: None,
            launch_overhead: Cited::new(
                Seconds(launch),
                "assumed: the roof file does not measure a launch overhead",
            ),
            launch_model: crate::device::LaunchModel::PerKernel,
            interconnect: None,
            host_link: None,
            platform: None,
            notes,
            efficiency: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_has_main_memory_first_and_ridge_from_the_measured_figures(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let roof = EmpiricalRoof {
            format: RoofFormat::ErtJson,
            origin: "r.json".into(),
            machine: "box".into(),
            gpu: Some(false),
            peaks: vec![EmpiricalPeak {
                precision: Some(Precision::Fp64),
                label: "GFLOPs".into(),
                value: FlopPerSec(100e9),
                at_intensity: None,
                plateau: None,
            }],
            levels: vec![
                EmpiricalLevel {
                    kind: MemoryKind::L1,
                    name: "L1".into(),
                    bandwidth: BytesPerSec(500e9),
                },
                EmpiricalLevel {
                    kind: MemoryKind::Main,
                    name: "DRAM".into(),
                    bandwidth: BytesPerSec(50e9),
                },
            ],
            samples: vec![],
            notes: vec![],
        };
        let d = roof.to_device("x")?;
        assert_eq!(d.memory[0].kind, MemoryKind::Main);
        // 100e9 / 50e9 = 2 FLOP/byte.
        assert_eq!(d.ridge(Precision::Fp64)?.get(), 2.0);
        assert_eq!(d.launch_overhead.value.get(), ASSUMED_CPU_LAUNCH);
        let mut no_main = roof.clone();
        no_main.levels.retain(|l| l.kind != MemoryKind::Main);
        assert!(no_main.to_device("x").is_err());
        Ok(())
    }
}
