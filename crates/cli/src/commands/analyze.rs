//! `roofline analyze`.

use crate::args::AnalyzeArgs;
use crate::error::CliError;
use roofline_core::analysis::analyze;
use roofline_core::workload::{Precisions, Stage, Workload};
use roofline_inputs::config::load_model;
use roofline_inputs::hardware::find_device;
use roofline_report::advice::Arg;
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
        super::plot::plot_analysis(
            path,
            (a.plot.force, a.plot.all_roofs),
            &model,
            &device,
            &analyses,
            fusion.as_deref().unwrap_or(&[]),
        )?;
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
    if a.advice {
        let advice = roofline_core::serve::advice::advise(
            &model,
            &analyses,
            &device,
            a.reserve.memory_reserve,
        );
        roofline_report::analysis::write_analysis_with_advice(
            &report,
            &advice,
            &command_args(a),
            a.format.format.into(),
            out,
        )?;
        return Ok(());
    }
    write_analysis(&report, a.format.format.into(), out)?;
    Ok(())
}

/// The current command line as `roofline analyze` takes it: the model, the chip and the
/// workload always, every other flag where it differs from its default (the parallel,
/// output and `--advice` flags left out); what each "what to change" command starts from.
pub(crate) fn command_args(a: &AnalyzeArgs) -> Vec<Arg> {
    use crate::args::common::{LogitsArg, StageArg};
    use roofline_core::memory::Reserve;
    use roofline_core::precision::Precision;
    let mut v = vec![Arg::model(&a.model), Arg::value("--hardware", &a.hardware)];
    match a.stage {
        StageArg::Prefill => v.push(Arg::value("--stage", "prefill")),
        StageArg::Decode => v.push(Arg::value("--stage", "decode")),
        StageArg::Both => {}
    }
    v.push(Arg::value("--batch", a.batch));
    if a.stage != StageArg::Decode {
        v.push(Arg::value("--seq-len", a.seq_len));
    }
    if a.stage != StageArg::Prefill {
        v.push(Arg::value("--context", a.context));
    }
    if a.precisions.precision != Precision::Bf16 {
        v.push(Arg::value("--precision", a.precisions.precision));
    }
    if let Some(p) = a.precisions.weight_precision {
        v.push(Arg::value("--weight-precision", p));
    }
    if let Some(p) = a.precisions.kv_precision {
        v.push(Arg::value("--kv-precision", p));
    }
    if let Some(g) = a.precisions.group_size {
        v.push(Arg::value("--group-size", g));
    }
    if a.precisions.scale_precision != Precision::Fp16 {
        v.push(Arg::value(
            "--scale-precision",
            a.precisions.scale_precision,
        ));
    }
    if let Some(p) = a.precisions.zero_point_precision {
        v.push(Arg::value("--zero-point-precision", p));
    }
    if a.precisions.w8a8 {
        v.push(Arg::switch("--w8a8"));
    }
    if !a.attention.on() {
        v.push(Arg::switch("--no-flash-attention"));
    }
    if a.logits == LogitsArg::All {
        v.push(Arg::value("--logits", "all"));
    }
    match a.reserve.memory_reserve {
        r if r == Reserve::DEFAULT => {}
        Reserve::Fraction(f) => v.push(Arg::value("--memory-reserve", format!("{}%", f * 100.0))),
        Reserve::Bytes(b) => v.push(Arg::value("--memory-reserve", b.get())),
    }
    if let Some(l) = a.launch_overhead {
        v.push(Arg::value("--launch-overhead", format!("{l:e}")));
    }
    v
}

/// The precisions the flags give: `--precision` for all three, overridden per tensor kind, with
/// group-wise scale bytes and W8A8.
pub(crate) fn precisions(a: &AnalyzeArgs) -> Result<Precisions, CliError> {
    precisions_of(&a.precisions)
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
                .flash_attention(a.attention.on())
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
