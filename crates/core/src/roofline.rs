//! The roofline model (Williams, Waterman and Patterson, "Roofline: an insightful visual
//! performance model for multicore architectures", CACM 52(4), 2009).
//!
//! For a kernel doing F FLOP and moving B bytes on a chip with peak P FLOP/s and bandwidth W B/s:
//!
//! - arithmetic intensity I = F / B (FLOP/byte);
//! - ridge point R = P / W (FLOP/byte);
//! - bound: compute-bound when I ≥ R, memory-bound otherwise;
//! - attainable performance = min(P, I·W) (FLOP/s);
//! - time = max(F / P, B / W) (seconds), the larger of compute time and memory time.

use crate::ops::Cost;
use crate::units::{BytesPerSec, FlopPerByte, FlopPerSec, Seconds};
use serde::Serialize;
use std::fmt;

/// Which roof limits a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// Arithmetic intensity below the ridge point: limited by bandwidth.
    Memory,
    /// Arithmetic intensity at or above the ridge point: limited by peak FLOP/s.
    Compute,
    /// A collective whose bytes on the link take longer than its fixed latency: limited by the
    /// link's bandwidth.
    Network,
    /// A collective whose fixed per-step latency (α) exceeds its transfer time: limited by
    /// latency, not bandwidth.
    Latency,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bound::Memory => "memory",
            Bound::Compute => "compute",
            Bound::Network => "network",
            Bound::Latency => "latency",
        })
    }
}

/// A kernel placed on a roofline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RooflinePoint {
    /// Arithmetic intensity, FLOP/byte.
    pub intensity: FlopPerByte,
    /// Ridge point of the roof used, FLOP/byte.
    pub ridge: FlopPerByte,
    /// Which roof limits the kernel.
    pub bound: Bound,
    /// min(peak, intensity × bandwidth), FLOP/s.
    pub attainable: FlopPerSec,
    /// FLOPs / peak, seconds.
    pub compute_time: Seconds,
    /// bytes / bandwidth, seconds.
    pub memory_time: Seconds,
    /// max(compute time, memory time), seconds.
    pub time: Seconds,
}

/// The larger of a kernel's compute and memory times: `a.max(b)` for times that are numbers
/// (peaks and bandwidths are positive, FLOPs and bytes finite), in one comparison where
/// `f64::max` also tests both for NaN; a NaN memory time is kept rather than dropped.
#[inline(always)]
fn slower(compute: Seconds, memory: Seconds) -> Seconds {
    if compute > memory {
        compute
    } else {
        memory
    }
}

/// The two roofs a kernel is held against: one compute peak and one bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Roof {
    /// Peak FLOP/s for the precision the kernel computes in.
    pub peak: FlopPerSec,
    /// Bandwidth of the memory level the bytes cross, B/s.
    pub bandwidth: BytesPerSec,
}

impl Roof {
    /// Ridge point: peak / bandwidth.
    #[inline]
    pub fn ridge(&self) -> FlopPerByte {
        self.peak / self.bandwidth
    }

    /// Attainable FLOP/s at intensity `i`: min(peak, i × bandwidth).
    #[inline]
    pub fn attainable(&self, i: FlopPerByte) -> FlopPerSec {
        self.peak.min(i * self.bandwidth)
    }

    /// Time of a kernel of cost `cost` on this roof: max(FLOPs / peak, bytes / bandwidth),
    /// seconds. Equal, bit for bit, to the `time` of [`Roof::evaluate`].
    #[inline]
    pub fn time(&self, cost: &Cost) -> Seconds {
        slower(cost.flops / self.peak, cost.bytes() / self.bandwidth)
    }

    /// Places a kernel on this roof. A kernel with no bytes is compute-bound; one with no FLOPs
    /// is memory-bound with zero attainable FLOP/s.
    #[inline]
    pub fn evaluate(&self, cost: &Cost) -> RooflinePoint {
        let intensity = cost.intensity();
        let ridge = self.ridge();
        let compute_time = cost.flops / self.peak;
        let memory_time = cost.bytes() / self.bandwidth;
        let bound = if cost.bytes().get() == 0.0 || intensity >= ridge {
            Bound::Compute
        } else {
            Bound::Memory
        };
        let attainable = if cost.bytes().get() == 0.0 {
            self.peak
        } else {
            self.attainable(intensity)
        };
        RooflinePoint {
            intensity,
            ridge,
            bound,
            attainable,
            compute_time,
            memory_time,
            time: slower(compute_time, memory_time),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const H100: Roof = Roof {
        peak: FlopPerSec(989.5e12),
        bandwidth: BytesPerSec(3.35e12),
    };

    #[test]
    fn square_gemm_is_compute_bound_on_h100() {
        // 4096³ bf16 GEMM: 2·4096³ FLOP, 3·4096²·2 bytes, AI 1365.3 > ridge 295.4.
        let c = Cost::new(2.0 * 4096f64.powi(3), 3.0 * 4096f64.powi(2) * 2.0, 0.0);
        let p = H100.evaluate(&c);
        assert_eq!(p.bound, Bound::Compute);
        assert_eq!(p.attainable.get(), 989.5e12);
        assert!((p.time.get() - 2.0 * 4096f64.powi(3) / 989.5e12).abs() < 1e-15);
    }

    #[test]
    fn gemv_is_memory_bound_on_h100() {
        let bytes = 2.0 * (4096.0 + 4096f64.powi(2) + 4096.0);
        let c = Cost::new(2.0 * 4096f64.powi(2), bytes, 0.0);
        let p = H100.evaluate(&c);
        assert_eq!(p.bound, Bound::Memory);
        assert!((p.time.get() - bytes / 3.35e12).abs() < 1e-18);
        assert!((p.attainable.get() - p.intensity.get() * 3.35e12).abs() < 1.0);
    }

    #[test]
    fn data_movement_only_is_memory_bound() {
        let p = H100.evaluate(&Cost::new(0.0, 100.0, 100.0));
        assert_eq!(p.bound, Bound::Memory);
        assert_eq!(p.attainable.get(), 0.0);
    }

    proptest! {
        #[test]
        fn attainable_never_exceeds_either_roof(f in 1.0f64..1e15, b in 1.0f64..1e12) {
            let p = H100.evaluate(&Cost::new(f, b, 0.0));
            prop_assert!(p.attainable.get() <= 989.5e12 * (1.0 + 1e-12));
            prop_assert!(p.attainable.get() <= p.intensity.get() * 3.35e12 * (1.0 + 1e-12));
            prop_assert!(p.time.get() >= p.compute_time.get() && p.time.get() >= p.memory_time.get());
            // time × attainable = FLOPs
            prop_assert!((p.time.get() * p.attainable.get() - f).abs() <= f * 1e-9);
            // The time alone, as the analysis sums it, is the point's time bit for bit.
            prop_assert_eq!(H100.time(&Cost::new(f, b, 0.0)), p.time);
        }
    }
}
