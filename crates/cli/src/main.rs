//! `roofline`: how fast a model can run on a chip, why, and what to change.
//!
//! This binary is thin: flags become typed values once ([`args`]), each command calls the
//! libraries ([`commands`]), and any error rises here to be printed once and turned into an exit
//! code: 0 success, 2 bad input or usage (as clap does), 1 internal fault.

mod args;
mod commands;
mod error;
mod output;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The command path is only for the hints of an error: derived then, not on every run.
    let cli = match args::parse(&argv) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e, &args::command_path(&argv)),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match commands::run(cli, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind == error::Kind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let _ = out.flush();
            let command = args::command_path(&argv);
            let hint = e.hint.as_deref().map(|h| error::for_command(h, &command));
            report(&e.message, hint.as_deref(), e.kind.code())
        }
    }
}

/// Prints `error: message` and `hint: hint`, each on one line with long values cut, and
/// returns the exit code.
fn report(message: &str, hint: Option<&str>, code: u8) -> ExitCode {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: {}", error::shorten(message));
    if let Some(h) = hint {
        let _ = writeln!(err, "hint: {}", error::shorten_hint(h));
    }
    ExitCode::from(code)
}

/// What clap found: `--help` and `--version` print to stdout (exit 1 when it cannot be written,
/// as for every command's output; 0 when the reader closed the pipe); a usage error prints
/// clap's message and usage, then a `hint:` line pointing at the command's own `--help`.
fn usage_error(e: &clap::Error, command: &str) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let text = e.render().to_string();
        let mut out = std::io::stdout().lock();
        return match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(w) if w.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(w) => report(&format!("cannot write to stdout: {w}"), None, 1),
        };
    }
    let help =
        format!("see `roofline {command} --help`").replace("roofline  --help", "roofline --help");
    if let Some((flag, value)) = args::negative_value(e) {
        return report(
            &format!("`{flag}` must be positive, got `{value}`"),
            Some(&format!("give a number > 0; {help}")),
            2,
        );
    }
    let text = e.render().to_string();
    let mut err = std::io::stderr().lock();
    for line in text.lines() {
        // The first is replaced by the hint below; blank lines would part the `error:` line
        // from its `hint:`; the last reads a mistyped flag as a value, which for most commands
        // would be the model.
        if line.starts_with("For more information, try")
            || line.trim().is_empty()
            || (line.trim_start().starts_with("tip: to pass '") && line.contains("as a value"))
        {
            continue;
        }
        let _ = writeln!(err, "{}", error::shorten_clap(line));
    }
    let _ = writeln!(err, "hint: {help}");
    ExitCode::from(2)
}
