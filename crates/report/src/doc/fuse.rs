//! Fusion: the comparison of one stage under a preset (`analyze --fusion`, member `fusion`),
//! and `roofline fuse --chain`.

use super::SchemaVersion;
use roofline_core::fusion::{
    ChainComparison, FusionComparison, FusionSaving, FusionSummary, Preset,
};
use roofline_core::graph::Span;
use roofline_core::roofline::Bound;
use schemars::JsonSchema;
use serde::Serialize;

/// Kernels, bytes and time of a forward pass (or a chain) as one plan launches it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SummaryDoc {
    /// Kernels of one decoder block (the mean over the blocks where they differ, as
    /// DeepSeek-V3's dense and MoE blocks do).
    pub kernels_per_layer: f64,
    /// Bytes one block reads from main memory.
    pub bytes_read_per_layer: f64,
    /// Bytes one block writes to main memory.
    pub bytes_written_per_layer: f64,
    /// Roofline time of one block, seconds.
    pub time_per_layer_s: f64,
    /// Kernels of the forward pass.
    pub kernels: u64,
    /// FLOPs of the forward pass.
    pub flops: f64,
    /// Bytes read.
    pub bytes_read: f64,
    /// Bytes written.
    pub bytes_written: f64,
    /// Roofline time, seconds.
    pub time_s: f64,
    /// Kernels × launch overhead, seconds.
    pub launch_overhead_s: f64,
    /// Roofline time + launch overhead, seconds.
    pub time_with_launch_s: f64,
}

impl SummaryDoc {
    /// The summary object of `s`.
    pub fn of(s: &FusionSummary) -> Self {
        SummaryDoc {
            kernels_per_layer: s.kernels_per_layer,
            bytes_read_per_layer: s.cost_per_layer.bytes_read.get(),
            bytes_written_per_layer: s.cost_per_layer.bytes_written.get(),
            time_per_layer_s: s.time_per_layer.get(),
            kernels: s.kernels,
            flops: s.cost.flops.get(),
            bytes_read: s.cost.bytes_read.get(),
            bytes_written: s.cost.bytes_written.get(),
            time_s: s.time.get(),
            launch_overhead_s: s.launch_overhead.get(),
            time_with_launch_s: s.time_with_launch().get(),
        }
    }
}

/// The tile a fused kernel keeps on chip.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct KernelTileDoc {
    /// The tile in words (`16 tokens × 11008`).
    pub tile: String,
    /// Bytes the tile keeps in shared memory.
    pub working_set_bytes: f64,
    /// Whether it fits in one SM's shared memory.
    pub fits: bool,
}

/// One kernel of the fused plan, ONE execution.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FusedKernelDoc {
    /// Name (the fused operators joined by `+`).
    pub name: String,
    /// Where it runs: prologue, a block range, or epilogue.
    pub span: Span,
    /// The fusion rules applied.
    pub rules: Vec<&'static str>,
    /// FLOPs.
    pub flops: f64,
    /// Bytes read from main memory.
    pub bytes_read: f64,
    /// Bytes written to main memory.
    pub bytes_written: f64,
    /// FLOP/byte.
    pub arithmetic_intensity: f64,
    /// Which roof applies.
    pub bound: Bound,
    /// Roofline time, seconds.
    pub time_s: f64,
    /// The tile kept on chip, for a kernel that keeps one.
    pub tile: Option<KernelTileDoc>,
}

/// A fusion the plan did not make, and why.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RejectedDoc {
    /// The rule.
    pub rule: &'static str,
    /// The operators it would have fused.
    pub nodes: Vec<&'static str>,
    /// Why not.
    pub reason: String,
}

/// One stage under one fusion preset: before (eager) and after.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FusionComparisonDoc {
    /// The preset.
    pub preset: Preset,
    /// Every operator its own kernel.
    pub before: SummaryDoc,
    /// The preset's plan.
    pub after: SummaryDoc,
    /// Before ÷ after, time with launch overhead.
    pub speedup: f64,
    /// Launch overhead saved, seconds.
    pub launch_saved_s: f64,
    /// Roofline time saved, seconds.
    pub roofline_saved_s: f64,
    /// Where the saving comes from.
    pub regime: FusionSaving,
    /// The plan's kernels in order.
    pub kernels: Vec<FusedKernelDoc>,
    /// Fusions not made.
    pub rejected: Vec<RejectedDoc>,
}

impl FusionComparisonDoc {
    /// The comparison object of `c`.
    pub fn of(c: &FusionComparison) -> Self {
        FusionComparisonDoc {
            preset: c.preset,
            before: SummaryDoc::of(&c.before),
            after: SummaryDoc::of(&c.after),
            speedup: c.speedup,
            launch_saved_s: c.launch_saved.get(),
            roofline_saved_s: c.roofline_saved.get(),
            regime: c.regime,
            kernels: c
                .plan
                .kernels
                .iter()
                .zip(&c.after.points)
                .map(|(k, p)| FusedKernelDoc {
                    name: k.name.clone(),
                    span: k.span,
                    rules: k.rules.iter().map(|r| r.name()).collect(),
                    flops: k.cost.flops.get(),
                    bytes_read: k.cost.bytes_read.get(),
                    bytes_written: k.cost.bytes_written.get(),
                    arithmetic_intensity: p.intensity.get(),
                    bound: p.bound,
                    time_s: p.time.get(),
                    tile: k.tile.as_ref().map(|t| KernelTileDoc {
                        tile: t.tile.clone(),
                        working_set_bytes: t.working_set.get(),
                        fits: t.fits,
                    }),
                })
                .collect(),
            rejected: c
                .plan
                .rejected
                .iter()
                .map(|r| RejectedDoc {
                    rule: r.rule.name(),
                    nodes: r.nodes.clone(),
                    reason: r.reason.clone(),
                })
                .collect(),
        }
    }
}

/// The tile of a fused chain and whether it fits.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ChainTileDoc {
    /// The tile in words.
    pub tile: String,
    /// Bytes it keeps in shared memory.
    pub working_set_bytes: f64,
    /// Shared memory of one SM, bytes; `null` when the chip does not say.
    pub capacity_bytes: Option<f64>,
    /// Whether it fits.
    pub fits: bool,
}

/// `roofline fuse --chain`: a chain of operators as separate kernels and as one.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FuseDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The operators of the chain, in order.
    pub chain: Vec<String>,
    /// One kernel per operator.
    pub separate: SummaryDoc,
    /// One kernel.
    pub fused: SummaryDoc,
    /// Whether the fused kernel's tile fits on chip.
    pub feasible: bool,
    /// The fused kernel's tile.
    pub tile: ChainTileDoc,
    /// Separate ÷ fused time with launch overhead.
    pub speedup: f64,
    /// Where the saving comes from.
    pub regime: FusionSaving,
    /// Bytes separate − bytes fused.
    pub bytes_saved: f64,
}

impl FuseDoc {
    /// The document of `c`.
    pub fn of(c: &ChainComparison) -> Self {
        FuseDoc {
            schema_version: SchemaVersion,
            chain: c.labels.clone(),
            separate: SummaryDoc::of(&c.separate),
            fused: SummaryDoc::of(&c.fused),
            feasible: c.feasible,
            tile: ChainTileDoc {
                tile: c.tile.tile.clone(),
                working_set_bytes: c.tile.working_set.get(),
                capacity_bytes: c.tile.capacity.map(|x| x.get()),
                fits: c.tile.fits,
            },
            speedup: c.speedup,
            regime: c.regime,
            bytes_saved: c.separate.cost.bytes().get() - c.fused.cost.bytes().get(),
        }
    }
}
