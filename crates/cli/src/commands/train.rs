//! `roofline train`: one training step at the roofline bound and as an estimate, side by
//! side, with the MFU waterfall (`--plot FILE.svg` draws it); and the waterfall `roofline mfu`
//! adds for a measured step.

use super::analyze_parallel::{check_layout, layout_flags, parallel_error, system_of, Flags};
use crate::args::train::EfficiencyOverride;
use crate::args::{TrainArgs, TrainLayoutArgs};
use crate::error::{CliError, Kind};
use crate::output::{check_output, write_output};
use roofline_core::comm::System;
use roofline_core::model::Transformer;
use roofline_core::precision::Precision;
use roofline_core::pricing::Pricing;
use roofline_core::train::data_parallel::DataParallelError;
use roofline_core::train::memory::TrainingMemoryError;
use roofline_core::train::micro_batch::MicroBatchError;
use roofline_core::train::pipeline::PipelineError;
use roofline_core::train::{predict, StepError, TrainingJob, TrainingPrediction};
use roofline_core::units::Seconds;
use roofline_core::workload::Precisions;
use roofline_inputs::config::load_model;
use roofline_report::html::{render_train_html, TrainHtmlReport};
use roofline_report::plot::waterfall::{render_waterfall, render_waterfall_svg};
use roofline_report::plot::PlotFormat;
use roofline_report::train::{waterfall_chart, write_train, TrainReport};
use std::io::Write;
use std::path::Path;

/// The job the flags describe (checked by [`predict`]).
pub(crate) fn job_of(
    l: &TrainLayoutArgs,
    global_batch: u64,
    seq_len: u64,
    recompute: roofline_core::train::memory::Recompute,
    precision: Precision,
    reserve: roofline_core::memory::Reserve,
) -> Result<TrainingJob, CliError> {
    let mut job = TrainingJob::new(
        l.layout(),
        l.dp.unwrap_or(1),
        global_batch,
        l.micro_batch.unwrap_or(1),
        seq_len,
    );
    job.zero = l.zero_stage();
    job.recompute = recompute;
    job.schedule = l
        .schedule()
        .map_err(|(m, h)| CliError::bad_input(m, Some(h)))?;
    if let Some(o) = l.optimizer {
        job.optimizer = o.into();
    }
    job.precisions = Precisions::uniform(precision);
    job.flash_attention = l.attention.on();
    job.overlap_grad_reduce = !l.no_overlap_grad_reduce;
    job.overlap_p2p = !l.blocking_p2p;
    job.reserve = reserve;
    Ok(job)
}

