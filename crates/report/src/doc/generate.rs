//! `roofline generate`: one request's latencies and rates at the roofline bound (no run is
//! faster) and as an estimate at published shares and launches; the memory at every step; and
//! what fits, chunked prefill, speculative decoding and disaggregated pools when asked. Times
//! in seconds, bytes in bytes, rates in tokens or requests per second.

use super::analyze::MemoryDoc;
use super::parallel::{LayoutDoc, ParallelStageDoc};
use super::SchemaVersion;
use crate::generate::GenerateReport;
use roofline_core::serve::chunked::ChunkedPrefill;
use roofline_core::serve::disaggregate::Disaggregated;
use roofline_core::serve::speculative::Speculative;
use roofline_core::serve::{Latency, Request};
use schemars::JsonSchema;
use serde::Serialize;

/// The `command` of a generate document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GenerateCommand {
    /// `roofline generate`.
    Generate,
}

/// The shares and launches the estimate assumes.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EstimateDoc {
    /// The shares of the roofs, by kernel class ([`roofline_core::pricing::Efficiency`]).
    pub shares: roofline_core::pricing::Efficiency,
    /// Each step launched once, as a CUDA graph.
    pub cuda_graphs: bool,
    /// `per_kernel` or `per_program` (the chip runs a step as one compiled program).
    pub launch_model: String,
    /// Launch overhead of one launch, seconds.
    pub launch_overhead_s: f64,
    /// Where the shares come from.
    pub source: String,
}

/// A capacity answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FitDoc {
    /// The largest value that fits; `null` when none does.
    pub largest: Option<u64>,
    /// The search stopped at the largest value accepted, not at the memory.
    pub at_limit: bool,
    /// The footprint at the answer.
    pub memory: MemoryDoc,
}

/// `--max-batch` and `--max-context`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CapacityDoc {
    /// Tokens per KV block.
    pub kv_block: u64,
    /// The largest batch for which every step of the request fits.
    pub max_batch: Option<FitDoc>,
    /// The most tokens a sequence may hold for a decode at the batch to fit.
    pub max_context: Option<FitDoc>,
}

/// Speculative decoding.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SpeculativeDoc {
    /// The draft model's name.
    pub draft_model: String,
    /// The result.
    #[serde(flatten)]
    pub result: Speculative,
}

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct GenerateDoc {
    /// Schema version.
    pub schema_version: SchemaVersion,
    /// `generate`.
    pub command: GenerateCommand,
    /// Model name.
    pub model: String,
    /// System id.
    pub system: String,
    /// Chip id.
    pub chip: String,
    /// The request.
    pub request: Request,
    /// The layout of one replica.
    pub layout: LayoutDoc,
    /// Devices of one replica.
    pub devices: u64,
    /// The roofline bound: no step can be faster.
    pub bound: Latency,
    /// The estimate at `efficiency`.
    pub estimate: Latency,
    /// What the estimate assumes.
    pub efficiency: EstimateDoc,
    /// Decode steps analysed to sum the N − 1 exactly.
    pub decode_steps_analysed: u64,
    /// The KV cache of the batch on one device after the request, bytes.
    pub kv_at_end_bytes: f64,
    /// The footprint of the step that needs the most memory.
    pub peak_memory: MemoryDoc,
    /// Whether every step fits (`null`: capacity unknown).
    pub fits: Option<bool>,
    /// The first generated token whose step does not fit (1 = the prefill), when one does not.
    pub first_overflow: Option<u64>,
    /// `--max-batch`, `--max-context`.
    pub capacity: Option<CapacityDoc>,
    /// `--chunk`.
    pub chunked_prefill: Option<ChunkedPrefill>,
    /// `--draft`.
    pub speculative: Option<SpeculativeDoc>,
    /// `--disaggregate`.
    pub disaggregated: Option<Disaggregated>,
    /// The step model's largest difference from a direct analysis, when one was built.
    pub step_model_fit_error: Option<f64>,
    /// The prefill and the last decode step, as `analyze` gives them.
    pub stages: Vec<ParallelStageDoc>,
    /// Caveats.
    pub warnings: Vec<String>,
}

impl GenerateDoc {
    /// The document of `r`.
    pub fn of(r: &GenerateReport<'_>) -> Self {
        let g = r.generation;
        let chip = &r.system.chip;
        let fit = |f: &roofline_core::serve::capacity::Fit| FitDoc {
            largest: f.largest,
            at_limit: f.at_limit,
            memory: MemoryDoc::of(&f.memory),
        };
        let mut stages = vec![ParallelStageDoc::of(&g.prefill)];
        if let Some(l) = &g.last_decode {
            stages.push(ParallelStageDoc::of(l));
        }
        GenerateDoc {
            schema_version: SchemaVersion,
            command: GenerateCommand::Generate,
            model: r.model.name.clone(),
            system: r.system.id.clone(),
            chip: chip.id.clone(),
            request: g.request,
            layout: LayoutDoc::of(&g.layout),
            devices: g.devices,
            bound: g.bound,
            estimate: g.estimate,
            efficiency: EstimateDoc {
                shares: g.efficiency.efficiency,
                cuda_graphs: g.efficiency.launches.cuda_graphs,
                launch_model: chip.launch_model.id().into(),
                launch_overhead_s: chip.launch_overhead.value.get(),
                source: crate::generate::efficiency_source(g, chip),
            },
            decode_steps_analysed: g.decode_steps_analysed,
            kv_at_end_bytes: g.kv_at_end.get(),
            peak_memory: MemoryDoc::of(&g.peak_memory),
            fits: g.fits,
            first_overflow: g.first_overflow,
            capacity: r.capacity.as_ref().map(|c| CapacityDoc {
                kv_block: c.kv_block,
                max_batch: c.max_batch.as_ref().map(fit),
                max_context: c.max_context.as_ref().map(fit),
            }),
            chunked_prefill: r.chunked,
            speculative: r.speculative.as_ref().map(|s| SpeculativeDoc {
                draft_model: s.draft.clone(),
                result: s.result,
            }),
            disaggregated: r.disaggregated,
            step_model_fit_error: r.step_fit_error,
            stages,
            warnings: g.warnings.clone(),
        }
    }
}
