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

/// Graphs up to this many nodes are swept with a delta array on the stack; larger ones by a
/// scan per node (the same result).
const STACK_NODES: usize = 128;

impl OpGraph {
    /// The peak of live activation memory over the nodes ([`LiveActivations`]).
    pub fn peak_live_activations(&self) -> LiveActivations {
        let n = self.nodes.len();
        if n == 0 {
            return LiveActivations::NONE;
        }
        let mut best = LiveActivations::NONE;
        let mut consider = |i: usize, live: f64| {
            if live > best.bytes.get() || best.at.is_empty() {
                best = LiveActivations {
                    bytes: Bytes(live),
                    at: self.nodes[i].name,
                };
            }
        };
        let activations = self
            .tensors
            .iter()
            .filter(|t| t.role == TensorRole::Activation);
        if n <= STACK_NODES {
            let mut delta = [0.0f64; STACK_NODES + 1];
            for t in activations {
                let (from, to) = t.alive();
                delta[from] += t.bytes.get();
                delta[to + 1] -= t.bytes.get();
            }
            let mut live = 0.0;
            for (i, d) in delta.iter().take(n).enumerate() {
                live += d;
                consider(i, live);
            }
        } else {
            for i in 0..n {
                let live = activations
                    .clone()
                    .filter(|t| {
                        let (from, to) = t.alive();
                        from <= i && i <= to
                    })
                    .map(|t| t.bytes.get())
                    .sum();
                consider(i, live);
            }
        }
        best
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
}
