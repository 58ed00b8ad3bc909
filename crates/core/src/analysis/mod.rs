//! Evaluates the operator graph on a chip: one roofline row per operator, totals, and the
//! memory footprint. This is what every report renders.
//!
//! [`evaluate`] is the one evaluator: every command (analyze, sweep, op, explain, mfu, mbu,
//! fusion, profile, report) builds an [`OpGraph`] ([`crate::decoder::build_graph`]) and places
//! its nodes on the chip's roofs through it, or through [`evaluate_totals`], the same walk
//! without the rows (a test holds them equal bit for bit).

mod roofs;
#[cfg(test)]
pub(crate) mod tests;

pub use roofs::{peak_for, ChipRoofs};

use crate::decoder::{rebuild, Blueprint, BuiltFrom};
use crate::device::{Device, DeviceError};
use crate::graph::{OpGraph, Role, Span};
use crate::memory::{footprint_of, MemoryFootprint, Reserve};
use crate::model::{ModelError, Transformer};
use crate::ops::{Compute, Cost, OpKind};
use crate::roofline::{Roof, RooflinePoint};
use crate::units::{FlopPerSec, Seconds};
use crate::workload::{Workload, WorkloadError};
use serde::Serialize;
use std::fmt;

/// One operator of the graph on the chip: what it costs, how often it runs, and the roof it is
/// held against. Its place on the roofline ([`OpRow::point`]: intensity, ridge point, bound,
/// attainable FLOP/s, time) is computed from these on demand, not stored.
///
/// Serialised with its point, as the fields `peak`, `bandwidth` and `point`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpRow {
    /// Node name (`q_proj`), for display.
    pub name: &'static str,
    /// What the node does in the model.
    pub role: Role,
    /// Operator type (`gemm`).
    pub kind: OpKind,
    /// The blocks it runs in, or the prologue or epilogue.
    pub span: Span,
    /// Executions per forward pass ([`Span::count`]).
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
    /// For a collective ([`crate::ops::Communication`]; [`OpRow::compute`] is
    /// [`Compute::Network`]), its time on the link, read through [`OpRow::link`]; zero for an
    /// operator. A collective's row has no FLOPs and no main-memory bytes, and
    /// [`OpRow::roof`] holds the link's bandwidth.
    link_time: LinkTime,
}

/// A collective's time on its link: the α–β model's two terms ([`crate::comm::collective`]).
/// The bytes it sends are its operator's ([`crate::ops::Communication::traffic`]); a row keeps
/// the two times only, so that it stays within 128 bytes (a larger row is copied through
/// `memcpy`, a quarter slower an analysis: the `analysis` benchmark).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinkTime {
    /// The latency term, seconds.
    pub latency: Seconds,
    /// The bandwidth term (traffic / link bandwidth), seconds.
    pub transfer: Seconds,
}

impl LinkTime {
    /// No time: an operator's row.
    pub const ZERO: LinkTime = LinkTime {
        latency: Seconds(0.0),
        transfer: Seconds(0.0),
    };

    /// Latency + transfer, seconds.
    #[inline]
    pub fn time(&self) -> Seconds {
        self.latency + self.transfer
    }

    /// The collective on the link's roof: no FLOPs, bound by the larger of its two terms.
    pub fn point(&self) -> RooflinePoint {
        let zero = crate::units::FlopPerByte(0.0);
        RooflinePoint {
            intensity: zero,
            ridge: zero,
            bound: if self.latency > self.transfer {
                crate::roofline::Bound::Latency
            } else {
                crate::roofline::Bound::Network
            },
            attainable: FlopPerSec(0.0),
            compute_time: Seconds(0.0),
            memory_time: self.transfer,
            time: self.time(),
        }
    }
}

impl OpRow {
    /// The peak that applies, FLOP/s.
    #[inline]
    pub fn peak(&self) -> FlopPerSec {
        self.roof.peak
    }

    /// The operator on the roofline, one execution ([`Roof::evaluate`] of its cost), or a
    /// collective on its link ([`LinkTime::point`]).
    #[inline]
    pub fn point(&self) -> RooflinePoint {
        match self.link() {
            None => self.roof.evaluate(&self.cost),
            Some(l) => l.point(),
        }
    }

