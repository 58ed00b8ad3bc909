//! Operators and their cost: FLOPs and bytes read and written by one kernel.
//!
//! One multiply-add is 2 FLOP. Bytes are counted at the precision each tensor is stored in, once
//! per read or write of main memory (HBM): an unfused kernel reads its inputs from HBM and writes
//! its outputs to HBM. Every formula is written next to its code and collected, with its source,
//! in `docs/cost-model.md`. Each is written once, generic over [`Arith`] (`cost_terms`): in f64
//! it is [`Op::cost`], recorded it is the formula `--explain` prints ([`crate::formula`]).

mod attention;
mod attention_spec;
mod comm;
mod cost;
mod elementwise;
mod embedding;
mod gemm;
mod kind;
mod moe;
mod norm;

pub use attention::{
    causal_pairs, causal_pairs_of, windowed_pairs, CausalCount, FlashAttention,
    ATTENTION_BACKWARD_FLOPS_PER_SCORE, LSE_BYTES,
};
pub use attention_spec::{AttentionSpec, ShapeError, MAX_DIM};
pub use comm::Communication;
pub use cost::{Cost, CostTerms};
pub use elementwise::{
    Elementwise, Rotary, Softmax, ADD_FLOPS_PER_ELEMENT, GELU_FLOPS_PER_ELEMENT,
    MUL_FLOPS_PER_ELEMENT, RELU_FLOPS_PER_ELEMENT, ROTARY_FLOPS_PER_ELEMENT,
    SCALE_MASK_FLOPS_PER_ELEMENT, SILU_FLOPS_PER_ELEMENT, SOFTMAX_FLOPS_PER_ELEMENT,
};
pub use embedding::{Embedding, KvCacheWrite, TOKEN_ID_BYTES};
pub use gemm::{BatchedMatmul, Gemm};
pub use kind::OpKind;
pub use moe::{expected_experts_touched, ExpertGemm};
pub use norm::{LayerNorm, RmsNorm, LAYERNORM_FLOPS_PER_ELEMENT, RMSNORM_FLOPS_PER_ELEMENT};

use crate::formula::Arith;
use crate::precision::Precision;
use serde::Serialize;

/// Which execution units an operator runs on, and so which peak applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "unit", content = "precision")]
pub enum Compute {
    /// Matrix units (tensor cores, MFMA, MXU) computing in this precision: the chip's dense peak
    /// for it applies.
    Matrix(Precision),
    /// Vector units (CUDA cores) in fp32: elementwise and reduction kernels upcast to fp32 and
    /// never use matrix units, so the fp32 vector peak applies.
    Vector,
    /// A link between chips: a collective ([`Communication`]) runs on it, at its bandwidth.
    Network,
}

impl Compute {
    /// Distinct slots [`Compute::slot`] gives.
    pub(crate) const SLOTS: usize = Precision::ALL.len() + 2;

    /// A dense index of the units: the precisions of matrix work in [`Precision::ALL`] order,
    /// then vector work, then the network. A chip's roofs are a table in this order
    /// ([`crate::analysis::ChipRoofs`]), and a graph node keeps its slot beside its units, so
    /// that finding its roof is one load.
    #[inline(always)]
    pub(crate) fn slot(self) -> usize {
        match self {
            Compute::Matrix(p) => p as usize,
            Compute::Vector => Precision::ALL.len(),
            Compute::Network => Precision::ALL.len() + 1,
        }
    }
}

