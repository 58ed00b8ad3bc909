//! Pipeline-parallel schedules as timelines: every stage runs its list of forward and backward
//! operations in the schedule's order, each starting when its input has arrived and its device
//! is free. The step time (makespan), each stage's busy time, the bubble and the activations a
//! stage holds come out of the timeline; the closed forms below are what it is checked against,
//! not what it computes.
//!
//! | schedule | bubble, closed form | source |
//! |---|---|---|
//! | [`PipelineSchedule::OneFOneB`] | (p−1)(F+B), a fraction (p−1)/m of the ideal m(F+B) | Narayanan et al. 2021 (Megatron), §2.2.1; DeepSeek-V3 report, Table 2 |
//! | [`PipelineSchedule::Interleaved`] | (p−1)(F+B)/v, a fraction (p−1)/(v·m) | Narayanan et al. 2021, §2.2.2 |
//! | [`PipelineSchedule::ZeroBubble`] (ZB-H1) | (p−1)(F+B−W) with B the input gradient; (p−1)(F+B−2W) in DeepSeek-V3's Table 2, whose B is the full backward (B + W here) | Qi et al. 2024, arXiv 2401.10241, §3.1; DeepSeek-V3, Table 2 |
//!
//! Here F, B and W are one micro-batch's forward, input-gradient and weight-gradient times on a
//! stage; for the schedules that do not split the backward, B + W is the backward, one
//! operation. Stage 0 holds the activations of min(m, p) micro-batches under 1F1B, times
//! 1 + (p−1)/(p·v) interleaved (Narayanan et al. 2021, §2.2.2); ZB-H1 keeps 1F1B's peak, p.
//!
//! The split of the backward is the one the training step's graph makes
//! ([`crate::graph::Grad::Input`] and [`crate::graph::Grad::Weight`] nodes, see
//! [`super::backward`]): summing a stage's nodes of each pass gives its F, B and W.
//!
//! Not modelled: DualPipe (DeepSeek-V3, bubble (p/2−1)(F&B + B − 3W), two pipelines fed from
//! both ends with overlapped forward and backward chunks), ZB-H2 and ZB-V, the optimizer
//! step's synchronisation, and p2p sends that contend with compute (a send here only delays
//! its receiver).

use std::fmt;

/// How a pipeline orders its micro-batches' forward and backward passes on each stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PipelineSchedule {
    /// 1F1B (PipeDream-Flush; Narayanan et al. 2021, §2.2.1): stage i runs p−1−i warm-up
    /// forwards, then alternates one forward and one backward (B + W, one operation), then
    /// the remaining backwards. Bubble (p−1)(F+B): a fraction (p−1)/m of the ideal time.
    OneFOneB,
    /// Megatron's interleaved 1F1B (Narayanan et al. 2021, §2.2.2): each device holds
    /// `virtual_stages` = v model chunks (chunk c of device d is virtual stage c·p + d), each
    /// taking 1/v of the device's F and B + W. Device d runs (p−d−1)·2 + (v−1)·p warm-up chunk
    /// forwards, then one forward and one backward, in Megatron's order (p micro-batches of
    /// one chunk, then the next chunk). Bubble (p−1)(F+B)/v, a fraction (p−1)/(v·m); m must be
    /// a multiple of p. With v = 1 it is [`PipelineSchedule::OneFOneB`].
    Interleaved {
        /// Model chunks per device, v ≥ 1.
        virtual_stages: usize,
    },
    /// ZB-H1 (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", arXiv 2401.10241, §3.1): the
    /// backward split into B (input gradient, on the critical path) and W (weight gradient,
    /// deferred to fill the bubble). Stage i runs 1F1B's p−1−i warm-up forwards, then F, B
    /// and a W whenever more than i weight gradients are pending, so every stage holds at
    /// most p micro-batches' activations (1F1B's peak, on stage 0), then B and one W for each
    /// remaining micro-batch, then its last i W's. Bubble (p−1)(F+B−W) in this module's units
    /// (B the input gradient): the B chain back through the stages is (p−1)·B, not (p−1)(B+W),
    /// and the cool-down's waits are filled with W's. DeepSeek-V3's Table 2 writes it
    /// (p−1)(F+B−2W) with B the full backward, the same figure (with F = B = W it is
    /// (p−1)·F, not 0: reading DeepSeek's B as the input gradient alone would say 0). The
    /// timeline derives the bubble and gives the closed form when each deferred W fits the
    /// cool-down wait it fills (the tests: F = B = W; W = F/2; B = 2W; F = 2W); when W is
    /// longer (F = B = 1, W = 2, p = 4) the closed form's 0 is not reached and the timeline
    /// keeps (p−1)·1 = 3: the W's overrun their gaps and the last stage's p−1 deferred W's run
    /// after its last B.
    ZeroBubble,
}

