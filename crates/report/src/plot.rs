//! Roofline plots: a [`RooflineChart`] (data built from core values) rendered to SVG by
//! `plotters` and rasterised to PNG by `resvg`.
//!
//! The chart has log-log axes: arithmetic intensity (FLOP/byte) against attainable FLOP/s. Each
//! chip contributes a memory roof (the line `attainable = intensity × bandwidth`, slope 1 on
//! log-log axes, its height set by the bandwidth) and one compute roof per distinct dense peak
//! (precisions with the same peak share a roof, `bf16/fp16`); each ridge point (peak /
//! bandwidth, Williams et al. 2009) is marked and labelled with its value. Operators are points,
//! prefill (circles), decode (triangles) and lone operators (diamonds) told apart by shape and
//! colour; labels are placed so that they do not overlap each other, the points or the legend,
//! and points that coincide share one label.
//!
//! `plotters` draws the frame (title, axes, log grid, tick labels) and the roofs; the points,
//! labels and legend are written as an SVG layer on top, in the same pixel coordinates
//! (`plotters`' own mapping), because `plotters`' SVG backend cannot attach a tooltip: each
//! point is a `<g class="op-point">` holding an SVG `<title>` with the operator's numbers, which
//! a browser shows on hover without any script. A `<rect class="plot-area">` carries the plot
//! area's pixel bounds and axis ranges (`data-x-min` …) so that a reader (or a test) can map a
//! value to a pixel: `x = left + width · (log x − log x_min) / (log x_max − log x_min)`, and
//! likewise upwards for y.

use crate::units::{human, human_bytes_per_s, human_flops, human_flops_per_s, human_intensity};
use crate::units::{human_bytes, human_seconds};
use plotters::prelude::*;
use roofline_core::analysis::{OpRow, StageAnalysis};
use roofline_core::device::{Device, DeviceError};
use roofline_core::model::Transformer;
use roofline_core::ops::Compute;
use roofline_core::precision::Precision;
use roofline_core::roofline::Bound;
use roofline_core::single::RidgeDistance;
use roofline_core::workload::Stage;
use std::fmt;
use std::fmt::Write as _;

pub(crate) mod frame;
mod layout;
use frame::Frame;
pub(crate) use layout::xml_escape;
use layout::{
    leader, marker, stage_list, text_el, text_width, wrap, Placer, Rect, AROUND, BELOW_RIGHT,
};

/// Width of the SVG, pixels.
pub const WIDTH: u32 = 1100;
/// Height of the SVG, pixels.
pub const HEIGHT: u32 = 720;
/// Scale of the PNG relative to the SVG (1.5 × 1100 × 720 = 1650 × 1080 pixels).
pub const PNG_SCALE: f32 = 1.5;
/// Font of every text element; the PNG renderer has DejaVu Sans embedded.
pub const FONT: &str = "DejaVu Sans, sans-serif";
/// DejaVu Sans (Bitstream Vera licence, permissive; see `assets/README.md`), embedded so the PNG
/// renders text the same on every machine.
static DEJAVU_SANS: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// How a point is drawn: which stage it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Series {
    /// A prefill operator: circle.
    Prefill,
    /// A decode operator: triangle.
    Decode,
    /// A lone operator (`roofline op`): diamond.
    Operator,
    /// A fused prefill kernel (`--fusion`): square.
    FusedPrefill,
    /// A fused decode kernel (`--fusion`): square.
    FusedDecode,
}

impl Series {
    /// The name written in `data-stage` and the legend.
    pub fn name(self) -> &'static str {
        match self {
            Series::Prefill => "prefill",
            Series::Decode => "decode",
            Series::Operator => "operator",
            Series::FusedPrefill => "fused prefill",
            Series::FusedDecode => "fused decode",
        }
    }
    pub(crate) fn color(self) -> &'static str {
        match self {
            Series::Prefill => "#1f6fb4",
            Series::Decode => "#d9480f",
            Series::Operator => "#2b8a3e",
            Series::FusedPrefill => "#5f3dc4",
            Series::FusedDecode => "#c2255c",
        }
    }
    fn from_stage(s: Stage) -> Self {
        match s {
            Stage::Prefill => Series::Prefill,
            // Decode, and a stage added later, as decode's triangles.
            _ => Series::Decode,
        }
    }
}

