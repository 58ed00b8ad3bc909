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
//!
//! A chart of a parallel step ([`RooflineChart::for_parallel`]) carries collectives, which do no
//! FLOPs and have no place on those axes: they get a communication panel of their own under the
//! roofline ([`CommChart`], module `comm`: message size against bus bandwidth, a roof per link
//! tier and a latency roof per algorithm, the α–β model as a roofline), with its own legend,
//! its collectives drawn as four-pointed stars, its labels placed by the same placer. A chart
//! without collectives is drawn exactly as before, `WIDTH × HEIGHT`.

mod axes;
mod chart;
mod comm;
mod comm_draw;
mod draw;
pub(crate) mod frame;
pub(crate) mod layout;
pub mod pareto;
mod png;
pub mod waterfall;

pub use axes::{axes, comm_axes, Axes};
pub use chart::{tooltip, ChartPoint, ChipRoofline, ComputeRoof, RooflineChart, Series};
pub use comm::{comm_tooltip, CommChart, CommPoint, CommRoof, LinkRoof};
pub use draw::render_svg;
pub(crate) use layout::xml_escape;
pub use png::{svg_to_png, PlotFormat};
use std::fmt;

/// Width of the SVG, pixels.
pub const WIDTH: u32 = 1100;
/// Height of the SVG, pixels (of its roofline, with a communication panel under it).
pub const HEIGHT: u32 = 720;
/// Height of the communication panel under the roofline, pixels: a chart with collectives is
/// `WIDTH × (HEIGHT + COMM_HEIGHT)`.
pub const COMM_HEIGHT: u32 = 600;
/// Scale of the PNG relative to the SVG (1.5 × 1100 × 720 = 1650 × 1080 pixels).
pub const PNG_SCALE: f32 = 1.5;
/// Font of every text element; the PNG renderer has DejaVu Sans embedded.
pub const FONT: &str = "DejaVu Sans, sans-serif";

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

/// Opens an SVG picture of `width` × `height` pixels in [`FONT`] on a white ground, with its
/// `title` (20 px) and `subtitle` (13 px, grey) at the top left: what the hand-drawn charts
/// (the waterfall, the Pareto front) share.
pub(crate) fn svg_open(
    s: &mut String,
    width: f64,
    height: f64,
    title: &str,
    subtitle: &str,
) -> Result<(), PlotError> {
    use std::fmt::Write as _;
    let font = xml_escape(FONT);
    writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="{font}">"#
    )
    .map_err(pe)?;
    writeln!(
        s,
        r#"<rect x="0" y="0" width="{width:.0}" height="{height:.0}" fill="white"/>"#
    )
    .map_err(pe)?;
    writeln!(
        s,
        r#"<text class="title" x="20" y="32" font-size="20">{}</text>"#,
        xml_escape(title)
    )
    .map_err(pe)?;
    writeln!(
        s,
        r##"<text class="subtitle" x="20" y="56" font-size="13" fill="#444">{}</text>"##,
        xml_escape(subtitle)
    )
    .map_err(pe)
}
