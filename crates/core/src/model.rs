//! A transformer's architecture, validated: the numbers the cost model needs, resolved from a
//! config file by `roofline-inputs`.

use crate::precision::Precision;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, Mul};

/// Largest value accepted for any one size of a config (`hidden_size`, `num_hidden_layers`,
/// `vocab_size`, …): 2^24 = 16,777,216, over 100× the largest published (Llama 3.1 405B's
/// hidden size is 16,384, Qwen's vocabulary 151,936); beyond it a value is taken for a typo.
pub const MAX_DIM: u64 = 1 << 24;

/// Widest row per token accepted for a product of sizes that forms one tensor's row:
/// heads × head_dim, experts per token × expert width, shared experts × expert width, and with
/// MLA heads × (nope + rope) and heads × (nope + v). 2^26 = 67,108,864 elements, over 2,000× the
/// widest published (DeepSeek-V3: 128 heads × 192 = 24,576). With at most
/// [`crate::workload::MAX_PASS_TOKENS`] tokens in a pass, every activation tensor then holds
/// fewer than 2^58 elements: it is counted exactly in `u64`.
pub const MAX_ROW: u64 = 1 << 26;

/// Largest parameter count accepted: 10^15, over 600× the largest published model (Switch-C,
/// 1.571·10^12 parameters; Fedus et al. 2022). Every count a model gives (parameters, active
/// parameters, KV-cache elements per token over all layers, which never exceed the k and v
/// projections' parameters) is then below it, so that any product of one with a token count of
/// a pass stays exact in `f64` to 1 part in 10^6 and far from `u64::MAX`.
pub const MAX_PARAMETERS: u64 = 1_000_000_000_000_000;

/// A count in `u128` that saturates instead of wrapping: the parameter formulas are written
/// once over it, so that a count past `u64` is seen (by [`Transformer::validate`]) and never
/// wrapped. Every size is at most 2^64 and no formula multiplies more than four of them, but a
/// model built without validation may hold anything: saturation keeps even that from wrapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Wide(u128);

impl Wide {
    #[inline(always)]
    fn of(v: u64) -> Self {
        Wide(u128::from(v))
    }
    /// The count as `u64`, `u64::MAX` when past it (never for a validated model).
    #[inline(always)]
    fn narrow(self) -> u64 {
        u64::try_from(self.0).unwrap_or(u64::MAX)
    }
}
impl Add for Wide {
    type Output = Wide;
    #[inline(always)]
    fn add(self, rhs: Wide) -> Wide {
        Wide(self.0.saturating_add(rhs.0))
    }
}
impl Mul for Wide {
    type Output = Wide;
    #[inline(always)]
    fn mul(self, rhs: Wide) -> Wide {
        Wide(self.0.saturating_mul(rhs.0))
    }
}
impl Mul<Wide> for u64 {
    type Output = Wide;
    fn mul(self, rhs: Wide) -> Wide {
        Wide::of(self) * rhs
    }
}

/// Which normalisation the blocks use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum NormKind {
    /// RMSNorm (Llama family).
    RmsNorm,
    /// LayerNorm with bias (GPT-2, OPT).
    LayerNorm,
}

/// The MLP's activation function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Activation {
    /// SiLU (swish), as in SwiGLU.
    Silu,
    /// GELU (tanh approximation).
    Gelu,
    /// ReLU.
    Relu,
}

/// The MLP's form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum MlpKind {
    /// `down(act(gate(x)) · up(x))` (Shazeer 2020, "GLU variants"): three weight matrices.
    Gated,
    /// `fc2(act(fc1(x)))`: two weight matrices.
    Plain,
}

/// How token positions enter the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase", tag = "kind")]
#[non_exhaustive]
pub enum Positions {
    /// Rotary embedding on queries and keys (Su et al. 2021): no parameters.
    #[default]
    Rotary,
    /// A learned table of `rows` position embeddings added to the token embeddings (GPT-2:
    /// `n_positions`; OPT: `max_position_embeddings` + 2, its offset).
    Learned {
        /// Rows of the table.
        rows: u64,
    },
}

/// Which Hugging Face module names the operators carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Naming {
    /// `q_proj k_proj v_proj o_proj gate_proj up_proj down_proj` (Llama, Mistral, Qwen).
    #[default]
    Llama,
    /// `c_attn` (q, k, v in one GEMM), `attn.c_proj`, `mlp.c_fc`, `mlp.c_proj`.
    Gpt2,
    /// `q_proj k_proj v_proj out_proj fc1 fc2`.
    Opt,
    /// Llama's names, with the routed experts' projections named `w1` (gate), `w3` (up) and
    /// `w2` (down) (Hugging Face `MixtralSparseMoeBlock`).
    Mixtral,
}

/// Mixture of experts in the MLP (Shazeer et al. 2017; Fedus et al. 2022).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Moe {
    /// Routed experts E (`num_local_experts`, `num_experts`, `n_routed_experts`).
    pub experts: u64,
    /// Experts each token is routed to, k (`num_experts_per_tok`).
    pub top_k: u64,
    /// Width of one expert's gated MLP (`moe_intermediate_size`; Mixtral: `intermediate_size`).
    pub expert_intermediate: u64,
    /// Shared experts every token also goes through (`n_shared_experts`, DeepSeek), each
    /// `expert_intermediate` wide.
    pub shared_experts: u64,
    /// The first blocks that keep a dense MLP of `intermediate_size` (`first_k_dense_replace`).
    pub dense_layers: u64,
    /// Whether the router has a per-expert bias (DeepSeek-V3 `e_score_correction_bias`).
    pub router_bias: bool,
}

