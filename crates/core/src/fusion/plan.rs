//! Building a fusion plan from rules, and pricing it.

use super::rules::{Preset, Rule};
use super::tile::{chain_tile, flash_tile, gemm_tile, stream_tile, TilePlan};
use crate::analysis::peak_for;
use crate::device::{Device, DeviceError};
use crate::graph::{OpGraph, Role, Span, TensorId, TensorRole};
use crate::ops::{Compute, Cost, FlashAttention, Op};
use crate::precision::Precision;
use crate::roofline::{Roof, RooflinePoint};
use crate::units::{Bytes, Seconds};
use serde::Serialize;

/// One kernel of a plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FusedKernel {
    /// Its operators' names joined with `+`.
    pub name: String,
    /// Indices of its nodes in the graph, in forward order.
    pub nodes: Vec<usize>,
    /// Rules that built it (empty for a single operator).
    pub rules: Vec<Rule>,
    /// FLOPs and HBM bytes of one execution.
    pub cost: Cost,
    /// The units it runs on: matrix units if it holds a GEMM or attention.
    pub compute: Compute,
    /// The blocks it runs in, or the prologue or epilogue (every node of a kernel shares it).
    pub span: Span,
    /// The tile it works on, for fused kernels.
    pub tile: Option<TilePlan>,
}

/// A fusion a rule wanted but the chip cannot hold on chip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejected {
    /// The rule.
    pub rule: Rule,
    /// The operators it would have fused.
    pub nodes: Vec<&'static str>,
    /// Why it was not applied.
    pub reason: String,
}

/// A partition of the graph into kernels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FusionPlan {
    /// Kernels in forward order.
    pub kernels: Vec<FusedKernel>,
    /// Fusions not applied, with the reason.
    pub rejected: Vec<Rejected>,
}

struct Groups {
    of: Vec<usize>,
    rules: Vec<Vec<Rule>>,
    tiles: Vec<Option<TilePlan>>,
    flash: Vec<Option<FlashAttention>>,
}

impl Groups {
    fn new(n: usize) -> Self {
        Groups {
            of: (0..n).collect(),
            rules: vec![Vec::new(); n],
            tiles: vec![None; n],
            flash: vec![None; n],
        }
    }
    fn members(&self, g: usize) -> Vec<usize> {
        (0..self.of.len()).filter(|&i| self.of[i] == g).collect()
    }
    fn merge(&mut self, a: usize, b: usize, rule: Rule, tile: Option<TilePlan>) -> usize {
        let (ga, gb) = (self.of[a], self.of[b]);
        let (keep, gone) = (ga.min(gb), ga.max(gb));
        if keep != gone {
            for g in self.of.iter_mut() {
                if *g == gone {
                    *g = keep;
                }
            }
            let moved = std::mem::take(&mut self.rules[gone]);
            self.rules[keep].extend(moved);
        }
        if !self.rules[keep].contains(&rule) {
            self.rules[keep].push(rule);
        }
        if tile.is_some() {
            self.tiles[keep] = tile;
        }
        keep
    }
}

/// Whether putting the groups of nodes `a` and `b` in one kernel would make the kernel graph
/// cyclic: some path leaves one group through a node outside both and comes back into the other.
fn would_cycle(graph: &OpGraph, g: &Groups, a: usize, b: usize) -> bool {
    let (ga, gb) = (g.of[a], g.of[b]);
    let in_pair = |i: usize| g.of[i] == ga || g.of[i] == gb;
    let n = graph.nodes().len();
    // Nodes reachable from the pair through at least one node outside it.
    let mut outside = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    for i in 0..n {
        if in_pair(i) {
            for &t in &graph.nodes()[i].outputs {
                for (c, _) in graph.consumers(t) {
                    if !in_pair(c) && !outside[c] {
                        outside[c] = true;
                        stack.push(c);
                    }
                }
            }
        }
    }
    while let Some(i) = stack.pop() {
        for &t in &graph.nodes()[i].outputs {
            for (c, _) in graph.consumers(t) {
                if in_pair(c) {
                    return true;
                }
                if !outside[c] {
                    outside[c] = true;
                    stack.push(c);
                }
            }
        }
    }
    false
}

