//! The HTML report (`roofline report`): one self-contained file, no network, no scripts, no web
//! fonts. The page is `templates/report.html` with the settings, the chip and its ridge points,
//! the roofline plot (inline SVG; each point's SVG `<title>` is its tooltip), per-stage operator
//! tables with totals and the memory footprint, and worked derivations filled in.

use crate::analysis::{workload_line, AnalyzeReport};
use crate::explain::to_html;
use crate::op::ridge_distance_text;
use crate::parallel::ParallelReport;
use crate::plot::xml_escape as esc;
use crate::units::{human_bytes, human_bytes_per_s, human_flops, human_flops_per_s};
use crate::units::{human_intensity, human_seconds};
use roofline_core::analysis::StageAnalysis;
use roofline_core::comm::collective::Tier;
use roofline_core::device::Device;
use roofline_core::explain::Derivation;
use roofline_core::parallel::ParallelStage;
use roofline_core::workload::Stage;

const TEMPLATE: &str = include_str!("../templates/report.html");

/// What the roofline plot shows, under its heading.
const PLOT_NOTE: &str =
    "Log-log axes: arithmetic intensity (FLOP/byte) against attainable performance (FLOP/s).
Hover over a point for the operator's numbers. Circles: prefill; triangles: decode.";

/// The derivations of a report of one chip: `{{derivation_note}}` and `{{derivations}}` filled
/// in.
const DERIVATIONS_SECTION: &str = r#"<section id="derivations">
<h2>How the numbers are derived</h2>
<p class="note">{{derivation_note}}, worked by hand: each formula, the values put into it, the
result and its source.</p>
{{derivations}}
</section>"#;

/// Everything the HTML report shows.
#[derive(Debug, Clone, Copy)]
pub struct HtmlReport<'a> {
    /// The analysis (model, chip, stages).
    pub analysis: AnalyzeReport<'a>,
    /// The roofline plot, an SVG document (from [`crate::plot::render_svg`]).
    pub svg: &'a str,
    /// Worked derivations, each with the stage it belongs to.
    pub derivations: &'a [(String, Derivation)],
    /// The operator `--explain` named, if any (else each stage's largest is derived).
    pub explained: Option<&'a str>,
    /// What to change in each stage ([`roofline_core::serve::advice::advise`]), shown after
    /// the stages; empty for none.
    pub advice: &'a [roofline_core::serve::advice::StageAdvice],
    /// The command line the advice's commands are built from.
    pub command: &'a [crate::advice::Arg],
    /// The tool's version, for the footer.
    pub version: &'a str,
}

/// Fills `template`'s `{{name}}` placeholders in one pass (inserted text is not scanned again).
fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|v| v.1.len()).sum::<usize>());
    let mut rest = template;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find("}}") {
            Some(j) => {
                let key = &after[..j];
                match values.iter().find(|(k, _)| *k == key) {
                    Some((_, v)) => out.push_str(v),
                    None => {
                        out.push_str("{{");
                        out.push_str(key);
                        out.push_str("}}");
                    }
                }
                rest = &after[j + 2..];
            }
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The parts of a report page, each already HTML (the title and subtitle as text): what
/// [`TEMPLATE`]'s placeholders take.
struct Page<'a> {
    title: &'a str,
    subtitle: &'a str,
    version: &'a str,
    settings: String,
    chip_heading: &'static str,
    chip: String,
    plot_heading: &'static str,
    plot_note: &'static str,
    plot: &'a str,
    headline: String,
    stages: String,
    advice: String,
    derivations_section: String,
}

impl Page<'_> {
    /// The page, [`TEMPLATE`] filled.
    fn render(self) -> String {
        fill(
            TEMPLATE,
            &[
                ("title", esc(self.title)),
                ("subtitle", esc(self.subtitle)),
                ("version", esc(self.version)),
                ("settings", self.settings),
                ("chip_heading", self.chip_heading.into()),
                ("chip", self.chip),
                ("plot_heading", self.plot_heading.into()),
                ("plot_note", self.plot_note.into()),
                ("plot", self.plot.to_string()),
                ("headline", self.headline),
                ("stages", self.stages),
                ("advice", self.advice),
                ("derivations_section", self.derivations_section),
            ],
        )
    }
}

fn kv_table(rows: &[(String, String)]) -> String {
    let mut h = String::from("<table class=\"kv\"><tbody>\n");
    for (k, v) in rows {
        h.push_str(&format!(
            "<tr><td>{}</td><td class=\"text\">{}</td></tr>\n",
            esc(k),
            esc(v)
        ));
    }
    h.push_str("</tbody></table>\n");
    h
}

