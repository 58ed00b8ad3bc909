//! `roofline train` end to end: the JSON valid against `docs/schema/train.schema.json`, the
//! waterfall's shares and the MFU summing to the peak, the bound never slower than the
//! estimate, throughput × step = the step's tokens, the memory and FLOPs checked against hand
//! arithmetic, `--measured-step`'s unexplained bar, the waterfall SVG, and every bad input an
//! exit 2 with an `error:` line naming the flag and a `hint:`.

mod common;

use common::{assert_valid, bad_input, roofline};
use predicates::prelude::*;
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Llama-3.1-8B on 8 A100s, tensor parallel over all of them: 8 sequences of 2048 tokens a
/// step in micro-batches of 1.
const TP8: &[&str] = &[
    "train",
    "llama-3.1-8b",
    "--hardware",
    "a100-sxm-80gb",
    "--devices",
    "8",
    "--tp",
    "8",
    "--dp",
    "1",
    "--global-batch",
    "8",
    "--micro-batch",
    "1",
    "--seq-len",
    "2048",
];

fn json(args: &[&str]) -> Result<Value, Box<dyn std::error::Error>> {
    let out = roofline().args(args).args(["--format", "json"]).output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout)?;
    assert_valid("train", &v, &args.join(" "));
    Ok(v)
}

fn num(v: &Value) -> Result<f64, Box<dyn std::error::Error>> {
    v.as_f64()
        .ok_or_else(|| format!("not a number: {v}").into())
}

/// Σ bar shares + MFU of a waterfall object.
fn waterfall_sum(w: &Value) -> Result<f64, Box<dyn std::error::Error>> {
    let mut sum = num(&w["mfu"])?;
    for b in w["bars"].as_array().ok_or("no bars")? {
        sum += num(&b["share"])?;
    }
    Ok(sum)
}

#[test]
fn the_waterfall_sums_to_the_peak_and_the_bound_is_never_slower() -> TestResult {
    let v = json(TP8)?;
    for which in ["bound", "estimate"] {
        let p = &v[which];
        let sum = waterfall_sum(&p["waterfall"])?;
        assert!((sum - 1.0).abs() < 1e-9, "{which}: Σ shares + MFU = {sum}");
        // Throughput × step = the step's tokens: 8 sequences × 2048 tokens = 16 384.
        let tokens = num(&p["tokens_per_s"])? * num(&p["step_time_s"])?;
        assert!(
            (tokens - 8.0 * 2048.0).abs() < 1e-6 * 16384.0,
            "{which}: {tokens}"
        );
        assert_eq!(p["devices"], 8);
        // m = B_global / (d · e · b) = 8 / (1 · 1 · 1) = 8 micro-batches.
        assert_eq!(p["micro_batches"], 8);
        assert!((num(&p["waterfall"]["mfu"])? - num(&p["mfu"])?).abs() < 1e-9);
    }
    let bound = num(&v["bound"]["step_time_s"])?;
    let estimate = num(&v["estimate"]["step_time_s"])?;
    assert!(bound <= estimate, "bound {bound} s > estimate {estimate} s");
    assert!(num(&v["bound"]["mfu"])? >= num(&v["estimate"]["mfu"])?);
    assert_eq!(v["bound"]["efficiency"]["matmul"], 1.0);
    // The A100's own matmul share (its chip file): 230 of 312 TFLOP/s, to four digits.
    assert!((num(&v["estimate"]["efficiency"]["matmul"])? - 230.0 / 312.0).abs() < 1e-4);
    Ok(())
}

