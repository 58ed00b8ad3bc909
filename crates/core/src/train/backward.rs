//! The backward pass as a pass over the forward operator graph, with activation recomputation
//! (Korthikanti et al. 2022, arXiv 2205.05198, §5).
//!
//! Every forward node gets the operators that compute its gradients, priced by the same cost
//! model as the forward ([`crate::ops`]): new [`Op`] values with the gradient's shapes, no
//! formula of their own where an operator exists. For a node y = f(x, W) with upstream
//! gradient dY:
//!
//! | forward | gradients | FLOPs |
//! |---|---|---|
//! | GEMM y = x·W, x m×k, W k×n | dX = dY·Wᵀ (m×n by n×k), dW = xᵀ·dY (k×m by m×n) | 2·m·n·k each: 2 × forward |
//! | batched matmul C = A·B (QKᵀ, P·V) | dA = dC·Bᵀ, dB = Aᵀ·dC (summed over the query heads sharing B) | 2 × forward |
//! | expert GEMM (grouped) | dX (n and k exchanged), dW (the forward's shape) | 2 × forward |
//! | FlashAttention | one backward kernel, [`crate::ops::FlashAttention::backward_cost`] (FlashAttention-2, Dao 2023, §3.1.2, §4.1) | 2.5 × forward matmul FLOPs + per-score terms |
//! | RMSNorm | elementwise: reads x and dY, writes dX, 9 FLOP/element ([`RMSNORM_BACKWARD_FLOPS_PER_ELEMENT`]) | memory-bound |
//! | LayerNorm | elementwise: reads x and dY, writes dX, 13 FLOP/element ([`LAYERNORM_BACKWARD_FLOPS_PER_ELEMENT`]) | memory-bound |
//! | activation f(g) | elementwise: reads g and dY, writes dG; 2·φ_f + 1 FLOP/element ([`activation_backward_flops`]) | memory-bound |
//! | other elementwise over i inputs (gate·up, expert combine) | elementwise over the i gradients (i·E elements), each reading dY and its partner, φ_f/i FLOP/element, at least 1 | memory-bound |
//! | residual add | the gradient of the residual stream summed with the branch's: an add of two | memory-bound |
//! | softmax | elementwise: reads P and dP, writes dS, 4 FLOP/element (+1 for the 1/√d scale) ([`SOFTMAX_BACKWARD_FLOPS_PER_ELEMENT`]) | memory-bound |
//! | rotary | the inverse rotation of dY: the forward's operator | memory-bound |
//! | embedding lookup | scatter-add of the T rows of dY into the table's gradient: an add of two over T·d | memory-bound |
//! | embedding add (token + position) | none: dY passes to both lookups | — |
//! | KV-cache write | none: training keeps no cache (the node is dropped from the step) | — |
//! | collective | mirrored: the same collective once more (see below) | — |
//!
//! Gradients are in the precision of the forward tensor they are the gradient of (activations
//! in the activation precision, dW in the weight precision); the per-row vectors of a norm's
//! backward (its weight read and the dW partial sums, n elements per row block) and a bias's
//! gradient (a column sum of dY, m·n FLOP, under 1/(2k) of its GEMM) are not counted, nor the
//! token ids the scatter-add reads (8 bytes a token against d·p).
//!
//! **Collectives.** Megatron's f and g operators are conjugate (Shoeybi et al. 2019, §3): the
//! tensor-parallel all-reduce after a row-parallel output (g) is an identity in the backward,
//! and the identity before a column-parallel input (f) is an all-reduce of the same T·d
//! activations; with sequence parallelism the reduce-scatter and all-gather exchange places
//! (Korthikanti et al. §4.2.2), moving the same bytes. So each forward collective is mirrored
//! by one backward node of the same collective, role and bytes. Pipeline sends and the
//! experts' all-to-alls mirror exactly (the gradients go back the way the activations came).
//! Not yet modelled: the data-parallel gradient all-reduce or reduce-scatter, and context
//! parallelism's backward ring, which passes dK and dV beside K and V (mirrored here once).
//!
//! **Order.** The step's graph is the forward nodes, then the gradients in reverse order: the
//! epilogue's (lm_head, final norm), then the recomputed block nodes in forward order, then
//! the blocks' gradients in reverse, then the prologue's. Blocks are stored once and counted
//! over their span, so "before the blocks' backward" is before every block's.
//!
//! **Tensors.** A gradient node reads the tensors its forward node read (the saved activations
//! and the weights), so their intervals reach into the backward pass; gradient tensors are not
//! edges of the graph yet (their bytes are in the nodes' costs).

