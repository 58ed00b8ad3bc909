//! The communication panel drawn to SVG under the roofline ([`draw_comm`]): `plotters` draws the
//! frame (log-log axes of message size against bus bandwidth) and the roofs; the legend, labels
//! and collectives are an SVG layer on top, placed by the same [`Placer`] as the roofline's
//! labels so that none overlaps another, a point, a roof or the legend.
//!
//! The layer is a `<g class="comm-layer">` holding a `<rect class="comm-plot-area">` with the
//! panel's pixel bounds and axis ranges (`data-x-min` …, as the roofline's `plot-area`), each
//! collective as a `<g class="comm-point">` with its numbers in `data-bytes`, `data-busbw` and
//! an SVG `<title>` (its tooltip), each link roof's label as `<text class="link-label"
//! data-bandwidth="…">`, each ceiling's as `ceiling-label`, each latency roof's as
//! `latency-label`, each ridge's value as `comm-ridge-label` (`data-ridge`, bytes).

use super::axes::comm_axes;
use super::comm::CommChart;
use super::draw::{
    clusters, hex, legend_size, roof_label_spot, write_legend_at, write_point_labels, LegendEntry,
};
use super::frame::{human_tick, Frame, LogLogChart};
use super::layout::{
    leader, marker, note_lines, text_el, text_width, wrap, Placer, Rect, AROUND, BELOW_RIGHT,
};
use super::{pe, xml_escape, PlotError, Series};
use crate::units::{human_bytes, human_bytes_per_s, human_seconds};
use plotters::coord::Shift;
use plotters::prelude::*;
use roofline_core::comm::collective::Tier;
use std::fmt::Write as _;

/// The colour of a tier's roofs: scale-up purple, scale-out red, PCIe green.
fn tier_rgb(t: Tier) -> (u8, u8, u8) {
    match t {
        Tier::ScaleUp => (142, 68, 173),
        Tier::ScaleOut => (192, 57, 43),
        Tier::Pcie => (22, 160, 133),
        Tier::Local => (127, 140, 141),
    }
}

/// Tick label of a whole decade: bytes on x (`1 MB`), `unit` on y (`100 GB/s`).
fn comm_tick(v: f64, unit: &str) -> String {
    human_tick(v, if unit.is_empty() { "B" } else { unit })
}

/// Whether a roof's ceiling differs from its link's bandwidth (it is then drawn on its own).
fn own_ceiling(ceiling: f64, bandwidth: f64) -> bool {
    (ceiling - bandwidth).abs() > 1e-6 * bandwidth
}

/// Draws `comm` on `area` (the strip under the roofline) and appends its layer to `layer`.
///
/// # Errors
/// A [`PlotError`] if `plotters` fails to draw (it does not for finite, positive values).
pub(super) fn draw_comm(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    comm: &CommChart,
    layer: &mut String,
) -> Result<(), PlotError> {
    let ax = comm_axes(comm);
    let mut ch = Frame {
        x_desc: "message size S (bytes, as nccl-tests counts them)",
        y_desc: "bus bandwidth S·f / t (B/s)",
        y_unit: "B/s",
        tick: comm_tick,
        ..Frame::new(&comm.title, &comm.subtitle, ax.x, ax.y)
    }
    .draw(area)?;
    draw_roofs(&mut ch, comm, ax.x, ax.y)?;
    let (px, py) = ch.plotting_area().get_pixel_range();
    let plot = Rect::of_pixels(px, py);
    let to_px = |x: f64, y: f64| {
        let (a, b) = ch.backend_coord(&(x, y));
        (a as f64, b as f64)
    };
    // Labels with no free spot are listed in the legend: drawn again until all are listed.
    let mut note: Vec<String> = Vec::new();
    let mut body = String::new();
    for _ in 0..6 {
        body.clear();
        let dropped = comm_layer(&mut body, comm, &ax, &plot, &to_px, &note);
        let listed = dropped.iter().all(|d| note.contains(d));
        for d in dropped {
            if !note.contains(&d) {
                note.push(d);
            }
        }
        if listed {
            break;
        }
    }
    layer.push_str(&body);
    Ok(())
}

