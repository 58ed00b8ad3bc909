//! Evaluates an operator graph on a chip: one roofline row per operator, totals, and the memory
//! footprint. This is what every report renders.

#[cfg(doc)]
use crate::decoder::build_graph;
use crate::decoder::emit;
use crate::device::{Device, DeviceError};
use crate::graph::{NodeCost, NodeCosts, OpGraph, Scope, TensorRole, VisitNodes, MAX_NODES};
use crate::model::{ModelError, Transformer};
use crate::ops::{Compute, Cost, OpKind};
use crate::precision::Precision;
use crate::roofline::{Roof, RooflinePoint};
use crate::units::{Bytes, BytesPerSec, FlopPerSec, Seconds};
use crate::workload::{Workload, WorkloadError};
use serde::Serialize;
use std::fmt;

/// One operator of the graph on the chip: what it costs, how often it runs, and the roof it is
/// held against. Its place on the roofline ([`OpRow::point`]: intensity, ridge point, bound,
/// attainable FLOP/s, time) is computed from these on demand, not stored: rows of 96 bytes
/// instead of 160 took an analysis of both stages from 1.23–1.33 µs to 0.99 µs (the `analysis`
/// benchmark; README, Speed).
///
/// Serialised with its point, as the fields `peak`, `bandwidth` and `point`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpRow {
    /// Node name (`q_proj`).
    pub name: &'static str,
    /// Operator type (`gemm`).
    pub kind: OpKind,
    /// In every block or once per model.
    pub scope: Scope,
    /// Executions per forward pass.
    pub count: u64,
    /// FLOPs and bytes of one execution.
    pub cost: Cost,
    /// The units it runs on (which peak applies).
    pub compute: Compute,
    /// The roof that applies: the chip's peak for [`OpRow::compute`] (FLOP/s) and its
    /// main-memory bandwidth (B/s).
    pub roof: Roof,
    /// Launch overhead of one execution (one kernel), seconds.
    pub launch_overhead: Seconds,
}

impl OpRow {
    /// The peak that applies, FLOP/s.
    #[inline]
    pub fn peak(&self) -> FlopPerSec {
        self.roof.peak
    }

    /// The operator on the roofline, one execution ([`Roof::evaluate`] of its cost).
    #[inline]
    pub fn point(&self) -> RooflinePoint {
        self.roof.evaluate(&self.cost)
    }
}

impl Serialize for OpRow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("OpRow", 10)?;
        st.serialize_field("name", self.name)?;
        st.serialize_field("kind", &self.kind)?;
        st.serialize_field("scope", &self.scope)?;
        st.serialize_field("count", &self.count)?;
        st.serialize_field("cost", &self.cost)?;
        st.serialize_field("compute", &self.compute)?;
        st.serialize_field("peak", &self.roof.peak)?;
        st.serialize_field("bandwidth", &self.roof.bandwidth)?;
        st.serialize_field("point", &self.point())?;
        st.serialize_field("launch_overhead", &self.launch_overhead)?;
        st.end()
    }
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
    /// Launch overhead: kernels × the overhead of one launch, seconds.
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
    /// Nothing: zero bytes, no name, capacity unknown.
    pub const EMPTY: MemoryFootprint = MemoryFootprint {
        weights: Bytes::ZERO,
        kv_cache: Bytes::ZERO,
        largest_activation: Bytes::ZERO,
        largest_activation_name: "",
        capacity: None,
    };

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
    /// The forward pass has more operators than an allocation-free analysis holds
    /// ([`crate::graph::MAX_NODES`]): a limit of this tool, not a fault of the model.
    TooManyNodes {
        /// Operators the decoder emitted.
        emitted: usize,
    },
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalysisError::Model(e) => e.fmt(f),
            AnalysisError::Workload(e) => e.fmt(f),
            AnalysisError::Device(e) => e.fmt(f),
            AnalysisError::TooManyNodes { emitted } => write!(
                f,
                "the forward pass has {emitted} operators, more than the {MAX_NODES} this \
                 analysis holds (a limit of roofline's, not of the model: please report it)"
            ),
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

