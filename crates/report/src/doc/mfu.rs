//! `roofline mfu` (per formula, or as a function of N) and `roofline mbu`. Utilisations are
//! fractions (`0.462` is 46.2 %).

use super::SchemaVersion;
use crate::mfu::{ChipLine, MbuView, MfuView};
use roofline_core::mfu::{
    Conventions, Formula, PalmEmbedding, Rating, ReportedMfu, ScoreMask, SizeSweep, TrainingShape,
    Work,
};
use roofline_core::precision::Precision;
use schemars::JsonSchema;
use serde::Serialize;

/// The `command` of an MFU document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MfuCommand {
    /// `roofline mfu`.
    Mfu,
}

/// The `command` of an MBU document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MbuCommand {
    /// `roofline mbu`.
    Mbu,
}

/// The `mode` of the MFU-by-size document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BySizeMode {
    /// MFU as a function of the parameter count N.
    BySize,
}

/// The `mode` of the document of an MFU from a reported FLOP/s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReportedMode {
    /// MFU = reported FLOP/s per device ÷ dense peak, no model.
    Reported,
}

/// `roofline mfu --achieved-flops F` without a model: MFU = F ÷ the dense peak.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MfuReportedDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// Always `mfu`.
    pub command: MfuCommand,
    /// Always `reported`.
    pub mode: ReportedMode,
    /// The devices.
    pub hardware: ChipDoc,
    /// The reported model FLOP/s of one device.
    pub achieved_flops_per_s_per_device: f64,
    /// achieved ÷ dense peak, fraction.
    pub mfu: f64,
    /// The rating of the MFU.
    pub rating: Rating,
}

impl MfuReportedDoc {
    /// The document of `r` on `chip`.
    pub fn of(r: &ReportedMfu, chip: &ChipLine<'_>) -> Self {
        MfuReportedDoc {
            schema_version: SchemaVersion,
            command: MfuCommand::Mfu,
            mode: ReportedMode::Reported,
            hardware: ChipDoc::of(chip),
            achieved_flops_per_s_per_device: r.achieved_per_device.get(),
            mfu: r.mfu,
            rating: r.rating,
        }
    }
}

/// The formula of the MFU-by-size document: 6N only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KaplanOnly {
    /// 6N (Kaplan et al. 2020).
    Kaplan,
}

/// The devices an MFU is measured on.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ChipDoc {
    /// Chip id, or `null` when only `--peak` was given.
    pub id: Option<String>,
    /// Full chip name.
    pub name: Option<String>,
    /// Precision whose dense peak applies.
    pub precision: Precision,
    /// Devices.
    pub devices: u64,
    /// Dense peak of one device, FLOP/s.
    pub peak_flops_per_s: f64,
    /// Devices × peak, FLOP/s.
    pub total_peak_flops_per_s: f64,
    /// Whether `--peak` overrode the catalog.
    pub peak_overridden: bool,
}

impl ChipDoc {
    /// The chip object of `c`.
    pub fn of(c: &ChipLine<'_>) -> Self {
        ChipDoc {
            id: c.id.map(str::to_string),
            name: c.name.map(str::to_string),
            precision: c.precision,
            devices: c.devices,
            peak_flops_per_s: c.peak.get(),
            total_peak_flops_per_s: c.peak.get() * c.devices as f64,
            peak_overridden: c.peak_overridden,
        }
    }
}

/// The work measured, as given, and the throughput it means.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WorkDoc {
    /// Tokens per second, all devices.
    pub tokens_per_s: Option<f64>,
    /// Tokens per second per device.
    pub tokens_per_s_per_device: Option<f64>,
    /// Tokens processed (`--tokens` with `--time`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<f64>,
    /// The time they took, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_s: Option<f64>,
    /// Time of one step, seconds (`--step-time`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_time_s: Option<f64>,
    /// Sequences per step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_batch: Option<u64>,
    /// Tokens per sequence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq_len: Option<u64>,
    /// Achieved model FLOP/s per device as reported (`--achieved-flops`); `tokens_per_s` is then
    /// `null` and each formula gives the tokens/s it implies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub achieved_flops_per_s_per_device: Option<f64>,
}

