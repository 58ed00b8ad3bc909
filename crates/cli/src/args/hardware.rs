//! `roofline hardware`: list, show, compare.

use super::common::{FormatArg, PlotArgs};
use super::values::parse_precision;
use clap::{Args, Subcommand};
use roofline_core::precision::Precision;

#[derive(Debug, Subcommand)]
pub enum HardwareCommand {
    /// One line per chip in the catalog; `--systems`: one line per system.
    List(ListArgs),
    /// Every figure of one chip, its source, the ridge point per precision and the node it is
    /// sold in; or one system (its chip, nodes × GPUs per node, links).
    Show {
        /// Chip id (`h100-sxm`), system id (`dgx-h100`), or a chip or system file
        /// (`my-chip.toml`, `my-cluster.toml`).
        name: String,
        /// Each figure's source beside it (datasheet, page, paper), and the chip's notes.
        #[arg(long)]
        sources: bool,
        #[command(flatten)]
        plot: PlotArgs,
        #[command(flatten)]
        format: FormatArg,
    },
    /// Chips side by side: peaks per precision, bandwidth, capacity, ridge points; `--plot`
    /// overlays their rooflines.
    Compare(CompareArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// List the systems catalog (nodes of one chip and their links) instead of the chips.
    #[arg(long)]
    pub systems: bool,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more chip ids (`a100-sxm-80gb h100-sxm h200`) or chip files.
    #[arg(required = true, num_args = 2..)]
    pub names: Vec<String>,
    /// Precisions drawn bold in the plot (comma-separated); all the chips' roofs are drawn.
    #[arg(long, value_delimiter = ',', value_parser = parse_precision)]
    pub precision: Vec<Precision>,
    #[command(flatten)]
    pub plot: PlotArgs,
    #[command(flatten)]
    pub format: FormatArg,
}
