//! The MFU waterfall of a training step as a picture (`roofline train --plot FILE.svg`):
//! horizontal bars descending from 100 % of the dense peak to the MFU, one row per reason.
//!
//! Each row is a band of its own: its reason's label in the left column, its segment on the
//! share axis (from what is left before it to what is left after it), and its share in points
//! with what is left in the right column, so that no two labels can overlap. The MFU bar ends
//! the waterfall; the MFU and the HFU are marked by vertical lines over every row, their labels
//! on two separate lines above the plot area. The unexplained bar of a measured step has a
//! colour of its own. Every text uses [`FONT`]; the picture is `WIDTH` pixels wide and as tall
//! as its rows need.

use super::{pe, svg_to_png, xml_escape, PlotError, PlotFormat, WIDTH};
use crate::units::percent;
use roofline_core::train::{Reason, Waterfall};
use std::fmt::Write as _;

/// Height of one row, pixels.
const ROW: f64 = 30.0;
/// Left edge of the share axis, pixels (the labels' column is left of it).
const AXIS_LEFT: f64 = 300.0;
/// Right edge of the share axis, pixels (the values' column is right of it).
const AXIS_RIGHT: f64 = 880.0;
/// Top of the first row, pixels (title, subtitle and the MFU and HFU labels above it).
const TOP: f64 = 120.0;

/// What the waterfall picture shows.
#[derive(Debug, Clone, PartialEq)]
pub struct WaterfallChart {
    /// First line (`MFU waterfall · llama-3.1-8b on 8 × A100`).
    pub title: String,
    /// Second line (which prediction, the step the shares are of).
    pub subtitle: String,
    /// The waterfall drawn.
    pub waterfall: Waterfall,
}

/// The fill of a reason's bar.
fn color(r: Reason) -> &'static str {
    match r {
        Reason::Unexplained => "#7b3fb5",
        Reason::Recompute => "#f0a030",
        Reason::PipelineBubble | Reason::PipelineCommunication => "#5b8fd6",
        Reason::TensorParallel
        | Reason::ExpertParallel
        | Reason::ContextParallel
        | Reason::DataParallel => "#4aa3a0",
        _ => "#d65b5b",
    }
}

/// The x pixel of a share of the peak (0 to 1; clamped so a bar never leaves the axis).
fn x_of(share: f64) -> f64 {
    AXIS_LEFT + (AXIS_RIGHT - AXIS_LEFT) * share.clamp(0.0, 1.0)
}

/// One row: a bar from `from` to `to` (shares), its label and its value text.
struct Row {
    class: &'static str,
    reason: &'static str,
    label: String,
    from: f64,
    to: f64,
    fill: &'static str,
    value: String,
    tooltip: String,
}

fn rows(w: &Waterfall) -> Vec<Row> {
    let mut out = vec![Row {
        class: "bar peak",
        reason: "peak",
        label: "dense peak".into(),
        from: 0.0,
        to: 1.0,
        fill: "#555555",
        value: percent(1.0, 1),
        tooltip: "100 % of the dense peak".into(),
    }];
    let mut left = 1.0;
    for b in &w.bars {
        let after = left - b.share;
        out.push(Row {
            class: "bar loss",
            reason: b.reason.id(),
            label: b.reason.label().to_string(),
            from: after.min(left),
            to: after.max(left),
            fill: color(b.reason),
            value: format!("{:+.1} pts → {}", -b.share * 100.0, percent(after, 1)),
            tooltip: format!(
                "{}: {} of the step ({:.4} s)",
                b.reason.label(),
                percent(b.share, 2),
                b.seconds.get()
            ),
        });
        left = after;
    }
    out.push(Row {
        class: "bar mfu",
        reason: "mfu",
        label: "MFU".into(),
        from: 0.0,
        to: w.mfu,
        fill: "#3a9d4f",
        value: percent(w.mfu, 1),
        tooltip: format!("model FLOPs utilisation {}", percent(w.mfu, 2)),
    });
    out
}

