//! The event loop: one iteration per engine step ([module docs](super) for the scheduler).

use super::stats::summarise;
use super::{EngineConfig, Request, RequestMetrics, SimError, Simulation, MAX_REQUESTS};
use crate::serve::Mix;
use std::collections::VecDeque;

/// One request's state in the engine.
#[derive(Debug, Clone, Copy)]
struct Seq {
    prompt: u64,
    output: u64,
    /// Tokens to prefill at this admission: the prompt, or after a preemption the prompt and
    /// the tokens generated so far.
    target: u64,
    /// Tokens in its KV cache (processed by some step since its last admission).
    processed: u64,
    /// Output tokens sampled so far.
    generated: u64,
    /// KV blocks held.
    blocks: u64,
    admitted: Option<f64>,
    first_token: f64,
    finish: f64,
    preemptions: u64,
    done: bool,
}

/// Runs `requests` through an engine with `config`, each step taking `step_time(mix)`
/// seconds ([module docs](super): the scheduler, what a step's [`Mix`] holds).
///
/// `step_time` must return a finite, positive time for every non-empty mix.
///
/// # Errors
///
/// [`SimError::ZeroLimit`] for a zero engine limit; [`SimError::RequestCount`] for no requests
/// or more than [`MAX_REQUESTS`]; [`SimError::BadRequest`] for a negative or non-finite arrival
/// or a zero prompt or output; [`SimError::NeverFits`] for a request that could never run alone;
/// [`SimError::BadStepTime`] when `step_time` returns a time that is not finite and positive.
///
/// ```
/// use roofline_core::serve::sim::{simulate, EngineConfig, Request};
/// // One request alone, a step costing 10 ms + 10 µs per token: the prefill step of 1000
/// // tokens takes 20 ms, each of the 9 decode steps 10.01 ms.
/// let reqs = [Request { arrival: 0.0, prompt: 1000, output: 10 }];
/// let config = EngineConfig { max_seqs: 8, max_batched_tokens: 2048, kv_blocks: 1000,
///                             block_tokens: 16, chunked_prefill: true };
/// let sim = simulate(&reqs, &config, &|m| 0.01 + 1e-5 * m.tokens)?;
/// let r = &sim.requests[0];
/// assert!((r.ttft - 0.02).abs() < 1e-12);
/// assert!((r.e2e - (0.02 + 9.0 * 0.01001)).abs() < 1e-12);
/// # Ok::<(), roofline_core::serve::sim::SimError>(())
/// ```
pub fn simulate(
    requests: &[Request],
    config: &EngineConfig,
    step_time: &dyn Fn(&Mix) -> f64,
) -> Result<Simulation, SimError> {
    validate(requests, config)?;
    let n = requests.len();
    let blocks_for = |tokens: u64| tokens.div_ceil(config.block_tokens);

    let mut seqs: Vec<Seq> = requests
        .iter()
        .map(|r| Seq {
            prompt: r.prompt,
            output: r.output,
            target: r.prompt,
            processed: 0,
            generated: 0,
            blocks: 0,
            admitted: None,
            first_token: f64::NAN,
            finish: f64::NAN,
            preemptions: 0,
            done: false,
        })
        .collect();
    // Arrival order; ties keep input order.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| requests[a].arrival.total_cmp(&requests[b].arrival));

    let cap = usize::try_from(config.max_seqs)
        .unwrap_or(usize::MAX)
        .min(n);
    let mut running: Vec<usize> = Vec::with_capacity(cap);
    let mut waiting: VecDeque<usize> = VecDeque::with_capacity(n.min(1 << 16));
    let mut sched: Vec<(usize, u64)> = Vec::with_capacity(cap);

    let mut now = 0.0_f64;
    let mut next = 0usize;
    let mut free = config.kv_blocks;
    let mut finished = 0usize;
    let mut steps = 0u64;
    let mut batch_sum = 0u64;
    let mut preemptions = 0u64;

    while finished < n {
        while next < n && requests[order[next]].arrival <= now {
            waiting.push_back(order[next]);
            next += 1;
        }
        if running.is_empty() && waiting.is_empty() {
            // `finished < n` with nothing in the engine: a request is still to arrive.
            if let Some(&id) = order.get(next) {
                now = now.max(requests[id].arrival);
            }
            continue;
        }

        let mut budget = config.max_batched_tokens;
        let mut mix = Mix::EMPTY;
        let mut preempted = false;
        sched.clear();

        // Running sequences, oldest admission first.
        let mut i = 0;
        'running: while i < running.len() && budget > 0 {
            let id = running[i];
            let s = seqs[id];
            let q = if s.processed < s.target {
                (s.target - s.processed).min(budget)
            } else {
                1
            };
            let need = blocks_for(s.processed + q).saturating_sub(s.blocks);
            while free < need {
                let Some(victim) = running.pop() else {
                    break 'running;
                };
                free += preempt(&mut seqs[victim]);
                waiting.push_front(victim);
                preemptions += 1;
                preempted = true;
                if victim == id {
                    break 'running;
                }
            }
            free -= need;
            seqs[id].blocks += need;
            let sampled = s.processed + q >= s.target;
            mix.add(q, s.processed, sampled);
            sched.push((id, q));
            budget -= q;
            i += 1;
        }

        // Waiting sequences, first come first served, unless this step preempted.
        if !preempted {
            while let Some(&id) = waiting.front() {
                if running.len() as u64 >= config.max_seqs || budget == 0 {
                    break;
                }
                let s = seqs[id];
                let rest = s.target - s.processed;
                let q = if config.chunked_prefill || rest > config.max_batched_tokens {
                    rest.min(budget)
                } else if rest <= budget {
                    rest
                } else {
                    break;
                };
                let need = blocks_for(s.processed + q).saturating_sub(s.blocks);
                if need > free {
                    break;
                }
                waiting.pop_front();
                free -= need;
                let seq = &mut seqs[id];
                seq.blocks += need;
                if seq.admitted.is_none() {
                    seq.admitted = Some(now);
                }
                running.push(id);
                mix.add(q, s.processed, s.processed + q >= s.target);
                sched.push((id, q));
                budget -= q;
            }
        }

        if sched.is_empty() {
            if preempted {
                // Every running sequence was preempted: the next pass admits from the (now
                // full) free pool.
                continue;
            }
            // Unreachable for validated input (alone, every request fits): an error, not a hang.
            return Err(SimError::Stalled { time: now });
        }

        let dt = step_time(&mix);
        if !(dt.is_finite() && dt > 0.0) {
            return Err(SimError::BadStepTime {
                step: steps,
                seconds: dt,
            });
        }
        now += dt;
        steps += 1;
        batch_sum += sched.len() as u64;

        for &(id, q) in &sched {
            let s = &mut seqs[id];
            s.processed += q;
            if s.processed >= s.target {
                s.generated += 1;
                if s.generated == 1 {
                    s.first_token = now;
                }
                if s.generated >= s.output {
                    s.finish = now;
                    s.done = true;
                    free += s.blocks;
                    s.blocks = 0;
                    finished += 1;
                }
            }
        }
        running.retain(|&id| !seqs[id].done);
    }

    let metrics: Vec<RequestMetrics> = seqs
        .iter()
        .zip(requests)
        .enumerate()
        .map(|(index, (s, r))| {
            let admitted = s.admitted.unwrap_or(r.arrival);
            let ttft = s.first_token - r.arrival;
            let e2e = s.finish - r.arrival;
            RequestMetrics {
                index,
                arrival: r.arrival,
                prompt: s.prompt,
                output: s.output,
                admitted,
                first_token: s.first_token,
                finish: s.finish,
                ttft,
                tpot: (s.output > 1).then(|| (e2e - ttft) / (s.output - 1) as f64),
                e2e,
                queue: admitted - r.arrival,
                preemptions: s.preemptions,
            }
        })
        .collect();
    let summary = summarise(&metrics, steps, batch_sum, preemptions);
    Ok(Simulation {
        requests: metrics,
        summary,
    })
}

