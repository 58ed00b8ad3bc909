//! Elementwise maps, softmax and rotary embedding: vector-unit kernels, memory-bound on every
//! current accelerator.
//!
//! FLOPs per element are named constants, each with its reason. They count arithmetic
//! operations as written in the reference implementation (Hugging Face `transformers`); a
//! transcendental (exp, rsqrt) counts as 1.

use super::cost::{Cost, CostTerms};
use crate::formula::Arith;
use crate::precision::Precision;
use crate::units::to_f64;
use serde::Serialize;

/// `a + b`: one add.
pub const ADD_FLOPS_PER_ELEMENT: f64 = 1.0;
/// `a * b`: one multiply.
pub const MUL_FLOPS_PER_ELEMENT: f64 = 1.0;
/// SiLU `x·σ(x) = x / (1 + e^-x)`: exp (1), add 1 (1), divide (1) = 3 (the negation folds
/// into the exponent).
pub const SILU_FLOPS_PER_ELEMENT: f64 = 3.0;
/// GELU, tanh form `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`: x³ (2), ·0.044715 (1), + x (1),
/// ·√(2/π) (1), tanh (1), + 1 (1), ·x (1), ·0.5 (1) = 9.
pub const GELU_FLOPS_PER_ELEMENT: f64 = 9.0;
/// ReLU `max(x, 0)`: one comparison.
pub const RELU_FLOPS_PER_ELEMENT: f64 = 1.0;
/// Softmax over a row: max (1 compare), subtract max (1), exp (1), sum (1), divide (1) = 5.
pub const SOFTMAX_FLOPS_PER_ELEMENT: f64 = 5.0;
/// Attention scaling by 1/√d (1 multiply) and adding the mask (1 add), done in the softmax
/// kernel.
pub const SCALE_MASK_FLOPS_PER_ELEMENT: f64 = 2.0;
/// Rotary embedding `x·cos + rotate_half(x)·sin`: 2 multiplies and 1 add per element
/// (rotate_half is a negation and a copy, free).
pub const ROTARY_FLOPS_PER_ELEMENT: f64 = 3.0;

/// An elementwise map over `inputs` same-shaped tensors of `elements` elements each, writing one
/// tensor of the same shape.
///
/// - FLOPs = elements · flops_per_element.
/// - bytes read = inputs · elements · p; bytes written = elements · p.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Elementwise {
    /// Elements per tensor.
    pub elements: u64,
    /// Number of input tensors.
    pub inputs: u32,
    /// FLOPs per output element (one of the named constants, or their sum).
    pub flops_per_element: f64,
    /// Precision of every input and the output.
    pub precision: Precision,
}

impl Elementwise {
    /// FLOPs and bytes, as in the type's documentation.
    #[inline]
    pub fn cost(&self) -> Cost {
        self.cost_terms::<f64>(()).into()
    }

    /// The cost formula, in any [`Arith`]metic: `E·φ`, `i·E·p`, `E·p`.
    #[inline(always)]
    pub fn cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        let e = A::sym(cx, "E", to_f64(self.elements));
        let i = A::sym(cx, "i", f64::from(self.inputs));
        let phi = A::sym(cx, "φ", self.flops_per_element);
        let p = A::sym(cx, "p", self.precision.bytes());
        CostTerms {
            flops: e * phi,
            bytes_read: i * e * p,
            bytes_written: e * p,
        }
    }
}

/// Row-wise softmax over a `rows × cols` matrix (attention: rows = batch·heads·queries,
/// cols = keys), with scale and mask in the same kernel when `scale_mask` is set.
///
/// - FLOPs = rows·cols·(5 + 2 if scale_mask) ([`SOFTMAX_FLOPS_PER_ELEMENT`],
///   [`SCALE_MASK_FLOPS_PER_ELEMENT`]).
/// - bytes read = rows·cols·p (scores); written = rows·cols·p (probabilities).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Softmax {
    /// Rows (independent softmaxes).
    pub rows: u64,
    /// Elements per row.
    pub cols: u64,
    /// Whether the 1/√d scale and the mask are applied in this kernel.
    pub scale_mask: bool,
    /// Precision of input and output.
    pub precision: Precision,
}

