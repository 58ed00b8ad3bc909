//! `roofline import` (a profile's kernels, or an empirical roof) and `analyze --profile` (the
//! join of predicted and measured). A `kind` member tells the three apart.

use super::hardware::HardwareDoc;
use super::SchemaVersion;
use crate::profile::ProfileReport;
use roofline_core::device::{Device, MemoryKind};
use roofline_core::ops::OpKind;
use roofline_core::precision::Precision;
use roofline_core::profile::join::Join;
use roofline_core::profile::place::{by_regime, Placement, ProfiledBound};
use roofline_core::profile::{CostSource, EmpiricalRoof, Profile, ProfileFormat, RoofFormat};
use roofline_core::roofline::Bound;
use roofline_core::workload::Stage;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;

/// The `kind` of a profile document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProfileKind {
    /// A profile's kernels on the roofline.
    Profile,
}

/// The `kind` of a roof document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoofKind {
    /// An empirical roof.
    Roof,
}

/// The `kind` of a join document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JoinKind {
    /// Predicted beside measured.
    Join,
}

/// One profiled kernel on the roofline (base units).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlacementDoc {
    /// Rank by time lost, from 1.
    pub rank: usize,
    /// Position in the profile.
    pub index: usize,
    /// Kernel (or operator) name.
    pub name: String,
    /// The framework operator that launched it, where known.
    pub op: Option<String>,
    /// The shape it was costed as.
    pub taken_for: Option<String>,
    /// Where its FLOPs and bytes come from.
    pub cost_source: CostSource,
    /// Measured duration, seconds.
    pub duration_s: f64,
    /// FLOPs.
    pub flops: f64,
    /// FLOPs per precision.
    #[schemars(schema_with = "super::precision_map_num")]
    pub flops_by_precision: BTreeMap<Precision, f64>,
    /// Tensor-pipe instructions (ncu).
    pub tensor_instructions: Option<f64>,
    /// DRAM bytes read.
    pub bytes_read: Option<f64>,
    /// DRAM bytes written.
    pub bytes_written: Option<f64>,
    /// L2 bytes.
    pub l2_bytes: Option<f64>,
    /// FLOP/byte.
    pub arithmetic_intensity: Option<f64>,
    /// FLOPs ÷ duration.
    pub achieved_flops_per_s: f64,
    /// Bytes ÷ duration.
    pub achieved_bytes_per_s: Option<f64>,
    /// The precision whose peak applies.
    pub precision: Option<Precision>,
    /// That peak, FLOP/s.
    pub peak_flops_per_s: Option<f64>,
    /// Main-memory bandwidth, B/s.
    pub bandwidth_bytes_per_s: Option<f64>,
    /// Attainable FLOP/s at its intensity.
    pub attainable_flops_per_s: Option<f64>,
    /// Roofline time, seconds.
    pub roofline_time_s: Option<f64>,
    /// Roofline time ÷ measured.
    pub fraction_of_roof: Option<f64>,
    /// Measured − roofline time, seconds.
    pub time_lost_s: Option<f64>,
    /// Which roof applies.
    pub bound: Option<Bound>,
    /// Launch-, memory- or compute-bound, or unknown.
    pub regime: ProfiledBound,
    /// What to try.
    pub advice: String,
}

impl PlacementDoc {
    /// The kernel object of `pl`, ranked `rank`, with its kernel in `p`.
    pub fn of(rank: usize, pl: &Placement, p: &Profile) -> Self {
        let k = p.kernels.iter().find(|k| k.index == pl.index);
        PlacementDoc {
            rank,
            index: pl.index,
            name: pl.name.clone(),
            op: k.and_then(|k| k.op.as_ref()).map(|o| o.name.clone()),
            taken_for: pl.shaped_as.clone(),
            cost_source: pl.cost_source,
            duration_s: pl.duration.get(),
            flops: pl.flops.get(),
            flops_by_precision: k
                .map(|k| k.flops.iter().map(|(pr, f)| (*pr, f.get())).collect())
                .unwrap_or_default(),
            tensor_instructions: k.and_then(|k| k.tensor_instructions),
            bytes_read: k.and_then(|k| k.bytes_read).map(|b| b.get()),
            bytes_written: k.and_then(|k| k.bytes_written).map(|b| b.get()),
            l2_bytes: k.and_then(|k| k.l2_bytes).map(|b| b.get()),
            arithmetic_intensity: pl.intensity.map(|x| x.get()),
            achieved_flops_per_s: pl.achieved.get(),
            achieved_bytes_per_s: pl.achieved_bandwidth.map(|x| x.get()),
            precision: pl.precision,
            peak_flops_per_s: pl.roof.map(|r| r.peak.get()),
            bandwidth_bytes_per_s: pl.roof.map(|r| r.bandwidth.get()),
            attainable_flops_per_s: pl.attainable.map(|x| x.get()),
            roofline_time_s: pl.roofline_time.map(|x| x.get()),
            fraction_of_roof: pl.fraction_of_roof,
            time_lost_s: pl.time_lost.map(|x| x.get()),
            bound: pl.bound,
            regime: pl.regime,
            advice: pl.advice.clone(),
        }
    }
}