/// Preempts `s` by recomputation: frees its blocks (returned) and sets it to prefill its
/// prompt and the tokens generated so far again.
fn preempt(s: &mut Seq) -> u64 {
    let freed = s.blocks;
    s.blocks = 0;
    s.target = s.prompt + s.generated;
    s.processed = 0;
    s.preemptions += 1;
    freed
}

fn validate(requests: &[Request], c: &EngineConfig) -> Result<(), SimError> {
    for (field, v) in [
        ("max_seqs", c.max_seqs),
        ("max_batched_tokens", c.max_batched_tokens),
        ("kv_blocks", c.kv_blocks),
        ("block_tokens", c.block_tokens),
    ] {
        if v == 0 {
            return Err(SimError::ZeroLimit { field });
        }
    }
    if requests.is_empty() || requests.len() > MAX_REQUESTS {
        return Err(SimError::RequestCount {
            count: requests.len(),
        });
    }
    for (index, r) in requests.iter().enumerate() {
        let bad = |reason| Err(SimError::BadRequest { index, reason });
        if !(r.arrival.is_finite() && r.arrival >= 0.0) {
            return bad("arrival must be finite and at least 0 s");
        }
        if r.prompt == 0 {
            return bad("prompt must be at least 1 token");
        }
        if r.output == 0 {
            return bad("output must be at least 1 token");
        }
        // Its largest KV footprint: the last decode step reads prompt + output − 2 cached
        // tokens and writes one more.
        let Some(peak) = (r.prompt - 1).checked_add(r.output) else {
            return Err(SimError::NeverFits {
                index,
                reason: "prompt + output overflows".into(),
            });
        };
        let blocks = peak.div_ceil(c.block_tokens);
        if blocks > c.kv_blocks {
            return Err(SimError::NeverFits {
                index,
                reason: format!(
                    "prompt {} + output {} − 1 = {peak} tokens need {blocks} KV blocks of {} tokens; the engine has {}",
                    r.prompt, r.output, c.block_tokens, c.kv_blocks
                ),
            });
        }
        if !c.chunked_prefill && r.prompt > c.max_batched_tokens {
            return Err(SimError::NeverFits {
                index,
                reason: format!(
                    "a prompt of {} tokens is over the step's budget of {} tokens without chunked prefill",
                    r.prompt, c.max_batched_tokens
                ),
            });
        }
    }
    Ok(())
}
