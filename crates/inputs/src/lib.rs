//! Inputs: files and names into core values.
//!
//! - [`hardware`]: the embedded chip catalog (`catalog/hardware/*.toml`) and user chip files.
//! - [`config`]: Hugging Face `config.json` into a validated [`roofline_core::model::Transformer`].
//! - [`profile`]: Nsight Compute CSV, PyTorch profiler traces, mixbench and ERT outputs.
//! - [`trace`]: request traces (CSV) for the serving simulator.
//!
//! Every error is an [`InputError`] that names the file, the field and the fix.

pub mod embedded;
pub mod error;
pub mod hardware;
pub mod profile;
pub mod read;
pub mod trace;

pub use error::InputError;
pub mod config;

/// The `n` candidates closest to `name` (Jaro–Winkler similarity), best first.
pub fn closest<'a>(name: &str, candidates: &[&'a str], n: usize) -> Vec<&'a str> {
    let lower = name.to_ascii_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(&lower, c), *c))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(n).map(|(_, c)| c).collect()
}
