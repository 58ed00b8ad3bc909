//! Rendering of `roofline sweep`: per group (chip, precision, stage, length) the step at every
//! batch, and each operator's bound at every batch with its crossover batch.
//!
//! The table and JSON are grouped; the CSV is flat, one row per (point, operator), with the
//! step's columns repeated so that it loads as one data frame.

use crate::units::{
    human_bytes, human_bytes_per_s, human_flops_per_s, human_intensity, human_seconds,
};
use crate::{align_right_from, Format, WriteError};
use roofline_core::device::Device;
use roofline_core::model::Transformer;
use roofline_core::roofline::Bound;
use roofline_core::sweep::{Crossover, Sweep, SweepGroup, SweepPoint};
use roofline_core::workload::Stage;
use std::io::Write;

/// A sweep with what it was run on.
#[derive(Debug, Clone, Copy)]
pub struct SweepView<'a> {
    /// The model.
    pub model: &'a Transformer,
    /// The chips, as indexed by [`SweepGroup::device`].
    pub devices: &'a [Device],
    /// The results.
    pub sweep: &'a Sweep,
    /// Whether attention was fused.
    pub flash_attention: bool,
}

/// The crossover as two table cells, exact and smallest batch: `345.153` and `346`;
/// `(searched)` and the batch for an operator whose intensity is not rational in the batch;
/// `never (AI → 0.99)` and `never`.
pub fn crossover_text(c: &Crossover) -> (String, String) {
    match *c {
        Crossover::At { exact, smallest } if exact <= 1.0 => {
            (format!("{exact:.3}"), format!("{smallest} (at once)"))
        }
        Crossover::At { exact, smallest } => (format!("{exact:.3}"), smallest.to_string()),
        Crossover::Searched { smallest } => ("(searched)".into(), smallest.to_string()),
        Crossover::Never { limit } => (
            format!("never (AI → {})", human_intensity(limit.get())),
            "never".into(),
        ),
    }
}

fn length_text(g: &SweepGroup) -> String {
    match g.stage {
        Stage::Prefill => format!(
            "prefill, sequence length {}, logits on {}",
            g.seq_len,
            match g.logits {
                roofline_core::workload::Logits::All => "every position",
                _ => "the last position",
            }
        ),
        Stage::Decode => format!("decode, context {} (+1 new token)", g.context),
        other => format!(
            "{other}, sequence length {}, context {}",
            g.seq_len, g.context
        ),
    }
}

fn fits_text(p: &SweepPoint) -> &'static str {
    match p.fits() {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "?",
    }
}

/// Writes `v` in `format` to `out`.
///
/// # Errors
/// A failed write.
pub fn write_sweep(
    v: &SweepView<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => write_table(v, out),
        Format::Json => crate::doc::write_json(&crate::doc::sweep::SweepDoc::of(v), out),
        Format::Csv => write_csv(v, out),
    }
}

fn write_table(v: &SweepView<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let s = v.sweep;
    for (gi, g) in s.groups.iter().enumerate() {
        if gi > 0 {
            writeln!(out)?;
        }
        let d = &v.devices[g.device];
        let p = g.precisions;
        writeln!(
            out,
            "sweep · {} on {} ({}) · {} · weights {}, activations {}, KV cache {}, FlashAttention {} · {} dense, {}, ridge {:.1} FLOP/B · step: the roofline bound, launches not in it",
            v.model.name,
            d.name,
            d.id,
            length_text(g),
            p.weight,
            p.act,
            p.kv,
            if v.flash_attention { "on" } else { "off" },
            human_flops_per_s(g.peak.get()),
            human_bytes_per_s(d.bandwidth().map(|b| b.get()).unwrap_or(f64::NAN)),
            g.ridge.get(),
        )?;
        let cap = g
            .capacity
            .map(|c| format!("fits {}", human_bytes(c.get())))
            .unwrap_or_else(|| "fits".into());
        let mut t = crate::fitted_table(&[
            "batch",
            "step (bound)",
            "tokens/s",
            "time/token",
            "memory",
            &cap,
            "memory-bound ops",
        ]);
        let points = s.group_points(gi);
        for (bi, pt) in points.iter().enumerate() {
            let ops = s.ops_at(gi * s.batches.len() + bi);
            let mem = ops.iter().filter(|o| o.bound == Bound::Memory).count();
            t.add_row(vec![
                pt.batch.to_string(),
                human_seconds(pt.step_time().get()),
                format!("{:.1}", pt.tokens_per_s()),
                human_seconds(pt.time_per_token().get()),
                human_bytes(pt.memory.total().get()),
                fits_text(pt).to_string(),
                format!("{mem} of {}", ops.len()),
            ]);
        }
        align_right_from(&mut t, 0);
        writeln!(out, "{t}")?;
        let unfit: Vec<String> = points
            .iter()
            .filter(|p| p.fits() == Some(false))
            .map(|p| p.batch.to_string())
            .collect();
        if !unfit.is_empty() {
            writeln!(
                out,
                "batch {} does not fit: weights + KV cache + activations + runtime reserve exceed the chip's memory",
                unfit.join(", ")
            )?;
        }

        // As many batch columns as the width holds (about 12 characters each beside the
        // operator, ridge and crossover columns): the first, the last and evenly spaced ones
        // between; every one with `--wide` or in CSV/JSON.
        let name_width = g.nodes.iter().map(|n| n.name.len()).max().unwrap_or(8);
        let shown = shown_columns(
            s.batches.len(),
            crate::table_layout().max_width,
            name_width + 48,
            12,
        );
        let mut header: Vec<String> = vec!["operator".into(), "ridge".into()];
        header.extend(shown.iter().map(|&bi| format!("b={}", s.batches[bi])));
        header.push("crossover (exact)".into());
        header.push("smallest batch".into());
        let header_refs: Vec<&str> = header.iter().map(|h| h.as_str()).collect();
        let mut t = crate::fitted_table(&header_refs);
        for (k, node) in g.nodes.iter().enumerate() {
            let mut row = vec![
                node.name.to_string(),
                format!("{:.1}", g.node_ridges[k].get()),
            ];
            for &bi in &shown {
                let o = s.ops_at(gi * s.batches.len() + bi)[k];
                let b = if o.bound == Bound::Memory {
                    "mem"
                } else {
                    "COMP"
                };
                row.push(format!("{} {b}", human_intensity(o.intensity.get())));
            }
            let (exact, smallest) = crossover_text(&g.crossovers[k]);
            row.push(exact);
            row.push(smallest);
            t.add_row(row);
        }
        align_right_from(&mut t, 1);
        writeln!(out, "{t}")?;
        if shown.len() < s.batches.len() {
            writeln!(
                out,
                "{} of the {} batches shown; `--wide` or `--format csv` for every one",
                shown.len(),
                s.batches.len()
            )?;
        }
    }
    writeln!(
        out,
        "cells: arithmetic intensity (FLOP/B) and bound; crossover: the batch at which the \
         intensity reaches the ridge, solved in closed form (searched over whole batches where the \
         intensity is not rational in the batch: expert GEMMs); never: it does not grow with the \
         batch enough to reach it"
    )?;
    Ok(())
}

