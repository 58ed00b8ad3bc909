//! `roofline fuse`.

use super::common::FormatArg;
use super::values::{parse_duration_small, parse_precision};
use clap::Args;
use roofline_core::precision::Precision;

#[derive(Debug, Args)]
pub struct FuseArgs {
    /// Operators in order, comma-separated: rmsnorm, layernorm, linear, silu, gelu, relu.
    /// Linears alternate hidden → intermediate → hidden.
    #[arg(long, value_delimiter = ',', required = true)]
    pub chain: Vec<String>,
    /// Tokens T (rows of every tensor).
    #[arg(long)]
    pub tokens: u64,
    /// Hidden size d.
    #[arg(long)]
    pub hidden: u64,
    /// Intermediate size f.
    #[arg(long)]
    pub intermediate: u64,
    /// Precision of every tensor.
    #[arg(long, default_value = "bf16", value_parser = parse_precision)]
    pub precision: Precision,
    /// Chip id or chip file.
    #[arg(long, default_value = super::common::DEFAULT_CHIP)]
    pub hardware: String,
    /// Launch overhead per kernel, overriding the chip file's.
    #[arg(long, value_parser = parse_duration_small)]
    pub launch_overhead: Option<f64>,
    #[command(flatten)]
    pub format: FormatArg,
}