/// A chip's roofs resolved once for a workload's activation precision: every dense peak in a
/// table indexed by precision, main-memory bandwidth and launch overhead. Looking up the roof of
/// a node is then an array index; [`ChipRoofs::peak`] answers exactly as [`peak_for`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChipRoofs<'d> {
    device: &'d Device,
    act: Precision,
    /// The peak of each precision in [`Precision::ALL`] order, then the vector peak; `None`
    /// where the chip has none.
    peaks: [Option<FlopPerSec>; Precision::ALL.len() + 1],
    /// Main-memory bandwidth, B/s.
    pub bandwidth: BytesPerSec,
    /// Launch overhead of one kernel, seconds.
    pub launch: Seconds,
}

/// `p`'s place in [`Precision::ALL`] (declaration order; a test checks they agree).
#[inline(always)]
fn precision_index(p: Precision) -> usize {
    p as usize
}

/// The slot of `compute` in [`ChipRoofs`]'s table.
#[inline(always)]
fn compute_index(compute: Compute) -> usize {
    match compute {
        Compute::Matrix(p) => precision_index(p),
        Compute::Vector => Precision::ALL.len(),
    }
}

impl<'d> ChipRoofs<'d> {
    /// The roofs of `device` for work whose activations are in `act`.
    ///
    /// # Errors
    /// The chip has no main-memory bandwidth.
    // `always`: returned through memory, the table is read back wider than it was written (a
    // store-forwarding stall, a few percent of an analysis).
    #[inline(always)]
    pub fn new(device: &'d Device, act: Precision) -> Result<Self, DeviceError> {
        let bandwidth = device.bandwidth()?;
        let mut peaks = [None; Precision::ALL.len() + 1];
        for (p, c) in &device.peaks {
            let slot = &mut peaks[precision_index(*p)];
            // The first entry wins, as `Device::peak` finds it.
            if slot.is_none() {
                *slot = Some(c.value);
            }
        }
        // Vector work: the fp32 peak, else the activation precision's ([`peak_for`]).
        peaks[compute_index(Compute::Vector)] =
            peaks[precision_index(Precision::Fp32)].or(peaks[precision_index(act)]);
        Ok(Self {
            device,
            act,
            peaks,
            bandwidth,
            launch: device.launch_overhead.value,
        })
    }

    /// The roof of `compute`; `None` when the chip has no peak for it ([`ChipRoofs::roof`]
    /// says why).
    #[inline(always)]
    pub fn roof_of(&self, compute: Compute) -> Option<Roof> {
        self.peaks[compute_index(compute)].map(|peak| Roof {
            peak,
            bandwidth: self.bandwidth,
        })
    }

    /// The peak that applies to `compute` ([`peak_for`]).
    ///
    /// # Errors
    /// The chip has no peak for the precision needed.
    #[inline]
    pub fn peak(&self, compute: Compute) -> Result<FlopPerSec, DeviceError> {
        match self.peaks[compute_index(compute)] {
            Some(p) => Ok(p),
            None => Err(self.missing_peak(compute)),
        }
    }

    /// Why the chip has no roof for `compute` ([`ChipRoofs::roof_of`] gave `None`), as
    /// [`peak_for`] says it: the matrix precision is missing, or for vector work both fp32 and
    /// the activation precision (the error names the latter, where `peak_for` ends).
    fn missing_peak(&self, compute: Compute) -> DeviceError {
        self.device.no_peak(match compute {
            Compute::Matrix(p) => p,
            Compute::Vector => self.act,
        })
    }

    /// The roof a node computing on `compute` is held against.
    ///
    /// # Errors
    /// The chip has no peak for the precision needed.
    #[inline]
    pub fn roof(&self, compute: Compute) -> Result<Roof, DeviceError> {
        Ok(Roof {
            peak: self.peak(compute)?,
            bandwidth: self.bandwidth,
        })
    }
}

