//! Serving: whole requests on the (parallel) operator graph.
//!
//! - [`mix`]: what one engine step computes (decode tokens and prefill chunks together).

pub mod mix;

pub use mix::Mix;
