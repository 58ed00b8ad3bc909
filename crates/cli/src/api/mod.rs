//! The typed API: each command as a function from a request to its JSON document, with no
//! command line in between. [`analyze`] takes an [`AnalyzeRequest`] and returns the document
//! `roofline analyze --format json` writes ([`AnalyzeDocument`]); the CLI, the local page and
//! the Python bindings all call it.
//!
//! A request is read by serde (`deny_unknown_fields`), every field defaulting to its flag's
//! default; [`parse_request`] reads one from JSON text and names the field at fault in its
//! [`ApiError`]. Models and chips are ids or paths, or objects given inline (a Hugging Face
//! `config.json`, a chip in the catalog's schema), parsed without touching the file system.
//! [`request_schema`] is the JSON Schema of a request (`docs/schema/requests/`).

pub mod analyze;
pub(crate) mod command;
mod de;
mod inputs;
mod request;

pub use analyze::{analyze, AnalyzeDocument, AnalyzeRequest, StageChoice};
pub use de::MemoryReserve;
pub use inputs::{ChipInput, ModelInput};

use crate::error::CliError;
use schemars::{JsonSchema, Schema};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// A request refused or a computation that failed: the CLI's message and hint, and the
/// request's field at fault where one is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ApiError {
    /// The request's field at fault (`batch`, `model`), where one is.
    pub field: Option<String>,
    /// What is wrong: the CLI's `error:` line.
    pub message: String,
    /// What to do: the CLI's `hint:` line, when there is one.
    pub hint: Option<String>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error: {}", self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\nhint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    /// An error of `field` with `message` and `hint`.
    pub fn new(field: Option<&str>, message: impl Into<String>, hint: Option<String>) -> Self {
        ApiError {
            field: field.map(str::to_string),
            message: crate::error::shorten(&message.into()),
            hint: hint.map(|h| crate::error::shorten_hint(&h)),
        }
    }

    /// The CLI's error `e` as the API's: the field is the flag the message starts with
    /// (`` `--tp`: … `` is `tp`), else `field`.
    pub(crate) fn from_cli(e: CliError, field: Option<&str>) -> Self {
        let named = flag_field(&e.message);
        Self::new(named.as_deref().or(field), e.message, e.hint)
    }
}

/// The field a CLI message names first: `` `--seq-len`: … `` or `` `--tp 4 --pp 2`: … `` gives
/// `seq_len` or `tp`.
fn flag_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("`--")?;
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))?;
    Some(rest[..end].replace('-', "_"))
}

/// `map_err` of a CLI step whose fault lies in `field`.
pub(crate) fn at(field: &'static str) -> impl Fn(CliError) -> ApiError {
    move |e| ApiError::from_cli(e, Some(field))
}

impl From<ApiError> for CliError {
    fn from(e: ApiError) -> Self {
        CliError::bad_input(e.message, e.hint)
    }
}

/// Reads a request of type `T` from JSON text: a JSON object whose fields are `T`'s (each
/// optional). An error names the field at fault: an unknown field, or a value of the wrong
/// type or out of range.
///
/// # Errors
/// Text that is not a JSON object, or a field `T` refuses.
pub fn parse_request<T: DeserializeOwned>(json: &str) -> Result<T, ApiError> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| {
        ApiError::new(
            None,
            format!("the request is not JSON: {e}"),
            Some(REQUEST_HINT.into()),
        )
    })?;
    request_from_value(value)
}

/// Where a request's fields are described.
const REQUEST_HINT: &str =
    "send a JSON object of the request's fields, each optional; see its JSON Schema \
     (docs/schema/requests/)";

/// Reads a request of type `T` from a JSON value, as [`parse_request`] reads its text.
///
/// # Errors
/// A value that is not an object, or a field `T` refuses.
pub fn request_from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, ApiError> {
    let serde_json::Value::Object(map) = value else {
        return Err(ApiError::new(
            None,
            "the request is not a JSON object",
            Some(REQUEST_HINT.into()),
        ));
    };
    match serde_json::from_value::<T>(serde_json::Value::Object(map.clone())) {
        Ok(t) => Ok(t),
        Err(e) => Err(field_error::<T>(&map, &e.to_string())),
    }
}

/// The error of a request serde refused with `message`, naming its field: the unknown field
/// serde names, or the first field that alone is refused (every field has a default, so that a
/// request of that field alone is refused only for that field's value).
fn field_error<T: DeserializeOwned>(
    map: &serde_json::Map<String, serde_json::Value>,
    message: &str,
) -> ApiError {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let name = rest.split('`').next().unwrap_or_default();
        let known = rest
            .split_once("expected one of ")
            .map(|(_, k)| k.replace('`', ""))
            .unwrap_or_default();
        return ApiError::new(
            Some(name),
            format!("unknown field `{name}`"),
            Some(format!("the fields are {known}")),
        );
    }
    for (key, value) in map {
        let alone = serde_json::Map::from_iter([(key.clone(), value.clone())]);
        if let Err(e) = serde_json::from_value::<T>(serde_json::Value::Object(alone)) {
            return ApiError::new(
                Some(key),
                format!("`{key}`: {e}"),
                Some(REQUEST_HINT.into()),
            );
        }
    }
    ApiError::new(None, message, Some(REQUEST_HINT.into()))
}

/// The JSON Schema (draft 2020-12) of request type `T`, as it is read: every field optional,
/// with its default; no field beyond those listed.
pub fn request_schema<T: JsonSchema>() -> Schema {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_names_the_flag_it_starts_with() {
        assert_eq!(flag_field("`--seq-len`: must be"), Some("seq_len".into()));
        assert_eq!(flag_field("`--tp 4 --pp 2`: the layout"), Some("tp".into()));
        assert_eq!(flag_field("unknown model `x`"), None);
    }
}
