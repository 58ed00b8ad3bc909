//! Before and after: a plan against eager execution, and a user chain against its separate
//! kernels, with the regime that explains the saving.

use super::chain::{chain_graph, ChainError, ChainSpec};
use super::plan::{evaluate_plan, fuse_all, plan, FusionPlan, FusionSummary};
use super::rules::Preset;
use super::tile::TilePlan;
use crate::device::{Device, DeviceError};
use crate::graph::OpGraph;
use crate::precision::Precision;
use crate::units::Seconds;
use serde::Serialize;

/// Where a fusion's saving comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FusionSaving {
    /// Fewer kernel launches save more time than fewer bytes (decode at small batch: every
    /// kernel is tiny, launch overhead dominates).
    Launches,
    /// Fewer HBM bytes save more time than fewer launches (prefill: big memory-bound
    /// intermediates).
    Bytes,
    /// Nothing was fused.
    None,
}

/// Eager execution against a fusion preset, on one chip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FusionComparison {
    /// The preset applied.
    pub preset: Preset,
    /// Every operator its own kernel.
    pub before: FusionSummary,
    /// The preset's kernels.
    pub after: FusionSummary,
    /// The preset's plan (kernels, rules, tiles, rejected fusions).
    pub plan: FusionPlan,
    /// Time before / time after, launch overhead included.
    pub speedup: f64,
    /// Launch overhead saved, seconds.
    pub launch_saved: Seconds,
    /// Roofline (bytes and FLOPs) time saved, seconds.
    pub roofline_saved: Seconds,
    /// Which saving dominates.
    pub regime: FusionSaving,
}

fn regime(launch_saved: Seconds, roofline_saved: Seconds) -> FusionSaving {
    if launch_saved.get() <= 0.0 && roofline_saved.get() <= 0.0 {
        FusionSaving::None
    } else if launch_saved >= roofline_saved {
        FusionSaving::Launches
    } else {
        FusionSaving::Bytes
    }
}

/// Compares eager execution of `graph` with `preset` on `device`, each launch costing `launch`.
///
/// # Errors
/// The chip lacks a peak or bandwidth the kernels need.
pub fn compare_preset(
    graph: &OpGraph,
    preset: Preset,
    act: Precision,
    device: &Device,
    launch: Seconds,
) -> Result<FusionComparison, DeviceError> {
    let smem = device.shared_memory_per_sm.as_ref().map(|c| c.value);
    let eager = plan(graph, Preset::Eager, smem);
    let fused = plan(graph, preset, smem);
    let before = evaluate_plan(&eager, graph.layers, act, device, launch)?;
    let after = evaluate_plan(&fused, graph.layers, act, device, launch)?;
    // (kernels before − kernels after) × launch: the launches saved, rounded once.
    let launch_saved = launch * (before.kernels as f64 - after.kernels as f64);
    let roofline_saved = before.time - after.time;
    Ok(FusionComparison {
        preset,
        speedup: before.time_with_launch() / after.time_with_launch(),
        launch_saved,
        roofline_saved,
        regime: regime(launch_saved, roofline_saved),
        before,
        after,
        plan: fused,
    })
}

/// A user chain: its separate kernels, the one fused kernel, and whether it fits on chip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChainComparison {
    /// Operator labels in order (`rmsnorm`, `linear1`, …).
    pub labels: Vec<String>,
    /// Separate kernels.
    pub separate: FusionSummary,
    /// Separate kernels' plan.
    pub separate_plan: FusionPlan,
    /// The fully fused kernel, priced whether or not it fits.
    pub fused: FusionSummary,
    /// The fused kernel's plan.
    pub fused_plan: FusionPlan,
    /// The tile checked against shared memory.
    pub tile: TilePlan,
    /// Whether the fused kernel fits on this chip (else it is not applied).
    pub feasible: bool,
    /// Separate time / fused time, launch overhead included.
    pub speedup: f64,
    /// Which saving dominates.
    pub regime: FusionSaving,
}

