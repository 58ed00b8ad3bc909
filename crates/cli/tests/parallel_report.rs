//! `analyze --plot` and `report` with the parallel flags, end to end: the plot's communication
//! panel holds one star per collective with the link's roof at the catalog's bandwidth, the
//! HTML page holds one device's table with its all-reduce rows and the step on two streams with
//! the same numbers as `analyze --format json`, existing files are kept without `--force`, and
//! the flags a parallel report does not take are one `error:` line naming the flag and a
//! `hint:`, exit 2.

mod common;

use common::{assert_valid, json_of, roofline};
use predicates::prelude::*;
use std::path::Path;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Llama-3.1-70B decode at batch 32 on a DGX H100, tensor parallel over its 8 GPUs.
const TP8: &[&str] = &[
    "llama-3.1-70b",
    "--system",
    "dgx-h100",
    "--tp",
    "8",
    "--stage",
    "decode",
    "--batch",
    "32",
];

fn with<'a>(command: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![command];
    a.extend_from_slice(TP8);
    a.extend_from_slice(rest);
    a
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

/// The `data-…` attribute `name` of each `<g class="comm-point" …>` in `svg`.
fn comm_points<'a>(svg: &'a str, name: &str) -> Vec<&'a str> {
    let key = format!(" {name}=\"");
    svg.match_indices("<g class=\"comm-point\"")
        .map(|(i, _)| {
            let tag = &svg[i..i + svg[i..].find('>').unwrap()];
            let j = tag.find(&key).unwrap() + key.len();
            &tag[j..j + tag[j..].find('"').unwrap()]
        })
        .collect()
}

#[test]
fn analyze_plot_with_tp8_draws_the_collectives_on_their_own_panel() -> TestResult {
    let dir = tempfile::tempdir()?;
    let svg_path = dir.path().join("x.svg");
    let table = roofline().args(with("analyze", &[])).output()?;
    roofline()
        .args(with("analyze", &["--plot", path(&svg_path)]))
        .assert()
        .success()
        // The table is the same with the plot as without.
        .stdout(String::from_utf8(table.stdout)?)
        .stderr("");
    let svg = std::fs::read_to_string(&svg_path)?;
    assert!(svg.starts_with("<svg width=\"1100\" height=\"1320\""));
    // Megatron-LM's two all-reduces a block, the embedding's, and lm_head's all-gather: one
    // star each, named.
    let names = comm_points(&svg, "data-name");
    assert_eq!(
        names,
        [
            "embedding.tp_reduce",
            "attention.tp_reduce",
            "mlp.tp_reduce",
            "logits.tp_gather"
        ]
    );
    let kinds = comm_points(&svg, "data-collective");
    assert_eq!(
        kinds,
        ["all-reduce", "all-reduce", "all-reduce", "all-gather"]
    );
    // S of an all-reduce: batch × hidden × 2 bytes = 32 · 8192 · 2 = 524,288 B.
    let bytes: Vec<f64> = comm_points(&svg, "data-bytes")
        .iter()
        .map(|b| b.parse().unwrap())
        .collect();
    assert_eq!(&bytes[..3], &[524_288.0; 3]);
    // The link roof: NVLink 4 at 900 GB/s bidirectional ÷ 2 = 450 GB/s per GPU per direction,
    // and every collective under it.
    assert!(svg.contains("data-bandwidth=\"4.5e11\""));
    for b in comm_points(&svg, "data-busbw") {
        let b: f64 = b.parse()?;
        assert!(b > 0.0 && b < 450e9, "{b}");
    }
    // Not on the roofline, not listed there as left out; the legend names the stars.
    assert!(!svg.contains("not plotted (0 FLOP): embed_tokens, embedding.tp_reduce"));
    assert!(svg.contains(">decode collective</text>"));
    assert!(svg.contains("class=\"latency-label\""));
    assert!(svg.contains("class=\"comm-ridge-label\""));

    // The PNG of the same plot.
    let png = dir.path().join("x.png");
    roofline()
        .args(with("analyze", &["--plot", path(&png)]))
        .assert()
        .success();
    assert_eq!(&std::fs::read(&png)?[..8], b"\x89PNG\r\n\x1a\n");
    Ok(())
}

