//! Rendering of `roofline analyze`: the serving headline, then per stage the operator table,
//! totals and memory.

use crate::units::{human_bytes, human_flops, human_flops_per_s, human_intensity, human_seconds};
use crate::{align_right_from, Format, WriteError};
use roofline_core::analysis::StageAnalysis;
use roofline_core::device::Device;
use roofline_core::model::Transformer;
use std::io::Write;

/// Everything `roofline analyze` reports: a model on a chip, one or more stages.
#[derive(Debug, Clone, Copy)]
pub struct AnalyzeReport<'a> {
    /// The model.
    pub model: &'a Transformer,
    /// The chip.
    pub device: &'a Device,
    /// One analysis per stage, in order.
    pub stages: &'a [StageAnalysis],
}

/// Writes `report` in `format` to `out`.
///
/// # Errors
/// A failed write.
pub fn write_analysis(
    report: &AnalyzeReport<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => write_table(report, out),
        Format::Json => crate::doc::write_json(&crate::doc::analyze::AnalyzeDoc::of(report), out),
        Format::Csv => write_csv(report, out),
    }
}

/// Writes `report` with "what to change" (`analyze --advice`): the table output followed by
/// each stage's ranked changes, or the JSON document with its `advice` member; CSV keeps the
/// operator rows alone. Commands are built from `base`, the current command line.
///
/// # Errors
/// A failed write.
pub fn write_analysis_with_advice(
    report: &AnalyzeReport<'_>,
    advice: &[roofline_core::serve::advice::StageAdvice],
    base: &[crate::advice::Arg],
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => {
            write_table(report, out)?;
            crate::advice::write_advice_table(advice, base, out)
        }
        Format::Json => {
            let doc = crate::doc::analyze::AnalyzeDoc::with_advice(report, advice, base);
            crate::doc::write_json(&doc, out)
        }
        Format::Csv => write_csv(report, out),
    }
}

/// The workload line under each stage's heading.
pub fn workload_line(s: &StageAnalysis) -> String {
    let w = &s.workload;
    let p = w.precisions;
    let lengths = match w.stage {
        roofline_core::workload::Stage::Prefill => format!(
            "sequence length {}{}, logits on {}",
            w.seq_len,
            if w.cached > 0 {
                format!(" after {} cached tokens", w.cached)
            } else {
                String::new()
            },
            match w.logits {
                roofline_core::workload::Logits::All => "every position",
                _ => "the last position",
            }
        ),
        roofline_core::workload::Stage::Decode => {
            format!("context {} (+1 new token)", w.context)
        }
        _ => format!("sequence length {}, context {}", w.seq_len, w.context),
    };
    let scales = if p.weight_scale_bytes > 0.0 {
        format!(" (+{:.4} B/weight of group scales)", p.weight_scale_bytes)
    } else {
        String::new()
    };
    let gemm = match p.gemm_act {
        Some(g) => format!(", GEMM inputs {g} (W8A8)"),
        None => String::new(),
    };
    format!(
        "batch {}, {lengths}, weights {}{scales}, activations {}{gemm}, KV cache {}, FlashAttention {}",
        w.batch,
        p.weight,
        p.act,
        p.kv,
        if w.flash_attention { "on" } else { "off" }
    )
}

/// The terms of a footprint and their sum: `weights … + KV cache … + activations … (peak at
/// `node`) + runtime reserve … = …`.
pub(crate) fn memory_terms(m: &roofline_core::memory::MemoryFootprint) -> String {
    format!(
        "weights {} + KV cache {} + activations {} (peak at `{}`) + runtime reserve {} = {}",
        human_bytes(m.weights.get()),
        human_bytes(m.kv_cache.get()),
        human_bytes(m.activations.get()),
        m.activations_at,
        human_bytes(m.reserve.get()),
        human_bytes(m.total().get()),
    )
}

