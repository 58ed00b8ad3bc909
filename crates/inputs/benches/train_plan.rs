//! The training plan search (`roofline_core::train::search_training`) for Llama-3.1-405B on
//! 16,384 H100 SXM (2,048 nodes of the chip's HGX platform), a global batch of 2,048
//! sequences of 8,192 tokens: 16M tokens a step, the batch of Llama 3's pre-training at 8K
//! (Dubey et al. 2024, "The Llama 3 Herd of Models", §3.3.2, arXiv 2407.21783). Every layout
//! (t, p, c, d), micro-batch, recomputation, ZeRO stage, schedule and sequence parallelism.
//! The bar: the whole search under a second on 2 cores.
//!
//! It lives here rather than in roofline-core's benches because it reads the catalog: the
//! model preset (`llama-3.1-405b`, Meta's config.json) and the chip with its platform (the
//! core fixture's H100 has none, so `System::of_chip` cannot place 16,384 of it).
//!
//! Before criterion's samples it runs the search once and prints the candidates evaluated,
//! the ones that fit, the timelines run and the candidates evaluated per second.
//!
//! `cargo bench -p roofline-inputs --bench train_plan`

#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`
#![allow(clippy::print_stderr)] // the counts and candidates per second, beside criterion's

use criterion::{criterion_group, criterion_main, Criterion};
use roofline_core::comm::System;
use roofline_core::train::{search_training, TrainingPlanOptions};
use roofline_inputs::config::load_model;
use roofline_inputs::hardware::find_device;
use std::hint::black_box;
use std::time::{Duration, Instant};

const DEVICES: u64 = 16_384;
const GLOBAL_BATCH: u64 = 2_048;
const SEQ_LEN: u64 = 8_192;

fn bench(c: &mut Criterion) {
    let (Ok(llama), Ok(h100)) = (load_model("llama-3.1-405b"), find_device("h100-sxm")) else {
        panic!("the catalog holds llama-3.1-405b and h100-sxm");
    };
    let Ok(system) = System::of_chip(&h100, DEVICES) else {
        panic!("16,384 H100s fill 2,048 nodes of 8");
    };
    let options = TrainingPlanOptions::default();
    let start = Instant::now();
    let once = search_training(&llama, &system, DEVICES, GLOBAL_BATCH, SEQ_LEN, &options);
    let took = start.elapsed().as_secs_f64();
    match &once {
        Ok(s) => {
            eprintln!(
                "llama-3.1-405b on {DEVICES} h100-sxm, B {GLOBAL_BATCH} × {SEQ_LEN}: {} candidates \
                 evaluated, {} fit, {} shapes priced, {} timelines, {:.3} s: {:.0} candidates/s",
                s.evaluated,
                s.fit,
                s.shapes,
                s.simulated,
                took,
                s.evaluated as f64 / took
            );
            if let Some(best) = s.best.first() {
                eprintln!(
                    "best: t{} p{} c{} d{} b{} {:?} {:?} {:?}: {:.2} s a step, MFU {:.3}",
                    best.job.layout.tp,
                    best.job.layout.pp,
                    best.job.layout.cp,
                    best.job.data_parallel,
                    best.job.micro_batch,
                    best.job.recompute,
                    best.job.zero,
                    best.job.schedule,
                    best.estimate.step_time.get(),
                    best.estimate.mfu
                );
            }
        }
        Err(e) => panic!("the search failed: {e}"),
    }
    let mut group = c.benchmark_group("train_plan");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("llama-3.1-405b on 16384 h100-sxm (every layout)", |b| {
        b.iter(|| {
            search_training(
                black_box(&llama),
                &system,
                DEVICES,
                GLOBAL_BATCH,
                SEQ_LEN,
                &options,
            )
            .map(|s| s.evaluated)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
