//! Rendering of `roofline analyze` on many devices: per stage, one device's operators with
//! the collectives among them, the step on two streams, throughput and memory per device.

use crate::doc::parallel::{
    AnalyzeParallelDoc, ParallelStageDoc, ScalingPointDoc, ScalingSeriesDoc, SweepTpDoc,
};
use crate::doc::SchemaVersion;
use crate::units::{human_bytes, human_bytes_per_s, human_flops, human_seconds};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::comm::System;
use roofline_core::model::Transformer;
use roofline_core::parallel::ParallelStage;
use roofline_core::workload::Stage;
use std::io::Write;

/// Everything a parallel `roofline analyze` reports.
#[derive(Debug, Clone, Copy)]
pub struct ParallelReport<'a> {
    /// The model.
    pub model: &'a Transformer,
    /// The system.
    pub system: &'a System,
    /// One analysis per stage, in order.
    pub stages: &'a [ParallelStage],
}

impl AnalyzeParallelDoc {
    /// The document of `report`.
    pub fn of(report: &ParallelReport<'_>) -> Self {
        AnalyzeParallelDoc {
            schema_version: SchemaVersion,
            model: report.model.name.clone(),
            system: report.system.id.clone(),
            chip: report.system.chip.id.clone(),
            system_devices: report.system.devices(),
            headline: crate::headline::HeadlineDoc::of(
                &roofline_core::serve::headline::of_parallel(report.stages),
            ),
            stages: report.stages.iter().map(ParallelStageDoc::of).collect(),
        }
    }
}

/// Writes `report` in `format` to `out`.
///
/// # Errors
/// A failed write.
pub fn write_parallel(
    report: &ParallelReport<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => write_table(report, out),
        Format::Json => crate::doc::write_json(&AnalyzeParallelDoc::of(report), out),
        Format::Csv => write_csv(report, out),
    }
}

/// The layout in words: `TP 8 × PP 1 = 8 devices`, with the blocks of each pipeline stage, the
/// expert-parallel degree and its skew, and sequence parallelism when on.
pub(crate) fn layout_line(s: &ParallelStage, layers: u64) -> String {
    let l = s.layout;
    let stages = if l.pp > 1 {
        let blocks: Vec<String> = (0..l.pp)
            .map(|i| l.stage_blocks(layers, i).to_string())
            .collect();
        format!(" (blocks per stage: {})", blocks.join(", "))
    } else {
        String::new()
    };
    let ep = if l.ep > 1 {
        format!(
            " × EP {}{}",
            l.ep,
            if l.expert_imbalance > 1.0 {
                format!(
                    " (busiest {:.2}× the mean routed tokens)",
                    l.expert_imbalance
                )
            } else {
                String::new()
            }
        )
    } else {
        String::new()
    };
    let cp = if l.cp > 1 {
        format!(
            " × CP {} (ring attention, {} prompt tokens per device)",
            l.cp,
            l.cp_tokens(s.workload.seq_len)
        )
    } else {
        String::new()
    };
    format!(
        "TP {} × PP {}{stages}{ep}{cp}{} = {} devices",
        l.tp,
        l.pp,
        if l.sequence_parallel {
            " (sequence parallel)"
        } else {
            ""
        },
        s.devices
    )
}

fn write_table(r: &ParallelReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    writeln!(
        out,
        "{}",
        crate::headline::headline_line(&roofline_core::serve::headline::of_parallel(r.stages))
    )?;
    write_stage_tables(r, out)
}

/// Each stage's table, without the serving headline.
pub(crate) fn write_stage_tables(
    r: &ParallelReport<'_>,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    for s in r.stages {
        writeln!(out)?;
        writeln!(
            out,
            "{} · {} on {} ({}) · {} · {}",
            s.workload.stage,
            r.model.name,
            r.system.name,
            r.system.id,
            layout_line(s, r.model.layers),
            crate::analysis::workload_line(&s.single),
        )?;
        let mut t = new_table(&[
            "operator (one device)",
            "count",
            "FLOPs",
            "HBM bytes",
            "link bytes",
            "bound",
            "time",
            "share",
        ]);
        let total = s.totals.time.get();
        for (i, row) in s.rows.iter().enumerate() {
            let p = row.point();
            let share = p.time.get() * row.count as f64 / total * 100.0;
            t.add_row(vec![
                row.name.to_string(),
                row.count.to_string(),
                human_flops(row.cost.flops.get()),
                human_bytes(row.cost.bytes().get()),
                s.communication(i)
                    .map(|c| human_bytes(c.traffic.get()))
                    .unwrap_or_default(),
                p.bound.to_string(),
                human_seconds(p.time.get()),
                format!("{share:.1}%"),
            ]);
        }
        align_right_from(&mut t, 1);
        writeln!(out, "{t}")?;
        let links = collective_lines(s);
        if !links.is_empty() {
            writeln!(out, "collectives: {}", links.join("; "))?;
        }
        writeln!(out, "{}", step_line(s))?;
        writeln!(out, "{}", throughput_line(s))?;
        writeln!(out, "{}", memory_line(s))?;
        for w in &s.warnings {
            writeln!(out, "warning: {w}")?;
        }
    }
    Ok(())
}

