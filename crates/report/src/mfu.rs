//! Rendering of `roofline mfu` (training MFU/HFU by formula, time to train, MFU as a function of
//! N) and `roofline mbu` (a measured decode step's bandwidth and FLOP utilisation).
//!
//! JSON and CSV carry base units (FLOP, FLOP/s, bytes, seconds) and utilisations as fractions
//! (`0.462` is 46.2 %); the table prints human units and percentages.

use crate::doc::mfu::{MbuDoc, MfuBySizeDoc, MfuDoc, MfuReportedDoc};
use crate::doc::write_json;
use crate::units::{
    human_bytes, human_bytes_per_s, human_duration, human_flops, human_flops_per_s, percent,
};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::mbu::Mbu;
use roofline_core::mfu::{
    Conventions, MfuReport, Recompute, ReportedMfu, SizeSweep, TrainingShape, Work,
};
use roofline_core::precision::Precision;
use roofline_core::units::FlopPerSec;
use std::io::Write;

/// A count with a short-scale suffix, as training reports write them: `70.0B`, `1.40T`,
/// `38.6k`; `unit` follows after a space (`100.0B tokens`).
pub fn human_count(v: f64, unit: &str) -> String {
    const SCALES: [(f64, &str); 4] = [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")];
    let a = v.abs();
    let (x, p) = SCALES
        .iter()
        .find(|(k, _)| a >= k * 0.99995)
        .map(|(k, p)| (v / k, *p))
        .unwrap_or((v, ""));
    let num = if x.abs() < 9.995 {
        format!("{x:.2}{p}")
    } else {
        format!("{x:.1}{p}")
    };
    if unit.is_empty() {
        num
    } else {
        format!("{num} {unit}")
    }
}

/// The chip side of a report: which chip, in which precision, how many.
#[derive(Debug, Clone, Copy)]
pub struct ChipLine<'a> {
    /// Chip id (`h100-sxm`), or `None` when only `--peak` was given.
    pub id: Option<&'a str>,
    /// Full chip name.
    pub name: Option<&'a str>,
    /// Precision whose dense peak applies.
    pub precision: Precision,
    /// Devices.
    pub devices: u64,
    /// Dense peak of one device, FLOP/s.
    pub peak: FlopPerSec,
    /// Whether `--peak` overrode the catalog.
    pub peak_overridden: bool,
}

impl ChipLine<'_> {
    fn describe(&self) -> String {
        let chip = match (self.id, self.name) {
            (Some(id), Some(name)) => format!("{name} ({id})"),
            (Some(id), None) => id.to_string(),
            _ => "devices".to_string(),
        };
        format!(
            "{} × {chip}, {} dense peak {} per device{}",
            self.devices,
            self.precision,
            human_flops_per_s(self.peak.get()),
            if self.peak_overridden {
                " (--peak)"
            } else {
                ""
            }
        )
    }
}

/// Everything `roofline mfu` reports when the model is known.
#[derive(Debug, Clone, Copy)]
pub struct MfuView<'a> {
    /// Model name, when a preset or config was given.
    pub model_name: Option<&'a str>,
    /// What is known of its shape.
    pub shape: &'a TrainingShape,
    /// The devices.
    pub chip: ChipLine<'a>,
    /// Recomputation.
    pub recompute: Recompute,
    /// The work, as given.
    pub work: Option<Work>,
    /// Tokens for the time-to-train question.
    pub train_tokens: Option<f64>,
    /// Target MFU (fraction) for the time-to-train question.
    pub target_mfu: f64,
    /// Which attention scores count, and what PaLM's N holds.
    pub conventions: Conventions,
    /// The answers.
    pub report: &'a MfuReport,
}

/// "46.7B parameters, 12.9B active" (a mixture of experts) or "6.74B parameters".
fn parameters_phrase(shape: &TrainingShape) -> String {
    if shape.active_params == shape.params {
        format!("{} parameters", human_count(shape.params, ""))
    } else {
        format!(
            "{} parameters, {} active",
            human_count(shape.params, ""),
            human_count(shape.active_params, "")
        )
    }
}

