//! Rendering of imported profiles (`roofline import`, `analyze --profile`): measured kernels
//! ranked by time lost against their roof, with regime and advice; empirical roofs (mixbench,
//! ERT); predicted beside measured per model operator. Table, JSON, CSV, a roofline chart and an
//! HTML section.

use crate::doc::profile::{JoinDoc, KernelsDoc, RoofDoc};
use crate::doc::write_json;
use crate::plot::{xml_escape as esc, ChartPoint, ChipRoofline, RooflineChart, Series};
use crate::units::{human_bytes, human_bytes_per_s, human_flops, human_flops_per_s};
use crate::units::{human_intensity, human_seconds};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::device::{Device, DeviceError};
use roofline_core::precision::Precision;
use roofline_core::profile::join::Join;
use roofline_core::profile::place::{by_regime, Placement, ProfiledBound};
use roofline_core::profile::{EmpiricalRoof, Profile};
use std::io::Write;

/// The most points a profile's roofline chart holds (the longest kernels): more would bury
/// their labels.
pub const MAX_CHART_POINTS: usize = 30;

/// What `roofline import` reports for a profile.
#[derive(Debug, Clone, Copy)]
pub struct ProfileReport<'a> {
    /// The profile as imported.
    pub profile: &'a Profile,
    /// Its kernels placed and ranked ([`roofline_core::profile::place::place_all`]).
    pub placements: &'a [Placement],
    /// The chip or empirical roof they are held against, if any.
    pub device: Option<&'a Device>,
    /// Rows shown in the table (JSON and CSV have every kernel).
    pub top: usize,
}

/// `void cutlass::Kernel<…>(…)` cut to at most `max` characters: `void ` and the argument
/// list dropped, the middle elided.
pub fn short_name(name: &str, max: usize) -> String {
    let n = name.trim().strip_prefix("void ").unwrap_or(name.trim());
    let n = match n.find('(') {
        Some(i) if i > 0 => &n[..i],
        _ => n,
    };
    let chars: Vec<char> = n.chars().collect();
    if chars.len() <= max || max < 8 {
        return n.to_string();
    }
    let head = (max - 1) / 2;
    let tail = max - 1 - head;
    let mut s: String = chars[..head].iter().collect();
    s.push('…');
    s.extend(&chars[chars.len() - tail..]);
    s
}

fn pct(x: Option<f64>) -> String {
    x.map(|f| format!("{:.1}%", f * 100.0))
        .unwrap_or_else(|| "—".into())
}

fn opt<T>(x: Option<T>, f: impl Fn(T) -> String) -> String {
    x.map(f).unwrap_or_else(|| "—".into())
}

pub(crate) fn regime_advice(r: ProfiledBound) -> &'static str {
    match r {
        ProfiledBound::Launch => "fewer launches: fuse, CUDA graphs",
        ProfiledBound::Memory => "fuse, batch, quantize",
        ProfiledBound::Compute => "tensor cores, lower precision",
        ProfiledBound::Unknown => "no cost or no roof: see the notes",
    }
}

fn roof_line(d: Option<&Device>) -> String {
    match d {
        Some(d) => format!(
            "roof: {} ({}), {} main memory, launch {}",
            d.name,
            d.id,
            opt(d.bandwidth().ok(), |b| human_bytes_per_s(b.get())),
            human_seconds(d.launch_overhead.value.get())
        ),
        None => "roof: none (pass --hardware ID, a chip file, or a mixbench/ERT output to place \
                 kernels under a roof)"
            .into(),
    }
}

/// Writes the ranked kernels of a profile.
///
/// # Errors
/// A failed write.
pub fn write_profiled(
    r: &ProfileReport<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => kernels_table(r, out),
        Format::Json => write_json(&KernelsDoc::of(r), out),
        Format::Csv => kernels_csv(r, out),
    }
}

