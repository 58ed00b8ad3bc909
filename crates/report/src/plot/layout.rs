//! Layout helpers of the roofline plot: text measures, greedy label placement, and the SVG
//! snippets of the layer drawn over `plotters`' output (labels, markers, leader lines).

use super::{Series, FONT};
use std::fmt::Write as _;

/// XML text escape.
pub(crate) fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c => o.push(c),
        }
    }
    o
}

/// Width in pixels of `text` in DejaVu Sans at `size` px: per-character advances rounded up
/// from the font's metrics, so an estimate never falls short.
pub(super) fn text_width(text: &str, size: f64) -> f64 {
    text.chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.32,
            ' ' | '(' | ')' | '/' | 'f' | 't' | 'r' | '[' | ']' => 0.42,
            'm' | 'w' | 'M' | 'W' | '%' | '@' => 0.9,
            'A'..='Z' => 0.72,
            '0'..='9' => 0.64,
            '_' => 0.52,
            '×' | '·' | '–' | '—' => 0.84,
            _ => 0.6,
        })
        .sum::<f64>()
        * size
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Rect {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl Rect {
    /// The plotting area of a chart from its pixel ranges.
    pub fn of_pixels(px: std::ops::Range<i32>, py: std::ops::Range<i32>) -> Self {
        Self {
            x0: f64::from(px.start),
            y0: f64::from(py.start),
            x1: f64::from(px.end),
            y1: f64::from(py.end),
        }
    }

    pub fn around(cx: f64, cy: f64, r: f64) -> Self {
        Rect {
            x0: cx - r,
            y0: cy - r,
            x1: cx + r,
            y1: cy + r,
        }
    }
    pub fn overlap(&self, o: &Rect) -> f64 {
        let w = self.x1.min(o.x1) - self.x0.max(o.x0);
        let h = self.y1.min(o.y1) - self.y0.max(o.y0);
        if w > 0.0 && h > 0.0 {
            w * h
        } else {
            0.0
        }
    }
    pub fn inside(&self, o: &Rect) -> bool {
        self.x0 >= o.x0 && self.x1 <= o.x1 && self.y0 >= o.y0 && self.y1 <= o.y1
    }
}

/// Directions tried around an anchor, in order of preference: beside, then above or below, then
/// the diagonals.
pub(super) const AROUND: [(f64, f64); 12] = [
    (1.0, 0.0),
    (-1.0, 0.0),
    (1.0, 1.0),
    (-1.0, -1.0),
    (0.0, -1.0),
    (0.0, 1.0),
    (1.0, -1.0),
    (-1.0, 1.0),
    (0.5, -1.0),
    (-0.5, -1.0),
    (0.5, 1.0),
    (-0.5, 1.0),
];
/// For a ridge marker: below and right of it first (under the roof, right of the memory roof).
pub(super) const BELOW_RIGHT: [(f64, f64); 6] = [
    (1.0, 1.0),
    (0.5, 1.0),
    (1.0, 0.0),
    (0.0, 1.0),
    (-1.0, -1.0),
    (-1.0, 0.0),
];

/// Greedy label placement: each label takes the first free spot on rings around its anchor.
pub(super) struct Placer {
    /// Boxes already used: labels, markers, lines.
    pub taken: Vec<Rect>,
    /// The area labels must stay in.
    pub bounds: Rect,
}

impl Placer {
    /// A placer with nothing placed yet, keeping labels 2 px inside `plot`.
    pub fn within(plot: &Rect) -> Self {
        Self {
            taken: Vec::new(),
            bounds: Rect {
                x0: plot.x0 + 2.0,
                y0: plot.y0 + 2.0,
                x1: plot.x1 - 2.0,
                y1: plot.y1 - 2.0,
            },
        }
    }

    /// A `w × h` box near `(ax, ay)`: returns its top-left corner and whether it sits away from
    /// the anchor (then a leader line is drawn).
    pub fn place(
        &mut self,
        (ax, ay): (f64, f64),
        (w, h): (f64, f64),
        gap: f64,
        dirs: &[(f64, f64)],
    ) -> (f64, f64, bool) {
        let mut best: Option<(f64, f64, f64, bool)> = None;
        for ring in 0..16 {
            let r = gap + ring as f64 * 9.0;
            for &(dx, dy) in dirs {
                // The box is attached to the anchor by its nearest side or corner.
                let x = if dx > 0.0 {
                    ax + dx * r
                } else if dx < 0.0 {
                    ax + dx * r - w
                } else {
                    ax - w / 2.0
                };
                let x = if dx.abs() == 0.5 {
                    ax + dx * r - w / 2.0
                } else {
                    x
                };
                let y = if dy > 0.0 {
                    ay + dy * r
                } else if dy < 0.0 {
                    ay + dy * r - h
                } else {
                    ay - h / 2.0
                };
                let rect = Rect {
                    x0: x,
                    y0: y,
                    x1: x + w,
                    y1: y + h,
                };
                if !rect.inside(&self.bounds) {
                    continue;
                }
                // A 2 px margin keeps neighbouring labels from touching.
                let padded = Rect {
                    x0: rect.x0 - 2.0,
                    y0: rect.y0 - 1.0,
                    x1: rect.x1 + 2.0,
                    y1: rect.y1 + 1.0,
                };
                let cost: f64 = self.taken.iter().map(|t| t.overlap(&padded)).sum();
                let far = ring > 0;
                if cost == 0.0 {
                    self.taken.push(rect);
                    return (x, y, far);
                }
                if best.is_none_or(|b| cost < b.2) {
                    best = Some((x, y, cost, far));
                }
            }
        }
        let (x, y, _, far) = best.unwrap_or((ax + gap, ay - h / 2.0, 0.0, false));
        self.taken.push(Rect {
            x0: x,
            y0: y,
            x1: x + w,
            y1: y + h,
        });
        (x, y, far)
    }
}

/// `prefill and decode`.
pub(super) fn stage_list(series: &[Series]) -> String {
    let names: Vec<&str> = series.iter().map(|s| s.name()).collect();
    names.join(" and ")
}

/// Text lines of at most `width` characters, breaking after `, `.
pub(super) fn wrap(names: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for (i, n) in names.iter().enumerate() {
        let piece = if i + 1 < names.len() {
            format!("{n},")
        } else {
            n.clone()
        };
        if !cur.is_empty() && cur.chars().count() + 1 + piece.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&piece);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

pub(super) fn text_el(o: &mut String, class: &str, x: f64, y: f64, size: f64, fill: &str, s: &str) {
    let _ = writeln!(
        o,
        r#"<text class="{class}" x="{x:.1}" y="{y:.1}" font-family="{FONT}" font-size="{size}" fill="{fill}" text-anchor="start">{}</text>"#,
        xml_escape(s)
    );
}

/// A thin line from an anchor to the nearest point of its label's box `(x, y, w, h)`.
pub(super) fn leader(
    o: &mut String,
    (x, y): (f64, f64),
    (tx, ty, w, h): (f64, f64, f64, f64),
    color: &str,
) {
    let lx = x.clamp(tx, tx + w);
    let ly = y.clamp(ty, ty + h);
    let _ = write!(
        o,
        r#"<line class="leader" x1="{x:.1}" y1="{y:.1}" x2="{lx:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="0.8" stroke-opacity="0.7"/>"#
    );
}

pub(super) fn marker(o: &mut String, series: Series, x: f64, y: f64, fill: &str) {
    match series {
        Series::Prefill => {
            let _ = write!(
                o,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="5" fill="{fill}" fill-opacity="0.85" stroke="white" stroke-width="1"/>"#
            );
        }
        Series::Decode => {
            let _ = write!(
                o,
                r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{fill}" fill-opacity="0.85" stroke="white" stroke-width="1"/>"#,
                x,
                y - 6.0,
                x - 5.5,
                y + 4.0,
                x + 5.5,
                y + 4.0
            );
        }
        Series::FusedPrefill | Series::FusedDecode => {
            let _ = write!(
                o,
                r#"<rect x="{:.1}" y="{:.1}" width="10" height="10" fill="{fill}" fill-opacity="0.9" stroke="white" stroke-width="1"/>"#,
                x - 5.0,
                y - 5.0
            );
        }
        Series::PrefillCollective | Series::DecodeCollective => {
            // A four-pointed star: tips 7.5 px out on the axes, waist 2.5 px on the diagonals.
            let (r, w) = (7.5, 2.5 * std::f64::consts::FRAC_1_SQRT_2);
            let _ = write!(
                o,
                r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{fill}" fill-opacity="0.9" stroke="white" stroke-width="0.8"/>"#,
                x,
                y - r,
                x + w,
                y - w,
                x + r,
                y,
                x + w,
                y + w,
                x,
                y + r,
                x - w,
                y + w,
                x - r,
                y,
                x - w,
                y - w
            );
        }
        Series::Operator => {
            let _ = write!(
                o,
                r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{fill}" fill-opacity="0.9" stroke="white" stroke-width="1"/>"#,
                x,
                y - 7.0,
                x + 6.0,
                y,
                x,
                y + 7.0,
                x - 6.0,
                y
            );
        }
    }
}
