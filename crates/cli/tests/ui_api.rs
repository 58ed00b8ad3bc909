//! `roofline ui`: the server starts on a free port, serves the page, and its JSON API answers
//! with the very documents and errors of the CLI for the same settings.

mod ui_server;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use ui_server::{cli, Result, Server};

/// The CLI's document for `words`, parsed.
fn cli_json(words: &[&str]) -> Result<Value> {
    let out = cli(words).map_err(|f| f.to_string())?;
    Ok(serde_json::from_slice(&out)?)
}

#[test]
fn analyze_answers_the_clis_document() -> Result<()> {
    let server = Server::start()?;
    for (body, words) in [
        (
            r#"{"model": "llama-3.1-8b", "hardware": "h100-sxm", "stage": "decode", "batch": 8}"#,
            &[
                "analyze",
                "llama-3.1-8b",
                "--hardware",
                "h100-sxm",
                "--stage",
                "decode",
                "--batch",
                "8",
            ][..],
        ),
        (r#"{}"#, &["analyze"]),
        (
            r#"{"stage": "prefill", "seq_len": 512, "precision": "fp16", "weight_precision": "int4",
                "kv_precision": "fp8", "flash_attention": true, "fusion": "compiled", "hardware": "a100-sxm-80gb"}"#,
            &[
                "analyze",
                "--stage",
                "prefill",
                "--seq-len",
                "512",
                "--precision",
                "fp16",
                "--weight-precision",
                "int4",
                "--kv-precision",
                "fp8",
                "--flash-attention",
                "--fusion",
                "compiled",
                "--hardware",
                "a100-sxm-80gb",
            ],
        ),
        (
            r#"{"model": "llama-3.1-70b", "hardware": "h100-sxm", "tp": 4, "pp": 2, "stage": "decode", "batch": 16, "context": 4096}"#,
            &[
                "analyze",
                "llama-3.1-70b",
                "--hardware",
                "h100-sxm",
                "--tp",
                "4",
                "--pp",
                "2",
                "--stage",
                "decode",
                "--batch",
                "16",
                "--context",
                "4096",
            ],
        ),
    ] {
        let answer = server.post("/api/analyze", body)?;
        assert_eq!(answer.status, 200, "{body}: {}", answer.text()?);
        assert_eq!(answer.content_type, "application/json");
        let mut words = words.to_vec();
        words.extend(["--format", "json"]);
        let expected = cli(&words).map_err(|f| f.to_string())?;
        // Byte for byte: the page's numbers are the CLI's.
        assert!(answer.body == expected, "{body}: not the CLI's document");
    }
    Ok(())
}

