//! What to change: every change the tool can price, each evaluated by the same analysis that
//! priced the current step, ranked by the time it saves on that step.
//!
//! For each analysed stage (the prefill pass gives TTFT, the decode step TPOT), with T₀ the
//! step's time including launch overhead ([`crate::analysis::Totals::time_with_launch`]):
//!
//! - **fuse**: the [`Preset::Max`] plan of the stage's graph ([`compare_preset`]); the step
//!   is the plan's roofline time plus its kernels' launches.
//! - **batch × 2**: the workload at 2B ([`analyze`]); its step T₂ carries twice the tokens,
//!   so the current tokens take T₂/2 at that rate and the saving is T₀ − T₂/2 (per-token time
//!   saved × the current tokens). Not applicable when 2B does not fit the chip's memory.
//! - **int8 weight-only**, **int4 weight-only** with an fp16 scale per 128 weights
//!   (GPTQ, Frantar et al. 2023; AWQ, Lin et al. 2024: (0.5 + 2/128) B per weight), and
//!   **fp8** weights and activations at the chip's fp8 peak (KV cache unchanged): the
//!   workload with those precisions ([`analyze`]). fp8 is not applicable on a chip without
//!   an fp8 peak; each is not applicable when the weights are already as narrow.
//! - **tensor parallelism × 2**: [`analyze_parallel`] with t = 2 on two chips of the chip's
//!   own node ([`System::of_chip`]); the step is [`crate::parallel::ParallelStage::step_time`]
//!   (it takes twice the devices).
//! - **FlashAttention** (Dao et al. 2022): the workload with attention as one fused kernel
//!   ([`analyze`]); not applicable when it is already on.
//! - **CUDA graphs**: the step's kernels launched as one graph, one launch per step instead
//!   of one per kernel: T₀ − (k − 1)·λ for k kernels of launch overhead λ. NVIDIA's "Getting
//!   Started with CUDA Graphs" (A. Gray, NVIDIA Technical Blog, 2019) measures the per-kernel
//!   launch overhead a graph removes; the time a kernel runs is unchanged. Not applicable on
//!   a chip that launches one compiled program per step already
//!   ([`crate::device::LaunchModel::PerProgram`]: XLA on TPUs).
//!
//! Nothing is estimated by a rule of thumb: every step comes from the analysis functions the
//! current step came from. A change that does not apply is kept, with the reason; a change
//! whose run does not fit the chip's memory ([`crate::memory::MemoryFootprint::fits`]) when
//! the current run does is one of them (the doubled batch is whenever it does not fit); when
//! the current run does not fit either, the change is priced and marked
//! ([`Priced::fits`]).

use crate::analysis::{analyze, StageAnalysis};
use crate::comm::System;
use crate::device::Device;
use crate::fusion::{compare_preset, Preset};
use crate::memory::{MemoryFootprint, Reserve};
use crate::model::Transformer;
use crate::parallel::{analyze_parallel, Layout};
use crate::precision::Precision;
use crate::units::Seconds;
use crate::workload::{Precisions, Stage, Workload};
use serde::Serialize;

/// Weights per group of the int4 weight-only change (GPTQ's and AWQ's default).
pub const INT4_GROUP: u64 = 128;

/// One change the tool can price.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// Every fusion rule ([`Preset::Max`]).
    Fuse,
    /// The batch doubled.
    Batch {
        /// The new batch, sequences.
        batch: u64,
    },
    /// Weights stored in `weight`, GEMMs still in the activation precision.
    WeightOnly {
        /// The weight precision.
        weight: Precision,
        /// Weights per fp16 scale, if the format has group scales.
        group_size: Option<u64>,
    },
    /// Weights and activations in fp8, GEMMs at the fp8 peak; the KV cache stays in `kv`.
    Fp8 {
        /// The KV-cache precision, kept.
        kv: Precision,
    },
    /// Tensor parallelism of degree `tp` on the chip's node.
    TensorParallel {
        /// The degree.
        tp: u32,
    },
    /// Attention as one FlashAttention kernel.
    FlashAttention,
    /// The step launched as one CUDA graph.
    CudaGraphs {
        /// Kernels the step launches one by one today.
        kernels: u64,
        /// The launch overhead per kernel that makes k launches cost one: λ / k, seconds
        /// (what `--launch-overhead` takes to show the step).
        launch_per_kernel: Seconds,
    },
}