/// The settings table's first rows: the model's name and architecture, its parameters and its
/// shape.
fn model_rows(m: &roofline_core::model::Transformer) -> Vec<(String, String)> {
    vec![
        (
            "model".to_string(),
            format!("{} ({})", m.name, m.architecture),
        ),
        (
            "parameters".into(),
            format!("{} ({:.2}B)", m.parameters(), m.parameters() as f64 / 1e9),
        ),
        (
            "shape".into(),
            format!(
                "d = {}, n_L = {} blocks, h = {} heads, g = {} kv heads, e = {}, f = {}, V = {}",
                m.hidden, m.layers, m.heads, m.kv_heads, m.head_dim, m.intermediate, m.vocab
            ),
        ),
    ]
}

/// The subtitle's batch and precisions: `batch 1, weights bf16, activations bf16, KV cache
/// bf16`.
fn batch_line(w: &roofline_core::workload::Workload) -> String {
    let p = w.precisions;
    format!(
        "batch {}, weights {}, activations {}, KV cache {}",
        w.batch, p.weight, p.act, p.kv
    )
}

/// The SVG from its `<svg>` element: plotters writes it first, and any XML prolog before it is
/// dropped so that it can sit inside HTML.
fn svg_element(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

fn settings(r: &AnalyzeReport<'_>) -> String {
    let m = r.model;
    let mut rows = model_rows(m);
    for s in r.stages {
        rows.push((s.workload.stage.to_string(), workload_line(s)));
    }
    kv_table(&rows)
}

fn chip(r: &AnalyzeReport<'_>) -> String {
    chip_of(r.device)
}

/// The chip's table: name, main memory, launch overhead, and its peaks with their ridge points.
fn chip_of(d: &Device) -> String {
    let bw = d.bandwidth().ok();
    let mem = d.main_memory();
    let mut h = kv_table(&[
        (
            "chip".into(),
            format!("{} ({}), {}", d.name, d.id, d.vendor),
        ),
        (
            "main memory".into(),
            format!(
                "{}: {} bandwidth, {} capacity",
                mem.map(|m| m.name.as_str()).unwrap_or("—"),
                bw.map(|b| human_bytes_per_s(b.get()))
                    .unwrap_or_else(|| "—".into()),
                d.capacity()
                    .map(|c| human_bytes(c.get()))
                    .unwrap_or_else(|| "—".into())
            ),
        ),
        (
            "launch overhead".into(),
            format!(
                "{} per kernel",
                human_seconds(d.launch_overhead.value.get())
            ),
        ),
    ]);
    h.push_str("<table class=\"peaks\" id=\"chip-peaks\"><thead><tr><th>precision</th><th>dense peak</th><th>ridge point (FLOP/B)</th></tr></thead><tbody>\n");
    for (p, c) in &d.peaks {
        h.push_str(&format!(
            "<tr title=\"{}\"><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&c.source),
            p,
            esc(&human_flops_per_s(c.value.get())),
            d.ridge(*p)
                .map(|x| human_intensity(x.get()))
                .unwrap_or_else(|_| "—".into())
        ));
    }
    h.push_str("</tbody></table>\n<p class=\"note\">Ridge point = dense peak / main-memory bandwidth. Hover over a row for the figure's source.</p>\n");
    h
}

fn stage_section(s: &StageAnalysis, r: &AnalyzeReport<'_>) -> String {
    let name = s.workload.stage.to_string();
    let heading = match s.workload.stage {
        Stage::Prefill => format!("Prefill: {} tokens per sequence", s.workload.seq_len),
        Stage::Decode => format!("Decode: one token at context {}", s.workload.context),
        other => format!(
            "{other}: sequence length {}, context {}",
            s.workload.seq_len, s.workload.context
        ),
    };
    let t = &s.totals;
    let mut h = format!(
        "<section class=\"stage\" id=\"stage-{name}\">\n<h2>{}</h2>\n<p class=\"note\">{}</p>\n",
        esc(&heading),
        esc(&workload_line(s))
    );
    h.push_str(&format!(
        "<p class=\"totals\">Total per forward pass: <strong>{}</strong> roofline time + {} launch overhead ({} kernels) = <strong>{}</strong>; {} and {} moved (AI {} FLOP/B).</p>\n",
        esc(&human_seconds(t.time.get())),
        esc(&human_seconds(t.launch_overhead.get())),
        t.kernels,
        esc(&human_seconds(t.time_with_launch().get())),
        esc(&human_flops(t.cost.flops.get())),
        esc(&human_bytes(t.cost.bytes().get())),
        esc(&human_intensity(t.cost.intensity().get())),
    ));
    h.push_str(&format!(
        "<table class=\"ops\" id=\"ops-{name}\">\n<thead><tr><th>operator</th><th>count</th><th>FLOPs</th><th>bytes</th><th>AI (FLOP/B)</th><th>ridge</th><th>bound</th><th>from ridge</th><th>attainable</th><th>time</th><th>× count</th><th>share</th></tr></thead>\n<tbody>\n"
    ));
    let total = t.time.get();
    for row in &s.rows {
        let p = row.point();
        let n = row.count as f64;
        h.push_str(&format!(
            "<tr data-name=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td class=\"bound-{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}%</td></tr>\n",
            esc(row.name),
            esc(row.name),
            row.count,
            esc(&human_flops(row.cost.flops.get())),
            esc(&human_bytes(row.cost.bytes().get())),
            esc(&human_intensity(p.intensity.get())),
            p.ridge.get(),
            p.bound,
            p.bound,
            esc(&ridge_distance_text(row)),
            esc(&human_flops_per_s(p.attainable.get())),
            esc(&human_seconds(p.time.get())),
            esc(&human_seconds(p.time.get() * n)),
            if total > 0.0 { p.time.get() * n / total * 100.0 } else { 0.0 },
        ));
    }
    h.push_str(&format!(
        "</tbody>\n<tfoot><tr class=\"total\"><td>total</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td></td><td></td><td></td><td></td><td></td><td>{}</td><td>100%</td></tr></tfoot>\n</table>\n",
        t.kernels,
        esc(&human_flops(t.cost.flops.get())),
        esc(&human_bytes(t.cost.bytes().get())),
        esc(&human_intensity(t.cost.intensity().get())),
        esc(&human_seconds(t.time.get())),
    ));
    h.push_str("<p class=\"note\">Per row: one execution; count = executions per forward pass; total = Σ count × row.</p>\n");
    let m = &s.memory;
    let cap = r
        .device
        .capacity()
        .map(|c| format!(" of {} on the chip", human_bytes(c.get())))
        .unwrap_or_default();
    h.push_str(&format!(
        "<h3>Memory footprint</h3>\n<table class=\"memory\" id=\"memory-{name}\"><tbody>\n<tr><td>weights</td><td>{}</td></tr>\n<tr><td>KV cache</td><td>{}</td></tr>\n<tr><td>activations (peak at <code>{}</code>)</td><td>{}</td></tr>\n<tr><td>runtime reserve</td><td>{}</td></tr>\n<tr class=\"total\"><td>total</td><td>{}{}</td></tr>\n</tbody></table>\n</section>\n",
        esc(&human_bytes(m.weights.get())),
        esc(&human_bytes(m.kv_cache.get())),
        esc(m.activations_at),
        esc(&human_bytes(m.activations.get())),
        esc(&human_bytes(m.reserve.get())),
        esc(&human_bytes(m.total().get())),
        esc(&cap),
    ));
    for w in &s.warnings {
        h.push_str(&format!("<p class=\"warning\">warning: {}</p>\n", esc(w)));
    }
    h
}

/// The whole report as one HTML document.
pub fn render_html(r: &HtmlReport<'_>) -> String {
    let a = &r.analysis;
    let title = format!("{} on {}: roofline report", a.model.name, a.device.name);
    let stages: Vec<String> = a
        .stages
        .iter()
        .map(|s| s.workload.stage.to_string())
        .collect();
    let subtitle = format!(
        "{} · {} ({}) · {} · made by roofline {}",
        stages.join(" and "),
        a.device.name,
        a.device.id,
        a.stages
            .first()
            .map(|s| batch_line(&s.workload))
            .unwrap_or_default(),
        r.version
    );
    let svg = svg_element(r.svg);
    let stage_html: String = a.stages.iter().map(|s| stage_section(s, a)).collect();
    let derivations: String = r
        .derivations
        .iter()
        .map(|(stage, d)| {
            format!(
                "<h3 class=\"derivation-stage\">{}: <code>{}</code></h3>\n{}",
                esc(stage),
                esc(&d.name),
                to_html(d)
            )
        })
        .collect();
    let derivations_section = fill(
        DERIVATIONS_SECTION,
        &[
            ("derivations", derivations),
            (
                "derivation_note",
                match r.explained {
                    Some(n) => format!("<code>{}</code> in each stage", esc(n)),
                    None => "The operator that takes the most time in each stage".into(),
                },
            ),
        ],
    );
    Page {
        title: &title,
        subtitle: &subtitle,
        version: r.version,
        settings: settings(a),
        chip_heading: "Chip",
        chip: chip(a),
        plot_heading: "Roofline",
        plot_note: PLOT_NOTE,
        plot: svg,
        headline: crate::headline::headline_html(&roofline_core::serve::headline::of_analyses(
            a.stages,
        )),
        stages: stage_html,
        advice: if r.advice.is_empty() {
            String::new()
        } else {
            crate::advice::advice_html(r.advice, r.command)
        },
        derivations_section,
    }
    .render()
}

/// Everything the HTML report of a parallel step shows (`roofline report … --tp 8`).
#[derive(Debug, Clone, Copy)]
pub struct ParallelHtmlReport<'a> {
    /// The parallel analysis (model, system, one stage per workload).
    pub analysis: ParallelReport<'a>,
    /// The roofline plot with its communication panel, an SVG document (from
    /// [`crate::plot::render_svg`] of [`crate::plot::RooflineChart::for_parallel`]).
    pub svg: &'a str,
    /// The tool's version, for the footer.
    pub version: &'a str,
}

