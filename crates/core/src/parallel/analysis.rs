//! One stage of a model on many devices: the single-device graph sharded
//! ([`mod@super::shard`]), its experts split ([`super::experts`]), its prompt split by ring
//! attention ([`super::context`]), the pipeline's boundaries added, every node evaluated on the
//! chip or its link, the step scheduled on two streams, and the memory one device holds.
//!
//! With p pipeline stages the graph keeps every block: its rows are the path of one step
//! through the stages, each stage on its own devices, so its time is the latency of one step
//! (Σ stages + the sends between them), and a device holds ⌈L/p⌉ blocks at most. The batch goes
//! through the stages as one: a pipeline here buys memory, not throughput (splitting the batch
//! into micro-batches that keep every stage busy is not modelled yet).

use super::context::shard_context;
use super::experts::shard_experts;
use super::layout::Layout;
use super::schedule::{schedule, Schedule};
use super::shard::{shard, ParallelError};
use crate::analysis::{analyze, walk, AnalysisError, ChipRoofs, OpRow, StageAnalysis, Totals};
use crate::comm::collective::{collective_cost, AlgorithmChoice, Collective};
use crate::comm::{Group, System};
use crate::graph::{OpGraph, Role, Span, TensorRole};
use crate::memory::{MemoryFootprint, Reserve};
use crate::model::Transformer;
use crate::ops::{Communication, Op};
use crate::units::{Bytes, Seconds};
use crate::workload::Workload;
use serde::Serialize;
use std::fmt;

/// Why a parallel analysis could not be made.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ParallelAnalysisError {
    /// The single-device analysis failed (model, workload, chip).
    Analysis(AnalysisError),
    /// The layout or the system.
    Parallel(ParallelError),
}

impl fmt::Display for ParallelAnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParallelAnalysisError::Analysis(e) => e.fmt(f),
            ParallelAnalysisError::Parallel(e) => e.fmt(f),
        }
    }
}
impl std::error::Error for ParallelAnalysisError {}

/// One stage on a system under a layout.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParallelStage {
    /// The layout.
    pub layout: Layout,
    /// Devices the layout uses (t · p · e · c).
    pub devices: u64,
    /// The workload.
    pub workload: Workload,
    /// The graph of one device (not serialised: the rows carry it).
    #[serde(skip)]
    pub graph: OpGraph,
    /// One row per node of [`ParallelStage::graph`], collectives among them.
    pub rows: Vec<OpRow>,
    /// Serial sums over the rows (compute and communication one after the other).
    pub totals: Totals,
    /// The step on a compute and a communication stream.
    pub schedule: Schedule,
    /// What one device holds (the largest pipeline stage).
    pub memory: MemoryFootprint,
    /// The same stage on one device, for what the parallelism costs.
    #[serde(skip)]
    pub single: StageAnalysis,
    /// Caveats.
    pub warnings: Vec<String>,
}

impl ParallelStage {
    /// The collective of row `i`, if it is one: what it sends, over which ranks and links.
    pub fn communication(&self, i: usize) -> Option<&Communication> {
        match self.graph.nodes().get(i).map(|n| n.op()) {
            Some(Op::Communication(c)) => Some(c),
            _ => None,
        }
    }

    /// The step's roofline bound: the scheduled critical path, no launch cost, seconds
    /// ([`crate::pricing`]).
    pub fn step_time(&self) -> Seconds {
        self.schedule.step
    }

    /// The launch and host overhead of the step, seconds: the named addend beside the bound
    /// ([`crate::pricing::Launches`], one launch per kernel).
    pub fn launch_and_host(&self) -> Seconds {
        self.totals.launch_overhead
    }

    /// Tokens a replica finishes per second: the step's tokens over the step time.
    pub fn tokens_per_s(&self) -> f64 {
        self.workload.tokens() as f64 / self.step_time().get()
    }

    /// What the parallelism costs: this step time against the single device's divided by the
    /// devices (1 = perfect scaling; 2 = half the devices' worth is lost).
    pub fn scaling_cost(&self) -> f64 {
        let ideal = self.single.totals.time.get() / self.devices as f64;
        self.step_time().get() / ideal
    }
}

