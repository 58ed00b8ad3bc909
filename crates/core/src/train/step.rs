//! One training step on many devices, assembled from the passes of this module: each pipeline
//! stage's F, B and W from one micro-batch's priced graph ([`super::micro_batch`]), the
//! pipeline's timeline over the micro-batches ([`super::pipeline`]), the data-parallel
//! communication left exposed ([`super::data_parallel`]), the optimizer update
//! ([`super::optimizer`]), the memory per device ([`super::memory`]), and the MFU waterfall
//! ([`super::waterfall`]).
//!
//! **The step.** With m = B_global / (d · e · b) micro-batches per pipeline, stage i's F_i,
//! B_i (recomputation and input gradients) and W_i (weight gradients) are the sums of its
//! blocks' pieces (the first stage adds the embedding, the last the final norm, lm_head and
//! the loss); the pipeline runs them as its schedule orders ([`simulate`]), each stage
//! boundary a send of b·s·h activations (÷ t with sequence parallelism) each way. After the
//! last backward, each stage's data-parallel collectives the backward did not hide and its
//! optimizer update run; the step ends when the slowest stage's have:
//! T = makespan + max_i (DP_i + opt_i).
//!
//! **The waterfall.** Every device of stage i is busy for m·(F_i + B_i + W_i) + DP_i + opt_i
//! and waits the rest of T. Averaged over the stages, T = T₀ + Σ losses exactly: T₀ the model
//! FLOPs ([`crate::mfu::model_flops_per_token`]) at the dense peak, each piece's time beyond
//! its FLOPs at the peak given to its [`Reason`], the executed FLOPs beyond the model FLOPs at
//! the peak given to [`Reason::Recompute`] with the recomputation (HFU − MFU), the waits split
//! into the pipeline's communication (the makespan less the makespan with free sends) and its
//! bubble (the rest, stage imbalance included).
//!
//! **Rank order.** Megatron-LM's: tensor, context, expert, data, pipeline (tensor innermost).
//! Data-parallel peers are t·c·e devices apart; consecutive pipeline stages t·c·e·d apart, on
//! different nodes once that is a node or more.
//!
//! Not modelled: DualPipe's bidirectional schedule, overlap of tensor-parallel collectives
//! with GEMMs, ZeRO-3's gathers inside a pipeline stage's timeline (its exposed time is added
//! after the pipeline), and a stage's memory beyond stage 0's.

use super::backward::Recompute;
use super::data_parallel::{dp_group, step_communication, DataParallel, StepComm, StepInput};
use super::memory::{
    activations_per_layer, device_parameters, training_memory, StateBytes, TrainingMemory,
    TrainingSetup, ZeroStage,
};
use super::micro_batch::{micro_batch, stage_sums, MicroBatch, MicroBatchShape, StageSums};
use super::optimizer::{Optimizer, OptimizerStep};
use super::pipeline::{simulate, PipelineSchedule, StageTimes, Timeline};
use super::waterfall::{Reason, Waterfall};
use crate::comm::System;
use crate::memory::Reserve;
use crate::model::Transformer;
use crate::parallel::Layout;
use crate::precision::Precision;
use crate::pricing::{Efficiency, Pricing};
use crate::units::{to_f64, Bytes, Flop, FlopPerSec, Seconds};
use crate::workload::Precisions;
use serde::Serialize;
use std::fmt;