/// The panel's layer over `plotters`' drawing (its legend's last lines `note`, the labels left
/// out), and the labels that found no free spot.
fn comm_layer(
    layer: &mut String,
    comm: &CommChart,
    ax: &super::Axes,
    plot: &Rect,
    to_px: &dyn Fn(f64, f64) -> (f64, f64),
    note: &[String],
) -> Vec<String> {
    let mut placer = Placer::within(plot);
    let ((x0, x1), (y0, y1)) = (ax.x, ax.y);
    let _ = writeln!(
        layer,
        r#"<g class="comm-layer"><rect class="comm-plot-area" x="{}" y="{}" width="{}" height="{}" fill="none" stroke="none" data-x-min="{x0:e}" data-x-max="{x1:e}" data-y-min="{y0:e}" data-y-max="{y1:e}"/>"#,
        plot.x0,
        plot.y0,
        plot.x1 - plot.x0,
        plot.y1 - plot.y0
    );
    let pts: Vec<(f64, f64)> = comm
        .points
        .iter()
        .map(|p| to_px(p.bytes, p.busbw))
        .collect();
    for &(x, y) in &pts {
        placer.taken.push(Rect::around(x, y, 7.5));
    }
    roof_obstacles(comm, &ax.x, ax.y.0, &to_px, plot, &mut placer);
    let mut legend = legend_entries(comm);
    if !note.is_empty() {
        legend.extend(note_lines(note).into_iter().map(|l| (l, None, None)));
    }
    let spot = legend_spot(&placer, plot, legend_size(plot, &legend));
    write_legend_at(layer, &mut placer, spot, &legend, plot);
    write_roof_labels(layer, &mut placer, plot, comm, &to_px);
    write_points(layer, comm, &pts);
    let points = comm.points.iter().map(|p| (p.series, p.label.clone()));
    write_point_labels(layer, &mut placer, &clusters(points, &pts));
    // A latency roof's label can sit anywhere along it: after the points' labels.
    write_latency_labels(layer, &mut placer, comm, ax.x.0, ax.y.0, &to_px);
    let _ = writeln!(layer, "</g>");
    placer.dropped
}

/// Where the legend (`w × h`) goes: bottom right when that is clear of every point and roof
/// (it usually is: a large message runs near its ceiling); else the first clear spot scanning
/// from the top left (above the latency roofs, where no collective can be) in 10 px steps; else
/// the spot that overlaps least.
fn legend_spot(placer: &Placer, plot: &Rect, (w, h): (f64, f64)) -> (f64, f64) {
    let cost = |x: f64, y: f64| {
        let r = Rect {
            x0: x - 4.0,
            y0: y - 4.0,
            x1: x + w + 4.0,
            y1: y + h + 4.0,
        };
        placer.taken.iter().map(|t| t.overlap(&r)).sum::<f64>()
    };
    let corner = (plot.x1 - 10.0 - w, plot.y1 - 10.0 - h);
    if cost(corner.0, corner.1) == 0.0 {
        return corner;
    }
    let mut best = (f64::INFINITY, corner);
    let mut y = plot.y0 + 10.0;
    while y + h <= plot.y1 - 10.0 {
        let mut x = plot.x0 + 10.0;
        while x + w <= plot.x1 - 10.0 {
            let c = cost(x, y);
            if c == 0.0 {
                return (x, y);
            }
            if c < best.0 {
                best = (c, (x, y));
            }
            x += 10.0;
        }
        y += 10.0;
    }
    best.1
}

/// Where a latency roof starts: the left edge, or where the diagonal y = S · f / t_α enters
/// through the bottom edge.
fn latency_start(x0: f64, y0: f64, k: f64) -> f64 {
    x0.max(y0 / k)
}