/// What the roofline plot of a parallel step shows, under its heading.
const PARALLEL_PLOT_NOTE: &str = "Top: one device's operators on the chip's roofline, log-log \
axes of arithmetic intensity (FLOP/byte) against attainable performance (FLOP/s); circles: \
prefill, triangles: decode. Under it, the communication panel: each collective's message size S \
(bytes, as nccl-tests counts them) against the bus bandwidth it achieves, S·f/t (f nccl-tests' bus \
factor, t = t_α + t_β its α–β time); stars: collectives; bold lines: each link's bandwidth per \
GPU per direction; dashed: each algorithm's latency roof S·f/t_α up to its ridge, where the \
latency and transfer terms are equal. Hover over a point for its numbers.";

/// Where the derivations of a parallel report are: the commands that work them by hand.
const PARALLEL_DERIVATIONS: &str = r#"<section id="derivations">
<h2>How the numbers are derived</h2>
<p class="note">Each operator's row is the single-device formula on its share of the work; each
collective's time is the α–β model of its link. <code>roofline analyze MODEL --explain
OPERATOR</code> works an operator of one chip by hand, and <code>roofline op all-reduce --bytes S
--devices N --system SYSTEM --explain</code> a collective, formula by formula with every source.</p>
</section>"#;

fn parallel_settings(r: &ParallelReport<'_>) -> String {
    let m = r.model;
    let mut rows = model_rows(m);
    if let Some(s) = r.stages.first() {
        rows.push(("layout".into(), crate::parallel::layout_line(s, m.layers)));
    }
    for s in r.stages {
        rows.push((s.workload.stage.to_string(), workload_line(&s.single)));
    }
    kv_table(&rows)
}

