//! The CLI's one error type: a message, a hint, and whose fault it is (the exit code).

use roofline_core::analysis::AnalysisError;
use roofline_inputs::InputError;
use roofline_report::WriteError;

/// Whose fault an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bad input or usage: exit code 2.
    BadInput,
    /// A fault of ours or of the environment: exit code 1.
    Internal,
    /// The reader closed the pipe (`| head`): exit 0 quietly.
    BrokenPipe,
}

impl Kind {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Kind::BadInput => 2,
            Kind::Internal => 1,
            Kind::BrokenPipe => 0,
        }
    }
}

/// An error to print once, as `error: …` then `hint: …`.
#[derive(Debug)]
pub struct CliError {
    pub kind: Kind,
    pub message: String,
    pub hint: Option<String>,
}

impl CliError {
    pub fn bad_input(message: impl Into<String>, hint: Option<String>) -> Self {
        Self {
            kind: Kind::BadInput,
            message: message.into(),
            hint,
        }
    }
}

impl From<InputError> for CliError {
    fn from(e: InputError) -> Self {
        Self::bad_input(e.message, e.hint)
    }
}

impl From<AnalysisError> for CliError {
    fn from(e: AnalysisError) -> Self {
        let hint = match &e {
            AnalysisError::Device(d) if d.no_peak_at_all() => Some(
                "measure it on the machine (`roofline measure --out chip.toml`) and pass \
                 --hardware chip.toml, or choose another chip (`roofline hardware list`)"
                    .into(),
            ),
            AnalysisError::Device(_) => Some(
                "choose a precision the chip has (`roofline hardware show ID`) or give a chip file with --hardware FILE.toml".into(),
            ),
            AnalysisError::Workload(_) => Some("see `roofline analyze --help`".into()),
            AnalysisError::Model(_) => Some("fix the model's config.json".into()),
            AnalysisError::Reserve(_) => Some(
                "give a share below 100 % (`--memory-reserve 10%`) or a size (`--memory-reserve 2GB`)"
                    .into(),
            ),
            _ => None,
        };
        let message = match &e {
            // The core names the workload field (`batch`); the user typed the flag (`--batch`).
            AnalysisError::Workload(w) => format!("`{}`: {}", flag(w.quantity), w.message),
            _ => e.to_string(),
        };
        Self::bad_input(message, hint)
    }
}

/// The flag that sets a [`roofline_core::workload::Workload`] field: `seq_len` → `--seq-len`.
pub fn flag(quantity: &str) -> String {
    format!("--{}", quantity.replace('_', "-"))
}

impl From<WriteError> for CliError {
    fn from(e: WriteError) -> Self {
        Self {
            kind: if e.is_broken_pipe() {
                Kind::BrokenPipe
            } else {
                Kind::Internal
            },
            message: e.to_string(),
            hint: None,
        }
    }
}

/// `hint` as the command that ran says it: an analysis error's hint points at `roofline
/// analyze --help`, and `sweep`, `report` and others that analyse point at their own.
pub fn for_command(hint: &str, command: &str) -> String {
    if command.is_empty() || command == "analyze" {
        return hint.to_string();
    }
    hint.replace(
        "`roofline analyze --help`",
        &format!("`roofline {command} --help`"),
    )
}

/// The longest value shown between quotes in an error line, in characters.
const SHOWN: usize = 80;

/// The longest value shown between quotes in a hint: hints hold commands to copy (with the
/// user's paths in them), so only a value beyond any real path (PATH_MAX is 4096 on Linux) is
/// cut.
const SHOWN_IN_HINT: usize = 4096;

/// One line of our error: every value between backticks cut to [`SHOWN`] characters with `…`
/// (a path keeps its end, where the file name is; any other value its start), and line breaks
/// shown as spaces.
pub fn shorten(line: &str) -> String {
    cut_quoted(line, '`', SHOWN)
}

/// A hint: as [`shorten`], to [`SHOWN_IN_HINT`] characters.
pub fn shorten_hint(line: &str) -> String {
    cut_quoted(line, '`', SHOWN_IN_HINT)
}

/// One line of clap's error, whose values stand between single quotes: as [`shorten`].
pub fn shorten_clap(line: &str) -> String {
    cut_quoted(line, '\'', SHOWN)
}

fn cut_quoted(line: &str, quote: char, max: usize) -> String {
    let flat = |c: char| if c.is_control() { ' ' } else { c };
    let mut out = String::with_capacity(line.len().min(4 * max));
    for (i, part) in line.split(quote).enumerate() {
        if i > 0 {
            out.push(quote);
        }
        let n = part.chars().count();
        // Odd parts stand between quotes (a last, unclosed part too: it is cut as well).
        if i % 2 == 1 && n > max {
            if part.contains(std::path::MAIN_SEPARATOR) || part.contains('/') {
                out.push('…');
                out.extend(part.chars().skip(n - (max - 1)).map(flat));
            } else {
                out.extend(part.chars().take(max - 1).map(flat));
                out.push('…');
            }
        } else {
            out.extend(part.chars().map(flat));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_and_hints_name_the_command() {
        let long = "x".repeat(500);
        let s = shorten(&format!("unknown chip `{long}`: see `a\nb`"));
        assert_eq!(s, format!("unknown chip `{}…`: see `a b`", "x".repeat(79)));
        assert_eq!(shorten("it's `short`"), "it's `short`");
        let path = format!("/{}/m.log", "d".repeat(200));
        assert_eq!(
            shorten(&format!("`{path}` is a log")),
            format!("`…{}/m.log` is a log", "d".repeat(73))
        );
        assert_eq!(
            shorten_hint(&format!("see `{path}`")),
            format!("see `{path}`")
        );
        let s = shorten_clap(&format!("invalid value '{long}' for '--batch <BATCH>'"));
        assert_eq!(
            s,
            format!("invalid value '{}…' for '--batch <BATCH>'", "x".repeat(79))
        );
        assert_eq!(
            for_command("see `roofline analyze --help`", "sweep"),
            "see `roofline sweep --help`"
        );
        assert_eq!(
            for_command("see `roofline analyze --help`", "analyze"),
            "see `roofline analyze --help`"
        );
    }
}
