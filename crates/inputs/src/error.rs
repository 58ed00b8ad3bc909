//! The one error type of this crate: bad input from a file or a name, with a hint.

use std::fmt;

/// A file or a name the user gave that cannot be used. Always the user's to fix (exit code 2).
///
/// `message` names the file and field; `hint` says what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InputError {
    /// What is wrong, naming the file and field (`config.json: field `num_key_value_heads` ...`).
    pub message: String,
    /// How to fix it, where there is something to say.
    pub hint: Option<String>,
}

impl InputError {
    /// An error with a message and no hint.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: None,
        }
    }

    /// Adds a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for InputError {}
