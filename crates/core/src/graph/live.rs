//! The activation memory a step needs at its peak: the tensors alive at once.

use super::{OpGraph, TensorRole};
use crate::units::Bytes;
use serde::Serialize;

/// The most activation bytes alive at once during one block (or the prologue or epilogue), and
/// the node at which that happens.
///
/// An activation tensor is alive from the node that writes it to the last node that reads it
/// (both included): at a node, its inputs, its outputs and every tensor written earlier and read
/// later (the residual stream) are in memory together. Eager PyTorch frees a tensor when its
/// last reader is done, which is this model; weights and the KV cache are counted apart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LiveActivations {
    /// Bytes alive at the peak.
    pub bytes: Bytes,
    /// The node at which the peak is reached (the first such node), empty for a graph without
    /// nodes.
    pub at: &'static str,
}

impl LiveActivations {
    /// No activations.
    pub const NONE: LiveActivations = LiveActivations {
        bytes: Bytes::ZERO,
        at: "",
    };
}

/// An activation tensor and the nodes `from..end` it is alive at ([`super::Tensor::alive`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Interval {
    tensor: u32,
    from: u32,
    end: u32,
}

/// The activation tensors' intervals of one graph structure, for the peak of live activations
/// of a graph rewritten in place: a new batch or length changes the tensors' bytes, never which
/// tensors are activations or the nodes they are alive over, so the peak reads the intervals
/// and the current bytes without scanning every tensor. Kept beside the graph by whoever
/// rewrites it ([`crate::decoder::BuiltFrom`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LiveIndex {
    intervals: Vec<Interval>,
    /// [`LiveIndex::index`] was called since the last [`LiveIndex::clear`].
    indexed: bool,
}

impl LiveIndex {
    /// Forgets the structure it indexed, keeping its buffer.
    pub(crate) fn clear(&mut self) {
        self.intervals.clear();
        self.indexed = false;
    }

    /// Whether it holds a structure's intervals.
    #[inline(always)]
    pub(crate) fn is_indexed(&self) -> bool {
        self.indexed
    }

    /// Indexes the activation intervals of `graph`.
    pub(crate) fn index(&mut self, graph: &OpGraph) {
        self.intervals.clear();
        self.indexed = true;
        for (i, t) in graph.tensors.iter().enumerate() {
            if t.role == TensorRole::Activation {
                let (from, to) = t.alive();
                self.intervals.push(Interval {
                    tensor: i as u32,
                    from: from as u32,
                    end: to as u32 + 1,
                });
            }
        }
    }

    /// [`OpGraph::peak_live_activations`] of `graph`, which must have the structure indexed
    /// (equal, a test checks every preset through rewrites); a graph scanned when none is.
    #[inline(always)]
    pub(crate) fn peak(&self, graph: &OpGraph) -> LiveActivations {
        if !self.indexed {
            return graph.peak_live_activations();
        }
        graph.peak_over(self.intervals.iter().map(|iv| {
            let bytes = graph
                .tensors
                .get(iv.tensor as usize)
                .map_or(0.0, |t| t.bytes.get());
            (iv.from as usize, iv.end as usize, bytes)
        }))
    }
}

/// Graphs up to this many nodes keep the sweep's deltas on the stack; larger ones (the passes to
/// come add nodes) in a vector.
const STACK_NODES: usize = 64;

impl OpGraph {
    /// The peak of live activation memory over the nodes ([`LiveActivations`]): each activation
    /// adds its bytes at the first node it is alive at and takes them off after the last, and a
    /// running sum over the nodes gives the live bytes at each.
    pub fn peak_live_activations(&self) -> LiveActivations {
        self.peak_over(self.scan_live())
    }

    /// Every activation tensor's interval `from..end` of nodes and its bytes, in tensor order.
    fn scan_live(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        self.tensors
            .iter()
            .filter(|t| t.role == TensorRole::Activation)
            .map(|t| {
                let (from, to) = t.alive();
                (from, to + 1, t.bytes.get())
            })
    }

