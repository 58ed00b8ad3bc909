//! `roofline analyze` on many devices: `--system`, `--devices`, `--tp`, `--pp`,
//! `--sequence-parallel`.

use crate::args::AnalyzeArgs;
use crate::error::CliError;
use roofline_core::comm::{System, SystemError};
use roofline_core::parallel::{analyze_parallel, ParallelAnalysisError, ParallelError};
use roofline_core::workload::{Stage, Workload};
use roofline_inputs::config::load_model;
use roofline_inputs::hardware::find_device;
use roofline_report::parallel::{write_parallel, ParallelReport};
use std::io::Write;

/// The flags a parallel analysis does not combine with yet.
fn refuse_single_device_flags(a: &AnalyzeArgs) -> Result<(), CliError> {
    let unsupported = [
        ("--fusion", a.fusion.is_some()),
        ("--plot", a.plot.plot.is_some()),
        ("--profile", a.profile.is_some()),
        ("--explain", a.explain.is_some()),
    ];
    match unsupported.iter().find(|(_, on)| *on) {
        Some((flag, _)) => Err(CliError::bad_input(
            format!("`{flag}` does not combine with --system, --devices, --tp or --pp yet"),
            Some(format!(
                "drop {flag}, or analyse one device (no parallel flags)"
            )),
        )),
        None => Ok(()),
    }
}

/// The system the flags describe: `system` (an id or file), or `devices` (else
/// `default_devices`) of chip `hardware` in its default node.
pub(crate) fn system_of(
    system: Option<&str>,
    devices: Option<u32>,
    default_devices: u64,
    hardware: &str,
) -> Result<System, CliError> {
    if let Some(name) = system {
        if devices.is_some() {
            return Err(CliError::bad_input(
                "`--devices` and `--system` both give the devices",
                Some("a system file fixes its devices: drop --devices".into()),
            ));
        }
        return load_system(name);
    }
    let chip = find_device(hardware)?;
    let devices = devices.map_or(default_devices, u64::from);
    System::of_chip(&chip, devices).map_err(|e| system_error(&e, hardware))
}

/// A system from the catalog or a file.
fn load_system(name: &str) -> Result<System, CliError> {
    Ok(roofline_inputs::hardware::load_system(name)?)
}

fn system_error(e: &SystemError, chip: &str) -> CliError {
    let hint = match e {
        SystemError::NoPlatform { .. } => format!(
            "`{chip}` has no default node in the catalog: give --system (`roofline hardware \
             list --systems`) or a chip with one"
        ),
        SystemError::PartialNode { gpus_per_node, .. } => {
            format!("give a multiple of {gpus_per_node} devices, or fewer than one node")
        }
        SystemError::TooFewDevices { needed, .. } => {
            format!("give --devices {needed} or more, or a larger --system")
        }
        _ => "give between 1 and 1048576 devices".into(),
    };
    CliError::bad_input(format!("`--devices`: {e}"), Some(hint))
}

pub(crate) fn parallel_error(e: ParallelAnalysisError, chip: &str) -> CliError {
    match e {
        ParallelAnalysisError::Analysis(e) => e.into(),
        ParallelAnalysisError::Parallel(ParallelError::Layout(e)) => CliError::bad_input(
            format!("`--{}`: {e}", e.quantity()),
            Some("`roofline models` shows the heads, KV heads and blocks".into()),
        ),
        ParallelAnalysisError::Parallel(ParallelError::System(e)) => system_error(&e, chip),
        ParallelAnalysisError::Parallel(ParallelError::Collective(e)) => CliError::bad_input(
            format!("`--system`: {e}"),
            Some("the layout needs a link the system does not have: keep it in one node".into()),
        ),
        other => CliError::bad_input(other.to_string(), None),
    }
}

pub fn run(a: &AnalyzeArgs, out: &mut dyn Write) -> Result<(), CliError> {
    refuse_single_device_flags(a)?;
    let model = load_model(&a.model)?;
    let p = &a.parallel;
    let system = system_of(
        p.system.as_deref(),
        p.devices,
        p.layout().devices(),
        &a.hardware,
    )?;
    let precisions = super::analyze::precisions(a)?;
    let stages: &[Stage] = match a.stage {
        crate::args::StageArg::Prefill => &[Stage::Prefill],
        crate::args::StageArg::Decode => &[Stage::Decode],
        crate::args::StageArg::Both => &[Stage::Prefill, Stage::Decode],
    };
    let layout = a.parallel.layout();
    let analyses = stages
        .iter()
        .map(|&stage| {
            let w = Workload::new(stage, a.batch, a.seq_len, a.context)
                .with_precisions(precisions)
                .flash_attention(a.flash_attention)
                .with_logits(a.logits.into());
            analyze_parallel(&model, &w, &system, layout, a.reserve.memory_reserve)
                .map_err(|e| parallel_error(e, &a.hardware))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let report = ParallelReport {
        model: &model,
        system: &system,
        stages: &analyses,
    };
    write_parallel(&report, a.format.format.into(), out)?;
    Ok(())
}
