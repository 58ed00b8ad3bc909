//! Command-line flags, parsed once into typed values.

use clap::{Args, Parser, Subcommand, ValueEnum};
use roofline_core::precision::Precision;

/// How fast can a model run on a chip, and why? Roofline analysis of transformer inference.
#[derive(Debug, Parser)]
#[command(name = "roofline", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Per-operator roofline analysis of a transformer (prefill and decode).
    Analyze(AnalyzeArgs),
    /// The chip catalog: list chips, show one with every figure's source.
    Hardware {
        #[command(subcommand)]
        command: HardwareCommand,
    },
    /// List the embedded model presets.
    Models(FormatArg),
}

#[derive(Debug, Subcommand)]
pub enum HardwareCommand {
    /// One line per chip in the catalog.
    List(FormatArg),
    /// Every figure of one chip, its source, and the ridge point per precision.
    Show {
        /// Chip id (`h100-sxm`) or a chip file (`my-chip.toml`).
        name: String,
        #[command(flatten)]
        format: FormatArg,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum OutputFormat {
    Table,
    Json,
    Csv,
}

impl From<OutputFormat> for roofline_report::Format {
    fn from(f: OutputFormat) -> Self {
        match f {
            OutputFormat::Table => roofline_report::Format::Table,
            OutputFormat::Json => roofline_report::Format::Json,
            OutputFormat::Csv => roofline_report::Format::Csv,
        }
    }
}

#[derive(Debug, Args)]
pub struct FormatArg {
    /// Output format: an aligned table, JSON (base units) or CSV.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum StageArg {
    Prefill,
    Decode,
    Both,
}

fn parse_precision(s: &str) -> Result<Precision, String> {
    s.parse::<Precision>().map_err(|e| e.to_string())
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// A preset id (`llama-2-7b`, see `roofline models`), a config.json, or a folder holding one.
    #[arg(default_value = "llama-2-7b")]
    pub model: String,
    /// Chip id (`roofline hardware list`) or a chip file in the catalog's TOML format.
    #[arg(long, default_value = "a6000")]
    pub hardware: String,
    /// Which stage to analyse.
    #[arg(long, value_enum, default_value_t = StageArg::Both)]
    pub stage: StageArg,
    /// Sequences processed together.
    #[arg(long, default_value_t = 1)]
    pub batch: u64,
    /// Prefill: prompt tokens per sequence.
    #[arg(long, default_value_t = 2048)]
    pub seq_len: u64,
    /// Decode: tokens already in the KV cache per sequence.
    #[arg(long, default_value_t = 2048)]
    pub context: u64,
    /// Precision of weights, activations and KV cache (fp32, bf16, fp16, fp8, int8, int4).
    #[arg(long, default_value = "bf16", value_parser = parse_precision)]
    pub precision: Precision,
    /// Weight precision, overriding --precision.
    #[arg(long, value_parser = parse_precision)]
    pub weight_precision: Option<Precision>,
    /// KV-cache precision, overriding --precision.
    #[arg(long, value_parser = parse_precision)]
    pub kv_precision: Option<Precision>,
    /// Attention as one fused FlashAttention kernel instead of QKᵀ, softmax and S·V.
    #[arg(long)]
    pub flash_attention: bool,
    #[command(flatten)]
    pub format: FormatArg,
}