/// One operator as a point.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartPoint {
    /// Short label (`q_proj`).
    pub label: String,
    /// Its series.
    pub series: Series,
    /// Arithmetic intensity, FLOP/byte (> 0 to be drawn on log axes).
    pub intensity: f64,
    /// Attainable performance, FLOP/s (> 0).
    pub attainable: f64,
    /// Tooltip lines (the operator's numbers).
    pub tooltip: Vec<String>,
}

/// One compute roof: a dense peak shared by one or more precisions.
#[derive(Debug, Clone, PartialEq)]
pub struct ComputeRoof {
    /// Precisions with this peak (`bf16/fp16`).
    pub label: String,
    /// The peak, FLOP/s (OP/s for integer formats).
    pub peak: f64,
    /// Drawn bold: the peak the plotted operators are held against.
    pub emphasis: bool,
}

/// One chip's roofline: its memory roof and compute roofs.
#[derive(Debug, Clone, PartialEq)]
pub struct ChipRoofline {
    /// Chip name.
    pub name: String,
    /// Main-memory bandwidth, B/s: the memory roof.
    pub bandwidth: f64,
    /// Compute roofs, lowest peak first.
    pub roofs: Vec<ComputeRoof>,
}

impl ChipRoofline {
    /// The chip's roofs: one per distinct dense peak (precisions with equal peaks share it), in
    /// rising order; roofs of a precision in `emphasis` are drawn bold.
    ///
    /// # Errors
    /// [`DeviceError::NoBandwidth`] when the chip has no main-memory bandwidth.
    pub fn from_device(d: &Device, emphasis: &[Precision]) -> Result<Self, DeviceError> {
        let bandwidth = d.bandwidth()?.get();
        let mut groups: Vec<(Vec<Precision>, f64)> = Vec::new();
        for (p, c) in &d.peaks {
            let v = c.value.get();
            match groups
                .iter_mut()
                .find(|(_, peak)| (peak - v).abs() <= 1e-9 * v.abs())
            {
                Some((ps, _)) => ps.push(*p),
                None => groups.push((vec![*p], v)),
            }
        }
        groups.sort_by(|a, b| a.1.total_cmp(&b.1));
        let roofs = groups
            .into_iter()
            .filter(|(_, v)| *v > 0.0)
            .map(|(ps, peak)| ComputeRoof {
                label: ps.iter().map(|p| p.name()).collect::<Vec<_>>().join("/"),
                emphasis: ps.iter().any(|p| emphasis.contains(p)),
                peak,
            })
            .collect();
        Ok(Self {
            name: d.name.clone(),
            bandwidth,
            roofs,
        })
    }
}

/// Everything a roofline plot shows.
#[derive(Debug, Clone, PartialEq)]
pub struct RooflineChart {
    /// Title: model, chip, workload.
    pub title: String,
    /// A second line under the title.
    pub subtitle: String,
    /// One or more chips.
    pub chips: Vec<ChipRoofline>,
    /// Operators.
    pub points: Vec<ChartPoint>,
    /// Operators left out because they have no FLOPs (no place on log axes), by label.
    pub omitted: Vec<String>,
}

/// A plot that could not be drawn or rasterised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotError(pub String);

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot draw the roofline plot: {}", self.0)
    }
}
impl std::error::Error for PlotError {}

/// A drawing error of `plotters` (or any displayable one) as a [`PlotError`]: what every plot
/// module maps its errors through.
pub(crate) fn pe(e: impl fmt::Display) -> PlotError {
    PlotError(e.to_string())
}

fn precisions_used(rows: &[OpRow], act: Precision) -> Vec<Precision> {
    let mut out = Vec::new();
    for r in rows {
        let p = match r.compute {
            Compute::Matrix(p) => p,
            Compute::Vector => Precision::Fp32,
        };
        if !out.contains(&p) {
            out.push(p);
        }
    }
    if out.is_empty() {
        out.push(act);
    }
    out
}