impl Moe {
    /// `experts` routed experts E, each token sent to `top_k` of them, each a gated MLP
    /// `expert_intermediate` wide; no shared experts, every block a mixture, no router bias
    /// (Mixtral's layout). The `with_*` methods add DeepSeek's extras.
    ///
    /// ```
    /// use roofline_core::model::Moe;
    /// // DeepSeek-V3: 256 routed experts of width 2048, 8 per token, 1 shared, 3 dense blocks.
    /// let m = Moe::new(256, 8, 2048).with_shared_experts(1).with_dense_layers(3);
    /// assert_eq!((m.experts, m.top_k, m.shared_experts, m.dense_layers), (256, 8, 1, 3));
    /// ```
    pub fn new(experts: u64, top_k: u64, expert_intermediate: u64) -> Self {
        Self {
            experts,
            top_k,
            expert_intermediate,
            shared_experts: 0,
            dense_layers: 0,
            router_bias: false,
        }
    }

    /// Shared experts every token also goes through (`n_shared_experts`).
    pub fn with_shared_experts(mut self, n: u64) -> Self {
        self.shared_experts = n;
        self
    }

    /// The first `n` blocks keep a dense MLP (`first_k_dense_replace`).
    pub fn with_dense_layers(mut self, n: u64) -> Self {
        self.dense_layers = n;
        self
    }

    /// Whether the router has a per-expert bias (`e_score_correction_bias`).
    pub fn with_router_bias(mut self, bias: bool) -> Self {
        self.router_bias = bias;
        self
    }
}

/// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, §2.1): queries and keys/values
/// pass through low-rank latents; the KV cache holds the kv latent and the shared rotary key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Mla {
    /// Rank of the query latent (`q_lora_rank`); `None`: a plain q projection.
    pub q_lora_rank: Option<u64>,
    /// Rank of the kv latent (`kv_lora_rank`), cached per token.
    pub kv_lora_rank: u64,
    /// Non-rotary part of each query/key head (`qk_nope_head_dim`).
    pub qk_nope_head_dim: u64,
    /// Rotary part of each query head and of the one shared key (`qk_rope_head_dim`).
    pub qk_rope_head_dim: u64,
    /// Value head size (`v_head_dim`).
    pub v_head_dim: u64,
}

impl Mla {
    /// The kv latent of rank `kv_lora_rank`, query/key heads of `qk_nope_head_dim` +
    /// `qk_rope_head_dim` elements, value heads of `v_head_dim`; a plain q projection (no q
    /// latent) until [`Mla::with_q_lora_rank`].
    ///
    /// ```
    /// use roofline_core::model::Mla;
    /// // DeepSeek-V3 (config.json): kv_lora_rank 512, nope 128, rope 64, v 128, q_lora_rank 1536.
    /// let m = Mla::new(512, 128, 64, 128).with_q_lora_rank(Some(1536));
    /// assert_eq!(m.qk_head_dim(), 192);
    /// assert_eq!(m.cache_elements(), 576);
    /// ```
    pub fn new(
        kv_lora_rank: u64,
        qk_nope_head_dim: u64,
        qk_rope_head_dim: u64,
        v_head_dim: u64,
    ) -> Self {
        Self {
            q_lora_rank: None,
            kv_lora_rank,
            qk_nope_head_dim,
            qk_rope_head_dim,
            v_head_dim,
        }
    }

    /// Rank of the query latent (`q_lora_rank`), or `None` for a plain q projection.
    pub fn with_q_lora_rank(mut self, rank: Option<u64>) -> Self {
        self.q_lora_rank = rank;
        self
    }

    /// Query/key head size: nope + rope.
    pub fn qk_head_dim(&self) -> u64 {
        self.qk_nope_head_dim + self.qk_rope_head_dim
    }
    /// Elements cached per token per layer: kv_lora_rank + qk_rope_head_dim (576 for
    /// DeepSeek-V3).
    pub fn cache_elements(&self) -> u64 {
        self.kv_lora_rank + self.qk_rope_head_dim
    }
}

/// What sets a model apart from the plain Llama block; `Variant::default()` is that block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[non_exhaustive]
pub struct Variant {
    /// Position encoding.
    pub positions: Positions,
    /// Module names.
    pub naming: Naming,
    /// RMSNorm on each query and key head before rotary (Qwen3 `q_norm`, `k_norm`).
    pub qk_norm: bool,
    /// Each query attends at most this many most recent keys (`sliding_window`, Mistral); the
    /// KV cache keeps only that many.
    pub sliding_window: Option<u64>,
    /// Mixture of experts, if the MLP is one.
    pub moe: Option<Moe>,
    /// Multi-head latent attention, if used.
    pub mla: Option<Mla>,
}

/// A decoder-only transformer's shape.
///
/// Shapes: hidden `d`, `layers` blocks, `heads` query heads and `kv_heads` key/value heads of
/// `head_dim` each, MLP width `intermediate` (`f`), vocabulary `vocab`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Transformer {
    /// Model name (preset id or file name).
    pub name: String,
    /// The Hugging Face `architectures` entry it was read as.
    pub architecture: String,
    /// Hidden size d (`hidden_size`).
    pub hidden: u64,
    /// Decoder blocks (`num_hidden_layers`).
    pub layers: u64,
    /// Query heads (`num_attention_heads`).
    pub heads: u64,
    /// Key/value heads (`num_key_value_heads`; equal to `heads` without GQA).
    pub kv_heads: u64,
    /// Elements per head (`head_dim`, else hidden / heads).
    pub head_dim: u64,
    /// MLP width f (`intermediate_size`).
    pub intermediate: u64,
    /// Vocabulary size (`vocab_size`).
    pub vocab: u64,
    /// Whether lm_head shares the embedding matrix (`tie_word_embeddings`).
    pub tie_embeddings: bool,
    /// Whether q, k and v projections have a bias (Qwen2: yes).
    pub qkv_bias: bool,
    /// Whether the output projection has a bias.
    pub o_bias: bool,
    /// Whether the MLP projections have biases (`mlp_bias`).
    pub mlp_bias: bool,
    /// Normalisation.
    pub norm: NormKind,
    /// MLP form.
    pub mlp: MlpKind,
    /// MLP activation.
    pub activation: Activation,
    /// Longest context the model was trained for (`max_position_embeddings`), if given.
    pub max_position_embeddings: Option<u64>,
    /// Positions, naming, MoE, MLA, sliding window: what differs from the Llama block.
    pub variant: Variant,
}