impl Change {
    /// A short name (`fuse`, `batch`, `int8 weight-only`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Change::Fuse => "fuse",
            Change::Batch { .. } => "batch × 2",
            Change::WeightOnly {
                weight: Precision::Int4,
                ..
            } => "int4 weight-only",
            Change::WeightOnly { .. } => "int8 weight-only",
            Change::Fp8 { .. } => "fp8",
            Change::TensorParallel { .. } => "tensor parallel × 2",
            Change::FlashAttention => "FlashAttention",
            Change::CudaGraphs { .. } => "CUDA graphs",
        }
    }
}

/// A change priced on one stage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Priced {
    /// The change.
    pub change: Change,
    /// The changed run's step, launch overhead included, seconds (batch × 2: the step of 2B
    /// sequences).
    pub step: Seconds,
    /// Time saved on the current step's tokens, seconds: T₀ − step, or T₀ − step/2 for the
    /// doubled batch ([module docs](self)); negative when the change costs time.
    pub saving: Seconds,
    /// Devices the changed run takes (2 for tensor parallelism × 2, else 1).
    pub devices: u64,
    /// Whether the changed run fits the chip's memory (per device under tensor parallelism);
    /// `None` when the capacity is unknown.
    pub fits: Option<bool>,
    /// Tokens per second of the changed run: its tokens (B · seq_len in prefill, B in decode;
    /// twice that for the doubled batch) ÷ [`Priced::step`], for one replica of
    /// [`Priced::devices`] devices.
    pub tokens_per_s: f64,
}

/// A change that does not apply to this stage, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotApplicable {
    /// The change.
    pub change: Change,
    /// Why (already on, does not fit, no peak, …).
    pub reason: String,
}

/// The changes for one stage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageAdvice {
    /// Prefill (TTFT) or decode (TPOT).
    pub stage: Stage,
    /// The current step T₀, launch overhead included, seconds.
    pub step: Seconds,
    /// The priced changes, largest saving first.
    pub ranked: Vec<Priced>,
    /// The changes that do not apply, with the reason.
    pub not_applicable: Vec<NotApplicable>,
}

/// One change's outcome while pricing.
type Outcome = Result<Priced, NotApplicable>;

fn na(change: Change, reason: impl Into<String>) -> Outcome {
    Err(NotApplicable {
        change,
        reason: reason.into(),
    })
}

/// `does not fit: 105.7 GB of 80.0 GB`: the footprint against the capacity.
fn does_not_fit(m: &MemoryFootprint) -> String {
    format!(
        "does not fit: {:.1} GB of {:.1} GB",
        m.total().get() / 1e9,
        m.capacity.map_or(f64::NAN, |c| c.get() / 1e9)
    )
}

/// The changes for each of `stages` (analyses of `model` on `device` keeping `reserve`).
pub fn advise(
    model: &Transformer,
    stages: &[StageAnalysis],
    device: &Device,
    reserve: Reserve,
) -> Vec<StageAdvice> {
    stages
        .iter()
        .map(|s| stage_advice(model, s, device, reserve))
        .collect()
}

