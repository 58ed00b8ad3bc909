//! Hugging Face `config.json` into a validated [`Transformer`].
//!
//! The config is read as it is (a JSON object with optional keys and the defaults
//! `transformers` applies), then resolved into the shape the cost model needs. Supported
//! `architectures`: [`SUPPORTED_ARCHITECTURES`]. Presets are real configs embedded from
//! `catalog/models/` (copied from `shared/models/`).

use crate::embedded::MODEL_FILES;
use crate::error::InputError;
use roofline_core::model::{
    Activation, Mla, MlpKind, Moe, Naming, NormKind, Positions, Transformer, TransformerBuilder,
};
use serde_json::{Map, Value};
use std::path::Path;

/// The `architectures` values this reader understands.
pub const SUPPORTED_ARCHITECTURES: &[&str] = &[
    "LlamaForCausalLM",
    "MistralForCausalLM",
    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",
    "MixtralForCausalLM",
    "Qwen3MoeForCausalLM",
    "DeepseekV3ForCausalLM",
    "GPT2LMHeadModel",
    "OPTForCausalLM",
];

// Largest size accepted for any dimension, beyond which a value is taken for a typo: the
// core's bound, which `Transformer::validate` applies again.
use roofline_core::model::MAX_DIM;

/// Ids of the embedded presets (`llama-2-7b`, …), sorted.
pub fn preset_ids() -> Vec<&'static str> {
    MODEL_FILES.iter().map(|(id, _)| *id).collect()
}

/// Reads a model by preset id, by path to a `config.json`, or by a folder holding one.
///
/// # Errors
/// An unknown preset (with the closest ids), an unreadable file, or a config that
/// [`parse_config`] rejects.
pub fn load_model(name_or_path: &str) -> Result<Transformer, InputError> {
    if let Some((id, text)) = MODEL_FILES
        .iter()
        .find(|(id, _)| id.eq_ignore_ascii_case(name_or_path))
    {
        return parse_config(text, &format!("preset `{id}`"), id);
    }
    let path = Path::new(name_or_path);
    let looks_like_path = name_or_path.contains('/')
        || name_or_path.contains('\\')
        || name_or_path.ends_with(".json")
        || path.exists();
    if !looks_like_path {
        let ids = preset_ids();
        let close = crate::closest(name_or_path, &ids, 3);
        return Err(InputError::new(format!(
            "unknown model `{name_or_path}`: not a preset and not a file"
        ))
        .with_hint(format!(
            "closest presets: {}; or pass the path to a Hugging Face config.json",
            close.join(", ")
        )));
    }
    if !path.exists() {
        if let Some(e) = hub_id(name_or_path) {
            return Err(e);
        }
    }
    let file = if path.is_dir() {
        path.join("config.json")
    } else {
        path.to_path_buf()
    };
    let text = crate::read::read_text(
        &file,
        "",
        crate::read::TEXT_LIMIT,
        "pass a preset id (`roofline models`) or the path to a config.json",
        "a config.json is UTF-8 JSON text",
    )?;
    let name = file
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("model")
        .to_string();
    parse_config(&text, &file.display().to_string(), &name)
}

