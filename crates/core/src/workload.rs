//! What the model is asked to do: stage, batch, lengths, precisions.

use crate::precision::Precision;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Inference stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
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

/// The positions of each sequence the language-model head (`lm_head`) computes logits for.
///
/// Only prefill differs: a decode step has one position per sequence either way.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Logits {
    /// The last position only: all generation needs to sample the next token (Hugging Face
    /// `generate` prefills with `logits_to_keep=1`; vLLM computes logits for the sampled
    /// positions only). lm_head is one row per sequence: m = B.
    #[default]
    Last,
    /// Every position: training (the loss is taken at every next token) and scoring a whole
    /// sequence (perplexity, log-likelihood). lm_head is one row per token: m = B·s.
    All,
}

impl Logits {
    /// Short id as the CLI spells it (`last`, `all`).
    pub fn id(self) -> &'static str {
        match self {
            Logits::Last => "last",
            Logits::All => "all",
        }
    }
}

impl fmt::Display for Logits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// Storage precisions of weights, activations and the KV cache, and the precision GEMMs compute
/// in.
///
/// The peak that applies to a GEMM is that of the precision it computes in: the activation
/// precision, or `gemm_act` for W8A8-style formats whose GEMM inputs are quantized. Weight-only
/// formats (int8/int4/fp8 weights, dequantized in the kernel) change the bytes read, never the
/// peak.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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
    ///
    /// ```
    /// use roofline_core::precision::Precision;
    /// use roofline_core::workload::Precisions;
    /// let p = Precisions::uniform(Precision::Bf16);
    /// assert_eq!((p.weight, p.act, p.kv, p.gemm()), (Precision::Bf16, Precision::Bf16, Precision::Bf16, Precision::Bf16));
    /// assert_eq!(p.weight_bytes(), 2.0);
    /// ```
    pub fn uniform(p: Precision) -> Self {
        Self::new(p, p, p)
    }

    /// Weights in `weight`, activations in `act` (GEMMs compute in it), the KV cache in `kv`;
    /// no group-wise scales.
    ///
    /// ```
    /// use roofline_core::precision::Precision;
    /// use roofline_core::workload::Precisions;
    /// // AWQ-style int4 weights with an fp16 scale and zero point per 128 weights:
    /// // 0.5 B + (2 + 2) / 128 B = 0.53125 B read per weight; GEMMs stay in fp16.
    /// let p = Precisions::new(Precision::Int4, Precision::Fp16, Precision::Fp16)
    ///     .with_weight_scale_bytes(4.0 / 128.0);
    /// assert_eq!(p.weight_bytes(), 0.53125);
    /// assert_eq!(p.gemm(), Precision::Fp16);
    /// ```
    pub fn new(weight: Precision, act: Precision, kv: Precision) -> Self {
        Self {
            weight,
            act,
            kv,
            weight_scale_bytes: 0.0,
            gemm_act: None,
        }
    }

    /// Extra bytes read per weight for group-wise quantization: (scale + zero-point bytes) /
    /// group size.
    pub fn with_weight_scale_bytes(mut self, bytes: f64) -> Self {
        self.weight_scale_bytes = bytes;
        self
    }

    /// GEMM inputs quantized to and computed in `p` (W8A8: int8), or `None` for the activation
    /// precision.
    ///
    /// ```
    /// use roofline_core::precision::Precision;
    /// use roofline_core::workload::Precisions;
    /// // SmoothQuant W8A8: int8 weights, bf16 activations between GEMMs, int8 GEMMs.
    /// let p = Precisions::new(Precision::Int8, Precision::Bf16, Precision::Bf16)
    ///     .with_gemm(Some(Precision::Int8));
    /// assert_eq!(p.gemm(), Precision::Int8);
    /// ```
    pub fn with_gemm(mut self, p: Option<Precision>) -> Self {
        self.gemm_act = p;
        self
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
/// Longest sequence accepted, and most keys a query may attend (64 Mi tokens: over 6× the
/// longest context published, Llama 4 Scout's 10 M); a decode's context is therefore at most
/// `MAX_TOKENS - 1`, its new token being the last key.
pub const MAX_TOKENS: u64 = 1 << 26;
/// Most tokens one pass may hold: batch × seq_len in prefill, batch × context (the tokens in
/// the KV cache) in decode. 2^30 = 1,073,741,824 tokens, 64× the largest published batch of one
/// optimizer step (Llama 3 405B: 16 M tokens; Dubey et al. 2024, §3.4.1), and the bound under
/// which every activation tensor of a validated model ([`crate::model::MAX_ROW`]) is counted
/// exactly; past it figures run into exabytes for any model.
pub const MAX_PASS_TOKENS: u64 = 1 << 30;

/// One forward pass to analyse.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Workload {
    /// Stage.
    pub stage: Stage,
    /// Sequences processed together.
    pub batch: u64,
    /// Prefill: prompt tokens per sequence.
    pub seq_len: u64,
    /// Decode: tokens already in the KV cache per sequence.
    pub context: u64,
    /// Prefill: tokens of each sequence already in the KV cache before this pass's
    /// `seq_len` (a cached prefix, or the earlier chunks of a chunked prefill); the pass's
    /// queries attend `cached + seq_len` keys, the cached ones read from the cache. 0 for a
    /// whole prompt. Decode ignores it (its cache is `context`).
    #[serde(default)]
    pub cached: u64,
    /// Storage precisions.
    pub precisions: Precisions,
    /// Attention as one fused FlashAttention kernel (else QKᵀ, softmax, S·V).
    pub flash_attention: bool,
    /// The positions lm_head computes logits for (prefill; decode has one either way).
    pub logits: Logits,
}

