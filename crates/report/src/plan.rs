//! Rendering of `roofline plan`: the layouts ranked by step time and by tokens per second per
//! device, and what holds each one back against the best.

use crate::doc::analyze::WorkloadDoc;
use crate::doc::plan::{PlanDoc, PlanSearchDoc};
use crate::doc::SchemaVersion;
use crate::units::{human_bytes, human_seconds};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::comm::System;
use roofline_core::model::Transformer;
use roofline_core::parallel::{holdback, Holdback, Plan, PlanSearch};
use roofline_core::workload::Workload;
use std::io::Write;

/// Everything `roofline plan` reports.
#[derive(Debug, Clone, Copy)]
pub struct PlanReport<'a> {
    /// The model.
    pub model: &'a Transformer,
    /// The system.
    pub system: &'a System,
    /// The workload one replica serves.
    pub workload: &'a Workload,
    /// The search.
    pub search: &'a PlanSearch,
    /// Plans to print per ranking.
    pub top: usize,
}

/// A layout as `TP 4 × PP 1 × EP 2`, with `× CP 2` for context parallelism and `+SP` for
/// sequence parallelism.
pub fn layout_name(p: &Plan) -> String {
    let l = p.layout;
    let mut s = format!("TP {} × PP {} × EP {}", l.tp, l.pp, l.ep);
    if l.cp > 1 {
        s.push_str(&format!(" × CP {}", l.cp));
    }
    if l.sequence_parallel {
        s.push_str(" +SP");
    }
    s
}

/// A holdback in words.
pub fn holdback_text(h: &Holdback) -> String {
    match h {
        Holdback::Devices {
            devices,
            best_devices,
            step_ratio,
        } => format!(
            "devices: a {:.2}× faster step on {devices} devices against {best_devices}: less per device",
            1.0 / step_ratio
        ),
        Holdback::Memory { needed, capacity } => format!(
            "memory: needs {} per device of {}",
            human_bytes(needed.get()),
            human_bytes(capacity.get())
        ),
        Holdback::Pipeline {
            stages,
            exposed_share,
        } => format!(
            "pipeline: a step crosses its {stages} stages one after another ({:.0}% exposed communication)",
            exposed_share * 100.0
        ),
        Holdback::Communication {
            exposed_share,
            extra,
        } => format!(
            "communication: {:.0}% of its step is exposed collectives, {} more than the best",
            exposed_share * 100.0,
            human_seconds(extra.get())
        ),
        Holdback::Launch { extra } => format!(
            "launches: {} more kernel-launch overhead than the best (more kernels per device)",
            human_seconds(extra.get())
        ),
        Holdback::Compute { extra } => format!(
            "compute: {} more on the compute stream than the best (less of the work split per device)",
            human_seconds(extra.get())
        ),
    }
}

/// Writes `r` in `format` to `out`.
///
/// # Errors
/// A failed write.
pub fn write_plan(
    r: &PlanReport<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    let s = r.search;
    let rank = |order: &[usize]| -> Vec<&Plan> {
        order.iter().take(r.top).map(|&i| &s.plans[i]).collect()
    };
    let fastest = s.by_latency.first().map(|&i| &s.plans[i]);
    let densest = s.by_throughput.first().map(|&i| &s.plans[i]);
    let not_fitting: Vec<&Plan> = s.plans.iter().filter(|p| !p.fits()).collect();
    match format {
        Format::Json => {
            let doc = PlanSearchDoc {
                schema_version: SchemaVersion,
                model: r.model.name.clone(),
                system: r.system.id.clone(),
                chip: r.system.chip.id.clone(),
                devices: r.system.devices(),
                stage: r.workload.stage,
                workload: WorkloadDoc::of(r.workload),
                analysed: s.plans.len(),
                skipped: s.skipped,
                by_latency: rank(&s.by_latency)
                    .into_iter()
                    .map(|p| PlanDoc::of(p, fastest))
                    .collect(),
                by_throughput: rank(&s.by_throughput)
                    .into_iter()
                    .map(|p| PlanDoc::of(p, densest))
                    .collect(),
                not_fitting: not_fitting.iter().map(|p| PlanDoc::of(p, None)).collect(),
            };
            crate::doc::write_json(&doc, out)
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "tp",
                "pp",
                "ep",
                "sequence_parallel",
                "cp",
                "devices",
                "replicas",
                "fits",
                "step_time_s",
                "tokens_per_s_per_device",
                "memory_per_device_bytes",
                "exposed_communication_s",
            ])?;
            for p in &s.plans {
                let l = p.layout;
                w.write_record([
                    l.tp.to_string(),
                    l.pp.to_string(),
                    l.ep.to_string(),
                    l.sequence_parallel.to_string(),
                    l.cp.to_string(),
                    l.devices().to_string(),
                    p.replicas.to_string(),
                    p.fits().to_string(),
                    p.step_time().get().to_string(),
                    p.tokens_per_s_per_device().to_string(),
                    p.stage.memory.total().get().to_string(),
                    p.stage.schedule.exposed.get().to_string(),
                ])?;
            }
            w.flush()?;
            Ok(())
        }
        Format::Table => {
            writeln!(
                out,
                "plans for {} on {} ({} × {}) · {} · {} layouts analysed, {} the model or the system's links cannot take, {} that do not fit",
                r.model.name,
                r.system.name,
                r.system.devices(),
                r.system.chip.id,
                crate::analysis::workload_line(&r.search.plans.first().map_or_else(
                    || roofline_core::analysis::StageAnalysis::empty(*r.workload),
                    |p| p.stage.single.clone()
                )),
                s.plans.len(),
                s.skipped,
                not_fitting.len(),
            )?;
            for (title, order, best) in [
                (
                    match r.workload.stage {
                        roofline_core::workload::Stage::Decode => {
                            "fastest step (time per output token)"
                        }
                        _ => "fastest step (time to the first token's prefill)",
                    },
                    &s.by_latency,
                    fastest,
                ),
                ("most tokens/s per device", &s.by_throughput, densest),
            ] {
                writeln!(out, "\n{title}:")?;
                let mut t = new_table(&[
                    "#",
                    "layout",
                    "devices",
                    "replicas",
                    "step",
                    "tokens/s/device",
                    "memory/device",
                    "exposed comm",
                ]);
                let mut whys = Vec::new();
                for (i, p) in rank(order).into_iter().enumerate() {
                    if let Some(b) = best.filter(|b| !std::ptr::eq(*b, p)) {
                        whys.push(format!(
                            "#{} {}: {}",
                            i + 1,
                            layout_name(p),
                            holdback_text(&holdback(p, b))
                        ));
                    }
                    t.add_row(vec![
                        (i + 1).to_string(),
                        layout_name(p),
                        p.layout.devices().to_string(),
                        p.replicas.to_string(),
                        human_seconds(p.step_time().get()),
                        format!("{:.0}", p.tokens_per_s_per_device()),
                        human_bytes(p.stage.memory.total().get()),
                        format!("{:.0}%", p.exposed_share() * 100.0),
                    ]);
                }
                align_right_from(&mut t, 2);
                writeln!(out, "{t}")?;
                for w in whys {
                    writeln!(out, "  {w}")?;
                }
            }
            if !not_fitting.is_empty() {
                let names: Vec<String> = not_fitting.iter().map(|p| layout_name(p)).collect();
                writeln!(out, "\ndo not fit in memory: {}", names.join(", "))?;
            }
            writeln!(
                out,
                "\nsteps are roofline and α–β lower bounds on a compute and a communication stream (docs/parallelism.md); tokens/s per device assumes every replica serves the batch"
            )?;
            Ok(())
        }
    }
}