/// A [`StepError`] naming the flag at fault.
fn step_error(e: StepError, job: &TrainingJob, flags: &Flags<'_>, system: &System) -> CliError {
    let bad = |m: String, h: String| CliError::bad_input(m, Some(h));
    match e {
        StepError::Zero(field) => {
            let flag = match field {
                "data_parallel" => "--dp".to_string(),
                f => crate::error::flag(f),
            };
            bad(
                format!("`{flag}` must be at least 1"),
                format!("give {flag} 1 or more"),
            )
        }
        StepError::GlobalBatch {
            global_batch,
            per_micro_batch,
        } => {
            let below = (global_batch / per_micro_batch) * per_micro_batch;
            let above = global_batch.div_ceil(per_micro_batch) * per_micro_batch;
            let choices = if below > 0 {
                format!("{below} or {above}")
            } else {
                above.to_string()
            };
            bad(
                format!("`--global-batch`: {e}"),
                format!(
                    "give --global-batch a multiple of {per_micro_batch} (--dp × --ep × \
                     --micro-batch), such as {choices}, or change --micro-batch"
                ),
            )
        }
        StepError::TooFewDevices { needed, available } => match flags.system {
            Some(name) => bad(
                format!(
                    "`--system {name}`: the job ({} --dp {}) needs {needed} devices, the \
                     system has {available}",
                    flags.layout, job.data_parallel
                ),
                "lower --tp, --pp, --cp, --ep or --dp, or give a larger --system".into(),
            ),
            None => bad(
                format!(
                    "`--devices`: the job ({} --dp {}) needs {needed} devices, and --devices \
                     gives {available}",
                    flags.layout, job.data_parallel
                ),
                format!("give --devices {needed} (or leave it out), or lower --tp, --pp or --dp"),
            ),
        },
        StepError::Efficiency(e) => bad(
            format!("`--efficiency`: {e}"),
            "give each share in [0.01, 1]: --efficiency matmul=0.74,network=0.8,memory=1".into(),
        ),
        StepError::MicroBatch(MicroBatchError::Parallel(e)) => parallel_error(e, flags, system),
        StepError::MicroBatch(MicroBatchError::Device(d)) => bad(
            format!("`--precision`: {d}"),
            format!(
                "choose a --precision {} has a peak for (`roofline hardware show {}`)",
                system.chip.id, system.chip.id
            ),
        ),
        StepError::Memory(TrainingMemoryError::Layout(l)) => bad(
            format!("`--{}`: {l}", l.quantity()),
            "`roofline models` shows the heads, KV heads, experts and blocks".into(),
        ),
        StepError::Memory(TrainingMemoryError::Interleave { .. }) => bad(
            format!("`--virtual-stages`: {e}"),
            "give --pp 2 or more and --virtual-stages dividing the blocks of a stage, or use \
             --schedule 1f1b"
                .into(),
        ),
        StepError::Pipeline(PipelineError::MicroBatchesNotMultipleOfStages {
            micro_batches,
            stages,
        }) => bad(
            format!(
                "`--schedule interleaved`: {micro_batches} micro-batches are not a multiple of \
                 the {stages} pipeline stages"
            ),
            format!(
                "give --global-batch a multiple of {} (--pp × --dp × --ep × --micro-batch), or \
                 --schedule 1f1b",
                u64::try_from(stages)
                    .unwrap_or(1)
                    .saturating_mul(job.global_batch / micro_batches.max(1) as u64)
            ),
        ),
        StepError::Pipeline(PipelineError::NoVirtualStages) => bad(
            format!("`--virtual-stages`: {e}"),
            "give --virtual-stages 2 or more".into(),
        ),
        StepError::DataParallel(DataParallelError::Group(why)) => bad(
            format!("`--dp`: {why}"),
            "lower --dp, or give more --devices or a larger --system".into(),
        ),
        StepError::DataParallel(d) => bad(
            format!("`--dp`: {d}"),
            "lower --dp, or change --zero".into(),
        ),
        StepError::Collective(c) => bad(
            format!("`{}`: {c}", flags.layout),
            "keep the pipeline's stages on linked devices: lower --pp, or give --system with \
             a network (`roofline hardware list --systems`)"
                .into(),
        ),
        other => bad(other.to_string(), "see `roofline train --help`".into()),
    }
}

/// Everything one run of the training flags predicts.
pub(crate) struct Predicted {
    pub model: Transformer,
    pub system: System,
    pub bound: TrainingPrediction,
    pub estimate: TrainingPrediction,
    pub largest_micro_batch: Option<u64>,
    /// Where the estimate's shares come from.
    pub source: String,
}

/// Loads the model and the system, and predicts the step at the bound and at the chip's
/// efficiency with `efficiency`'s shares replacing its own.
pub(crate) fn predict_both(
    model_name: &str,
    flags_in: (Option<&str>, Option<u32>, &str, &str),
    job: &TrainingJob,
    efficiency: Option<&EfficiencyOverride>,
) -> Result<Predicted, CliError> {
    let model = load_model(model_name)?;
    check_layout(&job.layout, &model)?;
    let lay = layout_flags(&job.layout);
    let (system_name, devices, hardware, hardware_default) = flags_in;
    let flags = Flags {
        system: system_name,
        devices,
        hardware,
        hardware_default,
        takes_devices: true,
        layout: &lay,
    };
    let system = system_of(&flags, job.devices())?;
    let source = EfficiencyOverride::source(efficiency, &system.chip);
    let base = system.chip.efficiency();
    let efficiency = efficiency.map_or(base, |o| o.apply(base));
    efficiency.validate().map_err(|e| {
        CliError::bad_input(
            format!("`--efficiency`: {e}"),
            Some("give each share in [0.01, 1]: --efficiency matmul=0.74,network=0.8".into()),
        )
    })?;
    let bound = predict(&model, &system, job, Pricing::Bound)
        .map_err(|e| step_error(e, job, &flags, &system))?;
    let estimate = predict(&model, &system, job, Pricing::Estimate(&efficiency))
        .map_err(|e| step_error(e, job, &flags, &system))?;
    let largest = match (bound.memory.fits(), bound.memory.capacity) {
        (Some(false), Some(capacity)) => {
            job.largest_micro_batch(&model, capacity, bound.micro_batches)
        }
        _ => None,
    };
    Ok(Predicted {
        model,
        system,
        bound,
        estimate,
        source,
        largest_micro_batch: largest,
    })
}