/// The kernels of one regime, summed.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RegimeDoc {
    /// The regime.
    pub regime: ProfiledBound,
    /// Kernels in it.
    pub kernels: u64,
    /// Their measured time, seconds.
    pub time_s: f64,
    /// Their time lost, seconds.
    pub time_lost_s: f64,
    /// What to try.
    pub advice: &'static str,
}

/// Operators the cost model could not cost, by name.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UncostedDoc {
    /// Operator name.
    pub name: String,
    /// Occurrences.
    pub count: u64,
    /// Their time, seconds.
    pub time_s: f64,
}

/// `roofline import PROFILE`: every kernel of a profile on the roofline.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct KernelsDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// Always `profile`.
    pub kind: ProfileKind,
    /// `ncu_csv` or `torch_trace`.
    pub format: ProfileFormat,
    /// The file.
    pub origin: String,
    /// Profiled steps.
    pub steps: u64,
    /// Measured time of every kernel, seconds.
    pub total_time_s: f64,
    /// The roof; `null` without `--hardware`.
    pub hardware: Option<HardwareDoc>,
    /// Kernels ranked by time lost.
    pub kernels: Vec<PlacementDoc>,
    /// Sums per regime.
    pub by_regime: Vec<RegimeDoc>,
    /// What could not be costed.
    pub uncosted: Vec<UncostedDoc>,
    /// Notes on the import.
    pub notes: Vec<String>,
}

impl KernelsDoc {
    /// The document of `r`.
    pub fn of(r: &ProfileReport<'_>) -> Self {
        let p = r.profile;
        KernelsDoc {
            schema_version: SchemaVersion,
            kind: ProfileKind::Profile,
            format: p.format,
            origin: p.origin.clone(),
            steps: p.steps,
            total_time_s: p.total_time.get(),
            hardware: r.device.map(HardwareDoc::of),
            kernels: r
                .placements
                .iter()
                .enumerate()
                .map(|(i, pl)| PlacementDoc::of(i + 1, pl, p))
                .collect(),
            by_regime: by_regime(r.placements)
                .iter()
                .map(|g| RegimeDoc {
                    regime: g.regime,
                    kernels: g.kernels,
                    time_s: g.time.get(),
                    time_lost_s: g.time_lost.get(),
                    advice: crate::profile::regime_advice(g.regime),
                })
                .collect(),
            uncosted: p
                .uncosted
                .iter()
                .map(|u| UncostedDoc {
                    name: u.name.clone(),
                    count: u.count,
                    time_s: u.time.get(),
                })
                .collect(),
            notes: p.notes.clone(),
        }
    }
}

/// One peak of an empirical roof.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RoofPeakDoc {
    /// Its label in the file.
    pub label: String,
    /// Its precision, where known.
    pub precision: Option<Precision>,
    /// FLOP/s.
    pub flops_per_s: f64,
    /// The intensity it was reached at, FLOP/byte.
    pub at_intensity: Option<f64>,
    /// The bandwidth plateau of the same run, B/s.
    pub plateau_bytes_per_s: Option<f64>,
}

/// One bandwidth level of an empirical roof.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RoofLevelDoc {
    /// Name in the file (`DRAM`, `L1`).
    pub name: String,
    /// Which level.
    pub kind: MemoryKind,
    /// B/s.
    pub bandwidth_bytes_per_s: f64,
}

/// `roofline import ROOF`: an empirical roof (mixbench, ERT) and the chip it makes.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RoofDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// Always `roof`.
    pub kind: RoofKind,
    /// The file format.
    pub format: RoofFormat,
    /// The file.
    pub origin: String,
    /// The machine the file names.
    pub machine: String,
    /// Whether it was a GPU run, where the file says.
    pub gpu: Option<bool>,
    /// Peaks.
    pub peaks: Vec<RoofPeakDoc>,
    /// Bandwidth levels.
    pub levels: Vec<RoofLevelDoc>,
    /// Samples read.
    pub samples: usize,
    /// The chip it makes.
    pub hardware: HardwareDoc,
    /// Notes on the import.
    pub notes: Vec<String>,
}

