//! Tensor parallelism (Megatron-LM: Shoeybi et al. 2019, §3) and sequence parallelism
//! (Korthikanti et al. 2022, §4.2.2) as a pass over the operator graph: each node's operator
//! and tensors cut to one rank's share by the node's [`Role`], and the collectives that join
//! the shares inserted where the model needs them.
//!
//! With t ranks, h heads and g KV heads (h_r = h/t and g_r = max(1, g/t) per rank):
//! - column-parallel (output split): q_proj (n = h·e → h_r·e), k_proj and v_proj (g·e → g_r·e),
//!   gate_proj, up_proj and the experts' and shared experts' gate and up (n → n/t), and the
//!   vocabulary-parallel lm_head (V → ⌈V/t⌉);
//! - heads split: q/k norms, rotary (h + g → h_r + g_r heads), the KV-cache write (g_r heads),
//!   attention (B·h_r products; softmax over B·h_r·s rows);
//! - row-parallel (input split, output a partial sum): o_proj (k = h·e → h_r·e), down_proj and
//!   the experts' down (k → k/t); the activations between them are split (T·f/t elements);
//! - replicated: norms, residual adds, the router, the expert combine, the embedding lookup
//!   (its table split by vocabulary);
//! - collectives: an all-reduce of T·d activations after o_proj and after the MLP (down_proj or
//!   the expert combine) in every block, one after the vocabulary-parallel embedding, and an
//!   all-gather of the vocabulary-parallel logits.
//!
//! With sequence parallelism each all-reduce becomes a reduce-scatter after the row-parallel
//! output and an all-gather after the next norm (the same bytes each, nccl-tests' S); norms and
//! residual adds run on ⌈T/t⌉ tokens.

use super::layout::{Layout, LayoutError};
use crate::comm::collective::{collective_cost, AlgorithmChoice, Collective, CollectiveError};
use crate::comm::{System, SystemError};
use crate::graph::{OpGraph, Role, TensorId, TensorRole};
use crate::model::Transformer;
use crate::ops::{Communication, Op};
use crate::units::Bytes;
use crate::workload::Workload;
use std::fmt;

/// Why a graph cannot be sharded.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ParallelError {
    /// The layout does not fit the model.
    Layout(LayoutError),
    /// The system cannot hold the layout.
    System(SystemError),
    /// A collective cannot be priced on the system's fabric.
    Collective(CollectiveError),
}

impl fmt::Display for ParallelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParallelError::Layout(e) => e.fmt(f),
            ParallelError::System(e) => e.fmt(f),
            ParallelError::Collective(e) => e.fmt(f),
        }
    }
}
impl std::error::Error for ParallelError {}

/// One rank's share of the work: the divisions [`shard`] applies.
#[derive(Debug, Clone, Copy)]
struct Share {
    t: u64,
    /// Query heads, KV heads, and their per-rank counts.
    h: u64,
    g: u64,
    hr: u64,
    gr: u64,
    /// Tokens in the pass and per rank under sequence parallelism.
    tokens: u64,
    tokens_r: u64,
    hidden: u64,
    sp: bool,
}

impl Share {
    /// KV heads a rank keeps of `kv`: kv / t, at least 1 (replicated when fewer than t).
    fn kv_rank(&self, kv: u64) -> u64 {
        (kv / self.t).max(1)
    }
    /// The share of `kv` KV heads a rank keeps.
    fn kv_of(&self, kv: u64) -> f64 {
        self.kv_rank(kv) as f64 / kv.max(1) as f64
    }
    fn q(&self) -> f64 {
        self.hr as f64 / self.h as f64
    }
    fn kv(&self) -> f64 {
        self.gr as f64 / self.g as f64
    }
    fn cols(&self) -> f64 {
        1.0 / self.t as f64
    }
    fn seq(&self) -> f64 {
        if self.sp {
            self.tokens_r as f64 / self.tokens.max(1) as f64
        } else {
            1.0
        }
    }
}

