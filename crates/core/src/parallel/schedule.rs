//! The step on a device's streams: compute kernels in order on one stream, collectives on
//! another, each starting when its inputs are written and its stream is free. The step time is
//! the critical path, not the serial sum: a collective beside independent compute is hidden
//! behind it, one the next kernel reads is exposed.

use crate::analysis::OpRow;
use crate::graph::{OpGraph, Role};
use crate::ops::Compute;
use crate::units::Seconds;
use serde::Serialize;

/// A step's time on two streams.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Schedule {
    /// Σ time of the compute kernels (roofline lower bounds), seconds.
    pub compute: Seconds,
    /// Σ time of the collectives (α–β lower bounds), seconds.
    pub communication: Seconds,
    /// The communication time not hidden behind compute: step − compute, seconds.
    pub exposed: Seconds,
    /// The critical path through the graph on the two streams, seconds.
    pub step: Seconds,
}

impl Schedule {
    /// The share of the communication hidden behind compute, 0 to 1 (1 with no
    /// communication).
    pub fn overlap(&self) -> f64 {
        let c = self.communication.get();
        if c > 0.0 {
            // `+ 0.0` makes a rounding's −0 print as 0.
            (1.0 - self.exposed.get() / c).clamp(0.0, 1.0) + 0.0
        } else {
            1.0
        }
    }
}

/// Schedules `graph`'s nodes, whose rows (in node order) are `rows`, on a compute and a
/// communication stream. A node runs for its row's time × its count: the nodes of a block are
/// scheduled once, each for all the blocks it runs in, which keeps a block's dependences and
/// scales them by the blocks (overlap across the boundary of two blocks is not counted, a
/// bound that favours exposure). A pipeline's send between stages runs between their compute:
/// exposed whole.
pub fn schedule(graph: &OpGraph, rows: &[OpRow]) -> Schedule {
    let mut ready = vec![0.0f64; graph.tensors().len()];
    let (mut compute_free, mut comm_free) = (0.0f64, 0.0f64);
    let (mut compute, mut communication) = (0.0, 0.0);
    for (n, r) in graph.nodes().iter().zip(rows) {
        let d = r.point().time.get() * r.count as f64;
        let inputs = n
            .inputs
            .iter()
            .map(|&i| ready.get(i).copied().unwrap_or(0.0))
            .fold(0.0, f64::max);
        let finish = if r.role == Role::PpSendRecv {
            // A pipeline's send lies between two stages' compute: the next stage waits for it.
            communication += d;
            let start = compute_free.max(comm_free).max(inputs);
            compute_free = start + d;
            comm_free = compute_free;
            compute_free
        } else if r.compute == Compute::Network {
            communication += d;
            comm_free = comm_free.max(inputs) + d;
            comm_free
        } else {
            compute += d;
            compute_free = compute_free.max(inputs) + d;
            compute_free
        };
        for &o in n.outputs.iter() {
            if let Some(x) = ready.get_mut(o) {
                *x = finish;
            }
        }
    }
    let step = compute_free.max(comm_free);
    Schedule {
        compute: Seconds(compute),
        communication: Seconds(communication),
        // At most the communication: the compute stream only waits on collectives, and the
        // sums of the two streams round apart (an exposed share above 1, a negative overlap).
        exposed: Seconds((step - compute).clamp(0.0, communication)),
        step: Seconds(step),
    }
}
