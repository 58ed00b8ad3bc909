//! Rendering of `roofline train`: one training step at the roofline bound beside the estimate
//! at the chip's efficiency (never the estimate alone), the memory per device, the pipeline
//! stages, and the MFU waterfall from the dense peak down to the MFU.

use crate::doc::train::{optimizer_id, recompute_id, schedule_id, zero_number, TrainDoc};
use crate::units::{human_bytes, human_duration, human_flops, human_seconds, percent};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::comm::System;
use roofline_core::model::Transformer;
use roofline_core::train::memory::TrainingMemory;
use roofline_core::train::{Reason, TrainingPrediction, Waterfall};
use std::io::Write;

/// Everything `roofline train` reports.
#[derive(Debug, Clone, Copy)]
pub struct TrainReport<'a> {
    /// The model.
    pub model: &'a Transformer,
    /// The system.
    pub system: &'a System,
    /// The step at [`roofline_core::train::Efficiency::BOUND`]: no step is faster.
    pub bound: &'a TrainingPrediction,
    /// The step at the estimate's efficiencies.
    pub estimate: &'a TrainingPrediction,
    /// Where the estimate's efficiencies come from.
    pub source: &'a str,
    /// Tokens to train, for the time to train.
    pub tokens: Option<f64>,
    /// The estimate's waterfall restated against a measured step
    /// ([`Waterfall::measured`]), with its unexplained bar.
    pub measured: Option<&'a Waterfall>,
    /// When the step does not fit: the largest micro-batch that does (`None` when it fits or
    /// when none does).
    pub largest_micro_batch: Option<u64>,
}

/// The waterfall picture of `r`: the estimate's waterfall (restated against the measured step
/// when there is one), titled with the model and the devices, subtitled with the step its
/// shares are of and the bound's MFU.
pub fn waterfall_chart(r: &TrainReport<'_>) -> crate::plot::waterfall::WaterfallChart {
    let (waterfall, which) = match r.measured {
        Some(m) => (m.clone(), "estimate against the measured step"),
        None => (
            r.estimate.waterfall.clone(),
            "estimate at the chip's efficiency",
        ),
    };
    crate::plot::waterfall::WaterfallChart {
        title: format!(
            "MFU waterfall · {} on {} × {}",
            r.model.name, r.bound.devices, r.system.chip.id
        ),
        subtitle: format!(
            "{which}; shares of a {:.4} s step (roofline bound: MFU {:.1} %)",
            waterfall.step.get(),
            r.bound.mfu * 100.0
        ),
        waterfall,
    }
}

/// Writes `report` in `format` to `out`.
///
/// # Errors
/// A failed write.
pub fn write_train(
    report: &TrainReport<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => write_table(report, out),
        Format::Json => crate::doc::write_json(&TrainDoc::of(report), out),
        Format::Csv => write_csv(report, out),
    }
}

/// Writes the waterfall section alone, as a table: the job, the bound's and the estimate's
/// MFU waterfalls and, with a measured step, the estimate's restated against it with its
/// unexplained bar (what `roofline mfu` adds below its own output).
///
/// # Errors
/// A failed write.
pub fn write_waterfall_table(r: &TrainReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    writeln!(
        out,
        "predicted MFU waterfall · {} on {} ({}) · {}",
        r.model.name,
        r.system.name,
        r.system.id,
        job_line(r)
    )?;
    writeln!(
        out,
        "roofline bound: no step is faster; estimate at the chip's efficiency ({}). Shares \
         of the dense peak, points; each row what is left after it.",
        r.source
    )?;
    write_waterfall(r, out)
}

/// The job in words: layout, batch, schedule and policies.
fn job_line(r: &TrainReport<'_>) -> String {
    let j = &r.bound.job;
    let l = j.layout;
    let mut parts = vec![format!("TP {}", l.tp), format!("PP {}", l.pp)];
    if l.cp > 1 {
        parts.push(format!("CP {}", l.cp));
    }
    if l.ep > 1 {
        parts.push(format!("EP {}", l.ep));
    }
    parts.push(format!("DP {}", j.data_parallel));
    let schedule = match j.schedule {
        roofline_core::train::pipeline::PipelineSchedule::Interleaved { virtual_stages } => {
            format!("interleaved 1F1B (v = {virtual_stages})")
        }
        s => match schedule_id(s) {
            "1f1b" => "1F1B".to_string(),
            _ => "zero-bubble (ZB-H1)".to_string(),
        },
    };
    format!(
        "{}{} = {} devices · global batch {} × {} tokens, micro-batch {} ({} micro-batches) · \
         {schedule} · ZeRO {} · recompute {} · {} · {}{}",
        parts.join(" × "),
        if l.sequence_parallel {
            " (sequence parallel)"
        } else {
            ""
        },
        r.bound.devices,
        j.global_batch,
        j.seq_len,
        j.micro_batch,
        r.bound.micro_batches,
        zero_number(j.zero),
        recompute_id(j.recompute),
        optimizer_id(j.optimizer),
        j.precisions.act,
        if j.flash_attention {
            " · FlashAttention"
        } else {
            ""
        },
    )
}