#[test]
fn report_with_tp8_has_the_all_reduce_rows_and_the_step_on_two_streams() -> TestResult {
    let dir = tempfile::tempdir()?;
    let html_path = dir.path().join("r.html");
    let out = roofline()
        .args(with(
            "report",
            &["--out", path(&html_path), "--format", "json"],
        ))
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_valid("report", &summary, "report --tp 8");
    assert_eq!(summary["collectives_plotted"], 4);
    let html = std::fs::read_to_string(&html_path)?;
    // Self-contained: nothing fetched, nothing run.
    for bad in ["<script", "<link", "@import", "url(", "src=", "https://"] {
        assert!(!html.contains(bad), "report contains {bad}");
    }
    for needle in [
        "id=\"settings\"",
        "id=\"system-links\"",
        "id=\"chip-peaks\"",
        "id=\"ops-decode\"",
        "id=\"step-decode\"",
        "id=\"scaling-decode\"",
        "id=\"memory-decode\"",
        "TP 8 × PP 1 = 8 devices",
        "NVLink 4 + NVSwitch gen 3",
        // The all-reduce of S = 32 · 8192 · 2 = 524,288 B.
        "all-reduce of 524.3 kB over 8 ranks",
        "class=\"comm-point\"",
        "class=\"comm-plot-area\"",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    for op in [
        "embedding.tp_reduce",
        "attention.tp_reduce",
        "mlp.tp_reduce",
    ] {
        assert!(
            html.contains(&format!("<tr data-name=\"{op}\" class=\"comm\">")),
            "no row for {op}"
        );
    }
    // One row per node of one device's graph, as `analyze --format json` lists them.
    let v = json_of(&with("analyze", &[]));
    let s = &v["stages"][0];
    let ops = s["ops"].as_array().ok_or("no ops")?.len();
    assert_eq!(html.matches("<tr data-name=").count(), ops);
    // The step: the numbers of the JSON, in the page's units (3 significant figures in ms).
    let ms = |key: &str| format!("{:.2} ms", s["schedule"][key].as_f64().unwrap() * 1e3);
    let step = &html[html.find("id=\"step-decode\"").ok_or("no step table")?..];
    let step = &step[..step.find("</table>").ok_or("unclosed")?];
    for (row, key) in [
        ("compute stream (Σ kernels)", "compute_s"),
        ("communication stream (Σ collectives)", "communication_s"),
        (
            "exposed communication (not hidden behind compute)",
            "exposed_communication_s",
        ),
    ] {
        let cell = format!("<tr><td>{row}</td><td>{}</td></tr>", ms(key));
        assert!(step.contains(&cell), "no `{cell}` in {step}");
    }
    let overlap = s["schedule"]["overlap"].as_f64().ok_or("overlap")? * 100.0;
    assert!(step.contains(&format!(
        "<td>overlap achieved (communication hidden)</td><td>{overlap:.0}%</td>"
    )));
    let step_time = s["step_time_s"].as_f64().ok_or("step")? * 1e3;
    assert!(step.contains(&format!("<td>step time</td><td>{step_time:.2} ms</td>")));
    let tokens = s["tokens_per_s"].as_f64().ok_or("tokens")?;
    assert!(step.contains(&format!(
        "<td>tokens/s per replica</td><td>{tokens:.0}</td>"
    )));
    let scaling = s["scaling_cost"].as_f64().ok_or("scaling")?;
    assert!(html.contains(&format!("<td>{scaling:.2}×</td>")));
    assert_eq!(s["memory"]["fits_on_chip"], true);
    assert!(html.contains("<tr class=\"fits\"><td>fits</td><td>fits</td></tr>"));
    Ok(())
}

#[test]
fn existing_files_are_kept_without_force() -> TestResult {
    let dir = tempfile::tempdir()?;
    for (command, flag, file) in [
        ("analyze", "--plot", "kept.svg"),
        ("report", "--out", "kept.html"),
    ] {
        let p = dir.path().join(file);
        std::fs::write(&p, "keep me")?;
        roofline()
            .args(with(command, &[flag, path(&p)]))
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains("already exists"))
            .stderr(predicate::str::contains("hint: pass --force"));
        assert_eq!(std::fs::read_to_string(&p)?, "keep me");
        roofline()
            .args(with(command, &[flag, path(&p), "--force"]))
            .assert()
            .success();
        assert_ne!(std::fs::read_to_string(&p)?, "keep me");
    }
    // The report's --plot too, checked before anything is written.
    let (html, svg) = (dir.path().join("new.html"), dir.path().join("kept.svg"));
    std::fs::write(&svg, "keep me")?;
    roofline()
        .args(with(
            "report",
            &["--out", path(&html), "--plot", path(&svg)],
        ))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert!(!html.exists());
    assert_eq!(std::fs::read_to_string(&svg)?, "keep me");
    Ok(())
}

/// Asserts `args` is bad input: exit 2, nothing on stdout, exactly one `error:` line that
/// names `flag`, and a `hint:` line.
fn refused(args: &[&str], flag: &str) {
    let out = roofline().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let what = format!("roofline {}", args.join(" "));
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(out.stdout.is_empty(), "{what}: stdout not empty");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{what}: {err}");
    assert!(
        errors[0].contains(flag),
        "{what}: `{}` names no {flag}",
        errors[0]
    );
    assert!(
        err.lines().any(|l| l.starts_with("hint: ")),
        "{what}: {err}"
    );
}

#[test]
fn a_parallel_report_refuses_what_it_does_not_take() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("r.html");
    let o = path(&out);
    refused(
        &with("report", &["--out", o, "--explain", "q_proj"]),
        "--explain",
    );
    refused(
        &with("report", &["--out", o, "--fusion", "compiled"]),
        "--fusion",
    );
    refused(
        &with("report", &["--out", o, "--profile", "trace.json"]),
        "--profile",
    );
    refused(&with("analyze", &["--explain", "q_proj"]), "--explain");
    // A layout the model does not take, and a plot in a format that is not one.
    refused(
        &["report", "llama-3.1-70b", "--tp", "3", "--out", o],
        "--tp",
    );
    refused(&with("report", &["--out", o, "--plot", "x.pdf"]), "--plot");
    refused(&with("analyze", &["--plot", "x.pdf"]), "--plot");
    // Two outputs on one path.
    refused(&with("report", &["--out", o, "--plot", o]), "--plot");
    assert!(!out.exists());
    Ok(())
}
