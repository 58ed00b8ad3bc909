//! A plan search for training: every layout of tensor, pipeline, context, expert and data
//! parallelism that fills the devices, every micro-batch, recomputation, ZeRO stage, pipeline
//! schedule and sequence-parallel choice, the ones whose memory fits ranked by their predicted
//! step time ([`super::predict`] at an [`Efficiency`], the published estimate by default).
//!
//! **What is enumerated.** t · p · c · e · d = the devices asked for, with t a tensor-parallel
//! degree the model takes ([`Layout::tp_degrees`]; at most [`TrainingPlanOptions::max_tp`]),
//! c a context-parallel degree whose 2c chunks the sequence fills (none with multi-head latent
//! attention or a sliding window shorter than the sequence), e an expert-parallel degree the
//! model takes (1 for a dense model), p ≤ L stages; d·e dividing the global batch B; a
//! micro-batch b with d·e·b dividing B (m = B/(d·e·b) micro-batches a pipeline); each
//! [`TrainingPlanOptions::recompute`] policy, sequence parallelism off and (t > 1) on, each
//! [`TrainingPlanOptions::zero`] stage (ZeRO-0 alone when the d·c data-parallel ranks are one:
//! the stages shard over nothing); 1F1B, ZB-H1 (p > 1) and Megatron's interleaved schedule for
//! every v ≥ 2 dividing stage 0's ⌈L/p⌉ blocks when p divides m.
//!
//! **How it is ranked, exactly and cheaply.** Every candidate's memory is the closed form of
//! [`super::memory`]; those that do not fit are dropped. Each micro-batch shape (t, c, e,
//! sequence parallelism, b, recomputation) is priced once ([`super::micro_batch()`]), and each
//! fitting candidate gets a lower bound on its step time from its stages' F_i, B_i, W_i
//! (prefix sums over the blocks) and the send time x between stages:
//!
//! - 1F1B and interleaved (v chunks; v = 1 is 1F1B): device k cannot start before chunk 0 of
//!   micro-batch 0 has crossed devices 0..k, Σ_{i<k} F_i/v + k·x; it is then busy
//!   m·(F_k + B_k + W_k); its last operation is chunk 0's backward of a micro-batch, which
//!   devices k−1..0 must still run, Σ_{i<k} (B_i + W_i)/v + k·x. The makespan is at least the
//!   largest of these over k (for equal stages, (m + p − 1)(F + B + W) + 2(p−1)·x under 1F1B,
//!   the closed form itself);
//! - ZB-H1: device k's busy time after its start as above, and its last input gradient (after
//!   all its forwards, m·(F_k + B_k)) followed by the input gradients of devices k−1..0 and
//!   device 0's last weight gradient;
//! - the step adds at least the tail of the stage holding the most parameters: its optimizer
//!   update and a lower bound on its exposed data-parallel communication
//!   ([`super::data_parallel::exposed_lower_bound`]: the last gradient bucket, ZeRO-1/2's
//!   parameter all-gather, ZeRO-3's first gather and last reduce-scatter a micro-batch).
//!
//! The candidates are then taken in the order of their bounds and each one's full prediction
//! ([`super::predict_with`]: the discrete-event timeline, the bucketed data-parallel
//! communication, the waterfall) is run until the next bound is above the N-th best step time
//! found (by more than 10⁻⁹ of it, for the rounding of the prefix sums): branch and bound, so
//! the best N are those a full prediction of every fitting candidate would give (ties broken
//! by the order of enumeration), at the cost of the few timelines the bound cannot rule out
//! ([`TrainingPlanSearch::simulated`]; 503 of 133,970 fitting candidates for Llama-3.1-405B
//! on 16,384 H100s, `crates/inputs/benches/train_plan.rs`).
//!
//! The bound is what makes the search fast, and it is checked two ways in the tests: never
//! above the timeline's makespan (uneven stages, sends, every schedule), and the search's
//! best three equal to the three fastest of every fitting candidate predicted in full
//! (Llama-2-7B on 8 H100s, 1F1B alone and every schedule).
//!
//! Not searched: the expert imbalance (1), the bucket size, optimizer, state bytes and
//! precisions (the options'), layouts using fewer devices than asked.

use super::backward::Recompute;
use super::data_parallel::{dp_group, exposed_lower_bound, DataParallel, StepInput};
use super::memory::{
    device_parameters, training_memory, StateBytes, TrainingMemoryError, TrainingSetup, ZeroStage,
};
use super::micro_batch::{micro_batch, MicroBatch, MicroBatchError, MicroBatchShape, Phase};
use super::optimizer::Optimizer;
use super::pipeline::{PipelineSchedule, StageTimes};
use super::step::{
    optimizer_seconds, predict_with, stage_send, update_roofs, StepError, TrainingJob,
    TrainingPrediction,
};
use crate::comm::collective::CollectiveError;
use crate::comm::System;
use crate::graph::Span;
use crate::memory::Reserve;
use crate::model::Transformer;
use crate::parallel::layout::divisors;
use crate::parallel::{Layout, ParallelAnalysisError, ParallelError};
use crate::precision::Precision;
use crate::pricing::{Efficiency, Pricing};
use crate::units::to_f64;
use crate::workload::Precisions;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;