fn is_gemm(op: &Op) -> bool {
    matches!(op, Op::Gemm(_))
}
fn is_vector(op: &Op) -> bool {
    matches!(
        op,
        Op::Elementwise(_)
            | Op::Rotary(_)
            | Op::KvCacheWrite(_)
            | Op::RmsNorm(_)
            | Op::LayerNorm(_)
    )
}
fn is_norm(op: &Op) -> bool {
    matches!(op, Op::RmsNorm(_) | Op::LayerNorm(_))
}
fn is_add(op: &Op) -> bool {
    matches!(op, Op::Elementwise(e) if e.inputs == 2 && e.flops_per_element == crate::ops::ADD_FLOPS_PER_ELEMENT)
}

fn act_precision(graph: &OpGraph) -> Precision {
    graph
        .nodes()
        .iter()
        .find_map(|n| match n.op() {
            Op::Gemm(g) => Some(g.a),
            _ => None,
        })
        .unwrap_or(Precision::Bf16)
}

/// Builds the plan `preset` gives for `graph` on a chip with `smem` bytes of shared memory per
/// SM (`None`: unknown, tiles not checked).
pub fn plan(graph: &OpGraph, preset: Preset, smem: Option<Bytes>) -> FusionPlan {
    let n = graph.nodes().len();
    let mut g = Groups::new(n);
    let mut rejected = Vec::new();
    // Fusion stays inside the decoder blocks, and a kernel's nodes run in the same blocks
    // (DeepSeek-V3's dense MLP of blocks 0–2 fuses with itself, never with the attention of
    // every block).
    let layer = |i: usize| graph.nodes()[i].span().in_blocks();
    let same = |i: usize, j: usize| graph.nodes()[i].span() == graph.nodes()[j].span();
    let a = act_precision(graph);
    for &rule in preset.rules() {
        match rule {
            Rule::FlashAttention => {
                let find = |role: Role| graph.find_role(role).map(|(i, _)| i);
                if let (Some(qk), Some(sm), Some(sv)) = (
                    find(Role::AttentionScores),
                    find(Role::AttentionSoftmax),
                    find(Role::AttentionValues),
                ) {
                    if let (Op::BatchedMatmul(q), Op::Softmax(_)) =
                        (graph.nodes()[qk].op(), graph.nodes()[sm].op())
                    {
                        let tile = flash_tile(q.k, q.a, smem);
                        if tile.fits {
                            // Only products batch·heads and batch·kv_heads enter the cost, so
                            // one "sequence" of batch·heads query heads is exact.
                            let fa = FlashAttention {
                                batch: 1,
                                heads: q.batch,
                                kv_heads: q.batch / q.shared.max(1),
                                head_dim: q.k,
                                q_len: q.m,
                                kv_len: q.n,
                                causal: true,
                                causal_count: crate::ops::CausalCount::Exact,
                                window: None,
                                v_head_dim: sv_dim(graph.nodes()[sv].op()).filter(|&v| v != q.k),
                                kv_shared: false,
                                block_q: tile.block_q,
                                act: q.a,
                                kv: q.b,
                            };
                            let k = g.merge(qk, sm, rule, Some(tile));
                            let k = g.merge(k, sv, rule, None);
                            g.flash[k] = Some(fa);
                        } else {
                            rejected.push(Rejected {
                                rule,
                                nodes: [qk, sm, sv].map(|i| graph.nodes()[i].name).to_vec(),
                                reason: over(&tile),
                            });
                        }
                    }
                }
            }
            Rule::HorizontalGemm => {
                for i in 0..n {
                    if !layer(i) || !is_gemm(graph.nodes()[i].op()) {
                        continue;
                    }
                    for j in (i + 1)..n {
                        if layer(j)
                            && same(i, j)
                            && is_gemm(graph.nodes()[j].op())
                            && graph.nodes()[j].inputs.first() == graph.nodes()[i].inputs.first()
                            && g.of[i] != g.of[j]
                            && !would_cycle(graph, &g, i, j)
                        {
                            let tile = gemm_tile(a, false, 0, smem);
                            g.merge(i, j, rule, Some(tile));
                        }
                    }
                }
            }
            Rule::NormPrologue => {
                for i in 0..n {
                    if !layer(i) || !matches!(graph.nodes()[i].op(), Op::RmsNorm(_)) {
                        continue;
                    }
                    let out = graph.nodes()[i].outputs[0];
                    let cons: Vec<usize> = graph.consumers(out).map(|(c, _)| c).collect();
                    let same_group = cons.windows(2).all(|w| g.of[w[0]] == g.of[w[1]]);
                    let same_span = cons.iter().all(|&c| same(i, c));
                    if !cons.is_empty()
                        && same_group
                        && same_span
                        && !would_cycle(graph, &g, i, cons[0])
                        && cons
                            .iter()
                            .all(|&c| layer(c) && is_gemm(graph.nodes()[c].op()))
                    {
                        let tile = gemm_tile(a, true, 0, smem);
                        if tile.fits {
                            g.merge(i, cons[0], rule, Some(tile));
                        } else {
                            rejected.push(Rejected {
                                rule,
                                nodes: vec![graph.nodes()[i].name],
                                reason: over(&tile),
                            });
                        }
                    }
                }
            }
            Rule::GemmEpilogue => {
                for i in 0..n {
                    let node = &graph.nodes()[i];
                    if !layer(i)
                        || !matches!(
                            node.op(),
                            Op::Elementwise(_) | Op::Rotary(_) | Op::KvCacheWrite(_)
                        )
                    {
                        continue;
                    }
                    // Inputs produced inside the block; all but external ones must come from one
                    // group holding a GEMM.
                    let producers: Vec<usize> = node
                        .inputs
                        .iter()
                        .filter_map(|&t| graph.producer(t).map(|(p, _)| p))
                        .filter(|&p| layer(p) && same(p, i))
                        .collect();
                    // The epilogue belongs to the GEMM kernel that made the latest input.
                    let Some(&first) = producers.iter().max() else {
                        continue;
                    };
                    let grp = g.of[first];
                    let has_gemm = g
                        .members(grp)
                        .iter()
                        .any(|&m| is_gemm(graph.nodes()[m].op()));
                    if !has_gemm || g.flash[grp].is_some() {
                        continue;
                    }
                    let from_group = producers.iter().filter(|&&p| g.of[p] == grp).count();
                    // Another in-block producer outside the group: the epilogue would need a tile
                    // of a tensor this kernel does not make; read it as an extra epilogue input
                    // only if it is the residual stream (an add).
                    let extra = producers.len() - from_group;
                    if extra > 0 && !is_add(node.op()) {
                        continue;
                    }
                    if would_cycle(graph, &g, first, i) {
                        continue;
                    }
                    let tile = gemm_tile(a, false, extra as u32, smem);
                    if tile.fits {
                        g.merge(first, i, rule, Some(tile));
                    } else {
                        rejected.push(Rejected {
                            rule,
                            nodes: vec![node.name],
                            reason: over(&tile),
                        });
                    }
                }
            }
            Rule::ElementwiseChain => {
                for i in 0..n {
                    let node = &graph.nodes()[i];
                    if !layer(i) || !is_vector(node.op()) || is_norm(node.op()) {
                        continue;
                    }
                    for &t in &node.inputs {
                        if let Some((p, pn)) = graph.producer(t) {
                            if layer(p)
                                && same(p, i)
                                && is_vector(pn.op())
                                && !is_norm(pn.op())
                                && g.of[p] != g.of[i]
                                && !g
                                    .members(g.of[p])
                                    .iter()
                                    .any(|&m| is_gemm(graph.nodes()[m].op()))
                                && !would_cycle(graph, &g, p, i)
                            {
                                let tile = stream_tile(
                                    super::tile::STREAM_BLOCK,
                                    (node.inputs.len() + pn.inputs.len()) as u32 + 1,
                                    smem,
                                );
                                g.merge(p, i, rule, Some(tile));
                            }
                        }
                    }
                }
            }
            Rule::ResidualNorm => {
                for i in 0..n {
                    let node = &graph.nodes()[i];
                    if !layer(i) || !is_norm(node.op()) {
                        continue;
                    }
                    let grp_has_gemm = g
                        .members(g.of[i])
                        .iter()
                        .any(|&m| is_gemm(graph.nodes()[m].op()));
                    if grp_has_gemm {
                        continue;
                    }
                    if let Some((p, pn)) = graph.producer(node.inputs[0]) {
                        if layer(p)
                            && is_add(pn.op())
                            && g.of[p] != g.of[i]
                            && !g
                                .members(g.of[p])
                                .iter()
                                .any(|&m| is_gemm(graph.nodes()[m].op()))
                            && !would_cycle(graph, &g, p, i)
                        {
                            let cols = match node.op() {
                                Op::RmsNorm(r) => r.cols,
                                Op::LayerNorm(l) => l.cols,
                                _ => 0,
                            };
                            let tile = stream_tile(cols, 3, smem);
                            if tile.fits {
                                g.merge(p, i, rule, Some(tile));
                            } else {
                                rejected.push(Rejected {
                                    rule,
                                    nodes: vec![pn.name, node.name],
                                    reason: over(&tile),
                                });
                            }
                        }
                    }
                }
            }
            Rule::UserChain => {}
        }
    }
    FusionPlan {
        kernels: kernels_from(graph, &g),
        rejected,
    }
}