/// One stage's times for one micro-batch, in any one unit (seconds elsewhere in the crate).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageTimes {
    /// F: the forward pass of the stage's layers.
    pub forward: f64,
    /// B: the backward pass's input gradients ([`crate::graph::Grad::Input`]).
    pub backward: f64,
    /// W: the weight gradients ([`crate::graph::Grad::Weight`]); schedules that do not split
    /// the backward run B + W as one operation.
    pub weight: f64,
}

impl StageTimes {
    /// A stage of forward F, input gradient B and weight gradient W.
    pub const fn new(forward: f64, backward: f64, weight: f64) -> Self {
        StageTimes {
            forward,
            backward,
            weight,
        }
    }
}

/// Why a pipeline cannot be simulated.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PipelineError {
    /// No stages were given.
    NoStages,
    /// Zero micro-batches.
    NoMicroBatches,
    /// Interleaved with zero model chunks per device.
    NoVirtualStages,
    /// The interleaved schedule needs m to be a multiple of p (as Megatron does).
    MicroBatchesNotMultipleOfStages {
        /// m.
        micro_batches: usize,
        /// p.
        stages: usize,
    },
    /// A time (F, B, W of a stage, or the p2p send) is negative or not finite.
    BadTime(f64),
    /// The schedule's orders left every stage waiting on another: a fault of this module
    /// (every order it builds is valid; the property tests look for a counterexample), reported
    /// rather than looping.
    Deadlock,
}

impl fmt::Display for PipelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PipelineError::Deadlock => {
                f.write_str("the pipeline schedule deadlocked (an internal fault of its order)")
            }
            PipelineError::NoStages => f.write_str("a pipeline needs at least one stage"),
            PipelineError::NoMicroBatches => {
                f.write_str("a pipeline needs at least one micro-batch")
            }
            PipelineError::NoVirtualStages => {
                f.write_str("an interleaved pipeline needs at least one model chunk per device")
            }
            PipelineError::MicroBatchesNotMultipleOfStages {
                micro_batches,
                stages,
            } => write!(
                f,
                "the interleaved schedule needs the micro-batches ({micro_batches}) to be a \
                 multiple of the stages ({stages})"
            ),
            PipelineError::BadTime(t) => {
                write!(f, "a pipeline time of {t} is negative or not finite")
            }
        }
    }
}

impl std::error::Error for PipelineError {}

/// A pipeline step's timeline, summarised.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Timeline {
    /// Each stage's busy time: m·(F_i + B_i + W_i), in the unit of the inputs.
    pub busy: Vec<f64>,
    /// The step time: when the last operation on any stage ends.
    pub makespan: f64,
    /// The bubble: makespan − max_i busy_i, the time the busiest stage waits.
    pub bubble: f64,
    /// The bubble as a fraction of the busiest stage's busy time (Megatron's "fraction of
    /// ideal computation time", (p−1)/m for 1F1B); 0 when nothing is busy.
    pub bubble_fraction: f64,
    /// Per stage, the most micro-batches whose activations it holds at once: forwards done
    /// whose backward (W when split) has not finished. Interleaved, a chunk's micro-batch
    /// counts 1/v.
    pub peak_in_flight: Vec<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Forward,
    /// The input gradient, or the whole backward where W is not split off.
    Backward,
    Weight,
}

#[derive(Debug, Clone, Copy)]
struct Step {
    kind: Kind,
    /// The model chunk on this device (0 unless interleaved).
    chunk: usize,
    micro_batch: usize,
}

