//! End-to-end tests of what makes the numbers visible and checkable: `roofline op`, `--explain`,
//! `--plot`, `hardware compare`, `roofline report` (opened in headless Chromium when it is
//! installed), and the output-file rules. Expected numbers are hand arithmetic or datasheet
//! figures written next to each assertion.

mod common;

use common::{json_of, roofline};
use predicates::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

// H100 SXM datasheet: 989.5 TFLOP/s dense bf16 (1,979 with sparsity / 2), 3.35 TB/s HBM3.
const H100_BF16: f64 = 989.5e12;
const H100_BW: f64 = 3.35e12;

#[test]
fn op_gemm_4096_cubed_is_compute_bound_on_h100() {
    let v = json_of(&[
        "op",
        "gemm",
        "--m",
        "4096",
        "--n",
        "4096",
        "--k",
        "4096",
        "--precision",
        "bf16",
        "--hardware",
        "h100-sxm",
    ]);
    let k = &v["kernels"][0];
    // 2·4096³ FLOP over 3·4096²·2 bytes: AI = 4096/3 = 1365.33 FLOP/byte.
    let flops = 2.0 * 4096f64.powi(3);
    let bytes = 3.0 * 4096f64.powi(2) * 2.0;
    assert_eq!(f(&k["flops"]), flops);
    assert_eq!(f(&k["bytes"]), bytes);
    assert!((f(&k["arithmetic_intensity"]) - 4096.0 / 3.0).abs() < 1e-9);
    let ridge = H100_BF16 / H100_BW; // 295.37
    assert!((f(&k["ridge_point"]) - ridge).abs() < 1e-9);
    assert_eq!(k["bound"], "compute");
    assert_eq!(f(&k["attainable_flops_per_s"]), H100_BF16);
    assert!((f(&k["time_s"]) - flops / H100_BF16).abs() < 1e-15);
    // 1365.33 / 295.37 = 4.62× above the ridge.
    assert!((f(&k["ridge_distance"]) - (4096.0 / 3.0) / ridge).abs() < 1e-9);
}

#[test]
fn op_gemv_is_memory_bound_with_intensity_about_one() {
    let args = [
        "op",
        "gemm",
        "--m",
        "1",
        "--n",
        "4096",
        "--k",
        "4096",
        "--precision",
        "bf16",
        "--hardware",
        "h100-sxm",
    ];
    let v = json_of(&args);
    let k = &v["kernels"][0];
    // 2·4096² / (2·(4096 + 4096² + 4096)) = 0.99951 FLOP/byte.
    let bytes = 2.0 * (4096.0 + 4096f64.powi(2) + 4096.0);
    let ai = 2.0 * 4096f64.powi(2) / bytes;
    assert!((f(&k["arithmetic_intensity"]) - ai).abs() < 1e-12);
    assert!((ai - 1.0).abs() < 1e-3);
    assert_eq!(k["bound"], "memory");
    assert!((f(&k["time_s"]) - bytes / H100_BW).abs() < 1e-18);
    assert!((f(&k["attainable_flops_per_s"]) - ai * H100_BW).abs() < 1.0);
    // The table says the same in words.
    roofline()
        .args(args)
        .assert()
        .success()
        .stdout(predicate::str::contains("memory-bound"))
        .stdout(predicate::str::contains("295.4"))
        .stdout(predicate::str::contains("295.5× below"))
        .stderr("");
}