/// The line that states the conventions used: the attention mask, and PaLM's N.
fn conventions_line(v: &MfuView<'_>) -> String {
    let (n, _) = v.shape.palm_params(v.conventions.palm_embedding);
    let lookup = v.shape.lookup_params.unwrap_or(0.0);
    let palm = match (v.conventions.palm_embedding, v.shape.lookup_params) {
        (roofline_core::mfu::PalmEmbedding::Output, Some(l)) if l > 0.0 => format!(
            "PaLM's N = {} ({} active parameters less {} looked up, 0 FLOP: the untied input \
             embedding or position table; --palm-embedding all counts them)",
            human_count(n, ""),
            human_count(v.shape.active_params, ""),
            human_count(lookup, "")
        ),
        (roofline_core::mfu::PalmEmbedding::All, Some(l)) if l > 0.0 => format!(
            "PaLM's N = {} (every active parameter, --palm-embedding all: the {} looked-up \
             parameters charged as a matmul)",
            human_count(n, ""),
            human_count(l, "")
        ),
        _ => format!(
            "PaLM's N = {} (no looked-up table{})",
            human_count(n, ""),
            if v.shape.lookup_params.is_none() {
                " known: N as given"
            } else {
                ": embedding tied"
            }
        ),
    };
    format!("attention: {} · {palm}", v.conventions.mask.label())
}

fn reported_line(achieved: f64, peak: f64) -> String {
    format!(
        "work: {} per device reported → MFU = {} ÷ {} dense peak, by every formula; tokens/s per formula are those it implies",
        human_flops_per_s(achieved),
        human_flops_per_s(achieved),
        human_flops_per_s(peak)
    )
}

fn work_line(work: &Work, tokens_per_s: f64, devices: u64) -> String {
    let given = match *work {
        Work::TokensPerSecond(_) => "given".to_string(),
        // No single tokens/s (each formula implies its own): `reported_line` states it.
        Work::FlopsPerDevice(f) => format!("{} per device reported", human_flops_per_s(f.get())),
        Work::Tokens { tokens, time } => {
            format!(
                "{} in {}",
                human_count(tokens, "tokens"),
                human_duration(time.get())
            )
        }
        Work::Steps {
            step_time,
            global_batch,
            seq_len,
        } => format!(
            "{global_batch} × {seq_len} tokens per step of {}",
            human_duration(step_time.get())
        ),
    };
    format!(
        "work: {given} → {} ({} per device)",
        human_count(tokens_per_s, "tokens/s"),
        human_count(tokens_per_s / devices as f64, "tokens/s")
    )
}

