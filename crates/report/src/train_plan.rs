//! Rendering of `roofline plan --stage train`: the best training layouts of a search
//! ([`roofline_core::train::search_training`]), each with its estimated and bound step time,
//! throughput, MFU and memory per device, and the MFU waterfall of the best few.

use crate::doc::train_plan::{TrainPlanDoc, TrainPlanSearchDoc};
use crate::units::{human_bytes, human_seconds};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::comm::System;
use roofline_core::model::Transformer;
use roofline_core::train::TrainingPlanSearch;
use std::io::Write;

/// Everything `roofline plan --stage train` reports.
#[derive(Debug, Clone, Copy)]
pub struct TrainPlanReport<'a> {
    /// The model.
    pub model: &'a Transformer,
    /// The system.
    pub system: &'a System,
    /// The search.
    pub search: &'a TrainingPlanSearch,
    /// How many of the best plans get their waterfall printed (the table format).
    pub waterfalls: usize,
}

/// Writes `r` in `format` to `out` (CSV: one row a plan, the waterfall left out).
///
/// # Errors
/// A failed write.
pub fn write_train_plan(
    r: &TrainPlanReport<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    let s = r.search;
    let plans: Vec<TrainPlanDoc> = s.best.iter().map(TrainPlanDoc::of).collect();
    match format {
        Format::Json => {
            let doc = TrainPlanSearchDoc::of(s, &r.model.name, &r.system.id, &r.system.chip.id);
            crate::doc::write_json(&doc, out)
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "tp",
                "pp",
                "dp",
                "cp",
                "ep",
                "sequence_parallel",
                "micro_batch",
                "recompute",
                "zero",
                "schedule",
                "step_time_s",
                "step_time_bound_s",
                "tokens_per_s",
                "mfu",
                "memory_per_device_bytes",
            ])?;
            for p in &plans {
                w.write_record([
                    p.tp.to_string(),
                    p.pp.to_string(),
                    p.dp.to_string(),
                    p.cp.to_string(),
                    p.ep.to_string(),
                    p.sequence_parallel.to_string(),
                    p.micro_batch.to_string(),
                    p.recompute.to_string(),
                    p.zero.to_string(),
                    p.schedule.clone(),
                    p.step_time_s.to_string(),
                    p.step_time_bound_s.to_string(),
                    p.tokens_per_s.to_string(),
                    p.mfu.to_string(),
                    p.memory_per_device_bytes.to_string(),
                ])?;
            }
            w.flush()?;
            Ok(())
        }
        Format::Table => {
            writeln!(
                out,
                "training plans for {} on {} ({} × {}) · {} sequences of {} tokens a step{} · {} candidates evaluated, {} fit in memory, {} full timelines run",
                r.model.name,
                r.system.name,
                s.devices,
                r.system.chip.id,
                s.global_batch,
                s.seq_len,
                s.best
                    .first()
                    .map(|p| format!(
                        " · {}, FlashAttention {}",
                        p.job.precisions.act,
                        if p.job.flash_attention { "on" } else { "off" }
                    ))
                    .unwrap_or_default(),
                s.evaluated,
                s.fit,
                s.simulated,
            )?;
            let mut t = new_table(&[
                "#",
                "tp",
                "pp",
                "dp",
                "cp",
                "ep",
                "sp",
                "micro-batch",
                "recompute",
                "zero",
                "schedule",
                "step (estimate)",
                "step (bound)",
                "tokens/s",
                "MFU",
                "memory/GPU",
            ]);
            for (i, p) in plans.iter().enumerate() {
                t.add_row(vec![
                    (i + 1).to_string(),
                    p.tp.to_string(),
                    p.pp.to_string(),
                    p.dp.to_string(),
                    p.cp.to_string(),
                    p.ep.to_string(),
                    if p.sequence_parallel { "yes" } else { "no" }.to_string(),
                    p.micro_batch.to_string(),
                    p.recompute.to_string(),
                    p.zero.to_string(),
                    p.schedule.clone(),
                    human_seconds(p.step_time_s),
                    human_seconds(p.step_time_bound_s),
                    format!("{:.0}", p.tokens_per_s),
                    format!("{:.1}%", p.mfu * 100.0),
                    human_bytes(p.memory_per_device_bytes),
                ]);
            }
            align_right_from(&mut t, 11);
            writeln!(out, "{t}")?;
            for (i, (plan, doc)) in s.best.iter().zip(&plans).take(r.waterfalls).enumerate() {
                let bars: Vec<String> = plan
                    .estimate
                    .waterfall
                    .bars
                    .iter()
                    .map(|b| format!("{} {:.1}%", b.reason.id(), b.share * 100.0))
                    .collect();
                writeln!(
                    out,
                    "\n#{} waterfall (MFU {:.1}%): {}",
                    i + 1,
                    doc.mfu * 100.0,
                    bars.join(", ")
                )?;
            }
            let k = s.skipped;
            writeln!(
                out,
                "\nskipped: {} degree tuples the model or sequence does not take, {} whose data-parallel × expert-parallel degree does not divide the batch, {} candidates that do not fit in memory, {} needing a missing link",
                k.layout, k.batch, k.memory, k.link
            )?;
            writeln!(
                out,
                "estimates at the chip's efficiency (roofline_core::pricing::Efficiency), bounds at the roofs; ranked by the estimated step"
            )?;
            Ok(())
        }
    }
}
