//! The estimate beside the serving bound: achievable shares of the roofs and the launch cost
//! of each kernel.
//!
//! The **bound** of a step is its roofline time: every kernel at `max(FLOPs / peak, bytes /
//! bandwidth)`, every collective at its link's α–β bound, no launch cost. No engine is faster.
//!
//! The **estimate** divides each term by the share of it real kernels reach and adds the cost
//! of launching them; it is labelled as an estimate wherever it is printed, beside the bound:
//!
//! - a kernel on the matrix units: FLOPs / (peak · η_matmul); other kernels' FLOPs at the
//!   peak (no published share for vector work);
//! - main-memory traffic: bytes / (bandwidth · η_memory);
//! - a collective: t_α + t_β / η_network ([`crate::comm::estimate`]);
//! - launches: the chip's launch overhead per kernel ([`crate::device::Device::launch_overhead`],
//!   [`crate::device::LaunchModel`] per chip family), or once per step when the step is
//!   captured as a CUDA graph (`cuda_graphs`): "the graph itself can then be launched
//!   repeatedly with very little overhead" (NVIDIA CUDA Programming Guide, CUDA Graphs), the
//!   per-kernel host launch of 5–20 µs (Meta HolisticTraceAnalysis, "CUDA kernel launch
//!   statistics") being what the graph removes.

use crate::analysis::OpRow;
use crate::comm::collective::Algorithm;
use crate::comm::estimate;
use crate::device::{Device, LaunchModel};
use crate::ops::Compute;
use crate::roofline::Roof;
use crate::train::efficiency::{Efficiency, EfficiencyError};
use crate::units::Seconds;
use serde::Serialize;

/// Dense bf16 matmul measured on an H100 SXM with PyTorch (cuBLAS): 794.5 TFLOP/s, the best
/// shape of a sweep, mean of 100 iterations (Stas Bekman, ml-engineering,
/// `compute/accelerator/README.md`, "Maximum Achievable Matmul FLOPS comparison table"),
/// FLOP/s.
pub const H100_MATMUL_MEASURED: f64 = 794.5e12;
/// H100 SXM's dense bf16 peak as that table gives it, 989 TFLOP/s, FLOP/s.
pub const H100_MATMUL_PEAK: f64 = 989e12;
/// Main-memory bandwidth an A100 80 GB reaches: "Empirically, seems like peak bandwidth is
/// about 1700 GB/s" (pytorch-labs/gpt-fast README, on an A100 80GB power-limited to 330 W),
/// B/s.
pub const A100_BANDWIDTH_MEASURED: f64 = 1700e9;
/// A100 SXM4 80 GB's HBM2e bandwidth, 2,039 GB/s (NVIDIA A100 datasheet), B/s.
pub const A100_BANDWIDTH_PEAK: f64 = 2039e9;

/// Where the published shares come from.
pub const SOURCE: &str = "published achievable shares, applied to every chip: matmul 794.5 of \
989 TFLOP/s (H100 SXM bf16 torch.matmul, ml-engineering's maximum-achievable-matmul table); \
memory 1700 of 2039 GB/s (A100 80GB, gpt-fast README); network 240 of 300 GB/s (8×A100 \
nccl-tests bus bandwidth)";

/// How an estimate prices a step: the shares of the roofs and how kernels are launched.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ServingEfficiency {
    /// The shares of the roofs.
    pub shares: Efficiency,
    /// The step is captured as one CUDA graph: one launch per step, not one per kernel.
    pub cuda_graphs: bool,
}

impl ServingEfficiency {
    /// The published shares of [`SOURCE`] (η_matmul = 794.5/989 = 0.803, η_memory =
    /// 1700/2039 = 0.834, η_network = 0.8), kernels launched one by one.
    pub fn published() -> Self {
        Self {
            shares: Efficiency {
                matmul: H100_MATMUL_MEASURED / H100_MATMUL_PEAK,
                memory: A100_BANDWIDTH_MEASURED / A100_BANDWIDTH_PEAK,
                network: estimate::efficiency(Algorithm::Ring),
            },
            cuda_graphs: false,
        }
    }

