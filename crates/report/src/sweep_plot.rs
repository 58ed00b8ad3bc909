//! The sweep plot (`roofline sweep --plot FILE.svg`), drawn with plotters' SVG backend:
//!
//! - top panel: tokens/s (solid, left axis) and time per token (dashed, right axis) against the
//!   batch, one colour per (chip, precision, stage, length); batches whose weights and KV cache
//!   do not fit in the chip's memory are crossed out in red;
//! - one panel per chip under it: each operator's arithmetic intensity against the batch for
//!   the chip's first group, with the ridge line of every roof its operators are held against.
//!   Where a line crosses its ridge, the operator turns compute-bound. Operators whose curves
//!   coincide share a line and one legend entry listing them.
//!
//! Both x axes are logarithmic in the batch. PNG is the SVG rasterised by [`svg_to_png`].

use crate::plot::{pe, svg_to_png, PlotError, PlotFormat};
use crate::sweep::SweepView;
use crate::units::{human, human_seconds};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use roofline_core::workload::Stage;

const WIDTH: u32 = 1200;
/// Height of each panel, pixels: the plot is 64 px of title and one panel for throughput and
/// latency, then one per chip.
const PANEL: u32 = 488;
const LEGEND: u32 = 290;
const FONT: &str = "sans-serif";

/// Tableau 20: distinct colours for up to 20 series.
const COLORS: [(u8, u8, u8); 20] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
    (174, 199, 232),
    (255, 187, 120),
    (152, 223, 138),
    (255, 152, 150),
    (197, 176, 213),
    (196, 156, 148),
    (247, 182, 210),
    (199, 199, 199),
    (219, 219, 141),
    (158, 218, 229),
];

fn color(i: usize) -> RGBColor {
    let (r, g, b) = COLORS[i % COLORS.len()];
    RGBColor(r, g, b)
}

/// A log axis range covering `lo..hi` with some room, never empty.
fn log_range(lo: f64, hi: f64) -> std::ops::Range<f64> {
    let (lo, hi) = if lo > 0.0 && hi >= lo {
        (lo, hi)
    } else {
        (1.0, 10.0)
    };
    if hi / lo < 1.5 {
        lo / 2.0..hi * 2.0
    } else {
        lo / 1.25..hi * 1.25
    }
}

fn group_label(v: &SweepView<'_>, g: usize) -> String {
    let grp = &v.sweep.groups[g];
    let len = match grp.stage {
        Stage::Prefill => format!("prefill s={}", grp.seq_len),
        Stage::Decode => format!("decode ctx={}", grp.context),
        other => format!("{other} s={} ctx={}", grp.seq_len, grp.context),
    };
    format!("{} {} {len}", v.devices[grp.device].id, grp.precisions.act)
}

