//! One request, whole: the prompt's prefill and every decode step after it.
//!
//! A request of a prompt of P tokens (C of them a cached prefix) generating N tokens, for B
//! sequences together:
//!
//! - **TTFT** (time to first token) is the prefill of the P − C uncached tokens after the C
//!   cached ones ([`Workload::with_cached`]); the first token is sampled at its end.
//! - **Decode**: N − 1 steps, step j (1 ≤ j ≤ N − 1) feeding the j-th generated token against
//!   P + j − 1 cached tokens (it attends P + j keys). Their times are **summed exactly**: each
//!   step's bound is convex and piecewise linear in the context (every node's time is the larger
//!   of two affine functions of it, and the critical path is a maximum of sums of them), so a
//!   segment on which the midpoint lies on the chord is linear throughout and sums in closed form
//!   ([`sum_steps`]); the sliding window's kink is a forced split. Never one step times N.
//! - **E2E** = TTFT + Σ decode.
//! - **TPOT** by both conventions in use: `(E2E − TTFT) / (N − 1)`, the mean time between
//!   output tokens after the first (vLLM's `benchmark_serving` TPOT, genai-perf's
//!   inter-token latency); and `E2E / N`, end-to-end latency per output token (some vendors'
//!   "time per output token", e.g. LLM-Viewer). They differ by (TTFT − TPOT)/N.
//! - **Throughput**: N / E2E output tokens per second per sequence, B·N / E2E in all, and per
//!   device.
//! - **Memory** at every step: the KV cache grows with the context, so the prefill (largest
//!   activations) and the last decode (largest cache) bound every step between; when a step
//!   does not fit, the first generated token whose step does not is found by bisection.
//!
//! Times come twice: the roofline **bound** (no launch cost: a lower bound) and an **estimate**
//! at an [`Estimate`]'s shares with the launches, labelled as such.

use crate::comm::System;
use crate::memory::{MemoryFootprint, Reserve};
use crate::model::Transformer;
use crate::parallel::analysis::{analyze_parallel, ParallelAnalysisError, ParallelStage};
use crate::parallel::Layout;
use crate::pricing::Estimate;
use crate::units::{Bytes, Seconds};
use crate::workload::{Stage, Workload, WorkloadError, MAX_TOKENS};
use serde::Serialize;

/// The most tokens one request may generate (2^24): beyond it a value is taken for a typo.
pub const MAX_GENERATE: u64 = 1 << 24;

/// A request: B sequences of a P-token prompt, C of it cached, generating N tokens each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Request {
    /// P: prompt tokens per sequence.
    pub prompt: u64,
    /// N: tokens generated per sequence (the first by the prefill), at least 1.
    pub generate: u64,
    /// B: sequences served together.
    pub batch: u64,
    /// C: tokens of the prompt already in the KV cache (prefix caching), below P.
    pub cached_prefix: u64,
}

impl Request {
    /// Checks the lengths: P ≥ 1, 1 ≤ N ≤ [`MAX_GENERATE`], C < P, P + N − 1 keys at most
    /// [`MAX_TOKENS`] (the last decode attends them).
    ///
    /// # Errors
    /// A [`WorkloadError`] naming `prompt`, `generate` or `cached_prefix`.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.prompt == 0 {
            return Err(WorkloadError::new("prompt", "must be at least 1 token"));
        }
        if self.generate == 0 {
            return Err(WorkloadError::new(
                "generate",
                "must be at least 1 token (the first comes from the prefill)",
            ));
        }
        if self.generate > MAX_GENERATE {
            return Err(WorkloadError::new(
                "generate",
                format!(
                    "{} is beyond the most accepted ({MAX_GENERATE})",
                    self.generate
                ),
            ));
        }
        if self.cached_prefix >= self.prompt {
            return Err(WorkloadError::new(
                "cached_prefix",
                format!(
                    "{} cached tokens leave nothing of the {}-token prompt to prefill: at most {}",
                    self.cached_prefix,
                    self.prompt,
                    self.prompt - 1
                ),
            ));
        }
        let keys = u128::from(self.prompt) + u128::from(self.generate) - 1;
        if keys > u128::from(MAX_TOKENS) {
            return Err(WorkloadError::new(
                "generate",
                format!(
                    "prompt {} + {} generated tokens make {keys} keys at the last step, beyond \
                     the most accepted ({MAX_TOKENS})",
                    self.prompt, self.generate
                ),
            ));
        }
        Ok(())
    }

    /// The context of the last decode step: P + N − 2 cached tokens (N ≥ 2).
    pub fn last_context(&self) -> u64 {
        self.prompt + self.generate.saturating_sub(2)
    }

    /// Tokens in each sequence's KV cache after the request: P + N − 1 (the last sampled token
    /// is never fed back).
    pub fn final_kv_tokens(&self) -> u64 {
        self.prompt + self.generate - 1
    }
}