#[test]
fn memory_and_flops_match_hand_arithmetic() -> TestResult {
    let v = json(TP8)?;
    let m = &v["bound"]["memory"];
    // Megatron's mixed-precision Adam: 2 bytes of bf16 weights, 4 of fp32 gradients, 12 of
    // optimizer states per parameter a device holds (no ZeRO).
    let params = num(&m["parameters"])?;
    assert_eq!(num(&m["weights_bytes"])?, params * 2.0);
    assert_eq!(num(&m["gradients_bytes"])?, params * 4.0);
    assert_eq!(num(&m["optimizer_bytes"])?, params * 12.0);
    // Llama-3.1-8B: h = 4096, 32 blocks, 32 query and 8 KV heads of 128, MLP 14 336, vocab
    // 128 256, untied. A block: q and o 4096² each, k and v 4096·1024 each, gate, up and down
    // 4096·14 336 each, two norms of 4096.
    let h: f64 = 4096.0;
    let block = 2.0 * h * h + 2.0 * h * 1024.0 + 3.0 * h * 14336.0 + 2.0 * h;
    let embeddings = 2.0 * 128256.0 * h;
    let total = 32.0 * block + embeddings + h;
    assert!((total - 8.03e9).abs() < 0.01e9, "{total}");
    // Split 8 ways by tensor parallelism (norms replicated: a few kB more per device).
    let per_device = total / 8.0;
    assert!(
        (params - per_device).abs() < 0.001 * per_device,
        "{params} vs {per_device}"
    );
    // Model FLOPs of the step: 6 FLOPs per parameter per token for every matmul weight (the
    // input embedding is a lookup, no FLOPs), plus causal attention, 6·L·s·h per token
    // (QKᵀ and P·V, 2·2·s·h forward over all pairs, half of them under the mask, × 3 with the
    // backward), over 8 × 2048 tokens.
    let tokens = 8.0 * 2048.0;
    let matmul_params = total - 128256.0 * h - (2.0 * 32.0 + 1.0) * h;
    let attention = 6.0 * 32.0 * 2048.0 * h;
    let want = (6.0 * matmul_params + attention) * tokens;
    let got = num(&v["bound"]["model_flops"])?;
    assert!(
        (got - want).abs() < 0.01 * want,
        "model FLOPs {got:e} vs hand {want:e}"
    );
    assert_eq!(v["bound"]["model_flops"], v["estimate"]["model_flops"]);
    Ok(())
}

#[test]
fn a_measured_step_adds_the_unexplained_bar() -> TestResult {
    let mut args = TP8.to_vec();
    args.extend(["--measured-step", "20s", "--tokens", "1e9"]);
    let v = json(&args)?;
    let w = &v["measured_waterfall"];
    assert_eq!(v["measured_step_s"], 20.0);
    assert_eq!(w["step_s"], 20.0);
    let bars = w["bars"].as_array().ok_or("no bars")?;
    let last = bars.last().ok_or("no bar")?;
    assert_eq!(last["reason"], "unexplained");
    // unexplained = (20 s − the estimate's step) / 20 s.
    let step = num(&v["estimate"]["step_time_s"])?;
    assert!((num(&last["share"])? - (20.0 - step) / 20.0).abs() < 1e-9);
    assert!((waterfall_sum(w)? - 1.0).abs() < 1e-9);
    // Time to train 1e9 tokens = 1e9 / tokens per second.
    let t = num(&v["estimate"]["time_to_train_s"])?;
    assert!((t - 1e9 / num(&v["estimate"]["tokens_per_s"])?).abs() < 1e-6 * t);
    Ok(())
}

#[test]
fn the_table_puts_the_bound_beside_the_estimate_with_the_waterfall() -> TestResult {
    let mut args = TP8.to_vec();
    args.extend(["--measured-step", "20s"]);
    roofline()
        .args(&args)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "roofline bound: no step is faster",
        ))
        .stdout(predicate::str::contains(
            "estimate at the chip's efficiency",
        ))
        .stdout(predicate::str::contains("dense peak"))
        .stdout(predicate::str::contains("= MFU"))
        .stdout(predicate::str::contains("HFU"))
        .stdout(predicate::str::contains("unexplained"))
        .stdout(predicate::str::contains("memory per GPU"))
        .stdout(predicate::str::contains("fits: yes"));
    let csv = roofline().args(TP8).args(["--format", "csv"]).output()?;
    assert!(csv.status.success());
    let text = String::from_utf8(csv.stdout)?;
    assert!(text.starts_with("section,quantity,bound,estimate,measured\n"));
    assert!(text.contains("waterfall_share,"));
    Ok(())
}

#[test]
fn the_waterfall_plot_is_svg_with_every_bar_and_is_not_overwritten() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("waterfall.svg");
    let p = path.to_string_lossy().into_owned();
    let mut args = TP8.to_vec();
    args.extend(["--measured-step", "20s", "--plot", &p, "--format", "json"]);
    let out = roofline().args(&args).output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout)?;
    let svg = std::fs::read_to_string(&path)?;
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<g ").count(), svg.matches("</g>").count());
    for b in v["measured_waterfall"]["bars"]
        .as_array()
        .ok_or("no bars")?
    {
        let label = b["label"].as_str().ok_or("no label")?;
        let escaped = label
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        assert!(svg.contains(&escaped), "no label `{label}` in the SVG");
    }
    assert!(
        svg.contains("data-reason=\"unexplained\"") && svg.contains("MFU ") && svg.contains("HFU ")
    );
    // Again without --force: refused, the file untouched; with --force, rewritten.
    let before = std::fs::read(&path)?;
    let mut again = TP8.to_vec();
    again.extend(["--plot", &p]);
    roofline()
        .args(&again)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"))
        .stderr(predicate::str::contains("hint: "));
    assert_eq!(std::fs::read(&path)?, before);
    again.push("--force");
    roofline().args(&again).assert().success();
    Ok(())
}

