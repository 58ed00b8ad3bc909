//! The roofline plot against the numbers: the SVG parses, holds one point per operator, and the
//! roofs' end points sit at the pixels the datasheet figures put them at; the PNG is not blank.
//!
//! Expected pixels are computed here from the plot area the SVG declares and the log mapping
//! written out below, with the RTX A6000's datasheet figures (154.8 TFLOP/s dense bf16/fp16,
//! 38.7 TFLOP/s fp32, 768 GB/s), not read back from the renderer.

use resvg::{tiny_skia, usvg};
use roofline_core::analysis::analyze;
use roofline_core::cited::Cited;
use roofline_core::device::{Device, MemoryKind, MemoryLevel};
use roofline_core::model::{Activation, MlpKind, NormKind, Transformer};
use roofline_core::precision::Precision;
use roofline_core::units::{BytesPerSec, FlopPerSec, Seconds};
use roofline_core::workload::{Precisions, Stage, Workload};
use roofline_report::plot::{render_svg, svg_to_png, RooflineChart};

fn a6000() -> Device {
    let peak = |p, v| (p, Cited::new(FlopPerSec(v), "RTX A6000 datasheet"));
    Device {
        id: "a6000".into(),
        name: "NVIDIA RTX A6000".into(),
        vendor: "NVIDIA".into(),
        peaks: vec![
            peak(Precision::Fp32, 38.7e12),
            peak(Precision::Bf16, 154.8e12),
            peak(Precision::Fp16, 154.8e12),
        ],
        memory: vec![MemoryLevel {
            kind: MemoryKind::Main,
            name: "GDDR6".into(),
            bandwidth: Some(Cited::new(BytesPerSec(768e9), "RTX A6000 datasheet")),
            capacity: None,
        }],
        sm_count: None,
        shared_memory_per_sm: None,
        launch_overhead: Cited::new(Seconds(5e-6), "typical"),
        interconnect: None,
        host_link: None,
        notes: vec![],
    }
}

/// Llama-2-7B's shape (its config.json).
fn llama2_7b() -> Transformer {
    Transformer {
        name: "llama-2-7b".into(),
        architecture: "LlamaForCausalLM".into(),
        hidden: 4096,
        layers: 32,
        heads: 32,
        kv_heads: 32,
        head_dim: 128,
        intermediate: 11008,
        vocab: 32000,
        tie_embeddings: false,
        qkv_bias: false,
        o_bias: false,
        mlp_bias: false,
        norm: NormKind::RmsNorm,
        mlp: MlpKind::Gated,
        activation: Activation::Silu,
        max_position_embeddings: Some(4096),
        variant: Default::default(),
    }
}

fn chart() -> (RooflineChart, usize, Vec<&'static str>) {
    let m = llama2_7b();
    let d = a6000();
    let stages: Vec<_> = [Stage::Prefill, Stage::Decode]
        .into_iter()
        .map(|stage| {
            let w = Workload {
                stage,
                batch: 1,
                seq_len: 2048,
                context: 2048,
                precisions: Precisions::uniform(Precision::Bf16),
                flash_attention: false,
            };
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
