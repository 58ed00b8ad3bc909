//! The frame every roofline plot shares: a 70-pixel title band (title, subtitle) over a log-log
//! chart with gridlines, tick labels and axis descriptions, drawn by `plotters`. The plot
//! modules ([`crate::plot`], [`crate::hier_plot`], [`crate::suite_plot`]) draw their roofs,
//! points and labels on the chart it returns.

use super::{pe, PlotError, FONT};
use crate::units::human;
use plotters::coord::Shift;
use plotters::prelude::*;

/// A log-log chart on an SVG drawing: x is arithmetic intensity (FLOP/byte), y a rate (FLOP/s).
pub(crate) type LogLogChart<'c, 'b> =
    ChartContext<'c, SVGBackend<'b>, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>;

/// What the frame shows: titles, axis ranges and descriptions, and how ticks are labelled.
pub(crate) struct Frame<'s> {
    /// Title, 22 px black text at (24, 12) in the title band.
    pub title: &'s str,
    /// Subtitle, grey (85, 85, 85) text of `subtitle_size` px at (24, 44) in the title band.
    pub subtitle: &'s str,
    /// Font size of the subtitle, pixels.
    pub subtitle_size: u32,
    /// Range of the x axis (min, max), in x's unit; both positive (the axis is logarithmic).
    pub x: (f64, f64),
    /// Range of the y axis (min, max), in y's unit; both positive (the axis is logarithmic).
    pub y: (f64, f64),
    /// Description under the x axis, e.g. `arithmetic intensity (FLOP/byte)`.
    pub x_desc: &'s str,
    /// Description beside the y axis, e.g. `attainable performance (FLOP/s)`.
    pub y_desc: &'s str,
    /// Unit appended to the y tick labels, e.g. `FLOP/s` (x ticks have none).
    pub y_unit: &'s str,
    /// Tick label of a value and a unit; an empty string leaves the tick unlabelled.
    pub tick: fn(f64, &str) -> String,
}

impl<'s> Frame<'s> {
    /// A frame with the usual roofline axes: x `arithmetic intensity (FLOP/byte)`, y
    /// `attainable performance (FLOP/s)` with ticks in `FLOP/s` labelled by [`human_tick`], and
    /// a 13 px subtitle; `x` and `y` are the axis ranges (FLOP/byte, FLOP/s). Override a field
    /// with struct update syntax (`Frame { subtitle_size: 14, ..Frame::new(…) }`).
    pub fn new(title: &'s str, subtitle: &'s str, x: (f64, f64), y: (f64, f64)) -> Self {
        Frame {
            title,
            subtitle,
            subtitle_size: 13,
            x,
            y,
            x_desc: "arithmetic intensity (FLOP/byte)",
            y_desc: "attainable performance (FLOP/s)",
            y_unit: "FLOP/s",
            tick: human_tick,
        }
    }

    /// Draw the frame on `area`: the title band (top 70 px), then below it the axes, log grid
    /// (bold lines RGB 225, light lines RGB 245), 12 tick labels per axis (14 px) and the axis
    /// descriptions (16 px), inside margins of 14 px left, 28 right, 4 top, 8 bottom, with label
    /// areas of 52 px under the x axis and 118 px left of the y axis. The axis ranges are
    /// widened by a factor 1e-9 at each end, so that `plotters` labels both end decades.
    ///
    /// Returns the chart, on which the caller draws in data coordinates.
    ///
    /// # Errors
    /// A [`PlotError`] if `plotters` fails to draw.
    pub fn draw<'c, 'b>(
        &self,
        area: &DrawingArea<SVGBackend<'b>, Shift>,
    ) -> Result<LogLogChart<'c, 'b>, PlotError> {
        let (top, body) = area.split_vertically(70);
        top.draw_text(self.title, &(FONT, 22).into_font().color(&BLACK), (24, 12))
            .map_err(pe)?;
        top.draw_text(
            self.subtitle,
            &(FONT, self.subtitle_size)
                .into_font()
                .color(&RGBColor(85, 85, 85)),
            (24, 44),
        )
        .map_err(pe)?;
        let ((x0, x1), (y0, y1)) = (self.x, self.y);
        let mut ch = ChartBuilder::on(&body)
            .margin_left(14)
            .margin_right(28)
            .margin_bottom(8)
            .margin_top(4)
            .x_label_area_size(52)
            .y_label_area_size(118)
            .build_cartesian_2d(
                // A hair wider than the decades, so that plotters labels both end decades.
                (x0 * (1.0 - 1e-9)..x1 * (1.0 + 1e-9)).log_scale(),
                (y0 * (1.0 - 1e-9)..y1 * (1.0 + 1e-9)).log_scale(),
            )
            .map_err(pe)?;
        let xfmt = |v: &f64| (self.tick)(*v, "");
        let yfmt = |v: &f64| (self.tick)(*v, self.y_unit);
        ch.configure_mesh()
            .x_labels(12)
            .y_labels(12)
            .x_label_formatter(&xfmt)
            .y_label_formatter(&yfmt)
            .x_desc(self.x_desc)
            .y_desc(self.y_desc)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .bold_line_style(RGBColor(225, 225, 225))
            .light_line_style(RGBColor(245, 245, 245))
            .draw()
            .map_err(pe)?;
        Ok(ch)
    }
}

/// Tick label of a whole decade in human units (`100 GFLOP/s`, `1 k`, `0.01`); empty between
/// decades, so that only decades are labelled.
pub(crate) fn human_tick(v: f64, unit: &str) -> String {
    let lg = v.log10();
    if (lg - lg.round()).abs() > 1e-6 {
        return String::new();
    }
    human(10f64.powf(lg.round()), unit)
        .replace(".00 ", " ")
        .replace(".0 ", " ")
}
