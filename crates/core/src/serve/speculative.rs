//! Speculative decoding: a small draft model proposes γ tokens, the target verifies them in one
//! pass, and the accepted prefix (plus the target's own next token) is kept.
//!
//! With each draft token accepted with probability α independently, one verification yields
//! E = (1 − α^(γ+1)) / (1 − α) tokens on average (γ + 1 at α = 1) (Leviathan, Kalman and
//! Matias 2023, "Fast Inference from Transformers via Speculative Decoding", eq. 1; Chen et al.
//! 2023). One iteration costs γ draft decode steps and one target pass of γ + 1 tokens per
//! sequence against its context (a prefill chunk on the KV cache, logits at every position),
//! each priced by analyses of the two models' graphs ([`speculative`]).
//!
//! The speedup is the plain decode's time over the speculative one; below 1 it is a slowdown
//! (a draft too slow or too rarely right), and is reported as such.

use super::generate::Generation;
use crate::comm::System;
use crate::memory::Reserve;
use crate::model::Transformer;
use crate::parallel::analysis::{analyze_parallel, ParallelAnalysisError};
use crate::pricing::Estimate;
use crate::units::Seconds;
use crate::workload::{Logits, Stage, Workload};
use serde::Serialize;

/// The most draft tokens accepted (γ): beyond 64 a value is taken for a typo.
pub const MAX_DRAFT_LEN: u64 = 64;

/// E = (1 − α^(γ+1)) / (1 − α): tokens one verification yields on average (γ + 1 at α = 1).
///
/// ```
/// use roofline_core::serve::speculative::expected_tokens;
/// // γ = 4 at α = 0.8: (1 − 0.8⁵) / 0.2 = 3.3616.
/// assert!((expected_tokens(4, 0.8) - 3.3616).abs() < 1e-12);
/// assert_eq!(expected_tokens(4, 1.0), 5.0);
/// assert_eq!(expected_tokens(4, 0.0), 1.0);
/// ```
pub fn expected_tokens(draft_len: u64, acceptance: f64) -> f64 {
    let g = draft_len as f64;
    if acceptance >= 1.0 {
        g + 1.0
    } else {
        (1.0 - acceptance.powf(g + 1.0)) / (1.0 - acceptance)
    }
}

/// A speculative decode of a request against its plain decode.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Speculative {
    /// γ: draft tokens per iteration.
    pub draft_len: u64,
    /// α: the chance each draft token is accepted.
    pub acceptance: f64,
    /// E: tokens per iteration.
    pub expected_tokens: f64,
    /// Iterations for the N − 1 tokens after the first: (N − 1) / E.
    pub iterations: f64,
    /// Σ draft steps, bound, seconds.
    pub draft: Seconds,
    /// Σ verification passes, bound, seconds.
    pub verify: Seconds,
    /// The N − 1 plain decode steps, bound, seconds.
    pub plain: Seconds,
    /// (draft + verify) / (N − 1): TPOT with speculation, bound, seconds.
    pub tpot: Seconds,
    /// plain / (N − 1), bound, seconds.
    pub plain_tpot: Seconds,
    /// plain / (draft + verify): above 1 a speedup, below 1 a slowdown (bound).
    pub speedup: f64,
    /// The same TPOT at the estimate's shares and launches, seconds.
    pub tpot_estimate: Seconds,
    /// The plain TPOT at the estimate's shares, seconds.
    pub plain_tpot_estimate: Seconds,
    /// The speedup at the estimate.
    pub speedup_estimate: f64,
}

