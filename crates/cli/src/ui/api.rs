//! The JSON API: a request's settings are read into the typed request of `analyze`
//! ([`crate::api::AnalyzeRequest`]) and computed by the typed call, no command line between;
//! a refused request or a failed analysis is a 400 with the CLI's message and hint and the
//! field at fault. The listings run their `roofline` command in-process.

use crate::api::{AnalyzeRequest, ApiError};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};
use std::ffi::OsString;
use std::path::Path;

/// A request the API refuses: 400 with this message and hint, and the field at fault.
#[derive(Debug)]
struct BadRequest {
    field: Option<String>,
    message: String,
    hint: String,
}

fn bad(message: impl Into<String>, hint: impl Into<String>) -> BadRequest {
    BadRequest {
        field: None,
        message: message.into(),
        hint: hint.into(),
    }
}

impl From<ApiError> for BadRequest {
    fn from(e: ApiError) -> Self {
        BadRequest {
            field: e.field,
            message: e.message,
            hint: e
                .hint
                .unwrap_or_else(|| "see /openapi.json for each field".into()),
        }
    }
}

impl BadRequest {
    /// The 400 answer.
    fn answer(&self) -> Response {
        respond(
            StatusCode::BAD_REQUEST,
            serde_json::json!({ "error": self.message, "hint": self.hint, "field": self.field }),
        )
    }
}

/// `body` as JSON with `status`.
fn respond(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// `{"error": message, "hint": hint}` with `status`.
pub(super) fn error(status: StatusCode, message: &str, hint: Option<&str>) -> Response {
    let body = serde_json::json!({ "error": message, "hint": hint });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The command's output as the answer (`content_type`), or its failure: exit code 2 (bad
/// input) is a 400, any other a 500, each with the CLI's message and hint.
fn answer(argv: &[OsString], content_type: &'static str) -> Response {
    let mut out = Vec::new();
    match crate::run_captured(argv, &mut out) {
        Ok(()) => ok(content_type, out),
        Err(f) => {
            let status = if f.code == 2 {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::INTERNAL_SERVER_ERROR
            };
            error(status, &f.message, f.hint.as_deref())
        }
    }
}

/// A 200 answer of `content_type`, never cached.
fn ok(content_type: &'static str, body: Vec<u8>) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// `GET /api/models`, `/api/hardware`, `/api/systems`: the command's JSON listing.
pub(super) fn listing(words: &[&str]) -> Response {
    let argv: Vec<OsString> = std::iter::once("roofline")
        .chain(words.iter().copied())
        .chain(["--format", "json"])
        .map(OsString::from)
        .collect();
    answer(&argv, "application/json")
}

/// A body that could not be read (over the size limit, a broken connection) as a JSON error
/// with the status axum gives it (413 for a body over the limit).
fn body_error(e: &BytesRejection) -> Response {
    error(
        e.status(),
        &format!("the request body could not be read: {}", e.body_text()),
        Some("send the settings as a JSON object of a few hundred bytes (a config.json inline stays under 2 MB)"),
    )
}

/// `POST /api/analyze`: the settings as the typed request of `analyze`; its document (that of
/// `roofline analyze … --format json`) as the answer.
pub(super) async fn analyze(body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(e) => return body_error(&e),
    };
    let run = || -> Result<Response, BadRequest> {
        let request = request(object(&body)?)?;
        let doc = crate::api::analyze(&request)?;
        Ok(ok("application/json", json_bytes(&doc)?))
    };
    run().unwrap_or_else(|b| b.answer())
}

/// A document as `--format json` writes it.
fn json_bytes<T: serde::Serialize>(doc: &T) -> Result<Vec<u8>, BadRequest> {
    let mut out = Vec::new();
    roofline_report::doc::write_json(doc, &mut out)
        .map_err(|e| bad(format!("cannot write the document: {e}"), "retry"))?;
    Ok(out)
}

/// `POST /api/explain`: the settings and `operator` as `roofline analyze … --explain OPERATOR`,
/// JSON (the default) or the CLI's text (`"format": "text"`).
pub(super) async fn explain(body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(e) => return body_error(&e),
    };
    let run = || -> Result<Response, BadRequest> {
        let mut settings = object(&body)?;
        let (format, content_type) = match settings.remove("format") {
            None | Some(Value::Null) => (roofline_report::Format::Json, "application/json"),
            Some(Value::String(s)) if s == "json" => {
                (roofline_report::Format::Json, "application/json")
            }
            Some(Value::String(s)) if s == "text" => {
                (roofline_report::Format::Table, "text/plain; charset=utf-8")
            }
            Some(other) => {
                return Err(bad(
                    format!("`format` must be \"json\" or \"text\", got {other}"),
                    "leave it out for JSON",
                ))
            }
        };
        let operator = match settings.remove("operator") {
            Some(Value::String(s)) if !s.is_empty() => s,
            _ => {
                return Err(bad(
                    "`operator` is missing: the operator to derive",
                    "give an operator's `name` from the analysis (`q_proj`)",
                ))
            }
        };
        let request = request(settings)?;
        let mut out = Vec::new();
        crate::api::analyze::explain(&request, &operator, format, &mut out)
            .map_err(BadRequest::from)?;
        Ok(ok(content_type, out))
    };
    run().unwrap_or_else(|b| b.answer())
}

/// The request body as a JSON object.
fn object(body: &[u8]) -> Result<Map<String, Value>, BadRequest> {
    let hint = "send a JSON object of settings, `{\"model\": \"llama-2-7b\", \"batch\": 8}`; see /openapi.json";
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(bad("the request body is not a JSON object", hint)),
        Err(e) => Err(bad(format!("the request body is not JSON: {e}"), hint)),
    }
}

