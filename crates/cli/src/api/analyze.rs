//! `analyze` as a typed call: [`AnalyzeRequest`] in, the document of `roofline analyze
//! --format json` out ([`AnalyzeDocument`]). The CLI's `analyze` and `report` compute through
//! [`compute`] too, so that every front end prices the same way.

pub use super::request::{AnalyzeRequest, StageChoice};

use super::ApiError;
use crate::args::common::DEFAULT_CHIP;
use crate::commands::analyze_parallel as par;
use roofline_core::analysis::StageAnalysis;
use roofline_core::comm::System;
use roofline_core::device::Device;
use roofline_core::fusion::FusionComparison;
use roofline_core::model::Transformer;
use roofline_core::parallel::{analyze_parallel, ParallelStage};
use roofline_core::serve::advice::StageAdvice;
use roofline_core::workload::Precisions;
use roofline_report::advice::Arg;
use roofline_report::analysis::AnalyzeReport;
use roofline_report::doc::analyze::{AnalyzeDoc, AnalyzeFusionDoc};
use roofline_report::doc::parallel::AnalyzeParallelDoc;
use roofline_report::parallel::ParallelReport;
use schemars::JsonSchema;
use serde::Serialize;

/// The document of an analysis: `analyze`, `analyze --fusion` or `analyze` on many devices
/// (`analyze-parallel`); each serialises as that document (docs/schema/).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum AnalyzeDocument {
    /// One device (with `advice` when asked).
    Analyze(Box<AnalyzeDoc>),
    /// One device with each stage's fusion comparison.
    Fusion(Box<AnalyzeFusionDoc>),
    /// Many devices.
    Parallel(Box<AnalyzeParallelDoc>),
}

impl AnalyzeDocument {
    /// The document as `--format json` writes it: pretty, keys sorted, a final newline.
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        // Writing to memory fails only for a document serde cannot write, which ours are not.
        let _ = roofline_report::doc::write_json(self, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// Analyses `request`: the document `roofline analyze … --format json` writes for the same
/// settings.
///
/// # Errors
/// The CLI's error and hint, with the request's field at fault: an unknown model or chip, a
/// config or chip refused, a workload, precision or layout the model or chip does not take.
pub fn analyze(request: &AnalyzeRequest) -> Result<AnalyzeDocument, ApiError> {
    Ok(compute(request)?.document())
}

/// One device's analysis: the model, the chip and each stage, with the fusion comparison and
/// the advice when asked.
pub(crate) struct Single {
    pub model: Transformer,
    pub device: Device,
    pub precisions: Precisions,
    pub analyses: Vec<StageAnalysis>,
    pub fusion: Option<Vec<FusionComparison>>,
    pub advice: Option<Vec<StageAdvice>>,
    /// The command line analysed, what each "what to change" command starts from.
    pub command: Vec<Arg>,
}

/// The analysis on many devices: the model, the system and each stage under the layout.
pub(crate) struct Parallel {
    pub model: Transformer,
    pub system: System,
    pub analyses: Vec<ParallelStage>,
}

/// What a request computes.
pub(crate) enum Analysis {
    /// On one device.
    Single(Box<Single>),
    /// On many.
    Parallel(Box<Parallel>),
}

impl Analysis {
    /// The JSON document.
    pub(crate) fn document(&self) -> AnalyzeDocument {
        match self {
            Analysis::Single(s) => s.document(),
            Analysis::Parallel(p) => p.document(),
        }
    }
}

impl Single {
    /// The JSON document: `analyze`, with `advice` when asked, or `analyze --fusion`.
    pub(crate) fn document(&self) -> AnalyzeDocument {
        let report = self.report();
        match (&self.fusion, &self.advice) {
            (Some(f), _) => AnalyzeDocument::Fusion(Box::new(AnalyzeDoc::with_fusion(&report, f))),
            (None, Some(a)) => AnalyzeDocument::Analyze(Box::new(AnalyzeDoc::with_advice(
                &report,
                a,
                &self.command,
            ))),
            (None, None) => AnalyzeDocument::Analyze(Box::new(AnalyzeDoc::of(&report))),
        }
    }

    /// What the writers of `roofline_report::analysis` take.
    pub(crate) fn report(&self) -> AnalyzeReport<'_> {
        AnalyzeReport {
            model: &self.model,
            device: &self.device,
            stages: &self.analyses,
        }
    }
}

impl Parallel {
    /// The `analyze-parallel` document.
    pub(crate) fn document(&self) -> AnalyzeDocument {
        AnalyzeDocument::Parallel(Box::new(AnalyzeParallelDoc::of(&self.report())))
    }

    /// What the writers of `roofline_report::parallel` take.
    pub(crate) fn report(&self) -> ParallelReport<'_> {
        ParallelReport {
            model: &self.model,
            system: &self.system,
            stages: &self.analyses,
        }
    }
}