/// A field of a [`Transformer`] that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelError {
    /// The config field at fault (`num_key_value_heads`), or `parameters` for a count the
    /// sizes multiply to.
    pub field: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field `{}`: {}", self.field, self.message)
    }
}
impl std::error::Error for ModelError {}

impl ModelError {
    /// An error on config field `field` (`num_key_value_heads`) saying `message`.
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}

impl Transformer {
    /// Checks the shape is usable: every size positive, `heads` divisible by `kv_heads`, and
    /// nothing too large to count: every size at most [`MAX_DIM`], every per-token row (heads ×
    /// head_dim, experts per token × expert width, …) at most [`MAX_ROW`], the parameter count at
    /// most [`MAX_PARAMETERS`]. Every count of a validated model (parameters, active
    /// parameters, KV-cache elements) is exact: none can wrap.
    ///
    /// # Errors
    /// A [`ModelError`] naming the first field at fault (`parameters` when the sizes are each
    /// accepted but their product is not).
    ///
    /// ```
    /// use roofline_core::model::Transformer;
    /// // Three sizes at 2^24: 3 · 2^24 · 2^24 · 2^24 MLP weights alone are past u64.
    /// let e = Transformer::builder(1 << 24, 1 << 24, 1 << 24, 1 << 24, 32000)
    ///     .head_dim(1)
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(e.field, "parameters");
    /// ```
    pub fn validate(&self) -> Result<(), ModelError> {
        let positive = [
            ("hidden_size", self.hidden),
            ("num_hidden_layers", self.layers),
            ("num_attention_heads", self.heads),
            ("num_key_value_heads", self.kv_heads),
            ("head_dim", self.head_dim),
            ("intermediate_size", self.intermediate),
            ("vocab_size", self.vocab),
        ];
        for (field, v) in positive {
            if v == 0 {
                return Err(ModelError {
                    field,
                    message: "must be a positive integer, got 0".into(),
                });
            }
        }
        if let Some(m) = self.variant.moe {
            for (field, v) in [
                ("num_experts", m.experts),
                ("num_experts_per_tok", m.top_k),
                ("moe_intermediate_size", m.expert_intermediate),
            ] {
                if v == 0 {
                    return Err(ModelError {
                        field,
                        message: "must be a positive integer, got 0".into(),
                    });
                }
            }
            if m.top_k > m.experts {
                return Err(ModelError {
                    field: "num_experts_per_tok",
                    message: format!(
                        "routes each token to {} experts but there are only {}",
                        m.top_k, m.experts
                    ),
                });
            }
        }
        if let Some(m) = self.variant.mla {
            for (field, v) in [
                ("kv_lora_rank", m.kv_lora_rank),
                ("qk_rope_head_dim", m.qk_rope_head_dim),
                ("v_head_dim", m.v_head_dim),
            ] {
                if v == 0 {
                    return Err(ModelError {
                        field,
                        message: "must be a positive integer, got 0".into(),
                    });
                }
            }
        }
        if self.variant.sliding_window == Some(0) {
            return Err(ModelError {
                field: "sliding_window",
                message: "must be positive (or null for full attention)".into(),
            });
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(ModelError {
                field: "num_key_value_heads",
                message: format!(
                    "{} query heads cannot be split into groups over {} key/value heads: \
                     num_attention_heads must be a multiple of num_key_value_heads",
                    self.heads, self.kv_heads
                ),
            });
        }
        self.validate_sizes()
    }

