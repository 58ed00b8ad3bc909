//! `roofline`: how fast a model can run on a chip, why, and what to change. The program is
//! [`roofline_cli::main_with`]; this file only hands it the command line.

use std::process::ExitCode;

fn main() -> ExitCode {
    roofline_cli::main_with(std::env::args_os().collect())
}
