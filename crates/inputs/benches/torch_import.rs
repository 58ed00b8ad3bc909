//! Importing a PyTorch profiler trace: time per event from 10,000 to 1,000,000 events. The join
//! of kernels to operators is a sweep (O(n log n)); time per event stays flat when it is.
//!
//! Each synthetic step repeats, per layer, what Kineto writes for a linear layer on a GPU: an
//! `aten::linear` holding an `aten::mm` (with shapes), the `cudaLaunchKernel` inside the mm, and
//! its kernel (linked by `correlation` only, so through the launch); then an `aten::view` and a
//! kernel linked to it by `External id`. Six events per layer.
//!
//! `cargo bench -p roofline-inputs --bench torch_import`

#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use roofline_inputs::profile::torch::parse;
use std::hint::black_box;
use std::time::Duration;

mod synthetic;
use synthetic::trace;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("torch trace import");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    for events in [10_000usize, 100_000, 1_000_000] {
        let text = trace(events / 6);
        // The 1M-event trace (about 300 MB of JSON) takes seconds per parse: three samples'
        // worth of time keeps it affordable.
        group.measurement_time(Duration::from_secs(if events >= 1_000_000 {
            30
        } else {
            5
        }));
        group.throughput(Throughput::Elements(events as u64));
        group.bench_with_input(BenchmarkId::from_parameter(events), &text, |b, text| {
            b.iter(|| parse(black_box(text), "bench.json").map(|p| p.kernels.len()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
