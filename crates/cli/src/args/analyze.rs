//! `roofline analyze`.

use super::common::{
    AttentionArg, FormatArg, LogitsArg, ParallelArgs, PlotArgs, ReserveArg, StageArg, DEFAULT_CHIP,
};
use super::values::{parse_duration_small, parse_preset};
use clap::Args;

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// A preset id (`llama-2-7b`, see `roofline models`), a config.json, or a folder holding one.
    #[arg(default_value = "llama-2-7b")]
    pub model: String,
    /// Chip id (`roofline hardware list`) or a chip file in the catalog's TOML format.
    #[arg(long, default_value = DEFAULT_CHIP)]
    pub hardware: String,
    /// Which stage to analyse.
    #[arg(long, value_enum, default_value_t = StageArg::Both)]
    pub stage: StageArg,
    /// Sequences processed together.
    #[arg(long, default_value_t = 1)]
    pub batch: u64,
    /// Prefill: prompt tokens per sequence (2048 when not given).
    #[arg(long)]
    pub seq_len: Option<u64>,
    /// Decode: tokens already in the KV cache per sequence (2048 when not given).
    #[arg(long)]
    pub context: Option<u64>,
    #[command(flatten)]
    pub precisions: super::PrecisionArgs,
    #[command(flatten)]
    pub attention: AttentionArg,
    /// Prefill: the positions lm_head computes logits for: `last` (each sequence's last, what
    /// generation needs) or `all` (every position: training, scoring a whole sequence). Decode
    /// has one position per sequence either way.
    #[arg(long, value_enum, default_value_t = LogitsArg::Last)]
    pub logits: LogitsArg,
    #[command(flatten)]
    pub reserve: ReserveArg,
    #[command(flatten)]
    pub parallel: ParallelArgs,
    /// Instead of the tables, the worked derivation of one operator (`q_proj`) in each stage.
    #[arg(long, value_name = "OPERATOR")]
    pub explain: Option<String>,
    #[command(flatten)]
    pub plot: PlotArgs,
    /// Also report kernel fusion: eager (every operator its own kernel), compiled
    /// (torch.compile-like) or max (every rule), before and after.
    #[arg(long, value_parser = parse_preset)]
    pub fusion: Option<roofline_core::fusion::Preset>,
    /// Also rank what to change (fusion, batch × 2, int8/int4 weight-only and fp8
    /// quantization, tensor parallel × 2, FlashAttention, CUDA graphs) by the time each saves
    /// on each stage's step, each with the command line that shows it.
    #[arg(long)]
    pub advice: bool,
    /// A PyTorch profiler trace of this model's run (`roofline import` reads it): predicted
    /// beside measured time per operator, matched by shape and forward order.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<std::path::PathBuf>,
    /// Launch overhead per kernel, overriding the chip file's (`7us`, `0.5ms`, `5e-6`; seconds
    /// when no unit is given).
    #[arg(long, value_parser = parse_duration_small)]
    pub launch_overhead: Option<f64>,
    #[command(flatten)]
    pub format: FormatArg,
}
