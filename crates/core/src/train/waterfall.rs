//! The MFU waterfall: from the dense peak down to the model FLOPs utilisation, the share of the
//! step each reason takes.
//!
//! A step of T seconds on a device whose model FLOPs take T₀ = F_model / peak at the dense
//! peak splits exactly as T = T₀ + Σ losses, each loss one [`Reason`]; dividing by T, the
//! peak's 100 % splits into MFU = T₀ / T and each reason's share ℓ / T. HFU is MFU plus the
//! share of the FLOPs executed beyond the model FLOPs at the peak, the recomputation's and the
//! kernels' own (PaLM's definitions, Chowdhery et al. 2022, App. B).
//! With a measured step T_m ≥ T the same bars are shares of T_m and the rest,
//! (T_m − T) / T_m, is the unexplained bar.

use crate::units::Seconds;
use serde::Serialize;

/// Where a share of the peak goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Matrix kernels (GEMMs, attention) whose bytes take longer than their FLOPs: their
    /// time beyond FLOPs / dense peak.
    MemoryBound,
    /// Compute-bound matrix kernels below the dense peak: a lower peak for their precision,
    /// or (in an estimate) the achievable share of the peak.
    MatmulBelowPeak,
    /// Vector kernels (norms, activations, softmax, residual adds, embeddings, the loss): all
    /// of their time beyond their few FLOPs at the peak.
    NonMatmul,
    /// The optimizer update, a memory-bound kernel over the parameters a device updates.
    Optimizer,
    /// Tensor-parallel collectives (all-reduce, or reduce-scatter and all-gather with
    /// sequence parallelism), on the critical path.
    TensorParallel,
    /// Expert-parallel all-to-alls.
    ExpertParallel,
    /// Context parallelism's K/V ring, the part its attention does not hide.
    ContextParallel,
    /// Activations and gradients sent between pipeline stages, where they delay a stage.
    PipelineCommunication,
    /// Pipeline bubble and stage imbalance: time a device waits for its neighbours.
    PipelineBubble,
    /// Data-parallel gradient reduction and parameter gathers the compute does not hide.
    DataParallel,
    /// Kernel launch overhead.
    Launch,
    /// The FLOPs executed beyond the model FLOPs, at the peak (the gap between HFU and MFU):
    /// recomputed forward operators, and the kernels' FLOPs the model FLOPs convention does not
    /// count ([`crate::mfu::model_flops_per_token`]: FlashAttention's backward recomputing the
    /// scores, the scores an eager kernel computes under the causal mask, the vector
    /// operators' FLOPs).
    Recompute,
    /// A measured step's time beyond the prediction.
    Unexplained,
}

impl Reason {
    /// Every reason a prediction has, in the order the waterfall draws them.
    pub const PREDICTED: [Reason; 12] = [
        Reason::MemoryBound,
        Reason::MatmulBelowPeak,
        Reason::NonMatmul,
        Reason::Optimizer,
        Reason::TensorParallel,
        Reason::ExpertParallel,
        Reason::ContextParallel,
        Reason::PipelineCommunication,
        Reason::PipelineBubble,
        Reason::DataParallel,
        Reason::Launch,
        Reason::Recompute,
    ];

    /// Its serialised name (`memory_bound`).
    pub fn id(self) -> &'static str {
        match self {
            Reason::MemoryBound => "memory_bound",
            Reason::MatmulBelowPeak => "matmul_below_peak",
            Reason::NonMatmul => "non_matmul",
            Reason::Optimizer => "optimizer",
            Reason::TensorParallel => "tensor_parallel",
            Reason::ExpertParallel => "expert_parallel",
            Reason::ContextParallel => "context_parallel",
            Reason::PipelineCommunication => "pipeline_communication",
            Reason::PipelineBubble => "pipeline_bubble",
            Reason::DataParallel => "data_parallel",
            Reason::Launch => "launch",
            Reason::Recompute => "recompute",
            Reason::Unexplained => "unexplained",
        }
    }

    /// What a table or a picture calls it.
    pub fn label(self) -> &'static str {
        match self {
            Reason::MemoryBound => "memory-bound matmuls",
            Reason::MatmulBelowPeak => "matmuls below peak",
            Reason::NonMatmul => "non-matmul operators",
            Reason::Optimizer => "optimizer update",
            Reason::TensorParallel => "exposed TP communication",
            Reason::ExpertParallel => "exposed EP communication",
            Reason::ContextParallel => "exposed CP communication",
            Reason::PipelineCommunication => "exposed PP communication",
            Reason::PipelineBubble => "pipeline bubble",
            Reason::DataParallel => "exposed DP communication",
            Reason::Launch => "launch and host",
            Reason::Recompute => "recompute and extra FLOPs (HFU − MFU)",
            Reason::Unexplained => "unexplained (measured − predicted)",
        }
    }

    /// Its slot in [`Reason::PREDICTED`] (the unexplained bar has none).
    pub(crate) fn slot(self) -> Option<usize> {
        Reason::PREDICTED.iter().position(|r| *r == self)
    }
}

/// One bar: a reason, its seconds per step on the average device and its share of the step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bar {
    /// The reason.
    pub reason: Reason,
    /// Seconds of the step it takes (averaged over the devices), s.
    pub seconds: Seconds,
    /// Its share of the step, 0 to 1: the points of the peak it costs.
    pub share: f64,
}

/// The waterfall of one step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Waterfall {
    /// The step the shares are of, s (predicted, or measured).
    pub step: Seconds,
    /// T₀: the model FLOPs of the average device at the dense peak, s.
    pub ideal: Seconds,
    /// Every reason with a non-zero share, in [`Reason::PREDICTED`] order, then the
    /// unexplained bar when a measured step was given.
    pub bars: Vec<Bar>,
    /// Model FLOPs utilisation, T₀ / step.
    pub mfu: f64,
    /// Hardware FLOPs utilisation: MFU + the recompute's share.
    pub hfu: f64,
}