fn write_table(r: &TrainReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let (b, e) = (r.bound, r.estimate);
    writeln!(
        out,
        "train · {} on {} ({}) · {}",
        r.model.name,
        r.system.name,
        r.system.id,
        job_line(r)
    )?;
    writeln!(
        out,
        "roofline bound: no step is faster (every kernel at its roof, every collective at its \
         link's α–β bound)."
    )?;
    writeln!(
        out,
        "estimate at the chip's efficiency: matmul {} (fp8 {}, attention {}), vector {}, memory \
         {}, network {}; launch and host: one launch per kernel ({}).",
        percent(e.efficiency.matmul, 1),
        percent(e.efficiency.matmul_fp8, 1),
        percent(e.efficiency.attention, 1),
        percent(e.efficiency.vector, 1),
        percent(e.efficiency.memory, 1),
        percent(e.efficiency.network, 1),
        r.source
    )?;
    if e.devices < r.system.devices() {
        writeln!(
            out,
            "note: the layout uses {} of the system's {} devices; tokens/s and MFU are those of \
             the {} it uses.",
            e.devices,
            r.system.devices(),
            e.devices
        )?;
    }
    let job = &e.job;
    if job.recompute == roofline_core::train::backward::Recompute::Selective && job.flash_attention
    {
        writeln!(
            out,
            "note: selective recomputation re-runs the attention core, which FlashAttention's \
             backward already recomputes: with FlashAttention it re-runs nothing more."
        )?;
    }
    writeln!(out)?;

    let mut t = new_table(&["step", "roofline bound", "estimate"]);
    let both = |f: &dyn Fn(&TrainingPrediction) -> String| vec![f(b), f(e)];
    let mut row = |name: String, cells: Vec<String>| {
        let mut v = vec![name];
        v.extend(cells);
        t.add_row(v);
    };
    row(
        "step time".into(),
        both(&|p| human_seconds(p.step_time.get())),
    );
    row(
        "tokens/s".into(),
        both(&|p| format!("{:.0}", p.tokens_per_s)),
    );
    if let Some(tokens) = r.tokens {
        row(
            format!("time to train {} tokens", crate::units::human(tokens, "")),
            both(&|p| human_duration(p.time_to_train(tokens))),
        );
    }
    row("MFU".into(), both(&|p| percent(p.mfu, 1)));
    row("HFU".into(), both(&|p| percent(p.hfu, 1)));
    row(
        "model FLOPs / step".into(),
        both(&|p| human_flops(p.model_flops.get())),
    );
    row(
        "hardware FLOPs / step".into(),
        both(&|p| human_flops(p.hardware_flops.get())),
    );
    row(
        "pipeline makespan".into(),
        both(&|p| human_seconds(p.makespan.get())),
    );
    row(
        "bubble (share of the makespan)".into(),
        both(&|p| percent(p.bubble_share(), 1)),
    );
    row(
        "micro-batches".into(),
        both(&|p| p.micro_batches.to_string()),
    );
    row("devices".into(), both(&|p| p.devices.to_string()));
    align_right_from(&mut t, 1);
    writeln!(out, "{t}")?;
    writeln!(out)?;

    write_memory(r, out)?;
    writeln!(out)?;
    write_stages(r, out)?;
    writeln!(out)?;
    writeln!(
        out,
        "MFU waterfall (share of the dense peak, points; each row what is left after it)"
    )?;
    write_waterfall(r, out)?;
    Ok(())
}

