//! The assembled training step checked by hand on a small Llama-shaped model (d = 64, two
//! blocks, 4 heads, f = 256, V = 100, SwiGLU, RMSNorm, untied lm_head) on the test DGX of H100s.

use super::backward::Recompute;
use super::pipeline::{PipelineError, PipelineSchedule};
use super::step::{predict, StepError, TrainingJob};
use super::waterfall::Reason;
use crate::graph::Pass;
use crate::model::Transformer;
use crate::ops::Op;
use crate::parallel::tests::dgx;
use crate::parallel::Layout;
use crate::pricing::{Efficiency, Pricing};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const D: u64 = 64;
const F: u64 = 256;
const V: u64 = 100;
const S: u64 = 16;

fn tiny(layers: u64) -> Result<Transformer, crate::model::ModelError> {
    Transformer::builder(D, layers, 4, F, V).build()
}

fn job(layout: Layout, dp: u32, global: u64, micro: u64) -> TrainingJob {
    TrainingJob::new(layout, dp, global, micro, S)
}

/// GEMM parameters of one block: q, k, v, o (4·d²) and gate, up, down (3·d·f).
const BLOCK_GEMM: u64 = 4 * D * D + 3 * D * F;

#[test]
fn gemm_flops_of_a_step_are_three_forwards() -> TestResult {
    // 2 blocks, lm_head V·d: the forward's GEMMs take 2·T·(2·BLOCK_GEMM + V·d) FLOPs; the
    // input and weight gradients take twice that; 4 micro-batches of 2 sequences of 16 tokens.
    let model = tiny(2)?;
    let j = job(Layout::SINGLE, 1, 8, 2);
    let p = predict(&model, &dgx(1), &j, Pricing::Bound)?;
    assert_eq!(p.micro_batches, 4);
    let mb = super::micro_batch::micro_batch(&model, &dgx(1), &j.shape(), Pricing::Bound)?;
    let tokens = 2.0 * S as f64;
    let forward = 2.0 * tokens * (2.0 * BLOCK_GEMM as f64 + (V * D) as f64);
    let gemm: f64 = mb
        .graph
        .nodes()
        .iter()
        .filter(|n| matches!(n.op(), Op::Gemm(_)) && n.pass() != Pass::Recompute)
        .map(|n| n.cost().flops.get() * n.count() as f64)
        .sum();
    assert!(
        (gemm - 3.0 * forward).abs() < 1e-6 * forward,
        "{gemm} vs {}",
        3.0 * forward
    );
    // The whole step's hardware FLOPs: 4 micro-batches of the graph's forward and gradients.
    let per_micro: f64 = mb
        .pieces
        .iter()
        .filter(|x| x.phase != super::micro_batch::Phase::Recompute)
        .map(|x| x.flops * x.on_stage(0, 2, true, true) as f64)
        .sum();
    assert!((p.hardware_flops.get() - 4.0 * per_micro).abs() < 1e-6 * per_micro);
    // Its model FLOPs: 8 sequences of S tokens at 3 × (the GEMMs' forward, 2·(2·BLOCK_GEMM +
    // V·d) a token, and the causal scores, QKᵀ and S·V over S/2 keys a query: 2·2·d·S/2 a
    // token and block).
    let per_token =
        3.0 * (2.0 * (2.0 * BLOCK_GEMM as f64 + (V * D) as f64) + 2.0 * 2.0 * (D * S) as f64);
    let model_flops = 8.0 * S as f64 * per_token;
    assert!(
        (p.model_flops.get() - model_flops).abs() < 1e-9 * model_flops,
        "{} vs {model_flops}",
        p.model_flops.get()
    );
    assert_eq!(mb.model_flops_per_token.get(), per_token);
    Ok(())
}

#[test]
fn the_waterfall_and_the_mfu_sum_to_the_peak_and_mfu_is_model_flops_over_peak_time() -> TestResult {
    let model = tiny(2)?;
    let published = Efficiency::published();
    for eff in [Pricing::Bound, Pricing::Estimate(&published)] {
        let p = predict(&model, &dgx(1), &job(Layout::SINGLE, 1, 8, 2), eff)?;
        let w = &p.waterfall;
        let total: f64 = w.bars.iter().map(|b| b.share).sum::<f64>() + w.mfu;
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        assert!((w.step.get() - p.step_time.get()).abs() < 1e-12 * p.step_time.get());
        // MFU = model FLOPs / (T · devices · peak), the peak H100's dense bf16 989.5 TFLOP/s.
        let mfu = p.model_flops.get() / (p.step_time.get() * 1.0 * 989.5e12);
        assert!((p.mfu - mfu).abs() < 1e-12 && (w.mfu - mfu).abs() < 1e-9);
    }
    Ok(())
}