/// What a training plan search tries and assumes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainingPlanOptions {
    /// Plans to return, N (at least 1).
    pub top: usize,
    /// Recomputation policies to try.
    pub recompute: Vec<Recompute>,
    /// Sequence-parallel choices to try (`true` only with t > 1).
    pub sequence_parallel: Vec<bool>,
    /// ZeRO stages to try.
    pub zero: Vec<ZeroStage>,
    /// Try Megatron's interleaved schedule.
    pub interleaved: bool,
    /// Try ZB-H1.
    pub zero_bubble: bool,
    /// The largest tensor-parallel degree tried (`None`: every degree the model takes).
    pub max_tp: Option<u32>,
    /// The largest context-parallel degree tried (`None`: every degree the sequence fills;
    /// `Some(1)`: none).
    pub max_cp: Option<u32>,
    /// The efficiencies the ranking is predicted at (`None`, the default: the system's chip's,
    /// [`crate::device::Device::efficiency`]).
    pub efficiency: Option<Efficiency>,
    /// The optimizer.
    pub optimizer: Optimizer,
    /// Bytes per parameter of each model state.
    pub state: StateBytes,
    /// Number formats.
    pub precisions: Precisions,
    /// Attention by FlashAttention.
    pub flash_attention: bool,
    /// Memory the runtime keeps on each device.
    #[serde(skip)]
    pub reserve: Reserve,
    /// Gradients reduced during the backward ([`TrainingJob::overlap_grad_reduce`]).
    pub overlap_grad_reduce: bool,
    /// Pipeline sends beside the compute ([`TrainingJob::overlap_p2p`]).
    pub overlap_p2p: bool,
}

impl Default for TrainingPlanOptions {
    /// The best 5 over every policy: none, selective and full recomputation, sequence
    /// parallelism off and on, ZeRO 0–3, 1F1B, interleaved and ZB-H1, every tensor-parallel
    /// degree; the chip's efficiency; AdamW with Megatron's 18 bytes per parameter, bf16,
    /// FlashAttention, the default reserve.
    fn default() -> Self {
        TrainingPlanOptions {
            top: 5,
            recompute: vec![Recompute::None, Recompute::Selective, Recompute::Full],
            sequence_parallel: vec![false, true],
            zero: vec![
                ZeroStage::Zero0,
                ZeroStage::Zero1,
                ZeroStage::Zero2,
                ZeroStage::Zero3,
            ],
            interleaved: true,
            zero_bubble: true,
            max_tp: None,
            max_cp: None,
            efficiency: None,
            optimizer: Optimizer::AdamW,
            state: StateBytes::MEGATRON_ADAM,
            precisions: Precisions::uniform(Precision::Bf16),
            flash_attention: true,
            reserve: Reserve::DEFAULT,
            overlap_grad_reduce: true,
            overlap_p2p: true,
        }
    }
}

impl TrainingPlanOptions {
    /// What Narayanan et al. 2021 (arXiv 2104.04473) ran: full recomputation, no sequence
    /// parallelism (Korthikanti et al. 2022 added it), no context parallelism (Megatron-Core,
    /// 2023), no ZeRO (Megatron-LM's distributed optimizer came later), 1F1B or interleaved (no
    /// ZB-H1, 2024), Megatron's fused softmax rather than FlashAttention (2022), gradients
    /// reduced after the backward and blocking pipeline sends ([`TrainingJob::as_megatron_2022`]);
    /// the rest as [`TrainingPlanOptions::default`].
    pub fn megatron_2021() -> Self {
        TrainingPlanOptions {
            recompute: vec![Recompute::Full],
            sequence_parallel: vec![false],
            max_cp: Some(1),
            zero: vec![ZeroStage::Zero0],
            zero_bubble: false,
            flash_attention: false,
            overlap_grad_reduce: false,
            overlap_p2p: false,
            ..Self::default()
        }
    }

    /// What Korthikanti et al. 2022 (arXiv 2205.05198) ran: [`Self::megatron_2021`] with
    /// selective recomputation and sequence parallelism added.
    pub fn megatron_2022() -> Self {
        TrainingPlanOptions {
            recompute: vec![Recompute::Full, Recompute::Selective],
            sequence_parallel: vec![false, true],
            ..Self::megatron_2021()
        }
    }
}

/// One plan of the search: the job and its step predicted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainingPlan {
    /// The job: layout, data parallelism, micro-batch, recomputation, ZeRO, schedule.
    pub job: TrainingJob,
    /// Its step at the search's efficiencies (the ranking's).
    pub estimate: TrainingPrediction,
    /// Its step at the roofline bound ([`Efficiency::BOUND`]).
    pub bound: TrainingPrediction,
}

