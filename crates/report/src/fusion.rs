//! Rendering of fusion: `roofline analyze --fusion PRESET` and `roofline fuse --chain`.

use crate::units::{human_bytes, human_flops, human_seconds};
use crate::{align_right_from, Format, WriteError};
use roofline_core::fusion::{ChainComparison, FusionComparison, FusionSaving, FusionSummary};
use roofline_core::workload::Stage;
use std::io::Write;

fn regime_text(r: FusionSaving) -> &'static str {
    match r {
        FusionSaving::Launches => "launch-bound: the saving is mostly kernel launches (decode at small batch: each kernel is tiny)",
        FusionSaving::Bytes => "bandwidth: the saving is mostly HBM bytes (large memory-bound intermediates, as in prefill)",
        FusionSaving::None => "nothing fused",
    }
}

fn before_after_table(
    before: &FusionSummary,
    after: &FusionSummary,
    per_layer: bool,
) -> comfy_table::Table {
    let mut t = crate::fitted_table(&[
        "",
        "kernels",
        "HBM read",
        "HBM written",
        "time",
        "launch",
        "time + launch",
    ]);
    for (label, s) in [("before", before), ("after", after)] {
        if per_layer {
            t.add_row(vec![
                format!("{label}, per layer"),
                s.kernels_per_layer.to_string(),
                human_bytes(s.cost_per_layer.bytes_read.get()),
                human_bytes(s.cost_per_layer.bytes_written.get()),
                human_seconds(s.time_per_layer.get()),
                String::new(),
                String::new(),
            ]);
        } else {
            t.add_row(vec![
                format!("{label}, forward pass"),
                s.kernels.to_string(),
                human_bytes(s.cost.bytes_read.get()),
                human_bytes(s.cost.bytes_written.get()),
                human_seconds(s.time.get()),
                human_seconds(s.launch_overhead.get()),
                human_seconds(s.time_with_launch().get()),
            ]);
        }
    }
    align_right_from(&mut t, 1);
    t
}

/// Writes the fusion section of one stage as a table.
///
/// # Errors
/// A failed write.
pub fn write_comparison_table(
    stage: Stage,
    c: &FusionComparison,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    writeln!(
        out,
        "\nfusion · {stage} · preset `{}` (eager = every operator its own kernel)",
        c.preset.name()
    )?;
    // The on-chip tile of each fused kernel is a long phrase: `--wide` shows it; by default a
    // tile that does not fit is flagged in the kernel's cell.
    let wide = crate::table_layout().wide;
    let mut header = vec![
        "kernel",
        "rules",
        "FLOPs",
        "HBM bytes",
        "AI (FLOP/B)",
        "bound",
        "time",
    ];
    if wide {
        header.push("tile (on chip)");
    }
    let mut k = crate::fitted_table(&header);
    for (kern, p) in c.plan.kernels.iter().zip(&c.after.points) {
        let misfit = kern.tile.as_ref().is_some_and(|t| !t.fits);
        let mut cells = vec![
            if wide {
                kern.name.clone()
            } else {
                // Spaces around `+` let a long fused name wrap inside its cell.
                format!(
                    "{}{}",
                    kern.name.replace('+', " + "),
                    if misfit { " (tile does not fit)" } else { "" }
                )
            },
            kern.rules
                .iter()
                .map(|r| r.name())
                .collect::<Vec<_>>()
                .join(", "),
            human_flops(kern.cost.flops.get()),
            human_bytes(kern.cost.bytes().get()),
            crate::units::human_intensity(p.intensity.get()),
            p.bound.to_string(),
            human_seconds(p.time.get()),
        ];
        if wide {
            cells.push(
                kern.tile
                    .as_ref()
                    .map(|t| {
                        format!(
                            "{} ({} B{})",
                            t.tile,
                            t.working_set.get(),
                            if t.fits { "" } else { ", does not fit" }
                        )
                    })
                    .unwrap_or_default(),
            );
        }
        k.add_row(cells);
    }
    align_right_from(&mut k, 2);
    writeln!(out, "{k}")?;
    if !wide && c.plan.kernels.iter().any(|k| k.tile.is_some()) {
        writeln!(out, "(`--wide` shows each fused kernel's on-chip tile)")?;
    }
    writeln!(out, "{}", before_after_table(&c.before, &c.after, true))?;
    writeln!(out, "{}", before_after_table(&c.before, &c.after, false))?;
    if c.plan.kernels.iter().any(|k| {
        k.rules
            .contains(&roofline_core::fusion::Rule::FlashAttention)
    }) {
        writeln!(
            out,
            "note: the flash_attention kernel uses the FlashAttention-2 IO model: K and V are re-read once per block of Br queries (Br from shared memory per SM); the operator table's `attention` under --flash-attention counts each K and V read once, the lower bound"
        )?;
    }
    for r in &c.plan.rejected {
        writeln!(
            out,
            "not applied: {} on {}: {}",
            r.rule.name(),
            r.nodes.join("+"),
            r.reason
        )?;
    }
    writeln!(
        out,
        "speedup {:.2}× · launches saved {} · roofline time saved {} · regime: {}",
        c.speedup,
        human_seconds(c.launch_saved.get()),
        human_seconds(c.roofline_saved.get()),
        regime_text(c.regime)
    )?;
    Ok(())
}

