//! `roofline plan --stage train`, end to end: the table's columns and waterfalls, the JSON
//! valid against its committed schema (`docs/schema/plan-train`), every plan filling the
//! devices and dividing the batch (by hand), and every bad input an exit 2 with one `error:`
//! line naming the flag and a `hint:`.

mod common;

use common::{assert_valid, json_of, roofline};
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// GPT-2 (124M) on one node of 8 H100 SXM, 16 sequences of 1024 tokens a step.
const GPT2_8: &[&str] = &[
    "plan",
    "gpt2",
    "--stage",
    "train",
    "--hardware",
    "h100-sxm",
    "--devices",
    "8",
    "--global-batch",
    "16",
    "--seq-len",
    "1024",
];

fn num(v: &Value, key: &str) -> Result<f64, String> {
    v[key]
        .as_f64()
        .ok_or_else(|| format!("no number `{key}` in {v}"))
}

#[test]
fn json_plans_fill_the_devices_divide_the_batch_and_are_ranked() -> TestResult {
    let v = json_of(GPT2_8);
    assert_valid("plan-train", &v, "roofline plan gpt2 --stage train");
    assert_eq!(v["model"], "gpt2");
    assert_eq!(v["devices"], 8);
    let plans = v["plans"].as_array().ok_or("no plans")?;
    assert_eq!(plans.len(), 5, "--top defaults to 5");
    let fit = num(&v, "fit")?;
    assert!(fit >= 5.0 && num(&v, "evaluated")? >= fit);
    let mut previous = 0.0;
    for p in plans {
        let (t, pp, d, c, e) = (
            num(p, "tp")?,
            num(p, "pp")?,
            num(p, "dp")?,
            num(p, "cp")?,
            num(p, "ep")?,
        );
        assert_eq!(t * pp * d * c * e, 8.0, "{p}");
        let b = num(p, "micro_batch")?;
        // m = B / (d · e · b), a whole number.
        let m = 16.0 / (d * e * b);
        assert_eq!(m, num(p, "micro_batches")?, "{p}");
        assert_eq!(m.fract(), 0.0, "{p}");
        let step = num(p, "step_time_s")?;
        assert!(step >= previous, "ranked fastest first");
        previous = step;
        assert!(num(p, "step_time_bound_s")? <= step, "{p}");
        // tokens/s = B · s / T = 16 · 1024 / T.
        let tps = num(p, "tokens_per_s")?;
        assert!((tps - 16.0 * 1024.0 / step).abs() <= 1e-9 * tps, "{p}");
        // The waterfall: T₀ (MFU) and the losses make up the step.
        let shares: f64 = p["waterfall"]
            .as_array()
            .ok_or("no waterfall")?
            .iter()
            .map(|b| b["share"].as_f64().unwrap_or(0.0))
            .sum();
        assert!((shares + num(p, "mfu")? - 1.0).abs() < 1e-9, "{p}");
        assert!(num(p, "memory_per_device_bytes")? <= 80e9);
    }
    Ok(())
}

#[test]
fn table_shows_the_layouts_counts_and_waterfalls() -> TestResult {
    let out = roofline().args(GPT2_8).args(["--top", "3"]).output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout)?;
    for word in [
        "candidates evaluated",
        "fit in memory",
        "tp",
        "pp",
        "dp",
        "micro-batch",
        "recompute",
        "zero",
        "schedule",
        "step (estimate)",
        "step (bound)",
        "tokens/s",
        "MFU",
        "memory/GPU",
        "#1 waterfall",
        "#3 waterfall",
        "skipped:",
    ] {
        assert!(text.contains(word), "no `{word}` in\n{text}");
    }
    assert!(!text.contains("#4 waterfall"), "--top 3 prints 3");
    Ok(())
}

fn refused(args: &[&str], flag: &str) -> TestResult {
    let out = roofline().args(args).output()?;
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
    assert!(!err.contains("panicked"), "{what}: {err}");
    Ok(())
}

fn with(replace: &[(&str, &str)]) -> Vec<String> {
    let mut a: Vec<String> = GPT2_8.iter().map(|s| s.to_string()).collect();
    for (flag, value) in replace {
        if let Some(i) = a.iter().position(|x| x == flag) {
            // A flag's value follows it; anything else (the model) is replaced itself.
            let at = if flag.starts_with("--") { i + 1 } else { i };
            a[at] = value.to_string();
        }
    }
    a
}

#[test]
fn bad_input_names_the_flag() -> TestResult {
    let zero = with(&[("--global-batch", "0")]);
    refused(
        &zero.iter().map(String::as_str).collect::<Vec<_>>(),
        "--global-batch",
    )?;
    let missing: Vec<&str> = GPT2_8
        .iter()
        .copied()
        .take(8)
        .chain(["--seq-len", "1024"])
        .collect();
    refused(&missing, "--global-batch")?;
    // 12 H100s do not fill nodes of 8.
    let partial = with(&[("--devices", "12")]);
    refused(
        &partial.iter().map(String::as_str).collect::<Vec<_>>(),
        "--devices",
    )?;
    // Llama-3.1-405B's 810 GB of bf16 weights alone exceed 8 × 80 GB: nothing fits.
    let big = with(&[("gpt2", "llama-3.1-405b")]);
    refused(
        &big.iter().map(String::as_str).collect::<Vec<_>>(),
        "--devices",
    )?;
    let no_seq = with(&[("--seq-len", "0")]);
    refused(
        &no_seq.iter().map(String::as_str).collect::<Vec<_>>(),
        "--seq-len",
    )?;
    Ok(())
}

#[test]
fn megatron_policies_keep_the_search_to_what_megatron_ran() -> TestResult {
    // megatron-2021: full recomputation, no sequence or context parallelism, no ZeRO, no
    // ZB-H1; megatron-2022 adds selective recomputation and sequence parallelism.
    let mut args = GPT2_8.to_vec();
    args.extend(["--policies", "megatron-2021", "--top", "20"]);
    let v = json_of(&args);
    assert_valid(
        "plan-train",
        &v,
        "roofline plan gpt2 --stage train --policies",
    );
    for p in v["plans"].as_array().ok_or("no plans")? {
        assert_eq!(p["recompute"], "full", "{p}");
        assert_eq!(p["sequence_parallel"], false, "{p}");
        assert_eq!((num(p, "cp")?, num(p, "zero")?), (1.0, 0.0), "{p}");
        let schedule = p["schedule"].as_str().ok_or("no schedule")?;
        assert!(
            schedule == "1f1b" || schedule.starts_with("interleaved"),
            "{p}"
        );
    }
    let mut args = GPT2_8.to_vec();
    args.extend(["--policies", "megatron-2022", "--top", "50"]);
    let v = json_of(&args);
    for p in v["plans"].as_array().ok_or("no plans")? {
        let r = p["recompute"].as_str().ok_or("no recompute")?;
        assert!(r == "full" || r == "selective", "{p}");
        assert_eq!(num(p, "zero")?, 0.0, "{p}");
    }
    Ok(())
}