fn write_csv(v: &SweepView<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let s = v.sweep;
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "model",
        "hardware",
        "stage",
        "seq_len",
        "context",
        "weight_precision",
        "activation_precision",
        "kv_precision",
        "batch",
        "step_time_s",
        "tokens_per_s",
        "time_per_token_s",
        "memory_bytes",
        "fits",
        "operator",
        "arithmetic_intensity",
        "ridge_point",
        "bound",
        "crossover_batch",
        "crossover_smallest_batch",
    ])?;
    for (gi, g) in s.groups.iter().enumerate() {
        let d = &v.devices[g.device];
        for (bi, p) in s.group_points(gi).iter().enumerate() {
            let ops = s.ops_at(gi * s.batches.len() + bi);
            for (k, (n, o)) in g.nodes.iter().zip(ops).enumerate() {
                let (exact, smallest) = match g.crossovers[k] {
                    Crossover::At { exact, smallest } => (exact.to_string(), smallest.to_string()),
                    Crossover::Searched { smallest } => (String::new(), smallest.to_string()),
                    Crossover::Never { .. } => ("never".into(), "never".into()),
                };
                w.write_record([
                    v.model.name.clone(),
                    d.id.clone(),
                    g.stage.to_string(),
                    g.seq_len.to_string(),
                    g.context.to_string(),
                    g.precisions.weight.to_string(),
                    g.precisions.act.to_string(),
                    g.precisions.kv.to_string(),
                    p.batch.to_string(),
                    p.step_time().get().to_string(),
                    p.tokens_per_s().to_string(),
                    p.time_per_token().get().to_string(),
                    p.memory.total().get().to_string(),
                    p.fits().map(|f| f.to_string()).unwrap_or_default(),
                    n.name.to_string(),
                    o.intensity.get().to_string(),
                    g.node_ridges[k].get().to_string(),
                    o.bound.to_string(),
                    exact,
                    smallest,
                ])?;
            }
        }
    }
    w.flush()?;
    Ok(())
}

/// The indices of `n` columns to show when a table may be `max_width` wide, `fixed` of it taken
/// by the other columns and each of these taking `each`: all of them when they fit (or there is
/// no limit), else the first, the last and evenly spaced ones between (at least two).
pub(crate) fn shown_columns(
    n: usize,
    max_width: Option<u16>,
    fixed: usize,
    each: usize,
) -> Vec<usize> {
    let fit = match max_width {
        Some(w) => (usize::from(w).saturating_sub(fixed) / each.max(1)).max(2),
        None => n,
    };
    if n <= fit {
        return (0..n).collect();
    }
    let mut v: Vec<usize> = (0..fit)
        .map(|i| ((i * (n - 1)) as f64 / (fit - 1) as f64).round() as usize)
        .collect();
    v.dedup();
    v
}

#[cfg(test)]
mod shown_tests {
    use super::shown_columns;

    #[test]
    fn every_column_when_they_fit_else_first_last_and_between() {
        // 120 columns, 70 taken, 12 each: 4 fit.
        assert_eq!(shown_columns(3, Some(120), 70, 12), vec![0, 1, 2]);
        assert_eq!(shown_columns(9, Some(120), 70, 12), vec![0, 3, 5, 8]);
        assert_eq!(shown_columns(9, None, 70, 12), (0..9).collect::<Vec<_>>());
        // Never fewer than two.
        assert_eq!(shown_columns(9, Some(40), 70, 12), vec![0, 8]);
    }
}
