//! `roofline analyze`: a model on a chip, per stage the operators, totals and memory;
//! `analyze --fusion` adds each stage's fusion comparison.

use super::fuse::FusionComparisonDoc;
use super::hardware::HardwareDoc;
use super::models::ModelDoc;
use super::{num_or_null, Num, SchemaVersion};
use crate::advice::StageAdviceDoc;
use crate::analysis::AnalyzeReport;
use crate::headline::HeadlineDoc;
use roofline_core::analysis::{OpRow, StageAnalysis, Totals};
use roofline_core::fusion::FusionComparison;
use roofline_core::graph::{Role, Span};
use roofline_core::memory::MemoryFootprint;
use roofline_core::ops::{Compute, OpKind};
use roofline_core::precision::Precision;
use roofline_core::roofline::Bound;
use roofline_core::workload::{Logits, Stage, Workload};
use schemars::JsonSchema;
use serde::Serialize;

/// The workload of one stage.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WorkloadDoc {
    /// Sequences in the batch.
    pub batch: u64,
    /// Prompt length: prefill only. A decode step has no prompt: it carries `context` (the
    /// cached tokens) and `kv_len` (context + 1) instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq_len: Option<u64>,
    /// Tokens already in the KV cache (decode).
    pub context: u64,
    /// Tokens in this forward pass (batch × seq_len in prefill, batch in decode).
    pub tokens: u64,
    /// Keys each query attends per sequence (seq_len in prefill, context + 1 in decode).
    pub kv_len: u64,
    /// Weight storage precision.
    pub weight_precision: Precision,
    /// Activation precision.
    pub activation_precision: Precision,
    /// KV-cache precision.
    pub kv_precision: Precision,
    /// Whether attention runs as one fused (FlashAttention) kernel.
    pub flash_attention: bool,
    /// The positions lm_head computes logits for: `last` (each sequence's last) or `all`
    /// (every position). A decode step has one position per sequence either way.
    pub logits: Logits,
}

/// One operator of the forward pass, ONE execution.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OpDoc {
    /// Unique name; Hugging Face module names for linears (`q_proj`).
    pub name: &'static str,
    /// What the operator does in the model (`q_proj`, `attention_scores`, `lm_head`, …).
    pub role: Role,
    /// Operator type.
    pub kind: OpKind,
    /// Where it runs: before the blocks (`prologue`), in blocks `first..=last`, or after them
    /// (`epilogue`).
    pub span: Span,
    /// Executions per forward pass.
    pub count: u64,
    /// Precision whose peak applies, or `fp32 vector`.
    pub compute: String,
    /// The operator on the roofline, one execution.
    #[serde(flatten)]
    pub roofline: RooflineRowDoc,
}

/// One execution of an operator on its roof: the fields `analyze` and `op` both write.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RooflineRowDoc {
    /// FLOPs of one execution.
    pub flops: f64,
    /// Bytes read from main memory by one execution.
    pub bytes_read: f64,
    /// Bytes written to main memory by one execution.
    pub bytes_written: f64,
    /// Bytes read + written.
    pub bytes: f64,
    /// FLOPs ÷ bytes, FLOP/byte (`null` for an operator that moves no bytes).
    #[schemars(schema_with = "num_or_null")]
    pub arithmetic_intensity: Num,
    /// Peak ÷ bandwidth, FLOP/byte.
    pub ridge_point: f64,
    /// Which roof applies.
    pub bound: Bound,
    /// The peak that applies, FLOP/s.
    pub peak_flops_per_s: f64,
    /// min(peak, intensity × bandwidth), FLOP/s.
    pub attainable_flops_per_s: f64,
    /// FLOPs ÷ peak, seconds.
    pub compute_time_s: f64,
    /// Bytes ÷ bandwidth, seconds.
    pub memory_time_s: f64,
    /// max(compute, memory) time of one execution, seconds.
    pub time_s: f64,
    /// Launch overhead of one execution, seconds.
    pub launch_overhead_s: f64,
}