use super::TrainError;
use crate::graph::{Grad, Node, OpGraph, Pass, Role};
use crate::ops::{
    BatchedMatmul, Cost, Elementwise, ExpertGemm, Gemm, Op, ADD_FLOPS_PER_ELEMENT,
    MUL_FLOPS_PER_ELEMENT,
};
use crate::units::{to_f64, Flop};
use serde::Serialize;

/// Which forward nodes run again before the backward pass (Korthikanti et al. 2022, arXiv
/// 2205.05198, §5).
///
/// The graph counterpart of the FLOP-formula [`crate::mfu::Recompute`]: here recomputed nodes
/// are nodes of the step's graph ([`Pass::Recompute`]), counted by their own cost. The same
/// choice decides the activations a block keeps ([`super::memory`], Korthikanti Table 2:
/// selective drops the 5·a·s/h score term, full keeps each block's input only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recompute {
    /// Nothing recomputed: every activation the backward needs is kept.
    #[default]
    None,
    /// Selective recomputation (§5): the attention core of every block, QKᵀ, softmax (with
    /// its scale and mask; the paper's attention dropout is not a node of the graph) and P·V,
    /// the nodes whose roles are [`Role::is_attention_core`]. A fused attention kernel is not recomputed: its backward
    /// kernel recomputes the scores itself (FlashAttention-2, Algorithm 2), and its cost
    /// already counts them.
    Selective,
    /// Full recomputation (the baseline §5 compares against; Narayanan et al. 2021, §5.1):
    /// every forward node of every block runs again (the prologue and epilogue do not: their
    /// activations are kept); only each block's input is kept.
    Full,
}

impl Recompute {
    /// Whether a forward `node` runs again under this scheme.
    pub fn recomputes(self, node: &Node) -> bool {
        if !node.span().in_blocks() {
            return false;
        }
        match self {
            Recompute::None => false,
            Recompute::Selective => {
                node.role.is_attention_core() && !matches!(node.op(), Op::FlashAttention(_))
            }
            Recompute::Full => true,
        }
    }
}

/// RMSNorm backward per element (y = x̂·w, x̂ = x·r, r = 1/rms(x)): x̂ again (1), g = dY·w (1),
/// the row sum of g·x̂ (2), dX = r·(g − x̂·mean) (3), the weight gradient's dY·x̂ accumulated (2)
/// = 9 FLOP.
pub const RMSNORM_BACKWARD_FLOPS_PER_ELEMENT: f64 = 9.0;

/// LayerNorm backward per element: x̂ = (x − μ)·r again (2), g = dY·w (1), the row sums of g
/// and g·x̂ (3), dX = r·(g − mean(g) − x̂·mean(g·x̂)) (4), the weight and bias gradients' dY·x̂
/// and dY accumulated (3) = 13 FLOP.
pub const LAYERNORM_BACKWARD_FLOPS_PER_ELEMENT: f64 = 13.0;

/// Softmax backward per element, dS = P ∘ (dP − rowsum(dP ∘ P)): the product (1), its row sum
/// (1), the subtraction (1), the product with P (1) = 4 FLOP; attention's 1/√d scale adds 1
/// (the mask needs nothing: P is 0 where it masked).
pub const SOFTMAX_BACKWARD_FLOPS_PER_ELEMENT: f64 = 4.0;

/// Activation backward FLOPs per element for a forward activation of `forward` FLOP per
/// element: dG = dY · f′(g), with f′ taken as costing what f costs again (its intermediates
/// recomputed, then combined) plus the multiply by dY: 2·φ_f + 1. A convention, checked
/// against the counts: SiLU′ = σ·(1 + g·(1 − σ)) is σ (3) and 3 more, then ·dY: 7 = 2·3 + 1;
/// GELU′ (tanh form) is about 20 (19 by the rule); ReLU′ is a compare and a select, 2 (3).
#[inline]
pub fn activation_backward_flops(forward: f64) -> f64 {
    2.0 * forward + 1.0
}