/// What to train and how: the layout, the batch and the policies of one step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrainingJob {
    /// Tensor, pipeline, expert and context parallelism, and sequence parallelism.
    pub layout: Layout,
    /// Data-parallel replicas d.
    pub data_parallel: u32,
    /// How the model states are sharded over the d·c data-parallel ranks (ZeRO).
    pub zero: ZeroStage,
    /// Sequences per step over every replica, B_global.
    pub global_batch: u64,
    /// Sequences per micro-batch on each device, b.
    pub micro_batch: u64,
    /// Tokens per sequence, s.
    pub seq_len: u64,
    /// Which activations are recomputed.
    pub recompute: Recompute,
    /// The pipeline's schedule.
    pub schedule: PipelineSchedule,
    /// The optimizer.
    pub optimizer: Optimizer,
    /// Bytes per parameter of each model state.
    pub state: StateBytes,
    /// Number formats of the forward and backward.
    pub precisions: Precisions,
    /// Attention by FlashAttention.
    pub flash_attention: bool,
    /// Memory the runtime keeps on each device.
    #[serde(skip)]
    pub reserve: Reserve,
    /// Gradients reduced in buckets during the backward (PyTorch DDP; Megatron-LM's
    /// `--overlap-grad-reduce`); `false`: all of them after the backward, exposed (Megatron-LM
    /// before that flag, as in Narayanan et al. 2021 and Korthikanti et al. 2022).
    pub overlap_grad_reduce: bool,
    /// Pipeline sends run beside the compute and only delay their receiver; `false`: each send
    /// blocks its stage until it is done (Megatron-LM's `batch_isend_irecv` waited on before
    /// the next chunk, its default without `--overlap-p2p-communication`).
    pub overlap_p2p: bool,
}

impl TrainingJob {
    /// `layout` over `data_parallel` replicas training `global_batch` sequences of `seq_len`
    /// tokens in micro-batches of `micro_batch`: no ZeRO, no recomputation, 1F1B, AdamW with
    /// Megatron's 18 bytes per parameter (fp32 gradients), bf16, FlashAttention, the default
    /// reserve.
    pub fn new(
        layout: Layout,
        data_parallel: u32,
        global_batch: u64,
        micro_batch: u64,
        seq_len: u64,
    ) -> Self {
        TrainingJob {
            layout,
            data_parallel,
            zero: ZeroStage::Zero0,
            global_batch,
            micro_batch,
            seq_len,
            recompute: Recompute::None,
            schedule: PipelineSchedule::OneFOneB,
            optimizer: Optimizer::AdamW,
            state: StateBytes::MEGATRON_ADAM,
            precisions: Precisions::uniform(Precision::Bf16),
            flash_attention: true,
            reserve: Reserve::DEFAULT,
            overlap_grad_reduce: true,
            overlap_p2p: true,
        }
    }

    /// This job as Megatron-LM of 2021–2022 ran it (the published runs of Narayanan et al.
    /// 2021 and Korthikanti et al. 2022): gradients reduced after the backward, blocking
    /// pipeline sends, its own fused softmax (no FlashAttention).
    pub fn as_megatron_2022(self) -> Self {
        TrainingJob {
            overlap_grad_reduce: false,
            overlap_p2p: false,
            flash_attention: false,
            ..self
        }
    }

    /// Devices the job uses: t · p · e · c · d.
    pub fn devices(&self) -> u64 {
        self.layout
            .devices()
            .saturating_mul(u64::from(self.data_parallel))
    }

    /// Model chunks per device: v of an interleaved schedule, else 1.
    pub fn virtual_stages(&self) -> u32 {
        match self.schedule {
            PipelineSchedule::Interleaved { virtual_stages } => {
                u32::try_from(virtual_stages).unwrap_or(u32::MAX)
            }
            _ => 1,
        }
    }

    /// Micro-batches per step on each pipeline: B_global / (d · e · b).
    ///
    /// # Errors
    /// [`StepError::Zero`] for a count of zero; [`StepError::GlobalBatch`] when d · e · b does
    /// not divide the global batch.
    pub fn micro_batches(&self) -> Result<u64, StepError> {
        for (field, value) in [
            ("global_batch", self.global_batch),
            ("micro_batch", self.micro_batch),
            ("seq_len", self.seq_len),
            ("data_parallel", u64::from(self.data_parallel)),
        ] {
            if value == 0 {
                return Err(StepError::Zero(field));
            }
        }
        let per_micro_batch = u64::from(self.data_parallel)
            .saturating_mul(u64::from(self.layout.ep.max(1)))
            .saturating_mul(self.micro_batch);
        if !self.global_batch.is_multiple_of(per_micro_batch) {
            return Err(StepError::GlobalBatch {
                global_batch: self.global_batch,
                per_micro_batch,
            });
        }
        Ok(self.global_batch / per_micro_batch)
    }