/// The memory per GPU, one row a part: its label in the table, its CSV quantity, bytes.
fn memory_rows(m: &TrainingMemory) -> [(&'static str, &'static str, f64); 7] {
    [
        ("weights", "weights_bytes", m.weights.get()),
        ("gradients", "gradients_bytes", m.gradients.get()),
        ("optimizer states", "optimizer_bytes", m.optimizer.get()),
        (
            "activations (stage 0, at its peak)",
            "activations_bytes",
            m.activations.get(),
        ),
        (
            "communication buffers",
            "communication_bytes",
            m.communication.get(),
        ),
        ("runtime reserve", "reserve_bytes", m.reserve.get()),
        ("total", "total_bytes", m.total().get()),
    ]
}

fn write_memory(r: &TrainReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let m = &r.bound.memory;
    let mut t = new_table(&["memory per GPU", "bytes"]);
    for (name, _, v) in memory_rows(m) {
        t.add_row(vec![name.to_string(), human_bytes(v)]);
    }
    t.add_row(vec![
        "capacity".to_string(),
        m.capacity
            .map_or_else(|| "unknown".to_string(), |c| human_bytes(c.get())),
    ]);
    align_right_from(&mut t, 1);
    writeln!(out, "{t}")?;
    match m.fits() {
        Some(true) => writeln!(out, "fits: yes")?,
        Some(false) => {
            let advice = match r.largest_micro_batch {
                Some(mb) => {
                    // The largest that also divides the sequences of each replica.
                    let j = &r.bound.job;
                    let per =
                        u64::from(j.data_parallel).saturating_mul(u64::from(j.layout.ep.max(1)));
                    let sequences = j.global_batch / per.max(1);
                    let dividing = (1..=mb)
                        .rev()
                        .find(|b| sequences.is_multiple_of(*b))
                        .unwrap_or(1);
                    if dividing == mb {
                        format!("the largest micro-batch that fits is {mb} (--micro-batch {mb})")
                    } else {
                        format!(
                            "the largest micro-batch that fits is {mb}; the largest that also \
                             divides the {sequences} sequences of a replica is {dividing} \
                             (--micro-batch {dividing})"
                        )
                    }
                }
                None => "not even a micro-batch of 1 fits: raise --tp or --pp, add --zero or \
                         --recompute, or use a larger chip"
                    .to_string(),
            };
            writeln!(out, "fits: no — {advice}")?;
        }
        None => writeln!(out, "fits: unknown (the chip's capacity is not known)")?,
    }
    Ok(())
}

fn write_stages(r: &TrainReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let mut t = new_table(&[
        "stage",
        "blocks",
        "parameters",
        "F (bound / estimate)",
        "B (bound / estimate)",
        "W (bound / estimate)",
        "exposed DP + optimizer (estimate)",
    ]);
    let pair = |x: f64, y: f64| format!("{} / {}", human_seconds(x), human_seconds(y));
    for (i, (sb, se)) in r.bound.stages.iter().zip(&r.estimate.stages).enumerate() {
        t.add_row(vec![
            i.to_string(),
            format!(
                "{}–{}",
                sb.first_block,
                sb.first_block + sb.blocks.saturating_sub(1)
            ),
            crate::units::human(sb.parameters as f64, ""),
            pair(sb.forward.get(), se.forward.get()),
            pair(sb.backward.get(), se.backward.get()),
            pair(sb.weight.get(), se.weight.get()),
            human_seconds(se.data_parallel.exposed.get() + se.optimizer.get()),
        ]);
    }
    align_right_from(&mut t, 1);
    writeln!(out, "{t}")?;
    Ok(())
}

/// The reasons any of `ws` has a bar for, in drawing order (the unexplained bar last).
fn reasons(ws: &[&Waterfall]) -> Vec<Reason> {
    Reason::PREDICTED
        .iter()
        .chain(std::iter::once(&Reason::Unexplained))
        .filter(|r| ws.iter().any(|w| w.bars.iter().any(|b| b.reason == **r)))
        .copied()
        .collect()
}

/// Points of the peak a bar costs: `−12.3` (a bar under 0.05 points `−0.0`; a gain, from a
/// measured step shorter than the prediction, `+1.2`).
fn points(share: f64) -> String {
    let p = share * 100.0;
    if p >= 0.0 {
        format!("−{p:.1}")
    } else {
        format!("+{:.1}", -p)
    }
}