/// Writes the per-formula MFU report.
///
/// # Errors
/// A failed write.
pub fn write_mfu(v: &MfuView<'_>, format: Format, out: &mut dyn Write) -> Result<(), WriteError> {
    let r = v.report;
    let target = percent(v.target_mfu, 1);
    match format {
        Format::Table => {
            let name = v.model_name.map(|n| format!("{n} (")).unwrap_or_default();
            let close = if v.model_name.is_some() { ")" } else { "" };
            writeln!(
                out,
                "mfu · {name}{}{close} · {} · recompute {}",
                parameters_phrase(v.shape),
                v.chip.describe(),
                v.recompute
            )?;
            if let (Some(w), Some(tps)) = (&v.work, r.tokens_per_s) {
                writeln!(out, "{}", work_line(w, tps, v.chip.devices))?;
            }
            if let Some(Work::FlopsPerDevice(f)) = v.work {
                writeln!(out, "{}", reported_line(f.get(), v.chip.peak.get()))?;
            }
            writeln!(out, "{}", conventions_line(v))?;
            let reported = matches!(v.work, Some(Work::FlopsPerDevice(_)));
            let time_col = v
                .train_tokens
                .map(|d| format!("{} at {target}", human_count(d, "tokens")));
            let mut header = vec!["formula", "model FLOPs/token", "hardware FLOPs/token"];
            if r.tokens_per_s.is_some() {
                header.extend(["achieved/device", "MFU", "HFU", "rating"]);
            } else if reported {
                header.extend(["implied tokens/s", "MFU", "HFU", "rating"]);
            }
            if let Some(c) = &time_col {
                header.push(c.as_str());
            }
            let mut t = new_table(&header);
            for row in &r.rows {
                let mut cells = vec![
                    row.formula.label().to_string(),
                    human_flops(row.model_flops_per_token.get()),
                    human_flops(row.hardware_flops_per_token.get()),
                ];
                if let Some(u) = row.utilization {
                    cells.push(if reported {
                        human_count(u.tokens_per_s, "")
                    } else {
                        human_flops_per_s(u.achieved_per_device.get())
                    });
                    cells.push(percent(u.mfu, 2));
                    cells.push(percent(u.hfu, 2));
                    cells.push(u.rating.label().to_string());
                }
                if let Some(tt) = row.time_at_target {
                    cells.push(human_duration(tt.get()));
                }
                t.add_row(cells);
            }
            align_right_from(&mut t, 1);
            writeln!(out, "{t}")?;
            writeln!(
                out,
                "model FLOPs = forward + backward (2× forward); hardware FLOPs add the recomputation; \
                 MFU = tokens/s × model FLOPs/token ÷ (devices × dense peak)"
            )?;
            for (f, needs) in &r.missing {
                writeln!(out, "not computed: {} — {needs}", f.label())?;
            }
            for (f, why) in &r.not_valid {
                writeln!(
                    out,
                    "not valid for this architecture: {} — {why}",
                    f.label()
                )?;
            }
            let measured_time = !matches!(v.work, Some(Work::Tokens { .. }));
            if let (Some(d), Some(tps), true) = (v.train_tokens, r.tokens_per_s, measured_time) {
                writeln!(
                    out,
                    "at the measured {}, {} take {}",
                    human_count(tps, "tokens/s"),
                    human_count(d, "tokens"),
                    human_duration(d / tps)
                )?;
            }
        }
        Format::Json => {
            write_json(&MfuDoc::of(v), out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "formula",
                "parameters",
                "active_parameters",
                "attention_mask",
                "palm_embedding",
                "devices",
                "precision",
                "peak_flops_per_s",
                "recompute",
                "tokens_per_s",
                "model_flops_per_token",
                "hardware_flops_per_token",
                "achieved_flops_per_s_per_device",
                "mfu",
                "hfu",
                "rating",
                "train_tokens",
                "target_mfu",
                "time_to_train_at_target_s",
            ])?;
            let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
            for row in &r.rows {
                let u = row.utilization;
                w.write_record([
                    row.formula.id().to_string(),
                    v.shape.params.to_string(),
                    v.shape.active_params.to_string(),
                    v.conventions.mask.id().to_string(),
                    v.conventions.palm_embedding.id().to_string(),
                    v.chip.devices.to_string(),
                    v.chip.precision.to_string(),
                    v.chip.peak.get().to_string(),
                    v.recompute.to_string(),
                    opt(u.map(|u| u.tokens_per_s).or(r.tokens_per_s)),
                    row.model_flops_per_token.get().to_string(),
                    row.hardware_flops_per_token.get().to_string(),
                    opt(u.map(|u| u.achieved_per_device.get())),
                    opt(u.map(|u| u.mfu)),
                    opt(u.map(|u| u.hfu)),
                    u.map(|u| u.rating.id().to_string()).unwrap_or_default(),
                    opt(v.train_tokens),
                    v.target_mfu.to_string(),
                    opt(row.time_at_target.map(|t| t.get())),
                ])?;
            }
            w.flush()?;
        }
    }
    Ok(())
}