impl WorkDoc {
    /// The work object of `work` at `tokens_per_s` on `devices`; `None` without work.
    pub fn of(work: &Option<Work>, tokens_per_s: Option<f64>, devices: u64) -> Option<Self> {
        let w = work.as_ref()?;
        let mut d = WorkDoc {
            tokens_per_s,
            tokens_per_s_per_device: tokens_per_s.map(|t| t / devices as f64),
            tokens: None,
            time_s: None,
            step_time_s: None,
            global_batch: None,
            seq_len: None,
            achieved_flops_per_s_per_device: None,
        };
        match *w {
            Work::TokensPerSecond(_) => {}
            Work::FlopsPerDevice(f) => d.achieved_flops_per_s_per_device = Some(f.get()),
            Work::Tokens { tokens, time } => {
                d.tokens = Some(tokens);
                d.time_s = Some(time.get());
            }
            Work::Steps {
                step_time,
                global_batch,
                seq_len,
            } => {
                d.step_time_s = Some(step_time.get());
                d.global_batch = Some(global_batch);
                d.seq_len = Some(seq_len);
            }
        }
        Some(d)
    }
}

/// What is known of the model's shape.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TrainingModelDoc {
    /// Model name, when a preset or config was given.
    pub name: Option<String>,
    /// Parameters, every one (a mixture of experts: all its experts).
    pub parameters: f64,
    /// Active parameters: those a token uses (a mixture of experts: its k routed experts);
    /// equal to `parameters` for a dense model. The formulas count these.
    pub active_parameters: f64,
    /// Active parameters less the embeddings (all of them when the embeddings are unknown):
    /// Kaplan's N.
    pub active_non_embedding_parameters: f64,
    /// PaLM's N under `conventions.palm_embedding`.
    pub palm_parameters: f64,
    /// Layers L.
    pub layers: Option<u64>,
    /// Hidden size h.
    pub hidden: Option<u64>,
    /// Attention width (heads × head dim).
    pub attention_width: Option<u64>,
    /// Vocabulary V.
    pub vocab: Option<u64>,
    /// Sequence length s.
    pub seq_len: Option<u64>,
}

/// How the formulas were counted.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ConventionsDoc {
    /// `causal` (T²/2 scores per head, FlashAttention's and Megatron-LM's count, the diagonal
    /// counted half) or `full` (every T×T score, as PaLM and Narayanan et al. 2021 count).
    pub attention_mask: ScoreMask,
    /// What PaLM's N holds: `output` (not an untied input embedding or position table, which are
    /// looked up) or `all` (every parameter).
    pub palm_embedding: PalmEmbedding,
}

/// Forward FLOPs per token, split.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ForwardSplitDoc {
    /// The blocks' matrix multiplies.
    pub blocks: f64,
    /// Attention scores and values.
    pub attention: f64,
    /// The LM head.
    pub head: f64,
}

/// One formula's answer.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FormulaDoc {
    /// The formula.
    pub formula: Formula,
    /// Its label in tables.
    pub label: &'static str,
    /// Forward FLOPs per token.
    pub forward_flops_per_token: ForwardSplitDoc,
    /// Forward + backward FLOPs per token.
    pub model_flops_per_token: f64,
    /// Global tokens per second (with `--achieved-flops`, those this formula implies); `null`
    /// without work.
    pub tokens_per_s: Option<f64>,
    /// Model FLOPs + recomputation per token.
    pub hardware_flops_per_token: f64,
    /// Achieved model FLOP/s per device; `null` without work.
    pub achieved_flops_per_s_per_device: Option<f64>,
    /// Achieved hardware FLOP/s per device.
    pub hardware_flops_per_s_per_device: Option<f64>,
    /// Model FLOPs utilisation, fraction.
    pub mfu: Option<f64>,
    /// Hardware FLOPs utilisation, fraction.
    pub hfu: Option<f64>,
    /// The rating of the MFU.
    pub rating: Option<Rating>,
    /// Time to train `train_tokens` at `target_mfu`, seconds.
    pub time_to_train_at_target_s: Option<f64>,
}

/// A formula that could not be computed.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MissingDoc {
    /// The formula.
    pub formula: Formula,
    /// What it needs.
    pub needs: &'static str,
}

/// A formula left out because it does not describe the model.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NotValidDoc {
    /// The formula.
    pub formula: Formula,
    /// Why not (`grouped-query attention (8 KV heads for 32 query heads; …)`).
    pub reason: String,
}

