//! # roofline-report
//!
//! Core values into what a person reads: aligned terminal tables with human units, a stable JSON
//! schema (the typed documents of [`doc`], their schemas in `docs/schema/`) in base units, and CSV. Every function writes to a writer it is
//! given; nothing here prints or exits.
//!
//! ```
//! use roofline_report::units::{human_flops, human_bytes, human_seconds};
//! assert_eq!(human_flops(68.72e9), "68.7 GFLOP");
//! assert_eq!(human_bytes(67.1e6), "67.1 MB");
//! assert_eq!(human_seconds(443.8e-6), "443.8 µs");
//! ```

pub mod advice;
pub mod analysis;
pub mod collective;
pub mod compare;
pub mod doc;
pub mod explain;
pub mod fusion;
pub mod generate;
pub mod hardware;
pub mod headline;
pub mod hier_plot;
pub mod html;
pub mod measure;
pub mod mfu;
pub mod models;
pub mod op;
pub mod parallel;
pub mod pareto;
pub mod plan;
pub mod plot;
pub mod profile;
pub mod serve_sim;
pub mod suite;
pub mod suite_plot;
pub mod sweep;
pub mod sweep_plot;
pub mod train;
pub mod train_plan;
pub mod units;

use std::fmt;
use std::str::FromStr;

/// Output format of every command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Format {
    /// Aligned terminal table with human units.
    #[default]
    Table,
    /// JSON, numbers in base units (FLOP, bytes, seconds).
    Json,
    /// CSV, one row per item, numbers in base units.
    Csv,
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "table" => Ok(Format::Table),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            _ => Err(format!("unknown format `{s}`: use table, json or csv")),
        }
    }
}

/// A failure to write output (a closed pipe, a full disk).
#[derive(Debug)]
#[non_exhaustive]
pub struct WriteError(pub String, pub bool);

impl WriteError {
    /// Whether the reader went away (`roofline … | head`): not a fault, nothing to report.
    pub fn is_broken_pipe(&self) -> bool {
        self.1
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write output: {}", self.0)
    }
}
impl std::error::Error for WriteError {}
impl From<std::io::Error> for WriteError {
    fn from(e: std::io::Error) -> Self {
        WriteError(e.to_string(), e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}
impl From<serde_json::Error> for WriteError {
    fn from(e: serde_json::Error) -> Self {
        let pipe = e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe);
        WriteError(e.to_string(), pipe)
    }
}
impl From<csv::Error> for WriteError {
    fn from(e: csv::Error) -> Self {
        let pipe = matches!(e.kind(), csv::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe);
        WriteError(e.to_string(), pipe)
    }
}

/// How the text tables are laid out: the widest a table may be, and whether every column is
/// shown. One setting for the process (the CLI sets it once from `--wide` and the terminal);
/// CSV and JSON always hold every column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableLayout {
    /// The most columns (characters) a table may take; wider content wraps inside its cells.
    /// `None`: no limit.
    pub max_width: Option<u16>,
    /// Every column, the ones the default leaves out included (a per-row launch, the ridge,
    /// sources, tiles).
    pub wide: bool,
}

impl TableLayout {
    /// The default: 120 columns, the default set of columns.
    pub const DEFAULT: TableLayout = TableLayout {
        max_width: Some(DEFAULT_TABLE_WIDTH),
        wide: false,
    };
    /// `--wide`: every column, no width limit.
    pub const WIDE: TableLayout = TableLayout {
        max_width: None,
        wide: true,
    };
}

/// Columns a table takes by default when stdout is not a terminal.
pub const DEFAULT_TABLE_WIDTH: u16 = 120;

static TABLE_WIDTH: std::sync::atomic::AtomicU16 =
    std::sync::atomic::AtomicU16::new(DEFAULT_TABLE_WIDTH);
static TABLE_WIDE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets the process's [`TableLayout`].
pub fn set_table_layout(layout: TableLayout) {
    use std::sync::atomic::Ordering::Relaxed;
    TABLE_WIDTH.store(layout.max_width.unwrap_or(0), Relaxed);
    TABLE_WIDE.store(layout.wide, Relaxed);
}

/// The process's [`TableLayout`] ([`TableLayout::DEFAULT`] until set).
pub fn table_layout() -> TableLayout {
    use std::sync::atomic::Ordering::Relaxed;
    let w = TABLE_WIDTH.load(Relaxed);
    TableLayout {
        max_width: (w > 0).then_some(w),
        wide: TABLE_WIDE.load(Relaxed),
    }
}

/// The width of the terminal stdout is, in columns; `None` when stdout is not a terminal.
pub fn terminal_columns() -> Option<u16> {
    let t = comfy_table::Table::new();
    if t.is_tty() {
        t.width()
    } else {
        None
    }
}

/// A table with the project's look: no borders but a header rule, columns right-aligned where
/// they hold numbers; as wide as its content.
pub(crate) fn new_table(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::ASCII_BORDERS_ONLY_CONDENSED)
        .set_content_arrangement(comfy_table::ContentArrangement::Disabled)
        .set_header(header.iter().copied());
    t
}

/// A [`new_table`] held within [`table_layout`]'s width: where its content would be wider, the
/// cells with the longest text wrap. For the tables read in a terminal every day (`analyze`,
/// `--fusion`, `sweep`, `hardware show`), whose columns are chosen to fit 120 without wrapping
/// numbers.
pub(crate) fn fitted_table(header: &[&str]) -> comfy_table::Table {
    let mut t = new_table(header);
    match table_layout().max_width {
        Some(w) => {
            t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
                .set_width(w);
        }
        None => {
            t.set_content_arrangement(comfy_table::ContentArrangement::Disabled);
        }
    }
    t
}

/// Right-aligns columns `from..` of `table`.
pub(crate) fn align_right_from(table: &mut comfy_table::Table, from: usize) {
    let n = table.column_count();
    for i in from..n {
        if let Some(c) = table.column_mut(i) {
            c.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
}
