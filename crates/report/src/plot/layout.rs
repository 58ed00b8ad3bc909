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
/// from the font's metrics, and never under 0.6 × `size` a character, so an estimate never
/// falls short.
pub(crate) fn text_width(text: &str, size: f64) -> f64 {
    let floor = 0.6 * size * text.chars().count() as f64;
    let advances = text
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.32,
            ' ' | '(' | ')' | '/' | 'f' | 't' | 'r' | '[' | ']' => 0.42,
            'm' | 'w' | 'M' | 'W' | '%' | '@' => 0.9,
            'A'..='Z' => 0.72,
            '0'..='9' => 0.64,
            '_' => 0.52,
            '×' | '·' | '–' | '—' | '●' | '■' => 0.84,
            _ => 0.6,
        })
        .sum::<f64>()
        * size;
    advances.max(floor)
}

/// A line segment between two pixels.
pub(crate) type Segment = ((f64, f64), (f64, f64));

/// An axis-aligned box, pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rect {
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
    /// Whether the segment passes through the box (Liang–Barsky clipping).
    pub fn crossed_by(&self, ((ax, ay), (bx, by)): Segment) -> bool {
        let (dx, dy) = (bx - ax, by - ay);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (p, q) in [
            (-dx, ax - self.x0),
            (dx, self.x1 - ax),
            (-dy, ay - self.y0),
            (dy, self.y1 - ay),
        ] {
            if p == 0.0 {
                if q < 0.0 {
                    return false;
                }
            } else if p < 0.0 {
                t0 = t0.max(q / p);
            } else {
                t1 = t1.min(q / p);
            }
        }
        t0 <= t1
    }
    /// The box grown by `dx` left and right and `dy` above and below.
    pub fn grown(&self, dx: f64, dy: f64) -> Rect {
        Rect {
            x0: self.x0 - dx,
            y0: self.y0 - dy,
            x1: self.x1 + dx,
            y1: self.y1 + dy,
        }
    }
}

/// The box of a text of `size` px with its baseline at `y`, starting at `x` (`anchor` `start`),
/// centred on it (`middle`) or ending there (`end`): [`text_width`] wide, from `size` above
/// the baseline to a quarter of it below.
pub(crate) fn text_box(text: &str, x: f64, y: f64, size: f64, anchor: &str) -> Rect {
    let w = text_width(text, size);
    let x0 = match anchor {
        "middle" => x - w / 2.0,
        "end" => x - w,
        _ => x,
    };
    Rect {
        x0,
        y0: y - size,
        x1: x0 + w,
        y1: y + 0.25 * size,
    }
}

/// Directions tried around an anchor, in order of preference: beside, then above or below, then
/// the diagonals.
pub(crate) const AROUND: [(f64, f64); 12] = [
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

/// Greedy label placement: each label takes the first free spot on rings around its anchor;
/// a label with no free spot is not drawn but listed in [`Placer::dropped`].
pub(crate) struct Placer {
    /// Boxes already used: labels, markers, lines.
    pub taken: Vec<Rect>,
    /// Lines no label may cross.
    pub segments: Vec<Segment>,
    /// The area labels must stay in.
    pub bounds: Rect,
    /// Labels that found no free spot, in the order they were tried.
    pub dropped: Vec<String>,
}

impl Placer {
    /// A placer with nothing placed yet, keeping labels 2 px inside `plot`.
    pub fn within(plot: &Rect) -> Self {
        Self {
            taken: Vec::new(),
            segments: Vec::new(),
            dropped: Vec::new(),
            bounds: Rect {
                x0: plot.x0 + 2.0,
                y0: plot.y0 + 2.0,
                x1: plot.x1 - 2.0,
                y1: plot.y1 - 2.0,
            },
        }
    }

    /// Whether `rect` lies inside the bounds, 2 px (1 px vertically) clear of every box taken
    /// and of every line.
    pub fn free(&self, rect: &Rect) -> bool {
        let padded = rect.grown(2.0, 1.0);
        rect.inside(&self.bounds)
            && !self.taken.iter().any(|t| t.overlap(&padded) > 0.0)
            && !self.segments.iter().any(|s| padded.crossed_by(*s))
    }

    /// A `w × h` box near `(ax, ay)`: returns its top-left corner and whether it sits away from
    /// the anchor (then a leader line is drawn); `None` when no spot is free, `text` then
    /// listed as dropped.
    pub fn place(
        &mut self,
        (ax, ay): (f64, f64),
        (w, h): (f64, f64),
        gap: f64,
        dirs: &[(f64, f64)],
        text: &str,
    ) -> Option<(f64, f64, bool)> {
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
                if self.free(&rect) {
                    self.taken.push(rect);
                    return Some((x, y, ring > 0));
                }
            }
        }
        self.dropped.push(text.to_string());
        None
    }
}

/// `prefill and decode`.
pub(super) fn stage_list(series: &[Series]) -> String {
    let names: Vec<&str> = series.iter().map(|s| s.name()).collect();
    names.join(" and ")
}

