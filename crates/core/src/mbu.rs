//! Inference efficiency of a measured decode: model bandwidth utilisation (MBU) and the MFU of
//! the same step.
//!
//! A decode step produces one token per sequence and must read every weight and the whole KV
//! cache once, so (Databricks/MosaicML, "LLM Inference Performance Engineering: Best Practices",
//! 2023):
//!
//! - bytes per step = weight bytes + KV-cache bytes;
//! - achieved bandwidth = bytes per step ÷ time per output token (TPOT);
//! - **MBU** = achieved bandwidth ÷ peak bandwidth (devices × per-device bandwidth).
//!
//! The worked example there: 7B parameters in 16 bits, TPOT 14 ms: 14 GB / 14 ms = 1 TB/s, 50 %
//! of a 2 TB/s part. The same step's **MFU** is its FLOPs ÷ TPOT ÷ (devices × dense peak). At
//! small batch decode is memory-bound, so MBU, not MFU, says how close to the roof it runs.
//!
//! Neither can exceed 100 %: a step cannot read faster than the peak bandwidth nor compute faster
//! than the dense peak. [`Mbu::impossible`] names the one that does, for the caller to flag; a
//! result that is not finite (a time so short the bandwidth overflows) is an error.

use crate::analysis::{validate, AnalysisError};
use crate::decoder::build_graph;
use crate::memory::Reserve;
use crate::mfu::{positive, MfuError};
use crate::model::Transformer;
use crate::ops::expected_experts_touched;
use crate::units::{Bytes, BytesPerSec, Flop, FlopPerSec, Seconds};
use crate::workload::{Precisions, Stage, Workload};
use serde::Serialize;

/// What one decode step must move and compute.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DecodeStep {
    /// Sequences decoded together (one new token each per step).
    pub batch: u64,
    /// Every weight, read once.
    pub weights: Bytes,
    /// The KV cache read by the step (zero when the model's shape is not known).
    pub kv_cache: Bytes,
    /// FLOPs of the step.
    pub flops: Flop,
}

impl DecodeStep {
    /// Bytes that must be read per step: weights + KV cache.
    pub fn bytes(&self) -> Bytes {
        self.weights + self.kv_cache
    }

    /// A decode step of `model` at `batch` sequences with `context` cached tokens each: the
    /// weights read ([`weights_read`] × bytes per weight, group-wise scales included); KV cache of the context + 1 keys each new token attends
    /// ([`Workload::kv_len`], as `roofline analyze` counts it); FLOPs of our decode graph.
    ///
    /// # Errors
    /// An invalid model, batch or context.
    pub fn of_model(
        model: &Transformer,
        batch: u64,
        context: u64,
        precisions: Precisions,
    ) -> Result<Self, AnalysisError> {
        let w = Workload {
            stage: Stage::Decode,
            batch,
            seq_len: 1,
            context,
            cached: 0,
            precisions,
            flash_attention: false,
            logits: crate::workload::Logits::Last,
        };
        validate(model, &w, Reserve::DEFAULT)?;
        let flops = build_graph(model, &w)
            .nodes()
            .iter()
            .map(|n| n.cost().flops * n.count() as f64)
            .sum();
        Ok(Self {
            batch,
            weights: Bytes(weights_read(model, batch) * precisions.weight_bytes()),
            kv_cache: model.kv_cache_bytes(batch, w.kv_len(), precisions.kv),
            flops,
        })
    }

    /// A decode step known only by its parameter count N, as in Databricks's worked example:
    /// weights N × `weight_bytes`, KV cache not counted, FLOPs 2·N per sequence (Kaplan's forward).
    pub fn of_params(params: f64, batch: u64, weight_bytes: f64) -> Self {
        Self {
            batch,
            weights: Bytes(params * weight_bytes),
            kv_cache: Bytes::ZERO,
            flops: Flop(2.0 * params * batch as f64),
        }
    }
}

/// Parameters one decode step of `batch` sequences reads: all of a dense model's; for a mixture
/// of experts, every weight except the routed experts no token chose: the `batch` new tokens touch
/// E·(1 − (1 − k/E)^batch) of the E experts of each MoE block on average
/// ([`expected_experts_touched`]), so at batch 1 a step reads exactly the active parameters.
pub fn weights_read(model: &Transformer, batch: u64) -> f64 {
    let all = model.parameters() as f64;
    match model.variant.moe {
        Some(m) if m.experts > m.top_k => {
            let idle_routed = (model.mlp_parameters(true, false) - model.mlp_parameters(true, true))
                as f64
                / (m.experts - m.top_k) as f64;
            let untouched = m.experts as f64 - expected_experts_touched(batch, m.top_k, m.experts);
            all - untouched * idle_routed * model.moe_layers() as f64
        }
        _ => all,
    }
}

/// How fast the decode ran.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pace {
    /// Time per output token (one step; each sequence gets one token).
    TimePerToken(Seconds),
    /// Output tokens per second over the whole batch (batch ÷ TPOT).
    TokensPerSecond(f64),
}

