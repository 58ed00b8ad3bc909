//! `roofline report`.

use super::analyze::AnalyzeArgs;
use clap::Args;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The HTML file to write (never overwritten without --force).
    #[arg(long, value_name = "FILE")]
    pub out: std::path::PathBuf,
    #[command(flatten)]
    pub analyze: AnalyzeArgs,
}