/// Candidates or layouts the search did not rank, by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Skipped {
    /// Degree tuples (t, c, e) the model or the sequence does not take: K/V or query heads
    /// not divisible by t, experts not by e, fewer than 2c tokens per sequence, context
    /// parallelism on multi-head latent attention or a sliding window.
    pub layout: u64,
    /// Degree tuples (t, p, c, e, d) whose d·e does not divide the global batch.
    pub batch: u64,
    /// Candidates whose memory does not fit ([`super::memory`]).
    pub memory: u64,
    /// Candidates needing a link the system lacks (a collective across nodes with no
    /// network between them).
    pub link: u64,
}

/// The result of [`search_training`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainingPlanSearch {
    /// Devices every plan uses.
    pub devices: u64,
    /// Sequences per step, B.
    pub global_batch: u64,
    /// Tokens per sequence, s.
    pub seq_len: u64,
    /// The best plans, fastest estimated step first (at most [`TrainingPlanOptions::top`]).
    pub best: Vec<TrainingPlan>,
    /// Candidates whose memory was evaluated (every combination of the module docs).
    pub evaluated: u64,
    /// Candidates whose memory fits.
    pub fit: u64,
    /// Micro-batch shapes priced.
    pub shapes: u64,
    /// Full predictions run (timeline, data-parallel buckets, waterfall): the candidates the
    /// lower bound could not rule out.
    pub simulated: u64,
    /// What was skipped, by reason.
    pub skipped: Skipped,
}

