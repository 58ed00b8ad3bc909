//! One request priced whole, and the step model of a continuous batch: Llama-2-7B in bf16 on
//! one H100 SXM with FlashAttention, 16 sequences of a 2048-token prompt generating 256 tokens
//! (TTFT, the 255 decode steps summed exactly, memory at every step, bound and estimate); the
//! step model built from its nine analyses; and one mixed step priced by it.
//!
//! `cargo bench -p roofline-core --bench generate`

#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`

use criterion::{criterion_group, criterion_main, Criterion};
use roofline_core::comm::System;
use roofline_core::fixtures;
use roofline_core::memory::Reserve;
use roofline_core::parallel::Layout;
use roofline_core::pricing::Estimate;
use roofline_core::serve::{generate, Mix, Request, StepModel};
use roofline_core::workload::Workload;
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let model = fixtures::llama2_7b();
    let system = System::single(&fixtures::h100_sxm());
    let base = Workload::decode(1, 1).flash_attention(true);
    let r = Request {
        prompt: 2048,
        generate: 256,
        batch: 16,
        cached_prefix: 0,
    };
    let eff = Estimate::published();
    c.bench_function("generate: llama-2-7b, 16 × (2048 + 256), one H100", |b| {
        b.iter(|| {
            generate(
                black_box(&model),
                &base,
                black_box(&r),
                &system,
                Layout::SINGLE,
                Reserve::DEFAULT,
                &eff,
            )
        })
    });
    c.bench_function("StepModel::new: nine analyses solved for every node", |b| {
        b.iter(|| {
            StepModel::new(
                black_box(&model),
                &base,
                &system,
                Layout::SINGLE,
                Reserve::DEFAULT,
            )
        })
    });
    if let Ok(s) = StepModel::new(&model, &base, &system, Layout::SINGLE, Reserve::DEFAULT) {
        let mix = Mix::decode(63, 2048) + Mix::sequences(1, 512, 1024, false);
        c.bench_function("StepModel::bound: 63 decodes and a 512-token chunk", |b| {
            b.iter(|| s.bound(black_box(&mix)))
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
