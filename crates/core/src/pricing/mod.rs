//! One pricing of a step: every command turns a graph's rows into a step time here.
//!
//! [`price`] takes the rows of a graph (each node's cost on its roof, or a collective's α–β
//! terms), prices each node by a [`Pricing`], schedules the nodes on a compute and a
//! communication stream ([`crate::parallel::schedule`]: the critical path, a collective beside
//! independent compute hidden behind it) and adds the launches:
//!
//! - **[`Pricing::Bound`]**: each kernel at its roof, each collective at its α–β bound; no
//!   real step is faster than [`StepTime::on_device`].
//! - **[`Pricing::Estimate`]**: the same composition with each kernel and collective at the
//!   share of its roof an [`Efficiency`] says real kernels reach.
//!
//! Launch and host overhead is never inside the bound: it is the named addend
//! [`StepTime::launch_and_host`], the chip's launch overhead once per kernel
//! ([`crate::device::LaunchModel::PerKernel`]), or once per step when the step is captured as
//! a CUDA graph ([`Launches::cuda_graphs`]: "the graph itself can then be launched repeatedly
//! with very little overhead", NVIDIA CUDA Programming Guide, CUDA Graphs) or the chip runs it
//! as one compiled program ([`crate::device::LaunchModel::PerProgram`]).
//! [`StepTime::total`] is the step with it.

mod efficiency;

pub use efficiency::{
    Efficiency, EfficiencyError, A100_BANDWIDTH_MEASURED, A100_BANDWIDTH_PEAK,
    H100_FP8_MATMUL_MEASURED, H100_FP8_MATMUL_PEAK, H100_MATMUL_MEASURED, H100_MATMUL_PEAK,
    MIN_SHARE, PUBLISHED_SOURCE,
};

use crate::analysis::OpRow;
use crate::device::Device;
use crate::graph::OpGraph;
use crate::parallel::schedule::schedule_with;
use crate::units::Seconds;
use serde::Serialize;

/// How each node of a step is priced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pricing<'a> {
    /// The roofline bound: every kernel at its roof, every collective at its α–β bound.
    Bound,
    /// An estimate: every kernel and collective at the shares of an [`Efficiency`].
    Estimate(&'a Efficiency),
}

impl Pricing<'_> {
    /// One execution of `row`, seconds, launch excluded.
    #[inline]
    pub fn row_time(&self, row: &OpRow) -> Seconds {
        match self {
            Pricing::Bound => row.point().time,
            Pricing::Estimate(e) => match row.link() {
                Some(l) => e.link_time(l.latency, l.transfer),
                None => e.kernel_time(
                    row.role,
                    row.compute,
                    row.roof,
                    row.cost.flops.get(),
                    row.cost.bytes().get(),
                ),
            },
        }
    }

    /// Whether this is the bound: no launch cost is added to it.
    pub fn is_bound(&self) -> bool {
        matches!(self, Pricing::Bound)
    }

    /// The shares it prices at: every roof reached ([`Efficiency::BOUND`]) for the bound.
    pub fn efficiency(&self) -> &Efficiency {
        match self {
            Pricing::Bound => &Efficiency::BOUND,
            Pricing::Estimate(e) => e,
        }
    }
}

/// How a step's kernels are launched from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Launches {
    /// The step is captured as one CUDA graph: one launch per step, not one per kernel.
    pub cuda_graphs: bool,
}

impl Launches {
    /// Each kernel launched by the host (eager PyTorch, most engines without graph capture).
    pub const PER_KERNEL: Launches = Launches { cuda_graphs: false };

    /// Host launches a step of `kernels` kernels costs on `device`: one per kernel, or one per
    /// step under CUDA graphs or a compiled program (0 for an empty step).
    #[inline]
    pub fn launches(&self, kernels: u64, device: &Device) -> u64 {
        if self.cuda_graphs {
            kernels.min(1)
        } else {
            device.launch_model.launches(kernels)
        }
    }

    /// The launch and host overhead of a step of `kernels` kernels on `device`, seconds.
    #[inline]
    pub fn overhead(&self, kernels: u64, device: &Device) -> Seconds {
        device.launch_overhead.value * self.launches(kernels, device) as f64
    }
}

/// What an estimate is priced at: the shares of the roofs and how kernels are launched.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The shares of the roofs ([`crate::device::Device::efficiency`] by default).
    pub efficiency: Efficiency,
    /// How kernels are launched.
    pub launches: Launches,
}

impl Estimate {
    /// The estimate on `device`: its own [`Efficiency`], each kernel launched by the host.
    pub fn on(device: &Device) -> Estimate {
        Estimate {
            efficiency: device.efficiency(),
            launches: Launches::PER_KERNEL,
        }
    }

    /// The published shares ([`Efficiency::published`]), each kernel launched by the host.
    pub fn published() -> Estimate {
        Estimate {
            efficiency: Efficiency::published(),
            launches: Launches::PER_KERNEL,
        }
    }

    /// The same with the step captured as a CUDA graph (`on`) or not.
    #[must_use]
    pub fn with_cuda_graphs(mut self, on: bool) -> Estimate {
        self.launches.cuda_graphs = on;
        self
    }