/// The latencies and rates of a request under one pricing (bound or estimate).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Latency {
    /// TTFT: the prefill, seconds.
    pub ttft: Seconds,
    /// Σ of the N − 1 decode steps, seconds.
    pub decode: Seconds,
    /// E2E = TTFT + decode, seconds.
    pub e2e: Seconds,
    /// (E2E − TTFT) / (N − 1): mean time between output tokens after the first, seconds;
    /// `None` for N = 1.
    pub tpot: Option<Seconds>,
    /// E2E / N: end-to-end latency per output token, seconds.
    pub e2e_per_token: Seconds,
    /// N / E2E: output tokens per second of one sequence.
    pub tokens_per_s_per_sequence: f64,
    /// B · N / E2E: output tokens per second of the batch.
    pub tokens_per_s: f64,
    /// B · N / E2E / devices.
    pub tokens_per_s_per_device: f64,
}

impl Latency {
    fn new(ttft: Seconds, decode: Seconds, r: &Request, devices: u64) -> Latency {
        let e2e = ttft + decode;
        let n = r.generate as f64;
        let tokens_per_s = r.batch as f64 * n / e2e.get();
        Latency {
            ttft,
            decode,
            e2e,
            tpot: (r.generate > 1).then(|| decode / (n - 1.0)),
            e2e_per_token: e2e / n,
            tokens_per_s_per_sequence: n / e2e.get(),
            tokens_per_s,
            tokens_per_s_per_device: tokens_per_s / devices as f64,
        }
    }
}

/// A request priced on a system under a layout ([module docs](self)).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Generation {
    /// The request.
    pub request: Request,
    /// The layout.
    pub layout: Layout,
    /// Devices one replica uses.
    pub devices: u64,
    /// The prefill (its rows are the per-operator table of TTFT).
    pub prefill: ParallelStage,
    /// The first decode step (context P), `None` for N = 1.
    pub first_decode: Option<ParallelStage>,
    /// The last decode step (context P + N − 2), `None` for N = 1.
    pub last_decode: Option<ParallelStage>,
    /// The roofline bound: no step can be faster.
    pub bound: Latency,
    /// The estimate at `efficiency`'s shares and launches.
    pub estimate: Latency,
    /// The shares and launches the estimate assumes.
    pub efficiency: Estimate,
    /// The KV cache of the batch on one device after the request (P + N − 1 tokens a
    /// sequence), bytes.
    pub kv_at_end: Bytes,
    /// The footprint of the step that needs the most memory (prefill or last decode).
    pub peak_memory: MemoryFootprint,
    /// Whether every step fits in the device's memory (`None`: capacity unknown).
    pub fits: Option<bool>,
    /// When some step does not fit: the first generated token (1-based) whose step does not
    /// (1 = the prefill itself).
    pub first_overflow: Option<u64>,
    /// Decode steps analysed to sum the N − 1 exactly (the rest summed in closed form).
    pub decode_steps_analysed: u64,
    /// Caveats.
    pub warnings: Vec<String>,
}

/// Why a request could not be priced.
pub type GenerateError = ParallelAnalysisError;

/// The workloads of a request: its prefill, and its decode at `context`.
pub fn prefill_workload(base: &Workload, r: &Request) -> Workload {
    Workload {
        stage: Stage::Prefill,
        batch: r.batch,
        seq_len: r.prompt - r.cached_prefix,
        context: 0,
        ..*base
    }
    .with_cached(r.cached_prefix)
}