/// The devices the model is spread over (tensor parallel), with one device's figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Accelerators {
    /// Devices.
    pub devices: u64,
    /// Main-memory bandwidth of one device, B/s.
    pub bandwidth: BytesPerSec,
    /// Dense peak of one device, when known (for the MFU).
    pub peak: Option<FlopPerSec>,
}

/// MBU and MFU of a measured decode step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Mbu {
    /// The step.
    pub step: DecodeStep,
    /// Time per output token (TPOT).
    pub time_per_token: Seconds,
    /// Output tokens per second over the batch.
    pub tokens_per_s: f64,
    /// Bytes per step ÷ TPOT.
    pub achieved_bandwidth: BytesPerSec,
    /// Devices × bandwidth.
    pub peak_bandwidth: BytesPerSec,
    /// Model bandwidth utilisation, a fraction.
    pub mbu: f64,
    /// FLOPs per step ÷ TPOT.
    pub achieved_flops: FlopPerSec,
    /// Devices × dense peak, when known.
    pub peak_flops: Option<FlopPerSec>,
    /// Model FLOPs utilisation of the step, a fraction, when the peak is known.
    pub mfu: Option<f64>,
    /// The fastest the step can run: bytes ÷ peak bandwidth (MBU = 1).
    pub floor: Seconds,
}

impl Mbu {
    /// The utilisations above 100 % (`"MBU"`, `"MFU"`), which no measurement can reach: an
    /// input is wrong (the time, the batch, the model, the bandwidth or the peak).
    pub fn impossible(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.mbu > 1.0 {
            out.push("MBU");
        }
        if self.mfu.is_some_and(|m| m > 1.0) {
            out.push("MFU");
        }
        out
    }
}

