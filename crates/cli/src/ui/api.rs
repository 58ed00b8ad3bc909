//! The JSON API: a request's settings become the argv of a `roofline` command, run in-process;
//! its output is the answer, its error (message and hint) a 400 (bad input) or a 500.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};
use std::ffi::OsString;
use std::path::Path;

/// How a setting reaches the command line.
#[derive(Clone, Copy)]
enum Flag {
    /// `--flag=VALUE`, from a string or a number.
    Value(&'static str),
    /// `--flag` when `true`.
    Switch(&'static str),
    /// The first flag when `true`, the second when `false`.
    Toggle(&'static str, &'static str),
    /// `--flag=ID`: a catalog id, never a file of this machine.
    Id(&'static str),
}

/// The settings `POST /api/analyze` takes besides `model`, and their flags.
const SETTINGS: &[(&str, Flag)] = &[
    ("hardware", Flag::Id("--hardware")),
    ("system", Flag::Id("--system")),
    ("stage", Flag::Value("--stage")),
    ("batch", Flag::Value("--batch")),
    ("seq_len", Flag::Value("--seq-len")),
    ("context", Flag::Value("--context")),
    ("precision", Flag::Value("--precision")),
    ("weight_precision", Flag::Value("--weight-precision")),
    ("kv_precision", Flag::Value("--kv-precision")),
    (
        "flash_attention",
        Flag::Toggle("--flash-attention", "--no-flash-attention"),
    ),
    ("logits", Flag::Value("--logits")),
    ("memory_reserve", Flag::Value("--memory-reserve")),
    ("fusion", Flag::Value("--fusion")),
    ("devices", Flag::Value("--devices")),
    ("tp", Flag::Value("--tp")),
    ("pp", Flag::Value("--pp")),
    ("ep", Flag::Value("--ep")),
    ("cp", Flag::Value("--cp")),
    ("sequence_parallel", Flag::Switch("--sequence-parallel")),
    ("expert_imbalance", Flag::Value("--expert-imbalance")),
];

/// A request the API refuses before running anything: 400 with this message and hint.
#[derive(Debug)]
struct BadRequest {
    message: String,
    hint: String,
}

fn bad(message: impl Into<String>, hint: impl Into<String>) -> BadRequest {
    BadRequest {
        message: message.into(),
        hint: hint.into(),
    }
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
fn answer(argv: &[OsString], content_type: &'static str, upload: Option<&Upload>) -> Response {
    let mut out = Vec::new();
    match crate::run_captured(argv, &mut out) {
        Ok(()) => (
            [
                (header::CONTENT_TYPE, content_type),
                (header::CACHE_CONTROL, "no-store"),
            ],
            out,
        )
            .into_response(),
        Err(f) => {
            let status = if f.code == 2 {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::INTERNAL_SERVER_ERROR
            };
            let unhide = |s: &str| upload.map_or_else(|| s.to_string(), |u| u.unhide(s));
            error(
                status,
                &unhide(&f.message),
                f.hint.as_deref().map(unhide).as_deref(),
            )
        }
    }
}

/// `GET /api/models`, `/api/hardware`, `/api/systems`: the command's JSON listing.
pub(super) fn listing(words: &[&str]) -> Response {
    let argv: Vec<OsString> = std::iter::once("roofline")
        .chain(words.iter().copied())
        .chain(["--format", "json"])
        .map(OsString::from)
        .collect();
    answer(&argv, "application/json", None)
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

/// `POST /api/analyze`: the settings as `roofline analyze … --format json`.
pub(super) async fn analyze(body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(e) => return body_error(&e),
    };
    let run = || -> Result<Response, BadRequest> {
        let settings = object(&body)?;
        let (argv, upload) = analyze_argv(&settings, &[], "json")?;
        Ok(answer(&argv, "application/json", upload.as_ref()))
    };
    run().unwrap_or_else(|b| error(StatusCode::BAD_REQUEST, &b.message, Some(&b.hint)))
}

/// `POST /api/explain`: the settings and `operator` as `roofline analyze … --explain OPERATOR`,
/// JSON (the default) or the CLI's text (`"format": "text"`).
pub(super) async fn explain(body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body {
        Ok(b) => b,
        Err(e) => return body_error(&e),
    };
    let run = || -> Result<Response, BadRequest> {
        let settings = object(&body)?;
        let (format, content_type) = match settings.get("format") {
            None | Some(Value::Null) => ("json", "application/json"),
            Some(Value::String(s)) if s == "json" => ("json", "application/json"),
            Some(Value::String(s)) if s == "text" => ("table", "text/plain; charset=utf-8"),
            Some(other) => {
                return Err(bad(
                    format!("`format` must be \"json\" or \"text\", got {other}"),
                    "leave it out for JSON",
                ))
            }
        };
        let operator = match settings.get("operator") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => {
                return Err(bad(
                    "`operator` is missing: the operator to derive",
                    "give an operator's `name` from the analysis (`q_proj`)",
                ))
            }
        };
        let (argv, upload) = analyze_argv(&settings, &["operator", "format"], format)?;
        let mut argv = argv;
        // Before `--`, which ends the flags.
        let at = argv.len() - 2;
        argv.insert(at, OsString::from(format!("--explain={operator}")));
        Ok(answer(&argv, content_type, upload.as_ref()))
    };
    run().unwrap_or_else(|b| error(StatusCode::BAD_REQUEST, &b.message, Some(&b.hint)))
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

/// A config.json sent inline, written where the CLI reads it: `DIR/NAME/config.json`, NAME
/// the model's name in the answer. Removed when dropped.
struct Upload {
    dir: tempfile::TempDir,
    folder: std::path::PathBuf,
}

impl Upload {
    fn write(config: &Map<String, Value>) -> Result<Self, BadRequest> {
        // The name the analysis shows: the last part of Hugging Face's `_name_or_path`.
        let name: String = config
            .get("_name_or_path")
            .and_then(Value::as_str)
            .and_then(|s| s.rsplit(['/', '\\']).next())
            .unwrap_or("")
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect();
        let name = match name.trim_start_matches('.') {
            "" => "uploaded-model".to_string(),
            n => n.to_string(),
        };
        let fault = |e: std::io::Error| {
            bad(
                format!("cannot write the uploaded config.json to a temporary folder: {e}"),
                "check that the temporary folder (TMPDIR) is writable",
            )
        };
        let dir = tempfile::tempdir().map_err(fault)?;
        let folder = dir.path().join(name);
        std::fs::create_dir(&folder).map_err(fault)?;
        let text = Value::Object(config.clone()).to_string();
        std::fs::write(folder.join("config.json"), text).map_err(fault)?;
        Ok(Self { dir, folder })
    }

    /// `s` with the temporary paths said as what they are.
    fn unhide(&self, s: &str) -> String {
        let file = self.folder.join("config.json");
        s.replace(&file.display().to_string(), "the uploaded config.json")
            .replace(&self.folder.display().to_string(), "the uploaded model")
            .replace(&self.dir.path().display().to_string(), "the upload")
    }
}

/// The argv of `roofline analyze` for `settings` (each of [`SETTINGS`], `model`, and the
/// fields of `extra`, which the caller reads), ending `--format=FORMAT -- MODEL`; with the
/// inline config.json it wrote, if any.
fn analyze_argv(
    settings: &Map<String, Value>,
    extra: &[&str],
    format: &str,
) -> Result<(Vec<OsString>, Option<Upload>), BadRequest> {
    let known = || {
        let mut names: Vec<&str> = vec!["model"];
        names.extend(SETTINGS.iter().map(|(n, _)| *n));
        names.extend(extra);
        names.join(", ")
    };
    if let Some(unknown) = settings.keys().find(|k| {
        k.as_str() != "model"
            && !extra.contains(&k.as_str())
            && !SETTINGS.iter().any(|(n, _)| n == k)
    }) {
        return Err(bad(
            format!("unknown field `{unknown}`"),
            format!("the fields are {}", known()),
        ));
    }
    let mut argv = vec![OsString::from("roofline"), OsString::from("analyze")];
    for (name, flag) in SETTINGS {
        let Some(value) = settings.get(*name) else {
            continue;
        };
        match (flag, value) {
            (_, Value::Null) => {}
            (Flag::Switch(f), Value::Bool(on)) => {
                if *on {
                    argv.push(OsString::from(*f));
                }
            }
            (Flag::Toggle(yes, no), Value::Bool(on)) => {
                argv.push(OsString::from(if *on { *yes } else { *no }));
            }
            (Flag::Switch(_) | Flag::Toggle(..), other) => {
                return Err(bad(
                    format!("`{name}` must be true or false, got {other}"),
                    format!("send `\"{name}\": true` to turn it on"),
                ))
            }
            (Flag::Value(f), Value::String(s)) => argv.push(OsString::from(format!("{f}={s}"))),
            (Flag::Value(f), Value::Number(n)) => argv.push(OsString::from(format!("{f}={n}"))),
            (Flag::Id(f), Value::String(s)) => {
                catalog_id(name, s)?;
                argv.push(OsString::from(format!("{f}={s}")));
            }
            (_, other) => {
                return Err(bad(
                    format!("`{name}` must be a string or a number, got {other}"),
                    "see /openapi.json for each field's values",
                ))
            }
        }
    }
    argv.push(OsString::from(format!("--format={format}")));
    argv.push(OsString::from("--"));
    let mut upload = None;
    match settings.get("model") {
        None | Some(Value::Null) => argv.push(OsString::from("llama-2-7b")),
        Some(Value::String(s)) => {
            catalog_id("model", s)?;
            argv.push(OsString::from(s));
        }
        Some(Value::Object(config)) => {
            let u = Upload::write(config)?;
            argv.push(u.folder.clone().into_os_string());
            upload = Some(u);
        }
        Some(other) => {
            return Err(bad(
                format!("`model` must be a preset id or a config.json object, got {other}"),
                "the presets are at GET /api/models",
            ))
        }
    }
    Ok((argv, upload))
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
        return Err(bad(
            format!("`{field}`: `{s}` is not a catalog id (the API reads no files)"),
            list,
        ));
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
    fn settings_become_the_flags() -> Result<(), Box<dyn std::error::Error>> {
        let s = settings(
            r#"{"model": "llama-3.1-8b", "hardware": "h100-sxm", "batch": 8, "stage": "decode",
                "flash_attention": true, "sequence_parallel": false, "fusion": null}"#,
        )?;
        let (argv, upload) = analyze_argv(&s, &[], "json").map_err(|b| b.message)?;
        assert!(upload.is_none());
        let words: Vec<String> = argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            words,
            [
                "roofline",
                "analyze",
                "--hardware=h100-sxm",
                "--stage=decode",
                "--batch=8",
                "--flash-attention",
                "--format=json",
                "--",
                "llama-3.1-8b"
            ]
        );
        Ok(())
    }

    #[test]
    fn refuses_unknown_fields_wrong_types_and_files() -> Result<(), Box<dyn std::error::Error>> {
        for (json, needle) in [
            (r#"{"batsh": 8}"#, "unknown field `batsh`"),
            (
                r#"{"flash_attention": "yes"}"#,
                "`flash_attention` must be true or false",
            ),
            (r#"{"batch": [8]}"#, "`batch` must be a string or a number"),
            (
                r#"{"model": "/etc/passwd"}"#,
                "`model`: `/etc/passwd` is not a catalog id",
            ),
            (
                r#"{"hardware": "chip.toml"}"#,
                "`hardware`: `chip.toml` is not a catalog id",
            ),
            (
                r#"{"model": 7}"#,
                "`model` must be a preset id or a config.json object",
            ),
        ] {
            let s = settings(json)?;
            match analyze_argv(&s, &[], "json") {
                Ok(_) => return Err(format!("{json} was taken").into()),
                Err(b) => assert!(b.message.contains(needle), "{json}: {}", b.message),
            }
        }
        for body in ["[1]", "not json"] {
            assert!(object(body.as_bytes()).is_err(), "{body}");
        }
        Ok(())
    }

    #[test]
    fn an_inline_config_is_a_folder_named_after_the_model() -> Result<(), Box<dyn std::error::Error>>
    {
        let s = settings(r#"{"model": {"_name_or_path": "org/My-Model", "hidden_size": 64}}"#)?;
        let (argv, upload) = analyze_argv(&s, &[], "json").map_err(|b| b.message)?;
        let upload = upload.ok_or("no upload")?;
        let last = argv.last().ok_or("no argv")?;
        assert_eq!(Path::new(last).file_name(), Some("My-Model".as_ref()));
        let text = std::fs::read_to_string(upload.folder.join("config.json"))?;
        assert!(text.contains("\"hidden_size\":64"), "{text}");
        let shown = upload.unhide(&format!(
            "cannot read `{}`",
            upload.folder.join("config.json").display()
        ));
        assert_eq!(shown, "cannot read `the uploaded config.json`");
        Ok(())
    }
}