    /// The same with the step captured as a CUDA graph (`on`) or not.
    #[must_use]
    pub fn with_cuda_graphs(mut self, on: bool) -> Self {
        self.cuda_graphs = on;
        self
    }

    /// Checks each share is in [[`crate::train::efficiency::MIN_SHARE`], 1].
    ///
    /// # Errors
    /// The first share out of range.
    pub fn validate(&self) -> Result<(), EfficiencyError> {
        self.shares.validate()
    }

    /// One execution of `row` at these shares, seconds, launch excluded (module docs).
    #[inline]
    pub fn row_time(&self, row: &OpRow) -> Seconds {
        match row.link() {
            Some(l) => self.link_time(l.latency, l.transfer),
            None => self.kernel_time(
                row.compute,
                row.roof,
                row.cost.flops.get(),
                row.cost.bytes().get(),
            ),
        }
    }

    /// A kernel of `flops` FLOP and `bytes` bytes on `roof`, computing on `compute`:
    /// max(FLOPs / (peak · η), bytes / (bandwidth · η_memory)), η = η_matmul on the matrix
    /// units and 1 elsewhere, seconds.
    #[inline]
    pub fn kernel_time(&self, compute: Compute, roof: Roof, flops: f64, bytes: f64) -> Seconds {
        let e = &self.shares;
        let eta_c = match compute {
            Compute::Matrix(_) => e.matmul,
            _ => 1.0,
        };
        let c = flops / (roof.peak.get() * eta_c);
        let m = bytes / (roof.bandwidth.get() * e.memory);
        Seconds(if c > m { c } else { m })
    }

    /// A collective of α–β terms `latency` and `transfer`: t_α + t_β / η_network, seconds.
    #[inline]
    pub fn link_time(&self, latency: Seconds, transfer: Seconds) -> Seconds {
        latency + transfer / self.shares.network
    }

    /// The launch cost of a step of `kernels` kernels on `device`, seconds: one launch
    /// overhead per kernel ([`LaunchModel::PerKernel`]), or once per step when the step is a
    /// CUDA graph or the chip runs it as one compiled program ([`LaunchModel::PerProgram`]).
    #[inline]
    pub fn launch(&self, kernels: u64, device: &Device) -> Seconds {
        let once = self.cuda_graphs || device.launch_model == LaunchModel::PerProgram;
        let launches = if once { kernels.min(1) } else { kernels };
        device.launch_overhead.value * launches as f64
    }

    /// The estimated time of a step on `device` whose rows are `rows`, run one after the
    /// other: Σ count × [`ServingEfficiency::row_time`] + [`ServingEfficiency::launch`],
    /// seconds.
    pub fn step_time(&self, rows: &[OpRow], device: &Device) -> Seconds {
        let mut t = Seconds::ZERO;
        let mut kernels = 0u64;
        for r in rows {
            t += self.row_time(r) * r.count as f64;
            kernels += r.count;
        }
        t + self.launch(kernels, device)
    }
}

impl Default for ServingEfficiency {
    fn default() -> Self {
        Self::published()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_shares_are_the_measured_over_the_peak() {
        let e = ServingEfficiency::published();
        assert!((e.shares.matmul - 0.8033).abs() < 1e-4);
        assert!((e.shares.memory - 0.8337).abs() < 1e-4);
        assert_eq!(e.shares.network, 0.8);
        assert!(e.validate().is_ok());
    }

    #[test]
    fn cuda_graphs_and_compiled_programs_launch_once_per_step() {
        let e = ServingEfficiency::published();
        let mut chip = crate::fixtures::h100_sxm();
        assert_eq!(chip.launch_overhead.value.get(), 5e-6);
        assert_eq!(e.launch(579, &chip).get(), 579.0 * 5e-6);
        assert_eq!(e.with_cuda_graphs(true).launch(579, &chip).get(), 5e-6);
        chip.launch_model = LaunchModel::PerProgram;
        assert_eq!(e.launch(579, &chip).get(), 5e-6);
        assert_eq!(e.launch(0, &chip).get(), 0.0);
    }
}
