//! Command-line flags, parsed once into typed values: the command line ([`Cli`]), one file per
//! command's flags, the flags several commands share ([`common`]) and the value parsers
//! ([`values`]).

mod analyze;
pub(crate) mod common;
mod fuse;
mod generate;
mod hardware;
mod import;
mod mbu;
mod measure;
mod mfu;
pub mod op;
mod plan;
mod report;
mod serve_sim;
mod sweep;
pub(crate) mod train;
mod ui;
pub(crate) mod values;

pub use analyze::AnalyzeArgs;
pub use common::FormatArg;
pub use common::PrecisionArgs;
pub use fuse::FuseArgs;
pub use generate::GenerateArgs;
pub use hardware::{CompareArgs, HardwareCommand};
pub use import::ImportArgs;
pub use mbu::MbuArgs;
pub use measure::{MeasureArgs, MeasureCommand, MeasureKernelsArgs};
pub use mfu::MfuArgs;
pub use op::{OpArgs, OpCommand};
pub use plan::{PlanArgs, PlanPolicies, PlanStage};
pub use report::ReportArgs;
pub use serve_sim::ServeSimArgs;
pub use sweep::SweepArgs;
pub use train::{TrainArgs, TrainLayoutArgs};
pub use ui::UiArgs;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::ffi::OsString;

/// How fast can a model run on a chip, and why? Roofline analysis of transformer inference.
#[derive(Debug, Parser)]
#[command(name = "roofline", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Tables with every column and no width limit (default: the terminal's width, or 120
    /// columns when stdout is not a terminal, cells wrapped to fit). CSV and JSON are always
    /// complete.
    #[arg(long, global = true)]
    pub wide: bool,
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
    /// A self-contained HTML report of `analyze`: tables, roofline plot, a derivation; with the
    /// parallel flags, one device of the layout: its collectives, the step, the memory.
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
    /// How to split a model over a system's devices: for inference, every tensor, pipeline and
    /// expert parallel layout (and context parallel, for prefill), ranked by time per step and
    /// tokens per second per device; for training (`--stage train`), every layout, micro-batch,
    /// recomputation, ZeRO stage and schedule that fits, ranked by step time.
    Plan(PlanArgs),
    /// One training step on many devices: the roofline bound beside an estimate at published
    /// efficiencies, memory per GPU, pipeline stages and the MFU waterfall (`--plot`).
    Train(TrainArgs),
    /// One request whole: TTFT, TPOT (both conventions), end-to-end latency and tokens/s, the
    /// roofline bound beside an estimate; the batch and context that fit (`--max-batch`),
    /// chunked prefill, speculative decoding and disaggregated serving priced.
    Generate(GenerateArgs),
    /// Simulate serving a stream of requests on a continuous-batching engine (vLLM-style:
    /// iteration-level scheduling, chunked prefill, paged KV cache, preemption), each step at
    /// the roofline bound of its batch: TTFT, TPOT and end-to-end percentiles, throughput,
    /// queueing.
    ServeSim(ServeSimArgs),
    /// Sweep batch, length, precision and chip: each operator's bound and crossover batch.
    Sweep(SweepArgs),
    /// Import a profile (`ncu --csv`, a PyTorch profiler trace) or an empirical roof (mixbench,
    /// ERT): every kernel on the roofline, ranked by the time it loses against its roof.
    Import(ImportArgs),
    /// A local page over `analyze`: choose the model, chip, stage, batch, precisions, fusion and
    /// layout, and see the roofline plot, the operators, the totals, the memory and any
    /// operator's derivation; every number is the CLI's, from a JSON API (`/openapi.json`).
    Ui(UiArgs),
}

/// Parses the command line. Every option that takes a value also takes a negative number as
/// its value, so that `--batch -1` reaches the flag's own check (and [`negative_value`]) rather
/// than being read as an unknown flag `-1`.
///
/// # Errors
/// clap's: a usage error, or `--help` / `--version` to print.
pub fn parse(argv: &[OsString]) -> Result<Cli, clap::Error> {
    let cli = Cli::command();
    let path = path_in(&cli, argv);
    let mut matches = negative_numbers(cli, &path).try_get_matches_from(argv)?;
    Cli::from_arg_matches_mut(&mut matches)
}

/// Lets the options of `c` and of the subcommands along `path` (the ones the command line
/// names) take negative values; the other subcommands are left alone, as they are not parsed.
fn negative_numbers(mut c: clap::Command, path: &[String]) -> clap::Command {
    let options: Vec<clap::Id> = c
        .get_arguments()
        .filter(|a| a.get_long().is_some() && a.get_action().takes_values())
        .map(|a| a.get_id().clone())
        .collect();
    for id in options {
        c = c.mut_arg(id, |a| a.allow_negative_numbers(true));
    }
    if let Some((first, rest)) = path.split_first() {
        c = c.mut_subcommand(first, |s| negative_numbers(s, rest));
    }
    c
}

/// The subcommands named on the command line, as typed after `roofline`: `sweep`,
/// `hardware show`; empty when there is none.
pub fn command_path(argv: &[OsString]) -> String {
    path_in(&Cli::command(), argv).join(" ")
}

/// The subcommands of `cmd` that `argv` names, in order: each word that is not a flag, while it
/// names a subcommand of the one before.
fn path_in(cmd: &clap::Command, argv: &[OsString]) -> Vec<String> {
    let mut cmd = cmd;
    let mut path = Vec::new();
    for arg in argv.iter().skip(1) {
        let Some(a) = arg.to_str() else { break };
        if a.starts_with('-') {
            continue;
        }
        let Some(sub) = cmd.find_subcommand(a) else {
            break;
        };
        path.push(sub.get_name().to_string());
        cmd = sub;
    }
    path
}

/// The flag and value of a usage error whose value is a negative number (`--batch -1`).
pub fn negative_value(e: &clap::Error) -> Option<(String, String)> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if !matches!(
        e.kind(),
        ErrorKind::ValueValidation | ErrorKind::InvalidValue
    ) {
        return None;
    }
    let text = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let value = text(ContextKind::InvalidValue)?;
    let arg = text(ContextKind::InvalidArg)?;
    let number = value.trim().strip_prefix('-')?;
    if !number.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let flag = arg.split_whitespace().next()?.to_string();
    flag.starts_with("--").then_some((flag, value))
}
