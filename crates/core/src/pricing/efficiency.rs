//! What real kernels reach of a chip's roofs: the one efficiency type every estimate is priced
//! at, held by the chip ([`crate::device::Device::efficiency`]).
//!
//! The **bound** prices every kernel at its roof (`max(FLOPs / peak, bytes / bandwidth)`) and
//! every collective at the α–β bound of its link. The **estimate** divides each term by the
//! share of it that real kernels reach, by kernel class and precision:
//!
//! - a kernel on the matrix units: FLOPs / (peak · η), η = [`Efficiency::matmul`], or
//!   [`Efficiency::matmul_fp8`] for fp8 (its measured share differs), or
//!   [`Efficiency::attention`] for an attention kernel (FlashAttention-class);
//! - vector work (norms, softmax, elementwise): FLOPs / (peak · [`Efficiency::vector`]);
//! - main-memory traffic: bytes / (bandwidth · [`Efficiency::memory`]);
//! - a collective: t_α + t_β / [`Efficiency::network`] ([`crate::comm::estimate`]).
//!
//! [`Efficiency::kernel_time`] is the one place a node's shape meets its share: it receives the
//! whole cost and kind of the node, so that a calibration measured by shape (a table of GEMM
//! times by m, n, k) answers there without any caller changing.

use crate::comm::collective::Algorithm;
use crate::comm::estimate;
use crate::graph::Role;
use crate::ops::Compute;
use crate::precision::Precision;
use crate::roofline::Roof;
use crate::units::Seconds;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Dense bf16 matmul measured on an H100 SXM with PyTorch (cuBLAS): 794.5 TFLOP/s, the best
/// shape of a sweep, mean of 100 iterations (Stas Bekman, ml-engineering,
/// `compute/accelerator/README.md`, "Maximum Achievable Matmul FLOPS comparison table"),
/// FLOP/s.
pub const H100_MATMUL_MEASURED: f64 = 794.5e12;
/// H100 SXM's dense bf16 peak as that table gives it, 989 TFLOP/s, FLOP/s.
pub const H100_MATMUL_PEAK: f64 = 989e12;
/// Dense fp8 matmul measured on an H100 SXM, the same table's fp8 row: 1,402.6 TFLOP/s, FLOP/s.
pub const H100_FP8_MATMUL_MEASURED: f64 = 1402.6e12;
/// H100 SXM's dense fp8 peak as that table gives it, 1,979 TFLOP/s, FLOP/s.
pub const H100_FP8_MATMUL_PEAK: f64 = 1979e12;
/// Main-memory bandwidth an A100 80 GB reaches: "Empirically, seems like peak bandwidth is
/// about 1700 GB/s" (pytorch-labs/gpt-fast README, on an A100 80GB power-limited to 330 W),
/// B/s.
pub const A100_BANDWIDTH_MEASURED: f64 = 1700e9;
/// A100 SXM4 80 GB's HBM2e bandwidth, 2,039 GB/s (NVIDIA A100 datasheet), B/s.
pub const A100_BANDWIDTH_PEAK: f64 = 2039e9;

/// Where the published shares come from.
pub const PUBLISHED_SOURCE: &str = "published achievable shares, applied to every chip without \
its own: matmul 794.5 of 989 TFLOP/s (H100 SXM bf16 torch.matmul, ml-engineering's \
maximum-achievable-matmul table; fp8 1402.6 of 1979 in its fp8 row; attention kernels as \
matmul); memory 1700 of 2039 GB/s (A100 80GB, gpt-fast README); network 240 of 300 GB/s \
(8×A100 nccl-tests bus bandwidth)";

/// The smallest share an estimate takes: 1 % of a roof (below it a step would be priced at a
/// hundred times its bound, no longer an estimate of a working kernel).
pub const MIN_SHARE: f64 = 0.01;

/// The shares of a chip's roofs real kernels reach, by kernel class and precision, each in
/// [[`MIN_SHARE`], 1] ([module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Efficiency {
    /// η of a GEMM on the matrix units (bf16, fp16, tf32, fp32, integer formats): the share of
    /// the dense peak of its precision.
    pub matmul: f64,
    /// η of an fp8 GEMM.
    pub matmul_fp8: f64,
    /// η of an attention kernel's matrix work (Q·Kᵀ, S·V, fused FlashAttention).
    pub attention: f64,
    /// η of vector work's FLOPs (norms, softmax, activations) against the vector peak.
    pub vector: f64,
    /// η_memory: the share of the main-memory bandwidth a memory-bound kernel reaches.
    pub memory: f64,
    /// η_network: the share of a link's bandwidth a collective's transfer reaches.
    pub network: f64,
}

