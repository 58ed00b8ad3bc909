//! The model object every analysis embeds (`model`), and `roofline models`.

use super::SchemaVersion;
use roofline_core::model::Transformer;
use schemars::JsonSchema;
use serde::Serialize;

/// A model: its name, architecture, parameter counts and shape (Hugging Face config names).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ModelDoc {
    /// Preset id or file name.
    pub name: String,
    /// The Hugging Face `architectures` entry it was read as.
    pub architecture: String,
    /// Parameters.
    pub parameters: u64,
    /// Parameters used per token (MoE: the routed experts only).
    pub active_parameters: u64,
    /// KV-cache elements per token per layer as the model stores them (keys and values: 2 ×
    /// kv heads × head dim; MLA: kv_lora_rank + qk_rope_head_dim, 576 for DeepSeek-V3).
    pub kv_cache_elements_per_token_per_layer: u64,
    /// How those elements are laid out: `2 × 8 kv heads × 128`, or `MLA: kv_lora_rank 512 +
    /// qk_rope_head_dim 64`.
    pub kv_cache_layout: String,
    /// `hidden_size`.
    pub hidden_size: u64,
    /// `num_hidden_layers`.
    pub num_hidden_layers: u64,
    /// `num_attention_heads`.
    pub num_attention_heads: u64,
    /// `num_key_value_heads`.
    pub num_key_value_heads: u64,
    /// `head_dim`.
    pub head_dim: u64,
    /// `intermediate_size`.
    pub intermediate_size: u64,
    /// `vocab_size`.
    pub vocab_size: u64,
    /// `tie_word_embeddings`.
    pub tie_word_embeddings: bool,
}

impl ModelDoc {
    /// The model object of `m`.
    pub fn of(m: &Transformer) -> Self {
        ModelDoc {
            name: m.name.clone(),
            architecture: m.architecture.clone(),
            parameters: m.parameters(),
            active_parameters: m.active_parameters(),
            kv_cache_elements_per_token_per_layer: m.kv_elements_per_token(),
            kv_cache_layout: m.kv_layout(),
            hidden_size: m.hidden,
            num_hidden_layers: m.layers,
            num_attention_heads: m.heads,
            num_key_value_heads: m.kv_heads,
            head_dim: m.head_dim,
            intermediate_size: m.intermediate,
            vocab_size: m.vocab,
            tie_word_embeddings: m.tie_embeddings,
        }
    }
}

/// `roofline models`: the embedded presets.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ModelsDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The presets, in catalog order.
    pub models: Vec<ModelDoc>,
}