    /// The pricing of its kernels.
    pub fn pricing(&self) -> Pricing<'_> {
        Pricing::Estimate(&self.efficiency)
    }

    /// The estimated step of `graph` (rows `rows`) on `device`, launches included.
    pub fn step(&self, graph: &OpGraph, rows: &[OpRow], device: &Device) -> StepTime {
        price(graph, rows, device, self.pricing(), self.launches)
    }
}

/// A step, priced ([module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct StepTime {
    /// Σ time of the compute kernels, seconds.
    pub compute: Seconds,
    /// Σ time of the collectives, seconds.
    pub communication: Seconds,
    /// The communication not hidden behind compute on the critical path, seconds.
    pub exposed_communication: Seconds,
    /// Kernels the step runs.
    pub kernels: u64,
    /// Host launches: kernels, or one per step ([`Launches`]).
    pub launches: u64,
    /// Launch and host overhead, seconds: launches × the chip's launch overhead.
    pub launch_and_host: Seconds,
    /// compute + exposed communication + launch and host, seconds.
    pub total: Seconds,
}

impl StepTime {
    /// The step on the device without launch and host overhead: compute + exposed
    /// communication, seconds. Under [`Pricing::Bound`] this is the roofline bound.
    #[inline]
    pub fn on_device(&self) -> Seconds {
        self.compute + self.exposed_communication
    }
}

/// Prices the step whose graph is `graph` and whose rows (in node order) are `rows` on
/// `device`: every node by `pricing`, the nodes on the two streams' critical path, plus the
/// launches ([module docs](self)).
pub fn price(
    graph: &OpGraph,
    rows: &[OpRow],
    device: &Device,
    pricing: Pricing<'_>,
    launches: Launches,
) -> StepTime {
    let s = schedule_with(graph, |i| {
        rows.get(i)
            .map_or(0.0, |r| pricing.row_time(r).get() * r.count as f64)
    });
    let kernels: u64 = rows.iter().map(|r| r.count).sum();
    compose(s, kernels, device, launches)
}

/// The step of schedule `s` with `kernels` kernels launched as `launches` on `device`.
pub fn compose(
    s: crate::parallel::Schedule,
    kernels: u64,
    device: &Device,
    launches: Launches,
) -> StepTime {
    let launch_and_host = launches.overhead(kernels, device);
    StepTime {
        compute: s.compute,
        communication: s.communication,
        exposed_communication: s.exposed,
        kernels,
        launches: launches.launches(kernels, device),
        launch_and_host,
        total: s.step + launch_and_host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use crate::memory::Reserve;
    use crate::workload::Workload;

    #[test]
    fn the_bound_of_one_device_is_the_serial_sum_and_launches_are_an_addend(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let chip = crate::fixtures::h100_sxm();
        let model = crate::fixtures::llama2_7b();
        let s = analyze(&model, &Workload::decode(1, 2048), &chip, Reserve::DEFAULT)?;
        let t = price(
            &s.graph,
            &s.rows,
            &chip,
            Pricing::Bound,
            Launches::PER_KERNEL,
        );
        // One device, no collective: the critical path is every kernel one after the other.
        let serial: f64 = s
            .rows
            .iter()
            .map(|r| r.point().time.get() * r.count as f64)
            .sum();
        assert!((t.on_device().get() - serial).abs() <= 1e-12 * serial);
        assert_eq!(t.exposed_communication, Seconds::ZERO);
        // 5 µs per kernel, each kernel launched once.
        assert_eq!(t.launches, t.kernels);
        assert!((t.launch_and_host.get() - 5e-6 * t.kernels as f64).abs() < 1e-15);
        assert_eq!(t.total, t.on_device() + t.launch_and_host);
        let g = price(
            &s.graph,
            &s.rows,
            &chip,
            Pricing::Bound,
            Launches { cuda_graphs: true },
        );
        assert_eq!((g.launches, g.launch_and_host.get()), (1, 5e-6));
        Ok(())
    }

    #[test]
    fn the_estimate_divides_each_term_by_its_share() -> Result<(), Box<dyn std::error::Error>> {
        let chip = crate::fixtures::h100_sxm();
        let model = crate::fixtures::llama2_7b();
        // Decode at batch 1: every kernel memory-bound, so the estimate is the bound over
        // η_memory exactly.
        let s = analyze(&model, &Workload::decode(1, 2048), &chip, Reserve::DEFAULT)?;
        let e = Efficiency {
            memory: 0.5,
            ..Efficiency::BOUND
        };
        let b = price(
            &s.graph,
            &s.rows,
            &chip,
            Pricing::Bound,
            Launches::PER_KERNEL,
        );
        let x = price(
            &s.graph,
            &s.rows,
            &chip,
            Pricing::Estimate(&e),
            Launches::PER_KERNEL,
        );
        assert!((x.on_device().get() - 2.0 * b.on_device().get()).abs() < 1e-12);
        assert_eq!(x.launch_and_host, b.launch_and_host);
        Ok(())
    }
}
