//! The step on a device's streams: compute kernels in order on one stream, collectives on
//! another, each starting when its inputs are written and its stream is free. The step time is
//! the critical path, not the serial sum: a collective beside independent compute is hidden
//! behind it, one the next kernel reads is exposed.

use crate::analysis::OpRow;
use crate::graph::{OpGraph, Role, TensorId};
use crate::ops::{Compute, Op};
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

/// A ring exchange of K/V blocks ([`Role::CpRingKv`]) the attention after it runs on block by
/// block.
#[derive(Clone, Copy)]
struct Ring {
    /// The received blocks' tensor.
    out: TensorId,
    /// When the first block has arrived: the ring's start + one step.
    first: f64,
    /// When the last block has arrived: the ring's finish.
    last: f64,
    /// Its steps, c − 1.
    steps: f64,
}

/// Schedules `graph`'s nodes, whose rows (in node order) are `rows`, on a compute and a
/// communication stream. A node runs for its row's time × its count: the nodes of a block are
/// scheduled once, each for all the blocks it runs in, which keeps a block's dependences and
/// scales them by the blocks (overlap across the boundary of two blocks is not counted, a
/// bound that favours exposure). A pipeline's send between stages runs between their compute:
/// exposed whole.
///
/// A ring exchange of K/V ([`Role::CpRingKv`]: n = c − 1 sends of t_c each, from its start R)
/// overlaps the attention it feeds, as ring attention runs it (Liu et al. 2023): step k's
/// attention runs while block k + 1 is in flight. The attention nodes that read its blocks,
/// with the attention-core nodes right after them (an unfused softmax and S·V), form one run of
/// n equal steps, D in all. The run starts once the compute stream is free, its other inputs
/// are written and the first block has arrived (R + t_c), and it ends no sooner than D after
/// its start nor D/n after the last block has arrived (R + n·t_c): the critical path of the
/// step-by-step pipeline, whose longest wait is before its first or its last step.
///
/// With the device's own block first (a₀, from R) and arriving steps of a: the step ends at
/// R + max(a₀ + n·a, t_c + n·a, n·t_c + a), so the exposed time is
/// max(0, t_c − a₀, n·t_c + a − a₀ − n·a): none while a send takes no longer than the step
/// beside it, and n·(t_c − a) = the exchange less the attention beside it when a₀ = a < t_c.
/// The first block's send is counted in this: it overlaps the device's own block.
pub fn schedule(graph: &OpGraph, rows: &[OpRow]) -> Schedule {
    schedule_with(graph, |i| {
        rows.get(i)
            .map_or(0.0, |r| r.point().time.get() * r.count as f64)
    })
}

