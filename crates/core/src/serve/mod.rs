//! Serving: whole requests on the (parallel) operator graph.
//!
//! - [`mix`]: what one engine step computes (decode tokens and prefill chunks together).
//! - [`step_model`]: the bound and estimate of any such step, from a few analyses of the graph.
//! - [`efficiency`]: the estimate beside the bound: achievable shares and launches.
//! - [`sim`]: a request-level simulation of a continuous-batching engine over a step-time
//!   function of the [`Mix`].

pub mod efficiency;
pub mod mix;
pub mod sim;
pub mod step_model;

pub use efficiency::ServingEfficiency;
pub use mix::Mix;
pub use step_model::StepModel;
