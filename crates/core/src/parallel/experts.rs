//! Expert parallelism as a pass over the operator graph (GShard, Lepikhin et al. 2020;
//! DeepSeek-V3 technical report §3.4): the routed experts of a mixture of experts split over e
//! devices, E/e each, and two all-to-alls around them.
//!
//! The graph it takes is one device's under data-parallel attention (built for ⌈B/e⌉
//! sequences, T_r tokens). Each routed token goes to its k experts: a device sends T_r·k rows of
//! d elements (S = T_r·k·d·a bytes, of which (e−1)/e leave it: nccl-tests' all-to-all) and, with
//! routing balanced, receives as many; the busiest receives `imbalance` times that. Its expert
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

/// `graph` with its routed experts split `layout.ep` ways and the dispatch and combine
/// all-to-alls priced on `system`. With ep = 1 the graph is returned as it is.
///
/// # Errors
/// A collective the fabric cannot carry.
pub fn shard_experts(
    graph: &OpGraph,
    model: &Transformer,
    layout: Layout,
    system: &System,
) -> Result<OpGraph, ParallelError> {
    if layout.ep <= 1 || model.variant.moe.is_none() {
        return Ok(graph.clone());
    }
    let e = u64::from(layout.ep);
    let imb = layout.expert_imbalance;
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
                // S: the busiest device's routed rows, imbalance · T_r·k rows of d elements.
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
                g.experts /= e;
                g.tokens = (g.tokens as f64 * imb).ceil() as u64;
            }
            Op::Elementwise(o) if is_expert(n.role) => {
                o.elements = (o.elements as f64 * imb).ceil() as u64;
            }
            _ => {}
        }
        out.node(n.name, n.role, n.span(), op, &inputs, &n.outputs);
        if n.role == Role::ExpertDownProj {
            if let Some(&y) = n.outputs.first() {
                // The busiest device returns its imbalance · T_r·k rows, and receives its own
                // tokens' T_r·k.
                let sent = out.tensors()[y].bytes;
                let z = add_all_to_all(
                    &mut out,
                    "experts.combine",
                    Role::EpCombine,
                    n.span(),
                    y,
                    sent,
                    Bytes(sent.get() / imb),
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
