//! `roofline train`: one training step predicted twice, at the roofline bound (no step is
//! faster) and as an estimate at the chip's efficiency, with the memory per device, the
//! pipeline stages and the MFU waterfall of each. Times in seconds, bytes in bytes, shares
//! and utilisations as fractions (`0.462` is 46.2 %).

use super::SchemaVersion;
use crate::train::TrainReport;
use roofline_core::train::memory::{Recompute, ZeroStage};
use roofline_core::train::optimizer::Optimizer;
use roofline_core::train::pipeline::PipelineSchedule;
use roofline_core::train::{TrainingJob, TrainingPrediction, Waterfall};
use schemars::JsonSchema;
use serde::Serialize;

/// The `command` of a training document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TrainCommand {
    /// `roofline train`.
    Train,
}

/// The job: layout, batch and policies.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TrainJobDoc {
    /// Tensor-parallel degree t.
    pub tp: u32,
    /// Pipeline-parallel degree p.
    pub pp: u32,
    /// Data-parallel replicas d.
    pub dp: u32,
    /// Context-parallel degree c.
    pub cp: u32,
    /// Expert-parallel degree e.
    pub ep: u32,
    /// Sequence parallelism (with t > 1).
    pub sequence_parallel: bool,
    /// ZeRO stage over the data-parallel ranks: 0 (none) to 3 (weights sharded too).
    pub zero: u8,
    /// Sequences per step over every replica, B_global.
    pub global_batch: u64,
    /// Sequences per micro-batch on each device, b.
    pub micro_batch: u64,
    /// Tokens per sequence, s.
    pub seq_len: u64,
    /// Activation recomputation: `none`, `selective` or `full`.
    pub recompute: String,
    /// Pipeline schedule: `1f1b`, `interleaved` or `zero_bubble`.
    pub schedule: String,
    /// Model chunks per device (v of the interleaved schedule; 1 otherwise).
    pub virtual_stages: u32,
    /// `adamw` or `sgd_momentum`.
    pub optimizer: String,
    /// Bytes per parameter of the weights, gradients and optimizer states.
    pub state_bytes_per_parameter: [f64; 3],
    /// Attention by FlashAttention.
    pub flash_attention: bool,
}

/// One bar of a waterfall.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BarDoc {
    /// The reason's id: `memory_bound`, `matmul_below_peak`, `non_matmul`, `optimizer`,
    /// `tensor_parallel`, `expert_parallel`, `context_parallel`, `pipeline_communication`,
    /// `pipeline_bubble`, `data_parallel`, `launch`, `recompute`, or `unexplained` (a measured
    /// step's time beyond the prediction).
    pub reason: String,
    /// What the table calls it.
    pub label: String,
    /// Seconds of the step it takes on the average device, s.
    pub seconds: f64,
    /// Its share of the step, fraction (the points of the peak it costs).
    pub share: f64,
}

/// The MFU waterfall: the bars' shares plus the MFU sum to 1.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WaterfallDoc {
    /// The step the shares are of (predicted, or measured), s.
    pub step_s: f64,
    /// T₀: the model FLOPs of the average device at the dense peak, s.
    pub ideal_s: f64,
    /// Every reason with a non-zero share, in drawing order.
    pub bars: Vec<BarDoc>,
    /// Model FLOPs utilisation, T₀ / step.
    pub mfu: f64,
    /// Hardware FLOPs utilisation: MFU + the recompute's share.
    pub hfu: f64,
}

impl WaterfallDoc {
    /// The document of `w`.
    pub fn of(w: &Waterfall) -> Self {
        WaterfallDoc {
            step_s: w.step.get(),
            ideal_s: w.ideal.get(),
            bars: w
                .bars
                .iter()
                .map(|b| BarDoc {
                    reason: b.reason.id().to_string(),
                    label: b.reason.label().to_string(),
                    seconds: b.seconds.get(),
                    share: b.share,
                })
                .collect(),
            mfu: w.mfu,
            hfu: w.hfu,
        }
    }
}

/// Memory per device.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TrainMemoryDoc {
    /// Parameters the device holds (the largest pipeline stage's).
    pub parameters: u64,
    /// Weights after ZeRO sharding, bytes.
    pub weights_bytes: f64,
    /// Gradients after ZeRO sharding, bytes.
    pub gradients_bytes: f64,
    /// Optimizer states after ZeRO sharding, bytes.
    pub optimizer_bytes: f64,
    /// Activations kept for the backward on pipeline stage 0 at its peak, bytes.
    pub activations_bytes: f64,
    /// Communication buffers (ZeRO-3's gathered blocks), bytes.
    pub communication_bytes: f64,
    /// Kept by the runtime, bytes.
    pub reserve_bytes: f64,
    /// The sum of the above, bytes.
    pub total_bytes: f64,
    /// The device's main-memory capacity, bytes (null when unknown).
    pub capacity_bytes: Option<f64>,
    /// Whether the total fits the capacity (null when it is unknown).
    pub fits: Option<bool>,
}

