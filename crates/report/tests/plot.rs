//! The roofline plot against the numbers: the SVG parses, holds one point per operator, and the
//! roofs' end points sit at the pixels the datasheet figures put them at; the PNG is not blank.
//!
//! Expected pixels are computed here from the plot area the SVG declares and the log mapping
//! written out below, with the RTX A6000's datasheet figures (154.8 TFLOP/s dense bf16/fp16,
//! 38.7 TFLOP/s fp32, 768 GB/s), not read back from the renderer.

use resvg::{tiny_skia, usvg};
use roofline_core::analysis::analyze;
use roofline_core::fixtures::{a6000, llama2_7b};
use roofline_core::precision::Precision;
use roofline_core::workload::{Precisions, Stage, Workload};
use roofline_report::plot::{render_svg, svg_to_png, RooflineChart};

fn chart() -> (RooflineChart, usize, Vec<&'static str>) {
    let m = llama2_7b();
    let d = a6000();
    let stages: Vec<_> = [Stage::Prefill, Stage::Decode]
        .into_iter()
        .map(|stage| {
            let w = Workload::new(stage, 1, 2048, 2048)
                .with_precisions(Precisions::uniform(Precision::Bf16));
            analyze(&m, &w, &d, roofline_core::memory::Reserve::DEFAULT).unwrap()
        })
        .collect();
    // Operators with FLOPs have a place on log axes; the others (embedding, cache write) not.
    let plotted = stages
        .iter()
        .flat_map(|s| s.rows.iter())
        .filter(|r| r.cost.flops.get() > 0.0)
        .count();
    let names = stages[0].rows.iter().map(|r| r.name).collect();
    (
        RooflineChart::for_analysis(&m, &d, &stages).unwrap(),
        plotted,
        names,
    )
}

/// The value of `attr="…"` in `element`.
fn attr<'a>(element: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let i = element.find(&key)? + key.len();
    let j = element[i..].find('"')?;
    Some(&element[i..i + j])
}

fn num(element: &str, name: &str) -> f64 {
    attr(element, name)
        .unwrap_or_else(|| panic!("no {name} in {element}"))
        .parse()
        .unwrap()
}

/// Every `<tag …>` start tag in `svg`.
fn elements<'a>(svg: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag} ");
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find(&open) {
        let end = rest[i..].find('>').unwrap() + i + 1;
        out.push(&rest[i..end]);
        rest = &rest[end..];
    }
    out
}

struct Area {
    left: f64,
    top: f64,
    width: f64,
    height: f64,
    x: (f64, f64),
    y: (f64, f64),
}

impl Area {
    /// Log-log mapping: x grows to the right, y upwards from the bottom edge.
    fn px(&self, x: f64, y: f64) -> (f64, f64) {
        let fx = (x.ln() - self.x.0.ln()) / (self.x.1.ln() - self.x.0.ln());
        let fy = (y.ln() - self.y.0.ln()) / (self.y.1.ln() - self.y.0.ln());
        (
            self.left + fx * self.width,
            self.top + self.height - fy * self.height,
        )
    }
}

fn area(svg: &str) -> Area {
    let rect = elements(svg, "rect")
        .into_iter()
        .find(|e| e.contains("class=\"plot-area\""))
        .expect("plot area declared");
    Area {
        left: num(rect, "x"),
        top: num(rect, "y"),
        width: num(rect, "width"),
        height: num(rect, "height"),
        x: (num(rect, "data-x-min"), num(rect, "data-x-max")),
        y: (num(rect, "data-y-min"), num(rect, "data-y-max")),
    }
}

/// The two end points of every straight two-point polyline.
fn segments(svg: &str) -> Vec<((f64, f64), (f64, f64))> {
    elements(svg, "polyline")
        .into_iter()
        .filter_map(|e| {
            let pts: Vec<(f64, f64)> = attr(e, "points")?
                .split_whitespace()
                .map(|p| {
                    let (a, b) = p.split_once(',').unwrap();
                    (a.parse().unwrap(), b.parse().unwrap())
                })
                .collect();
            (pts.len() == 2).then(|| (pts[0], pts[1]))
        })
        .collect()
}

fn near(a: (f64, f64), b: (f64, f64)) -> bool {
    (a.0 - b.0).abs() <= 1.5 && (a.1 - b.1).abs() <= 1.5
}

