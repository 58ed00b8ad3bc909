//! End-to-end: the serving headline that opens `analyze` and `report`, `analyze --advice`
//! (every change's command reproduces the step it was priced at), and the stepped ranges of
//! `sweep`'s lists. Expected values are hand arithmetic on the documents' own rows.

mod common;

use common::{assert_valid, bad_input, close, json_of, roofline};
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn f(v: &Value, ptr: &str) -> Result<f64, String> {
    v.pointer(ptr)
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("no number at {ptr}"))
}

/// Σ count × (time + launch) over a stage's rows: the step, summed by hand.
/// The stage's bound (Σ count × time) and its launches (Σ count × launch overhead), summed
/// from its rows.
fn step_by_hand(stage: &Value) -> Result<(f64, f64), String> {
    let ops = stage["ops"].as_array().ok_or("ops")?;
    let (mut t, mut l) = (0.0, 0.0);
    for o in ops {
        let n = o["count"].as_f64().ok_or("count")?;
        t += n * o["time_s"].as_f64().ok_or("time_s")?;
        l += n * o["launch_overhead_s"].as_f64().ok_or("launch")?;
    }
    Ok((t, l))
}

fn stdout_of(args: &[&str]) -> Result<String, Box<dyn std::error::Error>> {
    let out = roofline().args(args).output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?)
}

#[test]
fn analyze_opens_with_ttft_tpot_and_tokens_per_s() -> TestResult {
    let args = [
        "analyze",
        "llama-2-7b",
        "--hardware",
        "a6000",
        "--batch",
        "4",
        "--seq-len",
        "512",
    ];
    let v = json_of(&args);
    assert_valid("analyze", &v, "analyze with the headline");
    let ((ttft, lp), (tpot, ld)) = (
        step_by_hand(&v["stages"][0])?,
        step_by_hand(&v["stages"][1])?,
    );
    // The headline is the bound; the launches are the named addend beside it.
    assert!(close(f(&v, "/headline/prefill/ttft_s")?, ttft, 1e-9));
    assert!(close(f(&v, "/headline/decode/tpot_s")?, tpot, 1e-9));
    assert!(close(
        f(&v, "/headline/prefill/launch_and_host_s")?,
        lp,
        1e-9
    ));
    assert!(close(
        f(&v, "/headline/decode/launch_and_host_s")?,
        ld,
        1e-9
    ));
    // 4 prompts of 512 tokens; 4 sequences, one token each per step.
    assert_eq!(v["headline"]["prefill"]["prompt_tokens"], 2048);
    assert!(close(
        f(&v, "/headline/decode/output_tokens_per_s")?,
        4.0 / tpot,
        1e-9
    ));
    assert_eq!(v["headline"]["devices"], 1);

    let text = stdout_of(&args)?;
    let first = text.lines().next().unwrap_or_default();
    assert!(first.starts_with("serving: TTFT "), "{first}");
    assert!(
        first.contains(" · TPOT ") && first.contains("output tokens/s"),
        "{first}"
    );
    assert!(first.ends_with("(roofline bound: every kernel at its roof, every collective at its α–β bound, no launch cost; `roofline generate` gives an estimate beside it)"), "{first}");
    assert!(first.contains("(+ launch and host "), "{first}");
    // The headline comes before the first operator table.
    let (h, table) = (text.find("serving:"), text.find("| operator"));
    assert!(h < table);
    Ok(())
}

#[test]
fn one_stage_gives_what_that_stage_gives() -> TestResult {
    let pre = stdout_of(&["analyze", "--stage", "prefill"])?;
    let line = pre.lines().next().unwrap_or_default();
    assert!(
        line.starts_with("serving: TTFT ") && line.contains("prompt tokens/s"),
        "{line}"
    );
    assert!(!line.contains("TPOT"));
    let dec = stdout_of(&["analyze", "--stage", "decode"])?;
    let line = dec.lines().next().unwrap_or_default();
    assert!(
        line.starts_with("serving: TPOT ") && line.contains("output tokens/s"),
        "{line}"
    );
    let v = json_of(&["analyze", "--stage", "decode"]);
    assert!(v["headline"]["prefill"].is_null());
    Ok(())
}

