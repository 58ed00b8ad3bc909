//! The kernel suite of `roofline measure kernels`: real kernels, timed, each with the FLOPs and
//! bytes the analysis's cost model gives it, so the time the measured roofline predicts for it
//! can be held against the time it took ([`roofline_core::prediction`]).
//!
//! The suite ([`Spec`], [`cpu_suite`]): GEMMs through the `gemm` crate (1×4096×4096, Llama-2-7B's
//! decode and prefill projections, a square GEMM), elementwise add (from DRAM and from L3) and
//! SiLU·multiply, RMSNorm, softmax, causal attention with a materialised score matrix and as a
//! tiled flash-style kernel, and the seed's RMSNorm → Linear → SiLU → Linear as four kernels and
//! as one fused tiled kernel. Every cost comes from [`roofline_core::ops`] (the chain's from
//! [`roofline_core::fusion::chain_graph`], [`roofline_core::fusion::plan`] and
//! [`roofline_core::fusion::plan_chain`]), never re-derived here. fp32 throughout.
//!
//! Timing ([`time_kernel`]): one warm-up execution (first touch of the outputs), one to
//! calibrate, then repetitions of enough back-to-back executions to last the method's target
//! time, until the method's stop rule ([`Method::done`](crate::method::Method::done)); the time
//! is the median over the window. Buffers are allocated and filled when an entry's turn comes
//! and freed after it.
//!
//! The GPU suite (the `cuda` feature) is the same list in CUDA: [`run_gpu`].

mod buffers;
mod ceilings;
pub mod cpu;
#[cfg(feature = "cuda")]
mod cuda;
pub mod matmul;
mod run;
mod spec;
mod suites;
#[cfg(test)]
mod tests;
mod timing;
pub mod vector;

pub use buffers::{build_cpu, filled, zeros, Built};
pub use ceilings::{
    exp_ceiling, gemm_ceiling, gemv_ceiling, CEILING_EXP_ROW, CEILING_GEMM, CEILING_GEMV,
};
pub use run::{run_cpu, run_gpu, SuiteOptions, SuiteRun};
pub use spec::{chain_spec, mib, Spec};
pub use suites::{check_only, cpu_suite, gpu_suite, Suite};
pub use timing::{kernel_method, time_kernel};

use roofline_core::precision::Precision;

/// The precision of every kernel of the suite.
pub const PRECISION: Precision = Precision::Fp32;
/// Queries and keys per block of the CPU flash kernel (64 × 64 fp32 score tile: 16 KiB, in L1).
pub const FLASH_BLOCK: usize = 64;
/// Tokens per block of the CPU fused chain (a 64 × f fp32 intermediate: 172 KiB at f = 688, in
/// L2).
pub const CHAIN_BLOCK: usize = 64;