/// Computes `request`: on one device or on many.
pub(crate) fn compute(request: &AnalyzeRequest) -> Result<Analysis, ApiError> {
    if request.is_parallel() {
        for (field, on) in [
            ("fusion", request.fusion.is_some()),
            ("advice", request.advice),
        ] {
            if on {
                return Err(ApiError::new(
                    Some(field),
                    format!(
                        "`--{field}` does not combine with --system, --devices, --tp, --pp, \
                         --ep or --cp yet"
                    ),
                    Some(format!(
                        "drop --{field}, or analyse one device (no parallel flags)"
                    )),
                ));
            }
        }
        return Ok(Analysis::Parallel(Box::new(parallel(request)?)));
    }
    if request.advice && request.fusion.is_some() {
        return Err(ApiError::new(
            Some("advice"),
            "`--advice` does not combine with `--fusion`",
            Some("drop --fusion: --advice prices --fusion max itself and prints the tables".into()),
        ));
    }
    Ok(Analysis::Single(Box::new(single(request)?)))
}

/// The model, chip and stages of a one-device request, without fusion or advice.
pub(crate) fn prepare(request: &AnalyzeRequest) -> Result<Single, ApiError> {
    let model = request.model.load("model")?;
    let mut device = request.hardware.load("hardware")?;
    request.with_launch(&mut device);
    let precisions = request.precisions()?;
    let analyses = request
        .workloads(precisions)
        .iter()
        .map(|w| {
            roofline_core::analysis::analyze(&model, w, &device, request.memory_reserve.0)
                .map_err(|e| ApiError::from_cli(e.into(), None))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Single {
        model,
        device,
        precisions,
        analyses,
        fusion: None,
        advice: None,
        command: super::command::command_args(request),
    })
}

/// A one-device request: [`prepare`], then fusion and advice when asked.
pub(crate) fn single(request: &AnalyzeRequest) -> Result<Single, ApiError> {
    let mut s = prepare(request)?;
    if let Some(preset) = request.fusion {
        let fusion = s
            .analyses
            .iter()
            .map(|a| {
                roofline_core::fusion::compare_preset(
                    &a.graph,
                    preset,
                    s.precisions.act,
                    &s.device,
                    s.device.kernel_launch(),
                )
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                ApiError::from_cli(
                    roofline_core::analysis::AnalysisError::from(e).into(),
                    Some("fusion"),
                )
            })?;
        s.fusion = Some(fusion);
    }
    if request.advice {
        s.advice = Some(roofline_core::serve::advice::advise(
            &s.model,
            &s.analyses,
            &s.device,
            request.memory_reserve.0,
        ));
    }
    Ok(s)
}

/// The model, system and stages of a request on many devices.
pub(crate) fn parallel(request: &AnalyzeRequest) -> Result<Parallel, ApiError> {
    let model = request.model.load("model")?;
    let layout = request.layout();
    par::check_layout(&layout, &model).map_err(|e| ApiError::from_cli(e, None))?;
    let lay = par::layout_flags(&layout);
    let hardware = request.hardware.name();
    let flags = par::Flags {
        system: request.system.as_deref(),
        devices: request.devices,
        hardware: &hardware,
        hardware_default: DEFAULT_CHIP,
        takes_devices: true,
        layout: &lay,
    };
    let precisions = request.precisions()?;
    let workloads = request.workloads(precisions);
    // A layout the workload does not take (context parallelism in decode) names its field
    // before any system is built.
    for w in &workloads {
        if w.validate().is_ok() {
            par::check_workload(&layout, &model, w).map_err(|e| ApiError::from_cli(e, None))?;
        }
    }
    // A system fixes its chip: `hardware` is read only without one.
    let chip = match request.system {
        None => Some(request.hardware.load("hardware")?),
        Some(_) => None,
    };
    let mut system = par::system_with(&flags, chip, layout.devices())
        .map_err(|e| ApiError::from_cli(e, Some("system")))?;
    if let Some(l) = request.launch_overhead {
        system.chip.launch_overhead =
            roofline_core::cited::Cited::new(roofline_core::units::Seconds(l), "--launch-overhead");
    }
    let analyses = workloads
        .iter()
        .map(|w| {
            analyze_parallel(&model, w, &system, layout, request.memory_reserve.0)
                .map_err(|e| par::parallel_error(e, &flags, &system))
                .map_err(|e| ApiError::from_cli(e, None))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Parallel {
        model,
        system,
        analyses,
    })
}

/// The derivation of `operator` in each stage of a one-device `request`, as `roofline analyze
/// … --explain OPERATOR` writes it in `format` (JSON or the text).
///
/// # Errors
/// A request on many devices or with `advice` (as the CLI refuses them), an analysis that
/// fails, or an operator the model does not have.
pub(crate) fn explain(
    request: &AnalyzeRequest,
    operator: &str,
    format: roofline_report::Format,
    out: &mut dyn std::io::Write,
) -> Result<(), ApiError> {
    if request.is_parallel() {
        return Err(ApiError::new(
            Some("operator"),
            "`--explain` does not combine with --system, --devices, --tp, --pp, --ep or --cp yet",
            Some("drop --explain, or analyse one device (no parallel flags)".into()),
        ));
    }
    if request.advice {
        return Err(ApiError::new(
            Some("advice"),
            "`--advice` does not combine with `--explain`",
            Some(
                "drop --explain: --advice prices --fusion max itself and prints the tables".into(),
            ),
        ));
    }
    let s = single(request)?;
    crate::commands::plot::explain_analysis(operator, &s.model, &s.device, &s.analyses, format, out)
        .map_err(|e| ApiError::from_cli(e, Some("operator")))
}
