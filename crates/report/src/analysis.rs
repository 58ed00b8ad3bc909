//! Rendering of `roofline analyze`: per stage, the operator table, totals and memory.

use crate::units::{human_bytes, human_flops, human_flops_per_s, human_intensity, human_seconds};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::analysis::{OpRow, StageAnalysis};
use roofline_core::device::Device;
use roofline_core::model::Transformer;
use roofline_core::ops::Compute;
use roofline_core::precision::Precision;
use serde_json::{json, Value};
use std::io::Write;

/// Version of the JSON schema in `docs/json-schema.md`; raised on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

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
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &to_json(report))?;
            writeln!(out)?;
            Ok(())
        }
        Format::Csv => write_csv(report, out),
    }
}

fn compute_name(c: Compute) -> String {
    match c {
        Compute::Matrix(p) => p.name().to_string(),
        Compute::Vector => "fp32 vector".to_string(),
    }
}

/// The workload line under each stage's heading.
pub fn workload_line(s: &StageAnalysis) -> String {
    let w = &s.workload;
    let p = w.precisions;
    let lengths = match w.stage {
        roofline_core::workload::Stage::Prefill => format!("sequence length {}", w.seq_len),
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

fn write_table(r: &AnalyzeReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let bw = r.device.bandwidth().map(|b| b.get()).unwrap_or(f64::NAN);
    for (i, s) in r.stages.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
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
        let mut t = new_table(&[
            "operator",
            "count",
            "FLOPs",
            "bytes",
            "AI (FLOP/B)",
            "ridge",
            "bound",
            "attainable",
            "time",
            "launch",
            "share",
        ]);
        let total_time = s.totals.time.get();
        for row in &s.rows {
            let p = row.point();
            let share = p.time.get() * row.count as f64 / total_time * 100.0;
            t.add_row(vec![
                row.name.to_string(),
                row.count.to_string(),
                human_flops(row.cost.flops.get()),
                human_bytes(row.cost.bytes().get()),
                human_intensity(p.intensity.get()),
                format!("{:.1}", p.ridge.get()),
                p.bound.to_string(),
                human_flops_per_s(p.attainable.get()),
                human_seconds(p.time.get()),
                human_seconds(row.launch_overhead.get()),
                format!("{share:.1}%"),
            ]);
        }
        align_right_from(&mut t, 1);
        writeln!(out, "{t}")?;
        let tot = &s.totals;
        writeln!(
            out,
            "per row: one execution; count = executions per forward pass. bandwidth {}, launch overhead per kernel {}",
            crate::units::human_bytes_per_s(bw),
            human_seconds(r.device.launch_overhead.value.get()),
        )?;
        writeln!(
            out,
            "total: {} · {} ({} read, {} written) · AI {} FLOP/B · time {} + launch {} ({} kernels) = {}",
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
        writeln!(
            out,
            "memory: weights {} + KV cache {} + activations {} (peak at `{}`) + runtime reserve {} = {}{cap}",
            human_bytes(m.weights.get()),
            human_bytes(m.kv_cache.get()),
            human_bytes(m.activations.get()),
            m.activations_at,
            human_bytes(m.reserve.get()),
            human_bytes(m.total().get()),
        )?;
        for w in &s.warnings {
            writeln!(out, "warning: {w}")?;
        }
    }
    Ok(())
}

fn op_json(row: &OpRow) -> Value {
    let p = row.point();
    json!({
        "name": row.name,
        "role": row.role,
        "kind": row.kind,
        "span": row.span,
        "count": row.count,
        "compute": compute_name(row.compute),
        "flops": row.cost.flops.get(),
        "bytes_read": row.cost.bytes_read.get(),
        "bytes_written": row.cost.bytes_written.get(),
        "bytes": row.cost.bytes().get(),
        "arithmetic_intensity": p.intensity.get(),
        "ridge_point": p.ridge.get(),
        "bound": p.bound,
        "peak_flops_per_s": row.peak().get(),
        "attainable_flops_per_s": p.attainable.get(),
        "compute_time_s": p.compute_time.get(),
        "memory_time_s": p.memory_time.get(),
        "time_s": p.time.get(),
        "launch_overhead_s": row.launch_overhead.get(),
    })
}

/// The model as the JSON schema gives it.
pub fn model_json(m: &Transformer) -> Value {
    json!({
        "name": m.name,
        "architecture": m.architecture,
        "parameters": m.parameters(),
        "active_parameters": m.active_parameters(),
        "kv_cache_elements_per_token_per_layer": m.kv_elements_per_token(),
        "hidden_size": m.hidden,
        "num_hidden_layers": m.layers,
        "num_attention_heads": m.heads,
        "num_key_value_heads": m.kv_heads,
        "head_dim": m.head_dim,
        "intermediate_size": m.intermediate,
        "vocab_size": m.vocab,
        "tie_word_embeddings": m.tie_embeddings,
    })
}

/// The chip as the JSON schema gives it: peaks, bandwidth, ridge points, launch overhead.
pub fn device_json(d: &Device) -> Value {
    let bw = d.bandwidth().ok().map(|b| b.get());
    let peaks: serde_json::Map<String, Value> = d
        .peaks
        .iter()
        .map(|(p, c)| (p.name().to_string(), json!(c.value.get())))
        .collect();
    let ridges: serde_json::Map<String, Value> = Precision::ALL
        .iter()
        .filter_map(|p| {
            d.ridge(*p)
                .ok()
                .map(|r| (p.name().to_string(), json!(r.get())))
        })
        .collect();
    json!({
        "id": d.id,
        "name": d.name,
        "vendor": d.vendor,
        "peak_flops_per_s": peaks,
        "bandwidth_bytes_per_s": bw,
        "capacity_bytes": d.capacity().map(|c| c.get()),
        "ridge_point_flop_per_byte": ridges,
        "launch_overhead_s": d.launch_overhead.value.get(),
    })
}

/// The whole report as the JSON schema of `docs/json-schema.md`.
pub fn to_json(r: &AnalyzeReport<'_>) -> Value {
    let stages: Vec<Value> = r
        .stages
        .iter()
        .map(|s| {
            let w = &s.workload;
            json!({
                "stage": w.stage,
                "workload": {
                    "batch": w.batch,
                    "seq_len": w.seq_len,
                    "context": w.context,
                    "tokens": w.tokens(),
                    "kv_len": w.kv_len(),
                    "weight_precision": w.precisions.weight,
                    "activation_precision": w.precisions.act,
                    "kv_precision": w.precisions.kv,
                    "flash_attention": w.flash_attention,
                },
                "ops": s.rows.iter().map(op_json).collect::<Vec<_>>(),
                "totals": {
                    "flops": s.totals.cost.flops.get(),
                    "bytes_read": s.totals.cost.bytes_read.get(),
                    "bytes_written": s.totals.cost.bytes_written.get(),
                    "bytes": s.totals.cost.bytes().get(),
                    "arithmetic_intensity": s.totals.cost.intensity().get(),
                    "time_s": s.totals.time.get(),
                    "kernels": s.totals.kernels,
                    "launch_overhead_s": s.totals.launch_overhead.get(),
                    "time_with_launch_s": s.totals.time_with_launch().get(),
                },
                "memory": {
                    "weights_bytes": s.memory.weights.get(),
                    "kv_cache_bytes": s.memory.kv_cache.get(),
                    "activation_bytes": s.memory.activations.get(),
                    "activation_peak_at": s.memory.activations_at,
                    "reserve_bytes": s.memory.reserve.get(),
                    "total_bytes": s.memory.total().get(),
                    "capacity_bytes": s.memory.capacity.map(|c| c.get()),
                    "fits_on_chip": s.memory.fits(),
                },
                "warnings": s.warnings,
            })
        })
        .collect();
    json!({
        "schema_version": SCHEMA_VERSION,
        "model": model_json(r.model),
        "hardware": device_json(r.device),
        "stages": stages,
    })
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
            let p = row.point();
            w.write_record([
                r.model.name.clone(),
                r.device.id.clone(),
                wl.stage.to_string(),
                wl.batch.to_string(),
                wl.seq_len.to_string(),
                wl.context.to_string(),
                row.name.to_string(),
                row.kind.to_string(),
                row.count.to_string(),
                row.cost.flops.get().to_string(),
                row.cost.bytes_read.get().to_string(),
                row.cost.bytes_written.get().to_string(),
                p.intensity.get().to_string(),
                p.ridge.get().to_string(),
                p.bound.to_string(),
                p.attainable.get().to_string(),
                p.time.get().to_string(),
                row.launch_overhead.get().to_string(),
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}