#[test]
fn svg_parses_and_holds_one_point_per_operator() -> Result<(), Box<dyn std::error::Error>> {
    let (chart, plotted, names) = chart();
    let svg = render_svg(&chart)?;
    usvg::Tree::from_str(&svg, &usvg::Options::default())?;
    let points = elements(&svg, "g")
        .into_iter()
        .filter(|e| e.contains("class=\"op-point\""))
        .collect::<Vec<_>>();
    assert_eq!(points.len(), plotted);
    for n in names {
        if n != "embed_tokens" && n != "kv_cache_write" {
            assert!(
                points.iter().any(|p| attr(p, "data-name") == Some(n)),
                "no point for {n}"
            );
        }
    }
    assert!(points
        .iter()
        .any(|p| attr(p, "data-stage") == Some("prefill")));
    assert!(points
        .iter()
        .any(|p| attr(p, "data-stage") == Some("decode")));
    // Each point carries a tooltip with its numbers.
    assert_eq!(svg.matches("<title>").count(), plotted);
    assert!(svg.contains("not plotted (0 FLOP): embed_tokens, kv_cache_write"));
    assert!(svg.contains("llama-2-7b on NVIDIA RTX A6000: prefill and decode"));
    Ok(())
}

#[test]
fn roofs_end_where_the_datasheet_numbers_say() -> Result<(), Box<dyn std::error::Error>> {
    let (chart, _, _) = chart();
    let svg = render_svg(&chart)?;
    let a = area(&svg);
    let segs = segments(&svg);
    let w = 768e9;
    // Ridge points: 154.8e12 / 768e9 = 201.5625 and 38.7e12 / 768e9 = 50.390625 FLOP/byte.
    let (bf16_ridge, fp32_ridge) = (201.5625, 50.390625);
    // Memory roof: from the left edge (or where it enters the plot from below) up to the
    // highest ridge point.
    let x_start = a.x.0.max(a.y.0 / w);
    let mem = (a.px(x_start, x_start * w), a.px(bf16_ridge, 154.8e12));
    assert!(
        segs.iter().any(|s| near(s.0, mem.0) && near(s.1, mem.1)),
        "memory roof {mem:?} not among {segs:?}"
    );
    // Compute roofs: from each ridge point to the right edge.
    for (ridge, peak) in [(bf16_ridge, 154.8e12), (fp32_ridge, 38.7e12)] {
        let roof = (a.px(ridge, peak), a.px(a.x.1, peak));
        assert!(
            segs.iter().any(|s| near(s.0, roof.0) && near(s.1, roof.1)),
            "compute roof {roof:?} not among {segs:?}"
        );
    }
    // Ridge points are labelled with their values.
    assert!(svg.contains(">201.6</text>"));
    assert!(svg.contains(">50.39</text>"));
    // A point sits on its roof: decode q_proj at AI 0.99951 attains 0.99951 × 768e9.
    let q = elements(&svg, "g")
        .into_iter()
        .find(|e| e.contains("data-name=\"q_proj\"") && e.contains("data-stage=\"decode\""))
        .ok_or("no decode q_proj point")?;
    let ai = 2.0 * 4096f64.powi(2) / (2.0 * (4096.0 + 4096f64.powi(2) + 4096.0));
    assert!((num(q, "data-intensity") - ai).abs() < 1e-9);
    assert!((num(q, "data-attainable") - ai * w).abs() < 1.0);
    Ok(())
}

#[test]
fn png_is_not_blank() -> Result<(), Box<dyn std::error::Error>> {
    let (chart, _, _) = chart();
    let png = svg_to_png(&render_svg(&chart)?)?;
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let pix = tiny_skia::Pixmap::decode_png(&png)?;
    let data = pix.data();
    let total = data.len() / 4;
    let mut non_white = 0;
    let mut blue = 0;
    for px in data.chunks_exact(4) {
        if px[0] < 235 || px[1] < 235 || px[2] < 235 {
            non_white += 1;
        }
        // The prefill marker colour #1f6fb4.
        if (px[0] as i32 - 0x1f).abs() < 30
            && (px[1] as i32 - 0x6f).abs() < 30
            && (px[2] as i32 - 0xb4).abs() < 30
        {
            blue += 1;
        }
    }
    assert!(
        non_white * 100 > total,
        "{non_white} of {total} pixels drawn"
    );
    assert!(blue > 50, "prefill points not drawn ({blue} blue pixels)");
    Ok(())
}

