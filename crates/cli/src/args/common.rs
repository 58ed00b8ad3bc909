//! Flags several commands share: the output format, the stage, `--plot` and `--force`, the
//! runtime memory reserve.

use super::values::parse_reserve;
use clap::{Args, ValueEnum};

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

/// `--memory-reserve`, shared by every command that says whether a model fits.
#[derive(Debug, Args)]
pub struct ReserveArg {
    /// Memory the runtime keeps for itself on the chip: a share of its capacity (`10%`, the
    /// default: vLLM's --gpu-memory-utilization 0.9) or a size (`2GB`, `1.5GiB`, `0`); counted
    /// in the memory footprint and in whether the model fits.
    #[arg(long, default_value = "10%", value_parser = parse_reserve)]
    pub memory_reserve: roofline_core::memory::Reserve,
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

/// `--logits`: the positions lm_head computes logits for in prefill.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum LogitsArg {
    /// The last position of each sequence: what generation needs.
    #[default]
    Last,
    /// Every position: training, and scoring a whole sequence (perplexity).
    All,
}

impl From<LogitsArg> for roofline_core::workload::Logits {
    fn from(l: LogitsArg) -> Self {
        match l {
            LogitsArg::Last => roofline_core::workload::Logits::Last,
            LogitsArg::All => roofline_core::workload::Logits::All,
        }
    }
}

/// `--plot FILE` and `--force`, shared by every command that can draw a roofline.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Also draw the roofline plot to FILE (`.svg` or `.png`).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<std::path::PathBuf>,
    /// Overwrite output files that already exist.
    #[arg(long)]
    pub force: bool,
}
