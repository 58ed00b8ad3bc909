//! One micro-batch of a training step on one device: the sharded forward graph with its loss,
//! the backward pass and recomputation over it, every node priced on the chip or its link,
//! and the pieces a pipeline stage sums.
//!
//! The forward graph is [`crate::parallel::analyze_parallel`]'s for the micro-batch (tensor,
//! sequence, expert and context parallelism applied; pipeline stages are the caller's), with
//! lm_head at every position ([`Logits::All`]) and two changes a training step makes:
//! - the loss, softmax cross-entropy over the logits, is a node of its own ([`Role::Loss`]: a
//!   softmax over the T × V/t logits the device holds; its backward, softmax − one-hot, is the
//!   softmax's gradient);
//! - under tensor parallelism the logits are not gathered: Megatron-LM's vocabulary-parallel
//!   cross-entropy reduces three T-element vectors (max, sum of exponentials, target logit)
//!   instead of gathering T × V logits (Shoeybi et al. 2019, §3; `vocab_parallel_cross_entropy`);
//!   those reductions (12·T bytes) are not counted.
//!
//! Each node of the step's graph becomes a [`Piece`]: its span, its pass, its time (the
//! roofline bound, or an estimate at an [`crate::pricing::Efficiency`]: [`Pricing`]), its time at the dense peak and the
//! [`Reason`] the rest of its time is lost to. Collectives are on the critical path (a
//! tensor-parallel all-reduce feeds the next kernel; Megatron's tensor-parallel collectives
//! are not overlapped with compute), except context parallelism's K/V ring, which its
//! attention hides up to the attention's time.

use super::backward::{backward, Recompute};
use super::waterfall::Reason;
use super::TrainError;
use crate::analysis::{walk, ChipRoofs, OpRow};
use crate::comm::System;
use crate::graph::{Grad, Node, OpGraph, Pass, Role, Span};
use crate::model::Transformer;
use crate::ops::{Compute, Op, Softmax};
use crate::parallel::{analyze_parallel, Layout, ParallelAnalysisError};
use crate::pricing::Pricing;
use crate::units::{to_f64, Flop, FlopPerSec};
use crate::workload::{Logits, Precisions, Stage, Workload};
use std::fmt;

/// The pass of a training step a piece runs in, as a pipeline schedules them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The forward pass (F).
    Forward,
    /// A recomputed forward node: run at the start of the backward (part of B).
    Recompute,
    /// An input gradient (B).
    Input,
    /// A weight gradient (W).
    Weight,
}

/// One node of a micro-batch's step, priced once (one execution).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Piece {
    /// Where it runs: the blocks, the prologue or the epilogue.
    pub span: Span,
    /// Its pass.
    pub phase: Phase,
    /// What its time beyond [`Piece::ideal`] is lost to.
    pub reason: Reason,
    /// Its time, s (bound or estimate; a collective's exposed part).
    pub time: f64,
    /// Its FLOPs at the dense peak, s: the model's FLOPs for a forward or gradient node, the
    /// recomputation's for a recomputed one.
    pub ideal: f64,
    /// Its FLOPs.
    pub flops: f64,
    /// The launch overhead of its kernel, s.
    pub launch: f64,
}

impl Piece {
    /// Executions on a pipeline stage holding blocks `first..first + blocks` (0-based), the
    /// first stage holding the prologue and the last the epilogue.
    #[inline]
    pub fn on_stage(&self, first: u64, blocks: u64, is_first: bool, is_last: bool) -> u64 {
        match self.span {
            Span::Blocks { first: a, last: b } => {
                let lo = a.max(first);
                let hi = b.min((first + blocks).saturating_sub(1));
                if blocks == 0 || hi < lo {
                    0
                } else {
                    hi - lo + 1
                }
            }
            Span::Prologue => u64::from(is_first),
            Span::Epilogue => u64::from(is_last),
            Span::StageBoundaries { .. } => 0,
        }
    }
}

/// Why a micro-batch's step cannot be built or priced.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MicroBatchError {
    /// The forward analysis (model, workload, layout, system).
    Parallel(ParallelAnalysisError),
    /// The backward pass.
    Train(TrainError),
    /// The chip has no peak or bandwidth the step needs.
    Device(crate::device::DeviceError),
}

impl fmt::Display for MicroBatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MicroBatchError::Parallel(e) => e.fmt(f),
            MicroBatchError::Train(e) => e.fmt(f),
            MicroBatchError::Device(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for MicroBatchError {}

/// What shapes one micro-batch's step on one device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MicroBatchShape {
    /// Tensor, expert, context and sequence parallelism (its `pp` is ignored: stages are the
    /// pipeline's).
    pub layout: Layout,
    /// Sequences per micro-batch on each device, b.
    pub micro_batch: u64,
    /// Tokens per sequence, s.
    pub seq_len: u64,
    /// Which activations are recomputed.
    pub recompute: Recompute,
    /// Number formats.
    pub precisions: Precisions,
    /// Attention by FlashAttention (one fused kernel forward and backward).
    pub flash_attention: bool,
}