/// The waterfall as SVG text.
///
/// # Errors
/// A [`PlotError`] when a share is not finite (nothing can be drawn of it).
pub fn render_waterfall_svg(chart: &WaterfallChart) -> Result<String, PlotError> {
    let w = &chart.waterfall;
    if !(w.mfu.is_finite() && w.hfu.is_finite() && w.bars.iter().all(|b| b.share.is_finite())) {
        return Err(PlotError("a waterfall share is not finite".into()));
    }
    let rows = rows(w);
    let n = rows.len() as f64;
    let bottom = TOP + n * ROW;
    let height = bottom + 60.0;
    let mut s = String::new();
    super::svg_open(
        &mut s,
        f64::from(WIDTH),
        height,
        &chart.title,
        &chart.subtitle,
    )?;
    // Grid and ticks: 0 % to 100 % every 20 %.
    for i in 0..=5 {
        let share = f64::from(i) * 0.2;
        let x = x_of(share);
        writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{TOP:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="#e2e2e2"/><text class="tick" x="{x:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"##,
            bottom + 18.0,
            percent(share, 0)
        )
        .map_err(pe)?;
    }
    writeln!(
        s,
        r#"<text class="axis-label" x="{:.1}" y="{:.1}" font-size="13" text-anchor="middle">share of the dense peak</text>"#,
        (AXIS_LEFT + AXIS_RIGHT) / 2.0,
        bottom + 40.0
    )
    .map_err(pe)?;
    for (i, r) in rows.iter().enumerate() {
        let y = TOP + i as f64 * ROW;
        let (x0, x1) = (x_of(r.from), x_of(r.to));
        let mid = y + ROW / 2.0 + 4.5;
        writeln!(
            s,
            r#"<g class="{}" data-reason="{}"><title>{}</title><rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"/><text class="bar-label" x="{:.1}" y="{mid:.1}" font-size="13" text-anchor="end">{}</text><text class="bar-value" x="{:.1}" y="{mid:.1}" font-size="13">{}</text></g>"#,
            r.class,
            r.reason,
            xml_escape(&r.tooltip),
            y + 5.0,
            (x1 - x0).max(1.0),
            ROW - 10.0,
            r.fill,
            AXIS_LEFT - 10.0,
            xml_escape(&r.label),
            AXIS_RIGHT + 10.0,
            xml_escape(&r.value),
        )
        .map_err(pe)?;
        // Connector to the next row: where this bar leaves off.
        if i + 1 < rows.len() && r.class != "bar mfu" {
            let xc = x_of(if i == 0 { 1.0 } else { r.from });
            writeln!(
                s,
                r##"<line class="connector" x1="{xc:.1}" y1="{:.1}" x2="{xc:.1}" y2="{:.1}" stroke="#999" stroke-dasharray="2,2"/>"##,
                y + ROW - 5.0,
                y + ROW + 5.0
            )
            .map_err(pe)?;
        }
    }
    // MFU and HFU markers, their labels on two lines above the rows.
    for (class, name, value, dy, dash) in [
        ("mfu-marker", "MFU", w.mfu, 24.0, ""),
        (
            "hfu-marker",
            "HFU",
            w.hfu,
            10.0,
            r#" stroke-dasharray="6,3""#,
        ),
    ] {
        let x = x_of(value);
        writeln!(
            s,
            r##"<g class="{class}"><line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="#222"{dash}/><text x="{x:.1}" y="{:.1}" font-size="13" text-anchor="middle">{name} {}</text></g>"##,
            TOP - 2.0,
            TOP - dy,
            percent(value, 1)
        )
        .map_err(pe)?;
    }
    s.push_str("</svg>\n");
    Ok(s)
}

/// The waterfall's bytes in `format`: the SVG text, or the PNG.
///
/// # Errors
/// A [`PlotError`] from drawing or rasterising.
pub fn render_waterfall(chart: &WaterfallChart, format: PlotFormat) -> Result<Vec<u8>, PlotError> {
    let svg = render_waterfall_svg(chart)?;
    match format {
        PlotFormat::Svg => Ok(svg.into_bytes()),
        PlotFormat::Png => svg_to_png(&svg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_core::units::Seconds;

    #[test]
    fn every_bar_is_a_row_of_its_own() -> Result<(), PlotError> {
        // T₀ = 6 s, non-matmul 3 s, recompute 1 s: T = 10 s, MFU 60 %, HFU 70 %.
        let mut losses = [0.0; 12];
        losses[2] = 3.0;
        losses[11] = 1.0;
        let w = Waterfall::new(Seconds(6.0), &losses, None);
        let chart = WaterfallChart {
            title: "t".into(),
            subtitle: "s".into(),
            waterfall: w,
        };
        let svg = render_waterfall_svg(&chart)?;
        assert_eq!(svg.matches("<g class=\"bar ").count(), 4);
        assert!(svg.contains("-30.0 pts → 70.0 %"));
        assert!(svg.contains("MFU 60.0 %") && svg.contains("HFU 70.0 %"));
        for b in &chart.waterfall.bars {
            assert!(
                svg.contains(&xml_escape(b.reason.label())),
                "{:?}",
                b.reason
            );
        }
        // Well-formed: the SVG parser of the PNG renderer reads it.
        svg_to_png(&svg)?;
        Ok(())
    }

    #[test]
    fn a_measured_step_draws_the_unexplained_bar_in_its_own_colour() -> Result<(), PlotError> {
        // Predicted 10 s (T₀ 6 s, non-matmul 4 s), measured 12.5 s: unexplained 2.5 s = 20 %.
        let mut losses = [0.0; 12];
        losses[2] = 4.0;
        let w = Waterfall::new(Seconds(6.0), &losses, Some(Seconds(12.5)));
        let svg = render_waterfall_svg(&WaterfallChart {
            title: "t".into(),
            subtitle: "s".into(),
            waterfall: w,
        })?;
        assert!(
            svg.contains("data-reason=\"unexplained\"") && svg.contains(color(Reason::Unexplained))
        );
        assert!(svg.contains("-20.0 pts → 48.0 %"));
        assert!(svg.contains("MFU 48.0 %"));
        Ok(())
    }
}