    /// Every size at most [`MAX_DIM`], every row at most [`MAX_ROW`], the parameter count at
    /// most [`MAX_PARAMETERS`]: the bounds under which no count this model gives can overflow.
    fn validate_sizes(&self) -> Result<(), ModelError> {
        let too_large = |field: &'static str, what: String, max: u64| ModelError {
            field,
            message: format!(
                "{what}, beyond the largest accepted ({max}): a config this large is taken for a \
                 typo; check the sizes against the model's original config.json"
            ),
        };
        // Fixed arrays, not vectors: validation runs on every analysis and allocates nothing.
        let dims = [
            ("hidden_size", self.hidden),
            ("num_hidden_layers", self.layers),
            ("num_attention_heads", self.heads),
            ("num_key_value_heads", self.kv_heads),
            ("head_dim", self.head_dim),
            ("intermediate_size", self.intermediate),
            ("vocab_size", self.vocab),
        ];
        let moe_dims = self.variant.moe.map(|m| {
            [
                ("num_experts", m.experts),
                ("num_experts_per_tok", m.top_k),
                ("moe_intermediate_size", m.expert_intermediate),
                ("n_shared_experts", m.shared_experts),
                ("first_k_dense_replace", m.dense_layers),
            ]
        });
        let mla_dims = self.variant.mla.map(|m| {
            [
                ("q_lora_rank", m.q_lora_rank.unwrap_or(1)),
                ("kv_lora_rank", m.kv_lora_rank),
                ("qk_nope_head_dim", m.qk_nope_head_dim),
                ("qk_rope_head_dim", m.qk_rope_head_dim),
                ("v_head_dim", m.v_head_dim),
            ]
        });
        if let Positions::Learned { rows } = self.variant.positions {
            // OPT's table has max_position_embeddings + 2 rows (its offset).
            if rows > MAX_DIM + 2 {
                return Err(too_large(
                    "max_position_embeddings",
                    format!("the learned position table has {rows} rows"),
                    MAX_DIM + 2,
                ));
            }
        }
        let all_dims = dims
            .into_iter()
            .chain(moe_dims.into_iter().flatten())
            .chain(mla_dims.into_iter().flatten());
        for (field, v) in all_dims {
            if v > MAX_DIM {
                return Err(too_large(field, format!("is {v}"), MAX_DIM));
            }
        }
        let (h, e) = (Wide::of(self.heads), Wide::of(self.head_dim));
        let rows = [(
            "num_attention_heads",
            "num_attention_heads × head_dim",
            h * e,
        )];
        let moe_rows = self.variant.moe.map(|m| {
            let fe = Wide::of(m.expert_intermediate);
            [
                (
                    "num_experts_per_tok",
                    "num_experts_per_tok × moe_intermediate_size",
                    Wide::of(m.top_k) * fe,
                ),
                (
                    "n_shared_experts",
                    "n_shared_experts × moe_intermediate_size",
                    Wide::of(m.shared_experts) * fe,
                ),
            ]
        });
        let mla_rows = self.variant.mla.map(|m| {
            let (n, r) = (Wide::of(m.qk_nope_head_dim), Wide::of(m.qk_rope_head_dim));
            [
                (
                    "num_attention_heads",
                    "num_attention_heads × (qk_nope_head_dim + qk_rope_head_dim)",
                    h * (n + r),
                ),
                (
                    "num_attention_heads",
                    "num_attention_heads × (qk_nope_head_dim + v_head_dim)",
                    h * (n + Wide::of(m.v_head_dim)),
                ),
            ]
        });
        let all_rows = rows
            .into_iter()
            .chain(moe_rows.into_iter().flatten())
            .chain(mla_rows.into_iter().flatten());
        for (field, what, v) in all_rows {
            if v > Wide::of(MAX_ROW) {
                return Err(too_large(
                    field,
                    format!("{what} = {} elements per token", v.0),
                    MAX_ROW,
                ));
            }
        }
        let total = self.total_wide(false);
        if total > Wide::of(MAX_PARAMETERS) {
            return Err(too_large(
                "parameters",
                format!(
                    "the sizes give {:.3e} parameters (hidden_size {}, num_hidden_layers {}, \
                     intermediate_size {}, vocab_size {})",
                    total.0 as f64, self.hidden, self.layers, self.intermediate, self.vocab
                ),
                MAX_PARAMETERS,
            ));
        }
        Ok(())
    }

    /// Query heads per key/value head (the GQA group size).
    pub fn group(&self) -> u64 {
        self.heads / self.kv_heads.max(1)
    }

    /// Parameters of one block's attention: q, k, v and output projections (d·h·e for q and o,
    /// d·g·e for k and v), biases where present, Qwen3's per-head q/k norms (2·e); with MLA the
    /// low-rank path instead: [d·r_q + r_q + r_q·h·(n + r)] (or d·h·(n + r) without a q latent)
    /// + d·(r_kv + r) + r_kv + r_kv·h·(n + v) + h·v·d (DeepSeek-V2 §2.1).
    ///
    /// Exact for a validated model (at most [`MAX_PARAMETERS`]); `u64::MAX` rather than a
    /// wrapped count for one that [`Transformer::validate`] refuses.
    pub fn attention_parameters(&self) -> u64 {
        self.attention_wide().narrow()
    }

    fn attention_wide(&self) -> Wide {
        let d = Wide::of(self.hidden);
        let h = Wide::of(self.heads);
        if let Some(m) = self.variant.mla {
            let qk = Wide::of(m.qk_nope_head_dim) + Wide::of(m.qk_rope_head_dim);
            let q = match m.q_lora_rank {
                Some(r) => {
                    let r = Wide::of(r);
                    d * r + r + r * h * qk
                }
                None => d * h * qk,
            };
            let r_kv = Wide::of(m.kv_lora_rank);
            let kv = d * (r_kv + Wide::of(m.qk_rope_head_dim))
                + r_kv
                + r_kv * h * (Wide::of(m.qk_nope_head_dim) + Wide::of(m.v_head_dim));
            return q + kv + h * Wide::of(m.v_head_dim) * d;
        }
        let e = Wide::of(self.head_dim);
        let q = h * e;
        let kv = Wide::of(self.kv_heads) * e;
        let mut p = d * q + 2 * d * kv + q * d;
        if self.qkv_bias {
            p = p + q + 2 * kv;
        }
        if self.o_bias {
            p = p + d;
        }
        if self.variant.qk_norm {
            p = p + 2 * e;
        }
        p
    }

    /// Parameters of one block's MLP. Dense: 3·d·f gated, 2·d·f plain, plus biases. MoE: the
    /// router d·E (+ E for a bias), E experts of 3·d·f_e and the shared experts; `active` counts
    /// only the k routed experts a token uses (and the router and shared experts).
    ///
    /// Exact for a validated model; `u64::MAX` rather than a wrapped count otherwise.
    pub fn mlp_parameters(&self, moe_layer: bool, active: bool) -> u64 {
        self.mlp_wide(moe_layer, active).narrow()
    }

    fn mlp_wide(&self, moe_layer: bool, active: bool) -> Wide {
        let d = Wide::of(self.hidden);
        match self.variant.moe {
            Some(m) if moe_layer => {
                let experts = Wide::of(m.experts);
                let expert = 3 * d * Wide::of(m.expert_intermediate);
                let routed = Wide::of(if active { m.top_k } else { m.experts });
                let bias = if m.router_bias { experts } else { Wide(0) };
                d * experts + bias + (routed + Wide::of(m.shared_experts)) * expert
            }
            _ => {
                let f = Wide::of(self.intermediate);
                match (self.mlp, self.mlp_bias) {
                    (MlpKind::Gated, false) => 3 * d * f,
                    (MlpKind::Gated, true) => 3 * d * f + 2 * f + d,
                    (MlpKind::Plain, false) => 2 * d * f,
                    (MlpKind::Plain, true) => 2 * d * f + f + d,
                }
            }
        }
    }

    /// Blocks whose MLP is a mixture of experts (0 for a dense model).
    pub fn moe_layers(&self) -> u64 {
        self.variant
            .moe
            .map(|m| self.layers.saturating_sub(m.dense_layers))
            .unwrap_or(0)
    }

    /// Parameters of one dense decoder block: attention, dense MLP and two norms.
    pub fn parameters_per_layer(&self) -> u64 {
        (self.attention_wide() + self.mlp_wide(false, false) + 2 * self.norm_wide()).narrow()
    }

    fn blocks_wide(&self, active: bool) -> Wide {
        let moe = self.moe_layers();
        let dense = self.layers - moe;
        let per = self.attention_wide() + 2 * self.norm_wide();
        self.layers * per + dense * self.mlp_wide(false, active) + moe * self.mlp_wide(true, active)
    }

    fn embedding_wide(&self) -> Wide {
        let emb = Wide::of(self.vocab) * Wide::of(self.hidden);
        let head = if self.tie_embeddings { Wide(0) } else { emb };
        let pos = match self.variant.positions {
            Positions::Learned { rows } => rows * Wide::of(self.hidden),
            Positions::Rotary => Wide(0),
        };
        emb + head + pos
    }

    /// Parameters a token uses: as [`Transformer::parameters`], with only the k routed experts of
    /// each MoE block (the router and shared experts included). Equal to `parameters()` for a
    /// dense model.
    pub fn active_parameters(&self) -> u64 {
        self.total_wide(true).narrow()
    }

    fn total_wide(&self, active: bool) -> Wide {
        self.embedding_wide() + self.blocks_wide(active) + self.norm_wide()
    }

    /// KV-cache elements per token per layer as the model stores them: 2·kv_heads·head_dim (K
    /// and V), or kv_lora_rank + qk_rope_head_dim with MLA (the latent and the shared rotary
    /// key: 576 for DeepSeek-V3, not 2 × 128 heads × 192).
    pub fn kv_elements_per_token(&self) -> u64 {
        self.kv_wide().narrow()
    }

    fn kv_wide(&self) -> Wide {
        match self.variant.mla {
            Some(m) => Wide::of(m.kv_lora_rank) + Wide::of(m.qk_rope_head_dim),
            None => 2 * Wide::of(self.kv_heads) * Wide::of(self.head_dim),
        }
    }

    /// How the KV cache of one token in one layer is laid out, for a reader:
    /// `2 × 8 kv heads × 128` (K and V) or `MLA: kv_lora_rank 512 + qk_rope_head_dim 64`.
    pub fn kv_layout(&self) -> String {
        match self.variant.mla {
            Some(m) => format!(
                "MLA: kv_lora_rank {} + qk_rope_head_dim {}",
                m.kv_lora_rank, m.qk_rope_head_dim
            ),
            None => format!("2 × {} kv heads × {}", self.kv_heads, self.head_dim),
        }
    }

    /// Tokens the KV cache keeps for a sequence of `tokens`: all of them, or the last
    /// `sliding_window` (Mistral's rolling buffer).
    pub fn cached_tokens(&self, tokens: u64) -> u64 {
        match self.variant.sliding_window {
            Some(w) => tokens.min(w),
            None => tokens,
        }
    }

    fn norm_wide(&self) -> Wide {
        match self.norm {
            NormKind::RmsNorm => Wide::of(self.hidden),
            NormKind::LayerNorm => 2 * Wide::of(self.hidden),
        }
    }

    /// Bytes of all weights stored in `precision`: [`Transformer::parameters`] × bytes per
    /// element.
    pub fn weight_bytes(&self, precision: Precision) -> Bytes {
        Bytes(self.parameters() as f64 * precision.bytes())
    }

    /// Bytes of the KV cache for `batch` sequences of `tokens` tokens each, stored in
    /// `precision`: layers · batch · cached tokens · [`Transformer::kv_elements_per_token`] ·
    /// bytes per element (2·kv_heads·head_dim per token, K and V). For Llama-2-70B in fp16 at
    /// 1,024 tokens that is 0.3125 GiB per sequence, as in Databricks's "LLM Inference
    /// Performance Engineering" (2023), Table 3.
    pub fn kv_cache_bytes(&self, batch: u64, tokens: u64, precision: Precision) -> Bytes {
        Bytes(
            self.layers as f64
                * batch as f64
                * self.cached_tokens(tokens) as f64
                * self.kv_elements_per_token() as f64
                * precision.bytes(),
        )
    }

    /// Parameters outside the embedding matrices: [`Transformer::parameters`] less vocab·d for
    /// the token embedding, vocab·d for lm_head when untied, and a learned position table. This
    /// is the N of Kaplan et al. 2020, §2.1 ("non-embedding parameters"); the final norm stays
    /// in.
    pub fn non_embedding_parameters(&self) -> u64 {
        (self.blocks_wide(false) + self.norm_wide()).narrow()
    }

    /// Total parameters: embedding (vocab·d), blocks, final norm, and lm_head (vocab·d) unless
    /// tied to the embedding (a tied matrix counts once).
    ///
    /// Exact for a validated model (at most [`MAX_PARAMETERS`]); `u64::MAX` rather than a
    /// wrapped count for one that [`Transformer::validate`] refuses.
    pub fn parameters(&self) -> u64 {
        self.total_wide(false).narrow()
    }
}

