//! `roofline plan --stage train`: the training plan search.

use super::analyze_parallel::system_of;
use crate::args::{PlanArgs, PlanPolicies};
use crate::error::CliError;
use roofline_core::train::plan::TrainingPlanError;
use roofline_core::train::{search_training, TrainingPlanOptions};
use roofline_inputs::config::load_model;
use roofline_report::train_plan::{write_train_plan, TrainPlanReport};
use std::io::Write;

/// Waterfalls printed under the table: the best three.
const WATERFALLS: usize = 3;

pub fn run(a: &PlanArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let Some(global_batch) = a.global_batch else {
        return Err(CliError::bad_input(
            "`--global-batch`: a training plan needs the sequences of one step",
            Some("give --global-batch B, e.g. --global-batch 1536".into()),
        ));
    };
    super::plan::require_devices(a)?;
    let seq_len = a.seq_len.unwrap_or(super::plan::DEFAULT_LENGTH);
    if seq_len == 0 {
        return Err(CliError::bad_input(
            "`--seq-len` must be at least 1",
            Some("give the tokens per training sequence, e.g. --seq-len 2048".into()),
        ));
    }
    let model = load_model(&a.model)?;
    let flags = super::plan::flags(a);
    let system = system_of(&flags, 1)?;
    let options = TrainingPlanOptions {
        top: a.top as usize,
        precisions: super::plan::precisions(a),
        flash_attention: a.attention.on(),
        reserve: a.reserve.memory_reserve,
        ..match a.policies.unwrap_or(PlanPolicies::All) {
            PlanPolicies::All => TrainingPlanOptions::default(),
            PlanPolicies::Megatron2021 => TrainingPlanOptions::megatron_2021(),
            PlanPolicies::Megatron2022 => TrainingPlanOptions::megatron_2022(),
        }
    };
    let devices = system.devices();
    let found = search_training(&model, &system, devices, global_batch, seq_len, &options)
        .map_err(|e| match e {
            TrainingPlanError::Zero(q) => CliError::bad_input(
                format!("`--{}` must be at least 1", q.replace('_', "-")),
                Some("give a count of 1 or more".into()),
            ),
            other => CliError::bad_input(
                format!("`--stage train`: {other}"),
                Some("check the model, --hardware or --system (`roofline hardware list`)".into()),
            ),
        })?;
    if found.best.is_empty() {
        let why = if found.fit == 0 {
            format!(
                "no layout of {} on {devices} × {} fits in memory ({} candidates evaluated)",
                model.name, system.chip.id, found.evaluated
            )
        } else {
            format!(
                "no layout of {} on {devices} × {} could be priced ({} fit, {} need a link the \
                 system lacks)",
                model.name, system.chip.id, found.fit, found.skipped.link
            )
        };
        return Err(CliError::bad_input(
            format!("`--devices`: {why}"),
            Some(
                "give more devices (--devices or --system), a smaller --global-batch or \
                 --seq-len, or a chip with more memory (--hardware)"
                    .into(),
            ),
        ));
    }
    let report = TrainPlanReport {
        model: &model,
        system: &system,
        search: &found,
        waterfalls: WATERFALLS,
    };
    write_train_plan(&report, a.format.format.into(), out)?;
    Ok(())
}
