//! `roofline serve-sim` end to end: the JSON valid against
//! `docs/schema/serve-sim.schema.json`; at a rate so low that every request runs alone, the
//! time to first token is `analyze`'s prefill of the prompt and the time per output token its
//! decode step at that context; the table, the per-request CSV, a trace file, one seed one
//! run; and every bad input an exit 2 with an `error:` line naming the flag and a `hint:`.

mod common;

use common::{assert_valid, bad_input, roofline, this_cpu};
use predicates::prelude::*;
use serde_json::Value;
use std::io::Write;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Llama-2-7B on an H100 SXM: 200 requests of 512 prompt tokens and 2 output tokens, one every
/// 1000 s on average: each request has the engine to itself (a request takes milliseconds).
const ALONE: &[&str] = &[
    "serve-sim",
    "llama-2-7b",
    "--hardware",
    "h100-sxm",
    "--rate",
    "0.001/s",
    "--requests",
    "200",
    "--prompt-dist",
    "fixed:512",
    "--output-dist",
    "fixed:2",
];

fn json(args: &[&str]) -> Result<Value, Box<dyn std::error::Error>> {
    let out = roofline().args(args).args(["--format", "json"]).output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout)?;
    if args.first() == Some(&"serve-sim") {
        assert_valid("serve-sim", &v, &args.join(" "));
    }
    Ok(v)
}

fn num(v: &Value) -> Result<f64, Box<dyn std::error::Error>> {
    v.as_f64()
        .ok_or_else(|| format!("not a number: {v}").into())
}

/// `analyze`'s step time for one sequence with FlashAttention: `stage` `prefill`
/// (`--seq-len n`) or `decode` (`--context n`).
fn analyze_time(stage: &str, n: &str) -> Result<f64, Box<dyn std::error::Error>> {
    analyze_time_with(stage, n, "--flash-attention")
}

/// As [`analyze_time`], with `attention` (`--flash-attention`, or `--logits=last` for the
/// unfused attention, analyze's default).
fn analyze_time_with(
    stage: &str,
    n: &str,
    attention: &str,
) -> Result<f64, Box<dyn std::error::Error>> {
    let len = if stage == "prefill" {
        "--seq-len"
    } else {
        "--context"
    };
    let v = json(&[
        "analyze",
        "llama-2-7b",
        "--hardware",
        "h100-sxm",
        "--stage",
        stage,
        len,
        n,
        attention,
    ])?;
    num(&v["stages"][0]["totals"]["time_s"])
}

#[test]
fn alone_a_request_takes_analyzes_prefill_then_one_decode_step() -> TestResult {
    let v = json(ALONE)?;
    let s = &v["summary"];
    assert_eq!(s["count"], 200);
    assert_eq!(s["output_tokens"], 400);
    assert_eq!(s["preemptions"], 0);
    // Alone: TTFT = the prefill of 512 tokens (its step samples the first token); the second
    // token is one decode step after 512 cached tokens: TPOT = that step; E2E = their sum.
    let prefill = analyze_time("prefill", "512")?;
    let decode = analyze_time("decode", "512")?;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b;
    let (ttft, tpot, e2e) = (
        num(&s["ttft"]["p50"])?,
        num(&s["tpot"]["p50"])?,
        num(&s["e2e"]["p50"])?,
    );
    assert!(
        close(ttft, prefill),
        "TTFT {ttft} vs analyze prefill {prefill}"
    );
    assert!(
        close(tpot, decode),
        "TPOT {tpot} vs analyze decode {decode}"
    );
    assert!(close(e2e, prefill + decode), "E2E {e2e}");
    assert_eq!(num(&s["queue"]["p99"])?, 0.0);
    // Two steps a request, one sequence each.
    assert_eq!(s["steps"], 400);
    assert_eq!(num(&s["mean_batch"])?, 1.0);
    // 200 requests over the makespan.
    let makespan = num(&s["makespan"])?;
    assert!(close(num(&s["requests_per_s"])?, 200.0 / makespan));
    assert_eq!(v["requests"]["arrivals"], "poisson");
    assert_eq!(v["requests"]["prompt_dist"], "fixed:512");
    assert!(v["kv_capacity_tokens"]
        .as_u64()
        .is_some_and(|t| t > 100_000));
    Ok(())
}

#[test]
fn unfused_attention_takes_analyzes_unfused_prefill() -> TestResult {
    let mut args = ALONE.to_vec();
    args.push("--no-flash-attention");
    let v = json(&args)?;
    let prefill = analyze_time_with("prefill", "512", "--no-flash-attention")?;
    let ttft = num(&v["summary"]["ttft"]["p50"])?;
    assert!(
        (ttft - prefill).abs() <= 1e-6 * prefill,
        "{ttft} vs {prefill}"
    );
    // FlashAttention's prefill is faster (no score matrix through memory).
    assert!(analyze_time("prefill", "512")? < prefill);
    Ok(())
}

