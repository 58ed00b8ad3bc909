//! `roofline ui`.

use clap::Args;

#[derive(Debug, Args)]
pub struct UiArgs {
    /// Port to listen on; 0 picks a free one (printed on start).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Address to listen on: this machine only by default; `0.0.0.0` serves every network the
    /// machine is on (the API reads no files: models and chips by catalog id, or inline).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Open the page in the default browser once it is served.
    #[arg(long)]
    pub open: bool,
}