/// One pipeline stage: one micro-batch's F, B and W on one of its devices.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TrainStageDoc {
    /// Its first block (0-based).
    pub first_block: u64,
    /// Its blocks.
    pub blocks: u64,
    /// Parameters one device of the stage holds.
    pub parameters: u64,
    /// F: the forward of one micro-batch, s.
    pub forward_s: f64,
    /// B: recomputation and input gradients of one micro-batch, s.
    pub backward_s: f64,
    /// W: weight gradients of one micro-batch, s.
    pub weight_s: f64,
    /// Its data-parallel communication the backward does not hide, s.
    pub data_parallel_exposed_s: f64,
    /// Its optimizer update, s.
    pub optimizer_s: f64,
    /// The most micro-batches whose activations it holds at once.
    pub peak_in_flight: f64,
}

/// One prediction of the step.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TrainPredictionDoc {
    /// The efficiencies applied.
    pub efficiency: roofline_core::pricing::Efficiency,
    /// The step time, s.
    pub step_time_s: f64,
    /// Tokens per second over the whole job: B_global · s / step.
    pub tokens_per_s: f64,
    /// Time to train the `tokens` of the document at this rate, s (null without it).
    pub time_to_train_s: Option<f64>,
    /// Model FLOPs of the step over every device.
    pub model_flops: f64,
    /// Hardware FLOPs of the step: model FLOPs and the recomputation.
    pub hardware_flops: f64,
    /// The dense peak of one device, FLOP/s.
    pub peak_flops_per_s: f64,
    /// Model FLOPs utilisation, fraction.
    pub mfu: f64,
    /// Hardware FLOPs utilisation, fraction.
    pub hfu: f64,
    /// The pipeline's makespan over the micro-batches, s.
    pub makespan_s: f64,
    /// The pipeline bubble, s.
    pub bubble_s: f64,
    /// The bubble over the busiest stage's busy time, fraction.
    pub bubble_fraction: f64,
    /// One activation send between consecutive stages, s.
    pub p2p_s: f64,
    /// Micro-batches per step on each pipeline, m.
    pub micro_batches: u64,
    /// Devices, t · p · e · c · d.
    pub devices: u64,
    /// The stages, first first.
    pub stages: Vec<TrainStageDoc>,
    /// Memory per device.
    pub memory: TrainMemoryDoc,
    /// The MFU waterfall of the predicted step.
    pub waterfall: WaterfallDoc,
}

/// `roofline train`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TrainDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// Always `train`.
    pub command: TrainCommand,
    /// The model's name.
    pub model: String,
    /// The system's id.
    pub system: String,
    /// The chip's id.
    pub chip: String,
    /// Devices the system has.
    pub system_devices: u64,
    /// The job.
    pub job: TrainJobDoc,
    /// Tokens to train (`--tokens`), for the time to train (null without it).
    pub tokens: Option<f64>,
    /// The roofline bound: every kernel at its roof, every collective at its link's α–β
    /// bound. No step is faster.
    pub bound: TrainPredictionDoc,
    /// The estimate at the chip's efficiency (or `--efficiency`'s).
    pub estimate: TrainPredictionDoc,
    /// Where the estimate's efficiencies come from.
    pub estimate_source: String,
    /// The measured step (`--measured-step`), s (null without it).
    pub measured_step_s: Option<f64>,
    /// The estimate's waterfall as shares of the measured step, with its `unexplained` bar
    /// (null without a measured step).
    pub measured_waterfall: Option<WaterfallDoc>,
    /// When the step does not fit: the largest micro-batch that does (null when it fits, or
    /// when not even 1 does).
    pub largest_fitting_micro_batch: Option<u64>,
}

/// `none`, `selective`, `full`.
pub(crate) fn recompute_id(r: Recompute) -> &'static str {
    match r {
        Recompute::None => "none",
        Recompute::Selective => "selective",
        Recompute::Full => "full",
    }
}