/// The roofs, drawn by plotters: each link's roof y = B across the panel (bold); each latency
/// roof y = S · f / t_α dashed up to its ridge (a dot), and its ceiling from the ridge to the
/// right edge (thin) where it is not the link's.
fn draw_roofs(
    ch: &mut LogLogChart<'_, '_>,
    comm: &CommChart,
    (x0, x1): (f64, f64),
    (y0, _): (f64, f64),
) -> Result<(), PlotError> {
    for l in &comm.links {
        let (r, g, b) = tier_rgb(l.tier);
        ch.draw_series(LineSeries::new(
            vec![(x0, l.bandwidth), (x1, l.bandwidth)],
            RGBColor(r, g, b).stroke_width(3),
        ))
        .map_err(pe)?;
    }
    for roof in &comm.roofs {
        let link = &comm.links[roof.link];
        let (r, g, b) = tier_rgb(link.tier);
        let color = RGBColor(r, g, b);
        let ridge = roof.ridge();
        let has_latency = roof.latency > 0.0 && ridge > 0.0;
        if has_latency {
            let k = roof.bus_factor / roof.latency;
            let xa = latency_start(x0, y0, k);
            if xa < ridge {
                ch.draw_series(DashedLineSeries::new(
                    vec![(xa, xa * k), (ridge, roof.ceiling)],
                    7,
                    4,
                    color.stroke_width(2),
                ))
                .map_err(pe)?;
            }
            ch.draw_series(std::iter::once(Circle::new(
                (ridge, roof.ceiling),
                4,
                color.filled(),
            )))
            .map_err(pe)?;
        }
        if own_ceiling(roof.ceiling, link.bandwidth) {
            let from = if has_latency { ridge } else { x0 };
            ch.draw_series(LineSeries::new(
                vec![(from, roof.ceiling), (x1, roof.ceiling)],
                color.mix(0.55).stroke_width(1),
            ))
            .map_err(pe)?;
        }
    }
    Ok(())
}

/// The legend's lines: each series drawn, each link's roof, what the dashed and thin lines are,
/// and the collectives left out.
fn legend_entries(comm: &CommChart) -> Vec<LegendEntry> {
    let mut legend: Vec<LegendEntry> = Vec::new();
    for s in [Series::PrefillCollective, Series::DecodeCollective] {
        if comm.points.iter().any(|p| p.series == s) {
            legend.push((s.name().to_string(), Some(s), None));
        }
    }
    for l in &comm.links {
        legend.push((
            format!(
                "{} links: {} per GPU per direction",
                l.tier,
                human_bytes_per_s(l.bandwidth)
            ),
            None,
            Some(hex(tier_rgb(l.tier))),
        ));
    }
    if comm.roofs.iter().any(|r| r.latency > 0.0) {
        legend.push((
            "dashed: latency roof S·f/t_α; dot: ridge, t_α = t_β".into(),
            None,
            None,
        ));
    }
    if comm
        .roofs
        .iter()
        .any(|r| own_ceiling(r.ceiling, comm.links[r.link].bandwidth))
    {
        legend.push((
            "thin: a ceiling S·f/t_β below or above B".into(),
            None,
            None,
        ));
    }
    if !comm.omitted.is_empty() {
        let mut names = comm.omitted.clone();
        names[0] = format!("not plotted (no link crossed): {}", names[0]);
        for line in wrap(&names, 64) {
            legend.push((line, None, None));
        }
    }
    legend
}

/// The roofs as obstacles for label placement: each horizontal roof a thin band, each latency
/// roof a chain of small boxes, each ridge a box.
fn roof_obstacles(
    comm: &CommChart,
    &(x0, _): &(f64, f64),
    y0: f64,
    to_px: &dyn Fn(f64, f64) -> (f64, f64),
    plot: &Rect,
    placer: &mut Placer,
) {
    let band = |y: f64, from: f64| Rect {
        x0: from,
        y0: y - 1.5,
        x1: plot.x1,
        y1: y + 1.5,
    };
    for l in &comm.links {
        let (_, y) = to_px(x0, l.bandwidth);
        placer.taken.push(band(y, plot.x0));
    }
    for r in &comm.roofs {
        let ridge = r.ridge();
        if r.latency > 0.0 && ridge > 0.0 {
            let xa = latency_start(x0, y0, r.bus_factor / r.latency);
            let (ax0, ay0) = to_px(xa, r.latency_roof(xa));
            let (ax1, ay1) = to_px(ridge, r.ceiling);
            let steps = (((ax1 - ax0).powi(2) + (ay1 - ay0).powi(2)).sqrt() / 8.0).ceil() as usize;
            for k in 0..=steps {
                let t = k as f64 / steps.max(1) as f64;
                placer.taken.push(Rect::around(
                    ax0 + t * (ax1 - ax0),
                    ay0 + t * (ay1 - ay0),
                    3.0,
                ));
            }
            placer.taken.push(Rect::around(ax1, ay1, 5.0));
            if own_ceiling(r.ceiling, comm.links[r.link].bandwidth) {
                placer.taken.push(band(ay1, ax1));
            }
        } else if own_ceiling(r.ceiling, comm.links[r.link].bandwidth) {
            let (_, y) = to_px(x0, r.ceiling);
            placer.taken.push(band(y, plot.x0));
        }
    }
}

