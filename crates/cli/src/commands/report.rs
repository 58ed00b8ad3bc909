//! `roofline report CONFIG … --out report.html`: the analysis as one self-contained HTML page.

use super::analyze::{prepare, Prepared};
use crate::args::ReportArgs;
use crate::error::{CliError, Kind};
use crate::output::{check_output, distinct_outputs, write_output};
use roofline_core::analysis::AnalysisError;
use roofline_core::explain::explain_node;
use roofline_report::analysis::AnalyzeReport;
use roofline_report::html::{largest_operator, render_html, write_summary, HtmlReport};
use roofline_report::plot::{render_svg, RooflineChart};
use std::io::Write;

pub fn run(a: &ReportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if a.analyze.parallel.any() {
        return Err(CliError::bad_input(
            "`report` does not take --system, --devices, --tp, --pp, --ep or \
             --sequence-parallel yet: it reports one chip",
            Some(
                "run `roofline analyze` with the same flags for the parallel tables, or drop \
                 them for a report of one chip"
                    .into(),
            ),
        ));
    }
    let force = a.analyze.plot.force;
    check_output(&a.out, force, "--out")?;
    if let Some(p) = &a.analyze.plot.plot {
        distinct_outputs(&[("--out", &a.out), ("--plot", p)])?;
        super::plot::check_plot_path(p, force)?;
    }
    let Prepared {
        model,
        device,
        analyses,
        ..
    } = prepare(&a.analyze)?;
    let chart =
        RooflineChart::for_analysis(&model, &device, &analyses).map_err(AnalysisError::from)?;
    let svg = render_svg(&chart).map_err(|e| CliError {
        kind: Kind::Internal,
        message: e.to_string(),
        hint: None,
    })?;
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
        version: env!("CARGO_PKG_VERSION"),
    });
    let html = match &a.analyze.profile {
        Some(p) => super::import::with_profile_section(html, p, &device, &analyses)?,
        None => html,
    };
    write_output(&a.out, force, html.as_bytes())?;
    if let Some(p) = &a.analyze.plot.plot {
        super::plot::write_plot(p, force, &chart)?;
    }
    write_summary(
        &a.out.display().to_string(),
        html.len(),
        chart.points.len(),
        a.analyze.format.format.into(),
        out,
    )?;
    Ok(())
}
