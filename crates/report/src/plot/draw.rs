//! The roofline plot drawn to SVG ([`render_svg`]): the roofs by `plotters`, then the legend,
//! the labels and the points as an SVG layer on top.

use super::axes::tick_label;
use super::axes::{axes, Axes};
use super::chart::{RooflineChart, Series};
use super::frame::{Frame, LogLogChart};
use super::layout::{
    leader, marker, marker_scaled, note_lines, stage_list, text_el, text_width, wrap, Placer, Rect,
    AROUND, BELOW_RIGHT,
};
use super::xml_escape;
use super::{pe, PlotError, COMM_HEIGHT, HEIGHT, WIDTH};
use crate::units::{human, human_bytes_per_s, human_intensity};
use plotters::prelude::*;
use std::fmt::Write as _;

const CHIP_COLORS: [(u8, u8, u8); 5] = [
    (44, 62, 80),
    (142, 68, 173),
    (22, 160, 133),
    (192, 57, 43),
    (183, 121, 31),
];

pub(super) fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02X}{g:02X}{b:02X}")
}

/// Points drawn within a few pixels of each other: the centre and each (series, label).
pub(super) type Cluster = (f64, f64, Vec<(Series, String)>);

/// A legend line: its text, and the point marker or the line colour drawn before it.
pub(super) type LegendEntry = (String, Option<Series>, Option<String>);

/// Maps a data point (intensity, FLOP/s) to its pixel.
type ToPx<'a> = dyn Fn(f64, f64) -> (f64, f64) + 'a;

/// A ridge point's label: the marker's pixel, the value, the chip's colour.
struct RidgeLabel {
    x: f64,
    y: f64,
    value: String,
    color: String,
}

/// A compute roof's label: the roof's pixel height, precisions, peak, bold or not, the chip's
/// colour, and the ridge point's pixel x (the label stays right of it).
struct RoofLabel {
    y: f64,
    label: String,
    value: String,
    emphasis: bool,
    color: String,
    ridge_x: f64,
}

/// The chart as an SVG document, text in [`FONT`](super::FONT): `WIDTH × HEIGHT` pixels, and
/// with a communication panel ([`RooflineChart::comm`]) `COMM_HEIGHT` more, the panel under the
/// roofline ([`super::comm_draw`]).
///
/// # Errors
/// A [`PlotError`] if `plotters` fails to draw (it does not for finite, positive values).
pub fn render_svg(chart: &RooflineChart) -> Result<String, PlotError> {
    let ax = axes(chart);
    let mut svg = String::new();
    let mut layer = String::new();
    {
        // With collectives, the communication panel goes under the roofline, which keeps its
        // pixels.
        let height = HEIGHT + chart.comm.as_ref().map_or(0, |_| COMM_HEIGHT);
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(pe)?;
        let (top, bottom) = match &chart.comm {
            Some(comm) => {
                let (top, bottom) = root.split_vertically(HEIGHT);
                (top, Some((bottom, comm)))
            }
            None => (root.clone(), None),
        };
        let mut ch = Frame {
            subtitle_size: 14,
            tick: tick_label,
            ..Frame::new(&chart.title, &chart.subtitle, ax.x, ax.y)
        }
        .draw(&top)?;
        draw_roofs(&mut ch, chart, &ax)?;

        let (px, py) = ch.plotting_area().get_pixel_range();
        let plot = Rect::of_pixels(px, py);
        let to_px = |x: f64, y: f64| {
            let (a, b) = ch.backend_coord(&(x, y));
            (a as f64, b as f64)
        };
        let pts: Vec<(f64, f64)> = chart
            .points
            .iter()
            .map(|p| to_px(p.intensity, p.attainable))
            .collect();
        // Labels with no free spot are listed in the legend, which then takes more room: drawn
        // again until every label left out is listed.
        let mut note: Vec<String> = Vec::new();
        for _ in 0..6 {
            let (body, dropped) = write_layer(chart, &ax, &plot, &to_px, &pts, &note);
            let listed = dropped.iter().all(|d| note.contains(d));
            if listed {
                layer = body;
                break;
            }
            for d in dropped {
                if !note.contains(&d) {
                    note.push(d);
                }
            }
            layer = body;
        }
        if let Some((area, comm)) = &bottom {
            super::comm_draw::draw_comm(area, comm, &mut layer)?;
        }
        root.present().map_err(pe)?;
    }
    match svg.rfind("</svg>") {
        Some(i) => svg.insert_str(i, &layer),
        None => return Err(PlotError("plotters wrote no closing </svg>".into())),
    }
    Ok(svg)
}

