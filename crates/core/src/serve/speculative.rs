//! Speculative decoding: a small draft model proposes γ tokens, the target verifies them in one
//! pass, and the accepted prefix (plus the target's own next token) is kept.
//!
//! With each draft token accepted with probability α independently, one verification yields
//! E = (1 − α^(γ+1)) / (1 − α) tokens on average (γ + 1 at α = 1) (Leviathan, Kalman and
//! Matias 2023, "Fast Inference from Transformers via Speculative Decoding", eq. 1; Chen et al.
//! 2023). One iteration costs γ draft decode steps and one target pass of γ + 1 tokens per
//! sequence against its context (a prefill chunk on the KV cache, logits at every position),
//! priced by [`StepModel`]s of the two models. The iterations of a request are summed over
//! its growing context, each advancing it by E.
//!
//! The speedup is the plain decode's time over the speculative one; below 1 it is a slowdown
//! (a draft too slow or too rarely right), and is reported as such.

use super::efficiency::ServingEfficiency;
use super::generate::Request;
use super::mix::Mix;
use super::step_model::StepModel;
use crate::units::Seconds;
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

/// The speculative decode of `r` (its N − 1 tokens after the first) with `draft` proposing
/// `draft_len` tokens accepted at `acceptance`, verified by `target`; `None` for N = 1.
pub fn speculative(
    target: &StepModel,
    draft: &StepModel,
    r: &Request,
    draft_len: u64,
    acceptance: f64,
    eff: &ServingEfficiency,
) -> Option<Speculative> {
    if r.generate < 2 {
        return None;
    }
    let e = expected_tokens(draft_len, acceptance);
    let n = (r.generate - 1) as f64;
    let iterations = n / e;
    let b = r.batch;
    let (mut dr, mut ve, mut dr_e, mut ve_e) = (0.0, 0.0, 0.0, 0.0);
    let whole = iterations.floor() as u64;
    let frac = iterations - whole as f64;
    for k in 0..=whole {
        let weight = if k < whole { 1.0 } else { frac };
        if weight == 0.0 {
            break;
        }
        let c = r.prompt + (k as f64 * e).round() as u64;
        for j in 0..draft_len {
            let m = Mix::decode(b, c + j);
            dr += weight * draft.bound(&m).get();
            dr_e += weight * draft.estimate(&m, eff).get();
        }
        let mut m = Mix::sequences(b, draft_len + 1, c, true);
        m.sampled = (b * (draft_len + 1)) as f64;
        ve += weight * target.bound(&m).get();
        ve_e += weight * target.estimate(&m, eff).get();
    }
    let (mut plain, mut plain_e) = (0.0, 0.0);
    for c in r.prompt..=r.last_context() {
        let m = Mix::decode(b, c);
        plain += target.bound(&m).get();
        plain_e += target.estimate(&m, eff).get();
    }
    Some(Speculative {
        draft_len,
        acceptance,
        expected_tokens: e,
        iterations,
        draft: Seconds(dr),
        verify: Seconds(ve),
        plain: Seconds(plain),
        tpot: Seconds((dr + ve) / n),
        plain_tpot: Seconds(plain / n),
        speedup: plain / (dr + ve),
        tpot_estimate: Seconds((dr_e + ve_e) / n),
        plain_tpot_estimate: Seconds(plain_e / n),
        speedup_estimate: plain_e / (dr_e + ve_e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Reserve;
    use crate::parallel::Layout;
    use crate::workload::Workload;

    #[test]
    fn expected_tokens_by_hand() {
        // γ = 1: 1 + α. γ = 2 at α = 0.5: 1 + 0.5 + 0.25 = 1.75.
        assert!((expected_tokens(1, 0.6) - 1.6).abs() < 1e-12);
        assert!((expected_tokens(2, 0.5) - 1.75).abs() < 1e-12);
    }

    #[test]
    fn a_draft_as_large_as_the_target_that_is_never_right_is_a_slowdown() {
        let m = crate::fixtures::llama2_7b();
        let mut sys = crate::parallel::tests::dgx(1);
        sys.gpus_per_node = 1;
        let base = Workload::decode(1, 1).flash_attention(true);
        let s = StepModel::new(&m, &base, &sys, Layout::SINGLE, Reserve::DEFAULT).expect("model");
        let r = Request {
            prompt: 512,
            generate: 129,
            batch: 1,
            cached_prefix: 0,
        };
        let eff = ServingEfficiency::published();
        // α = 0: one token per iteration, each costing γ draft steps and a verification.
        let slow = speculative(&s, &s, &r, 4, 0.0, &eff).expect("spec");
        assert_eq!(slow.expected_tokens, 1.0);
        assert_eq!(slow.iterations, 128.0);
        assert!(slow.speedup < 0.25, "{}", slow.speedup);
        // The plain decode is the sum of the 128 decode steps.
        let plain: f64 = (512..=639).map(|c| s.bound(&Mix::decode(1, c)).get()).sum();
        assert!((slow.plain.get() - plain).abs() <= 1e-12 * plain);
        // At α = 1 with a free draft the verification of 5 tokens (memory-bound, about one
        // decode step) yields 5 tokens: nearly 5×.
        let free = speculative(&s, &s, &r, 4, 1.0, &eff).expect("spec");
        let verify_only = free.plain.get() / free.verify.get();
        assert!(verify_only > 4.5 && verify_only < 5.0, "{verify_only}");
    }
}
