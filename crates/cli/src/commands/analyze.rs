//! `roofline analyze`.

use crate::args::AnalyzeArgs;
use crate::error::CliError;
use roofline_core::analysis::analyze;
use roofline_core::workload::{Precisions, Stage, Workload};
use roofline_inputs::config::load_model;
use roofline_inputs::hardware::find_device;
use roofline_report::analysis::{write_analysis, AnalyzeReport};
use std::io::Write;

/// The model, chip and per-stage analyses `analyze` (and `report`) work from.
pub(crate) struct Prepared {
    pub model: roofline_core::model::Transformer,
    pub device: roofline_core::device::Device,
    pub precisions: Precisions,
    pub analyses: Vec<roofline_core::analysis::StageAnalysis>,
}

pub fn run(a: &AnalyzeArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if a.parallel.any() {
        return super::analyze_parallel::run(a, out);
    }
    if let Some(path) = &a.plot.plot {
        super::plot::check_plot_path(path, a.plot.force)?;
    }
    let Prepared {
        model,
        device,
        precisions,
        analyses,
    } = prepare(a)?;
    let report = AnalyzeReport {
        model: &model,
        device: &device,
        stages: &analyses,
    };
    let fusion = match a.fusion {
        Some(preset) => Some(
            analyses
                .iter()
                .map(|s| {
                    roofline_core::fusion::compare_preset(
                        &s.graph,
                        preset,
                        precisions.act,
                        &device,
                        device.kernel_launch(),
                    )
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(roofline_core::analysis::AnalysisError::from)?,
        ),
        None => None,
    };
    if let Some(path) = &a.plot.plot {
        match &fusion {
            Some(f) => {
                super::plot::plot_analysis_fused(path, a.plot.force, &model, &device, &analyses, f)?
            }
            None => super::plot::plot_analysis(path, a.plot.force, &model, &device, &analyses)?,
        }
    }
    if let Some(path) = &a.profile {
        return super::import::write_profile_join(path, &analyses, a.format.format.into(), out);
    }
    if let Some(name) = &a.explain {
        return super::plot::explain_analysis(
            name,
            &model,
            &device,
            &analyses,
            a.format.format.into(),
            out,
        );
    }
    if let Some(fusion) = &fusion {
        roofline_report::fusion::write_analysis_with_fusion(
            &report,
            fusion,
            a.format.format.into(),
            out,
        )?;
        return Ok(());
    }
    write_analysis(&report, a.format.format.into(), out)?;
    Ok(())
}

/// The precisions the flags give: `--precision` for all three, overridden per tensor kind, with
/// group-wise scale bytes and W8A8.
pub(crate) fn precisions(a: &AnalyzeArgs) -> Result<Precisions, CliError> {
    precisions_of(&crate::args::PrecisionArgs {
        precision: a.precision,
        weight_precision: a.weight_precision,
        kv_precision: a.kv_precision,
        group_size: a.group_size,
        scale_precision: a.scale_precision,
        zero_point_precision: a.zero_point_precision,
        w8a8: a.w8a8,
    })
}

/// The precisions `--precision`, `--weight-precision`, `--kv-precision`, `--group-size`,
/// `--scale-precision`, `--zero-point-precision` and `--w8a8` give.
pub(crate) fn precisions_of(a: &crate::args::PrecisionArgs) -> Result<Precisions, CliError> {
    let default_weight = if a.w8a8 {
        roofline_core::precision::Precision::Int8
    } else {
        a.precision
    };
    let weight_scale_bytes = match a.group_size {
        None => 0.0,
        Some(0) => {
            return Err(CliError::bad_input(
                "`--group-size` must be at least 1",
                Some("GPTQ and AWQ use 128 weights per group".into()),
            ))
        }
        Some(_)
            if !matches!(
                a.weight_precision.unwrap_or(default_weight),
                roofline_core::precision::Precision::Int8
                    | roofline_core::precision::Precision::Int4
                    | roofline_core::precision::Precision::Fp8
            ) =>
        {
            return Err(CliError::bad_input(
                "`--group-size` applies to quantized weights (int8, int4, fp8)",
                Some("add --weight-precision int4 (or int8, fp8)".into()),
            ))
        }
        Some(g) => {
            let zp = a.zero_point_precision.map(|p| p.bytes()).unwrap_or(0.0);
            (a.scale_precision.bytes() + zp) / g as f64
        }
    };
    Ok(Precisions::new(
        a.weight_precision.unwrap_or(default_weight),
        a.precision,
        a.kv_precision.unwrap_or(a.precision),
    )
    .with_weight_scale_bytes(weight_scale_bytes)
    .with_gemm(a.w8a8.then_some(roofline_core::precision::Precision::Int8)))
}

/// Reads the model and chip and analyses each stage the flags ask for.
pub(crate) fn prepare(a: &AnalyzeArgs) -> Result<Prepared, CliError> {
    let model = load_model(&a.model)?;
    let mut device = find_device(&a.hardware)?;
    if let Some(l) = a.launch_overhead {
        device.launch_overhead =
            roofline_core::cited::Cited::new(roofline_core::units::Seconds(l), "--launch-overhead");
    }
    let precisions = precisions(a)?;
    let stages: &[Stage] = a.stage.stages();
    let analyses = stages
        .iter()
        .map(|&stage| {
            let w = Workload::new(stage, a.batch, a.seq_len, a.context)
                .with_precisions(precisions)
                .flash_attention(a.flash_attention)
                .with_logits(a.logits.into());
            analyze(&model, &w, &device, a.reserve.memory_reserve)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Prepared {
        model,
        device,
        precisions,
        analyses,
    })
}
