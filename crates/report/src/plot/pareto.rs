//! Throughput against latency (`roofline sweep --pareto --plot FILE.svg`): output tokens/s per
//! device against TPOT, one point per configuration and batch, the Pareto front joined by a
//! line, the TPOT target as a vertical line.
//!
//! TPOT is on a log axis (batches span decades), tokens/s per device on a linear one. Points of
//! one configuration share a colour; the legend lists the configurations in a column right of
//! the plot area, one line each, so that no label can overlap another; points are not labelled
//! (their batches are in the table).

use super::{pe, svg_to_png, xml_escape, PlotError, PlotFormat, WIDTH};
use std::fmt::Write as _;

/// Plot area, pixels.
const LEFT: f64 = 90.0;
const RIGHT: f64 = 760.0;
const TOP: f64 = 80.0;
const BOTTOM: f64 = 620.0;
/// Height of the picture, pixels.
const HEIGHT: f64 = 680.0;

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
];

/// One point: TPOT (s), tokens/s per device, its series, whether it is on the front, whether
/// it fits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParetoDot {
    /// TPOT, seconds.
    pub tpot: f64,
    /// Output tokens/s per device.
    pub tokens_per_s_per_device: f64,
    /// Its series (configuration) index.
    pub series: usize,
    /// On the Pareto front.
    pub front: bool,
    /// Every step fits in memory.
    pub fits: bool,
    /// Sequences served together.
    pub batch: u64,
}

/// What the picture shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoChart {
    /// First line.
    pub title: String,
    /// Second line.
    pub subtitle: String,
    /// The series' names, in order.
    pub series: Vec<String>,
    /// The points.
    pub dots: Vec<ParetoDot>,
    /// The TPOT target, seconds.
    pub slo_tpot: Option<f64>,
}

fn decades(lo: f64, hi: f64) -> (f64, f64) {
    let a = lo.log10().floor();
    let mut b = hi.log10().ceil();
    if b <= a {
        b = a + 1.0;
    }
    (a, b)
}