/// Why a set of shares cannot be used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EfficiencyError {
    /// The share's field: `matmul`, `matmul_fp8`, `attention`, `vector`, `memory` or `network`.
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
        matmul_fp8: 1.0,
        attention: 1.0,
        vector: 1.0,
        memory: 1.0,
        network: 1.0,
    };

    /// The published shares of [`PUBLISHED_SOURCE`]: η_matmul = 794.5/989 = 0.803, fp8
    /// 1402.6/1979 = 0.709, attention as matmul, vector 1 (no published share for vector FLOPs:
    /// vector kernels are memory-bound), η_memory = 1700/2039 = 0.834, η_network = the ring's
    /// 240/300 = 0.8 ([`estimate::efficiency`]). Measured on one chip each and applied to every
    /// chip that carries no shares of its own: an estimate, not a property of the chip.
    pub fn published() -> Efficiency {
        let matmul = H100_MATMUL_MEASURED / H100_MATMUL_PEAK;
        Efficiency {
            matmul,
            matmul_fp8: H100_FP8_MATMUL_MEASURED / H100_FP8_MATMUL_PEAK,
            attention: matmul,
            vector: 1.0,
            memory: A100_BANDWIDTH_MEASURED / A100_BANDWIDTH_PEAK,
            network: estimate::efficiency(Algorithm::Ring),
        }
    }

    /// The fields and their values, in declaration order.
    pub fn fields(&self) -> [(&'static str, f64); 6] {
        [
            ("matmul", self.matmul),
            ("matmul_fp8", self.matmul_fp8),
            ("attention", self.attention),
            ("vector", self.vector),
            ("memory", self.memory),
            ("network", self.network),
        ]
    }

    /// Checks that each share is in [[`MIN_SHARE`], 1].
    ///
    /// # Errors
    /// The first share outside [[`MIN_SHARE`], 1], or not finite.
    pub fn validate(&self) -> Result<(), EfficiencyError> {
        for (field, value) in self.fields() {
            if !((MIN_SHARE..=1.0).contains(&value)) {
                return Err(EfficiencyError { field, value });
            }
        }
        Ok(())
    }

    /// The share of the compute roof a node of `role` computing on `compute` reaches.
    #[inline]
    pub fn compute_share(&self, role: Role, compute: Compute) -> f64 {
        match compute {
            Compute::Matrix(_) if role.is_attention_core() => self.attention,
            Compute::Matrix(Precision::Fp8) => self.matmul_fp8,
            Compute::Matrix(_) => self.matmul,
            Compute::Vector => self.vector,
            Compute::Network => 1.0,
        }
    }

    /// One execution of a kernel of `role` computing on `compute`, of `flops` FLOP and `bytes`
    /// bytes, on `roof`: max(FLOPs / (peak · η_compute), bytes / (bandwidth · η_memory)),
    /// seconds.
    #[inline]
    pub fn kernel_time(
        &self,
        role: Role,
        compute: Compute,
        roof: Roof,
        flops: f64,
        bytes: f64,
    ) -> Seconds {
        let c = flops / (roof.peak.get() * self.compute_share(role, compute));
        let m = bytes / (roof.bandwidth.get() * self.memory);
        Seconds(if c > m { c } else { m })
    }

    /// A collective of α–β terms `latency` and `transfer`: t_α + t_β / η_network, seconds.
    #[inline]
    pub fn link_time(&self, latency: Seconds, transfer: Seconds) -> Seconds {
        latency + transfer / self.network
    }
}

impl Default for Efficiency {
    fn default() -> Self {
        Self::published()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_shares_are_the_measured_over_the_peak() {
        let e = Efficiency::published();
        // 794.5 / 989, 1402.6 / 1979, 1700 / 2039 by hand.
        assert!((e.matmul - 0.803_337).abs() < 1e-6);
        assert!((e.matmul_fp8 - 0.708_742).abs() < 1e-6);
        assert!((e.memory - 0.833_742).abs() < 1e-6);
        assert_eq!(e.attention, e.matmul);
        assert_eq!((e.vector, e.network), (1.0, 0.8));
        assert!(e.validate().is_ok() && Efficiency::BOUND.validate().is_ok());
    }

    #[test]
    fn shares_outside_the_unit_interval_are_refused() {
        for bad in [0.0, -0.5, 1.5, f64::NAN, 1e-300, 0.009] {
            let e = Efficiency {
                matmul_fp8: bad,
                ..Efficiency::BOUND
            };
            assert_eq!(e.validate().map_err(|e| e.field), Err("matmul_fp8"));
        }
    }

    #[test]
    fn each_class_takes_its_own_share() {
        use crate::units::{BytesPerSec, FlopPerSec};
        let e = Efficiency {
            matmul: 0.5,
            matmul_fp8: 0.25,
            attention: 0.4,
            vector: 0.8,
            memory: 0.5,
            network: 0.5,
        };
        let roof = Roof {
            peak: FlopPerSec(1e12),
            bandwidth: BytesPerSec(1e9),
        };
        // 1e12 FLOP at 1e12 FLOP/s · η: 1 / η seconds; 1e3 bytes are 2 µs at η_memory 0.5.
        let t = |role, compute| e.kernel_time(role, compute, roof, 1e12, 1e3).get();
        assert_eq!(t(Role::QProj, Compute::Matrix(Precision::Bf16)), 2.0);
        assert_eq!(t(Role::QProj, Compute::Matrix(Precision::Fp8)), 4.0);
        assert_eq!(
            t(Role::FusedAttention, Compute::Matrix(Precision::Bf16)),
            2.5
        );
        assert_eq!(t(Role::AttentionNorm, Compute::Vector), 1.25);
        // Memory-bound: 1e9 bytes at 0.5 · 1e9 B/s = 2 s beats 1e3 FLOP at the peak.
        let m = e.kernel_time(Role::AttentionResidual, Compute::Vector, roof, 1e3, 1e9);
        assert_eq!(m.get(), 2.0);
        assert_eq!(e.link_time(Seconds(1.0), Seconds(2.0)).get(), 5.0);
    }
}
