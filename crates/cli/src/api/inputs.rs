//! A request's model and chip: an id or a path as the CLI takes it, or the object itself given
//! inline (a Hugging Face `config.json`; a chip in the catalog's schema), parsed in memory.

use super::ApiError;
use roofline_core::device::Device;
use roofline_core::model::Transformer;
use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// A model: a preset id or a path (a string), or a Hugging Face `config.json` (an object).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ModelInput {
    /// A preset id (`llama-2-7b`, see `roofline models`), a config.json, or a folder holding
    /// one.
    Id(String),
    /// A Hugging Face `config.json` given inline; the model is named by the last part of its
    /// `_name_or_path`, else `model`.
    Config(Map<String, Value>),
}

/// A chip: a catalog id or a chip file's path (a string), or a chip (an object: the catalog's
/// TOML schema as JSON, `crates/inputs/catalog/hardware/h100-sxm.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ChipInput {
    /// A catalog id (`h100-sxm`, see `roofline hardware list`) or a chip file in the catalog's
    /// TOML format.
    Id(String),
    /// A chip given inline: the tables and keys of a chip file.
    Chip(Map<String, Value>),
}

impl<'de> Deserialize<'de> for ModelInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) => Ok(ModelInput::Id(s)),
            Value::Object(m) => Ok(ModelInput::Config(m)),
            other => Err(D::Error::custom(format!(
                "expected a preset id, a path or a config.json object, got {other}"
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for ChipInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) => Ok(ChipInput::Id(s)),
            Value::Object(m) => Ok(ChipInput::Chip(m)),
            other => Err(D::Error::custom(format!(
                "expected a chip id, a path or a chip object, got {other}"
            ))),
        }
    }
}

impl ModelInput {
    /// The model, read from the catalog, a file, or the object.
    ///
    /// # Errors
    /// The CLI's error for an unknown preset or an unreadable file; for an object, the error
    /// of its config, said of field `field`.
    pub fn load(&self, field: &'static str) -> Result<Transformer, ApiError> {
        let model = match self {
            ModelInput::Id(s) => roofline_inputs::config::load_model(s),
            ModelInput::Config(m) => roofline_inputs::config::parse_config_value(
                &Value::Object(m.clone()),
                &format!("the config.json in `{field}`"),
                &self.name(),
            ),
        };
        model.map_err(|e| ApiError::new(Some(field), e.message, e.hint))
    }

    /// The model as a command line names it: the id or path, or an inline config's name.
    pub fn name(&self) -> String {
        match self {
            ModelInput::Id(s) => s.clone(),
            ModelInput::Config(m) => {
                let name: String = m
                    .get("_name_or_path")
                    .and_then(Value::as_str)
                    .map(|s| s.trim_end_matches(['/', '\\']))
                    .and_then(|s| s.rsplit(['/', '\\']).next())
                    .unwrap_or("")
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                if name.is_empty() {
                    "model".into()
                } else {
                    name
                }
            }
        }
    }
}

impl ChipInput {
    /// The chip, read from the catalog, a file, or the object.
    ///
    /// # Errors
    /// The CLI's error for an unknown id or an unreadable file; for an object, the error of
    /// its figures, said of field `field`.
    pub fn load(&self, field: &'static str) -> Result<Device, ApiError> {
        let chip = match self {
            ChipInput::Id(s) => roofline_inputs::hardware::find_device(s),
            ChipInput::Chip(m) => roofline_inputs::hardware::parse_device_value(
                Value::Object(m.clone()),
                &format!("the chip in `{field}`"),
            ),
        };
        chip.map_err(|e| ApiError::new(Some(field), e.message, e.hint))
    }

    /// The chip as a command line names it: the id or path, or an inline chip's `id`.
    pub fn name(&self) -> String {
        match self {
            ChipInput::Id(s) => s.clone(),
            ChipInput::Chip(m) => m
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("chip")
                .to_string(),
        }
    }
}