/// Each collective of the step in words: `attention.tp_reduce all-reduce over 8 ranks (ring
/// ll, 450.0 GB/s per direction)`.
pub(crate) fn collective_lines(s: &ParallelStage) -> Vec<String> {
    s.graph
        .nodes()
        .iter()
        .filter_map(|n| match n.op() {
            roofline_core::ops::Op::Communication(c) => Some(format!(
                "{} {} over {} ranks ({} {}, {} per direction)",
                n.name,
                c.collective,
                c.group.ranks,
                c.algorithm,
                c.protocol,
                human_bytes_per_s(c.link.get())
            )),
            _ => None,
        })
        .collect()
}

/// The step on two streams in one sentence: compute + exposed communication = the critical
/// path, the bound; launch and host beside it, and the two together; the communication in all
/// and the share hidden.
pub(crate) fn step_line(s: &ParallelStage) -> String {
    let sc = &s.schedule;
    let communication = if sc.communication.get() > 0.0 {
        format!(
            "communication {} in all, {:.0}% hidden behind compute",
            human_seconds(sc.communication.get()),
            sc.overlap() * 100.0
        )
    } else {
        "no communication".to_string()
    };
    format!(
        "step (critical path on a compute and a communication stream): bound = compute {} + exposed communication {} = {}; + launch and host {} = {}; {communication}",
        human_seconds(sc.compute.get()),
        human_seconds(sc.exposed.get()),
        human_seconds(sc.step.get()),
        human_seconds(s.launch_and_host().get()),
        human_seconds((s.step_time() + s.launch_and_host()).get()),
    )
}

/// Tokens per second per replica and per device, the time per output token in decode, and
/// what the parallelism costs ([`ParallelStage::scaling_cost`]).
pub(crate) fn throughput_line(s: &ParallelStage) -> String {
    let per_token = match s.workload.stage {
        Stage::Decode => format!(
            " · time per output token {}",
            human_seconds(s.step_time().get())
        ),
        _ => String::new(),
    };
    format!(
        "throughput: {:.0} tokens/s per replica ({:.0} per device){per_token} · the step is {:.2}× the single chip's time ÷ {} devices (1.00 = perfect scaling)",
        s.tokens_per_s(),
        s.tokens_per_s() / s.devices as f64,
        s.scaling_cost(),
        s.devices,
    )
}

/// What one device holds, term by term, against its capacity, and whether it fits.
pub(crate) fn memory_line(s: &ParallelStage) -> String {
    let m = &s.memory;
    let cap = m
        .capacity
        .map(|c| format!(" of {} per device", human_bytes(c.get())))
        .unwrap_or_default();
    format!(
        "memory per device: {}{cap}{}",
        crate::analysis::memory_terms(m),
        fits_words(m.fits())
    )
}

/// ` · fits`, ` · does not fit`, or nothing when the capacity is not known.
pub(crate) fn fits_words(fits: Option<bool>) -> &'static str {
    match fits {
        Some(true) => " · fits",
        Some(false) => " · does not fit",
        None => "",
    }
}

