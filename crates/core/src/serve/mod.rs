//! Serving: whole requests on the (parallel) operator graph.
//!
//! - [`mix`]: what one engine step computes (decode tokens and prefill chunks together).
//! - [`headline`]: TTFT, TPOT and tokens/s of the analysed steps.
//! - [`advice`]: the changes the tool can price, ranked by the time each saves.

pub mod advice;
pub mod headline;
pub mod mix;

pub use headline::Headline;
pub use mix::Mix;
