//! `roofline plan`.

use super::common::{AttentionArg, FormatArg, ReserveArg, DEFAULT_CHIP};
use super::values::{parse_degree, parse_positive, parse_precision};
use clap::{Args, ValueEnum};
use roofline_core::precision::Precision;

/// The stage a plan is searched for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanStage {
    /// The prompt: time to the first token.
    Prefill,
    /// One generated token per sequence: time per output token.
    Decode,
    /// A training step: every tensor, pipeline, data, context and expert parallel layout,
    /// micro-batch, recomputation, ZeRO stage and schedule that fits, ranked by step time
    /// (needs --global-batch; --seq-len is the sequence length).
    Train,
}

/// Which training policies a training plan may choose (`--stage train`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanPolicies {
    /// Every policy: none, selective and full recomputation, sequence and context
    /// parallelism, ZeRO 0–3, 1F1B, interleaved and ZB-H1, overlapped gradient reduction.
    All,
    /// What Megatron-LM ran in Narayanan et al. 2021: full recomputation, no sequence or
    /// context parallelism, no ZeRO, 1F1B or interleaved, gradients reduced after the
    /// backward, blocking pipeline sends.
    #[value(name = "megatron-2021")]
    Megatron2021,
    /// Megatron-LM of Korthikanti et al. 2022: as megatron-2021, with selective recomputation
    /// and sequence parallelism.
    #[value(name = "megatron-2022")]
    Megatron2022,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// A preset id (`mixtral-8x7b`, see `roofline models`), a config.json, or a folder holding
    /// one.
    pub model: String,
    /// A system of many chips: an id (`roofline hardware list --systems`) or a system file.
    #[arg(long, value_name = "NAME|FILE")]
    pub system: Option<String>,
    /// Chip id, with --devices: that many of it in the chip's default node.
    #[arg(long, default_value = DEFAULT_CHIP)]
    pub hardware: String,
    /// Devices of --hardware to plan over.
    #[arg(long, value_parser = parse_degree)]
    pub devices: Option<u32>,
    /// Which stage to plan for.
    #[arg(long, value_enum, default_value_t = PlanStage::Decode)]
    pub stage: PlanStage,
    /// Sequences one replica serves together.
    #[arg(long, default_value_t = 1)]
    pub batch: u64,
    /// Train: sequences per training step over every replica.
    #[arg(long, value_parser = parse_positive)]
    pub global_batch: Option<u64>,
    /// Prefill and train: tokens per sequence (2048 when not given).
    #[arg(long)]
    pub seq_len: Option<u64>,
    /// Decode: tokens already in the KV cache per sequence (2048 when not given).
    #[arg(long)]
    pub context: Option<u64>,
    /// Precision of weights, activations and KV cache.
    #[arg(long, default_value = "bf16", value_parser = parse_precision)]
    pub precision: Precision,
    /// Weight precision, overriding --precision.
    #[arg(long, value_parser = parse_precision)]
    pub weight_precision: Option<Precision>,
    /// KV-cache precision, overriding --precision.
    #[arg(long, value_parser = parse_precision)]
    pub kv_precision: Option<Precision>,
    #[command(flatten)]
    pub attention: AttentionArg,
    /// Plans to print in each ranking.
    #[arg(long, default_value_t = 5, value_parser = parse_degree)]
    pub top: u32,
    /// With --stage train: the policies the search may choose (`all`, or what Megatron-LM ran
    /// in its published runs: `megatron-2021`, `megatron-2022`).
    #[arg(long, value_enum)]
    pub policies: Option<PlanPolicies>,
    #[command(flatten)]
    pub reserve: ReserveArg,
    #[command(flatten)]
    pub format: FormatArg,
}