fn kernels_table(r: &ProfileReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let p = r.profile;
    writeln!(
        out,
        "{} `{}`: {} kernel(s), {} in all, {} profiler step(s)",
        p.format.name(),
        p.origin,
        p.kernels.len(),
        human_seconds(p.total_time.get()),
        p.steps
    )?;
    writeln!(out, "{}", roof_line(r.device))?;
    let mut t = new_table(&[
        "#",
        "kernel",
        "taken for",
        "time",
        "FLOPs",
        "bytes",
        "AI (FLOP/B)",
        "achieved",
        "% of roof",
        "lost",
        "regime",
    ]);
    for (i, pl) in r.placements.iter().take(r.top).enumerate() {
        t.add_row(vec![
            (i + 1).to_string(),
            short_name(&pl.name, 44),
            pl.shaped_as.clone().unwrap_or_else(|| "—".into()),
            human_seconds(pl.duration.get()),
            if pl.flops.get() > 0.0 || pl.bytes.is_some() {
                human_flops(pl.flops.get())
            } else {
                "—".into()
            },
            opt(pl.bytes, |b| human_bytes(b.get())),
            opt(pl.intensity, |x| human_intensity(x.get())),
            human_flops_per_s(pl.achieved.get()),
            pct(pl.fraction_of_roof),
            opt(pl.time_lost, |x| human_seconds(x.get())),
            pl.regime.to_string(),
        ]);
    }
    align_right_from(&mut t, 3);
    writeln!(out, "{t}")?;
    if r.placements.len() > r.top {
        writeln!(
            out,
            "… {} more kernels (--top N shows more; --format json or csv has all)",
            r.placements.len() - r.top
        )?;
    }
    writeln!(
        out,
        "ranked by time lost = measured − roofline time max(FLOPs / peak, bytes / bandwidth); % of roof = roofline time / measured"
    )?;
    for g in by_regime(r.placements) {
        writeln!(
            out,
            "{}: {} kernel(s), {} measured, {} lost → {}",
            g.regime,
            g.kernels,
            human_seconds(g.time.get()),
            human_seconds(g.time_lost.get()),
            regime_advice(g.regime)
        )?;
    }
    let mut advised = 0;
    for pl in r
        .placements
        .iter()
        .filter(|p| p.regime != ProfiledBound::Unknown)
    {
        if advised == 3 {
            break;
        }
        advised += 1;
        writeln!(
            out,
            "advice #{advised} {}: {}",
            short_name(&pl.name, 44),
            pl.advice
        )?;
    }
    if !p.uncosted.is_empty() {
        let shown: Vec<String> = p
            .uncosted
            .iter()
            .take(6)
            .map(|u| format!("{} ×{} {}", u.name, u.count, human_seconds(u.time.get())))
            .collect();
        writeln!(
            out,
            "not costed (views, no-op casts, Python): {}{}",
            shown.join(", "),
            if p.uncosted.len() > 6 { ", …" } else { "" }
        )?;
    }
    for n in &p.notes {
        writeln!(out, "note: {n}")?;
    }
    Ok(())
}

