//! `roofline mfu` and `roofline mbu`: flags into an MFU or MBU question, answered by
//! `roofline_core::{mfu, mbu}`, rendered by `roofline_report::mfu`.

use crate::args::{MbuArgs, MfuArgs};
use crate::error::CliError;
use roofline_core::device::Device;
use roofline_core::mbu::{mbu, Accelerators, DecodeStep, Pace};
use roofline_core::mfu::{
    mfu_by_size, mfu_report, reported_mfu, Cluster, Conventions, MfuError, MfuQuery, ScoreMask,
    TrainingShape, Work,
};
use roofline_core::units::{BytesPerSec, FlopPerSec, Seconds};
use roofline_core::workload::Precisions;
use roofline_inputs::config::load_model;
use roofline_inputs::hardware::find_device;
use roofline_report::mfu::{
    write_mbu, write_mfu, write_mfu_by_size, write_mfu_reported, ChipLine, MbuView, MfuView,
};
use std::io::Write;

/// The core's error with the flag that sets its quantity (`tokens_per_s` → `--tokens-per-s`;
/// `model` is the positional MODEL).
fn mfu_error(e: MfuError, command: &str) -> CliError {
    let name = match e.quantity {
        "model" => "MODEL".to_string(),
        q => crate::error::flag(q),
    };
    CliError::bad_input(
        format!("`{name}`: {}", e.message),
        Some(format!("see `roofline {command} --help`")),
    )
}

/// The dense peak of one device: `--peak`, else the chip's for the precision. A `--peak` above
/// the chip's dense peak (a 2:4-sparse datasheet figure) is refused unless `allow_sparse`.
fn resolve_peak(
    device: Option<&Device>,
    peak: Option<f64>,
    precision: roofline_core::precision::Precision,
    allow_sparse: bool,
) -> Result<Option<FlopPerSec>, CliError> {
    match (peak, device) {
        (Some(p), Some(d)) if !allow_sparse => match d.peak(precision) {
            Ok(dense) if p > dense.get() * (1.0 + 1e-9) => Err(CliError::bad_input(
                format!(
                    "`--peak` {p:e} FLOP/s is above the {} dense {precision} peak, {:e} FLOP/s \
                     (a 2:4-sparse datasheet figure?); MFU is measured against the dense peak",
                    d.name,
                    dense.get()
                ),
                Some(format!(
                    "give --peak {:e} (or leave --peak out), or add --allow-sparse-peak to keep it",
                    dense.get()
                )),
            )),
            _ => Ok(Some(FlopPerSec(p))),
        },
        (Some(p), _) => Ok(Some(FlopPerSec(p))),
        (None, Some(d)) => Ok(Some(d.peak(precision).map_err(|e| {
            CliError::bad_input(
                e.to_string(),
                Some("choose a --precision the chip has, or give --peak FLOP/s".into()),
            )
        })?)),
        (None, None) => Ok(None),
    }
}

/// The work done, from the flags that describe it.
fn work_of(a: &MfuArgs) -> Option<Work> {
    if let Some(t) = a.tokens_per_s {
        Some(Work::TokensPerSecond(t))
    } else if let Some(f) = a.achieved_flops {
        Some(Work::FlopsPerDevice(FlopPerSec(f)))
    } else if let (Some(tokens), Some(time)) = (a.tokens, a.time) {
        Some(Work::Tokens {
            tokens,
            time: Seconds(time),
        })
    } else if let (Some(step), Some(b), Some(s)) = (a.step_time, a.global_batch, a.seq_len) {
        Some(Work::Steps {
            step_time: Seconds(step),
            global_batch: b,
            seq_len: s,
        })
    } else {
        None
    }
}