/// Analyses `workload` of `model` on `system` under `layout`, keeping `reserve` of each
/// device's memory.
///
/// Each device builds the graph of its share of the workload: ⌈B/e⌉ sequences under expert
/// parallelism (attention data-parallel over the e devices), and [`Layout::cp_tokens`] of each
/// prompt under context parallelism; the passes then split it.
///
/// # Errors
/// An invalid model, workload, reserve or chip (as [`analyze`]); a layout that does not fit
/// the model, the workload ([`Layout::validate_for`]) or the system; a collective the fabric
/// cannot carry.
pub fn analyze_parallel(
    model: &Transformer,
    workload: &Workload,
    system: &System,
    layout: Layout,
    reserve: Reserve,
) -> Result<ParallelStage, ParallelAnalysisError> {
    let single =
        analyze(model, workload, &system.chip, reserve).map_err(ParallelAnalysisError::Analysis)?;
    layout
        .validate_for(model, workload)
        .map_err(|e| ParallelAnalysisError::Parallel(ParallelError::Layout(e)))?;
    // Under expert parallelism attention runs data-parallel over the e devices: each builds
    // the graph of its ⌈B/e⌉ sequences; under context parallelism, of its chunks of each
    // prompt.
    let rank_workload = Workload {
        batch: workload.batch.div_ceil(u64::from(layout.ep)),
        seq_len: layout.cp_tokens(workload.seq_len),
        ..*workload
    };
    let rank = if layout.ep > 1 || layout.cp > 1 {
        analyze(model, &rank_workload, &system.chip, reserve)
            .map_err(ParallelAnalysisError::Analysis)?
            .graph
    } else {
        single.graph.clone()
    };
    let graph = shard(&rank, model, &rank_workload, layout, system)
        .map_err(ParallelAnalysisError::Parallel)?;
    let mut graph = shard_experts(&graph, model, layout, workload.batch, system)
        .map_err(ParallelAnalysisError::Parallel)?;
    if layout.cp > 1 {
        graph = shard_context(&graph, layout, system).map_err(ParallelAnalysisError::Parallel)?;
    }
    if layout.pp > 1 {
        add_stage_boundaries(&mut graph, model, &rank_workload, layout, system)
            .map_err(ParallelAnalysisError::Parallel)?;
    }
    let devices = layout.devices();
    if devices > system.devices() {
        return Err(ParallelAnalysisError::Parallel(ParallelError::System(
            crate::comm::SystemError::TooFewDevices {
                needed: devices,
                available: system.devices(),
            },
        )));
    }
    // The one walk of the analysis: rows and their totals (communication included) together.
    let device_error = |e| ParallelAnalysisError::Analysis(AnalysisError::Device(e));
    let roofs = ChipRoofs::new(&system.chip, workload.precisions.act).map_err(device_error)?;
    let mut rows = Vec::with_capacity(graph.nodes().len());
    let totals = walk(&graph, &roofs, |r| rows.push(r)).map_err(device_error)?;
    let schedule = schedule(&graph, &rows);
    let memory = device_memory(
        model,
        &rank_workload,
        &graph,
        &single.graph,
        single.memory.weights,
        layout,
        system,
        reserve,
    );
    let mut warnings = Vec::new();
    if memory.fits() == Some(false) {
        warnings.push(format!(
            "weights + KV cache + activations + runtime reserve need {:.1} GB per device, more \
             than the chip's {:.1} GB: this layout does not fit (raise tp or pp, or lower \
             batch, context or precision)",
            memory.total().get() / 1e9,
            memory.capacity.map_or(0.0, |c| c.get()) / 1e9
        ));
    }
    Ok(ParallelStage {
        layout,
        devices,
        workload: *workload,
        graph,
        rows,
        totals,
        schedule,
        memory,
        single,
        warnings,
    })
}

/// Adds the sends of activations between pipeline stages: T·d elements (÷ t with sequence
/// parallelism) once at each of the p − 1 boundaries, over the scale-out network when the
/// layout spans more than one node (a bound that assumes every boundary does), else over the
/// node's links.
fn add_stage_boundaries(
    graph: &mut OpGraph,
    model: &Transformer,
    workload: &Workload,
    layout: Layout,
    system: &System,
) -> Result<(), ParallelError> {
    let a = workload.precisions.act;
    let mut elements = (workload.tokens() * model.hidden) as f64;
    if layout.sequence_parallel {
        elements /= f64::from(layout.tp);
    }
    let bytes = Bytes(elements * a.bytes());
    let across_nodes = layout.devices() > u64::from(system.gpus_per_node);
    let cost = stage_send_cost(bytes, across_nodes, system).map_err(ParallelError::Collective)?;
    let x = graph.tensor_bytes("stage_activations", bytes, a, TensorRole::Activation);
    graph.node(
        "pipeline.send_recv",
        Role::PpSendRecv,
        Span::StageBoundaries {
            count: u64::from(layout.pp) - 1,
        },
        Op::Communication(Communication::of(&cost)),
        &[x],
        &[x],
    );
    Ok(())
}

