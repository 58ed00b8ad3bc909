//! The typed API (`roofline_cli::api`): `analyze` gives the document `roofline analyze --format
//! json` writes for the same settings, an inline config or chip the numbers of its file, and a
//! refused request names its field. The request's committed JSON Schema
//! (`docs/schema/requests/analyze.schema.json`) is the one its type generates:
//! `UPDATE_SCHEMA=1 cargo test -p roofline-cli --test api` rewrites it.

use roofline_cli::api::{self, AnalyzeRequest, ApiError};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::path::PathBuf;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// What `roofline WORDS… --format json` prints, run in-process.
fn cli(words: &[&str]) -> Result<String, Box<dyn std::error::Error>> {
    let argv: Vec<OsString> = ["roofline"]
        .iter()
        .chain(words)
        .chain(&["--format", "json"])
        .map(OsString::from)
        .collect();
    let mut out = Vec::new();
    roofline_cli::run_captured(&argv, &mut out).map_err(|f| f.to_string())?;
    Ok(String::from_utf8(out)?)
}

/// The typed call's document for `request` (JSON), as text.
fn typed(request: Value) -> Result<String, ApiError> {
    let request: AnalyzeRequest = api::request_from_value(request)?;
    Ok(api::analyze(&request)?.to_json())
}

fn catalog(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../inputs/catalog")
        .join(path)
}

#[test]
fn analyze_is_the_clis_document() -> TestResult {
    for (request, words) in [
        (json!({}), &["analyze"][..]),
        (
            json!({"model": "llama-3.1-8b", "stage": "decode", "batch": 8, "context": 4096}),
            &[
                "analyze",
                "llama-3.1-8b",
                "--stage",
                "decode",
                "--batch",
                "8",
                "--context",
                "4096",
            ],
        ),
        (
            json!({"model": "gpt2", "hardware": "a6000", "stage": "prefill", "seq_len": 512,
                   "precision": "fp16", "flash_attention": false, "logits": "all",
                   "memory_reserve": "2GB", "launch_overhead": "7us"}),
            &[
                "analyze",
                "gpt2",
                "--hardware",
                "a6000",
                "--stage",
                "prefill",
                "--seq-len",
                "512",
                "--precision",
                "fp16",
                "--no-flash-attention",
                "--logits",
                "all",
                "--memory-reserve",
                "2GB",
                "--launch-overhead",
                "7us",
            ],
        ),
        (
            json!({"model": "llama-3.1-8b", "weight_precision": "int4", "group_size": 128,
                   "fusion": "compiled"}),
            &[
                "analyze",
                "llama-3.1-8b",
                "--weight-precision",
                "int4",
                "--group-size",
                "128",
                "--fusion",
                "compiled",
            ],
        ),
        (
            json!({"model": "llama-3.1-8b", "stage": "decode", "advice": true}),
            &["analyze", "llama-3.1-8b", "--stage", "decode", "--advice"],
        ),
        (
            json!({"model": "llama-3.1-70b", "tp": 4, "pp": 2, "stage": "decode", "batch": 16}),
            &[
                "analyze",
                "llama-3.1-70b",
                "--tp",
                "4",
                "--pp",
                "2",
                "--stage",
                "decode",
                "--batch",
                "16",
            ],
        ),
    ] {
        let got = typed(request.clone()).map_err(|e| format!("{request}: {e}"))?;
        assert!(got == cli(words)?, "{request}: not the CLI's document");
    }
    Ok(())
}

