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