#[test]
fn one_seed_gives_one_run() -> TestResult {
    let args = [
        "serve-sim",
        "llama-3.1-8b",
        "--rate",
        "50/s",
        "--requests",
        "300",
        "--output-dist",
        "uniform:16..64",
        "--seed",
        "7",
    ];
    let a = json(&args)?;
    assert_eq!(a, json(&args)?);
    assert!(num(&a["summary"]["mean_batch"])? > 1.0);
    Ok(())
}

#[test]
fn the_table_says_the_latencies_are_lower_bounds() {
    roofline()
        .args(ALONE)
        .assert()
        .success()
        .stdout(predicate::str::contains("serve-sim · llama-2-7b on"))
        .stdout(predicate::str::contains("a lower bound on every step"))
        .stdout(predicate::str::contains("TTFT"))
        .stdout(predicate::str::contains("throughput:"))
        .stdout(predicate::str::contains("preemptions: 0"));
}

#[test]
fn csv_has_one_row_per_request() -> TestResult {
    let out = roofline().args(ALONE).args(["--format", "csv"]).output()?;
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout)?;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 201);
    assert!(lines[0].starts_with("index,arrival_s,prompt,output,"));
    assert!(lines[1].starts_with("0,"));
    Ok(())
}

#[test]
fn a_trace_gives_the_requests() -> TestResult {
    let mut f = tempfile::NamedTempFile::new()?;
    writeln!(f, "arrival_s,prompt,output\n0,512,2\n100,512,1")?;
    let path = f.path().to_string_lossy().into_owned();
    let v = json(&["serve-sim", "llama-2-7b", "--trace", &path])?;
    assert_eq!(v["summary"]["count"], 2);
    assert_eq!(v["requests"]["arrivals"], "trace");
    assert_eq!(v["requests"]["trace"], path.as_str());
    // The second request (arriving at 100 s) alone: a prefill of 512 tokens, its only output.
    let prefill = analyze_time("prefill", "512")?;
    let e2e_max = num(&v["summary"]["e2e"]["p99"])?;
    assert!(e2e_max > prefill);
    Ok(())
}

#[test]
fn one_device_of_a_chip_file_without_a_node_runs() -> TestResult {
    let chip = this_cpu().to_string_lossy().into_owned();
    let v = json(&[
        "serve-sim",
        "llama-2-7b",
        "--hardware",
        &chip,
        "--requests",
        "3",
        "--prompt-dist",
        "fixed:128",
        "--output-dist",
        "fixed:4",
    ])?;
    assert_eq!(v["devices"], 1);
    assert_eq!(v["summary"]["output_tokens"], 12);
    Ok(())
}

#[test]
fn a_model_with_no_room_for_its_kv_cache_names_the_weights() {
    bad_input(
        &["serve-sim", "llama-2-70b", "--hardware", "h100-sxm"],
        "no room for a KV block",
    );
}

#[test]
fn bad_inputs_exit_2_naming_the_flag() -> TestResult {
    let base = ["serve-sim", "llama-2-7b"];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    for (extra, needle) in [
        (&["--rate", "0"][..], "--rate"),
        (&["--rate", "-4"][..], "--rate"),
        (&["--rate=-4/s"][..], "--rate"),
        (&["--rate", "fast"][..], "--rate"),
        (&["--requests", "0"][..], "--requests"),
        (&["--requests", "10000001"][..], "--requests"),
        (&["--prompt-dist", "fixed:0"][..], "--prompt-dist"),
        (&["--prompt-dist", "zipf:2"][..], "--prompt-dist"),
        (&["--output-dist", "uniform:9..3"][..], "--output-dist"),
        (&["--output-dist", "normal:100,-5"][..], "--output-dist"),
        (&["--max-seqs", "0"][..], "--max-seqs"),
        (&["--kv-block", "0"][..], "--kv-block"),
        (&["--tp", "3"][..], "--tp"),
        (&["--cp", "2"][..], "--cp"),
        (&["--hardware", "nope"][..], "nope"),
        (
            &["--no-chunked-prefill", "--max-batched-tokens", "1024"][..],
            "can never run",
        ),
        (
            &["--prompt-dist", "fixed:4000000", "--requests", "2"][..],
            "can never run",
        ),
        (&["--trace", "/nonexistent/trace.csv"][..], "trace.csv"),
        (&["--trace", "t.csv", "--rate", "2"][..], "--rate"),
    ] {
        bad_input(&with(extra), needle);
    }
    let mut f = tempfile::NamedTempFile::new()?;
    writeln!(f, "arrival_s,prompt,output\n0,512,2\n1,abc,2")?;
    let path = f.path().to_string_lossy().into_owned();
    bad_input(&with(&["--trace", &path]), "line 3, field `prompt`");
    Ok(())
}
