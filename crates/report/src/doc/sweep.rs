//! `roofline sweep`: per group (chip, precision, stage, length) the step at every batch, and
//! each operator's intensity and bound at every batch with its crossover batch.

use super::hardware::HardwareDoc;
use super::models::ModelDoc;
use super::SchemaVersion;
use crate::sweep::SweepView;
use roofline_core::ops::OpKind;
use roofline_core::precision::Precision;
use roofline_core::roofline::Bound;
use roofline_core::sweep::Crossover;
use roofline_core::workload::{Logits, Stage};
use schemars::JsonSchema;
use serde::Serialize;

/// Where an operator turns compute-bound as the batch grows.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum CrossoverDoc {
    /// Solved in closed form.
    At {
        /// The real batch at which the intensity equals the ridge.
        exact: f64,
        /// The smallest whole batch ≥ 1 at which the operator is compute-bound.
        smallest_batch: u64,
    },
    /// Found by searching whole batches (the intensity is not rational in the batch).
    Searched {
        /// Always `null`: there is no closed form.
        exact: (),
        /// The smallest whole batch ≥ 1 at which the operator is compute-bound.
        smallest_batch: u64,
    },
    /// Memory-bound at every batch.
    Never {
        /// The intensity as the batch grows without bound, FLOP/byte.
        limit_intensity: f64,
    },
}

impl CrossoverDoc {
    /// The crossover object of `c`.
    pub fn of(c: &Crossover) -> Self {
        match *c {
            Crossover::At { exact, smallest } => CrossoverDoc::At {
                exact,
                smallest_batch: smallest,
            },
            Crossover::Searched { smallest } => CrossoverDoc::Searched {
                exact: (),
                smallest_batch: smallest,
            },
            Crossover::Never { limit } => CrossoverDoc::Never {
                limit_intensity: limit.get(),
            },
        }
    }
}

/// One operator across the batches of a group.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SweepOperatorDoc {
    /// Node name.
    pub name: &'static str,
    /// Operator type.
    pub kind: OpKind,
    /// Executions per forward pass.
    pub count: u64,
    /// Its ridge point (the peak of its compute units ÷ bandwidth), FLOP/byte.
    pub ridge_point: f64,
    /// Where it turns compute-bound.
    pub crossover: CrossoverDoc,
    /// Its intensity at each batch of `batches`, FLOP/byte.
    pub arithmetic_intensity: Vec<f64>,
    /// Its bound at each batch of `batches`.
    pub bound: Vec<Bound>,
}

/// The step at one batch.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SweepPointDoc {
    /// Sequences.
    pub batch: u64,
    /// Tokens in the step.
    pub tokens: u64,
    /// Roofline time of the step, seconds.
    pub step_time_s: f64,
    /// With launch overhead, seconds.
    pub step_time_with_launch_s: f64,
    /// Tokens per second.
    pub tokens_per_s: f64,
    /// Seconds per token.
    pub time_per_token_s: f64,
    /// FLOPs of the step.
    pub flops: f64,
    /// Bytes of the step.
    pub bytes: f64,
    /// Weights, bytes.
    pub weights_bytes: f64,
    /// KV cache, bytes.
    pub kv_cache_bytes: f64,
    /// Activations alive at the peak, bytes.
    pub activation_bytes: f64,
    /// Runtime reserve, bytes.
    pub reserve_bytes: f64,
    /// Memory footprint (weights + KV cache + activations + reserve), bytes.
    pub memory_bytes: f64,
    /// Whether it fits in the chip's memory; `null` when the capacity is unknown.
    pub fits: Option<bool>,
}

/// One group: a chip, precisions, a stage and a length.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SweepGroupDoc {
    /// The chip.
    pub hardware: HardwareDoc,
    /// `prefill` or `decode`.
    pub stage: Stage,
    /// Prompt length: prefill groups only (a decode group carries `context` instead).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq_len: Option<u64>,
    /// Context.
    pub context: u64,
    /// The positions lm_head computes logits for: `last` or `all` (one per sequence in decode
    /// either way).
    pub logits: Logits,
    /// Weight precision.
    pub weight_precision: Precision,
    /// Activation precision.
    pub activation_precision: Precision,
    /// KV-cache precision.
    pub kv_precision: Precision,
    /// Peak of the activation precision, FLOP/s.
    pub peak_flops_per_s: f64,
    /// Its ridge point, FLOP/byte.
    pub ridge_point: f64,
    /// Main-memory capacity, bytes, where known.
    pub capacity_bytes: Option<f64>,
    /// One per batch.
    pub points: Vec<SweepPointDoc>,
    /// One per operator.
    pub operators: Vec<SweepOperatorDoc>,
}

/// The command name of a sweep document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SweepCommand {
    /// `roofline sweep`.
    Sweep,
}

/// `roofline sweep`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SweepDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// Always `sweep`.
    pub command: SweepCommand,
    /// The model.
    pub model: ModelDoc,
    /// Whether attention is fused.
    pub flash_attention: bool,
    /// The batches, ascending.
    pub batches: Vec<u64>,
    /// The groups.
    pub groups: Vec<SweepGroupDoc>,
}

impl SweepDoc {
    /// The document of `v`.
    pub fn of(v: &SweepView<'_>) -> Self {
        let s = v.sweep;
        let nb = s.batches.len();
        let groups = s
            .groups
            .iter()
            .enumerate()
            .map(|(gi, g)| SweepGroupDoc {
                hardware: HardwareDoc::of(&v.devices[g.device]),
                stage: g.stage,
                seq_len: (g.stage == Stage::Prefill).then_some(g.seq_len),
                context: g.context,
                logits: g.logits,
                weight_precision: g.precisions.weight,
                activation_precision: g.precisions.act,
                kv_precision: g.precisions.kv,
                peak_flops_per_s: g.peak.get(),
                ridge_point: g.ridge.get(),
                capacity_bytes: g.capacity.map(|c| c.get()),
                points: s
                    .group_points(gi)
                    .iter()
                    .map(|p| SweepPointDoc {
                        batch: p.batch,
                        tokens: p.tokens(),
                        step_time_s: p.step_time().get(),
                        step_time_with_launch_s: p.totals.time_with_launch().get(),
                        tokens_per_s: p.tokens_per_s(),
                        time_per_token_s: p.time_per_token().get(),
                        flops: p.totals.cost.flops.get(),
                        bytes: p.totals.cost.bytes().get(),
                        weights_bytes: p.memory.weights.get(),
                        kv_cache_bytes: p.memory.kv_cache.get(),
                        activation_bytes: p.memory.activations.get(),
                        reserve_bytes: p.memory.reserve.get(),
                        memory_bytes: p.memory.total().get(),
                        fits: p.fits(),
                    })
                    .collect(),
                operators: g
                    .nodes
                    .iter()
                    .enumerate()
                    .map(|(k, n)| SweepOperatorDoc {
                        name: n.name,
                        kind: n.kind,
                        count: n.count,
                        ridge_point: g.node_ridges[k].get(),
                        crossover: CrossoverDoc::of(&g.crossovers[k]),
                        arithmetic_intensity: (0..nb)
                            .map(|bi| s.ops_at(gi * nb + bi)[k].intensity.get())
                            .collect(),
                        bound: (0..nb).map(|bi| s.ops_at(gi * nb + bi)[k].bound).collect(),
                    })
                    .collect(),
            })
            .collect();
        SweepDoc {
            schema_version: SchemaVersion,
            command: SweepCommand::Sweep,
            model: ModelDoc::of(v.model),
            flash_attention: v.flash_attention,
            batches: s.batches.clone(),
            groups,
        }
    }
}