/// One micro-batch's training step on one device, priced.
#[derive(Debug, Clone, PartialEq)]
pub struct MicroBatch {
    /// The step's graph: forward (with the loss), recomputation, gradients.
    pub graph: OpGraph,
    /// One row per node of [`MicroBatch::graph`], at the roofline bound.
    pub rows: Vec<OpRow>,
    /// One piece per node, priced as asked for (the bound has no launch cost).
    pub pieces: Vec<Piece>,
    /// The dense peak MFU divides by: the matrix peak of the activation precision, FLOP/s.
    pub peak: FlopPerSec,
    /// Model FLOPs per token of the unsharded model at the shape's sequence length
    /// ([`crate::mfu::model_flops_per_token`]): what MFU counts, whatever the layout and the
    /// attention kernel the graph runs.
    pub model_flops_per_token: Flop,
}

/// Builds and prices one micro-batch of `model` on a device of `system` shaped as `shape`,
/// at `efficiency` (module docs).
///
/// # Errors
/// The model, workload, layout or system ([`analyze_parallel`]'s errors), or a chip without a
/// peak the step needs.
pub fn micro_batch(
    model: &Transformer,
    system: &System,
    shape: &MicroBatchShape,
    pricing: Pricing<'_>,
) -> Result<MicroBatch, MicroBatchError> {
    let layout = Layout {
        pp: 1,
        ..shape.layout
    };
    let workload = Workload {
        stage: Stage::Prefill,
        batch: shape
            .micro_batch
            .saturating_mul(u64::from(layout.ep.max(1))),
        seq_len: shape.seq_len,
        context: 0,
        cached: 0,
        precisions: shape.precisions,
        flash_attention: shape.flash_attention,
        logits: Logits::All,
    };
    let forward = analyze_parallel(
        model,
        &workload,
        system,
        layout,
        crate::memory::Reserve::DEFAULT,
    )
    .map_err(MicroBatchError::Parallel)?
    .graph;
    let forward = with_loss(&forward, shape.precisions);
    let graph = backward(&forward, shape.recompute).map_err(MicroBatchError::Train)?;
    let roofs =
        ChipRoofs::new(&system.chip, shape.precisions.act).map_err(MicroBatchError::Device)?;
    let peak = roofs
        .peak(Compute::Matrix(shape.precisions.act))
        .map_err(MicroBatchError::Device)?;
    let mut rows = Vec::with_capacity(graph.nodes().len());
    walk(&graph, &roofs, |r| rows.push(r)).map_err(MicroBatchError::Device)?;
    let mut pieces: Vec<Piece> = graph
        .nodes()
        .iter()
        .zip(&rows)
        .map(|(n, r)| piece(n, r, peak, pricing))
        .collect();
    hide_ring(&mut pieces, &graph);
    let model_flops_per_token = crate::mfu::model_flops_per_token(model, shape.seq_len)
        .map_err(|e| MicroBatchError::Parallel(ParallelAnalysisError::Analysis(e)))?;
    Ok(MicroBatch {
        graph,
        rows,
        pieces,
        peak,
        model_flops_per_token,
    })
}

/// `forward` with the logits kept sharded (the tensor-parallel gather after lm_head dropped)
/// and the loss after lm_head.
fn with_loss(forward: &OpGraph, precisions: Precisions) -> OpGraph {
    let head = forward
        .nodes()
        .iter()
        .find(|n| n.role == Role::LmHead)
        .and_then(|n| match n.op() {
            Op::Gemm(g) => n.outputs.first().map(|&x| (x, g.m, g.n)),
            _ => None,
        });
    let mut out = OpGraph::new(forward.layers);
    for t in forward.tensors() {
        out.tensor_bytes(t.name, t.bytes, t.precision, t.role);
    }
    for n in forward.nodes() {
        let gathers_logits =
            n.role == Role::TpAllGather && head.is_some_and(|(x, _, _)| n.inputs.contains(&x));
        if !gathers_logits {
            out.push(n.clone());
        }
    }
    if let Some((x, tokens, vocab)) = head {
        out.push(Node::new(
            "loss",
            Role::Loss,
            Span::Epilogue,
            Op::Softmax(Softmax {
                rows: tokens,
                cols: vocab,
                scale_mask: false,
                precision: precisions.act,
            }),
            &[x],
            &[],
        ));
    }
    out
}

