//! Mixture-of-experts GEMMs: the routed token rows of every expert, as one grouped GEMM.

use super::cost::{Cost, CostTerms};
use crate::formula::Arith;
use crate::precision::Precision;
use crate::units::to_f64;
use serde::Serialize;

/// Expected number of distinct experts `tokens` tokens touch when each is routed to `top_k` of
/// `experts` experts uniformly at random: E·(1 − (1 − k/E)^T). Decode at batch 1 touches k
/// experts; a large prefill touches all E. (Each expert is missed by one token with probability
/// 1 − k/E, by all T independently.)
pub fn expected_experts_touched(tokens: u64, top_k: u64, experts: u64) -> f64 {
    let e = to_f64(experts.max(1));
    let k = (to_f64(top_k)).min(e);
    e * (1.0 - (1.0 - k / e).powf(to_f64(tokens)))
}

/// One projection (gate, up or down) of all routed experts for `tokens` tokens, each routed to
/// `top_k` of `experts` experts, as a grouped GEMM of `[tokens·top_k, k] · [k, n]` with each
/// expert's own weight.
///
/// - FLOPs = 2·tokens·top_k·n·k.
/// - bytes read = tokens·top_k·k·a (each routed copy of a token row) + U·k·n·b, where U is
///   [`expected_experts_touched`]: only the experts some token chose are read;
///   bytes written = tokens·top_k·n·c.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ExpertGemm {
    /// Tokens T routed.
    pub tokens: u64,
    /// Experts per token, k.
    pub top_k: u64,
    /// Experts E.
    pub experts: u64,
    /// Output features of one expert's projection.
    pub n: u64,
    /// Input features (reduction dimension).
    pub k: u64,
    /// Precision of the token rows.
    pub a: Precision,
    /// Precision of the expert weights.
    pub b: Precision,
    /// Extra bytes per weight for group-wise quantization scales (0 for plain formats).
    pub b_scale: f64,
    /// Precision of the output.
    pub c: Precision,
    /// Precision the multiply runs in.
    pub compute: Precision,
}

impl ExpertGemm {
    /// Expected distinct experts read ([`expected_experts_touched`]).
    pub fn experts_touched(&self) -> f64 {
        expected_experts_touched(self.tokens, self.top_k, self.experts)
    }

    /// FLOPs and bytes, as in the type's documentation.
    #[inline]
    pub fn cost(&self) -> Cost {
        self.cost_terms::<f64>(()).into()
    }

    /// The cost formula, in any [`Arith`]metic: `2·T·k·n·K`, `T·k·K·a + U·K·n·(b + s_b)`,
    /// `T·k·n·c` with K the input features and U [`expected_experts_touched`].
    #[inline(always)]
    pub fn cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        let s = |name, v: f64| A::sym(cx, name, v);
        let (t, top) = (s("T", to_f64(self.tokens)), s("k", to_f64(self.top_k)));
        s("E", to_f64(self.experts));
        let (n, k) = (s("n", to_f64(self.n)), s("K", to_f64(self.k)));
        let u = s("U", self.experts_touched());
        let (a, b, c) = (
            s("a", self.a.bytes()),
            s("b", self.b.bytes()),
            s("c", self.c.bytes()),
        );
        let scale = A::optional(cx, "s_b", self.b_scale);
        let rows = t * top;
        CostTerms {
            flops: A::num(cx, 2.0) * rows * n * k,
            bytes_read: rows * k * a + u * k * n * (b + scale),
            bytes_written: rows * n * c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_experts_by_hand() {
        // One token picks exactly k experts.
        assert!((expected_experts_touched(1, 2, 8) - 2.0).abs() < 1e-12);
        // Two tokens, Mixtral (k = 2 of 8): 8·(1 − (6/8)²) = 8·0.4375 = 3.5.
        assert!((expected_experts_touched(2, 2, 8) - 3.5).abs() < 1e-12);
        // Many tokens touch every expert.
        assert!((expected_experts_touched(4096, 8, 128) - 128.0).abs() < 1e-9);
    }

    #[test]
    fn mixtral_decode_batch_one_reads_two_experts() {
        let g = ExpertGemm {
            tokens: 1,
            top_k: 2,
            experts: 8,
            n: 14336,
            k: 4096,
            a: Precision::Bf16,
            b: Precision::Bf16,
            b_scale: 0.0,
            c: Precision::Bf16,
            compute: Precision::Bf16,
        };
        let c = g.cost();
        assert_eq!(c.flops.get(), 2.0 * 2.0 * 14336.0 * 4096.0);
        assert!(
            (c.bytes_read.get() - (2.0 * 4096.0 * 2.0 + 2.0 * 4096.0 * 14336.0 * 2.0)).abs() < 1e-3
        );
        assert_eq!(c.bytes_written.get(), 2.0 * 14336.0 * 2.0);
    }
}