/// The operator of one rank for a node doing `role`.
fn shard_op(role: Role, op: &Op, s: &Share) -> Op {
    let mut op = op.clone();
    let t = s.t;
    match (role, &mut op) {
        (Role::QProj, Op::Gemm(o)) => o.n = o.n / s.h * s.hr,
        (Role::KProj | Role::VProj, Op::Gemm(o)) => o.n = o.n / s.g * s.gr,
        (Role::QkvProj, Op::Gemm(o)) => o.n = o.n / (s.h + 2 * s.g) * (s.hr + 2 * s.gr),
        (Role::QNorm, Op::RmsNorm(o)) => o.rows = o.rows / s.h * s.hr,
        (Role::KNorm, Op::RmsNorm(o)) => o.rows = o.rows / s.g * s.gr,
        // The heads after the queries' are the keys' (g, or MLA's one shared rotary key).
        (Role::Rotary, Op::Rotary(o)) => o.heads = s.hr + s.kv_rank(o.heads - s.h),
        (Role::KvCacheWrite, Op::KvCacheWrite(o)) => o.kv_heads = s.kv_rank(o.kv_heads),
        (
            Role::AttentionScores | Role::AttentionValues | Role::QAbsorb | Role::OAbsorb,
            Op::BatchedMatmul(o),
        ) => {
            // batch = B·h products, `shared` query heads per KV head (1 for the absorbed
            // projections and MLA's expanded prefill, h for its absorbed decode).
            let kv = s.h / o.shared.max(1);
            o.batch = o.batch / s.h * s.hr;
            o.shared = s.hr / s.kv_rank(kv);
        }
        (Role::AttentionSoftmax, Op::Softmax(o)) => o.rows = o.rows / s.h * s.hr,
        (Role::FusedAttention, Op::FlashAttention(o)) => {
            o.heads = s.hr;
            o.kv_heads = s.kv_rank(o.kv_heads);
        }
        (Role::QUpProj | Role::KvUpProj, Op::Gemm(o)) => o.n = o.n / s.h * s.hr,
        (Role::OProj, Op::Gemm(o)) => o.k = o.k / s.h * s.hr,
        (
            Role::GateProj | Role::UpProj | Role::SharedGateProj | Role::SharedUpProj,
            Op::Gemm(o),
        ) => o.n = o.n.div_ceil(t),
        (Role::LmHead, Op::Gemm(o)) => o.n = o.n.div_ceil(t),
        (Role::DownProj | Role::SharedDownProj, Op::Gemm(o)) => o.k = o.k.div_ceil(t),
        (Role::ExpertGateProj | Role::ExpertUpProj, Op::ExpertGemm(o)) => o.n = o.n.div_ceil(t),
        (Role::ExpertDownProj, Op::ExpertGemm(o)) => o.k = o.k.div_ceil(t),
        (
            Role::Activation
            | Role::GateMul
            | Role::SharedActivation
            | Role::SharedGateMul
            | Role::ExpertActivation
            | Role::ExpertGateMul,
            Op::Elementwise(o),
        ) => o.elements = o.elements.div_ceil(t),
        (Role::AttentionNorm | Role::MlpNorm | Role::FinalNorm, Op::RmsNorm(o)) if s.sp => {
            o.rows = s.tokens_r;
        }
        (Role::AttentionNorm | Role::MlpNorm | Role::FinalNorm, Op::LayerNorm(o)) if s.sp => {
            o.rows = s.tokens_r;
        }
        (Role::AttentionResidual | Role::MlpResidual, Op::Elementwise(o)) if s.sp => {
            o.elements = s.tokens_r * s.hidden;
        }
        // Learned positions under sequence parallelism: the token embeddings are
        // reduce-scattered, so each rank looks up and adds the positions of its 1/t of the
        // tokens (Megatron-LM adds them on the sequence-parallel shard).
        (Role::PositionEmbedding, Op::Embedding(o)) if s.sp => o.tokens = s.tokens_r,
        (Role::EmbeddingAdd, Op::Elementwise(o)) if s.sp => {
            o.elements = s.tokens_r * s.hidden;
        }
        _ => {}
    }
    op
}

/// The share of the KV heads a rank keeps for a node running `op`: the KV-cache write's, the
/// rotary keys', attention's.
fn kv_share(op: &Op, s: &Share) -> f64 {
    match op {
        Op::KvCacheWrite(o) => s.kv_of(o.kv_heads),
        Op::Rotary(o) => s.kv_of(o.heads - s.h),
        Op::FlashAttention(o) => s.kv_of(o.kv_heads),
        Op::BatchedMatmul(o) => s.kv_of(s.h / o.shared.max(1)),
        _ => s.kv(),
    }
}

