//! `roofline generate` (`roofline_core::serve::generate`) against published measurements of
//! real serving stacks: `docs/validation/serving.csv`, each figure with its source (the sources
//! are described in `docs/validation/serving-sources.md`). Run with `--nocapture` for the table.
//!
//! Each row is a request of a fixed shape (model, GPU, TP, precision, batch, prompt, output)
//! and one measured figure: TTFT, TPOT, E2E, output tokens/s of the batch, or tokens/s of one
//! sequence. A rate is compared as the time it implies (B·N / rate for the batch's E2E, 1/rate
//! per token of one sequence: gpt-fast's tokens/s counts its generated tokens over the
//! generation, E2E / N).
//!
//! - The roofline bound is never above the measured time: no run is faster than its roof.
//! - The estimate (published shares, every step one launch: each stack validated here runs
//!   decode as a CUDA graph or a compiled engine) is within 30 % of the measured time at the
//!   median, and each row outside 30 % is a miss listed in [`MISSES`] with its reason (the test
//!   fails if a listed miss comes back within 30 %, so the list stays true).
//!
//! Under continuous batching (the `batching` column: a server at a concurrency), a request's
//! TTFT is its prompt prefilled in one step beside the other requests' decodes.
//!
//! Rows without a fixed request shape (SGLang's ShareGPT runs at a request rate) and the one
//! chip the catalog lacks (one MI250X GCD) are skipped, and counted.

use roofline_core::comm::System;
use roofline_core::memory::Reserve;
use roofline_core::parallel::Layout;
use roofline_core::precision::Precision;
use roofline_core::pricing::Estimate;
use roofline_core::serve::chunked::chunked_prefill;
use roofline_core::serve::{generate, Request, StepModel};
use roofline_core::workload::{Precisions, Workload};
use roofline_inputs::config::load_model;
use roofline_inputs::hardware::find_device;
use std::collections::HashMap;
use std::path::PathBuf;

type TestResult<T> = Result<T, Box<dyn std::error::Error>>;
type Row = HashMap<String, String>;

const TOLERANCE: f64 = 0.30;

/// Why a 128-token prefill is missed.
const SHORT_PREFILL: &str =
    "a 128-token prefill is 2–10 ms of kernels: the runtime's fixed cost per \
request (session setup, the host round trip, sampling) is not modelled and weighs most here; the \
table prints whole milliseconds";
/// Why a tensor-parallel decode of a small model is missed.
const SMALL_ALL_REDUCES: &str = "TP 8 on a 7–8B model: a token is ~2 ms of kernels and 64 \
all-reduces of 8 kB, priced at the fabric's α; small-message all-reduces take longer than α in \
practice (not modelled)";
/// Why a serving engine's short-prompt latency run is missed.
const ENGINE_STEP: &str = "vLLM benchmark_latency, 32-token prompts and 128 steps of 3–9 ms: the \
engine's CPU work per step (scheduling, sampling, detokenisation; the vLLM v0.6.0 blog names it a \
bottleneck on H100 for Llama 3 8B) is not modelled";
/// Why a row at a concurrency above 1 is missed.
const CONCURRENCY: &str = "concurrency 5 on a continuous-batching server: arrivals and steps \
interleave (a prompt waits for the running step; other requests' prefills land in a decode's \
steps), which one request shape does not capture: `roofline serve-sim` models it";