/// The marker scale of a point: its area in proportion to its share of the step time (a
/// circle of radius `MAX_RADIUS · √share`), never under `MIN_RADIUS`; 1 (5 px) without a share.
fn marker_scale(share: Option<f64>) -> f64 {
    match share {
        Some(s) if s.is_finite() && s >= 0.0 => (MAX_RADIUS * s.sqrt()).max(MIN_RADIUS) / 5.0,
        _ => 1.0,
    }
}

/// The radius of a circle marker of a point with all of the step time, pixels.
const MAX_RADIUS: f64 = 30.0;
/// The smallest radius of a circle marker, pixels.
const MIN_RADIUS: f64 = 3.5;

/// The layer over `plotters`' drawing: plot area, legend (its last lines `note`, the labels
/// left out), labels and points; and the labels that found no free spot.
fn write_layer(
    chart: &RooflineChart,
    ax: &Axes,
    plot: &Rect,
    to_px: &ToPx<'_>,
    pts: &[(f64, f64)],
    note: &[String],
) -> (String, Vec<String>) {
    let mut layer = String::new();
    let mut placer = Placer::within(plot);
    write_plot_area(&mut layer, plot, ax);
    // Point markers are obstacles.
    for (p, &(x, y)) in chart.points.iter().zip(pts) {
        placer
            .taken
            .push(Rect::around(x, y, 6.0 * marker_scale(p.share) + 1.0));
    }
    let (ridge_labels, roof_labels) = roof_obstacles(chart, ax, to_px, plot, &mut placer);
    let mut legend = legend_entries(chart);
    if !note.is_empty() {
        legend.extend(note_lines(note).into_iter().map(|l| (l, None, None)));
    }
    write_legend(&mut layer, &mut placer, plot, &legend);
    let multi = chart.chips.len() > 1;
    write_roof_labels(&mut layer, &mut placer, plot, roof_labels, multi);
    write_ridge_labels(&mut layer, &mut placer, &ridge_labels);
    write_memory_labels(&mut layer, &mut placer, chart, ax, to_px);
    write_points(&mut layer, chart, pts);
    let points = chart.points.iter().map(|p| (p.series, p.label.clone()));
    write_point_labels(&mut layer, &mut placer, &clusters(points, pts));
    let _ = writeln!(layer, "</g>");
    (layer, placer.dropped)
}

/// Roofs, drawn by plotters: per chip the memory roof up to the highest ridge, then each
/// compute roof from its ridge point (marked) to the right edge.
fn draw_roofs(
    ch: &mut LogLogChart<'_, '_>,
    chart: &RooflineChart,
    ax: &Axes,
) -> Result<(), PlotError> {
    let (x0, x1) = ax.x;
    let (y0, _) = ax.y;
    for (ci, c) in chart.chips.iter().enumerate() {
        let rgb = CHIP_COLORS[ci % CHIP_COLORS.len()];
        let color = RGBColor(rgb.0, rgb.1, rgb.2);
        let w = c.bandwidth;
        let top = c.roofs.iter().map(|r| r.peak).fold(0.0, f64::max);
        if top <= 0.0 || w <= 0.0 {
            continue;
        }
        let xa = x0.max(y0 / w);
        // A roof an earlier chip has too is drawn dashed over that chip's solid one.
        let earlier = &chart.chips[..ci];
        let same = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs();
        let memory = vec![(xa, xa * w), (top / w, top)];
        if earlier.iter().any(|o| same(o.bandwidth, w)) {
            ch.draw_series(DashedLineSeries::new(memory, 10, 7, color.stroke_width(3)))
                .map_err(pe)?;
        } else {
            ch.draw_series(LineSeries::new(memory, color.stroke_width(3)))
                .map_err(pe)?;
        }
        for r in &c.roofs {
            let ridge = r.peak / w;
            let style = if r.emphasis {
                color.stroke_width(3)
            } else {
                color.mix(0.45).stroke_width(1)
            };
            let line = vec![(ridge, r.peak), (x1, r.peak)];
            if earlier
                .iter()
                .any(|o| o.roofs.iter().any(|q| same(q.peak, r.peak)))
            {
                ch.draw_series(DashedLineSeries::new(line, 10, 7, style))
                    .map_err(pe)?;
            } else {
                ch.draw_series(LineSeries::new(line, style)).map_err(pe)?;
            }
            ch.draw_series(std::iter::once(Circle::new(
                (ridge, r.peak),
                4,
                color.filled(),
            )))
            .map_err(pe)?;
        }
    }
    Ok(())
}