// The communication panel. Links of 450 GB/s per GPU per direction (NVLink 4, 900 GB/s
// bidirectional ÷ 2) and α = 1 µs a step, no in-network reduction, so that every number
// below is hand arithmetic from NCCL's ring constants (base latency 8.4 µs in Simple).

use roofline_core::cited::Cited;
use roofline_core::comm::collective::{collective_cost_in, Algorithm, Collective, Protocol};
use roofline_core::comm::{Fabric, Group, LinkTier, System};
use roofline_core::ops::{Communication, Compute};
use roofline_core::parallel::{analyze_parallel, Layout};
use roofline_core::units::{Bytes, BytesPerSec, Seconds};
use roofline_report::plot::{CommChart, Series};

const LINK: f64 = 450e9;
const ALPHA: f64 = 1e-6;

fn fabric() -> Fabric {
    Fabric {
        scale_up: Some(LinkTier::new(
            "NVLink",
            Cited::new(BytesPerSec(LINK), "test: 900 GB/s bidirectional ÷ 2"),
            Cited::new(Seconds(ALPHA), "test"),
        )),
        ..Fabric::default()
    }
}

/// The single-device chart of `chart()` with one ring all-reduce of 64 MiB over 8 ranks of one
/// node, in the Simple protocol, on its communication panel.
fn chart_with_all_reduce() -> (RooflineChart, Communication) {
    let (mut chart, _, _) = chart();
    let cost = collective_cost_in(
        Collective::AllReduce,
        Bytes(64.0 * 1024.0 * 1024.0),
        Group::in_one_node(8),
        &fabric(),
        Algorithm::Ring,
        Protocol::Simple,
    )
    .unwrap();
    let c = Communication::of(&cost);
    let mut comm = CommChart::new("Communication", "test");
    comm.push(
        &fabric(),
        Series::DecodeCollective,
        "decode · ",
        "attention.tp_reduce",
        32,
        &c,
    );
    chart.comm = Some(comm);
    (chart, c)
}

/// The communication panel's plot area, as the SVG declares it.
fn comm_area(svg: &str) -> Area {
    let rect = elements(svg, "rect")
        .into_iter()
        .find(|e| e.contains("class=\"comm-plot-area\""))
        .expect("communication plot area declared");
    Area {
        left: num(rect, "x"),
        top: num(rect, "y"),
        width: num(rect, "width"),
        height: num(rect, "height"),
        x: (num(rect, "data-x-min"), num(rect, "data-x-max")),
        y: (num(rect, "data-y-min"), num(rect, "data-y-max")),
    }
}

