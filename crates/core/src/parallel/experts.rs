//! Expert parallelism as a pass over the operator graph (GShard, Lepikhin et al. 2020;
//! DeepSeek-V3 technical report §3.4): the routed experts of a mixture of experts split over e
//! devices, E/e each, and two all-to-alls around them.
//!
//! The graph it takes is one device's under data-parallel attention (built for ⌈B/e⌉
//! sequences, T_r tokens). Each routed token goes to its k experts: a device sends T_r·k rows of
//! d elements (S = T_r·k·d·a bytes, of which (e−1)/e leave it: nccl-tests' all-to-all) and, with
//! routing balanced, receives as many; the busiest receives `imbalance` times that, but never
//! more rows than the group has tokens for its experts ([`busiest_rows`]). Its expert
//! GEMMs run over those rows against its E/e experts' weights, and a second all-to-all of the
//! same size brings the outputs back before the weighted combine.

use super::layout::Layout;
use super::shard::ParallelError;
use crate::comm::collective::{collective_cost, AlgorithmChoice, Collective};
use crate::comm::{Group, System};
use crate::graph::{OpGraph, Role, TensorId, TensorRole};
use crate::model::Transformer;
use crate::ops::{Communication, Op};
use crate::units::Bytes;

/// The expert-parallel group: `ep` ranks at a stride of t · c, the tensor- and
/// context-parallel degrees (the tensor-parallel ranks of one attention replica are
/// consecutive, then its context-parallel ranks: Megatron-Core's order tp-cp-ep-dp-pp), so a
/// node holds ⌊gpus_per_node / (t·c)⌋ of them.
fn group(layout: Layout, system: &System) -> Group {
    let stride = layout.tp.max(1).saturating_mul(layout.cp.max(1));
    let per_node = (system.gpus_per_node / stride).max(1);
    Group {
        ranks: layout.ep,
        ranks_per_node: per_node.min(layout.ep),
    }
}

fn is_expert(role: Role) -> bool {
    matches!(
        role,
        Role::ExpertGateProj
            | Role::ExpertUpProj
            | Role::ExpertActivation
            | Role::ExpertGateMul
            | Role::ExpertDownProj
    )
}

/// The routed rows the busiest device's experts run, against the T_r·k of the graph it takes,
/// and the experts per token that can land on one device.
///
/// The graph holds ⌈B/e⌉ sequences, but the e devices together hold only B: on average a
/// device receives T_r·k·B/(e·⌈B/e⌉) rows, and the busiest `imbalance` times that. It can
/// receive no more than every real token of the group once per expert it holds: B·T_s tokens
/// (T_s per sequence), each at most k_d = min(k, E/e) times. Returns (f, k_d) with the busiest
/// device's rows = f·T_r·k: f = min(imbalance·B/(e·⌈B/e⌉), B·k_d/(⌈B/e⌉·k)).
fn busiest_rows(imbalance: f64, batch: u64, e: u64, top_k: u64, local_experts: u64) -> (f64, u64) {
    let per_rank = batch.div_ceil(e).max(1);
    let real = batch as f64 / (per_rank * e) as f64;
    let k_d = top_k.min(local_experts).max(1);
    let cap = batch as f64 * k_d as f64 / (per_rank as f64 * top_k.max(1) as f64);
    ((imbalance * real).min(cap), k_d)
}

