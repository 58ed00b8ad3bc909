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
use std::fmt::Write;
use std::hint::black_box;
use std::time::Duration;

/// A trace of `layers` × 6 events.
fn trace(layers: usize) -> String {
    let mut s = String::with_capacity(layers * 6 * 200);
    s.push_str("{\"traceEvents\": [\n");
    for i in 0..layers {
        let t = 5_107_416_643_395.255 + i as f64 * 100.0;
        let ext = 2 * i as u64;
        let _ = write!(
            s,
            "{{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":{t:.3},\"dur\":60,\
             \"args\":{{\"External id\":{ext},\"Input Dims\":[[1,64,256],[688,256],[]],\"Input type\":[\"float\",\"float\",\"\"]}}}},\n\
             {{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":{:.3},\"dur\":40,\
             \"args\":{{\"Input Dims\":[[64,256],[256,688]],\"Input type\":[\"float\",\"float\"]}}}},\n\
             {{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":{:.3},\"dur\":5,\
             \"args\":{{\"correlation\":{i}}}}},\n\
             {{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm80_xmma_gemm\",\"pid\":0,\"tid\":7,\"ts\":{:.3},\"dur\":30,\
             \"args\":{{\"correlation\":{i}}}}},\n\
             {{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::view\",\"pid\":1,\"tid\":1,\"ts\":{:.3},\"dur\":5,\
             \"args\":{{\"External id\":{},\"Input Dims\":[[1,64,256],[]],\"Input type\":[\"float\",\"ScalarList\"]}}}},\n\
             {{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"copy\",\"pid\":0,\"tid\":7,\"ts\":{:.3},\"dur\":3,\
             \"args\":{{\"External id\":{}}}}}{}\n",
            t + 10.0,
            t + 20.0,
            t + 40.0,
            t + 80.0,
            ext + 1,
            t + 85.0,
            ext + 1,
            if i + 1 == layers { "" } else { "," },
        );
    }
    s.push_str("]}\n");
    s
}

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