#[test]
fn op_attention_unfused_is_three_kernels_fused_counts_causal_pairs(
) -> Result<(), Box<dyn std::error::Error>> {
    let base = [
        "op",
        "attention",
        "--heads",
        "32",
        "--kv-heads",
        "8",
        "--head-dim",
        "128",
        "--hardware",
        "h100-sxm",
    ];
    // Decode against 4096 keys, unfused: QKᵀ, softmax, S·V.
    let mut args = base.to_vec();
    args.extend(["--q-len", "1", "--kv-len", "4096"]);
    let v = json_of(&args);
    let names: Vec<&str> = v["kernels"]
        .as_array()
        .ok_or("expected a value, got None")?
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["qk_matmul", "softmax", "sv_matmul"]);
    // QKᵀ: 2·32·1·4096·128 FLOP; reads Q (32·128·2) and K once per kv head (8·4096·128·2).
    let qk = &v["kernels"][0];
    assert_eq!(f(&qk["flops"]), 2.0 * 32.0 * 4096.0 * 128.0);
    assert_eq!(
        f(&qk["bytes_read"]),
        32.0 * 128.0 * 2.0 + 8.0 * 4096.0 * 128.0 * 2.0
    );
    // Softmax runs on the fp32 vector peak (67 TFLOP/s on the H100 SXM).
    assert_eq!(f(&v["kernels"][1]["peak_flops_per_s"]), 67e12);
    // Fused and causal, prefill of 2048: pairs 2048·2049/2; FLOPs 32·pairs·(4·128 + 7).
    let mut fused = base.to_vec();
    fused.extend(["--q-len", "2048", "--causal", "--fused"]);
    let v = json_of(&fused);
    assert_eq!(
        v["kernels"]
            .as_array()
            .ok_or("expected a value, got None")?
            .len(),
        1
    );
    let pairs = 2048.0 * 2049.0 / 2.0;
    assert_eq!(f(&v["kernels"][0]["flops"]), 32.0 * pairs * 519.0);
    // Q and O once each (2048·32·128·2), K and V once each with 8 kv heads.
    let q = 2048.0 * 32.0 * 128.0 * 2.0;
    assert_eq!(
        f(&v["kernels"][0]["bytes"]),
        2.0 * q + 2.0 * 2048.0 * 8.0 * 128.0 * 2.0
    );
    Ok(())
}

#[test]
fn op_vector_kernels_by_hand() {
    // A6000: fp32 vector 38.7 TFLOP/s, 768 GB/s.
    let sm = json_of(&[
        "op",
        "softmax",
        "--hardware",
        "a6000",
        "--rows",
        "65536",
        "--cols",
        "2048",
    ]);
    let e = 65536.0 * 2048.0;
    assert_eq!(f(&sm["kernels"][0]["flops"]), 7.0 * e);
    assert_eq!(f(&sm["kernels"][0]["bytes"]), 2.0 * e * 2.0);
    let rms = json_of(&[
        "op",
        "rmsnorm",
        "--hardware",
        "a6000",
        "--rows",
        "2048",
        "--cols",
        "4096",
    ]);
    // 4 FLOP per element; reads x and the 4096 weights, writes y.
    let e = 2048.0 * 4096.0;
    assert_eq!(f(&rms["kernels"][0]["flops"]), 4.0 * e);
    assert_eq!(f(&rms["kernels"][0]["bytes"]), (2.0 * e + 4096.0) * 2.0);
    assert_eq!(f(&rms["kernels"][0]["ridge_point"]), 38.7e12 / 768e9);
    let ln = json_of(&[
        "op",
        "layernorm",
        "--hardware",
        "a6000",
        "--rows",
        "1",
        "--cols",
        "768",
        "--precision",
        "fp32",
    ]);
    assert_eq!(f(&ln["kernels"][0]["flops"]), 7.0 * 768.0);
    assert_eq!(
        f(&ln["kernels"][0]["bytes"]),
        (768.0 + 2.0 * 768.0 + 768.0) * 4.0
    );
    let add = json_of(&[
        "op",
        "elementwise",
        "--hardware",
        "a6000",
        "--inputs",
        "2",
        "--elements",
        "1000",
    ]);
    // An add: 1 FLOP per element over 3 tensors of 2 bytes: AI = 1/6.
    assert!((f(&add["kernels"][0]["arithmetic_intensity"]) - 1.0 / 6.0).abs() < 1e-12);
    roofline()
        .args([
            "op", "softmax", "--rows", "10", "--cols", "20", "--format", "csv",
        ])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("hardware,name,kind,flops"));
}

