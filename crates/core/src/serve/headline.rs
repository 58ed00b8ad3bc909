//! The serving headline of one workload: time to first token (TTFT), time per output token
//! (TPOT) and tokens per second, read off the analysed steps.
//!
//! - **TTFT** = the time of the prefill pass of the prompt (B sequences of `seq_len` tokens):
//!   the first output token is sampled at the end of it.
//! - **TPOT** = the time of one decode step at the analysed context.
//! - **output tokens/s** = B / TPOT (each decode step emits one token per sequence);
//!   **prompt tokens/s** = B · seq_len / TTFT. Per device: either ÷ the devices of the
//!   replica (t · p · e · c under a parallel layout, 1 on one chip).
//!
//! These are the metrics of serving benchmarks (vLLM's `benchmark_serving`, MLPerf Inference's
//! LLM TTFT/TPOT constraints) evaluated on the roofline: each step time is the roofline bound
//! ([`crate::pricing`]: every kernel at its roof, every collective at its α–β bound, on the
//! critical path), so every figure is a lower bound on time (an upper bound on tokens/s); the
//! launch and host overhead is carried beside it as a named addend. Queueing, scheduling and
//! sampling are not in it.

use crate::analysis::StageAnalysis;
use crate::parallel::ParallelStage;
use crate::units::Seconds;
use crate::workload::Stage;
use serde::Serialize;

/// One analysed step, as the headline reads it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StageStep {
    /// Prefill or decode.
    pub stage: Stage,
    /// Sequences in the batch, B.
    pub batch: u64,
    /// Tokens the pass processes (B · seq_len in prefill, B in decode).
    pub tokens: u64,
    /// The step's roofline bound, launch overhead excluded, seconds.
    pub step: Seconds,
    /// The launch and host overhead of the step, seconds (beside the bound, not in it).
    pub launch_and_host: Seconds,
    /// Devices of one replica running the step (1 on one chip).
    pub devices: u64,
}

impl StageStep {
    /// The step of a single-chip analysis: its roofline time, its launches beside it.
    pub fn of_analysis(s: &StageAnalysis) -> Self {
        StageStep {
            stage: s.workload.stage,
            batch: s.workload.batch,
            tokens: s.workload.tokens(),
            step: s.totals.time,
            launch_and_host: s.totals.launch_overhead,
            devices: 1,
        }
    }

    /// The step of a parallel analysis: the scheduled critical path
    /// ([`ParallelStage::step_time`]), its launches beside it, on the layout's devices.
    pub fn of_parallel(s: &ParallelStage) -> Self {
        StageStep {
            stage: s.workload.stage,
            batch: s.workload.batch,
            tokens: s.workload.tokens(),
            step: s.step_time(),
            launch_and_host: s.launch_and_host(),
            devices: s.devices.max(1),
        }
    }
}

/// What the prefill pass gives.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PrefillHeadline {
    /// Time to first token: the prefill pass's bound, seconds.
    pub ttft: Seconds,
    /// The prefill's launch and host overhead, seconds (beside the bound).
    pub launch_and_host: Seconds,
    /// Prompt tokens in the pass, B · seq_len.
    pub prompt_tokens: u64,
    /// Prompt tokens / TTFT, tokens per second.
    pub prompt_tokens_per_s: f64,
    /// Prompt tokens per second ÷ devices.
    pub prompt_tokens_per_s_per_device: f64,
}

/// What one decode step gives.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DecodeHeadline {
    /// Time per output token: one decode step's bound, seconds.
    pub tpot: Seconds,
    /// The decode step's launch and host overhead, seconds (beside the bound).
    pub launch_and_host: Seconds,
    /// Sequences, each emitting one token per step, B.
    pub batch: u64,
    /// B / TPOT, tokens per second.
    pub output_tokens_per_s: f64,
    /// Output tokens per second ÷ devices.
    pub output_tokens_per_s_per_device: f64,
}

/// The serving headline ([module docs](self)): what each analysed stage gives.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Headline {
    /// Devices of one replica (1 on one chip).
    pub devices: u64,
    /// From the prefill pass, when one was analysed.
    pub prefill: Option<PrefillHeadline>,
    /// From the decode step, when one was analysed.
    pub decode: Option<DecodeHeadline>,
}