#[test]
fn bad_settings_are_400_with_the_clis_error_and_hint() -> Result<()> {
    let server = Server::start()?;
    for (body, words) in [
        (r#"{"batch": 0}"#, &["analyze", "--batch", "0"][..]),
        (
            r#"{"model": "no-such-model"}"#,
            &["analyze", "no-such-model"],
        ),
        (
            r#"{"hardware": "h1000"}"#,
            &["analyze", "--hardware", "h1000"],
        ),
        (
            r#"{"hardware": "a6000", "precision": "fp8", "stage": "decode"}"#,
            &[
                "analyze",
                "--hardware",
                "a6000",
                "--precision",
                "fp8",
                "--stage",
                "decode",
            ],
        ),
        (
            r#"{"model": "llama-3.1-8b", "tp": 3}"#,
            &["analyze", "llama-3.1-8b", "--tp", "3"],
        ),
    ] {
        let mut words = words.to_vec();
        words.extend(["--format", "json"]);
        let Err(f) = cli(&words) else {
            // Not every chip lacks every precision: only errors of the CLI are compared here.
            continue;
        };
        assert_eq!(f.code, 2, "{words:?}");
        let answer = server.post("/api/analyze", body)?;
        assert_eq!(answer.status, 400, "{body}");
        assert_eq!(answer.content_type, "application/json");
        let e = answer.json()?;
        assert_eq!(e["error"].as_str(), Some(f.message.as_str()), "{body}");
        assert_eq!(e["hint"].as_str(), f.hint.as_deref(), "{body}");
    }
    // Refused by the typed request before anything is computed: not JSON, not an object, an
    // unknown field, a wrong type or value, a file where an id goes. Each a 400 with an error
    // naming the field (also as `field`) and a hint.
    for (body, needle, field) in [
        ("{not json", "not JSON", None),
        ("[1, 2]", "not a JSON object", None),
        (
            r#"{"batch_size": 8}"#,
            "unknown field `batch_size`",
            Some("batch_size"),
        ),
        (
            r#"{"flash_attention": 1}"#,
            "`flash_attention`",
            Some("flash_attention"),
        ),
        (r#"{"batch": -3}"#, "`batch`", Some("batch")),
        (r#"{"batch": "many"}"#, "`batch`", Some("batch")),
        (r#"{"precision": "fp7"}"#, "fp7", Some("precision")),
        (r#"{"tp": 0}"#, "at least 1", Some("tp")),
        (r#"{"stage": "train"}"#, "`stage`", Some("stage")),
        (r#"{"model": "../secrets.json"}"#, "`model`", Some("model")),
        (
            r#"{"hardware": "/etc/hostname"}"#,
            "`hardware`",
            Some("hardware"),
        ),
    ] {
        let answer = server.post("/api/analyze", body)?;
        assert_eq!(answer.status, 400, "{body}");
        let e = answer.json()?;
        let error = e["error"].as_str().ok_or("no error")?;
        assert!(error.contains(needle), "{body}: {error}");
        assert_eq!(e["field"].as_str(), field, "{body}");
        assert!(e["hint"].as_str().is_some_and(|h| !h.is_empty()), "{body}");
    }
    let e = server.post("/api/explain", r#"{"stage": "decode"}"#)?;
    assert_eq!(e.status, 400);
    assert!(e.json()?["error"]
        .as_str()
        .is_some_and(|m| m.contains("`operator`")));
    Ok(())
}

#[test]
fn an_inline_config_is_analysed_as_the_file_would_be() -> Result<()> {
    let server = Server::start()?;
    let config: Value =
        serde_json::from_str(include_str!("../../inputs/catalog/models/llama-2-7b.json"))?;
    let body = serde_json::json!({ "model": config, "stage": "decode", "batch": 4 }).to_string();
    let answer = server.post("/api/analyze", &body)?;
    assert_eq!(answer.status, 200, "{}", answer.text()?);
    let got = answer.json()?;
    let want = cli_json(&[
        "analyze",
        "llama-2-7b",
        "--stage",
        "decode",
        "--batch",
        "4",
        "--format",
        "json",
    ])?;
    assert_eq!(got["stages"], want["stages"]);
    assert_eq!(got["headline"], want["headline"]);
    // A config the reader rejects: its error, naming the field (no file is written).
    let answer = server.post("/api/analyze", r#"{"model": {"hidden_size": 64}}"#)?;
    assert_eq!(answer.status, 400);
    let e = answer.json()?;
    let error = e["error"].as_str().ok_or("no error")?;
    assert!(error.contains("the config.json in `model`"), "{error}");
    assert_eq!(e["field"], "model");
    assert!(!error.contains("/tmp"), "{error}");
    Ok(())
}

#[test]
fn explain_and_listings_are_the_clis() -> Result<()> {
    let server = Server::start()?;
    let settings =
        r#""model": "llama-3.1-8b", "stage": "decode", "batch": 8, "operator": "q_proj""#;
    let base = [
        "analyze",
        "llama-3.1-8b",
        "--stage",
        "decode",
        "--batch",
        "8",
        "--explain",
        "q_proj",
    ];
    let json = server.post("/api/explain", &format!("{{{settings}}}"))?;
    assert_eq!(json.status, 200);
    let mut words = base.to_vec();
    words.extend(["--format", "json"]);
    assert!(json.body == cli(&words).map_err(|f| f.to_string())?);
    let text = server.post(
        "/api/explain",
        &format!("{{{settings}, \"format\": \"text\"}}"),
    )?;
    assert_eq!(text.status, 200);
    assert!(text.content_type.starts_with("text/plain"));
    assert!(text.body == cli(&base).map_err(|f| f.to_string())?);
    let unknown = server.post("/api/explain", r#"{"operator": "no_such_op"}"#)?;
    assert_eq!(unknown.status, 400);
    let f = cli(&["analyze", "--explain", "no_such_op", "--format", "json"])
        .err()
        .ok_or("no error")?;
    assert_eq!(unknown.json()?["error"].as_str(), Some(f.message.as_str()));
    for (path, words) in [
        ("/api/models", &["models"][..]),
        ("/api/hardware", &["hardware", "list"]),
        ("/api/systems", &["hardware", "list", "--systems"]),
    ] {
        let answer = server.get(path)?;
        assert_eq!(answer.status, 200, "{path}");
        let mut words = words.to_vec();
        words.extend(["--format", "json"]);
        assert!(
            answer.body == cli(&words).map_err(|f| f.to_string())?,
            "{path}"
        );
    }
    Ok(())
}

#[test]
fn openapi_document_describes_routes_that_answer() -> Result<()> {
    let server = Server::start()?;
    let answer = server.get("/openapi.json")?;
    assert_eq!(answer.status, 200);
    let doc = answer.json()?;
    assert!(doc["openapi"]
        .as_str()
        .is_some_and(|v| v.starts_with("3.1")));
    let paths = doc["paths"].as_object().ok_or("no paths")?;
    assert!(paths.len() >= 9);
    for (path, item) in paths {
        let item = item.as_object().ok_or("a path item is not an object")?;
        for (method, op) in item {
            let answer = match method.as_str() {
                "get" => server.get(path)?,
                "post" => {
                    let example = &op["requestBody"]["content"]["application/json"]["example"];
                    server.post(path, &example.to_string())?
                }
                other => return Err(format!("{path}: method {other}").into()),
            };
            assert_eq!(answer.status, 200, "{method} {path}: {}", answer.text()?);
        }
    }
    // Every `$ref` names a schema the document has.
    let text = serde_json::to_string(&doc)?;
    for r in text.split("\"$ref\":\"").skip(1) {
        let target = r.split('"').next().ok_or("empty $ref")?;
        let name = target
            .strip_prefix("#/components/schemas/")
            .ok_or(format!("{target}: not a local schema"))?;
        assert!(doc["components"]["schemas"][name].is_object(), "{target}");
    }
    let missing = server.get("/api/nothing")?;
    assert_eq!(missing.status, 404);
    assert!(missing.json()?["hint"].is_string());
    Ok(())
}

#[test]
fn ui_serves_the_page_on_a_free_port() -> Result<()> {
    let server = Server::start()?;
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    let page = server.get("/")?;
    assert_eq!(page.status, 200);
    assert!(page.content_type.starts_with("text/html"));
    let html = page.text()?;
    assert!(html.contains("<title>roofline</title>"));
    assert!(html.contains("src=\"/app.js\""));
    // No page asset comes from anywhere but this server.
    for (path, kind) in [("/app.js", "text/javascript"), ("/style.css", "text/css")] {
        let a = server.get(path)?;
        assert_eq!(a.status, 200, "{path}");
        assert!(
            a.content_type.starts_with(kind),
            "{path}: {}",
            a.content_type
        );
        // The SVG namespace is a name, not an address fetched.
        let text = a.text()?.replace("http://www.w3.org/2000/svg", "");
        assert!(
            !text.contains("http://") && !text.contains("https://"),
            "{path}"
        );
    }
    assert!(!html.contains("https://"));
    // Another site's name resolved to this machine (DNS rebinding) is refused.
    let port = server.address.rsplit(':').next().ok_or("no port")?;
    let named = ui_server::request_as(
        &format!("localhost:{port}"),
        &server.address,
        "GET",
        "/api/models",
        None,
    )?;
    assert_eq!(named.status, 200);
    let rebound =
        ui_server::request_as("evil.example", &server.address, "GET", "/api/models", None)?;
    assert_eq!(rebound.status, 403);
    assert!(rebound.json()?["hint"].is_string());
    Ok(())
}

#[test]
fn ui_rejects_a_bad_port_with_exit_code_2() -> Result<()> {
    for port in ["abc", "70000", "-1"] {
        Command::cargo_bin("roofline")?
            .args(["ui", "--port", port])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::starts_with("error: "))
            .stderr(predicate::str::contains("--port"))
            .stderr(predicate::str::contains("hint: "));
    }
    Ok(())
}
