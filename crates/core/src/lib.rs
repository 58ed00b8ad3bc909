//! # roofline-core
//!
//! The pure cost model of `roofline`: values in, values out. No I/O, no clock, no printing.
//!
//! - [`units`]: FLOP, bytes, seconds and their ratios as types.
//! - [`precision`], [`device`]: number formats and chips; [`comm`]: the links between chips,
//!   systems of many, and the collectives they run.
//! - [`ops`]: operators and their cost (FLOPs, bytes read and written), each written once over
//!   [`formula::Arith`]: computed in f64, or recorded as the formula a derivation prints.
//! - [`roofline`]: intensity, ridge point, bound, attainable FLOP/s, time.
//! - [`model`], [`workload`], [`decoder`], [`graph`]: a transformer's operator graph for one
//!   forward pass.
//! - [`analysis`]: the graph evaluated on a chip.
//! - [`pricing`]: one pricing of a step (the bound, or an estimate at the chip's
//!   [`pricing::Efficiency`]), launch and host overhead a named addend.
//! - [`train`]: a training step: the backward pass and recomputation as a pass over the
//!   forward graph, the optimizer update, model and hardware FLOPs, and the memory per device
//!   (model states under ZeRO, activations).
//! - [`one_op`]: one operator on one chip (`roofline op`); [`explain`]: worked derivations.
//! - [`serve`]: whole requests (TTFT, TPOT), the batch and context that fit, engine steps
//!   that mix prefill and decode, and serving techniques priced on the same graph.
//! - [`measured`]: a machine's roofline as `roofline measure` found it, and the chip it makes.
//! - [`prediction`]: real kernels timed on a machine beside the time its measured roofline
//!   (DRAM-only and hierarchical) predicts; the error and the fused chain's speedup.
//! - [`profile`]: imported profiles (Nsight Compute, PyTorch profiler) and empirical roofs
//!   (mixbench, ERT): kernels under their roof, and joined to a model's operators.
//! - [`prelude`]: the types and functions a caller of the analysis needs, in one `use`.
//!
//! ```
//! use roofline_core::ops::Gemm;
//! use roofline_core::precision::Precision;
//! use roofline_core::roofline::{Bound, Roof};
//! use roofline_core::units::{BytesPerSec, FlopPerSec};
//!
//! // A 4096³ bf16 GEMM on an H100 SXM (989.5 TFLOP/s dense, 3.35 TB/s).
//! let cost = Gemm::uniform(4096, 4096, 4096, Precision::Bf16).cost();
//! let roof = Roof { peak: FlopPerSec(989.5e12), bandwidth: BytesPerSec(3.35e12) };
//! let p = roof.evaluate(&cost);
//! assert!((p.intensity.get() - 4096.0 / 3.0).abs() < 1e-9);
//! assert_eq!(p.bound, Bound::Compute);
//! ```

pub mod analysis;
pub mod cited;
pub mod comm;
pub mod decoder;
pub mod device;
pub mod explain;
#[cfg(any(test, feature = "test-fixtures"))]
pub mod fixtures;
pub mod formula;
pub mod fusion;
pub mod graph;
pub mod mbu;
pub mod measured;
pub mod memory;
pub mod mfu;
pub mod model;
pub mod one_op;
pub mod ops;
pub mod parallel;
pub mod precision;
pub mod prediction;
pub mod pricing;
pub mod profile;
pub mod roofline;
pub mod serve;
pub mod sweep;
pub mod train;
pub mod units;
pub mod workload;

/// What a caller of the analysis needs, in one `use roofline_core::prelude::*`: the model, chip
/// and workload with their builders and errors, the precisions, [`analyze`](crate::analysis::analyze)
/// and its result, the roofline and the units.
///
/// ```
/// use roofline_core::prelude::*;
///
/// // Llama-2-7B (its config.json) in bf16 on a chip of 154.8 TFLOP/s and 768 GB/s (the RTX
/// // A6000's datasheet), decode at batch 1 with 2048 tokens cached.
/// let model = Transformer::builder(4096, 32, 32, 11008, 32000).build()?;
/// let chip = Device::builder("a6000", "NVIDIA RTX A6000")
///     .peak(Precision::Bf16, FlopPerSec(154.8e12), "datasheet, dense")
///     .peak(Precision::Fp32, FlopPerSec(38.7e12), "datasheet")
///     .main_memory("GDDR6", BytesPerSec(768e9), Some(Bytes(48e9)), "datasheet")
///     .build();
/// let decode = analyze(&model, &Workload::decode(1, 2048), &chip, Reserve::DEFAULT)?;
/// // Decode reads every weight once: 6,738,415,616 parameters · 2 bytes = 13.48 GB.
/// assert_eq!(decode.memory.weights, Bytes(13_476_831_232.0));
/// // q_proj is a 1×4096 by 4096×4096 GEMM: 2·4096² FLOPs, memory-bound.
/// let q = decode.rows.iter().find(|r| r.name == "q_proj").ok_or("no q_proj")?;
/// assert_eq!(q.cost.flops, Flop(2.0 * 4096.0 * 4096.0));
/// assert_eq!(q.point().bound, Bound::Memory);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub mod prelude {
    pub use crate::analysis::{analyze, analyze_into, AnalysisError, OpRow, StageAnalysis, Totals};
    pub use crate::device::{Device, DeviceBuilder, DeviceError, MemoryKind, MemoryLevel};
    pub use crate::memory::{MemoryFootprint, Reserve};
    pub use crate::model::{Mla, ModelError, Moe, Transformer, TransformerBuilder};
    pub use crate::precision::Precision;
    pub use crate::roofline::{Bound, Roof, RooflinePoint};
    pub use crate::units::{Bytes, BytesPerSec, Flop, FlopPerByte, FlopPerSec, Seconds};
    pub use crate::workload::{Precisions, Stage, Workload, WorkloadError};
}