/// The tooltip of one operator: its numbers, one per line.
pub fn tooltip(prefix: &str, row: &OpRow) -> Vec<String> {
    let p = &row.point();
    let dist = RidgeDistance::of(p);
    let side = match (dist.bound, row.cost.flops.get() == 0.0) {
        (_, true) => "no FLOPs".to_string(),
        (Bound::Memory, _) => format!("memory-bound, {:.1}× below the ridge", dist.factor),
        (Bound::Compute, _) => format!("compute-bound, {:.2}× above the ridge", dist.factor),
    };
    let mut lines = vec![
        format!(
            "{prefix}{} ({}){}",
            row.name,
            row.kind,
            if row.count > 1 {
                format!(", ×{} per forward pass", row.count)
            } else {
                String::new()
            }
        ),
        format!(
            "FLOPs {} · bytes {}",
            human_flops(row.cost.flops.get()),
            human_bytes(row.cost.bytes().get())
        ),
        format!(
            "AI {} FLOP/B · ridge {} FLOP/B",
            human_intensity(p.intensity.get()),
            human_intensity(p.ridge.get())
        ),
        side,
        format!(
            "attainable {} of {}",
            human_flops_per_s(p.attainable.get()),
            human_flops_per_s(row.peak().get())
        ),
    ];
    if row.count > 1 {
        lines.push(format!(
            "time {} (×{} = {})",
            human_seconds(p.time.get()),
            row.count,
            human_seconds(p.time.get() * row.count as f64)
        ));
    } else {
        lines.push(format!("time {}", human_seconds(p.time.get())));
    }
    lines
}

fn push_rows(
    points: &mut Vec<ChartPoint>,
    omitted: &mut Vec<String>,
    rows: &[OpRow],
    series: Series,
    prefix: &str,
) {
    for r in rows {
        let p = r.point();
        let (i, a) = (p.intensity.get(), p.attainable.get());
        if i > 0.0 && a > 0.0 && i.is_finite() && a.is_finite() {
            points.push(ChartPoint {
                label: r.name.to_string(),
                series,
                intensity: i,
                attainable: a,
                tooltip: tooltip(prefix, r),
            });
        } else if !omitted.iter().any(|o| o == r.name) {
            omitted.push(r.name.to_string());
        }
    }
}

