//! The plot of `roofline measure kernels`: the measured hierarchical roofline (one memory roof
//! per level, the fp32 compute roof the predictions use) with every kernel twice, at its
//! arithmetic intensity: its measured point (FLOPs / measured time, filled) and its predicted
//! point (FLOPs / predicted time, hollow), joined by a line; a legend panel on the right numbers
//! the kernels and gives each one's error.
//!
//! The roofs are [`crate::hier_plot::HierRoof`]s drawn as [`crate::hier_plot`] draws them (slope-1
//! memory roofs up to the compute roof, the compute roof from the fastest memory roof to the
//! right edge); that module's chart has no points, hence this one.

use crate::hier_plot::{level_color, place_or_shorten, HierRoof};
use crate::plot::frame::Frame;
use crate::plot::layout::{beside_line, text_width, wrap_text, Placer, Rect, AROUND};
use crate::plot::{pe, svg_to_png, xml_escape, PlotError, PlotFormat, FONT, HEIGHT, WIDTH};
use crate::units::{human_bytes_per_s, human_flops_per_s};
use plotters::prelude::*;
use roofline_core::device::Device;
use roofline_core::precision::Precision;
use roofline_core::prediction::SuiteCheck;
use std::fmt::Write as _;

/// Width of the legend panel right of the chart, pixels.
pub const LEGEND_WIDTH: u32 = 360;

/// One kernel on the chart.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteKernelPoint {
    /// Its number in the legend (1-based).
    pub number: usize,
    /// Its name.
    pub name: String,
    /// Arithmetic intensity, FLOP/byte.
    pub intensity: f64,
    /// FLOPs / measured time, FLOP/s.
    pub measured: f64,
    /// FLOPs / predicted (hierarchical) time, FLOP/s.
    pub predicted: f64,
    /// The prediction's error.
    pub error: f64,
    /// The memory level it was predicted from.
    pub level: String,
    /// Colour, `(r, g, b)`, by family.
    pub color: (u8, u8, u8),
}

/// Everything the plot shows.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteChart {
    /// First line.
    pub title: String,
    /// Second line.
    pub subtitle: String,
    /// Memory roofs, one per level with a bandwidth.
    pub memory: Vec<HierRoof>,
    /// Compute roofs (fp32).
    pub compute: Vec<HierRoof>,
    /// The GEMM ceiling the hierarchical prediction held matrix-unit launches against, where
    /// it is below the compute roof; drawn dashed.
    pub ceiling: Option<HierRoof>,
    /// The kernels.
    pub points: Vec<SuiteKernelPoint>,
}

fn family_color(f: &str) -> (u8, u8, u8) {
    match f {
        "gemm" => (192, 57, 43),
        "elementwise" => (41, 128, 185),
        "norm" => (39, 174, 96),
        "softmax" => (142, 68, 173),
        "attention" => (211, 84, 0),
        "chain" => (22, 160, 133),
        _ => (85, 85, 85),
    }
}

