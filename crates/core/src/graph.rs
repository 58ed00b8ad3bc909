//! The operator graph: operators as nodes, tensors as edges.
//!
//! One decoder block is built once and counted `layers` times; operators outside the blocks
//! (embedding, final norm, lm_head) are counted once. A node reads its input tensors from main
//! memory and writes its outputs there; a fusion pass decides which of those tensors stay on chip.
//!
//! The decoder does not build an [`OpGraph`] directly: it emits tensors and nodes into a
//! [`GraphSink`]. An [`OpGraph`] is one sink (every tensor and edge, in `Vec`s); [`NodeCosts`] is
//! another that keeps only what a roofline evaluation needs (each node's cost and peak, the
//! largest activation) in a fixed-size array, so evaluating a configuration allocates nothing.

use crate::ops::{Compute, Cost, Op, OpKind};
use crate::precision::Precision;
use crate::units::Bytes;
use serde::Serialize;

/// Index of a tensor in [`OpGraph::tensors`].
pub type TensorId = usize;

/// What a tensor holds, which decides whether fusion may keep it on chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TensorRole {
    /// Produced and consumed within the forward pass; fusion may keep it on chip.
    Activation,
    /// A model weight, read from main memory.
    Weight,
    /// The KV cache: persistent state, always in main memory.
    KvCache,
    /// Given to the forward pass (token ids, rotary tables).
    Input,
}

/// An edge of the graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tensor {
    /// Name, unique in the graph (`q`, `scores`, `o_proj.weight`).
    pub name: &'static str,
    /// Size in main memory.
    pub bytes: Bytes,
    /// Storage precision.
    pub precision: Precision,
    /// What it holds.
    pub role: TensorRole,
}

/// Where a node sits: inside every decoder block, inside some of them, or once per model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// In each decoder block: runs `layers` times per forward pass.
    Layer,
    /// In this many of the blocks only (DeepSeek-V3: the dense MLP of the first 3 blocks, the
    /// MoE MLP of the other 58).
    Blocks(u64),
    /// Once per forward pass.
    Model,
}

impl Scope {
    /// Executions per forward pass of a model with `layers` blocks.
    #[inline]
    pub fn count(self, layers: u64) -> u64 {
        match self {
            Scope::Layer => layers,
            Scope::Blocks(n) => n,
            Scope::Model => 1,
        }
    }

    /// Whether the node is inside decoder blocks (all or some).
    #[inline]
    pub fn in_blocks(self) -> bool {
        !matches!(self, Scope::Model)
    }
}

/// A node: one operator, the tensors it reads and writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// Name, unique in the graph; linear layers carry the Hugging Face module name (`q_proj`).
    pub name: &'static str,
    /// The operator with its shapes.
    pub op: Op,
    /// Tensors read.
    pub inputs: Vec<TensorId>,
    /// Tensors written.
    pub outputs: Vec<TensorId>,
    /// In every block or once.
    pub scope: Scope,
}

/// Operators connected by tensors, in forward (topological) order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpGraph {
    /// Every tensor.
    pub tensors: Vec<Tensor>,
    /// Every node, in execution order.
    pub nodes: Vec<Node>,
    /// How many times the block's nodes run per forward pass.
    pub layers: u64,
}

impl OpGraph {
    /// An empty graph of `layers` blocks.
    pub fn new(layers: u64) -> Self {
        Self {
            tensors: Vec::with_capacity(40),
            nodes: Vec::with_capacity(24),
            layers,
        }
    }

    /// Adds a tensor and returns its id.
    pub fn tensor(
        &mut self,
        name: &'static str,
        elements: f64,
        precision: Precision,
        role: TensorRole,
    ) -> TensorId {
        self.tensor_bytes(name, Bytes(elements * precision.bytes()), precision, role)
    }

    /// Adds a tensor of a given size in bytes and returns its id.
    pub fn tensor_bytes(
        &mut self,
        name: &'static str,
        bytes: Bytes,
        precision: Precision,
        role: TensorRole,
    ) -> TensorId {
        self.tensors.push(Tensor {
            name,
            bytes,
            precision,
            role,
        });
        self.tensors.len() - 1
    }