/// MBU and MFU of `step` decoded at `pace` on `accel`.
///
/// # Errors
/// A zero, negative or non-finite time, rate, device count, bandwidth or peak, naming its flag;
/// a time per token so short that the achieved bandwidth or FLOP/s is not finite.
pub fn mbu(step: &DecodeStep, pace: Pace, accel: &Accelerators) -> Result<Mbu, MfuError> {
    let batch = positive("batch", step.batch as f64)?;
    let tpot = match pace {
        Pace::TimePerToken(t) => Seconds(positive("tpot", t.get())?),
        Pace::TokensPerSecond(r) => Seconds(batch / positive("tokens_per_s", r)?),
    };
    let devices = positive("devices", accel.devices as f64)?;
    let peak_bandwidth = BytesPerSec(positive("bandwidth", accel.bandwidth.get())? * devices);
    let peak_flops = accel
        .peak
        .map(|p| positive("peak", p.get()).map(|p| FlopPerSec(p * devices)))
        .transpose()?;
    let achieved_bandwidth = step.bytes() / tpot;
    let achieved_flops = step.flops / tpot;
    if !(achieved_bandwidth.get().is_finite() && achieved_flops.get().is_finite()) {
        return Err(MfuError {
            quantity: match pace {
                Pace::TimePerToken(_) => "tpot",
                Pace::TokensPerSecond(_) => "tokens_per_s",
            },
            message: format!(
                "gives an achieved bandwidth of {} B/s, which is not finite: the time per token \
                 ({:e} s) is too short",
                achieved_bandwidth.get(),
                tpot.get()
            ),
        });
    }
    Ok(Mbu {
        step: *step,
        time_per_token: tpot,
        tokens_per_s: batch / tpot.get(),
        achieved_bandwidth,
        peak_bandwidth,
        mbu: achieved_bandwidth.get() / peak_bandwidth.get(),
        achieved_flops,
        peak_flops,
        mfu: peak_flops.map(|p| achieved_flops / p),
        floor: step.bytes() / peak_bandwidth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::llama2_7b;
    use crate::precision::Precision;

    #[test]
    fn databricks_worked_example_is_fifty_percent() -> Result<(), Box<dyn std::error::Error>> {
        // 7B, 16-bit, TPOT 14 ms: 14 GB / 14 ms = 1 TB/s; on a 2 TB/s part MBU = 50 %.
        let step = DecodeStep::of_params(7e9, 1, 2.0);
        let accel = Accelerators {
            devices: 1,
            bandwidth: BytesPerSec(2e12),
            peak: None,
        };
        let m = mbu(&step, Pace::TimePerToken(Seconds(0.014)), &accel)?;
        assert_eq!(step.bytes().get(), 14e9);
        assert!((m.achieved_bandwidth.get() - 1e12).abs() < 1.0);
        assert!((m.mbu - 0.5).abs() < 1e-12);
        assert_eq!(m.mfu, None);
        // The floor is 7 ms: the step at MBU 1.
        assert!((m.floor.get() - 0.007).abs() < 1e-15);
        // The same pace given as tokens/s.
        let r = mbu(&step, Pace::TokensPerSecond(1.0 / 0.014), &accel)?;
        assert!((r.mbu - 0.5).abs() < 1e-12);
        Ok(())
    }

    #[test]
    fn llama2_7b_step_by_hand() -> Result<(), Box<dyn std::error::Error>> {
        // Llama-2-7B bf16, batch 1, context 2048 on an H100 SXM (3.35 TB/s, 989.5 TFLOP/s), TPOT
        // 14 ms. Weights 6,738,415,616·2 B; KV 2·32·2049·4096·2 B; the step's FLOPs are the decode
        // graph's (≈ 2N + attention).
        let step =
            DecodeStep::of_model(&llama2_7b(), 1, 2048, Precisions::uniform(Precision::Bf16))?;
        assert_eq!(step.weights.get(), 13_476_831_232.0);
        assert_eq!(step.kv_cache.get(), 2.0 * 32.0 * 2049.0 * 4096.0 * 2.0);
        let two_n = 2.0 * 6_738_415_616.0;
        assert!(step.flops.get() > two_n * 0.99 && step.flops.get() < two_n * 1.1);
        let accel = Accelerators {
            devices: 1,
            bandwidth: BytesPerSec(3.35e12),
            peak: Some(FlopPerSec(989.5e12)),
        };
        let m = mbu(&step, Pace::TimePerToken(Seconds(0.014)), &accel)?;
        let bytes = 13_476_831_232.0 + 2.0 * 32.0 * 2049.0 * 4096.0 * 2.0;
        assert!((m.mbu - bytes / 0.014 / 3.35e12).abs() < 1e-12);
        let mfu = m.mfu.ok_or("no MFU")?;
        assert!((mfu - step.flops.get() / 0.014 / 989.5e12).abs() < 1e-15);
        assert!(
            mfu < 0.002,
            "decode at batch 1 is nowhere near the compute roof"
        );
        Ok(())
    }

    #[test]
    fn a_mixture_of_experts_reads_the_experts_its_tokens_touch() {
        // Mixtral's shape (8 experts, 2 per token): at batch 1 a step reads the active
        // parameters; as the batch grows, all of them.
        let moe = Transformer {
            kv_heads: 8,
            intermediate: 14336,
            variant: crate::model::Variant {
                moe: Some(crate::model::Moe {
                    experts: 8,
                    top_k: 2,
                    expert_intermediate: 14336,
                    shared_experts: 0,
                    dense_layers: 0,
                    router_bias: false,
                }),
                ..Default::default()
            },
            ..llama2_7b()
        };
        assert!((weights_read(&moe, 1) - moe.active_parameters() as f64).abs() < 1.0);
        assert!((weights_read(&moe, 1024) - moe.parameters() as f64).abs() < 1.0);
        let two = weights_read(&moe, 2);
        // Two tokens touch 8·(1 − 0.75²) = 3.5 experts on average.
        let per_expert = 3.0 * 4096.0 * 14336.0;
        let want = moe.parameters() as f64 - (8.0 - 3.5) * per_expert * 32.0;
        assert!((two - want).abs() < 1.0, "{two} vs {want}");
        assert_eq!(
            weights_read(&llama2_7b(), 7),
            llama2_7b().parameters() as f64
        );
    }

    #[test]
    fn bad_inputs_name_the_flag() {
        let step = DecodeStep::of_params(7e9, 1, 2.0);
        let accel = Accelerators {
            devices: 1,
            bandwidth: BytesPerSec(2e12),
            peak: None,
        };
        let e = mbu(&step, Pace::TimePerToken(Seconds(0.0)), &accel).unwrap_err();
        assert_eq!(e.quantity, "tpot");
        let none = Accelerators {
            devices: 0,
            ..accel
        };
        let e = mbu(&step, Pace::TimePerToken(Seconds(0.01)), &none).unwrap_err();
        assert_eq!(e.quantity, "devices");
        // 14 GB in 1e-310 s overflows to an infinite bandwidth: refused, naming the flag.
        let e = mbu(&step, Pace::TimePerToken(Seconds(1e-310)), &accel).unwrap_err();
        assert_eq!(e.quantity, "tpot");
        let e = mbu(&step, Pace::TokensPerSecond(1e308), &accel).unwrap_err();
        assert_eq!(e.quantity, "tokens_per_s");
    }

    #[test]
    fn utilisations_above_one_are_impossible() -> Result<(), Box<dyn std::error::Error>> {
        // 7B in 16 bits is 14 GB; read in 1 ms that is 14 TB/s, 7× a 2 TB/s part: MBU 700 %.
        // 2·7e9 FLOP in 1 ms is 14 TFLOP/s, 140 % of a 10 TFLOP/s peak.
        let step = DecodeStep::of_params(7e9, 1, 2.0);
        let accel = Accelerators {
            devices: 1,
            bandwidth: BytesPerSec(2e12),
            peak: Some(FlopPerSec(10e12)),
        };
        let m = mbu(&step, Pace::TimePerToken(Seconds(0.001)), &accel)?;
        assert!((m.mbu - 7.0).abs() < 1e-12);
        assert_eq!(m.impossible(), ["MBU", "MFU"]);
        // The worked example (50 %) is possible.
        let ok = mbu(&step, Pace::TimePerToken(Seconds(0.014)), &accel)?;
        assert!(ok.impossible().is_empty());
        Ok(())
    }
}
