//! `roofline measure` and `roofline measure kernels`.

use super::common::{FormatArg, PlotArgs};
use super::values::parse_positive;
use clap::{Args, Subcommand};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct MeasureArgs {
    /// `kernels`: real kernels timed against the roofline; none: measure the roofline.
    #[command(subcommand)]
    pub command: Option<MeasureCommand>,
    /// Seconds instead of a minute: short repetitions, a 2× sweep up to 256 MiB.
    #[arg(long)]
    pub quick: bool,
    /// Threads of the all-threads runs (default: every logical CPU this process may use).
    #[arg(long, value_parser = parse_positive)]
    pub threads: Option<u64>,
    /// Largest working set of the sweep, MiB (default 1024; 256 with --quick).
    #[arg(long, value_name = "MIB", value_parser = parse_positive)]
    pub max_working_set: Option<u64>,
    /// Write the measured chip to FILE (`.toml`, the catalog's format); never overwritten
    /// without --force.
    #[arg(long, value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,
    /// Chip id written into --out.
    #[arg(long, default_value = "host")]
    pub id: String,
    /// Chip name written into --out (default: the processor and host).
    #[arg(long)]
    pub name: Option<String>,
    /// Measure the NVIDIA GPU instead of the CPU (needs a build with `--features cuda`).
    #[arg(long)]
    pub gpu: bool,
    /// CUDA device ordinal for --gpu.
    #[arg(long, default_value_t = 0, requires = "gpu")]
    pub device: u32,
    /// Write figures that did not settle (their repetitions disagreed: another process ran)
    /// into --out anyway, marked in their sources; without it such a chip file is refused.
    #[arg(long, requires = "out")]
    pub accept_unsettled: bool,
    /// Before measuring, wait until other work takes under 10 % of the CPUs for 3 seconds in a
    /// row (`/proc/stat`), at most SECS seconds (default 300); exit 2 if it never does.
    #[arg(long, value_name = "SECS", num_args = 0..=1, default_missing_value = "300", value_parser = parse_positive)]
    pub wait_idle: Option<u64>,
    /// `--plot FILE` draws the hierarchical roofline (`.svg` or `.png`); `--force` overwrites
    /// --plot and --out.
    #[command(flatten)]
    pub plot: PlotArgs,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Subcommand)]
pub enum MeasureCommand {
    /// Time a suite of real kernels (GEMMs, elementwise, RMSNorm, softmax, attention, the
    /// RMSNorm → Linear → SiLU → Linear chain unfused and fused) and hold each against the time
    /// this machine's measured roofline predicts: the error per kernel, the median error, the
    /// fused chain's measured and predicted speedup.
    Kernels(MeasureKernelsArgs),
}

#[derive(Debug, Args)]
pub struct MeasureKernelsArgs {
    /// Seconds instead of a minute: the quick roofline measurement and smaller kernels.
    #[arg(long)]
    pub quick: bool,
    /// Predict from this chip file (`roofline measure --out host.toml`) or catalog id instead
    /// of measuring the roofline now.
    #[arg(long, value_name = "FILE|ID")]
    pub hardware: Option<String>,
    /// Only the kernels whose name contains one of these (comma-separated: `gemm,chain`).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub only: Vec<String>,
    /// Run the suite on the NVIDIA GPU (needs a build with `--features cuda`).
    #[arg(long)]
    pub gpu: bool,
    /// CUDA device ordinal for --gpu.
    #[arg(long, default_value_t = 0, requires = "gpu")]
    pub device: u32,
    /// `--plot FILE` draws the measured and predicted points on the hierarchical roofline
    /// (`.svg` or `.png`); `--force` overwrites it.
    #[command(flatten)]
    pub plot: PlotArgs,
    #[command(flatten)]
    pub format: FormatArg,
}