/// A workload field that cannot be used.
///
/// [`WorkloadError::quantity`] names the [`Workload`] field (`batch`, `seq_len`, `context`); a
/// front end maps it to its own spelling (the CLI: `--batch`, `--seq-len`, `--context`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkloadError {
    /// The [`Workload`] field at fault: `batch`, `seq_len` or `context` (the `roofline` CLI
    /// flag that sets it is the same with dashes: `--seq-len`).
    pub quantity: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl WorkloadError {
    /// An error on the [`Workload`] field `quantity` (`batch`, `seq_len`, `context`) saying
    /// `message`.
    pub fn new(quantity: &'static str, message: impl Into<String>) -> Self {
        Self {
            quantity,
            message: message.into(),
        }
    }
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.quantity, self.message)
    }
}
impl std::error::Error for WorkloadError {}

impl Workload {
    /// One forward pass of `stage` over `batch` sequences: `seq_len` prompt tokens each
    /// (prefill), or one new token against `context` cached tokens each (decode; `seq_len` is
    /// then not used). bf16 weights, activations and KV cache, unfused attention, logits on the
    /// last position; set them with [`Workload::with_precisions`], [`Workload::flash_attention`]
    /// and [`Workload::with_logits`].
    pub fn new(stage: Stage, batch: u64, seq_len: u64, context: u64) -> Self {
        Self {
            stage,
            batch,
            seq_len,
            context,
            cached: 0,
            precisions: Precisions::uniform(Precision::Bf16),
            flash_attention: false,
            logits: Logits::Last,
        }
    }

    /// Prefill of `batch` prompts of `seq_len` tokens each (bf16, unfused attention).
    ///
    /// ```
    /// use roofline_core::workload::{Stage, Workload};
    /// let w = Workload::prefill(4, 2048);
    /// assert_eq!((w.stage, w.tokens(), w.kv_len()), (Stage::Prefill, 4 * 2048, 2048));
    /// ```
    pub fn prefill(batch: u64, seq_len: u64) -> Self {
        Self::new(Stage::Prefill, batch, seq_len, 0)
    }

    /// Decode of one new token for each of `batch` sequences with `context` tokens already in
    /// the KV cache (bf16, unfused attention): the new token attends `context` + 1 keys.
    ///
    /// ```
    /// use roofline_core::precision::Precision;
    /// use roofline_core::workload::{Precisions, Workload};
    /// let w = Workload::decode(8, 4096)
    ///     .with_precisions(Precisions::uniform(Precision::Fp16))
    ///     .flash_attention(true);
    /// assert_eq!((w.tokens(), w.kv_len()), (8, 4097));
    /// assert!(w.flash_attention);
    /// assert!(w.validate().is_ok());
    /// ```
    pub fn decode(batch: u64, context: u64) -> Self {
        Self::new(Stage::Decode, batch, 0, context)
    }

    /// The same pass with storage and compute precisions `precisions`.
    #[must_use]
    pub fn with_precisions(mut self, precisions: Precisions) -> Self {
        self.precisions = precisions;
        self
    }

    /// The same pass with attention as one fused FlashAttention kernel (`true`) or as QKᵀ,
    /// softmax and S·V (`false`).
    #[must_use]
    pub fn flash_attention(mut self, on: bool) -> Self {
        self.flash_attention = on;
        self
    }

