//! `roofline import`.

use super::common::{FormatArg, PlotArgs};
use super::values::parse_positive_usize;
use clap::Args;

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The file: an `ncu --csv` export, a PyTorch profiler trace (.json), a mixbench log, or an
    /// ERT roofline.json, sum or try file (told apart by content).
    pub file: std::path::PathBuf,
    /// The roof kernels are held against: a chip id (`h100-sxm`), a chip file, or a mixbench/ERT
    /// output. Without it only achieved FLOP/s and intensity are reported.
    #[arg(long)]
    pub hardware: Option<String>,
    /// Kernels shown in the table, by time lost (JSON and CSV have every kernel).
    #[arg(long, default_value_t = 20, value_parser = parse_positive_usize)]
    pub top: usize,
    /// Write an empirical roof (mixbench, ERT) as a chip file for `--hardware FILE.toml`.
    #[arg(long, value_name = "FILE.toml")]
    pub write_chip: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub plot: PlotArgs,
    #[command(flatten)]
    pub format: FormatArg,
}
