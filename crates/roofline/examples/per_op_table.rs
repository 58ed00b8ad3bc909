//! The per-operator roofline table of a Hugging Face model on the RTX A6000, prefill of 2048
//! tokens and decode at context 2048, batch 1, bf16.
//!
//! `cargo run -p roofline --example per_op_table [-- path/to/config.json]`; without an argument,
//! Llama-2-7B's config from `../shared/models` (relative to the repository root).

use roofline::prelude::*;
use std::io::Write;
use std::process::ExitCode;

/// Llama-2-7B's `config.json`: `../shared/models/…` from the repository root.
pub const DEFAULT_CONFIG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/models/meta-llama--Llama-2-7b-hf/config.json"
);

/// Reads `config`, analyses prefill and decode on the catalog chip `chip`, writes the table.
pub fn run(config: &str, chip: &str, out: &mut dyn Write) -> Result<(), Error> {
    let model = load_model(config)?;
    let device = find_device(chip)?;
    let stages = [Workload::prefill(1, 2048), Workload::decode(1, 2048)]
        .iter()
        .map(|w| analyze(&model, w, &device, Reserve::DEFAULT))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(write_table(&model, &device, &stages, out)?)
}

#[allow(dead_code)] // a test includes this file and calls `run`
fn main() -> ExitCode {
    let config = std::env::args().nth(1);
    match run(
        config.as_deref().unwrap_or(DEFAULT_CONFIG),
        "a6000",
        &mut std::io::stdout(),
    ) {
        Ok(()) => ExitCode::SUCCESS,
        // `| head` closed the pipe: nothing to report.
        Err(Error::Write(w)) if w.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            let mut err = std::io::stderr();
            let _ = writeln!(err, "error: {e}");
            let _ = writeln!(
                err,
                "hint: {}",
                e.hint().unwrap_or("pass the path to a config.json")
            );
            ExitCode::from(2)
        }
    }
}