    /// Adds a node.
    pub fn node(
        &mut self,
        name: &'static str,
        scope: Scope,
        op: Op,
        inputs: &[TensorId],
        outputs: &[TensorId],
    ) {
        self.nodes.push(Node {
            name,
            op,
            inputs: inputs.to_vec(),
            outputs: outputs.to_vec(),
            scope,
        });
    }

    /// How many times `node` runs per forward pass.
    pub fn count(&self, node: &Node) -> u64 {
        node.scope.count(self.layers)
    }

    /// The node with this name.
    pub fn find(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// Nodes that read tensor `t`.
    pub fn consumers(&self, t: TensorId) -> impl Iterator<Item = (usize, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(move |(_, n)| n.inputs.contains(&t))
    }

    /// The node that writes tensor `t`, if any.
    pub fn producer(&self, t: TensorId) -> Option<(usize, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .find(|(_, n)| n.outputs.contains(&t))
    }
}

/// Where the decoder ([`crate::decoder::emit`]) puts the graph it walks.
pub trait GraphSink {
    /// Adds a tensor of a given size in bytes and returns its id.
    fn tensor_bytes(
        &mut self,
        name: &'static str,
        bytes: Bytes,
        precision: Precision,
        role: TensorRole,
    ) -> TensorId;

    /// Adds a node of scope `scope` running `op`, reading `inputs` and writing `outputs`.
    fn node(
        &mut self,
        name: &'static str,
        scope: Scope,
        op: Op,
        inputs: &[TensorId],
        outputs: &[TensorId],
    );

    /// Adds a tensor of `elements` elements stored in `precision` and returns its id.
    fn tensor(
        &mut self,
        name: &'static str,
        elements: f64,
        precision: Precision,
        role: TensorRole,
    ) -> TensorId {
        self.tensor_bytes(name, Bytes(elements * precision.bytes()), precision, role)
    }
}

impl GraphSink for OpGraph {
    fn tensor_bytes(
        &mut self,
        name: &'static str,
        bytes: Bytes,
        precision: Precision,
        role: TensorRole,
    ) -> TensorId {
        OpGraph::tensor_bytes(self, name, bytes, precision, role)
    }

    fn node(
        &mut self,
        name: &'static str,
        scope: Scope,
        op: Op,
        inputs: &[TensorId],
        outputs: &[TensorId],
    ) {
        OpGraph::node(self, name, scope, op, inputs, outputs)
    }
}

/// What a roofline evaluation needs of one node: its name, type, scope, cost and the units it
/// runs on. `Copy`, so a list of them lives on the stack.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NodeCost {
    /// Node name (`q_proj`).
    pub name: &'static str,
    /// Operator type (`gemm`).
    pub kind: OpKind,
    /// In every block or once per model.
    pub scope: Scope,
    /// FLOPs and bytes of one execution.
    pub cost: Cost,
    /// The units it runs on (which peak applies).
    pub compute: Compute,
}

impl NodeCost {
    /// A placeholder for the unused slots of a [`NodeCosts`] (never exposed: only emitted nodes
    /// are, [`NodeCosts::nodes`]).
    const EMPTY: NodeCost = NodeCost {
        name: "",
        kind: OpKind::Gemm,
        scope: Scope::Model,
        cost: Cost {
            flops: crate::units::Flop(0.0),
            bytes_read: Bytes(0.0),
            bytes_written: Bytes(0.0),
        },
        compute: Compute::Vector,
    };
}

