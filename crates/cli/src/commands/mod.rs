//! One function per command: typed flags in, library calls, a writer out.

pub(crate) mod analyze;
pub(crate) mod analyze_parallel;
mod collective;
mod fuse;
mod generate;
mod hardware;
mod import;
mod measure;
mod measure_kernels;
mod mfu;
mod op;
mod plan;
pub(crate) mod plot;
mod report;
mod serve_sim;
mod sweep;
mod sweep_pareto;
mod train;
mod train_plan;
mod ui;

use crate::args::{Cli, Command};
use crate::error::CliError;
use std::io::Write;

/// Runs the parsed command, writing its output to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<(), CliError> {
    roofline_report::set_table_layout(if cli.wide {
        roofline_report::TableLayout::WIDE
    } else {
        roofline_report::TableLayout {
            max_width: Some(
                roofline_report::terminal_columns().unwrap_or(roofline_report::DEFAULT_TABLE_WIDTH),
            ),
            wide: false,
        }
    });
    match cli.command {
        Command::Analyze(a) => analyze::run(&a, out),
        Command::Hardware { command } => hardware::run(command, out),
        Command::Models(f) => hardware::models(f.format.into(), out),
        Command::Op(a) => op::run(&a, out),
        Command::Report(a) => report::run(&a, out),
        Command::Fuse(a) => fuse::run(&a, out),
        Command::Generate(a) => generate::run(&a, out),
        Command::Measure(a) => match &a.command {
            Some(crate::args::MeasureCommand::Kernels(k)) => measure_kernels::run(k, out),
            None => measure::run(&a, out),
        },
        Command::Mfu(a) => mfu::run_mfu(&a, out),
        Command::Mbu(a) => mfu::run_mbu(&a, out),
        Command::Plan(a) => plan::run(&a, out),
        Command::ServeSim(a) => serve_sim::run(&a, out),
        Command::Sweep(a) => sweep::run(&a, out),
        Command::Train(a) => train::run(&a, out),
        Command::Import(a) => import::run(&a, out),
        Command::Ui(a) => ui::run(&a),
    }
}