/// The speculative decode of `r` (its N − 1 tokens after the first, priced plainly in `plain`,
/// the target's [`super::generate()`] of `r`) with `draft` proposing `draft_len` tokens accepted
/// at `acceptance`, on the same system and layout; `None` for N = 1.
///
/// Each of the (N − 1)/E iterations runs γ draft decode steps, priced at the mean decode step
/// of the draft's own [`super::generate()`] of `r` (a step's time is linear in the context
/// between the kinks the exact sum finds, so the mean over the request stands for the steps at
/// any context in it), and one verification: a prefill of γ + 1 tokens per sequence after the
/// context, logits at every position, analysed at the first, middle and last context of the
/// request and averaged as (f₀ + 2f₁ + f₂)/4 (exact for a time linear in the context).
///
/// # Errors
/// What [`analyze_parallel`] refuses for the draft or the verification pass.
#[allow(clippy::too_many_arguments)]
pub fn speculative(
    plain: &Generation,
    draft: &Transformer,
    target: &Transformer,
    base: &Workload,
    system: &System,
    reserve: Reserve,
    eff: &Estimate,
    draft_len: u64,
    acceptance: f64,
) -> Result<Option<Speculative>, ParallelAnalysisError> {
    let r = &plain.request;
    if r.generate < 2 {
        return Ok(None);
    }
    let layout = plain.layout;
    let e = expected_tokens(draft_len, acceptance);
    let n = (r.generate - 1) as f64;
    let iterations = n / e;
    let dg = super::generate(draft, base, r, system, layout, reserve, eff)?;
    let draft_steps = iterations * draft_len as f64;
    let dr = draft_steps * dg.bound.decode.get() / n;
    let dr_e = draft_steps * dg.estimate.decode.get() / n;
    let verify_at = |c: u64| -> Result<(f64, f64), ParallelAnalysisError> {
        let w = Workload {
            stage: Stage::Prefill,
            batch: r.batch,
            seq_len: draft_len + 1,
            context: 0,
            ..*base
        }
        .with_cached(c)
        .with_logits(Logits::All);
        let s = analyze_parallel(target, &w, system, layout, reserve)?;
        Ok((
            s.schedule.step.get(),
            eff.step(&s.graph, &s.rows, &system.chip).total.get(),
        ))
    };
    let (lo, hi) = (r.prompt, r.last_context());
    let (f0, f1, f2) = (
        verify_at(lo)?,
        verify_at(lo + (hi - lo) / 2)?,
        verify_at(hi)?,
    );
    let ve = iterations * (f0.0 + 2.0 * f1.0 + f2.0) / 4.0;
    let ve_e = iterations * (f0.1 + 2.0 * f1.1 + f2.1) / 4.0;
    let (plain_b, plain_e) = (plain.bound.decode.get(), plain.estimate.decode.get());
    Ok(Some(Speculative {
        draft_len,
        acceptance,
        expected_tokens: e,
        iterations,
        draft: Seconds(dr),
        verify: Seconds(ve),
        plain: Seconds(plain_b),
        tpot: Seconds((dr + ve) / n),
        plain_tpot: Seconds(plain_b / n),
        speedup: plain_b / (dr + ve),
        tpot_estimate: Seconds((dr_e + ve_e) / n),
        plain_tpot_estimate: Seconds(plain_e / n),
        speedup_estimate: plain_e / (dr_e + ve_e),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_tokens_by_hand() {
        // γ = 1: 1 + α. γ = 2 at α = 0.5: 1 + 0.5 + 0.25 = 1.75.
        assert!((expected_tokens(1, 0.6) - 1.6).abs() < 1e-12);
        assert!((expected_tokens(2, 0.5) - 1.75).abs() < 1e-12);
    }

    #[test]
    fn a_draft_as_large_as_the_target_that_is_never_right_is_a_slowdown(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let m = crate::fixtures::llama2_7b();
        let mut sys = crate::parallel::tests::dgx(1);
        sys.gpus_per_node = 1;
        let base = Workload::decode(1, 1).flash_attention(true);
        let r = crate::serve::Request {
            prompt: 512,
            generate: 129,
            batch: 1,
            cached_prefix: 0,
        };
        let eff = Estimate::published();
        let layout = crate::parallel::Layout::SINGLE;
        let g = crate::serve::generate(&m, &base, &r, &sys, layout, Reserve::DEFAULT, &eff)?;
        // α = 0: one token per iteration, each costing γ = 4 draft steps (the target's own:
        // 4 × its decode) and a verification: more than 4× slower.
        let slow =
            speculative(&g, &m, &m, &base, &sys, Reserve::DEFAULT, &eff, 4, 0.0)?.ok_or("spec")?;
        assert_eq!(slow.expected_tokens, 1.0);
        assert_eq!(slow.iterations, 128.0);
        assert!((slow.draft.get() - 4.0 * g.bound.decode.get()).abs() < 1e-12);
        assert!(slow.speedup < 0.2, "{}", slow.speedup);
        assert_eq!(slow.plain, g.bound.decode);
        // At α = 1 the verification of 5 tokens (memory-bound: about one decode step) yields 5
        // tokens: verifying alone is nearly 5× the plain decode.
        let free =
            speculative(&g, &m, &m, &base, &sys, Reserve::DEFAULT, &eff, 4, 1.0)?.ok_or("spec")?;
        let verify_only = free.plain.get() / free.verify.get();
        assert!(verify_only > 4.5 && verify_only < 5.0, "{verify_only}");
        Ok(())
    }
}
