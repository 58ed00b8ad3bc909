//! One full analysis of Llama-2-7B on the RTX A6000, both stages (prefill 2048, decode at
//! context 2048, batch 1, bf16): what `roofline analyze` computes. The bars: evaluating the
//! built graph for a new batch or length (its sizes rewritten in place, then evaluated) ≤ 1 µs;
//! building and evaluating from a parsed config with fresh buffers ≤ 3 µs.
//!
//! Side by side: `analyze` (graph and rows in fresh allocations per stage), `analyze_into` (the
//! graph of the previous call rewritten for the workload and evaluated, as a sweep or a server
//! runs it), `evaluate` alone (the graph already built) and `evaluate_totals` (the same walk, no
//! rows).
//!
//! `cargo bench -p roofline-core --bench analysis`

#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`

use criterion::{criterion_group, criterion_main, Criterion};
use roofline_core::analysis::{analyze, analyze_into, evaluate, evaluate_totals, StageAnalysis};
use roofline_core::fixtures;
use roofline_core::memory::Reserve;
use roofline_core::precision::Precision;
use roofline_core::workload::{Precisions, Stage, Workload};
use std::hint::black_box;
use std::time::Duration;

fn workload(stage: Stage) -> Workload {
    Workload::new(stage, 1, 2048, 2048).with_precisions(Precisions::uniform(Precision::Bf16))
}

fn bench(c: &mut Criterion) {
    let model = fixtures::llama2_7b();
    let device = fixtures::a6000();
    let (prefill, decode) = (workload(Stage::Prefill), workload(Stage::Decode));
    let r = Reserve::DEFAULT;
    c.bench_function(
        "analyze llama-2-7b both stages (build + evaluate, fresh buffers)",
        |b| {
            b.iter(|| {
                let p = analyze(
                    black_box(&model),
                    black_box(&prefill),
                    black_box(&device),
                    r,
                );
                let d = analyze(black_box(&model), black_box(&decode), black_box(&device), r);
                (p.map(|a| a.totals.time), d.map(|a| a.totals.time))
            })
        },
    );
    c.bench_function(
        "analyze_into llama-2-7b both stages (rebuild + evaluate, buffers reused)",
        |b| {
            let mut p = StageAnalysis::empty(prefill);
            let mut d = StageAnalysis::empty(decode);
            b.iter(|| {
                let pr = analyze_into(black_box(&model), &prefill, black_box(&device), r, &mut p);
                let dr = analyze_into(black_box(&model), &decode, black_box(&device), r, &mut d);
                (pr.map(|()| p.totals.time), dr.map(|()| d.totals.time))
            })
        },
    );
    c.bench_function(
        "evaluate llama-2-7b both stages (graphs built once; rows, totals, memory)",
        |b| {
            let mut p = analyze(&model, &prefill, &device, r).expect("analysis");
            let mut d = analyze(&model, &decode, &device, r).expect("analysis");
            b.iter(|| {
                let pr = evaluate(black_box(&model), &prefill, black_box(&device), r, &mut p);
                let dr = evaluate(black_box(&model), &decode, black_box(&device), r, &mut d);
                (pr.map(|()| p.totals.time), dr.map(|()| d.totals.time))
            })
        },
    );
    c.bench_function(
        "evaluate_totals llama-2-7b both stages (graphs built once)",
        |b| {
            let p = analyze(&model, &prefill, &device, r)
                .expect("analysis")
                .graph;
            let d = analyze(&model, &decode, &device, r)
                .expect("analysis")
                .graph;
            b.iter(|| {
                let tp = evaluate_totals(black_box(&p), &prefill, black_box(&device));
                let td = evaluate_totals(black_box(&d), &decode, black_box(&device));
                (tp.map(|t| t.time), td.map(|t| t.time))
            })
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
