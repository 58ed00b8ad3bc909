//! `roofline mfu`.

use super::common::FormatArg;
use super::values::{
    parse_count, parse_params, parse_peak, parse_percent, parse_positive, parse_precision,
    parse_recompute, parse_run_time, parse_step_time, parse_tokens_per_s,
};
use clap::Args;
use roofline_core::precision::Precision;

/// `roofline mfu`.
#[derive(Debug, Args)]
pub struct MfuArgs {
    /// A preset id or config.json. Without it, give --params; with neither, the MFU is printed
    /// as a function of N.
    pub model: Option<String>,
    /// Parameters N (`70e9`, `70B`), when no model is given.
    #[arg(long, value_parser = parse_params)]
    pub params: Option<f64>,
    /// Decoder blocks L (with --hidden and --seq-len: PaLM's attention term).
    #[arg(long, value_parser = parse_positive)]
    pub layers: Option<u64>,
    /// Hidden size d (= query heads × head dim unless --heads and --head-dim say otherwise).
    #[arg(long, value_parser = parse_positive)]
    pub hidden: Option<u64>,
    /// Query heads H, with --head-dim when H·Q differs from --hidden (PaLM 540B: 48 × 256).
    #[arg(long, value_parser = parse_positive, requires = "head_dim")]
    pub heads: Option<u64>,
    /// Head dim Q, with --heads.
    #[arg(long, value_parser = parse_positive, requires = "heads")]
    pub head_dim: Option<u64>,
    /// Vocabulary V (Megatron's logit term).
    #[arg(long, value_parser = parse_positive)]
    pub vocab: Option<u64>,
    /// Training sequence length T.
    #[arg(long, value_parser = parse_positive)]
    pub seq_len: Option<u64>,
    /// Tokens trained on (with --time); alone, the tokens to train for the time-to-train answer.
    #[arg(long, value_parser = parse_count)]
    pub tokens: Option<f64>,
    /// Time the tokens took: 30d, 720h, 90m, 3600s, or seconds.
    #[arg(long, value_parser = parse_run_time, requires = "tokens")]
    pub time: Option<f64>,
    /// Global training throughput, tokens per second.
    #[arg(long, value_parser = parse_tokens_per_s, conflicts_with_all = ["time", "step_time"])]
    pub tokens_per_s: Option<f64>,
    /// Time of one optimizer step (with --global-batch and --seq-len).
    #[arg(long, value_parser = parse_step_time, requires_all = ["global_batch", "seq_len"], conflicts_with = "time")]
    pub step_time: Option<f64>,
    /// Sequences per optimizer step.
    #[arg(long, value_parser = parse_positive)]
    pub global_batch: Option<u64>,
    /// Devices the run used.
    #[arg(long, default_value_t = 1, value_parser = parse_positive)]
    pub devices: u64,
    /// Chip id or chip file: its dense peak for --precision is the peak.
    #[arg(long)]
    pub hardware: Option<String>,
    /// Precision trained in: its dense peak applies.
    #[arg(long, default_value = "bf16", value_parser = parse_precision)]
    pub precision: Precision,
    /// Dense peak of one device in FLOP/s (`312e12`, `312T`), overriding the chip's.
    #[arg(long, value_parser = parse_peak)]
    pub peak: Option<f64>,
    /// Activation recomputation: none, selective, full, or partial=F (PaLM's scheme).
    #[arg(long, default_value = "none", value_parser = parse_recompute)]
    pub recompute: roofline_core::mfu::Recompute,
    /// The MFU at which to answer the time to train --tokens, in percent.
    #[arg(long, default_value = "40", value_parser = parse_percent)]
    pub target_mfu: f64,
    /// Model sizes for the MFU-as-a-function-of-N table (no model or --params given).
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = parse_params,
        default_value = "1e9,3e9,7e9,13e9,34e9,70e9,175e9,405e9,1e12"
    )]
    pub sizes: Vec<f64>,
    #[command(flatten)]
    pub format: FormatArg,
}