/// [`schedule`] with node `i` taking `duration(i)` seconds for all its executions (its time ×
/// its count): the one critical path under the bound and under an estimate
/// ([`crate::pricing::price`]).
pub fn schedule_with(graph: &OpGraph, duration: impl FnMut(usize) -> f64) -> Schedule {
    // The tensors' ready times in a buffer this thread keeps between calls: a simulator prices
    // hundreds of thousands of steps, none of which allocates. A nested call (a `duration` that
    // schedules) takes a buffer of its own.
    thread_local! {
        static READY: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    READY.with(|cell| match cell.try_borrow_mut() {
        Ok(mut ready) => schedule_into(graph, duration, &mut ready),
        Err(_) => schedule_into(graph, duration, &mut Vec::new()),
    })
}

/// [`schedule_with`] on the buffer `ready`, cleared and sized here.
fn schedule_into(
    graph: &OpGraph,
    mut duration: impl FnMut(usize) -> f64,
    ready: &mut Vec<f64>,
) -> Schedule {
    ready.clear();
    ready.resize(graph.tensors().len(), 0.0);
    let (mut compute_free, mut comm_free) = (0.0f64, 0.0f64);
    let (mut compute, mut communication) = (0.0, 0.0);
    let mut ring: Option<Ring> = None;
    // The attention run on the ring's blocks: its start and its duration so far.
    let mut run: Option<(f64, f64)> = None;
    for (i, n) in graph.nodes().iter().enumerate() {
        let d = duration(i);
        let (role, unit) = (n.role, n.compute());
        let mut reads_ring = false;
        let mut inputs = 0.0f64;
        for &i in n.inputs.iter() {
            let t = match ring {
                Some(g) if g.out == i => {
                    reads_ring = true;
                    g.first
                }
                _ => ready.get(i).copied().unwrap_or(0.0),
            };
            inputs = inputs.max(t);
        }
        let finish = if role == Role::PpSendRecv {
            // A pipeline's send lies between two stages' compute: the next stage waits for it.
            run = None;
            communication += d;
            let start = compute_free.max(comm_free).max(inputs);
            compute_free = start + d;
            comm_free = compute_free;
            compute_free
        } else if unit == Compute::Network {
            communication += d;
            let start = comm_free.max(inputs);
            comm_free = start + d;
            if role == Role::CpRingKv {
                let steps = match n.op() {
                    Op::Communication(c) => f64::from(c.group.ranks.saturating_sub(1).max(1)),
                    _ => 1.0,
                };
                ring = n.outputs.first().map(|&out| Ring {
                    out,
                    first: start + d / steps,
                    last: comm_free,
                    steps,
                });
            }
            comm_free
        } else {
            compute += d;
            let in_run = reads_ring || (run.is_some() && role.is_attention_core());
            match (ring, in_run) {
                (Some(g), true) => {
                    let (start, done) = run.unwrap_or((compute_free.max(inputs), 0.0));
                    let done = done + d;
                    run = Some((start, done));
                    compute_free = (start + done).max(g.last + done / g.steps);
                }
                _ => {
                    run = None;
                    compute_free = compute_free.max(inputs) + d;
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::evaluate_rows;
    use crate::comm::collective::{Algorithm, Collective, Protocol, Tier};
    use crate::comm::Group;
    use crate::graph::{Span, TensorRole};
    use crate::ops::{Communication, Elementwise};
    use crate::precision::Precision;
    use crate::units::{Bytes, BytesPerSec};

    /// Memory-bound work: `elements` bf16 elements read and written, no FLOPs: its time is
    /// 4·elements bytes over the chip's bandwidth, linear in `elements`.
    fn work(elements: u64) -> Op {
        Op::Elementwise(Elementwise {
            elements,
            inputs: 1,
            flops_per_element: 0.0,
            precision: Precision::Bf16,
        })
    }

    /// A ring of `steps` sends of `t_c` seconds each, no latency term.
    fn ring(steps: u32, t_c: f64) -> Op {
        Op::Communication(Communication {
            collective: Collective::SendRecv,
            algorithm: Algorithm::Direct,
            bytes: Bytes(1.0),
            group: Group::in_one_node(steps + 1),
            traffic: Bytes(f64::from(steps)),
            latency: Seconds(0.0),
            transfer: Seconds(t_c * f64::from(steps)),
            link: BytesPerSec(1e9),
            tier: Tier::ScaleUp,
            protocol: Protocol::Simple,
        })
    }

    /// A KV write, the ring of its K/V, the device's own block of attention (one step, a), the
    /// `steps` arriving blocks (steps · a), and the output projection reading the result.
    /// Returns the schedule and a.
    fn pipeline(
        steps: u32,
        t_c_over_a: f64,
    ) -> Result<(Schedule, f64), crate::device::DeviceError> {
        let device = crate::fixtures::h100_sxm();
        let step_elements = 1u64 << 24;
        let a = 4.0 * step_elements as f64 / device.bandwidth()?.get();
        let mut g = OpGraph::new(1);
        let span = Span::all_blocks(1);
        let act =
            |g: &mut OpGraph, name| g.tensor(name, 1e6, Precision::Bf16, TensorRole::Activation);
        let (x, kv, q, blocks, out, y) = (
            act(&mut g, "x"),
            act(&mut g, "kv"),
            act(&mut g, "q"),
            act(&mut g, "blocks"),
            act(&mut g, "out"),
            act(&mut g, "y"),
        );
        g.node(
            "kv_write",
            Role::KvCacheWrite,
            span,
            work(1 << 20),
            &[x],
            &[kv],
        );
        g.node(
            "ring",
            Role::CpRingKv,
            span,
            ring(steps, t_c_over_a * a),
            &[kv],
            &[blocks],
        );
        g.node(
            "own",
            Role::FusedAttention,
            span,
            work(step_elements),
            &[q],
            &[out],
        );
        g.node(
            "remote",
            Role::FusedAttention,
            span,
            work(step_elements * u64::from(steps)),
            &[q, blocks],
            &[out],
        );
        g.node("o_proj", Role::OProj, span, work(1 << 20), &[out], &[y]);
        let rows = evaluate_rows(&g, Precision::Bf16, &device)?;
        Ok((schedule(&g, &rows), a))
    }

    #[test]
    fn a_ring_faster_than_the_attention_it_feeds_is_hidden(
    ) -> Result<(), crate::device::DeviceError> {
        // Each send takes half a step of attention: block k + 1 arrives while block k is
        // attended; nothing is exposed.
        let (s, _) = pipeline(3, 0.5)?;
        assert_eq!(s.exposed.get(), 0.0);
        assert_eq!(s.step, s.compute);
        assert_eq!(s.overlap(), 1.0);
        Ok(())
    }

    #[test]
    fn a_slower_ring_exposes_exactly_what_the_attention_cannot_hide(
    ) -> Result<(), crate::device::DeviceError> {
        // Each send takes 3a: the last block arrives 3 · 3a after the ring starts, and its
        // step runs a after it; the compute alone takes a (own block) + 3a: exposed
        // 9a + a − 4a = 6a = 3 · (3a − a), the ring's time less the attention beside it.
        let (s, a) = pipeline(3, 3.0)?;
        let expected = 3.0 * (3.0 * a - a);
        assert!(
            (s.exposed.get() - expected).abs() <= 1e-12 * expected,
            "{} vs {expected}",
            s.exposed.get()
        );
        assert!((s.communication.get() - 9.0 * a).abs() <= 1e-12 * a);
        Ok(())
    }

    #[test]
    fn the_first_block_is_waited_for_when_it_is_slower_than_the_own_block(
    ) -> Result<(), crate::device::DeviceError> {
        // One arriving block (c = 2) whose send takes 1.5a: it arrives half a step after the
        // own block is done, and its step follows: 0.5a exposed.
        let (s, a) = pipeline(1, 1.5)?;
        assert!((s.exposed.get() - 0.5 * a).abs() <= 1e-12 * a);
        Ok(())
    }
}