/// `1f1b`, `interleaved`, `zero_bubble`.
pub(crate) fn schedule_id(s: PipelineSchedule) -> &'static str {
    match s {
        PipelineSchedule::OneFOneB => "1f1b",
        PipelineSchedule::Interleaved { .. } => "interleaved",
        _ => "zero_bubble",
    }
}

/// `adamw`, `sgd_momentum`.
pub(crate) fn optimizer_id(o: Optimizer) -> &'static str {
    match o {
        Optimizer::AdamW => "adamw",
        Optimizer::SgdMomentum => "sgd_momentum",
    }
}

/// 0 to 3.
pub(crate) fn zero_number(z: ZeroStage) -> u8 {
    match z {
        ZeroStage::Zero0 => 0,
        ZeroStage::Zero1 => 1,
        ZeroStage::Zero2 => 2,
        ZeroStage::Zero3 => 3,
    }
}

impl TrainJobDoc {
    /// The document of `j`.
    pub fn of(j: &TrainingJob) -> Self {
        TrainJobDoc {
            tp: j.layout.tp,
            pp: j.layout.pp,
            dp: j.data_parallel,
            cp: j.layout.cp,
            ep: j.layout.ep,
            sequence_parallel: j.layout.sequence_parallel,
            zero: zero_number(j.zero),
            global_batch: j.global_batch,
            micro_batch: j.micro_batch,
            seq_len: j.seq_len,
            recompute: recompute_id(j.recompute).into(),
            schedule: schedule_id(j.schedule).into(),
            virtual_stages: j.virtual_stages(),
            optimizer: optimizer_id(j.optimizer).into(),
            state_bytes_per_parameter: [j.state.weight, j.state.gradient, j.state.optimizer],
            flash_attention: j.flash_attention,
        }
    }
}

impl TrainPredictionDoc {
    /// The document of `p`; `tokens` to train, for the time to train.
    pub fn of(p: &TrainingPrediction, tokens: Option<f64>) -> Self {
        let m = &p.memory;
        TrainPredictionDoc {
            efficiency: p.efficiency,
            step_time_s: p.step_time.get(),
            tokens_per_s: p.tokens_per_s,
            time_to_train_s: tokens.map(|t| p.time_to_train(t)),
            model_flops: p.model_flops.get(),
            hardware_flops: p.hardware_flops.get(),
            peak_flops_per_s: p.peak.get(),
            mfu: p.mfu,
            hfu: p.hfu,
            makespan_s: p.makespan.get(),
            bubble_s: p.bubble.get(),
            bubble_fraction: p.bubble_fraction,
            p2p_s: p.p2p.get(),
            micro_batches: p.micro_batches,
            devices: p.devices,
            stages: p
                .stages
                .iter()
                .map(|s| TrainStageDoc {
                    first_block: s.first_block,
                    blocks: s.blocks,
                    parameters: s.parameters,
                    forward_s: s.forward.get(),
                    backward_s: s.backward.get(),
                    weight_s: s.weight.get(),
                    data_parallel_exposed_s: s.data_parallel.exposed.get(),
                    optimizer_s: s.optimizer.get(),
                    peak_in_flight: s.peak_in_flight,
                })
                .collect(),
            memory: TrainMemoryDoc {
                parameters: m.parameters,
                weights_bytes: m.weights.get(),
                gradients_bytes: m.gradients.get(),
                optimizer_bytes: m.optimizer.get(),
                activations_bytes: m.activations.get(),
                communication_bytes: m.communication.get(),
                reserve_bytes: m.reserve.get(),
                total_bytes: m.total().get(),
                capacity_bytes: m.capacity.map(|c| c.get()),
                fits: m.fits(),
            },
            waterfall: WaterfallDoc::of(&p.waterfall),
        }
    }
}

impl TrainDoc {
    /// The document of `r`.
    pub fn of(r: &TrainReport<'_>) -> Self {
        TrainDoc {
            schema_version: SchemaVersion,
            command: TrainCommand::Train,
            model: r.model.name.clone(),
            system: r.system.id.clone(),
            chip: r.system.chip.id.clone(),
            system_devices: r.system.devices(),
            job: TrainJobDoc::of(&r.bound.job),
            tokens: r.tokens,
            bound: TrainPredictionDoc::of(r.bound, r.tokens),
            estimate: TrainPredictionDoc::of(r.estimate, r.tokens),
            estimate_source: r.source.to_string(),
            measured_step_s: r.measured.map(|w| w.step.get()),
            measured_waterfall: r.measured.map(WaterfallDoc::of),
            largest_fitting_micro_batch: r.largest_micro_batch,
        }
    }
}
