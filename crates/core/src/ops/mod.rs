//! Operators and their cost: FLOPs and bytes read and written by one kernel.
//!
//! One multiply-add is 2 FLOP. Bytes are counted at the precision each tensor is stored in, once
//! per read or write of main memory (HBM): an unfused kernel reads its inputs from HBM and writes
//! its outputs to HBM. Every formula is written next to its code and collected, with its source,
//! in `docs/cost-model.md`.

mod attention;
mod cost;
mod elementwise;
mod embedding;
mod gemm;
mod kind;
mod moe;
mod norm;

pub use attention::{causal_pairs, windowed_pairs, FlashAttention};
pub use cost::Cost;
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
    /// One projection of every routed expert of a mixture-of-experts MLP (grouped GEMM).
    ExpertGemm(ExpertGemm),
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
            Op::ExpertGemm(o) => o.cost(),
        }
    }

    /// The units the operator runs on, which selects the peak that applies.
    #[inline(always)]
    pub fn compute(&self) -> Compute {
        match self {
            Op::Gemm(o) => Compute::Matrix(o.compute),
            Op::BatchedMatmul(o) => Compute::Matrix(o.compute),
            Op::FlashAttention(o) => Compute::Matrix(o.act),
            Op::ExpertGemm(o) => Compute::Matrix(o.compute),
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
            Op::ExpertGemm(o) => (OpKind::ExpertGemm, o.cost(), Compute::Matrix(o.compute)),
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
            Op::ExpertGemm(_) => OpKind::ExpertGemm,
        }
    }
}
