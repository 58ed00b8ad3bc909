//! A transformer's architecture, validated: the numbers the cost model needs, resolved from a
//! config file by `roofline-inputs`.

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
    fn gqa_must_divide() {
        let mut m = llama2_7b();
        m.kv_heads = 5;
        let e = m.validate().unwrap_err();
        assert_eq!(e.field, "num_key_value_heads");
        m.kv_heads = 0;
        assert_eq!(m.validate().unwrap_err().field, "num_key_value_heads");
    }
}
