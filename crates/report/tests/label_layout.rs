//! Every plot kind, drawn from crowded inputs, keeps its text readable: no two `<text>` boxes
//! overlap, and no line of the plot (a roof, a curve, a ridge) runs through a text box.
//!
//! A text box is estimated from the SVG alone, independently of the renderer's own measures:
//! `0.6 × font-size` per character wide, `font-size` high (0.8 of it above the baseline, 0.2
//! under it), placed by `text-anchor` and `dy`. Lines are the `<polyline>` elements drawn in a
//! colour or at least 2 px wide (the light grey grid and the black 1 px axes are not lines a
//! label must avoid).

use roofline_core::analysis::analyze;
use roofline_core::fixtures::{a6000, h100_sxm, llama2_7b};
use roofline_core::precision::Precision;
use roofline_core::sweep::{doubling, sweep, SweepSpec};
use roofline_core::workload::{Precisions, Stage, Workload};
use roofline_report::hier_plot::{self, HierChart, HierRoof};
use roofline_report::plot::{render_svg, ChartPoint, RooflineChart, Series};
use roofline_report::suite_plot::{self, SuiteChart, SuiteKernelPoint};
use roofline_report::sweep::SweepView;
use roofline_report::sweep_plot::render_sweep_svg;

type Seg = ((f64, f64), (f64, f64));

#[derive(Debug, Clone)]
struct TextBox {
    text: String,
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

fn attr<'a>(element: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let i = element.find(&key)? + key.len();
    let j = element[i..].find('"')?;
    Some(&element[i..i + j])
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The boxes of every unrotated `<text>` element of `svg`.
fn text_boxes(svg: &str) -> Vec<TextBox> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text") {
        let Some(close) = rest[i..].find('>') else {
            break;
        };
        let tag = &rest[i..i + close + 1];
        let Some(end) = rest[i..].find("</text>") else {
            break;
        };
        let inner = &rest[i + close + 1..i + end];
        rest = &rest[i + end..];
        if tag.contains("transform=") {
            continue;
        }
        // The text without its `<tspan>` tags.
        let mut plain = String::new();
        let mut in_tag = false;
        for c in inner.trim().chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => plain.push(c),
                _ => {}
            }
        }
        let text = unescape(&plain);
        if text.trim().is_empty() {
            continue;
        }
        let num = |n: &str| attr(tag, n).and_then(|v| v.parse::<f64>().ok());
        let (Some(x), Some(y)) = (num("x"), num("y")) else {
            continue;
        };
        let size = attr(tag, "font-size")
            .and_then(|v| v.trim_end_matches("px").parse::<f64>().ok())
            .unwrap_or(12.0);
        let baseline = match attr(tag, "dy") {
            Some(d) if d.ends_with("em") => {
                y + d.trim_end_matches("em").parse::<f64>().unwrap_or(0.0) * size
            }
            Some(d) if d.ends_with("ex") => {
                y + d.trim_end_matches("ex").parse::<f64>().unwrap_or(0.0) * size * 0.5
            }
            _ => y,
        };
        let w = 0.6 * size * text.chars().count() as f64;
        let x0 = match attr(tag, "text-anchor") {
            Some("middle") => x - w / 2.0,
            Some("end") => x - w,
            _ => x,
        };
        out.push(TextBox {
            text,
            x0,
            y0: baseline - 0.8 * size,
            x1: x0 + w,
            y1: baseline + 0.2 * size,
        });
    }
    out
}

fn grey(c: &str) -> bool {
    let c = c.trim_start_matches('#');
    c.len() == 6 && c[0..2] == c[2..4] && c[2..4] == c[4..6]
}

