//! One full analysis of Llama-2-7B on the RTX A6000, both stages (prefill 2048, decode at
//! context 2048, batch 1, bf16): what `roofline analyze` computes. The bar: 1 µs or less, 70×
//! LLM-Viewer's 72–80 µs for the same analysis on the same machine.
//!
//! Three ways side by side: `analyze` (rows in a fresh allocation per stage), `analyze_into`
//! (the same analysis into buffers reused from the previous iteration, as a sweep or a server
//! would run it), and `analyze_totals` (no rows kept).
//!
//! `cargo bench -p roofline-core --bench analysis`

#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`

mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use roofline_core::analysis::{analyze, analyze_into, analyze_totals, StageAnalysis};
use roofline_core::precision::Precision;
use roofline_core::workload::{Precisions, Stage, Workload};
use std::hint::black_box;
use std::time::Duration;

fn workload(stage: Stage) -> Workload {
    Workload::new(stage, 1, 2048, 2048).with_precisions(Precisions::uniform(Precision::Bf16))
}

fn bench(c: &mut Criterion) {
    let model = common::llama2_7b();
    let device = common::a6000();
    let (prefill, decode) = (workload(Stage::Prefill), workload(Stage::Decode));
    c.bench_function(
        "analyze llama-2-7b both stages (rows, totals, memory)",
        |b| {
            b.iter(|| {
                let p = analyze(black_box(&model), black_box(&prefill), black_box(&device));
                let d = analyze(black_box(&model), black_box(&decode), black_box(&device));
                (p.map(|a| a.totals.time), d.map(|a| a.totals.time))
            })
        },
    );
    c.bench_function(
        "analyze_into llama-2-7b both stages (rows, totals, memory; buffers reused)",
        |b| {
            let mut p = StageAnalysis::empty(prefill);
            let mut d = StageAnalysis::empty(decode);
            b.iter(|| {
                let pr = analyze_into(
                    black_box(&model),
                    black_box(&prefill),
                    black_box(&device),
                    &mut p,
                );
                let dr = analyze_into(
                    black_box(&model),
                    black_box(&decode),
                    black_box(&device),
                    &mut d,
                );
                (pr.map(|()| p.totals.time), dr.map(|()| d.totals.time))
            })
        },
    );
    c.bench_function("analyze_totals llama-2-7b both stages", |b| {
        b.iter(|| {
            let p = analyze_totals(black_box(&model), black_box(&prefill), black_box(&device));
            let d = analyze_totals(black_box(&model), black_box(&decode), black_box(&device));
            (p.map(|t| t.time), d.map(|t| t.time))
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
