//! Running a suite: what to run ([`SuiteOptions`]), the timed result ([`SuiteRun`]), the CPU
//! run ([`run_cpu`]) and the GPU one ([`run_gpu`]).

use super::buffers::build_cpu;
use super::ceilings::{
    exp_ceiling, gemm_ceiling, gemv_ceiling, launch_ceiling, CEILING_GEMM, CEILING_GEMV,
};
use super::suites::{check_only, cpu_suite, selected};
use super::timing::{kernel_method, time_kernel};
use crate::{MeasureError, Progress};
use roofline_core::device::{Device, DeviceError};
use roofline_core::ops::Compute;
use roofline_core::precision::Precision;
use roofline_core::prediction::{check_suite, Ceilings, SuiteCheck, SuiteKernel};

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteOptions {
    /// Smaller shapes and shorter repetitions.
    pub quick: bool,
    /// Only the entries whose name contains one of these (all when empty).
    pub only: Vec<String>,
    /// CUDA device ordinal (GPU suite only).
    pub device: usize,
}

/// A timed suite.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteRun {
    /// One timing per entry, in suite order.
    pub timings: Vec<SuiteKernel>,
    /// (what was fused, separate entry, fused entry).
    pub pairs: Vec<(String, String, String)>,
    /// Threads (CPU) or SMs (GPU) the kernels ran on.
    pub threads: usize,
    /// The method, one line.
    pub method: String,
    /// Caveats, one line each (GPU: each kernel's check against the CPU reference).
    pub notes: Vec<String>,
    /// The matrix library's ceilings for the hierarchical prediction
    /// ([`roofline_core::prediction::Ceilings`]): its GEMM on [`CEILING_GEMM`]³ and its GEMV on
    /// [`CEILING_GEMV`]. Measured when an entry runs on the matrix units; none otherwise, and
    /// none on the GPU.
    pub ceilings: Ceilings,
}

impl SuiteRun {
    /// Every timing held against `device`'s roofs, with the run's fused pairs and ceilings
    /// ([`roofline_core::prediction::check_suite`]; the suite's vector work is fp32).
    ///
    /// # Errors
    /// The chip lacks the fp32 peak or the main-memory bandwidth a launch needs.
    pub fn check(&self, device: &Device) -> Result<SuiteCheck, DeviceError> {
        let pairs: Vec<(&str, &str, &str)> = self
            .pairs
            .iter()
            .map(|(what, separate, fused)| (what.as_str(), separate.as_str(), fused.as_str()))
            .collect();
        check_suite(
            &self.timings,
            &pairs,
            device,
            Precision::Fp32,
            &self.ceilings,
        )
    }
}

/// Times the CPU suite on the current rayon pool (every logical CPU by default).
///
/// # Errors
/// Not enough memory for an entry's buffers; `only` selecting nothing (a usage error).
pub fn run_cpu(opts: &SuiteOptions, progress: &mut dyn Progress) -> Result<SuiteRun, MeasureError> {
    check_only(&opts.only, false, opts.quick)?;
    let suite = selected(cpu_suite(opts.quick), &opts.only);
    let method = kernel_method(opts.quick);
    let (mut on_matrix, mut with_exps) = (false, false);
    for spec in &suite.specs {
        for l in spec.launches()? {
            on_matrix |= matches!(l.compute, Compute::Matrix(_));
            with_exps |= l.exps > 0.0;
        }
    }
    progress.start(suite.specs.len() as u64 + 2 * u64::from(on_matrix) + u64::from(with_exps) + 1);
    let mut ceilings = Ceilings::NONE;
    progress.step("launch: an empty parallel region");
    ceilings.launch = Some(launch_ceiling(&method)?);
    if on_matrix {
        progress.step(&format!("GEMM ceiling: gemm {CEILING_GEMM}³"));
        ceilings.gemm = Some(gemm_ceiling(&method)?);
        let (n, k) = CEILING_GEMV;
        progress.step(&format!("GEMV ceiling: gemm 1×{n}×{k}"));
        ceilings.gemv = Some(gemv_ceiling(&method)?);
    }
    if with_exps {
        progress.step("e^x ceiling");
        ceilings.exp = Some(exp_ceiling(&method)?);
    }
    let mut timings = Vec::with_capacity(suite.specs.len());
    for spec in &suite.specs {
        progress.step(&spec.name());
        let mut built = build_cpu(spec)?;
        let time = time_kernel(&method, &mut *built.run)?;
        timings.push(SuiteKernel {
            name: spec.name(),
            family: spec.family().to_string(),
            note: spec.note(),
            launches: built.launches,
            time,
            caveat: spec.caveat(),
        });
    }
    progress.finish();
    let threads = rayon::current_num_threads();
    Ok(SuiteRun {
        timings,
        pairs: suite.pairs,
        threads,
        method: format!(
            "{threads} threads (rayon); warm-up and calibration executions, then {}",
            method.describe()
        ),
        notes: Vec::new(),
        ceilings,
    })
}

/// Times the GPU suite (CUDA C kernels compiled by NVRTC, cuBLAS GEMMs) on `opts.device`.
///
/// # Errors
/// Without the `cuda` feature: a usage error naming it. With it: no driver or libraries, a
/// CUDA call that failed, or a kernel whose result disagrees with the CPU reference.
pub fn run_gpu(opts: &SuiteOptions, progress: &mut dyn Progress) -> Result<SuiteRun, MeasureError> {
    #[cfg(feature = "cuda")]
    {
        super::cuda::run(opts, progress)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (opts, progress);
        Err(crate::gpu::without_cuda())
    }
}