/// `roofline mfu`: MFU and HFU per formula, time to train.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MfuDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// Always `mfu`.
    pub command: MfuCommand,
    /// The model.
    pub model: TrainingModelDoc,
    /// The devices.
    pub hardware: ChipDoc,
    /// Recomputation (`none`, `selective`, `full`).
    pub recompute: String,
    /// The counting conventions used.
    pub conventions: ConventionsDoc,
    /// The work; `null` when none was given.
    pub work: Option<WorkDoc>,
    /// Tokens to train for the time-to-train question.
    pub train_tokens: Option<f64>,
    /// Target MFU, fraction.
    pub target_mfu: f64,
    /// One per formula computed.
    pub formulas: Vec<FormulaDoc>,
    /// Formulas not computed for a missing input, and what they need.
    pub missing: Vec<MissingDoc>,
    /// Formulas not computed because they do not describe the model, and why.
    pub not_valid: Vec<NotValidDoc>,
}

fn model_doc(name: Option<&str>, s: &TrainingShape, c: Conventions) -> TrainingModelDoc {
    TrainingModelDoc {
        name: name.map(str::to_string),
        parameters: s.params,
        active_parameters: s.active_params,
        active_non_embedding_parameters: s.non_embedding_params(),
        palm_parameters: s.palm_params(c.palm_embedding).0,
        layers: s.layers,
        hidden: s.hidden,
        attention_width: s.attention_width,
        vocab: s.vocab,
        seq_len: s.seq_len,
    }
}

impl MfuDoc {
    /// The document of `v`.
    pub fn of(v: &MfuView<'_>) -> Self {
        let r = v.report;
        MfuDoc {
            schema_version: SchemaVersion,
            command: MfuCommand::Mfu,
            model: model_doc(v.model_name, v.shape, v.conventions),
            hardware: ChipDoc::of(&v.chip),
            recompute: v.recompute.to_string(),
            conventions: ConventionsDoc {
                attention_mask: v.conventions.mask,
                palm_embedding: v.conventions.palm_embedding,
            },
            work: WorkDoc::of(&v.work, r.tokens_per_s, v.chip.devices),
            train_tokens: v.train_tokens,
            target_mfu: v.target_mfu,
            formulas: r
                .rows
                .iter()
                .map(|row| {
                    let u = row.utilization;
                    FormulaDoc {
                        formula: row.formula,
                        label: row.formula.label(),
                        forward_flops_per_token: ForwardSplitDoc {
                            blocks: row.split.blocks.get(),
                            attention: row.split.attention.get(),
                            head: row.split.head.get(),
                        },
                        model_flops_per_token: row.model_flops_per_token.get(),
                        tokens_per_s: u.map(|u| u.tokens_per_s),
                        hardware_flops_per_token: row.hardware_flops_per_token.get(),
                        achieved_flops_per_s_per_device: u.map(|u| u.achieved_per_device.get()),
                        hardware_flops_per_s_per_device: u.map(|u| u.hardware_per_device.get()),
                        mfu: u.map(|u| u.mfu),
                        hfu: u.map(|u| u.hfu),
                        rating: u.map(|u| u.rating),
                        time_to_train_at_target_s: row.time_at_target.map(|t| t.get()),
                    }
                })
                .collect(),
            missing: r
                .missing
                .iter()
                .map(|(f, needs)| MissingDoc { formula: *f, needs })
                .collect(),
            not_valid: r
                .not_valid
                .iter()
                .map(|(f, why)| NotValidDoc {
                    formula: *f,
                    reason: why.clone(),
                })
                .collect(),
        }
    }
}

/// One parameter count of the MFU-by-size table.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SizeDoc {
    /// Parameters N.
    pub parameters: f64,
    /// 6N, FLOP per token.
    pub model_flops_per_token: f64,
    /// MFU at the measured throughput, fraction.
    pub mfu: f64,
    /// Its rating.
    pub rating: Rating,
}

/// `roofline mfu` without a model: MFU as a function of N (6N) at the measured throughput.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MfuBySizeDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// Always `mfu`.
    pub command: MfuCommand,
    /// Always `by_size`.
    pub mode: BySizeMode,
    /// Always `kaplan` (6N).
    pub formula: KaplanOnly,
    /// The devices.
    pub hardware: ChipDoc,
    /// The work.
    pub work: Option<WorkDoc>,
    /// One per parameter count.
    pub sizes: Vec<SizeDoc>,
    /// Target MFU, fraction.
    pub target_mfu: f64,
    /// N at which the target MFU is reached.
    pub parameters_for_target: f64,
}