/// The headline of `steps` (the first prefill and the first decode among them).
///
/// ```
/// use roofline_core::serve::headline::{headline, StageStep};
/// use roofline_core::units::Seconds;
/// use roofline_core::workload::Stage;
/// let h = headline(&[
///     StageStep { stage: Stage::Prefill, batch: 2, tokens: 2 * 512, step: Seconds(0.25),
///                 launch_and_host: Seconds(0.001), devices: 1 },
///     StageStep { stage: Stage::Decode, batch: 2, tokens: 2, step: Seconds(0.02),
///                 launch_and_host: Seconds(0.001), devices: 1 },
/// ]);
/// let (p, d) = (h.prefill.ok_or("no prefill")?, h.decode.ok_or("no decode")?);
/// assert_eq!(p.ttft, Seconds(0.25));
/// assert_eq!(p.prompt_tokens_per_s, 1024.0 / 0.25);
/// assert_eq!(d.tpot, Seconds(0.02));
/// assert_eq!(d.output_tokens_per_s, 2.0 / 0.02);
/// # Ok::<(), &str>(())
/// ```
pub fn headline(steps: &[StageStep]) -> Headline {
    let devices = steps.iter().map(|s| s.devices).max().unwrap_or(1).max(1);
    let prefill = steps.iter().find(|s| s.stage == Stage::Prefill).map(|s| {
        let rate = s.tokens as f64 / s.step.get();
        PrefillHeadline {
            ttft: s.step,
            launch_and_host: s.launch_and_host,
            prompt_tokens: s.tokens,
            prompt_tokens_per_s: rate,
            prompt_tokens_per_s_per_device: rate / s.devices.max(1) as f64,
        }
    });
    let decode = steps.iter().find(|s| s.stage == Stage::Decode).map(|s| {
        let rate = s.batch as f64 / s.step.get();
        DecodeHeadline {
            tpot: s.step,
            launch_and_host: s.launch_and_host,
            batch: s.batch,
            output_tokens_per_s: rate,
            output_tokens_per_s_per_device: rate / s.devices.max(1) as f64,
        }
    });
    Headline {
        devices,
        prefill,
        decode,
    }
}

/// The headline of single-chip analyses ([`StageStep::of_analysis`] of each).
pub fn of_analyses(stages: &[StageAnalysis]) -> Headline {
    let steps: Vec<StageStep> = stages.iter().map(StageStep::of_analysis).collect();
    headline(&steps)
}

/// The headline of parallel analyses ([`StageStep::of_parallel`] of each).
pub fn of_parallel(stages: &[ParallelStage]) -> Headline {
    let steps: Vec<StageStep> = stages.iter().map(StageStep::of_parallel).collect();
    headline(&steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use crate::fixtures::llama2_7b;
    use crate::memory::Reserve;
    use crate::workload::Workload;

    /// TTFT and TPOT are Σ over the rows of count × time, the launches (kernels × launch)
    /// beside them, summed here by hand from the rows rather than read off the totals.
    #[test]
    fn headline_is_the_rows_times_with_launches_beside() -> Result<(), Box<dyn std::error::Error>> {
        let m = llama2_7b();
        let chip = crate::fixtures::a6000();
        let (b, s, c) = (4u64, 512u64, 1024u64);
        let pre = analyze(&m, &Workload::prefill(b, s), &chip, Reserve::DEFAULT)?;
        let dec = analyze(&m, &Workload::decode(b, c), &chip, Reserve::DEFAULT)?;
        let by_hand = |a: &StageAnalysis| -> f64 {
            a.rows
                .iter()
                .map(|r| r.count as f64 * r.point().time.get())
                .sum()
        };
        let launches = |a: &StageAnalysis| -> f64 {
            a.rows
                .iter()
                .map(|r| r.count as f64 * r.launch_overhead.get())
                .sum()
        };
        let (ttft, tpot) = (by_hand(&pre), by_hand(&dec));
        let (lp, ld) = (launches(&pre), launches(&dec));
        let h = of_analyses(&[pre, dec]);
        let (p, d) = (h.prefill.ok_or("prefill")?, h.decode.ok_or("decode")?);
        let close = |a: f64, e: f64| (a - e).abs() <= 1e-9 * e;
        assert!(close(p.ttft.get(), ttft), "{} vs {ttft}", p.ttft.get());
        assert!(close(d.tpot.get(), tpot), "{} vs {tpot}", d.tpot.get());
        assert!(close(p.launch_and_host.get(), lp) && close(d.launch_and_host.get(), ld));
        // 4 prompts of 512 tokens in one pass; 4 sequences each emitting one token a step.
        assert_eq!(p.prompt_tokens, 2048);
        assert!(close(p.prompt_tokens_per_s, 2048.0 / ttft));
        assert!(close(d.output_tokens_per_s, 4.0 / tpot));
        assert_eq!(d.output_tokens_per_s_per_device, d.output_tokens_per_s);
        Ok(())
    }

    #[test]
    fn one_stage_gives_its_half_and_devices_divide() -> Result<(), &'static str> {
        let h = headline(&[StageStep {
            stage: Stage::Decode,
            batch: 32,
            tokens: 32,
            step: Seconds(0.016),
            launch_and_host: Seconds(0.001),
            devices: 8,
        }]);
        assert!(h.prefill.is_none());
        let d = h.decode.ok_or("decode")?;
        // 32 tokens every 16 ms = 2000 tokens/s; on 8 devices 250 per device.
        assert!((d.output_tokens_per_s - 2000.0).abs() < 1e-9);
        assert!((d.output_tokens_per_s_per_device - 250.0).abs() < 1e-9);
        assert_eq!(h.devices, 8);
        Ok(())
    }
}