    /// The same pass with lm_head computing logits for `logits` positions.
    ///
    /// ```
    /// use roofline_core::workload::{Logits, Workload};
    /// let w = Workload::prefill(4, 2048);
    /// assert_eq!(w.logit_rows(), 4);
    /// assert_eq!(w.with_logits(Logits::All).logit_rows(), 4 * 2048);
    /// // Decode has one position per sequence either way.
    /// assert_eq!(Workload::decode(4, 2048).with_logits(Logits::All).logit_rows(), 4);
    /// ```
    #[must_use]
    pub fn with_logits(mut self, logits: Logits) -> Self {
        self.logits = logits;
        self
    }

    /// Rows lm_head computes logits for: batch ([`Logits::Last`]) or every token of the pass
    /// ([`Logits::All`]).
    #[inline]
    pub fn logit_rows(&self) -> u64 {
        match self.logits {
            Logits::Last => self.batch,
            Logits::All => self.tokens(),
        }
    }

    /// The same prefill after `cached` tokens of each sequence already in the KV cache: a
    /// cached prefix (prefix caching) or the earlier chunks of a chunked prefill.
    ///
    /// ```
    /// use roofline_core::workload::Workload;
    /// // The second 512-token chunk of a prompt: 512 queries attend 1024 keys.
    /// let w = Workload::prefill(1, 512).with_cached(512);
    /// assert_eq!((w.tokens(), w.kv_len()), (512, 1024));
    /// ```
    #[must_use]
    pub fn with_cached(mut self, cached: u64) -> Self {
        self.cached = cached;
        self
    }

    /// The same pass over `batch` sequences.
    #[must_use]
    pub fn with_batch(mut self, batch: u64) -> Self {
        self.batch = batch;
        self
    }

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

    /// Keys each query can attend to at most: cached + seq_len in prefill; context + 1 in
    /// decode (the cached tokens and the new one, whose key is written to the cache first).
    #[inline]
    pub fn kv_len(&self) -> u64 {
        match self.stage {
            Stage::Prefill => self.cached + self.seq_len,
            Stage::Decode => self.context + 1,
        }
    }