impl RooflineChart {
    /// Adds the fused kernels (two or more operators) of a fusion plan as their own points:
    /// squares, beside the operators they replace, at their (higher) intensity.
    pub fn add_fused_kernels(
        &mut self,
        stage: Stage,
        comparison: &roofline_core::fusion::FusionComparison,
    ) {
        let series = match stage {
            Stage::Prefill => Series::FusedPrefill,
            // Decode, and a stage added later, as decode's series.
            _ => Series::FusedDecode,
        };
        for (k, p) in comparison.plan.kernels.iter().zip(&comparison.after.points) {
            let (i, a) = (p.intensity.get(), p.attainable.get());
            if k.nodes.len() < 2 || !(i > 0.0 && a > 0.0 && i.is_finite() && a.is_finite()) {
                continue;
            }
            self.points.push(ChartPoint {
                label: k.name.clone(),
                series,
                intensity: i,
                attainable: a,
                tooltip: vec![
                    format!(
                        "{stage} fused kernel ({}): {}",
                        comparison.preset.name(),
                        k.name
                    ),
                    format!(
                        "rules: {}",
                        k.rules
                            .iter()
                            .map(|r| r.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    format!(
                        "{} FLOP, {} B, AI {:.3} FLOP/B, {}-bound, {:.3e} s",
                        k.cost.flops.get(),
                        k.cost.bytes().get(),
                        i,
                        p.bound,
                        p.time.get()
                    ),
                ],
            });
        }
    }

    /// The plot of `roofline analyze`: every operator of every stage of `model` on `device`,
    /// the device's roofs (bold: the precisions the operators compute in).
    ///
    /// # Errors
    /// [`DeviceError::NoBandwidth`] when the chip has no main-memory bandwidth.
    pub fn for_analysis(
        model: &Transformer,
        device: &Device,
        stages: &[StageAnalysis],
    ) -> Result<Self, DeviceError> {
        let act = stages
            .first()
            .map(|s| s.workload.precisions.act)
            .unwrap_or(Precision::Bf16);
        let all_rows: Vec<OpRow> = stages.iter().flat_map(|s| s.rows.clone()).collect();
        let chip = ChipRoofline::from_device(device, &precisions_used(&all_rows, act))?;
        let mut points = Vec::new();
        let mut omitted = Vec::new();
        for s in stages {
            let series = Series::from_stage(s.workload.stage);
            push_rows(
                &mut points,
                &mut omitted,
                &s.rows,
                series,
                &format!("{} · ", s.workload.stage),
            );
        }
        let stage_words: Vec<String> = stages
            .iter()
            .map(|s| {
                let w = &s.workload;
                match w.stage {
                    Stage::Prefill => format!("prefill {} tokens", w.seq_len),
                    Stage::Decode => format!("decode at context {}", w.context),
                    other => other.to_string(),
                }
            })
            .collect();
        let subtitle = stages
            .first()
            .map(|s| {
                let w = &s.workload;
                let p = w.precisions;
                format!(
                    "batch {} · {} · weights {}, activations {}, KV cache {} · attention {} · {} {}",
                    w.batch,
                    stage_words.join(", "),
                    p.weight,
                    p.act,
                    p.kv,
                    if w.flash_attention { "fused" } else { "unfused" },
                    human_bytes_per_s(chip.bandwidth),
                    device
                        .main_memory()
                        .map(|m| m.name.as_str())
                        .unwrap_or("main memory"),
                )
            })
            .unwrap_or_default();
        Ok(Self {
            title: format!(
                "{} on {}: {}",
                model.name,
                device.name,
                stages
                    .iter()
                    .map(|s| s.workload.stage.to_string())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            subtitle,
            chips: vec![chip],
            points,
            omitted,
        })
    }

    /// The plot of `roofline op`: the kernels of one operator on `device`.
    ///
    /// # Errors
    /// [`DeviceError::NoBandwidth`] when the chip has no main-memory bandwidth.
    pub fn for_ops(
        title: &str,
        subtitle: &str,
        device: &Device,
        rows: &[OpRow],
        act: Precision,
    ) -> Result<Self, DeviceError> {
        let chip = ChipRoofline::from_device(device, &precisions_used(rows, act))?;
        let mut points = Vec::new();
        let mut omitted = Vec::new();
        push_rows(&mut points, &mut omitted, rows, Series::Operator, "");
        Ok(Self {
            title: format!("{title} on {}", device.name),
            subtitle: subtitle.to_string(),
            chips: vec![chip],
            points,
            omitted,
        })
    }

    /// The roofline of one or more chips, without operators (`hardware show`,
    /// `hardware compare`); roofs of precisions in `emphasis` are drawn bold.
    ///
    /// # Errors
    /// [`DeviceError::NoBandwidth`] for a chip without main-memory bandwidth.
    pub fn for_devices(devices: &[Device], emphasis: &[Precision]) -> Result<Self, DeviceError> {
        let chips = devices
            .iter()
            .map(|d| ChipRoofline::from_device(d, emphasis))
            .collect::<Result<Vec<_>, _>>()?;
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        let title = if devices.len() == 1 {
            format!("Roofline of the {}", names.join(""))
        } else {
            format!("Rooflines: {}", names.join(" vs "))
        };
        let subtitle = chips
            .iter()
            .map(|c| format!("{}: {}", c.name, human_bytes_per_s(c.bandwidth)))
            .collect::<Vec<_>>()
            .join(" · ")
            + " · dense peaks; ridge point = peak / bandwidth";
        Ok(Self {
            title,
            subtitle,
            chips,
            points: Vec::new(),
            omitted: Vec::new(),
        })
    }
}

/// Axis ranges of a chart, whole decades: (min, max) of intensity and of FLOP/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axes {
    /// Arithmetic intensity range, FLOP/byte.
    pub x: (f64, f64),
    /// Attainable performance range, FLOP/s.
    pub y: (f64, f64),
}

fn decade_floor(v: f64) -> f64 {
    10f64.powf(v.log10().floor())
}
fn decade_ceil(v: f64) -> f64 {
    10f64.powf(v.log10().ceil())
}

/// The axes a chart is drawn on: every point and ridge point with room around them (a factor 1.5
/// to the left, 3 to the right, 2 below the lowest point, 1.6 above the highest roof for its
/// label), rounded out to whole decades, at least three decades each.
pub fn axes(chart: &RooflineChart) -> Axes {
    let mut xs: Vec<f64> = chart.points.iter().map(|p| p.intensity).collect();
    let mut ys: Vec<f64> = chart.points.iter().map(|p| p.attainable).collect();
    for c in &chart.chips {
        for r in &c.roofs {
            xs.push(r.peak / c.bandwidth);
            ys.push(r.peak);
        }
    }
    xs.retain(|v| v.is_finite() && *v > 0.0);
    ys.retain(|v| v.is_finite() && *v > 0.0);
    let (xmin, xmax) = bounds(&xs, (1.0, 100.0));
    let (ymin, ymax) = bounds(&ys, (1e12, 1e14));
    let x0 = decade_floor(xmin / 1.5);
    let mut x1 = decade_ceil(xmax * 3.0);
    if x1 / x0 < 999.0 {
        x1 = x0 * 1e3;
    }
    let y1 = decade_ceil(ymax * 1.6);
    // Low enough for the lowest point; the memory roof is cut by the bottom edge.
    let mut y0 = decade_floor(ymin / 2.0);
    if y1 / y0 < 999.0 {
        y0 = y1 / 1e3;
    }
    Axes {
        x: (x0, x1),
        y: (y0, y1),
    }
}

fn bounds(v: &[f64], default: (f64, f64)) -> (f64, f64) {
    if v.is_empty() {
        return default;
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    (lo, hi)
}

/// `value` with an SI prefix and no decimals where whole: `100 T`, `1 k`, `0.1`.
fn tick_label(v: f64, unit: &str) -> String {
    let lg = v.log10();
    if (lg - lg.round()).abs() > 1e-6 {
        return String::new();
    }
    let e = lg.round() as i32;
    const PREFIXES: [(i32, &str); 7] = [
        (18, "E"),
        (15, "P"),
        (12, "T"),
        (9, "G"),
        (6, "M"),
        (3, "k"),
        (0, ""),
    ];
    for (p, s) in PREFIXES {
        if e >= p {
            let m = 10f64.powi(e - p);
            return format!("{m} {s}{unit}").trim().to_string();
        }
    }
    format!("{v}")
}

const CHIP_COLORS: [(u8, u8, u8); 5] = [
    (44, 62, 80),
    (142, 68, 173),
    (22, 160, 133),
    (192, 57, 43),
    (183, 121, 31),
];

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02X}{g:02X}{b:02X}")
}

/// Points drawn within a few pixels of each other: the centre and each (series, label).
type Cluster = (f64, f64, Vec<(Series, String)>);

/// The chart as an SVG document (`WIDTH × HEIGHT` pixels), text in [`FONT`].
///
/// # Errors
/// A [`PlotError`] if `plotters` fails to draw (it does not for finite, positive values).
pub fn render_svg(chart: &RooflineChart) -> Result<String, PlotError> {
    let ax = axes(chart);
    let (x0, x1) = ax.x;
    let (y0, y1) = ax.y;
    let mut svg = String::new();
    let mut layer = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(pe)?;
        let mut ch = Frame {
            subtitle_size: 14,
            tick: tick_label,
            ..Frame::new(&chart.title, &chart.subtitle, ax.x, ax.y)
        }
        .draw(&root)?;

        // Roofs, drawn by plotters: per chip the memory roof up to the highest ridge, then each
        // compute roof from its ridge point (marked) to the right edge.
        for (ci, c) in chart.chips.iter().enumerate() {
            let rgb = CHIP_COLORS[ci % CHIP_COLORS.len()];
            let color = RGBColor(rgb.0, rgb.1, rgb.2);
            let w = c.bandwidth;
            let top = c.roofs.iter().map(|r| r.peak).fold(0.0, f64::max);
            if top <= 0.0 || w <= 0.0 {
                continue;
            }
            let xa = x0.max(y0 / w);
            ch.draw_series(LineSeries::new(
                vec![(xa, xa * w), (top / w, top)],
                color.stroke_width(3),
            ))
            .map_err(pe)?;
            for r in &c.roofs {
                let ridge = r.peak / w;
                let style = if r.emphasis {
                    color.stroke_width(3)
                } else {
                    color.mix(0.45).stroke_width(1)
                };
                ch.draw_series(LineSeries::new(vec![(ridge, r.peak), (x1, r.peak)], style))
                    .map_err(pe)?;
                ch.draw_series(std::iter::once(Circle::new(
                    (ridge, r.peak),
                    4,
                    color.filled(),
                )))
                .map_err(pe)?;
            }
        }

        let (px, py) = ch.plotting_area().get_pixel_range();
        let plot = Rect {
            x0: px.start as f64,
            y0: py.start as f64,
            x1: px.end as f64,
            y1: py.end as f64,
        };
        let to_px = |x: f64, y: f64| {
            let (a, b) = ch.backend_coord(&(x, y));
            (a as f64, b as f64)
        };
        let mut placer = Placer {
            taken: Vec::new(),
            bounds: Rect {
                x0: plot.x0 + 2.0,
                y0: plot.y0 + 2.0,
                x1: plot.x1 - 2.0,
                y1: plot.y1 - 2.0,
            },
        };
        let _ = writeln!(
            layer,
            r#"<g class="roofline-layer"><rect class="plot-area" x="{}" y="{}" width="{}" height="{}" fill="none" stroke="none" data-x-min="{x0:e}" data-x-max="{x1:e}" data-y-min="{y0:e}" data-y-max="{y1:e}"/>"#,
            plot.x0,
            plot.y0,
            plot.x1 - plot.x0,
            plot.y1 - plot.y0
        );

        // Legend, bottom right: under the compute roofs and right of the memory roof, where no
        // operator sits (every operator lies on the roofline).
        let multi = chart.chips.len() > 1;
        let mut legend: Vec<(String, Option<Series>, Option<String>)> = Vec::new();
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
        let lsize = 13.0;
        let lw = legend
            .iter()
            .map(|(t, _, _)| text_width(t, lsize) + 34.0)
            .fold(0.0, f64::max)
            .min(plot.x1 - plot.x0 - 20.0);
        let lh = legend.len() as f64 * 19.0 + 10.0;
        let (lx, ly) = (plot.x1 - 10.0 - lw, plot.y1 - 10.0 - lh);
        if !legend.is_empty() {
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
                    (Some(s), _) => marker(&mut layer, *s, lx + 14.0, cy - 4.0, s.color()),
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
                text_el(
                    &mut layer,
                    "legend-text",
                    lx + 30.0,
                    cy,
                    lsize,
                    "#222222",
                    t,
                );
            }
            let _ = writeln!(layer, "</g>");
        }