impl SuiteChart {
    /// The chart of a suite's check on `device` (the chip the predictions used).
    pub fn new(check: &SuiteCheck, device: &Device, subtitle: &str) -> Self {
        let memory = device
            .memory
            .iter()
            .filter_map(|l| {
                let bw = l.bandwidth.as_ref()?.value.get();
                (bw > 0.0).then(|| HierRoof {
                    label: format!("{} {}", l.name, human_bytes_per_s(bw)),
                    value: bw,
                    theoretical: false,
                    color: level_color(l.kind),
                })
            })
            .collect();
        let compute = device
            .peak(Precision::Fp32)
            .ok()
            .map(|p| HierRoof {
                label: format!("fp32 {}", human_flops_per_s(p.get())),
                value: p.get(),
                theoretical: false,
                color: (211, 84, 0),
            })
            .into_iter()
            .collect();
        let peak = device
            .peak(Precision::Fp32)
            .map(|p| p.get())
            .unwrap_or(f64::INFINITY);
        let ceiling = check
            .ceilings
            .gemm
            .as_ref()
            .map(|c| c.value.get())
            .filter(|&c| c > 0.0 && c < peak)
            .map(|c| HierRoof {
                label: format!("GEMM ceiling {}", human_flops_per_s(c)),
                value: c,
                theoretical: false,
                color: (211, 84, 0),
            });
        let points = check
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.intensity.get() > 0.0 && r.achieved.get() > 0.0)
            .map(|(i, r)| SuiteKernelPoint {
                number: i + 1,
                name: r.name.clone(),
                intensity: r.intensity.get(),
                measured: r.achieved.get(),
                predicted: r.predicted_attainable.get(),
                error: r.error,
                level: r.level.clone(),
                color: family_color(&r.family),
            })
            .collect();
        SuiteChart {
            title: format!("Predicted against measured on {}", device.name),
            subtitle: format!(
                "{subtitle} · filled: measured, hollow: predicted (hierarchical roofline) · median error {:.1} %",
                100.0 * check.median_error
            ),
            memory,
            compute,
            ceiling,
            points,
        }
    }

    /// Axis ranges, whole decades: every ridge point with a factor 4 to spare, every kernel
    /// point with a factor 2.
    pub fn axes(&self) -> ((f64, f64), (f64, f64)) {
        let mut xs = Vec::new();
        for c in &self.compute {
            for m in &self.memory {
                xs.push(c.value / m.value);
                xs.push(c.value / m.value * 4.0);
                xs.push(c.value / m.value / 4.0);
            }
        }
        let mut ys: Vec<f64> = self.compute.iter().map(|c| c.value * 3.0).collect();
        for p in &self.points {
            xs.extend([p.intensity / 2.0, p.intensity * 2.0]);
            ys.extend([
                p.measured / 2.0,
                p.predicted / 2.0,
                p.measured * 2.0,
                p.predicted * 2.0,
            ]);
        }
        let lo = |v: &[f64], d: f64| {
            v.iter()
                .copied()
                .filter(|x| *x > 0.0)
                .fold(f64::INFINITY, f64::min)
                .min(d)
        };
        let hi = |v: &[f64], d: f64| v.iter().copied().fold(0.0, f64::max).max(d);
        let floor = |v: f64| 10f64.powf(v.log10().floor());
        let ceil = |v: f64| 10f64.powf(v.log10().ceil());
        let (x0, x1) = (floor(lo(&xs, 1.0)), ceil(hi(&xs, 10.0)));
        let (y0, y1) = (floor(lo(&ys, 1e9)), ceil(hi(&ys, 1e10)));
        ((x0, x1.max(x0 * 100.0)), (y0, y1.max(y0 * 100.0)))
    }
}