/// The sweep plot as SVG text.
///
/// # Errors
/// A [`PlotError`] if the sweep is empty or drawing fails.
pub fn render_sweep_svg(v: &SweepView<'_>) -> Result<String, PlotError> {
    let s = v.sweep;
    if s.points.is_empty() || s.groups.is_empty() {
        return Err(PlotError("the sweep has no points to plot".into()));
    }
    let bmin = s.batches.iter().copied().min().unwrap_or(1) as f64;
    let bmax = s.batches.iter().copied().max().unwrap_or(1) as f64;
    let xr = log_range(bmin, bmax);
    let fold = |f: &dyn Fn(&roofline_core::sweep::SweepPoint) -> f64| {
        s.points
            .iter()
            .map(f)
            .filter(|x| x.is_finite() && *x > 0.0)
            .fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)))
    };
    let (tmin, tmax) = fold(&|p| p.tokens_per_s());
    let (lmin, lmax) = fold(&|p| p.time_per_token().get());

    // The first group of each chip: its operators' intensity against that chip's ridges.
    let mut chip_groups: Vec<usize> = Vec::new();
    for (g, grp) in s.groups.iter().enumerate() {
        if !chip_groups
            .iter()
            .any(|&h| s.groups[h].device == grp.device)
        {
            chip_groups.push(g);
        }
    }
    let height = 64 + PANEL * (1 + chip_groups.len() as u32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(pe)?;
        let (title, body) = root.split_vertically(64);
        title
            .draw_text(
                &format!(
                    "{}: throughput, latency and operator intensity against batch",
                    v.model.name
                ),
                &(FONT, 22).into_font().color(&BLACK),
                (24, 10),
            )
            .map_err(pe)?;
        title
            .draw_text(
                "roofline sweep · x: batch (log) · every point a full roofline evaluation of the step",
                &(FONT, 14).into_font().color(&RGBColor(85, 85, 85)),
                (24, 40),
            )
            .map_err(pe)?;
        let panels = body.split_evenly((1 + chip_groups.len(), 1));
        let (top, rest) = match panels.split_first() {
            Some((top, rest)) => (top.clone(), rest),
            None => return Err(PlotError("no panel to draw".into())),
        };

        // ---- panel 1: tokens/s and time per token ----
        let (area, legend) = top.split_horizontally(WIDTH - LEGEND);
        let mut ch = ChartBuilder::on(&area)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(90)
            .right_y_label_area_size(90)
            .build_cartesian_2d(xr.clone().log_scale(), log_range(tmin, tmax).log_scale())
            .map_err(pe)?
            .set_secondary_coord(xr.clone().log_scale(), log_range(lmin, lmax).log_scale());
        let tfmt = |y: &f64| human(*y, "");
        let lfmt = |y: &f64| human_seconds(*y);
        let bfmt = |x: &f64| format!("{x:.0}");
        ch.configure_mesh()
            .y_labels(12)
            .x_desc("batch (sequences)")
            .y_desc("tokens/s (solid)")
            .x_label_formatter(&bfmt)
            .y_label_formatter(&tfmt)
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 15))
            .bold_line_style(RGBColor(225, 225, 225))
            .light_line_style(RGBColor(245, 245, 245))
            .draw()
            .map_err(pe)?;
        ch.configure_secondary_axes()
            .y_labels(12)
            .y_desc("time per token (dashed)")
            .y_label_formatter(&lfmt)
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(pe)?;
        for gi in 0..s.groups.len() {
            let c = color(gi);
            let pts = s.group_points(gi);
            let tput: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.batch as f64, p.tokens_per_s()))
                .collect();
            let lat: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.batch as f64, p.time_per_token().get()))
                .collect();
            ch.draw_series(LineSeries::new(tput.clone(), c.stroke_width(2)))
                .map_err(pe)?;
            ch.draw_series(tput.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .map_err(pe)?;
            ch.draw_secondary_series(DashedLineSeries::new(lat, 6, 4, c.stroke_width(2)))
                .map_err(pe)?;
            let unfit = pts
                .iter()
                .filter(|p| p.fits() == Some(false))
                .map(|p| Cross::new((p.batch as f64, p.tokens_per_s()), 7, RED.stroke_width(3)));
            ch.draw_series(unfit).map_err(pe)?;
        }
        let mut y = 24;
        for gi in 0..s.groups.len().min(20) {
            let c = color(gi);
            legend
                .draw(&PathElement::new(
                    vec![(6, y + 7), (34, y + 7)],
                    c.stroke_width(3),
                ))
                .map_err(pe)?;
            legend
                .draw_text(
                    &group_label(v, gi),
                    &(FONT, 13).into_font().color(&BLACK),
                    (42, y),
                )
                .map_err(pe)?;
            y += 20;
        }
        legend
            .draw(&Cross::new((18, y + 7), 6, RED.stroke_width(3)))
            .map_err(pe)?;
        legend
            .draw_text(
                "does not fit in memory",
                &(FONT, 13).into_font().color(&BLACK),
                (42, y),
            )
            .map_err(pe)?;

        // ---- one panel per chip: intensity of each operator, the chip's first group ----
        for (i, &g) in chip_groups.iter().enumerate() {
            let area = rest[i].clone();
            intensity_panel(&area, v, g, &xr)?;
        }
        root.present().map_err(pe)?;
    }
    Ok(svg)
}

