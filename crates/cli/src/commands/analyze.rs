//! `roofline analyze`.

use crate::api::analyze::{self as api, Single};
use crate::api::{AnalyzeRequest, ChipInput, MemoryReserve, ModelInput, StageChoice};
use crate::args::common::StageArg;
use crate::args::AnalyzeArgs;
use crate::error::CliError;
use roofline_core::workload::Precisions;
use roofline_report::advice::Arg;
use roofline_report::analysis::write_analysis;
use roofline_report::Format;
use std::io::Write;

pub fn run(a: &AnalyzeArgs, out: &mut dyn Write) -> Result<(), CliError> {
    check_stage_flags(a)?;
    if a.parallel.any() {
        return super::analyze_parallel::run(a, out);
    }
    if let Some(path) = &a.plot.plot {
        super::plot::check_plot_path(path, a.plot.force)?;
    }
    if a.advice {
        let clash = [
            ("--fusion", a.fusion.is_some()),
            ("--profile", a.profile.is_some()),
            ("--explain", a.explain.is_some()),
        ];
        if let Some((flag, _)) = clash.iter().find(|(_, on)| *on) {
            return Err(CliError::bad_input(
                format!("`--advice` does not combine with `{flag}`"),
                Some(format!(
                    "drop {flag}: --advice prices --fusion max itself and prints the tables"
                )),
            ));
        }
    }
    // One computation for every front end: the typed API's.
    let s = api::single(&request(a))?;
    if let Some(path) = &a.plot.plot {
        super::plot::plot_analysis(
            path,
            (a.plot.force, a.plot.all_roofs),
            &s.model,
            &s.device,
            &s.analyses,
            s.fusion.as_deref().unwrap_or(&[]),
        )?;
    }
    let format = a.format.format.into();
    if let Some(path) = &a.profile {
        return super::import::write_profile_join(path, &s.analyses, format, out);
    }
    if let Some(name) = &a.explain {
        return super::plot::explain_analysis(name, &s.model, &s.device, &s.analyses, format, out);
    }
    if format == Format::Json {
        roofline_report::doc::write_json(&s.document(), out)?;
        return Ok(());
    }
    let report = s.report();
    if let Some(fusion) = &s.fusion {
        roofline_report::fusion::write_analysis_with_fusion(&report, fusion, format, out)?;
    } else if let Some(advice) = &s.advice {
        roofline_report::analysis::write_analysis_with_advice(
            &report, advice, &s.command, format, out,
        )?;
    } else {
        write_analysis(&report, format, out)?;
    }
    Ok(())
}

/// Refuses a length flag of the stage not analysed: `--context` with `--stage prefill`, and
/// `--seq-len` with `--stage decode`.
pub(crate) fn check_stage_flags(a: &AnalyzeArgs) -> Result<(), CliError> {
    let (flag, stage, other) = match a.stage {
        StageArg::Prefill if a.context.is_some() => ("--context", "prefill", "decode"),
        StageArg::Decode if a.seq_len.is_some() => ("--seq-len", "decode", "prefill"),
        _ => return Ok(()),
    };
    Err(CliError::bad_input(
        format!("`{flag}` is the {other} stage's length: it does not apply to `--stage {stage}`"),
        Some(format!(
            "drop {flag}, or give --stage {other} (or both) to analyse that stage"
        )),
    ))
}

/// The typed request the flags give (the output flags are the CLI's own).
pub(crate) fn request(a: &AnalyzeArgs) -> AnalyzeRequest {
    let p = &a.precisions;
    AnalyzeRequest {
        model: ModelInput::Id(a.model.clone()),
        hardware: ChipInput::Id(a.hardware.clone()),
        system: a.parallel.system.clone(),
        stage: match a.stage {
            StageArg::Prefill => StageChoice::Prefill,
            StageArg::Decode => StageChoice::Decode,
            StageArg::Both => StageChoice::Both,
        },
        batch: a.batch,
        seq_len: a.seq_len.unwrap_or(AnalyzeRequest::default().seq_len),
        context: a.context.unwrap_or(AnalyzeRequest::default().context),
        precision: p.precision,
        weight_precision: p.weight_precision,
        kv_precision: p.kv_precision,
        group_size: p.group_size,
        scale_precision: p.scale_precision,
        zero_point_precision: p.zero_point_precision,
        w8a8: p.w8a8,
        flash_attention: a.attention.on(),
        logits: a.logits.into(),
        memory_reserve: MemoryReserve(a.reserve.memory_reserve),
        devices: a.parallel.devices,
        tp: a.parallel.tp,
        pp: a.parallel.pp,
        sequence_parallel: a.parallel.sequence_parallel,
        ep: a.parallel.ep,
        expert_imbalance: a.parallel.expert_imbalance,
        cp: a.parallel.cp,
        fusion: a.fusion,
        advice: a.advice,
        launch_overhead: a.launch_overhead,
    }
}

/// The current command line as `roofline analyze` takes it: the model, the chip and the
/// workload always, every other flag where it differs from its default (the parallel,
/// output and `--advice` flags left out); what each "what to change" command starts from.
pub(crate) fn command_args(a: &AnalyzeArgs) -> Vec<Arg> {
    crate::api::command::command_args(&request(a))
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

/// Reads the model and chip and analyses each stage the flags ask for (no fusion, no advice).
pub(crate) fn prepare(a: &AnalyzeArgs) -> Result<Single, CliError> {
    Ok(crate::api::analyze::prepare(&request(a))?)
}