    /// The memory model's setup of this job with `micro_batches` = m: the model states
    /// sharded over the d·c data-parallel ranks (Megatron-LM shards over both), v chunks.
    pub fn memory_setup(&self, micro_batches: u64) -> TrainingSetup {
        TrainingSetup {
            layout: self.layout,
            data_parallel: self.data_parallel.saturating_mul(self.layout.cp.max(1)),
            zero: self.zero,
            state: self.state,
            micro_batch: self.micro_batch,
            seq_len: self.seq_len,
            micro_batches,
            interleave: self.virtual_stages(),
            recompute: self.recompute,
            flash_attention: self.flash_attention,
        }
    }

    /// The largest micro-batch b with which this job fits a device of `capacity`, keeping the
    /// micro-batches per step at `micro_batches` and b at most the sequences a replica takes
    /// a step (B_global / (d · e)); `None` when b = 1 does not fit
    /// ([`super::memory::largest_micro_batch`]).
    pub fn largest_micro_batch(
        &self,
        model: &Transformer,
        capacity: Bytes,
        micro_batches: u64,
    ) -> Option<u64> {
        let per = u64::from(self.data_parallel).saturating_mul(u64::from(self.layout.ep.max(1)));
        super::memory::largest_micro_batch(
            model,
            &self.memory_setup(micro_batches),
            capacity,
            self.reserve,
            self.global_batch / per.max(1),
        )
        .ok()
        .flatten()
    }

    /// The micro-batch shape of this job.
    pub fn shape(&self) -> MicroBatchShape {
        MicroBatchShape {
            layout: self.layout,
            micro_batch: self.micro_batch,
            seq_len: self.seq_len,
            recompute: self.recompute,
            precisions: self.precisions,
            flash_attention: self.flash_attention,
        }
    }
}

/// Why a training step cannot be predicted.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StepError {
    /// A count that must be at least 1 is 0 (the field).
    Zero(&'static str),
    /// d · e · b does not divide the global batch.
    GlobalBatch {
        /// B_global.
        global_batch: u64,
        /// Sequences one micro-batch step takes over every replica, d · e · b.
        per_micro_batch: u64,
    },
    /// The job needs more devices than the system has.
    TooFewDevices {
        /// t · p · e · c · d.
        needed: u64,
        /// The system's.
        available: u64,
    },
    /// The efficiencies.
    Efficiency(crate::pricing::EfficiencyError),
    /// The micro-batch's graph (model, layout, system, chip).
    MicroBatch(super::micro_batch::MicroBatchError),
    /// The memory setup (layout, interleaving).
    Memory(super::memory::TrainingMemoryError),
    /// The pipeline's schedule.
    Pipeline(super::pipeline::PipelineError),
    /// The data-parallel communication.
    DataParallel(super::data_parallel::DataParallelError),
    /// A pipeline send the fabric cannot price.
    Collective(crate::comm::collective::CollectiveError),
    /// The optimizer.
    Train(super::TrainError),
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::Zero(q) => write!(f, "{q} must be at least 1"),
            StepError::GlobalBatch {
                global_batch,
                per_micro_batch,
            } => write!(
                f,
                "the global batch of {global_batch} sequences is not a whole number of steps \
                 of {per_micro_batch} (data-parallel × expert-parallel × micro-batch)"
            ),
            StepError::TooFewDevices { needed, available } => write!(
                f,
                "the layout needs {needed} devices, the system has {available}"
            ),
            StepError::Efficiency(e) => e.fmt(f),
            StepError::MicroBatch(e) => e.fmt(f),
            StepError::Memory(e) => e.fmt(f),
            StepError::Pipeline(e) => e.fmt(f),
            StepError::DataParallel(e) => e.fmt(f),
            StepError::Collective(e) => e.fmt(f),
            StepError::Train(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for StepError {}

/// One pipeline stage of the step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StagePrediction {
    /// Its first block (0-based).
    pub first_block: u64,
    /// Its blocks.
    pub blocks: u64,
    /// F, B, W of one micro-batch, s.
    pub forward: Seconds,
    /// B: recomputation and input gradients of one micro-batch, s.
    pub backward: Seconds,
    /// W: weight gradients of one micro-batch, s.
    pub weight: Seconds,
    /// Parameters one device of the stage holds.
    pub parameters: u64,
    /// Its data-parallel communication.
    pub data_parallel: StepComm,
    /// Its optimizer update, s.
    pub optimizer: Seconds,
    /// The most micro-batches whose activations it holds at once (the timeline's).
    pub peak_in_flight: f64,
    /// The activations it keeps at that peak: Korthikanti et al. Table 2 per block
    /// ([`super::memory::activations_per_layer`]) × its blocks × [`Self::peak_in_flight`]
    /// (+ one block's full set under full recompute, the block being recomputed), bytes.
    pub activations: Bytes,
}

/// A training step predicted: its time, throughput, utilisation, memory and waterfall.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainingPrediction {
    /// The job.
    pub job: TrainingJob,
    /// The efficiencies applied ([`Efficiency::BOUND`] for the roofline bound).
    pub efficiency: Efficiency,
    /// Devices, t · p · e · c · d.
    pub devices: u64,
    /// Micro-batches per step on each pipeline, m.
    pub micro_batches: u64,
    /// The step time, s.
    pub step_time: Seconds,
    /// Tokens per second over the whole job: B_global · s / T.
    pub tokens_per_s: f64,
    /// Model FLOPs of the step: B_global · s × [`crate::mfu::model_flops_per_token`], a
    /// convention of the model's math that neither the layout nor the attention kernel changes.
    pub model_flops: Flop,
    /// Hardware FLOPs of the step over every device: what its kernels execute, forward,
    /// gradients and recomputation.
    pub hardware_flops: Flop,
    /// The dense peak of one device MFU divides by, FLOP/s.
    pub peak: FlopPerSec,
    /// Model FLOPs utilisation: model FLOPs / (T · devices · peak).
    pub mfu: f64,
    /// Hardware FLOPs utilisation: hardware FLOPs / (T · devices · peak).
    pub hfu: f64,
    /// The pipeline's makespan over the micro-batches, s.
    pub makespan: Seconds,
    /// The makespan less the busiest stage's busy time, s (the timeline's bubble).
    pub bubble: Seconds,
    /// The bubble over the busiest stage's busy time.
    pub bubble_fraction: f64,
    /// One send between consecutive stages, s.
    pub p2p: Seconds,
    /// The stages, first first.
    pub stages: Vec<StagePrediction>,
    /// Memory per device (the largest stage's states, stage 0's activations).
    pub memory: TrainingMemory,
    /// The MFU waterfall of the step.
    pub waterfall: Waterfall,
}