/// When `name` is a Hugging Face model id (`meta-llama/Llama-2-7b-hf`: one `owner/name`, not a
/// file): the error saying so, with the preset of that model where there is one (the longest
/// preset id the name starts with, `Meta-` aside: `Llama-2-70b-chat-hf` → `llama-2-70b`).
fn hub_id(name: &str) -> Option<InputError> {
    let (owner, repo) = name.split_once('/')?;
    let plain = |s: &str| {
        !s.is_empty()
            && !s.starts_with('.')
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if !plain(owner) || !plain(repo) || repo.ends_with(".json") {
        return None;
    }
    let lower = repo.to_ascii_lowercase();
    let lower = lower.strip_prefix("meta-").unwrap_or(&lower);
    let preset = preset_ids()
        .into_iter()
        .filter(|id| {
            lower
                .strip_prefix(id)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
        })
        .max_by_key(|id| id.len());
    let download = format!(
        "download its config.json (`huggingface-cli download {name} config.json`) and pass its path"
    );
    Some(
        InputError::new(format!(
            "`{name}` is a Hugging Face model id, not a local file; models are not downloaded"
        ))
        .with_hint(match preset {
            Some(p) => format!("the preset `{p}` is this model: pass `{p}`; or {download}"),
            None => format!("pass a preset id (`roofline models`), or {download}"),
        }),
    )
}

/// Parses the text of a `config.json` (`origin` names it in errors) into a [`Transformer`]
/// called `name`.
///
/// Fields read: `architectures`, `hidden_size`, `num_hidden_layers`, `num_attention_heads`,
/// `num_key_value_heads` (default: `num_attention_heads`), `head_dim` (default: hidden /
/// heads), `intermediate_size`, `vocab_size`, `tie_word_embeddings` (default false),
/// `attention_bias` (Llama, Mistral; Qwen2 always has q/k/v biases), `mlp_bias` (default false),
/// `hidden_act` (silu, gelu, relu), `max_position_embeddings`.
///
/// # Errors
/// Malformed JSON (with line and column), an unsupported architecture (naming the supported
/// ones), or a field missing, of the wrong type, zero, negative or absurd (naming the field).
pub fn parse_config(text: &str, origin: &str, name: &str) -> Result<Transformer, InputError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        InputError::new(format!("{origin}: malformed JSON: {e}"))
            .with_hint("a Hugging Face config.json is one JSON object; check the file is complete")
    })?;
    parse_config_value(&value, origin, name)
}

/// Reads a `config.json` already parsed into JSON (`value`, a Hugging Face config given inline)
/// into a [`Transformer`] called `name`, as [`parse_config`] reads its text; the file system is
/// not touched. `origin` names the config in errors.
///
/// # Errors
/// A value that is not a JSON object, and every error of [`parse_config`] but malformed JSON.
pub fn parse_config_value(
    value: &Value,
    origin: &str,
    name: &str,
) -> Result<Transformer, InputError> {
    let Value::Object(obj) = value else {
        return Err(InputError::new(format!(
            "{origin}: expected a JSON object at the top level"
        ))
        .with_hint("a Hugging Face config.json is one JSON object `{ \"architectures\": [...], ... }`; pass the model's config.json, not a list or a value"));
    };
    let cfg = Fields { obj, origin };
    let arch = cfg.architecture()?;
    let builder = match arch.as_str() {
        "GPT2LMHeadModel" => gpt2(&cfg, name, &arch)?,
        "OPTForCausalLM" => opt(&cfg, name, &arch)?,
        _ => llama_family(&cfg, name, &arch)?,
    };
    builder.build().map_err(|e| {
        InputError::new(format!("{origin}: {e}"))
            .with_hint("fix the config: these fields come from the model's config.json")
    })
}

fn activation(cfg: &Fields, field: &str) -> Result<Activation, InputError> {
    Ok(match cfg.opt_str(field)?.as_deref() {
        None | Some("silu") | Some("swish") => Activation::Silu,
        Some("gelu") | Some("gelu_new") | Some("gelu_pytorch_tanh") | Some("gelu_fast") => {
            Activation::Gelu
        }
        Some("relu") => Activation::Relu,
        Some(other) => {
            return Err(cfg.error(
                field,
                &format!("unknown activation `{other}`"),
                "use silu, gelu or relu",
            ))
        }
    })
}

fn head_dim(cfg: &Fields, hidden: u64, heads: u64) -> Result<u64, InputError> {
    match cfg.opt_dim("head_dim")? {
        Some(hd) => Ok(hd),
        None if !hidden.is_multiple_of(heads) => Err(cfg.error(
            "head_dim",
            &format!(
                "is missing and hidden_size {hidden} is not divisible by num_attention_heads {heads}"
            ),
            "add `head_dim` to the config",
        )),
        None => Ok(hidden / heads),
    }
}

