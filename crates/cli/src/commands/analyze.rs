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
    let device = find_device(&a.hardware)?;
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
    write_analysis(&report, a.format.format.into(), out)?;
    Ok(())
}