    /// A collective's time on its link; `None` for an operator.
    #[inline]
    pub fn link(&self) -> Option<LinkTime> {
        (self.compute == Compute::Network).then_some(self.link_time)
    }
}

impl Serialize for OpRow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("OpRow", 12)?;
        st.serialize_field("name", self.name)?;
        st.serialize_field("role", &self.role)?;
        st.serialize_field("kind", &self.kind)?;
        st.serialize_field("span", &self.span)?;
        st.serialize_field("count", &self.count)?;
        st.serialize_field("cost", &self.cost)?;
        st.serialize_field("compute", &self.compute)?;
        st.serialize_field("peak", &self.roof.peak)?;
        st.serialize_field("bandwidth", &self.roof.bandwidth)?;
        st.serialize_field("point", &self.point())?;
        st.serialize_field("launch_overhead", &self.launch_overhead)?;
        if let Some(link) = &self.link() {
            st.serialize_field("link", link)?;
        } else {
            st.skip_field("link")?;
        }
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
    /// The part of [`Totals::time`] spent in collectives on links, seconds (each run after
    /// the other, as the serial sum is; [`mod@crate::parallel::schedule`] overlaps them).
    pub communication: Seconds,
}

impl Totals {
    /// Roofline time plus launch overhead (kernels run back to back, no overlap).
    pub fn time_with_launch(&self) -> Seconds {
        self.time + self.launch_overhead
    }

    /// Adds `count` executions of a node of cost `cost` taking `time` seconds on the roofline
    /// ([`Roof::time`]), each one kernel launch. Leaves the launch overhead alone: set it once
    /// the nodes are in, with [`Totals::with_launch`].
    #[inline(always)]
    pub fn add_node(&mut self, cost: &Cost, time: Seconds, count: u64) {
        let n = crate::units::to_f64(count);
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

/// One stage of a model on a chip: the graph built for it and that graph evaluated.
///
/// Two analyses are equal when their public fields are; what [`analyze_into`] keeps to rebuild
/// the graph faster is not compared.
#[derive(Debug, Clone, Serialize)]
pub struct StageAnalysis {
    /// The workload analysed.
    pub workload: Workload,
    /// The operator graph evaluated (not serialised: the rows carry what a reader needs).
    ///
    /// [`analyze_into`] rewrites in place the graph it built last, knowing its structure from
    /// what it built it from (kept in the analysis, not in the graph). A graph put here by
    /// other means is for [`evaluate`]; [`analyze_into`] on the same analysis afterwards takes
    /// it for the one it built, which holds for [`crate::decoder::build_graph`]'s graph of the
    /// same model shape, stage and attention form (debug builds check every rewrite).
    #[serde(skip)]
    pub graph: OpGraph,
    /// One row per node of [`StageAnalysis::graph`], in forward order.
    pub rows: Vec<OpRow>,
    /// Sums over the forward pass.
    pub totals: Totals,
    /// Memory footprint ([`crate::memory`]).
    pub memory: MemoryFootprint,
    /// Caveats a reader must see: the model does not fit, the context exceeds what the model
    /// was trained for.
    pub warnings: Vec<String>,
    /// What [`analyze_into`] last built [`StageAnalysis::graph`] from: lets the next call for
    /// the same model shape, stage and attention form rewrite only the sizes, and skip
    /// validating the model again.
    #[serde(skip)]
    built: Option<BuiltFrom>,
}

impl PartialEq for StageAnalysis {
    fn eq(&self, other: &Self) -> bool {
        self.workload == other.workload
            && self.graph == other.graph
            && self.rows == other.rows
            && self.totals == other.totals
            && self.memory == other.memory
            && self.warnings == other.warnings
    }
}

/// Why an analysis could not be made.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnalysisError {
    /// The model's shape is unusable.
    Model(ModelError),
    /// The workload is unusable.
    Workload(WorkloadError),
    /// The chip lacks a figure the analysis needs.
    Device(DeviceError),
    /// The memory reserve is unusable (`--memory-reserve`).
    Reserve(String),
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalysisError::Model(e) => e.fmt(f),
            AnalysisError::Workload(e) => e.fmt(f),
            AnalysisError::Device(e) => e.fmt(f),
            AnalysisError::Reserve(e) => write!(f, "`--memory-reserve`: {e}"),
        }
    }
}
impl std::error::Error for AnalysisError {}
impl From<DeviceError> for AnalysisError {
    fn from(e: DeviceError) -> Self {
        AnalysisError::Device(e)
    }
}