#[test]
fn a_collective_gets_a_panel_with_its_link_roof_and_its_latency_ridge(
) -> Result<(), Box<dyn std::error::Error>> {
    let (chart, c) = chart_with_all_reduce();
    let comm = chart.comm.as_ref().ok_or("no panel")?;
    // One link roof, at the fabric's bandwidth exactly.
    assert_eq!(comm.links.len(), 1);
    assert_eq!(comm.links[0].bandwidth, LINK);
    assert_eq!(comm.links[0].name, "NVLink");
    // S = 67,108,864 B; f = 2·7/8 = 1.75; t_α = 8.4 µs + 2·7·1 µs = 22.4 µs; t_β = 1.75·S/B.
    let s = 67_108_864.0;
    let f = 1.75;
    let t_alpha = 8.4e-6 + 14.0 * ALPHA;
    let t_beta = f * s / LINK;
    let roof = &comm.roofs[0];
    assert_eq!(roof.label(), "all-reduce ring simple");
    assert!((roof.latency - t_alpha).abs() < 1e-15);
    assert_eq!(roof.bus_factor, f);
    // A ring in Simple sends f·S: its ceiling S·f/t_β is the link's bandwidth.
    assert!((roof.ceiling - LINK).abs() <= 1e-9 * LINK);
    // The ridge where t_α = t_β: S* = t_α·B/f = 22.4e-6 · 450e9 / 1.75 = 5.76 MB, α·B = 10.08
    // MB of bus bytes.
    let ridge = t_alpha * LINK / f;
    assert!((ridge - 5.76e6).abs() < 1e-3);
    assert!((roof.ridge() - ridge).abs() <= 1e-9 * ridge);
    assert!((roof.ridge() * f - t_alpha * LINK).abs() <= 1e-9 * ridge);
    assert!((c.ridge_bytes().get() - ridge).abs() <= 1e-9 * ridge);
    // The point: busbw = S·f / (t_α + t_β) = 414.4 GB/s.
    let busbw = s * f / (t_alpha + t_beta);
    assert!((busbw - 414.43e9).abs() < 0.01e9);
    let p = &comm.points[0];
    assert_eq!(p.bytes, s);
    assert!((p.busbw - busbw).abs() <= 1e-9 * busbw);

    let svg = render_svg(&chart)?;
    usvg::Tree::from_str(&svg, &usvg::Options::default())?;
    assert!(svg.starts_with(r#"<svg width="1100" height="1320""#));
    let a = comm_area(&svg);
    // The link roof: a bold line across the panel at y = 450 GB/s.
    let segs = segments(&svg);
    let link_roof = (a.px(a.x.0, LINK), a.px(a.x.1, LINK));
    assert!(
        segs.iter()
            .any(|g| near(g.0, link_roof.0) && near(g.1, link_roof.1)),
        "link roof {link_roof:?} not among {segs:?}"
    );
    let label = elements(&svg, "text")
        .into_iter()
        .find(|e| e.contains("class=\"link-label\""))
        .ok_or("no link label")?;
    assert_eq!(num(label, "data-bandwidth"), LINK);
    assert!(svg.contains(">NVLink 450.0 GB/s</text>"));
    // The latency roof: dashes from where y = S·f/t_α enters the panel, up to the ridge's dot.
    let x_start = a.x.0.max(a.y.0 * t_alpha / f);
    let start = a.px(x_start, x_start * f / t_alpha);
    assert!(
        segs.iter().any(|g| near(g.0, start)),
        "latency roof does not start at {start:?}"
    );
    let dot = a.px(ridge, LINK);
    assert!(
        elements(&svg, "circle")
            .into_iter()
            .any(|e| near((num(e, "cx"), num(e, "cy")), dot)),
        "no ridge dot at {dot:?}"
    );
    let ridge_label = elements(&svg, "text")
        .into_iter()
        .find(|e| e.contains("class=\"comm-ridge-label\""))
        .ok_or("no ridge label")?;
    assert!((num(ridge_label, "data-ridge") - ridge).abs() <= 1e-9 * ridge);
    assert!(svg.contains(">5.76 MB</text>"));
    // The collective: a four-pointed star (8 vertices) at its pixel, with its tooltip.
    let i = svg
        .find("class=\"comm-point\"")
        .ok_or("no collective point")?;
    let g = &svg[i..i + svg[i..].find("</g>").ok_or("unclosed")?];
    assert!(g.contains("data-name=\"attention.tp_reduce\""));
    assert!(g.contains("data-collective=\"all-reduce\""));
    assert!((num(g, "data-busbw") - busbw).abs() <= 1e-9 * busbw);
    let star = elements(g, "polygon")
        .into_iter()
        .next()
        .ok_or("no marker")?;
    let vertices: Vec<(f64, f64)> = attr(star, "points")
        .ok_or("no points")?
        .split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect();
    assert_eq!(vertices.len(), 8);
    let (cx, cy) = a.px(s, busbw);
    // The top tip is 7.5 px above the centre.
    assert!(
        near(vertices[0], (cx, cy - 7.5)),
        "{vertices:?} vs {cx},{cy}"
    );
    assert!(
        g.contains("t = t_α + t_β = 22.4 µs + 261.0 µs = 283.4 µs (×32 = 9.07 ms)"),
        "{g}"
    );
    // Labelled by name, and in the legend.
    assert!(svg.contains(">attention.tp_reduce</text>"));
    assert!(svg.contains(">decode collective</text>"));
    assert!(svg.contains(">scale-up links: 450.0 GB/s per GPU per direction</text>"));
    // The PNG holds the taller picture.
    let png = svg_to_png(&svg)?;
    let pix = tiny_skia::Pixmap::decode_png(&png)?;
    assert_eq!((pix.width(), pix.height()), (1650, 1980));
    Ok(())
}

fn tp8_system() -> System {
    System::new(
        "test-8",
        "8 × H100 SXM",
        roofline_core::fixtures::h100_sxm(),
        8,
        1,
        fabric(),
    )
    .unwrap()
}

fn parallel_stage(tp: u32) -> roofline_core::parallel::ParallelStage {
    let w = Workload::new(Stage::Decode, 8, 2048, 2048)
        .with_precisions(Precisions::uniform(Precision::Bf16));
    analyze_parallel(
        &llama2_7b(),
        &w,
        &tp8_system(),
        Layout {
            tp,
            ..Layout::default()
        },
        roofline_core::memory::Reserve::DEFAULT,
    )
    .unwrap()
}

#[test]
fn a_parallel_step_puts_operators_on_the_chip_and_collectives_on_the_panel(
) -> Result<(), Box<dyn std::error::Error>> {
    let stage = parallel_stage(8);
    let chart =
        RooflineChart::for_parallel(&llama2_7b(), &tp8_system(), std::slice::from_ref(&stage))?;
    let comm = chart.comm.as_ref().ok_or("no panel")?;
    let collectives: Vec<usize> = (0..stage.rows.len())
        .filter(|&i| stage.rows[i].compute == Compute::Network)
        .collect();
    assert!(collectives.len() >= 3, "{collectives:?}");
    assert_eq!(comm.points.len(), collectives.len());
    for (p, &i) in comm.points.iter().zip(&collectives) {
        let c = stage
            .communication(i)
            .ok_or("a collective row without its collective")?;
        assert_eq!(p.label, stage.rows[i].name);
        assert_eq!(p.bytes, c.bytes.get());
        assert_eq!(p.busbw, c.busbw().get());
        // Each point sits under its roofs: busbw = 1 / (t_α/(S·f) + t_β/(S·f)).
        let r = &comm.roofs[p.roof];
        assert!(p.busbw < r.latency_roof(p.bytes) && p.busbw < r.ceiling);
        let ridge = c.ridge_bytes().get();
        assert!((r.ridge() - ridge).abs() <= 1e-9 * ridge);
        // No collective on the chip's roofline, nor listed there as left out.
        assert!(!chart.points.iter().any(|q| q.label == p.label));
        assert!(!chart.omitted.contains(&p.label));
    }
    // Every collective crosses the one tier, at its bandwidth.
    assert_eq!(comm.links.len(), 1);
    assert_eq!(comm.links[0].bandwidth, LINK);
    // The compute operators are on the chip's roofline as before.
    assert!(chart.points.iter().any(|q| q.label == "q_proj"));
    let svg = render_svg(&chart)?;
    assert_eq!(
        svg.matches("class=\"comm-point\"").count(),
        collectives.len()
    );
    assert!(chart.title.contains("TP 8 × PP 1, one of 8 devices"));
    Ok(())
}

/// FNV-1a, 64 bits: a fingerprint of the bytes of a drawing.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn charts_without_collectives_are_drawn_as_before() -> Result<(), Box<dyn std::error::Error>> {
    let (chart, _, _) = chart();
    assert!(chart.comm.is_none());
    let svg = render_svg(&chart)?;
    assert!(svg.starts_with(r#"<svg width="1100" height="720""#));
    assert!(!svg.contains("comm-"));
    // The bytes of this plot, a chip without collectives: the communication panel changes
    // nothing here, and any other change to a plot of one chip shows.
    assert_eq!(
        (svg.len(), fnv1a(svg.as_bytes())),
        (GOLDEN_LEN, GOLDEN_FNV),
        "the roofline of one chip is drawn differently"
    );
    // A parallel step without collectives (TP 1) has no panel either.
    let one = RooflineChart::for_parallel(&llama2_7b(), &tp8_system(), &[parallel_stage(1)])?;
    assert!(one.comm.is_none());
    let svg = render_svg(&one)?;
    assert!(svg.starts_with(r#"<svg width="1100" height="720""#));
    assert!(!svg.contains("comm-"));
    Ok(())
}

/// Length and FNV-1a of `chart()`'s SVG as drawn since labels are placed clear of each other
/// and of the roofs, and markers are sized by their share of the step time.
const GOLDEN_LEN: usize = 40_396;
const GOLDEN_FNV: u64 = 4_960_824_175_327_552_664;