/// Llama, Mistral, Qwen2, Qwen3 and their mixture-of-experts kin (Mixtral, Qwen3-MoE,
/// DeepSeek-V3 with MLA).
fn llama_family(cfg: &Fields, name: &str, arch: &str) -> Result<TransformerBuilder, InputError> {
    let hidden = cfg.dim("hidden_size")?;
    let heads = cfg.dim("num_attention_heads")?;
    let kv_heads = cfg.opt_dim("num_key_value_heads")?.unwrap_or(heads);
    let qwen2 = arch == "Qwen2ForCausalLM";
    let qwen3 = arch.starts_with("Qwen3");
    let deepseek = arch == "DeepseekV3ForCausalLM";
    let attention_bias = qwen2 || cfg.opt_bool("attention_bias")?.unwrap_or(false);
    let mla = if deepseek {
        let q_lora_rank = cfg.opt_dim("q_lora_rank")?;
        Some(
            Mla::new(
                cfg.dim("kv_lora_rank")?,
                cfg.dim("qk_nope_head_dim")?,
                cfg.dim("qk_rope_head_dim")?,
                cfg.dim("v_head_dim")?,
            )
            .with_q_lora_rank(q_lora_rank),
        )
    } else {
        None
    };
    let head_dim = match mla {
        Some(m) => m.qk_head_dim(),
        None => head_dim(cfg, hidden, heads)?,
    };
    let moe = match arch {
        "MixtralForCausalLM" => Some(Moe::new(
            cfg.dim("num_local_experts")?,
            cfg.dim("num_experts_per_tok")?,
            cfg.dim("intermediate_size")?,
        )),
        "Qwen3MoeForCausalLM" => {
            if cfg.opt_dim("decoder_sparse_step")?.unwrap_or(1) != 1 {
                return Err(cfg.error(
                    "decoder_sparse_step",
                    "is not 1: MoE on every n-th block only is not modelled",
                    "only configs with every block a mixture of experts are supported",
                ));
            }
            if matches!(cfg.obj.get("mlp_only_layers"), Some(Value::Array(a)) if !a.is_empty()) {
                return Err(cfg.error(
                    "mlp_only_layers",
                    "lists dense blocks: mixing dense and MoE blocks this way is not modelled",
                    "use a config with an empty `mlp_only_layers`",
                ));
            }
            Some(Moe::new(
                cfg.dim("num_experts")?,
                cfg.dim("num_experts_per_tok")?,
                cfg.dim("moe_intermediate_size")?,
            ))
        }
        "DeepseekV3ForCausalLM" => {
            if cfg.opt_dim("moe_layer_freq")?.unwrap_or(1) != 1 {
                return Err(cfg.error(
                    "moe_layer_freq",
                    "is not 1: MoE on every n-th block only is not modelled",
                    "only configs with moe_layer_freq 1 are supported",
                ));
            }
            let moe = Moe::new(
                cfg.dim("n_routed_experts")?,
                cfg.dim("num_experts_per_tok")?,
                cfg.dim("moe_intermediate_size")?,
            );
            Some(
                moe.with_shared_experts(cfg.opt_count("n_shared_experts")?.unwrap_or(0))
                    .with_dense_layers(cfg.opt_count("first_k_dense_replace")?.unwrap_or(0))
                    .with_router_bias(cfg.opt_str("topk_method")?.as_deref() == Some("noaux_tc")),
            )
        }
        _ => None,
    };
    // Qwen2 and Qwen3 carry `sliding_window` with `use_sliding_window: false`.
    let window_used = cfg.opt_bool("use_sliding_window")?.unwrap_or(true);
    let sliding_window = if window_used {
        cfg.opt_dim("sliding_window")?
    } else {
        None
    };
    let layers = cfg.dim("num_hidden_layers")?;
    let intermediate = cfg.dim("intermediate_size")?;
    let vocab = cfg.dim("vocab_size")?;
    Ok(
        Transformer::builder(hidden, layers, heads, intermediate, vocab)
            .name(name)
            .architecture(arch)
            .kv_heads(kv_heads)
            .head_dim(head_dim)
            .tie_embeddings(cfg.opt_bool("tie_word_embeddings")?.unwrap_or(false))
            .qkv_bias(attention_bias)
            // Llama's `attention_bias` also gives o_proj a bias; Qwen2's o_proj has none.
            .o_bias(!qwen2 && attention_bias)
            .mlp_bias(cfg.opt_bool("mlp_bias")?.unwrap_or(false))
            .norm(NormKind::RmsNorm)
            .mlp(MlpKind::Gated)
            .activation(activation(cfg, "hidden_act")?)
            .max_position_embeddings(cfg.opt_dim("max_position_embeddings")?)
            .qk_norm(qwen3)
            .sliding_window(sliding_window)
            .moe(moe)
            .mla(mla)
            .naming(if arch == "MixtralForCausalLM" {
                Naming::Mixtral
            } else {
                Naming::Llama
            }),
    )
}