/// Checks `model`, `workload` and `reserve` before a graph is built from them.
///
/// # Errors
/// The first input at fault.
pub fn validate(
    model: &Transformer,
    workload: &Workload,
    reserve: Reserve,
) -> Result<(), AnalysisError> {
    model.validate().map_err(AnalysisError::Model)?;
    validate_run(workload, reserve)
}

/// [`validate`] without the model: the checks a new batch, length or reserve needs.
fn validate_run(workload: &Workload, reserve: Reserve) -> Result<(), AnalysisError> {
    workload.validate().map_err(AnalysisError::Workload)?;
    reserve.validate().map_err(AnalysisError::Reserve)
}

/// Places every node of `graph` on `roofs`, calling `row` with each node's row, and returns the
/// totals: the one walk behind [`evaluate`] and [`evaluate_totals`] (each node through
/// [`Walk::row`]).
///
/// # Errors
/// The chip has no peak for a node's precision (the first such node's).
#[inline(always)]
pub(crate) fn walk(
    graph: &OpGraph,
    roofs: &ChipRoofs<'_>,
    mut row: impl FnMut(OpRow),
) -> Result<Totals, DeviceError> {
    let mut w = Walk::new(roofs);
    for node in graph.nodes() {
        row(w.row(node));
    }
    w.finish()
}

/// The walk over a graph's nodes in forward order: each node's row, the totals so far, and the
/// first node whose precision the chip has no peak for.
pub(crate) struct Walk<'r, 'd> {
    roofs: &'r ChipRoofs<'d>,
    totals: Totals,
    missing: Option<Compute>,
}

impl<'r, 'd> Walk<'r, 'd> {
    #[inline(always)]
    fn new(roofs: &'r ChipRoofs<'d>) -> Self {
        Self {
            roofs,
            totals: Totals::default(),
            missing: None,
        }
    }

    /// The row of `node`, added to the totals. A node without a peak is noted (the first one
    /// makes [`Walk::finish`] fail) and held against an infinite roof meanwhile.
    ///
    /// The row is made at one place from the parts either path gives, so that it is written
    /// straight into its slot rather than through a copy on the stack.
    #[inline(always)]
    fn row(&mut self, node: &crate::graph::Node) -> OpRow {
        let (kind, compute) = (node.kind(), node.compute());
        let (roof, cost, time, link_time) = match self.roofs.roof_at(node.slot()) {
            Some(roof) => {
                let cost = node.cost();
                (roof, cost, roof.time(&cost), LinkTime::ZERO)
            }
            None => self.off_roof(node),
        };
        let count = node.count();
        self.totals.add_node(&cost, time, count);
        OpRow {
            name: node.name,
            role: node.role,
            kind,
            span: node.span(),
            count,
            cost,
            compute,
            roof,
            launch_overhead: self.roofs.launch,
            link_time,
        }
    }
    /// The parts of the row of a node the chip's table has no roof for: a collective (no FLOPs
    /// or main-memory bytes, its time on its link), or a node whose peak is missing (noted,
    /// and held against an infinite roof).
    #[cold]
    #[inline(never)]
    fn off_roof(&mut self, node: &crate::graph::Node) -> (Roof, Cost, Seconds, LinkTime) {
        let compute = node.compute();
        if compute == Compute::Network {
            let (roof, time, link) = self.on_link(node);
            return (roof, Cost::default(), time, link.unwrap_or(LinkTime::ZERO));
        }
        self.missing.get_or_insert(compute);
        let roof = Roof {
            peak: FlopPerSec(f64::INFINITY),
            bandwidth: self.roofs.bandwidth,
        };
        let cost = node.cost();
        (roof, cost, roof.time(&cost), LinkTime::ZERO)
    }

