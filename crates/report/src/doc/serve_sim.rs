//! `roofline serve-sim`: a request-level simulation of a continuous-batching engine whose every
//! step takes the roofline bound of its batch. Times in seconds, rates per second.

use super::SchemaVersion;
use crate::serve_sim::{RequestSource, ServeSimReport};
use roofline_core::precision::Precision;
use roofline_core::serve::sim::{EngineConfig, Summary};
use schemars::JsonSchema;
use serde::Serialize;

/// The `command` of a serving-simulation document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub enum ServeSimCommand {
    /// `roofline serve-sim`.
    #[serde(rename = "serve-sim")]
    ServeSim,
}

/// Where the requests came from.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RequestsDoc {
    /// Requests simulated.
    pub count: usize,
    /// `poisson`, `all_at_once` or `trace`.
    pub arrivals: String,
    /// Poisson arrivals: requests per second (null otherwise).
    pub rate_per_s: Option<f64>,
    /// Generated: the prompt-length distribution as the CLI spells it (`fixed:2048`; null for a
    /// trace).
    pub prompt_dist: Option<String>,
    /// Generated: the output-length distribution (`uniform:64..512`; null for a trace).
    pub output_dist: Option<String>,
    /// Generated: the seed (null for a trace).
    pub seed: Option<u64>,
    /// A trace: its path (null when generated).
    pub trace: Option<String>,
}

/// `roofline serve-sim`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ServeSimDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// Always `serve-sim`.
    pub command: ServeSimCommand,
    /// The model's name.
    pub model: String,
    /// The system's id.
    pub system: String,
    /// The chip's id.
    pub chip: String,
    /// Tensor-parallel degree.
    pub tp: u32,
    /// Pipeline-parallel degree.
    pub pp: u32,
    /// Expert-parallel degree.
    pub ep: u32,
    /// Devices one replica of the engine uses.
    pub devices: u64,
    /// Weight precision.
    pub weight_precision: Precision,
    /// Activation precision.
    pub activation_precision: Precision,
    /// KV-cache precision.
    pub kv_precision: Precision,
    /// Whether attention runs as one fused (FlashAttention) kernel.
    pub flash_attention: bool,
    /// The engine's limits.
    pub engine: EngineConfig,
    /// Tokens of KV cache that fit on a device beside the weights, activations and reserve
    /// (null when the chip's capacity is not known).
    pub kv_capacity_tokens: Option<u64>,
    /// The requests.
    pub requests: RequestsDoc,
    /// What each step's time is.
    pub step_time: String,
    /// Latencies, throughput, queueing and preemptions.
    pub summary: Summary,
    /// Caveats.
    pub warnings: Vec<String>,
}

impl ServeSimDoc {
    /// The document of `r`.
    pub fn of(r: &ServeSimReport<'_>) -> Self {
        let requests = match r.source {
            RequestSource::Generated {
                arrivals,
                prompt,
                output,
                seed,
            } => RequestsDoc {
                count: r.sim.summary.count,
                arrivals: match arrivals {
                    roofline_core::serve::sim::Arrivals::Poisson { .. } => "poisson".into(),
                    _ => "all_at_once".into(),
                },
                rate_per_s: match arrivals {
                    roofline_core::serve::sim::Arrivals::Poisson { rate } => Some(*rate),
                    _ => None,
                },
                prompt_dist: Some(prompt.to_string()),
                output_dist: Some(output.to_string()),
                seed: Some(*seed),
                trace: None,
            },
            RequestSource::Trace { path } => RequestsDoc {
                count: r.sim.summary.count,
                arrivals: "trace".into(),
                rate_per_s: None,
                prompt_dist: None,
                output_dist: None,
                seed: None,
                trace: Some(path.clone()),
            },
        };
        ServeSimDoc {
            schema_version: SchemaVersion,
            command: ServeSimCommand::ServeSim,
            model: r.model.name.clone(),
            system: r.system.id.clone(),
            chip: r.system.chip.id.clone(),
            tp: r.layout.tp,
            pp: r.layout.pp,
            ep: r.layout.ep,
            devices: r.layout.devices(),
            weight_precision: r.precisions.weight,
            activation_precision: r.precisions.act,
            kv_precision: r.precisions.kv,
            flash_attention: r.flash_attention,
            engine: *r.config,
            kv_capacity_tokens: r.kv_capacity_tokens,
            requests,
            step_time: r.step_time.to_string(),
            summary: r.sim.summary,
            warnings: r.warnings.to_vec(),
        }
    }
}