/// A roof's label, placed on the line.
struct Label {
    /// Where it may go: anchor point, baseline, `text-anchor`, in order of preference.
    spots: Vec<(f64, f64, &'static str)>,
    text: String,
    color: (u8, u8, u8),
}

/// The chart as an SVG document (`WIDTH + LEGEND_WIDTH × HEIGHT` pixels). Each kernel's
/// measured point is a `circle` with `class="measured"`, its predicted point one with
/// `class="predicted"`, their joining line a `line` with `class="join"`, each with `data-kernel`
/// (its number); each roof's label has `class="roof-label"`.
///
/// # Errors
/// A [`PlotError`] if `plotters` fails to draw, or there is no roof.
pub fn render_svg(chart: &SuiteChart) -> Result<String, PlotError> {
    if chart.memory.is_empty() && chart.compute.is_empty() {
        return Err(PlotError("the chip has no roof to draw".into()));
    }
    let ((x0, x1), (y0, y1)) = chart.axes();
    let mut svg = String::new();
    let mut extra = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH + LEGEND_WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(pe)?;
        let (left, _legend) = root.split_horizontally(WIDTH);
        let mut ch = Frame {
            subtitle_size: 12,
            y_desc: "performance (FLOP/s)",
            ..Frame::new(&chart.title, &chart.subtitle, (x0, x1), (y0, y1))
        }
        .draw(&left)?;
        let top_peak = chart.compute.iter().map(|r| r.value).fold(0.0, f64::max);
        let top_peak = if top_peak > 0.0 { top_peak } else { y1 / 3.0 };
        let fastest = chart.memory.iter().map(|r| r.value).fold(0.0, f64::max);
        let mut labels: Vec<Label> = Vec::new();
        let (px, py) = ch.plotting_area().get_pixel_range();
        let mut placer = Placer::within(&Rect::of_pixels(px, py));
        let pixel = |ch: &ChartContext<'_, _, _>, x: f64, y: f64| {
            let (a, b): (i32, i32) = ch.backend_coord(&(x, y));
            (f64::from(a), f64::from(b))
        };
        for r in &chart.memory {
            let color = RGBColor(r.color.0, r.color.1, r.color.2);
            let xa = x0.max(y0 / r.value);
            let xb = (top_peak / r.value).min(x1);
            ch.draw_series(LineSeries::new(
                vec![(xa, xa * r.value), (xb, xb * r.value)],
                color.stroke_width(2),
            ))
            .map_err(pe)?;
            let (a, b) = (pixel(&ch, xa, xa * r.value), pixel(&ch, xb, xb * r.value));
            placer.segments.push((a, b));
            labels.push(Label {
                spots: beside_line(a, b, 13.0, true),
                text: r.label.clone(),
                color: r.color,
            });
        }
        // Where a compute roof at `value` meets the fastest memory roof (its left end).
        let left_end = |value: f64| {
            if fastest > 0.0 {
                (value / fastest).max(x0)
            } else {
                x0
            }
        };
        for r in &chart.compute {
            let color = RGBColor(r.color.0, r.color.1, r.color.2);
            let xa = left_end(r.value);
            ch.draw_series(LineSeries::new(
                vec![(xa, r.value), (x1, r.value)],
                color.stroke_width(2),
            ))
            .map_err(pe)?;
            let (a, b) = (pixel(&ch, xa, r.value), pixel(&ch, x1, r.value));
            placer.segments.push((a, b));
            labels.push(Label {
                spots: beside_line(a, b, 13.0, false),
                text: r.label.clone(),
                color: r.color,
            });
        }
        if let Some(r) = &chart.ceiling {
            let color = RGBColor(r.color.0, r.color.1, r.color.2);
            let xa = left_end(r.value);
            ch.draw_series(DashedLineSeries::new(
                vec![(xa, r.value), (x1, r.value)],
                8,
                5,
                color.stroke_width(2),
            ))
            .map_err(pe)?;
            // From its left end: the peak's label sits at the line's right end.
            let (a, b) = (pixel(&ch, xa, r.value), pixel(&ch, x1, r.value));
            placer.segments.push((a, b));
            labels.push(Label {
                spots: beside_line(a, b, 13.0, true),
                text: r.label.clone(),
                color: r.color,
            });
        }
        // Kernels: a joining line, the predicted point hollow, the measured point filled, the
        // number beside the measured point. Written as plain SVG so tests can find them.
        for p in &chart.points {
            let (m, q) = (
                pixel(&ch, p.intensity, p.measured),
                pixel(&ch, p.intensity, p.predicted),
            );
            placer.taken.push(Rect::around(m.0, m.1, 6.0));
            placer.taken.push(Rect::around(q.0, q.1, 6.0));
            placer.segments.push((m, q));
        }
        let mut unnumbered: Vec<String> = Vec::new();
        for p in &chart.points {
            let (mx, my) = ch.backend_coord(&(p.intensity, p.measured));
            let (qx, qy) = ch.backend_coord(&(p.intensity, p.predicted));
            let (r, g, b) = p.color;
            let _ = writeln!(
                extra,
                r#"<line class="join" data-kernel="{n}" x1="{mx}" y1="{my}" x2="{qx}" y2="{qy}" stroke="rgb({r},{g},{b})" stroke-width="1.5" stroke-dasharray="4 3"/>"#,
                n = p.number
            );
            let _ = writeln!(
                extra,
                r#"<circle class="predicted" data-kernel="{n}" cx="{qx}" cy="{qy}" r="5" fill="white" stroke="rgb({r},{g},{b})" stroke-width="2"/>"#,
                n = p.number
            );
            let _ = writeln!(
                extra,
                r#"<circle class="measured" data-kernel="{n}" cx="{mx}" cy="{my}" r="5" fill="rgb({r},{g},{b})"><title>{name}: measured {m}, predicted {q} ({e:.0} %)</title></circle>"#,
                n = p.number,
                name = xml_escape(&p.name),
                m = human_flops_per_s(p.measured),
                q = human_flops_per_s(p.predicted),
                e = 100.0 * p.error
            );
            // The number beside the measured point, else further off with a leader line.
            let (x, y) = (f64::from(mx), f64::from(my));
            let number = p.number.to_string();
            let (w, h) = (text_width(&number, 11.0), 13.0);
            match placer.place((x, y), (w, h), 6.0, &AROUND, &number) {
                Some((tx, ty, far)) => {
                    if far {
                        let (lx, ly) = (x.clamp(tx, tx + w), y.clamp(ty, ty + h));
                        let _ = writeln!(
                            extra,
                            r#"<line class="leader" x1="{x:.1}" y1="{y:.1}" x2="{lx:.1}" y2="{ly:.1}" stroke="rgb({r},{g},{b})" stroke-width="0.8" stroke-opacity="0.7"/>"#
                        );
                    }
                    let _ = writeln!(
                        extra,
                        r#"<text class="kernel-number" x="{tx:.1}" y="{:.1}" font-family="{FONT}" font-size="11" fill="rgb({r},{g},{b})" stroke="white" stroke-width="3" paint-order="stroke" text-anchor="start">{number}</text>"#,
                        ty + 11.0
                    );
                }
                None => unnumbered.push(number),
            }
        }
        let mut unlabelled: Vec<String> = Vec::new();
        for Label {
            spots,
            text,
            color: (r, g, b),
        } in labels
        {
            // The whole label, else its name alone (the value then in the note).
            let found = place_or_shorten(&mut placer, &text, &spots, &mut unlabelled);
            let Some(((x, y, anchor), text)) = found else {
                continue;
            };
            let _ = writeln!(
                extra,
                r#"<text class="roof-label" x="{x:.1}" y="{y:.1}" font-family="{FONT}" font-size="13" fill="rgb({r},{g},{b})" stroke="white" stroke-width="3" paint-order="stroke" text-anchor="{anchor}">{}</text>"#,
                xml_escape(&text)
            );
        }
        // The legend panel.
        let lx = WIDTH + 8;
        let _ = writeln!(
            extra,
            r#"<text x="{lx}" y="40" font-family="{FONT}" font-size="14" font-weight="bold">kernel (memory level) · error</text>"#
        );
        for (i, p) in chart.points.iter().enumerate() {
            let (r, g, b) = p.color;
            let y = 64 + 18 * i;
            let _ = writeln!(
                extra,
                r#"<text class="legend" x="{lx}" y="{y}" font-family="{FONT}" font-size="12" fill="rgb({r},{g},{b})">{} {} ({}) · {:.0} %</text>"#,
                p.number,
                xml_escape(&p.name),
                xml_escape(&p.level),
                100.0 * p.error
            );
        }
        // What found no room on the chart, under the legend.
        let mut notes: Vec<String> = Vec::new();
        if !unnumbered.is_empty() {
            notes.push(format!("not numbered (no room): {}", unnumbered.join(", ")));
        }
        if !unlabelled.is_empty() {
            notes.push("no room beside the line for:".into());
            notes.extend(unlabelled);
        }
        let top = 64 + 18 * chart.points.len() + 10;
        for (i, n) in notes.iter().flat_map(|n| wrap_text(n, 48)).enumerate() {
            let _ = writeln!(
                extra,
                r##"<text class="legend-note" x="{lx}" y="{}" font-family="{FONT}" font-size="12" fill="#555555">{}</text>"##,
                top + 18 * i,
                xml_escape(&n)
            );
        }
        root.present().map_err(pe)?;
    }
    match svg.rfind("</svg>") {
        Some(i) => svg.insert_str(i, &extra),
        None => return Err(PlotError("plotters wrote no closing </svg>".into())),
    }
    Ok(svg)
}