/// The system: its name, nodes and devices, each tier of links (bandwidth per GPU per
/// direction, α a step, their sources as tooltips), then the chip's table.
fn system_html(r: &ParallelReport<'_>) -> String {
    let sys = r.system;
    let mut h = kv_table(&[
        ("system".into(), format!("{} ({})", sys.name, sys.id)),
        (
            "devices".into(),
            format!(
                "{} = {} node{} × {} per node",
                sys.devices(),
                sys.nodes,
                if sys.nodes == 1 { "" } else { "s" },
                sys.gpus_per_node
            ),
        ),
    ]);
    h.push_str("<table class=\"links\" id=\"system-links\"><thead><tr><th>tier</th><th class=\"text\">links</th><th>bandwidth per GPU per direction</th><th>α a step</th></tr></thead><tbody>\n");
    let f = &sys.fabric;
    for (tier, link) in [
        (Tier::ScaleUp, &f.scale_up),
        (Tier::ScaleOut, &f.scale_out),
        (Tier::Pcie, &f.pcie),
    ] {
        if let Some(l) = link {
            h.push_str(&format!(
                "<tr title=\"{}\"><td>{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td></tr>\n",
                esc(&format!(
                    "bandwidth: {}; latency: {}",
                    l.bandwidth.source, l.latency.source
                )),
                tier,
                esc(&l.name),
                esc(&human_bytes_per_s(l.bandwidth.value.get())),
                esc(&human_seconds(l.latency.value.get())),
            ));
        }
    }
    h.push_str("</tbody></table>\n");
    h.push_str(&format!(
        "<p class=\"note\">In-network reduction (NVLink SHARP): {}. Hover over a row for the figures' sources.</p>\n",
        if f.in_network_reduction { "yes" } else { "no" }
    ));
    h.push_str(&chip_of(&sys.chip));
    h
}

