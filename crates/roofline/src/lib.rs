//! # roofline
//!
//! How fast can a transformer run on a chip, and why? This crate is the library entry point of
//! `roofline`: it puts every operator of one forward pass on the chip's roofline (FLOPs, bytes,
//! arithmetic intensity, ridge point, bound, attainable FLOP/s, time), with totals and the memory
//! footprint (Williams, Waterman and Patterson, "Roofline", CACM 2009).
//!
//! Three crates do the work; this one re-exports them under short names:
//!
//! - [`cost_model`] (`roofline-core`): the pure cost model. Values in, values out; no I/O.
//! - [`inputs`] (`roofline-inputs`): Hugging Face `config.json` files, the embedded model
//!   presets and the chip catalog into core values.
//! - [`report`] (`roofline-report`): core values into tables, JSON, CSV, plots and HTML.
//!
//! (`cost_model`, not `core`: a `core` item would shadow the standard `core` crate in any module
//! that glob-imports this one.)
//!
//! [`prelude`] holds what a caller needs in one `use`. Every quantity is in SI base units: FLOP,
//! bytes, seconds, FLOP/s, B/s (decimal prefixes only when printed).
//!
//! ```
//! use roofline::prelude::*;
//!
//! // Llama-2-7B (an embedded preset, its real config.json) on the RTX A6000 (154.8 TFLOP/s
//! // dense bf16, 768 GB/s), bf16, batch 1.
//! let model = load_model("llama-2-7b")?;
//! let chip = find_device("a6000")?;
//! let prefill = analyze(&model, &Workload::prefill(1, 2048), &chip, Reserve::DEFAULT)?;
//! let decode = analyze(&model, &Workload::decode(1, 2048), &chip, Reserve::DEFAULT)?;
//!
//! // q_proj in prefill: a 2048×4096 by 4096×4096 GEMM, 2·2048·4096² FLOPs, compute-bound.
//! let q = prefill.rows.iter().find(|r| r.name == "q_proj").ok_or("no q_proj")?;
//! assert_eq!(q.cost.flops, Flop(2.0 * 2048.0 * 4096.0 * 4096.0));
//! assert_eq!(q.point().bound, Bound::Compute);
//! // In decode every weight is read once: 6,738,415,616 parameters × 2 bytes.
//! assert_eq!(decode.memory.weights, Bytes(13_476_831_232.0));
//!
//! // The per-operator table `roofline analyze` prints.
//! let mut out = Vec::new();
//! write_table(&model, &chip, &[prefill, decode], &mut out)?;
//! let text = String::from_utf8(out)?;
//! assert!(text.contains("q_proj") && text.contains("68.7 GFLOP"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::io::Write;

/// The pure cost model (`roofline-core`): units, precisions, chips, operators, the model's
/// operator graph and its analysis on a chip.
pub use roofline_core as cost_model;
/// Files and names into core values (`roofline-inputs`): Hugging Face configs, presets, the
/// chip catalog, profiles.
pub use roofline_inputs as inputs;
/// Core values into what a person reads (`roofline-report`): tables, JSON, CSV, plots, HTML.
pub use roofline_report as report;

use roofline_core::analysis::{AnalysisError, StageAnalysis};
use roofline_core::device::Device;
use roofline_core::model::Transformer;
use roofline_inputs::InputError;
use roofline_report::analysis::{write_analysis, AnalyzeReport};
use roofline_report::{Format, WriteError};

/// What a caller needs, in one `use roofline::prelude::*`: the core prelude
/// ([`roofline_core::prelude`]: [`Transformer`], [`Device`], [`Workload`](prelude::Workload),
/// [`Stage`](prelude::Stage), [`Precision`](prelude::Precision),
/// [`Precisions`](prelude::Precisions), [`analyze`](prelude::analyze), [`StageAnalysis`], the
/// builders, units and errors), the preset and chip loaders, and the table renderer.
///
/// ```
/// use roofline::prelude::*;
///
/// // A model from its dimensions and a chip from its datasheet figures, no files.
/// let model = Transformer::builder(4096, 32, 32, 11008, 32000).name("llama-2-7b").build()?;
/// let chip = Device::builder("a6000", "NVIDIA RTX A6000")
///     .peak(Precision::Bf16, FlopPerSec(154.8e12), "datasheet, dense")
///     .peak(Precision::Fp32, FlopPerSec(38.7e12), "datasheet")
///     .main_memory("GDDR6", BytesPerSec(768e9), Some(Bytes(48e9)), "datasheet")
///     .build();
/// let w = Workload::decode(8, 4096)
///     .with_precisions(Precisions::new(Precision::Int4, Precision::Bf16, Precision::Bf16))
///     .flash_attention(true);
/// let s = analyze(&model, &w, &chip, Reserve::DEFAULT)?;
/// // int4 weights: 6,738,415,616 parameters × 0.5 bytes.
/// assert_eq!(s.memory.weights, Bytes(3_369_207_808.0));
/// // The KV cache: 2 · 32 layers · 8 sequences · 4097 tokens · 4096 · 2 bytes.
/// assert_eq!(s.memory.kv_cache, Bytes(2.0 * 32.0 * 8.0 * 4097.0 * 4096.0 * 2.0));
/// assert!(preset_ids().contains(&"llama-2-7b") && catalog_ids().contains(&"h100-sxm"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub mod prelude {
    pub use roofline_core::prelude::*;
    pub use roofline_inputs::config::{load_model, parse_config, preset_ids};
    pub use roofline_inputs::hardware::{catalog, catalog_ids, find_device, parse_device};
    pub use roofline_inputs::InputError;
    pub use roofline_report::analysis::{write_analysis, AnalyzeReport};
    pub use roofline_report::{Format, WriteError};

    pub use crate::{write_table, Error};
}

