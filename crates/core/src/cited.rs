//! A number together with where it comes from.

use serde::{Deserialize, Serialize};

/// A value and its source: a datasheet, paper or section a reader can check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cited<T> {
    /// The value, in the base unit its field names.
    pub value: T,
    /// Where the value comes from (document, table, section; or how it was derived).
    pub source: String,
}

impl<T> Cited<T> {
    /// A value with its source.
    pub fn new(value: T, source: impl Into<String>) -> Self {
        Self {
            value,
            source: source.into(),
        }
    }
}