fn write_waterfall(r: &TrainReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let mut ws: Vec<(&str, &Waterfall)> = vec![
        ("estimate", &r.estimate.waterfall),
        ("bound", &r.bound.waterfall),
    ];
    if let Some(m) = r.measured {
        ws.push(("measured", m));
    }
    let mut header = vec!["reason".to_string()];
    for (name, _) in &ws {
        header.push(format!("{name}: points"));
        header.push(format!("{name}: left"));
    }
    header.push("note".to_string());
    let refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = new_table(&refs);
    let mut first = vec!["dense peak".to_string()];
    for _ in &ws {
        first.push(String::new());
        first.push(percent(1.0, 1));
    }
    first.push(String::new());
    t.add_row(first);
    let mut left: Vec<f64> = vec![1.0; ws.len()];
    let all: Vec<&Waterfall> = ws.iter().map(|(_, w)| *w).collect();
    for reason in reasons(&all) {
        let mut row = vec![format!("− {}", reason.label())];
        for (i, (_, w)) in ws.iter().enumerate() {
            let share = w.share(reason);
            let has = w.bars.iter().any(|b| b.reason == reason);
            if let Some(l) = left.get_mut(i) {
                *l -= share;
                row.push(if has { points(share) } else { "·".into() });
                row.push(percent(*l, 1));
            }
        }
        row.push(if reason == Reason::Recompute {
            format!("HFU {} (estimate)", percent(r.estimate.waterfall.hfu, 1))
        } else {
            String::new()
        });
        t.add_row(row);
    }
    let mut mfu = vec!["= MFU".to_string()];
    let mut hfu = vec!["HFU (MFU + recompute and extra FLOPs)".to_string()];
    for (_, w) in &ws {
        mfu.push(String::new());
        mfu.push(percent(w.mfu, 1));
        hfu.push(String::new());
        hfu.push(percent(w.hfu, 1));
    }
    mfu.push(String::new());
    hfu.push(String::new());
    t.add_row(mfu);
    t.add_row(hfu);
    align_right_from(&mut t, 1);
    writeln!(out, "{t}")?;
    Ok(())
}

fn write_csv(r: &TrainReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(["section", "quantity", "bound", "estimate", "measured"])?;
    let (b, e) = (r.bound, r.estimate);
    let num = |x: f64| format!("{x}");
    let mut rows: Vec<(&str, String, String, String, String)> = vec![
        (
            "step",
            "step_time_s".into(),
            num(b.step_time.get()),
            num(e.step_time.get()),
            r.measured.map(|m| num(m.step.get())).unwrap_or_default(),
        ),
        (
            "step",
            "tokens_per_s".into(),
            num(b.tokens_per_s),
            num(e.tokens_per_s),
            String::new(),
        ),
        (
            "step",
            "mfu".into(),
            num(b.mfu),
            num(e.mfu),
            r.measured.map(|m| num(m.mfu)).unwrap_or_default(),
        ),
        (
            "step",
            "hfu".into(),
            num(b.hfu),
            num(e.hfu),
            r.measured.map(|m| num(m.hfu)).unwrap_or_default(),
        ),
        (
            "step",
            "bubble_fraction".into(),
            num(b.bubble_fraction),
            num(e.bubble_fraction),
            String::new(),
        ),
        (
            "step",
            "micro_batches".into(),
            b.micro_batches.to_string(),
            e.micro_batches.to_string(),
            String::new(),
        ),
        (
            "step",
            "devices".into(),
            b.devices.to_string(),
            e.devices.to_string(),
            String::new(),
        ),
    ];
    if let Some(tokens) = r.tokens {
        rows.push((
            "step",
            "time_to_train_s".into(),
            num(b.time_to_train(tokens)),
            num(e.time_to_train(tokens)),
            String::new(),
        ));
    }
    let m = &b.memory;
    for (_, q, v) in memory_rows(m) {
        rows.push(("memory", q.into(), num(v), num(v), String::new()));
    }
    let mut all = vec![&b.waterfall, &e.waterfall];
    if let Some(mw) = r.measured {
        all.push(mw);
    }
    for reason in reasons(&all) {
        rows.push((
            "waterfall_share",
            reason.id().into(),
            num(b.waterfall.share(reason)),
            num(e.waterfall.share(reason)),
            r.measured
                .map(|mw| num(mw.share(reason)))
                .unwrap_or_default(),
        ));
    }
    for (s, q, x, y, z) in rows {
        w.write_record([s, q.as_str(), x.as_str(), y.as_str(), z.as_str()])?;
    }
    w.flush()?;
    Ok(())
}
