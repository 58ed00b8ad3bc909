//! The page of `roofline ui` in a real browser: headless Chromium driven by playwright-core
//! (`tests/ui/page.mjs`) loads it, changes the batch, then the chip, then uploads a config.json
//! as the model, and reports the table,
//! the plot's points and its axes after each change; every number must be what
//! `roofline analyze --format json` gives for the same settings.
//!
//! Needs `node`, `npm ci` in crates/cli/tests/ui, and Chromium (`/usr/bin/chromium`, or
//! `CHROMIUM`). In CI (`CI` set) a missing one fails the test; elsewhere the test says on stderr
//! what it skips. `UPDATE_SCREENSHOT=1` writes the screenshot to docs/ui-screenshot.png.

mod ui_server;

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use ui_server::{cli, Result, Server};

const BATCH: &str = "8";
const CHIP: &str = "a6000";

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui")
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

/// What the test needs that is missing, and how to get it.
fn missing() -> Vec<String> {
    let mut m = Vec::new();
    if on_path("node").is_none() {
        m.push("`node` (Node.js 20 or later)".to_string());
    }
    if !folder()
        .join("node_modules/playwright-core/package.json")
        .is_file()
    {
        m.push("playwright-core (`npm ci` in crates/cli/tests/ui)".to_string());
    }
    if chromium().is_none() {
        m.push("Chromium (`apt-get install chromium`, or CHROMIUM=/path/to/it)".to_string());
    }
    m
}

fn chromium() -> Option<PathBuf> {
    if let Some(c) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(c)).filter(|p| p.is_file());
    }
    let debian = PathBuf::from("/usr/bin/chromium");
    if debian.is_file() {
        return Some(debian);
    }
    on_path("chromium")
}

/// The CLI's analysis for `words` (after `analyze`).
fn analysis(words: &[&str]) -> Result<Value> {
    let mut argv = vec!["analyze"];
    argv.extend(words);
    argv.extend(["--format", "json"]);
    let out = cli(&argv).map_err(|f| f.to_string())?;
    Ok(serde_json::from_slice(&out)?)
}

fn number(v: &Value, what: &str) -> Result<f64> {
    v.as_f64()
        .ok_or_else(|| format!("{what}: not a number").into())
}

/// A log axis from its decade ticks: position → value, by the first and last tick.
fn axis(ticks: &Value) -> Result<impl Fn(f64) -> f64> {
    let t = ticks.as_array().ok_or("no ticks")?;
    let (first, last) = (t.first().ok_or("no ticks")?, t.last().ok_or("no ticks")?);
    let (p0, v0) = (
        number(&first["pos"], "pos")?,
        number(&first["value"], "value")?,
    );
    let (p1, v1) = (
        number(&last["pos"], "pos")?,
        number(&last["value"], "value")?,
    );
    if t.len() < 2 || p0 == p1 {
        return Err("fewer than two ticks".into());
    }
    let (l0, l1) = (v0.log10(), v1.log10());
    Ok(move |p: f64| 10f64.powf(l0 + (p - p0) / (p1 - p0) * (l1 - l0)))
}

/// Checks one step of the page against the CLI's analysis of the same settings.
fn check_step(step: &Value, cli_doc: &Value, name: &str) -> Result<()> {
    assert_eq!(step["state"], "ready", "{name}: {}", step["error"]);
    // The table: each operator of each stage, in the CLI's order, each number exactly the
    // CLI's (the page keeps the JSON's value in each cell's data-value).
    let rows = step["rows"].as_array().ok_or("no rows")?;
    let mut ops = Vec::new();
    for s in cli_doc["stages"].as_array().ok_or("no stages")? {
        for op in s["ops"].as_array().ok_or("no ops")? {
            ops.push((s["stage"].as_str().ok_or("no stage")?, op));
        }
    }
    assert_eq!(rows.len(), ops.len(), "{name}: rows");
    for (row, (stage, op)) in rows.iter().zip(&ops) {
        assert_eq!(row["stage"].as_str(), Some(*stage), "{name}");
        assert_eq!(row["name"], op["name"], "{name}");
        for field in [
            "flops",
            "bytes",
            "arithmetic_intensity",
            "attainable_flops_per_s",
            "time_s",
        ] {
            let shown: f64 = row[field].as_str().ok_or("no cell")?.parse()?;
            let want = number(&op[field], field)?;
            assert_eq!(shown, want, "{name}: {stage} {} {field}", op["name"]);
        }
    }
    // The plot: each operator that does arithmetic is a point, whose position read back through
    // the axes' ticks is its intensity and FLOP/s (to the 0.01 px the SVG is written to).
    let x = axis(&step["x_ticks"])?;
    let y = axis(&step["y_ticks"])?;
    let points = step["points"].as_array().ok_or("no points")?;
    let drawn: Vec<_> = ops
        .iter()
        .filter(|(_, op)| {
            op["flops"].as_f64() > Some(0.0) && op["arithmetic_intensity"].as_f64() > Some(0.0)
        })
        .collect();
    assert_eq!(points.len(), drawn.len(), "{name}: points");
    for (p, (stage, op)) in points.iter().zip(drawn) {
        assert_eq!(p["op"], op["name"], "{name}");
        assert_eq!(p["stage"].as_str(), Some(*stage), "{name}");
        let ai = x(number(&p["cx"], "cx")?);
        let fl = y(number(&p["cy"], "cy")?);
        let (want_ai, want_fl) = (
            number(&op["arithmetic_intensity"], "intensity")?,
            number(&op["attainable_flops_per_s"], "flops")?,
        );
        assert!(
            (ai / want_ai - 1.0).abs() < 2e-3,
            "{name}: {} at intensity {ai}, the CLI says {want_ai}",
            op["name"]
        );
        assert!(
            (fl / want_fl - 1.0).abs() < 2e-3,
            "{name}: {} at {fl} FLOP/s, the CLI says {want_fl}",
            op["name"]
        );
    }
    // The roofs: the compute peaks of the operators, under the chip's bandwidth.
    let roofs = step["roofs"].as_array().ok_or("no roofs")?;
    for (_, op) in &ops {
        let peak = number(&op["peak_flops_per_s"], "peak")?;
        if op["compute"] != "link" && peak > 0.0 {
            assert!(
                roofs.iter().any(|r| r.as_f64() == Some(peak)),
                "{name}: roof {peak}"
            );
        }
    }
    let labels = step["axis_labels"].to_string();
    assert!(
        labels.contains("(FLOP/byte)") && labels.contains("(FLOP/s)"),
        "{labels}"
    );
    Ok(())
}