impl TrainingPrediction {
    /// Seconds to train `tokens` tokens at [`Self::tokens_per_s`]: tokens / (B_global · s / T);
    /// infinite when nothing is trained.
    pub fn time_to_train(&self, tokens: f64) -> f64 {
        if self.tokens_per_s > 0.0 {
            tokens / self.tokens_per_s
        } else {
            f64::INFINITY
        }
    }

    /// The bubble as a share of the makespan, 0 to 1: (p − 1)/(m + p − 1) for 1F1B over equal
    /// stages (where [`Self::bubble_fraction`], Megatron's share of the ideal time, is
    /// (p − 1)/m and exceeds 1 when m < p − 1); 0 for an empty makespan.
    pub fn bubble_share(&self) -> f64 {
        if self.makespan.get() > 0.0 {
            self.bubble.get() / self.makespan.get()
        } else {
            0.0
        }
    }
}

/// Predicts one step of `job` training `model` on `system` at `efficiency` (the roofline
/// bound with [`Efficiency::BOUND`]; module docs for the assembly).
///
/// # Errors
/// [`StepError`]: a count of zero or a global batch the micro-batches do not divide; more
/// devices than the system has; the model, layout, chip or fabric; an interleaved schedule
/// whose micro-batches are not a multiple of the stages.
pub fn predict(
    model: &Transformer,
    system: &System,
    job: &TrainingJob,
    pricing: Pricing<'_>,
) -> Result<TrainingPrediction, StepError> {
    pricing
        .efficiency()
        .validate()
        .map_err(StepError::Efficiency)?;
    job.micro_batches()?;
    if job.devices() > system.devices() {
        return Err(StepError::TooFewDevices {
            needed: job.devices(),
            available: system.devices(),
        });
    }
    let mb = micro_batch(model, system, &job.shape(), pricing).map_err(StepError::MicroBatch)?;
    predict_with(model, system, job, pricing, &mb)
}

