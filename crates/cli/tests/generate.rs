//! `roofline generate` and `roofline sweep --pareto` end to end: the JSON valid against its
//! schema, TTFT the prefill `analyze` gives, the two TPOT conventions by their definitions, the
//! decode summed over every step, `--max-batch` at the edge of the memory, the techniques'
//! sections, the Pareto table, plot and best point, and every bad input an exit 2 with an
//! `error:` line naming the flag and a `hint:`.

mod common;

use common::{assert_valid, bad_input, close, json_of, roofline};
use predicates::prelude::*;
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const DONE_WHEN: &[&str] = &[
    "generate",
    "llama-3.1-8b",
    "--hardware",
    "h100-sxm",
    "--prompt",
    "2048",
    "--generate",
    "256",
    "--batch",
    "16",
];

fn num(v: &Value) -> Result<f64, Box<dyn std::error::Error>> {
    v.as_f64()
        .ok_or_else(|| format!("not a number: {v}").into())
}

fn generate_json(args: &[&str]) -> Value {
    let v = json_of(args);
    assert_valid("generate", &v, &args.join(" "));
    v
}

#[test]
fn the_table_prints_ttft_both_tpot_conventions_and_e2e() {
    roofline()
        .args(DONE_WHEN)
        .assert()
        .success()
        .stdout(predicate::str::contains("TTFT (prefill of 2048 tokens)"))
        .stdout(predicate::str::contains("TPOT = (E2E − TTFT) / (N − 1)"))
        .stdout(predicate::str::contains("E2E / N"))
        .stdout(predicate::str::contains("E2E (256 tokens)"))
        .stdout(predicate::str::contains("output tokens/s (batch 16)"))
        .stdout(predicate::str::contains("fits at every step"))
        .stdout(predicate::str::contains("bound"))
        .stdout(predicate::str::contains("estimate"));
}

#[test]
fn ttft_is_the_prefill_and_tpot_follows_its_definitions() -> TestResult {
    let g = generate_json(DONE_WHEN);
    // TTFT's bound is the roofline time of `analyze`'s prefill of the same 16 prompts with
    // FlashAttention (generate's default), launches excluded.
    let a = json_of(&[
        "analyze",
        "llama-3.1-8b",
        "--hardware",
        "h100-sxm",
        "--stage",
        "prefill",
        "--batch",
        "16",
        "--seq-len",
        "2048",
        "--flash-attention",
    ]);
    let prefill = num(&a["stages"][0]["totals"]["time_s"])?;
    let b = &g["bound"];
    assert!(close(num(&b["ttft"])?, prefill, 1e-12));
    // The decode: its last step (context 2048 + 254) as `analyze` gives it, and the sum of
    // the 255 steps between the first's and the last's (the step time grows with the context).
    let last = json_of(&[
        "analyze",
        "llama-3.1-8b",
        "--hardware",
        "h100-sxm",
        "--stage",
        "decode",
        "--batch",
        "16",
        "--context",
        "2302",
        "--flash-attention",
    ]);
    let last_step = num(&last["stages"][0]["totals"]["time_s"])?;
    let decode = num(&b["decode"])?;
    assert!(decode <= 255.0 * last_step * (1.0 + 1e-12));
    assert!(decode >= 255.0 * 0.95 * last_step);
    // (E2E − TTFT) / (N − 1) and E2E / N, and E2E = TTFT + decode.
    let (ttft, e2e) = (num(&b["ttft"])?, num(&b["e2e"])?);
    assert!(close(e2e, ttft + decode, 1e-12));
    assert!(close(num(&b["tpot"])?, (e2e - ttft) / 255.0, 1e-12));
    assert!(close(num(&b["e2e_per_token"])?, e2e / 256.0, 1e-12));
    assert!(close(num(&b["tokens_per_s"])?, 16.0 * 256.0 / e2e, 1e-12));
    // The estimate is slower than the bound in every phase.
    let e = &g["estimate"];
    assert!(num(&e["ttft"])? > ttft && num(&e["decode"])? > decode);
    // The KV cache at the end: 16 × 2303 tokens × 2 · 32 layers · 8 heads · 128 · 2 B.
    assert_eq!(
        num(&g["kv_at_end_bytes"])?,
        16.0 * 2303.0 * (2.0 * 32.0 * 8.0 * 128.0 * 2.0)
    );
    assert_eq!(g["fits"], Value::Bool(true));
    Ok(())
}