/// Builds `spec`, prices it as separate kernels and as one fused kernel on `device`.
///
/// # Errors
/// A malformed chain, or a chip without the figures needed.
pub fn compare_chain(
    spec: &ChainSpec,
    device: &Device,
    launch: Seconds,
) -> Result<ChainComparison, ChainCompareError> {
    let (graph, labels, widest) = chain_graph(spec).map_err(ChainCompareError::Chain)?;
    if spec.ops.len() < 2 {
        return Err(ChainCompareError::Chain(super::chain::ChainError(
            "`--chain` needs at least two operators to fuse".into(),
        )));
    }
    let smem = device.shared_memory_per_sm.as_ref().map(|c| c.value);
    let p = spec.precision;
    let separate_plan = plan(&graph, Preset::Eager, smem);
    // What one tile must hold depends on the chain: two GEMMs with an intermediate between them
    // need a slice of that whole intermediate on chip (the second GEMM reduces over it); one
    // GEMM takes the rest as prologue/epilogue on its tile; no GEMM streams.
    let linears = spec
        .ops
        .iter()
        .filter(|o| o.trim().eq_ignore_ascii_case("linear"))
        .count();
    let first_linear = spec
        .ops
        .iter()
        .position(|o| o.trim().eq_ignore_ascii_case("linear"));
    let tile = match linears {
        0 => {
            let has_norm = spec.ops.iter().any(|o| {
                let o = o.trim().to_ascii_lowercase();
                o == "rmsnorm" || o == "layernorm"
            });
            // A norm needs a whole row; elementwise ops stream blocks.
            let row = if has_norm {
                spec.hidden.max(spec.intermediate)
            } else {
                super::tile::STREAM_BLOCK.min(spec.tokens * spec.hidden)
            };
            super::tile::stream_tile(row, spec.ops.len() as u32 + 1, smem)
        }
        1 => super::tile::gemm_tile(p, first_linear.is_some_and(|i| i > 0), 0, smem),
        _ => super::tile::chain_tile(widest, p, smem),
    };
    // Priced as one kernel whether or not it fits; `feasible` says whether it applies.
    let fused_plan = fuse_all(&graph, &tile);
    let ev = |pl: &FusionPlan| {
        evaluate_plan(pl, 1, p, device, launch).map_err(ChainCompareError::Device)
    };
    let separate = ev(&separate_plan)?;
    let fused = ev(&fused_plan)?;
    Ok(ChainComparison {
        labels,
        speedup: separate.time_with_launch() / fused.time_with_launch(),
        regime: regime(
            separate.launch_overhead - fused.launch_overhead,
            separate.time - fused.time,
        ),
        feasible: tile.fits,
        tile,
        separate,
        separate_plan,
        fused,
        fused_plan,
    })
}

/// Why a chain comparison failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainCompareError {
    /// The chain is malformed.
    Chain(ChainError),
    /// The chip lacks a figure.
    Device(DeviceError),
}

impl std::fmt::Display for ChainCompareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChainCompareError::Chain(e) => e.fmt(f),
            ChainCompareError::Device(e) => e.fmt(f),
        }
    }
}
impl std::error::Error for ChainCompareError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoder::build_graph;
    use crate::fixtures::h100_sxm;
    use crate::fixtures::llama2_7b;
    use crate::workload::{Precisions, Stage, Workload};

    fn graph(stage: Stage) -> OpGraph {
        build_graph(
            &llama2_7b(),
            &Workload {
                stage,
                batch: 1,
                seq_len: 2048,
                context: 2048,
                cached: 0,
                precisions: Precisions::uniform(Precision::Bf16),
                flash_attention: false,
                logits: crate::workload::Logits::Last,
            },
        )
    }

    #[test]
    fn decode_saves_launches_prefill_saves_bytes() -> Result<(), Box<dyn std::error::Error>> {
        let d = h100_sxm();
        let launch = Seconds(5e-6);
        let dec = compare_preset(
            &graph(Stage::Decode),
            Preset::Max,
            Precision::Bf16,
            &d,
            launch,
        )?;
        // 13 fewer kernels per block × 32 blocks × 5 µs = 2.08 ms of launches saved.
        assert!((dec.launch_saved.get() - 13.0 * 32.0 * 5e-6).abs() < 1e-12);
        assert_eq!(dec.regime, FusionSaving::Launches);
        let pre = compare_preset(
            &graph(Stage::Prefill),
            Preset::Compiled,
            Precision::Bf16,
            &d,
            launch,
        )?;
        assert_eq!(pre.regime, FusionSaving::Bytes);
        assert!(pre.speedup > 1.0);
        Ok(())
    }

    #[test]
    fn seed_chain_speedup_is_bytes_over_bytes_when_memory_bound(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // T = 1 token (decode-like): both versions memory-bound; fused bytes 2·(2d + 2df + d)
        // vs 2·(4d + 4f + 2df + d); the fused kernel does not fit on the H100.
        let spec = ChainSpec {
            ops: ["rmsnorm", "linear", "silu", "linear"]
                .map(String::from)
                .to_vec(),
            tokens: 1,
            hidden: 4096,
            intermediate: 11008,
            precision: Precision::Bf16,
        };
        let c = compare_chain(&spec, &h100_sxm(), Seconds(0.0))?;
        assert!(!c.feasible);
        let (d, f) = (4096.0, 11008.0);
        let sep = 2.0 * (4.0 * d + 4.0 * f + 2.0 * d * f + d);
        let fused = 2.0 * (2.0 * d + 2.0 * d * f + d);
        assert_eq!(c.separate.cost.bytes().get(), sep);
        assert_eq!(c.fused.cost.bytes().get(), fused);
        assert!((c.speedup - sep / fused).abs() < 1e-9);
        Ok(())
    }
}
