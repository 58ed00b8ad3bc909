//! Normalisations over the hidden dimension: RMSNorm and LayerNorm.

use super::cost::{Cost, CostTerms};
use crate::formula::Arith;
use crate::precision::Precision;
use crate::units::to_f64;
use serde::Serialize;

/// RMSNorm `y = x / √(mean(x²) + ε) · w` (Zhang and Sennrich 2019): per element square (1),
/// accumulate (1), multiply by 1/rms (1), multiply by the weight (1) = 4. The per-row mean,
/// ε-add and rsqrt are O(rows) and not counted.
pub const RMSNORM_FLOPS_PER_ELEMENT: f64 = 4.0;
/// LayerNorm `y = (x − μ)/√(σ² + ε) · w + b` (Ba et al. 2016): per element accumulate for μ (1),
/// subtract μ (1), square (1), accumulate for σ² (1), multiply by 1/σ (1), multiply by w (1),
/// add b (1) = 7.
pub const LAYERNORM_FLOPS_PER_ELEMENT: f64 = 7.0;

/// RMSNorm over `rows` vectors of `cols` elements.
///
/// - FLOPs = rows·cols·4 ([`RMSNORM_FLOPS_PER_ELEMENT`]).
/// - bytes read = rows·cols·p + cols·w (the weight); written = rows·cols·p.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RmsNorm {
    /// Rows (tokens).
    pub rows: u64,
    /// Elements per row (hidden size).
    pub cols: u64,
    /// Precision of input and output.
    pub precision: Precision,
    /// Precision of the weight vector.
    pub weight: Precision,
}

impl RmsNorm {
    /// FLOPs and bytes, as in the type's documentation.
    #[inline]
    pub fn cost(&self) -> Cost {
        self.cost_terms::<f64>(()).into()
    }

    /// The cost formula, in any [`Arith`]metic: `4·r·n`, `r·n·p + n·w`, `r·n·p`.
    #[inline(always)]
    pub fn cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        norm_terms(cx, self.rows, self.cols, self.precision, self.weight, false)
    }
}

/// LayerNorm over `rows` vectors of `cols` elements, with weight and bias.
///
/// - FLOPs = rows·cols·7 ([`LAYERNORM_FLOPS_PER_ELEMENT`]).
/// - bytes read = rows·cols·p + 2·cols·w (weight and bias); written = rows·cols·p.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LayerNorm {
    /// Rows (tokens).
    pub rows: u64,
    /// Elements per row (hidden size).
    pub cols: u64,
    /// Precision of input and output.
    pub precision: Precision,
    /// Precision of weight and bias.
    pub weight: Precision,
}

impl LayerNorm {
    /// FLOPs and bytes, as in the type's documentation.
    #[inline]
    pub fn cost(&self) -> Cost {
        self.cost_terms::<f64>(()).into()
    }

    /// The cost formula, in any [`Arith`]metic: `7·r·n`, `r·n·p + 2·n·w`, `r·n·p`.
    #[inline(always)]
    pub fn cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        norm_terms(cx, self.rows, self.cols, self.precision, self.weight, true)
    }
}

/// The cost of a normalisation over `rows × cols`: RMSNorm (one weight vector) or, with
/// `layer`, LayerNorm (weight and bias).
#[inline(always)]
fn norm_terms<A: Arith>(
    cx: A::Cx,
    rows: u64,
    cols: u64,
    precision: Precision,
    weight: Precision,
    layer: bool,
) -> CostTerms<A> {
    let r = A::sym(cx, "r", to_f64(rows));
    let n = A::sym(cx, "n", to_f64(cols));
    let p = A::sym(cx, "p", precision.bytes());
    let w = A::sym(cx, "w", weight.bytes());
    let (phi, vectors) = if layer {
        (LAYERNORM_FLOPS_PER_ELEMENT, A::num(cx, 2.0) * n)
    } else {
        (RMSNORM_FLOPS_PER_ELEMENT, n)
    };
    let e = r * n;
    CostTerms {
        flops: A::num(cx, phi) * r * n,
        bytes_read: e * p + vectors * w,
        bytes_written: e * p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmsnorm_llama_prefill() {
        // 2048 tokens × 4096 in fp16: 4·2048·4096 FLOP; reads 2048·4096·2 + 4096·2.
        let c = RmsNorm {
            rows: 2048,
            cols: 4096,
            precision: Precision::Fp16,
            weight: Precision::Fp16,
        }
        .cost();
        assert_eq!(c.flops.get(), 33_554_432.0);
        assert_eq!(c.bytes_read.get(), 16_777_216.0 + 8192.0);
        assert_eq!(c.bytes_written.get(), 16_777_216.0);
    }

    #[test]
    fn layernorm_reads_weight_and_bias() {
        let c = LayerNorm {
            rows: 1,
            cols: 768,
            precision: Precision::Fp32,
            weight: Precision::Fp32,
        }
        .cost();
        assert_eq!(c.flops.get(), 768.0 * 7.0);
        assert_eq!(c.bytes_read.get(), 768.0 * 4.0 * 3.0);
    }
}
