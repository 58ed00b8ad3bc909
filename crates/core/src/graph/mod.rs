//! The operator graph of one step: operators as nodes, tensors as edges.
//!
//! Every command builds this one value ([`crate::decoder::build_graph`], or
//! [`crate::decoder::build_into`] to reuse one graph's buffers) and evaluates it through one
//! function ([`crate::analysis::evaluate`]). Each node carries what every later pass decides by:
//! its [`Role`] in the model and its [`Span`], the block range it runs in. One decoder block is
//! stored once and counted over its span; the prologue (embeddings) and epilogue (final norm,
//! lm_head) run once. A node reads its input tensors from main memory and writes its outputs
//! there; a fusion pass decides which of those tensors stay on chip.
//!
//! Edges are held inline ([`Ports`], at most [`Ports::CAPACITY`] a side), so refilling a graph
//! whose vectors have room allocates nothing.

mod emit;
mod live;
mod pass;
mod ports;
mod role;
mod span;

pub(crate) use emit::{Emit, Reshape};
pub use live::LiveActivations;
pub(crate) use live::LiveIndex;
pub use pass::{Grad, Pass};
pub use ports::Ports;
pub use role::{Part, Role};
pub use span::Span;

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
    /// The first node that writes it, [`NO_NODE`] if none does.
    first_write: u32,
    /// The last node that reads it, [`NO_NODE`] if none does.
    last_read: u32,
}

/// The bytes of `elements` elements stored in `precision`.
#[inline(always)]
pub(crate) fn tensor_size(elements: f64, precision: Precision) -> Bytes {
    Bytes(elements * precision.bytes())
}

/// No node: a tensor nothing writes (a weight, an input) or nothing reads (the logits).
const NO_NODE: u32 = u32::MAX;

impl Tensor {
    /// The first node that writes it (index into [`OpGraph::nodes`]); `None` for a weight, an
    /// input, or the KV cache as read.
    #[inline]
    pub fn first_write(&self) -> Option<usize> {
        (self.first_write != NO_NODE).then_some(self.first_write as usize)
    }

    /// The last node that reads it; `None` if none does (the logits).
    #[inline]
    pub fn last_read(&self) -> Option<usize> {
        (self.last_read != NO_NODE).then_some(self.last_read as usize)
    }

    /// The nodes it is alive over, both included: from its first writer (the first node when
    /// nothing writes it) to its last reader (its writer when nothing reads it).
    #[inline(always)]
    pub fn alive(&self) -> (usize, usize) {
        let from = if self.first_write == NO_NODE {
            0
        } else {
            self.first_write
        };
        let to = if self.last_read == NO_NODE || self.last_read < from {
            from
        } else {
            self.last_read
        };
        (from as usize, to as usize)
    }
}

/// A node: one operator, what it does in the model, where it runs, the tensors it reads and
/// writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// Name for display, unique among the graph's nodes of one [`Pass`] (a gradient or a
    /// recomputation carries its forward node's name); linear layers carry the Hugging Face
    /// module name (`q_proj`). No code decides anything by it: passes use [`Node::role`] and
    /// [`Node::pass`].
    pub name: &'static str,
    /// What it does in the model.
    pub role: Role,
    /// The pass of a training step it runs in ([`Pass::Forward`] for every node of an
    /// inference graph, and then not serialised).
    #[serde(skip_serializing_if = "Pass::is_forward")]
    pass: Pass,
    /// The part of the forward pass it runs in (and so how many times): [`Node::span`].
    span: Span,
    /// [`Span::count`] of the span, kept with it: the walk reads it for every node.
    #[serde(skip)]
    count: u64,
    /// Tensors read.
    pub inputs: Ports,
    /// Tensors written.
    pub outputs: Ports,
    /// The operator with its shapes ([`Node::op`]).
    op: Op,
    /// Its type, cost and units, priced once when the node is made ([`Op::into_parts`]): where
    /// the decoder adds a node the operator's variant is known, so the pricing folds into the
    /// call site; evaluating the graph then reads three fields instead of matching the operator.
    #[serde(skip)]
    kind: OpKind,
    #[serde(skip)]
    cost: Cost,
    #[serde(skip)]
    compute: Compute,
    /// [`Compute::slot`] of [`Node::compute`], kept with it: the walk finds the node's roof by
    /// it.
    #[serde(skip)]
    slot: u8,
}

impl Node {
    /// A node named `name` doing `role` in `span`, running `op`, reading `inputs` and writing
    /// `outputs` (at most [`Ports::CAPACITY`] each).
    #[inline(always)]
    pub fn new(
        name: &'static str,
        role: Role,
        span: Span,
        op: Op,
        inputs: &[TensorId],
        outputs: &[TensorId],
    ) -> Self {
        let (kind, cost, compute) = op.clone().into_parts();
        Node {
            name,
            role,
            pass: Pass::Forward,
            span,
            count: span.count(),
            inputs: Ports::of(inputs),
            outputs: Ports::of(outputs),
            op,
            kind,
            cost,
            compute,
            slot: compute.slot() as u8,
        }
    }

    /// The same node in `pass` (a training pass that copies a forward node as a recomputation,
    /// or prices a gradient as a node of its own).
    #[must_use]
    pub fn in_pass(mut self, pass: Pass) -> Self {
        self.pass = pass;
        self
    }

    /// The pass of a training step it runs in.
    #[inline(always)]
    pub fn pass(&self) -> Pass {
        self.pass
    }

