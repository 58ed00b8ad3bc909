//! What `--plot FILE` and `--explain` add to the commands that take them.

use crate::error::{CliError, Kind};
use crate::output::{check_output, write_output};
use roofline_core::analysis::{AnalysisError, StageAnalysis};
use roofline_core::device::Device;
use roofline_core::explain::{explain_node, ExplainError};
use roofline_core::model::Transformer;
use roofline_report::explain::write_derivations;
use roofline_report::plot::{render, PlotError, PlotFormat, RooflineChart};
use roofline_report::Format;
use std::io::Write;
use std::path::Path;

fn plot_failed(e: PlotError) -> CliError {
    CliError {
        kind: Kind::Internal,
        message: e.to_string(),
        hint: None,
    }
}

/// Checks a `--plot` path before any work: `.svg` or `.png`, a folder that exists, and no file
/// there unless `force`.
pub(crate) fn check_plot_path(path: &Path, force: bool) -> Result<PlotFormat, CliError> {
    let format = PlotFormat::from_path(path).ok_or_else(|| {
        CliError::bad_input(
            format!(
                "`--plot {}`: a plot is written as SVG or PNG",
                path.display()
            ),
            Some("end the file name in `.svg` or `.png`".into()),
        )
    })?;
    check_output(path, force, "--plot", "roofline.svg")?;
    Ok(format)
}

/// Draws `chart` to `path` (SVG or PNG by its extension): with the roofs of the precisions in
/// use only, unless `all_roofs`.
pub(crate) fn write_plot(
    path: &Path,
    force: bool,
    all_roofs: bool,
    chart: &RooflineChart,
) -> Result<(), CliError> {
    let format = check_plot_path(path, force)?;
    let mut chart = chart.clone();
    if !all_roofs {
        chart.keep_roofs_in_use();
    }
    let bytes = render(&chart, format).map_err(plot_failed)?;
    write_output(path, force, &bytes)
}

/// `analyze --plot` with the parallel flags: one device's operators on the chip's roofline,
/// its collectives on the communication panel under it.
pub(crate) fn plot_parallel(
    path: &Path,
    (force, all_roofs): (bool, bool),
    model: &Transformer,
    system: &roofline_core::comm::System,
    analyses: &[roofline_core::parallel::ParallelStage],
) -> Result<(), CliError> {
    let chart =
        RooflineChart::for_parallel(model, system, analyses).map_err(AnalysisError::from)?;
    write_plot(path, force, all_roofs, &chart)
}

/// `analyze --plot`: every operator of every stage on the chip's roofline, and with
/// `--fusion` (one comparison per stage; empty without) each stage's fused kernels.
pub(crate) fn plot_analysis(
    path: &Path,
    (force, all_roofs): (bool, bool),
    model: &Transformer,
    device: &Device,
    analyses: &[StageAnalysis],
    fusion: &[roofline_core::fusion::FusionComparison],
) -> Result<(), CliError> {
    let mut chart =
        RooflineChart::for_analysis(model, device, analyses).map_err(AnalysisError::from)?;
    for (s, c) in analyses.iter().zip(fusion) {
        chart.add_fused_kernels(s.workload.stage, c);
    }
    write_plot(path, force, all_roofs, &chart)
}

/// `analyze --explain NAME`: the worked derivation of operator `name` in each stage.
pub(crate) fn explain_analysis(
    name: &str,
    model: &Transformer,
    device: &Device,
    analyses: &[StageAnalysis],
    format: Format,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let ds = analyses
        .iter()
        .map(|s| {
            explain_node(model, s, device, name)
                .map(|d| (Some(s.workload.stage.to_string()), d))
                .map_err(|e| explain_error(e, name))
        })
        .collect::<Result<Vec<_>, _>>()?;
    write_derivations(&ds, format, out)?;
    Ok(())
}

fn explain_error(e: ExplainError, name: &str) -> CliError {
    match e {
        ExplainError::UnknownOperator { available, .. } => {
            let close = roofline_inputs::closest(name, &available, 1);
            let suggestion = close
                .first()
                .map(|c| format!("did you mean `{c}`? "))
                .unwrap_or_default();
            CliError::bad_input(
                format!("`--explain {name}`: no operator `{name}` in this model's graph"),
                Some(format!("{suggestion}operators: {}", available.join(", "))),
            )
        }
        ExplainError::Device(d) => AnalysisError::from(d).into(),
    }
}