/// A decode step of `r`'s batch against `context` cached tokens, with `base`'s precisions.
pub fn decode_workload(base: &Workload, r: &Request, context: u64) -> Workload {
    Workload {
        stage: Stage::Decode,
        batch: r.batch,
        seq_len: 0,
        context,
        cached: 0,
        ..*base
    }
}

/// Prices request `r` of `model` on `system` under `layout` with `base`'s precisions,
/// attention kernel and logits, keeping `reserve`, the estimate at `eff`.
///
/// # Errors
/// The request's lengths ([`Request::validate`], as an analysis error on the workload), and
/// whatever [`analyze_parallel`] refuses (model, chip, layout, system).
pub fn generate(
    model: &Transformer,
    base: &Workload,
    r: &Request,
    system: &System,
    layout: Layout,
    reserve: Reserve,
    eff: &Estimate,
) -> Result<Generation, GenerateError> {
    r.validate().map_err(|e| {
        ParallelAnalysisError::Analysis(crate::analysis::AnalysisError::Workload(e))
    })?;
    let run = |w: &Workload| analyze_parallel(model, w, system, layout, reserve);
    let prefill = run(&prefill_workload(base, r))?;
    let chip = &system.chip;
    let est = |s: &ParallelStage| eff.step(&s.graph, &s.rows, chip).total;
    let (ttft_b, ttft_e) = (prefill.schedule.step, est(&prefill));
    let mut analysed = 0u64;
    let (first_decode, last_decode, sum) = if r.generate > 1 {
        let (lo, hi) = (r.prompt, r.last_context());
        let first = run(&decode_workload(base, r, lo))?;
        let last = if hi == lo {
            first.clone()
        } else {
            run(&decode_workload(base, r, hi))?
        };
        let f = |c: u64| -> Result<[f64; 2], ParallelAnalysisError> {
            let s = run(&decode_workload(base, r, c))?;
            Ok([s.schedule.step.get(), est(&s).get()])
        };
        let ends = (
            [first.schedule.step.get(), est(&first).get()],
            [last.schedule.step.get(), est(&last).get()],
        );
        let kinks: Vec<u64> = model
            .variant
            .sliding_window
            .map(|w| vec![w.saturating_sub(1), w])
            .unwrap_or_default();
        let (sum, n) = sum_steps(lo, hi, ends, &kinks, f)?;
        analysed = n;
        (Some(first), Some(last), sum)
    } else {
        (None, None, [0.0, 0.0])
    };
    let devices = layout.devices();
    let bound = Latency::new(ttft_b, Seconds(sum[0]), r, devices);
    let estimate = Latency::new(ttft_e, Seconds(sum[1]), r, devices);
    let biggest = match &last_decode {
        Some(d) if d.memory.total() > prefill.memory.total() => d.memory,
        _ => prefill.memory,
    };
    let kv_at_end = match &last_decode {
        // The last step's cache holds its context + 1 = P + N − 1 tokens.
        Some(d) => d.memory.kv_cache,
        None => prefill.memory.kv_cache,
    };
    let fits = biggest.fits();
    let first_overflow = if fits == Some(false) {
        first_overflow(&prefill, r, |c| {
            run(&decode_workload(base, r, c)).map(|s| s.memory.fits() != Some(false))
        })?
    } else {
        None
    };
    let mut warnings = prefill.warnings.clone();
    if let Some(max) = model.max_position_embeddings {
        if r.final_kv_tokens() > max {
            warnings.push(format!(
                "prompt {} + {} generated tokens reach {} positions, beyond the model's \
                 max_position_embeddings ({max}): it was not trained for them",
                r.prompt,
                r.generate,
                r.final_kv_tokens()
            ));
        }
    }
    if let Some(d) = &last_decode {
        for w in &d.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    Ok(Generation {
        request: *r,
        layout,
        devices,
        prefill,
        first_decode,
        last_decode,
        bound,
        estimate,
        efficiency: *eff,
        kv_at_end,
        peak_memory: biggest,
        fits,
        first_overflow,
        decode_steps_analysed: analysed,
        warnings,
    })
}

/// The first generated token whose step does not fit: 1 when the prefill does not, else the
/// token after the last decode context that fits (`fits(c)` for the decode at context c,
/// monotone: true, then false).
fn first_overflow(
    prefill: &ParallelStage,
    r: &Request,
    mut fits: impl FnMut(u64) -> Result<bool, ParallelAnalysisError>,
) -> Result<Option<u64>, ParallelAnalysisError> {
    if prefill.memory.fits() == Some(false) {
        return Ok(Some(1));
    }
    if r.generate < 2 {
        return Ok(None);
    }
    let (mut lo, mut hi) = (r.prompt, r.last_context());
    if !fits(lo)? {
        return Ok(Some(2));
    }
    if fits(hi)? {
        return Ok(None);
    }
    // fits(lo), !fits(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // The decode at context c feeds token c − P + 1 and samples token c − P + 2.
    Ok(Some(hi - r.prompt + 2))
}

/// Σ_{c=lo}^{hi} f(c) for f convex and piecewise linear in c, exactly: a segment whose
/// midpoint value lies on the chord between its ends (to 1e-12 of the value) is linear, and
/// sums to (n/2)·(f(lo) + f(hi)); others are split at the midpoint. `kinks` are points where
/// f may bend the other way (a sliding window), split at first. `ends` are f(lo) and f(hi).
/// Returns the sums and how many points were evaluated (the ends included).
///
/// # Errors
/// The first error of `f`.
pub fn sum_steps<E>(
    lo: u64,
    hi: u64,
    ends: ([f64; 2], [f64; 2]),
    kinks: &[u64],
    mut f: impl FnMut(u64) -> Result<[f64; 2], E>,
) -> Result<([f64; 2], u64), E> {
    let mut evals = if hi > lo { 2 } else { 1 };
    // Split at the kinks inside (lo, hi): each piece is summed on its own and the shared
    // points counted once.
    let mut cuts: Vec<u64> = kinks
        .iter()
        .copied()
        .filter(|&k| k > lo && k < hi)
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut points = vec![(lo, ends.0)];
    for &k in &cuts {
        points.push((k, f(k)?));
        evals += 1;
    }
    points.push((hi, ends.1));
    if hi == lo {
        return Ok((ends.0, 1));
    }
    let mut total = [0.0; 2];
    for (i, w) in points.windows(2).enumerate() {
        let ((a, fa), (b, fb)) = (w[0], w[1]);
        let s = segment(a, b, fa, fb, &mut f, &mut evals)?;
        for k in 0..2 {
            total[k] += s[k];
            if i > 0 {
                // The shared left end was counted by the previous piece.
                total[k] -= fa[k];
            }
        }
    }
    Ok((total, evals))
}

fn segment<E>(
    a: u64,
    b: u64,
    fa: [f64; 2],
    fb: [f64; 2],
    f: &mut impl FnMut(u64) -> Result<[f64; 2], E>,
    evals: &mut u64,
) -> Result<[f64; 2], E> {
    if b - a <= 1 {
        return Ok(if b == a {
            fa
        } else {
            [fa[0] + fb[0], fa[1] + fb[1]]
        });
    }
    let m = a + (b - a) / 2;
    let fm = f(m)?;
    *evals += 1;
    let t = (m - a) as f64 / (b - a) as f64;
    let linear = (0..2).all(|k| {
        let chord = fa[k] + (fb[k] - fa[k]) * t;
        (fm[k] - chord).abs() <= 1e-12 * fm[k].abs().max(fa[k].abs()).max(fb[k].abs())
    });
    if linear {
        let n = (b - a + 1) as f64;
        return Ok([n * (fa[0] + fb[0]) / 2.0, n * (fa[1] + fb[1]) / 2.0]);
    }
    let left = segment(a, m, fa, fm, f, evals)?;
    let right = segment(m, b, fm, fb, f, evals)?;
    Ok([left[0] + right[0] - fm[0], left[1] + right[1] - fm[1]])
}

#[cfg(test)]
#[path = "generate_tests.rs"]
mod tests;
