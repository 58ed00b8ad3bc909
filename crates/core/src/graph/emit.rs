//! Writing a graph in forward order: appended to an empty graph, or rewritten in place over a
//! graph of the same structure.
//!
//! A new batch, sequence length or precision changes the sizes of a model's tensors and the
//! shapes of its operators, never its nodes, names, roles, spans or edges. [`Reshape`] takes a
//! builder's calls over a graph that already holds that structure and writes only what can
//! change: each tensor's bytes and precision, each node's operator and the cost priced from
//! it. The builder decides when the structure is the same
//! ([`crate::decoder::rebuild_into`]); [`Reshape::finish`] checks that the calls covered the
//! graph exactly.

use super::{Node, OpGraph, Role, Span, Tensor, TensorId, TensorRole};
use crate::ops::Op;
use crate::precision::Precision;
use crate::units::Bytes;

/// What a graph builder writes to, in forward order: [`OpGraph`] itself (appending) or a
/// [`Reshape`] of it.
pub(crate) trait Emit {
    /// A tensor of `bytes` stored in `precision`; returns its id.
    fn tensor_bytes(
        &mut self,
        name: &'static str,
        bytes: Bytes,
        precision: Precision,
        role: TensorRole,
    ) -> TensorId;

    /// A tensor of `elements` elements stored in `precision`; returns its id.
    #[inline(always)]
    fn tensor(
        &mut self,
        name: &'static str,
        elements: f64,
        precision: Precision,
        role: TensorRole,
    ) -> TensorId {
        self.tensor_bytes(
            name,
            super::tensor_size(elements, precision),
            precision,
            role,
        )
    }

    /// A node ([`OpGraph::node`]).
    fn node(
        &mut self,
        name: &'static str,
        role: Role,
        span: Span,
        op: Op,
        inputs: &[TensorId],
        outputs: &[TensorId],
    );
}

impl Emit for OpGraph {
    #[inline(always)]
    fn tensor_bytes(
        &mut self,
        name: &'static str,
        bytes: Bytes,
        precision: Precision,
        role: TensorRole,
    ) -> TensorId {
        OpGraph::tensor_bytes(self, name, bytes, precision, role)
    }

    #[inline(always)]
    fn node(
        &mut self,
        name: &'static str,
        role: Role,
        span: Span,
        op: Op,
        inputs: &[TensorId],
        outputs: &[TensorId],
    ) {
        OpGraph::node(self, name, role, span, op, inputs, outputs)
    }
}

/// A builder's calls replayed over a graph that already holds their structure: the `i`-th
/// tensor call rewrites tensor `i`'s bytes and precision, the `i`-th node call node `i`'s
/// operator and cost; names, roles, spans, edges and liveness are kept.
pub(crate) struct Reshape<'g> {
    tensors: std::slice::IterMut<'g, Tensor>,
    nodes: std::slice::IterMut<'g, Node>,
    tensor_count: usize,
    /// A call found no tensor or node left to rewrite.
    overran: bool,
}

impl<'g> Reshape<'g> {
    /// Starts at the first tensor and node of `graph`.
    pub(crate) fn new(graph: &'g mut OpGraph) -> Self {
        Self {
            tensor_count: graph.tensors.len(),
            tensors: graph.tensors.iter_mut(),
            nodes: graph.nodes.iter_mut(),
            overran: false,
        }
    }

    /// Whether the calls covered the graph exactly, one per tensor and one per node. When
    /// `false` the graph holds a mix of old and new sizes and must be built afresh.
    pub(crate) fn finish(self) -> bool {
        !self.overran && self.tensors.len() == 0 && self.nodes.len() == 0
    }
}

impl Emit for Reshape<'_> {
    #[inline(always)]
    fn tensor_bytes(
        &mut self,
        _name: &'static str,
        bytes: Bytes,
        precision: Precision,
        _role: TensorRole,
    ) -> TensorId {
        let id = self.tensor_count - self.tensors.len();
        match self.tensors.next() {
            Some(t) => {
                t.bytes = bytes;
                t.precision = precision;
            }
            None => self.overran = true,
        }
        id
    }

    #[inline(always)]
    fn node(
        &mut self,
        _name: &'static str,
        _role: Role,
        _span: Span,
        op: Op,
        _inputs: &[TensorId],
        _outputs: &[TensorId],
    ) {
        match self.nodes.next() {
            Some(n) => n.reprice(op),
            None => self.overran = true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoder::{build_graph, build_into, rebuild_into};
    use crate::model::tests::llama2_7b;
    use crate::workload::{Stage, Workload};

    #[test]
    fn a_new_length_rewrites_in_place_and_a_new_structure_builds_afresh() {
        let m = llama2_7b();
        let short = Workload::new(Stage::Prefill, 1, 128, 128);
        let long = Workload::new(Stage::Prefill, 4, 4096, 4096);
        // The same structure: the replay covers every tensor and node, and the graph is now
        // the long one's.
        let mut g = build_graph(&m, &short);
        let mut same = Reshape::new(&mut g);
        crate::decoder::emit_for_tests(&m, &long, &mut same);
        assert!(same.finish());
        assert_eq!(g, build_graph(&m, &long));
        // FlashAttention replaces three nodes by one: the replay does not cover the graph.
        let flash = long.flash_attention(true);
        let mut other = Reshape::new(&mut g);
        crate::decoder::emit_for_tests(&m, &flash, &mut other);
        assert!(!other.finish());
        // rebuild_into sees another blueprint and builds it afresh; back again, the same.
        let (mut g, mut built) = (crate::graph::OpGraph::new(0), None);
        for w in [short, flash, long, short.flash_attention(true), short] {
            rebuild_into(&m, &w, &mut g, &mut built);
            assert_eq!(g, build_graph(&m, &w), "{w:?}");
        }
        // Another model of the same structure but other sizes: built afresh, and equal.
        let wide = crate::model::Transformer {
            hidden: 8192,
            ..llama2_7b()
        };
        rebuild_into(&wide, &short, &mut g, &mut built);
        assert_eq!(g, build_graph(&wide, &short));
        // A graph of unknown origin is built afresh.
        build_into(&m, &long, &mut g);
        assert_eq!(g, build_graph(&m, &long));
    }

    #[test]
    fn the_indexed_peak_equals_the_scanned_one_through_rewrites() {
        let workloads = [
            Workload::new(Stage::Prefill, 1, 17, 17),
            Workload::new(Stage::Prefill, 8, 2048, 2048),
            Workload::new(Stage::Decode, 3, 1, 4096),
            Workload::new(Stage::Decode, 64, 1, 100).flash_attention(true),
        ];
        for m in crate::analysis::tests::models() {
            let (mut g, mut built) = (crate::graph::OpGraph::new(0), None);
            for w in workloads.iter().chain(workloads.iter().rev()) {
                rebuild_into(&m, w, &mut g, &mut built);
                let fresh = build_graph(&m, w);
                assert_eq!(g, fresh);
                let indexed = built.as_ref().map(|b| b.peak_live_activations(&g));
                assert_eq!(
                    indexed,
                    Some(fresh.peak_live_activations()),
                    "{} {w:?}",
                    m.name
                );
            }
        }
    }
}
