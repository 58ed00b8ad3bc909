//! Evaluates an operator graph on a chip: one roofline row per operator, totals, and the memory
//! footprint. This is what every report renders.

use crate::decoder::build_graph;
use crate::device::{Device, DeviceError};
use crate::graph::{OpGraph, Scope, TensorRole};
use crate::model::{ModelError, Transformer};
use crate::ops::{Compute, Cost};
use crate::precision::Precision;
use crate::roofline::{Roof, RooflinePoint};
use crate::units::{Bytes, FlopPerSec, Seconds};
use crate::workload::{Workload, WorkloadError};
use serde::Serialize;
use std::fmt;

/// One operator of the graph on the chip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpRow {
    /// Node name (`q_proj`).
    pub name: &'static str,
    /// Operator type (`gemm`).
    pub kind: &'static str,
    /// In every block or once per model.
    pub scope: Scope,
    /// Executions per forward pass.
    pub count: u64,
    /// FLOPs and bytes of one execution.
    pub cost: Cost,
    /// The units it runs on (which peak applies).
    pub compute: Compute,
    /// The peak that applies, FLOP/s.
    pub peak: FlopPerSec,
    /// The operator on the roofline (one execution).
    pub point: RooflinePoint,
    /// Launch overhead of one execution (one kernel), seconds.
    pub launch_overhead: Seconds,
}

/// Sums over a forward pass: each row × its count.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Totals {
    /// FLOPs and bytes.
    pub cost: Cost,
    /// Σ roofline time, seconds (launch overhead excluded).
    pub time: Seconds,
    /// Kernel launches.
    pub kernels: u64,
    /// Σ launch overhead, seconds.
    pub launch_overhead: Seconds,
}

impl Totals {
    /// Roofline time plus launch overhead (kernels run back to back, no overlap).
    pub fn time_with_launch(&self) -> Seconds {
        self.time + self.launch_overhead
    }
}

/// Memory needed on the chip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryFootprint {
    /// All weights: parameters × weight bytes.
    pub weights: Bytes,
    /// KV cache: 2 (K and V) · layers · batch · kv_len · kv_heads · head_dim · kv bytes.
    pub kv_cache: Bytes,
    /// The largest activation tensor of one block (the score matrix in unfused prefill).
    pub largest_activation: Bytes,
    /// Its name.
    pub largest_activation_name: &'static str,
    /// The chip's main-memory capacity, if known.
    pub capacity: Option<Bytes>,
}

impl MemoryFootprint {
    /// Weights + KV cache + the largest activation.
    pub fn total(&self) -> Bytes {
        self.weights + self.kv_cache + self.largest_activation
    }

    /// Whether the total fits in the chip's memory (`None` when the capacity is unknown).
    pub fn fits(&self) -> Option<bool> {
        self.capacity.map(|c| self.total() <= c)
    }
}

/// One stage of a model on a chip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageAnalysis {
    /// The workload analysed.
    pub workload: Workload,
    /// One row per operator, in forward order.
    pub rows: Vec<OpRow>,
    /// Sums over the forward pass.
    pub totals: Totals,
    /// Memory footprint.
    pub memory: MemoryFootprint,
    /// Caveats a reader must see: the model does not fit, the context exceeds what the model
    /// was trained for.
    pub warnings: Vec<String>,
}

/// Why an analysis could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnalysisError {
    /// The model's shape is unusable.
    Model(ModelError),
    /// The workload is unusable.
    Workload(WorkloadError),
    /// The chip lacks a figure the analysis needs.
    Device(DeviceError),
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalysisError::Model(e) => e.fmt(f),
            AnalysisError::Workload(e) => e.fmt(f),
            AnalysisError::Device(e) => e.fmt(f),
        }
    }
}
impl std::error::Error for AnalysisError {}
impl From<DeviceError> for AnalysisError {
    fn from(e: DeviceError) -> Self {
        AnalysisError::Device(e)
    }
}

