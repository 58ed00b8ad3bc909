//! `roofline sweep`: flags into a [`SweepSpec`], run by `roofline_core::sweep`, rendered by
//! `roofline_report::{sweep, sweep_plot}`.

use crate::args::{StageArg, SweepArgs};
use crate::error::{CliError, Kind};
use crate::output::{check_output, write_output};
use roofline_core::sweep::{sweep, SweepSpec};
use roofline_core::workload::{Precisions, Stage};
use roofline_inputs::config::load_model;
use roofline_inputs::hardware::find_device;
use roofline_report::plot::PlotFormat;
use roofline_report::sweep::{write_sweep, SweepView};
use roofline_report::sweep_plot::render_sweep;
use std::io::Write;

pub fn run(a: &SweepArgs, out: &mut dyn Write) -> Result<(), CliError> {
    // A bad --plot path fails before any work.
    let plot = match &a.plot.plot {
        Some(path) => {
            let format = PlotFormat::from_path(path).ok_or_else(|| {
                CliError::bad_input(
                    format!(
                        "`--plot {}`: the sweep plot is written as SVG or PNG",
                        path.display()
                    ),
                    Some("end the file name in `.svg` or `.png`".into()),
                )
            })?;
            check_output(path, a.plot.force, "--plot")?;
            Some((path, format))
        }
        None => None,
    };
    let model = load_model(&a.model)?;
    let devices = a
        .hardware
        .iter()
        .map(|h| find_device(h))
        .collect::<Result<Vec<_>, _>>()?;
    let precisions: Vec<Precisions> = a
        .precision
        .iter()
        .map(|&p| {
            Precisions::new(
                a.weight_precision.unwrap_or(p),
                p,
                a.kv_precision.unwrap_or(p),
            )
        })
        .collect();
    let stages: &[Stage] = match a.stage {
        StageArg::Prefill => &[Stage::Prefill],
        StageArg::Decode => &[Stage::Decode],
        StageArg::Both => &[Stage::Prefill, Stage::Decode],
    };
    let spec = SweepSpec {
        model: &model,
        devices: &devices,
        precisions: &precisions,
        stages,
        seq_lens: &a.seq_len.0,
        contexts: &a.context.0,
        batches: &a.batch.0,
        flash_attention: a.flash_attention,
        logits: a.logits.into(),
        reserve: a.reserve.memory_reserve,
    };
    let result = sweep(&spec)?;
    let view = SweepView {
        model: &model,
        devices: &devices,
        sweep: &result,
        flash_attention: a.flash_attention,
    };
    if let Some((path, format)) = plot {
        let bytes = render_sweep(&view, format).map_err(|e| CliError {
            kind: Kind::Internal,
            message: e.to_string(),
            hint: None,
        })?;
        write_output(path, a.plot.force, &bytes)?;
    }
    write_sweep(&view, a.format.format.into(), out)?;
    Ok(())
}