        // Point markers are obstacles too.
        let pts: Vec<(f64, f64)> = chart
            .points
            .iter()
            .map(|p| to_px(p.intensity, p.attainable))
            .collect();
        for &(x, y) in &pts {
            placer.taken.push(Rect::around(x, y, 6.0));
        }

        // Roof obstacles for label placement.
        let mut ridge_labels: Vec<(f64, f64, String, String)> = Vec::new();
        let mut roof_labels: Vec<(f64, String, String, bool, String, f64)> = Vec::new();
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
                placer.taken.push(Rect {
                    x0: rx,
                    y0: ry - 1.5,
                    x1: plot.x1,
                    y1: ry + 1.5,
                });
                ridge_labels.push((rx, ry, human_intensity(ridge), hex(rgb)));
                roof_labels.push((
                    ry,
                    r.label.clone(),
                    human(r.peak, unit_of(&r.label)),
                    r.emphasis,
                    hex(rgb),
                    rx,
                ));
            }
        }
        // Roof labels above each distinct roof at its right end, moved left along the roof (then
        // under it) while they would overlap something; a roof several chips share is labelled
        // once, in black; with several chips each label takes its chip's colour.
        roof_labels.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut seen: Vec<(i64, String)> = Vec::new();
        for (ry, label, value, emphasis, color, _) in &roof_labels {
            let key = (ry.round() as i64, label.clone());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let same: Vec<_> = roof_labels
                .iter()
                .filter(|o| (o.0 - ry).abs() < 0.5 && &o.1 == label)
                .collect();
            let shared = same.len() > 1;
            // The label stays over the roof: right of its (leftmost) ridge point.
            let start = same.iter().map(|o| o.5).fold(f64::INFINITY, f64::min) + 6.0;
            let color = if multi && !shared {
                color.as_str()
            } else if *emphasis {
                "#111111"
            } else {
                "#555555"
            };
            let text = format!("{label} {value}");
            let size = 13.0;
            let w = text_width(&text, size);
            let mut spot = None;
            'search: for below in [false, true] {
                for k in 0..12 {
                    let x = plot.x1 - 6.0 - w - k as f64 * 40.0;
                    // Clear of the line and of the points on it (6 px either side).
                    let base = if below { ry + size + 9.0 } else { ry - 8.0 };
                    let rect = Rect {
                        x0: x,
                        y0: base - size,
                        x1: x + w,
                        y1: base + 2.0,
                    };
                    if rect.inside(&placer.bounds)
                        && x >= start
                        && !placer.taken.iter().any(|t| t.overlap(&rect) > 0.0)
                    {
                        spot = Some((x, base, rect));
                        break 'search;
                    }
                }
            }
            let (x, base, rect) = spot.unwrap_or_else(|| {
                let x = plot.x1 - 6.0 - w;
                let base = ry - 5.0;
                (
                    x,
                    base,
                    Rect {
                        x0: x,
                        y0: base - size,
                        x1: x + w,
                        y1: base + 2.0,
                    },
                )
            });
            placer.taken.push(rect);
            text_el(&mut layer, "roof-label", x, base, size, color, &text);
        }
        // Ridge labels: the value, next to the marker (a leader line when pushed away).
        for (rx, ry, value, color) in &ridge_labels {
            let size = 12.0;
            let w = text_width(value, size);
            let (tx, ty, far) = placer.place((*rx, *ry), (w, size + 2.0), 5.0, &BELOW_RIGHT);
            if far {
                leader(&mut layer, (*rx, *ry), (tx, ty, w, size + 2.0), color);
            }
            text_el(&mut layer, "ridge-label", tx, ty + size, size, color, value);
        }
        // Memory roof label: the bandwidth, beside the lower part of the line.
        for (ci, c) in chart.chips.iter().enumerate() {
            let xa = x0.max(y0 / c.bandwidth);
            let xm = (xa * 3.0).min(x1);
            let (mx, my) = to_px(xm, xm * c.bandwidth);
            let text = human_bytes_per_s(c.bandwidth);
            let size = 13.0;
            let w = text_width(&text, size);
            let (tx, ty, far) = placer.place((mx, my), (w, size + 2.0), 6.0, &AROUND);
            let color = hex(CHIP_COLORS[ci % CHIP_COLORS.len()]);
            if far {
                leader(&mut layer, (mx, my), (tx, ty, w, size + 2.0), &color);
            }
            text_el(
                &mut layer,
                "memory-label",
                tx,
                ty + size,
                size,
                &color,
                &text,
            );
        }

        // Operators: one marker with a tooltip each; coincident markers share one label.
        let _ = writeln!(layer, r#"<g class="op-points">"#);
        for (p, &(x, y)) in chart.points.iter().zip(&pts) {
            let _ = write!(
                layer,
                r#"<g class="op-point" data-stage="{}" data-name="{}" data-intensity="{:e}" data-attainable="{:e}"><title>{}</title>"#,
                p.series.name(),
                xml_escape(&p.label),
                p.intensity,
                p.attainable,
                xml_escape(&p.tooltip.join("\n"))
            );
            marker(&mut layer, p.series, x, y, p.series.color());
            let _ = writeln!(layer, "</g>");
        }
        let _ = writeln!(layer, "</g>");
        // Points within 4 px of each other form a cluster with one label; a name in every series
        // of a mixed cluster is written once, others carry their stage.
        let mut clusters: Vec<Cluster> = Vec::new();
        for (p, &(x, y)) in chart.points.iter().zip(&pts) {
            let entry = (p.series, p.label.clone());
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
        let size = 12.0;
        for (x, y, entries) in &clusters {
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
            let (color, stage) = match series.as_slice() {
                [one] => (one.color(), one.name()),
                _ => ("#333333", "mixed"),
            };
            let w = lines
                .iter()
                .map(|l| text_width(l, size))
                .fold(0.0, f64::max);
            let h = lines.len() as f64 * (size + 2.0);
            let (tx, ty, far) = placer.place((*x, *y), (w, h), 8.0, &AROUND);
            let _ = write!(layer, r#"<g class="point-label" data-stage="{stage}">"#);
            if far {
                leader(&mut layer, (*x, *y), (tx, ty, w, h), color);
            }
            for (i, l) in lines.iter().enumerate() {
                text_el(
                    &mut layer,
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
        let _ = writeln!(layer, "</g>");
        root.present().map_err(pe)?;
    }
    match svg.rfind("</svg>") {
        Some(i) => svg.insert_str(i, &layer),
        None => return Err(PlotError("plotters wrote no closing </svg>".into())),
    }
    Ok(svg)
}

fn unit_of(label: &str) -> &'static str {
    if label.split('/').all(|p| p.starts_with("int")) {
        "OP/s"
    } else {
        "FLOP/s"
    }
}

/// Rasterises an SVG (as [`render_svg`] writes it) to a PNG at [`PNG_SCALE`], with the embedded
/// DejaVu Sans for text.
///
/// # Errors
/// A [`PlotError`] if the SVG does not parse or the PNG cannot be encoded.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, PlotError> {
    use resvg::{tiny_skia, usvg};
    let mut opt = usvg::Options {
        font_family: "DejaVu Sans".into(),
        ..usvg::Options::default()
    };
    {
        let db = opt.fontdb_mut();
        db.load_font_data(DEJAVU_SANS.to_vec());
        db.set_sans_serif_family("DejaVu Sans");
    }
    let tree = usvg::Tree::from_str(svg, &opt).map_err(pe)?;
    let size = tree.size();
    let (w, h) = (
        (size.width() * PNG_SCALE).ceil() as u32,
        (size.height() * PNG_SCALE).ceil() as u32,
    );
    let mut pixmap = tiny_skia::Pixmap::new(w, h)
        .ok_or_else(|| PlotError(format!("cannot allocate a {w}×{h} image")))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(pe)
}

/// The plot file format, from the path's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotFormat {
    /// `.svg`
    Svg,
    /// `.png`
    Png,
}

impl PlotFormat {
    /// `.svg` or `.png` (case-insensitive), else `None`.
    pub fn from_path(path: &std::path::Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "svg" => Some(PlotFormat::Svg),
            "png" => Some(PlotFormat::Png),
            _ => None,
        }
    }
}

/// The chart's bytes in `format`: the SVG text, or the PNG.
///
/// # Errors
/// A [`PlotError`] from drawing or rasterising.
pub fn render(chart: &RooflineChart, format: PlotFormat) -> Result<Vec<u8>, PlotError> {
    let svg = render_svg(chart)?;
    match format {
        PlotFormat::Svg => Ok(svg.into_bytes()),
        PlotFormat::Png => svg_to_png(&svg),
    }
}
