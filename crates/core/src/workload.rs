//! What the model is asked to do: stage, batch, lengths, precisions.

use crate::precision::Precision;
use serde::Serialize;
use std::fmt;

/// Inference stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// The prompt: `seq_len` tokens per sequence in one forward pass, filling the KV cache.
    Prefill,
    /// One new token per sequence against a KV cache of `context` tokens.
    Decode,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Prefill => "prefill",
            Stage::Decode => "decode",
        })
    }
}

/// Storage precisions of weights, activations and the KV cache, and the precision GEMMs compute
/// in.
///
/// The peak that applies to a GEMM is that of the precision it computes in: the activation
/// precision, or `gemm_act` for W8A8-style formats whose GEMM inputs are quantized. Weight-only
/// formats (int8/int4/fp8 weights, dequantized in the kernel) change the bytes read, never the
/// peak.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Precisions {
    /// Weights.
    pub weight: Precision,
    /// Activations (and the precision GEMMs compute in, unless `gemm_act` is set).
    pub act: Precision,
    /// KV cache.
    pub kv: Precision,
    /// Extra bytes read per weight for group-wise quantization: (scale bytes + zero-point
    /// bytes) / group size (GPTQ, AWQ: e.g. int4 with an fp16 scale and zero point per 128
    /// weights adds 4/128 = 0.03125 B). 0 for plain formats.
    pub weight_scale_bytes: f64,
    /// The precision GEMM inputs are quantized to and computed in (W8A8: int8, at the int8
    /// peak; Xiao et al. 2023, SmoothQuant), or `None` for the activation precision.
    pub gemm_act: Option<Precision>,
}

impl Precisions {
    /// All three the same.
    pub fn uniform(p: Precision) -> Self {
        Self {
            weight: p,
            act: p,
            kv: p,
            weight_scale_bytes: 0.0,
            gemm_act: None,
        }
    }

    /// Bytes read per weight: the weight precision's bytes plus the group-wise scales.
    pub fn weight_bytes(&self) -> f64 {
        self.weight.bytes() + self.weight_scale_bytes
    }

    /// The precision GEMMs take their inputs in and compute in.
    pub fn gemm(&self) -> Precision {
        self.gemm_act.unwrap_or(self.act)
    }
}

/// Largest batch accepted; beyond it a value is taken for a typo.
pub const MAX_BATCH: u64 = 1 << 24;
/// Longest sequence or context accepted (64 Mi tokens).
pub const MAX_TOKENS: u64 = 1 << 26;

/// One forward pass to analyse.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Workload {
    /// Stage.
    pub stage: Stage,
    /// Sequences processed together.
    pub batch: u64,
    /// Prefill: prompt tokens per sequence.
    pub seq_len: u64,
    /// Decode: tokens already in the KV cache per sequence.
    pub context: u64,
    /// Storage precisions.
    pub precisions: Precisions,
    /// Attention as one fused FlashAttention kernel (else QKᵀ, softmax, S·V).
    pub flash_attention: bool,
}

/// A workload field that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadError {
    /// The flag at fault (`--batch`).
    pub field: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.field, self.message)
    }
}
impl std::error::Error for WorkloadError {}

impl Workload {
    /// Tokens per sequence in this forward pass: seq_len in prefill, 1 in decode.
    #[inline]
    pub fn tokens_per_seq(&self) -> u64 {
        match self.stage {
            Stage::Prefill => self.seq_len,
            Stage::Decode => 1,
        }
    }

    /// Tokens in this forward pass: batch × tokens per sequence.
    #[inline]
    pub fn tokens(&self) -> u64 {
        self.batch * self.tokens_per_seq()
    }

    /// Keys each query can attend to at most: seq_len in prefill; context + 1 in decode (the
    /// cached tokens and the new one, whose key is written to the cache first).
    #[inline]
    pub fn kv_len(&self) -> u64 {
        match self.stage {
            Stage::Prefill => self.seq_len,
            Stage::Decode => self.context + 1,
        }
    }

    /// Checks batch and lengths are positive and not absurd.
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the flag.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.batch == 0 {
            return Err(WorkloadError {
                field: "--batch",
                message: "must be at least 1".into(),
            });
        }
        if self.batch > MAX_BATCH {
            return Err(WorkloadError {
                field: "--batch",
                message: format!(
                    "{} is beyond the largest accepted ({MAX_BATCH})",
                    self.batch
                ),
            });
        }
        match self.stage {
            Stage::Prefill if self.seq_len == 0 => Err(WorkloadError {
                field: "--seq-len",
                message: "prefill needs at least 1 token per sequence".into(),
            }),
            Stage::Prefill if self.seq_len > MAX_TOKENS => Err(WorkloadError {
                field: "--seq-len",
                message: format!(
                    "{} is beyond the longest accepted ({MAX_TOKENS})",
                    self.seq_len
                ),
            }),
            Stage::Decode if self.context >= MAX_TOKENS => Err(WorkloadError {
                field: "--context",
                message: format!(
                    "{} is beyond the longest accepted ({MAX_TOKENS})",
                    self.context
                ),
            }),
            _ => Ok(()),
        }
    }
}
