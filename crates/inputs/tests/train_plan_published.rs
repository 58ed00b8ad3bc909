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
//! Two published figures, both rates measured on smaller runs and projected to this one by
//! their authors' own arithmetic (run with `--nocapture` for ours):
//!
//! | search | best layout | estimate | bound | published | miss |
//! |---|---|---|---|---|---|
//! | Megatron-LM 2022 policies (selective or full recompute, SP; no CP, ZeRO, ZB-H1, FlashAttention; gradients reduced after the backward, blocking sends) | t4 p32 d8 +SP, selective, b 1, interleaved v = 3 | 19.4 s | — | 20.62 s (Korthikanti et al. 2022: 51.4 % MFU) | −5.8 % |
//! | Megatron-LM 2021 policies (full recompute, no SP) | t4 p16 d16, b 1, interleaved v = 6 | 24.1 s | 18.4 s | 31.47 s (Narayanan et al. 2021: 140 TFLOP/s) | **−23.4 %** |
//! | one layout of Table 1's kind (t8 p8 d16, 1F1B, b 1) | — | 27.1 s | — | 31.47 s | −13.8 % |
//!
//! - The best published rate for GPT-3 175B on A100s is Korthikanti et al.'s 51.4 % MFU
//!   (selective recomputation with sequence parallelism): the best layout the search finds
//!   with the policies of that Megatron-LM is within 15 % of it (asserted).
//! - Against the 2021 paper's 140 TFLOP/s the best 2021-style layout is 23 % faster: outside
//!   15 %, asserted as a miss in (−30 %, −15 %). The search picks t = 4 with interleaving
//!   v = 6 over m = 96 micro-batches, where our model's tensor-parallel saving outweighs its
//!   bubble; the paper's Table 1 ran t = 8 at every size from 18B up, and a layout of that
//!   kind is 13.8 % under published. A search over thousands of layouts picks the one the
//!   model is most optimistic about.
//! - Unrestricted (FlashAttention, context parallelism, ZeRO, ZB-H1, overlapped gradient
//!   reduction: all later than the papers) the best is faster again, and is never slower than
//!   the restricted best (a subset of its candidates).

#![allow(clippy::print_stderr)] // the searches' figures, with --nocapture

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

fn searches() -> Result<(f64, f64, f64), Box<dyn std::error::Error>> {
    let model = load_model("gpt3-175b")?;
    let system = System::of_chip(&find_device("a100-sxm-80gb")?, 1024)?;
    let published = published_step();
    let run =
        |options: TrainingPlanOptions| search_training(&model, &system, 1024, 1536, 2048, &options);
    let restricted = run(TrainingPlanOptions {
        top: 1,
        ..TrainingPlanOptions::megatron_2021()
    })?;
    let free = run(TrainingPlanOptions {
        top: 1,
        ..TrainingPlanOptions::default()
    })?;
    let (Some(old), Some(new)) = (restricted.best.first(), free.best.first()) else {
        return Err("no layout fits".into());
    };
    for (label, p, s) in [("2021", old, &restricted), ("any", new, &free)] {
        eprintln!(
            "{label}: t{} p{} d{} c{} b{} {:?} sp {} zero {:?} {:?}: {:.2} s (bound {:.2} s) \
             against {published:.2} s published ({:+.1} %); MFU {:.3}; {} evaluated, {} fit, \
             {} timelines",
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
            (p.estimate.step_time.get() - published) / published * 100.0,
            p.estimate.mfu,
            s.evaluated,
            s.fit,
            s.simulated
        );
        assert!(p.bound.step_time.get() <= p.estimate.step_time.get());
    }
    Ok((
        published,
        old.estimate.step_time.get(),
        new.estimate.step_time.get(),
    ))
}

#[test]
fn gpt3_175b_best_plans_are_not_slower_than_megatron_2021() -> TestResult {
    let (published, old, new) = searches()?;
    assert!(
        old <= published,
        "2021 layouts: {old:.2} s against {published:.2} s"
    );
    assert!(new <= old * (1.0 + 1e-12), "{new} > {old}");
    Ok(())
}

/// The best 2021-style layout against the 2021 paper's 140 TFLOP/s: a miss, asserted in the
/// band the module docs explain, so that a change of it is seen.
#[test]
fn gpt3_175b_best_2021_plan_misses_the_2021_projection_in_its_band() -> TestResult {
    let (published, old, _) = searches()?;
    let miss = (old - published) / published;
    assert!(
        (-0.30..-TOLERANCE).contains(&miss),
        "2021 layouts: {old:.2} s against {published:.2} s published ({:+.1} %)",
        miss * 100.0
    );
    Ok(())
}