/// `graph` with its routed experts split `layout.ep` ways and the dispatch and combine
/// all-to-alls priced on `system`; `batch` is the step's sequences over the whole group (the
/// graph holds ⌈batch/ep⌉ of them). With ep = 1 the graph is returned as it is.
///
/// # Errors
/// A collective the fabric cannot carry.
pub fn shard_experts(
    graph: &OpGraph,
    model: &Transformer,
    layout: Layout,
    batch: u64,
    system: &System,
) -> Result<OpGraph, ParallelError> {
    let Some(moe) = model.variant.moe else {
        return Ok(graph.clone());
    };
    if layout.ep <= 1 {
        return Ok(graph.clone());
    }
    let e = u64::from(layout.ep);
    let (imb, k_d) = busiest_rows(
        layout.expert_imbalance,
        batch,
        e,
        moe.top_k,
        moe.experts / e,
    );
    // The real share of the sequences the graph holds (1 when ep divides the batch).
    let own = batch as f64 / (batch.div_ceil(e).max(1) * e) as f64;
    let group = group(layout, system);
    let tensors = graph.tensors();
    let mut share = vec![1.0f64; tensors.len()];
    for n in graph.nodes().iter().filter(|n| is_expert(n.role)) {
        for &o in n.outputs.iter() {
            share[o] = imb;
        }
        for &i in n.inputs.iter() {
            if tensors.get(i).is_some_and(|t| t.role == TensorRole::Weight) {
                share[i] = 1.0 / e as f64;
            }
        }
    }
    let mut out = OpGraph::new(graph.layers);
    for (t, f) in tensors.iter().zip(&share) {
        out.tensor_bytes(t.name, Bytes(t.bytes.get() * f), t.precision, t.role);
    }
    // The dispatched rows replace the routed input for the experts, the returned outputs the
    // experts' output for the combine; every other reader keeps its tensor.
    let mut remap: Vec<TensorId> = (0..tensors.len()).collect();
    let mut inputs: Vec<TensorId> = Vec::with_capacity(4);
    let mut routed: Option<TensorId> = None;
    for n in graph.nodes() {
        if is_expert(n.role) && routed.is_none() {
            if let (Some(&x), Op::ExpertGemm(g)) = (n.inputs.first(), n.op()) {
                // S: the busiest device's routed rows, f · T_r·k rows of d elements.
                let row_bytes = out.tensors()[x].bytes.get() / g.tokens.max(1) as f64;
                let bytes = Bytes(row_bytes * (g.tokens * g.top_k) as f64 * imb);
                let y = add_all_to_all(
                    &mut out,
                    "experts.dispatch",
                    Role::EpDispatch,
                    n.span(),
                    x,
                    bytes,
                    bytes,
                    group,
                    system,
                )?;
                remap[x] = y;
                routed = Some(x);
            }
        }
        inputs.clear();
        let reads_remapped = is_expert(n.role) || n.role == Role::MoeCombine;
        inputs.extend(
            n.inputs
                .iter()
                .map(|&i| if reads_remapped { remap[i] } else { i }),
        );
        let mut op = n.op().clone();
        match &mut op {
            Op::ExpertGemm(g) if is_expert(n.role) => {
                // The busiest device's f·T_r·k rows, as tokens of k_d experts each here.
                let rows = g.tokens as f64 * g.top_k as f64 * imb;
                g.experts /= e;
                g.top_k = k_d;
                g.tokens = (rows / k_d as f64).ceil() as u64;
            }
            Op::Elementwise(o) if is_expert(n.role) => {
                o.elements = (o.elements as f64 * imb).ceil() as u64;
            }
            _ => {}
        }
        out.node(n.name, n.role, n.span(), op, &inputs, &n.outputs);
        if n.role == Role::ExpertDownProj {
            if let Some(&y) = n.outputs.first() {
                // The busiest device returns its f · T_r·k rows, and receives its own tokens'
                // (T_r·k, or the real share of them when the group holds fewer than e·⌈B/e⌉
                // sequences).
                let sent = out.tensors()[y].bytes;
                let z = add_all_to_all(
                    &mut out,
                    "experts.combine",
                    Role::EpCombine,
                    n.span(),
                    y,
                    sent,
                    Bytes(sent.get() / imb * own),
                    group,
                    system,
                )?;
                remap[y] = z;
            }
            routed = None;
        }
    }
    Ok(out)
}

/// An all-to-all of `bytes` (S per rank) from tensor `x` into a new tensor of `received`
/// bytes; returns the new tensor.
#[allow(clippy::too_many_arguments)]
fn add_all_to_all(
    out: &mut OpGraph,
    name: &'static str,
    role: Role,
    span: crate::graph::Span,
    x: TensorId,
    bytes: Bytes,
    received: Bytes,
    group: Group,
    system: &System,
) -> Result<TensorId, ParallelError> {
    let cost = collective_cost(
        Collective::AllToAll,
        bytes,
        group,
        &system.fabric,
        AlgorithmChoice::Auto,
    )
    .map_err(ParallelError::Collective)?;
    let t = out.tensors()[x].clone();
    let y = out.tensor_bytes(t.name, received, t.precision, t.role);
    out.node(
        name,
        role,
        span,
        Op::Communication(Communication::of(&cost)),
        &[x],
        &[y],
    );
    Ok(y)
}