/// GPT-2 (`GPT2LMHeadModel`): `n_embd`, `n_layer`, `n_head`, `n_inner` (default 4·n_embd),
/// `n_positions` learned positions, LayerNorm, biases everywhere, GELU, q/k/v in one `c_attn`
/// GEMM, lm_head tied to the token embedding (Radford et al. 2019; Hugging Face
/// `modeling_gpt2.py`).
fn gpt2(cfg: &Fields, name: &str, arch: &str) -> Result<TransformerBuilder, InputError> {
    let hidden = cfg.dim("n_embd")?;
    let heads = cfg.dim("n_head")?;
    let positions = cfg.dim("n_positions")?;
    let layers = cfg.dim("n_layer")?;
    let head_dim = head_dim(cfg, hidden, heads)?;
    let intermediate = cfg.opt_dim("n_inner")?.unwrap_or(4 * hidden);
    let vocab = cfg.dim("vocab_size")?;
    Ok(
        Transformer::builder(hidden, layers, heads, intermediate, vocab)
            .name(name)
            .architecture(arch)
            .head_dim(head_dim)
            .tie_embeddings(cfg.opt_bool("tie_word_embeddings")?.unwrap_or(true))
            .qkv_bias(true)
            .o_bias(true)
            .mlp_bias(true)
            .norm(NormKind::LayerNorm)
            .mlp(MlpKind::Plain)
            .activation(activation(cfg, "activation_function")?)
            .max_position_embeddings(Some(positions))
            .positions(Positions::Learned { rows: positions })
            .naming(Naming::Gpt2),
    )
}

/// OPT (`OPTForCausalLM`, Zhang et al. 2022): `ffn_dim`, learned positions with an offset of 2
/// (`max_position_embeddings` + 2 rows), LayerNorm before each sublayer, biases (`enable_bias`),
/// ReLU MLP, tied lm_head.
fn opt(cfg: &Fields, name: &str, arch: &str) -> Result<TransformerBuilder, InputError> {
    let hidden = cfg.dim("hidden_size")?;
    let heads = cfg.dim("num_attention_heads")?;
    if let Some(p) = cfg.opt_dim("word_embed_proj_dim")? {
        if p != hidden {
            return Err(cfg.error(
                "word_embed_proj_dim",
                &format!(
                    "is {p}, not hidden_size {hidden}: project_in/project_out are not modelled"
                ),
                "only OPT configs with word_embed_proj_dim equal to hidden_size are supported",
            ));
        }
    }
    if cfg.opt_bool("do_layer_norm_before")? == Some(false) {
        return Err(cfg.error(
            "do_layer_norm_before",
            "is false: post-LayerNorm OPT (opt-350m) is not modelled",
            "only pre-LayerNorm OPT configs are supported",
        ));
    }
    let max_pos = cfg.dim("max_position_embeddings")?;
    let bias = cfg.opt_bool("enable_bias")?.unwrap_or(true);
    let layers = cfg.dim("num_hidden_layers")?;
    let head_dim = head_dim(cfg, hidden, heads)?;
    let intermediate = cfg.dim("ffn_dim")?;
    let vocab = cfg.dim("vocab_size")?;
    Ok(
        Transformer::builder(hidden, layers, heads, intermediate, vocab)
            .name(name)
            .architecture(arch)
            .head_dim(head_dim)
            .tie_embeddings(cfg.opt_bool("tie_word_embeddings")?.unwrap_or(true))
            .qkv_bias(bias)
            .o_bias(bias)
            .mlp_bias(bias)
            .norm(NormKind::LayerNorm)
            .mlp(MlpKind::Plain)
            .activation(activation(cfg, "activation_function")?)
            .max_position_embeddings(Some(max_pos))
            .positions(Positions::Learned { rows: max_pos + 2 })
            .naming(Naming::Opt),
    )
}

struct Fields<'a> {
    obj: &'a Map<String, Value>,
    origin: &'a str,
}