/// [`predict`] with the micro-batch already priced: `mb` is [`micro_batch`] of
/// [`TrainingJob::shape`] at the same `pricing` (a plan search prices each shape once and
/// assembles every pipeline, data-parallel and ZeRO choice over it).
///
/// # Errors
/// As [`predict`], less the micro-batch's.
pub fn predict_with(
    model: &Transformer,
    system: &System,
    job: &TrainingJob,
    pricing: Pricing<'_>,
    mb: &MicroBatch,
) -> Result<TrainingPrediction, StepError> {
    let efficiency = pricing.efficiency();
    efficiency.validate().map_err(StepError::Efficiency)?;
    let m = job.micro_batches()?;
    let devices = job.devices();
    if devices > system.devices() {
        return Err(StepError::TooFewDevices {
            needed: devices,
            available: system.devices(),
        });
    }
    let setup = job.memory_setup(m);
    let memory = training_memory(model, &setup, system.chip.capacity(), job.reserve)
        .map_err(StepError::Memory)?;
    assemble(model, system, job, efficiency, mb, memory, m)
}

/// The stages' block ranges: p contiguous ranges, the first L mod p one block longer.
fn stage_ranges(layout: &Layout, layers: u64) -> Vec<(u64, u64)> {
    let mut first = 0;
    (0..layout.pp.max(1))
        .map(|i| {
            let n = layout.stage_blocks(layers, i);
            let r = (first, n);
            first += n;
            r
        })
        .collect()
}

