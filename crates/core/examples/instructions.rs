//! Runs one analysis path of Llama-2-7B on the RTX A6000, both stages, N times: for counting the
//! instructions one analysis takes, independent of the host's load (run under
//! `valgrind --tool=cachegrind` at two N and subtract; `scripts/instructions.sh` does it).
//!
//! `cargo run --release -p roofline-core --example instructions -- PATH N` with PATH one of
//! `analyze`, `analyze_into`, `evaluate`, `evaluate_totals`.

#[path = "../benches/common/mod.rs"]
mod common;

use roofline_core::analysis::{analyze, analyze_into, evaluate, evaluate_totals};
use roofline_core::memory::Reserve;
use roofline_core::precision::Precision;
use roofline_core::workload::{Precisions, Stage, Workload};
use std::hint::black_box;

fn workload(stage: Stage) -> Workload {
    Workload {
        stage,
        batch: 1,
        seq_len: 2048,
        context: 2048,
        precisions: Precisions::uniform(Precision::Bf16),
        flash_attention: false,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).map(String::as_str).unwrap_or("analyze_into");
    let n: u64 = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(1000);
    let (model, device, r) = (common::llama2_7b(), common::a6000(), Reserve::DEFAULT);
    let (pw, dw) = (workload(Stage::Prefill), workload(Stage::Decode));
    let mut p = analyze(&model, &pw, &device, r)?;
    let mut d = analyze(&model, &dw, &device, r)?;
    let mut sum = 0.0;
    for _ in 0..n {
        match path {
            "analyze" => {
                let a = analyze(black_box(&model), &pw, black_box(&device), r)?;
                let b = analyze(black_box(&model), &dw, black_box(&device), r)?;
                sum += a.totals.time.get() + b.totals.time.get();
            }
            "analyze_into" => {
                analyze_into(black_box(&model), &pw, black_box(&device), r, &mut p)?;
                analyze_into(black_box(&model), &dw, black_box(&device), r, &mut d)?;
                sum += p.totals.time.get() + d.totals.time.get();
            }
            "evaluate" => {
                evaluate(black_box(&model), &pw, black_box(&device), r, &mut p)?;
                evaluate(black_box(&model), &dw, black_box(&device), r, &mut d)?;
                sum += p.totals.time.get() + d.totals.time.get();
            }
            "evaluate_totals" => {
                let a = evaluate_totals(black_box(&p.graph), &pw, black_box(&device))?;
                let b = evaluate_totals(black_box(&d.graph), &dw, black_box(&device))?;
                sum += a.time.get() + b.time.get();
            }
            other => return Err(format!("unknown path `{other}`").into()),
        }
    }
    black_box(sum);
    Ok(())
}