#[test]
fn one_device_step_is_the_micro_batches_in_series_plus_the_update() -> TestResult {
    // Without a pipeline or data parallelism T = m·(F + B + W) + the optimizer update.
    let model = tiny(2)?;
    let p = predict(
        &model,
        &dgx(1),
        &job(Layout::SINGLE, 1, 8, 2),
        Pricing::Bound,
    )?;
    let s = &p.stages[0];
    let serial = 4.0 * (s.forward + s.backward + s.weight).get() + s.optimizer.get();
    assert!((p.step_time.get() - serial).abs() < 1e-12 * serial);
    // 8 sequences of 16 tokens a step: a billion tokens take 10⁹ / 128 steps of T.
    let t = p.time_to_train(1e9);
    assert!((t - 1e9 / 128.0 * p.step_time.get()).abs() < 1e-9 * t);
    assert!(p.waterfall.share(Reason::PipelineBubble).abs() < 1e-12);
    // AdamW over 144,192 parameters (2 blocks of 4·d² + 3·d·f + 2·d, embedding and lm_head
    // V·d each, the final norm d), with fp32 gradients: it reads 4 + 4 + 8 bytes and writes
    // 4 + 8 + 2 a parameter = 30 bytes, at 3.35 TB/s.
    let params = 2 * (BLOCK_GEMM + 2 * D) + 2 * V * D + D;
    assert_eq!(params, 144_192);
    assert_eq!(s.parameters, params);
    let optimizer = params as f64 * 30.0 / 3.35e12;
    assert!((s.optimizer.get() - optimizer).abs() < 1e-9 * optimizer);
    Ok(())
}

#[test]
fn data_parallel_all_reduces_the_fp32_gradients_once() -> TestResult {
    // Two replicas: a ring all-reduce of Ψ'·4 bytes sends 2·(2 − 1)/2 of it, Ψ'·4 bytes.
    let model = tiny(2)?;
    let p = predict(
        &model,
        &dgx(1),
        &job(Layout::SINGLE, 2, 8, 2),
        Pricing::Bound,
    )?;
    assert_eq!((p.devices, p.micro_batches), (2, 2));
    let dp = &p.stages[0].data_parallel;
    assert!((dp.bytes_per_rank.get() - 144_192.0 * 4.0).abs() < 1e-6);
    assert!(dp.exposed.get() > 0.0 && dp.exposed <= dp.total);
    Ok(())
}

#[test]
fn a_pipeline_of_equal_stages_has_the_one_f_one_b_bubble() -> TestResult {
    // 8 blocks on 4 stages, 8 micro-batches; V = 2 makes the ends small, so the timeline's
    // bubble is near Megatron's (p − 1)/m = 3/8 of the busiest stage's time: the last stage's
    // final norm, lm_head and loss (and their launches) make it the busiest, a little below.
    // The estimate, launches included: the bound of so small a model is nanoseconds of compute
    // beside microseconds of stage sends.
    let model = Transformer::builder(4 * D, 8, 4, 4 * F, 2).build()?;
    let layout = Layout {
        pp: 4,
        ..Layout::SINGLE
    };
    let p = predict(
        &model,
        &dgx(1),
        &job(layout, 1, 8, 1),
        Pricing::Estimate(&Efficiency {
            network: 1.0,
            ..Efficiency::published()
        }),
    )?;
    assert_eq!(p.stages.len(), 4);
    assert!(p.stages.iter().all(|s| s.blocks == 2));
    assert!(
        (p.bubble_fraction - 3.0 / 8.0).abs() < 0.04,
        "{}",
        p.bubble_fraction
    );
    assert!(p.waterfall.share(Reason::PipelineBubble) > 0.0);
    // As a share of the makespan: (p − 1)/(m + p − 1) = 3/11.
    assert!(
        (p.bubble_share() - 3.0 / 11.0).abs() < 0.03,
        "{}",
        p.bubble_share()
    );
    // Stage i holds p − i micro-batches at its peak; each block keeps s·b·h·34 bytes
    // (Korthikanti Table 2 without tensor parallelism; FlashAttention keeps no scores):
    // 16·1·256·34 = 139,264, two blocks a stage.
    for (i, st) in p.stages.iter().enumerate() {
        assert_eq!(st.peak_in_flight, (4 - i) as f64);
        assert_eq!(st.activations.get(), (4 - i) as f64 * 2.0 * 139_264.0);
    }
    // Interleaving two chunks a device halves it: (p − 1)/(v·m) = 3/16.
    let v2 = TrainingJob {
        schedule: PipelineSchedule::Interleaved { virtual_stages: 2 },
        ..job(layout, 1, 8, 1)
    };
    let q = predict(
        &model,
        &dgx(1),
        &v2,
        Pricing::Estimate(&Efficiency {
            network: 1.0,
            ..Efficiency::published()
        }),
    )?;
    assert!(
        (q.bubble_fraction - 3.0 / 16.0).abs() < 0.04,
        "{}",
        q.bubble_fraction
    );
    Ok(())
}

