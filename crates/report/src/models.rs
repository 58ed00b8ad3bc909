//! Rendering of `roofline models`: the embedded presets.

use crate::doc::models::{ModelDoc, ModelsDoc};
use crate::doc::{write_json, SchemaVersion};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::model::Transformer;
use std::io::Write;

/// One line per model: id, architecture, parameters, shapes, and the KV-cache elements per token
/// per layer as the model stores them (MLA: the latent and the rotary key, not heads × head dim).
///
/// # Errors
/// A failed write.
pub fn write_models(
    models: &[Transformer],
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Json => {
            let doc = ModelsDoc {
                schema_version: SchemaVersion,
                models: models.iter().map(ModelDoc::of).collect(),
            };
            write_json(&doc, out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "name",
                "architecture",
                "parameters",
                "active_parameters",
                "hidden_size",
                "num_hidden_layers",
                "num_attention_heads",
                "num_key_value_heads",
                "head_dim",
                "intermediate_size",
                "vocab_size",
                "kv_cache_elements_per_token_per_layer",
            ])?;
            for m in models {
                w.write_record([
                    m.name.clone(),
                    m.architecture.clone(),
                    m.parameters().to_string(),
                    m.active_parameters().to_string(),
                    m.hidden.to_string(),
                    m.layers.to_string(),
                    m.heads.to_string(),
                    m.kv_heads.to_string(),
                    m.head_dim.to_string(),
                    m.intermediate.to_string(),
                    m.vocab.to_string(),
                    m.kv_elements_per_token().to_string(),
                ])?;
            }
            w.flush()?;
        }
        Format::Table => {
            let mut t = new_table(&[
                "preset",
                "architecture",
                "parameters",
                "active",
                "layers",
                "hidden",
                "heads",
                "kv heads",
                "head dim",
                "ffn",
                "vocab",
                "KV elems/token/layer",
            ]);
            for m in models {
                t.add_row(vec![
                    m.name.clone(),
                    m.architecture.clone(),
                    format!("{}", m.parameters()),
                    format!("{}", m.active_parameters()),
                    m.layers.to_string(),
                    m.hidden.to_string(),
                    m.heads.to_string(),
                    m.kv_heads.to_string(),
                    m.head_dim.to_string(),
                    m.intermediate.to_string(),
                    m.vocab.to_string(),
                    m.kv_elements_per_token().to_string(),
                ]);
            }
            align_right_from(&mut t, 2);
            writeln!(out, "{t}")?;
            writeln!(
                out,
                "KV elems/token/layer: elements the KV cache stores per token in each layer: \
                 2 × kv heads × head dim (keys and values), or with MLA the latent and the rotary key"
            )?;
            for m in models.iter().filter(|m| m.variant.mla.is_some()) {
                writeln!(
                    out,
                    "{}: {} = {} (not 2 × {} heads × {})",
                    m.name,
                    m.kv_layout(),
                    m.kv_elements_per_token(),
                    m.kv_heads,
                    m.head_dim
                )?;
            }
        }
    }
    Ok(())
}
