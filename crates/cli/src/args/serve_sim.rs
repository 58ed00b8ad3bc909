//! `roofline serve-sim`.

use super::common::PrecisionArgs;
use super::common::{FormatArg, ParallelArgs, ReserveArg};
use super::values::{parse_dist, parse_rate, parse_requests};
use clap::Args;
use roofline_core::serve::sim::Dist;

#[derive(Debug, Args)]
pub struct ServeSimArgs {
    /// A preset id (`llama-3.1-8b`, see `roofline models`), a config.json, or a folder holding
    /// one.
    pub model: String,
    /// Chip id (`roofline hardware list`) or a chip file in the catalog's TOML format.
    #[arg(long, default_value = super::common::DEFAULT_CHIP)]
    pub hardware: String,
    #[command(flatten)]
    pub parallel: ParallelArgs,
    /// Poisson arrivals at this many requests per second (`4/s` or `4`); `inf` sends every
    /// request at time 0.
    #[arg(long, default_value = "4/s", allow_hyphen_values = true, value_parser = parse_rate)]
    pub rate: f64,
    /// Requests to simulate (1 to 10^7).
    #[arg(long, default_value = "1000", value_parser = parse_requests)]
    pub requests: usize,
    /// Prompt lengths: `fixed:N`, `uniform:A..B` (integers A to B), `normal:MEAN,SD` (rounded,
    /// at least 1) or `lognormal:MU,SIGMA` (of the natural log).
    #[arg(long, default_value = "fixed:2048", value_parser = parse_dist)]
    pub prompt_dist: Dist,
    /// Output lengths (the first token comes from the prefill), as --prompt-dist.
    #[arg(long, default_value = "uniform:64..512", value_parser = parse_dist)]
    pub output_dist: Dist,
    /// A CSV trace of requests (header `arrival_s,prompt,output`) instead of --rate,
    /// --requests and the distributions.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["rate", "requests", "prompt_dist", "output_dist", "seed"]
    )]
    pub trace: Option<std::path::PathBuf>,
    /// Running sequences at most (vLLM --max-num-seqs).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub max_seqs: u64,
    /// New tokens per engine step at most (vLLM --max-num-batched-tokens).
    #[arg(long, default_value_t = 8192, value_parser = clap::value_parser!(u64).range(1..=1 << 26))]
    pub max_batched_tokens: u64,
    /// Prefill each prompt whole in one step (vLLM without --enable-chunked-prefill); by
    /// default a prompt larger than the step's remaining budget is split into chunks.
    #[arg(long)]
    pub no_chunked_prefill: bool,
    /// Tokens per KV-cache block (vLLM --block-size).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=1 << 16))]
    pub kv_block: u64,
    /// Seed of the request stream (Xoshiro256++).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub precisions: PrecisionArgs,
    #[command(flatten)]
    pub attention: super::common::AttentionArg,
    #[command(flatten)]
    pub reserve: ReserveArg,
    #[command(flatten)]
    pub format: FormatArg,
}
