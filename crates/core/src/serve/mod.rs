//! Serving: whole requests on the (parallel) operator graph.
//!
//! - [`mix`]: what one engine step computes (decode tokens and prefill chunks together).
//! - [`sim`]: a request-level simulation of a continuous-batching engine over a step-time
//!   function of the [`Mix`].

pub mod mix;
pub mod sim;

pub use mix::Mix;
