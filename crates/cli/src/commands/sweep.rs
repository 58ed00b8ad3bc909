//! `roofline sweep`: flags into a [`SweepSpec`], run by `roofline_core::sweep`, rendered by
//! `roofline_report::{sweep, sweep_plot}`.

use super::analyze_parallel;
use crate::args::SweepArgs;
use crate::error::{CliError, Kind};
use crate::output::{check_output, write_output};
use roofline_core::parallel::Layout;
use roofline_core::precision::Precision;
use roofline_core::sweep::{sweep, SweepSpec};
use roofline_core::workload::{Precisions, Stage, Workload};
use roofline_inputs::config::load_model;
use roofline_inputs::hardware::find_device;
use roofline_report::plot::PlotFormat;
use roofline_report::sweep::{write_sweep, SweepView};
use roofline_report::sweep_plot::render_sweep;
use std::io::Write;

pub fn run(a: &SweepArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if a.pareto {
        return super::sweep_pareto::run(a, out);
    }
    let pareto_only = [
        ("--slo-tpot", a.slo_tpot.is_some()),
        ("--slo-ttft", a.slo_ttft.is_some()),
        ("--cuda-graphs", a.cuda_graphs),
        ("--generate", a.generate.is_some()),
    ];
    if let Some((flag, _)) = pareto_only.iter().find(|(_, on)| *on) {
        return Err(CliError::bad_input(
            format!("`{flag}` goes with `--pareto`"),
            Some(format!(
                "add --pareto to serve whole requests against {flag}"
            )),
        ));
    }
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
            check_output(path, a.plot.force, "--plot", "sweep.svg")?;
            Some((path, format))
        }
        None => None,
    };
    if let Some(tps) = &a.tp {
        return run_tp(a, &tps.0, out);
    }
    let fixed = [
        ("--pp", a.pp.is_some()),
        ("--ep", a.ep.is_some()),
        ("--expert-imbalance", a.expert_imbalance.is_some()),
        ("--sequence-parallel", a.sequence_parallel),
        ("--cp", a.cp.is_some()),
    ];
    if let Some((flag, _)) = fixed.iter().find(|(_, on)| *on) {
        return Err(CliError::bad_input(
            format!("`{flag}` is a fixed part of the layout of `sweep --tp`: it goes with --tp"),
            Some(format!(
                "give --tp 1,2,4,8 with {flag} to sweep tensor-parallel degrees beside it, or \
                 `roofline analyze` for one layout"
            )),
        ));
    }
    if a.system.is_some() {
        return Err(CliError::bad_input(
            "`--system` sweeps tensor-parallel degrees: it goes with --tp",
            Some("give --tp 1,2,4,8 with it, or drop --system and give --hardware".into()),
        ));
    }
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
    let stages: &[Stage] = a.stage.stages();
    let spec = SweepSpec {
        model: &model,
        devices: &devices,
        precisions: &precisions,
        stages,
        seq_lens: &a.seq_len.0,
        contexts: &a.context.0,
        batches: &a.batch.0,
        flash_attention: a.attention.on(),
        logits: a.logits.into(),
        reserve: a.reserve.memory_reserve,
    };
    let result = sweep(&spec)?;
    let view = SweepView {
        model: &model,
        devices: &devices,
        sweep: &result,
        flash_attention: a.attention.on(),
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

/// `sweep --tp`: each stage, length and batch at each tensor-parallel degree.
fn run_tp(a: &SweepArgs, tps: &[u64], out: &mut dyn Write) -> Result<(), CliError> {
    let refused = if a.plot.plot.is_some() {
        Some(("`--plot` does not go with `--tp` yet", "drop --plot"))
    } else if a.hardware.len() > 1 {
        Some((
            "`--tp` sweeps one chip: --hardware names several",
            "give one --hardware (or --system)",
        ))
    } else if a.precision.len() > 1 {
        Some((
            "`--tp` sweeps one precision: --precision names several",
            "give one --precision",
        ))
    } else {
        None
    };
    if let Some((message, hint)) = refused {
        return Err(CliError::bad_input(message, Some(hint.into())));
    }
    let max = roofline_core::comm::system::MAX_DEVICES;
    let tps: Vec<u32> = tps
        .iter()
        .map(|&t| {
            u32::try_from(t)
                .ok()
                .filter(|&t| t >= 1 && t <= max)
                .ok_or_else(|| {
                    CliError::bad_input(
                        format!("`--tp`: {t} is not a degree (1 to {max})"),
                        Some("give degrees such as 1,2,4,8".into()),
                    )
                })
        })
        .collect::<Result<_, _>>()?;
    let model = load_model(&a.model)?;
    // The other degrees, fixed beside each swept --tp.
    let base = Layout {
        pp: a.pp.unwrap_or(1),
        ep: a.ep.unwrap_or(1),
        expert_imbalance: a.expert_imbalance.unwrap_or(1.0),
        sequence_parallel: a.sequence_parallel,
        cp: a.cp.unwrap_or(1),
        ..Layout::SINGLE
    };
    for &tp in &tps {
        analyze_parallel::check_layout(&Layout { tp, ..base }, &model)?;
    }
    let hardware = a
        .hardware
        .first()
        .map_or(crate::args::common::DEFAULT_CHIP, String::as_str);
    let most = tps.iter().copied().max().unwrap_or(1);
    let largest = Layout { tp: most, ..base };
    let lay = if base == Layout::SINGLE {
        format!("--tp {most}")
    } else {
        analyze_parallel::layout_flags(&largest)
    };
    let flags = analyze_parallel::Flags {
        system: a.system.as_deref(),
        devices: None,
        hardware,
        hardware_default: crate::args::common::DEFAULT_CHIP,
        takes_devices: false,
        layout: &lay,
    };
    let p = a.precision.first().copied().unwrap_or(Precision::Bf16);
    let precisions = Precisions::new(
        a.weight_precision.unwrap_or(p),
        p,
        a.kv_precision.unwrap_or(p),
    );
    let stages: &[Stage] = a.stage.stages();
    let workloads = sweep_workloads(a, stages, precisions);
    // A fixed degree the workload does not take (--cp in decode) names its flag before any
    // system is built.
    for w in workloads.iter().filter(|w| w.validate().is_ok()) {
        analyze_parallel::check_workload(&largest, &model, w)?;
    }
    let system = analyze_parallel::system_of(&flags, largest.devices())?;
    let mut series = Vec::new();
    for w in &workloads {
        let stages = roofline_core::parallel::scaling::over_tp(
            &model,
            w,
            &system,
            base,
            &tps,
            a.reserve.memory_reserve,
        )
        .map_err(|e| analyze_parallel::parallel_error(e, &flags, &system))?;
        series.push(stages);
    }
    roofline_report::parallel::write_scaling(
        &model,
        &system,
        &series,
        a.format.format.into(),
        out,
    )?;
    Ok(())
}

/// Every workload of `sweep --tp`, in order: each stage, then each length, then each batch.
fn sweep_workloads(a: &SweepArgs, stages: &[Stage], precisions: Precisions) -> Vec<Workload> {
    let mut workloads = Vec::new();
    for &stage in stages {
        let lengths = match stage {
            Stage::Prefill => &a.seq_len.0,
            _ => &a.context.0,
        };
        for &len in lengths {
            for &batch in &a.batch.0 {
                let (s, c) = match stage {
                    Stage::Prefill => (len, 0),
                    _ => (1, len),
                };
                workloads.push(
                    Workload::new(stage, batch, s, c)
                        .with_precisions(precisions)
                        .flash_attention(a.attention.on())
                        .with_logits(a.logits.into()),
                );
            }
        }
    }
    workloads
}
