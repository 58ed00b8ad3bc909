//! The HTML report (`roofline report`): one self-contained file, no network, no scripts, no web
//! fonts. The page is `templates/report.html` with the settings, the chip and its ridge points,
//! the roofline plot (inline SVG; each point's SVG `<title>` is its tooltip), per-stage operator
//! tables with totals and the memory footprint, and worked derivations filled in.

use crate::analysis::{workload_line, AnalyzeReport};
use crate::explain::to_html;
use crate::op::ridge_distance_text;
use crate::plot::xml_escape as esc;
use crate::units::{human_bytes, human_bytes_per_s, human_flops, human_flops_per_s};
use crate::units::{human_intensity, human_seconds};
use roofline_core::analysis::StageAnalysis;
use roofline_core::explain::Derivation;
use roofline_core::workload::Stage;

const TEMPLATE: &str = include_str!("../templates/report.html");

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

fn settings(r: &AnalyzeReport<'_>) -> String {
    let m = r.model;
    let mut rows = vec![
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
    ];
    for s in r.stages {
        rows.push((s.workload.stage.to_string(), workload_line(s)));
    }
    kv_table(&rows)
}

fn chip(r: &AnalyzeReport<'_>) -> String {
    let d = r.device;
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
            .map(|s| {
                let p = s.workload.precisions;
                format!(
                    "batch {}, weights {}, activations {}, KV cache {}",
                    s.workload.batch, p.weight, p.act, p.kv
                )
            })
            .unwrap_or_default(),
        r.version
    );
    // The SVG as plotters writes it starts with its <svg> element; drop any XML prolog.
    let svg = match r.svg.find("<svg") {
        Some(i) => &r.svg[i..],
        None => r.svg,
    };
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
    fill(
        TEMPLATE,
        &[
            ("title", esc(&title)),
            ("subtitle", esc(&subtitle)),
            ("version", esc(r.version)),
            ("settings", settings(a)),
            ("chip", chip(a)),
            ("plot", svg.to_string()),
            ("stages", stage_html),
            ("derivations", derivations),
            (
                "derivation_note",
                match r.explained {
                    Some(n) => format!("<code>{}</code> in each stage", esc(n)),
                    None => "The operator that takes the most time in each stage".into(),
                },
            ),
        ],
    )
}

/// What `roofline report` prints once the file is written: its path and size, and how many
/// operators the plot holds; a line of text, a JSON object or a CSV row.
///
/// # Errors
/// A failed write.
pub fn write_summary(
    path: &str,
    bytes: usize,
    points: usize,
    format: crate::Format,
    out: &mut dyn std::io::Write,
) -> Result<(), crate::WriteError> {
    match format {
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
            };
            crate::doc::write_json(&doc, out)?;
        }
        crate::Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(["out", "bytes", "operators_plotted"])?;
            w.write_record([path.to_string(), bytes.to_string(), points.to_string()])?;
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

    #[test]
    fn template_has_no_external_resources() {
        for bad in ["http://", "https://", "<script", "<link", "@import", "url("] {
            assert!(!TEMPLATE.contains(bad), "template contains {bad}");
        }
    }
}