    /// Checks batch and lengths are positive and not absurd: batch at most [`MAX_BATCH`], a
    /// prompt at most [`MAX_TOKENS`] tokens, a context below it, and the tokens of the pass at
    /// most [`MAX_PASS_TOKENS`].
    ///
    /// # Errors
    /// A [`WorkloadError`] naming the field (`batch`, `seq_len`, `context`; the length, not the
    /// batch, when their product is too large).
    ///
    /// ```
    /// use roofline_core::workload::Workload;
    /// let e = Workload::decode(0, 2048).validate().unwrap_err();
    /// assert_eq!(e.quantity, "batch");
    /// assert_eq!(e.to_string(), "`batch`: must be at least 1");
    /// ```
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.batch == 0 {
            return Err(WorkloadError::new("batch", "must be at least 1"));
        }
        if self.batch > MAX_BATCH {
            return Err(WorkloadError::new(
                "batch",
                format!(
                    "{} is beyond the largest accepted ({MAX_BATCH})",
                    self.batch
                ),
            ));
        }
        match self.stage {
            Stage::Prefill if self.seq_len == 0 => Err(WorkloadError::new(
                "seq_len",
                "prefill needs at least 1 token per sequence",
            )),
            Stage::Prefill if self.cached >= MAX_TOKENS => Err(WorkloadError::new(
                "cached",
                format!(
                    "{} cached tokens is beyond the longest accepted ({}): at most {}",
                    self.cached,
                    MAX_TOKENS,
                    MAX_TOKENS - 1
                ),
            )),
            Stage::Prefill if self.cached + self.seq_len > MAX_TOKENS => Err(WorkloadError::new(
                if self.cached > 0 { "cached" } else { "seq_len" },
                format!(
                    "{} cached + {} new tokens make {} keys, beyond the most accepted \
                     ({MAX_TOKENS})",
                    self.cached,
                    self.seq_len,
                    self.cached as u128 + self.seq_len as u128
                ),
            )),
            Stage::Prefill if self.seq_len > MAX_TOKENS => Err(WorkloadError::new(
                "seq_len",
                format!(
                    "{} is beyond the longest accepted ({MAX_TOKENS})",
                    self.seq_len
                ),
            )),
            Stage::Decode if self.context >= MAX_TOKENS => Err(WorkloadError::new(
                "context",
                format!(
                    "{} cached tokens and the new one make {} keys, beyond the most accepted \
                     ({MAX_TOKENS}): the context is at most {}",
                    self.context,
                    self.context as u128 + 1,
                    MAX_TOKENS - 1
                ),
            )),
            _ => self.validate_pass(),
        }
    }

    /// The tokens of the pass (batch × seq_len, or batch × context) at most [`MAX_PASS_TOKENS`].
    fn validate_pass(&self) -> Result<(), WorkloadError> {
        let (quantity, per_seq) = match self.stage {
            Stage::Prefill if self.cached > 0 => ("cached", self.cached + self.seq_len),
            Stage::Prefill => ("seq_len", self.seq_len),
            Stage::Decode => ("context", self.context),
        };
        let total = u128::from(self.batch) * u128::from(per_seq);
        if total > u128::from(MAX_PASS_TOKENS) {
            return Err(WorkloadError::new(
                quantity,
                format!(
                    "batch {} × {} {per_seq} = {total} tokens in one pass, beyond the most \
                     accepted ({MAX_PASS_TOKENS}): at batch {} it is at most {}",
                    self.batch,
                    match quantity {
                        "seq_len" => "sequence length",
                        "cached" => "(cached + new tokens)",
                        _ => "context",
                    },
                    self.batch,
                    MAX_PASS_TOKENS / self.batch
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_fill_every_field() {
        assert_eq!(
            Workload::prefill(4, 2048),
            Workload {
                stage: Stage::Prefill,
                batch: 4,
                seq_len: 2048,
                context: 0,
                cached: 0,
                precisions: Precisions::uniform(Precision::Bf16),
                flash_attention: false,
                logits: Logits::Last,
            }
        );
        let fp8 = Precisions::new(Precision::Fp8, Precision::Bf16, Precision::Fp8);
        let w = Workload::decode(8, 4096)
            .with_precisions(fp8)
            .flash_attention(true)
            .with_batch(16);
        assert_eq!((w.stage, w.batch, w.context), (Stage::Decode, 16, 4096));
        assert_eq!((w.precisions, w.flash_attention), (fp8, true));
        // fp8 weights: 1 byte each; GEMMs in the activation precision.
        assert_eq!(
            (w.precisions.weight_bytes(), w.precisions.gemm()),
            (1.0, Precision::Bf16)
        );
    }

    #[test]
    fn errors_name_the_field() {
        for (w, quantity) in [
            (Workload::decode(0, 2048), "batch"),
            (Workload::decode(MAX_BATCH + 1, 2048), "batch"),
            (Workload::prefill(1, 0), "seq_len"),
            (Workload::prefill(1, MAX_TOKENS + 1), "seq_len"),
            (Workload::decode(1, MAX_TOKENS), "context"),
        ] {
            let e = w.validate().unwrap_err();
            assert_eq!(e.quantity, quantity, "{e}");
            assert!(e.to_string().starts_with(&format!("`{quantity}`: ")), "{e}");
        }
        assert!(Workload::decode(1, MAX_TOKENS - 1).validate().is_ok());
    }

    #[test]
    fn a_context_at_the_limit_names_the_largest_accepted() {
        // 2^26 cached tokens + the new one = 67,108,865 keys > 2^26 = 67,108,864: the message
        // says so and names 67,108,863 as the largest context, never "67108864 is beyond
        // 67108864".
        let e = Workload::decode(1, 1 << 26).validate().unwrap_err();
        assert!(e.message.contains("67108865 keys"), "{e}");
        assert!(e.message.contains("at most 67108863"), "{e}");
    }

    #[test]
    fn tokens_of_a_pass_are_bounded() {
        // 2^30 tokens: batch 16 of 2^26 (64 Mi) accepted, batch 17 not; in decode batch 1024
        // at a context of 2^20 = 2^30 cached tokens accepted, one more token not.
        assert!(Workload::prefill(16, 1 << 26).validate().is_ok());
        let e = Workload::prefill(17, 1 << 26).validate().unwrap_err();
        assert_eq!(e.quantity, "seq_len");
        // 17 × 67,108,864 = 1,140,850,688; at batch 17 at most ⌊2^30 / 17⌋ = 63,161,283.
        assert!(e.message.contains("1140850688 tokens"), "{e}");
        assert!(e.message.contains("at most 63161283"), "{e}");
        assert!(Workload::decode(1024, 1 << 20).validate().is_ok());
        let e = Workload::decode(1024, (1 << 20) + 1)
            .validate()
            .unwrap_err();
        assert_eq!(e.quantity, "context");
        // The largest batch (2^24) with the longest prompt (2^26): 2^50 tokens, refused.
        assert!(Workload::prefill(MAX_BATCH, MAX_TOKENS).validate().is_err());
    }
}
