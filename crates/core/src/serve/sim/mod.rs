//! A request-level discrete-event simulation of a continuous-batching engine: requests arrive,
//! wait, are admitted, prefilled (whole or in chunks) and decoded one token per step, sharing
//! each engine step with the other running sequences, under a token budget, a cap on running
//! sequences and a paged KV cache.
//!
//! The engine schedules at the granularity of one iteration (one forward pass), as Orca does
//! (Yu et al. 2022, "Orca: A Distributed Serving System for Transformer-Based Generative
//! Models", OSDI), and holds each sequence's KV cache in fixed-size blocks, preempting by
//! recomputation when the blocks run out, as vLLM does (Kwon et al. 2023, "Efficient Memory
//! Management for Large Language Model Serving with PagedAttention", SOSP).
//!
//! # Model
//!
//! - A [`Request`] arrives at `arrival` seconds with `prompt` tokens and asks for `output` ≥ 1
//!   tokens; the first output token is sampled at the end of the step that completes its
//!   prefill, each later one by one decode step.
//! - The time of one step is the caller's function of the step's [`Mix`]: each decode adds
//!   q = 1 after c = its context, sampled; each prefill chunk adds q = the chunk after c = the
//!   prompt tokens already processed, sampled on the prompt's last chunk only.
//! - Time starts at 0 and advances by each step's time; when nothing runs and nothing waits,
//!   it jumps to the next arrival. Nothing else takes time (no scheduler or sampling overhead
//!   beyond what the step function charges).
//!
//! # Scheduler (one step)
//!
//! The token budget is [`EngineConfig::max_batched_tokens`].
//!
//! 1. Requests whose arrival is at or before the current time join the back of the waiting
//!    queue, in arrival order.
//! 2. Running sequences, oldest admission first: a decoding one takes 1 token, one whose prefill
//!    is unfinished (chunked prefill only) takes what is left of its prompt, up to the budget.
//!    Once the budget is spent the remaining running sequences sit the step out. A sequence
//!    holds ⌈tokens / [`EngineConfig::block_tokens`]⌉ KV blocks for the tokens it has in its
//!    cache after the step; when it needs a block and none is free, the most recently admitted
//!    running sequence is preempted by recomputation (its blocks are freed, it goes to the front
//!    of the waiting queue and is prefilled again, prompt and tokens generated so far); when
//!    that is the sequence itself, it is preempted and the step's running pass ends. This is
//!    vLLM's default (`PreemptionMode.RECOMPUTE`) and the order of its v1 scheduler.
//! 3. If no sequence was preempted in this step, waiting sequences are admitted first come,
//!    first served while fewer than [`EngineConfig::max_seqs`] run, budget is left and the
//!    free blocks hold the chunk: with chunked prefill the chunk is what is left of its prompt
//!    up to the remaining budget; without, the whole prompt, and a prompt larger than the
//!    remaining budget waits (the queue is not reordered past it). A re-prefill after
//!    preemption (prompt + tokens generated so far) larger than the whole budget is split into
//!    chunks even without chunked prefill, the only way it can finish.
//! 4. The step runs; its sequences advance; those with all their output tokens finish and free
//!    their blocks.
//!
//! A request that could never run alone (its largest KV footprint, prompt + output − 1 tokens,
//! over the blocks; or, without chunked prefill, a prompt over the budget) is an error naming
//! it, before any step.
//!
//! - [`simulate`]: the run; [`Simulation`]: per-request [`RequestMetrics`] and a [`Summary`].
//! - [`stream`]: seeded request streams ([`Arrivals`], [`Dist`]).

mod engine;
mod stats;
pub mod stream;
#[cfg(test)]
mod tests;

pub use engine::simulate;
pub use stats::{Percentiles, Summary};
pub use stream::{generate, Arrivals, Dist};

use serde::Serialize;
use std::fmt;

/// The most requests one simulation takes (10^7).
pub const MAX_REQUESTS: usize = 10_000_000;