/// Checks a `--plot` path before any work: `.svg` or `.png`, and no file unless `force`.
fn check_plot(path: &Path, force: bool) -> Result<PlotFormat, CliError> {
    let format = PlotFormat::from_path(path).ok_or_else(|| {
        CliError::bad_input(
            format!(
                "`--plot {}`: the waterfall is written as SVG or PNG",
                path.display()
            ),
            Some("end the file name in `.svg` or `.png`".into()),
        )
    })?;
    check_output(path, force, "--plot", "waterfall.svg")?;
    Ok(format)
}

/// Checks an `--html` path before any work: `.html`, and no file unless `force`.
fn check_html(path: &Path, force: bool) -> Result<(), CliError> {
    let html = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("html"));
    if !html {
        return Err(CliError::bad_input(
            format!("`--html {}`: the report is an HTML page", path.display()),
            Some("end the file name in `.html`".into()),
        ));
    }
    check_output(path, force, "--html", "train.html")
}

/// The most tokens `--tokens` takes: 10^18 (a million times the largest published runs).
const MAX_TOKENS: f64 = 1e18;

pub fn run(a: &TrainArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if let Some(t) = a.tokens {
        if t > MAX_TOKENS {
            return Err(CliError::bad_input(
                format!("`--tokens {t:e}` is beyond the {MAX_TOKENS:e} tokens accepted"),
                Some("give the tokens to train, e.g. --tokens 15T or --tokens 3e11".into()),
            ));
        }
    }
    let plot = a
        .plot
        .as_deref()
        .map(|p| check_plot(p, a.force).map(|f| (p, f)))
        .transpose()?;
    if let Some(path) = a.html.as_deref() {
        check_html(path, a.force)?;
    }
    let job = job_of(
        &a.layout,
        a.global_batch,
        a.seq_len,
        a.recompute.into(),
        a.precision,
        a.reserve.memory_reserve,
    )?;
    let p = predict_both(
        &a.model,
        (
            a.system.as_deref(),
            a.devices,
            &a.hardware,
            crate::args::common::DEFAULT_CHIP,
        ),
        &job,
        a.layout.efficiency.as_ref(),
    )?;
    let source = p.source.clone();
    if let Some(t) = a.measured_step {
        let bound = p.bound.step_time.get();
        if t < bound {
            return Err(CliError::bad_input(
                format!(
                    "`--measured-step {t} s` is shorter than the roofline bound of {bound:.4} s: \
                     no step of this job can be that fast"
                ),
                Some(
                    "check the measured step and that the flags describe the run measured \
                     (devices, batch, sequence length, layout)"
                        .into(),
                ),
            ));
        }
    }
    let measured = a
        .measured_step
        .map(|t| p.estimate.waterfall.measured(Seconds(t)));
    let report = TrainReport {
        model: &p.model,
        system: &p.system,
        bound: &p.bound,
        estimate: &p.estimate,
        source: &source,
        tokens: a.tokens,
        measured: measured.as_ref(),
        largest_micro_batch: p.largest_micro_batch,
    };
    let internal = |message: String| CliError {
        kind: Kind::Internal,
        message,
        hint: None,
    };
    if let Some((path, format)) = plot {
        let bytes = render_waterfall(&waterfall_chart(&report), format)
            .map_err(|e| internal(e.to_string()))?;
        write_output(path, a.force, &bytes)?;
    }
    if let Some(path) = a.html.as_deref() {
        let svg =
            render_waterfall_svg(&waterfall_chart(&report)).map_err(|e| internal(e.to_string()))?;
        let page = render_train_html(&TrainHtmlReport {
            report,
            svg: &svg,
            version: env!("CARGO_PKG_VERSION"),
        })
        .map_err(|e| internal(e.to_string()))?;
        write_output(path, a.force, page.as_bytes())?;
    }
    write_train(&report, a.format.format.into(), out)?;
    Ok(())
}