/// One operator with its shapes and precisions.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// A dense matrix multiply, optionally with a bias.
    Gemm(Gemm),
    /// Many independent matrix multiplies of the same shape (attention's QKᵀ and S·V).
    BatchedMatmul(BatchedMatmul),
    /// An elementwise map over n same-shaped inputs (add, SiLU·mul, …).
    Elementwise(Elementwise),
    /// Row-wise softmax, with the attention scale and mask applied in the same kernel.
    Softmax(Softmax),
    /// Root-mean-square normalisation (Zhang and Sennrich 2019).
    RmsNorm(RmsNorm),
    /// Layer normalisation (Ba et al. 2016).
    LayerNorm(LayerNorm),
    /// Rotary position embedding applied to queries and keys (Su et al. 2021).
    Rotary(Rotary),
    /// Gather of embedding rows for token ids.
    Embedding(Embedding),
    /// Copy of new keys and values into the KV cache.
    KvCacheWrite(KvCacheWrite),
    /// Fused attention, QKᵀ → softmax → ·V in one kernel (Dao et al. 2022).
    FlashAttention(FlashAttention),
    /// The backward kernel of that fused attention (FlashAttention-2, Dao 2023, Algorithm 2):
    /// dQ, dK and dV from Q, K, V, O and dO, the scores recomputed on chip
    /// ([`FlashAttention::backward_cost`]). Not in the JSON Schemas yet: no command emits a
    /// training step.
    #[schemars(skip)]
    FlashAttentionBackward(FlashAttention),
    /// One projection of every routed expert of a mixture-of-experts MLP (grouped GEMM).
    ExpertGemm(ExpertGemm),
    /// A collective between chips, on a link ([`Communication`]).
    Communication(Communication),
}

impl Op {
    /// FLOPs and bytes of one execution of this operator as an unfused kernel.
    // `always`: inlined into the decoder's call sites, where the variant is known, the match
    // folds away (a 2× faster analysis; see the `analysis` benchmark).
    #[inline(always)]
    pub fn cost(&self) -> Cost {
        match self {
            Op::Gemm(o) => o.cost(),
            Op::BatchedMatmul(o) => o.cost(),
            Op::Elementwise(o) => o.cost(),
            Op::Softmax(o) => o.cost(),
            Op::RmsNorm(o) => o.cost(),
            Op::LayerNorm(o) => o.cost(),
            Op::Rotary(o) => o.cost(),
            Op::Embedding(o) => o.cost(),
            Op::KvCacheWrite(o) => o.cost(),
            Op::FlashAttention(o) => o.cost(),
            Op::FlashAttentionBackward(o) => o.backward_cost(),
            Op::ExpertGemm(o) => o.cost(),
            Op::Communication(_) => Cost::default(),
        }
    }