impl Softmax {
    /// FLOPs and bytes, as in the type's documentation.
    #[inline]
    pub fn cost(&self) -> Cost {
        self.cost_terms::<f64>(()).into()
    }

    /// The cost formula, in any [`Arith`]metic: `r·n·φ`, `r·n·p`, `r·n·p` with φ = 5 (+ 2).
    #[inline(always)]
    pub fn cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        let r = A::sym(cx, "r", to_f64(self.rows));
        let n = A::sym(cx, "n", to_f64(self.cols));
        let per = SOFTMAX_FLOPS_PER_ELEMENT
            + if self.scale_mask {
                SCALE_MASK_FLOPS_PER_ELEMENT
            } else {
                0.0
            };
        let phi = A::sym(cx, "φ", per);
        let p = A::sym(cx, "p", self.precision.bytes());
        let e = r * n;
        CostTerms {
            flops: e * phi,
            bytes_read: e * p,
            bytes_written: e * p,
        }
    }
}

/// Rotary position embedding (Su et al. 2021, RoFormer) on `heads` heads of `head_dim` for
/// `tokens` tokens (queries and keys together: heads = q heads + kv heads).
///
/// - FLOPs = tokens·heads·head_dim·3 ([`ROTARY_FLOPS_PER_ELEMENT`]).
/// - bytes read = tokens·heads·head_dim·p (q and k) + 2·tokens·head_dim·p (the cos and sin
///   tables, one row per token, as Hugging Face's `apply_rotary_pos_emb` receives them);
///   bytes written = tokens·heads·head_dim·p.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Rotary {
    /// Tokens (batch × tokens per sequence).
    pub tokens: u64,
    /// Heads rotated (query heads + key heads).
    pub heads: u64,
    /// Elements per head.
    pub head_dim: u64,
    /// Precision of q, k and the tables.
    pub precision: Precision,
}

impl Rotary {
    /// FLOPs and bytes, as in the type's documentation.
    #[inline]
    pub fn cost(&self) -> Cost {
        self.cost_terms::<f64>(()).into()
    }

    /// The cost formula, in any [`Arith`]metic: `3·T·H·e`, `(T·H·e + 2·T·e)·p`, `T·H·e·p`.
    #[inline(always)]
    pub fn cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        let t = A::sym(cx, "T", to_f64(self.tokens));
        let h = A::sym(cx, "H", to_f64(self.heads));
        let e = A::sym(cx, "e", to_f64(self.head_dim));
        let p = A::sym(cx, "p", self.precision.bytes());
        let x = t * h * e;
        CostTerms {
            flops: A::num(cx, ROTARY_FLOPS_PER_ELEMENT) * t * h * e,
            bytes_read: (x + A::num(cx, 2.0) * t * e) * p,
            bytes_written: x * p,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residual_add_reads_two_writes_one() {
        // 2048 tokens × 4096 hidden in bf16: reads 2·2048·4096·2, writes 2048·4096·2.
        let c = Elementwise {
            elements: 2048 * 4096,
            inputs: 2,
            flops_per_element: ADD_FLOPS_PER_ELEMENT,
            precision: Precision::Bf16,
        }
        .cost();
        assert_eq!(c.flops.get(), 8_388_608.0);
        assert_eq!(c.bytes_read.get(), 33_554_432.0);
        assert_eq!(c.bytes_written.get(), 16_777_216.0);
    }

    #[test]
    fn softmax_counts_scale_and_mask() {
        let c = Softmax {
            rows: 10,
            cols: 20,
            scale_mask: true,
            precision: Precision::Fp16,
        }
        .cost();
        assert_eq!(c.flops.get(), 200.0 * 7.0);
        assert_eq!(c.bytes().get(), 2.0 * 200.0 * 2.0);
    }

    #[test]
    fn rotary_reads_tables() {
        let c = Rotary {
            tokens: 4,
            heads: 3,
            head_dim: 8,
            precision: Precision::Bf16,
        }
        .cost();
        assert_eq!(c.flops.get(), 4.0 * 3.0 * 8.0 * 3.0);
        assert_eq!(c.bytes_read.get(), (96.0 + 64.0) * 2.0);
        assert_eq!(c.bytes_written.get(), 96.0 * 2.0);
    }
}
