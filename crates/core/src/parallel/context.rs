//! Context parallelism as a pass over the operator graph: ring attention (Liu et al. 2023,
//! "Ring Attention with Blockwise Transformers", arXiv 2310.01889) over c devices, with the
//! load-balanced causal split of Megatron-Core's context parallelism and Llama 3 (Dubey et
//! al. 2024, §3.3.2).
//!
//! **The split.** Each prompt of s tokens is cut into 2c chunks of q = ⌈s/2c⌉ tokens (padded
//! to a multiple of 2c: Megatron-Core asks the sequence to be divisible by 2c); device i holds
//! chunks i and 2c − 1 − i, s_r = 2q tokens ([`Layout::cp_tokens`]). Its graph is the graph of
//! its s_r tokens ([`super::analysis`] builds it for that workload): every linear, norm,
//! activation, rotary and KV-cache write on 1/c of the tokens, its weights whole (or as tensor
//! parallelism splits them: the passes compose), its KV cache its own s_r tokens' share.
//!
//! **Attention.** Under a causal mask chunk j's queries see the keys of chunks 0..=j. Device
//! i's two chunks see i + 1 and 2c − i chunks: the same work on every device, and together
//! 1/c of the causal pairs:
//!
//! - its own block (step 0): its s_r queries against its s_r keys, causal: s_r·(s_r + 1)/2 =
//!   2q² + q pairs (the two chunks' own triangles and the late chunk against the early one),
//!   the decoder's attention of s_r tokens as it stands;
//! - each of the c − 1 blocks that arrive (steps 1..c−1): from a device j < i, both chunks of
//!   queries see the block's first chunk; from j > i, the late chunk sees the whole block:
//!   q·2q = 2q² pairs, no mask, either way. The pass adds them as one kernel run c − 1 times
//!   (batch × (c − 1)): q queries against the 2q keys of the block.
//!
//! In all 2c·q² + q = s·(s + 1)/(2c) pairs per device with s = 2c·q: exactly 1/c of
//! [`crate::ops::causal_pairs`]`(s, s)`. Unfused (eager) attention computes every score,
//! masked or not: s_r × s_r scores per step, c steps, s²/c in all, again 1/c of the single
//! device's s².
//!
//! **The exchange.** Ring attention passes the K/V blocks round a ring: in each of c − 1 steps
//! every device sends the block it holds to the next and receives one from the one before.
//! One block is S = 2·B·s_r·g_r·e·c bytes (K and V of its s_r tokens, g_r KV heads a rank,
//! head size e, c bytes per KV element), the output of the KV-cache write. Each step is a
//! send/recv of S priced on the fabric ([`collective_cost`], point to point: α + S/B), between
//! neighbours in a node or, when the ring spans nodes, across the network (the slowest hop
//! bounds each step); the node runs the c − 1 steps: (c − 1)·(α + S/B), traffic (c − 1)·S.
//! A ring all-gather of the c blocks sends the same (c − 1)/c of c·S per rank, but priced as
//! NCCL's all-gather it would pay one base latency for all its steps and, across nodes, spread
//! over every NIC rail: ring attention's c − 1 rounds of send/recv get neither, so they are
//! priced as such. The K/V arrive while the attention runs: step k's attention hides the
//! transfer of block k + 1 ([`mod@super::schedule`]). The device keeps two blocks of received K/V
//! (the one attended and the one in flight).
//!
//! Not modelled: multi-head latent attention (its exchange would be the latent, re-expanded on
//! every device; refused by [`Layout::validate`]), sliding windows shorter than the prompt
//! (refused by [`Layout::validate_for`]), decode (context parallelism splits a prompt).

use super::layout::{Layout, LayoutError};
use super::shard::ParallelError;
use crate::comm::collective::{collective_cost, AlgorithmChoice, Collective};
use crate::comm::{Group, System};
use crate::graph::{OpGraph, Role, TensorId, TensorRole};
use crate::ops::{Communication, Op};

/// Where the context-parallel ranks sit: c ranks at a stride of the tensor-parallel degree (the
/// tensor-parallel ranks of one device's share are consecutive; Megatron-Core's order
/// tp-cp-ep-dp-pp), so a node holds ⌊gpus_per_node / t⌋ of them. Returns the ring (for
/// display) and one hop of it: two neighbours in a node, or across the network when the ring
/// spans nodes.
pub(crate) fn ring_groups(layout: Layout, system: &System) -> (Group, Group) {
    let per_node = (system.gpus_per_node / layout.tp.max(1)).max(1);
    let ring = Group {
        ranks: layout.cp,
        ranks_per_node: per_node.min(layout.cp),
    };
    let spans = layout.cp > per_node;
    let hop = Group {
        ranks: 2,
        ranks_per_node: if spans { 1 } else { 2 },
    };
    (ring, hop)
}

/// The remote-block name of an attention node doing `role`.
fn remote_name(role: Role) -> &'static str {
    match role {
        Role::AttentionScores => "qk_matmul.cp_remote",
        Role::AttentionSoftmax => "softmax.cp_remote",
        Role::AttentionValues => "sv_matmul.cp_remote",
        _ => "attention.cp_remote",
    }
}

/// The name of a per-step tensor a remote-block node doing `role` writes.
fn remote_tensor(role: Role) -> &'static str {
    match role {
        Role::AttentionScores => "scores.cp_remote",
        Role::AttentionSoftmax => "probs.cp_remote",
        _ => "attention.cp_remote_partial",
    }
}