/// The chart as SVG text.
///
/// # Errors
/// No finite, positive point to draw.
pub fn render_pareto_svg(c: &ParetoChart) -> Result<String, PlotError> {
    let dots: Vec<&ParetoDot> = c
        .dots
        .iter()
        .filter(|d| d.tpot.is_finite() && d.tpot > 0.0 && d.tokens_per_s_per_device.is_finite())
        .collect();
    if dots.is_empty() {
        return Err(PlotError("no point to draw".into()));
    }
    let mut lo = dots.iter().map(|d| d.tpot).fold(f64::INFINITY, f64::min);
    let mut hi = dots.iter().map(|d| d.tpot).fold(0.0, f64::max);
    if let Some(t) = c.slo_tpot {
        lo = lo.min(t);
        hi = hi.max(t);
    }
    let (d0, d1) = decades(lo, hi);
    let ymax = dots
        .iter()
        .map(|d| d.tokens_per_s_per_device)
        .fold(0.0, f64::max)
        * 1.08;
    let ymax = if ymax > 0.0 { ymax } else { 1.0 };
    let x_of = |t: f64| LEFT + (RIGHT - LEFT) * (t.log10() - d0) / (d1 - d0);
    let y_of = |v: f64| BOTTOM - (BOTTOM - TOP) * v / ymax;
    let mut s = String::new();
    super::svg_open(&mut s, f64::from(WIDTH), HEIGHT, &c.title, &c.subtitle)?;
    // Every decade labelled.
    let mut k = d0;
    while k <= d1 + 1e-9 {
        let x = x_of(10f64.powf(k));
        let label = crate::units::human_seconds(10f64.powf(k));
        writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{BOTTOM}" stroke="#e2e2e2"/><text class="tick" x="{x:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"##,
            BOTTOM + 18.0,
            xml_escape(&label)
        )
        .map_err(pe)?;
        k += 1.0;
    }
    for i in 0..=5 {
        let v = ymax * f64::from(i) / 5.0;
        let y = y_of(v);
        writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{RIGHT}" y2="{y:.1}" stroke="#eeeeee"/><text class="tick" x="{:.1}" y="{:.1}" font-size="12" text-anchor="end">{:.0}</text>"##,
            LEFT - 6.0,
            y + 4.0,
            v
        )
        .map_err(pe)?;
    }
    writeln!(
        s,
        r#"<text class="axis-label" x="{:.1}" y="{:.1}" font-size="13" text-anchor="middle">TPOT, (E2E − TTFT)/(N − 1), log scale</text>"#,
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 42.0
    )
    .map_err(pe)?;
    writeln!(
        s,
        r#"<text class="axis-label" x="20" y="{:.1}" font-size="13" transform="rotate(-90 20 {:.1})" text-anchor="middle">output tokens/s per device</text>"#,
        (TOP + BOTTOM) / 2.0,
        (TOP + BOTTOM) / 2.0
    )
    .map_err(pe)?;
    if let Some(t) = c.slo_tpot {
        let x = x_of(t);
        writeln!(
            s,
            r##"<g class="slo"><line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{BOTTOM}" stroke="#b00" stroke-dasharray="6,3"/><text x="{x:.1}" y="{:.1}" font-size="12" fill="#b00" text-anchor="middle">TPOT target {}</text></g>"##,
            TOP - 8.0,
            xml_escape(&crate::units::human_seconds(t))
        )
        .map_err(pe)?;
    }
    // The front, left to right.
    let mut front: Vec<&&ParetoDot> = dots.iter().filter(|d| d.front).collect();
    front.sort_by(|a, b| a.tpot.total_cmp(&b.tpot));
    if front.len() > 1 {
        let pts: Vec<String> = front
            .iter()
            .map(|d| format!("{:.1},{:.1}", x_of(d.tpot), y_of(d.tokens_per_s_per_device)))
            .collect();
        writeln!(
            s,
            r##"<polyline class="front" points="{}" fill="none" stroke="#222" stroke-width="1.5"/>"##,
            pts.join(" ")
        )
        .map_err(pe)?;
    }
    for d in &dots {
        let color = COLORS[d.series % COLORS.len()];
        let (x, y) = (x_of(d.tpot), y_of(d.tokens_per_s_per_device));
        let fill = if d.fits { color } else { "white" };
        let r = if d.front { 6.0 } else { 4.0 };
        writeln!(
            s,
            r#"<circle class="dot{}" cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{fill}" stroke="{color}" stroke-width="1.5"><title>{} · batch {} · TPOT {} · {:.1} tokens/s per device{}</title></circle>"#,
            if d.front { " on-front" } else { "" },
            xml_escape(c.series.get(d.series).map_or("", String::as_str)),
            d.batch,
            xml_escape(&crate::units::human_seconds(d.tpot)),
            d.tokens_per_s_per_device,
            if d.fits { "" } else { " (does not fit)" }
        )
        .map_err(pe)?;
    }
    // Legend: one line a series, then the marks.
    let mut y = TOP + 10.0;
    for (i, name) in c.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        writeln!(
            s,
            r#"<g class="legend"><circle cx="{:.1}" cy="{:.1}" r="5" fill="{color}"/><text x="{:.1}" y="{:.1}" font-size="12">{}</text></g>"#,
            RIGHT + 30.0,
            y - 4.0,
            RIGHT + 42.0,
            y,
            xml_escape(name)
        )
        .map_err(pe)?;
        y += 20.0;
    }
    for (mark, words) in [
        ("big", "large: on the Pareto front (joined)"),
        ("hollow", "hollow: does not fit in memory"),
    ] {
        writeln!(
            s,
            r##"<text class="legend-note" data-mark="{mark}" x="{:.1}" y="{:.1}" font-size="12" fill="#444">{words}</text>"##,
            RIGHT + 30.0,
            y + 10.0
        )
        .map_err(pe)?;
        y += 20.0;
    }
    s.push_str("</svg>\n");
    Ok(s)
}

/// The chart's bytes in `format`.
///
/// # Errors
/// A [`PlotError`] from drawing or rasterising.
pub fn render_pareto(c: &ParetoChart, format: PlotFormat) -> Result<Vec<u8>, PlotError> {
    let svg = render_pareto_svg(c)?;
    match format {
        PlotFormat::Svg => Ok(svg.into_bytes()),
        PlotFormat::Png => svg_to_png(&svg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_point_and_the_front_are_drawn() -> Result<(), PlotError> {
        let dot = |tpot, tps, front| ParetoDot {
            tpot,
            tokens_per_s_per_device: tps,
            series: 0,
            front,
            fits: true,
            batch: 1,
        };
        let c = ParetoChart {
            title: "t".into(),
            subtitle: "s".into(),
            series: vec!["h100 bf16 TP1".into()],
            dots: vec![
                dot(0.005, 100.0, true),
                dot(0.02, 1500.0, true),
                dot(0.03, 900.0, false),
            ],
            slo_tpot: Some(0.05),
        };
        let svg = render_pareto_svg(&c)?;
        assert_eq!(svg.matches("<circle class=\"dot").count(), 3);
        assert_eq!(svg.matches("on-front").count(), 2);
        assert!(svg.contains("class=\"front\"") && svg.contains("TPOT target 50"));
        // Decades 1 ms to 100 ms, each labelled.
        assert_eq!(svg.matches("class=\"tick\"").count(), 3 + 6);
        Ok(())
    }
}
