//! The hierarchical roofline of a measured machine: one memory roof per level (L1, L2, L3,
//! DRAM), one compute roof per precision, each measured roof solid and its datasheet-style
//! theoretical roof dotted beside it, in the same colour. Drawn by `plotters` on log-log axes
//! (arithmetic intensity against attainable FLOP/s), rasterised to PNG by [`crate::plot`]'s
//! `resvg` path.
//!
//! A memory roof is the line `attainable = intensity × bandwidth` (slope 1 on log-log axes),
//! drawn up to the highest measured compute roof; a compute roof is horizontal, from the point
//! where the fastest memory roof meets it to the right edge (Ilic, Pratas and Sousa,
//! "Cache-aware Roofline model", IEEE CAL 2014, draw the hierarchy the same way).
//! [`crate::plot`]'s chart has one memory roof per chip and no dotted roofs, hence this module.

use crate::plot::frame::Frame;
use crate::plot::layout::{beside_line, place_block, place_text, Placer, Rect};
use crate::plot::{pe, svg_to_png, xml_escape, PlotError, PlotFormat, FONT, HEIGHT, WIDTH};
use crate::units::{human, human_bytes_per_s, human_flops_per_s};
use plotters::prelude::*;
use roofline_core::device::MemoryKind;
use roofline_core::measured::Measurement;
use roofline_core::precision::Precision;
use std::fmt::Write as _;

/// One roof of the hierarchical chart.
#[derive(Debug, Clone, PartialEq)]
pub struct HierRoof {
    /// What it is: `L1d`, `DRAM`, `fp32`.
    pub label: String,
    /// Bandwidth (B/s) for a memory roof, peak (FLOP/s or OP/s) for a compute roof.
    pub value: f64,
    /// Drawn dotted: a theoretical figure, not a measured one.
    pub theoretical: bool,
    /// Colour, `(r, g, b)`; a measured roof and its theoretical twin share it.
    pub color: (u8, u8, u8),
}

/// Everything the hierarchical plot shows.
#[derive(Debug, Clone, PartialEq)]
pub struct HierChart {
    /// First line.
    pub title: String,
    /// Second line.
    pub subtitle: String,
    /// Memory roofs, measured and theoretical.
    pub memory: Vec<HierRoof>,
    /// Compute roofs, measured and theoretical.
    pub compute: Vec<HierRoof>,
}

/// The colour of a memory level's roof, the same in the hierarchical and kernels plots.
pub(crate) fn level_color(kind: MemoryKind) -> (u8, u8, u8) {
    match kind {
        MemoryKind::L1 => (39, 174, 96),
        MemoryKind::L2 => (41, 128, 185),
        MemoryKind::L3 => (142, 68, 173),
        MemoryKind::Sram => (22, 160, 133),
        MemoryKind::Main => (44, 62, 80),
        _ => (127, 140, 141),
    }
}

fn precision_color(p: Precision) -> (u8, u8, u8) {
    match p {
        Precision::Fp64 => (192, 57, 43),
        Precision::Fp32 => (211, 84, 0),
        Precision::Tf32 => (183, 121, 31),
        Precision::Bf16 | Precision::Fp16 => (22, 160, 133),
        Precision::Fp8 => (127, 140, 141),
        Precision::Int8 | Precision::Int4 => (120, 66, 18),
        _ => (127, 140, 141),
    }
}

fn rate(p: Precision, v: f64) -> String {
    if matches!(p, Precision::Int8 | Precision::Int4) {
        human(v, "OP/s")
    } else {
        human_flops_per_s(v)
    }
}