impl Fields<'_> {
    fn error(&self, field: &str, what: &str, hint: &str) -> InputError {
        InputError::new(format!("{}: field `{field}` {what}", self.origin)).with_hint(hint)
    }

    fn architecture(&self) -> Result<String, InputError> {
        let supported = SUPPORTED_ARCHITECTURES.join(", ");
        let archs = match self.obj.get("architectures") {
            Some(Value::Array(a)) => a,
            Some(_) => {
                return Err(self.error(
                    "architectures",
                    "must be a list of class names",
                    &format!("e.g. [\"LlamaForCausalLM\"]; supported: {supported}"),
                ))
            }
            None => {
                return Err(self.error(
                    "architectures",
                    "is missing",
                    &format!(
                    "add e.g. \"architectures\": [\"LlamaForCausalLM\"]; supported: {supported}"
                ),
                ))
            }
        };
        let names: Vec<&str> = archs.iter().filter_map(Value::as_str).collect();
        names
            .iter()
            .find(|n| SUPPORTED_ARCHITECTURES.contains(n))
            .map(|n| n.to_string())
            .ok_or_else(|| {
                self.error(
                    "architectures",
                    &format!("names an unsupported architecture `{}`", names.join(", ")),
                    &format!("supported architectures: {supported}"),
                )
            })
    }

    fn opt_dim(&self, field: &str) -> Result<Option<u64>, InputError> {
        let v = match self.obj.get(field) {
            None | Some(Value::Null) => return Ok(None),
            Some(v) => v,
        };
        let hint = "it must be a positive integer, as in the model's original config.json";
        if let Some(n) = v.as_u64() {
            if n == 0 {
                return Err(self.error(field, "must be positive, got 0", hint));
            }
            if n > MAX_DIM {
                return Err(self.error(
                    field,
                    &format!("is {n}, beyond the largest accepted ({MAX_DIM})"),
                    hint,
                ));
            }
            return Ok(Some(n));
        }
        if let Some(f) = v.as_f64() {
            if f <= 0.0 {
                return Err(self.error(field, &format!("must be positive, got {v}"), hint));
            }
            return Err(self.error(field, &format!("must be an integer, got {v}"), hint));
        }
        Err(self.error(field, &format!("must be a positive integer, got {v}"), hint))
    }

    /// A count that may be zero (`n_shared_experts`, `first_k_dense_replace`).
    fn opt_count(&self, field: &str) -> Result<Option<u64>, InputError> {
        match self.obj.get(field) {
            Some(Value::Number(n)) if n.as_u64() == Some(0) => Ok(Some(0)),
            _ => self.opt_dim(field),
        }
    }

    fn dim(&self, field: &str) -> Result<u64, InputError> {
        self.opt_dim(field)?.ok_or_else(|| {
            self.error(
                field,
                "is missing",
                "the architecture needs it: add it from the model's original config.json",
            )
        })
    }

    fn opt_bool(&self, field: &str) -> Result<Option<bool>, InputError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.error(
                field,
                &format!("must be true or false, got {v}"),
                "use a JSON boolean",
            )),
        }
    }

    fn opt_str(&self, field: &str) -> Result<Option<String>, InputError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.error(
                field,
                &format!("must be a string, got {v}"),
                "use a JSON string",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Llama-2-7B's config.json, as the catalog embeds it.
    const LLAMA: &str = include_str!("../catalog/models/llama-2-7b.json");

    fn with(field: &str, value: &str) -> Result<String, serde_json::Error> {
        let mut v: Value = serde_json::from_str(LLAMA)?;
        v[field] = serde_json::from_str(value)?;
        Ok(v.to_string())
    }

    #[test]
    fn presets_match_official_parameter_counts() -> Result<(), Box<dyn std::error::Error>> {
        // Counts from shared/models/README.md ("computed" column), within 0.5 %.
        for (id, count) in [
            ("llama-2-7b", 6_738_415_616u64),
            ("llama-2-13b", 13_015_864_320),
            ("llama-2-70b", 68_976_648_192),
            ("llama-3.1-8b", 8_030_261_248),
            ("llama-3.1-70b", 70_553_706_496),
        ] {
            let m = load_model(id)?;
            let err = (m.parameters() as f64 - count as f64).abs() / count as f64;
            assert!(err < 0.005, "{id}: {} vs {count}", m.parameters());
        }
        Ok(())
    }

    #[test]
    fn llama3_8b_reads_gqa() -> Result<(), Box<dyn std::error::Error>> {
        let m = load_model("llama-3.1-8b")?;
        assert_eq!((m.heads, m.kv_heads, m.head_dim), (32, 8, 128));
        assert_eq!(m.intermediate, 14336);
        Ok(())
    }

    #[test]
    fn hand_built_configs_from_the_readme_table() -> Result<(), Box<dyn std::error::Error>> {
        // Mistral-7B-v0.1 and Qwen2.5-72B key fields (shared/models/README.md table).
        let mistral = r#"{"architectures":["MistralForCausalLM"],"hidden_size":4096,"num_hidden_layers":32,
            "num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000}"#;
        let m = parse_config(mistral, "mistral", "mistral")?;
        assert_eq!(m.parameters(), 7_241_732_096);
        let qwen = r#"{"architectures":["Qwen2ForCausalLM"],"hidden_size":8192,"num_hidden_layers":80,
            "num_attention_heads":64,"num_key_value_heads":8,"intermediate_size":29568,"vocab_size":152064}"#;
        let q = parse_config(qwen, "qwen", "qwen")?;
        assert!(q.qkv_bias && !q.o_bias);
        assert_eq!(q.parameters(), 72_706_203_648);
        Ok(())
    }

    #[test]
    fn bad_fields_are_named() -> Result<(), Box<dyn std::error::Error>> {
        let cases = [
            (with("hidden_size", "0")?, "`hidden_size`"),
            (with("hidden_size", "-4096")?, "`hidden_size`"),
            (with("hidden_size", "4096.5")?, "`hidden_size`"),
            (with("hidden_size", "\"big\"")?, "`hidden_size`"),
            (with("num_key_value_heads", "5")?, "`num_key_value_heads`"),
            (with("architectures", "[\"BertModel\"]")?, "`architectures`"),
            (with("tie_word_embeddings", "1")?, "`tie_word_embeddings`"),
            (with("vocab_size", "1e30")?, "`vocab_size`"),
        ];
        for (text, needle) in cases {
            let e = parse_config(&text, "cfg.json", "m").unwrap_err();
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
            assert!(e.message.starts_with("cfg.json"), "{}", e.message);
        }
        let mut v: Value = serde_json::from_str(LLAMA)?;
        v.as_object_mut()
            .ok_or("expected a value, got None")?
            .remove("vocab_size");
        let e = parse_config(&v.to_string(), "cfg.json", "m").unwrap_err();
        assert!(e.message.contains("`vocab_size` is missing"));
        let e = parse_config("{\"hidden_size\": 4", "cfg.json", "m").unwrap_err();
        assert!(e.message.contains("malformed JSON"));
        let e = parse_config(&with("architectures", "[\"BertModel\"]")?, "c", "m").unwrap_err();
        assert!(e
            .hint
            .ok_or("expected a value, got None")?
            .contains("LlamaForCausalLM"));
        Ok(())
    }

    #[test]
    fn sizes_whose_counts_overflow_are_refused() -> Result<(), Box<dyn std::error::Error>> {
        // Each size at the 2^24 limit is accepted alone; hidden, layers and intermediate all
        // at 2^24 give 3 · 2^72 ≈ 1.4e22 MLP weights, past u64 (≈ 1.8e19): refused with the
        // bound named, never a wrapped count.
        let big = 1u64 << 24;
        let mut v: Value = serde_json::from_str(LLAMA)?;
        for f in [
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "intermediate_size",
        ] {
            v[f] = big.into();
        }
        let e = parse_config(&v.to_string(), "big.json", "m").unwrap_err();
        assert!(
            e.message.starts_with("big.json: field `parameters`"),
            "{}",
            e.message
        );
        let max = roofline_core::model::MAX_PARAMETERS.to_string();
        assert!(e.message.contains(&max), "{}", e.message);
        assert!(e.hint.is_some());
        // One past 2^24 is refused by the reader, naming the field.
        let e =
            parse_config(&with("vocab_size", &(MAX_DIM + 1).to_string())?, "c", "m").unwrap_err();
        assert!(
            e.message.contains("`vocab_size` is 16777217"),
            "{}",
            e.message
        );
        Ok(())
    }

    #[test]
    fn unknown_preset_suggests() -> Result<(), Box<dyn std::error::Error>> {
        let e = load_model("llama-2-7").unwrap_err();
        assert!(e
            .hint
            .ok_or("expected a value, got None")?
            .contains("llama-2-7b"));
        Ok(())
    }
}