/// The chart's bytes in `format`: SVG text or PNG.
///
/// # Errors
/// A [`PlotError`] from drawing or rasterising.
pub fn render(chart: &SuiteChart, format: PlotFormat) -> Result<Vec<u8>, PlotError> {
    let svg = render_svg(chart)?;
    match format {
        PlotFormat::Svg => Ok(svg.into_bytes()),
        PlotFormat::Png => svg_to_png(&svg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::tests::{check, device};

    #[test]
    fn one_measured_and_one_predicted_point_per_kernel_joined(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let c = SuiteChart::new(&check()?, &device(), "test");
        assert_eq!(c.points.len(), 2);
        assert_eq!(c.memory.len(), 2);
        assert_eq!(c.compute.len(), 1);
        // The add: 2^24 FLOP over 201,326,592 B = 1/12 FLOP/byte; measured 2^24 / 25 ms =
        // 671.1 MFLOP/s; predicted 2^24 / 20.1327 ms = 833.3 MFLOP/s (= 10 GB/s / 12).
        let p = &c.points[0];
        assert!((p.intensity - 1.0 / 12.0).abs() < 1e-12);
        assert!((p.measured - 16_777_216.0 / 25e-3).abs() < 1e-3);
        assert!((p.predicted - 10e9 / 12.0).abs() < 1e-3);
        // Axes: the add at 1/12 and the GEMM at 1024/6 = 170.7 FLOP/byte, both inside.
        let ((x0, x1), (y0, y1)) = c.axes();
        assert!(x0 <= 1.0 / 24.0 && x1 >= 341.0, "{x0} {x1}");
        assert!(y0 <= 671e6 / 2.0 && y1 >= 300e9, "{y0} {y1}");
        let svg = render_svg(&c)?;
        assert_eq!(svg.matches(r#"class="measured""#).count(), 2);
        assert_eq!(svg.matches(r#"class="predicted""#).count(), 2);
        assert_eq!(svg.matches(r#"class="join""#).count(), 2);
        assert_eq!(svg.matches(r#"class="roof-label""#).count(), 3);
        assert!(svg.contains("1 add 16.8M (DRAM) · 19 %"), "legend");
        // No ceiling in this check: none drawn.
        assert!(c.ceiling.is_none() && !svg.contains("GEMM ceiling"));
        let png = render(&c, PlotFormat::Png)?;
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        Ok(())
    }

    #[test]
    fn a_gemm_ceiling_below_the_peak_is_drawn_and_labelled(
    ) -> Result<(), Box<dyn std::error::Error>> {
        use roofline_core::cited::Cited;
        use roofline_core::units::FlopPerSec;
        let mut chk = check()?;
        // 80 GFLOP/s under the test chip's 100 GFLOP/s peak: drawn; 120 would not be.
        chk.ceilings.gemm = Some(Cited::new(FlopPerSec(80e9), "test"));
        let c = SuiteChart::new(&chk, &device(), "test");
        assert_eq!(c.ceiling.as_ref().map(|r| r.value), Some(80e9));
        let svg = render_svg(&c)?;
        assert!(svg.contains("GEMM ceiling 80.0 GFLOP/s"), "label");
        assert_eq!(svg.matches(r#"class="roof-label""#).count(), 4);
        chk.ceilings.gemm = Some(Cited::new(FlopPerSec(120e9), "test"));
        assert!(SuiteChart::new(&chk, &device(), "test").ceiling.is_none());
        Ok(())
    }
}