#[test]
fn max_batch_is_the_largest_that_fits() -> TestResult {
    let mut args = DONE_WHEN.to_vec();
    args.push("--max-batch");
    let g = generate_json(&args);
    let b = g["capacity"]["max_batch"]["largest"]
        .as_u64()
        .ok_or("no batch")?;
    assert!(b > 16, "{b}");
    // At that batch every step fits; one more does not (in blocks of 16 tokens: 2,303 tokens
    // a sequence take 2,304 either way).
    let fits = |batch: u64| -> Result<Value, Box<dyn std::error::Error>> {
        let s = batch.to_string();
        let mut a = DONE_WHEN.to_vec();
        let i = a.iter().position(|x| *x == "16").ok_or("no batch")?;
        a[i] = &s;
        Ok(generate_json(&a)["fits"].clone())
    };
    assert_eq!(fits(b)?, Value::Bool(true));
    assert_eq!(fits(b + 1)?, Value::Bool(false));
    Ok(())
}

#[test]
fn techniques_print_their_sections() {
    roofline()
        .args(DONE_WHEN)
        .args([
            "--devices",
            "8",
            "--chunk",
            "512",
            "--draft",
            "llama-3.1-8b",
            "--disaggregate",
            "2:6",
            "--cached-prefix",
            "1024",
            "--cuda-graphs",
            "--max-context",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "TTFT (prefill of 1024 tokens after 1024 cached)",
        ))
        .stdout(predicate::str::contains(
            "chunked prefill: the prompt in 2 steps",
        ))
        .stdout(predicate::str::contains("speculative decoding"))
        // The draft is the target itself: no speedup.
        .stdout(predicate::str::contains("slower"))
        .stdout(predicate::str::contains(
            "disaggregated: 2 prefill + 6 decode devices",
        ))
        .stdout(predicate::str::contains("bottleneck"))
        .stdout(predicate::str::contains("longest context at batch 16"))
        .stdout(predicate::str::contains("one launch a step"));
}

#[test]
fn pareto_marks_a_front_plots_it_and_names_the_best() -> TestResult {
    let dir = tempfile::tempdir()?;
    let plot = dir.path().join("pareto.svg");
    let args = [
        "sweep",
        "llama-3.1-8b",
        "--pareto",
        "--hardware",
        "h100-sxm",
        "--tp",
        "1,2",
        "--batch",
        "1..64*4",
        "--slo-tpot",
        "20ms",
    ];
    roofline()
        .args(args)
        .arg("--plot")
        .arg(&plot)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "best under TPOT ≤ 20.00 ms (estimate)",
        ));
    let svg = std::fs::read_to_string(&plot)?;
    assert_eq!(svg.matches("<circle class=\"dot").count(), 2 * 4);
    let v = json_of(&args);
    assert_valid("sweep-pareto", &v, "sweep --pareto");
    let pts = v["points"].as_array().ok_or("no points")?;
    assert_eq!(pts.len(), 8);
    // The front by its definition: a usable point is on it when no other usable point is
    // as fast per token and gives as many tokens/s per device, one of them strictly.
    let op = |p: &Value| -> Result<(f64, f64), Box<dyn std::error::Error>> {
        Ok((
            num(&p["estimate"]["tpot"])?,
            num(&p["estimate"]["tokens_per_s_per_device"])?,
        ))
    };
    for p in pts {
        let (t, r) = op(p)?;
        let mut dominated = false;
        for q in pts {
            let (u, s) = op(q)?;
            if q["fits"] != Value::Bool(false) && u <= t && s >= r && (u < t || s > r) {
                dominated = true;
            }
        }
        let usable = p["fits"] != Value::Bool(false);
        assert_eq!(p["front_estimate"].as_bool(), Some(usable && !dominated));
    }
    // The best under 20 ms: the most tokens/s per device among usable points within it.
    let best = v["best_estimate"].as_u64().ok_or("no best")? as usize;
    let (t, r) = op(&pts[best])?;
    assert!(t <= 0.020);
    for p in pts {
        let (u, s) = op(p)?;
        if p["fits"] != Value::Bool(false) && u <= 0.020 {
            assert!(s <= r);
        }
    }
    Ok(())
}