    /// A collective's roof (no FLOPs; the link's bandwidth), time and time on the link, added
    /// to the communication total.
    #[cold]
    #[inline(never)]
    fn on_link(&mut self, node: &crate::graph::Node) -> (Roof, Seconds, Option<LinkTime>) {
        let crate::ops::Op::Communication(c) = node.op() else {
            // Only a collective runs on the network.
            return (
                Roof {
                    peak: FlopPerSec(0.0),
                    bandwidth: self.roofs.bandwidth,
                },
                Seconds(0.0),
                None,
            );
        };
        let link = LinkTime {
            latency: c.latency,
            transfer: c.transfer,
        };
        self.totals.communication += link.time() * node.count() as f64;
        let roof = Roof {
            peak: FlopPerSec(0.0),
            bandwidth: c.link,
        };
        (roof, link.time(), Some(link))
    }

    /// The totals with the launch overhead, or the first missing peak.
    #[inline(always)]
    fn finish(self) -> Result<Totals, DeviceError> {
        match self.missing {
            Some(compute) => Err(self.roofs.missing_peak(compute)),
            None => {
                let mut t = self.totals.with_launch(self.roofs.launch);
                if t.kernels > 0 {
                    t.launch_overhead += self.roofs.per_step;
                }
                Ok(t)
            }
        }
    }
}

/// The rows of `graph` on `device`, for a graph outside a model (`roofline op`): the walk of
/// [`evaluate`] without the memory footprint; `act` is the fallback precision for vector work
/// on chips without an fp32 peak.
///
/// # Errors
/// The chip lacks the bandwidth, or a peak a node needs.
pub fn evaluate_rows(
    graph: &OpGraph,
    act: crate::precision::Precision,
    device: &Device,
) -> Result<Vec<OpRow>, DeviceError> {
    let roofs = ChipRoofs::new(device, act)?;
    let mut rows = Vec::with_capacity(graph.nodes().len());
    walk(graph, &roofs, |r| rows.push(r))?;
    Ok(rows)
}

/// The totals of `graph` on `device` without the rows: allocates nothing. Equal to the totals
/// [`evaluate`] gives, bit for bit (a test checks it).
///
/// # Errors
/// The chip lacks the bandwidth, or a peak a node needs.
pub fn evaluate_totals(
    graph: &OpGraph,
    workload: &Workload,
    device: &Device,
) -> Result<Totals, DeviceError> {
    let roofs = ChipRoofs::new(device, workload.precisions.act)?;
    walk(graph, &roofs, |_| {})
}

/// Evaluates `out.graph`, the graph of `model` under `workload`, on `device` keeping `reserve`:
/// every row, the totals, the memory footprint and the warnings of `out` are replaced (its
/// buffers reused).
///
/// # Errors
/// The chip lacks the bandwidth, or a peak a node needs.
pub fn evaluate(
    model: &Transformer,
    workload: &Workload,
    device: &Device,
    reserve: Reserve,
    out: &mut StageAnalysis,
) -> Result<(), AnalysisError> {
    // The count kept for this blueprint by the last `analyze_into`, or counted.
    let parameters = match &out.built {
        Some(b) if b.blueprint == Blueprint::of(model, workload) => b.parameters,
        _ => model.parameters(),
    };
    let live = out.graph.peak_live_activations();
    evaluate_with(parameters, live, model, workload, device, reserve, out)
}

