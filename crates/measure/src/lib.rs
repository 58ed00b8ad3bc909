//! # roofline-measure
//!
//! Real hardware into core values: the roofline of the machine it runs on, measured.
//!
//! - [`measure_cpu`]: peak FLOP/s per precision (fp64 and fp32 FMA, bf16 and int8 dot products
//!   where the CPU has them; one thread and all threads), bandwidth per memory level from a
//!   working-set sweep (16 KiB to 1 GiB in √2 steps; read, copy and triad kernels), the clock,
//!   the fork/join cost, and each figure's theoretical limit. The result is a
//!   [`roofline_core::measured::Measurement`], which `to_device` turns into the chip the cost
//!   model uses.
//! - [`suite`]: the kernel suite of `roofline measure kernels` (GEMMs through `gemm`,
//!   elementwise, RMSNorm, softmax, attention materialised and flash-style, the RMSNorm → Linear
//!   → SiLU → Linear chain as four kernels and fused), each with its cost from
//!   `roofline_core::ops`, timed, for [`roofline_core::prediction`]; the same in CUDA behind
//!   `cuda`.
//! - [`gpu`]: the same for an NVIDIA GPU behind the `cuda` feature (cuBLAS GEMMs, FMA and
//!   bandwidth kernels); without the feature it answers with a typed error.
//!
//! The benchmark kernels ([`bench_kernels`]) state the FLOPs of each instruction; [`method`] how
//! figures are repeated until stable; [`sweep`] how the curve's plateaus become levels;
//! [`limits`] what a figure may not exceed. Only this crate reads the clock; `roofline-core` stays pure.
//!
//! ```
//! use roofline_measure::bench_kernels::{ComputeKernel, Simd};
//! // Every lane of every chain computes acc = acc · 1 + 1 from 0: after 10 iterations, 10.
//! let k = ComputeKernel::Fp64Scalar;
//! assert_eq!(k.run_with(10, 1.0, 1.0), 10.0 * 12.0);
//! assert_eq!(roofline_measure::bench_kernels::read(Simd::detect(), &[1.0, 2.0, 3.0], 2), 12.0);
//! ```

pub mod bench_kernels;
pub mod clock;
pub mod cpu;
pub mod gpu;
pub mod host;
pub mod idle;
pub mod limits;
pub mod method;
mod pool;
pub mod suite;
pub mod sweep;

pub use cpu::{measure_cpu, CpuOptions};

use std::fmt;

/// Whose fault a [`MeasureError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request cannot be met as asked (`--threads 0`, `--gpu` in a build without `cuda`).
    Usage,
    /// The machine cannot do it (no memory for the buffers, no CUDA driver, a CUDA call failed).
    Environment,
}

/// A measurement that could not be made: a message and, where there is one, a fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeasureError {
    /// Whose fault it is.
    pub kind: ErrorKind,
    /// What went wrong (lowercase, values in backticks).
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl MeasureError {
    /// An error of the environment, with a message and an optional hint.
    pub fn new(message: String, hint: Option<String>) -> Self {
        Self {
            kind: ErrorKind::Environment,
            message,
            hint,
        }
    }

    /// A usage error, with a message and an optional hint.
    pub fn usage(message: String, hint: Option<String>) -> Self {
        Self {
            kind: ErrorKind::Usage,
            message,
            hint,
        }
    }
}

impl fmt::Display for MeasureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for MeasureError {}

/// Reports progress of a long measurement (the CLI draws a bar; tests pass [`NoProgress`]).
pub trait Progress {
    /// The measurement has `total` steps.
    fn start(&mut self, total: u64);
    /// One step begins; `label` says which (`read 32.0 KiB`).
    fn step(&mut self, label: &str);
    /// The measurement is over.
    fn finish(&mut self);
}

/// Progress that goes nowhere.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&mut self, _total: u64) {}
    fn step(&mut self, _label: &str) {}
    fn finish(&mut self) {}
}
