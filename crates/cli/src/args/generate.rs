//! `roofline generate`.

use super::common::{FormatArg, ParallelArgs, PrecisionArgs, ReserveArg};
use super::train::{parse_efficiency, EfficiencyOverride};
use super::values::{parse_duration_small, parse_positive};
use clap::Args;

/// `--disaggregate P:D`: devices of the prefill pool and of the decode pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pools {
    /// P.
    pub prefill: u64,
    /// D.
    pub decode: u64,
}

/// Parses `P:D` (`2:6`).
pub fn parse_pools(s: &str) -> Result<Pools, String> {
    let (p, d) = s.split_once(':').ok_or_else(|| {
        format!("`{s}` is not P:D: give the prefill and decode pools' devices, such as 2:6")
    })?;
    let n = |x: &str| -> Result<u64, String> {
        match x.trim().parse::<u64>() {
            Ok(0) => Err(format!("`{s}`: each pool needs at least 1 device")),
            Ok(v) if v > u64::from(roofline_core::comm::system::MAX_DEVICES) => Err(format!(
                "`{s}`: {v} is more than {} devices",
                roofline_core::comm::system::MAX_DEVICES
            )),
            Ok(v) => Ok(v),
            Err(_) => Err(format!("`{s}`: `{x}` is not a whole number of devices")),
        }
    };
    Ok(Pools {
        prefill: n(p)?,
        decode: n(d)?,
    })
}

/// A probability in [0, 1].
pub fn parse_probability(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        Ok(v) => Err(format!("{v} is not a probability in [0, 1]")),
        Err(_) => Err(format!("`{s}` is not a number: give a share such as 0.8")),
    }
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// A preset id (`llama-3.1-8b`, see `roofline models`), a config.json, or a folder holding one.
    #[arg(default_value = "llama-2-7b")]
    pub model: String,
    /// Chip id (`roofline hardware list`) or a chip file in the catalog's TOML format.
    #[arg(long, default_value = super::common::DEFAULT_CHIP)]
    pub hardware: String,
    /// Prompt tokens per sequence (P).
    #[arg(long, default_value_t = 2048, value_parser = parse_positive)]
    pub prompt: u64,
    /// Tokens generated per sequence (N; the first comes from the prefill).
    #[arg(long, default_value_t = 256, value_parser = parse_positive)]
    pub generate: u64,
    /// Sequences served together (B).
    #[arg(long, default_value_t = 1, value_parser = parse_positive)]
    pub batch: u64,
    /// Tokens of the prompt already in the KV cache (prefix caching): only the rest is
    /// prefilled.
    #[arg(long, default_value_t = 0)]
    pub cached_prefix: u64,
    #[command(flatten)]
    pub precisions: PrecisionArgs,
    #[command(flatten)]
    pub attention: super::common::AttentionArg,
    #[command(flatten)]
    pub reserve: ReserveArg,
    #[command(flatten)]
    pub parallel: ParallelArgs,
    /// Launch overhead per kernel, overriding the chip file's (`7us`, `0.5ms`, `5e-6`).
    #[arg(long, value_parser = parse_duration_small)]
    pub launch_overhead: Option<f64>,
    /// The estimate captures each step as a CUDA graph: one launch per step, not per kernel.
    #[arg(long)]
    pub cuda_graphs: bool,
    /// The shares of the roofs the estimate assumes (`matmul=0.8,memory=0.83,network=0.8`);
    /// a share not named keeps the published default.
    #[arg(long, value_parser = parse_efficiency)]
    pub efficiency: Option<EfficiencyOverride>,
    /// Also find the largest batch for which every step of the request fits in memory.
    #[arg(long)]
    pub max_batch: bool,
    /// Also find the longest context (tokens a sequence holds) a decode at --batch fits.
    #[arg(long)]
    pub max_context: bool,
    /// Paged KV cache: tokens per block (vLLM's default 16); a sequence's cache is rounded
    /// up to whole blocks in every fit.
    #[arg(long, default_value_t = 16, value_parser = parse_positive)]
    pub kv_block: u64,
    /// Chunked prefill: the prompt enters a running batch in chunks of this many tokens, each
    /// step shared with the decodes of --batch − 1 running sequences.
    #[arg(long, value_parser = parse_positive)]
    pub chunk: Option<u64>,
    /// Speculative decoding: the draft model (a preset or config.json) proposing tokens.
    #[arg(long, value_name = "MODEL")]
    pub draft: Option<String>,
    /// Speculative decoding: tokens the draft proposes per verification (γ; 4 when not given).
    #[arg(long, value_parser = parse_positive)]
    pub draft_len: Option<u64>,
    /// Speculative decoding: the chance each draft token is accepted (α; 0.8 when not given).
    #[arg(long, value_parser = parse_probability)]
    pub acceptance: Option<f64>,
    /// Disaggregated serving: devices of the prefill pool and of the decode pool (`2:6`).
    #[arg(long, value_parser = parse_pools, value_name = "P:D")]
    pub disaggregate: Option<Pools>,
    #[command(flatten)]
    pub format: FormatArg,
}
