//! The training step (`roofline_core::train::predict`) against the published iteration times in
//! `shared/refs/parallel/parallel_published.csv`. Run with `--nocapture` for the table.
//!
//! - Korthikanti et al. 2022 (arXiv 2205.05198), Table 5: end-to-end iteration time of GPT
//!   22B–1T on 8–512 A100 80GB (Selene), full recompute against selective recompute with
//!   sequence parallelism, the configs (TP, PP, batch, micro-batch, interleave v) as the csv
//!   gives them.
//! - Narayanan et al. 2021 (arXiv 2104.04473), Table 1: achieved TFLOP/s per GPU counted
//!   with their eq. 3, F = 96·B·s·l·h²·(1 + s/6h + V/16lh), which includes the recomputed
//!   forward: we compare like with like by turning it into the step time it implies,
//!   T = F / (N · TFLOP/s), and comparing step times. The table gives no micro-batch or
//!   interleaving: micro-batch 1 and plain 1F1B are taken (the paper's §5.1 runs use
//!   interleaving where it helps; its absence makes our bubble larger, not smaller).
//!
//! Each row: the roofline bound never above the measured time; the estimate (the published
//! efficiencies of `roofline_core::pricing`) within 15 % of it, except the rows of
//! [`MISSES`], each within its own wider bound for the reason it gives (and failing if it
//! comes back within 15 %, so that the list stays true).

use roofline_core::comm::System;
use roofline_core::model::Transformer;
use roofline_core::parallel::Layout;
use roofline_core::pricing::Pricing;
use roofline_core::train::backward::Recompute;
use roofline_core::train::pipeline::PipelineSchedule;
use roofline_core::train::{predict, Efficiency, TrainingJob};
use roofline_inputs::hardware::find_device;
use std::collections::HashMap;
use std::path::PathBuf;

type TestResult<T> = Result<T, Box<dyn std::error::Error>>;
type Row = HashMap<String, String>;

const TOLERANCE: f64 = 0.15;

/// Rows the estimate misses by more than 15 %: (model, recompute contains, bound, why).
const MISSES: [(&str, &str, f64, &str); 2] = [
    (
        "GPT-1.7B",
        "full",
        0.30,
        "h = 2304: its GEMMs (k, n of 2304–9216 at 2048 tokens) run below the large-GEMM \
         efficiency the estimate applies; Table 1 gives no micro-batch (1 taken)",
    ),
    (
        "GPT-22B",
        "selective",
        0.20,
        "the shortest iteration (1.1 s, one micro-batch, one node): per-iteration work \
         outside the operators (gradient clipping, loss scaling, data loading) weighs most; \
         not identified",
    ),
];

fn shared(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared")).join(path)
}

fn field<'a>(r: &'a Row, k: &str) -> &'a str {
    r.get(k).map(|s| s.trim()).unwrap_or("")
}

fn num(r: &Row, k: &str) -> TestResult<u64> {
    field(r, k)
        .parse()
        .map_err(|e| format!("{k} of {}: {:?} ({e})", field(r, "model"), field(r, k)).into())
}

fn value(r: &Row) -> TestResult<f64> {
    let v = field(r, "measured_value");
    v.parse()
        .map_err(|e| format!("measured_value {v:?}: {e}").into())
}

/// The number after `key` in `text`: `interleave v=3` → 3.
fn after(text: &str, key: &str) -> Option<f64> {
    let rest = text.split(key).nth(1)?;
    let n: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    n.parse().ok()
}

/// A GPT as Megatron-LM builds it: LayerNorm, GeLU 4h MLP, biases, learned positions, tied
/// embedding.
fn gpt(r: &Row) -> TestResult<Transformer> {
    let seq = num(r, "seq_len")?;
    Ok(Transformer::builder(
        num(r, "hidden")?,
        num(r, "layers")?,
        num(r, "heads")?,
        num(r, "ffn")?,
        num(r, "vocab")?,
    )
    .name(field(r, "model"))
    .megatron_gpt(seq)
    .build()?)
}

struct Case {
    model: String,
    recompute: String,
    label: String,
    measured: f64,
    bound: f64,
    estimate: f64,
    mfu: f64,
}

fn rows() -> TestResult<Vec<Row>> {
    let path = shared("refs/parallel/parallel_published.csv");
    let mut reader = csv::Reader::from_path(&path)
        .map_err(|e| format!("{}: {e} (shared/ beside the repository)", path.display()))?;
    Ok(reader.deserialize::<Row>().collect::<Result<_, _>>()?)
}