/// [`evaluate`] for a caller that knows `model` has `parameters` parameters
/// ([`Transformer::parameters`]) and `out.graph`'s peak of live activations `live`.
#[inline(always)]
fn evaluate_with(
    parameters: u64,
    live: crate::graph::LiveActivations,
    model: &Transformer,
    workload: &Workload,
    device: &Device,
    reserve: Reserve,
    out: &mut StageAnalysis,
) -> Result<(), AnalysisError> {
    out.rows.clear();
    out.warnings.clear();
    reserve
        .validate_for(device.capacity())
        .map_err(AnalysisError::Reserve)?;
    let roofs = ChipRoofs::new(device, workload.precisions.act)?;
    // The walk, driven by `extend` over the nodes: one reservation, no check per row.
    let mut w = Walk::new(&roofs);
    out.rows
        .extend(out.graph.nodes().iter().map(|node| w.row(node)));
    let totals = match w.finish() {
        Ok(totals) => totals,
        Err(e) => {
            out.rows.clear();
            return Err(e.into());
        }
    };
    let memory = footprint_of(
        parameters,
        live,
        model,
        workload,
        device.capacity(),
        reserve,
    );
    if memory.fits() == Some(false) {
        out.warnings.push(format!(
            "weights + KV cache + activations + runtime reserve need {:.1} GB, more than the \
             chip's {:.1} GB: this does not run on one chip as configured (shard it, or lower \
             batch, context or precision)",
            memory.total().get() / 1e9,
            memory.capacity.map(|c| c.get()).unwrap_or(0.0) / 1e9
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
    out.totals = totals;
    out.memory = memory;
    Ok(())
}

impl StageAnalysis {
    /// An analysis of nothing yet, to fill with [`analyze_into`]: an empty graph with room for
    /// a large decoder, no rows, zero totals and footprint, no warnings.
    pub fn empty(workload: Workload) -> Self {
        Self {
            workload,
            graph: OpGraph::new(0),
            rows: Vec::with_capacity(ROWS_HINT),
            totals: Totals::default(),
            memory: MemoryFootprint::EMPTY,
            warnings: Vec::new(),
            built: None,
        }
    }

    /// Empties it for `workload`, keeping its buffers.
    fn reset(&mut self, workload: &Workload) {
        self.graph.clear(0);
        self.built = None;
        self.rows.clear();
        self.warnings.clear();
        self.workload = *workload;
        self.totals = Totals::default();
        self.memory = MemoryFootprint::EMPTY;
    }
}

/// Rows [`StageAnalysis::empty`] makes room for: DeepSeek-V3 has 38 operators in decode.
const ROWS_HINT: usize = 40;

/// Analyses one stage of `model` on `device` keeping `reserve` for the runtime: builds the
/// operator graph ([`crate::decoder::build_graph`]) and [`evaluate`]s it. To analyse many
/// configurations, [`analyze_into`] reuses one analysis's buffers instead.
///
/// # Errors
/// An invalid model, workload or reserve, or a chip without the peak or bandwidth needed.
pub fn analyze(
    model: &Transformer,
    workload: &Workload,
    device: &Device,
    reserve: Reserve,
) -> Result<StageAnalysis, AnalysisError> {
    let mut out = StageAnalysis::empty(*workload);
    analyze_into(model, workload, device, reserve, &mut out)?;
    Ok(out)
}

/// [`analyze`] into `out`, reusing its graph, row and warning buffers: every field of `out` is
/// replaced, and nothing is allocated once its buffers have room and no warning is raised.
/// Equal to `*out = analyze(model, workload, device, reserve)?`, bit for bit (a test checks
/// it).
///
/// # Errors
/// As [`analyze`]; `out` is then an empty analysis of `workload` (empty graph, no rows, no
/// warnings, zero totals and footprint), equal to [`StageAnalysis::empty`].
pub fn analyze_into(
    model: &Transformer,
    workload: &Workload,
    device: &Device,
    reserve: Reserve,
    out: &mut StageAnalysis,
) -> Result<(), AnalysisError> {
    // A model's validity depends only on its shape, which the blueprint holds whole: when the
    // graph was built from a validated model of this blueprint, the check is not repeated.
    let blueprint = Blueprint::of(model, workload);
    let (same, checked) = match &out.built {
        Some(b) if b.blueprint == blueprint => (true, b.model_checked),
        _ => (false, false),
    };
    let inputs = if checked {
        validate_run(workload, reserve)
    } else {
        validate(model, workload, reserve)
    };
    let result = inputs.and_then(|()| {
        let parameters = rebuild(
            model,
            workload,
            &blueprint,
            same,
            &mut out.graph,
            &mut out.built,
        );
        let live = match &mut out.built {
            Some(b) => {
                b.model_checked = true;
                b.peak_live_activations(&out.graph)
            }
            None => out.graph.peak_live_activations(),
        };
        evaluate_with(parameters, live, model, workload, device, reserve, out)
    });
    if result.is_err() {
        out.reset(workload);
    }
    result
}
