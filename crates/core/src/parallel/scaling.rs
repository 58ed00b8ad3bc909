//! How a step scales with the tensor-parallel degree (the other degrees held fixed): each
//! degree analysed, its parallel efficiency, and the degree past which adding devices stops
//! paying.

use super::analysis::{analyze_parallel, ParallelAnalysisError, ParallelStage};
use super::layout::Layout;
use crate::comm::System;
use crate::memory::Reserve;
use crate::model::Transformer;
use crate::workload::Workload;

/// `workload` analysed at each tensor-parallel degree of `tps`, in increasing degree and each
/// once (so that [`stops_paying`] compares each degree with the next smaller one), the other
/// degrees as in `base` (sequence parallelism, which splits the tensor-parallel group's tokens,
/// at the degrees above 1 only).
///
/// # Errors
/// As [`analyze_parallel`], for the first degree that fails.
pub fn over_tp(
    model: &Transformer,
    workload: &Workload,
    system: &System,
    base: Layout,
    tps: &[u32],
    reserve: Reserve,
) -> Result<Vec<ParallelStage>, ParallelAnalysisError> {
    let mut degrees = tps.to_vec();
    degrees.sort_unstable();
    degrees.dedup();
    degrees
        .iter()
        .map(|&tp| {
            let layout = Layout {
                tp,
                sequence_parallel: base.sequence_parallel && tp > 1,
                ..base
            };
            analyze_parallel(model, workload, system, layout, reserve)
        })
        .collect()
}

/// Parallel efficiency of `stage`: the single device's step ÷ the devices, over this step (1 =
/// every device's worth is used; 1/[`ParallelStage::scaling_cost`]).
pub fn efficiency(stage: &ParallelStage) -> f64 {
    1.0 / stage.scaling_cost()
}

/// The first of `stages` (in increasing degree) whose step is no faster than the one before:
/// where adding devices stops paying. `None` when every added device still shortens the step.
pub fn stops_paying(stages: &[ParallelStage]) -> Option<usize> {
    stages
        .windows(2)
        .position(|w| w[1].step_time() >= w[0].step_time())
        .map(|i| i + 1)
}