fn write_csv(r: &ParallelReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "model",
        "system",
        "stage",
        "tp",
        "pp",
        "sequence_parallel",
        "ep",
        "cp",
        "name",
        "role",
        "kind",
        "count",
        "flops",
        "bytes",
        "link_bytes",
        "bound",
        "time_s",
    ])?;
    for s in r.stages {
        for (i, row) in s.rows.iter().enumerate() {
            let p = row.point();
            w.write_record([
                r.model.name.clone(),
                r.system.id.clone(),
                s.workload.stage.to_string(),
                s.layout.tp.to_string(),
                s.layout.pp.to_string(),
                s.layout.sequence_parallel.to_string(),
                s.layout.ep.to_string(),
                s.layout.cp.to_string(),
                row.name.to_string(),
                row.role.to_string(),
                row.kind.to_string(),
                row.count.to_string(),
                row.cost.flops.get().to_string(),
                row.cost.bytes().get().to_string(),
                s.communication(i)
                    .map(|c| c.traffic.get().to_string())
                    .unwrap_or_default(),
                p.bound.to_string(),
                p.time.get().to_string(),
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}

/// The degrees a `sweep --tp` series holds fixed, as ` · fixed beside TP: PP 2 × CP 4`; empty
/// for a plain `sweep --tp`.
fn fixed_line(series: &[ParallelStage]) -> String {
    let Some(f) = crate::doc::parallel::FixedLayoutDoc::of(series) else {
        return String::new();
    };
    let mut parts = Vec::new();
    if f.pp > 1 {
        parts.push(format!("PP {}", f.pp));
    }
    if f.ep > 1 {
        parts.push(format!("EP {}", f.ep));
    }
    if f.cp > 1 {
        parts.push(format!("CP {}", f.cp));
    }
    let mut line = format!(" · fixed beside TP: {}", parts.join(" × "));
    if f.expert_imbalance > 1.0 {
        line.push_str(&format!(
            " (busiest {:.2}× the mean routed tokens)",
            f.expert_imbalance
        ));
    }
    if f.sequence_parallel {
        line.push_str(if parts.is_empty() {
            "sequence parallel above TP 1"
        } else {
            ", sequence parallel above TP 1"
        });
    }
    line
}

fn point(s: &ParallelStage) -> ScalingPointDoc {
    ScalingPointDoc::of(s)
}

/// Writes `sweep --tp`: each series (one workload over increasing tensor-parallel degrees)
/// as rows of step time, throughput, parallel efficiency and exposed communication, and the
/// degree where adding devices stops paying.
///
/// # Errors
/// A failed write.
pub fn write_scaling(
    model: &Transformer,
    system: &System,
    series: &[Vec<ParallelStage>],
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    use roofline_core::parallel::scaling::stops_paying;
    match format {
        Format::Json => {
            let doc = SweepTpDoc {
                schema_version: SchemaVersion,
                model: model.name.clone(),
                system: system.id.clone(),
                chip: system.chip.id.clone(),
                series: series
                    .iter()
                    .filter_map(|s| ScalingSeriesDoc::of(s))
                    .collect(),
            };
            crate::doc::write_json(&doc, out)
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "stage",
                "batch",
                "seq_len",
                "context",
                "tp",
                "devices",
                "step_time_s",
                "tokens_per_s",
                "tokens_per_s_per_device",
                "efficiency",
                "exposed_communication_s",
                "fits",
            ])?;
            for s in series.iter().flatten() {
                let p = point(s);
                w.write_record([
                    s.workload.stage.to_string(),
                    s.workload.batch.to_string(),
                    s.workload.seq_len.to_string(),
                    s.workload.context.to_string(),
                    p.tp.to_string(),
                    p.devices.to_string(),
                    p.step_time_s.to_string(),
                    p.tokens_per_s.to_string(),
                    p.tokens_per_s_per_device.to_string(),
                    p.efficiency.to_string(),
                    p.exposed_communication_s.to_string(),
                    p.fits.map_or(String::new(), |f| f.to_string()),
                ])?;
            }
            w.flush()?;
            Ok(())
        }
        Format::Table => {
            for (i, s) in series.iter().enumerate() {
                let Some(first) = s.first() else { continue };
                if i > 0 {
                    writeln!(out)?;
                }
                writeln!(
                    out,
                    "{} · {} on {} · {}{}",
                    first.workload.stage,
                    model.name,
                    system.name,
                    crate::analysis::workload_line(&first.single),
                    fixed_line(s)
                )?;
                let mut t = new_table(&[
                    "TP",
                    "step",
                    "tokens/s",
                    "tokens/s/device",
                    "efficiency",
                    "exposed comm",
                    "fits",
                ]);
                for st in s {
                    let p = point(st);
                    t.add_row(vec![
                        p.tp.to_string(),
                        human_seconds(p.step_time_s),
                        format!("{:.0}", p.tokens_per_s),
                        format!("{:.0}", p.tokens_per_s_per_device),
                        format!("{:.0}%", p.efficiency * 100.0),
                        human_seconds(p.exposed_communication_s),
                        match p.fits {
                            Some(true) => "yes".into(),
                            Some(false) => "no".into(),
                            None => "?".into(),
                        },
                    ]);
                }
                align_right_from(&mut t, 0);
                writeln!(out, "{t}")?;
                match stops_paying(s) {
                    Some(j) => writeln!(
                        out,
                        "adding devices stops paying at TP {}: its step is no faster than TP {}'s",
                        s[j].layout.tp,
                        s[j - 1].layout.tp
                    )?,
                    None => writeln!(
                        out,
                        "every added device still shortens the step (efficiency = single chip's step ÷ devices, over this step)"
                    )?,
                }
            }
            Ok(())
        }
    }
}