/// A [`GraphSink`] that hands each node's [`NodeCost`] to a closure as it is emitted, and keeps
/// the largest activation tensor: nothing is stored, nothing allocated. The analysis and the
/// sweep evaluate nodes on the roofline this way, straight from the decoder.
pub struct VisitNodes<F: FnMut(NodeCost)> {
    visit: F,
    tensors: usize,
    /// The largest activation tensor emitted (the last of equal ones), in bytes, and its name.
    pub largest_activation: Option<(Bytes, &'static str)>,
}

impl<F: FnMut(NodeCost)> VisitNodes<F> {
    /// A sink calling `visit` once per node, in forward order.
    pub fn new(visit: F) -> Self {
        Self {
            visit,
            tensors: 0,
            largest_activation: None,
        }
    }
}

/// Counts one more tensor (its id is the count before it) and keeps the largest activation:
/// `>=`, so the last of equally large tensors wins, as `Iterator::max_by` picks it in
/// [`crate::analysis::memory_footprint`]. What both cost-only sinks do per tensor.
#[inline(always)]
fn tally_tensor(
    tensors: &mut usize,
    largest: &mut Option<(Bytes, &'static str)>,
    name: &'static str,
    bytes: Bytes,
    role: TensorRole,
) -> TensorId {
    if role == TensorRole::Activation && largest.is_none_or(|(b, _)| bytes.get() >= b.get()) {
        *largest = Some((bytes, name));
    }
    *tensors += 1;
    *tensors - 1
}

impl NodeCost {
    /// The cost-only view of node `name` of `scope` running `op` ([`Op::into_parts`]).
    #[inline(always)]
    fn of(name: &'static str, scope: Scope, op: Op) -> Self {
        let (kind, cost, compute) = op.into_parts();
        NodeCost {
            name,
            kind,
            scope,
            cost,
            compute,
        }
    }
}

impl<F: FnMut(NodeCost)> GraphSink for VisitNodes<F> {
    #[inline(always)]
    fn tensor_bytes(
        &mut self,
        name: &'static str,
        bytes: Bytes,
        _precision: Precision,
        role: TensorRole,
    ) -> TensorId {
        tally_tensor(
            &mut self.tensors,
            &mut self.largest_activation,
            name,
            bytes,
            role,
        )
    }

    #[inline(always)]
    fn node(
        &mut self,
        name: &'static str,
        scope: Scope,
        op: Op,
        _inputs: &[TensorId],
        _outputs: &[TensorId],
    ) {
        (self.visit)(NodeCost::of(name, scope, op));
    }
}

/// Most nodes a [`NodeCosts`] holds. The decoder emits 21 for a dense model with unfused
/// attention (Llama-2-7B) and 38 for DeepSeek-V3 in decode (MLA with a query latent, dense first
/// blocks, routed and shared experts); tests check every decoder variant and every preset fits.
pub const MAX_NODES: usize = 64;

/// A [`GraphSink`] that keeps each node's cost and the largest activation tensor, in a
/// fixed-size array: filling one allocates nothing.
///
/// Nodes beyond [`MAX_NODES`] are counted in [`NodeCosts::emitted`] but not kept, so a caller can
/// tell a truncated list ([`NodeCosts::is_complete`]).
#[derive(Debug, Clone)]
pub struct NodeCosts {
    nodes: [NodeCost; MAX_NODES],
    emitted: usize,
    tensors: usize,
    /// How many times the block's nodes run per forward pass.
    pub layers: u64,
    /// The largest activation tensor emitted (the last of equal ones), in bytes, and its name.
    pub largest_activation: Option<(Bytes, &'static str)>,
}

impl NodeCosts {
    /// An empty list for a model of `layers` blocks.
    pub fn new(layers: u64) -> Self {
        Self {
            nodes: [NodeCost::EMPTY; MAX_NODES],
            emitted: 0,
            tensors: 0,
            layers,
            largest_activation: None,
        }
    }

    /// The nodes kept, in emission (forward) order.
    pub fn nodes(&self) -> &[NodeCost] {
        &self.nodes[..self.emitted.min(MAX_NODES)]
    }

    /// How many nodes were emitted (kept or not).
    pub fn emitted(&self) -> usize {
        self.emitted
    }

    /// Whether every emitted node was kept.
    pub fn is_complete(&self) -> bool {
        self.emitted <= MAX_NODES
    }

    /// How many times a node of `scope` runs per forward pass.
    #[inline]
    pub fn count(&self, scope: Scope) -> u64 {
        scope.count(self.layers)
    }
}

impl GraphSink for NodeCosts {
    #[inline(always)]
    fn tensor_bytes(
        &mut self,
        name: &'static str,
        bytes: Bytes,
        _precision: Precision,
        role: TensorRole,
    ) -> TensorId {
        tally_tensor(
            &mut self.tensors,
            &mut self.largest_activation,
            name,
            bytes,
            role,
        )
    }

    #[inline(always)]
    fn node(
        &mut self,
        name: &'static str,
        scope: Scope,
        op: Op,
        _inputs: &[TensorId],
        _outputs: &[TensorId],
    ) {
        if let Some(slot) = self.nodes.get_mut(self.emitted) {
            *slot = NodeCost::of(name, scope, op);
        }
        self.emitted += 1;
    }
}