fn write_table(r: &AnalyzeReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let bw = r.device.bandwidth().map(|b| b.get()).unwrap_or(f64::NAN);
    writeln!(
        out,
        "{}",
        crate::headline::headline_line(&roofline_core::serve::headline::of_analyses(r.stages))
    )?;
    for s in r.stages {
        writeln!(out)?;
        writeln!(
            out,
            "{} · {} ({:.2}B parameters) on {} ({}) · {}",
            s.workload.stage,
            r.model.name,
            r.model.parameters() as f64 / 1e9,
            r.device.name,
            r.device.id,
            workload_line(s)
        )?;
        // The ridge and the per-row launch are the chip's, not the operator's: by default a
        // line under the table gives them; `--wide` keeps them as columns.
        let wide = crate::table_layout().wide;
        let mut header = vec!["operator", "count", "FLOPs", "bytes", "AI (FLOP/B)"];
        if wide {
            header.push("ridge");
        }
        header.extend(["bound", "attainable", "time"]);
        if wide {
            header.push("launch");
        }
        header.push("share");
        let mut t = crate::fitted_table(&header);
        let total_time = s.totals.time.get();
        let mut ridges: Vec<(f64, &str)> = Vec::new();
        for row in &s.rows {
            let p = row.point();
            let share = p.time.get() * row.count as f64 / total_time * 100.0;
            if !ridges.iter().any(|(r, _)| *r == p.ridge.get()) {
                ridges.push((p.ridge.get(), row.name));
            }
            let mut cells = vec![
                row.name.to_string(),
                row.count.to_string(),
                human_flops(row.cost.flops.get()),
                human_bytes(row.cost.bytes().get()),
                human_intensity(p.intensity.get()),
            ];
            if wide {
                cells.push(format!("{:.1}", p.ridge.get()));
            }
            cells.extend([
                p.bound.to_string(),
                human_flops_per_s(p.attainable.get()),
                human_seconds(p.time.get()),
            ]);
            if wide {
                cells.push(human_seconds(row.launch_overhead.get()));
            }
            cells.push(format!("{share:.1}%"));
            t.add_row(cells);
        }
        align_right_from(&mut t, 1);
        writeln!(out, "{t}")?;
        if !wide && !ridges.is_empty() {
            let list: Vec<String> = ridges
                .iter()
                .map(|(r, first)| format!("{r:.1} FLOP/B (from {first})"))
                .collect();
            writeln!(
                out,
                "ridge points: {}; `--wide` shows each row's ridge and launch",
                list.join(", ")
            )?;
        }
        let tot = &s.totals;
        writeln!(
            out,
            "per row: one execution; count = executions per forward pass. bandwidth {}, launch overhead {} {}",
            crate::units::human_bytes_per_s(bw),
            match r.device.launch_model {
                roofline_core::device::LaunchModel::PerKernel => "per kernel",
                roofline_core::device::LaunchModel::PerProgram => "once per step (one compiled program)",
            },
            human_seconds(r.device.launch_overhead.value.get()),
        )?;
        writeln!(
            out,
            "total: {} · {} ({} read, {} written) · AI {} FLOP/B · bound {} + launch and host {} ({} kernels) = {}",
            human_flops(tot.cost.flops.get()),
            human_bytes(tot.cost.bytes().get()),
            human_bytes(tot.cost.bytes_read.get()),
            human_bytes(tot.cost.bytes_written.get()),
            human_intensity(tot.cost.intensity().get()),
            human_seconds(tot.time.get()),
            human_seconds(tot.launch_overhead.get()),
            tot.kernels,
            human_seconds(tot.time_with_launch().get()),
        )?;
        let m = &s.memory;
        let cap = r
            .device
            .capacity()
            .map(|c| format!(" of {} on the chip", human_bytes(c.get())))
            .unwrap_or_default();
        writeln!(out, "memory: {}{cap}", memory_terms(m))?;
        for w in &s.warnings {
            writeln!(out, "warning: {w}")?;
        }
    }
    Ok(())
}

fn write_csv(r: &AnalyzeReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "model",
        "hardware",
        "stage",
        "batch",
        "seq_len",
        "context",
        "name",
        "kind",
        "count",
        "flops",
        "bytes_read",
        "bytes_written",
        "arithmetic_intensity",
        "ridge_point",
        "bound",
        "attainable_flops_per_s",
        "time_s",
        "launch_overhead_s",
    ])?;
    for s in r.stages {
        let wl = &s.workload;
        for row in &s.rows {
            let head = [
                r.model.name.clone(),
                r.device.id.clone(),
                wl.stage.to_string(),
                wl.batch.to_string(),
                wl.seq_len.to_string(),
                wl.context.to_string(),
                row.name.to_string(),
                row.kind.to_string(),
                row.count.to_string(),
            ];
            let fields = crate::op::roofline_csv_fields(row);
            w.write_record(
                head.into_iter()
                    .chain(fields)
                    .chain([row.launch_overhead.get().to_string()]),
            )?;
        }
    }
    w.flush()?;
    Ok(())
}
