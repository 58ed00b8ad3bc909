//! `analyze` as a typed call: [`AnalyzeRequest`] in, the document of `roofline analyze
//! --format json` out ([`AnalyzeDocument`]). The CLI's `analyze` and `report` compute through
//! [`compute`] too, so that every front end prices the same way.

use super::de::{self, MemoryReserve};
use super::inputs::{ChipInput, ModelInput};

use super::{at, ApiError};
use crate::args::common::DEFAULT_CHIP;
use crate::commands::analyze_parallel as par;
use roofline_core::analysis::StageAnalysis;
use roofline_core::comm::System;
use roofline_core::device::Device;
use roofline_core::fusion::{FusionComparison, Preset};
use roofline_core::model::Transformer;
use roofline_core::parallel::{analyze_parallel, Layout, ParallelStage};
use roofline_core::precision::Precision;
use roofline_core::serve::advice::StageAdvice;
use roofline_core::workload::{Logits, Precisions, Stage, Workload};
use roofline_report::advice::Arg;
use roofline_report::analysis::AnalyzeReport;
use roofline_report::doc::analyze::{AnalyzeDoc, AnalyzeFusionDoc};
use roofline_report::doc::parallel::AnalyzeParallelDoc;
use roofline_report::parallel::ParallelReport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The stages to analyse.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StageChoice {
    /// The prompt's forward pass.
    Prefill,
    /// One decode step.
    Decode,
    /// Prefill, then decode.
    #[default]
    Both,
}

impl StageChoice {
    /// The stages, in order.
    pub fn stages(self) -> &'static [Stage] {
        match self {
            StageChoice::Prefill => &[Stage::Prefill],
            StageChoice::Decode => &[Stage::Decode],
            StageChoice::Both => &[Stage::Prefill, Stage::Decode],
        }
    }
}

/// What `roofline analyze` takes, each field its flag (`seq_len` is `--seq-len`) with the
/// flag's default; the output flags (`--format`, `--plot`, `--explain`, `--profile`) are the
/// front end's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AnalyzeRequest {
    /// A preset id, a path to a config.json (or a folder holding one), or a config.json object.
    pub model: ModelInput,
    /// A chip id, a chip file's path, or a chip object (the catalog's TOML schema as JSON).
    pub hardware: ChipInput,
    /// A system of many chips (an id or a system file); its chip replaces `hardware`.
    pub system: Option<String>,
    /// Which stages to analyse.
    pub stage: StageChoice,
    /// Sequences processed together.
    pub batch: u64,
    /// Prefill: prompt tokens per sequence.
    pub seq_len: u64,
    /// Decode: tokens already in the KV cache per sequence.
    pub context: u64,
    /// Precision of weights, activations and KV cache.
    #[serde(deserialize_with = "de::precision")]
    pub precision: Precision,
    /// Weight precision, overriding `precision`.
    #[serde(deserialize_with = "de::opt_precision")]
    pub weight_precision: Option<Precision>,
    /// KV-cache precision, overriding `precision`.
    #[serde(deserialize_with = "de::opt_precision")]
    pub kv_precision: Option<Precision>,
    /// Group-wise weight quantization: weights per scale (GPTQ/AWQ use 128).
    pub group_size: Option<u64>,
    /// Precision of each group's scale.
    #[serde(deserialize_with = "de::precision")]
    pub scale_precision: Precision,
    /// Precision of each group's zero point (asymmetric quantization).
    #[serde(deserialize_with = "de::opt_precision")]
    pub zero_point_precision: Option<Precision>,
    /// W8A8: weights and GEMM inputs in int8, GEMMs at the int8 peak.
    pub w8a8: bool,
    /// Attention as one fused FlashAttention kernel (`false`: QKᵀ, softmax, S·V apart).
    pub flash_attention: bool,
    /// Prefill: the positions lm_head computes logits for (`last` or `all`).
    pub logits: Logits,
    /// Memory the runtime keeps for itself: a share (`"10%"`) or a size (`"2GB"`).
    pub memory_reserve: MemoryReserve,
    /// Devices of `hardware` in its default node (default: tp × pp × ep × cp).
    #[serde(deserialize_with = "de::opt_degree")]
    pub devices: Option<u32>,
    /// Tensor-parallel degree.
    #[serde(deserialize_with = "de::degree")]
    pub tp: u32,
    /// Pipeline-parallel degree.
    #[serde(deserialize_with = "de::degree")]
    pub pp: u32,
    /// Sequence parallelism (with `tp`).
    pub sequence_parallel: bool,
    /// Expert-parallel degree (mixtures of experts).
    #[serde(deserialize_with = "de::degree")]
    pub ep: u32,
    /// Routing skew under `ep`: the busiest device's routed tokens over the mean.
    pub expert_imbalance: f64,
    /// Context-parallel degree (prefill, ring attention).
    #[serde(deserialize_with = "de::degree")]
    pub cp: u32,
    /// Also report kernel fusion: `eager`, `compiled` or `max`, before and after.
    #[serde(deserialize_with = "de::opt_preset")]
    pub fusion: Option<Preset>,
    /// Also rank what to change, per stage.
    pub advice: bool,
    /// Launch overhead per kernel, overriding the chip's: seconds, or `"7us"`.
    #[serde(deserialize_with = "de::opt_duration")]
    #[schemars(schema_with = "de::duration_schema")]
    pub launch_overhead: Option<f64>,
}