fn num(x: Option<f64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

fn kernels_csv(r: &ProfileReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "rank",
        "index",
        "name",
        "taken_for",
        "duration_s",
        "flops",
        "bytes",
        "arithmetic_intensity",
        "achieved_flops_per_s",
        "peak_flops_per_s",
        "bandwidth_bytes_per_s",
        "roofline_time_s",
        "fraction_of_roof",
        "time_lost_s",
        "regime",
        "advice",
    ])?;
    for (i, pl) in r.placements.iter().enumerate() {
        w.write_record([
            (i + 1).to_string(),
            pl.index.to_string(),
            pl.name.clone(),
            pl.shaped_as.clone().unwrap_or_default(),
            pl.duration.get().to_string(),
            pl.flops.get().to_string(),
            num(pl.bytes.map(|b| b.get())),
            num(pl.intensity.map(|x| x.get())),
            pl.achieved.get().to_string(),
            num(pl.roof.map(|x| x.peak.get())),
            num(pl.roof.map(|x| x.bandwidth.get())),
            num(pl.roofline_time.map(|x| x.get())),
            num(pl.fraction_of_roof),
            num(pl.time_lost.map(|x| x.get())),
            pl.regime.to_string(),
            pl.advice.clone(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// Writes an empirical roof: its peaks, levels and ridge points.
///
/// # Errors
/// A failed write.
pub fn write_roof(
    roof: &EmpiricalRoof,
    device: &Device,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => {
            writeln!(
                out,
                "{} `{}`: {}",
                roof.format.name(),
                roof.origin,
                roof.machine
            )?;
            let mut t = new_table(&["peak", "precision", "FLOP/s", "at AI", "bandwidth plateau"]);
            for p in &roof.peaks {
                t.add_row(vec![
                    p.label.clone(),
                    opt(p.precision, |x| x.to_string()),
                    match p.precision {
                        Some(_) => human_flops_per_s(p.value.get()),
                        None => crate::units::human(p.value.get(), "OP/s"),
                    },
                    opt(p.at_intensity, |x| human_intensity(x.get())),
                    opt(p.plateau, |x| human_bytes_per_s(x.get())),
                ]);
            }
            align_right_from(&mut t, 2);
            writeln!(out, "{t}")?;
            let precisions: Vec<Precision> = device.peaks.iter().map(|(p, _)| *p).collect();
            let mut header = vec!["memory level".to_string(), "bandwidth".to_string()];
            header.extend(precisions.iter().map(|p| format!("ridge {p} (FLOP/B)")));
            let hdr: Vec<&str> = header.iter().map(String::as_str).collect();
            let mut l = new_table(&hdr);
            for lv in &roof.levels {
                let mut row = vec![lv.name.clone(), human_bytes_per_s(lv.bandwidth.get())];
                for p in &precisions {
                    row.push(opt(device.peak(*p).ok(), |pk| {
                        human_intensity(pk.get() / lv.bandwidth.get())
                    }));
                }
                l.add_row(row);
            }
            align_right_from(&mut l, 1);
            writeln!(out, "{l}")?;
            writeln!(
                out,
                "as a chip: id `{}`, launch overhead {} (assumed); --write-chip FILE.toml writes it for --hardware FILE.toml",
                device.id,
                human_seconds(device.launch_overhead.value.get())
            )?;
            for n in &roof.notes {
                writeln!(out, "note: {n}")?;
            }
        }
        Format::Json => {
            write_json(&RoofDoc::of(roof, device), out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(["kind", "name", "precision", "value", "unit"])?;
            for p in &roof.peaks {
                w.write_record([
                    "peak".to_string(),
                    p.label.clone(),
                    opt(p.precision, |x| x.to_string()),
                    p.value.get().to_string(),
                    "FLOP/s".into(),
                ])?;
            }
            for l in &roof.levels {
                w.write_record([
                    "bandwidth".to_string(),
                    l.name.clone(),
                    String::new(),
                    l.bandwidth.get().to_string(),
                    "B/s".into(),
                ])?;
            }
            w.flush()?;
        }
    }
    Ok(())
}

/// Writes predicted beside measured per model operator, one block per stage.
///
/// # Errors
/// A failed write.
pub fn write_joins(
    joins: &[Join],
    origin: &str,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => {
            for (i, j) in joins.iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                }
                join_table(j, origin, out)?;
            }
            Ok(())
        }
        Format::Json => {
            write_json(&JoinDoc::of(joins, origin), out)?;
            Ok(())
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "stage",
                "name",
                "kind",
                "count",
                "predicted_s",
                "launch_overhead_s",
                "measured_s",
                "measured_over_predicted",
                "events",
                "expected_events",
            ])?;
            for j in joins {
                for r in &j.rows {
                    w.write_record([
                        j.stage.to_string(),
                        r.name.to_string(),
                        r.kind.to_string(),
                        r.count.to_string(),
                        r.predicted.get().to_string(),
                        r.launch.get().to_string(),
                        num(r.measured.map(|m| m.get())),
                        num(r.ratio),
                        r.events.to_string(),
                        r.expected_events.to_string(),
                    ])?;
                }
            }
            w.flush()?;
            Ok(())
        }
    }
}

fn ratio_text(r: Option<f64>) -> String {
    r.map(|x| format!("{x:.2}×")).unwrap_or_else(|| "—".into())
}