#[test]
fn the_page_shows_the_clis_numbers_as_the_settings_change() -> Result<()> {
    let missing = missing();
    if !missing.is_empty() {
        let what = missing.join(", ");
        if std::env::var_os("CI").is_some() {
            return Err(format!("the browser test needs {what}; `.ci/run` installs them").into());
        }
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED the_page_shows_the_clis_numbers_as_the_settings_change: missing {what} (CI requires them)"
        );
        return Ok(());
    }
    let server = Server::start()?;
    let dir = tempfile::tempdir()?;
    let (out, shot) = (dir.path().join("page.json"), dir.path().join("page.png"));
    let run = std::process::Command::new("node")
        .arg(folder().join("page.mjs"))
        .args([server.url.as_str()])
        .arg(&out)
        .arg(&shot)
        .args([BATCH, CHIP])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../inputs/catalog/models/llama-2-7b.json"))
        .env("CHROMIUM", chromium().ok_or("no chromium")?)
        .current_dir(folder())
        .output()?;
    let report: Value = match std::fs::read(&out) {
        Ok(bytes) => serde_json::from_slice(&bytes)?,
        Err(_) => Value::Null,
    };
    if !run.status.success() {
        return Err(format!(
            "page.mjs failed: {}\n{}\n{}",
            run.status,
            String::from_utf8_lossy(&run.stderr),
            report["failure"]
        )
        .into());
    }
    assert_eq!(report["console"], serde_json::json!([]), "the page logged");
    let steps = report["steps"].as_array().ok_or("no steps")?;
    assert_eq!(steps.len(), 4);
    let expected = [
        ("load", analysis(&[])?),
        ("batch", analysis(&["--batch", BATCH])?),
        ("chip", analysis(&["--batch", BATCH, "--hardware", CHIP])?),
        // The preset's own config.json, uploaded: the preset's numbers.
        ("upload", analysis(&["--batch", BATCH, "--hardware", CHIP])?),
    ];
    for (i, (step, (name, doc))) in steps.iter().zip(&expected).enumerate() {
        assert_eq!(step["name"].as_str(), Some(*name));
        check_step(step, doc, name)?;
        // One request to the API per change.
        assert_eq!(
            step["analyze_requests"].as_u64(),
            Some(i as u64 + 1),
            "{name}"
        );
    }
    // Each change moved the numbers.
    assert_ne!(steps[0]["rows"], steps[1]["rows"]);
    assert_ne!(steps[1]["rows"], steps[2]["rows"]);
    assert_ne!(steps[1]["points"], steps[2]["points"]);
    assert_eq!(
        report["analyze_requests_after_click"].as_u64(),
        Some(3),
        "a click analysed"
    );
    // The address holds the settings, and a fresh page at it restores them.
    let url = steps[2]["url"].as_str().ok_or("no url")?;
    assert!(
        url.contains(&format!("batch={BATCH}")) && url.contains(&format!("hardware={CHIP}")),
        "{url}"
    );
    assert_eq!(
        report["restored"],
        serde_json::json!({ "batch": BATCH, "hardware": CHIP })
    );
    // The derivation of the clicked operator is the CLI's `--explain` text.
    let op = report["explained"]["op"]
        .as_str()
        .ok_or("nothing explained")?;
    let text = cli(&[
        "analyze",
        "--batch",
        BATCH,
        "--hardware",
        CHIP,
        "--explain",
        op,
    ])
    .map_err(|f| f.to_string())?;
    assert_eq!(
        report["explained"]["text"].as_str(),
        Some(String::from_utf8(text)?.as_str())
    );
    if std::env::var_os("UPDATE_SCREENSHOT").is_some_and(|v| v == "1") {
        let to = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/ui-screenshot.png");
        std::fs::copy(&shot, &to)?;
        let _ = writeln!(std::io::stderr(), "wrote {}", to.display());
    }
    Ok(())
}