/// Each link roof's label (`NVLink 4 + NVSwitch 450.0 GB/s`) and each ceiling's, above its
/// line at the right end (moved left, then under it, while it would overlap something); each
/// ridge's value beside its dot.
fn write_roof_labels(
    layer: &mut String,
    placer: &mut Placer,
    plot: &Rect,
    comm: &CommChart,
    to_px: &dyn Fn(f64, f64) -> (f64, f64),
) {
    let x_any = comm.points.first().map_or(1.0, |p| p.bytes);
    for l in &comm.links {
        let (_, y) = to_px(x_any, l.bandwidth);
        let text = format!("{} {}", l.name, human_bytes_per_s(l.bandwidth));
        let Some((x, base, rect)) =
            roof_label_spot(placer, plot, y, text_width(&text, 13.0), plot.x0)
        else {
            placer.dropped.push(text);
            continue;
        };
        placer.taken.push(rect);
        let _ = writeln!(
            layer,
            r#"<text class="link-label" x="{x:.1}" y="{base:.1}" font-family="{}" font-size="13" fill="{}" text-anchor="start" data-bandwidth="{:e}">{}</text>"#,
            super::FONT,
            hex(tier_rgb(l.tier)),
            l.bandwidth,
            xml_escape(&text)
        );
    }
    // Ceilings of one value on one link share a label (`all-reduce ring ll, all-gather ring ll
    // 225.0 GB/s`): two labels of the same height would lie on one another.
    let mut ceilings: Vec<(usize, f64, String, (f64, f64))> = Vec::new();
    for r in &comm.roofs {
        if !own_ceiling(r.ceiling, comm.links[r.link].bandwidth) {
            continue;
        }
        let ridge = r.ridge();
        let at = if r.latency > 0.0 && ridge > 0.0 {
            to_px(ridge, r.ceiling)
        } else {
            (plot.x0, to_px(x_any, r.ceiling).1)
        };
        match ceilings
            .iter_mut()
            .find(|(l, c, _, _)| *l == r.link && !own_ceiling(r.ceiling, *c))
        {
            Some((_, _, names, _)) => {
                names.push_str(", ");
                names.push_str(&r.label());
            }
            None => ceilings.push((r.link, r.ceiling, r.label(), at)),
        }
    }
    for (link, ceiling, names, (rx, ry)) in &ceilings {
        let color = hex(tier_rgb(comm.links[*link].tier));
        let text = format!("{names} {}", human_bytes_per_s(*ceiling));
        let Some((x, base, rect)) =
            roof_label_spot(placer, plot, *ry, text_width(&text, 12.0), rx + 6.0)
        else {
            placer.dropped.push(text);
            continue;
        };
        placer.taken.push(rect);
        text_el(layer, "ceiling-label", x, base, 12.0, &color, &text);
    }
    for r in &comm.roofs {
        let color = hex(tier_rgb(comm.links[r.link].tier));
        let ridge = r.ridge();
        let has_latency = r.latency > 0.0 && ridge > 0.0;
        let (rx, ry) = if has_latency {
            to_px(ridge, r.ceiling)
        } else {
            (plot.x0, to_px(x_any, r.ceiling).1)
        };
        if has_latency {
            let text = human_bytes(ridge);
            let size = 12.0;
            let w = text_width(&text, size);
            let Some((tx, ty, far)) =
                placer.place((rx, ry), (w, size + 2.0), 5.0, &BELOW_RIGHT, &text)
            else {
                continue;
            };
            if far {
                leader(layer, (rx, ry), (tx, ty, w, size + 2.0), &color);
            }
            let _ = writeln!(
                layer,
                r#"<text class="comm-ridge-label" x="{tx:.1}" y="{:.1}" font-family="{}" font-size="{size}" fill="{color}" text-anchor="start" data-ridge="{ridge:e}">{}</text>"#,
                ty + size,
                super::FONT,
                xml_escape(&text)
            );
        }
    }
}