impl Transformer {
    /// A builder for a model of hidden size `hidden` (d), `layers` blocks, `heads` query heads,
    /// MLP width `intermediate` (f) and vocabulary `vocab`: every size in elements (or tokens),
    /// as `hidden_size`, `num_hidden_layers`, `num_attention_heads`, `intermediate_size` and
    /// `vocab_size` of a Hugging Face config.
    ///
    /// Until a setter says otherwise the model is a plain Llama block: as many key/value heads
    /// as query heads (no GQA), `head_dim` = hidden / heads, RMSNorm, a gated SiLU MLP, rotary
    /// positions, no biases, lm_head untied, named `model` with architecture
    /// `LlamaForCausalLM`. [`TransformerBuilder::build`] validates it.
    ///
    /// ```
    /// use roofline_core::model::Transformer;
    /// // Llama-2-7B (its config.json): d 4096, 32 layers, 32 heads, f 11008, vocab 32000.
    /// let m = Transformer::builder(4096, 32, 32, 11008, 32000)
    ///     .name("llama-2-7b")
    ///     .max_position_embeddings(Some(4096))
    ///     .build()?;
    /// assert_eq!(m.head_dim, 128);
    /// // 2·32000·4096 + 32·(4·4096² + 3·4096·11008 + 2·4096) + 4096
    /// assert_eq!(m.parameters(), 6_738_415_616);
    /// # Ok::<(), roofline_core::model::ModelError>(())
    /// ```
    pub fn builder(
        hidden: u64,
        layers: u64,
        heads: u64,
        intermediate: u64,
        vocab: u64,
    ) -> TransformerBuilder {
        TransformerBuilder {
            model: Transformer {
                name: "model".into(),
                architecture: "LlamaForCausalLM".into(),
                hidden,
                layers,
                heads,
                kv_heads: heads,
                head_dim: 0,
                intermediate,
                vocab,
                tie_embeddings: false,
                qkv_bias: false,
                o_bias: false,
                mlp_bias: false,
                norm: NormKind::RmsNorm,
                mlp: MlpKind::Gated,
                activation: Activation::Silu,
                max_position_embeddings: None,
                variant: Variant::default(),
            },
            head_dim: None,
        }
    }
}

