//! The axes of a roofline plot: whole decades around the roofs and the points, and their tick
//! labels.

use super::chart::RooflineChart;
use super::comm::CommChart;

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

/// The axes the communication panel is drawn on: x the message sizes S (bytes), y bus
/// bandwidths (B/s). Every point and ridge with room around them (a factor 3 either side of
/// the sizes, 2 below the lowest bandwidth, 1.6 above the highest roof for its label), rounded
/// out to whole decades, at least three decades each (x widened to the left, where the latency
/// roofs rise from; y downwards).
pub fn comm_axes(comm: &CommChart) -> Axes {
    let mut xs: Vec<f64> = comm.points.iter().map(|p| p.bytes).collect();
    let mut ys: Vec<f64> = comm.points.iter().map(|p| p.busbw).collect();
    for r in &comm.roofs {
        xs.push(r.ridge());
        ys.push(r.ceiling);
    }
    ys.extend(comm.links.iter().map(|l| l.bandwidth));
    xs.retain(|v| v.is_finite() && *v > 0.0);
    ys.retain(|v| v.is_finite() && *v > 0.0);
    let (xmin, xmax) = bounds(&xs, (1e3, 1e9));
    let (ymin, ymax) = bounds(&ys, (1e9, 1e12));
    let x1 = decade_ceil(xmax * 3.0);
    let mut x0 = decade_floor(xmin / 3.0);
    if x1 / x0 < 999.0 {
        x0 = x1 / 1e3;
    }
    let y1 = decade_ceil(ymax * 1.6);
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
pub(super) fn tick_label(v: f64, unit: &str) -> String {
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