/// The changes for one stage ([`advise`]).
pub fn stage_advice(
    model: &Transformer,
    s: &StageAnalysis,
    device: &Device,
    reserve: Reserve,
) -> StageAdvice {
    let t0 = s.totals.time_with_launch();
    let w = &s.workload;
    let p = w.precisions;
    let tokens = w.tokens() as f64;
    let base_fits = s.memory.fits();
    // A changed run that does not fit where the current one does is not applicable.
    let priced = |change: Change, step: Seconds, devices: u64, memory: &MemoryFootprint| {
        let fits = memory.fits();
        if fits == Some(false) && base_fits != Some(false) {
            return na(change, does_not_fit(memory));
        }
        Ok(Priced {
            change,
            step,
            saving: t0 - step,
            devices,
            fits,
            tokens_per_s: tokens / step.get(),
        })
    };
    let rerun = |change: Change, w2: Workload| -> Outcome {
        match analyze(model, &w2, device, reserve) {
            Ok(a) => priced(change, a.totals.time_with_launch(), 1, &a.memory),
            Err(e) => na(change, e.to_string()),
        }
    };
    let mut outcomes: Vec<Outcome> = Vec::with_capacity(8);

    // Fusion: the max preset's plan of this graph.
    outcomes.push(
        match compare_preset(
            &s.graph,
            Preset::Max,
            p.act,
            device,
            device.launch_overhead.value,
        ) {
            Ok(c) if c.after.kernels >= c.before.kernels && c.after.time >= c.before.time => {
                na(Change::Fuse, "no fusion rule applies to this graph")
            }
            // Fusion keeps the tensors and the weights: the footprint is the current one.
            Ok(c) => priced(Change::Fuse, c.after.time_with_launch(), 1, &s.memory),
            Err(e) => na(Change::Fuse, e.to_string()),
        },
    );

    // Batch × 2: per-token time at twice the batch, if it fits.
    let b2 = w.batch.saturating_mul(2);
    let change = Change::Batch { batch: b2 };
    outcomes.push(match analyze(model, &w.with_batch(b2), device, reserve) {
        Ok(a) if a.memory.fits() == Some(false) => {
            na(change, format!("batch {b2} {}", does_not_fit(&a.memory)))
        }
        Ok(a) => {
            let step = a.totals.time_with_launch();
            Ok(Priced {
                change,
                step,
                saving: t0 - step * 0.5,
                devices: 1,
                fits: a.memory.fits(),
                tokens_per_s: a.workload.tokens() as f64 / step.get(),
            })
        }
        Err(e) => na(change, e.to_string()),
    });

    // Weight-only quantization: int8, then int4 with fp16 group scales.
    for (weight, group_size) in [(Precision::Int8, None), (Precision::Int4, Some(INT4_GROUP))] {
        let change = Change::WeightOnly { weight, group_size };
        let scale = group_size.map_or(0.0, |g| Precision::Fp16.bytes() / g as f64);
        let bytes = weight.bytes() + scale;
        if p.weight_bytes() <= bytes {
            outcomes.push(na(
                change,
                format!(
                    "weights are already {} ({} B per weight ≤ {} B)",
                    p.weight,
                    p.weight_bytes(),
                    bytes
                ),
            ));
            continue;
        }
        let q = Precisions {
            weight,
            weight_scale_bytes: scale,
            ..p
        };
        outcomes.push(rerun(change, w.with_precisions(q)));
    }

    // fp8 weights and activations, where the chip has an fp8 peak.
    let change = Change::Fp8 { kv: p.kv };
    outcomes.push(if device.peak(Precision::Fp8).is_err() {
        na(change, format!("{} has no fp8 peak", device.id))
    } else if p.gemm() == Precision::Fp8 || (p.act.bytes() <= 1.0 && p.weight_bytes() <= 1.0) {
        na(change, "weights and activations are already 8-bit")
    } else {
        rerun(
            change,
            w.with_precisions(Precisions::new(Precision::Fp8, Precision::Fp8, p.kv)),
        )
    });

    // Tensor parallelism × 2 on the chip's own node.
    let change = Change::TensorParallel { tp: 2 };
    let layout = Layout {
        tp: 2,
        ..Layout::SINGLE
    };
    outcomes.push(match System::of_chip(device, layout.devices()) {
        Err(e) => na(change, e.to_string()),
        Ok(system) => match layout.validate(model) {
            Err(e) => na(change, e.to_string()),
            Ok(()) => match analyze_parallel(model, w, &system, layout, reserve) {
                Ok(ps) => priced(
                    change,
                    ps.step_time() + ps.launch_and_host(),
                    ps.devices,
                    &ps.memory,
                ),
                Err(e) => na(change, e.to_string()),
            },
        },
    });

    // FlashAttention.
    outcomes.push(if w.flash_attention {
        na(Change::FlashAttention, "FlashAttention is already on")
    } else {
        rerun(Change::FlashAttention, w.flash_attention(true))
    });

    // CUDA graphs: one launch per step.
    let k = s.totals.kernels;
    let launch = device.launch_overhead.value;
    let change = Change::CudaGraphs {
        kernels: k,
        launch_per_kernel: Seconds(launch.get() / k.max(1) as f64),
    };
    outcomes.push(
        if device.launch_model == crate::device::LaunchModel::PerProgram {
            na(
                change,
                format!(
                    "{} runs a step as one compiled program, launched once",
                    device.id
                ),
            )
        } else if k <= 1 {
            na(change, "the step is one kernel already")
        } else if launch.get() <= 0.0 {
            na(change, "the chip's launch overhead is zero")
        } else {
            let step = s.totals.time + launch;
            Ok(Priced {
                change,
                step,
                saving: s.totals.launch_overhead - launch,
                devices: 1,
                fits: base_fits,
                tokens_per_s: tokens / step.get(),
            })
        },
    );

    let mut ranked = Vec::new();
    let mut not_applicable = Vec::new();
    for o in outcomes {
        match o {
            Ok(p) => ranked.push(p),
            Err(n) => not_applicable.push(n),
        }
    }
    ranked.sort_by(|a, b| b.saving.get().total_cmp(&a.saving.get()));
    StageAdvice {
        stage: w.stage,
        step: t0,
        ranked,
        not_applicable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{a6000, h100_sxm, llama2_7b};

    fn find(a: &StageAdvice, name: &str) -> Option<Priced> {
        a.ranked.iter().copied().find(|p| p.change.name() == name)
    }

    fn why(a: &StageAdvice, name: &str) -> Option<String> {
        a.not_applicable
            .iter()
            .find(|n| n.change.name() == name)
            .map(|n| n.reason.clone())
    }

    #[test]
    fn cuda_graphs_save_all_launches_but_one() -> Result<(), Box<dyn std::error::Error>> {
        let (m, chip) = (llama2_7b(), a6000());
        let s = analyze(&m, &Workload::decode(1, 2048), &chip, Reserve::DEFAULT)?;
        let a = stage_advice(&m, &s, &chip, Reserve::DEFAULT);
        let g = find(&a, "CUDA graphs").ok_or("priced")?;
        // k kernels of 5 µs each become one launch: (k − 1) × 5 µs saved.
        let k = s.rows.iter().map(|r| r.count).sum::<u64>();
        let expected = (k - 1) as f64 * 5e-6;
        assert!((g.saving.get() - expected).abs() <= 1e-12 * expected);
        assert_eq!(
            g.change,
            Change::CudaGraphs {
                kernels: k,
                launch_per_kernel: Seconds(5e-6 / k as f64),
            }
        );
        Ok(())
    }

    #[test]
    fn flash_attention_saves_the_difference_of_two_analyses(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let (m, chip) = (llama2_7b(), a6000());
        let w = Workload::prefill(1, 2048);
        let off = analyze(&m, &w, &chip, Reserve::DEFAULT)?;
        let on = analyze(&m, &w.flash_attention(true), &chip, Reserve::DEFAULT)?;
        let a = stage_advice(&m, &off, &chip, Reserve::DEFAULT);
        let fa = find(&a, "FlashAttention").ok_or("priced")?;
        let by_hand = off.totals.time.get() + off.totals.launch_overhead.get()
            - (on.totals.time.get() + on.totals.launch_overhead.get());
        assert!((fa.saving.get() - by_hand).abs() <= 1e-12 * off.totals.time.get());
        // Already on: listed, with the reason.
        let a2 = stage_advice(&m, &on, &chip, Reserve::DEFAULT);
        assert_eq!(
            why(&a2, "FlashAttention").as_deref(),
            Some("FlashAttention is already on")
        );
        Ok(())
    }

    #[test]
    fn batch_saving_is_per_token_time_and_ranking_is_by_saving(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let (m, chip) = (llama2_7b(), h100_sxm());
        let s = analyze(&m, &Workload::decode(4, 1024), &chip, Reserve::DEFAULT)?;
        let s8 = analyze(&m, &Workload::decode(8, 1024), &chip, Reserve::DEFAULT)?;
        let a = stage_advice(&m, &s, &chip, Reserve::DEFAULT);
        let b = find(&a, "batch × 2").ok_or("priced")?;
        // 4 tokens now take T₄; at batch 8 they take T₈ / 2.
        let t4 = s.totals.time.get() + s.totals.launch_overhead.get();
        let t8 = s8.totals.time.get() + s8.totals.launch_overhead.get();
        assert!((b.saving.get() - (t4 - t8 / 2.0)).abs() <= 1e-12 * t4);
        // 8 sequences, one token each, per step of T₈.
        assert!((b.tokens_per_s - 8.0 / t8).abs() <= 1e-9 * b.tokens_per_s);
        assert!(a
            .ranked
            .windows(2)
            .all(|p| p[0].saving.get() >= p[1].saving.get()));
        // The H100 has an fp8 peak; the fixture has no platform, so no node for --tp 2.
        assert!(find(&a, "fp8").is_some());
        assert!(why(&a, "tensor parallel × 2").is_some());
        Ok(())
    }

    #[test]
    fn what_does_not_apply_is_listed_with_its_reason() -> Result<(), Box<dyn std::error::Error>> {
        let (m, chip) = (llama2_7b(), a6000());
        let w = Workload::decode(1, 2048).with_precisions(
            Precisions::new(Precision::Int4, Precision::Bf16, Precision::Bf16)
                .with_weight_scale_bytes(2.0 / 128.0),
        );
        let s = analyze(&m, &w, &chip, Reserve::DEFAULT)?;
        let a = stage_advice(&m, &s, &chip, Reserve::DEFAULT);
        assert!(why(&a, "int8 weight-only").is_some());
        assert!(why(&a, "int4 weight-only").is_some());
        assert_eq!(why(&a, "fp8").as_deref(), Some("a6000 has no fp8 peak"));
        // Every change is either priced or listed as not applicable: none is dropped.
        assert_eq!(a.ranked.len() + a.not_applicable.len(), 8);
        Ok(())
    }

    #[test]
    fn a_batch_that_does_not_fit_is_not_applicable() -> Result<(), Box<dyn std::error::Error>> {
        // Llama-2-7B's KV cache is 2 · 32 layers · 4096 · 2 B = 524,288 B per token; at
        // batch 32 and 4097 tokens each that is 32 · 4097 · 524,288 B = 68.7 GB, over the
        // A6000's 48 GB before the weights are counted.
        let (m, chip) = (llama2_7b(), a6000());
        let s = analyze(&m, &Workload::decode(16, 4096), &chip, Reserve::DEFAULT)?;
        let a = stage_advice(&m, &s, &chip, Reserve::DEFAULT);
        let r = why(&a, "batch × 2").ok_or("not applicable")?;
        assert!(r.starts_with("batch 32 does not fit"), "{r}");
        Ok(())
    }

    #[test]
    fn when_the_current_run_does_not_fit_changes_are_priced_and_marked(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // The A6000 cut to 10 GB: Llama-2-7B's bf16 weights alone are 6.74e9 · 2 B = 13.5 GB.
        // int4 with an fp16 scale per 128: 6.74e9 · (0.5 + 2/128) B = 3.47 GB, + the KV cache
        // 2 · 32 · 4096 · 2 B · 2049 tokens = 1.07 GB, + the 10 % reserve 1 GB = 5.5 GB: fits.
        let m = llama2_7b();
        let mut chip = a6000();
        chip.memory[0].capacity = Some(crate::cited::Cited::new(crate::units::Bytes(10e9), "test"));
        let s = analyze(&m, &Workload::decode(1, 2048), &chip, Reserve::DEFAULT)?;
        assert_eq!(s.memory.fits(), Some(false));
        let a = stage_advice(&m, &s, &chip, Reserve::DEFAULT);
        assert_eq!(find(&a, "int4 weight-only").ok_or("int4")?.fits, Some(true));
        // FlashAttention leaves the weights: still over, priced and marked.
        assert_eq!(find(&a, "FlashAttention").ok_or("flash")?.fits, Some(false));
        assert!(why(&a, "batch × 2").is_some_and(|r| r.contains("does not fit")));
        Ok(())
    }

    #[test]
    fn a_chip_that_launches_one_program_per_step_has_no_graph_to_capture(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let m = llama2_7b();
        let mut chip = a6000();
        chip.launch_model = crate::device::LaunchModel::PerProgram;
        let s = analyze(&m, &Workload::decode(1, 2048), &chip, Reserve::DEFAULT)?;
        let a = stage_advice(&m, &s, &chip, Reserve::DEFAULT);
        let r = why(&a, "CUDA graphs").ok_or("not applicable")?;
        assert!(r.contains("one compiled program"), "{r}");
        Ok(())
    }
}