#[test]
fn a_parallel_headline_divides_by_the_devices() -> TestResult {
    let args = [
        "analyze",
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
    let v = json_of(&args);
    assert_valid("analyze-parallel", &v, "analyze --tp 8 with the headline");
    let tpot = f(&v, "/stages/0/step_time_s")?;
    assert!(close(f(&v, "/headline/decode/tpot_s")?, tpot, 1e-12));
    // 32 tokens a step over 8 devices.
    let rate = 32.0 / tpot;
    assert!(close(
        f(&v, "/headline/decode/output_tokens_per_s")?,
        rate,
        1e-12
    ));
    assert!(close(
        f(&v, "/headline/decode/output_tokens_per_s_per_device")?,
        rate / 8.0,
        1e-12
    ));
    let text = stdout_of(&args)?;
    let line = text.lines().next().unwrap_or_default();
    assert!(
        line.starts_with("serving: TPOT ") && line.contains("per device, 8 devices"),
        "{line}"
    );
    Ok(())
}

/// The step a command line gives for `stage`: the fused plan's step under `--fusion`, the
/// parallel step under `--tp`, else the single-chip stage's total.
fn step_of_command(cmd: &str, stage: &str) -> Result<f64, Box<dyn std::error::Error>> {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    assert_eq!(words.first(), Some(&"roofline"), "{cmd}");
    let v = json_of(&words[1..]);
    let stages = v["stages"].as_array().ok_or("stages")?;
    let s = stages.iter().find(|s| s["stage"] == stage).ok_or("stage")?;
    // Every change is priced with its launches: the bound + launch and host.
    let step = if let Some(fused) = s.get("fusion") {
        fused["after"]["time_with_launch_s"].as_f64()
    } else if let Some(t) = s.get("step_time_s") {
        t.as_f64()
            .zip(s["launch_and_host_s"].as_f64())
            .map(|(a, b)| a + b)
    } else {
        s["totals"]["time_with_launch_s"].as_f64()
    };
    Ok(step.ok_or("step")?)
}

#[test]
fn every_priced_change_is_what_its_command_shows() -> TestResult {
    let v = json_of(&[
        "analyze",
        "--hardware",
        "a6000",
        "--no-flash-attention",
        "--advice",
        "--stage",
        "decode",
        "--batch",
        "2",
    ]);
    assert_valid("analyze", &v, "analyze --advice");
    let a = &v["advice"][0];
    assert_eq!(a["stage"], "decode");
    let ranked = a["ranked"].as_array().ok_or("ranked")?;
    assert!(!ranked.is_empty());
    let step = a["step_s"].as_f64().ok_or("step")?;
    for p in ranked {
        let cmd = p["command"].as_str().ok_or("command")?;
        let after = p["step_s"].as_f64().ok_or("step_s")?;
        // CUDA graphs' command spreads one launch over the k kernels: k · (λ / k) = λ, up to
        // the rounding of the quotient.
        let got = step_of_command(cmd, "decode")?;
        assert!(close(got, after, 1e-9), "{cmd}: {got} vs {after}");
        let saving = p["saving_s"].as_f64().ok_or("saving")?;
        // Batch 2 doubled: 4 sequences, one token each per step; else the current 2.
        let (expected, tokens) = if p["change"] == "batch × 2" {
            (step - after / 2.0, 4.0)
        } else {
            (step - after, 2.0)
        };
        assert!(close(saving, expected, 1e-9), "{cmd}");
        let rate = p["tokens_per_s"].as_f64().ok_or("tokens_per_s")?;
        assert!(close(rate, tokens / after, 1e-9), "{cmd}");
    }
    // Ranked by saving, largest first.
    let savings: Vec<f64> = ranked
        .iter()
        .filter_map(|p| p["saving_s"].as_f64())
        .collect();
    assert!(savings.windows(2).all(|w| w[0] >= w[1]));
    // CUDA graphs: (579 − 1) kernels × 5 µs on the A6000 (579 kernels: the README's table).
    let g = ranked
        .iter()
        .find(|p| p["change"] == "CUDA graphs")
        .ok_or("graphs")?;
    assert_eq!(v["stages"][0]["totals"]["kernels"], 579);
    assert!(close(
        g["saving_s"].as_f64().ok_or("saving")?,
        578.0 * 5e-6,
        1e-12
    ));
    // The A6000 has no fp8 peak: listed, not dropped.
    let na = a["not_applicable"].as_array().ok_or("not_applicable")?;
    assert!(na.iter().any(|n| n["change"] == "fp8"
        && n["reason"]
            .as_str()
            .is_some_and(|r| r.contains("no fp8 peak"))));
    Ok(())
}

#[test]
fn advice_tables_list_the_commands_and_what_does_not_apply() -> TestResult {
    let text = stdout_of(&["analyze", "--hardware", "a6000", "--advice"])?;
    assert!(text.contains("what to change · prefill (TTFT "));
    assert!(text.contains("what to change · decode (TPOT "));
    assert!(text.contains("not applicable: FlashAttention: FlashAttention is already on"));
    assert!(text.contains(
        "roofline analyze llama-2-7b --hardware a6000 --batch 1 --seq-len 2048 --context 2048 --fusion max"
    ));
    bad_input(&["analyze", "--advice", "--fusion", "max"], "--advice");
    bad_input(&["analyze", "--advice", "--tp", "2"], "--advice");
    Ok(())
}

#[test]
fn the_report_opens_with_the_headline_and_has_what_to_change() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("r.html");
    roofline()
        .args(["report", "--hardware", "a6000", "--out"])
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out)?;
    let (h, s, a) = (
        html.find("<section id=\"headline\">").ok_or("headline")?,
        html.find("<section class=\"stage\"").ok_or("stage")?,
        html.find("<section id=\"advice\">").ok_or("advice")?,
    );
    assert!(h < s && s < a);
    assert!(html.contains("TTFT ") && html.contains("TPOT "));
    assert!(html.contains("roofline analyze llama-2-7b --hardware a6000"));
    Ok(())
}

#[test]
fn sweep_batch_steps_linearly() -> TestResult {
    // 1..64:16 is 1, 17, 33, 49 (65 > 64).
    let v = json_of(&["sweep", "--batch", "1..64:16", "--hardware", "h100-sxm"]);
    let batches: Vec<u64> = v["groups"][0]["points"]
        .as_array()
        .ok_or("points")?
        .iter()
        .filter_map(|p| p["batch"].as_u64())
        .collect();
    assert_eq!(batches, vec![1, 17, 33, 49]);
    let text = stdout_of(&["sweep", "--batch", "1..64:16", "--hardware", "h100-sxm"])?;
    let rows: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix('|'))
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    assert_eq!(&rows[..4], &[1, 17, 33, 49]);
    bad_input(&["sweep", "--batch", "1..64:0"], "--batch");
    bad_input(&["sweep", "--batch", "1..8192:1"], "more than 4096");
    Ok(())
}