fn parallel_stage_section(s: &ParallelStage, r: &ParallelReport<'_>) -> String {
    let name = s.workload.stage.to_string();
    let heading = match s.workload.stage {
        Stage::Prefill => format!(
            "Prefill: {} tokens per sequence, on {} devices",
            s.workload.seq_len, s.devices
        ),
        Stage::Decode => format!(
            "Decode: one token at context {}, on {} devices",
            s.workload.context, s.devices
        ),
        other => format!(
            "{other}: sequence length {}, context {}, on {} devices",
            s.workload.seq_len, s.workload.context, s.devices
        ),
    };
    let t = &s.totals;
    let sc = &s.schedule;
    let mut h = format!(
        "<section class=\"stage\" id=\"stage-{name}\">\n<h2>{}</h2>\n<p class=\"note\">{} · {}</p>\n",
        esc(&heading),
        esc(&crate::parallel::layout_line(s, r.model.layers)),
        esc(&workload_line(&s.single))
    );
    h.push_str(&format!(
        "<p class=\"totals\">Step: <strong>{}</strong> ({} on the critical path of two streams + {} launch overhead) · <strong>{:.0} tokens/s</strong> per replica ({:.0} per device) · exposed communication <strong>{}</strong> of {} · the step is <strong>{:.2}×</strong> the single chip's time ÷ {} devices.</p>\n",
        esc(&human_seconds(s.step_time().get())),
        esc(&human_seconds(sc.step.get())),
        esc(&human_seconds(t.launch_overhead.get())),
        s.tokens_per_s(),
        s.tokens_per_s() / s.devices as f64,
        esc(&human_seconds(sc.exposed.get())),
        esc(&human_seconds(sc.communication.get())),
        s.scaling_cost(),
        s.devices,
    ));
    h.push_str(&format!(
        "<table class=\"ops\" id=\"ops-{name}\">\n<thead><tr><th>operator (one device)</th><th>count</th><th>FLOPs</th><th>HBM bytes</th><th>link bytes</th><th class=\"text\">collective</th><th>bound</th><th>time</th><th>× count</th><th>share</th></tr></thead>\n<tbody>\n"
    ));
    let total = t.time.get();
    for (i, row) in s.rows.iter().enumerate() {
        let p = row.point();
        let n = row.count as f64;
        let comm = s.communication(i);
        let (class, link_bytes, collective) = match comm {
            Some(c) => (
                " class=\"comm\"",
                human_bytes(c.traffic.get()),
                format!(
                    "{} of {} over {} ranks, {} {}, {}",
                    c.collective,
                    human_bytes(c.bytes.get()),
                    c.group.ranks,
                    c.algorithm,
                    c.protocol,
                    c.tier
                ),
            ),
            None => ("", String::new(), String::new()),
        };
        h.push_str(&format!(
            "<tr data-name=\"{}\"{class}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"text\">{}</td><td class=\"bound-{}\">{}</td><td>{}</td><td>{}</td><td>{:.1}%</td></tr>\n",
            esc(row.name),
            esc(row.name),
            row.count,
            esc(&human_flops(row.cost.flops.get())),
            esc(&human_bytes(row.cost.bytes().get())),
            esc(&link_bytes),
            esc(&collective),
            p.bound,
            p.bound,
            esc(&human_seconds(p.time.get())),
            esc(&human_seconds(p.time.get() * n)),
            if total > 0.0 { p.time.get() * n / total * 100.0 } else { 0.0 },
        ));
    }
    h.push_str(&format!(
        "</tbody>\n<tfoot><tr class=\"total\"><td>total (serial)</td><td>{}</td><td>{}</td><td>{}</td><td></td><td></td><td></td><td></td><td>{}</td><td>100%</td></tr></tfoot>\n</table>\n",
        t.kernels,
        esc(&human_flops(t.cost.flops.get())),
        esc(&human_bytes(t.cost.bytes().get())),
        esc(&human_seconds(t.time.get())),
    ));
    h.push_str("<p class=\"note\">Per row: one execution on one device; count = executions per forward pass; total = Σ count × row, compute and communication one after the other (the step below overlaps them). Shaded rows are collectives: their time is the α–β model of their link (latency + link bytes / bandwidth).</p>\n");
    let collectives = crate::parallel::collective_lines(s);
    if !collectives.is_empty() {
        h.push_str(&format!(
            "<p class=\"note\">Collectives: {}.</p>\n",
            esc(&collectives.join("; "))
        ));
    }
    let row = |k: &str, v: String| format!("<tr><td>{}</td><td>{}</td></tr>\n", esc(k), esc(&v));
    h.push_str(&format!(
        "<h3>The step on two streams</h3>\n<table class=\"step\" id=\"step-{name}\"><tbody>\n"
    ));
    h.push_str(&row(
        "compute stream (Σ kernels)",
        human_seconds(sc.compute.get()),
    ));
    h.push_str(&row(
        "communication stream (Σ collectives)",
        human_seconds(sc.communication.get()),
    ));
    h.push_str(&row(
        "exposed communication (not hidden behind compute)",
        human_seconds(sc.exposed.get()),
    ));
    h.push_str(&row(
        "overlap achieved (communication hidden)",
        format!("{:.0}%", sc.overlap() * 100.0),
    ));
    h.push_str(&row(
        "critical path (compute + exposed communication)",
        human_seconds(sc.step.get()),
    ));
    h.push_str(&row(
        &format!("launch overhead ({} kernels)", t.kernels),
        human_seconds(t.launch_overhead.get()),
    ));
    h.push_str(&format!(
        "<tr class=\"total\"><td>step time</td><td>{}</td></tr>\n",
        esc(&human_seconds(s.step_time().get()))
    ));
    h.push_str(&row(
        "tokens/s per replica",
        format!("{:.0}", s.tokens_per_s()),
    ));
    h.push_str(&row(
        "tokens/s per device",
        format!("{:.0}", s.tokens_per_s() / s.devices as f64),
    ));
    if s.workload.stage == Stage::Decode {
        h.push_str(&row(
            "time per output token",
            human_seconds(s.step_time().get()),
        ));
    }
    h.push_str("</tbody></table>\n");
    h.push_str(&format!(
        "<p class=\"note\">{}.</p>\n",
        esc(&crate::parallel::step_line(s))
    ));
    let single = s.single.totals.time.get();
    h.push_str(&format!(
        "<h3>What the parallelism costs</h3>\n<table class=\"scaling\" id=\"scaling-{name}\"><tbody>\n"
    ));
    h.push_str(&row(
        "the same stage on one chip (roofline bound)",
        human_seconds(single),
    ));
    h.push_str(&row(
        &format!("perfect scaling: that ÷ {} devices", s.devices),
        human_seconds(single / s.devices as f64),
    ));
    h.push_str(&row("this step", human_seconds(s.step_time().get())));
    h.push_str(&format!(
        "<tr class=\"total\"><td>scaling cost: this step ÷ perfect scaling (1.00 = perfect)</td><td>{:.2}×</td></tr>\n</tbody></table>\n",
        s.scaling_cost()
    ));
    h.push_str(&format!(
        "<p class=\"note\">{}.</p>\n",
        esc(&crate::parallel::throughput_line(s))
    ));
    let m = &s.memory;
    let cap = m
        .capacity
        .map(|c| format!(" of {} per device", human_bytes(c.get())))
        .unwrap_or_default();
    let fits = match m.fits() {
        Some(true) => "fits",
        Some(false) => "does not fit",
        None => "capacity not known",
    };
    h.push_str(&format!(
        "<h3>Memory per device</h3>\n<table class=\"memory\" id=\"memory-{name}\"><tbody>\n<tr><td>weights (this device's share)</td><td>{}</td></tr>\n<tr><td>KV cache (this device's share)</td><td>{}</td></tr>\n<tr><td>activations (peak at <code>{}</code>)</td><td>{}</td></tr>\n<tr><td>runtime reserve</td><td>{}</td></tr>\n<tr class=\"total\"><td>total</td><td>{}{}</td></tr>\n<tr class=\"fits\"><td>fits</td><td>{}</td></tr>\n</tbody></table>\n",
        esc(&human_bytes(m.weights.get())),
        esc(&human_bytes(m.kv_cache.get())),
        esc(m.activations_at),
        esc(&human_bytes(m.activations.get())),
        esc(&human_bytes(m.reserve.get())),
        esc(&human_bytes(m.total().get())),
        esc(&cap),
        fits,
    ));
    for w in &s.warnings {
        h.push_str(&format!("<p class=\"warning\">warning: {}</p>\n", esc(w)));
    }
    h.push_str("</section>\n");
    h
}