/// The typed request of `settings` (a null field is its default): a model, chip or system given by name must be a catalog
/// id (the API reads no files of this machine); a config.json or a chip goes inline.
fn request(mut settings: Map<String, Value>) -> Result<AnalyzeRequest, BadRequest> {
    // A field sent as null is left out: its default.
    settings.retain(|_, v| !v.is_null());
    for field in ["model", "hardware", "system"] {
        if let Some(Value::String(s)) = settings.get(field) {
            catalog_id(field, s)?;
        }
    }
    Ok(crate::api::request_from_value(Value::Object(settings))?)
}

/// Refuses a `field` value the CLI would read as a file of this machine: the API takes catalog
/// ids (and config.json objects) only.
fn catalog_id(field: &str, s: &str) -> Result<(), BadRequest> {
    let lower = s.to_ascii_lowercase();
    let path_like = s.is_empty()
        || s.starts_with(['.', '-', '~'])
        || s.contains(['/', '\\', ':'])
        || [".json", ".toml", ".log", ".csv", ".txt"]
            .iter()
            .any(|e| lower.ends_with(e))
        || Path::new(s).exists();
    if path_like {
        let list = if field == "model" {
            "GET /api/models lists the presets; send a config.json as an object in `model`"
        } else if field == "system" {
            "GET /api/systems lists the systems"
        } else {
            "GET /api/hardware lists the chips"
        };
        return Err(BadRequest {
            field: Some(field.into()),
            ..bad(
                format!("`{field}`: `{s}` is not a catalog id (the API reads no files)"),
                list,
            )
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(json: &str) -> Result<Map<String, Value>, Box<dyn std::error::Error>> {
        object(json.as_bytes()).map_err(|b| b.message.into())
    }

    #[test]
    fn settings_become_the_request() -> Result<(), Box<dyn std::error::Error>> {
        let s = settings(
            r#"{"model": "llama-3.1-8b", "hardware": "h100-sxm", "batch": 8, "stage": "decode",
                "flash_attention": true, "sequence_parallel": false, "fusion": null}"#,
        )?;
        let r = request(s).map_err(|b| b.message)?;
        assert_eq!(r.model, crate::api::ModelInput::Id("llama-3.1-8b".into()));
        assert_eq!(r.batch, 8);
        assert_eq!(r.stage, crate::api::StageChoice::Decode);
        assert_eq!(r.seq_len, AnalyzeRequest::default().seq_len);
        Ok(())
    }

    #[test]
    fn refuses_unknown_fields_wrong_types_and_files() -> Result<(), Box<dyn std::error::Error>> {
        for (json, field, needle) in [
            (r#"{"batsh": 8}"#, "batsh", "unknown field `batsh`"),
            (
                r#"{"flash_attention": "yes"}"#,
                "flash_attention",
                "`flash_attention`",
            ),
            (r#"{"batch": [8]}"#, "batch", "`batch`"),
            (
                r#"{"model": "/etc/passwd"}"#,
                "model",
                "`model`: `/etc/passwd` is not a catalog id",
            ),
            (
                r#"{"hardware": "chip.toml"}"#,
                "hardware",
                "`hardware`: `chip.toml` is not a catalog id",
            ),
            (
                r#"{"model": 7}"#,
                "model",
                "a preset id, a path or a config.json object",
            ),
        ] {
            let s = settings(json)?;
            match request(s) {
                Ok(_) => return Err(format!("{json} was taken").into()),
                Err(b) => {
                    assert!(b.message.contains(needle), "{json}: {}", b.message);
                    assert_eq!(b.field.as_deref(), Some(field), "{json}");
                }
            }
        }
        for body in ["[1]", "not json"] {
            assert!(object(body.as_bytes()).is_err(), "{body}");
        }
        Ok(())
    }
}
