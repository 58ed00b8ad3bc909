//! `roofline op all-reduce` (and the other collectives): one collective over a group of chips.

use super::SchemaVersion;
use crate::collective::CollectiveReport;
use roofline_core::explain::{Given, Step};
use schemars::JsonSchema;
use serde::Serialize;

/// The estimate beside the bound.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EstimateDoc {
    /// Always `estimate`: NCCL's measured efficiency applied to the bound's transfer term, not a
    /// bound.
    pub label: &'static str,
    /// t_α + t_β / η, seconds.
    pub time_s: f64,
    /// η, the share of the link's speed assumed.
    pub efficiency: f64,
    /// S / time, B/s.
    pub algbw_bytes_per_s: f64,
    /// algbw × bus factor, B/s.
    pub busbw_bytes_per_s: f64,
    /// Where η comes from.
    pub source: &'static str,
}

/// `roofline op all-reduce|reduce-scatter|all-gather|all-to-all|broadcast|send-recv`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CollectiveDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The collective in words.
    pub title: String,
    /// `all-reduce`, `reduce-scatter`, `all-gather`, `all-to-all`, `broadcast`, `send-recv`.
    pub collective: String,
    /// The algorithm costed: `ring`, `tree`, `nvls`, `hierarchical`, `direct`.
    pub algorithm: String,
    /// Whether it was asked for (`ring`) or chosen as the fastest (`auto`).
    pub choice: String,
    /// NCCL's protocol it runs in, the fastest for the algorithm: `simple`, `ll128`, `ll`.
    pub protocol: String,
    /// The system's name.
    pub system: String,
    /// S, bytes, as nccl-tests counts the buffer.
    pub bytes: f64,
    /// Ranks in the group.
    pub ranks: u32,
    /// Ranks per node.
    pub ranks_per_node: u32,
    /// Nodes the group spans.
    pub nodes: u32,
    /// The tier that bounds the transfer: `scale_up`, `scale_out`, `pcie`, `local`.
    pub tier: String,
    /// That tier's links, by name (empty for `local`).
    pub link: String,
    /// Its bandwidth per GPU per direction, B/s.
    pub link_bytes_per_s: f64,
    /// Bytes one rank sends over that tier.
    pub traffic_bytes: f64,
    /// α term, seconds.
    pub latency_s: f64,
    /// β term, seconds.
    pub transfer_s: f64,
    /// The α–β lower bound, latency + transfer, seconds.
    pub time_s: f64,
    /// `latency` or `bandwidth`: the larger term.
    pub bound: String,
    /// S / time, B/s.
    pub algbw_bytes_per_s: f64,
    /// algbw × bus factor (nccl-tests), B/s.
    pub busbw_bytes_per_s: f64,
    /// The estimate.
    pub estimate: EstimateDoc,
    /// With `--explain`: the values the derivation starts from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub given: Option<Vec<Given>>,
    /// With `--explain`: the steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<Step>>,
}

impl CollectiveDoc {
    /// The document of `r`.
    pub fn of(r: &CollectiveReport<'_>) -> Self {
        let c = r.cost;
        let e = c.estimate();
        let json_name = |s: String| s.replace('-', "_");
        Self {
            schema_version: SchemaVersion,
            title: r.title.to_string(),
            collective: c.collective.to_string(),
            algorithm: c.algorithm.to_string(),
            protocol: c.protocol.to_string(),
            choice: r.choice.to_string(),
            system: r.system.to_string(),
            bytes: c.bytes.get(),
            ranks: c.group.ranks,
            ranks_per_node: c.group.ranks_per_node,
            nodes: c.group.nodes(),
            tier: json_name(c.tier.to_string()),
            link: r.link.to_string(),
            link_bytes_per_s: c.link.get(),
            traffic_bytes: c.traffic.get(),
            latency_s: c.latency.get(),
            transfer_s: c.transfer.get(),
            time_s: c.time().get(),
            bound: match c.bound() {
                roofline_core::comm::CommBound::Latency => "latency".into(),
                roofline_core::comm::CommBound::Bandwidth => "bandwidth".into(),
            },
            algbw_bytes_per_s: c.algbw().get(),
            busbw_bytes_per_s: c.busbw().get(),
            estimate: EstimateDoc {
                label: "estimate",
                time_s: e.time.get(),
                efficiency: e.efficiency,
                algbw_bytes_per_s: e.algbw.get(),
                busbw_bytes_per_s: e.busbw.get(),
                source: roofline_core::comm::estimate::EFFICIENCY_SOURCE,
            },
            given: r.derivation.map(|d| d.given.clone()),
            steps: r.derivation.map(|d| d.steps.clone()),
        }
    }
}