fn over(t: &TilePlan) -> String {
    match t.capacity {
        Some(c) => format!(
            "{}: working set {:.0} B exceeds {:.0} B of shared memory per SM",
            t.tile,
            t.working_set.get(),
            c.get()
        ),
        None => t.tile.clone(),
    }
}

/// The value head size of an unfused S·V batched matmul (its N).
fn sv_dim(op: &Op) -> Option<u64> {
    match op {
        Op::BatchedMatmul(b) => Some(b.n),
        _ => None,
    }
}

fn kernels_from(graph: &OpGraph, g: &Groups) -> Vec<FusedKernel> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for i in 0..graph.nodes().len() {
        let grp = g.of[i];
        if seen.contains(&grp) {
            continue;
        }
        seen.push(grp);
        let nodes = g.members(grp);
        out.push(kernel(
            graph,
            &nodes,
            g.rules[grp].clone(),
            g.tiles[grp].clone(),
            g.flash[grp],
        ));
    }
    out
}

/// Prices a kernel made of `nodes` (see the module documentation for the formula).
fn kernel(
    graph: &OpGraph,
    nodes: &[usize],
    rules: Vec<Rule>,
    tile: Option<TilePlan>,
    flash: Option<FlashAttention>,
) -> FusedKernel {
    let inside = |i: usize| nodes.contains(&i);
    let name = nodes
        .iter()
        .map(|&i| graph.nodes()[i].name)
        .collect::<Vec<_>>()
        .join("+");
    let compute = nodes
        .iter()
        .map(|&i| graph.nodes()[i].compute())
        .find(|c| matches!(c, Compute::Matrix(_)))
        .unwrap_or(Compute::Vector);
    let span = graph.nodes()[nodes[0]].span();
    let cost = if let Some(fa) = flash {
        Op::FlashAttention(fa).cost()
    } else {
        let mut c: Cost = nodes.iter().map(|&i| graph.nodes()[i].cost()).sum();
        let mut touched: Vec<TensorId> = Vec::new();
        for &i in nodes {
            touched.extend(graph.nodes()[i].inputs.iter().copied());
            touched.extend(graph.nodes()[i].outputs.iter().copied());
        }
        touched.sort_unstable();
        touched.dedup();
        for t in touched {
            let bytes = graph.tensors()[t].bytes;
            let readers_in = nodes
                .iter()
                .filter(|&&i| graph.nodes()[i].inputs.contains(&t))
                .count() as f64;
            let made_inside = graph.producer(t).is_some_and(|(p, _)| inside(p));
            if made_inside {
                c.bytes_read = c.bytes_read - bytes * readers_in;
                let needed_outside = graph.consumers(t).any(|(j, _)| !inside(j));
                let persistent = graph.tensors()[t].role != TensorRole::Activation;
                let sink = graph.consumers(t).next().is_none();
                if !needed_outside && !persistent && !sink {
                    c.bytes_written = c.bytes_written - bytes;
                }
            } else if readers_in > 1.0 {
                c.bytes_read = c.bytes_read - bytes * (readers_in - 1.0);
            }
        }
        c
    };
    FusedKernel {
        name,
        nodes: nodes.to_vec(),
        rules,
        cost,
        compute,
        span,
        tile,
    }
}