/// Runs `schedule` over `stages` (p = its length) with `micro_batches` = m and a send of
/// `p2p` between consecutive stages (each way, added to every dependency that crosses
/// devices), and returns the timeline's summary.
///
/// Each stage runs its operations in the schedule's order; an operation starts when its
/// device is free and its input is ready: a forward when the previous stage's forward of that
/// micro-batch has arrived, a backward when the next stage's backward has (the last stage's
/// after its own forward), a weight gradient after its own input gradient.
pub fn simulate(
    schedule: PipelineSchedule,
    stages: &[StageTimes],
    micro_batches: usize,
    p2p: f64,
) -> Result<Timeline, PipelineError> {
    let p = stages.len();
    let m = micro_batches;
    if p == 0 {
        return Err(PipelineError::NoStages);
    }
    if m == 0 {
        return Err(PipelineError::NoMicroBatches);
    }
    for t in stages
        .iter()
        .flat_map(|s| [s.forward, s.backward, s.weight])
        .chain([p2p])
    {
        if !(t.is_finite() && t >= 0.0) {
            return Err(PipelineError::BadTime(t));
        }
    }
    let (v, split) = match schedule {
        PipelineSchedule::OneFOneB => (1, false),
        PipelineSchedule::Interleaved { virtual_stages: 0 } => {
            return Err(PipelineError::NoVirtualStages)
        }
        PipelineSchedule::Interleaved { virtual_stages: 1 } => (1, false),
        PipelineSchedule::Interleaved { virtual_stages } => {
            if !m.is_multiple_of(p) {
                return Err(PipelineError::MicroBatchesNotMultipleOfStages {
                    micro_batches: m,
                    stages: p,
                });
            }
            (virtual_stages, false)
        }
        PipelineSchedule::ZeroBubble => (1, true),
    };
    let orders: Vec<Vec<Step>> = (0..p)
        .map(|d| match (v, split) {
            (1, false) => one_f_one_b(p, m, d),
            (1, true) => zb_h1(p, m, d),
            _ => interleaved(p, m, v, d),
        })
        .collect();

    // Finish times of each virtual stage's forward and backward of each micro-batch.
    let virtual_count = p * v;
    let mut forward_done = vec![None::<f64>; virtual_count * m];
    let mut backward_done = vec![None::<f64>; virtual_count * m];
    let mut next = vec![0usize; p];
    let mut free = vec![0.0f64; p];
    let chunk_of = |x: f64| x / v as f64;
    let mut remaining: usize = orders.iter().map(Vec::len).sum();
    while remaining > 0 {
        let mut progressed = false;
        for d in 0..p {
            while let Some(&step) = orders[d].get(next[d]) {
                let s = step.chunk * p + d;
                let at = |done: &[Option<f64>], stage: usize| done[stage * m + step.micro_batch];
                let cross = if p > 1 { p2p } else { 0.0 };
                let ready = match step.kind {
                    Kind::Forward if s == 0 => Some(0.0),
                    Kind::Forward => at(&forward_done, s - 1).map(|t| t + cross),
                    Kind::Backward if s + 1 == virtual_count => at(&forward_done, s),
                    Kind::Backward => at(&backward_done, s + 1).map(|t| t + cross),
                    Kind::Weight => at(&backward_done, s),
                };
                let Some(ready) = ready else { break };
                let t = &stages[d];
                let duration = match step.kind {
                    Kind::Forward => chunk_of(t.forward),
                    Kind::Backward if split => t.backward,
                    Kind::Backward => chunk_of(t.backward + t.weight),
                    Kind::Weight => t.weight,
                };
                let end = free[d].max(ready) + duration;
                free[d] = end;
                let slot = s * m + step.micro_batch;
                match step.kind {
                    Kind::Forward => forward_done[slot] = Some(end),
                    Kind::Backward => backward_done[slot] = Some(end),
                    Kind::Weight => {}
                }
                next[d] += 1;
                remaining -= 1;
                progressed = true;
            }
        }
        // Every order is a valid one (each stage's backwards in the order the next stage
        // sends them), so a pass over the stages always moves one on.
        if !progressed {
            return Err(PipelineError::Deadlock);
        }
    }

    let busy: Vec<f64> = stages
        .iter()
        .map(|t| m as f64 * (t.forward + t.backward + t.weight))
        .collect();
    let makespan = free.iter().copied().fold(0.0, f64::max);
    let busiest = busy.iter().copied().fold(0.0, f64::max);
    let bubble = (makespan - busiest).max(0.0);
    let bubble_fraction = if busiest > 0.0 { bubble / busiest } else { 0.0 };
    let peak_in_flight = orders
        .iter()
        .map(|order| {
            let (mut held, mut peak) = (0usize, 0usize);
            for step in order {
                match (step.kind, split) {
                    (Kind::Forward, _) => {
                        held += 1;
                        peak = peak.max(held);
                    }
                    (Kind::Backward, false) | (Kind::Weight, true) => held -= 1,
                    _ => {}
                }
            }
            peak as f64 / v as f64
        })
        .collect();
    Ok(Timeline {
        busy,
        makespan,
        bubble,
        bubble_fraction,
        peak_in_flight,
    })
}

