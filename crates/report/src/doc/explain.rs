//! `roofline analyze --explain NAME` and `roofline op … --explain`: worked derivations.

use super::{num_or_null, Num, SchemaVersion};
use roofline_core::analysis::OpRow;
use roofline_core::explain::{Derivation, Given, Step};
use roofline_core::graph::{Role, Span};
use roofline_core::ops::{Compute, Cost, OpKind};
use roofline_core::roofline::{Bound, RooflinePoint};
use roofline_core::units::{BytesPerSec, FlopPerSec, Seconds};
use schemars::JsonSchema;
use serde::Serialize;

/// The row a derivation arrives at: one execution of the operator, with its roof and point
/// (base units; field names as the core's `OpRow` serialises them).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RowDoc {
    /// Node name.
    pub name: &'static str,
    /// What the operator does in the model.
    pub role: Role,
    /// Operator type.
    pub kind: OpKind,
    /// Where it runs: prologue, a block range, or epilogue.
    pub span: Span,
    /// Executions per forward pass.
    pub count: u64,
    /// FLOPs and bytes of one execution.
    pub cost: Cost,
    /// The units it runs on.
    pub compute: Compute,
    /// The peak that applies, FLOP/s.
    pub peak: FlopPerSec,
    /// Main-memory bandwidth, B/s.
    pub bandwidth: BytesPerSec,
    /// Its place on the roofline.
    pub point: RooflinePoint,
    /// Launch overhead of one execution, seconds.
    pub launch_overhead: Seconds,
}

impl RowDoc {
    /// The row object of `r`.
    pub fn of(r: &OpRow) -> Self {
        RowDoc {
            name: r.name,
            role: r.role,
            kind: r.kind,
            span: r.span,
            count: r.count,
            cost: r.cost,
            compute: r.compute,
            peak: r.roof.peak,
            bandwidth: r.roof.bandwidth,
            point: r.point(),
            launch_overhead: r.launch_overhead,
        }
    }
}

/// How far from the ridge the operator sits.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DistanceDoc {
    /// ridge ÷ intensity (memory-bound) or intensity ÷ ridge (compute-bound); `null` for an
    /// operator with no FLOPs.
    #[schemars(schema_with = "num_or_null")]
    pub factor: Num,
    /// The side of the ridge.
    pub bound: Bound,
}

/// One derivation.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DerivationDoc {
    /// The stage (`prefill`, `decode`) of an analysis' operator; `null` for a lone operator.
    pub stage: Option<String>,
    /// Operator name.
    pub name: String,
    /// Operator type.
    pub kind: OpKind,
    /// Chip name and id.
    pub device: String,
    /// The setting, one line each.
    pub context: Vec<String>,
    /// Values the derivation starts from.
    pub given: Vec<Given>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The row the steps arrive at.
    pub row: RowDoc,
    /// Main-memory bandwidth used, B/s.
    pub bandwidth: BytesPerSec,
    /// Distance from the ridge.
    pub distance: DistanceDoc,
    /// The verdict in one paragraph.
    pub conclusion: String,
}

impl DerivationDoc {
    /// The derivation object of `d` in `stage`.
    pub fn of(stage: Option<String>, d: &Derivation) -> Self {
        DerivationDoc {
            stage,
            name: d.name.clone(),
            kind: d.kind,
            device: d.device.clone(),
            context: d.context.clone(),
            given: d.given.clone(),
            steps: d.steps.clone(),
            row: RowDoc::of(&d.row),
            bandwidth: d.bandwidth,
            distance: DistanceDoc {
                factor: d.distance.factor,
                bound: d.distance.bound,
            },
            conclusion: crate::explain::conclusion(d),
        }
    }
}

/// The derivations document.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ExplainDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// One per (stage, operator).
    pub derivations: Vec<DerivationDoc>,
}
