//! A sweep of 100,000 configurations: Llama-2-7B decode on the H100 SXM, 100 contexts
//! (128, 256, …, 12,800) × 1,000 batches (1..=1000), every point a full roofline evaluation of
//! the step (rebuilt graph, totals, memory footprint) and of each operator, plus each group's
//! closed-form crossovers. The bar: at least 1,000,000 configurations per second on 2 cores.
//!
//! `cargo bench -p roofline-core --bench sweep`

#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use roofline_core::fixtures;
use roofline_core::memory::Reserve;
use roofline_core::precision::Precision;
use roofline_core::sweep::{sweep, SweepSpec};
use roofline_core::workload::{Precisions, Stage};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let model = fixtures::llama2_7b();
    let devices = [fixtures::h100_sxm()];
    let contexts: Vec<u64> = (1..=100).map(|k| 128 * k).collect();
    let batches: Vec<u64> = (1..=1000).collect();
    let precisions = [Precisions::uniform(Precision::Bf16)];
    let spec = SweepSpec {
        model: &model,
        devices: &devices,
        precisions: &precisions,
        stages: &[Stage::Decode],
        seq_lens: &[],
        contexts: &contexts,
        batches: &batches,
        flash_attention: false,
        logits: roofline_core::workload::Logits::Last,
        reserve: Reserve::DEFAULT,
    };
    let mut group = c.benchmark_group("sweep");
    group.throughput(Throughput::Elements(100_000));
    group.sample_size(10);
    group.bench_function(
        "100,000 configurations (llama-2-7b decode, h100-sxm)",
        |b| b.iter(|| sweep(black_box(&spec)).map(|s| s.points.len())),
    );
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