/// The peak that applies to an operator computing on `compute`: the dense matrix peak of its
/// precision, or for vector work the fp32 peak (falling back to the activation precision's
/// peak on chips that publish no fp32 figure, such as TPUs).
pub fn peak_for(
    device: &Device,
    compute: Compute,
    act: Precision,
) -> Result<FlopPerSec, DeviceError> {
    match compute {
        Compute::Matrix(p) => device.peak(p),
        Compute::Vector => device.peak(Precision::Fp32).or_else(|_| device.peak(act)),
    }
}

/// Evaluates every node of `graph` on `device`.
pub fn evaluate_graph(
    graph: &OpGraph,
    workload: &Workload,
    device: &Device,
) -> Result<(Vec<OpRow>, Totals), DeviceError> {
    let bandwidth = device.bandwidth()?;
    let launch = device.launch_overhead.value;
    let mut rows = Vec::with_capacity(graph.nodes.len());
    let mut totals = Totals::default();
    for node in &graph.nodes {
        let compute = node.op.compute();
        let peak = peak_for(device, compute, workload.precisions.act)?;
        let cost = node.op.cost();
        let point = Roof { peak, bandwidth }.evaluate(&cost);
        let count = graph.count(node);
        let n = count as f64;
        totals.cost += cost * n;
        totals.time += point.time * n;
        totals.kernels += count;
        totals.launch_overhead += launch * n;
        rows.push(OpRow {
            name: node.name,
            kind: node.op.kind(),
            scope: node.scope,
            count,
            cost,
            compute,
            peak,
            point,
            launch_overhead: launch,
        });
    }
    Ok((rows, totals))
}

/// Memory footprint of `model` under `workload`.
pub fn memory_footprint(
    model: &Transformer,
    workload: &Workload,
    graph: &OpGraph,
) -> MemoryFootprint {
    let p = workload.precisions;
    let kv = 2.0
        * model.layers as f64
        * workload.batch as f64
        * workload.kv_len() as f64
        * (model.kv_heads * model.head_dim) as f64
        * p.kv.bytes();
    let largest = graph
        .tensors
        .iter()
        .filter(|t| t.role == TensorRole::Activation)
        .max_by(|x, y| x.bytes.get().total_cmp(&y.bytes.get()));
    MemoryFootprint {
        weights: Bytes(model.parameters() as f64 * p.weight.bytes()),
        kv_cache: Bytes(kv),
        largest_activation: largest.map(|t| t.bytes).unwrap_or(Bytes::ZERO),
        largest_activation_name: largest.map(|t| t.name).unwrap_or(""),
        capacity: None,
    }
}

/// Analyses one stage of `model` on `device`: builds the graph, places each operator on the
/// roofline, sums the forward pass and sizes the memory footprint.
///
/// # Errors
/// An invalid model or workload, or a chip without the peak or bandwidth needed.
pub fn analyze(
    model: &Transformer,
    workload: &Workload,
    device: &Device,
) -> Result<StageAnalysis, AnalysisError> {
    model.validate().map_err(AnalysisError::Model)?;
    workload.validate().map_err(AnalysisError::Workload)?;
    let graph = build_graph(model, workload);
    let (rows, totals) = evaluate_graph(&graph, workload, device)?;
    let mut memory = memory_footprint(model, workload, &graph);
    memory.capacity = device.capacity();
    let mut warnings = Vec::new();
    if memory.fits() == Some(false) {
        warnings.push(format!(
            "weights + KV cache + largest activation need {:.3e} B, more than the chip's {:.3e} B: \
             this does not run on one chip as configured (shard it, or lower batch, context or precision)",
            memory.total().get(),
            device.capacity().map(|c| c.get()).unwrap_or(0.0)
        ));
    }
    if let Some(max) = model.max_position_embeddings {
        let needed = workload.kv_len();
        if needed > max {
            warnings.push(format!(
                "{needed} tokens per sequence exceed the model's max_position_embeddings ({max})"
            ));
        }
    }
    Ok(StageAnalysis {
        workload: *workload,
        rows,
        totals,
        memory,
        warnings,
    })
}