fn join_table(j: &Join, origin: &str, out: &mut dyn Write) -> Result<(), WriteError> {
    writeln!(
        out,
        "{} · predicted (roofline) against measured (`{origin}`, {} pass(es)), per forward pass",
        j.stage, j.steps
    )?;
    let mut t = new_table(&[
        "operator",
        "count",
        "predicted",
        "+ launch",
        "measured",
        "measured / predicted",
        "matched",
    ]);
    for r in &j.rows {
        t.add_row(vec![
            r.name.to_string(),
            r.count.to_string(),
            human_seconds(r.predicted.get()),
            human_seconds((r.predicted + r.launch).get()),
            opt(r.measured, |m| human_seconds(m.get())),
            ratio_text(r.ratio),
            if r.expected_events == 0 {
                "no signature".into()
            } else {
                format!("{}/{}", r.events, r.expected_events)
            },
        ]);
    }
    let launch_matched: f64 = j
        .rows
        .iter()
        .filter(|r| r.measured.is_some())
        .map(|r| (r.predicted + r.launch).get())
        .sum();
    t.add_row(vec![
        "matched operators".into(),
        String::new(),
        human_seconds(j.predicted_matched.get()),
        human_seconds(launch_matched),
        human_seconds(j.measured_matched.get()),
        ratio_text(
            (j.predicted_matched.get() > 0.0)
                .then(|| j.measured_matched.get() / j.predicted_matched.get()),
        ),
        String::new(),
    ]);
    align_right_from(&mut t, 1);
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "predicted total {} · profile {} = matched {} + unmatched operators {} + not costed {}",
        human_seconds(j.predicted_total.get()),
        human_seconds(j.profile_time.get()),
        human_seconds(j.measured_matched.get()),
        human_seconds(j.unmatched_time.get()),
        human_seconds(
            (j.profile_time - j.measured_matched - j.unmatched_time)
                .get()
                .max(0.0)
        ),
    )?;
    if !j.unmatched.is_empty() {
        let shown: Vec<String> = j
            .unmatched
            .iter()
            .take(6)
            .map(|u| {
                format!(
                    "{}{} ×{} {}",
                    u.name,
                    u.shaped_as
                        .as_ref()
                        .map(|s| format!(" ({s})"))
                        .unwrap_or_default(),
                    u.count,
                    human_seconds(u.time.get())
                )
            })
            .collect();
        writeln!(
            out,
            "unmatched (no model operator of that shape): {}{}",
            shown.join(", "),
            if j.unmatched.len() > 6 { ", …" } else { "" }
        )?;
    }
    for n in &j.notes {
        writeln!(out, "note: {n}")?;
    }
    Ok(())
}

/// Kernels of one name and shape, summed for the chart.
struct ProfiledKind<'a> {
    first: &'a Placement,
    count: u64,
    time: f64,
    flops: f64,
    bytes: f64,
    lost: f64,
}