impl HierChart {
    /// The chart of a measurement: per level its measured read bandwidth (and its theoretical
    /// one, dotted, where known); per precision its all-threads peak (and the theoretical peak,
    /// dotted).
    pub fn from_measurement(m: &Measurement) -> Self {
        let mut memory = Vec::new();
        for l in &m.levels {
            let color = level_color(l.kind);
            if let Some(r) = l.read.filter(|r| *r > 0.0) {
                memory.push(HierRoof {
                    label: format!("{} {}", l.name, human_bytes_per_s(r)),
                    value: r,
                    theoretical: false,
                    color,
                });
            }
            if let Some(t) = l.theoretical.filter(|t| *t > 0.0) {
                memory.push(HierRoof {
                    label: format!("{} theoretical {}", l.name, human_bytes_per_s(t)),
                    value: t,
                    theoretical: true,
                    color,
                });
            }
        }
        let mut compute = Vec::new();
        for p in Precision::ALL {
            let Some(peak) = m.peak(p) else { continue };
            let color = precision_color(p);
            compute.push(HierRoof {
                label: format!("{p} {}", rate(p, peak.value.median)),
                value: peak.value.median,
                theoretical: false,
                color,
            });
            if let Some(t) = peak.theoretical.filter(|t| *t > 0.0) {
                compute.push(HierRoof {
                    label: format!("{p} theoretical {}", rate(p, t)),
                    value: t,
                    theoretical: true,
                    color,
                });
            }
        }
        let clock = m
            .clock_all_hz
            .map(|c| format!(", clock {:.2} GHz", c / 1e9))
            .unwrap_or_default();
        HierChart {
            title: format!("Measured roofline of {}", m.host),
            subtitle: format!(
                "{} · {} threads{}{} · {} · solid: measured (median), dotted: theoretical",
                m.processor,
                m.threads,
                if m.pinned { " pinned" } else { "" },
                clock,
                m.date
            ),
            memory,
            compute,
        }
    }

    /// Axis ranges, whole decades: intensity (FLOP/byte) and FLOP/s. Every ridge point (each
    /// compute roof against each memory roof) lies inside with a factor 4 to spare sideways;
    /// the top has room for the labels, the bottom shows the slowest roof a decade down.
    pub fn axes(&self) -> ((f64, f64), (f64, f64)) {
        let mut ridges = Vec::new();
        for c in &self.compute {
            for m in &self.memory {
                ridges.push(c.value / m.value);
            }
        }
        let lo = ridges.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ridges.iter().copied().fold(0.0, f64::max);
        let (lo, hi) = if lo.is_finite() && hi > 0.0 {
            (lo, hi)
        } else {
            (0.1, 10.0)
        };
        let floor = |v: f64| 10f64.powf(v.log10().floor());
        let ceil = |v: f64| 10f64.powf(v.log10().ceil());
        let x0 = floor(lo / 4.0);
        let x1 = ceil(hi * 4.0).max(x0 * 100.0);
        let top = self.compute.iter().map(|r| r.value).fold(0.0, f64::max);
        let low_mem = self
            .memory
            .iter()
            .map(|r| r.value)
            .fold(f64::INFINITY, f64::min);
        let y1 = ceil(if top > 0.0 { top * 3.0 } else { 1e12 });
        let y0 = if low_mem.is_finite() {
            floor((low_mem * x0).min(y1 / 1e3))
        } else {
            y1 / 1e3
        };
        ((x0, x1), (y0, y1))
    }
}