    /// The operator with its shapes.
    #[inline(always)]
    pub fn op(&self) -> &Op {
        &self.op
    }

    /// Replaces the operator (a pass that reshapes a node, such as a sharding), repricing it.
    pub fn set_op(&mut self, op: Op) {
        self.reprice(op);
    }

    /// [`Node::set_op`] folded into its caller, where the operator's variant is known.
    #[inline(always)]
    pub(crate) fn reprice(&mut self, op: Op) {
        let (kind, cost, compute) = op.clone().into_parts();
        (self.op, self.kind, self.cost, self.compute) = (op, kind, cost, compute);
        self.slot = compute.slot() as u8;
    }

    /// The operator type ([`Op::kind`]).
    #[inline(always)]
    pub fn kind(&self) -> OpKind {
        self.kind
    }

    /// FLOPs and bytes of one execution ([`Op::cost`]).
    #[inline(always)]
    pub fn cost(&self) -> Cost {
        self.cost
    }

    /// The units it runs on ([`Op::compute`]).
    #[inline(always)]
    pub fn compute(&self) -> Compute {
        self.compute
    }

    /// [`Compute::slot`] of its units.
    #[inline(always)]
    pub(crate) fn slot(&self) -> usize {
        usize::from(self.slot)
    }

    /// The part of the forward pass it runs in.
    #[inline(always)]
    pub fn span(&self) -> Span {
        self.span
    }

    /// Executions per forward pass ([`Span::count`] of [`Node::span`]).
    #[inline(always)]
    pub fn count(&self) -> u64 {
        self.count
    }
}

/// Operators connected by tensors, in forward (topological) order.
///
/// A plain value: its tensors, its nodes and its block count, and nothing else. What a rebuild
/// for a new batch or length reuses is kept beside it by whoever rebuilds it
/// ([`crate::analysis::StageAnalysis`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpGraph {
    /// Every tensor.
    tensors: Vec<Tensor>,
    /// Every node, in execution order.
    nodes: Vec<Node>,
    /// Decoder blocks of the model.
    pub layers: u64,
}

/// Room [`OpGraph::new`] makes: a dense decoder has 21 nodes and 45 tensors (unfused
/// attention); DeepSeek-V3 has up to 38 nodes and 78 tensors.
const NODES_HINT: usize = 40;
const TENSORS_HINT: usize = 80;

impl OpGraph {
    /// An empty graph of `layers` blocks, with room for a large decoder's nodes and tensors.
    pub fn new(layers: u64) -> Self {
        Self {
            tensors: Vec::with_capacity(TENSORS_HINT),
            nodes: Vec::with_capacity(NODES_HINT),
            layers,
        }
    }

    /// Every tensor, by [`TensorId`].
    #[inline(always)]
    pub fn tensors(&self) -> &[Tensor] {
        &self.tensors
    }

    /// Every node, in execution order.
    #[inline(always)]
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Empties the graph for a model of `layers` blocks, keeping its buffers.
    pub fn clear(&mut self, layers: u64) {
        self.tensors.clear();
        self.nodes.clear();
        self.layers = layers;
    }

    /// Adds a tensor of `elements` elements stored in `precision` and returns its id.
    #[inline(always)]
    pub fn tensor(
        &mut self,
        name: &'static str,
        elements: f64,
        precision: Precision,
        role: TensorRole,
    ) -> TensorId {
        self.tensor_bytes(name, tensor_size(elements, precision), precision, role)
    }

    /// Adds a tensor of a given size in bytes and returns its id.
    #[inline(always)]
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
            first_write: NO_NODE,
            last_read: NO_NODE,
        });
        self.tensors.len() - 1
    }

    /// Adds a node named `name` doing `role` in `span`, running `op`, reading `inputs` and
    /// writing `outputs` (at most [`Ports::CAPACITY`] each).
    #[inline(always)]
    pub fn node(
        &mut self,
        name: &'static str,
        role: Role,
        span: Span,
        op: Op,
        inputs: &[TensorId],
        outputs: &[TensorId],
    ) {
        let i = self.nodes.len() as u32;
        for &t in outputs {
            if let Some(x) = self.tensors.get_mut(t) {
                if x.first_write == NO_NODE {
                    x.first_write = i;
                }
            }
        }
        for &t in inputs {
            if let Some(x) = self.tensors.get_mut(t) {
                x.last_read = i;
            }
        }
        self.nodes
            .push(Node::new(name, role, span, op, inputs, outputs));
    }

    /// Appends `node` as it is (its pass included), recording it as a writer and reader of its
    /// tensors as [`OpGraph::node`] does.
    pub fn push(&mut self, node: Node) {
        let i = self.nodes.len() as u32;
        for &t in &node.outputs {
            if let Some(x) = self.tensors.get_mut(t) {
                if x.first_write == NO_NODE {
                    x.first_write = i;
                }
            }
        }
        for &t in &node.inputs {
            if let Some(x) = self.tensors.get_mut(t) {
                x.last_read = i;
            }
        }
        self.nodes.push(node);
    }

    /// The first node with this name (for display and look-ups a user asks for by name; in a
    /// training step's graph, the forward node).
    pub fn find(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The first node doing `role`, and its index.
    pub fn find_role(&self, role: Role) -> Option<(usize, &Node)> {
        self.nodes.iter().enumerate().find(|(_, n)| n.role == role)
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
