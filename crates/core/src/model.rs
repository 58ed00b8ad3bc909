//! A transformer's architecture, validated: the numbers the cost model needs, resolved from a
//! config file by `roofline-inputs`.

use crate::precision::Precision;
use crate::units::Bytes;
use serde::Serialize;
use std::fmt;

/// Which normalisation the blocks use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NormKind {
    /// RMSNorm (Llama family).
    RmsNorm,
    /// LayerNorm with bias (GPT-2, OPT).
    LayerNorm,
}

/// The MLP's activation function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    /// SiLU (swish), as in SwiGLU.
    Silu,
    /// GELU (tanh approximation).
    Gelu,
    /// ReLU.
    Relu,
}

/// The MLP's form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MlpKind {
    /// `down(act(gate(x)) · up(x))` (Shazeer 2020, "GLU variants"): three weight matrices.
    Gated,
    /// `fc2(act(fc1(x)))`: two weight matrices.
    Plain,
}

/// How token positions enter the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase", tag = "kind")]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

/// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, §2.1): queries and keys/values
/// pass through low-rank latents; the KV cache holds the kv latent and the shared rotary key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
pub struct ModelError {
    /// The config field at fault (`num_key_value_heads`).
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

impl Transformer {
    /// Checks the shape is usable: every size positive, `heads` divisible by `kv_heads`.
    ///
    /// # Errors
    /// A [`ModelError`] naming the first field at fault.
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
    pub fn attention_parameters(&self) -> u64 {
        let d = self.hidden;
        let h = self.heads;
        if let Some(m) = self.variant.mla {
            let qk = m.qk_head_dim();
            let q = match m.q_lora_rank {
                Some(r) => d * r + r + r * h * qk,
                None => d * h * qk,
            };
            let kv = d * (m.kv_lora_rank + m.qk_rope_head_dim)
                + m.kv_lora_rank
                + m.kv_lora_rank * h * (m.qk_nope_head_dim + m.v_head_dim);
            return q + kv + h * m.v_head_dim * d;
        }
        let q = h * self.head_dim;
        let kv = self.kv_heads * self.head_dim;
        let mut p = d * q + 2 * d * kv + q * d;
        if self.qkv_bias {
            p += q + 2 * kv;
        }
        if self.o_bias {
            p += d;
        }
        if self.variant.qk_norm {
            p += 2 * self.head_dim;
        }
        p
    }

    /// Parameters of one block's MLP. Dense: 3·d·f gated, 2·d·f plain, plus biases. MoE: the
    /// router d·E (+ E for a bias), E experts of 3·d·f_e and the shared experts; `active` counts
    /// only the k routed experts a token uses (and the router and shared experts).
    pub fn mlp_parameters(&self, moe_layer: bool, active: bool) -> u64 {
        let d = self.hidden;
        match self.variant.moe {
            Some(m) if moe_layer => {
                let expert = 3 * d * m.expert_intermediate;
                let routed = if active { m.top_k } else { m.experts };
                d * m.experts
                    + if m.router_bias { m.experts } else { 0 }
                    + (routed + m.shared_experts) * expert
            }
            _ => {
                let f = self.intermediate;
                match self.mlp {
                    MlpKind::Gated => 3 * d * f + if self.mlp_bias { 2 * f + d } else { 0 },
                    MlpKind::Plain => 2 * d * f + if self.mlp_bias { f + d } else { 0 },
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
        self.attention_parameters() + self.mlp_parameters(false, false) + 2 * self.norm_parameters()
    }

    fn blocks_parameters(&self, active: bool) -> u64 {
        let moe = self.moe_layers();
        let dense = self.layers - moe;
        let per = self.attention_parameters() + 2 * self.norm_parameters();
        self.layers * per
            + dense * self.mlp_parameters(false, active)
            + moe * self.mlp_parameters(true, active)
    }

    fn embedding_parameters(&self) -> u64 {
        let emb = self.vocab * self.hidden;
        let head = if self.tie_embeddings { 0 } else { emb };
        let pos = match self.variant.positions {
            Positions::Learned { rows } => rows * self.hidden,
            Positions::Rotary => 0,
        };
        emb + head + pos
    }

    /// Parameters a token uses: as [`Transformer::parameters`], with only the k routed experts of
    /// each MoE block (the router and shared experts included). Equal to `parameters()` for a
    /// dense model.
    pub fn active_parameters(&self) -> u64 {
        self.embedding_parameters() + self.blocks_parameters(true) + self.norm_parameters()
    }

    /// KV-cache elements per token per layer: 2·kv_heads·head_dim (K and V), or
    /// kv_lora_rank + qk_rope_head_dim with MLA.
    pub fn kv_elements_per_token(&self) -> u64 {
        match self.variant.mla {
            Some(m) => m.cache_elements(),
            None => 2 * self.kv_heads * self.head_dim,
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

    fn norm_parameters(&self) -> u64 {
        match self.norm {
            NormKind::RmsNorm => self.hidden,
            NormKind::LayerNorm => 2 * self.hidden,
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
        self.parameters() - self.embedding_parameters()
    }

    /// Total parameters: embedding (vocab·d), blocks, final norm, and lm_head (vocab·d) unless
    /// tied to the embedding (a tied matrix counts once).
    pub fn parameters(&self) -> u64 {
        self.embedding_parameters() + self.blocks_parameters(false) + self.norm_parameters()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Llama-2-7B as its config.json gives it.
    pub fn llama2_7b() -> Transformer {
        Transformer {
            name: "llama-2-7b".into(),
            architecture: "LlamaForCausalLM".into(),
            hidden: 4096,
            layers: 32,
            heads: 32,
            kv_heads: 32,
            head_dim: 128,
            intermediate: 11008,
            vocab: 32000,
            tie_embeddings: false,
            qkv_bias: false,
            o_bias: false,
            mlp_bias: false,
            norm: NormKind::RmsNorm,
            mlp: MlpKind::Gated,
            activation: Activation::Silu,
            max_position_embeddings: Some(4096),
            variant: Variant::default(),
        }
    }

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
    fn gqa_must_divide() {
        let mut m = llama2_7b();
        m.kv_heads = 5;
        let e = m.validate().unwrap_err();
        assert_eq!(e.field, "num_key_value_heads");
        m.kv_heads = 0;
        assert_eq!(m.validate().unwrap_err().field, "num_key_value_heads");
    }
}