/// The training step's graph: `forward`'s nodes (less its KV-cache writes), the nodes
/// `recompute` runs again, and every forward node's gradients in reverse order (see the module
/// documentation for each operator's gradients and their sources).
///
/// `forward` is a forward graph as [`crate::decoder::build_graph`] makes it (or sharded by
/// [`crate::parallel::shard()`]), for a prefill-shaped workload: batch × sequence tokens, with
/// [`crate::workload::Logits::All`] for a loss at every position. Its tensors are kept with
/// their ids. The loss (softmax cross-entropy over the logits) is not a node yet: lm_head's
/// gradients take dlogits as given.
///
/// # Errors
/// [`TrainError::NotForward`] if `forward` holds a node of another pass.
pub fn backward(forward: &OpGraph, recompute: Recompute) -> Result<OpGraph, TrainError> {
    if let Some((index, n)) = forward
        .nodes()
        .iter()
        .enumerate()
        .find(|(_, n)| !n.pass().is_forward())
    {
        return Err(TrainError::NotForward {
            index,
            name: n.name,
        });
    }
    let mut step = OpGraph::new(forward.layers);
    for t in forward.tensors() {
        step.tensor_bytes(t.name, t.bytes, t.precision, t.role);
    }
    let kept = || {
        forward
            .nodes()
            .iter()
            .filter(|n| n.role != Role::KvCacheWrite)
    };
    for n in kept() {
        step.push(n.clone());
    }
    let mut recomputed = false;
    for n in kept().rev() {
        if !recomputed && n.span().in_blocks() {
            recomputed = true;
            for r in kept().filter(|r| recompute.recomputes(r)) {
                step.push(r.clone().in_pass(Pass::Recompute));
            }
        }
        for (op, grad) in gradients(n).into_iter().flatten() {
            step.push(
                Node::new(n.name, n.role, n.span(), op, &n.inputs, &[])
                    .in_pass(Pass::Backward(grad)),
            );
        }
    }
    Ok(step)
}

/// The gradient operators of one forward node, at most two (input and weight).
fn gradients(node: &Node) -> [Option<(Op, Grad)>; 2] {
    let input = |op| [Some((op, Grad::Input)), None];
    match node.op() {
        Op::Gemm(g) => [
            Some((Op::Gemm(gemm_input_grad(g)), Grad::Input)),
            Some((Op::Gemm(gemm_weight_grad(g)), Grad::Weight)),
        ],
        Op::BatchedMatmul(m) => {
            let (da, db) = batched_grads(m);
            [
                Some((Op::BatchedMatmul(da), Grad::Input)),
                Some((Op::BatchedMatmul(db), Grad::Input)),
            ]
        }
        Op::ExpertGemm(e) => {
            // dX = dY·Wᵀ: n and k exchanged, dY read, the experts' weights read, dX written.
            let dx = ExpertGemm {
                n: e.k,
                k: e.n,
                a: e.c,
                c: e.a,
                ..*e
            };
            // dW = Xᵀ·dY per expert: the forward's FLOPs, and its bytes with the dY and dW
            // terms exchanged between read and written (the operator reads the weights and
            // writes the outputs; dW writes the touched experts' gradients and reads dY).
            [
                Some((Op::ExpertGemm(dx), Grad::Input)),
                Some((Op::ExpertGemm(*e), Grad::Weight)),
            ]
        }
        Op::FlashAttention(f) => input(Op::FlashAttentionBackward(*f)),
        Op::Elementwise(e) => {
            if node.role == Role::EmbeddingAdd {
                return [None, None];
            }
            let grad = if node.role.is_residual() {
                // The residual stream's gradient plus the branch's, where x forked.
                Elementwise {
                    elements: e.elements,
                    inputs: 2,
                    flops_per_element: ADD_FLOPS_PER_ELEMENT,
                    precision: e.precision,
                }
            } else if node.role.is_activation() && e.inputs == 1 {
                Elementwise {
                    elements: e.elements,
                    inputs: 2,
                    flops_per_element: activation_backward_flops(e.flops_per_element),
                    precision: e.precision,
                }
            } else {
                // One gradient per input (i·E elements), each reading dY and its partner (the
                // other factor of a product, the weight of a weighted sum) and costing its
                // share of the forward's FLOPs, at least the multiply by dY.
                let i = e.inputs.max(1);
                Elementwise {
                    elements: e.elements.saturating_mul(u64::from(i)),
                    inputs: 2,
                    flops_per_element: (e.flops_per_element / f64::from(i))
                        .max(MUL_FLOPS_PER_ELEMENT),
                    precision: e.precision,
                }
            };
            input(Op::Elementwise(grad))
        }
        Op::Softmax(s) => input(Op::Elementwise(Elementwise {
            elements: s.rows.saturating_mul(s.cols),
            inputs: 2,
            flops_per_element: SOFTMAX_BACKWARD_FLOPS_PER_ELEMENT
                + if s.scale_mask { 1.0 } else { 0.0 },
            precision: s.precision,
        })),
        Op::RmsNorm(n) => input(Op::Elementwise(Elementwise {
            elements: n.rows.saturating_mul(n.cols),
            inputs: 2,
            flops_per_element: RMSNORM_BACKWARD_FLOPS_PER_ELEMENT,
            precision: n.precision,
        })),
        Op::LayerNorm(n) => input(Op::Elementwise(Elementwise {
            elements: n.rows.saturating_mul(n.cols),
            inputs: 2,
            flops_per_element: LAYERNORM_BACKWARD_FLOPS_PER_ELEMENT,
            precision: n.precision,
        })),
        Op::Rotary(r) => input(Op::Rotary(*r)),
        Op::Embedding(e) => input(Op::Elementwise(Elementwise {
            elements: e.tokens.saturating_mul(e.hidden),
            inputs: 2,
            flops_per_element: ADD_FLOPS_PER_ELEMENT,
            precision: e.act,
        })),
        Op::KvCacheWrite(_) | Op::FlashAttentionBackward(_) => [None, None],
        Op::Communication(c) => input(Op::Communication(*c)),
    }
}

