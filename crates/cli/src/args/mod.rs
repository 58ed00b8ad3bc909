//! Command-line flags, parsed once into typed values: the command line ([`Cli`]), one file per
//! command's flags, the flags several commands share ([`common`]) and the value parsers
//! ([`values`]).

mod analyze;
mod common;
mod fuse;
mod hardware;
mod import;
mod mbu;
mod measure;
mod mfu;
mod op;
mod report;
mod sweep;
mod values;

pub use analyze::AnalyzeArgs;
pub use common::{FormatArg, StageArg};
pub use fuse::FuseArgs;
pub use hardware::{CompareArgs, HardwareCommand};
pub use import::ImportArgs;
pub use mbu::MbuArgs;
pub use measure::{MeasureArgs, MeasureCommand, MeasureKernelsArgs};
pub use mfu::MfuArgs;
pub use op::{OpArgs, OpCommand};
pub use report::ReportArgs;
pub use sweep::SweepArgs;

use clap::{Parser, Subcommand};

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
    /// One operator on one chip: FLOPs, bytes, intensity, ridge, bound, time (`--explain`).
    Op(OpArgs),
    /// A self-contained HTML report of `analyze`: tables, roofline plot, a derivation.
    Report(ReportArgs),
    /// Price a user-named chain of operators as separate kernels and as one fused kernel.
    Fuse(FuseArgs),
    /// Measure this machine's roofline: peak FLOP/s per precision, bandwidth per memory level;
    /// write it as a chip file (`--out host.toml`) that `--hardware host.toml` reads.
    Measure(MeasureArgs),
    /// Training MFU and HFU by four FLOP conventions, time to train, MFU as a function of N.
    Mfu(MfuArgs),
    /// Inference MBU (and MFU) of a measured decode step.
    Mbu(MbuArgs),
    /// Sweep batch, length, precision and chip: each operator's bound and crossover batch.
    Sweep(SweepArgs),
    /// Import a profile (`ncu --csv`, a PyTorch profiler trace) or an empirical roof (mixbench,
    /// ERT): every kernel on the roofline, ranked by the time it loses against its roof.
    Import(ImportArgs),
}
