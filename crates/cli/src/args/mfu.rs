//! `roofline mfu`.

use super::common::FormatArg;
use super::values::{
    parse_count, parse_params, parse_peak, parse_positive, parse_precision, parse_recompute,
    parse_run_time, parse_step_time, parse_target_percent, parse_tokens_per_s,
};
use clap::Args;
use roofline_core::mfu::PalmEmbedding;
use roofline_core::precision::Precision;

/// `output` or `all`.
fn parse_palm_embedding(s: &str) -> Result<PalmEmbedding, String> {
    match s.trim() {
        "output" => Ok(PalmEmbedding::Output),
        "all" => Ok(PalmEmbedding::All),
        _ => Err(format!("`{s}`: use output or all")),
    }
}

/// `roofline mfu`.
#[derive(Debug, Args)]
pub struct MfuArgs {
    /// A preset id or config.json. Without it, give --params; with neither, the MFU is printed
    /// as a function of N.
    pub model: Option<String>,
    /// Parameters N (`70e9`, `70B`), every one, when no model is given.
    #[arg(long, value_parser = parse_params)]
    pub params: Option<f64>,
    /// Active parameters (those a token uses: a mixture of experts' k routed experts), with
    /// --params; the formulas count these. Default: --params (a dense model).
    #[arg(long, value_parser = parse_params, requires = "params")]
    pub active_params: Option<f64>,
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
    /// Achieved model FLOP/s per device as the run reports it (`150T`, `150e12`): MFU = this ÷
    /// the dense peak; each formula gives the tokens/s it implies. If the source counts
    /// recomputation in its FLOPs (Megatron-LM's Table 1 does), the ratio is an HFU.
    #[arg(long, value_parser = parse_peak, conflicts_with_all = ["time", "step_time", "tokens_per_s"])]
    pub achieved_flops: Option<f64>,
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
    /// Dense peak of one device in FLOP/s (`312e12`, `312T`), overriding the chip's. With
    /// --hardware, a value above the chip's dense peak (a 2:4-sparse datasheet figure) is an
    /// error unless --allow-sparse-peak.
    #[arg(long, value_parser = parse_peak)]
    pub peak: Option<f64>,
    /// Accept a --peak above the chip's dense peak (MFU against a sparse peak is half as large).
    #[arg(long, requires = "peak")]
    pub allow_sparse_peak: bool,
    /// Count causal attention: half the T×T score matrix, T²/2 per head, as FlashAttention and
    /// Megatron-LM count (the diagonal counted half). The default: these are decoder LMs trained
    /// causally.
    #[arg(long, overrides_with = "no_causal")]
    pub causal: bool,
    /// Count every score of the T×T matrix, as PaLM (App. B) and Narayanan et al. 2021 do: use it
    /// to reproduce their published MFUs.
    #[arg(long, overrides_with = "causal")]
    pub no_causal: bool,
    /// What PaLM's N holds of the embeddings: `output` (default; the output projection, not an
    /// untied input embedding or a position table, which are looked up, 0 FLOP) or `all` (every
    /// parameter, as PaLM writes it; the same for a tied model).
    #[arg(long, default_value = "output", value_parser = parse_palm_embedding)]
    pub palm_embedding: PalmEmbedding,
    /// Activation recomputation: none, selective, full, or partial=F (PaLM's scheme).
    #[arg(long, default_value = "none", value_parser = parse_recompute)]
    pub recompute: roofline_core::mfu::Recompute,
    /// The MFU at which to answer the time to train --tokens, in percent: `40` or `40%` is
    /// 40 %. A bare number below 1 (`0.45`) is refused as ambiguous: write `45` for 45 %, or
    /// `0.45%`.
    #[arg(long, default_value = "40")]
    pub target_mfu: String,
    /// Model sizes for the MFU-as-a-function-of-N table (no model or --params given).
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = parse_params,
        default_value = "1e9,3e9,7e9,13e9,34e9,70e9,175e9,405e9,1e12"
    )]
    pub sizes: Vec<f64>,
    /// The training layout (`--tp`, `--pp`, `--dp`, `--micro-batch`, …, as `roofline train`
    /// takes them): with a model, --hardware and --step-time, the predicted MFU waterfall of
    /// that step is printed below, its unexplained bar the measured time beyond the estimate.
    #[command(flatten)]
    pub train: super::train::TrainLayoutArgs,
    #[command(flatten)]
    pub format: FormatArg,
}

impl MfuArgs {
    /// `--target-mfu` as a fraction (`45` → 0.45).
    ///
    /// # Errors
    /// Not a percent above 0 and at most 100, or a bare number below 1 (`0.45`), which reads as a
    /// fraction.
    pub fn target_mfu(&self) -> Result<f64, String> {
        parse_target_percent(&self.target_mfu)
    }
}
