//! `roofline plan`.

use super::analyze_parallel::{parallel_error, system_of, Flags};
use crate::args::{PlanArgs, PlanStage};
use crate::error::CliError;
use roofline_core::parallel::search;
use roofline_core::workload::{Precisions, Stage, Workload};
use roofline_inputs::config::load_model;
use roofline_report::plan::{write_plan, PlanReport};
use std::io::Write;

/// The sequence length and the context when `--seq-len` or `--context` is not given.
pub(super) const DEFAULT_LENGTH: u64 = 2048;

pub fn run(a: &PlanArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let other_stage = match a.stage {
        PlanStage::Decode if a.seq_len.is_some() => Some(("--seq-len", "decode")),
        PlanStage::Prefill if a.context.is_some() => Some(("--context", "prefill")),
        PlanStage::Train if a.context.is_some() => Some(("--context", "train")),
        _ => None,
    };
    if let Some((flag, stage)) = other_stage {
        return Err(CliError::bad_input(
            format!("`{flag}` does not apply to `--stage {stage}`"),
            Some(
                "--seq-len is the prompt of a prefill and a training sequence; --context the \
                 KV cache of a decode"
                    .into(),
            ),
        ));
    }
    if a.stage == PlanStage::Train {
        return super::train_plan::run(a, out);
    }
    let stage = if a.stage == PlanStage::Prefill {
        "prefill"
    } else {
        "decode"
    };
    let train_only = [
        ("--global-batch", a.global_batch.is_some()),
        ("--policies", a.policies.is_some()),
    ];
    if let Some((flag, _)) = train_only.iter().find(|(_, given)| *given) {
        return Err(CliError::bad_input(
            format!("`{flag}` is a training plan's: it does not apply to `--stage {stage}`"),
            Some("give --stage train to plan a training step, or drop it to plan serving".into()),
        ));
    }
    require_devices(a)?;
    let model = load_model(&a.model)?;
    let flags = flags(a);
    let system = system_of(&flags, 1)?;
    let precisions = precisions(a);
    let stage = match a.stage {
        PlanStage::Prefill => Stage::Prefill,
        // (train returned above)
        PlanStage::Decode | PlanStage::Train => Stage::Decode,
    };
    let workload = Workload::new(
        stage,
        a.batch,
        a.seq_len.unwrap_or(DEFAULT_LENGTH),
        a.context.unwrap_or(DEFAULT_LENGTH),
    )
    .with_precisions(precisions)
    .flash_attention(a.attention.on());
    let found = search(&model, &workload, &system, a.reserve.memory_reserve)
        .map_err(|e| parallel_error(e, &flags, &system))?;
    let report = PlanReport {
        model: &model,
        system: &system,
        workload: &workload,
        search: &found,
        top: a.top as usize,
    };
    write_plan(&report, a.format.format.into(), out)?;
    Ok(())
}

/// Refuses a plan without the devices to split over (neither --system nor --devices).
pub(super) fn require_devices(a: &PlanArgs) -> Result<(), CliError> {
    if a.system.is_none() && a.devices.is_none() {
        return Err(CliError::bad_input(
            "`--devices`: plan needs the devices to split the model over",
            Some("give --system NAME (`roofline hardware list --systems`) or --devices N".into()),
        ));
    }
    Ok(())
}

/// The system flags of a plan: --system, or --hardware (h100-sxm) with --devices.
pub(super) fn flags(a: &PlanArgs) -> Flags<'_> {
    Flags {
        system: a.system.as_deref(),
        devices: a.devices,
        hardware: &a.hardware,
        hardware_default: crate::args::common::DEFAULT_CHIP,
        takes_devices: true,
        layout: "--devices",
    }
}

/// The number formats of a plan: --precision, with --weight-precision and --kv-precision
/// where given.
pub(super) fn precisions(a: &PlanArgs) -> Precisions {
    Precisions::new(
        a.weight_precision.unwrap_or(a.precision),
        a.precision,
        a.kv_precision.unwrap_or(a.precision),
    )
}