    /// The cost formula of the operator in any [`Arith`]metic: in f64 the same numbers as
    /// [`Op::cost`], recorded on a [`crate::formula::Tape`] the formulas that compute them.
    pub fn cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        match self {
            Op::Gemm(o) => o.cost_terms(cx),
            Op::BatchedMatmul(o) => o.cost_terms(cx),
            Op::Elementwise(o) => o.cost_terms(cx),
            Op::Softmax(o) => o.cost_terms(cx),
            Op::RmsNorm(o) => o.cost_terms(cx),
            Op::LayerNorm(o) => o.cost_terms(cx),
            Op::Rotary(o) => o.cost_terms(cx),
            Op::Embedding(o) => o.cost_terms(cx),
            Op::KvCacheWrite(o) => o.cost_terms(cx),
            Op::FlashAttention(o) => o.cost_terms(cx),
            Op::FlashAttentionBackward(o) => o.backward_cost_terms(cx),
            Op::ExpertGemm(o) => o.cost_terms(cx),
            Op::Communication(_) => CostTerms::zero(cx),
        }
    }

    /// The units the operator runs on, which selects the peak that applies.
    #[inline(always)]
    pub fn compute(&self) -> Compute {
        match self {
            Op::Gemm(o) => Compute::Matrix(o.compute),
            Op::BatchedMatmul(o) => Compute::Matrix(o.compute),
            Op::FlashAttention(o) | Op::FlashAttentionBackward(o) => Compute::Matrix(o.act),
            Op::ExpertGemm(o) => Compute::Matrix(o.compute),
            Op::Communication(_) => Compute::Network,
            _ => Compute::Vector,
        }
    }

    /// [`Op::kind`], [`Op::cost`] and [`Op::compute`] in one match over the operator, taken by
    /// value: its fields move out into registers rather than being read back from a copy on
    /// the stack. It repeats the three matches on purpose: written as
    /// `(self.kind(), self.cost(), self.compute())`, an analysis of both stages of the `analysis`
    /// benchmark runs 6,642 instructions instead of 6,207 (cachegrind) and takes 1.10–1.12 µs
    /// instead of 0.95–0.99 (timed in a loop, side by side); a test holds the four equal for
    /// every type.
    #[inline(always)]
    pub fn into_parts(self) -> (OpKind, Cost, Compute) {
        match self {
            Op::Gemm(o) => (OpKind::Gemm, o.cost(), Compute::Matrix(o.compute)),
            Op::BatchedMatmul(o) => (OpKind::BatchedMatmul, o.cost(), Compute::Matrix(o.compute)),
            Op::Elementwise(o) => (OpKind::Elementwise, o.cost(), Compute::Vector),
            Op::Softmax(o) => (OpKind::Softmax, o.cost(), Compute::Vector),
            Op::RmsNorm(o) => (OpKind::RmsNorm, o.cost(), Compute::Vector),
            Op::LayerNorm(o) => (OpKind::LayerNorm, o.cost(), Compute::Vector),
            Op::Rotary(o) => (OpKind::Rotary, o.cost(), Compute::Vector),
            Op::Embedding(o) => (OpKind::Embedding, o.cost(), Compute::Vector),
            Op::KvCacheWrite(o) => (OpKind::KvCacheWrite, o.cost(), Compute::Vector),
            Op::FlashAttention(o) => (OpKind::FlashAttention, o.cost(), Compute::Matrix(o.act)),
            Op::FlashAttentionBackward(o) => (
                OpKind::FlashAttentionBackward,
                o.backward_cost(),
                Compute::Matrix(o.act),
            ),
            Op::ExpertGemm(o) => (OpKind::ExpertGemm, o.cost(), Compute::Matrix(o.compute)),
            Op::Communication(_) => (OpKind::Communication, Cost::default(), Compute::Network),
        }
    }

    /// The operator type (printed as `gemm`, `softmax`, …).
    #[inline(always)]
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Gemm(_) => OpKind::Gemm,
            Op::BatchedMatmul(_) => OpKind::BatchedMatmul,
            Op::Elementwise(_) => OpKind::Elementwise,
            Op::Softmax(_) => OpKind::Softmax,
            Op::RmsNorm(_) => OpKind::RmsNorm,
            Op::LayerNorm(_) => OpKind::LayerNorm,
            Op::Rotary(_) => OpKind::Rotary,
            Op::Embedding(_) => OpKind::Embedding,
            Op::KvCacheWrite(_) => OpKind::KvCacheWrite,
            Op::FlashAttention(_) => OpKind::FlashAttention,
            Op::FlashAttentionBackward(_) => OpKind::FlashAttentionBackward,
            Op::ExpertGemm(_) => OpKind::ExpertGemm,
            Op::Communication(_) => OpKind::Communication,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formula::{Sym, Tape};

    /// `op`'s f64 cost and its recorded formula's values, bit for bit.
    fn recorded_equals_computed(op: &Op) {
        let tape = Tape::default();
        let t = op.cost_terms::<Sym>(&tape);
        let c = op.cost();
        assert_eq!(t.flops.value().to_bits(), c.flops.get().to_bits(), "{op:?}");
        assert_eq!(t.bytes_read.value().to_bits(), c.bytes_read.get().to_bits());
        assert_eq!(
            t.bytes_written.value().to_bits(),
            c.bytes_written.get().to_bits()
        );
    }

    fn bits(c: Cost) -> [u64; 3] {
        [
            c.flops.get().to_bits(),
            c.bytes_read.get().to_bits(),
            c.bytes_written.get().to_bits(),
        ]
    }

    #[test]
    fn costs_are_the_hand_arithmetic_bit_for_bit() {
        // A GEMM with a bias and int4 weights with an fp16 scale and an int4 zero point per 64:
        // 2·m·n·k + m·n; m·k·2 + k·n·(0.5 + 2.5/64) + n·0.5; m·n·2.
        let mut g = Gemm::uniform(7, 300, 500, Precision::Bf16);
        (g.bias, g.b, g.b_scale) = (true, Precision::Int4, 2.5 / 64.0);
        let (m, n, k) = (7.0, 300.0, 500.0);
        let hand = Cost::new(
            2.0 * m * n * k + 1.0 * m * n,
            m * k * 2.0 + k * n * (0.5 + 2.5 / 64.0) + 1.0 * n * 0.5,
            m * n * 2.0,
        );
        assert_eq!(bits(g.cost()), bits(hand));
        // GQA decode attention, fp8 cache, query blocks of 64, a window of 300 over 1000 keys:
        // pairs 300 (each of the 1 query sees the window), rows read 300.
        let a = FlashAttention {
            batch: 2,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            q_len: 1,
            kv_len: 1000,
            causal: true,
            causal_count: crate::ops::CausalCount::Exact,
            window: Some(300),
            v_head_dim: None,
            kv_shared: false,
            block_q: Some(64),
            act: Precision::Bf16,
            kv: Precision::Fp8,
        };
        let hand = Cost::new(
            2.0 * 32.0 * 300.0 * (2.0 * 128.0 + 2.0 * 128.0 + 5.0 + 2.0),
            2.0 * 1.0 * 32.0 * 128.0 * 2.0 + 2.0 * 8.0 * 300.0 * (128.0 + 128.0) * 1.0,
            2.0 * 1.0 * 32.0 * 128.0 * 2.0,
        );
        assert_eq!(bits(a.cost()), bits(hand));
        // MLA prefill: value heads of 128 beside query/key heads of 192, 6 causal queries:
        // 21 pairs.
        let mla = FlashAttention {
            heads: 128,
            kv_heads: 128,
            head_dim: 192,
            v_head_dim: Some(128),
            q_len: 6,
            kv_len: 6,
            window: None,
            block_q: None,
            kv: Precision::Bf16,
            ..a
        };
        let hand = Cost::new(
            2.0 * 128.0 * 21.0 * (2.0 * 192.0 + 2.0 * 128.0 + 7.0),
            2.0 * 6.0 * 128.0 * 192.0 * 2.0 + 2.0 * 128.0 * 6.0 * (192.0 + 128.0) * 2.0,
            2.0 * 6.0 * 128.0 * 128.0 * 2.0,
        );
        assert_eq!(bits(mla.cost()), bits(hand));
        // Three tokens routed to 2 of 8 experts touch 8·(1 − (3/4)³) = 4.625 of them.
        let e = ExpertGemm {
            tokens: 3,
            top_k: 2,
            experts: 8,
            n: 14336,
            k: 4096,
            a: Precision::Bf16,
            b: Precision::Int4,
            b_scale: 2.0 / 128.0,
            c: Precision::Bf16,
            compute: Precision::Bf16,
        };
        let hand = Cost::new(
            2.0 * 6.0 * 14336.0 * 4096.0,
            6.0 * 4096.0 * 2.0 + 4.625 * 4096.0 * 14336.0 * (0.5 + 2.0 / 128.0),
            6.0 * 14336.0 * 2.0,
        );
        assert_eq!(bits(e.cost()), bits(hand));
        // LayerNorm and rotary: 7·r·n, r·n·p + 2·n·w; 3·T·H·e, (T·H·e + 2·T·e)·p.
        let ln = LayerNorm {
            rows: 5,
            cols: 768,
            precision: Precision::Fp16,
            weight: Precision::Fp32,
        };
        let hand = Cost::new(
            7.0 * 5.0 * 768.0,
            5.0 * 768.0 * 2.0 + 2.0 * 768.0 * 4.0,
            5.0 * 768.0 * 2.0,
        );
        assert_eq!(bits(ln.cost()), bits(hand));
        let r = Rotary {
            tokens: 9,
            heads: 40,
            head_dim: 128,
            precision: Precision::Bf16,
        };
        let hand = Cost::new(
            3.0 * 9.0 * 40.0 * 128.0,
            (9.0 * 40.0 * 128.0 + 2.0 * 9.0 * 128.0) * 2.0,
            9.0 * 40.0 * 128.0 * 2.0,
        );
        assert_eq!(bits(r.cost()), bits(hand));
        for op in [
            Op::Gemm(g),
            Op::FlashAttention(a),
            Op::FlashAttention(mla),
            Op::ExpertGemm(e),
            Op::LayerNorm(ln),
            Op::Rotary(r),
        ] {
            recorded_equals_computed(&op);
        }
    }
}
