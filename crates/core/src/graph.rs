//! The operator graph: operators as nodes, tensors as edges.
//!
//! One decoder block is built once and counted `layers` times; operators outside the blocks
//! (embedding, final norm, lm_head) are counted once. A node reads its input tensors from main
//! memory and writes its outputs there; a fusion pass decides which of those tensors stay on chip.

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
}

/// Where a node sits: inside every decoder block or once per model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// In each decoder block: runs `layers` times per forward pass.
    Layer,
    /// Once per forward pass.
    Model,
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
        match node.scope {
            Scope::Layer => self.layers,
            Scope::Model => 1,
        }
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