fn assemble(
    model: &Transformer,
    system: &System,
    job: &TrainingJob,
    efficiency: &Efficiency,
    mb: &MicroBatch,
    memory: TrainingMemory,
    m: u64,
) -> Result<TrainingPrediction, StepError> {
    let layout = job.layout;
    let devices = job.devices();
    let p = layout.pp.max(1) as usize;
    let ranges = stage_ranges(&layout, model.layers);
    // When every block runs the same pieces, a stage's sums depend only on its block count
    // and whether it is the first or the last: computed once for each (the same additions in
    // the same order, so the same sums).
    let uniform = uniform_blocks(&mb.pieces, model.layers);
    let key = |i: usize, n: u64| (n, i == 0, i + 1 == p);
    let mut memo: Vec<(StageKey, StageSums)> = Vec::new();
    let sums: Vec<StageSums> = ranges
        .iter()
        .enumerate()
        .map(|(i, &(first, n))| {
            let k = key(i, n);
            if let Some((_, s)) = memo.iter().find(|(at, _)| uniform && *at == k) {
                return *s;
            }
            let s = stage_sums(&mb.pieces, first, n, i == 0, i + 1 == p);
            if uniform {
                memo.push((k, s));
            }
            s
        })
        .collect();
    let p2p = stage_send(model, system, job, efficiency)?;
    // Blocking sends: each stage's forward chunks send their output on (all but the last
    // virtual stage's), its backward chunks theirs back (all but the first's), each send part
    // of the operation; the receiver depends on that operation's end.
    let v = f64::from(job.virtual_stages().max(1));
    let blocking = |i: usize| -> (f64, f64) {
        if job.overlap_p2p || p <= 1 {
            return (0.0, 0.0);
        }
        let t = p2p.get();
        (
            (v - f64::from(u8::from(i + 1 == p))) * t,
            (v - f64::from(u8::from(i == 0))) * t,
        )
    };
    let times: Vec<StageTimes> = sums
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (f, b) = blocking(i);
            StageTimes::new(s.forward + f, s.backward + b, s.weight)
        })
        .collect();
    let delay = if job.overlap_p2p { p2p.get() } else { 0.0 };
    let micro = usize::try_from(m).unwrap_or(usize::MAX);
    let timeline: Timeline =
        simulate(job.schedule, &times, micro, delay).map_err(StepError::Pipeline)?;
    let free_sends = if p > 1 && delay > 0.0 {
        simulate(job.schedule, &times, micro, 0.0)
            .map_err(StepError::Pipeline)?
            .makespan
    } else {
        timeline.makespan
    };

    // Each stage's data-parallel communication and optimizer update after the pipeline.
    let params = device_parameters(model, &layout);
    let dp_ranks = job.data_parallel.saturating_mul(layout.cp.max(1));
    let stride = layout.tp.max(1).saturating_mul(layout.ep.max(1));
    let group = dp_group(system, dp_ranks, stride).map_err(StepError::DataParallel)?;
    let dp = DataParallel {
        transfer_efficiency: efficiency.network,
        ..DataParallel::new(dp_ranks, job.zero)
    };
    let (vector, bandwidth, grad) = update_roofs(system, job)?;
    let mut stages = Vec::with_capacity(p);
    // A stage's data-parallel communication, for each (block count, first, last, parameters)
    // when the blocks are uniform: the same inputs give the same result.
    let mut comm_memo: Vec<((StageKey, u64), StepComm)> = Vec::new();
    for (i, (&(first, n), s)) in ranges.iter().zip(&sums).enumerate() {
        let (is_first, is_last) = (i == 0, i + 1 == p);
        let mut parameters = params.per_block.saturating_mul(n);
        if is_first {
            parameters = parameters.saturating_add(params.first_stage);
        }
        if is_last {
            parameters = parameters.saturating_add(params.last_stage);
        }
        let k = (key(i, n), parameters);
        let comm = match comm_memo.iter().find(|(at, _)| uniform && *at == k) {
            Some((_, c)) => c.clone(),
            None => {
                let (forward, mut backward) = per_block(mb, first, n, is_first, is_last);
                if !job.overlap_grad_reduce {
                    // Nothing to hide the buckets behind: all of them after the backward.
                    backward.iter_mut().for_each(|t| *t = Seconds::ZERO);
                }
                let c = step_communication(
                    &dp,
                    &StepInput {
                        parameters: to_f64(parameters),
                        gradient_bytes: job.state.gradient,
                        weight_bytes: job.state.weight,
                        forward: &forward,
                        backward: &backward,
                        micro_batches: m,
                    },
                    system,
                    group,
                )
                .map_err(StepError::DataParallel)?;
                if uniform {
                    comm_memo.push((k, c.clone()));
                }
                c
            }
        };
        let shards = if job.zero == ZeroStage::Zero0 {
            1
        } else {
            u64::from(dp_ranks)
        };
        let optimizer = optimizer_seconds(
            job,
            parameters,
            shards,
            grad,
            (vector, bandwidth),
            efficiency,
        )?;
        let peak_in_flight = timeline.peak_in_flight.get(i).copied().unwrap_or(0.0);
        let layer = |r| {
            activations_per_layer(
                model.hidden,
                model.heads,
                &layout,
                job.micro_batch,
                job.seq_len,
                r,
                job.flash_attention,
            )
        };
        let mut activations = layer(job.recompute) * (to_f64(n) * peak_in_flight);
        if job.recompute == Recompute::Full && n > 0 {
            activations += layer(Recompute::None);
        }
        stages.push(StagePrediction {
            first_block: first,
            blocks: n,
            forward: Seconds(s.forward),
            backward: Seconds(s.backward),
            weight: Seconds(s.weight),
            parameters,
            data_parallel: comm,
            optimizer: Seconds(optimizer),
            peak_in_flight,
            activations,
        });
    }
    let tail = stages
        .iter()
        .map(|s| s.data_parallel.exposed.get() + s.optimizer.get())
        .fold(0.0, f64::max);
    let step = timeline.makespan + tail;

    // The waterfall, averaged over the stages.
    let pf = to_f64(p as u64);
    let mf = to_f64(m);
    let mut losses = [0.0; 12];
    let mut ideal = 0.0;
    let (mut executed_flops, mut recompute_flops) = (0.0, 0.0);
    let mut busy = 0.0;
    for (i, (s, st)) in sums.iter().zip(&stages).enumerate() {
        let (f, b) = blocking(i);
        losses[slot(Reason::PipelineCommunication)] += mf * (f + b) / pf;
        busy += mf * (f + b) / pf;
        for (l, x) in losses.iter_mut().zip(&s.losses) {
            *l += x * mf / pf;
        }
        ideal += s.ideal * mf / pf;
        executed_flops += s.executed_flops * mf;
        recompute_flops += s.recompute_flops * mf;
        let dp_t = st.data_parallel.exposed.get();
        let opt_t = st.optimizer.get();
        losses[slot(Reason::DataParallel)] += dp_t / pf;
        losses[slot(Reason::Optimizer)] += opt_t / pf;
        busy += (mf * (s.forward + s.backward + s.weight) + dp_t + opt_t) / pf;
    }
    let waits = (step - busy).max(0.0);
    let sends = (timeline.makespan - free_sends).clamp(0.0, waits);
    losses[slot(Reason::PipelineCommunication)] += sends;
    losses[slot(Reason::PipelineBubble)] += waits - sends;

    // Every device of a stage does the same work: t·c·e·d devices a stage.
    let per_stage = to_f64(devices) / pf;
    let hardware_flops = (executed_flops + recompute_flops) * per_stage;
    // Model FLOPs are the convention's, not the graph's: the same whatever the layout and the
    // attention kernel. T₀ is the average device's share of them at the peak; the executed
    // FLOPs beyond them (FlashAttention's backward recomputing the scores, the scores an eager
    // kernel computes under the mask, the vector operators' FLOPs) join the recomputation's bar.
    let model_flops =
        mb.model_flops_per_token.get() * to_f64(job.global_batch) * to_f64(job.seq_len);
    let peak = mb.peak;
    let model_ideal = if peak.get() > 0.0 && devices > 0 {
        model_flops / (to_f64(devices) * peak.get())
    } else {
        0.0
    };
    losses[slot(Reason::Recompute)] += ideal - model_ideal;
    let waterfall = Waterfall::new(Seconds(model_ideal), &losses, None);
    let denominator = step * to_f64(devices) * peak.get();
    let utilisation = |f: f64| {
        if denominator > 0.0 {
            f / denominator
        } else {
            0.0
        }
    };
    Ok(TrainingPrediction {
        job: *job,
        efficiency: *efficiency,
        devices,
        micro_batches: m,
        step_time: Seconds(step),
        tokens_per_s: if step > 0.0 {
            to_f64(job.global_batch.saturating_mul(job.seq_len)) / step
        } else {
            0.0
        },
        model_flops: Flop(model_flops),
        hardware_flops: Flop(hardware_flops),
        peak,
        mfu: utilisation(model_flops),
        hfu: utilisation(hardware_flops),
        makespan: Seconds(timeline.makespan),
        bubble: Seconds(timeline.bubble),
        bubble_fraction: timeline.bubble_fraction,
        p2p,
        stages,
        memory,
        waterfall,
    })
}