/// Rows the estimate misses by more than 30 %: (id, why).
const MISSES: [(&str, &str); 11] = [
    ("trtllm05-h100-l2-7b-ttft-128", SHORT_PREFILL),
    ("trtllm05-h100-l2-70b-ttft-128", SHORT_PREFILL),
    ("trtllm05-a100-l2-7b-ttft-128", SHORT_PREFILL),
    ("trtllm05-a100-l2-70b-ttft-128", SHORT_PREFILL),
    ("gptfast-a100-l2-7b-tp8", SMALL_ALL_REDUCES),
    ("gptfast-a100-l31-8b-tp8", SMALL_ALL_REDUCES),
    (
        "gptfast-a100-l31-70b-tp2",
        "the published 16.03 tokens/s is below Llama-2-70B's 21.32 on the same two GPUs, \
         for models whose work per token differs by the vocabulary (+2 %): not explained by \
         the model",
    ),
    ("nim18-2xh100-l33-70b-ttft-5000-500-c5", CONCURRENCY),
    ("nim18-2xh100-l33-70b-itl-5000-500-c5", CONCURRENCY),
    ("vllm-bk9515-h200-l31-8b-e2e", ENGINE_STEP),
    ("vllm-bk9515-h200-l3-70b-e2e", ENGINE_STEP),
];

fn field<'a>(r: &'a Row, k: &str) -> &'a str {
    r.get(k).map(|s| s.trim()).unwrap_or("")
}

fn rows() -> TestResult<Vec<Row>> {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/validation/serving.csv"
    ));
    let mut rd = csv::Reader::from_path(&path)?;
    let headers = rd.headers()?.clone();
    let mut out = Vec::new();
    for rec in rd.records() {
        let rec = rec?;
        out.push(
            headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect(),
        );
    }
    Ok(out)
}

/// The catalog preset a published model name stands for: the Llama 3.x 70B models share one
/// architecture (layers, widths, heads, vocabulary).
fn preset(model: &str) -> Option<&'static str> {
    Some(match model {
        "llama-2-7b" => "llama-2-7b",
        "llama-2-70b" => "llama-2-70b",
        "llama-3.1-8b" => "llama-3.1-8b",
        "llama-3.1-70b"
        | "meta-llama/Llama-3.3-70B-Instruct"
        | "meta-llama/Meta-Llama-3-70B-Instruct" => "llama-3.1-70b",
        "mixtral-8x7b" => "mixtral-8x7b",
        _ => return None,
    })
}

struct Outcome {
    id: String,
    metric: String,
    measured: f64,
    bound: f64,
    estimate: f64,
}

fn predict(r: &Row) -> TestResult<Option<Outcome>> {
    let (Some(model), Ok(batch), Ok(prompt), Ok(output)) = (
        preset(field(r, "model")),
        field(r, "batch").parse::<u64>(),
        field(r, "prompt").parse::<u64>(),
        field(r, "output").parse::<u64>(),
    ) else {
        return Ok(None);
    };
    let Ok(chip) = find_device(field(r, "gpu")) else {
        return Ok(None);
    };
    let tp: u32 = field(r, "tp").parse()?;
    let p: Precision = field(r, "precision").parse()?;
    let m = load_model(model)?;
    let system = if tp == 1 {
        System::of_chip(&chip, 1).unwrap_or_else(|_| System::single(&chip))
    } else {
        System::of_chip(&chip, u64::from(tp))?
    };
    // An fp8 row is TensorRT-LLM's FP8: fp8 weights, KV cache and GEMM inputs (GEMMs at the
    // fp8 peak), fp16 activations between them.
    let precisions = if p == Precision::Fp8 {
        Precisions::new(Precision::Fp8, Precision::Fp16, Precision::Fp8)
            .with_gemm(Some(Precision::Fp8))
    } else {
        Precisions::uniform(p)
    };
    let base = Workload::decode(1, 1)
        .with_precisions(precisions)
        .flash_attention(true);
    let req = Request {
        prompt,
        generate: output,
        batch,
        cached_prefix: 0,
    };
    let layout = Layout {
        tp,
        ..Layout::SINGLE
    };
    let eff = Estimate::published().with_cuda_graphs(true);
    let g = generate(&m, &base, &req, &system, layout, Reserve::DEFAULT, &eff)?;
    let v: f64 = field(r, "value").parse()?;
    let metric = field(r, "metric").to_string();
    // Everything compared as a time, seconds.
    let continuous = field(r, "batching") == "continuous";
    let (measured, bound, estimate) = match metric.as_str() {
        // Under continuous batching at a concurrency of B, a request's prompt is prefilled
        // beside the other B − 1 requests' decodes, not with B prompts at once.
        "ttft" if continuous && batch > 1 => {
            let steps = StepModel::new(&m, &base, &system, layout, Reserve::DEFAULT)?;
            let c = chunked_prefill(
                &steps,
                prompt,
                0,
                prompt,
                batch - 1,
                prompt + output / 2,
                &eff,
            );
            (v, c.ttft_whole.get(), c.ttft_whole_estimate.get())
        }
        "ttft" => (v, g.bound.ttft.get(), g.estimate.ttft.get()),
        "tpot" => match (g.bound.tpot, g.estimate.tpot) {
            (Some(b), Some(e)) => (v, b.get(), e.get()),
            _ => return Ok(None),
        },
        "e2e" => (v, g.bound.e2e.get(), g.estimate.e2e.get()),
        "output_tokens_per_s" => (
            batch as f64 * output as f64 / v,
            g.bound.e2e.get(),
            g.estimate.e2e.get(),
        ),
        "tokens_per_s_per_user" => (
            1.0 / v,
            g.bound.e2e_per_token.get(),
            g.estimate.e2e_per_token.get(),
        ),
        _ => return Ok(None),
    };
    Ok(Some(Outcome {
        id: field(r, "id").to_string(),
        metric,
        measured,
        bound,
        estimate,
    }))
}