#[test]
fn op_rejects_bad_shapes_with_the_flag_named() {
    roofline()
        .args(["op", "gemm", "--m", "0", "--n", "1", "--k", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--m"))
        .stderr(predicate::str::contains("at least 1"));
    roofline()
        .args([
            "op",
            "attention",
            "--heads",
            "32",
            "--kv-heads",
            "5",
            "--head-dim",
            "128",
            "--q-len",
            "1",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("error: `--kv-heads`"))
        .stderr(predicate::str::contains("hint:"));
    roofline()
        .args([
            "op",
            "gemm",
            "--m",
            "1",
            "--n",
            "1",
            "--k",
            "1",
            "--precision",
            "fp8",
            "--hardware",
            "a6000",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no published dense peak for `fp8`",
        ));
}

#[test]
fn op_explain_reads_like_a_worked_exercise() {
    roofline()
        .args([
            "op",
            "gemm",
            "--m",
            "1",
            "--n",
            "4096",
            "--k",
            "4096",
            "--hardware",
            "h100-sxm",
            "--explain",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("F = 2·m·n·k"))
        .stdout(predicate::str::contains("= 2·1·4096·4096"))
        .stdout(predicate::str::contains("= 33,554,432 FLOP"))
        .stdout(predicate::str::contains("= 33,554,432 / 33,570,816"))
        .stdout(predicate::str::contains("= 989.5e12 / 3.35e12"))
        .stdout(predicate::str::contains("= 295.4 FLOP/B"))
        .stdout(predicate::str::contains("⇒  memory-bound"))
        .stdout(predicate::str::contains("Williams, Waterman and Patterson"))
        .stdout(predicate::str::contains("H100 product page/datasheet"))
        .stdout(predicate::str::contains("So: gemm is memory-bound"));
}

#[test]
fn analyze_explain_q_proj_in_decode_traces_the_model() -> Result<(), Box<dyn std::error::Error>> {
    let out = roofline()
        .args([
            "analyze",
            "--hardware",
            "a6000",
            "--stage",
            "decode",
            "--explain",
            "q_proj",
        ])
        .output()?;
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout)?;
    for needle in [
        "q_proj (gemm) on NVIDIA RTX A6000 (a6000)",
        "here T = B·s = 1·1",
        "here h·e = 32·128",
        // 4096²·2 + 4096·2 read, 4096·2 written (docs/cost-model.md §9).
        "= 33,570,816 B",
        // 154.8e12 / 768e9 = 201.5625.
        "= 154.8e12 / 768e9",
        "= 201.6 FLOP/B",
        // 33,570,816 / 768e9 = 43.71 µs.
        "= 43.71e-6 s",
        "n = n_L (once in every decoder block)",
        "So: q_proj is memory-bound",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let v = json_of(&[
        "analyze",
        "--hardware",
        "a6000",
        "--stage",
        "decode",
        "--explain",
        "q_proj",
    ]);
    let d = &v["derivations"][0];
    assert_eq!(d["stage"], "decode");
    // Null for a step the derivation lacks: it equals none of the values below.
    let step = |sym: &str| {
        d["steps"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["symbol"] == sym))
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(f(&step("F")["outcome"]["value"]), 33_554_432.0);
    assert_eq!(f(&step("D")["outcome"]["value"]), 33_570_816.0);
    assert!((f(&step("t")["outcome"]["value"]) - 33_570_816.0 / 768e9).abs() < 1e-18);
    assert_eq!(step("bound")["outcome"]["text"], "memory-bound");
    Ok(())
}

#[test]
fn analyze_explain_unknown_operator_suggests_the_closest() {
    roofline()
        .args(["analyze", "--explain", "q_prj"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("error: `--explain q_prj`"))
        .stderr(predicate::str::contains("did you mean `q_proj`?"));
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// Operators with FLOPs per stage, from the JSON analysis: those are the plotted points.
fn operators_with_flops(stage: &str) -> usize {
    let v = json_of(&["analyze", "--stage", stage]);
    v["stages"][0]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| f(&o["flops"]) > 0.0)
        .count()
}

#[test]
fn analyze_plot_svg_has_a_point_per_operator_and_png_is_an_image(
) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let svg = dir.path().join("roofline.svg");
    roofline()
        .args(["analyze", "--plot"])
        .arg(&svg)
        .assert()
        .success()
        .stdout(predicate::str::contains("q_proj"));
    let text = std::fs::read_to_string(&svg)?;
    assert!(text.starts_with("<svg"));
    let expected = operators_with_flops("prefill") + operators_with_flops("decode");
    assert_eq!(count(&text, "class=\"op-point\""), expected);
    assert_eq!(
        count(&text, "data-stage=\"prefill\" data-name"),
        operators_with_flops("prefill")
    );
    assert!(text.contains("font-family=\"DejaVu Sans, sans-serif\""));
    let png = dir.path().join("roofline.png");
    roofline()
        .args(["analyze", "--stage", "decode", "--plot"])
        .arg(&png)
        .assert()
        .success();
    let bytes = std::fs::read(&png)?;
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(bytes.len() > 20_000, "{} bytes", bytes.len());
    Ok(())
}

#[test]
fn output_files_are_never_overwritten_without_force() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let p = dir.path().join("a.svg");
    std::fs::write(&p, "keep me")?;
    roofline()
        .args(["op", "gemm", "--m", "1", "--n", "2", "--k", "3", "--plot"])
        .arg(&p)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("already exists"))
        .stderr(predicate::str::contains("hint: pass --force"));
    assert_eq!(std::fs::read_to_string(&p)?, "keep me");
    roofline()
        .args([
            "op", "gemm", "--m", "1", "--n", "2", "--k", "3", "--force", "--plot",
        ])
        .arg(&p)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&p)?.contains("op-point"));
    // A folder that does not exist.
    roofline()
        .args(["hardware", "show", "a6000", "--plot"])
        .arg(dir.path().join("no/such/folder/a.png"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not exist"))
        .stderr(predicate::str::contains("mkdir -p"));
    // Not SVG or PNG.
    roofline()
        .args(["analyze", "--plot"])
        .arg(dir.path().join("a.jpg"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("SVG or PNG"));
    // The report: same rules for --out.
    let html = dir.path().join("r.html");
    std::fs::write(&html, "old")?;
    roofline()
        .args(["report", "--stage", "decode", "--out"])
        .arg(&html)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(std::fs::read_to_string(&html)?, "old");
    Ok(())
}

#[test]
fn hardware_compare_puts_chips_side_by_side() -> Result<(), Box<dyn std::error::Error>> {
    let args = ["hardware", "compare", "a100-sxm-80gb", "h100-sxm", "h200"];
    roofline()
        .args(args)
        .assert()
        .success()
        .stdout(predicate::str::contains("a100-sxm-80gb"))
        .stdout(predicate::str::contains("bf16 ridge point (FLOP/B)"))
        // A100: 312 TFLOP/s over 2.039 TB/s = 153.0; H100: 295.4; H200: 989.5 / 4.8 = 206.1.
        .stdout(predicate::str::contains("153.0"))
        .stdout(predicate::str::contains("295.4"))
        .stdout(predicate::str::contains("206.1"));
    let out = roofline().args(args).args(["--format", "csv"]).output()?;
    let text = String::from_utf8(out.stdout)?;
    assert!(text.starts_with("quantity,unit,a100-sxm-80gb,h100-sxm,h200\n"));
    let bw = text
        .lines()
        .find(|l| l.starts_with("main-memory bandwidth"))
        .ok_or("expected a value, got None")?;
    assert_eq!(
        bw,
        "main-memory bandwidth,B/s,2039000000000,3350000000000,4800000000000"
    );
    let v = json_of(&args);
    let h200 = &v["hardware"][2];
    assert!((f(&h200["ridge_point_flop_per_byte"]["bf16"]) - 989.5 / 4.8).abs() < 1e-9);
    // One chip is not a comparison.
    roofline()
        .args(["hardware", "compare", "h100-sxm"])
        .assert()
        .code(2);
    Ok(())
}

#[test]
fn hardware_compare_plot_overlays_every_chip() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let p = dir.path().join("c.svg");
    roofline()
        .args([
            "hardware",
            "compare",
            "a100-sxm-80gb",
            "h100-sxm",
            "h200",
            "--plot",
        ])
        .arg(&p)
        .assert()
        .success();
    let svg = std::fs::read_to_string(&p)?;
    for needle in [
        "memory roof 2.04 TB/s",
        "memory roof 3.35 TB/s",
        "memory roof 4.80 TB/s",
        ">153.0</text>",
        ">295.4</text>",
        ">206.1</text>",
    ] {
        assert!(svg.contains(needle), "missing {needle}");
    }
    assert_eq!(count(&svg, "class=\"op-point\""), 0);
    // One chip: every precision's roof and ridge (H100 SXM fp8 1979 / 3.35 = 590.7).
    let one = dir.path().join("h100.svg");
    roofline()
        .args(["hardware", "show", "h100-sxm", "--plot"])
        .arg(&one)
        .assert()
        .success()
        .stdout(predicate::str::contains("989.5 TFLOP/s"));
    let svg = std::fs::read_to_string(&one)?;
    assert!(svg.contains(">590.7</text>") && svg.contains(">295.4</text>"));
    Ok(())
}

#[test]
fn plots_draw_the_roofs_in_use_unless_all_roofs() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let draw = |name: &str, extra: &[&str]| -> Result<String, Box<dyn std::error::Error>> {
        let p = dir.path().join(name);
        roofline()
            .args([
                "hardware",
                "compare",
                "a6000",
                "h100-sxm",
                "--precision",
                "bf16",
            ])
            .args(extra)
            .arg("--plot")
            .arg(&p)
            .assert()
            .success();
        Ok(std::fs::read_to_string(&p)?)
    };
    // bf16 only: the H100 SXM's 989.5 TFLOP/s, not its fp8/int8 (1979) nor its fp64/fp32 (67).
    let used = draw("used.svg", &[])?;
    assert!(used.contains("bf16/fp16 989.5 TFLOP/s"));
    assert!(!used.contains("fp8/int8 1.98 PFLOP/s") && !used.contains("fp64/fp32 67.0 TFLOP/s"));
    let all = draw("all.svg", &["--all-roofs"])?;
    assert!(all.contains("fp8/int8 1.98 PFLOP/s") && all.contains("fp64/fp32 67.0 TFLOP/s"));
    Ok(())
}

/// Headless Chromium, if installed (Debian's `chromium`; `.ci/run` installs it).
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
}