#[test]
fn the_html_report_holds_the_waterfall_and_the_tables() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("train.html");
    let p = path.to_string_lossy().into_owned();
    let mut args = TP8.to_vec();
    args.extend(["--html", &p]);
    let table = roofline().args(&args).output()?;
    assert!(
        table.status.success(),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );
    let page = std::fs::read_to_string(&path)?;
    assert!(page.starts_with("<!DOCTYPE html>") || page.starts_with("<!doctype html>"));
    assert!(page.contains("<h2>MFU waterfall</h2>") && page.contains("<svg"));
    // The page carries the same tables the command prints (HTML-escaped in a <pre>).
    assert!(
        page.contains("MFU waterfall (share of the dense peak") && page.contains("memory per GPU")
    );
    assert!(!page.contains("{{"), "a placeholder left unfilled");
    // Not overwritten without --force; only .html.
    roofline()
        .args(&args)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    bad_input(&with("--html", &["train.txt"]), "--html");
    Ok(())
}

/// TP8 with `flag` set to `value` (replaced when TP8 has it, else added).
fn with(flag: &str, value: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = TP8.iter().map(|s| s.to_string()).collect();
    if let Some(i) = v.iter().position(|a| a == flag) {
        v.remove(i);
        if !value.is_empty() {
            v.remove(i);
        }
    }
    v.push(flag.to_string());
    v.extend(value.iter().map(|s| s.to_string()));
    v
}

#[test]
fn bad_input_names_the_flag_with_a_hint() {
    for (flag, value, needle) in [
        ("--tp", &["0"][..], "--tp"),
        ("--global-batch", &["0"][..], "--global-batch"),
        ("--global-batch", &["-4"][..], "--global-batch"),
        ("--micro-batch", &["0"][..], "--micro-batch"),
        ("--seq-len", &["0"][..], "--seq-len"),
        ("--dp", &["0"][..], "--dp"),
        // 8 sequences do not split into micro-batches of 3.
        ("--micro-batch", &["3"][..], "--global-batch"),
        // Llama-3.1-8B's 32 heads do not split 3 ways.
        ("--tp", &["3"][..], "--tp"),
        // TP 8 × DP 2 = 16 devices, --devices gives 8.
        ("--dp", &["2"][..], "--devices"),
        ("--efficiency", &["matmul=1.5"][..], "--efficiency"),
        ("--efficiency", &["matmul=0"][..], "--efficiency"),
        ("--efficiency", &["speed=0.5"][..], "--efficiency"),
        ("--schedule", &["gpipe"][..], "--schedule"),
        ("--zero", &["4"][..], "--zero"),
        ("--virtual-stages", &["2"][..], "--virtual-stages"),
        ("--measured-step", &["0s"][..], "--measured-step"),
        // Faster than the roofline bound (hundreds of milliseconds here): no step can be.
        ("--measured-step", &["1ms"][..], "--measured-step"),
        ("--efficiency", &["matmul=1e-300"][..], "--efficiency"),
        (
            "--efficiency",
            &["network=0.8,network=0.5"][..],
            "--efficiency",
        ),
        ("--tokens", &["1e40"][..], "--tokens"),
    ] {
        bad_input(&with(flag, value), needle);
    }
    // Interleaved over 2 stages with 3 micro-batches: m is not a multiple of p.
    bad_input(
        &[
            "train",
            "llama-3.1-8b",
            "--hardware",
            "a100-sxm-80gb",
            "--devices",
            "8",
            "--tp",
            "4",
            "--pp",
            "2",
            "--global-batch",
            "3",
            "--schedule",
            "interleaved",
            "--virtual-stages",
            "2",
        ],
        "--schedule interleaved",
    );
    // A plot that is neither SVG nor PNG.
    bad_input(&with("--plot", &["waterfall.pdf"]), "--plot");
}

