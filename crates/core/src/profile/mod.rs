//! Profiles people already have, as values: kernels measured by a profiler (Nsight Compute,
//! the PyTorch profiler), empirical roofs measured by a microbenchmark (mixbench, the Empirical
//! Roofline Toolkit), each kernel placed under its roof, and kernels joined to the operators of
//! a model's graph.
//!
//! Readers live in `roofline-inputs` (`profile::{ncu, torch, mixbench, ert}`); this module is
//! pure: no file, no clock.
//!
//! - [`ProfiledKernel`]: one kernel (or one framework operator on a CPU) with its duration and,
//!   where known, FLOPs by precision and bytes moved, from hardware counters or from our cost
//!   model by shape ([`aten`]).
//! - [`EmpiricalRoof`]: peaks and bandwidths a microbenchmark reached, turned into a [`Device`].
//! - [`place`]: a kernel on a roof: achieved FLOP/s, intensity, % of the roof at its intensity,
//!   time lost, regime (memory, compute, launch) and the advice for it.
//! - [`join`]: profiled kernels matched to a model's operators by shape and name, predicted
//!   time beside measured time.
//!
//! [`Device`]: crate::device::Device

pub mod aten;
pub mod join;
pub mod place;
mod roof;

pub use roof::{
    EmpiricalLevel, EmpiricalPeak, EmpiricalRoof, RoofFormat, RoofSample, ASSUMED_CPU_LAUNCH,
    ASSUMED_GPU_LAUNCH,
};

use crate::ops::{Compute, Cost};
use crate::precision::Precision;
use crate::units::{Bytes, Flop, Seconds};
use serde::Serialize;

/// Which tool wrote a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProfileFormat {
    /// `ncu --csv` (Nsight Compute), the long (one row per metric) or wide (one row per kernel)
    /// layout.
    NcuCsv,
    /// A PyTorch profiler (Kineto) Chrome trace, `prof.export_chrome_trace(...)`.
    TorchTrace,
}

impl ProfileFormat {
    /// The name printed in reports.
    pub fn name(self) -> &'static str {
        match self {
            ProfileFormat::NcuCsv => "Nsight Compute CSV",
            ProfileFormat::TorchTrace => "PyTorch profiler trace",
        }
    }
}

/// Where a kernel's FLOPs and bytes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CostSource {
    /// Hardware counters (Nsight Compute): SASS FLOP instructions and DRAM bytes as counted.
    Counters,
    /// Our cost model, from the operator's name and input shapes ([`aten::shaped_op`]): FLOPs
    /// as written in `docs/cost-model.md`, bytes as the ideal main-memory traffic (each operand
    /// once).
    CostModel,
    /// Not known: a kernel with no counters and no operator we can cost.
    Unknown,
}

/// The shape of one argument of a framework operator, as the PyTorch profiler records it
/// (`Input Dims`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ArgShape {
    /// A tensor's dimensions (`[]` for a 0-d tensor).
    Tensor(Vec<u64>),
    /// A list of tensors (`torch.cat`'s first argument).
    List(Vec<Vec<u64>>),
}

impl ArgShape {
    /// The tensor's dimensions, if this is one tensor.
    pub fn dims(&self) -> Option<&[u64]> {
        match self {
            ArgShape::Tensor(d) => Some(d),
            ArgShape::List(_) => None,
        }
    }
}

/// The framework operator a kernel belongs to: its name, argument shapes and types.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameworkOp {
    /// Operator name (`aten::mm`).
    pub name: String,
    /// Shape of each argument (`Input Dims`); scalars and `None` are `[]`.
    pub shapes: Vec<ArgShape>,
    /// Type of each argument (`Input type`: `float`, `c10::BFloat16`, `Scalar`, …).
    pub types: Vec<String>,
    /// Scalar argument values where the profiler recorded them (`Concrete Inputs`), `""` else.
    pub values: Vec<String>,
    /// The profiler's id of this operator instance (`External id`); kernels of one instance
    /// share it.
    pub instance: Option<u64>,
}