#[test]
fn gpt3_175b_table1_style_layout_is_within_15_percent_of_published() -> TestResult {
    use roofline_core::parallel::Layout;
    use roofline_core::pricing::Pricing;
    use roofline_core::train::backward::Recompute;
    use roofline_core::train::{predict, TrainingJob};
    // Table 1's neighbouring row (145.6B on 1,536 GPUs) ran t = 8, p = 8: the same on 1,024
    // GPUs leaves d = 1024 / 64 = 16; micro-batch 1, 1F1B, full recomputation, Megatron's
    // fused softmax, gradients reduced after the backward, blocking sends.
    let model = load_model("gpt3-175b")?;
    let system = System::of_chip(&find_device("a100-sxm-80gb")?, 1024)?;
    let job = TrainingJob {
        recompute: Recompute::Full,
        ..TrainingJob::new(
            Layout {
                tp: 8,
                pp: 8,
                ..Layout::SINGLE
            },
            16,
            1536,
            1,
            2048,
        )
    }
    .as_megatron_2022();
    let e = predict(
        &model,
        &system,
        &job,
        Pricing::Estimate(&system.chip.efficiency()),
    )?;
    let published = published_step();
    let ours = e.step_time.get();
    eprintln!("t8 p8 d16 1F1B: {ours:.2} s against {published:.2} s published");
    assert_eq!(e.memory.fits(), Some(true));
    assert!(
        (ours - published).abs() / published <= TOLERANCE,
        "{ours} vs {published}"
    );
    Ok(())
}

#[test]
fn the_presets_have_their_published_sizes() -> TestResult {
    // Llama-3.1-405B by hand from Meta's config.json: per block q and o 16384² each, k and v
    // 16384·1024 each (8 KV heads of 128), MLP 3·16384·53248, two norms 2·16384:
    // 268,435,456·2 + 16,777,216·2 + 2,617,245,696 + 32,768 = 3,187,703,808; × 126 blocks
    // = 401,650,679,808; + untied embedding and lm_head 2·128256·16384 = 4,202,692,608 and the
    // final norm 16,384: 405,853,388,800 (the checkpoint's count).
    let llama = load_model("llama-3.1-405b")?;
    assert_eq!(llama.parameters(), 405_853_388_800);
    // GPT-3 175B (Brown et al. 2020, Table 2.1): per block 12h² + 13h = 1,812,099,072 at
    // h = 12288; × 96 = 173,961,510,912; + tied embedding 50257·12288 = 617,558,016, learned
    // positions 2048·12288 = 25,165,824 and the final LayerNorm 2·12288: 174,604,259,328,
    // "175B".
    let gpt3 = load_model("gpt3-175b")?;
    assert_eq!(gpt3.parameters(), 174_604_259_328);
    Ok(())
}

/// The best published rate for GPT-3 175B on A100s: Korthikanti et al. 2022 (arXiv 2205.05198,
/// Table 5; MFU from the Megatron-LM README, `shared/refs/parallel`): 51.4 % MFU with selective
/// recomputation and sequence parallelism (t8 p8, v = 3, 64 GPUs), its MFU counting
/// 72·B·s·l·h²·(1 + s/6h + V/12lh) FLOPs a step. At that rate a step of B = 1536 on 1024 GPUs
/// takes 72 · 1536 · 2048 · 96 · 12288² · (1 + 0.027778 + 0.0036169) = 3.3860e18 FLOP ÷
/// (1024 · 312e12 · 0.514) = 20.62 s (the same MFU at 16× the data parallelism: a projection,
/// as the 2021 paper's 34 days is).
fn published_2022_step() -> f64 {
    let (b, s, l, h, v) = (1536.0, 2048.0, 96.0, 12288.0, 51200.0);
    let f = 72.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * l * h));
    f / (1024.0 * 312e12 * 0.514)
}

#[test]
fn gpt3_175b_best_2022_plan_against_korthikanti() -> TestResult {
    let published = published_2022_step();
    assert!((published - 20.62).abs() < 0.01, "{published}");
    let model = load_model("gpt3-175b")?;
    let system = System::of_chip(&find_device("a100-sxm-80gb")?, 1024)?;
    let options = TrainingPlanOptions {
        top: 1,
        ..TrainingPlanOptions::megatron_2022()
    };
    let found = search_training(&model, &system, 1024, 1536, 2048, &options)?;
    let best = found.best.first().ok_or("no layout fits")?;
    let ours = best.estimate.step_time.get();
    eprintln!(
        "2022: t{} p{} d{} b{} {:?} sp {} {:?}: {ours:.2} s against {published:.2} s ({:+.1} %)",
        best.job.layout.tp,
        best.job.layout.pp,
        best.job.data_parallel,
        best.job.micro_batch,
        best.job.recompute,
        best.job.layout.sequence_parallel,
        best.job.schedule,
        (ours - published) / published * 100.0
    );
    assert_eq!(best.estimate.memory.fits(), Some(true));
    assert!(best.bound.step_time <= best.estimate.step_time);
    assert!(
        (ours - published).abs() / published <= TOLERANCE,
        "{ours:.2} s against {published:.2} s"
    );
    Ok(())
}