/// The chart as an SVG document (`WIDTH × HEIGHT` pixels). Each roof's label is an SVG text
/// element with `class="roof-label"` and `data-theoretical` for tests and styling.
///
/// # Errors
/// A [`PlotError`] if `plotters` fails to draw, or there is no roof at all.
pub fn render_svg(chart: &HierChart) -> Result<String, PlotError> {
    if chart.memory.is_empty() && chart.compute.is_empty() {
        return Err(PlotError("the measurement has no roof to draw".into()));
    }
    let ((x0, x1), (y0, y1)) = chart.axes();
    let mut svg = String::new();
    let mut labels = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(pe)?;
        let mut ch = Frame::new(&chart.title, &chart.subtitle, (x0, x1), (y0, y1)).draw(&root)?;

        let top_peak = chart
            .compute
            .iter()
            .filter(|r| !r.theoretical)
            .map(|r| r.value)
            .fold(0.0, f64::max);
        let top_peak = if top_peak > 0.0 { top_peak } else { y1 / 3.0 };
        let fastest_mem = chart
            .memory
            .iter()
            .filter(|r| !r.theoretical)
            .map(|r| r.value)
            .fold(0.0, f64::max);
        let draw = |ch: &mut ChartContext<'_, _, _>,
                    pts: Vec<(f64, f64)>,
                    color: RGBColor,
                    dotted: bool|
         -> Result<(), PlotError> {
            if dotted {
                ch.draw_series(DashedLineSeries::new(pts, 3, 5, color.stroke_width(2)))
                    .map_err(pe)?;
            } else {
                ch.draw_series(LineSeries::new(pts, color.stroke_width(3)))
                    .map_err(pe)?;
            }
            Ok(())
        };

        let (px, py) = ch.plotting_area().get_pixel_range();
        let mut placer = Placer::within(&Rect::of_pixels(px, py));
        let pixel = |ch: &ChartContext<'_, _, _>, x: f64, y: f64| {
            let (a, b): (i32, i32) = ch.backend_coord(&(x, y));
            (f64::from(a), f64::from(b))
        };
        // Memory roofs: from the left edge (or the bottom) up to the highest measured peak.
        type Spot = (f64, f64, &'static str);
        let mut label_spots: Vec<(Vec<Spot>, String, RGBColor, bool)> = Vec::new();
        for r in &chart.memory {
            let (cr, cg, cb) = r.color;
            let color = RGBColor(cr, cg, cb);
            let xa = x0.max(y0 / r.value);
            let xb = (top_peak / r.value).min(x1);
            draw(
                &mut ch,
                vec![(xa, xa * r.value), (xb, xb * r.value)],
                color,
                r.theoretical,
            )?;
            // Label beside the line, from its lower end.
            let (a, b) = (pixel(&ch, xa, xa * r.value), pixel(&ch, xb, xb * r.value));
            placer.segments.push((a, b));
            label_spots.push((
                beside_line(a, b, 13.0, true),
                r.label.clone(),
                color,
                r.theoretical,
            ));
        }
        // Compute roofs: from the fastest measured memory roof to the right edge.
        for r in &chart.compute {
            let (cr, cg, cb) = r.color;
            let color = RGBColor(cr, cg, cb);
            let xa = if fastest_mem > 0.0 {
                (r.value / fastest_mem).max(x0)
            } else {
                x0
            };
            draw(
                &mut ch,
                vec![(xa, r.value), (x1, r.value)],
                color,
                r.theoretical,
            )?;
            let (a, b) = (pixel(&ch, xa, r.value), pixel(&ch, x1, r.value));
            placer.segments.push((a, b));
            label_spots.push((
                beside_line(a, b, 13.0, false),
                r.label.clone(),
                color,
                r.theoretical,
            ));
        }
        // Labels as plain SVG text with a white halo, each at the first spot beside its line
        // clear of the other labels and lines; those with none are listed in a note.
        let mut unlabelled: Vec<String> = Vec::new();
        for (spots, text, color, theoretical) in label_spots {
            // The whole label, else its name alone (the value then in the note).
            let found = place_or_shorten(&mut placer, &text, &spots, &mut unlabelled);
            let Some(((x, y, anchor), text)) = found else {
                continue;
            };
            let _ = writeln!(
                labels,
                r#"<text class="roof-label" data-theoretical="{theoretical}" x="{x:.1}" y="{y:.1}" font-family="{FONT}" font-size="13" fill="rgb({},{},{})" stroke="white" stroke-width="3" paint-order="stroke" text-anchor="{anchor}"{}>{}</text>"#,
                color.0,
                color.1,
                color.2,
                if theoretical {
                    r#" font-style="italic""#
                } else {
                    ""
                },
                xml_escape(&text)
            );
        }
        if !unlabelled.is_empty() {
            let mut lines = vec!["no room beside the line for:".to_string()];
            lines.extend(unlabelled);
            let (x, y) = place_block(&mut placer, &lines, 12.0);
            for (i, l) in lines.iter().enumerate() {
                let _ = writeln!(
                    labels,
                    r##"<text class="roof-note" x="{x:.1}" y="{:.1}" font-family="{FONT}" font-size="12" fill="#444444">{}</text>"##,
                    y + 16.0 * i as f64,
                    xml_escape(l)
                );
            }
        }
        root.present().map_err(pe)?;
    }
    match svg.rfind("</svg>") {
        Some(i) => svg.insert_str(i, &labels),
        None => return Err(PlotError("plotters wrote no closing </svg>".into())),
    }
    Ok(svg)
}

