//! `roofline report CONFIG … --out report.html`: the analysis as one self-contained HTML page;
//! with the parallel flags (`--system`, `--tp` …, as `analyze` takes them), the page of one
//! device of the layout.

use super::analyze::prepare;
use crate::api::analyze::Single;
use crate::args::ReportArgs;
use crate::error::{CliError, Kind};
use crate::output::{check_output, distinct_outputs, write_output};
use roofline_core::analysis::AnalysisError;
use roofline_core::explain::explain_node;
use roofline_report::analysis::AnalyzeReport;
use roofline_report::html::{
    largest_operator, render_html, render_parallel_html, write_summary, HtmlReport,
    ParallelHtmlReport, ReportSummary,
};
use roofline_report::parallel::ParallelReport;
use roofline_report::plot::{render_svg, RooflineChart};
use std::io::Write;

/// The report is HTML: an `--out` that does not end in `.html` (or `.htm`) is refused, as
/// `measure --out` refuses a chip file that is not TOML.
fn check_html(path: &std::path::Path) -> Result<(), CliError> {
    let html = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"));
    if html || path.is_dir() {
        return Ok(());
    }
    Err(CliError::bad_input(
        format!("`--out {}`: a report is HTML", path.display()),
        Some("end the file name in `.html`, e.g. `--out report.html`".into()),
    ))
}

pub fn run(a: &ReportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    check_html(&a.out)?;
    super::analyze::check_stage_flags(&a.analyze)?;
    if a.analyze.parallel.any() {
        return run_parallel(a, out);
    }
    let force = a.analyze.plot.force;
    check_output(&a.out, force, "--out", "report.html")?;
    if let Some(p) = &a.analyze.plot.plot {
        distinct_outputs(&[("--out", &a.out), ("--plot", p)])?;
        super::plot::check_plot_path(p, force)?;
    }
    let Single {
        model,
        device,
        analyses,
        ..
    } = prepare(&a.analyze)?;
    let advice = roofline_core::serve::advice::advise(
        &model,
        &analyses,
        &device,
        a.analyze.reserve.memory_reserve,
    );
    let command = super::analyze::command_args(&a.analyze);
    let mut chart =
        RooflineChart::for_analysis(&model, &device, &analyses).map_err(AnalysisError::from)?;
    if !a.analyze.plot.all_roofs {
        chart.keep_roofs_in_use();
    }
    let svg = render_svg(&chart).map_err(plot_failed)?;
    let mut derivations = Vec::new();
    for s in &analyses {
        let name = match &a.analyze.explain {
            Some(n) => n.as_str(),
            None => match largest_operator(s) {
                Some(n) => n,
                None => continue,
            },
        };
        let d = explain_node(&model, s, &device, name).map_err(|e| match e {
            roofline_core::explain::ExplainError::Device(d) => AnalysisError::from(d).into(),
            other => CliError::bad_input(
                format!("`--explain {name}`: {other}"),
                Some(format!(
                    "operators: {}",
                    s.rows.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
                )),
            ),
        })?;
        derivations.push((s.workload.stage.to_string(), d));
    }
    let html = render_html(&HtmlReport {
        analysis: AnalyzeReport {
            model: &model,
            device: &device,
            stages: &analyses,
        },
        svg: &svg,
        derivations: &derivations,
        explained: a.analyze.explain.as_deref(),
        advice: &advice,
        command: &command,
        version: env!("CARGO_PKG_VERSION"),
    });
    let html = match &a.analyze.profile {
        Some(p) => super::import::with_profile_section(html, p, &device, &analyses)?,
        None => html,
    };
    write_output(&a.out, force, html.as_bytes())?;
    if let Some(p) = &a.analyze.plot.plot {
        super::plot::write_plot(p, force, a.analyze.plot.all_roofs, &chart)?;
    }
    write_summary(
        &ReportSummary {
            path: &a.out.display().to_string(),
            bytes: html.len(),
            operators: chart.points.len(),
            collectives: 0,
            parallel: false,
        },
        a.analyze.format.format.into(),
        out,
    )?;
    Ok(())
}

fn plot_failed(e: roofline_report::plot::PlotError) -> CliError {
    CliError {
        kind: Kind::Internal,
        message: e.to_string(),
        hint: None,
    }
}

/// `report` with the parallel flags: one device's tables with their collectives, the step on
/// two streams, what the parallelism costs, the memory per device, and the plot with its
/// communication panel.
fn run_parallel(a: &ReportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let an = &a.analyze;
    super::analyze_parallel::refuse_single_device_flags(an)?;
    let force = an.plot.force;
    check_output(&a.out, force, "--out", "report.html")?;
    if let Some(p) = &an.plot.plot {
        distinct_outputs(&[("--out", &a.out), ("--plot", p)])?;
        super::plot::check_plot_path(p, force)?;
    }
    let (model, system, analyses) = super::analyze_parallel::prepare(an)?;
    let mut chart =
        RooflineChart::for_parallel(&model, &system, &analyses).map_err(AnalysisError::from)?;
    if !an.plot.all_roofs {
        chart.keep_roofs_in_use();
    }
    let svg = render_svg(&chart).map_err(plot_failed)?;
    let html = render_parallel_html(&ParallelHtmlReport {
        analysis: ParallelReport {
            model: &model,
            system: &system,
            stages: &analyses,
        },
        svg: &svg,
        version: env!("CARGO_PKG_VERSION"),
    });
    write_output(&a.out, force, html.as_bytes())?;
    if let Some(p) = &an.plot.plot {
        super::plot::write_plot(p, force, an.plot.all_roofs, &chart)?;
    }
    write_summary(
        &ReportSummary {
            path: &a.out.display().to_string(),
            bytes: html.len(),
            operators: chart.points.len(),
            collectives: chart.comm.as_ref().map_or(0, |c| c.points.len()),
            parallel: true,
        },
        an.format.format.into(),
        out,
    )?;
    Ok(())
}
