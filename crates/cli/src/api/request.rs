//! The request of `analyze`: every setting of `roofline analyze` but its output flags, each
//! with its flag's default, read by serde.

use super::de::{self, MemoryReserve};
use super::inputs::{ChipInput, ModelInput};
use super::{at, ApiError};
use crate::args::common::DEFAULT_CHIP;
use roofline_core::device::Device;
use roofline_core::fusion::Preset;
use roofline_core::parallel::Layout;
use roofline_core::precision::Precision;
use roofline_core::workload::{Logits, Precisions, Stage, Workload};
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
        self.system.is_some() || self.devices.is_some() || !self.layout().is_single()
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
    pub(crate) fn precisions(&self) -> Result<Precisions, ApiError> {
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
    pub(crate) fn workloads(&self, precisions: Precisions) -> Vec<Workload> {
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
    pub(crate) fn with_launch(&self, device: &mut Device) {
        if let Some(l) = self.launch_overhead {
            device.launch_overhead = roofline_core::cited::Cited::new(
                roofline_core::units::Seconds(l),
                "--launch-overhead",
            );
        }
    }
}