/// The roofs an optimizer update runs at (the fp32 vector peak, else the activation
/// precision's; the memory bandwidth) and the gradients' precision (fp32 at 4 bytes or more).
pub(crate) fn update_roofs(
    system: &System,
    job: &TrainingJob,
) -> Result<(FlopPerSec, crate::units::BytesPerSec, Precision), StepError> {
    let vector = system
        .chip
        .peak(Precision::Fp32)
        .or_else(|_| system.chip.peak(job.precisions.act))
        .map_err(|e| StepError::MicroBatch(super::micro_batch::MicroBatchError::Device(e)))?;
    let bandwidth = system
        .chip
        .bandwidth()
        .map_err(|e| StepError::MicroBatch(super::micro_batch::MicroBatchError::Device(e)))?;
    let grad = if job.state.gradient >= 4.0 {
        Precision::Fp32
    } else {
        Precision::Bf16
    };
    Ok((vector, bandwidth, grad))
}

/// One optimizer update of `parameters` sharded `shards` ways, s: the larger of its FLOPs at
/// the vector peak and its bytes at the memory bandwidth (`roofs`: vector peak, bandwidth) at
/// `efficiency`'s memory share.
pub(crate) fn optimizer_seconds(
    job: &TrainingJob,
    parameters: u64,
    shards: u64,
    grad: Precision,
    roofs: (FlopPerSec, crate::units::BytesPerSec),
    efficiency: &Efficiency,
) -> Result<f64, StepError> {
    let cost = OptimizerStep {
        optimizer: job.optimizer,
        parameters,
        shards,
        grad,
        weight: job.precisions.weight,
    }
    .cost()
    .map_err(StepError::Train)?;
    Ok((cost.flops.get() / roofs.0.get())
        .max(cost.bytes().get() / (roofs.1.get() * efficiency.memory)))
}