impl Default for AnalyzeRequest {
    /// The defaults of `roofline analyze`'s flags.
    fn default() -> Self {
        AnalyzeRequest {
            model: ModelInput::Id("llama-2-7b".into()),
            hardware: ChipInput::Id(DEFAULT_CHIP.into()),
            system: None,
            stage: StageChoice::Both,
            batch: 1,
            seq_len: 2048,
            context: 2048,
            precision: Precision::Bf16,
            weight_precision: None,
            kv_precision: None,
            group_size: None,
            scale_precision: Precision::Fp16,
            zero_point_precision: None,
            w8a8: false,
            flash_attention: true,
            logits: Logits::Last,
            memory_reserve: MemoryReserve::default(),
            devices: None,
            tp: 1,
            pp: 1,
            sequence_parallel: false,
            ep: 1,
            expert_imbalance: 1.0,
            cp: 1,
            fusion: None,
            advice: false,
            launch_overhead: None,
        }
    }
}

impl AnalyzeRequest {
    /// Whether the request runs the model on many devices (a system, devices, a degree above
    /// 1, sequence parallelism or a routing skew): the `analyze-parallel` document.
    pub fn is_parallel(&self) -> bool {
        self.system.is_some()
            || self.devices.is_some()
            || self.tp > 1
            || self.pp > 1
            || self.ep > 1
            || self.cp > 1
            || self.sequence_parallel
            || self.expert_imbalance != 1.0
    }

    /// The parallel layout.
    pub fn layout(&self) -> Layout {
        Layout {
            tp: self.tp,
            pp: self.pp,
            sequence_parallel: self.sequence_parallel,
            ep: self.ep,
            expert_imbalance: self.expert_imbalance,
            cp: self.cp,
        }
    }

    /// The precisions of the workload.
    fn precisions(&self) -> Result<Precisions, ApiError> {
        crate::commands::analyze::precisions_of(&crate::args::PrecisionArgs {
            precision: self.precision,
            weight_precision: self.weight_precision,
            kv_precision: self.kv_precision,
            group_size: self.group_size,
            scale_precision: self.scale_precision,
            zero_point_precision: self.zero_point_precision,
            w8a8: self.w8a8,
        })
        .map_err(at("group_size"))
    }

    /// The workload of each stage asked for.
    fn workloads(&self, precisions: Precisions) -> Vec<Workload> {
        self.stage
            .stages()
            .iter()
            .map(|&stage| {
                Workload::new(stage, self.batch, self.seq_len, self.context)
                    .with_precisions(precisions)
                    .flash_attention(self.flash_attention)
                    .with_logits(self.logits)
            })
            .collect()
    }

    /// `device` with the request's launch overhead, if it gives one.
    fn with_launch(&self, device: &mut Device) {
        if let Some(l) = self.launch_overhead {
            device.launch_overhead = roofline_core::cited::Cited::new(
                roofline_core::units::Seconds(l),
                "--launch-overhead",
            );
        }
    }
}

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