/// Runs Chromium headless on `url` with `extra` flags and returns its stdout, killing it after
/// 90 s. Its output goes to a file, not a pipe, so a large DOM cannot fill a pipe and stall it.
fn run_chromium(bin: &Path, url: &str, extra: &[String]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let stdout_path = profile.path().join("stdout.txt");
    let stdout = std::fs::File::create(&stdout_path).unwrap();
    let mut child = std::process::Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .stdout(stdout)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read_to_string(&stdout_path).unwrap_or_default()
}

// Prints why it skips Chromium (stderr), and where the screenshot is, for the person running
// the tests.
#[allow(clippy::print_stdout, clippy::print_stderr)]
#[test]
fn report_is_one_self_contained_file_that_chromium_renders(
) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let html = dir.path().join("report.html");
    roofline()
        .args(["report", "llama-2-7b", "--hardware", "a6000", "--out"])
        .arg(&html)
        .assert()
        .success()
        .stdout(predicate::str::contains("wrote"));
    let text = std::fs::read_to_string(&html)?;
    // Self-contained: nothing fetched, nothing run. (The SVG namespace is a name, not a fetch.)
    for bad in ["<script", "<link", "@import", "url(", "src=", "https://"] {
        assert!(!text.contains(bad), "report contains {bad}");
    }
    assert_eq!(text.matches("http://").count(), 1, "only the SVG namespace");
    for needle in [
        "id=\"settings\"",
        "id=\"chip-peaks\"",
        "id=\"ops-prefill\"",
        "id=\"ops-decode\"",
        "id=\"memory-decode\"",
        "class=\"derivation\"",
        // The A6000's bf16 ridge, 154.8e12 / 768e9 = 201.6.
        "<td>201.6</td>",
    ] {
        assert!(text.contains(needle), "missing {needle}");
    }
    let points = operators_with_flops("prefill") + operators_with_flops("decode");
    assert_eq!(count(&text, "class=\"op-point\""), points);

    let Some(bin) = chromium() else {
        // In CI the browser is required (`.ci/run` installs it): a missing one fails the run.
        assert!(
            std::env::var_os("CI").is_none(),
            "`chromium` is not installed; `.ci/run` installs it (apt-get install chromium)"
        );
        eprintln!("SKIPPED outside CI: `chromium` is not installed (apt-get install chromium); CI requires it");
        return Ok(());
    };
    let url = format!("file://{}", html.display());
    let dom = run_chromium(&bin, &url, &["--dump-dom".to_string()]);
    assert!(
        dom.contains("id=\"ops-prefill\""),
        "DOM lacks the prefill table"
    );
    assert!(
        dom.contains("id=\"ops-decode\""),
        "DOM lacks the decode table"
    );
    assert!(dom.contains("<svg"), "DOM lacks the plot");
    assert_eq!(count(&dom, "class=\"op-point\""), points);
    // Every row of the operator tables made it into the DOM: one per operator and stage.
    let rows = count(&dom, "<tr data-name=");
    let v = json_of(&["analyze"]);
    let ops: usize = v["stages"]
        .as_array()
        .ok_or("expected a value, got None")?
        .iter()
        .map(|s| s["ops"].as_array().unwrap().len())
        .sum();
    assert_eq!(rows, ops);
    // A screenshot, kept under target/ for a person to look at.
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot.png");
    let _ = std::fs::remove_file(&shot);
    run_chromium(
        &bin,
        &url,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2400".into(),
        ],
    );
    let png = std::fs::read(&shot)?;
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        png.len() > 50_000,
        "screenshot looks blank ({} bytes)",
        png.len()
    );
    println!("screenshot: {}", shot.display());
    Ok(())
}

