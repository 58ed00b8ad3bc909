//! `roofline plan --stage train`: the best training layouts of a search, each with its
//! estimated and bound step, throughput, MFU, memory per device and MFU waterfall.

use super::SchemaVersion;
use roofline_core::train::backward::Recompute;
use roofline_core::train::memory::ZeroStage;
use roofline_core::train::pipeline::PipelineSchedule;
use roofline_core::train::{TrainingPlan, TrainingPlanSearch};
use schemars::JsonSchema;
use serde::Serialize;

/// A recomputation policy in one word: `none`, `selective`, `full`.
pub fn recompute_name(r: Recompute) -> &'static str {
    match r {
        Recompute::None => "none",
        Recompute::Selective => "selective",
        Recompute::Full => "full",
    }
}

/// A ZeRO stage as its number, 0–3.
pub fn zero_number(z: ZeroStage) -> u8 {
    match z {
        ZeroStage::Zero0 => 0,
        ZeroStage::Zero1 => 1,
        ZeroStage::Zero2 => 2,
        ZeroStage::Zero3 => 3,
    }
}

/// A schedule in a few characters: `1f1b`, `interleaved v=4`, `zb-h1`.
pub fn schedule_name(s: PipelineSchedule) -> String {
    match s {
        PipelineSchedule::Interleaved { virtual_stages } => {
            format!("interleaved v={virtual_stages}")
        }
        PipelineSchedule::ZeroBubble => "zb-h1".into(),
        _ => "1f1b".into(),
    }
}

/// One bar of a plan's MFU waterfall.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TrainBarDoc {
    /// The reason (`matmul_below_peak`, `pipeline_bubble`, …).
    pub reason: &'static str,
    /// Seconds of the step it takes on the average device, s.
    pub seconds: f64,
    /// Its share of the step, 0 to 1.
    pub share: f64,
}

/// One training plan (base units: seconds, bytes, tokens per second).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TrainPlanDoc {
    /// Tensor-parallel degree t.
    pub tp: u32,
    /// Pipeline stages p.
    pub pp: u32,
    /// Data-parallel replicas d.
    pub dp: u32,
    /// Context-parallel degree c.
    pub cp: u32,
    /// Expert-parallel degree e.
    pub ep: u32,
    /// Sequence parallelism over the tensor-parallel group.
    pub sequence_parallel: bool,
    /// Sequences per micro-batch, b.
    pub micro_batch: u64,
    /// Micro-batches per step on each pipeline, m.
    pub micro_batches: u64,
    /// Recomputation: `none`, `selective` or `full`.
    pub recompute: &'static str,
    /// ZeRO stage, 0–3.
    pub zero: u8,
    /// The pipeline schedule: `1f1b`, `interleaved v=N` or `zb-h1`.
    pub schedule: String,
    /// The estimated step (at the chip's efficiency), s.
    pub step_time_s: f64,
    /// The roofline bound on the step, s.
    pub step_time_bound_s: f64,
    /// Tokens per second over every device (estimate).
    pub tokens_per_s: f64,
    /// Model FLOPs utilisation (estimate), 0 to 1.
    pub mfu: f64,
    /// Hardware FLOPs utilisation (estimate), 0 to 1.
    pub hfu: f64,
    /// Memory per device, bytes.
    pub memory_per_device_bytes: f64,
    /// The pipeline bubble over the busiest stage's busy time.
    pub bubble_fraction: f64,
    /// The MFU waterfall of the estimate: every reason with a share.
    pub waterfall: Vec<TrainBarDoc>,
}

impl TrainPlanDoc {
    /// The document of `p`.
    pub fn of(p: &TrainingPlan) -> Self {
        let (j, e) = (&p.job, &p.estimate);
        TrainPlanDoc {
            tp: j.layout.tp,
            pp: j.layout.pp,
            dp: j.data_parallel,
            cp: j.layout.cp,
            ep: j.layout.ep,
            sequence_parallel: j.layout.sequence_parallel,
            micro_batch: j.micro_batch,
            micro_batches: e.micro_batches,
            recompute: recompute_name(j.recompute),
            zero: zero_number(j.zero),
            schedule: schedule_name(j.schedule),
            step_time_s: e.step_time.get(),
            step_time_bound_s: p.bound.step_time.get(),
            tokens_per_s: e.tokens_per_s,
            mfu: e.mfu,
            hfu: e.hfu,
            memory_per_device_bytes: e.memory.total().get(),
            bubble_fraction: e.bubble_fraction,
            waterfall: e
                .waterfall
                .bars
                .iter()
                .map(|b| TrainBarDoc {
                    reason: b.reason.id(),
                    seconds: b.seconds.get(),
                    share: b.share,
                })
                .collect(),
        }
    }
}

/// What the search skipped, by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TrainSkippedDoc {
    /// Degree tuples the model or the sequence does not take.
    pub layout: u64,
    /// Degree tuples whose data-parallel × expert-parallel degree does not divide the batch.
    pub batch: u64,
    /// Candidates whose memory does not fit.
    pub memory: u64,
    /// Candidates needing a link the system lacks.
    pub link: u64,
}

/// The result of `roofline plan --stage train`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TrainPlanSearchDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The model: preset id or file name.
    pub model: String,
    /// The system: its catalog id, or `<chip>x<devices>` for `--devices` of a chip.
    pub system: String,
    /// The chip every device is (its id).
    pub chip: String,
    /// Devices every plan uses.
    pub devices: u64,
    /// Sequences per step over every replica.
    pub global_batch: u64,
    /// Tokens per sequence.
    pub seq_len: u64,
    /// Candidates whose memory was evaluated.
    pub evaluated: u64,
    /// Candidates whose memory fits.
    pub fit: u64,
    /// Full predictions run (the candidates the lower bound could not rule out).
    pub simulated: u64,
    /// What was skipped, by reason.
    pub skipped: TrainSkippedDoc,
    /// The best plans, fastest estimated step first.
    pub plans: Vec<TrainPlanDoc>,
}

impl TrainPlanSearchDoc {
    /// The document of `s` for `model` on `system` (its id) of `chip` (its id).
    pub fn of(s: &TrainingPlanSearch, model: &str, system: &str, chip: &str) -> Self {
        let k = s.skipped;
        TrainPlanSearchDoc {
            schema_version: SchemaVersion,
            model: model.to_string(),
            system: system.to_string(),
            chip: chip.to_string(),
            devices: s.devices,
            global_batch: s.global_batch,
            seq_len: s.seq_len,
            evaluated: s.evaluated,
            fit: s.fit,
            simulated: s.simulated,
            skipped: TrainSkippedDoc {
                layout: k.layout,
                batch: k.batch,
                memory: k.memory,
                link: k.link,
            },
            plans: s.best.iter().map(TrainPlanDoc::of).collect(),
        }
    }
}