pub fn run_mfu(a: &MfuArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if a.train.any() {
        super::train::check_mfu_waterfall(a)?;
    }
    let target_mfu = a.target_mfu().map_err(|e| {
        CliError::bad_input(
            format!("`--target-mfu`: {e}"),
            Some("--target-mfu takes a percent: `--target-mfu 45` is 45 %".into()),
        )
    })?;
    let conventions = Conventions {
        mask: if a.no_causal {
            ScoreMask::Full
        } else {
            ScoreMask::Causal
        },
        palm_embedding: a.palm_embedding,
    };
    let device = a.hardware.as_deref().map(find_device).transpose()?;
    let peak = resolve_peak(device.as_ref(), a.peak, a.precision, a.allow_sparse_peak)?
        .ok_or_else(|| {
            CliError::bad_input(
                "`roofline mfu` needs the peak the MFU is measured against",
                Some("give --hardware ID (its dense peak for --precision) or --peak FLOP/s".into()),
            )
        })?;
    let chip = ChipLine {
        id: device.as_ref().map(|d| d.id.as_str()),
        name: device.as_ref().map(|d| d.name.as_str()),
        precision: a.precision,
        devices: a.devices,
        peak,
        peak_overridden: a.peak.is_some(),
    };
    let cluster = Cluster {
        devices: a.devices,
        peak,
    };
    let work = work_of(a);
    let format = a.format.format.into();
    let model = match (&a.model, a.params) {
        (Some(_), Some(_)) => return Err(CliError::bad_input(
            "give a model or --params, not both",
            Some(
                "a preset or config.json sets N; --params is for a model known only by its size"
                    .into(),
            ),
        )),
        (Some(m), None) => Some(load_model(m)?),
        (None, _) => None,
    };
    let shape = match (&model, a.params) {
        (Some(m), _) => TrainingShape::of_model(m, a.seq_len),
        (None, Some(n)) => TrainingShape {
            params: n,
            active_params: a.active_params.unwrap_or(n),
            embedding_params: a.vocab.zip(a.hidden).map(|(v, h)| (v * h) as f64),
            lookup_params: None,
            block: None,
            layers: a.layers,
            hidden: a.hidden,
            attention_width: a.heads.zip(a.head_dim).map(|(h, q)| h * q),
            vocab: a.vocab,
            seq_len: a.seq_len,
        },
        (None, None) => {
            // A reported FLOP/s per device: the MFU needs no model.
            if let Some(Work::FlopsPerDevice(f)) = work {
                let r = reported_mfu(f, &cluster).map_err(|e| mfu_error(e, "mfu"))?;
                write_mfu_reported(&r, &chip, format, out)?;
                return Ok(());
            }
            // No model size: the MFU as a function of N.
            let work = work.ok_or_else(|| {
                CliError::bad_input(
                    "`roofline mfu` without a model or --params needs the work done, to print the MFU as a function of N",
                    Some("give --tokens with --time, --tokens-per-s, or --step-time with --global-batch and --seq-len".into()),
                )
            })?;
            let s = mfu_by_size(&a.sizes, &work, &cluster, target_mfu)
                .map_err(|e| mfu_error(e, "mfu"))?;
            write_mfu_by_size(&s, &chip, &work, format, out)?;
            return Ok(());
        }
    };
    if work.is_none() && a.tokens.is_none() {
        return Err(CliError::bad_input(
            "`roofline mfu` needs the work done (for the MFU) or a token count (for the time to train it)",
            Some("give --tokens with --time, --tokens-per-s, or --step-time with --global-batch and --seq-len; or --tokens alone with --target-mfu".into()),
        ));
    }
    let report = mfu_report(&MfuQuery {
        shape,
        model: model.as_ref(),
        work,
        train_tokens: a.tokens,
        cluster,
        recompute: a.recompute,
        target_mfu,
        conventions,
    })
    .map_err(|e| mfu_error(e, "mfu"))?;
    let view = MfuView {
        model_name: model.as_ref().map(|m| m.name.as_str()),
        shape: &shape,
        chip,
        recompute: a.recompute,
        work,
        train_tokens: a.tokens,
        target_mfu,
        conventions,
        report: &report,
    };
    write_mfu(&view, format, out)?;
    if a.train.any() {
        super::train::mfu_waterfall(a, format, out)?;
    }
    Ok(())
}

pub fn run_mbu(a: &MbuArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let device = a.hardware.as_deref().map(find_device).transpose()?;
    let precisions = Precisions::new(
        a.weight_precision.unwrap_or(a.precision),
        a.precision,
        a.kv_precision.unwrap_or(a.precision),
    );
    let bandwidth = match (a.bandwidth, &device) {
        (Some(b), _) => BytesPerSec(b),
        (None, Some(d)) => d
            .bandwidth()
            .map_err(|e| CliError::bad_input(e.to_string(), Some("give --bandwidth B/s".into())))?,
        (None, None) => {
            return Err(CliError::bad_input(
                "`roofline mbu` needs the peak bandwidth the MBU is measured against",
                Some("give --hardware ID or --bandwidth B/s (`2e12` for 2 TB/s)".into()),
            ))
        }
    };
    // The MFU of the step is optional: only when a peak is known.
    let peak = resolve_peak(device.as_ref(), a.peak, precisions.act, a.allow_sparse_peak).or_else(
        |e| {
            if a.peak.is_none() {
                Ok(None)
            } else {
                Err(e)
            }
        },
    )?;
    let pace = match (a.tpot, a.tokens_per_s) {
        (Some(t), _) => Pace::TimePerToken(Seconds(t)),
        (None, Some(r)) => Pace::TokensPerSecond(r),
        (None, None) => {
            return Err(CliError::bad_input(
                "`roofline mbu` needs the measured speed",
                Some("give --tpot (time per output token, e.g. 14ms) or --tokens-per-s".into()),
            ))
        }
    };
    let (model, step) = match (&a.model, a.params) {
        (Some(_), Some(_)) => {
            return Err(CliError::bad_input(
                "give a model or --params, not both",
                Some("a preset or config.json sets N and the KV cache; --params is for a model known only by its size".into()),
            ))
        }
        (Some(m), None) => {
            let m = load_model(m)?;
            let step = DecodeStep::of_model(&m, a.batch, a.context, precisions)?;
            (Some(m), step)
        }
        (None, Some(n)) => (
            None,
            DecodeStep::of_params(n, a.batch, precisions.weight.bytes()),
        ),
        (None, None) => {
            return Err(CliError::bad_input(
                "`roofline mbu` needs the model",
                Some("give a preset or config.json (`llama-2-7b`), or --params N".into()),
            ))
        }
    };
    let result = mbu(
        &step,
        pace,
        &Accelerators {
            devices: a.devices,
            bandwidth,
            peak,
        },
    )
    .map_err(|e| mfu_error(e, "mbu"))?;
    let view = MbuView {
        model_name: model.as_ref().map(|m| m.name.as_str()),
        params: model
            .as_ref()
            .map(|m| m.parameters() as f64)
            .or(a.params)
            .unwrap_or(0.0),
        context: a.context,
        weight_precision: precisions.weight,
        kv_precision: precisions.kv,
        chip: device.as_ref().map(|d| d.id.as_str()),
        mbu: &result,
    };
    write_mbu(&view, a.format.format.into(), out)?;
    Ok(())
}