/// Every node of `graph` as one user-named kernel working on `tile`, fit or not.
pub fn fuse_all(graph: &OpGraph, tile: &TilePlan) -> FusionPlan {
    let all: Vec<usize> = (0..graph.nodes().len()).collect();
    let k = kernel(graph, &all, vec![Rule::UserChain], Some(tile.clone()), None);
    FusionPlan {
        kernels: vec![k],
        rejected: vec![],
    }
}

/// Fuses every node of `graph` into one kernel, as a user-named chain, if its widest
/// intermediate fits on chip; returns the plan and the tile checked.
pub fn plan_chain(
    graph: &OpGraph,
    widest: u64,
    a: Precision,
    smem: Option<Bytes>,
) -> (FusionPlan, TilePlan) {
    let tile = chain_tile(widest, a, smem);
    let all: Vec<usize> = (0..graph.nodes().len()).collect();
    if tile.fits {
        let k = kernel(graph, &all, vec![Rule::UserChain], Some(tile.clone()), None);
        (
            FusionPlan {
                kernels: vec![k],
                rejected: vec![],
            },
            tile,
        )
    } else {
        let g = Groups::new(graph.nodes().len());
        let rejected = vec![Rejected {
            rule: Rule::UserChain,
            nodes: graph.nodes().iter().map(|n| n.name).collect(),
            reason: over(&tile),
        }];
        (
            FusionPlan {
                kernels: kernels_from(graph, &g),
                rejected,
            },
            tile,
        )
    }
}