/// Each latency roof's label (`all-reduce ring ll: t_α 15.00 µs`), beside the middle of its
/// visible stretch (a leader line when pushed away).
fn write_latency_labels(
    layer: &mut String,
    placer: &mut Placer,
    comm: &CommChart,
    x0: f64,
    y0: f64,
    to_px: &dyn Fn(f64, f64) -> (f64, f64),
) {
    for r in &comm.roofs {
        let ridge = r.ridge();
        if !(r.latency > 0.0 && ridge > 0.0) {
            continue;
        }
        let xa = latency_start(x0, y0, r.bus_factor / r.latency);
        // The geometric middle of the drawn stretch: its pixel middle on log axes.
        let xm = (xa * ridge).sqrt();
        let (mx, my) = to_px(xm, r.latency_roof(xm));
        let text = format!("{}: t_α {}", r.label(), human_seconds(r.latency));
        let size = 12.0;
        let w = text_width(&text, size);
        let color = hex(tier_rgb(comm.links[r.link].tier));
        let Some((tx, ty, far)) = placer.place((mx, my), (w, size + 2.0), 6.0, &AROUND, &text)
        else {
            continue;
        };
        if far {
            leader(layer, (mx, my), (tx, ty, w, size + 2.0), &color);
        }
        text_el(layer, "latency-label", tx, ty + size, size, &color, &text);
    }
}

