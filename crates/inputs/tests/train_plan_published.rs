//! The training plan search (`roofline_core::train::search_training`) against the best
//! published GPT-3 175B run of Narayanan et al. 2021, "Efficient Large-Scale Language Model
//! Training on GPU Clusters Using Megatron-LM" (arXiv 2104.04473), §5.1: 1,024 A100 80GB,
//! global batch 1,536 sequences of 2,048 tokens, 140 TFLOP/s per GPU ("34 days for 300B
//! tokens"; shared/refs/mfu/README.md).
//!
//! Like with like: the paper counts its TFLOP/s with its eq. 3,
//! F = 96·B·s·l·h²·(1 + s/6h + V/16lh) (the recomputed forward included, V = 51,200 the padded
//! vocabulary), so 140 TFLOP/s per GPU is the step time T = F / (1024 · 140e12); we compare our
//! best layout's estimated step time with that T.
//!
//! Two searches:
//! - restricted to what the 2021 paper ran (`TrainingPlanOptions::megatron_2021`: full
//!   recomputation, no sequence parallelism, no ZeRO, 1F1B or interleaved, no FlashAttention):
//!   the best layout must be within 15 % of the published step;
//! - unrestricted: selective recomputation with sequence parallelism (Korthikanti et al. 2022),
//!   FlashAttention (Dao et al. 2022), ZeRO and ZB-H1 (2024) all arrived after the paper, so the
//!   best is allowed to be faster than published (it must not be slower than the restricted
//!   best, a subset of its candidates, nor more than 15 % slower than published).

use roofline_core::comm::System;
use roofline_core::train::{search_training, TrainingPlanOptions};
use roofline_inputs::config::load_model;
use roofline_inputs::hardware::find_device;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const TOLERANCE: f64 = 0.15;

/// The published step time by hand: eq. 3 of Narayanan et al. 2021 at B = 1536, s = 2048,
/// l = 96, h = 12288, V = 51200, over 1024 GPUs at 140 TFLOP/s.
fn published_step() -> f64 {
    let (b, s, l, h, v) = (1536.0, 2048.0, 96.0, 12288.0, 51200.0);
    // 96·B·s·l·h² = 96 · 1536 · 2048 · 96 · 12288² = 4.3775e18 FLOP
    let f = 96.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
    // × (1 + 0.027778 + 0.0027127) = 4.5110e18 FLOP; ÷ (1024 · 140e12 FLOP/s) = 31.47 s
    f / (1024.0 * 140e12)
}

#[test]
fn published_step_is_the_papers_34_days() {
    // 300e9 tokens / (1536 · 2048 tokens a step) = 95,367 steps of 31.47 s = 34.7 days: the
    // paper's "34 days".
    let t = published_step();
    assert!((t - 31.47).abs() < 0.01, "{t}");
    let days = 300e9 / (1536.0 * 2048.0) * t / 86400.0;
    assert!((days - 34.7).abs() < 0.1, "{days}");
}

#[test]
fn gpt3_175b_best_plan_is_near_megatron_2021() -> TestResult {
    let model = load_model("gpt3-175b")?;
    let system = System::of_chip(&find_device("a100-sxm-80gb")?, 1024)?;
    let published = published_step();
    let restricted = search_training(
        &model,
        &system,
        1024,
        1536,
        2048,
        &TrainingPlanOptions {
            top: 1,
            ..TrainingPlanOptions::megatron_2021()
        },
    )?;
    let free = search_training(
        &model,
        &system,
        1024,
        1536,
        2048,
        &TrainingPlanOptions {
            top: 1,
            ..TrainingPlanOptions::default()
        },
    )?;
    let (Some(old), Some(new)) = (restricted.best.first(), free.best.first()) else {
        return Err("no layout fits".into());
    };
    for (label, p, s) in [("2021", old, &restricted), ("any", new, &free)] {
        eprintln!(
            "{label}: t{} p{} d{} c{} b{} {:?} sp {} zero {:?} {:?}: {:.2} s (bound {:.2} s) \
             against {published:.2} s published; MFU {:.3}; {} evaluated, {} fit, {} timelines",
            p.job.layout.tp,
            p.job.layout.pp,
            p.job.data_parallel,
            p.job.layout.cp,
            p.job.micro_batch,
            p.job.recompute,
            p.job.layout.sequence_parallel,
            p.job.zero,
            p.job.schedule,
            p.estimate.step_time.get(),
            p.bound.step_time.get(),
            p.estimate.mfu,
            s.evaluated,
            s.fit,
            s.simulated
        );
    }
    let old_t = old.estimate.step_time.get();
    let new_t = new.estimate.step_time.get();
    let err = (old_t - published).abs() / published;
    assert!(
        err <= TOLERANCE,
        "2021 layouts: {old_t:.2} s against {published:.2} s published ({:.1} %)",
        err * 100.0
    );
    assert!(new_t <= old_t * (1.0 + 1e-12), "{new_t} > {old_t}");
    assert!(
        new_t <= published * (1.0 + TOLERANCE),
        "{new_t} vs {published}"
    );
    assert!(old.bound.step_time.get() <= old_t);
    Ok(())
}