/// Opens the SVG layer with the plot area's pixel bounds and axis ranges.
fn write_plot_area(layer: &mut String, plot: &Rect, ax: &Axes) {
    let (x0, x1) = ax.x;
    let (y0, y1) = ax.y;
    let _ = writeln!(
        layer,
        r#"<g class="roofline-layer"><rect class="plot-area" x="{}" y="{}" width="{}" height="{}" fill="none" stroke="none" data-x-min="{x0:e}" data-x-max="{x1:e}" data-y-min="{y0:e}" data-y-max="{y1:e}"/>"#,
        plot.x0,
        plot.y0,
        plot.x1 - plot.x0,
        plot.y1 - plot.y0
    );
}

/// The legend's lines: each series drawn, each chip's memory roof, what a bold roof means
/// (when some are bold and some not), and the operators left out.
fn legend_entries(chart: &RooflineChart) -> Vec<LegendEntry> {
    let mut legend: Vec<LegendEntry> = Vec::new();
    for s in [
        Series::Prefill,
        Series::Decode,
        Series::Operator,
        Series::FusedPrefill,
        Series::FusedDecode,
    ] {
        if chart.points.iter().any(|p| p.series == s) {
            let label = match s {
                Series::Operator => "operator (kernel)".to_string(),
                Series::FusedPrefill | Series::FusedDecode => format!("{} kernel", s.name()),
                _ => format!("{} operator", s.name()),
            };
            legend.push((label, Some(s), None));
        }
    }
    if chart.points.iter().any(|p| p.share.is_some()) {
        legend.push(("marker area ∝ share of its stage's time".into(), None, None));
    }
    for (ci, c) in chart.chips.iter().enumerate() {
        legend.push((
            format!("{}: memory roof {}", c.name, human_bytes_per_s(c.bandwidth)),
            None,
            Some(hex(CHIP_COLORS[ci % CHIP_COLORS.len()])),
        ));
    }
    if chart
        .chips
        .iter()
        .any(|c| c.roofs.iter().any(|r| r.emphasis))
        && chart
            .chips
            .iter()
            .any(|c| c.roofs.iter().any(|r| !r.emphasis))
    {
        legend.push((
            "bold roof: the peak these operators are held against".into(),
            None,
            None,
        ));
    }
    if !chart.omitted.is_empty() {
        let mut names = chart.omitted.clone();
        names[0] = format!("not plotted (0 FLOP): {}", names[0]);
        for line in wrap(&names, 64) {
            legend.push((line, None, None));
        }
    }
    legend
}

/// Legend, bottom right: under the compute roofs and right of the memory roof, where no
/// operator sits (every operator lies on the roofline).
pub(super) fn write_legend(
    layer: &mut String,
    placer: &mut Placer,
    plot: &Rect,
    legend: &[LegendEntry],
) {
    let (lw, lh) = legend_size(plot, legend);
    // Bottom right, else top left (above the memory roof), else bottom left: the first clear
    // of every line and point.
    let spots = [
        (plot.x1 - 10.0 - lw, plot.y1 - 10.0 - lh),
        (plot.x0 + 10.0, plot.y0 + 10.0),
        (plot.x0 + 10.0, plot.y1 - 10.0 - lh),
    ];
    let clear = |&(x, y): &(f64, f64)| {
        let r = Rect {
            x0: x - 4.0,
            y0: y - 4.0,
            x1: x + lw + 4.0,
            y1: y + lh + 4.0,
        };
        !placer.taken.iter().any(|t| t.overlap(&r) > 0.0)
            && !placer.segments.iter().any(|s| r.crossed_by(*s))
    };
    let (lx, ly) = spots.iter().copied().find(clear).unwrap_or(spots[0]);
    write_legend_at(layer, placer, (lx, ly), legend, plot);
}