/// Places a roof's label at the first free spot of `spots` (13 px), else its name alone
/// ([`short_label`]), the whole label then listed in `unlabelled` for the note; `None` when
/// neither fits.
pub(crate) fn place_or_shorten(
    placer: &mut Placer,
    text: &str,
    spots: &[(f64, f64, &'static str)],
    unlabelled: &mut Vec<String>,
) -> Option<((f64, f64, &'static str), String)> {
    if let Some(p) = place_text(placer, text, 13.0, spots) {
        return Some((p, text.to_string()));
    }
    unlabelled.push(text.to_string());
    let short = short_label(text);
    (short != text)
        .then(|| place_text(placer, &short, 13.0, spots))
        .flatten()
        .map(|p| (p, short))
}

/// A roof's label without its value: `L2 theoretical` of `L2 theoretical 448.0 GB/s`.
pub(crate) fn short_label(label: &str) -> String {
    label
        .split(' ')
        .take_while(|w| !w.starts_with(|c: char| c.is_ascii_digit()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The chart's bytes in `format`: SVG text or PNG.
///
/// # Errors
/// A [`PlotError`] from drawing or rasterising.
pub fn render(chart: &HierChart, format: PlotFormat) -> Result<Vec<u8>, PlotError> {
    let svg = render_svg(chart)?;
    match format {
        PlotFormat::Svg => Ok(svg.into_bytes()),
        PlotFormat::Png => svg_to_png(&svg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_core::measured::{MeasuredLevel, MeasuredPeak, Stat};

    fn stat(v: f64) -> Stat {
        Stat {
            median: v,
            min: v,
            max: v,
            samples: 5,
            stable: true,
        }
    }

    fn measurement() -> Measurement {
        let level = |kind, name: &str, read: f64, theo: Option<f64>| MeasuredLevel {
            kind,
            name: name.into(),
            capacity: None,
            effective_capacity: None,
            window: (1.0, 2.0),
            points: 2,
            read: Some(read),
            copy: None,
            triad: None,
            theoretical: theo,
            theoretical_source: None,
        };
        let peak = |p, v: f64, threads| MeasuredPeak {
            precision: p,
            kernel: "k".into(),
            flop_per_instruction: 16.0,
            threads,
            value: stat(v),
            theoretical: Some(v * 1.02),
        };
        Measurement {
            host: "box".into(),
            processor: "CPU".into(),
            vendor: String::new(),
            date: "2025-01-31".into(),
            isa: "avx2".into(),
            threads: 2,
            pinned: true,
            clock_hz: Some(3.5e9),
            clock_all_hz: Some(3.5e9),
            clock_source: String::new(),
            unsettled: vec![],
            peaks: vec![
                peak(Precision::Fp64, 112e9, 2),
                peak(Precision::Fp32, 224e9, 2),
                peak(Precision::Fp32, 112e9, 1),
            ],
            sweep: vec![],
            levels: vec![
                level(MemoryKind::L1, "L1d", 380e9, Some(448e9)),
                level(MemoryKind::L2, "L2", 200e9, Some(448e9)),
                level(MemoryKind::L3, "L3", 100e9, Some(224e9)),
                level(MemoryKind::Main, "DRAM", 40e9, None),
            ],
            launch_overhead: None,
            rejected: vec![],
            notes: vec![],
            method: String::new(),
        }
    }

    #[test]
    fn one_roof_per_level_and_precision_with_theoretical_twins() {
        let c = HierChart::from_measurement(&measurement());
        // 4 measured memory roofs + 3 theoretical (no DRAM datasheet figure).
        assert_eq!(c.memory.len(), 7);
        assert_eq!(c.memory.iter().filter(|r| r.theoretical).count(), 3);
        // fp64 and fp32, all threads only (the 1-thread fp32 is not a roof), each with a twin.
        assert_eq!(c.compute.len(), 4);
        assert_eq!(c.compute[2].value, 224e9);
        assert!(c.compute[3].theoretical);
        // Ridges span 112e9 / 448e9 = 0.25 to 228.48e9 / 40e9 = 5.7 FLOP/B; a factor 4 of room
        // and whole decades: 0.01 to 100.
        let ((x0, x1), (_, y1)) = c.axes();
        assert!(
            (x0 - 0.01).abs() < 1e-12 && (x1 - 100.0).abs() < 1e-9,
            "{x0} {x1}"
        );
        assert_eq!(y1, 1e12);
    }

    #[test]
    fn svg_labels_every_roof_and_png_renders() -> Result<(), Box<dyn std::error::Error>> {
        let c = HierChart::from_measurement(&measurement());
        let svg = render_svg(&c)?;
        // Each of the 11 roofs is named beside its line, in full or by name alone (then in full
        // in the note), or in the note only.
        let rows = c.memory.iter().chain(&c.compute);
        for r in rows {
            let full = svg.contains(&format!(">{}</text>", xml_escape(&r.label)));
            assert!(full, "{} neither beside its line nor in the note", r.label);
        }
        let beside = svg.matches(r#"class="roof-label""#).count();
        let noted = svg
            .matches(r#"class="roof-note""#)
            .count()
            .saturating_sub(1);
        assert!(beside + noted >= 11, "{beside} + {noted}");
        assert!(svg.contains("L1d 380.0 GB/s"));
        assert!(svg.contains("DRAM 40.0 GB/s"));
        assert!(svg.contains("fp32 224.0 GFLOP/s"));
        let png = render(&c, PlotFormat::Png)?;
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        Ok(())
    }
}
