//! `roofline report --out FILE`: what was written.

use super::SchemaVersion;
use schemars::JsonSchema;
use serde::Serialize;

/// The summary `roofline report` prints once the page is written.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ReportSummaryDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The page's path.
    pub out: String,
    /// Its size, bytes.
    pub bytes: usize,
    /// Operators in its roofline plot.
    pub operators_plotted: usize,
    /// Collectives on its communication panel (a report with the parallel flags; 0 without).
    pub collectives_plotted: usize,
}
