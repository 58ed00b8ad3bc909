//! Serving: whole requests on the (parallel) operator graph.
//!
//! - [`mix`]: what one engine step computes (decode tokens and prefill chunks together).
//! - [`step_model`]: the bound and estimate of any such step, from a few analyses of the graph.
//! - [`generate`]: one request whole: TTFT, TPOT (both conventions), E2E, the memory at every
//!   step.
//! - [`capacity`]: the largest batch and the longest context that fit, in paged-KV blocks.
//! - [`chunked`], [`speculative`], [`disaggregate`]: chunked prefill beside running decodes,
//!   speculative decoding, disaggregated prefill and decode pools, each priced on the graph.
//! - [`pareto`]: throughput against latency, the front and the best under a target.
//! - [`sim`]: a request-level simulation of a continuous-batching engine (a stream of requests,
//!   iteration-level scheduling, paged KV cache, preemption) over a step-time function of the
//!   [`Mix`].
//! - [`headline`]: TTFT, TPOT and tokens/s of the analysed steps.
//! - [`advice`]: the changes the tool can price, ranked by the time each saves.

pub mod advice;
pub mod capacity;
pub mod chunked;
pub mod disaggregate;
pub mod generate;
pub mod headline;
pub mod mix;
pub mod pareto;
pub mod sim;
pub mod speculative;
pub mod step_model;

pub use generate::{generate, Generation, Latency, Request};
pub use headline::Headline;
pub use mix::Mix;
pub use step_model::StepModel;