/// The whole report of a parallel step as one HTML document: settings, the system and its
/// links, the plot with its communication panel, and per stage one device's operator table
/// with its collectives, the step on two streams, what the parallelism costs, the memory per
/// device, the warnings. Every number is the core's ([`ParallelStage`]); this only writes it.
pub fn render_parallel_html(r: &ParallelHtmlReport<'_>) -> String {
    let a = &r.analysis;
    let layout = a
        .stages
        .first()
        .map(|s| crate::parallel::layout_line(s, a.model.layers))
        .unwrap_or_default();
    let title = format!(
        "{} on {}: roofline report, {layout}",
        a.model.name, a.system.name
    );
    let stages: Vec<String> = a
        .stages
        .iter()
        .map(|s| s.workload.stage.to_string())
        .collect();
    let subtitle = format!(
        "{} · {} ({}), {} devices of {} · {} · made by roofline {}",
        stages.join(" and "),
        a.system.name,
        a.system.id,
        a.system.devices(),
        a.system.chip.name,
        a.stages
            .first()
            .map(|s| batch_line(&s.workload))
            .unwrap_or_default(),
        r.version
    );
    let svg = svg_element(r.svg);
    let stage_html: String = a
        .stages
        .iter()
        .map(|s| parallel_stage_section(s, a))
        .collect();
    Page {
        title: &title,
        subtitle: &subtitle,
        version: r.version,
        settings: parallel_settings(a),
        chip_heading: "System",
        chip: system_html(a),
        plot_heading: "Roofline",
        plot_note: PARALLEL_PLOT_NOTE,
        plot: svg,
        headline: crate::headline::headline_html(&roofline_core::serve::headline::of_parallel(
            a.stages,
        )),
        stages: stage_html,
        advice: String::new(),
        derivations_section: PARALLEL_DERIVATIONS.into(),
    }
    .render()
}