/// One measured kernel: what it is, how long it ran and, where known, what it did.
///
/// On a GPU a kernel is one launch on the device; in a CPU-only PyTorch trace, where there are
/// no kernels, it is the outermost operator we can cost (an `aten::linear` with its `aten::mm`
/// inside counts once).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfiledKernel {
    /// Kernel name (`void cutlass::Kernel<…>`, `triad_kernel(float*, …)`), or the operator's on
    /// a CPU.
    pub name: String,
    /// Position in the file: the ncu `ID`, or the order of the event in the trace.
    pub index: usize,
    /// Measured duration, seconds (ncu `gpu__time_duration.sum`, trace `dur`).
    pub duration: Seconds,
    /// FLOPs by the precision they ran in, precisions with none left out. Empty when unknown.
    pub flops: Vec<(Precision, Flop)>,
    /// Tensor-pipe instructions (ncu `sm__inst_executed_pipe_tensor.sum`): not FLOPs (an
    /// instruction's FLOPs depend on its shape), a sign that SASS FLOP counts miss tensor-core
    /// work.
    pub tensor_instructions: Option<f64>,
    /// Bytes read from main memory (DRAM/HBM), where known.
    pub bytes_read: Option<Bytes>,
    /// Bytes written to main memory, where known.
    pub bytes_written: Option<Bytes>,
    /// Bytes through L2 (ncu `lts__t_bytes.sum`), where measured.
    pub l2_bytes: Option<Bytes>,
    /// Which units it ran on, so which peak applies: matrix units in a precision, or vector.
    pub compute: Option<Compute>,
    /// Where FLOPs and bytes come from.
    pub cost_source: CostSource,
    /// The framework operator that launched it (trace), if known.
    pub op: Option<FrameworkOp>,
    /// What our cost model took it for (`gemm m=64 n=256 k=256`), when costed by shape.
    pub shaped_as: Option<String>,
}

impl ProfiledKernel {
    /// All FLOPs, any precision.
    pub fn total_flops(&self) -> Flop {
        self.flops.iter().map(|(_, f)| *f).sum()
    }

    /// The precision with the most FLOPs (ties: the first listed), if any FLOPs.
    pub fn dominant_precision(&self) -> Option<Precision> {
        self.flops
            .iter()
            .filter(|(_, f)| f.get() > 0.0)
            .fold(None::<(Precision, Flop)>, |best, &(p, f)| match best {
                Some((_, bf)) if bf >= f => best,
                _ => Some((p, f)),
            })
            .map(|(p, _)| p)
    }

    /// Main-memory bytes, read plus written, when both are known (one known, the other taken
    /// as 0).
    pub fn bytes(&self) -> Option<Bytes> {
        match (self.bytes_read, self.bytes_written) {
            (None, None) => None,
            (r, w) => Some(r.unwrap_or(Bytes::ZERO) + w.unwrap_or(Bytes::ZERO)),
        }
    }

    /// FLOPs and bytes as a [`Cost`], when both FLOPs and bytes are known (a kernel with bytes
    /// but no FLOP counters has 0 FLOPs).
    pub fn cost(&self) -> Option<Cost> {
        self.bytes()?;
        Some(Cost {
            flops: self.total_flops(),
            bytes_read: self.bytes_read.unwrap_or(Bytes::ZERO),
            bytes_written: self.bytes_written.unwrap_or(Bytes::ZERO),
        })
    }
}

/// Time spent in trace operators that have no cost (views, transposes, Python-side work),
/// summed by operator name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UncostedOps {
    /// Operator name.
    pub name: String,
    /// Occurrences.
    pub count: u64,
    /// Their time together, seconds.
    pub time: Seconds,
}

/// A profile as imported: its kernels in file order, and what the file said about itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    /// The tool that wrote it.
    pub format: ProfileFormat,
    /// The file it came from, as named in messages.
    pub origin: String,
    /// Kernels, in file (time) order.
    pub kernels: Vec<ProfiledKernel>,
    /// Forward passes (profiler steps) the profile covers: `ProfilerStep#N` annotations in a
    /// trace, else 1.
    pub steps: u64,
    /// Top-level operators of a CPU trace with no cost, by name (empty for ncu).
    pub uncosted: Vec<UncostedOps>,
    /// Sum of the durations of the trace's top-level operators (CPU) or of all kernels,
    /// seconds: the time the profile accounts for.
    pub total_time: Seconds,
    /// What a reader must know (tensor-core FLOPs not counted, kernels not linked, …).
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(flops: Vec<(Precision, Flop)>, r: Option<f64>, w: Option<f64>) -> ProfiledKernel {
        ProfiledKernel {
            name: "k".into(),
            index: 0,
            duration: Seconds(1e-6),
            flops,
            tensor_instructions: None,
            bytes_read: r.map(Bytes),
            bytes_written: w.map(Bytes),
            l2_bytes: None,
            compute: None,
            cost_source: CostSource::Counters,
            op: None,
            shaped_as: None,
        }
    }

    #[test]
    fn totals_and_dominant_precision() -> Result<(), Box<dyn std::error::Error>> {
        let a = k(
            vec![(Precision::Fp64, Flop(10.0)), (Precision::Fp32, Flop(30.0))],
            Some(4.0),
            None,
        );
        assert_eq!(a.total_flops(), Flop(40.0));
        assert_eq!(a.dominant_precision(), Some(Precision::Fp32));
        assert_eq!(a.bytes(), Some(Bytes(4.0)));
        assert_eq!(
            a.cost().ok_or("expected a value, got None")?,
            Cost::new(40.0, 4.0, 0.0)
        );
        let none = k(vec![], None, None);
        assert_eq!(none.dominant_precision(), None);
        assert_eq!(none.cost(), None);
        Ok(())
    }
}