/// One request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Request {
    /// Arrival time, seconds from the start of the run (finite, ≥ 0).
    pub arrival: f64,
    /// Prompt tokens (≥ 1).
    pub prompt: u64,
    /// Output tokens (≥ 1; the first comes from the prefill).
    pub output: u64,
}

/// The engine's limits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct EngineConfig {
    /// Running sequences at most (vLLM `max_num_seqs`), ≥ 1.
    pub max_seqs: u64,
    /// New tokens per step at most (vLLM `max_num_batched_tokens`), ≥ 1.
    pub max_batched_tokens: u64,
    /// KV-cache blocks in all, ≥ 1.
    pub kv_blocks: u64,
    /// Tokens per KV block (vLLM `block_size`, 16 by default), ≥ 1.
    pub block_tokens: u64,
    /// Whether a prompt may be split into chunks across steps.
    pub chunked_prefill: bool,
}

/// What happened to one request, times in seconds from the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RequestMetrics {
    /// The request's index in the input.
    pub index: usize,
    /// Arrival time.
    pub arrival: f64,
    /// Prompt tokens.
    pub prompt: u64,
    /// Output tokens.
    pub output: u64,
    /// First admission (its first prefill chunk is scheduled).
    pub admitted: f64,
    /// The end of the step that sampled its first output token.
    pub first_token: f64,
    /// The end of the step that sampled its last output token.
    pub finish: f64,
    /// Time to first token: first_token − arrival.
    pub ttft: f64,
    /// Time per output token after the first: (e2e − ttft) / (output − 1); none when
    /// output = 1.
    pub tpot: Option<f64>,
    /// End to end: finish − arrival.
    pub e2e: f64,
    /// Queueing delay: admitted − arrival.
    pub queue: f64,
    /// Times it was preempted.
    pub preemptions: u64,
}

/// A finished simulation.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Simulation {
    /// One row per request, in input order.
    pub requests: Vec<RequestMetrics>,
    /// Aggregates.
    pub summary: Summary,
}

/// Why a simulation could not run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SimError {
    /// An engine limit is zero.
    ZeroLimit {
        /// The field of [`EngineConfig`].
        field: &'static str,
    },
    /// No requests, or more than [`MAX_REQUESTS`].
    RequestCount {
        /// How many were given.
        count: usize,
    },
    /// A request is malformed (negative or non-finite arrival, zero prompt or output).
    BadRequest {
        /// Its index.
        index: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A request can never run, even alone on the engine.
    NeverFits {
        /// Its index.
        index: usize,
        /// What it needs that the engine lacks.
        reason: String,
    },
    /// The step function returned a time that is not finite and positive.
    BadStepTime {
        /// The step (0-based).
        step: u64,
        /// What it returned.
        seconds: f64,
    },
    /// No step could be scheduled with requests waiting: an internal fault of the scheduler
    /// (validation guarantees every request fits an idle engine).
    Stalled {
        /// Simulated time, seconds.
        time: f64,
    },
    /// A stream parameter is out of range.
    BadStream {
        /// The parameter.
        field: &'static str,
        /// Why.
        reason: String,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::ZeroLimit { field } => write!(f, "engine {field} must be at least 1"),
            SimError::RequestCount { count } => write!(
                f,
                "{count} requests: a simulation takes 1 to {MAX_REQUESTS} requests"
            ),
            SimError::BadRequest { index, reason } => write!(f, "request {index}: {reason}"),
            SimError::NeverFits { index, reason } => {
                write!(f, "request {index} can never run: {reason}")
            }
            SimError::BadStepTime { step, seconds } => write!(
                f,
                "step {step}: the step time {seconds} s is not finite and positive"
            ),
            SimError::Stalled { time } => write!(
                f,
                "internal fault: the scheduler could not schedule a step at {time} s"
            ),
            SimError::BadStream { field, reason } => write!(f, "{field}: {reason}"),
        }
    }
}
impl std::error::Error for SimError {}