/// What `roofline report` wrote, for [`write_summary`].
#[derive(Debug, Clone, Copy)]
pub struct ReportSummary<'a> {
    /// The page's path.
    pub path: &'a str,
    /// Its size, bytes.
    pub bytes: usize,
    /// Operators on its roofline plot.
    pub operators: usize,
    /// Collectives on its communication panel (0 without one).
    pub collectives: usize,
    /// A report of a parallel step ([`render_parallel_html`]).
    pub parallel: bool,
}

/// What `roofline report` prints once the file is written: its path and size, and how many
/// operators (and collectives) the plot holds; a line of text, a JSON object or a CSV row.
///
/// # Errors
/// A failed write.
pub fn write_summary(
    r: &ReportSummary<'_>,
    format: crate::Format,
    out: &mut dyn std::io::Write,
) -> Result<(), crate::WriteError> {
    let ReportSummary {
        path,
        bytes,
        operators: points,
        collectives,
        parallel,
    } = *r;
    match format {
        crate::Format::Table if parallel => writeln!(
            out,
            "wrote {path} ({}): settings, system, roofline plot ({points} operators) with its communication panel ({collectives} collectives), per-device tables, step, scaling, memory",
            crate::units::human_bytes(bytes as f64)
        )?,
        crate::Format::Table => writeln!(
            out,
            "wrote {path} ({}): settings, chip, roofline plot ({points} operators), tables, derivations",
            crate::units::human_bytes(bytes as f64)
        )?,
        crate::Format::Json => {
            let doc = crate::doc::report::ReportSummaryDoc {
                schema_version: crate::doc::SchemaVersion,
                out: path.to_string(),
                bytes,
                operators_plotted: points,
                collectives_plotted: collectives,
            };
            crate::doc::write_json(&doc, out)?;
        }
        crate::Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(["out", "bytes", "operators_plotted", "collectives_plotted"])?;
            w.write_record([
                path.to_string(),
                bytes.to_string(),
                points.to_string(),
                collectives.to_string(),
            ])?;
            w.flush()?;
        }
    }
    Ok(())
}

/// The operator of `stage` with the largest share of its roofline time (count × time).
pub fn largest_operator(stage: &StageAnalysis) -> Option<&'static str> {
    stage
        .rows
        .iter()
        .max_by(|a, b| {
            (a.point().time.get() * a.count as f64)
                .total_cmp(&(b.point().time.get() * b.count as f64))
        })
        .map(|r| r.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_fill_once_and_unknown_ones_stay() {
        let out = fill(
            "<p>{{a}} {{b}} {{zz}}</p>",
            &[("a", "{{b}}".into()), ("b", "x<y".into())],
        );
        assert_eq!(out, "<p>{{b}} x<y {{zz}}</p>");
    }

    /// A DGX-like node of 8 H100s: 450 GB/s and 1 µs a step between them.
    fn system() -> Result<roofline_core::comm::System, roofline_core::comm::SystemError> {
        use roofline_core::cited::Cited;
        use roofline_core::comm::{Fabric, LinkTier};
        use roofline_core::units::{BytesPerSec, Seconds};
        let fabric = Fabric {
            scale_up: Some(LinkTier::new(
                "NVLink",
                Cited::new(BytesPerSec(450e9), "test"),
                Cited::new(Seconds(1e-6), "test"),
            )),
            ..Fabric::default()
        };
        let chip = roofline_core::fixtures::h100_sxm();
        roofline_core::comm::System::new("node", "8 × H100", chip, 8, 1, fabric)
    }

    #[test]
    fn a_parallel_report_fills_every_placeholder_and_shades_its_collectives(
    ) -> Result<(), Box<dyn std::error::Error>> {
        use roofline_core::parallel::{analyze_parallel, Layout};
        use roofline_core::workload::{Stage, Workload};
        let model = roofline_core::fixtures::llama2_7b();
        let system = system()?;
        let layout = Layout {
            tp: 8,
            ..Layout::default()
        };
        let stages = vec![analyze_parallel(
            &model,
            &Workload::new(Stage::Decode, 8, 2048, 2048),
            &system,
            layout,
            roofline_core::memory::Reserve::DEFAULT,
        )?];
        let analysis = ParallelReport {
            model: &model,
            system: &system,
            stages: &stages,
        };
        let html = render_parallel_html(&ParallelHtmlReport {
            analysis,
            svg: "<svg></svg>",
            version: "test",
        });
        assert!(!html.contains("{{"), "a placeholder left unfilled");
        let s = &stages[0];
        let collectives = (0..s.rows.len())
            .filter(|&i| s.communication(i).is_some())
            .count();
        assert!(collectives >= 3);
        assert_eq!(html.matches("class=\"comm\"><td>").count(), collectives);
        assert!(html.contains("<h2>System</h2>"));
        assert!(html.contains("id=\"step-decode\""));
        assert!(html.contains(&format!("<td>{:.2}×</td>", s.scaling_cost())));
        Ok(())
    }

    #[test]
    fn template_has_no_external_resources() {
        for bad in ["http://", "https://", "<script", "<link", "@import", "url("] {
            assert!(!TEMPLATE.contains(bad), "template contains {bad}");
        }
    }
}

