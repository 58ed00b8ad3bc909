//! # roofline-core
//!
//! The pure cost model of `roofline`: values in, values out. No I/O, no clock, no printing.
//!
//! - [`units`]: FLOP, bytes, seconds and their ratios as types.
//! - [`precision`], [`device`]: number formats and chips.
//! - [`ops`]: operators and their cost (FLOPs, bytes read and written).
//! - [`roofline`]: intensity, ridge point, bound, attainable FLOP/s, time.
//! - [`model`], [`workload`], [`decoder`], [`graph`]: a transformer's operator graph for one
//!   forward pass.
//! - [`analysis`]: the graph evaluated on a chip.
//! - [`single`]: one operator on one chip (`roofline op`); [`explain`]: worked derivations.
//! - [`measured`]: a machine's roofline as `roofline measure` found it, and the chip it makes.
//! - [`prediction`]: real kernels timed on a machine beside the time its measured roofline
//!   (DRAM-only and hierarchical) predicts; the error and the fused chain's speedup.
//! - [`profile`]: imported profiles (Nsight Compute, PyTorch profiler) and empirical roofs
//!   (mixbench, ERT): kernels under their roof, and joined to a model's operators.
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
pub mod decoder;
pub mod device;
pub mod explain;
pub mod fusion;
pub mod graph;
pub mod mbu;
pub mod measured;
pub mod memory;
pub mod mfu;
pub mod model;
pub mod ops;
pub mod precision;
pub mod prediction;
pub mod profile;
pub mod roofline;
pub mod single;
pub mod sweep;
pub mod units;
pub mod workload;

#[cfg(test)]
mod decoder_tests;