impl Waterfall {
    /// The waterfall of a step whose average device spends `ideal` on its model FLOPs at the
    /// peak and `losses[i]` seconds on [`Reason::PREDICTED`]`[i]`, so that the step is their
    /// sum; with `measured`, the shares are of the measured step and the time it adds beyond
    /// the sum is the unexplained bar (negative when the measured step is shorter).
    pub fn new(ideal: Seconds, losses: &[f64; 12], measured: Option<Seconds>) -> Self {
        let predicted = ideal.get() + losses.iter().sum::<f64>();
        let step = measured.map_or(predicted, Seconds::get);
        let share = |s: f64| if step > 0.0 { s / step } else { 0.0 };
        let mut bars: Vec<Bar> = Reason::PREDICTED
            .iter()
            .zip(losses)
            .filter(|(_, s)| **s > 0.0)
            .map(|(r, s)| Bar {
                reason: *r,
                seconds: Seconds(*s),
                share: share(*s),
            })
            .collect();
        if measured.is_some() {
            let rest = step - predicted;
            bars.push(Bar {
                reason: Reason::Unexplained,
                seconds: Seconds(rest),
                share: share(rest),
            });
        }
        let mfu = share(ideal.get());
        let recompute = Reason::Recompute
            .slot()
            .and_then(|i| losses.get(i))
            .copied()
            .unwrap_or(0.0);
        Waterfall {
            step: Seconds(step),
            ideal,
            bars,
            mfu,
            hfu: mfu + share(recompute),
        }
    }

    /// The same predicted step against a `measured` one: every predicted bar's seconds as a
    /// share of the measured step, and the unexplained bar (measured − predicted, negative
    /// when the measured step is shorter). A waterfall that already has an unexplained bar
    /// keeps its predicted bars only; `measured` replaces the old one.
    pub fn measured(&self, measured: Seconds) -> Waterfall {
        let mut losses = [0.0; 12];
        for b in &self.bars {
            if let Some(slot) = b.reason.slot().and_then(|i| losses.get_mut(i)) {
                *slot = b.seconds.get();
            }
        }
        Waterfall::new(self.ideal, &losses, Some(measured))
    }

    /// The share of `reason`, 0 when it has no bar.
    pub fn share(&self, reason: Reason) -> f64 {
        self.bars
            .iter()
            .find(|b| b.reason == reason)
            .map_or(0.0, |b| b.share)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn losses(pairs: &[(Reason, f64)]) -> [f64; 12] {
        let mut l = [0.0; 12];
        for (r, s) in pairs {
            if let Some(i) = r.slot() {
                l[i] = *s;
            }
        }
        l
    }

    #[test]
    fn the_bars_and_the_mfu_sum_to_the_peak() {
        // T₀ = 6 s, bubble 2 s, TP 1 s, recompute 1 s: T = 10 s, MFU 60 %, HFU 70 %.
        let l = losses(&[
            (Reason::PipelineBubble, 2.0),
            (Reason::TensorParallel, 1.0),
            (Reason::Recompute, 1.0),
        ]);
        let w = Waterfall::new(Seconds(6.0), &l, None);
        assert_eq!(w.step, Seconds(10.0));
        assert!((w.mfu - 0.6).abs() < 1e-12 && (w.hfu - 0.7).abs() < 1e-12);
        assert_eq!(w.bars.len(), 3);
        let total: f64 = w.bars.iter().map(|b| b.share).sum::<f64>() + w.mfu;
        assert!((total - 1.0).abs() < 1e-12);
        assert!((w.share(Reason::PipelineBubble) - 0.2).abs() < 1e-12);
    }

    #[test]
    fn a_measured_step_adds_the_unexplained_bar() {
        // Predicted 10 s, measured 12.5 s: MFU 6/12.5 = 48 %, unexplained 2.5/12.5 = 20 %.
        let l = losses(&[(Reason::NonMatmul, 4.0)]);
        let w = Waterfall::new(Seconds(6.0), &l, Some(Seconds(12.5)));
        assert!((w.mfu - 0.48).abs() < 1e-12);
        assert!((w.share(Reason::Unexplained) - 0.2).abs() < 1e-12);
        assert!((w.share(Reason::NonMatmul) - 0.32).abs() < 1e-12);
    }

    #[test]
    fn a_prediction_restated_against_a_measured_step() {
        // Predicted 6 + 4 = 10 s; measured 20 s: MFU 6/20 = 30 %, non-matmul 4/20 = 20 %,
        // unexplained 10/20 = 50 %; restating it again replaces the unexplained bar.
        let l = losses(&[(Reason::NonMatmul, 4.0)]);
        let w = Waterfall::new(Seconds(6.0), &l, None).measured(Seconds(20.0));
        assert!((w.mfu - 0.3).abs() < 1e-12);
        assert!((w.share(Reason::NonMatmul) - 0.2).abs() < 1e-12);
        assert!((w.share(Reason::Unexplained) - 0.5).abs() < 1e-12);
        let again = w.measured(Seconds(12.0));
        assert_eq!(again.bars.len(), 2);
        assert!((again.share(Reason::Unexplained) - 2.0 / 12.0).abs() < 1e-12);
    }

    #[test]
    fn every_reason_has_a_distinct_id() {
        let mut ids: Vec<_> = Reason::PREDICTED.iter().map(|r| r.id()).collect();
        ids.push(Reason::Unexplained.id());
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n);
    }
}