/// Builds a [`Transformer`] from its dimensions; made by [`Transformer::builder`]. Each setter
/// names the Hugging Face config field it stands for.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct TransformerBuilder {
    model: Transformer,
    head_dim: Option<u64>,
}

impl TransformerBuilder {
    /// Model name (a preset id or a file name); `model` by default.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.model.name = name.into();
        self
    }
    /// The Hugging Face `architectures` entry (`LlamaForCausalLM` by default).
    pub fn architecture(mut self, architecture: impl Into<String>) -> Self {
        self.model.architecture = architecture.into();
        self
    }
    /// Key/value heads (`num_key_value_heads`): fewer than the query heads for GQA, 1 for MQA.
    pub fn kv_heads(mut self, kv_heads: u64) -> Self {
        self.model.kv_heads = kv_heads;
        self
    }
    /// Elements per head (`head_dim`); by default hidden / heads (with MLA: nope + rope).
    pub fn head_dim(mut self, head_dim: u64) -> Self {
        self.head_dim = Some(head_dim);
        self
    }
    /// The GPT of Megatron-LM (Shoeybi et al. 2019; the models of Narayanan et al. 2021 and
    /// Korthikanti et al. 2022): LayerNorm, a two-matrix GeLU MLP, biases on every linear, the
    /// embedding tied to lm_head, and a learned table of `positions` position embeddings.
    pub fn megatron_gpt(self, positions: u64) -> Self {
        self.norm(NormKind::LayerNorm)
            .mlp(MlpKind::Plain)
            .activation(Activation::Gelu)
            .qkv_bias(true)
            .o_bias(true)
            .mlp_bias(true)
            .tie_embeddings(true)
            .positions(Positions::Learned { rows: positions })
    }
    /// Whether lm_head shares the embedding matrix (`tie_word_embeddings`).
    pub fn tie_embeddings(mut self, tie: bool) -> Self {
        self.model.tie_embeddings = tie;
        self
    }
    /// Biases on the q, k, v projections (`attention_bias`; Qwen2: always).
    pub fn qkv_bias(mut self, bias: bool) -> Self {
        self.model.qkv_bias = bias;
        self
    }
    /// A bias on the attention output projection.
    pub fn o_bias(mut self, bias: bool) -> Self {
        self.model.o_bias = bias;
        self
    }
    /// Biases on the MLP projections (`mlp_bias`).
    pub fn mlp_bias(mut self, bias: bool) -> Self {
        self.model.mlp_bias = bias;
        self
    }
    /// Normalisation (RMSNorm by default).
    pub fn norm(mut self, norm: NormKind) -> Self {
        self.model.norm = norm;
        self
    }
    /// MLP form (gated by default).
    pub fn mlp(mut self, mlp: MlpKind) -> Self {
        self.model.mlp = mlp;
        self
    }
    /// MLP activation (`hidden_act`; SiLU by default).
    pub fn activation(mut self, activation: Activation) -> Self {
        self.model.activation = activation;
        self
    }
    /// Longest context trained for, in tokens (`max_position_embeddings`).
    pub fn max_position_embeddings(mut self, tokens: Option<u64>) -> Self {
        self.model.max_position_embeddings = tokens;
        self
    }
    /// Position encoding (rotary by default).
    pub fn positions(mut self, positions: Positions) -> Self {
        self.model.variant.positions = positions;
        self
    }
    /// Module names of the operators (Llama's by default).
    pub fn naming(mut self, naming: Naming) -> Self {
        self.model.variant.naming = naming;
        self
    }
    /// RMSNorm on each query and key head (Qwen3 `q_norm`, `k_norm`).
    pub fn qk_norm(mut self, qk_norm: bool) -> Self {
        self.model.variant.qk_norm = qk_norm;
        self
    }
    /// Sliding-window attention over the last `tokens` keys (`sliding_window`, Mistral).
    pub fn sliding_window(mut self, tokens: Option<u64>) -> Self {
        self.model.variant.sliding_window = tokens;
        self
    }
    /// A mixture-of-experts MLP.
    pub fn moe(mut self, moe: Option<Moe>) -> Self {
        self.model.variant.moe = moe;
        self
    }
    /// Multi-head latent attention; the head size then defaults to nope + rope.
    pub fn mla(mut self, mla: Option<Mla>) -> Self {
        self.model.variant.mla = mla;
        self
    }

    /// The model, validated ([`Transformer::validate`]).
    ///
    /// # Errors
    /// A [`ModelError`] naming the config field at fault: a zero size, `num_key_value_heads`
    /// not dividing `num_attention_heads`, or `head_dim` left to default when `hidden_size` is
    /// not a multiple of `num_attention_heads`.
    ///
    /// ```
    /// use roofline_core::model::Transformer;
    /// // 32 query heads cannot be grouped over 5 key/value heads.
    /// let e = Transformer::builder(4096, 32, 32, 11008, 32000).kv_heads(5).build().unwrap_err();
    /// assert_eq!(e.field, "num_key_value_heads");
    /// ```
    pub fn build(self) -> Result<Transformer, ModelError> {
        let mut model = self.model;
        model.head_dim = match (self.head_dim, model.variant.mla) {
            (Some(e), _) => e,
            (None, Some(m)) => m.qk_head_dim(),
            (None, None) if model.heads == 0 => 0,
            (None, None) if !model.hidden.is_multiple_of(model.heads) => {
                return Err(ModelError::new(
                    "head_dim",
                    format!(
                        "is not given and hidden_size {} is not divisible by \
                         num_attention_heads {}: give it",
                        model.hidden, model.heads
                    ),
                ))
            }
            (None, None) => model.hidden / model.heads,
        };
        model.validate()?;
        Ok(model)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The fixture under the path the analysis, explain, MFU and sweep tests name.
    pub use crate::fixtures::llama2_7b;

    #[test]
    fn llama2_7b_parameters_by_hand() {
        // 2·32000·4096 + 32·(4·4096² + 3·4096·11008 + 2·4096) + 4096 = 6,738,415,616
        // (the count in shared/models/README.md).
        assert_eq!(llama2_7b().parameters(), 6_738_415_616);
    }

    #[test]
    fn kv_cache_bytes_match_databricks_table_3() {
        // Llama-2-70B (80 layers, 8 KV heads of 128), fp16, 1,024 tokens: Databricks "LLM
        // Inference Performance Engineering" Table 3 gives 0.312 GiB at batch 1 and 20 GiB at 64.
        let m = Transformer {
            hidden: 8192,
            layers: 80,
            heads: 64,
            kv_heads: 8,
            intermediate: 28672,
            ..llama2_7b()
        };
        let gib = 1024f64.powi(3);
        let one = m.kv_cache_bytes(1, 1024, Precision::Fp16).get();
        assert_eq!(one, 2.0 * 80.0 * 1024.0 * 8.0 * 128.0 * 2.0);
        assert_eq!(one / gib, 0.3125);
        assert_eq!(
            m.kv_cache_bytes(64, 1024, Precision::Fp16).get() / gib,
            20.0
        );
    }

    #[test]
    fn non_embedding_parameters_drop_both_matrices_unless_tied() {
        // 6,738,415,616 − 2·32000·4096 = 6,476,271,616.
        assert_eq!(llama2_7b().non_embedding_parameters(), 6_476_271_616);
        let tied = Transformer {
            tie_embeddings: true,
            ..llama2_7b()
        };
        assert_eq!(
            tied.non_embedding_parameters(),
            tied.parameters() - 32000 * 4096
        );
        assert_eq!(
            llama2_7b().weight_bytes(Precision::Bf16).get(),
            13_476_831_232.0
        );
    }

    #[test]
    fn builder_gives_the_model_of_the_config() -> Result<(), ModelError> {
        // Llama-2-7B's config.json gives only these five sizes and max_position_embeddings; the
        // rest is the Llama block's default.
        let built = Transformer::builder(4096, 32, 32, 11008, 32000)
            .name("llama-2-7b")
            .max_position_embeddings(Some(4096))
            .build()?;
        assert_eq!(built, llama2_7b());
        // 4096 / 30 is not whole: the head size must be given.
        let e = Transformer::builder(4096, 32, 30, 11008, 32000)
            .build()
            .unwrap_err();
        assert_eq!(e.field, "head_dim");
        let e = Transformer::builder(4096, 32, 0, 11008, 32000)
            .build()
            .unwrap_err();
        assert_eq!(e.field, "num_attention_heads");
        // DeepSeek-V3's MLA: query/key heads of 128 + 64 = 192 elements.
        let mla = Transformer::builder(7168, 61, 128, 18432, 129280)
            .mla(Some(
                Mla::new(512, 128, 64, 128).with_q_lora_rank(Some(1536)),
            ))
            .build()?;
        assert_eq!(mla.head_dim, 192);
        Ok(())
    }

    #[test]
    fn counts_past_u64_are_refused_not_wrapped() {
        // hidden, layers, heads and intermediate at 2^24 (head_dim 1): the MLP alone has
        // 3 · 2^24 · 2^24 per block × 2^24 blocks = 3 · 2^72 ≈ 1.4e22 weights, past
        // u64::MAX ≈ 1.8e19. Validation refuses it, naming the count.
        let big = 1u64 << 24;
        let e = Transformer::builder(big, big, big, big, 32000)
            .head_dim(1)
            .build()
            .unwrap_err();
        assert_eq!(e.field, "parameters");
        assert!(e.message.contains("1000000000000000"), "{e}");
        // Built by hand, without validation, it counts u64::MAX: saturated, never wrapped.
        let unchecked = Transformer {
            hidden: big,
            layers: big,
            heads: big,
            kv_heads: big,
            head_dim: 1,
            intermediate: big,
            ..llama2_7b()
        };
        assert_eq!(unchecked.parameters(), u64::MAX);
        assert_eq!(unchecked.active_parameters(), u64::MAX);
    }

    #[test]
    fn counts_below_the_bound_are_exact() -> Result<(), ModelError> {
        // d = 2^14, 2^12 blocks, f = 2^16, V = 2^17, 128 heads of 128: 2·V·d + L·(4d² + 3df +
        // 2d) + d = 2^32 + 2^12·(2^30 + 3·2^30 + 2^15) + 2^14 = 2^44 + 2^32 + 2^27 + 2^14.
        let m = Transformer::builder(1 << 14, 1 << 12, 128, 1 << 16, 1 << 17).build()?;
        assert_eq!(
            m.parameters(),
            (1u64 << 44) + (1 << 32) + (1 << 27) + (1 << 14)
        );
        // 2^24 blocks of the same: 2^24·(2^32 + 2^15) ≈ 7.2e16 > 10^15, refused.
        let e = Transformer::builder(1 << 14, 1 << 24, 128, 1 << 16, 1 << 17)
            .build()
            .unwrap_err();
        assert_eq!(e.field, "parameters");
        Ok(())
    }

    #[test]
    fn sizes_and_rows_are_bounded() {
        // One size past 2^24 = 16,777,216.
        let e = Transformer::builder(4096, 32, 32, (1 << 24) + 1, 32000)
            .build()
            .unwrap_err();
        assert_eq!(e.field, "intermediate_size");
        // 2^20 heads of 128 = 2^27 elements per token for q alone, past 2^26.
        let e = Transformer::builder(4096, 32, 1 << 20, 11008, 32000)
            .head_dim(128)
            .build()
            .unwrap_err();
        assert_eq!(e.field, "num_attention_heads");
        assert!(e.message.contains("134217728 elements per token"), "{e}");
        // 2^12 experts per token of width 2^15 = 2^27, past 2^26.
        let e = Transformer::builder(4096, 32, 32, 11008, 32000)
            .moe(Some(Moe::new(1 << 12, 1 << 12, 1 << 15)))
            .build()
            .unwrap_err();
        assert_eq!(e.field, "num_experts_per_tok");
    }

    #[test]
    fn kv_cache_per_token_is_what_the_model_stores() -> Result<(), ModelError> {
        // DeepSeek-V3 (config.json): MLA caches kv_lora_rank 512 + qk_rope_head_dim 64 = 576
        // elements per token per layer, not 2 × 128 heads × 192 = 49,152.
        let v3 = Transformer::builder(7168, 61, 128, 18432, 129280)
            .mla(Some(
                Mla::new(512, 128, 64, 128).with_q_lora_rank(Some(1536)),
            ))
            .build()?;
        assert_eq!(v3.kv_elements_per_token(), 512 + 64);
        assert_eq!(
            v3.kv_layout(),
            "MLA: kv_lora_rank 512 + qk_rope_head_dim 64"
        );
        // Llama-2-7B: 2 × 32 × 128 = 8192.
        assert_eq!(llama2_7b().kv_elements_per_token(), 8192);
        assert_eq!(llama2_7b().kv_layout(), "2 × 32 kv heads × 128");
        Ok(())
    }

    #[test]
    fn gqa_must_divide() {
        let mut m = llama2_7b();
        m.kv_heads = 5;
        let e = m.validate().unwrap_err();
        assert_eq!(e.field, "num_key_value_heads");
        m.kv_heads = 0;
        assert_eq!(m.validate().unwrap_err().field, "num_key_value_heads");
    }
}

#[cfg(test)]
mod megatron_gpt_tests {
    use super::*;

    #[test]
    fn megatron_gpt_has_megatrons_eq_2_parameters_and_its_final_norm() -> Result<(), ModelError> {
        // Narayanan et al. 2021, eq. 2: P = 12·l·h²·(1 + 13/(12h) + (V + s)/(12·l·h)) for
        // GPT-3 175B (l 96, h 12288, V 51200, s 2048): 12·l·h² + 13·l·h + (V + s)·h; the final
        // LayerNorm's 2h is outside the formula.
        let (l, h, v, s) = (96u64, 12288u64, 51200u64, 2048u64);
        let m = Transformer::builder(h, l, 96, 4 * h, v)
            .megatron_gpt(s)
            .build()?;
        let eq2 = 12 * l * h * h + 13 * l * h + (v + s) * h;
        assert_eq!(m.parameters(), eq2 + 2 * h);
        assert!(m.tie_embeddings && m.norm == NormKind::LayerNorm);
        Ok(())
    }
}