fn piece(node: &Node, row: &OpRow, dense: FlopPerSec, pricing: Pricing<'_>) -> Piece {
    let phase = match node.pass() {
        Pass::Forward => Phase::Forward,
        Pass::Recompute => Phase::Recompute,
        Pass::Backward(Grad::Input) => Phase::Input,
        Pass::Backward(Grad::Weight) => Phase::Weight,
    };
    let flops = row.cost.flops.get();
    let ideal = if dense.get() > 0.0 {
        flops / dense.get()
    } else {
        0.0
    };
    // Priced as every command prices a node ([`crate::pricing::Pricing::row_time`]); the
    // reason its time is lost to follows from which roof bounds it.
    let time = pricing.row_time(row).get();
    let reason = match row.compute {
        Compute::Network => communication_reason(row.role),
        Compute::Matrix(_) => {
            let memory =
                row.cost.bytes().get() / (row.roof.bandwidth.get() * pricing.efficiency().memory);
            if memory >= time {
                Reason::MemoryBound
            } else {
                Reason::MatmulBelowPeak
            }
        }
        Compute::Vector => Reason::NonMatmul,
    };
    // The bound has no launch cost: launches are the estimate's named addend
    // ([`crate::pricing`]).
    let launch = if pricing.is_bound() {
        0.0
    } else {
        row.launch_overhead.get()
    };
    Piece {
        span: row.span,
        phase,
        reason,
        time: if time.is_finite() { time } else { 0.0 },
        ideal,
        flops,
        launch,
    }
}

fn communication_reason(role: Role) -> Reason {
    match role {
        Role::EpDispatch | Role::EpCombine => Reason::ExpertParallel,
        Role::CpRingKv => Reason::ContextParallel,
        Role::PpSendRecv => Reason::PipelineCommunication,
        _ => Reason::TensorParallel,
    }
}

/// A K/V ring runs beside the attention it feeds (ring attention, Liu et al. 2023): only its
/// time beyond the attention kernels of its pass and span is exposed.
fn hide_ring(pieces: &mut [Piece], graph: &OpGraph) {
    let nodes = graph.nodes();
    for i in 0..pieces.len() {
        if nodes.get(i).map(|n| n.role) != Some(Role::CpRingKv) {
            continue;
        }
        let (phase, span) = (pieces[i].phase, pieces[i].span);
        let attention: f64 = nodes
            .iter()
            .zip(pieces.iter())
            .filter(|(n, p)| n.role.is_attention_core() && p.phase == phase && p.span == span)
            .map(|(_, p)| p.time)
            .sum();
        pieces[i].time = (pieces[i].time - attention).max(0.0);
    }
}

/// Sums over a micro-batch's pieces on one pipeline stage.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StageSums {
    /// F: the forward pieces' time with their launches, s.
    pub forward: f64,
    /// B: the recomputed and input-gradient pieces' time with their launches, s.
    pub backward: f64,
    /// W: the weight-gradient pieces' time with their launches, s.
    pub weight: f64,
    /// FLOPs the forward and gradient kernels execute (the graph's, not the model FLOPs
    /// convention's: [`MicroBatch::model_flops_per_token`]).
    pub executed_flops: f64,
    /// Recomputed FLOPs.
    pub recompute_flops: f64,
    /// [`StageSums::executed_flops`] at the dense peak, each piece's at most its time, s.
    pub ideal: f64,
    /// Seconds lost to each of [`Reason::PREDICTED`].
    pub losses: [f64; 12],
}

/// The sums of `pieces` on a stage holding blocks `first..first + blocks`.
pub fn stage_sums(
    pieces: &[Piece],
    first: u64,
    blocks: u64,
    is_first: bool,
    is_last: bool,
) -> StageSums {
    let mut s = StageSums::default();
    let slot = |r: Reason| r.slot().unwrap_or(0);
    for p in pieces {
        let k = p.on_stage(first, blocks, is_first, is_last);
        if k == 0 {
            continue;
        }
        let k = to_f64(k);
        let time = (p.time + p.launch) * k;
        match p.phase {
            Phase::Forward => s.forward += time,
            Phase::Recompute | Phase::Input => s.backward += time,
            Phase::Weight => s.weight += time,
        }
        s.losses[slot(Reason::Launch)] += p.launch * k;
        let ideal = p.ideal.min(p.time) * k;
        if p.phase == Phase::Recompute {
            s.recompute_flops += p.flops * k;
            s.losses[slot(Reason::Recompute)] += ideal;
        } else {
            s.executed_flops += p.flops * k;
            s.ideal += ideal;
        }
        s.losses[slot(p.reason)] += p.time * k - ideal;
    }
    s
}