    /// The peak of a running sum over the nodes of the activations given as `(from, end,
    /// bytes)`: each adds its bytes at node `from` and takes them off at node `end`.
    #[inline(always)]
    fn peak_over(&self, live: impl Iterator<Item = (usize, usize, f64)>) -> LiveActivations {
        let n = self.nodes.len();
        if n == 0 {
            return LiveActivations::NONE;
        }
        let mut stack = [0.0f64; STACK_NODES + 1];
        let mut heap = Vec::new();
        let delta: &mut [f64] = if n <= STACK_NODES {
            &mut stack[..=n]
        } else {
            heap.resize(n + 1, 0.0);
            &mut heap
        };
        for (from, end, bytes) in live {
            // `from < end ≤ n` for a tensor of this graph.
            if let (Some(a), Some(b)) = (delta.get(from), delta.get(end)) {
                let (a, b) = (*a + bytes, *b - bytes);
                delta[from] = a;
                delta[end] = b;
            }
        }
        // The first node where the running sum is largest.
        let (mut at, mut peak, mut sum) = (0, f64::NEG_INFINITY, 0.0);
        for (i, d) in delta[..n].iter().enumerate() {
            sum += d;
            if sum > peak {
                (at, peak) = (i, sum);
            }
        }
        LiveActivations {
            bytes: Bytes(peak),
            at: self.nodes[at].name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Role, Span};
    use crate::ops::{Elementwise, Op};
    use crate::precision::Precision;

    fn add(n: u64) -> Op {
        Op::Elementwise(Elementwise {
            elements: n,
            inputs: 2,
            flops_per_element: 1.0,
            precision: Precision::Bf16,
        })
    }

    /// a → f → b → g → c, and a is read again by h beside c: a (residual) lives from f to h.
    #[test]
    fn a_residual_stays_alive_until_its_last_reader() {
        let mut g = OpGraph::new(1);
        let bf = Precision::Bf16;
        let span = Span::all_blocks(1);
        let x = g.tensor("x", 0.0, bf, TensorRole::Input);
        let a = g.tensor("a", 100.0, bf, TensorRole::Activation); // 200 B
        let b = g.tensor("b", 1000.0, bf, TensorRole::Activation); // 2000 B
        let c = g.tensor("c", 10.0, bf, TensorRole::Activation); // 20 B
        let d = g.tensor("d", 10.0, bf, TensorRole::Activation); // 20 B
        let w = g.tensor("w", 1e9, bf, TensorRole::Weight);
        g.node("f", Role::AttentionNorm, span, add(1), &[x, w], &[a]);
        g.node("g", Role::QProj, span, add(1), &[a], &[b]);
        g.node("h", Role::KProj, span, add(1), &[b], &[c]);
        g.node("i", Role::AttentionResidual, span, add(1), &[a, c], &[d]);
        // At f: a = 200. At g: a + b = 2200. At h: a + b + c = 2220. At i: a + c + d = 240.
        let live = g.peak_live_activations();
        assert_eq!(live.bytes, Bytes(2220.0));
        assert_eq!(live.at, "h");
        assert_eq!(
            OpGraph::new(1).peak_live_activations(),
            LiveActivations::NONE
        );
    }

    /// A chain longer than the stack holds: each node reads the previous tensor and writes the
    /// next, 100 B each, so two are alive at every node but the first: 200 B, first at node 1.
    #[test]
    fn a_long_chain_peaks_at_two_tensors() {
        let mut g = OpGraph::new(1);
        let span = Span::all_blocks(1);
        let bf = Precision::Bf16;
        let mut x = g.tensor("x0", 50.0, bf, TensorRole::Activation);
        g.node("n0", Role::Operator, span, add(1), &[], &[x]);
        for _ in 1..300 {
            let y = g.tensor("x", 50.0, bf, TensorRole::Activation);
            g.node("n", Role::Operator, span, add(1), &[x], &[y]);
            x = y;
        }
        assert_eq!(g.nodes.len(), 300);
        let live = g.peak_live_activations();
        assert_eq!(live.bytes, Bytes(200.0));
    }
}