/// The factor one rank's copy of output `i` of a node doing `role` with `op` has of the whole.
fn output_share(role: Role, op: &Op, i: usize, s: &Share) -> f64 {
    match role {
        Role::QProj | Role::QNorm | Role::QUpProj | Role::KvUpProj => s.q(),
        Role::QAbsorb | Role::OAbsorb => s.q(),
        Role::KProj | Role::VProj | Role::KNorm => s.kv(),
        Role::KvCacheWrite => kv_share(op, s),
        Role::QkvProj | Role::Rotary if i == 0 => s.q(),
        Role::QkvProj => s.kv(),
        Role::Rotary => kv_share(op, s),
        Role::AttentionScores
        | Role::AttentionSoftmax
        | Role::AttentionValues
        | Role::FusedAttention => s.q(),
        Role::GateProj
        | Role::UpProj
        | Role::Activation
        | Role::GateMul
        | Role::SharedGateProj
        | Role::SharedUpProj
        | Role::SharedActivation
        | Role::SharedGateMul
        | Role::ExpertGateProj
        | Role::ExpertUpProj
        | Role::ExpertActivation
        | Role::ExpertGateMul => s.cols(),
        // ⌈V/t⌉ rows of V, taken as 1/t: below one row in 10^4 for every preset.
        Role::LmHead => s.cols(),
        Role::AttentionNorm
        | Role::MlpNorm
        | Role::FinalNorm
        | Role::AttentionResidual
        | Role::MlpResidual
        | Role::PositionEmbedding
        | Role::EmbeddingAdd => s.seq(),
        _ => 1.0,
    }
}

/// The factor one rank's copy of a weight read by a node doing `role` has of the whole.
fn weight_share(role: Role, s: &Share) -> f64 {
    match role {
        Role::QProj | Role::OProj | Role::QUpProj | Role::KvUpProj => s.q(),
        Role::QAbsorb | Role::OAbsorb => s.q(),
        Role::KProj | Role::VProj => s.kv(),
        Role::QkvProj => (s.hr + 2 * s.gr) as f64 / (s.h + 2 * s.g) as f64,
        Role::GateProj
        | Role::UpProj
        | Role::DownProj
        | Role::SharedGateProj
        | Role::SharedUpProj
        | Role::SharedDownProj
        | Role::ExpertGateProj
        | Role::ExpertUpProj
        | Role::ExpertDownProj
        | Role::TokenEmbedding
        | Role::LmHead => s.cols(),
        _ => 1.0,
    }
}

/// The collective a node doing `role` is followed by under tensor parallelism, if any: the
/// row-parallel outputs are reduced, the logits gathered; with sequence parallelism the normed
/// tokens are gathered before the column-parallel linears.
fn collective_after(
    role: Role,
    sp: bool,
    moe_mlp: bool,
) -> Option<(Collective, Role, &'static str)> {
    let reduce = if sp {
        (Collective::ReduceScatter, Role::TpReduceScatter)
    } else {
        (Collective::AllReduce, Role::TpAllReduce)
    };
    match role {
        Role::TokenEmbedding => Some((reduce.0, reduce.1, "embedding.tp_reduce")),
        Role::OProj => Some((reduce.0, reduce.1, "attention.tp_reduce")),
        Role::DownProj if !moe_mlp => Some((reduce.0, reduce.1, "mlp.tp_reduce")),
        Role::MoeCombine => Some((reduce.0, reduce.1, "moe.tp_reduce")),
        Role::AttentionNorm if sp => Some((
            Collective::AllGather,
            Role::TpAllGather,
            "attention.tp_gather",
        )),
        Role::MlpNorm if sp => Some((Collective::AllGather, Role::TpAllGather, "mlp.tp_gather")),
        Role::FinalNorm if sp => Some((Collective::AllGather, Role::TpAllGather, "head.tp_gather")),
        Role::LmHead => Some((Collective::AllGather, Role::TpAllGather, "logits.tp_gather")),
        _ => None,
    }
}