/// Writes the per-operator table of `stages` of `model` on `device` to `out`, as `roofline
/// analyze` prints it: the serving headline (TTFT, TPOT, tokens/s:
/// [`roofline_core::serve::headline`]), then per stage a heading, one row per operator (count, FLOPs, bytes,
/// arithmetic intensity, ridge, bound, attainable FLOP/s, time, launch, share of the time), the
/// totals and the memory footprint. Numbers in human units with decimal prefixes (`68.7
/// GFLOP`, `33.6 MB`, `443.9 µs`).
///
/// The same as [`write_analysis`] with [`Format::Table`]; [`Format::Json`] and [`Format::Csv`]
/// give base units instead.
///
/// # Errors
/// A failed write ([`WriteError::is_broken_pipe`] tells a closed pipe from a fault).
///
/// ```
/// use roofline::prelude::*;
///
/// let model = load_model("llama-2-7b")?;
/// let chip = find_device("h100-sxm")?;
/// let decode = analyze(&model, &Workload::decode(1, 2048), &chip, Reserve::DEFAULT)?;
/// let mut out = Vec::new();
/// write_table(&model, &chip, &[decode], &mut out)?;
/// let text = String::from_utf8(out)?;
/// // The serving headline first (a decode step alone gives TPOT and tokens/s), then the
/// // stage's heading naming the stage, the model and the chip; lm_head is the last operator.
/// assert!(text.starts_with("serving: TPOT "));
/// assert!(text.contains("\n\ndecode · llama-2-7b"));
/// assert!(text.contains("NVIDIA H100") && text.contains("lm_head"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_table(
    model: &Transformer,
    device: &Device,
    stages: &[StageAnalysis],
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    let report = AnalyzeReport {
        model,
        device,
        stages,
    };
    write_analysis(&report, Format::Table, out)
}

/// Any error of the library: bad input (a file, a name, a field), an analysis that cannot be
/// made (a zero batch, a precision the chip has no peak for), or a failed write. Each names the
/// field at fault.
///
/// ```
/// use roofline::prelude::*;
///
/// fn run() -> Result<StageAnalysis, Error> {
///     let model = load_model("llama-2-7b")?;
///     let chip = find_device("a6000")?;
///     Ok(analyze(&model, &Workload::prefill(0, 2048), &chip, Reserve::DEFAULT)?)
/// }
/// let e = run().unwrap_err();
/// assert!(matches!(&e, Error::Analysis(AnalysisError::Workload(w)) if w.quantity == "batch"));
/// assert_eq!(e.to_string(), "`batch`: must be at least 1");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A file or a name that cannot be used: its message names the file and the field, its
    /// hint the fix.
    Input(InputError),
    /// The model, workload or chip cannot be analysed together.
    Analysis(AnalysisError),
    /// Output could not be written.
    Write(WriteError),
}

impl Error {
    /// How to fix it, where there is something to say (input errors carry one).
    pub fn hint(&self) -> Option<&str> {
        match self {
            Error::Input(e) => e.hint.as_deref(),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(e) => e.fmt(f),
            Error::Analysis(e) => e.fmt(f),
            Error::Write(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Input(e) => Some(e),
            Error::Analysis(e) => Some(e),
            Error::Write(e) => Some(e),
        }
    }
}

impl From<InputError> for Error {
    fn from(e: InputError) -> Self {
        Error::Input(e)
    }
}
impl From<AnalysisError> for Error {
    fn from(e: AnalysisError) -> Self {
        Error::Analysis(e)
    }
}
impl From<WriteError> for Error {
    fn from(e: WriteError) -> Self {
        Error::Write(e)
    }
}