/// The legend's box, pixels: as wide as its widest line (within the plot area), 19 px a line.
pub(super) fn legend_size(plot: &Rect, legend: &[LegendEntry]) -> (f64, f64) {
    let lw = legend
        .iter()
        .map(|(t, _, _)| text_width(t, 13.0) + 34.0)
        .fold(0.0, f64::max)
        .min(plot.x1 - plot.x0 - 20.0);
    (lw, legend.len() as f64 * 19.0 + 10.0)
}

/// The legend with its top-left corner at `(lx, ly)`, its box (and 4 px around) taken from
/// `placer`.
pub(super) fn write_legend_at(
    layer: &mut String,
    placer: &mut Placer,
    (lx, ly): (f64, f64),
    legend: &[LegendEntry],
    plot: &Rect,
) {
    let lsize = 13.0;
    let (lw, lh) = legend_size(plot, legend);
    if legend.is_empty() {
        return;
    }
    placer.taken.push(Rect {
        x0: lx - 4.0,
        y0: ly - 4.0,
        x1: lx + lw + 4.0,
        y1: ly + lh + 4.0,
    });
    let _ = writeln!(
        layer,
        r##"<g class="legend"><rect x="{lx:.1}" y="{ly:.1}" width="{lw:.1}" height="{lh:.1}" fill="white" fill-opacity="0.92" stroke="#bbbbbb"/>"##
    );
    for (i, (t, s, color)) in legend.iter().enumerate() {
        let cy = ly + 15.0 + i as f64 * 19.0;
        match (s, color) {
            (Some(s), _) => marker(layer, *s, lx + 14.0, cy - 4.0, s.color()),
            (None, Some(c)) => {
                let _ = write!(
                    layer,
                    r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{c}" stroke-width="2.5"/>"#,
                    lx + 5.0,
                    cy - 4.0,
                    lx + 23.0,
                    cy - 4.0
                );
            }
            _ => {}
        }
        text_el(layer, "legend-text", lx + 30.0, cy, lsize, "#222222", t);
    }
    let _ = writeln!(layer, "</g>");
}

/// The roofs as obstacles for label placement (the memory roof as a chain of small boxes, each
/// compute roof as a thin band right of its ridge point), and the labels they call for.
fn roof_obstacles(
    chart: &RooflineChart,
    ax: &Axes,
    to_px: &ToPx<'_>,
    plot: &Rect,
    placer: &mut Placer,
) -> (Vec<RidgeLabel>, Vec<RoofLabel>) {
    let (x0, _) = ax.x;
    let (y0, _) = ax.y;
    let mut ridge_labels = Vec::new();
    let mut roof_labels = Vec::new();
    for (ci, c) in chart.chips.iter().enumerate() {
        let rgb = CHIP_COLORS[ci % CHIP_COLORS.len()];
        let w = c.bandwidth;
        let top = c.roofs.iter().map(|r| r.peak).fold(0.0, f64::max);
        if top <= 0.0 || w <= 0.0 {
            continue;
        }
        let xa = x0.max(y0 / w);
        // Obstacles along the memory roof.
        let (ax0, ay0) = to_px(xa, xa * w);
        let (ax1, ay1) = to_px(top / w, top);
        placer.segments.push(((ax0, ay0), (ax1, ay1)));
        let steps = (((ax1 - ax0).powi(2) + (ay1 - ay0).powi(2)).sqrt() / 8.0).ceil() as usize;
        for k in 0..=steps {
            let t = k as f64 / steps.max(1) as f64;
            placer.taken.push(Rect::around(
                ax0 + t * (ax1 - ax0),
                ay0 + t * (ay1 - ay0),
                3.0,
            ));
        }
        for r in &c.roofs {
            let ridge = r.peak / w;
            let (rx, ry) = to_px(ridge, r.peak);
            placer.taken.push(Rect::around(rx, ry, 5.0));
            placer.segments.push(((rx, ry), (plot.x1, ry)));
            placer.taken.push(Rect {
                x0: rx,
                y0: ry - 1.5,
                x1: plot.x1,
                y1: ry + 1.5,
            });
            ridge_labels.push(RidgeLabel {
                x: rx,
                y: ry,
                value: human_intensity(ridge),
                color: hex(rgb),
            });
            roof_labels.push(RoofLabel {
                y: ry,
                label: r.label.clone(),
                value: human(r.peak, unit_of(&r.label)),
                emphasis: r.emphasis,
                color: hex(rgb),
                ridge_x: rx,
            });
        }
    }
    (ridge_labels, roof_labels)
}