fn run(r: &Row, measured: f64, schedule: PipelineSchedule, micro: u64) -> TestResult<Case> {
    let model = gpt(r)?;
    let recompute_text = field(r, "recompute");
    let selective = recompute_text.contains("selective");
    let (tp, pp, dp) = (num(r, "tp")?, num(r, "pp")?, num(r, "dp")?);
    let layout = Layout {
        tp: u32::try_from(tp)?,
        pp: u32::try_from(pp)?,
        sequence_parallel: recompute_text.contains("sequence-parallel"),
        ..Layout::SINGLE
    };
    let devices = num(r, "gpus")?;
    let system = System::of_chip(&find_device("a100-sxm-80gb")?, devices)?;
    let job = TrainingJob {
        recompute: if selective {
            Recompute::Selective
        } else {
            Recompute::Full
        },
        schedule,
        ..TrainingJob::new(
            layout,
            u32::try_from(dp)?,
            num(r, "global_batch")?,
            micro,
            num(r, "seq_len")?,
        )
    }
    // Megatron-LM as these runs ran it: its fused softmax (no FlashAttention), gradients
    // reduced after the backward, blocking pipeline sends.
    .as_megatron_2022();
    let bound = predict(&model, &system, &job, Pricing::Bound)?;
    let estimate = predict(
        &model,
        &system,
        &job,
        Pricing::Estimate(&Efficiency::published()),
    )?;
    Ok(Case {
        model: field(r, "model").to_string(),
        recompute: recompute_text.to_string(),
        label: format!(
            "{} TP{tp} PP{pp} DP{dp} B{} {}",
            field(r, "model"),
            job.global_batch,
            if selective { "sel+SP" } else { "full" }
        ),
        measured,
        bound: bound.step_time.get(),
        estimate: estimate.step_time.get(),
        mfu: estimate.mfu,
    })
}

fn table5() -> TestResult<Vec<Case>> {
    let mut out = Vec::new();
    for r in rows()?
        .iter()
        .filter(|r| field(r, "source").starts_with("Korthikanti"))
        .filter(|r| field(r, "table_or_url").starts_with("Table 5"))
    {
        let v = after(field(r, "notes"), "interleave v=").unwrap_or(1.0) as usize;
        let schedule = if v > 1 {
            PipelineSchedule::Interleaved { virtual_stages: v }
        } else {
            PipelineSchedule::OneFOneB
        };
        out.push(run(r, value(r)?, schedule, num(r, "micro_batch")?)?);
    }
    Ok(out)
}

fn table1() -> TestResult<Vec<Case>> {
    let mut out = Vec::new();
    for r in rows()?
        .iter()
        .filter(|r| field(r, "source").starts_with("Narayanan"))
    {
        let (b, s, l, h, v) = (
            num(r, "global_batch")? as f64,
            num(r, "seq_len")? as f64,
            num(r, "layers")? as f64,
            num(r, "hidden")? as f64,
            num(r, "vocab")? as f64,
        );
        // Eq. 3: FLOPs per iteration with the recomputed forward.
        let flops = 96.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
        let step = flops / (num(r, "gpus")? as f64 * value(r)? * 1e12);
        out.push(run(r, step, PipelineSchedule::OneFOneB, 1)?);
    }
    Ok(out)
}

#[allow(clippy::print_stdout)] // the table, with --nocapture
fn check(cases: &[Case]) -> Vec<String> {
    println!("| run | measured | bound | estimate | miss | MFU (estimate) |");
    println!("|---|---|---|---|---|---|");
    let mut failures = Vec::new();
    for c in cases {
        let miss = (c.estimate - c.measured) / c.measured;
        println!(
            "| {} | {:.2} s | {:.2} s | {:.2} s | {:+.1} % | {:.1} % |",
            c.label,
            c.measured,
            c.bound,
            c.estimate,
            miss * 100.0,
            c.mfu * 100.0
        );
        if c.bound > c.measured {
            failures.push(format!(
                "{}: bound {} above measured {}",
                c.label, c.bound, c.measured
            ));
        }
        let expected = MISSES
            .iter()
            .find(|(m, r, _, _)| *m == c.model && c.recompute.contains(r));
        match expected {
            None if miss.abs() > TOLERANCE => {
                failures.push(format!(
                    "{}: estimate misses by {:+.1} %",
                    c.label,
                    miss * 100.0
                ));
            }
            Some((_, _, bound, why)) if miss.abs() > *bound => failures.push(format!(
                "{}: estimate misses by {:+.1} %, beyond the {:.0} % allowed ({why})",
                c.label,
                miss * 100.0,
                bound * 100.0
            )),
            Some(_) if miss.abs() <= TOLERANCE => failures.push(format!(
                "{}: listed as a miss but within 15 % ({:+.1} %): drop it from MISSES",
                c.label,
                miss * 100.0
            )),
            _ => {}
        }
    }
    failures
}

#[test]
fn korthikanti_table_5_iteration_times() -> TestResult<()> {
    let failures = check(&table5()?);
    assert!(failures.is_empty(), "{failures:#?}");
    Ok(())
}

#[test]
fn megatron_table_1_step_times() -> TestResult<()> {
    let failures = check(&table1()?);
    assert!(failures.is_empty(), "{failures:#?}");
    Ok(())
}
