//! `roofline`: how fast a model can run on a chip, why, and what to change.
//!
//! This binary is thin: flags become typed values once ([`args`]), each command calls the
//! libraries ([`commands`]), and any error rises here to be printed once and turned into an exit
//! code: 0 success, 2 bad input or usage (as clap does), 1 internal fault.

mod args;
mod commands;
mod error;
mod output;

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match commands::run(cli, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind == error::Kind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let _ = out.flush();
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "error: {}", e.message);
            if let Some(h) = &e.hint {
                let _ = writeln!(err, "hint: {h}");
            }
            ExitCode::from(e.kind.code())
        }
    }
}