/// The collectives: one marker with a tooltip each, at its pixel `pts[i]`.
fn write_points(layer: &mut String, comm: &CommChart, pts: &[(f64, f64)]) {
    let _ = writeln!(layer, r#"<g class="comm-points">"#);
    for (p, &(x, y)) in comm.points.iter().zip(pts) {
        let stage = match p.series {
            Series::PrefillCollective => "prefill",
            _ => "decode",
        };
        let _ = write!(
            layer,
            r#"<g class="comm-point" data-stage="{stage}" data-name="{}" data-collective="{}" data-bytes="{:e}" data-busbw="{:e}"><title>{}</title>"#,
            xml_escape(&p.label),
            xml_escape(&p.collective),
            p.bytes,
            p.busbw,
            xml_escape(&p.tooltip.join("\n"))
        );
        marker(layer, p.series, x, y, p.series.color());
        let _ = writeln!(layer, "</g>");
    }
    let _ = writeln!(layer, "</g>");
}

#[cfg(test)]
mod tests {
    use super::super::{render_svg, RooflineChart};
    use super::*;
    use roofline_core::cited::Cited;
    use roofline_core::comm::{Fabric, LinkTier, System};
    use roofline_core::fixtures::{h100_sxm, llama2_7b};
    use roofline_core::parallel::{analyze_parallel, Layout};
    use roofline_core::units::{BytesPerSec, Seconds};
    use roofline_core::workload::{Stage, Workload};

    /// Four nodes of eight: 450 GB/s and 1 µs inside a node, 50 GB/s and 5 µs between nodes.
    fn system() -> Result<System, roofline_core::comm::SystemError> {
        let tier = |name: &str, b: f64, a: f64| {
            LinkTier::new(
                name,
                Cited::new(BytesPerSec(b), "test"),
                Cited::new(Seconds(a), "test"),
            )
        };
        let fabric = Fabric {
            scale_up: Some(tier("NVLink", 450e9, 1e-6)),
            scale_out: Some(tier("InfiniBand NDR", 50e9, 5e-6)),
            ..Fabric::default()
        };
        System::new("four-nodes", "4 × 8 H100", h100_sxm(), 8, 4, fabric)
    }

    /// What a parse of the SVG did not find.
    const MISSING: &str = "an element or attribute the SVG lacks";

    /// The value of `name="…"` in the start tag `e`.
    fn attr(e: &str, name: &str) -> Option<f64> {
        let key = format!(" {name}=\"");
        let i = e.find(&key)? + key.len();
        e[i..i + e[i..].find('"')?].parse().ok()
    }

    #[test]
    fn labels_of_the_panel_overlap_nothing() -> Result<(), Box<dyn std::error::Error>> {
        // Both stages, TP 8 with sequence parallelism, 4 pipeline stages over 4 nodes: the
        // collectives of two tiers, several algorithms and protocols, two stages.
        let model = llama2_7b();
        let system = system()?;
        let layout = Layout {
            tp: 8,
            pp: 4,
            sequence_parallel: true,
            ..Layout::default()
        };
        let stages: Vec<_> = [Stage::Prefill, Stage::Decode]
            .into_iter()
            .map(|st| {
                let w = Workload::new(st, 8, 2048, 2048);
                analyze_parallel(
                    &model,
                    &w,
                    &system,
                    layout,
                    roofline_core::memory::Reserve::DEFAULT,
                )
            })
            .collect::<Result<_, _>>()?;
        let chart = RooflineChart::for_parallel(&model, &system, &stages)?;
        let comm = chart.comm.as_ref().ok_or("a communication panel")?;
        assert_eq!(comm.links.len(), 2, "{:?}", comm.links);
        assert!(comm.roofs.len() >= 3, "{:?}", comm.roofs);
        let svg = render_svg(&chart)?;
        let layer = &svg[svg.find("class=\"comm-layer\"").ok_or(MISSING)?..];
        let area = {
            let i = layer
                .find("<rect class=\"comm-plot-area\"")
                .ok_or(MISSING)?;
            let e = &layer[i..i + layer[i..].find('>').ok_or(MISSING)?];
            let (x, y) = (attr(e, "x").ok_or(MISSING)?, attr(e, "y").ok_or(MISSING)?);
            Rect {
                x0: x,
                y0: y,
                x1: x + attr(e, "width").ok_or(MISSING)?,
                y1: y + attr(e, "height").ok_or(MISSING)?,
            }
        };
        // Every label's box (text from its baseline up by its size, 2 px below), by class.
        let mut labels: Vec<(String, Rect)> = Vec::new();
        let mut rest = layer;
        while let Some(i) = rest.find("<text class=\"") {
            let tail = &rest[i..];
            let open = &tail[..tail.find('>').ok_or(MISSING)?];
            let body = &tail[open.len() + 1..tail.find("</text>").ok_or(MISSING)?];
            let class = &open[13..open[13..].find('"').ok_or(MISSING)? + 13];
            rest = &tail[open.len()..];
            if class == "legend-text" {
                continue;
            }
            let (x, y, size) = (
                attr(open, "x").ok_or(MISSING)?,
                attr(open, "y").ok_or(MISSING)?,
                attr(open, "font-size").ok_or(MISSING)?,
            );
            let text = body.replace("&apos;", "'").replace("&amp;", "&");
            let w = text_width(&text, size);
            labels.push((
                format!("{class} `{text}`"),
                Rect {
                    x0: x,
                    y0: y - size,
                    x1: x + w,
                    y1: y + 2.0,
                },
            ));
        }
        assert!(labels.iter().any(|(c, _)| c.starts_with("link-label")));
        assert!(labels.iter().any(|(c, _)| c.starts_with("latency-label")));
        assert!(labels.iter().any(|(c, _)| c.starts_with("point-text")));
        let legend = {
            let i = layer.find("<g class=\"legend\"><rect").ok_or(MISSING)? + 18;
            let e = &layer[i..i + layer[i..].find('>').ok_or(MISSING)?];
            let (x, y) = (attr(e, "x").ok_or(MISSING)?, attr(e, "y").ok_or(MISSING)?);
            Rect {
                x0: x,
                y0: y,
                x1: x + attr(e, "width").ok_or(MISSING)?,
                y1: y + attr(e, "height").ok_or(MISSING)?,
            }
        };
        let markers: Vec<Rect> = layer
            .match_indices("<g class=\"comm-point\"")
            .map(|(i, _)| {
                let g = &layer[i..];
                let p = &g[g.find("points=\"").ok_or(MISSING)? + 8..];
                let first = p.split_whitespace().next().ok_or(MISSING)?;
                let (x, y) = first.split_once(',').ok_or(MISSING)?;
                // The first vertex is the top tip, 7.5 px above the centre.
                let (x, y): (f64, f64) = (x.parse()?, y.parse()?);
                Ok(Rect::around(x, y + 7.5, 6.0))
            })
            .collect::<Result<_, Box<dyn std::error::Error>>>()?;
        assert_eq!(markers.len(), comm.points.len());
        for (i, (a, ra)) in labels.iter().enumerate() {
            assert!(ra.inside(&area), "{a} leaves the panel");
            assert_eq!(ra.overlap(&legend), 0.0, "{a} overlaps the legend");
            for m in &markers {
                assert_eq!(ra.overlap(m), 0.0, "{a} covers a collective");
            }
            for (b, rb) in &labels[i + 1..] {
                assert_eq!(ra.overlap(rb), 0.0, "{a} overlaps {b}");
            }
        }
        Ok(())
    }
}