/// Checks, before any output, that `roofline mfu` with training-layout flags has what the
/// predicted waterfall needs: a model, --hardware, --step-time (with --global-batch and
/// --seq-len), a --recompute the step models, and the table format.
pub(crate) fn check_mfu_waterfall(a: &crate::args::MfuArgs) -> Result<(), CliError> {
    let missing = [
        ("MODEL", a.model.is_none()),
        ("--hardware", a.hardware.is_none()),
        ("--step-time", a.step_time.is_none()),
        ("--global-batch", a.global_batch.is_none()),
        ("--seq-len", a.seq_len.is_none()),
    ];
    if let Some((what, _)) = missing.iter().find(|(_, m)| *m) {
        return Err(CliError::bad_input(
            format!(
                "`{what}`: the predicted waterfall (asked for by --tp, --pp, --dp, \
                 --micro-batch, …) needs a model, --hardware and --step-time with \
                 --global-batch and --seq-len"
            ),
            Some(
                "give them all (`roofline mfu llama-3.1-8b --hardware a100-sxm-80gb --devices \
                 8 --step-time 0.9s --global-batch 8 --seq-len 2048 --tp 8`), or drop the \
                 layout flags"
                    .into(),
            ),
        ));
    }
    if matches!(a.recompute, roofline_core::mfu::Recompute::Partial(_)) {
        return Err(CliError::bad_input(
            "`--recompute`: the training step models none, selective or full recomputation, \
             not PaLM's partial scheme",
            Some("give --recompute none, selective or full, or drop the layout flags".into()),
        ));
    }
    if roofline_report::Format::from(a.format.format) != roofline_report::Format::Table {
        return Err(CliError::bad_input(
            "`--format`: `roofline mfu` adds the predicted waterfall to its table only",
            Some(
                "drop --format, or ask `roofline train … --measured-step T --format json` for \
                 the waterfall as JSON"
                    .into(),
            ),
        ));
    }
    let needed = a
        .train
        .layout()
        .devices()
        .saturating_mul(u64::from(a.train.dp.unwrap_or(1)));
    if needed > a.devices {
        return Err(CliError::bad_input(
            format!(
                "`--devices`: the layout needs {needed} devices, --devices gives {}",
                a.devices
            ),
            Some(format!(
                "give --devices {needed} (the devices the measured step ran on; mfu divides by \
                 them), or lower --tp, --pp or --dp"
            )),
        ));
    }
    Ok(())
}

/// `roofline mfu` with training-layout flags: the predicted waterfall against the measured
/// step, below the MFU table ([`check_mfu_waterfall`] has run).
pub(crate) fn mfu_waterfall(
    a: &crate::args::MfuArgs,
    format: roofline_report::Format,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let (Some(model), Some(hardware), Some(step), Some(global_batch), Some(seq_len)) = (
        a.model.as_deref(),
        a.hardware.as_deref(),
        a.step_time,
        a.global_batch,
        a.seq_len,
    ) else {
        return check_mfu_waterfall(a);
    };
    if format != roofline_report::Format::Table {
        return check_mfu_waterfall(a);
    }
    let recompute = match a.recompute {
        roofline_core::mfu::Recompute::Selective => {
            roofline_core::train::memory::Recompute::Selective
        }
        roofline_core::mfu::Recompute::Full => roofline_core::train::memory::Recompute::Full,
        _ => roofline_core::train::memory::Recompute::None,
    };
    let job = job_of(
        &a.train,
        global_batch,
        seq_len,
        recompute,
        a.precision,
        roofline_core::memory::Reserve::DEFAULT,
    )?;
    let devices = u32::try_from(a.devices).map_err(|_| {
        CliError::bad_input(
            format!("`--devices {}`: too many devices", a.devices),
            Some(format!(
                "give at most {} devices",
                roofline_core::comm::system::MAX_DEVICES
            )),
        )
    })?;
    let p = predict_both(
        model,
        (None, Some(devices), hardware, ""),
        &job,
        a.train.efficiency.as_ref(),
    )?;
    if step < p.bound.step_time.get() {
        writeln!(
            out,
            "\nno predicted waterfall: the step time of {step} s is shorter than this layout's \
             roofline bound of {:.4} s, so it cannot be the layout's step",
            p.bound.step_time.get()
        )
        .map_err(roofline_report::WriteError::from)?;
        return Ok(());
    }
    let measured = p.estimate.waterfall.measured(Seconds(step));
    let report = TrainReport {
        model: &p.model,
        system: &p.system,
        bound: &p.bound,
        estimate: &p.estimate,
        source: &p.source,
        tokens: None,
        measured: Some(&measured),
        largest_micro_batch: p.largest_micro_batch,
    };
    writeln!(out).map_err(roofline_report::WriteError::from)?;
    roofline_report::train::write_waterfall_table(&report, out)?;
    Ok(())
}