/// Why a training plan search cannot run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TrainingPlanError {
    /// A count that must be at least 1 is 0 (`devices`, `global_batch`, `seq_len`, `top`).
    Zero(&'static str),
    /// More devices asked for than the system has.
    TooFewDevices {
        /// Asked for.
        devices: u64,
        /// The system's.
        available: u64,
    },
    /// An option list is empty (`recompute`, `sequence_parallel`, `zero`).
    NoChoice(&'static str),
    /// A step could not be predicted (model, chip, fabric, efficiencies).
    Step(StepError),
}

impl fmt::Display for TrainingPlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrainingPlanError::Zero(q) => write!(f, "{q} must be at least 1"),
            TrainingPlanError::TooFewDevices { devices, available } => write!(
                f,
                "the search asks for {devices} devices, the system has {available}"
            ),
            TrainingPlanError::NoChoice(q) => write!(f, "no {q} choice to try"),
            TrainingPlanError::Step(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for TrainingPlanError {}

/// One fitting candidate, waiting for its full prediction.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    job: TrainingJob,
    /// Its step time's lower bound, s.
    lower: f64,
    /// Enumeration order (the tie-break).
    order: u64,
    /// Index of its micro-batch shape.
    shape: u32,
}

/// A priced micro-batch shape's block sums: F, B, W of blocks 0..k as prefix sums, and of
/// the prologue and the epilogue.
#[derive(Debug, Default)]
struct BlockSums {
    prefix: Vec<[f64; 3]>,
    prologue: [f64; 3],
    epilogue: [f64; 3],
}

impl BlockSums {
    /// Refills from `mb` over `layers` blocks, reusing the buffer.
    fn fill(&mut self, mb: &MicroBatch, layers: u64) {
        let l = usize::try_from(layers).unwrap_or(0);
        self.prefix.clear();
        self.prefix.resize(l + 1, [0.0; 3]);
        self.prologue = [0.0; 3];
        self.epilogue = [0.0; 3];
        for p in &mb.pieces {
            let k = match p.phase {
                Phase::Forward => 0,
                Phase::Recompute | Phase::Input => 1,
                Phase::Weight => 2,
            };
            let t = p.time + p.launch;
            match p.span {
                Span::Blocks { first, last } => {
                    let a = usize::try_from(first).unwrap_or(l).min(l);
                    let b = usize::try_from(last.saturating_add(1)).unwrap_or(l).min(l);
                    if a < b {
                        self.prefix[a][k] += t;
                        self.prefix[b][k] -= t;
                    }
                }
                Span::Prologue => self.prologue[k] += t,
                Span::Epilogue => self.epilogue[k] += t,
                Span::StageBoundaries { .. } => {}
            }
        }
        // Difference array → per-block values → prefix sums (prefix[j] = blocks 0..j).
        let mut running = [0.0; 3];
        let mut acc = [0.0; 3];
        for j in 0..=l {
            let delta = self.prefix[j];
            self.prefix[j] = acc;
            for k in 0..3 {
                running[k] += delta[k];
                acc[k] += running[k];
            }
        }
    }

    /// F, B, W of a stage of blocks `first..first + n`.
    fn stage(&self, first: u64, n: u64, is_first: bool, is_last: bool) -> StageTimes {
        let at = |j: u64| {
            usize::try_from(j)
                .ok()
                .and_then(|j| self.prefix.get(j))
                .copied()
                .unwrap_or([0.0; 3])
        };
        let (a, b) = (at(first), at(first + n));
        let mut s = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        for ((x, pro), epi) in s.iter_mut().zip(self.prologue).zip(self.epilogue) {
            if is_first {
                *x += pro;
            }
            if is_last {
                *x += epi;
            }
        }
        StageTimes::new(s[0].max(0.0), s[1].max(0.0), s[2].max(0.0))
    }
}

/// The lower bound of the module docs on the makespan of `schedule` over `stages` with `m`
/// micro-batches and a send of `x` between stages.
fn makespan_lower(schedule: PipelineSchedule, stages: &[StageTimes], m: f64, x: f64) -> f64 {
    let x = if stages.len() > 1 { x } else { 0.0 };
    let (v, split) = match schedule {
        PipelineSchedule::Interleaved { virtual_stages } => (virtual_stages.max(1) as f64, false),
        PipelineSchedule::ZeroBubble => (1.0, true),
        _ => (1.0, false),
    };
    let w0 = stages.first().map_or(0.0, |s| s.weight);
    let (mut before_f, mut back, mut back_b) = (0.0, 0.0, 0.0);
    let mut lower = 0.0f64;
    for (k, s) in stages.iter().enumerate() {
        let hops = k as f64 * x;
        let start = before_f / v + hops;
        let busy = m * (s.forward + s.backward + s.weight);
        let end = if split {
            (start + busy).max(start + m * (s.forward + s.backward) + back_b + hops + w0)
        } else {
            start + busy + back / v + hops
        };
        lower = lower.max(end);
        before_f += s.forward;
        back += s.backward + s.weight;
        back_b += s.backward;
    }
    lower
}

fn is_no_link(e: &StepError) -> bool {
    let collective = |c: &CollectiveError| matches!(c, CollectiveError::NoLink { .. });
    match e {
        StepError::Collective(c) => collective(c),
        StepError::DataParallel(super::data_parallel::DataParallelError::Collective(c)) => {
            collective(c)
        }
        StepError::MicroBatch(m) => micro_no_link(m),
        _ => false,
    }
}

fn micro_no_link(e: &MicroBatchError) -> bool {
    matches!(
        e,
        MicroBatchError::Parallel(ParallelAnalysisError::Parallel(ParallelError::Collective(
            CollectiveError::NoLink { .. }
        )))
    )
}

/// Whether context parallelism of degree `c` can split `model`'s sequences of `seq_len`
/// ([`Layout::validate_for`]'s rule).
fn context_fits(model: &Transformer, c: u64, seq_len: u64) -> bool {
    c <= 1
        || (seq_len >= 2 * c
            && model.variant.mla.is_none()
            && model.variant.sliding_window.is_none_or(|w| w >= seq_len))
}

/// Searches every training layout of `model` on `devices` of `system` for `global_batch`
/// sequences of `seq_len` tokens a step (module docs: what is enumerated, and the lower
/// bound and branch and bound that rank it), and returns the best
/// [`TrainingPlanOptions::top`] whose memory fits, with their estimates and bounds.
///
/// # Errors
/// A count of zero, more devices than the system has, an empty option list, or a step that
/// cannot be predicted for a reason other than a missing link (the model, chip, fabric or
/// efficiencies).
pub fn search_training(
    model: &Transformer,
    system: &System,
    devices: u64,
    global_batch: u64,
    seq_len: u64,
    options: &TrainingPlanOptions,
) -> Result<TrainingPlanSearch, TrainingPlanError> {
    for (q, v) in [
        ("devices", devices),
        ("global_batch", global_batch),
        ("seq_len", seq_len),
        ("top", options.top as u64),
    ] {
        if v == 0 {
            return Err(TrainingPlanError::Zero(q));
        }
    }
    if devices > system.devices() {
        return Err(TrainingPlanError::TooFewDevices {
            devices,
            available: system.devices(),
        });
    }
    for (q, empty) in [
        ("recompute", options.recompute.is_empty()),
        ("sequence_parallel", options.sequence_parallel.is_empty()),
        ("zero", options.zero.is_empty()),
    ] {
        if empty {
            return Err(TrainingPlanError::NoChoice(q));
        }
    }
    let eff = options
        .efficiency
        .unwrap_or_else(|| system.chip.efficiency());
    eff.validate()
        .map_err(|e| TrainingPlanError::Step(StepError::Efficiency(e)))?;
    let base = |layout: Layout, d: u64, b: u64| TrainingJob {
        optimizer: options.optimizer,
        state: options.state,
        precisions: options.precisions,
        flash_attention: options.flash_attention,
        reserve: options.reserve,
        overlap_grad_reduce: options.overlap_grad_reduce,
        overlap_p2p: options.overlap_p2p,
        ..TrainingJob::new(
            layout,
            u32::try_from(d).unwrap_or(u32::MAX),
            global_batch,
            b,
            seq_len,
        )
    };
    let capacity = system.chip.capacity();
    let mut skipped = Skipped::default();
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut shapes: Vec<MicroBatchShape> = Vec::new();
    let mut sums = BlockSums::default();
    let mut times: Vec<StageTimes> = Vec::new();
    let (mut evaluated, mut fit, mut order) = (0u64, 0u64, 0u64);
    let max_tp = u64::from(options.max_tp.unwrap_or(u32::MAX));
    let zero_bubble: &[bool] = if options.zero_bubble {
        &[false, true]
    } else {
        &[false]
    };

    for t in divisors(devices).filter(|&t| t <= max_tp) {
        if !Layout::tp_degrees(model).any(|x| x == t) {
            skipped.layout += 1;
            continue;
        }
        let max_cp = u64::from(options.max_cp.unwrap_or(u32::MAX));
        for c in divisors(devices / t).filter(|&c| c <= max_cp) {
            if !context_fits(model, c, seq_len) {
                skipped.layout += 1;
                continue;
            }
            for e in divisors(devices / t / c) {
                if e > 1 && !Layout::ep_degrees(model).any(|x| x == e) {
                    skipped.layout += 1;
                    continue;
                }
                let rest = devices / t / c / e;
                let stages_of = || divisors(rest).filter(|&p| p <= model.layers);
                for p in stages_of() {
                    if !global_batch.is_multiple_of((rest / p).saturating_mul(e)) {
                        skipped.batch += 1;
                    }
                }
                for &sp in &options.sequence_parallel {
                    if sp && t == 1 {
                        continue;
                    }
                    for &recompute in &options.recompute {
                        for b in divisors(global_batch / e.min(global_batch)) {
                            let shape = MicroBatchShape {
                                layout: Layout {
                                    tp: t as u32,
                                    pp: 1,
                                    sequence_parallel: sp,
                                    ep: e as u32,
                                    cp: c as u32,
                                    ..Layout::SINGLE
                                },
                                micro_batch: b,
                                seq_len,
                                recompute,
                                precisions: options.precisions,
                                flash_attention: options.flash_attention,
                            };
                            // None: not priced yet; Some(false): needs a missing link.
                            let mut priced: Option<bool> = None;
                            for p in stages_of() {
                                let d = rest / p;
                                let per = d.saturating_mul(e).saturating_mul(b);
                                if !global_batch.is_multiple_of(per) {
                                    continue;
                                }
                                let m = global_batch / per;
                                let layout = Layout {
                                    pp: p as u32,
                                    ..shape.layout
                                };
                                let blocks0 = layout.stage_blocks(model.layers, 0);
                                let dp_ranks = d.saturating_mul(c);
                                let mut job = base(layout, d, b);
                                job.recompute = recompute;
                                let mut bounds_ready = false;
                                let (mut x, mut opt_at) = (0.0, [0.0f64; 4]);
                                for &zero in &options.zero {
                                    if dp_ranks == 1 && zero != ZeroStage::Zero0 {
                                        continue;
                                    }
                                    job.zero = zero;
                                    for schedule in schedules(p, m, blocks0, options, zero_bubble) {
                                        job.schedule = schedule;
                                        evaluated += 1;
                                        order += 1;
                                        let setup = TrainingSetup {
                                            layout,
                                            data_parallel: u32::try_from(dp_ranks)
                                                .unwrap_or(u32::MAX),
                                            zero,
                                            state: options.state,
                                            micro_batch: b,
                                            seq_len,
                                            micro_batches: m,
                                            interleave: job.virtual_stages(),
                                            recompute,
                                            flash_attention: options.flash_attention,
                                        };
                                        let memory = match training_memory(
                                            model,
                                            &setup,
                                            capacity,
                                            options.reserve,
                                        ) {
                                            Ok(mem) => mem,
                                            Err(TrainingMemoryError::Layout(_)) => {
                                                skipped.layout += 1;
                                                continue;
                                            }
                                            Err(e) => {
                                                return Err(TrainingPlanError::Step(
                                                    StepError::Memory(e),
                                                ))
                                            }
                                        };
                                        if memory.fits() != Some(true) {
                                            skipped.memory += 1;
                                            continue;
                                        }
                                        fit += 1;
                                        if priced.is_none() {
                                            priced = Some(
                                                match micro_batch(
                                                    model,
                                                    system,
                                                    &shape,
                                                    Pricing::Estimate(&eff),
                                                ) {
                                                    Ok(mb) => {
                                                        sums.fill(&mb, model.layers);
                                                        shapes.push(shape);
                                                        true
                                                    }
                                                    Err(e) if micro_no_link(&e) => false,
                                                    Err(e) => {
                                                        return Err(TrainingPlanError::Step(
                                                            StepError::MicroBatch(e),
                                                        ))
                                                    }
                                                },
                                            );
                                        }
                                        if priced != Some(true) {
                                            skipped.link += 1;
                                            continue;
                                        }
                                        if !bounds_ready {
                                            match stage_bounds(
                                                model,
                                                system,
                                                &job,
                                                &eff,
                                                &sums,
                                                &mut times,
                                                &options.zero,
                                                dp_ranks,
                                                m,
                                            ) {
                                                Ok((send, opt)) => {
                                                    (x, opt_at) = (send, opt);
                                                    bounds_ready = true;
                                                }
                                                Err(e) if is_no_link(&e) => {
                                                    skipped.link += 1;
                                                    continue;
                                                }
                                                Err(e) => return Err(TrainingPlanError::Step(e)),
                                            }
                                        }
                                        let lower = makespan_lower(schedule, &times, m as f64, x)
                                            + opt_at[zero_index(zero)];
                                        candidates.push(Candidate {
                                            job,
                                            lower,
                                            order,
                                            shape: u32::try_from(shapes.len() - 1)
                                                .unwrap_or(u32::MAX),
                                        });
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    // Branch and bound over the candidates in the order of their lower bounds.
    // Sorted by key (bound, enumeration order) rather than moving the candidates themselves.
    let mut keys: Vec<(f64, u64, usize)> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (c.lower, c.order, i))
        .collect();
    keys.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let top = options.top;
    let mut best: Vec<(f64, u64, TrainingPrediction, u32)> = Vec::with_capacity(top + 1);
    let mut cache: HashMap<u32, MicroBatch> = HashMap::new();
    let mut simulated = 0u64;
    for cand in keys.iter().filter_map(|k| candidates.get(k.2)) {
        if best.len() == top {
            let worst = best.last().map_or(f64::INFINITY, |b| b.0);
            if cand.lower > worst * (1.0 + 1e-9) {
                break;
            }
        }
        let shape = shapes
            .get(cand.shape as usize)
            .copied()
            .ok_or(TrainingPlanError::Zero("shape"))?;
        if let std::collections::hash_map::Entry::Vacant(slot) = cache.entry(cand.shape) {
            let mb = micro_batch(model, system, &shape, Pricing::Estimate(&eff))
                .map_err(|e| TrainingPlanError::Step(StepError::MicroBatch(e)))?;
            slot.insert(mb);
        }
        let Some(mb) = cache.get(&cand.shape) else {
            continue;
        };
        simulated += 1;
        let prediction = match predict_with(model, system, &cand.job, Pricing::Estimate(&eff), mb) {
            Ok(p) => p,
            Err(e) if is_no_link(&e) => {
                skipped.link += 1;
                continue;
            }
            Err(e) => return Err(TrainingPlanError::Step(e)),
        };
        let t = prediction.step_time.get();
        let at = best
            .iter()
            .position(|b| t < b.0 || (t == b.0 && cand.order < b.1))
            .unwrap_or(best.len());
        if at < top {
            best.insert(at, (t, cand.order, prediction, cand.shape));
            best.truncate(top);
        }
    }

    let mut plans = Vec::with_capacity(best.len());
    for (_, _, estimate, shape) in best {
        let shape = shapes
            .get(shape as usize)
            .copied()
            .ok_or(TrainingPlanError::Zero("shape"))?;
        let mb = micro_batch(model, system, &shape, Pricing::Bound)
            .map_err(|e| TrainingPlanError::Step(StepError::MicroBatch(e)))?;
        let bound = predict_with(model, system, &estimate.job, Pricing::Bound, &mb)
            .map_err(TrainingPlanError::Step)?;
        plans.push(TrainingPlan {
            job: estimate.job,
            estimate,
            bound,
        });
    }
    Ok(TrainingPlanSearch {
        devices,
        global_batch,
        seq_len,
        best: plans,
        evaluated,
        fit,
        shapes: shapes.len() as u64,
        simulated,
        skipped,
    })
}

fn zero_index(z: ZeroStage) -> usize {
    match z {
        ZeroStage::Zero0 => 0,
        ZeroStage::Zero1 => 1,
        ZeroStage::Zero2 => 2,
        ZeroStage::Zero3 => 3,
    }
}

/// The schedules tried on `p` stages with `m` micro-batches and `blocks0` blocks on stage 0:
/// 1F1B; with p > 1, ZB-H1 and every interleaved v ≥ 2 dividing `blocks0` when p divides m.
fn schedules(
    p: u64,
    m: u64,
    blocks0: u64,
    options: &TrainingPlanOptions,
    zero_bubble: &'static [bool],
) -> impl Iterator<Item = PipelineSchedule> {
    let pipelined = p > 1;
    let interleave = pipelined && options.interleaved && m.is_multiple_of(p);
    let zb = zero_bubble.iter().skip(1).filter(move |_| pipelined);
    std::iter::once(PipelineSchedule::OneFOneB)
        .chain(
            divisors(if interleave { blocks0 } else { 1 })
                .filter(|&v| v >= 2)
                .map(|v| PipelineSchedule::Interleaved {
                    virtual_stages: usize::try_from(v).unwrap_or(usize::MAX),
                }),
        )
        .chain(zb.map(|_| PipelineSchedule::ZeroBubble))
}

/// Fills `times` with each stage's F, B, W of `job`'s pipeline and returns the send between
/// stages and, for each ZeRO stage (indexed as [`ZeroStage`] is declared), a lower bound on
/// the step's tail: the stage holding the most parameters' optimizer update and its exposed
/// data-parallel communication's lower bound ([`exposed_lower_bound`]), s (the step ends
/// after every stage's tail, so after this one's).
#[allow(clippy::too_many_arguments)]
fn stage_bounds(
    model: &Transformer,
    system: &System,
    job: &TrainingJob,
    eff: &Efficiency,
    sums: &BlockSums,
    times: &mut Vec<StageTimes>,
    zeros: &[ZeroStage],
    dp_ranks: u64,
    m: u64,
) -> Result<(f64, [f64; 4]), StepError> {
    let layout = job.layout;
    let p = layout.pp.max(1);
    times.clear();
    let params = device_parameters(model, &layout);
    let mut first = 0;
    let (mut most, mut most_blocks) = (0u64, 0u64);
    for i in 0..p {
        let n = layout.stage_blocks(model.layers, i);
        let (is_first, is_last) = (i == 0, i + 1 == p);
        times.push(sums.stage(first, n, is_first, is_last));
        let mut parameters = params.per_block.saturating_mul(n);
        if is_first {
            parameters = parameters.saturating_add(params.first_stage);
        }
        if is_last {
            parameters = parameters.saturating_add(params.last_stage);
        }
        if parameters > most {
            (most, most_blocks) = (parameters, n);
        }
        first += n;
    }
    let x = stage_send(model, system, job, eff)?.get();
    let (vector, bandwidth, grad) = update_roofs(system, job)?;
    let ranks = u32::try_from(dp_ranks).unwrap_or(u32::MAX);
    let stride = layout.tp.max(1).saturating_mul(layout.ep.max(1));
    let group = dp_group(system, ranks, stride).map_err(StepError::DataParallel)?;
    let input = StepInput {
        parameters: to_f64(most),
        gradient_bytes: job.state.gradient,
        weight_bytes: job.state.weight,
        forward: &[],
        backward: &[],
        micro_batches: m,
    };
    let mut tail = [0.0; 4];
    for &z in zeros {
        let shards = if z == ZeroStage::Zero0 { 1 } else { dp_ranks };
        let dp = DataParallel {
            transfer_efficiency: eff.network,
            ..DataParallel::new(ranks, z)
        };
        let exposed = exposed_lower_bound(&dp, &input, most_blocks.max(1), system, group)
            .map_err(StepError::DataParallel)?;
        tail[zero_index(z)] =
            exposed.get() + optimizer_seconds(job, most, shards, grad, (vector, bandwidth), eff)?;
    }
    Ok((x, tail))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::llama2_7b;
    use crate::parallel::tests::dgx;
    use crate::train::pipeline::simulate;
    use crate::train::predict;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn the_lower_bound_is_the_closed_form_for_equal_stages() {
        // p = 4, m = 8, F = 1, B = 2, W = 0 (one backward), no sends: 1F1B's (m + p − 1)(F + B)
        // = 11 · 3 = 33; interleaved v = 2: m(F+B) + (p − 1)(F + B)/2 = 24 + 4.5 = 28.5.
        let stages = [StageTimes::new(1.0, 2.0, 0.0); 4];
        assert_eq!(
            makespan_lower(PipelineSchedule::OneFOneB, &stages, 8.0, 0.0),
            33.0
        );
        assert_eq!(
            makespan_lower(
                PipelineSchedule::Interleaved { virtual_stages: 2 },
                &stages,
                8.0,
                0.0
            ),
            28.5
        );
    }

    #[test]
    fn the_lower_bound_never_exceeds_the_timeline() -> TestResult {
        let shapes = [
            vec![StageTimes::new(1.0, 2.0, 0.5); 4],
            vec![
                StageTimes::new(1.5, 2.0, 1.0),
                StageTimes::new(1.0, 1.0, 1.0),
                StageTimes::new(0.5, 3.0, 0.25),
                StageTimes::new(2.0, 1.0, 2.0),
            ],
        ];
        for stages in &shapes {
            for m in [4usize, 8, 12] {
                for x in [0.0, 0.3] {
                    for s in [
                        PipelineSchedule::OneFOneB,
                        PipelineSchedule::Interleaved { virtual_stages: 2 },
                        PipelineSchedule::Interleaved { virtual_stages: 3 },
                        PipelineSchedule::ZeroBubble,
                    ] {
                        let real = simulate(s, stages, m, x)?.makespan;
                        let low = makespan_lower(s, stages, m as f64, x);
                        assert!(
                            low <= real * (1.0 + 1e-12),
                            "{s:?} m {m} x {x}: {low} > {real}"
                        );
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn the_search_keeps_the_fastest_of_an_exhaustive_prediction_1f1b() -> TestResult {
        exhaustive(false)
    }

    #[test]
    fn the_search_keeps_the_fastest_of_an_exhaustive_prediction_every_schedule() -> TestResult {
        exhaustive(true)
    }

    /// Llama-2-7B on 8 H100s, B = 16 × 2048: every fitting candidate predicted in full here
    /// (1F1B, and with `schedules` ZB-H1 and every interleaved v dividing the stage's 32/p
    /// blocks when p divides m); the search's best three must be the three fastest of them,
    /// found with fewer timelines than candidates.
    fn exhaustive(schedules: bool) -> TestResult {
        let model = llama2_7b();
        let system = dgx(1);
        let options = TrainingPlanOptions {
            top: 3,
            interleaved: schedules,
            zero_bubble: schedules,
            ..TrainingPlanOptions::default()
        };
        let found = search_training(&model, &system, 8, 16, 2048, &options)?;
        assert!(found.fit > 0 && found.best.len() == 3);
        assert!(
            found.simulated < found.fit,
            "the bound prunes: {}",
            found.simulated
        );
        let mut times: Vec<f64> = Vec::new();
        for (t, p, c) in (0..64u32).map(|k| (1 << (k % 4), 1 << (k / 4 % 4), 1 << (k / 16))) {
            {
                if t * p * c > 8 {
                    continue;
                }
                let d = 8 / (t * p * c);
                for b in [1u64, 2, 4, 8, 16] {
                    if 16 % (u64::from(d) * b) != 0 {
                        continue;
                    }
                    for rc in [Recompute::None, Recompute::Selective, Recompute::Full] {
                        for sp in [false, true] {
                            if sp && t == 1 {
                                continue;
                            }
                            for zero in [
                                ZeroStage::Zero0,
                                ZeroStage::Zero1,
                                ZeroStage::Zero2,
                                ZeroStage::Zero3,
                            ] {
                                if d * c == 1 && zero != ZeroStage::Zero0 {
                                    continue;
                                }
                                let layout = Layout {
                                    tp: t,
                                    pp: p,
                                    sequence_parallel: sp,
                                    cp: c,
                                    ..Layout::SINGLE
                                };
                                let m = 16 / (u64::from(d) * b);
                                let blocks = 32 / u64::from(p);
                                let mut tried = vec![PipelineSchedule::OneFOneB];
                                if schedules && p > 1 {
                                    if m % u64::from(p) == 0 {
                                        for v in 2..=blocks {
                                            if blocks % v == 0 {
                                                tried.push(PipelineSchedule::Interleaved {
                                                    virtual_stages: v as usize,
                                                });
                                            }
                                        }
                                    }
                                    tried.push(PipelineSchedule::ZeroBubble);
                                }
                                for schedule in tried {
                                    let job = TrainingJob {
                                        zero,
                                        recompute: rc,
                                        schedule,
                                        ..TrainingJob::new(layout, d, 16, b, 2048)
                                    };
                                    let eff = options
                                        .efficiency
                                        .unwrap_or_else(|| system.chip.efficiency());
                                    let pred =
                                        predict(&model, &system, &job, Pricing::Estimate(&eff))?;
                                    if pred.memory.fits() == Some(true) {
                                        times.push(pred.step_time.get());
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(times.len() as u64, found.fit);
        times.sort_by(f64::total_cmp);
        let best: Vec<f64> = found
            .best
            .iter()
            .map(|p| p.estimate.step_time.get())
            .collect();
        assert_eq!(best, times[..3]);
        for w in found.best.windows(2) {
            assert!(w[0].estimate.step_time.get() <= w[1].estimate.step_time.get());
        }
        for plan in &found.best {
            assert!(plan.bound.step_time.get() <= plan.estimate.step_time.get());
            assert_eq!(plan.estimate.memory.fits(), Some(true));
        }
        Ok(())
    }

    #[test]
    fn bad_input_is_refused() -> TestResult {
        let model = llama2_7b();
        let system = dgx(1);
        let o = TrainingPlanOptions::default();
        assert_eq!(
            search_training(&model, &system, 8, 0, 2048, &o),
            Err(TrainingPlanError::Zero("global_batch"))
        );
        assert!(matches!(
            search_training(&model, &system, 16, 16, 2048, &o),
            Err(TrainingPlanError::TooFewDevices { .. })
        ));
        Ok(())
    }
}