/// The roofline chart of a profile: the roof of `device`, and one point per kind of kernel
/// (same name and shape; the launches of one operator across layers and steps are one point),
/// at its achieved FLOP/s (Σ FLOPs / Σ time): a point's height is what it reached, its roof
/// what it could. The [`MAX_CHART_POINTS`] kinds with the most time are drawn; kinds with no
/// FLOPs or bytes have no place on log axes and are listed as omitted.
///
/// # Errors
/// [`DeviceError::NoBandwidth`] when the chip has no main-memory bandwidth.
pub fn profile_chart(
    profile: &Profile,
    placements: &[Placement],
    device: &Device,
) -> Result<RooflineChart, DeviceError> {
    let mut used: Vec<Precision> = Vec::new();
    for p in placements.iter().filter_map(|p| p.precision) {
        if !used.contains(&p) {
            used.push(p);
        }
    }
    let chip = ChipRoofline::from_device(device, &used)?;
    let mut kinds: Vec<ProfiledKind<'_>> = Vec::new();
    for pl in placements {
        let (flops, bytes) = (pl.flops.get(), pl.bytes.map(|b| b.get()).unwrap_or(0.0));
        let lost = pl.time_lost.map(|x| x.get()).unwrap_or(0.0);
        match kinds
            .iter_mut()
            .find(|k| k.first.name == pl.name && k.first.shaped_as == pl.shaped_as)
        {
            Some(k) => {
                k.count += 1;
                k.time += pl.duration.get();
                k.flops += flops;
                k.bytes += bytes;
                k.lost += lost;
            }
            None => kinds.push(ProfiledKind {
                first: pl,
                count: 1,
                time: pl.duration.get(),
                flops,
                bytes,
                lost,
            }),
        }
    }
    kinds.sort_by(|a, b| b.time.total_cmp(&a.time));
    let mut points = Vec::new();
    let mut omitted = Vec::new();
    let mut beyond = 0usize;
    for k in &kinds {
        let first = k.first;
        let label = first
            .shaped_as
            .as_deref()
            .map(|s| short_name(s, 30))
            .unwrap_or_else(|| short_name(&first.name, 28));
        let i = if k.bytes > 0.0 {
            k.flops / k.bytes
        } else {
            0.0
        };
        let a = if k.time > 0.0 { k.flops / k.time } else { 0.0 };
        if !(i > 0.0 && a > 0.0 && i.is_finite() && a.is_finite()) {
            if !omitted.contains(&label) {
                omitted.push(label);
            }
            continue;
        }
        if points.len() == MAX_CHART_POINTS {
            beyond += 1;
            continue;
        }
        points.push(ChartPoint {
            label,
            series: Series::Operator,
            intensity: i,
            attainable: a,
            tooltip: vec![
                format!("{} ×{}", first.name, k.count),
                first.shaped_as.clone().unwrap_or_default(),
                format!(
                    "measured {} in all · achieved {}",
                    human_seconds(k.time),
                    human_flops_per_s(a)
                ),
                format!(
                    "AI {} FLOP/B · {} lost · {} ({})",
                    human_intensity(i),
                    human_seconds(k.lost),
                    first.regime,
                    first.advice
                ),
            ],
            share: None,
        });
    }
    Ok(RooflineChart {
        title: format!("Measured kernels on {}", device.name),
        subtitle: format!(
            "{} `{}` · one point per kernel kind at its achieved FLOP/s{}",
            profile.format.name(),
            profile.origin,
            if beyond > 0 {
                format!(
                    " · {} kinds with the most time ({beyond} more not drawn)",
                    points.len()
                )
            } else {
                String::new()
            }
        ),
        chips: vec![chip],
        points,
        omitted,
        comm: None,
    })
}

/// The roofline chart of an empirical roof, its sweep (mixbench's experiments) as points.
///
/// # Errors
/// [`DeviceError::NoBandwidth`] when the roof has no main-memory bandwidth.
pub fn roof_chart(roof: &EmpiricalRoof, device: &Device) -> Result<RooflineChart, DeviceError> {
    let all: Vec<Precision> = device.peaks.iter().map(|(p, _)| *p).collect();
    let chip = ChipRoofline::from_device(device, &all)?;
    let points = roof
        .samples
        .iter()
        .filter(|s| s.intensity.get() > 0.0 && s.flops_per_s.get() > 0.0)
        .map(|s| ChartPoint {
            label: s.label.clone(),
            series: Series::Operator,
            intensity: s.intensity.get(),
            attainable: s.flops_per_s.get(),
            tooltip: vec![format!(
                "{}: AI {} FLOP/B, {}, {}",
                s.label,
                human_intensity(s.intensity.get()),
                human_flops_per_s(s.flops_per_s.get()),
                human_bytes_per_s(s.bytes_per_s.get())
            )],
            share: None,
        })
        .collect();
    Ok(RooflineChart {
        title: format!("Empirical roofline of {}", roof.machine),
        subtitle: format!("{} `{}`", roof.format.name(), roof.origin),
        chips: vec![chip],
        points,
        omitted: Vec::new(),
        comm: None,
    })
}