/// dX = dY·Wᵀ of y = x·W: an m×n by n×k GEMM reading dY (at y's precision) and W (with its
/// scales), writing dX at x's precision; no bias.
#[inline]
pub fn gemm_input_grad(g: &Gemm) -> Gemm {
    Gemm {
        m: g.m,
        n: g.k,
        k: g.n,
        bias: false,
        b_scale: g.b_scale,
        a: g.c,
        b: g.b,
        c: g.a,
        compute: g.compute,
    }
}

/// dW = xᵀ·dY of y = x·W: a k×m by m×n GEMM reading x and dY, writing dW at W's precision;
/// no bias, no scales.
#[inline]
pub fn gemm_weight_grad(g: &Gemm) -> Gemm {
    Gemm {
        m: g.k,
        n: g.n,
        k: g.m,
        bias: false,
        b_scale: 0.0,
        a: g.a,
        b: g.c,
        c: g.b,
        compute: g.compute,
    }
}

/// The two gradients of C_i = A_i·B_j, `shared` consecutive A's on one B: dA_i = dC_i·B_jᵀ
/// (the same batch and sharing, m×n by n×k), and dB_j = Σ_i A_iᵀ·dC_i over the A's sharing
/// B_j, one k×(G·m) by (G·m)×n product per B (batch / G products) when G divides the batch,
/// else one product per A (each writing its own partial dB).
pub fn batched_grads(m: &BatchedMatmul) -> (BatchedMatmul, BatchedMatmul) {
    let da = BatchedMatmul {
        n: m.k,
        k: m.n,
        a: m.c,
        c: m.a,
        ..*m
    };
    let g = m.shared.max(1);
    let (batch, rows) = if m.batch.is_multiple_of(g) {
        (m.batch / g, m.m.saturating_mul(g))
    } else {
        (m.batch, m.m)
    };
    let db = BatchedMatmul {
        batch,
        shared: 1,
        m: m.k,
        n: m.n,
        k: rows,
        a: m.a,
        b: m.c,
        c: m.b,
        compute: m.compute,
    };
    (da, db)
}

/// FLOPs and bytes of a training step's graph by pass, each node counted over its span: the
/// FLOPs its kernels execute, what hardware FLOPs utilisation (HFU) divides by.
///
/// Executed FLOPs are forward + backward, recomputation excluded; hardware FLOPs add the
/// recomputation (PaLM, Chowdhery et al. 2022, App. B, which defines HFU by the FLOPs executed).
/// They depend on the kernels (an eager attention computes the scores a causal mask discards,
/// FlashAttention's backward recomputes the scores, norms and softmax have FLOPs of their own);
/// MFU's model FLOPs do not: they are a convention of the model's math,
/// [`crate::mfu::model_flops_per_token`]. The optimizer update is in neither, as in PaLM; see
/// [`super::optimizer`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct TrainingStep {
    /// The forward nodes.
    pub forward: Cost,
    /// The recomputed forward nodes.
    pub recompute: Cost,
    /// The gradient nodes (input and weight gradients).
    pub backward: Cost,
    /// Of [`TrainingStep::backward`], the weight gradients (dW).
    pub weight_gradients: Cost,
}

impl TrainingStep {
    /// The sums over `step`'s nodes (a graph from [`backward`]; for a forward graph, only
    /// [`TrainingStep::forward`] is non-zero).
    pub fn of(step: &OpGraph) -> Self {
        let mut t = TrainingStep::default();
        for n in step.nodes() {
            let c = n.cost() * to_f64(n.count());
            match n.pass() {
                Pass::Forward => t.forward += c,
                Pass::Recompute => t.recompute += c,
                Pass::Backward(g) => {
                    t.backward += c;
                    if g == Grad::Weight {
                        t.weight_gradients += c;
                    }
                }
            }
        }
        t
    }

    /// FLOPs the step's forward and gradient nodes execute, FLOP.
    pub fn executed_flops(&self) -> Flop {
        self.forward.flops + self.backward.flops
    }

    /// Hardware FLOPs of the step: executed FLOPs + recomputation, FLOP (HFU's numerator).
    pub fn hardware_flops(&self) -> Flop {
        self.executed_flops() + self.recompute.flops
    }
}