/// A plan's totals on a chip: per block and per forward pass.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FusionSummary {
    /// Kernels of one block: those in the blocks per forward pass ÷ blocks (a mean where the
    /// blocks differ, as DeepSeek-V3's dense and MoE blocks do).
    pub kernels_per_layer: f64,
    /// HBM traffic of one block (the same mean).
    pub cost_per_layer: Cost,
    /// Roofline time of one block (the same mean).
    pub time_per_layer: Seconds,
    /// Kernels per forward pass.
    pub kernels: u64,
    /// FLOPs and HBM bytes per forward pass.
    pub cost: Cost,
    /// Σ roofline time per forward pass.
    pub time: Seconds,
    /// Launch overhead per forward pass: kernels × the overhead of one launch.
    pub launch_overhead: Seconds,
    /// Each kernel on the roofline (one execution), in plan order.
    pub points: Vec<RooflinePoint>,
}

impl FusionSummary {
    /// Roofline time plus launch overhead.
    pub fn time_with_launch(&self) -> Seconds {
        self.time + self.launch_overhead
    }
}

/// Prices `plan` on `device`: each kernel on the roofline of the precision it computes in
/// (`act` for vector kernels on chips without an fp32 figure), summed per block and per pass.
///
/// # Errors
/// The chip lacks the peak or bandwidth needed.
pub fn evaluate_plan(
    plan: &FusionPlan,
    layers: u64,
    act: Precision,
    device: &Device,
    launch: Seconds,
) -> Result<FusionSummary, DeviceError> {
    let bandwidth = device.bandwidth()?;
    let mut s = FusionSummary {
        kernels_per_layer: 0.0,
        cost_per_layer: Cost::default(),
        time_per_layer: Seconds::ZERO,
        kernels: 0,
        cost: Cost::default(),
        time: Seconds::ZERO,
        launch_overhead: Seconds::ZERO,
        points: Vec::with_capacity(plan.kernels.len()),
    };
    for k in &plan.kernels {
        let peak = peak_for(device, k.compute, act)?;
        let p = Roof { peak, bandwidth }.evaluate(&k.cost);
        let n = k.span.count();
        if k.span.in_blocks() {
            let share = n as f64 / layers.max(1) as f64;
            s.kernels_per_layer += share;
            s.cost_per_layer += k.cost * share;
            s.time_per_layer += p.time * share;
        }
        s.kernels += n;
        s.cost += k.cost * n as f64;
        s.time += p.time * n as f64;
        s.points.push(p);
    }
    // kernels × launch, once: as the analysis counts it, so the unfused plan's launch overhead
    // is the analysis's to the last digit.
    s.launch_overhead = launch * s.kernels as f64;
    Ok(s)
}
