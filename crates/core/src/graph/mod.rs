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

mod live;
mod ports;
mod role;
mod span;

pub use live::LiveActivations;
pub use ports::Ports;
pub use role::{Part, Role};
pub use span::Span;

use crate::ops::Op;
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
    /// The first node that writes it (index into [`OpGraph::nodes`]); `None` for a weight, an
    /// input, or the KV cache as read.
    pub producer: Option<usize>,
    /// The last node that reads it; `None` if none does (the logits).
    pub last_use: Option<usize>,
}

/// A node: one operator, what it does in the model, where it runs, the tensors it reads and
/// writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// Name for display, unique in the graph; linear layers carry the Hugging Face module name
    /// (`q_proj`). No code decides anything by it: passes use [`Node::role`].
    pub name: &'static str,
    /// What it does in the model.
    pub role: Role,
    /// The part of the forward pass it runs in (and so how many times).
    pub span: Span,
    /// The operator with its shapes.
    pub op: Op,
    /// Tensors read.
    pub inputs: Ports,
    /// Tensors written.
    pub outputs: Ports,
}

impl Node {
    /// Executions per forward pass ([`Span::count`]).
    #[inline]
    pub fn count(&self) -> u64 {
        self.span.count()
    }
}

/// Operators connected by tensors, in forward (topological) order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpGraph {
    /// Every tensor.
    pub tensors: Vec<Tensor>,
    /// Every node, in execution order.
    pub nodes: Vec<Node>,
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
        self.tensor_bytes(name, Bytes(elements * precision.bytes()), precision, role)
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
            producer: None,
            last_use: None,
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
        let i = self.nodes.len();
        for &t in outputs {
            if let Some(x) = self.tensors.get_mut(t) {
                x.producer.get_or_insert(i);
            }
        }
        for &t in inputs {
            if let Some(x) = self.tensors.get_mut(t) {
                x.last_use = Some(i);
            }
        }
        self.nodes.push(Node {
            name,
            role,
            span,
            op,
            inputs: Ports::of(inputs),
            outputs: Ports::of(outputs),
        });
    }

    /// How many times `node` runs per forward pass.
    #[inline]
    pub fn count(&self, node: &Node) -> u64 {
        node.count()
    }

    /// The node with this name (for display and look-ups a user asks for by name).
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
