//! One training step in the cost model: the backward pass as a pass over the forward operator
//! graph, activation recomputation, and the optimizer update.
//!
//! - [`backward`]: the training step's graph from a forward graph ([`backward::backward`]):
//!   the forward nodes, the recomputed ones ([`backward::Recompute`]), then every forward
//!   node's gradients in reverse order, each a node of its own with the forward node's
//!   [`crate::graph::Role`] and [`crate::graph::Span`] and a [`crate::graph::Pass`] that says
//!   which pass it is; [`backward::TrainingStep`] sums the FLOPs it executes (HFU's); MFU's
//!   model FLOPs are a convention of the model, [`crate::mfu::model_flops_per_token`].
//! - [`optimizer`]: AdamW and SGD with momentum as memory-bound updates over the parameters a
//!   rank holds (1/N_d of them under ZeRO).
//! - [`data_parallel`]: the data-parallel and ZeRO communication of a step: bucketed gradient
//!   reduction overlapped with the backward (the last bucket exposed), ZeRO-3's prefetched
//!   parameter gathers, gradient accumulation.
//! - [`memory`]: the memory a training step needs on each device: model states under ZeRO
//!   (ZeRO §5), activations (Korthikanti et al. 2022, Table 2), "fits" and the largest
//!   micro-batch that does.
//! - [`micro_batch`]: one micro-batch's step on one device: the sharded forward with its loss,
//!   the backward, every node priced (bound or [`crate::pricing::Efficiency`] estimate) as pieces a pipeline
//!   stage sums.
//! - [`step`]: the whole step on many devices: stages, pipeline timeline, data-parallel
//!   communication, optimizer, memory, MFU and HFU ([`predict`]).
//! - [`waterfall`]: the MFU waterfall, the share of the peak each reason takes.
//! - [`plan`]: the training plan search ([`search_training`]): every layout, micro-batch,
//!   recomputation, ZeRO stage and schedule whose memory fits, ranked by predicted step time.
//! - [`pipeline`]: pipeline-parallel schedules (1F1B, interleaved, ZB-H1) as discrete-event
//!   timelines over p stages and m micro-batches: step time, per-stage busy time, the bubble
//!   and the micro-batches' activations each stage holds at its peak.

pub mod backward;
pub mod data_parallel;
pub mod memory;
pub mod micro_batch;
pub mod optimizer;
pub mod pipeline;
pub mod plan;
pub mod step;
pub mod waterfall;

pub use crate::pricing::Efficiency;
pub use micro_batch::{micro_batch, MicroBatch, MicroBatchShape};
pub use plan::{search_training, TrainingPlan, TrainingPlanOptions, TrainingPlanSearch};
pub use step::{predict, predict_with, StepError, TrainingJob, TrainingPrediction};
pub use waterfall::{Reason, Waterfall};

use std::fmt;

/// Why a training step cannot be built or priced.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrainError {
    /// The graph given as a forward pass holds a node of another pass (a training step's
    /// graph given again): its index and name.
    NotForward {
        /// Index of the node in the graph.
        index: usize,
        /// Its name.
        name: &'static str,
    },
    /// The data-parallel sharding factor of the optimizer states is zero (it is at least 1:
    /// 1 without ZeRO, N_d with it).
    NoShards,
}

impl fmt::Display for TrainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrainError::NotForward { index, name } => write!(
                f,
                "node {index} ({name}) is not a forward node: the backward pass takes a \
                 forward graph"
            ),
            TrainError::NoShards => f.write_str(
                "the optimizer states are sharded over 0 data-parallel ranks; give at least 1",
            ),
        }
    }
}

impl std::error::Error for TrainError {}

#[cfg(test)]
mod step_tests;
#[cfg(test)]
mod tests;