#[test]
#[allow(clippy::print_stdout)] // the table, with --nocapture
fn bound_below_every_measurement_and_estimate_within_30_percent_at_the_median() -> TestResult<()> {
    let all = rows()?;
    let mut out = Vec::new();
    let mut skipped = 0;
    for r in &all {
        match predict(r)? {
            Some(o) => out.push(o),
            None => skipped += 1,
        }
    }
    println!(
        "{:<40} {:>7} {:>11} {:>11} {:>8} {:>11} {:>8}",
        "row", "metric", "measured", "bound", "bound/m", "estimate", "error"
    );
    let mut errors = Vec::new();
    let mut failures = Vec::new();
    for o in &out {
        let err = (o.estimate - o.measured) / o.measured;
        errors.push(err.abs());
        println!(
            "{:<40} {:>7} {:>11.5} {:>11.5} {:>8.2} {:>11.5} {:>+7.1}%",
            o.id,
            o.metric,
            o.measured,
            o.bound,
            o.bound / o.measured,
            o.estimate,
            err * 100.0
        );
        if let Some((_, why)) = MISSES.iter().find(|(id, _)| *id == o.id) {
            println!("    miss: {why}");
        }
        if o.bound > o.measured {
            failures.push(format!(
                "{}: the bound {:.5} s is above the measured {:.5} s",
                o.id, o.bound, o.measured
            ));
        }
        let listed = MISSES.iter().find(|(id, _)| *id == o.id);
        match (err.abs() > TOLERANCE, listed) {
            (true, None) => failures.push(format!(
                "{}: the estimate is {:+.1} % off, beyond {:.0} % and not a listed miss",
                o.id,
                err * 100.0,
                TOLERANCE * 100.0
            )),
            (false, Some(_)) => failures.push(format!(
                "{}: a listed miss came back within {:.0} % ({:+.1} %): take it off the list",
                o.id,
                TOLERANCE * 100.0,
                err * 100.0
            )),
            _ => {}
        }
    }
    errors.sort_by(f64::total_cmp);
    let median = errors[errors.len() / 2];
    println!(
        "{} rows compared, {skipped} skipped (no fixed request shape, or a chip not in the \
         catalog); median |error| of the estimate {:.1} %",
        out.len(),
        median * 100.0
    );
    assert!(out.len() >= 25, "only {} rows compared", out.len());
    assert!(
        median <= TOLERANCE,
        "median |error| {:.1} %",
        median * 100.0
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}