/// An HTML `<section>` for the report: the join of each stage (predicted beside measured) and
/// the `top` kernels ranked by time lost, with their advice. Self-contained markup, no script.
pub fn html_section(
    profile: &Profile,
    placements: &[Placement],
    joins: &[Join],
    top: usize,
) -> String {
    let mut h = format!(
        "<section class=\"profile\" id=\"profile\">\n<h2>Profile: predicted against measured</h2>\n<p class=\"note\">{} <code>{}</code>: {} kernels, {} in all, {} profiler step(s).</p>\n",
        esc(profile.format.name()),
        esc(&profile.origin),
        profile.kernels.len(),
        esc(&human_seconds(profile.total_time.get())),
        profile.steps
    );
    for j in joins {
        h.push_str(&format!(
            "<h3>{}</h3>\n<table class=\"ops\" id=\"profile-join-{}\"><thead><tr><th>operator</th><th>count</th><th>predicted</th><th>+ launch</th><th>measured</th><th>measured / predicted</th><th>matched</th></tr></thead><tbody>\n",
            esc(&j.stage.to_string()),
            j.stage
        ));
        for r in &j.rows {
            h.push_str(&format!(
                "<tr data-name=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                esc(r.name),
                esc(r.name),
                r.count,
                esc(&human_seconds(r.predicted.get())),
                esc(&human_seconds((r.predicted + r.launch).get())),
                esc(&opt(r.measured, |m| human_seconds(m.get()))),
                esc(&ratio_text(r.ratio)),
                if r.expected_events == 0 {
                    "—".to_string()
                } else {
                    format!("{}/{}", r.events, r.expected_events)
                }
            ));
        }
        h.push_str(&format!(
            "</tbody><tfoot><tr class=\"total\"><td>matched operators</td><td></td><td>{}</td><td></td><td>{}</td><td></td><td></td></tr></tfoot></table>\n",
            esc(&human_seconds(j.predicted_matched.get())),
            esc(&human_seconds(j.measured_matched.get())),
        ));
        h.push_str(&format!(
            "<p class=\"note\">Profile time per pass {}: matched {}, unmatched operators {}. Predicted total {}.</p>\n",
            esc(&human_seconds(j.profile_time.get())),
            esc(&human_seconds(j.measured_matched.get())),
            esc(&human_seconds(j.unmatched_time.get())),
            esc(&human_seconds(j.predicted_total.get())),
        ));
        for n in &j.notes {
            h.push_str(&format!("<p class=\"note\">{}</p>\n", esc(n)));
        }
    }
    h.push_str("<h3>Kernels ranked by time lost against their roof</h3>\n<table class=\"ops\" id=\"profile-kernels\"><thead><tr><th>#</th><th class=\"text\">kernel</th><th>time</th><th>AI (FLOP/B)</th><th>achieved</th><th>% of roof</th><th>lost</th><th>regime</th><th class=\"text\">advice</th></tr></thead><tbody>\n");
    for (i, pl) in placements.iter().take(top).enumerate() {
        h.push_str(&format!(
            "<tr><td>{}</td><td class=\"text\" title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"bound-{}\">{}</td><td class=\"text\">{}</td></tr>\n",
            i + 1,
            esc(&pl.name),
            esc(&short_name(&pl.name, 40)),
            esc(&human_seconds(pl.duration.get())),
            esc(&opt(pl.intensity, |x| human_intensity(x.get()))),
            esc(&human_flops_per_s(pl.achieved.get())),
            esc(&pct(pl.fraction_of_roof)),
            esc(&opt(pl.time_lost, |x| human_seconds(x.get()))),
            pl.regime,
            pl.regime,
            esc(&pl.advice),
        ));
    }
    h.push_str("</tbody></table>\n</section>\n");
    h
}

/// `html` with `section` inserted before its `<footer` (or before `</main>`, or at the end).
pub fn insert_section(html: &str, section: &str) -> String {
    let at = html
        .find("<footer")
        .or_else(|| html.find("</main>"))
        .unwrap_or(html.len());
    let mut out = String::with_capacity(html.len() + section.len());
    out.push_str(&html[..at]);
    out.push_str(section);
    out.push_str(&html[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_shortened_in_the_middle() {
        assert_eq!(
            short_name(
                "triad_kernel(float*, const float*, const float*, float, int)",
                44
            ),
            "triad_kernel"
        );
        let s = short_name(
            "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>",
            20,
        );
        assert_eq!(s.chars().count(), 20);
        assert!(s.starts_with("cutlass::") && s.contains('…') && s.ends_with("align4>"));
    }

    #[test]
    fn section_goes_before_the_footer() {
        let h = insert_section("<main>a<footer>f</footer></main>", "<section>s</section>");
        assert_eq!(h, "<main>a<section>s</section><footer>f</footer></main>");
        assert_eq!(insert_section("x", "y"), "xy");
    }
}