impl MfuBySizeDoc {
    /// The document of `s` on `chip` for `work`.
    pub fn of(s: &SizeSweep, chip: &ChipLine<'_>, work: &Work) -> Self {
        MfuBySizeDoc {
            schema_version: SchemaVersion,
            command: MfuCommand::Mfu,
            mode: BySizeMode::BySize,
            formula: KaplanOnly::Kaplan,
            hardware: ChipDoc::of(chip),
            work: WorkDoc::of(&Some(*work), Some(s.tokens_per_s), chip.devices),
            sizes: s
                .rows
                .iter()
                .map(|r| SizeDoc {
                    parameters: r.params,
                    model_flops_per_token: r.flops_per_token.get(),
                    mfu: r.mfu,
                    rating: r.rating,
                })
                .collect(),
            target_mfu: s.target_mfu,
            parameters_for_target: s.params_for_target,
        }
    }
}

/// The model of an MBU document.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MbuModelDoc {
    /// Model name, or `null` with `--params` only.
    pub name: Option<String>,
    /// Parameters.
    pub parameters: f64,
}

/// `roofline mbu`: a measured decode step's bandwidth and FLOP utilisation.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MbuDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// Always `mbu`.
    pub command: MbuCommand,
    /// The model.
    pub model: MbuModelDoc,
    /// Sequences.
    pub batch: u64,
    /// Cached tokens per sequence.
    pub context: u64,
    /// Weight precision.
    pub weight_precision: Precision,
    /// KV-cache precision.
    pub kv_precision: Precision,
    /// Chip id, when from the catalog.
    pub hardware: Option<String>,
    /// Measured time per output token, seconds.
    pub time_per_token_s: f64,
    /// Tokens per second, all sequences.
    pub tokens_per_s: f64,
    /// Weights read per step, bytes.
    pub weights_bytes: f64,
    /// KV cache read per step, bytes.
    pub kv_cache_bytes: f64,
    /// Weights + KV cache, bytes.
    pub bytes_per_step: f64,
    /// Bytes per step ÷ time per token, B/s.
    pub achieved_bandwidth_bytes_per_s: f64,
    /// The chip's peak bandwidth, B/s.
    pub peak_bandwidth_bytes_per_s: f64,
    /// Model bandwidth utilisation, fraction.
    pub mbu: f64,
    /// FLOPs per step.
    pub flops_per_step: f64,
    /// FLOPs per step ÷ time per token, FLOP/s.
    pub achieved_flops_per_s: f64,
    /// The chip's dense peak, FLOP/s, where known.
    pub peak_flops_per_s: Option<f64>,
    /// Model FLOPs utilisation, fraction, where the peak is known.
    pub mfu: Option<f64>,
    /// Bytes ÷ peak bandwidth, seconds: the fastest a token can come.
    pub floor_time_per_token_s: f64,
    /// The utilisations above 100 % (`MBU`, `MFU`), which no measurement can reach: an input is
    /// wrong. Empty when both are possible.
    pub impossible: Vec<String>,
}

impl MbuDoc {
    /// The document of `v`.
    pub fn of(v: &MbuView<'_>) -> Self {
        let m = v.mbu;
        let s = &m.step;
        MbuDoc {
            schema_version: SchemaVersion,
            command: MbuCommand::Mbu,
            model: MbuModelDoc {
                name: v.model_name.map(str::to_string),
                parameters: v.params,
            },
            batch: s.batch,
            context: v.context,
            weight_precision: v.weight_precision,
            kv_precision: v.kv_precision,
            hardware: v.chip.map(str::to_string),
            time_per_token_s: m.time_per_token.get(),
            tokens_per_s: m.tokens_per_s,
            weights_bytes: s.weights.get(),
            kv_cache_bytes: s.kv_cache.get(),
            bytes_per_step: s.bytes().get(),
            achieved_bandwidth_bytes_per_s: m.achieved_bandwidth.get(),
            peak_bandwidth_bytes_per_s: m.peak_bandwidth.get(),
            mbu: m.mbu,
            flops_per_step: s.flops.get(),
            achieved_flops_per_s: m.achieved_flops.get(),
            peak_flops_per_s: m.peak_flops.map(|p| p.get()),
            mfu: m.mfu,
            floor_time_per_token_s: m.floor.get(),
            impossible: m.impossible().iter().map(|s| s.to_string()).collect(),
        }
    }
}