impl RoofDoc {
    /// The document of `roof` and the chip `device` made from it.
    pub fn of(roof: &EmpiricalRoof, device: &Device) -> Self {
        RoofDoc {
            schema_version: SchemaVersion,
            kind: RoofKind::Roof,
            format: roof.format,
            origin: roof.origin.clone(),
            machine: roof.machine.clone(),
            gpu: roof.gpu,
            peaks: roof
                .peaks
                .iter()
                .map(|p| RoofPeakDoc {
                    label: p.label.clone(),
                    precision: p.precision,
                    flops_per_s: p.value.get(),
                    at_intensity: p.at_intensity.map(|x| x.get()),
                    plateau_bytes_per_s: p.plateau.map(|x| x.get()),
                })
                .collect(),
            levels: roof
                .levels
                .iter()
                .map(|l| RoofLevelDoc {
                    name: l.name.clone(),
                    kind: l.kind,
                    bandwidth_bytes_per_s: l.bandwidth.get(),
                })
                .collect(),
            samples: roof.samples.len(),
            hardware: HardwareDoc::of(device),
            notes: roof.notes.clone(),
        }
    }
}

/// One model operator, predicted beside measured, per forward pass.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct JoinRowDoc {
    /// Node name.
    pub name: &'static str,
    /// Operator type.
    pub kind: OpKind,
    /// Executions per forward pass.
    pub count: u64,
    /// Roofline time, seconds.
    pub predicted_s: f64,
    /// Launch overhead, seconds.
    pub launch_overhead_s: f64,
    /// Measured time, seconds; `null` when nothing matched.
    pub measured_s: Option<f64>,
    /// Measured ÷ predicted.
    pub measured_over_predicted: Option<f64>,
    /// Profiled events matched.
    pub events: u64,
    /// Events expected (count × steps).
    pub expected_events: u64,
}

/// Profiled operators that matched no model operator.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct UnmatchedDoc {
    /// Operator name.
    pub name: String,
    /// The shape it was taken for.
    pub taken_for: Option<String>,
    /// Occurrences.
    pub count: u64,
    /// Their time, seconds.
    pub time_s: f64,
}

/// One stage of the join.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct JoinStageDoc {
    /// The stage.
    pub stage: Stage,
    /// Profiled steps.
    pub steps: u64,
    /// One per model operator.
    pub rows: Vec<JoinRowDoc>,
    /// Predicted time of every operator, seconds.
    pub predicted_total_s: f64,
    /// Predicted time of the matched operators, seconds.
    pub predicted_matched_s: f64,
    /// Their measured time, seconds.
    pub measured_matched_s: f64,
    /// Time of the unmatched operators, seconds.
    pub unmatched_time_s: f64,
    /// Time of what could not be costed, seconds.
    pub uncosted_time_s: f64,
    /// Time of the profile, seconds.
    pub profile_time_s: f64,
    /// What matched nothing.
    pub unmatched: Vec<UnmatchedDoc>,
    /// Notes on the join.
    pub notes: Vec<String>,
}

impl JoinStageDoc {
    /// The stage object of `j`.
    pub fn of(j: &Join) -> Self {
        JoinStageDoc {
            stage: j.stage,
            steps: j.steps,
            rows: j
                .rows
                .iter()
                .map(|r| JoinRowDoc {
                    name: r.name,
                    kind: r.kind,
                    count: r.count,
                    predicted_s: r.predicted.get(),
                    launch_overhead_s: r.launch.get(),
                    measured_s: r.measured.map(|m| m.get()),
                    measured_over_predicted: r.ratio,
                    events: r.events,
                    expected_events: r.expected_events,
                })
                .collect(),
            predicted_total_s: j.predicted_total.get(),
            predicted_matched_s: j.predicted_matched.get(),
            measured_matched_s: j.measured_matched.get(),
            unmatched_time_s: j.unmatched_time.get(),
            uncosted_time_s: j.uncosted_time.get(),
            profile_time_s: j.profile_time.get(),
            unmatched: j
                .unmatched
                .iter()
                .map(|u| UnmatchedDoc {
                    name: u.name.clone(),
                    taken_for: u.shaped_as.clone(),
                    count: u.count,
                    time_s: u.time.get(),
                })
                .collect(),
            notes: j.notes.clone(),
        }
    }
}

/// `roofline analyze --profile FILE`: predicted beside measured per model operator.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct JoinDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// Always `join`.
    pub kind: JoinKind,
    /// The profile file.
    pub profile: String,
    /// One per stage.
    pub stages: Vec<JoinStageDoc>,
}

impl JoinDoc {
    /// The document of `joins` against the profile `origin`.
    pub fn of(joins: &[Join], origin: &str) -> Self {
        JoinDoc {
            schema_version: SchemaVersion,
            kind: JoinKind::Join,
            profile: origin.to_string(),
            stages: joins.iter().map(JoinStageDoc::of).collect(),
        }
    }
}
