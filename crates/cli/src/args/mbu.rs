//! `roofline mbu`.

use super::common::FormatArg;
use super::values::{
    parse_bandwidth, parse_params, parse_peak, parse_positive, parse_precision, parse_step_time,
    parse_tokens_per_s,
};
use clap::Args;
use roofline_core::precision::Precision;

/// `roofline mbu`.
#[derive(Debug, Args)]
pub struct MbuArgs {
    /// A preset id or config.json (counts the KV cache); or give --params.
    pub model: Option<String>,
    /// Parameters N, when no model is given (the KV cache is then not counted).
    #[arg(long, value_parser = parse_params)]
    pub params: Option<f64>,
    /// Time per output token (one decode step): 14ms, 0.014, …
    #[arg(long, value_parser = parse_step_time)]
    pub tpot: Option<f64>,
    /// Output tokens per second over the whole batch (batch ÷ time per output token).
    #[arg(long, value_parser = parse_tokens_per_s, conflicts_with = "tpot")]
    pub tokens_per_s: Option<f64>,
    /// Sequences decoded together.
    #[arg(long, default_value_t = 1, value_parser = parse_positive)]
    pub batch: u64,
    /// Tokens already in the KV cache per sequence.
    #[arg(long, default_value_t = 2048)]
    pub context: u64,
    /// Precision of weights, activations and KV cache.
    #[arg(long, default_value = "bf16", value_parser = parse_precision)]
    pub precision: Precision,
    /// Weight precision, overriding --precision.
    #[arg(long, value_parser = parse_precision)]
    pub weight_precision: Option<Precision>,
    /// KV-cache precision, overriding --precision.
    #[arg(long, value_parser = parse_precision)]
    pub kv_precision: Option<Precision>,
    /// Devices the model is split over (tensor parallel).
    #[arg(long, default_value_t = 1, value_parser = parse_positive)]
    pub devices: u64,
    /// Chip id or chip file (bandwidth and dense peak).
    #[arg(long)]
    pub hardware: Option<String>,
    /// Main-memory bandwidth of one device in B/s (`2e12`, `2T`), overriding the chip's.
    #[arg(long, value_parser = parse_bandwidth)]
    pub bandwidth: Option<f64>,
    /// Dense peak of one device in FLOP/s, overriding the chip's. With --hardware, a value above
    /// the chip's dense peak (a 2:4-sparse datasheet figure) is an error unless
    /// --allow-sparse-peak.
    #[arg(long, value_parser = parse_peak)]
    pub peak: Option<f64>,
    /// Accept a --peak above the chip's dense peak.
    #[arg(long, requires = "peak")]
    pub allow_sparse_peak: bool,
    #[command(flatten)]
    pub format: FormatArg,
}