#[test]
fn an_inline_config_and_chip_give_their_files_numbers() -> TestResult {
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(catalog("models/llama-2-7b.json"))?)?;
    config
        .as_object_mut()
        .ok_or("not an object")?
        .remove("_name_or_path");
    let chip: toml::Value =
        toml::from_str(&std::fs::read_to_string(catalog("hardware/l40s.toml"))?)?;
    let chip = serde_json::to_value(chip)?;
    let inline: Value = serde_json::from_str(&typed(
        json!({"model": config, "hardware": chip, "stage": "both", "batch": 4}),
    )?)?;
    let preset: Value = serde_json::from_str(&cli(&[
        "analyze",
        "llama-2-7b",
        "--hardware",
        "l40s",
        "--batch",
        "4",
    ])?)?;
    assert_eq!(inline["stages"], preset["stages"]);
    assert_eq!(inline["headline"], preset["headline"]);
    assert_eq!(inline["hardware"], preset["hardware"]);
    // Named by its `_name_or_path`, else `model`: no file names it.
    assert_eq!(inline["model"]["name"], "model");
    let mut named = config.clone();
    named["_name_or_path"] = json!("meta-llama/Llama-2-7b-hf");
    let doc: Value = serde_json::from_str(&typed(json!({ "model": named }))?)?;
    assert_eq!(doc["model"]["name"], "Llama-2-7b-hf");
    // A config the reader refuses: its error names the field, no file.
    let e = typed(json!({"model": {"hidden_size": 64}}))
        .err()
        .ok_or("taken")?;
    assert_eq!(e.field.as_deref(), Some("model"));
    assert!(e.message.contains("`model`"), "{}", e.message);
    let e = typed(json!({"hardware": {"id": "x"}}))
        .err()
        .ok_or("taken")?;
    assert_eq!(e.field.as_deref(), Some("hardware"));
    Ok(())
}

#[test]
fn a_refused_request_names_its_field() -> TestResult {
    for (request, field, needle) in [
        (json!({"batsh": 8}), "batsh", "unknown field `batsh`"),
        (json!({"batch": "eight"}), "batch", "`batch`"),
        (json!({"batch": -1}), "batch", "`batch`"),
        (
            json!({"flash_attention": 1}),
            "flash_attention",
            "`flash_attention`",
        ),
        (json!({"precision": "fp7"}), "precision", "fp7"),
        (json!({"memory_reserve": "lots"}), "memory_reserve", "lots"),
        (json!({"tp": 0}), "tp", "at least 1"),
        (json!({"stage": "train"}), "stage", "`stage`"),
        (json!({"model": 7}), "model", "`model`"),
        // Refused by the analysis: the CLI's message, the field it names.
        (json!({"batch": 0}), "batch", "`--batch`"),
        (json!({"model": "no-such-model"}), "model", "no-such-model"),
        (json!({"hardware": "h1000"}), "hardware", "h1000"),
        (json!({"model": "llama-3.1-8b", "tp": 3}), "tp", "`--tp`"),
        (json!({"tp": 2, "advice": true}), "advice", "--advice"),
    ] {
        let e = typed(request.clone())
            .err()
            .ok_or(format!("{request} was taken"))?;
        assert_eq!(e.field.as_deref(), Some(field), "{request}: {e}");
        assert!(e.message.contains(needle), "{request}: {}", e.message);
        assert!(e.hint.is_some(), "{request}");
    }
    // The analysis' errors are the CLI's, message and hint.
    let e = typed(json!({"model": "no-such-model"}))
        .err()
        .ok_or("taken")?;
    let f = cli(&["analyze", "no-such-model"]).err().ok_or("ran")?;
    assert_eq!(f.to_string(), e.to_string());
    Ok(())
}

#[test]
fn the_defaults_are_the_flags() -> TestResult {
    let default: AnalyzeRequest = api::parse_request("{}")?;
    assert_eq!(default, AnalyzeRequest::default());
    assert_eq!(typed(json!({}))?, cli(&["analyze"])?);
    // Serialised, the default request reads back as itself.
    let text = serde_json::to_string(&default)?;
    assert_eq!(api::parse_request::<AnalyzeRequest>(&text)?, default);
    Ok(())
}

#[test]
fn the_committed_request_schema_is_the_types() -> TestResult {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schema/requests/analyze.schema.json");
    let schema = api::request_schema::<AnalyzeRequest>();
    let want = serde_json::to_string_pretty(&schema)? + "\n";
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want)?;
    }
    let have = std::fs::read_to_string(&path)?;
    assert!(
        have == want,
        "{} differs from its type: UPDATE_SCHEMA=1 cargo test -p roofline-cli --test api",
        path.display()
    );
    let v = serde_json::to_value(&schema)?;
    jsonschema::draft202012::meta::validate(&v).map_err(|e| e.to_string())?;
    let validator = jsonschema::draft202012::new(&v).map_err(|e| e.to_string())?;
    for ok in [
        json!({}),
        serde_json::to_value(AnalyzeRequest::default())?,
        json!({"model": {"hidden_size": 64}, "hardware": "h100-sxm", "tp": 2}),
    ] {
        assert!(validator.is_valid(&ok), "{ok}");
    }
    assert!(!validator.is_valid(&json!({"batsh": 8})));
    Ok(())
}