/// One rank's graph of `graph` (built by [`crate::decoder::build_graph`] for `model` under
/// `workload`) split `layout.tp` ways, with its collectives priced on `system`'s fabric for a
/// tensor-parallel group of consecutive devices ([`System::group`]). Pipeline parallelism is
/// [`super::analysis`]'s; this pass leaves the blocks and their counts as they are.
///
/// With tp = 1 the graph is returned as it is.
///
/// # Errors
/// The layout does not fit the model; the system has fewer devices than the group; the fabric
/// lacks a link the group needs.
pub fn shard(
    graph: &OpGraph,
    model: &Transformer,
    workload: &Workload,
    layout: Layout,
    system: &System,
) -> Result<OpGraph, ParallelError> {
    layout.validate(model).map_err(ParallelError::Layout)?;
    if layout.tp == 1 {
        return Ok(graph.clone());
    }
    let sp = layout.sequence_parallel;
    let group = system
        .group(u64::from(layout.tp))
        .map_err(ParallelError::System)?;
    let t = u64::from(layout.tp);
    let tokens = workload.tokens();
    let s = Share {
        t,
        h: model.heads,
        g: model.kv_heads,
        hr: model.heads / t,
        gr: layout.kv_heads_per_rank(model.kv_heads),
        tokens,
        tokens_r: tokens.div_ceil(t),
        hidden: model.hidden,
        sp,
    };
    let moe_mlp = graph.nodes().iter().any(|n| n.role == Role::MoeCombine);

    // Each tensor's share: an activation's from the node that writes it, a weight's or the
    // KV cache's from the node that reads it.
    let tensors = graph.tensors();
    let mut share = vec![1.0f64; tensors.len()];
    for n in graph.nodes() {
        for (i, &o) in n.outputs.iter().enumerate() {
            if let Some(x) = share.get_mut(o) {
                *x = output_share(n.role, n.op(), i, &s);
            }
        }
        for &i in n.inputs.iter() {
            match tensors.get(i).map(|t| t.role) {
                Some(TensorRole::Weight) => share[i] = weight_share(n.role, &s),
                Some(TensorRole::KvCache) => share[i] = kv_share(n.op(), &s),
                _ => {}
            }
        }
    }

    let mut out = OpGraph::new(graph.layers);
    for (t, f) in tensors.iter().zip(&share) {
        out.tensor_bytes(t.name, Bytes(t.bytes.get() * f), t.precision, t.role);
    }
    // A collective that changes a tensor's size writes a new one; later readers read it.
    let mut remap: Vec<TensorId> = (0..tensors.len()).collect();
    let mut inputs: Vec<TensorId> = Vec::with_capacity(4);
    for n in graph.nodes() {
        inputs.clear();
        inputs.extend(n.inputs.iter().map(|&i| remap[i]));
        let op = shard_op(n.role, n.op(), &s);
        out.node(n.name, n.role, n.span(), op, &inputs, &n.outputs);
        let Some((collective, role, name)) = collective_after(n.role, sp, moe_mlp) else {
            continue;
        };
        let Some(&x) = n.outputs.first() else {
            continue;
        };
        let Some(tensor) = out.tensors().get(x).cloned() else {
            continue;
        };
        // S, as nccl-tests counts it: the reduced buffer, the gathered result.
        let (bytes, result) = match collective {
            Collective::AllReduce => (tensor.bytes, tensor.bytes),
            Collective::ReduceScatter => (tensor.bytes, tensor.bytes * s.seq()),
            _ => {
                let whole = tensor.bytes.get() / share[x];
                (Bytes(whole), Bytes(whole))
            }
        };
        let cost = collective_cost(
            collective,
            bytes,
            group,
            &system.fabric,
            AlgorithmChoice::Auto,
        )
        .map_err(ParallelError::Collective)?;
        let op = Op::Communication(Communication::of(&cost));
        if collective == Collective::AllReduce {
            // In place, as NCCL runs it.
            out.node(name, role, n.span(), op, &[x], &[x]);
        } else {
            let y = out.tensor_bytes(tensor.name, result, tensor.precision, tensor.role);
            out.node(name, role, n.span(), op, &[x], &[y]);
            remap[x] = y;
        }
    }
    Ok(out)
}