fn step(kind: Kind, chunk: usize, micro_batch: usize) -> Step {
    Step {
        kind,
        chunk,
        micro_batch,
    }
}

/// 1F1B on stage `d` of `p`: min(p−1−d, m) forwards, then forward/backward pairs, then the
/// remaining backwards.
fn one_f_one_b(p: usize, m: usize, d: usize) -> Vec<Step> {
    let warmup = (p - 1 - d).min(m);
    let mut order = Vec::with_capacity(2 * m);
    order.extend((0..warmup).map(|j| step(Kind::Forward, 0, j)));
    for k in 0..m - warmup {
        order.push(step(Kind::Forward, 0, warmup + k));
        order.push(step(Kind::Backward, 0, k));
    }
    order.extend((m - warmup..m).map(|j| step(Kind::Backward, 0, j)));
    order
}

/// ZB-H1 on stage `d` of `p`: 1F1B's order with B the input gradient, and a W after a B
/// whenever more than `d` are pending in the steady state, one after each cool-down B, and
/// the rest at the end.
fn zb_h1(p: usize, m: usize, d: usize) -> Vec<Step> {
    let warmup = (p - 1 - d).min(m);
    let mut order = Vec::with_capacity(3 * m);
    let mut next_w = 0;
    order.extend((0..warmup).map(|j| step(Kind::Forward, 0, j)));
    for k in 0..m - warmup {
        order.push(step(Kind::Forward, 0, warmup + k));
        order.push(step(Kind::Backward, 0, k));
        if k + 1 - next_w > d {
            order.push(step(Kind::Weight, 0, next_w));
            next_w += 1;
        }
    }
    for j in m - warmup..m {
        order.push(step(Kind::Backward, 0, j));
        order.push(step(Kind::Weight, 0, next_w));
        next_w += 1;
    }
    order.extend((next_w..m).map(|j| step(Kind::Weight, 0, j)));
    order
}

/// Megatron's interleaved order on device `d` (`megatron/core/pipeline_parallel/schedules.py`,
/// `forward_backward_pipelining_with_interleaving`): chunk forward k is chunk (k/p) mod v of
/// micro-batch (k/(p·v))·p + k mod p; backward k the same with the chunks reversed.
fn interleaved(p: usize, m: usize, v: usize, d: usize) -> Vec<Step> {
    let total = m * v;
    let warmup = ((p - d - 1) * 2 + (v - 1) * p).min(total);
    let at = |k: usize, backward: bool| {
        let c = (k / p) % v;
        let chunk = if backward { v - 1 - c } else { c };
        let micro_batch = (k / (p * v)) * p + k % p;
        let kind = if backward {
            Kind::Backward
        } else {
            Kind::Forward
        };
        step(kind, chunk, micro_batch)
    };
    let mut order = Vec::with_capacity(2 * total);
    order.extend((0..warmup).map(|k| at(k, false)));
    for k in 0..total - warmup {
        order.push(at(warmup + k, false));
        order.push(at(k, true));
    }
    order.extend((total - warmup..total).map(|k| at(k, true)));
    order
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