#[test]
fn full_recompute_adds_the_blocks_forward_to_the_hardware_flops() -> TestResult {
    let model = tiny(2)?;
    let none = predict(
        &model,
        &dgx(1),
        &job(Layout::SINGLE, 1, 2, 2),
        Pricing::Bound,
    )?;
    let full = predict(
        &model,
        &dgx(1),
        &TrainingJob {
            recompute: Recompute::Full,
            ..job(Layout::SINGLE, 1, 2, 2)
        },
        Pricing::Bound,
    )?;
    assert_eq!(none.model_flops, full.model_flops);
    // Without recomputation the hardware FLOPs still exceed the model FLOPs: the vector
    // operators' FLOPs and the scores the eager kernel computes under the causal mask.
    assert!(none.hardware_flops > none.model_flops);
    // The recomputed FLOPs are every block's forward: at least its GEMMs, 2·T·2·BLOCK_GEMM.
    let recomputed = full.hardware_flops.get() - none.hardware_flops.get();
    let gemms = 2.0 * 32.0 * 2.0 * BLOCK_GEMM as f64;
    assert!(
        recomputed >= gemms && recomputed < 1.2 * gemms,
        "{recomputed} vs {gemms}"
    );
    assert!(full.hfu > full.mfu && full.step_time > none.step_time);
    assert!(full.waterfall.share(Reason::Recompute) > 0.0);
    Ok(())
}

#[test]
fn bad_jobs_are_refused_with_the_field() -> TestResult {
    let model = tiny(2)?;
    let system = dgx(1);
    let err = |j: TrainingJob| predict(&model, &system, &j, Pricing::Bound).err();
    assert_eq!(
        err(job(Layout::SINGLE, 2, 6, 2)),
        Some(StepError::GlobalBatch {
            global_batch: 6,
            per_micro_batch: 4
        })
    );
    assert_eq!(
        err(job(Layout::SINGLE, 1, 8, 0)),
        Some(StepError::Zero("micro_batch"))
    );
    assert_eq!(
        err(job(Layout::SINGLE, 16, 16, 1)),
        Some(StepError::TooFewDevices {
            needed: 16,
            available: 8
        })
    );
    let interleaved = TrainingJob {
        schedule: PipelineSchedule::Interleaved { virtual_stages: 2 },
        ..job(
            Layout {
                pp: 2,
                ..Layout::SINGLE
            },
            1,
            3,
            1,
        )
    };
    let four = tiny(4)?;
    assert_eq!(
        predict(&four, &system, &interleaved, Pricing::Bound).err(),
        Some(StepError::Pipeline(
            PipelineError::MicroBatchesNotMultipleOfStages {
                micro_batches: 3,
                stages: 2
            }
        ))
    );
    let bad = Efficiency {
        matmul: 0.0,
        ..Efficiency::BOUND
    };
    assert!(matches!(
        predict(
            &model,
            &system,
            &job(Layout::SINGLE, 1, 8, 2),
            Pricing::Estimate(&bad)
        ),
        Err(StepError::Efficiency(_))
    ));
    Ok(())
}

#[test]
fn the_estimate_is_never_faster_than_the_bound() -> TestResult {
    let model = tiny(4)?;
    let layout = Layout {
        tp: 2,
        pp: 2,
        ..Layout::SINGLE
    };
    let j = job(layout, 2, 8, 1);
    let bound = predict(&model, &dgx(1), &j, Pricing::Bound)?;
    let estimate = predict(
        &model,
        &dgx(1),
        &j,
        Pricing::Estimate(&Efficiency::published()),
    )?;
    assert!(estimate.step_time >= bound.step_time);
    assert!(estimate.mfu <= bound.mfu);
    Ok(())
}

#[test]
fn an_estimate_at_every_roof_is_the_bound_plus_the_launches() -> TestResult {
    // Shares of 1 everywhere price every kernel at its roof, as the bound does; the estimate
    // still launches each kernel (5 µs on the fixture's H100), the bound never: one device, 4
    // micro-batches, so the difference is 4 × (kernels of one micro-batch) × 5 µs.
    let model = tiny(2)?;
    let j = job(Layout::SINGLE, 1, 8, 2);
    let bound = predict(&model, &dgx(1), &j, Pricing::Bound)?;
    let roofs = predict(&model, &dgx(1), &j, Pricing::Estimate(&Efficiency::BOUND))?;
    let mb = super::micro_batch::micro_batch(&model, &dgx(1), &j.shape(), Pricing::Bound)?;
    let kernels: u64 = mb.pieces.iter().map(|p| p.on_stage(0, 2, true, true)).sum();
    let launches = 4.0 * kernels as f64 * 5e-6;
    let diff = roofs.step_time.get() - bound.step_time.get();
    assert!(
        (diff - launches).abs() <= 1e-9 * launches,
        "{diff} vs {launches}"
    );
    assert_eq!(bound.waterfall.share(Reason::Launch), 0.0);
    Ok(())
}