/// The operator that runs the c − 1 arriving blocks of the local attention operator `op`
/// (its own block, s_r queries against s_r keys): fused, q = s_r/2 queries against the 2q keys
/// of a block, unmasked, `steps` times; unfused, the same s_r × s_r kernels `steps` times.
fn remote_op(op: &Op, steps: u64) -> Op {
    let mut op = op.clone();
    match &mut op {
        Op::FlashAttention(o) => {
            o.batch *= steps;
            o.kv_len = o.q_len;
            o.q_len /= 2;
            o.causal = false;
            // A window is refused unless it covers the prompt: no key of a block lies
            // outside it.
            o.window = None;
        }
        Op::BatchedMatmul(o) => o.batch *= steps,
        Op::Softmax(o) => o.rows *= steps,
        _ => {}
    }
    op
}

/// `graph` (one device's graph of its s_r = [`Layout::cp_tokens`] tokens, after the tensor and
/// expert passes) with ring attention over `layout.cp` devices: before each attention, the
/// ring exchange of its K/V block ([`Role::CpRingKv`], c − 1 send/recv steps priced on
/// `system`'s fabric); after it, the c − 1 arriving blocks' attention. With cp = 1 the graph
/// is returned as it is.
///
/// # Errors
/// An attention without a KV-cache write before it to send
/// ([`LayoutError::ContextUnsupported`]); a send the fabric cannot carry.
pub fn shard_context(
    graph: &OpGraph,
    layout: Layout,
    system: &System,
) -> Result<OpGraph, ParallelError> {
    if layout.cp <= 1 {
        return Ok(graph.clone());
    }
    let steps = u64::from(layout.cp) - 1;
    let (ring, hop) = ring_groups(layout, system);
    let tensors = graph.tensors();
    let nodes = graph.nodes();
    let mut out = OpGraph::new(graph.layers);
    for t in tensors {
        out.tensor_bytes(t.name, t.bytes, t.precision, t.role);
    }
    let mut kv_written: Option<TensorId> = None;
    let mut block: Option<(usize, TensorId)> = None;
    let mut ins: Vec<TensorId> = Vec::with_capacity(4);
    let mut outs: Vec<TensorId> = Vec::with_capacity(4);
    // The per-step tensors of one remote block: (local, remote).
    let mut step_tensors: Vec<(TensorId, TensorId)> = Vec::with_capacity(4);
    for (i, n) in nodes.iter().enumerate() {
        let core = n.role.is_attention_core();
        let starts = core && !(i > 0 && nodes[i - 1].role.is_attention_core());
        if starts {
            let x = kv_written.ok_or(ParallelError::Layout(LayoutError::ContextUnsupported {
                cp: layout.cp,
                what: "an attention with no KV-cache write before it",
            }))?;
            let t = out.tensors()[x].clone();
            // S: one block, K and V of this device's tokens.
            let cost = collective_cost(
                Collective::SendRecv,
                t.bytes,
                hop,
                &system.fabric,
                AlgorithmChoice::Auto,
            )
            .map_err(ParallelError::Collective)?;
            let k = steps as f64;
            let comm = Communication {
                group: ring,
                traffic: cost.traffic * k,
                latency: cost.latency * k,
                transfer: cost.transfer * k,
                ..Communication::of(&cost)
            };
            // Two blocks held: the one attended and the one in flight.
            let buf = out.tensor_bytes(
                "kv_ring",
                t.bytes * 2.0,
                t.precision,
                TensorRole::Activation,
            );
            out.node(
                "attention.cp_ring_kv",
                Role::CpRingKv,
                n.span(),
                Op::Communication(comm),
                &[x],
                &[buf],
            );
            block = Some((i, buf));
        }
        out.node(
            n.name,
            n.role,
            n.span(),
            n.op().clone(),
            &n.inputs,
            &n.outputs,
        );
        if n.role == Role::KvCacheWrite {
            kv_written = n.outputs.first().copied();
        }
        let ends = core && !nodes.get(i + 1).is_some_and(|m| m.role.is_attention_core());
        let Some((first, buf)) = block.filter(|_| ends) else {
            continue;
        };
        // The arriving blocks: the same kernels reading the received K/V, their per-step
        // tensors their own, writing (accumulating into) the same output.
        step_tensors.clear();
        for m in &nodes[first..=i] {
            ins.clear();
            for &x in m.inputs.iter() {
                let y = if tensors
                    .get(x)
                    .is_some_and(|t| t.role == TensorRole::KvCache)
                {
                    buf
                } else {
                    step_tensors
                        .iter()
                        .find(|(l, _)| *l == x)
                        .map_or(x, |&(_, r)| r)
                };
                ins.push(y);
            }
            outs.clear();
            for &x in m.outputs.iter() {
                let within = tensors
                    .get(x)
                    .and_then(|t| t.last_read())
                    .is_some_and(|r| r <= i);
                if within {
                    let t = &tensors[x];
                    let y = out.tensor_bytes(remote_tensor(m.role), t.bytes, t.precision, t.role);
                    step_tensors.push((x, y));
                    outs.push(y);
                } else {
                    outs.push(x);
                }
            }
            out.node(
                remote_name(m.role),
                m.role,
                m.span(),
                remote_op(m.op(), steps),
                &ins,
                &outs,
            );
        }
        block = None;
    }
    Ok(out)
}
