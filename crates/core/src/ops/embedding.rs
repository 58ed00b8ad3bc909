//! Data movement without arithmetic: embedding lookup and KV-cache write.

use super::cost::{Cost, CostTerms};
use crate::formula::Arith;
use crate::precision::Precision;
use crate::units::to_f64;
use serde::Serialize;

/// Bytes per token id: PyTorch passes `input_ids` as int64.
pub const TOKEN_ID_BYTES: f64 = 8.0;

/// Gather of `tokens` rows of `hidden` elements from the embedding table.
///
/// - FLOPs = 0.
/// - bytes read = tokens·8 (int64 ids) + tokens·hidden·w (only the rows used);
///   written = tokens·hidden·a.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Embedding {
    /// Tokens looked up.
    pub tokens: u64,
    /// Row width (hidden size).
    pub hidden: u64,
    /// Precision of the table.
    pub weight: Precision,
    /// Precision of the output activations.
    pub act: Precision,
}

impl Embedding {
    /// FLOPs and bytes, as in the type's documentation.
    #[inline]
    pub fn cost(&self) -> Cost {
        self.cost_terms::<f64>(()).into()
    }

    /// The cost formula, in any [`Arith`]metic: `0`, `T·8 + T·d·w`, `T·d·a`.
    #[inline(always)]
    pub fn cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        let t = A::sym(cx, "T", to_f64(self.tokens));
        let d = A::sym(cx, "d", to_f64(self.hidden));
        let w = A::sym(cx, "w", self.weight.bytes());
        let a = A::sym(cx, "a", self.act.bytes());
        let e = t * d;
        CostTerms {
            flops: A::num(cx, 0.0),
            bytes_read: t * A::num(cx, TOKEN_ID_BYTES) + e * w,
            bytes_written: e * a,
        }
    }
}

/// Writing the keys and values of `tokens` new tokens into the KV cache: `kv_heads` heads of
/// `head_dim` each for K and for V.
///
/// - FLOPs = 0 (a conversion to a narrower cache format is not counted).
/// - bytes read = 2·tokens·kv_heads·head_dim·a; written = 2·tokens·kv_heads·head_dim·kv.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct KvCacheWrite {
    /// New tokens (batch × tokens per sequence).
    pub tokens: u64,
    /// Key/value heads (`num_key_value_heads`).
    pub kv_heads: u64,
    /// Elements per head.
    pub head_dim: u64,
    /// Precision of the new keys and values.
    pub act: Precision,
    /// Precision of the cache.
    pub kv: Precision,
}

impl KvCacheWrite {
    /// FLOPs and bytes, as in the type's documentation.
    #[inline]
    pub fn cost(&self) -> Cost {
        self.cost_terms::<f64>(()).into()
    }

    /// The cost formula, in any [`Arith`]metic: `0`, `2·T·g·e·a`, `2·T·g·e·c`.
    #[inline(always)]
    pub fn cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        let t = A::sym(cx, "T", to_f64(self.tokens));
        let g = A::sym(cx, "g", to_f64(self.kv_heads));
        let d = A::sym(cx, "e", to_f64(self.head_dim));
        let a = A::sym(cx, "a", self.act.bytes());
        let c = A::sym(cx, "c", self.kv.bytes());
        let e = A::num(cx, 2.0) * t * g * d;
        CostTerms {
            flops: A::num(cx, 0.0),
            bytes_read: e * a,
            bytes_written: e * c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_write_uses_kv_heads() {
        // Llama-3-8B decode, batch 1: 2·1·8·128 elements, read bf16, written fp8.
        let c = KvCacheWrite {
            tokens: 1,
            kv_heads: 8,
            head_dim: 128,
            act: Precision::Bf16,
            kv: Precision::Fp8,
        }
        .cost();
        assert_eq!(c.bytes_read.get(), 2048.0 * 2.0);
        assert_eq!(c.bytes_written.get(), 2048.0);
        assert_eq!(c.flops.get(), 0.0);
    }

    #[test]
    fn embedding_reads_only_used_rows() {
        let c = Embedding {
            tokens: 3,
            hidden: 4096,
            weight: Precision::Bf16,
            act: Precision::Bf16,
        }
        .cost();
        assert_eq!(c.bytes_read.get(), 24.0 + 3.0 * 4096.0 * 2.0);
    }
}