/// What `roofline train --html` puts on a page.
#[derive(Debug, Clone, Copy)]
pub struct TrainHtmlReport<'a> {
    /// The training step, bound and estimate.
    pub report: crate::train::TrainReport<'a>,
    /// The MFU waterfall, an SVG document
    /// ([`crate::plot::waterfall::render_waterfall_svg`]).
    pub svg: &'a str,
    /// The tool's version, for the footer.
    pub version: &'a str,
}

/// What the waterfall shows, under its heading.
const TRAIN_PLOT_NOTE: &str = "The dense peak (100 %) down to the MFU: each bar is the share \
of the step one reason takes, averaged over the devices (docs/training.md gives each reason and \
its formula). The bars are the estimate's; the tables below give the roofline bound beside it.";

/// How the training numbers are derived, in place of an operator's derivation.
const TRAIN_DERIVATIONS: &str = "<h2>How these numbers are derived</h2>
<p>One micro-batch's graph (forward, loss, recomputation, gradients) is priced node by node on \
the chip's roofline and each collective at its link's α–β bound; the pipeline is simulated \
operation by operation over the micro-batches; the data-parallel collectives the backward does \
not hide and the optimizer update follow it: T = makespan + max over stages of (DP + optimizer). \
The estimate divides matrix FLOPs and link transfers by published achievable shares. Every \
formula and its source: <code>docs/training.md</code> in the repository.</p>";

/// A self-contained page of a training step: the job, the MFU waterfall, and the step,
/// memory, stage and waterfall tables as `roofline train` prints them.
///
/// # Errors
/// A failed write of the tables (into memory: not expected).
pub fn render_train_html(r: &TrainHtmlReport<'_>) -> Result<String, crate::WriteError> {
    let t = &r.report;
    let job = &t.estimate.job;
    let title = format!(
        "{} training on {} × {}: roofline report",
        t.model.name, t.estimate.devices, t.system.chip.name
    );
    let subtitle = format!(
        "TP {} × PP {} × DP {} · global batch {} × {} tokens, micro-batch {} · made by roofline {}",
        job.layout.tp,
        job.layout.pp,
        job.data_parallel,
        job.global_batch,
        job.seq_len,
        job.micro_batch,
        r.version
    );
    let mut rows = model_rows(t.model);
    rows.push((
        "step (bound / estimate)".into(),
        format!(
            "{} / {}",
            human_seconds(t.bound.step_time.get()),
            human_seconds(t.estimate.step_time.get())
        ),
    ));
    rows.push((
        "MFU (bound / estimate)".into(),
        format!(
            "{:.1} % / {:.1} %",
            t.bound.mfu * 100.0,
            t.estimate.mfu * 100.0
        ),
    ));
    rows.push(("estimate's efficiencies".into(), t.source.to_string()));
    let mut tables = Vec::new();
    crate::train::write_train(t, crate::Format::Table, &mut tables)?;
    let tables = String::from_utf8_lossy(&tables);
    let system = format!(
        "{} ({}): {} devices of {}, {} a node",
        t.system.name,
        t.system.id,
        t.system.devices(),
        t.system.chip.name,
        t.system.gpus_per_node
    );
    Ok(Page {
        title: &title,
        subtitle: &subtitle,
        version: r.version,
        settings: kv_table(&rows),
        chip_heading: "System",
        chip: format!("<p>{}</p>", esc(&system)),
        plot_heading: "MFU waterfall",
        plot_note: TRAIN_PLOT_NOTE,
        plot: svg_element(r.svg),
        headline: String::new(),
        stages: format!("<h2>The step</h2>\n<pre>{}</pre>\n", esc(&tables)),
        advice: String::new(),
        derivations_section: TRAIN_DERIVATIONS.into(),
    }
    .render())
}
