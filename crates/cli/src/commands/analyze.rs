//! `roofline analyze`.

use crate::args::{AnalyzeArgs, StageArg};
use crate::error::CliError;
use roofline_core::analysis::analyze;
use roofline_core::workload::{Precisions, Stage, Workload};
use roofline_inputs::config::load_model;
use roofline_inputs::hardware::find_device;
use roofline_report::analysis::{write_analysis, AnalyzeReport};
use std::io::Write;

pub fn run(a: &AnalyzeArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let model = load_model(&a.model)?;
    let mut device = find_device(&a.hardware)?;
    if let Some(l) = a.launch_overhead {
        device.launch_overhead =
            roofline_core::cited::Cited::new(roofline_core::units::Seconds(l), "--launch-overhead");
    }
    let precisions = Precisions {
        weight: a.weight_precision.unwrap_or(a.precision),
        act: a.precision,
        kv: a.kv_precision.unwrap_or(a.precision),
    };
    let stages: &[Stage] = match a.stage {
        StageArg::Prefill => &[Stage::Prefill],
        StageArg::Decode => &[Stage::Decode],
        StageArg::Both => &[Stage::Prefill, Stage::Decode],
    };
    let analyses = stages
        .iter()
        .map(|&stage| {
            let w = Workload {
                stage,
                batch: a.batch,
                seq_len: a.seq_len,
                context: a.context,
                precisions,
                flash_attention: a.flash_attention,
            };
            analyze(&model, &w, &device)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let report = AnalyzeReport {
        model: &model,
        device: &device,
        stages: &analyses,
    };
    if let Some(preset) = a.fusion {
        let fusion = analyses
            .iter()
            .map(|s| {
                let graph = roofline_core::decoder::build_graph(&model, &s.workload);
                roofline_core::fusion::compare_preset(
                    &graph,
                    preset,
                    precisions.act,
                    &device,
                    device.launch_overhead.value,
                )
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(roofline_core::analysis::AnalysisError::from)?;
        roofline_report::fusion::write_analysis_with_fusion(
            &report,
            &fusion,
            a.format.format.into(),
            out,
        )?;
        return Ok(());
    }
    write_analysis(&report, a.format.format.into(), out)?;
    Ok(())
}
