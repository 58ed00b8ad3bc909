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

    /// Parameters of one decoder block: attention projections (d·h·dh for q and o, d·kvh·dh for
    /// k and v), MLP (3·d·f gated, 2·d·f plain), biases where present, and two norms (d each;
    /// 2d each for LayerNorm with bias).
    pub fn parameters_per_layer(&self) -> u64 {
        let d = self.hidden;
        let q = self.heads * self.head_dim;
        let kv = self.kv_heads * self.head_dim;
        let f = self.intermediate;
        let mut p = d * q + 2 * d * kv + q * d;
        if self.qkv_bias {
            p += q + 2 * kv;
        }
        if self.o_bias {
            p += d;
        }
        p += match self.mlp {
            MlpKind::Gated => 3 * d * f + if self.mlp_bias { 2 * f + d } else { 0 },
            MlpKind::Plain => 2 * d * f + if self.mlp_bias { f + d } else { 0 },
        };
        p += 2 * self.norm_parameters();
        p
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
    /// `precision`: 2 (K and V) · layers · batch · tokens · kv_heads · head_dim · bytes per
    /// element. For Llama-2-70B in fp16 at 1,024 tokens that is 0.3125 GiB per sequence, as in
    /// Databricks's "LLM Inference Performance Engineering" (2023), Table 3.
    pub fn kv_cache_bytes(&self, batch: u64, tokens: u64, precision: Precision) -> Bytes {
        Bytes(
            2.0 * self.layers as f64
                * batch as f64
                * tokens as f64
                * (self.kv_heads * self.head_dim) as f64
                * precision.bytes(),
        )
    }

    /// Parameters outside the embedding matrices: [`Transformer::parameters`] less vocab·d for
    /// the token embedding and, when untied, vocab·d for lm_head. This is the N of Kaplan et al.
    /// 2020, §2.1 ("non-embedding parameters"); the final norm stays in.
    pub fn non_embedding_parameters(&self) -> u64 {
        let emb = self.vocab * self.hidden;
        let head = if self.tie_embeddings { 0 } else { emb };
        self.parameters() - emb - head
    }

    /// Total parameters: embedding (vocab·d), blocks, final norm, and lm_head (vocab·d) unless
    /// tied to the embedding (a tied matrix counts once).
    pub fn parameters(&self) -> u64 {
        let emb = self.vocab * self.hidden;
        let head = if self.tie_embeddings { 0 } else { emb };
        emb + self.layers * self.parameters_per_layer() + self.norm_parameters() + head
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