/// Roof labels above each distinct roof at its right end, moved left along the roof (then
/// under it) while they would overlap something; a roof several chips share is labelled
/// once, in black, with a dot in each of its chips' colours; with several chips each other
/// label takes its chip's colour.
fn write_roof_labels(
    layer: &mut String,
    placer: &mut Placer,
    plot: &Rect,
    mut roof_labels: Vec<RoofLabel>,
    multi: bool,
) {
    roof_labels.sort_by(|a, b| a.y.total_cmp(&b.y));
    let mut seen: Vec<(i64, String)> = Vec::new();
    for r in &roof_labels {
        let key = (r.y.round() as i64, r.label.clone());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let same: Vec<_> = roof_labels
            .iter()
            .filter(|o| (o.y - r.y).abs() < 0.5 && o.label == r.label)
            .collect();
        let shared = same.len() > 1;
        // The label stays over the roof: right of its (leftmost) ridge point.
        let start = same.iter().map(|o| o.ridge_x).fold(f64::INFINITY, f64::min) + 6.0;
        let color = if multi && !shared {
            r.color.as_str()
        } else if r.emphasis {
            "#111111"
        } else {
            "#555555"
        };
        let value = format!("{} {}", r.label, r.value);
        // A roof several chips share is labelled once, followed by a dot in each chip's colour.
        let mut chips: Vec<&str> = Vec::new();
        if shared {
            for o in &same {
                if !chips.contains(&o.color.as_str()) {
                    chips.push(&o.color);
                }
            }
        }
        let text = if chips.is_empty() {
            value.clone()
        } else {
            format!("{value}{}", " ●".repeat(chips.len()))
        };
        let Some((x, base, rect)) =
            roof_label_spot(placer, plot, r.y, text_width(&text, 13.0), start)
        else {
            placer.dropped.push(value);
            continue;
        };
        placer.taken.push(rect);
        if chips.is_empty() {
            text_el(layer, "roof-label", x, base, 13.0, color, &text);
        } else {
            let dots: String = chips
                .iter()
                .map(|c| format!(r#" <tspan fill="{c}">●</tspan>"#))
                .collect();
            let _ = writeln!(
                layer,
                r#"<text class="roof-label" x="{x:.1}" y="{base:.1}" font-family="{}" font-size="13" fill="{color}" text-anchor="start">{}{dots}</text>"#,
                super::FONT,
                xml_escape(&value),
            );
        }
    }
}

/// Where a roof label `w` pixels wide (13 px text) goes on the roof at pixel height `ry`: the
/// first free spot from the right end leftwards in 40 px steps, above the roof then under it,
/// never left of `start`; `None` when none is free. Returns the text's x, its baseline and the
/// box it takes.
pub(super) fn roof_label_spot(
    placer: &Placer,
    plot: &Rect,
    ry: f64,
    w: f64,
    start: f64,
) -> Option<(f64, f64, Rect)> {
    let size = 13.0;
    // Beside the roof, then a line or two further off it where points crowd it.
    for (below, off) in [
        (false, 0.0),
        (true, 0.0),
        (false, 16.0),
        (true, 16.0),
        (false, 32.0),
        (true, 32.0),
    ] {
        for k in 0..12 {
            let x = plot.x1 - 6.0 - w - k as f64 * 40.0;
            // Clear of the line and of the points on it (6 px either side).
            let base = if below {
                ry + size + 9.0 + off
            } else {
                ry - 8.0 - off
            };
            let rect = Rect {
                x0: x,
                y0: base - size,
                x1: x + w,
                y1: base + 0.25 * size,
            };
            if x >= start && placer.free(&rect) {
                return Some((x, base, rect));
            }
        }
    }
    None
}

/// Ridge labels: the value, next to the marker (a leader line when pushed away).
fn write_ridge_labels(layer: &mut String, placer: &mut Placer, ridge_labels: &[RidgeLabel]) {
    for r in ridge_labels {
        let size = 12.0;
        let w = text_width(&r.value, size);
        let text = format!("ridge {} FLOP/B", r.value);
        let Some((tx, ty, far)) =
            placer.place((r.x, r.y), (w, size + 2.0), 5.0, &BELOW_RIGHT, &text)
        else {
            continue;
        };
        if far {
            leader(layer, (r.x, r.y), (tx, ty, w, size + 2.0), &r.color);
        }
        text_el(
            layer,
            "ridge-label",
            tx,
            ty + size,
            size,
            &r.color,
            &r.value,
        );
    }
}

/// Memory roof label: the bandwidth, beside the lower part of the line.
fn write_memory_labels(
    layer: &mut String,
    placer: &mut Placer,
    chart: &RooflineChart,
    ax: &Axes,
    to_px: &ToPx<'_>,
) {
    let (x0, x1) = ax.x;
    let (y0, _) = ax.y;
    for (ci, c) in chart.chips.iter().enumerate() {
        let xa = x0.max(y0 / c.bandwidth);
        let xm = (xa * 3.0).min(x1);
        let (mx, my) = to_px(xm, xm * c.bandwidth);
        let text = human_bytes_per_s(c.bandwidth);
        let size = 13.0;
        let w = text_width(&text, size);
        let note = format!("{}: memory roof {text}", c.name);
        let Some((tx, ty, far)) = placer.place((mx, my), (w, size + 2.0), 6.0, &AROUND, &note)
        else {
            continue;
        };
        let color = hex(CHIP_COLORS[ci % CHIP_COLORS.len()]);
        if far {
            leader(layer, (mx, my), (tx, ty, w, size + 2.0), &color);
        }
        text_el(layer, "memory-label", tx, ty + size, size, &color, &text);
    }
}

/// Operators: one marker with a tooltip each, at its pixel `pts[i]`.
fn write_points(layer: &mut String, chart: &RooflineChart, pts: &[(f64, f64)]) {
    let _ = writeln!(layer, r#"<g class="op-points">"#);
    for (p, &(x, y)) in chart.points.iter().zip(pts) {
        let _ = write!(
            layer,
            r#"<g class="op-point" data-stage="{}" data-name="{}" data-intensity="{:e}" data-attainable="{:e}"><title>{}</title>"#,
            p.series.name(),
            xml_escape(&p.label),
            p.intensity,
            p.attainable,
            xml_escape(&p.tooltip.join("\n"))
        );
        marker_scaled(
            layer,
            p.series,
            x,
            y,
            p.series.color(),
            marker_scale(p.share),
        );
        let _ = writeln!(layer, "</g>");
    }
    let _ = writeln!(layer, "</g>");
}

/// Points within 4 px of each other form a cluster with one label; largest clusters first.
/// `points` are each point's series and label, `pts` their pixels.
pub(super) fn clusters(
    points: impl Iterator<Item = (Series, String)>,
    pts: &[(f64, f64)],
) -> Vec<Cluster> {
    let mut clusters: Vec<Cluster> = Vec::new();
    for (entry, &(x, y)) in points.zip(pts) {
        match clusters
            .iter_mut()
            .find(|c| (c.0 - x).abs() <= 4.0 && (c.1 - y).abs() <= 4.0)
        {
            Some(c) => {
                if !c.2.contains(&entry) {
                    c.2.push(entry);
                }
            }
            None => clusters.push((x, y, vec![entry])),
        }
    }
    clusters.sort_by_key(|c| std::cmp::Reverse(c.2.len()));
    clusters
}

/// A cluster's label lines and its series: a name in every series of a mixed cluster is
/// written once (after the list of stages), the others after their own stage.
fn cluster_lines(entries: &[(Series, String)]) -> (Vec<String>, Vec<Series>) {
    let mut series: Vec<Series> = Vec::new();
    for (s, _) in entries {
        if !series.contains(s) {
            series.push(*s);
        }
    }
    // Names in every series first, then each series' own names after its stage.
    let everywhere = |n: &String| {
        series
            .iter()
            .all(|t| entries.iter().any(|(u, m)| u == t && m == n))
    };
    let mut lines: Vec<String> = Vec::new();
    let mut common: Vec<String> = Vec::new();
    for (_, n) in entries {
        if (series.len() == 1 || everywhere(n)) && !common.contains(n) {
            common.push(n.clone());
        }
    }
    if series.len() > 1 && !common.is_empty() {
        common[0] = format!("{}: {}", stage_list(&series), common[0]);
    }
    lines.extend(wrap(&common, 40));
    if series.len() > 1 {
        for s in &series {
            let mut own: Vec<String> = entries
                .iter()
                .filter(|(u, n)| u == s && !everywhere(n))
                .map(|(_, n)| n.clone())
                .collect();
            if let Some(first) = own.first_mut() {
                *first = format!("{}: {first}", s.name());
                lines.extend(wrap(&own, 40));
            }
        }
    }
    (lines, series)
}

/// Each cluster's label, placed around it (a leader line when pushed away), in its series'
/// colour (dark grey when mixed).
pub(super) fn write_point_labels(layer: &mut String, placer: &mut Placer, clusters: &[Cluster]) {
    let size = 12.0;
    for (x, y, entries) in clusters {
        let (lines, series) = cluster_lines(entries);
        let (color, stage) = match series.as_slice() {
            [one] => (one.color(), one.name()),
            _ => ("#333333", "mixed"),
        };
        let mut names: Vec<&str> = Vec::new();
        for (_, n) in entries {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
        // The whole label, else its first lines and how many more (listed in the legend).
        let mut variants = vec![lines.clone()];
        for keep in [3, 1] {
            if lines.len() > keep {
                let mut short = lines[..keep].to_vec();
                let shown = shown_names(&short, &names);
                short.push(format!("… +{} more", names.len() - shown.len()));
                variants.push(short);
            }
        }
        let mut spot = None;
        for v in variants {
            let w = v.iter().map(|l| text_width(l, size)).fold(0.0, f64::max);
            let h = v.len() as f64 * (size + 2.0);
            if let Some(p) = placer.place((*x, *y), (w, h), 8.0, &AROUND, "") {
                spot = Some((p, w, h, v));
                break;
            }
            placer.dropped.pop();
        }
        let Some(((tx, ty, far), w, h, lines)) = spot else {
            placer.dropped.extend(names.iter().map(|n| n.to_string()));
            continue;
        };
        let shown = shown_names(&lines, &names);
        placer.dropped.extend(
            names
                .iter()
                .filter(|n| !shown.contains(n))
                .map(|n| n.to_string()),
        );
        let _ = write!(layer, r#"<g class="point-label" data-stage="{stage}">"#);
        if far {
            leader(layer, (*x, *y), (tx, ty, w, h), color);
        }
        for (i, l) in lines.iter().enumerate() {
            text_el(
                layer,
                "point-text",
                tx,
                ty + size + i as f64 * (size + 2.0) - 1.0,
                size,
                color,
                l,
            );
        }
        let _ = writeln!(layer, "</g>");
    }
}

/// The names of `names` written out in `lines` (as whole words).
fn shown_names<'a>(lines: &[String], names: &[&'a str]) -> Vec<&'a str> {
    let words: Vec<&str> = lines
        .iter()
        .flat_map(|l| l.split([',', ' ', ':']))
        .collect();
    names
        .iter()
        .copied()
        .filter(|n| words.contains(n))
        .collect()
}

fn unit_of(label: &str) -> &'static str {
    if label.split('/').all(|p| p.starts_with("int")) {
        "OP/s"
    } else {
        "FLOP/s"
    }
}