impl RooflineRowDoc {
    /// The cost and roofline point of one execution of `row`.
    pub fn of(row: &OpRow) -> Self {
        let p = row.point();
        RooflineRowDoc {
            flops: row.cost.flops.get(),
            bytes_read: row.cost.bytes_read.get(),
            bytes_written: row.cost.bytes_written.get(),
            bytes: row.cost.bytes().get(),
            arithmetic_intensity: p.intensity.get(),
            ridge_point: p.ridge.get(),
            bound: p.bound,
            peak_flops_per_s: row.peak().get(),
            attainable_flops_per_s: p.attainable.get(),
            compute_time_s: p.compute_time.get(),
            memory_time_s: p.memory_time.get(),
            time_s: p.time.get(),
            launch_overhead_s: row.launch_overhead.get(),
        }
    }
}

/// The name of the units an operator runs on, as `analyze` writes it.
pub fn compute_name(c: Compute) -> String {
    match c {
        Compute::Matrix(p) => p.name().to_string(),
        Compute::Vector => "fp32 vector".to_string(),
        Compute::Network => "link".to_string(),
    }
}

impl OpDoc {
    /// The operator object of `row`.
    pub fn of(row: &OpRow) -> Self {
        OpDoc {
            name: row.name,
            role: row.role,
            kind: row.kind,
            span: row.span,
            count: row.count,
            compute: compute_name(row.compute),
            roofline: RooflineRowDoc::of(row),
        }
    }
}

/// Σ count × per-operator value over the forward pass.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TotalsDoc {
    /// FLOPs.
    pub flops: f64,
    /// Bytes read.
    pub bytes_read: f64,
    /// Bytes written.
    pub bytes_written: f64,
    /// Bytes read + written.
    pub bytes: f64,
    /// FLOPs ÷ bytes, FLOP/byte.
    #[schemars(schema_with = "num_or_null")]
    pub arithmetic_intensity: Num,
    /// Roofline time, launch overhead excluded, seconds.
    pub time_s: f64,
    /// Kernels launched.
    pub kernels: u64,
    /// Kernels × launch overhead, seconds.
    pub launch_overhead_s: f64,
    /// Roofline time + launch overhead, seconds.
    pub time_with_launch_s: f64,
}

/// The memory footprint of one stage, bytes.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MemoryDoc {
    /// Weights.
    pub weights_bytes: f64,
    /// KV cache.
    pub kv_cache_bytes: f64,
    /// Activation tensors alive at once at the peak.
    pub activation_bytes: f64,
    /// The node at which the activation peak is reached.
    pub activation_peak_at: &'static str,
    /// Kept by the runtime (allocator, workspaces, context).
    pub reserve_bytes: f64,
    /// Weights + KV cache + activations + reserve.
    pub total_bytes: f64,
    /// The chip's main-memory capacity, where known.
    pub capacity_bytes: Option<f64>,
    /// Whether the total fits in the chip's memory; `null` when its capacity is unknown.
    pub fits_on_chip: Option<bool>,
}

/// One stage of `analyze`; with `F` = [`FusionComparisonDoc`], of `analyze --fusion`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StageDoc<F = NoFusion> {
    /// `prefill` or `decode`.
    pub stage: Stage,
    /// The workload.
    pub workload: WorkloadDoc,
    /// Operators in forward order.
    pub ops: Vec<OpDoc>,
    /// Sums over the forward pass.
    pub totals: TotalsDoc,
    /// Memory footprint.
    pub memory: MemoryDoc,
    /// Warnings (memory does not fit, …).
    pub warnings: Vec<String>,
    /// The fusion comparison of this stage (`analyze --fusion` only).
    #[serde(flatten)]
    pub fusion: F,
}

impl WorkloadDoc {
    /// The workload object of `w`.
    pub fn of(w: &Workload) -> Self {
        WorkloadDoc {
            batch: w.batch,
            seq_len: (w.stage == Stage::Prefill).then_some(w.seq_len),
            context: w.context,
            tokens: w.tokens(),
            kv_len: w.kv_len(),
            weight_precision: w.precisions.weight,
            activation_precision: w.precisions.act,
            kv_precision: w.precisions.kv,
            flash_attention: w.flash_attention,
            logits: w.logits,
        }
    }
}

