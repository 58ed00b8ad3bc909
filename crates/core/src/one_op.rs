//! One operator on one chip, outside any model: what `roofline op` analyses.
//!
//! An operator is given by its shapes ([`crate::ops::Op`]); attention is expanded into the
//! kernels it runs as ([`AttentionSpec::kernels`], defined with the operators): one fused
//! FlashAttention kernel, or the three kernels of eager attention (QKᵀ, softmax with scale and
//! mask, S·V), exactly as the decoder graph builds them ([`crate::decoder`]). Each kernel is
//! placed on the roofline with the peak that applies to it ([`crate::analysis::peak_for`]).

use crate::analysis::OpRow;
use crate::device::{Device, DeviceError};
use crate::graph::{OpGraph, Role, Span};
use crate::ops::Op;
use crate::precision::Precision;
use crate::roofline::{Bound, RooflinePoint};
use crate::units::Seconds;
use serde::Serialize;

/// The attention description, its shape error and size bound, defined with the operators
/// ([`crate::ops::AttentionSpec`]) and kept under this path for `roofline op`.
pub use crate::ops::{AttentionSpec, ShapeError, MAX_DIM};

/// Places each named kernel on `device`'s roofline through the analysis's evaluator
/// ([`crate::analysis::evaluate_rows`]): a graph of these kernels, each a lone
/// [`Role::Operator`] run once (in block 0 of a one-block graph), `act` the fallback precision
/// for vector work on chips without an fp32 peak.
///
/// # Errors
/// A [`DeviceError`] when the chip has no peak for the precision a kernel computes in, or no
/// main-memory bandwidth.
pub fn evaluate_ops(
    kernels: &[(&'static str, Op)],
    device: &Device,
    act: Precision,
) -> Result<Vec<OpRow>, DeviceError> {
    let mut graph = OpGraph::new(1);
    for (name, op) in kernels {
        graph.node(
            name,
            Role::Operator,
            Span::all_blocks(1),
            op.clone(),
            &[],
            &[],
        );
    }
    crate::analysis::evaluate_rows(&graph, act, device)
}

/// How far a kernel sits from the ridge point, as a factor ≥ 1 and a side.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RidgeDistance {
    /// ridge / intensity when memory-bound (how many times the intensity must grow to reach the
    /// ridge), intensity / ridge when compute-bound. Infinite for a kernel with no FLOPs.
    pub factor: f64,
    /// The side of the ridge the kernel is on.
    pub bound: Bound,
}

impl RidgeDistance {
    /// The distance of `point` from its ridge.
    pub fn of(point: &RooflinePoint) -> Self {
        let (i, r) = (point.intensity.get(), point.ridge.get());
        let factor = match point.bound {
            Bound::Memory if i > 0.0 => r / i,
            Bound::Memory => f64::INFINITY,
            Bound::Compute if r > 0.0 => i / r,
            Bound::Compute | Bound::Network | Bound::Latency => f64::INFINITY,
        };
        Self {
            factor,
            bound: point.bound,
        }
    }
}

/// The sum of several kernels run back to back (unfused attention): Σ cost, Σ time.
pub fn total_time(rows: &[OpRow]) -> Seconds {
    rows.iter().map(|r| r.point().time * r.count as f64).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::h100_sxm;
    use crate::ops::Gemm;

    #[test]
    fn square_gemm_on_h100_is_compute_bound_by_n_over_3_over_ridge(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // AI = 4096/3 = 1365.33; ridge = 989.5/3.35 = 295.37; distance 4.622×.
        let rows = evaluate_ops(
            &[(
                "gemm",
                Op::Gemm(Gemm::uniform(4096, 4096, 4096, Precision::Bf16)),
            )],
            &h100_sxm(),
            Precision::Bf16,
        )?;
        let d = RidgeDistance::of(&rows[0].point());
        assert_eq!(d.bound, Bound::Compute);
        assert!((d.factor - (4096.0 / 3.0) / (989.5 / 3.35)).abs() < 1e-9);
        Ok(())
    }
}