// Prints why it skips Chromium, for the person running the tests.
#[allow(clippy::print_stdout)]
#[test]
fn a_parallel_report_renders_with_its_communication_panel() -> Result<(), Box<dyn std::error::Error>>
{
    let dir = tempfile::tempdir()?;
    let html = dir.path().join("tp8.html");
    roofline()
        .args([
            "report",
            "llama-3.1-70b",
            "--system",
            "dgx-h100",
            "--tp",
            "8",
            "--stage",
            "decode",
            "--batch",
            "32",
            "--out",
        ])
        .arg(&html)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "communication panel (4 collectives)",
        ));
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "`chromium` is not installed; `.ci/run` installs it (apt-get install chromium)"
        );
        println!("SKIPPED: `chromium` is not installed (apt-get install chromium); CI requires it");
        return Ok(());
    };
    let dom = run_chromium(
        &bin,
        &format!("file://{}", html.display()),
        &["--dump-dom".to_string()],
    );
    for id in [
        "ops-decode",
        "step-decode",
        "scaling-decode",
        "memory-decode",
    ] {
        assert!(dom.contains(&format!("id=\"{id}\"")), "DOM lacks {id}");
    }
    // Two all-reduces a block and the embedding's, lm_head's all-gather: four stars on the
    // panel, and every row of the table in the DOM.
    assert_eq!(count(&dom, "class=\"comm-point\""), 4);
    assert_eq!(
        count(&dom, "<tr data-name=\"mlp.tp_reduce\" class=\"comm\">"),
        1
    );
    assert!(dom.contains("exposed communication (not hidden behind compute)"));
    Ok(())
}

#[test]
fn an_operator_without_flops_has_no_ridge_distance_in_csv_or_json() {
    // 0 FLOP per element: arithmetic intensity 0, infinitely below the ridge. JSON writes null,
    // CSV an empty field, never `inf`.
    let args = [
        "op",
        "elementwise",
        "--elements",
        "1048576",
        "--flops-per-element",
        "0",
        "--hardware",
        "h100-sxm",
    ];
    let out = roofline()
        .args(args)
        .args(["--format", "csv"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let row = text.lines().nth(1).expect("a row");
    // Time: (4 + 2) B × 2^20 elements = 6,291,456 B over 3.35 TB/s = 1.878046567164179 µs.
    assert!(row.ends_with(",memory,0,0.000001878046567164179,"), "{row}");
    assert!(!text.contains("inf"), "{text}");
    let j = json_of(&args);
    assert!(j["kernels"][0]["ridge_distance"].is_null(), "{j}");
}