impl TotalsDoc {
    /// The totals object of `t`.
    pub fn of(t: &Totals) -> Self {
        TotalsDoc {
            flops: t.cost.flops.get(),
            bytes_read: t.cost.bytes_read.get(),
            bytes_written: t.cost.bytes_written.get(),
            bytes: t.cost.bytes().get(),
            arithmetic_intensity: t.cost.intensity().get(),
            time_s: t.time.get(),
            kernels: t.kernels,
            launch_overhead_s: t.launch_overhead.get(),
            time_with_launch_s: t.time_with_launch().get(),
        }
    }
}

impl MemoryDoc {
    /// The memory object of `m`.
    pub fn of(m: &MemoryFootprint) -> Self {
        MemoryDoc {
            weights_bytes: m.weights.get(),
            kv_cache_bytes: m.kv_cache.get(),
            activation_bytes: m.activations.get(),
            activation_peak_at: m.activations_at,
            reserve_bytes: m.reserve.get(),
            total_bytes: m.total().get(),
            capacity_bytes: m.capacity.map(|c| c.get()),
            fits_on_chip: m.fits(),
        }
    }
}

impl StageDoc {
    /// The stage object of `s`.
    pub fn of(s: &StageAnalysis) -> Self {
        StageDoc {
            stage: s.workload.stage,
            workload: WorkloadDoc::of(&s.workload),
            ops: s.rows.iter().map(OpDoc::of).collect(),
            totals: TotalsDoc::of(&s.totals),
            memory: MemoryDoc::of(&s.memory),
            warnings: s.warnings.clone(),
            fusion: NoFusion {},
        }
    }
}

/// No `fusion` member: a stage of plain `analyze`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NoFusion {}

/// The `fusion` member of a stage of `analyze --fusion`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WithFusion {
    /// Kernels, tiles, rejected fusions, before and after.
    pub fusion: FusionComparisonDoc,
}

/// `roofline analyze`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AnalyzeDoc<F = NoFusion> {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The model.
    pub model: ModelDoc,
    /// The chip.
    pub hardware: HardwareDoc,
    /// The serving headline: TTFT (the prefill pass), TPOT (one decode step) and tokens/s,
    /// roofline lower bounds on time with the launch overhead in them.
    pub headline: HeadlineDoc,
    /// The stages, in order (prefill, decode).
    pub stages: Vec<StageDoc<F>>,
    /// What to change, per stage (`analyze --advice` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advice: Option<Vec<StageAdviceDoc>>,
}

/// `roofline analyze --fusion PRESET`: each stage carries `fusion`.
pub type AnalyzeFusionDoc = AnalyzeDoc<WithFusion>;

impl AnalyzeDoc {
    /// The document of `r`.
    pub fn of(r: &AnalyzeReport<'_>) -> Self {
        AnalyzeDoc {
            schema_version: SchemaVersion,
            model: ModelDoc::of(r.model),
            hardware: HardwareDoc::of(r.device),
            headline: HeadlineDoc::of(&roofline_core::serve::headline::of_analyses(r.stages)),
            stages: r.stages.iter().map(StageDoc::of).collect(),
            advice: None,
        }
    }

    /// The document of `r` with "what to change" per stage (`analyze --advice`), each change's
    /// command built from `base`, the command line analysed.
    pub fn with_advice(
        r: &AnalyzeReport<'_>,
        advice: &[roofline_core::serve::advice::StageAdvice],
        base: &[crate::advice::Arg],
    ) -> Self {
        let mut doc = Self::of(r);
        doc.advice = Some(advice.iter().map(|a| StageAdviceDoc::of(a, base)).collect());
        doc
    }

    /// The document of `r` with the fusion comparison of each stage (in the order of the
    /// stages; a stage without one is left out).
    pub fn with_fusion(r: &AnalyzeReport<'_>, fusion: &[FusionComparison]) -> AnalyzeFusionDoc {
        let d = Self::of(r);
        AnalyzeDoc {
            schema_version: d.schema_version,
            model: d.model,
            hardware: d.hardware,
            headline: d.headline,
            advice: d.advice,
            stages: d
                .stages
                .into_iter()
                .zip(fusion)
                .map(|(s, c)| StageDoc {
                    stage: s.stage,
                    workload: s.workload,
                    ops: s.ops,
                    totals: s.totals,
                    memory: s.memory,
                    warnings: s.warnings,
                    fusion: WithFusion {
                        fusion: FusionComparisonDoc::of(c),
                    },
                })
                .collect(),
        }
    }
}