/// One send of `bytes` from a pipeline stage to the next: a send/recv between two ranks, in
/// different nodes (over the scale-out network) when `across_nodes`, else in one, priced on
/// `system`'s fabric by the fastest algorithm.
///
/// # Errors
/// The fabric lacks the link, or the bytes are out of range ([`collective_cost`]).
pub(crate) fn stage_send_cost(
    bytes: Bytes,
    across_nodes: bool,
    system: &System,
) -> Result<crate::comm::collective::CollectiveCost, crate::comm::collective::CollectiveError> {
    let group = Group {
        ranks: 2,
        ranks_per_node: if across_nodes { 1 } else { 2 },
    };
    collective_cost(
        Collective::SendRecv,
        bytes,
        group,
        &system.fabric,
        AlgorithmChoice::Auto,
    )
}

/// The weight bytes of `graph` a device holding `blocks` blocks keeps: each weight tensor once
/// per block of those that read it (a weight two nodes read, such as MLA's kv_b_proj in the
/// absorbed decode, is held once), the embedding and lm_head once.
fn held_weight_bytes(graph: &OpGraph, blocks: u64) -> f64 {
    let mut copies = vec![0u64; graph.tensors().len()];
    for n in graph.nodes() {
        let count = match n.span() {
            Span::Blocks { .. } => n.count().min(blocks),
            Span::Prologue | Span::Epilogue => 1,
            Span::StageBoundaries { .. } => 0,
        };
        for &i in n.inputs.iter() {
            if let Some(c) = copies.get_mut(i) {
                *c = (*c).max(count);
            }
        }
    }
    graph
        .tensors()
        .iter()
        .zip(&copies)
        .filter(|(t, _)| t.role == TensorRole::Weight)
        .map(|(t, &c)| t.bytes.get() * c as f64)
        .sum()
}

/// What one device of the largest pipeline stage holds: its share of the weights (the single
/// device's weights × the share of the graph's weight bytes it holds, [`held_weight_bytes`]:
/// the embedding and lm_head as if on it, a bound), its share of the KV cache (the model's for
/// `workload`, the device's ⌈B/e⌉ sequences and its [`Layout::cp_tokens`] of each prompt,
/// × g_r/g for its KV heads, × its blocks / L), the peak of its live activations (its tokens',
/// and under context parallelism the two K/V blocks of the ring), and the reserve.
#[allow(clippy::too_many_arguments)]
fn device_memory(
    model: &Transformer,
    workload: &Workload,
    graph: &OpGraph,
    whole: &OpGraph,
    single_weights: Bytes,
    layout: Layout,
    system: &System,
    reserve: Reserve,
) -> MemoryFootprint {
    let blocks = layout.stage_blocks(model.layers, 0);
    // The one memory model's weights (parameters × bytes per weight, [`crate::memory`]), in the
    // share of the graph's weight bytes this device holds.
    let share = held_weight_bytes(graph, blocks) / held_weight_bytes(whole, model.layers);
    let weights = single_weights.get() * if share.is_finite() { share } else { 1.0 };
    let kv_share = layout.kv_heads_per_rank(model.kv_heads) as f64 / model.kv_heads as f64;
    let kv_share = if model.variant.mla.is_some() {
        1.0
    } else {
        kv_share
    };
    let kv = model
        .kv_cache_bytes(workload.batch, workload.kv_len(), workload.precisions.kv)
        .get()
        * kv_share
        * blocks as f64
        / model.layers as f64;
    let live = graph.peak_live_activations();
    let capacity = system.chip.capacity();
    MemoryFootprint {
        weights: Bytes(weights),
        kv_cache: Bytes(kv),
        activations: live.bytes,
        activations_at: live.at,
        reserve: reserve.bytes(capacity),
        capacity,
    }
}