#[test]
fn mfu_with_the_layout_flags_adds_the_predicted_waterfall() -> TestResult {
    let base = [
        "mfu",
        "llama-3.1-8b",
        "--hardware",
        "a100-sxm-80gb",
        "--devices",
        "8",
        "--step-time",
        "0.9s",
        "--global-batch",
        "8",
        "--seq-len",
        "2048",
    ];
    let mut args = base.to_vec();
    args.extend(["--tp", "8"]);
    roofline()
        .args(&args)
        .assert()
        .success()
        .stdout(predicate::str::contains("predicted MFU waterfall"))
        .stdout(predicate::str::contains(
            "unexplained (measured − predicted)",
        ));
    // Without the layout flags, mfu's output has no waterfall.
    roofline()
        .args(base)
        .assert()
        .success()
        .stdout(predicate::str::contains("predicted MFU waterfall").not());
    // The waterfall needs the table; a partial recompute is not a training-step policy.
    let mut json = args.clone();
    json.extend(["--format", "json"]);
    bad_input(&json, "--format");
    let mut partial = args.clone();
    partial.extend(["--recompute", "partial=0.5"]);
    bad_input(&partial, "--recompute");
    Ok(())
}

#[test]
fn a_step_that_does_not_fit_names_the_largest_micro_batch_that_does() -> TestResult {
    // 64 sequences of 4096 tokens in one micro-batch, unfused attention: far over 80 GB.
    let args = [
        "train",
        "llama-3.1-8b",
        "--hardware",
        "a100-sxm-80gb",
        "--devices",
        "8",
        "--tp",
        "8",
        "--global-batch",
        "64",
        "--micro-batch",
        "64",
        "--seq-len",
        "4096",
        "--no-flash-attention",
    ];
    let v = json(&args)?;
    let m = &v["bound"]["memory"];
    assert_eq!(m["fits"], false);
    let b = v["largest_fitting_micro_batch"]
        .as_u64()
        .ok_or("no largest micro-batch")?;
    assert!((1..64).contains(&b));
    // Activations grow linearly in b while the states and the reserve do not: the b found
    // fits the capacity at b/64 of the activations, b + 1 does not.
    let fixed = num(&m["weights_bytes"])?
        + num(&m["gradients_bytes"])?
        + num(&m["optimizer_bytes"])?
        + num(&m["communication_bytes"])?
        + num(&m["reserve_bytes"])?;
    let per_sequence = num(&m["activations_bytes"])? / 64.0;
    let capacity = num(&m["capacity_bytes"])?;
    assert!(fixed + b as f64 * per_sequence <= capacity * (1.0 + 1e-9));
    assert!(fixed + (b + 1) as f64 * per_sequence > capacity);
    roofline()
        .args(args)
        .assert()
        .success()
        .stdout(predicate::str::contains("fits: no"))
        .stdout(predicate::str::contains(
            "the largest micro-batch that fits is",
        ));
    Ok(())
}

#[test]
fn megatron_semantics_only_slow_the_step() -> TestResult {
    // TP 4 × PP 2 on 8 devices. Blocking sends and gradients
    // reduced after the backward can only lengthen the step.
    let base = with("--tp", &["4"]);
    let mut pp: Vec<&str> = base.iter().map(String::as_str).collect();
    pp.extend(["--pp", "2"]);
    let plain = json(&pp)?;
    let mut slow = pp.clone();
    slow.extend(["--blocking-p2p", "--no-overlap-grad-reduce"]);
    let slower = json(&slow)?;
    let t = |v: &Value| num(&v["estimate"]["step_time_s"]);
    assert!(
        t(&slower)? >= t(&plain)?,
        "{} < {}",
        t(&slower)?,
        t(&plain)?
    );
    let shares = |v: &Value| -> Result<f64, Box<dyn std::error::Error>> {
        let bars = v["estimate"]["waterfall"]["bars"]
            .as_array()
            .ok_or("no bars")?;
        Ok(bars
            .iter()
            .filter(|b| b["reason"] == "pipeline_communication")
            .filter_map(|b| b["share"].as_f64())
            .sum())
    };
    assert!(shares(&slower)? > 0.0);
    Ok(())
}

#[test]
fn a_layout_on_fewer_devices_than_given_says_so() -> TestResult {
    // TP 4 on a system of 8: the note names the 4 used.
    let args = with("--tp", &["4"]);
    let out = roofline().args(&args).output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("the layout uses 4 of the system's 8 devices"),
        "{text}"
    );
    Ok(())
}