#[test]
fn bad_input_names_the_flag() {
    let with = |extra: &[&str]| -> Vec<String> {
        DONE_WHEN
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    bad_input(&with(&["--generate", "0"]), "--generate");
    bad_input(&with(&["--cached-prefix", "2048"]), "--cached-prefix");
    bad_input(&with(&["--generate", "67108864"]), "--generate");
    bad_input(&with(&["--kv-block", "0"]), "--kv-block");
    bad_input(&with(&["--acceptance", "1.5"]), "--acceptance");
    bad_input(&with(&["--acceptance", "0.5"]), "--draft");
    bad_input(&with(&["--draft-len", "2"]), "--draft");
    bad_input(&with(&["--draft", "gpt2"]), "--draft gpt2");
    bad_input(
        &with(&["--draft", "llama-3.1-8b", "--draft-len", "65"]),
        "--draft-len",
    );
    bad_input(&with(&["--disaggregate", "2:6"]), "--disaggregate 2:6");
    bad_input(&with(&["--disaggregate", "0:8"]), "--disaggregate");
    bad_input(&with(&["--disaggregate", "two"]), "--disaggregate");
    bad_input(&with(&["--cp", "2"]), "--cp");
    bad_input(&with(&["--efficiency", "matmul=2"]), "--efficiency");
    bad_input(&with(&["--batch", "99999999"]), "--batch");
    bad_input(&["sweep", "--slo-tpot", "50ms"], "--slo-tpot");
    bad_input(&["sweep", "--pareto", "--seq-len", "128,2048"], "--seq-len");
    bad_input(&["sweep", "--pareto", "--cp", "2"], "--cp");
}

#[test]
fn mixed_steps_under_tensor_parallelism_match_a_direct_analysis() -> TestResult {
    // The all-reduces change algorithm with their size: each is priced afresh at its buffer.
    for tp in ["2", "4"] {
        let g = generate_json(&[
            "generate",
            "llama-3.1-8b",
            "--hardware",
            "h100-sxm",
            "--batch",
            "4",
            "--tp",
            tp,
            "--chunk",
            "512",
        ]);
        let e = num(&g["step_model_fit_error"])?;
        assert!(e < 1e-9, "TP {tp}: {e}");
        // The whole prompt in one step beside 3 decodes is faster at more devices than at one.
        let whole = num(&g["chunked_prefill"]["ttft_whole"])?;
        assert!(whole < num(&g["bound"]["ttft"])?, "TP {tp}");
    }
    Ok(())
}

#[test]
fn speculation_compares_with_the_plain_decode_of_the_table() -> TestResult {
    // A mixture of experts, whose decode is not linear in the batch: the plain TPOT of the
    // speculative section is the request's own.
    let g = generate_json(&[
        "generate",
        "mixtral-8x7b",
        "--hardware",
        "h100-sxm",
        "--tp",
        "2",
        "--draft",
        "mixtral-8x7b",
    ]);
    let s = &g["speculative"];
    assert!(close(
        num(&s["plain_tpot"])?,
        num(&g["bound"]["tpot"])?,
        1e-12
    ));
    assert!(close(num(&s["plain"])?, num(&g["bound"]["decode"])?, 1e-12));
    // γ = 4 draft steps an iteration at the draft's (here the target's) mean decode step.
    let iterations = num(&s["iterations"])?;
    assert!(close(
        num(&s["draft"])?,
        4.0 * iterations * num(&g["bound"]["decode"])? / 255.0,
        1e-9
    ));
    Ok(())
}

#[test]
fn a_request_past_the_trained_context_is_warned_of() {
    // Llama-3.1-8B was trained to 131,072 positions: 131,000 + 100 − 1 go past them.
    roofline()
        .args([
            "generate",
            "llama-3.1-8b",
            "--hardware",
            "h100-sxm",
            "--prompt",
            "131000",
            "--generate",
            "100",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "reach 131099 positions, beyond the model's max_position_embeddings (131072)",
        ));
}
