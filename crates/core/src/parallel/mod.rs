//! Many devices: the model's graph split over them by passes, and its step scheduled on their
//! streams.
//!
//! - [`analysis`]: one stage on many devices: per-device rows, step, memory.
//! - [`context`]: context parallelism: ring attention over the chunks of a prompt, the K/V
//!   exchange hidden behind the attention it feeds.
//! - [`experts`]: expert parallelism: the routed experts split, two all-to-alls.
//! - [`layout`]: the degrees of parallelism and what they must divide.
//! - [`mod@shard`]: tensor (and sequence) parallelism as a pass over the graph, with the
//!   collectives it needs as nodes priced on the system's links.
//! - [`plan`]: every layout a system holds, analysed and ranked.
//! - [`scaling`]: a step over increasing tensor-parallel degrees; where adding devices stops
//!   paying.
//! - [`mod@schedule`]: the step on a compute and a communication stream: exposed communication.

pub mod analysis;
pub mod context;
pub mod experts;
pub mod layout;
pub mod plan;
pub mod scaling;
pub mod schedule;
pub mod shard;

pub use analysis::{analyze_parallel, ParallelAnalysisError, ParallelStage};
pub use context::shard_context;
pub use experts::shard_experts;
pub use layout::{Layout, LayoutError};
pub use plan::{holdback, search, Holdback, Plan, PlanSearch};
pub use schedule::{schedule, Schedule};
pub use shard::{shard, ParallelError};

#[cfg(test)]
mod context_tests;
#[cfg(test)]
pub(crate) mod tests;