impl Totals {
    /// Adds `count` executions of a node of cost `cost` taking `time` seconds on the roofline
    /// ([`Roof::time`]), each one kernel launch. Leaves the launch overhead alone: set it once
    /// the nodes are in, with [`Totals::with_launch`].
    #[inline(always)]
    pub fn add_node(&mut self, cost: &Cost, time: Seconds, count: u64) {
        let n = count as f64;
        self.cost += *cost * n;
        self.time += time * n;
        self.kernels += count;
    }

    /// Sets the launch overhead to `launch` seconds per kernel: kernels × launch, one product
    /// with one rounding rather than a sum with one rounding per node.
    #[inline]
    pub fn with_launch(self, launch: Seconds) -> Self {
        Self {
            launch_overhead: launch * self.kernels as f64,
            ..self
        }
    }
}

/// Evaluates every node of `graph` on `device`.
///
/// # Errors
/// The chip lacks the bandwidth, or a peak a node needs.
pub fn evaluate_graph(
    graph: &OpGraph,
    workload: &Workload,
    device: &Device,
) -> Result<(Vec<OpRow>, Totals), DeviceError> {
    let roofs = ChipRoofs::new(device, workload.precisions.act)?;
    let mut rows = Vec::with_capacity(graph.nodes.len());
    let mut totals = Totals::default();
    for node in &graph.nodes {
        let row = evaluate_node(
            &roofs,
            node.name,
            node.op.kind(),
            node.scope,
            graph.count(node),
            node.op.cost(),
            node.op.compute(),
        )?;
        totals.add_node(&row.cost, row.roof.time(&row.cost), row.count);
        rows.push(row);
    }
    Ok((rows, totals.with_launch(roofs.launch)))
}

/// One node on the chip's roofline: the row every report shows.
#[inline(always)]
fn evaluate_node(
    roofs: &ChipRoofs<'_>,
    name: &'static str,
    kind: OpKind,
    scope: Scope,
    count: u64,
    cost: Cost,
    compute: Compute,
) -> Result<OpRow, DeviceError> {
    let roof = roofs.roof(compute)?;
    Ok(OpRow {
        name,
        kind,
        scope,
        count,
        cost,
        compute,
        roof,
        launch_overhead: roofs.launch,
    })
}

/// Memory footprint of `model` under `workload`.
pub fn memory_footprint(
    model: &Transformer,
    workload: &Workload,
    graph: &OpGraph,
) -> MemoryFootprint {
    let largest = graph
        .tensors
        .iter()
        .filter(|t| t.role == TensorRole::Activation)
        .max_by(|x, y| x.bytes.get().total_cmp(&y.bytes.get()))
        .map(|t| (t.bytes, t.name));
    footprint(model, workload, largest)
}

