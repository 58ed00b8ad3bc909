//! The achievable shares of a chip's roofs that turn the roofline bound of a training step into
//! an estimate.
//!
//! The bound prices every kernel at its roof (`max(FLOPs / peak, bytes / bandwidth)`) and
//! every collective at the α–β bound of its link: no real step is faster. The estimate divides
//! each term by the share of it that real kernels reach, and is labelled as an estimate
//! wherever it is printed, beside the bound:
//!
//! - matrix kernels: FLOPs / (peak · η_matmul);
//! - main-memory traffic: bytes / (bandwidth · η_memory);
//! - collectives: t_α + t_β / η_network ([`crate::comm::estimate`]).

use crate::comm::collective::Algorithm;
use crate::comm::estimate;
use serde::Serialize;
use std::fmt;

/// Dense fp16 matrix-multiply throughput measured on an A100 SXM4 with PyTorch
/// (`torch.matmul` of large square fp16 matrices): 230 TFLOP/s (Mu Li,
/// github.com/mli/transformers-benchmarks, `micro_bench`, its table of results), FLOP/s.
pub const A100_MATMUL_MEASURED: f64 = 230e12;
/// A100's dense fp16/bf16 tensor-core peak, 312 TFLOP/s (NVIDIA A100 datasheet), FLOP/s.
pub const A100_MATMUL_PEAK: f64 = 312e12;

/// Where the default shares come from.
pub const SOURCE: &str = "shares measured on A100s, applied to every chip: matmul: 230 of 312 TFLOP/s, large fp16 torch.matmul on an A100 SXM4 \
(github.com/mli/transformers-benchmarks micro_bench); network: nccl-tests bus bandwidth over \
the link (8×A100 240 of 300 GB/s); memory: none applied (kernels at the bandwidth roof)";

/// The smallest share an estimate takes: 1 % of a roof (below it a step would be priced at a
/// hundred times its bound, no longer an estimate of a working kernel).
pub const MIN_SHARE: f64 = 0.01;

/// The shares of the roofs an estimate assumes, each in [[`MIN_SHARE`], 1].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Efficiency {
    /// η_matmul: the share of the matrix units' peak a GEMM or attention kernel reaches.
    pub matmul: f64,
    /// η_memory: the share of the main-memory bandwidth a memory-bound kernel reaches.
    pub memory: f64,
    /// η_network: the share of a link's bandwidth a collective's transfer reaches.
    pub network: f64,
}

/// Why a set of shares cannot be used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EfficiencyError {
    /// `matmul`, `memory` or `network`.
    pub field: &'static str,
    /// The value given.
    pub value: f64,
}

impl fmt::Display for EfficiencyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "efficiency {} = {} is not a share in [{}, 1]",
            self.field, self.value, MIN_SHARE
        )
    }
}

impl std::error::Error for EfficiencyError {}

impl Efficiency {
    /// Every roof reached: the roofline bound.
    pub const BOUND: Efficiency = Efficiency {
        matmul: 1.0,
        memory: 1.0,
        network: 1.0,
    };

    /// The published shares of [`SOURCE`]: η_matmul = 230/312 = 0.737, η_memory = 1 (no
    /// published figure at hand: memory-bound kernels stay at their roof), η_network = the
    /// ring's 240/300 = 0.8 ([`estimate::efficiency`]). Measured on A100s and applied to every
    /// chip: an estimate, not a property of the chip.
    pub fn published() -> Efficiency {
        Efficiency {
            matmul: A100_MATMUL_MEASURED / A100_MATMUL_PEAK,
            memory: 1.0,
            network: estimate::efficiency(Algorithm::Ring),
        }
    }

    /// Whether every share is the roof's (the bound).
    pub fn is_bound(&self) -> bool {
        *self == Self::BOUND
    }

    /// Checks that each share is in [[`MIN_SHARE`], 1].
    ///
    /// # Errors
    /// The first share outside [[`MIN_SHARE`], 1], or not finite.
    pub fn validate(&self) -> Result<(), EfficiencyError> {
        for (field, value) in [
            ("matmul", self.matmul),
            ("memory", self.memory),
            ("network", self.network),
        ] {
            if !((MIN_SHARE..=1.0).contains(&value)) {
                return Err(EfficiencyError { field, value });
            }
        }
        Ok(())
    }
}

impl Default for Efficiency {
    fn default() -> Self {
        Self::BOUND
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_shares_are_the_measured_over_the_peak() {
        let e = Efficiency::published();
        assert!((e.matmul - 230.0 / 312.0).abs() < 1e-12);
        assert!((e.network - 0.8).abs() < 1e-12);
        assert_eq!(e.memory, 1.0);
        assert!(e.validate().is_ok() && !e.is_bound() && Efficiency::BOUND.is_bound());
    }

    #[test]
    fn shares_outside_the_unit_interval_are_refused() {
        for bad in [0.0, -0.5, 1.5, f64::NAN, 1e-300, 0.009] {
            let e = Efficiency {
                memory: bad,
                ..Efficiency::BOUND
            };
            assert_eq!(e.validate().map_err(|e| e.field), Err("memory"));
        }
    }
}