/// A stage as far as its sums go when the blocks are uniform: its block count, whether it is
/// the first, whether it is the last.
type StageKey = (u64, bool, bool);

/// Whether every piece on the blocks spans all `layers` of them (a model whose blocks are all
/// alike: no dense layers before mixture-of-experts ones, no per-layer windows).
fn uniform_blocks(pieces: &[super::micro_batch::Piece], layers: u64) -> bool {
    pieces.iter().all(|p| match p.span {
        crate::graph::Span::Blocks { first, last } => {
            first == 0 && last.saturating_add(1) >= layers
        }
        _ => true,
    })
}

fn slot(r: Reason) -> usize {
    r.slot().unwrap_or(0)
}

/// Each block's forward time and backward time (recomputation, B and W) of one micro-batch
/// on a stage, the backward's last block first; the stage's ends fall to its first and last
/// block.
fn per_block(
    mb: &MicroBatch,
    first: u64,
    blocks: u64,
    is_first: bool,
    is_last: bool,
) -> (Vec<Seconds>, Vec<Seconds>) {
    let n = usize::try_from(blocks.max(1)).unwrap_or(1);
    let mut forward = vec![Seconds::ZERO; n];
    let mut backward = vec![Seconds::ZERO; n];
    // Pieces that cover either all of the stage's blocks or none of them: every block but the
    // first and the last (which take the prologue and the epilogue) has the same sums, computed
    // once (the same additions in the same order as block by block).
    let end = first.saturating_add(blocks);
    let alike = n > 2
        && mb.pieces.iter().all(|p| match p.span {
            crate::graph::Span::Blocks { first: a, last: b } => {
                (a <= first && b.saturating_add(1) >= end) || b < first || a >= end
            }
            _ => true,
        });
    if alike {
        let mid = stage_sums(&mb.pieces, first + 1, 1, false, false);
        for j in 1..n - 1 {
            forward[j] = Seconds(mid.forward);
            backward[n - 1 - j] = Seconds(mid.backward + mid.weight);
        }
    }
    for j in (0..n).filter(|&j| !alike || j == 0 || j + 1 == n) {
        let block = first + j as u64;
        let s = stage_sums(
            &mb.pieces,
            block,
            u64::from(blocks > 0),
            is_first && j == 0,
            is_last && j + 1 == n,
        );
        forward[j] = Seconds(s.forward);
        backward[n - 1 - j] = Seconds(s.backward + s.weight);
    }
    (forward, backward)
}

/// One send of a micro-batch's activations between consecutive stages: b·s·h elements (÷ t
/// with sequence parallelism or across nodes, ÷ c with context parallelism), over the
/// scale-out network when consecutive stages sit a node or more apart (module docs), at
/// `efficiency`'s network share.
pub(crate) fn stage_send(
    model: &Transformer,
    system: &System,
    job: &TrainingJob,
    efficiency: &Efficiency,
) -> Result<Seconds, StepError> {
    let layout = job.layout;
    if layout.pp <= 1 {
        return Ok(Seconds::ZERO);
    }
    let mut elements =
        to_f64(job.micro_batch) * to_f64(layout.cp_tokens(job.seq_len)) * to_f64(model.hidden);
    let distance = (layout.devices() / u64::from(layout.pp.max(1)))
        .saturating_mul(u64::from(job.data_parallel));
    let across = distance >= u64::from(system.gpus_per_node);
    // Sequence parallelism keeps 1/t of the activations on each rank; across nodes without
    // it, Megatron-LM's scatter/gather (Narayanan et al. 2021, §4.1) sends 1/t from each of
    // the t ranks and all-gathers them over the node's links (that gather not counted).
    if (layout.sequence_parallel || across) && layout.tp > 1 {
        elements /= f64::from(layout.tp);
    }
    let bytes = Bytes(elements * job.precisions.act.bytes());
    let cost = crate::parallel::analysis::stage_send_cost(bytes, across, system)
        .map_err(StepError::Collective)?;
    Ok(Seconds(
        cost.latency.get() + cost.transfer.get() / efficiency.network,
    ))
}
