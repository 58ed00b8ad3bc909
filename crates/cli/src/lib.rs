//! `roofline`: how fast a model can run on a chip, why, and what to change.
//!
//! The command line as a library: flags become typed values once (`args`), each command calls
//! the libraries (`commands`), and any error rises to [`main_with`] to be printed once and
//! turned into an exit code: 0 success, 2 bad input or usage (as clap does), 1 internal fault.
//! [`api`] is the typed API: a request type per command and a function from it to the command's
//! JSON document (`analyze` so far), what the CLI's `analyze`, the local page and Python's
//! `roofline.analyze` call. [`run_captured`] runs any command in-process from its argv and
//! returns its output or its error (message and hint): what the other Python functions call.

pub mod api;
mod args;
mod commands;
mod error;
mod output;
mod ui;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

/// A command that failed: what `roofline` prints as `error:` and `hint:`, and its exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The `error:` line (shortened as the CLI prints it).
    pub message: String,
    /// The `hint:` line, when there is one.
    pub hint: Option<String>,
    /// The exit code the CLI would return: 2 bad input or usage, 1 internal fault.
    pub code: u8,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error: {}", self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\nhint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Failure {}

/// Runs `argv` (`["roofline", "analyze", …]`, the program name first) in this process, writing
/// the command's output to `out`. `--help` and `--version` write their text to `out` too.
///
/// # Errors
/// [`Failure`] with the message, hint and exit code the CLI would print and return (a broken
/// pipe is not an error).
pub fn run_captured(argv: &[OsString], out: &mut dyn Write) -> Result<(), Failure> {
    let cli = match args::parse(argv) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                return out
                    .write_all(e.render().to_string().as_bytes())
                    .map_err(|w| Failure {
                        message: format!("cannot write the output: {w}"),
                        hint: None,
                        code: 1,
                    });
            }
            let command = args::command_path(argv);
            let help = format!("see `roofline {command} --help`")
                .replace("roofline  --help", "roofline --help");
            if let Some((flag, value)) = args::negative_value(&e) {
                return Err(Failure {
                    message: format!("`{flag}` must be positive, got `{value}`"),
                    hint: Some(format!("give a number > 0; {help}")),
                    code: 2,
                });
            }
            let text = e.render().to_string();
            let message = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid command line")
                .trim_start_matches("error: ")
                .to_string();
            return Err(Failure {
                message: error::shorten_clap(&message),
                hint: Some(help),
                code: 2,
            });
        }
    };
    match commands::run(cli, out) {
        Ok(()) => Ok(()),
        Err(e) if e.kind == error::Kind::BrokenPipe => Ok(()),
        Err(e) => {
            let command = args::command_path(argv);
            Err(Failure {
                message: error::shorten(&e.message),
                hint: e
                    .hint
                    .as_deref()
                    .map(|h| error::shorten_hint(&error::for_command(h, &command))),
                code: e.kind.code(),
            })
        }
    }
}

/// The `roofline` program: parses `argv`, runs the command with stdout as its output, prints an
/// error once on stderr, and returns the exit code.
pub fn main_with(argv: Vec<OsString>) -> ExitCode {
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