/// Text lines of at most `width` characters, breaking after `, `.
pub(crate) fn wrap(names: &[String], width: usize) -> Vec<String> {
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

/// A `<text>` element, anchored at its start.
pub(crate) fn text_el(o: &mut String, class: &str, x: f64, y: f64, size: f64, fill: &str, s: &str) {
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
    marker_scaled(o, series, x, y, fill, 1.0);
}

/// A point's marker, `k` times its usual size (5 px radius for a circle).
pub(super) fn marker_scaled(o: &mut String, series: Series, x: f64, y: f64, fill: &str, k: f64) {
    match series {
        Series::Prefill => {
            let _ = write!(
                o,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="{:.1}" fill="{fill}" fill-opacity="0.85" stroke="white" stroke-width="1"/>"#,
                5.0 * k
            );
        }
        Series::Decode => {
            let _ = write!(
                o,
                r#"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="{fill}" fill-opacity="0.85" stroke="white" stroke-width="1"/>"#,
                x,
                y - 6.0 * k,
                x - 5.5 * k,
                y + 4.0 * k,
                x + 5.5 * k,
                y + 4.0 * k
            );
        }
        Series::FusedPrefill | Series::FusedDecode => {
            let _ = write!(
                o,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{fill}" fill-opacity="0.9" stroke="white" stroke-width="1"/>"#,
                x - 5.0 * k,
                y - 5.0 * k,
                10.0 * k,
                10.0 * k
            );
        }
        Series::PrefillCollective | Series::DecodeCollective => {
            // A four-pointed star: tips 7.5 px out on the axes, waist 2.5 px on the diagonals.
            let (r, w) = (7.5 * k, 2.5 * k * std::f64::consts::FRAC_1_SQRT_2);
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
                y - 7.0 * k,
                x + 6.0 * k,
                y,
                x,
                y + 7.0 * k,
                x - 6.0 * k,
                y
            );
        }
    }
}

/// Where a label of `size` px may go beside the straight line from `a` to `b` (pixels): the
/// text's anchor point, its baseline and its `text-anchor`, at a dozen spots along the line,
/// first above it (left of a rising line) then under it (right of a rising line); the spots
/// nearer `a` first when `from_a`, else nearer `b` first.
pub(crate) fn beside_line(
    a: (f64, f64),
    b: (f64, f64),
    size: f64,
    from_a: bool,
) -> Vec<(f64, f64, &'static str)> {
    let flat = (b.1 - a.1).abs() < 0.5;
    let mut out = Vec::new();
    for above in [true, false] {
        for k in 0..12 {
            let t = if from_a {
                0.04 + 0.08 * k as f64
            } else {
                0.96 - 0.08 * k as f64
            };
            let (x, y) = (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1));
            out.push(match (flat, above) {
                (true, true) => (x, y - 6.0, if from_a { "start" } else { "end" }),
                (true, false) => (x, y + size + 5.0, if from_a { "start" } else { "end" }),
                (false, true) => (x - 5.0, y - 5.0, "end"),
                (false, false) => (x + 5.0, y + size + 3.0, "start"),
            });
        }
    }
    out
}

/// Takes the first spot of `spots` (anchor point, baseline, `text-anchor`) where `text` at
/// `size` px is free, or lists `text` as dropped.
pub(crate) fn place_text(
    placer: &mut Placer,
    text: &str,
    size: f64,
    spots: &[(f64, f64, &'static str)],
) -> Option<(f64, f64, &'static str)> {
    let found = spots
        .iter()
        .copied()
        .find(|&(x, y, anchor)| placer.free(&text_box(text, x, y, size, anchor)));
    match found {
        Some((x, y, anchor)) => {
            placer.taken.push(text_box(text, x, y, size, anchor));
            Some((x, y, anchor))
        }
        None => {
            placer.dropped.push(text.to_string());
            None
        }
    }
}

/// Where a block of `lines` (`size` px, `size + 4` apart) goes in `placer`'s bounds: the first
/// corner (bottom right, top left, bottom left, top right) clear of everything; the top left
/// when none is. Returns the first line's baseline start and takes the block's box.
pub(crate) fn place_block(placer: &mut Placer, lines: &[String], size: f64) -> (f64, f64) {
    let w = lines
        .iter()
        .map(|l| text_width(l, size))
        .fold(0.0, f64::max);
    let h = lines.len() as f64 * (size + 4.0);
    let b = placer.bounds;
    let corners = [
        (b.x1 - 8.0 - w, b.y1 - 8.0 - h),
        (b.x0 + 8.0, b.y0 + 8.0),
        (b.x0 + 8.0, b.y1 - 8.0 - h),
        (b.x1 - 8.0 - w, b.y0 + 8.0),
    ];
    let rect = |(x, y): (f64, f64)| Rect {
        x0: x,
        y0: y,
        x1: x + w,
        y1: y + h,
    };
    let (x, y) = corners
        .iter()
        .copied()
        .find(|&c| placer.free(&rect(c)))
        .unwrap_or(corners[1]);
    placer.taken.push(rect((x, y)));
    (x, y + size)
}

/// `text` in lines of at most `width` characters, broken at spaces.
pub(crate) fn wrap_text(text: &str, width: usize) -> Vec<String> {
    let words: Vec<String> = text.split(' ').map(str::to_string).collect();
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for w in words {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&w);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// The legend's lines listing the labels left out (`not labelled (no room): a, b, …`): at most
/// three lines of 64 characters, the rest counted.
pub(crate) fn note_lines(note: &[String]) -> Vec<String> {
    let mut names = note.to_vec();
    if let Some(first) = names.first_mut() {
        *first = format!("not labelled (no room): {first}");
    }
    let mut lines = wrap(&names, 64);
    if lines.len() > 3 {
        lines.truncate(3);
        let shown = lines
            .iter()
            .flat_map(|l| l.split([',', ' ', ':']))
            .filter(|w| note.iter().any(|n| n == w))
            .count();
        lines.push(format!("… and {} more", note.len() - shown));
    }
    lines
}
