//! The GPU measurement, behind the `cuda` feature: peak per precision from cuBLAS GEMMs (fp64,
//! fp32, tf32, bf16, fp16; fp8 through cuBLASLt where the chip has it) and from FMA kernels;
//! HBM and L2 bandwidth from a working-set sweep of a read kernel; SM count, shared memory per
//! SM, L2 size and clocks read from the driver.
//!
//! CUDA is loaded at run time (cudarc's `dynamic-loading`), so the feature builds and lints on
//! a machine without CUDA, and a machine without a driver gets an [`ErrorKind::Environment`]
//! error, never a panic. Without the feature, [`measure_gpu`] answers with an
//! [`ErrorKind::Usage`] error that says how to build it.
//!
//! [`ErrorKind::Environment`]: crate::ErrorKind::Environment
//! [`ErrorKind::Usage`]: crate::ErrorKind::Usage

#[cfg(feature = "cuda")]
pub(crate) mod cuda;

use crate::{MeasureError, Progress};
use roofline_core::measured::Measurement;

/// What to measure on the GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuOptions {
    /// CUDA device ordinal.
    pub device: usize,
    /// `--quick`: smaller GEMMs and sweep, fewer repetitions.
    pub quick: bool,
    /// The date to write into every source: the caller's clock.
    pub date: String,
}

/// Whether this build can measure a GPU (the `cuda` feature).
pub const AVAILABLE: bool = cfg!(feature = "cuda");

/// The usage error of a GPU request in a build without the `cuda` feature: what it is and how
/// to build with it.
#[cfg(not(feature = "cuda"))]
pub(crate) fn without_cuda() -> MeasureError {
    MeasureError::usage(
        "this `roofline` was built without GPU support (the `cuda` feature)".into(),
        Some(
            "build it with `cargo build --release --features cuda` (CUDA is loaded at run time; no toolkit is needed to build)"
                .into(),
        ),
    )
}

/// Measures GPU `opts.device`.
///
/// # Errors
/// Without the `cuda` feature: [`crate::ErrorKind::Usage`], naming the feature. With it:
/// [`crate::ErrorKind::Environment`] when the CUDA driver, cuBLAS or NVRTC cannot be loaded,
/// the device does not exist, or a CUDA call fails (the call and its error are named).
pub fn measure_gpu(
    opts: &GpuOptions,
    progress: &mut dyn Progress,
) -> Result<Measurement, MeasureError> {
    #[cfg(feature = "cuda")]
    {
        cuda::measure(opts, progress)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (opts, progress);
        Err(without_cuda())
    }
}

#[cfg(all(test, not(feature = "cuda")))]
mod tests {
    use super::*;

    #[test]
    fn without_the_feature_the_error_names_it() -> Result<(), Box<dyn std::error::Error>> {
        let e = measure_gpu(
            &GpuOptions {
                device: 0,
                quick: true,
                date: "d".into(),
            },
            &mut crate::NoProgress,
        )
        .unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Usage);
        assert!(e.message.contains("`cuda`"), "{}", e.message);
        assert!(e
            .hint
            .ok_or("expected a value, got None")?
            .contains("--features cuda"));
        Ok(())
    }
}
