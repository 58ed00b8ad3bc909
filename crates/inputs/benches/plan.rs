//! The plan search, end to end from the catalog: every tensor, pipeline and expert parallel
//! layout of DeepSeek-V3 on 64 H100 SXM (8 nodes of the chip's HGX platform), decode at batch
//! 64 and context 4096, each analysed and ranked; Mixtral-8x7B on one DGX H100; and
//! Llama-3.1-70B prefill of a 32768-token prompt on the 64 H100s, context parallelism
//! included. The bar: interactive, well under a second.
//!
//! `cargo bench -p roofline-inputs --bench plan`

#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`

use criterion::{criterion_group, criterion_main, Criterion};
use roofline_core::comm::System;
use roofline_core::memory::Reserve;
use roofline_core::parallel::search;
use roofline_core::workload::{Stage, Workload};
use roofline_inputs::config::load_model;
use roofline_inputs::hardware::{find_device, load_system};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let (Ok(deepseek), Ok(mixtral), Ok(llama), Ok(h100), Ok(dgx)) = (
        load_model("deepseek-v3"),
        load_model("mixtral-8x7b"),
        load_model("llama-3.1-70b"),
        find_device("h100-sxm"),
        load_system("dgx-h100"),
    ) else {
        panic!("the catalog holds deepseek-v3, mixtral-8x7b, llama-3.1-70b, h100-sxm and dgx-h100");
    };
    let Ok(sixty_four) = System::of_chip(&h100, 64) else {
        panic!("64 H100s fill 8 nodes of 8");
    };
    let decode = Workload::new(Stage::Decode, 64, 1, 4096);
    let mut group = c.benchmark_group("plan");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("deepseek-v3 on 64 h100-sxm (every layout)", |b| {
        b.iter(|| {
            search(black_box(&deepseek), &decode, &sixty_four, Reserve::DEFAULT)
                .map(|s| s.plans.len())
        })
    });
    group.bench_function("mixtral-8x7b on dgx-h100 (every layout)", |b| {
        b.iter(|| {
            search(black_box(&mixtral), &decode, &dgx, Reserve::DEFAULT).map(|s| s.plans.len())
        })
    });
    let prefill = Workload::new(Stage::Prefill, 1, 32768, 0).flash_attention(true);
    group.bench_function(
        "llama-3.1-70b prefill 32k on 64 h100-sxm (every layout, cp too)",
        |b| {
            b.iter(|| {
                search(black_box(&llama), &prefill, &sixty_four, Reserve::DEFAULT)
                    .map(|s| s.plans.len())
            })
        },
    );
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
