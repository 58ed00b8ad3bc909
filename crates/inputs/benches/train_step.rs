//! One training-step prediction, the layout Calculon's validation runs: GPT-3 175B (96 blocks,
//! h 12288, 96 heads) on 64 A100 80GB, TP 8, PP 8 interleaved v = 3, batch 64 of 2048 tokens
//! in micro-batches of 1, selective recompute with sequence parallelism (Korthikanti et al.
//! 2022, Table 5). Side by side: the whole prediction (the micro-batch's graph built, its
//! backward, every node priced, then the pipeline, data-parallel, optimizer and memory), and
//! the assembly alone over a priced micro-batch (what a plan search repeats per layout).
//!
//! `cargo bench -p roofline-inputs --bench train_step`

#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`

use criterion::{criterion_group, criterion_main, Criterion};
use roofline_core::comm::System;
use roofline_core::model::Transformer;
use roofline_core::parallel::Layout;
use roofline_core::pricing::Pricing;
use roofline_core::train::backward::Recompute;
use roofline_core::train::pipeline::PipelineSchedule;
use roofline_core::train::{micro_batch, predict, predict_with, Efficiency, TrainingJob};
use roofline_inputs::hardware::find_device;
use std::hint::black_box;
use std::time::Duration;

type BenchResult = Result<(), Box<dyn std::error::Error>>;

fn setup() -> Result<(Transformer, System, TrainingJob), Box<dyn std::error::Error>> {
    let model = Transformer::builder(12288, 96, 96, 49152, 51200)
        .megatron_gpt(2048)
        .build()?;
    let system = System::of_chip(&find_device("a100-sxm-80gb")?, 64)?;
    let layout = Layout {
        tp: 8,
        pp: 8,
        sequence_parallel: true,
        ..Layout::SINGLE
    };
    let job = TrainingJob {
        recompute: Recompute::Selective,
        schedule: PipelineSchedule::Interleaved { virtual_stages: 3 },
        flash_attention: false,
        ..TrainingJob::new(layout, 1, 64, 1, 2048)
    };
    Ok((model, system, job))
}

fn run(c: &mut Criterion) -> BenchResult {
    let (model, system, job) = setup()?;
    let published = Efficiency::published();
    let eff = Pricing::Estimate(&published);
    // Fail before timing if the layout does not predict.
    predict(&model, &system, &job, eff)?;
    let mb = micro_batch(&model, &system, &job.shape(), eff)?;
    c.bench_function("train predict gpt3-175b tp8 pp8 v3 (whole)", |b| {
        b.iter(|| predict(black_box(&model), black_box(&system), black_box(&job), eff).ok())
    });
    c.bench_function("train predict_with gpt3-175b tp8 pp8 v3 (assembly)", |b| {
        b.iter(|| predict_with(black_box(&model), &system, black_box(&job), eff, &mb).ok())
    });
    Ok(())
}

fn bench(c: &mut Criterion) {
    if let Err(e) = run(c) {
        panic!("train_step bench: {e}");
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).sample_size(20);
    targets = bench
}
criterion_main!(benches);