/// The intensity panel of group `g`: each operator's arithmetic intensity against the batch,
/// with the ridge line of every roof its operators are held against; operators whose curves
/// coincide share one line and one legend entry.
fn intensity_panel<DB: DrawingBackend>(
    panel: &DrawingArea<DB, plotters::coord::Shift>,
    v: &SweepView<'_>,
    g: usize,
    xr: &std::ops::Range<f64>,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let s = v.sweep;
    let g0 = &s.groups[g];
    let at = |bi: usize| s.ops_at(g * s.batches.len() + bi);
    let nb = s.batches.len();
    let drawn: Vec<usize> = (0..g0.nodes.len())
        .filter(|&k| (0..nb).all(|bi| at(bi)[k].intensity.get() > 0.0))
        .collect();
    let mut imin = f64::INFINITY;
    let mut imax = 0.0f64;
    for &k in &drawn {
        for bi in 0..nb {
            let i = at(bi)[k].intensity.get();
            imin = imin.min(i);
            imax = imax.max(i);
        }
    }
    let mut ridges: Vec<f64> = Vec::new();
    for &k in &drawn {
        let r = g0.node_ridges[k].get();
        if !ridges.iter().any(|x| (x - r).abs() <= 1e-9 * r) {
            ridges.push(r);
        }
    }
    for &r in &ridges {
        imin = imin.min(r);
        imax = imax.max(r);
    }
    let (area, legend) = panel.split_horizontally(WIDTH - LEGEND);
    let mut ch = ChartBuilder::on(&area)
        .margin(12)
        .caption(
            format!("operator intensity, {}", group_label(v, g)),
            (FONT, 15),
        )
        .x_label_area_size(44)
        .y_label_area_size(90)
        .right_y_label_area_size(90)
        .build_cartesian_2d(xr.clone().log_scale(), log_range(imin, imax).log_scale())
        .map_err(pe)?;
    let bfmt = |x: &f64| format!("{x:.0}");
    let ifmt = |y: &f64| {
        if *y >= 1.0 {
            format!("{y:.0}")
        } else {
            format!("{y:.2}")
        }
    };
    ch.configure_mesh()
        .x_desc("batch (sequences)")
        .y_desc("arithmetic intensity (FLOP/byte)")
        .x_label_formatter(&bfmt)
        .y_label_formatter(&ifmt)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .bold_line_style(RGBColor(225, 225, 225))
        .light_line_style(RGBColor(245, 245, 245))
        .draw()
        .map_err(pe)?;
    for &r in &ridges {
        ch.draw_series(DashedLineSeries::new(
            vec![(xr.start, r), (xr.end, r)],
            8,
            5,
            BLACK.stroke_width(2),
        ))
        .map_err(pe)?;
        let kind = drawn
            .iter()
            .find(|&&k| (g0.node_ridges[k].get() - r).abs() <= 1e-9 * r)
            .map(|&k| {
                if g0.node_ridges[k] == g0.ridge {
                    format!("{} matrix", g0.precisions.act)
                } else {
                    "vector".to_string()
                }
            })
            .unwrap_or_default();
        ch.draw_series(std::iter::once(Text::new(
            format!("ridge {r:.1} ({kind})"),
            (xr.start * 1.1, r * 1.12),
            (FONT, 13)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Bottom)),
        )))
        .map_err(pe)?;
    }
    // Operators whose curves coincide share a colour and a legend entry.
    let curve = |k: usize| -> Vec<f64> { (0..nb).map(|bi| at(bi)[k].intensity.get()).collect() };
    let mut bundles: Vec<(Vec<f64>, Vec<&str>)> = Vec::new();
    for &k in &drawn {
        let c = curve(k);
        let same = |o: &Vec<f64>| {
            o.iter()
                .zip(&c)
                .all(|(a, b)| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()))
        };
        match bundles.iter_mut().find(|(o, _)| same(o)) {
            Some((_, names)) => names.push(g0.nodes[k].name),
            None => bundles.push((c, vec![g0.nodes[k].name])),
        }
    }
    for (i, (c, _)) in bundles.iter().enumerate() {
        let line: Vec<(f64, f64)> = s
            .batches
            .iter()
            .zip(c)
            .map(|(&b, &y)| (b as f64, y))
            .collect();
        ch.draw_series(LineSeries::new(line, color(i).stroke_width(2)))
            .map_err(pe)?;
    }
    let mut y = 16;
    for (i, (_, names)) in bundles.iter().enumerate() {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let lines = crate::plot::layout::wrap(&names, 30);
        legend
            .draw(&PathElement::new(
                vec![(6, y + 7), (34, y + 7)],
                color(i).stroke_width(3),
            ))
            .map_err(pe)?;
        for l in &lines {
            legend
                .draw_text(l, &(FONT, 13).into_font().color(&BLACK), (42, y))
                .map_err(pe)?;
            y += 17;
        }
        y += 4;
    }
    let skipped: Vec<&str> = (0..g0.nodes.len())
        .filter(|k| !drawn.contains(k))
        .map(|k| g0.nodes[k].name)
        .collect();
    if !skipped.is_empty() {
        legend
            .draw_text(
                &format!("no FLOPs: {}", skipped.join(", ")),
                &(FONT, 12).into_font().color(&RGBColor(85, 85, 85)),
                (6, y + 4),
            )
            .map_err(pe)?;
    }
    Ok(())
}

/// The sweep plot in `format`: the SVG text, or that SVG as PNG.
///
/// # Errors
/// A [`PlotError`] from drawing or rasterising.
pub fn render_sweep(v: &SweepView<'_>, format: PlotFormat) -> Result<Vec<u8>, PlotError> {
    let svg = render_sweep_svg(v)?;
    match format {
        PlotFormat::Svg => Ok(svg.into_bytes()),
        PlotFormat::Png => svg_to_png(&svg),
    }
}