/// Writes `roofline fuse --chain`.
///
/// # Errors
/// A failed write.
pub fn write_chain(
    c: &ChainComparison,
    precision_bytes: f64,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Json => {
            crate::doc::write_json(&crate::doc::fuse::FuseDoc::of(c), out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "version",
                "kernels",
                "flops",
                "bytes_read",
                "bytes_written",
                "time_s",
                "launch_overhead_s",
                "time_with_launch_s",
                "feasible",
            ])?;
            for (label, s, ok) in [
                ("separate", &c.separate, true),
                ("fused", &c.fused, c.feasible),
            ] {
                w.write_record([
                    label.to_string(),
                    s.kernels.to_string(),
                    s.cost.flops.get().to_string(),
                    s.cost.bytes_read.get().to_string(),
                    s.cost.bytes_written.get().to_string(),
                    s.time.get().to_string(),
                    s.launch_overhead.get().to_string(),
                    s.time_with_launch().get().to_string(),
                    ok.to_string(),
                ])?;
            }
            w.flush()?;
        }
        Format::Table => {
            writeln!(
                out,
                "chain: {} ({} B per element)",
                c.labels.join(" → "),
                precision_bytes
            )?;
            let mut t = crate::fitted_table(&[
                "version",
                "kernels",
                "FLOPs",
                "HBM read",
                "HBM written",
                "HBM bytes",
                "time",
                "launch",
                "time + launch",
            ]);
            for (label, s) in [
                ("separate kernels", &c.separate),
                ("one fused kernel", &c.fused),
            ] {
                t.add_row(vec![
                    label.to_string(),
                    s.kernels.to_string(),
                    human_flops(s.cost.flops.get()),
                    human_bytes(s.cost.bytes_read.get()),
                    human_bytes(s.cost.bytes_written.get()),
                    human_bytes(s.cost.bytes().get()),
                    human_seconds(s.time.get()),
                    human_seconds(s.launch_overhead.get()),
                    human_seconds(s.time_with_launch().get()),
                ]);
            }
            align_right_from(&mut t, 1);
            writeln!(out, "{t}")?;
            let cap = c
                .tile
                .capacity
                .map(|x| human_bytes(x.get()))
                .unwrap_or_else(|| "unknown".into());
            writeln!(
                out,
                "on chip: {} → working set {} against {} of shared memory per SM: {}",
                c.tile.tile,
                human_bytes(c.tile.working_set.get()),
                cap,
                if c.feasible {
                    "fits: the fusion applies"
                } else {
                    "does NOT fit: the fusion is infeasible on this chip and not applied"
                }
            )?;
            let saved = c.separate.cost.bytes().get() - c.fused.cost.bytes().get();
            writeln!(
                out,
                "{}: {} of HBM traffic ({:.1}%), {} launches; speedup {:.2}× ({})",
                if c.feasible {
                    "saving"
                } else {
                    "saving if it could run (it cannot on this chip)"
                },
                human_bytes(saved),
                saved / c.separate.cost.bytes().get() * 100.0,
                c.separate.kernels - c.fused.kernels,
                c.speedup,
                regime_text(c.regime)
            )?;
        }
    }
    Ok(())
}

/// Writes `roofline analyze --fusion`: the analysis, then per stage the fusion comparison. JSON
/// adds a `fusion` object to each stage; CSV writes one row per fused kernel instead of per
/// operator (columns `stage, preset, kernel, rules, flops, bytes_read, bytes_written, time_s`).
///
/// # Errors
/// A failed write.
pub fn write_analysis_with_fusion(
    report: &crate::analysis::AnalyzeReport<'_>,
    fusion: &[FusionComparison],
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => {
            crate::analysis::write_analysis(report, Format::Table, out)?;
            for (s, c) in report.stages.iter().zip(fusion) {
                write_comparison_table(s.workload.stage, c, out)?;
            }
        }
        Format::Json => {
            let doc = crate::doc::analyze::AnalyzeDoc::with_fusion(report, fusion);
            crate::doc::write_json(&doc, out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "stage",
                "preset",
                "kernel",
                "rules",
                "flops",
                "bytes_read",
                "bytes_written",
                "time_s",
            ])?;
            for (s, c) in report.stages.iter().zip(fusion) {
                for (k, p) in c.plan.kernels.iter().zip(&c.after.points) {
                    w.write_record([
                        s.workload.stage.to_string(),
                        c.preset.name().to_string(),
                        k.name.clone(),
                        k.rules
                            .iter()
                            .map(|r| r.name())
                            .collect::<Vec<_>>()
                            .join(";"),
                        k.cost.flops.get().to_string(),
                        k.cost.bytes_read.get().to_string(),
                        k.cost.bytes_written.get().to_string(),
                        p.time.get().to_string(),
                    ])?;
                }
            }
            w.flush()?;
        }
    }
    Ok(())
}