/// The segments of every coloured or wide `<polyline>` of `svg`.
fn line_segments(svg: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<polyline") {
        let Some(close) = rest[i..].find('>') else {
            break;
        };
        let tag = &rest[i..i + close + 1];
        rest = &rest[i + close + 1..];
        let stroke = attr(tag, "stroke").unwrap_or("#000000");
        let width = attr(tag, "stroke-width")
            .and_then(|w| w.parse::<f64>().ok())
            .unwrap_or(1.0);
        if stroke == "none" || (grey(stroke) && width < 2.0) {
            continue;
        }
        let pts: Vec<(f64, f64)> = attr(tag, "points")
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|p| {
                let (a, b) = p.split_once(',')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            })
            .collect();
        out.extend(pts.windows(2).map(|w| (w[0], w[1])));
    }
    out
}

/// Whether the segment passes through the box shrunk by 0.5 px (Liang–Barsky clipping).
fn crosses(((ax, ay), (bx, by)): Seg, b: &TextBox) -> bool {
    let (x0, y0, x1, y1) = (b.x0 + 0.5, b.y0 + 0.5, b.x1 - 0.5, b.y1 - 0.5);
    let (dx, dy) = (bx - ax, by - ay);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, ax - x0), (dx, x1 - ax), (-dy, ay - y0), (dy, y1 - ay)] {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    t0 < t1
}

fn overlap(a: &TextBox, b: &TextBox) -> bool {
    a.x1.min(b.x1) - a.x0.max(b.x0) > 0.5 && a.y1.min(b.y1) - a.y0.max(b.y0) > 0.5
}

/// The collisions in `svg`: pairs of overlapping texts and texts crossed by a line.
fn collisions(svg: &str) -> Vec<String> {
    let boxes = text_boxes(svg);
    let segs = line_segments(svg);
    let mut out = Vec::new();
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            if overlap(a, b) {
                out.push(format!("{:?} overlaps {:?}", a.text, b.text));
            }
        }
        if let Some(s) = segs.iter().find(|s| crosses(**s, a)) {
            out.push(format!("{:?} crossed by the line {s:?}", a.text));
        }
    }
    out
}

fn assert_readable(kind: &str, svg: &str) {
    // `LABEL_LAYOUT_OUT=DIR` keeps each drawing as DIR/KIND.png, to look at.
    if let Some(dir) = std::env::var_os("LABEL_LAYOUT_OUT") {
        let png = roofline_report::plot::svg_to_png(svg).unwrap();
        let name = kind.replace([' ', '(', ')'], "_");
        std::fs::write(std::path::Path::new(&dir).join(format!("{name}.png")), png).unwrap();
    }
    let c = collisions(svg);
    assert!(
        c.is_empty(),
        "{kind}: {} collisions:\n{}",
        c.len(),
        c.join("\n")
    );
}

#[test]
fn the_checker_sees_an_overlap_and_a_crossing() {
    let svg = r##"<svg><text x="10" y="20" font-size="10">abcdef</text><text x="30" y="22" font-size="10">ghi</text><polyline stroke="#FF0000" stroke-width="3" points="0,0 100,100"/></svg>"##;
    let c = collisions(svg);
    assert!(c.iter().any(|m| m.contains("overlaps")), "{c:?}");
    assert!(c.iter().any(|m| m.contains("crossed")), "{c:?}");
    let clear = r##"<svg><text x="10" y="20" font-size="10">abc</text><text x="10" y="40" font-size="10" text-anchor="start">abc</text><polyline stroke="#FF0000" stroke-width="3" points="0,60 100,60"/></svg>"##;
    assert!(collisions(clear).is_empty());
}