/// Writes the MFU of a reported FLOP/s per device (no model given).
///
/// # Errors
/// A failed write.
pub fn write_mfu_reported(
    r: &ReportedMfu,
    chip: &ChipLine<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => {
            writeln!(out, "mfu of a reported FLOP/s · {}", chip.describe())?;
            writeln!(
                out,
                "MFU = {} per device (reported) ÷ {} dense peak = {} · {}",
                human_flops_per_s(r.achieved_per_device.get()),
                human_flops_per_s(chip.peak.get()),
                percent(r.mfu, 2),
                r.rating.label()
            )?;
            writeln!(
                out,
                "the ratio is an MFU if the run counts model FLOPs, an HFU if it counts recomputation \
                 (Megatron-LM's Table 1 does); give a model or --params for the tokens/s each formula implies"
            )?;
        }
        Format::Json => write_json(&MfuReportedDoc::of(r, chip), out)?,
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "achieved_flops_per_s_per_device",
                "devices",
                "precision",
                "peak_flops_per_s",
                "mfu",
                "rating",
            ])?;
            w.write_record([
                r.achieved_per_device.get().to_string(),
                chip.devices.to_string(),
                chip.precision.to_string(),
                chip.peak.get().to_string(),
                r.mfu.to_string(),
                r.rating.id().to_string(),
            ])?;
            w.flush()?;
        }
    }
    Ok(())
}

/// Writes MFU as a function of N (no model size given).
///
/// # Errors
/// A failed write.
pub fn write_mfu_by_size(
    s: &SizeSweep,
    chip: &ChipLine<'_>,
    work: &Work,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => {
            writeln!(
                out,
                "mfu by model size (no --params or model given) · {}",
                chip.describe()
            )?;
            writeln!(out, "{}", work_line(work, s.tokens_per_s, chip.devices))?;
            let mut t = new_table(&["N (parameters)", "6N FLOPs/token", "MFU", "rating"]);
            for r in &s.rows {
                t.add_row(vec![
                    human_count(r.params, ""),
                    human_flops(r.flops_per_token.get()),
                    percent(r.mfu, 2),
                    r.rating.label().to_string(),
                ]);
            }
            align_right_from(&mut t, 0);
            writeln!(out, "{t}")?;
            writeln!(
                out,
                "N for {} MFU at this throughput: {} parameters (6N; MFU grows linearly with N)",
                percent(s.target_mfu, 1),
                human_count(s.params_for_target, "")
            )?;
        }
        Format::Json => {
            write_json(&MfuBySizeDoc::of(s, chip, work), out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "parameters",
                "model_flops_per_token",
                "tokens_per_s",
                "devices",
                "peak_flops_per_s",
                "mfu",
                "rating",
            ])?;
            for r in &s.rows {
                w.write_record([
                    r.params.to_string(),
                    r.flops_per_token.get().to_string(),
                    s.tokens_per_s.to_string(),
                    chip.devices.to_string(),
                    chip.peak.get().to_string(),
                    r.mfu.to_string(),
                    r.rating.id().to_string(),
                ])?;
            }
            w.flush()?;
        }
    }
    Ok(())
}

/// What `roofline mbu` reports besides the numbers: the model and step described.
#[derive(Debug, Clone, Copy)]
pub struct MbuView<'a> {
    /// Model name, or `None` with `--params` only.
    pub model_name: Option<&'a str>,
    /// Parameters.
    pub params: f64,
    /// Cached tokens per sequence.
    pub context: u64,
    /// Weight precision.
    pub weight_precision: Precision,
    /// KV-cache precision.
    pub kv_precision: Precision,
    /// Chip id, when from the catalog.
    pub chip: Option<&'a str>,
    /// The answers.
    pub mbu: &'a Mbu,
}

