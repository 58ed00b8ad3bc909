//! The operator types, as a one-byte tag ([`OpKind`]) rather than a string: rows of an analysis
//! carry it, and a smaller row is a faster analysis (the `analysis` benchmark).

use serde::Serialize;
use std::fmt;

/// The type of an operator: which variant of [`crate::ops::Op`] it is. Printed, compared (with
/// `==` against a `&str` either way round) and serialised as its short name (`gemm`, `softmax`,
/// …; [`OpKind::as_str`]); ordered as declared, which is [`crate::ops::Op`]'s order.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// A dense matrix multiply ([`crate::ops::Gemm`]).
    Gemm,
    /// Many same-shaped matrix multiplies ([`crate::ops::BatchedMatmul`]).
    BatchedMatmul,
    /// An elementwise map ([`crate::ops::Elementwise`]).
    Elementwise,
    /// Row-wise softmax ([`crate::ops::Softmax`]).
    Softmax,
    /// RMSNorm ([`crate::ops::RmsNorm`]).
    #[serde(rename = "rmsnorm")]
    RmsNorm,
    /// LayerNorm ([`crate::ops::LayerNorm`]).
    #[serde(rename = "layernorm")]
    LayerNorm,
    /// Rotary position embedding ([`crate::ops::Rotary`]).
    Rotary,
    /// Embedding gather ([`crate::ops::Embedding`]).
    Embedding,
    /// KV-cache write ([`crate::ops::KvCacheWrite`]).
    KvCacheWrite,
    /// Fused attention ([`crate::ops::FlashAttention`]).
    FlashAttention,
    /// The backward kernel of fused attention ([`crate::ops::FlashAttention::backward_cost`]).
    /// Not in the JSON Schemas yet: no command emits a training step.
    #[schemars(skip)]
    FlashAttentionBackward,
    /// Grouped GEMM of routed experts ([`crate::ops::ExpertGemm`]).
    ExpertGemm,
    /// A collective between chips ([`crate::ops::Communication`]).
    Communication,
}

impl OpKind {
    /// Every operator type, in declaration order.
    pub const ALL: [OpKind; 13] = [
        OpKind::Gemm,
        OpKind::BatchedMatmul,
        OpKind::Elementwise,
        OpKind::Softmax,
        OpKind::RmsNorm,
        OpKind::LayerNorm,
        OpKind::Rotary,
        OpKind::Embedding,
        OpKind::KvCacheWrite,
        OpKind::FlashAttention,
        OpKind::FlashAttentionBackward,
        OpKind::ExpertGemm,
        OpKind::Communication,
    ];

    /// The short name (`gemm`, `batched_matmul`, `rmsnorm`, …), as the JSON and tables show it.
    pub const fn as_str(self) -> &'static str {
        match self {
            OpKind::Gemm => "gemm",
            OpKind::BatchedMatmul => "batched_matmul",
            OpKind::Elementwise => "elementwise",
            OpKind::Softmax => "softmax",
            OpKind::RmsNorm => "rmsnorm",
            OpKind::LayerNorm => "layernorm",
            OpKind::Rotary => "rotary",
            OpKind::Embedding => "embedding",
            OpKind::KvCacheWrite => "kv_cache_write",
            OpKind::FlashAttention => "flash_attention",
            OpKind::FlashAttentionBackward => "flash_attention_backward",
            OpKind::ExpertGemm => "expert_gemm",
            OpKind::Communication => "communication",
        }
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl PartialEq<str> for OpKind {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for OpKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<OpKind> for str {
    fn eq(&self, other: &OpKind) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<OpKind> for &str {
    fn eq(&self, other: &OpKind) -> bool {
        *self == other.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serialised_names_and_distinct() -> Result<(), serde_json::Error> {
        let mut seen = std::collections::BTreeSet::new();
        for k in OpKind::ALL {
            // The serde name and the printed name are one string.
            assert_eq!(serde_json::to_string(&k)?, format!("\"{}\"", k.as_str()));
            assert_eq!(k.to_string(), k.as_str());
            assert!(k == k.as_str() && k.as_str() == k && *k.as_str() == k);
            assert!(seen.insert(k.as_str()));
        }
        assert_eq!(std::mem::size_of::<OpKind>(), 1);
        Ok(())
    }
}