#[test]
fn analyze_plot_of_a_whole_model_reads() -> Result<(), Box<dyn std::error::Error>> {
    let m = llama2_7b();
    let d = a6000();
    let stages = [Stage::Prefill, Stage::Decode]
        .into_iter()
        .map(|stage| {
            let w = Workload::new(stage, 1, 2048, 2048)
                .with_precisions(Precisions::uniform(Precision::Bf16));
            analyze(&m, &w, &d, roofline_core::memory::Reserve::DEFAULT)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let chart = RooflineChart::for_analysis(&m, &d, &stages)?;
    assert_readable("analyze", &render_svg(&chart)?);
    Ok(())
}

#[test]
fn analyze_plot_of_many_operators_at_one_intensity_reads() -> Result<(), Box<dyn std::error::Error>>
{
    let d = a6000();
    let mut chart = RooflineChart::for_devices(&[d], &[Precision::Bf16])?;
    // Forty operators within 1 % of each other in intensity and a few far apart: the labels
    // cannot all sit beside their points.
    for k in 0..40 {
        let intensity = 2.0 * (1.0 + 0.0005 * k as f64) * if k % 2 == 0 { 1.0 } else { 1.004 };
        chart.points.push(ChartPoint {
            label: format!("layer_{k}_projection"),
            series: if k % 3 == 0 {
                Series::Decode
            } else {
                Series::Prefill
            },
            intensity,
            attainable: intensity * 768e9,
            tooltip: vec![],
            share: Some(1.0 / 40.0),
        });
    }
    assert_readable("analyze (crowded)", &render_svg(&chart)?);
    Ok(())
}

#[test]
fn hardware_compare_of_chips_with_identical_roofs_reads() -> Result<(), Box<dyn std::error::Error>>
{
    let a = a6000();
    let mut twin = a6000();
    twin.id = "a6000-twin".into();
    twin.name = "NVIDIA RTX A6000 (second)".into();
    let mut half = a6000();
    half.id = "a6000-half".into();
    half.name = "Half-bandwidth A6000".into();
    if let Some(m) = half.memory.first_mut() {
        if let Some(b) = m.bandwidth.as_mut() {
            b.value.0 = 384e9;
        }
    }
    let chart = RooflineChart::for_devices(&[a, twin, half, h100_sxm()], &[Precision::Bf16])?;
    assert_readable("hardware compare", &render_svg(&chart)?);
    Ok(())
}

fn roof(label: &str, value: f64, theoretical: bool, color: (u8, u8, u8)) -> HierRoof {
    HierRoof {
        label: label.into(),
        value,
        theoretical,
        color,
    }
}

fn crowded_levels() -> Vec<HierRoof> {
    vec![
        roof("L1d 380.0 GB/s", 380e9, false, (200, 30, 30)),
        roof("L1d 400.0 GB/s (theoretical)", 400e9, true, (200, 30, 30)),
        roof("L2 370.0 GB/s", 370e9, false, (30, 120, 200)),
        roof("L2 390.0 GB/s (theoretical)", 390e9, true, (30, 120, 200)),
        roof("L3 350.0 GB/s", 350e9, false, (30, 160, 60)),
        roof("L3 360.0 GB/s (theoretical)", 360e9, true, (30, 160, 60)),
        roof("DRAM 40.0 GB/s", 40e9, false, (120, 60, 160)),
    ]
}

#[test]
fn measure_plot_of_close_levels_reads() -> Result<(), Box<dyn std::error::Error>> {
    let chart = HierChart {
        title: "Measured roofline".into(),
        subtitle: "close levels".into(),
        memory: crowded_levels(),
        compute: vec![
            roof("fp64 112.0 GFLOP/s", 112e9, false, (90, 90, 20)),
            roof(
                "fp64 114.2 GFLOP/s (theoretical)",
                114.2e9,
                true,
                (90, 90, 20),
            ),
            roof("fp32 224.0 GFLOP/s", 224e9, false, (20, 90, 90)),
            roof(
                "fp32 228.5 GFLOP/s (theoretical)",
                228.5e9,
                true,
                (20, 90, 90),
            ),
            roof("fp16 230.0 GFLOP/s", 230e9, false, (150, 20, 90)),
        ],
    };
    assert_readable("measure", &hier_plot::render_svg(&chart)?);
    Ok(())
}

#[test]
fn measure_kernels_plot_of_many_kernels_reads() -> Result<(), Box<dyn std::error::Error>> {
    let points = (0..16)
        .map(|k| {
            let intensity = 0.25 * (1.0 + 0.02 * k as f64);
            SuiteKernelPoint {
                number: k + 1,
                name: format!("kernel_{k}"),
                intensity,
                measured: intensity * 300e9,
                predicted: intensity * 340e9,
                error: 0.1,
                level: "L2".into(),
                color: (30, 120, 200),
            }
        })
        .collect();
    let chart = SuiteChart {
        title: "Kernels".into(),
        subtitle: "crowded".into(),
        memory: crowded_levels()
            .into_iter()
            .filter(|r| !r.theoretical)
            .collect(),
        compute: vec![roof("fp32 224.0 GFLOP/s", 224e9, false, (20, 90, 90))],
        ceiling: Some(roof(
            "GEMM ceiling 200.0 GFLOP/s",
            200e9,
            false,
            (80, 80, 80),
        )),
        points,
    };
    assert_readable("measure kernels", &suite_plot::render_svg(&chart)?);
    Ok(())
}

#[test]
fn sweep_plot_of_two_chips_reads() -> Result<(), Box<dyn std::error::Error>> {
    let m = llama2_7b();
    let devices = [a6000(), h100_sxm()];
    let precisions = [Precisions::uniform(Precision::Bf16)];
    let batches = doubling(1, 512);
    let s = sweep(&SweepSpec {
        model: &m,
        devices: &devices,
        precisions: &precisions,
        stages: &[Stage::Decode],
        seq_lens: &[512],
        contexts: &[1024, 4096],
        batches: &batches,
        flash_attention: true,
        logits: Default::default(),
        reserve: roofline_core::memory::Reserve::DEFAULT,
    })?;
    let view = SweepView {
        model: &m,
        devices: &devices,
        sweep: &s,
        flash_attention: true,
    };
    let svg = render_sweep_svg(&view)?;
    assert_readable("sweep", &svg);
    let texts: Vec<String> = text_boxes(&svg).into_iter().map(|b| b.text).collect();
    // One intensity panel per chip, each with its own ridges (bf16 matrix peak / bandwidth:
    // 154.8 TFLOP/s / 768 GB/s = 201.6, 989.5 / 3.35 TB/s = 295.4 FLOP/byte).
    assert_eq!(
        texts
            .iter()
            .filter(|t| t.starts_with("operator intensity, "))
            .count(),
        2,
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t.starts_with("ridge 201.6")));
    assert!(texts.iter().any(|t| t.starts_with("ridge 295.4")));
    // In decode the four attention projections are d × d GEMMs over the same rows: one curve,
    // one legend entry naming them all.
    assert!(
        texts
            .iter()
            .any(|t| t.contains("q_proj, k_proj, v_proj, o_proj")),
        "{texts:?}"
    );
    // Every decade the batch axes span (1 to 512) is labelled, on all three panels.
    for d in ["1", "10", "100"] {
        assert!(
            texts.iter().filter(|t| *t == d).count() >= 3,
            "{d}: {texts:?}"
        );
    }
    Ok(())
}

/// The stroke colour of every coloured `<polyline>`, and the fills of every `<text>` and
/// `<tspan>`.
fn colours(svg: &str) -> (Vec<String>, Vec<String>) {
    let of = |tag: &str, key: &str| {
        let mut out: Vec<String> = Vec::new();
        let mut rest = svg;
        while let Some(i) = rest.find(tag) {
            let end = rest[i..].find('>').map_or(rest.len(), |e| i + e + 1);
            let el = &rest[i..end];
            rest = &rest[end..];
            if let Some(c) = attr(el, key) {
                let c = c.to_ascii_uppercase();
                if !grey(&c) && !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out
    };
    let mut fills = of("<text", "fill");
    fills.extend(of("<tspan", "fill"));
    (of("<polyline", "stroke"), fills)
}

#[test]
fn identical_roofs_of_two_chips_both_show_each_labelled_in_its_colour(
) -> Result<(), Box<dyn std::error::Error>> {
    let mut twin = a6000();
    twin.id = "a6000-twin".into();
    twin.name = "A6000 twin".into();
    let one = render_svg(&RooflineChart::for_devices(&[a6000()], &[Precision::Bf16])?)?;
    let two = render_svg(&RooflineChart::for_devices(
        &[a6000(), twin],
        &[Precision::Bf16],
    )?)?;
    let (s1, _) = colours(&one);
    let (s2, f2) = colours(&two);
    // The second chip's roofs, on top of the first's, are drawn in a colour of their own and
    // broken into dashes (more polylines than the one chip's solid roofs), so both show.
    assert_eq!(s1.len(), 1, "{s1:?}");
    assert_eq!(s2.len(), 2, "{s2:?}");
    let polylines = |svg: &str| svg.matches("<polyline").count();
    assert!(polylines(&two) > 2 * polylines(&one) + 10);
    // Each chip's colour names something: its labels.
    for c in &s2 {
        assert!(f2.contains(c), "no text in {c}: {f2:?}");
    }
    assert!(two.contains("●</tspan>"));
    assert_readable("hardware compare (twins)", &two);
    Ok(())
}

#[test]
fn analyze_plot_of_a_parallel_step_with_its_communication_panel_reads(
) -> Result<(), Box<dyn std::error::Error>> {
    use roofline_core::cited::Cited;
    use roofline_core::comm::{Fabric, LinkTier, System};
    use roofline_core::parallel::{analyze_parallel, Layout};
    use roofline_core::units::{BytesPerSec, Seconds};
    let fabric = Fabric {
        scale_up: Some(LinkTier::new(
            "NVLink",
            Cited::new(BytesPerSec(450e9), "test"),
            Cited::new(Seconds(1e-6), "test"),
        )),
        ..Fabric::default()
    };
    let system = System::new("test-8", "8 × H100 SXM", h100_sxm(), 8, 1, fabric)?;
    let m = llama2_7b();
    let stages = [Stage::Prefill, Stage::Decode]
        .into_iter()
        .map(|stage| {
            let w = Workload::new(stage, 8, 2048, 2048)
                .with_precisions(Precisions::uniform(Precision::Bf16));
            let layout = Layout {
                tp: 8,
                ..Layout::default()
            };
            analyze_parallel(
                &m,
                &w,
                &system,
                layout,
                roofline_core::memory::Reserve::DEFAULT,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let chart = RooflineChart::for_parallel(&m, &system, &stages)?;
    assert!(chart.comm.is_some());
    assert_readable("analyze --tp 8", &render_svg(&chart)?);
    Ok(())
}

#[test]
fn pareto_plot_of_many_layouts_reads() -> Result<(), Box<dyn std::error::Error>> {
    use roofline_report::plot::pareto::{render_pareto_svg, ParetoChart, ParetoDot};
    let series: Vec<String> = (0..8)
        .map(|k| format!("TP {} × PP {}", 1 << (k % 4), 1 + k / 4))
        .collect();
    let dots = (0..8)
        .flat_map(|s| {
            (0..10).map(move |b| ParetoDot {
                tpot: 0.01 * (1.0 + 0.3 * b as f64) * (1.0 + 0.01 * s as f64),
                tokens_per_s_per_device: 100.0 * (1.0 + b as f64) * (1.0 + 0.01 * s as f64),
                series: s,
                front: b % 3 == 0,
                fits: b < 8,
                batch: 1 << b,
            })
        })
        .collect();
    let chart = ParetoChart {
        title: "Pareto".into(),
        subtitle: "crowded".into(),
        series,
        dots,
        slo_tpot: Some(0.02),
    };
    assert_readable("pareto", &render_pareto_svg(&chart)?);
    Ok(())
}