/// Writes an MBU report.
///
/// # Errors
/// A failed write.
pub fn write_mbu(v: &MbuView<'_>, format: Format, out: &mut dyn Write) -> Result<(), WriteError> {
    let m = v.mbu;
    let s = &m.step;
    let impossible = m.impossible();
    let flag = |what: &str, text: String| {
        if impossible.contains(&what) {
            format!("{text} — impossible: check the inputs")
        } else {
            text
        }
    };
    let pct = |x: Option<f64>| x.map(|x| percent(x, 2)).unwrap_or_else(|| "—".into());
    match format {
        Format::Table => {
            let kv = if v.model_name.is_some() {
                format!(
                    "context {} (+1 new token), KV cache {}",
                    v.context, v.kv_precision
                )
            } else {
                "KV cache not counted (give a model preset or config to count it)".into()
            };
            writeln!(
                out,
                "mbu · {} ({} parameters) · batch {}, {kv}, weights {} · {}",
                v.model_name.unwrap_or("--params"),
                human_count(v.params, ""),
                s.batch,
                v.weight_precision,
                v.chip.unwrap_or("--bandwidth")
            )?;
            let mut t = new_table(&["quantity", "value"]);
            let rows: Vec<(&str, String)> = vec![
                (
                    "time per output token",
                    human_duration(m.time_per_token.get()),
                ),
                ("tokens/s (whole batch)", human_count(m.tokens_per_s, "")),
                ("weights", human_bytes(s.weights.get())),
                ("KV cache", human_bytes(s.kv_cache.get())),
                ("bytes per step", human_bytes(s.bytes().get())),
                (
                    "achieved bandwidth",
                    human_bytes_per_s(m.achieved_bandwidth.get()),
                ),
                ("peak bandwidth", human_bytes_per_s(m.peak_bandwidth.get())),
                ("MBU", flag("MBU", percent(m.mbu, 1))),
                ("FLOPs per step", human_flops(s.flops.get())),
                ("achieved FLOP/s", human_flops_per_s(m.achieved_flops.get())),
                (
                    "peak FLOP/s (dense)",
                    m.peak_flops
                        .map(|p| human_flops_per_s(p.get()))
                        .unwrap_or_else(|| "—".into()),
                ),
                ("MFU", flag("MFU", pct(m.mfu))),
                (
                    "floor: bytes ÷ peak bandwidth",
                    human_duration(m.floor.get()),
                ),
            ];
            for (k, val) in rows {
                t.add_row(vec![k.to_string(), val]);
            }
            align_right_from(&mut t, 1);
            writeln!(out, "{t}")?;
            writeln!(
                out,
                "MBU = (weights + KV cache) ÷ time per output token ÷ peak bandwidth \
                 (Databricks, LLM Inference Performance Engineering, 2023)"
            )?;
            for what in &impossible {
                writeln!(
                    out,
                    "warning: {what} above 100 % is impossible: check the inputs (the time per \
                     token, the batch, the model, the bandwidth or the peak)"
                )?;
            }
        }
        Format::Json => {
            write_json(&MbuDoc::of(v), out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "model",
                "parameters",
                "batch",
                "context",
                "time_per_token_s",
                "tokens_per_s",
                "weights_bytes",
                "kv_cache_bytes",
                "bytes_per_step",
                "achieved_bandwidth_bytes_per_s",
                "peak_bandwidth_bytes_per_s",
                "mbu",
                "flops_per_step",
                "achieved_flops_per_s",
                "peak_flops_per_s",
                "mfu",
            ])?;
            let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
            w.write_record([
                v.model_name.unwrap_or("").to_string(),
                v.params.to_string(),
                s.batch.to_string(),
                v.context.to_string(),
                m.time_per_token.get().to_string(),
                m.tokens_per_s.to_string(),
                s.weights.get().to_string(),
                s.kv_cache.get().to_string(),
                s.bytes().get().to_string(),
                m.achieved_bandwidth.get().to_string(),
                m.peak_bandwidth.get().to_string(),
                m.mbu.to_string(),
                s.flops.get().to_string(),
                m.achieved_flops.get().to_string(),
                opt(m.peak_flops.map(|p| p.get())),
                opt(m.mfu),
            ])?;
            w.flush()?;
        }
    }
    Ok(())
}