fn footprint(
    model: &Transformer,
    workload: &Workload,
    largest: Option<(Bytes, &'static str)>,
) -> MemoryFootprint {
    let p = workload.precisions;
    MemoryFootprint {
        weights: Bytes(model.parameters() as f64 * p.weight_bytes()),
        kv_cache: model.kv_cache_bytes(workload.batch, workload.kv_len(), p.kv),
        largest_activation: largest.map(|(b, _)| b).unwrap_or(Bytes::ZERO),
        largest_activation_name: largest.map(|(_, n)| n).unwrap_or(""),
        capacity: None,
    }
}

/// The node costs of one forward pass, emitted into a stack-allocated [`NodeCosts`].
///
/// # Errors
/// An invalid model or workload; [`AnalysisError::TooManyNodes`] if the forward pass has more
/// than [`MAX_NODES`] operators (none of the decoder's variants has).
pub fn node_costs(model: &Transformer, workload: &Workload) -> Result<NodeCosts, AnalysisError> {
    model.validate().map_err(AnalysisError::Model)?;
    workload.validate().map_err(AnalysisError::Workload)?;
    let mut costs = NodeCosts::new(model.layers);
    emit(model, workload, &mut costs);
    if !costs.is_complete() {
        return Err(AnalysisError::TooManyNodes {
            emitted: costs.emitted(),
        });
    }
    Ok(costs)
}

/// Rows [`StageAnalysis::empty`] makes room for: a dense decoder has 21 operators (unfused
/// attention); a MoE or MLA one (up to 38, DeepSeek-V3) grows the rows once.
const ROWS_HINT: usize = 24;

impl StageAnalysis {
    /// An analysis of nothing yet, to fill with [`analyze_into`]: no rows (room for 24), zero
    /// totals and footprint, no warnings.
    pub fn empty(workload: Workload) -> Self {
        Self {
            workload,
            rows: Vec::with_capacity(ROWS_HINT),
            totals: Totals::default(),
            memory: MemoryFootprint::EMPTY,
            warnings: Vec::new(),
        }
    }
}

/// Analyses one stage of `model` on `device`: walks the operator graph, places each operator on
/// the roofline, sums the forward pass and sizes the memory footprint.
///
/// The rows, totals and footprint equal those of [`build_graph`] + [`evaluate_graph`] +
/// [`memory_footprint`] exactly (a test checks it); this path allocates only the rows (and a
/// warning's text, when there is one). To analyse many configurations, [`analyze_into`] reuses
/// one analysis's buffers instead.
///
/// # Errors
/// An invalid model or workload, or a chip without the peak or bandwidth needed.
pub fn analyze(
    model: &Transformer,
    workload: &Workload,
    device: &Device,
) -> Result<StageAnalysis, AnalysisError> {
    let mut out = StageAnalysis::empty(*workload);
    analyze_into(model, workload, device, &mut out)?;
    Ok(out)
}

/// [`analyze`] into `out`, reusing its row and warning buffers: every field of `out` is
/// replaced, and nothing is allocated once its rows have room for the model's operators and no
/// warning is raised. `out` can be any analysis, or [`StageAnalysis::empty`]. Equal to
/// `*out = analyze(model, workload, device)?`, bit for bit (a test checks it).
///
/// # Errors
/// As [`analyze`]; `out` is then an empty analysis of `workload` (no rows, no warnings, zero
/// totals and footprint), as [`StageAnalysis::empty`] makes one.
pub fn analyze_into(
    model: &Transformer,
    workload: &Workload,
    device: &Device,
    out: &mut StageAnalysis,
) -> Result<(), AnalysisError> {
    let result = fill(model, workload, device, out);
    if result.is_err() {
        out.rows.clear();
        out.warnings.clear();
        out.workload = *workload;
        out.totals = Totals::default();
        out.memory = MemoryFootprint::EMPTY;
    }
    result
}

/// [`analyze_into`] less the reset on error.
fn fill(
    model: &Transformer,
    workload: &Workload,
    device: &Device,
    out: &mut StageAnalysis,
) -> Result<(), AnalysisError> {
    out.rows.clear();
    out.warnings.clear();
    model.validate().map_err(AnalysisError::Model)?;
    workload.validate().map_err(AnalysisError::Workload)?;
    let roofs = ChipRoofs::new(device, workload.precisions.act)?;
    let rows = &mut out.rows;
    let mut totals = Totals::default();
    let mut missing = None;
    // The row is built in place from the small `Roof`, not moved out of a `Result<OpRow, _>`:
    // a third of the time of an analysis (the `analysis` benchmark).
    let mut sink = VisitNodes::new(
        #[inline(always)]
        |n: NodeCost| match roofs.roof_of(n.compute) {
            Some(roof) => {
                let count = count(model.layers, n.scope);
                totals.add_node(&n.cost, roof.time(&n.cost), count);
                rows.push(OpRow {
                    name: n.name,
                    kind: n.kind,
                    scope: n.scope,
                    count,
                    cost: n.cost,
                    compute: n.compute,
                    roof,
                    launch_overhead: roofs.launch,
                });
            }
            None => {
                missing.get_or_insert(n.compute);
            }
        },
    );
    emit(model, workload, &mut sink);
    let largest = sink.largest_activation;
    if let Some(compute) = missing {
        return Err(roofs.missing_peak(compute).into());
    }
    let mut memory = footprint(model, workload, largest);
    memory.capacity = device.capacity();
    if memory.fits() == Some(false) {
        out.warnings.push(format!(
            "weights + KV cache + largest activation need {:.1} GB, more than the chip's {:.1} GB: \
             this does not run on one chip as configured (shard it, or lower batch, context or precision)",
            memory.total().get() / 1e9,
            device.capacity().map(|c| c.get()).unwrap_or(0.0) / 1e9
        ));
    }
    if let Some(max) = model.max_position_embeddings {
        let needed = workload.kv_len();
        if needed > max {
            out.warnings.push(format!(
                "{needed} tokens per sequence exceed the model's max_position_embeddings ({max})"
            ));
        }
    }
    out.workload = *workload;
    out.totals = totals.with_launch(roofs.launch);
    out.memory = memory;
    Ok(())
}

/// The totals of [`analyze`] without the rows: allocates nothing. Equal to
/// `analyze(model, workload, device)?.totals`, bit for bit (a test checks it).
///
/// # Errors
/// An invalid model or workload, or a chip without the peak or bandwidth needed.
pub fn analyze_totals(
    model: &Transformer,
    workload: &Workload,
    device: &Device,
) -> Result<Totals, AnalysisError> {
    model.validate().map_err(AnalysisError::Model)?;
    workload.validate().map_err(AnalysisError::Workload)?;
    let roofs = ChipRoofs::new(device, workload.precisions.act)?;
    let mut totals = Totals::default();
    let mut missing = None;
    emit(
        model,
        workload,
        &mut VisitNodes::new(
            #[inline(always)]
            |n: NodeCost| match roofs.roof_of(n.compute) {
                Some(roof) => {
                    let time = roof.time(&n.cost);
                    totals.add_node(&n.cost, time, count(model.layers, n.scope));
                }
                None => {
                    missing.get_or_insert(n.compute);
                }
            },
        ),
    );
    match missing {
        Some(compute) => Err(roofs.missing_peak(compute).into()),
        None => Ok(totals.with_launch(roofs.launch)),
    }
}

/// How many times a node of `scope` runs per forward pass of a model of `layers` blocks.
#[inline(always)]
fn count(layers: u64, scope: Scope) -> u64 {
    scope.count(layers)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::decoder::build_graph;
    use crate::device::tests::h100_sxm;
    use crate::model::tests::llama2_7b;
    use crate::model::{Activation, MlpKind, NormKind};
    use crate::workload::{Precisions, Stage};

    /// Llama-2-7B, a GQA variant, a GPT-style model (LayerNorm, plain GELU MLP, biases, tied
    /// embeddings) and a DeepSeek-V3-style one (MLA with a query latent, dense first blocks,
    /// routed and shared experts, QK norm, a sliding window): every branch of the decoder.
    pub(crate) fn models() -> Vec<Transformer> {
        let gqa = Transformer {
            kv_heads: 8,
            intermediate: 14336,
            vocab: 128256,
            ..llama2_7b()
        };
        let gpt = Transformer {
            hidden: 768,
            layers: 12,
            heads: 12,
            kv_heads: 12,
            head_dim: 64,
            intermediate: 3072,
            vocab: 50257,
            tie_embeddings: true,
            qkv_bias: true,
            o_bias: true,
            mlp_bias: true,
            norm: NormKind::LayerNorm,
            mlp: MlpKind::Plain,
            activation: Activation::Gelu,
            ..llama2_7b()
        };
        let moe = Transformer {
            kv_heads: 8,
            variant: crate::model::Variant {
                moe: Some(crate::model::Moe {
                    experts: 8,
                    top_k: 2,
                    expert_intermediate: 1408,
                    shared_experts: 2,
                    dense_layers: 1,
                    router_bias: true,
                }),
                mla: Some(crate::model::Mla {
                    q_lora_rank: Some(1536),
                    kv_lora_rank: 512,
                    qk_nope_head_dim: 128,
                    qk_rope_head_dim: 64,
                    v_head_dim: 128,
                }),
                qk_norm: true,
                sliding_window: Some(1024),
                ..crate::model::Variant::default()
            },
            ..llama2_7b()
        };
        vec![llama2_7b(), gqa, gpt, moe]
    }

    fn workloads() -> Vec<Workload> {
        let mut out = Vec::new();
        for stage in [Stage::Prefill, Stage::Decode] {
            for batch in [1, 3, 64] {
                for len in [1, 17, 2048] {
                    for flash in [false, true] {
                        for (w, a, c) in [
                            (Precision::Bf16, Precision::Bf16, Precision::Bf16),
                            (Precision::Int4, Precision::Fp16, Precision::Fp8),
                        ] {
                            out.push(Workload {
                                stage,
                                batch,
                                seq_len: len,
                                context: len,
                                precisions: Precisions {
                                    weight: w,
                                    act: a,
                                    kv: c,
                                    weight_scale_bytes: 0.0,
                                    gemm_act: None,
                                },
                                flash_attention: flash,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn analyze_equals_the_graph_path_exactly() -> Result<(), Box<dyn std::error::Error>> {
        let device = h100_sxm();
        // One analysis reused for every model and workload, as a sweep would.
        let mut reused = StageAnalysis::empty(workloads()[0]);
        for m in models() {
            for w in workloads() {
                let a = analyze(&m, &w, &device)?;
                analyze_into(&m, &w, &device, &mut reused)?;
                assert_eq!(reused, a, "{} {w:?}", m.name);
                let g = build_graph(&m, &w);
                let (rows, totals) = evaluate_graph(&g, &w, &device)?;
                let mut memory = memory_footprint(&m, &w, &g);
                memory.capacity = device.capacity();
                assert_eq!(a.rows, rows, "{} {w:?}", m.name);
                assert_eq!(a.totals, totals, "{} {w:?}", m.name);
                assert_eq!(a.memory, memory, "{} {w:?}", m.name);
                // The allocation-free totals agree bit for bit.
                assert_eq!(analyze_totals(&m, &w, &device)?, a.totals);
                let costs = node_costs(&m, &w)?;
                assert_eq!(costs.nodes().len(), rows.len());
                for (n, r) in costs.nodes().iter().zip(&rows) {
                    assert_eq!((n.name, n.cost, n.compute), (r.name, r.cost, r.compute));
                }
            }
        }
        Ok(())
    }

    #[test]
    fn a_row_serialises_with_its_point_computed_by_hand() -> Result<(), Box<dyn std::error::Error>>
    {
        // q_proj of Llama-2-7B decoding one token on the H100 SXM, bf16: a 1×4096 by 4096×4096
        // GEMV. FLOPs 2·4096² = 33,554,432; bytes read 2·4096 + 2·4096² = 33,562,624, written
        // 2·4096 = 8,192; time = 33,570,816 B / 3.35e12 B/s = 10.0211391 µs, memory-bound at
        // 33,554,432 / 33,570,816 = 0.99951 FLOP/B against a ridge of 989.5e12 / 3.35e12 = 295.37.
        let w = Workload {
            stage: Stage::Decode,
            batch: 1,
            seq_len: 1,
            context: 1,
            precisions: Precisions::uniform(Precision::Bf16),
            flash_attention: false,
        };
        let a = analyze(&llama2_7b(), &w, &h100_sxm())?;
        let row = a
            .rows
            .iter()
            .find(|r| r.name == "q_proj")
            .ok_or("no q_proj")?;
        assert_eq!((row.kind, row.count), (OpKind::Gemm, 32));
        let j = serde_json::to_value(row)?;
        let num = |path: &str| j.pointer(path).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
        assert_eq!(j["kind"], "gemm");
        assert_eq!(num("/cost/flops"), 33_554_432.0);
        assert_eq!(num("/cost/bytes_read"), 33_562_624.0);
        assert_eq!(num("/cost/bytes_written"), 8_192.0);
        assert_eq!(num("/peak"), 989.5e12);
        assert_eq!(num("/bandwidth"), 3.35e12);
        assert_eq!(j["point"]["bound"], "memory");
        assert!((num("/point/time") - 10.021_139_1e-6).abs() < 1e-13);
        assert!((num("/point/intensity") - 0.999_51).abs() < 1e-5);
        assert!((num("/point/ridge") - 295.373_1).abs() < 1e-4);
        assert_eq!(num("/launch_overhead"), 5e-6);
        Ok(())
    }

    #[test]
    fn into_parts_agrees_with_kind_cost_and_compute() {
        // Every operator type the decoder emits (MoE and MLA included, `models`): the one-match
        // summary the visitors use equals the three separate accessors the graph path uses.
        let mut kinds = std::collections::BTreeSet::new();
        for m in models() {
            for w in workloads() {
                for node in build_graph(&m, &w).nodes {
                    let (kind, cost, compute) = node.op.clone().into_parts();
                    assert_eq!(kind, node.op.kind());
                    assert_eq!(cost, node.op.cost());
                    assert_eq!(compute, node.op.compute());
                    kinds.insert(kind);
                }
            }
        }
        assert_eq!(kinds.len(), 11, "every Op variant was exercised: {kinds:?}");
        // `OpKind::ALL` lists exactly the kinds the operators have.
        assert_eq!(kinds.into_iter().collect::<Vec<_>>(), OpKind::ALL.to_vec());
    }

    #[test]
    fn a_missing_peak_is_the_same_error_on_every_path() -> Result<(), Box<dyn std::error::Error>> {
        let mut device = h100_sxm();
        device.peaks.retain(|(p, _)| *p != Precision::Bf16);
        let m = llama2_7b();
        let w = workloads()[0];
        let g = build_graph(&m, &w);
        let expect = AnalysisError::from(evaluate_graph(&g, &w, &device).unwrap_err());
        assert_eq!(analyze(&m, &w, &device).unwrap_err(), expect);
        assert_eq!(analyze_totals(&m, &w, &device).unwrap_err(), expect);
        // Into an analysis that had rows: the same error, and no rows left behind.
        let mut out = analyze(&m, &w, &h100_sxm())?;
        assert!(!out.rows.is_empty());
        assert_eq!(analyze_into(&m, &w, &device, &mut out).unwrap_err(), expect);
        assert_eq!(out, StageAnalysis::empty(w));
        // And on an invalid workload, before the chip is looked at.
        let mut out = analyze(&m, &w, &h100_sxm())?;
        let zero = Workload { batch: 0, ..w };
        assert!(analyze_into(&m, &zero, &h100_sxm(), &mut out).is_err());
        assert_eq!(out, StageAnalysis::empty(zero));
        Ok(())
    }

    #[test]
    fn every_decoder_variant_fits_the_fixed_node_list() -> Result<(), Box<dyn std::error::Error>> {
        let mut most = 0;
        for m in models() {
            for w in workloads() {
                let c = node_costs(&m, &w)?;
                assert!(c.is_complete() && c.emitted() <= MAX_NODES);
                assert_eq!(c.emitted(), build_graph(&m, &w).nodes.len());
                most = most.max(c.emitted());
            }
        }
        // The MLA + MoE model needs more than the 32 nodes this list once held (DeepSeek-V3 was
        // cut short by it).
        assert!(most > 32, "{most}");
        Ok(())
    }

    #[test]
    fn chip_roofs_answer_as_peak_for() -> Result<(), Box<dyn std::error::Error>> {
        for (i, p) in Precision::ALL.iter().enumerate() {
            assert_eq!(precision_index(*p), i);
        }
        // A chip with no fp32 figure (TPU-like): vector work falls back to the activation peak;
        // a precision the chip lacks is the same error either way.
        let mut tpu = h100_sxm();
        tpu.peaks.retain(|(p, _)| *p != Precision::Fp32);
        for device in [h100_sxm(), tpu] {
            for act in Precision::ALL {
                let roofs = ChipRoofs::new(&device, act)?;
                for compute in Precision::ALL
                    .iter()
                    .map(|&p| Compute::Matrix(p))
                    .chain([Compute::Vector])
                {
                    assert_eq!(roofs.peak(compute), peak_for(&device, compute, act));
                }
            }
        }
        Ok(())
    }
}
