//! The data-parallel communication of one training step, with and without ZeRO, and how much
//! of it the backward (and, under ZeRO-3, the forward) pass hides.
//!
//! Ψ' is the parameters one device holds after tensor and pipeline parallelism
//! ([`super::memory::device_parameters`]); G = Ψ'·g gradient bytes, W = Ψ'·w weight bytes.
//! Per step, on N_d ranks (ZeRO, Rajbhandari et al. 2020, §7):
//!
//! | [`ZeroStage`] | collectives | bytes per rank |
//! |---|---|---|
//! | `Zero0` | all-reduce of G in buckets, once per step | 2(N−1)/N·G |
//! | `Zero1`, `Zero2` | reduce-scatter of G in buckets, once per step; all-gather of W after the optimizer step | (N−1)/N·(G + W) |
//! | `Zero3` | per micro-batch and layer: all-gather of W/L before its forward and again before its backward, reduce-scatter of G/L after its backward | (N−1)/N·(2W + G) per micro-batch |
//!
//! With w = g (bf16 weights and gradients) ZeRO-1 and ZeRO-2 move what plain data parallelism
//! moves (a ring all-reduce is a reduce-scatter followed by an all-gather, ZeRO §7.2.1), and
//! ZeRO-3 moves 1.5× of it (3Ψ against 2Ψ, ZeRO §7.2.2).
//!
//! **Overlap.** Gradients are reduced in buckets launched as the backward pass fills them
//! (Li et al. 2020, "PyTorch Distributed: Experiences on Accelerating Data Parallel Training",
//! VLDB 13(12), §3.2.3 and §4.2; Megatron-LM `--overlap-grad-reduce`), on a communication
//! stream of their own, one collective at a time in launch order. The exposed time is when the
//! last bucket finishes minus when the backward finishes (≥ 0): with a backward much longer
//! than the communication, only the last bucket. ZeRO-3 / FSDP `FULL_SHARD` prefetches the
//! next layer's parameters one layer ahead (Zhao et al. 2023, "PyTorch FSDP", VLDB 16(12),
//! §3.3.2 forward and backward prefetching): a layer waits only where its gather takes longer
//! than the layer before it, and the first layer's gather is exposed.
//!
//! Assumptions, stated once:
//! - Ψ' is spread evenly over the L layers given (the embedding and lm_head of the pipeline
//!   ends fall into the layers' share), and inside a layer's backward its gradients come out at
//!   a uniform rate, so a bucket is ready when the backward has produced its last byte.
//! - Buckets are filled in backward order, all of `bucket_bytes` but the last (the first
//!   layers' gradients), which holds the remainder. PyTorch DDP's smaller first bucket (1 MiB,
//!   `_DEFAULT_FIRST_BUCKET_BYTES`) is not modelled.
//! - ZeRO-0/1/2 with gradient accumulation reduce once per step, after the last micro-batch
//!   (PyTorch `no_sync`, Megatron's gradient buffer): only that micro-batch's backward hides
//!   it. The parameter all-gather of ZeRO-1/2 after the optimizer step is counted exposed
//!   (Megatron's `--overlap-param-gather` would hide it behind the next forward).
//! - ZeRO-3 gathers and reduce-scatters every micro-batch (the gradients stay sharded), so its
//!   traffic and exposed time are those of one micro-batch times their number.
//! - Every collective is priced with [`collective_cost`] on the system's fabric; the compute
//!   and the communication do not slow each other down.

use super::memory::ZeroStage;
use crate::comm::collective::{
    collective_cost, AlgorithmChoice, Collective, CollectiveCost, CollectiveError,
};
use crate::comm::system::{Group, System};
use crate::units::{Bytes, Seconds};
use serde::Serialize;
use std::fmt;

/// PyTorch DDP's default bucket: `bucket_cap_mb = 25`, i.e. 25·2^20 = 26,214,400 bytes
/// (`torch.nn.parallel.DistributedDataParallel`; Li et al. 2020 §5.2 measures 25 MB as a good
/// size). Megatron-Core sizes its buckets in parameters instead
/// (`DistributedDataParallelConfig.bucket_size`, by default max(40·10^6, 10^6·N_d) parameters
/// when gradient reduction is overlapped).
pub const DDP_BUCKET_BYTES: f64 = 25.0 * 1024.0 * 1024.0;

/// Most buckets one step's gradients are cut into (2^20): beyond it the bucket is too small to
/// be a sensible setting.
pub const MAX_BUCKETS: f64 = 1_048_576.0;

/// Data parallelism over `degree` ranks with model states sharded as `zero` says.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DataParallel {
    /// N_d, the data-parallel ranks.
    pub degree: u32,
    /// How far the model states are sharded ([`ZeroStage`]).
    pub zero: ZeroStage,
    /// Bytes of one gradient bucket ([`DDP_BUCKET_BYTES`] by default).
    pub bucket_bytes: Bytes,
    /// The algorithm every collective is priced with ([`AlgorithmChoice::Auto`] by default).
    pub algorithm: AlgorithmChoice,
    /// η, the share of the link's speed the collectives reach: each one's transfer term is
    /// divided by it (`t_α + t_β / η`, [`crate::comm::estimate`]). 1 for the α–β bound (the
    /// default); an η outside (0, 1] is taken as 1.
    pub transfer_efficiency: f64,
}

impl DataParallel {
    /// `degree` ranks, `zero`, PyTorch DDP's 25 MiB bucket, the fastest algorithm.
    pub fn new(degree: u32, zero: ZeroStage) -> Self {
        Self {
            degree,
            zero,
            bucket_bytes: Bytes(DDP_BUCKET_BYTES),
            algorithm: AlgorithmChoice::Auto,
            transfer_efficiency: 1.0,
        }
    }
}

/// What the data-parallel communication of one step is computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepInput<'a> {
    /// Ψ', the parameters one device holds.
    pub parameters: f64,
    /// Bytes per gradient element as reduced: 2 (bf16) or 4 (fp32).
    pub gradient_bytes: f64,
    /// Bytes per weight element as gathered: 2 (bf16).
    pub weight_bytes: f64,
    /// Each layer's forward time of one micro-batch, first layer first (read under ZeRO-3
    /// only; may be empty otherwise).
    pub forward: &'a [Seconds],
    /// Each layer's backward time of one micro-batch (recomputation included), last layer
    /// first, as the backward pass runs.
    pub backward: &'a [Seconds],
    /// Micro-batches per step (gradient accumulation), at least 1.
    pub micro_batches: u64,
}

/// One kind of collective of a step: `count` of them, each of `bytes`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepCollective {
    /// What it is (`gradient all-reduce bucket`).
    pub name: &'static str,
    /// The collective.
    pub collective: Collective,
    /// S of one, as nccl-tests counts it, bytes.
    pub bytes: Bytes,
    /// How many per step.
    pub count: u64,
    /// The α–β cost of one.
    pub cost: CollectiveCost,
}

impl StepCollective {
    /// count × the time of one, seconds.
    pub fn time(&self) -> Seconds {
        self.cost.time() * self.count as f64
    }

    /// count × the bytes one rank sends of one, bytes.
    pub fn traffic(&self) -> Bytes {
        self.cost.traffic * self.count as f64
    }
}

/// The data-parallel communication of one step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepComm {
    /// Every collective's time, summed (as if serial), seconds.
    pub total: Seconds,
    /// The part the compute does not hide, seconds (≤ `total`).
    pub exposed: Seconds,
    /// Bytes one rank sends over its bounding link in the step.
    pub bytes_per_rank: Bytes,
    /// The collectives, by kind.
    pub collectives: Vec<StepCollective>,
}

impl StepComm {
    fn none() -> Self {
        Self {
            total: Seconds::ZERO,
            exposed: Seconds::ZERO,
            bytes_per_rank: Bytes::ZERO,
            collectives: Vec::new(),
        }
    }
}

/// Why the data-parallel communication cannot be computed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DataParallelError {
    /// A quantity is not a finite value in range: its name and value.
    Quantity {
        /// Which (`parameters`, `gradient_bytes`, `bucket_bytes`, `backward`...).
        quantity: &'static str,
        /// The value.
        value: f64,
    },
    /// No layer times given, or ZeRO-3 given forward and backward times of different layer
    /// counts.
    Layers {
        /// Forward layers given.
        forward: usize,
        /// Backward layers given.
        backward: usize,
    },
    /// The gradients would be cut into more than [`MAX_BUCKETS`] buckets.
    TooManyBuckets {
        /// Buckets needed.
        buckets: f64,
    },
    /// The group's ranks are not N_d, or cannot be placed on the system.
    Group(String),
    /// A collective cannot be priced.
    Collective(CollectiveError),
}

impl fmt::Display for DataParallelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataParallelError::Quantity { quantity, value } => {
                write!(f, "{quantity} = {value} is not a usable value")
            }
            DataParallelError::Layers { forward, backward } => write!(
                f,
                "{forward} forward and {backward} backward layer times: give at least one \
                 backward layer, and as many forward layers under ZeRO-3"
            ),
            DataParallelError::TooManyBuckets { buckets } => write!(
                f,
                "{buckets} gradient buckets: more than {MAX_BUCKETS}; give a larger bucket"
            ),
            DataParallelError::Group(why) => f.write_str(why),
            DataParallelError::Collective(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for DataParallelError {}

impl From<CollectiveError> for DataParallelError {
    fn from(e: CollectiveError) -> Self {
        DataParallelError::Collective(e)
    }
}

/// Where `degree` data-parallel ranks sit when the ranks inside each data-parallel group are
/// `stride` devices apart: Megatron-LM orders ranks tensor, context, (expert,) data, pipeline,
/// so the data-parallel ranks of dense parameters are t·c apart. A stride of a node or more
/// puts one rank in each node; a smaller stride puts gcd(N_d, gpus_per_node / stride) in each.
///
/// # Errors
/// A degree or stride of zero, or more devices (degree × stride) than the system has.
pub fn dp_group(system: &System, degree: u32, stride: u32) -> Result<Group, DataParallelError> {
    if degree == 0 || stride == 0 {
        return Err(DataParallelError::Group(format!(
            "data-parallel degree {degree} at stride {stride}: both must be at least 1"
        )));
    }
    let needed = u64::from(degree) * u64::from(stride);
    if needed > system.devices() {
        return Err(DataParallelError::Group(format!(
            "{degree} data-parallel ranks at stride {stride} need {needed} devices, the system \
             has {}",
            system.devices()
        )));
    }
    let per_node_slots = (system.gpus_per_node / stride).max(1);
    Ok(Group {
        ranks: degree,
        ranks_per_node: gcd(degree, per_node_slots),
    })
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn check(quantity: &'static str, value: f64, positive: bool) -> Result<f64, DataParallelError> {
    let ok = value.is_finite() && if positive { value > 0.0 } else { value >= 0.0 };
    if ok {
        Ok(value)
    } else {
        Err(DataParallelError::Quantity { quantity, value })
    }
}

fn check_times(quantity: &'static str, times: &[Seconds]) -> Result<(), DataParallelError> {
    for t in times {
        check(quantity, t.get(), false)?;
    }
    Ok(())
}

/// The data-parallel communication of one training step of `input` under `dp`, over `group`
/// (its ranks N_d; [`dp_group`] places it) on `system`'s fabric: the collectives of the
/// module docs' table, their summed time, the exposed part and the bytes one rank sends.
/// N_d = 1 communicates nothing.
///
/// # Errors
/// Quantities not finite (parameters and bytes per element ≥ 0, a positive bucket, times ≥ 0,
/// at least one micro-batch), no backward layers (or, under ZeRO-3, forward layers of another
/// count), more than [`MAX_BUCKETS`] buckets, a group of other than N_d ranks, or a collective
/// the fabric cannot price.
pub fn step_communication(
    dp: &DataParallel,
    input: &StepInput<'_>,
    system: &System,
    group: Group,
) -> Result<StepComm, DataParallelError> {
    let psi = check("parameters", input.parameters, false)?;
    let g_bytes = check("gradient_bytes", input.gradient_bytes, false)?;
    let w_bytes = check("weight_bytes", input.weight_bytes, false)?;
    let bucket = check("bucket_bytes", dp.bucket_bytes.get(), true)?;
    if input.micro_batches == 0 {
        return Err(DataParallelError::Quantity {
            quantity: "micro_batches",
            value: 0.0,
        });
    }
    check_times("backward", input.backward)?;
    check_times("forward", input.forward)?;
    let layers = input.backward.len();
    if layers == 0 || (dp.zero == ZeroStage::Zero3 && input.forward.len() != layers) {
        return Err(DataParallelError::Layers {
            forward: input.forward.len(),
            backward: layers,
        });
    }
    if group.ranks != dp.degree {
        return Err(DataParallelError::Group(format!(
            "the group has {} ranks, the data-parallel degree is {}",
            group.ranks, dp.degree
        )));
    }
    if dp.degree <= 1 {
        return Ok(StepComm::none());
    }
    let gradients = psi * g_bytes;
    let weights = psi * w_bytes;
    let eta = if dp.transfer_efficiency > 0.0 && dp.transfer_efficiency <= 1.0 {
        dp.transfer_efficiency
    } else {
        1.0
    };
    let cost = |c, bytes: f64| {
        collective_cost(c, Bytes(bytes), group, &system.fabric, dp.algorithm).map(|mut k| {
            k.transfer = k.transfer / eta;
            k
        })
    };
    let mut rows = Vec::new();
    let exposed = match dp.zero {
        ZeroStage::Zero0 | ZeroStage::Zero1 | ZeroStage::Zero2 => {
            let (reduce, name) = if dp.zero == ZeroStage::Zero0 {
                (Collective::AllReduce, "gradient all-reduce bucket")
            } else {
                (Collective::ReduceScatter, "gradient reduce-scatter bucket")
            };
            let mut exposed = bucketed(
                reduce,
                name,
                gradients,
                bucket,
                input.backward,
                &cost,
                &mut rows,
            )?;
            if dp.zero != ZeroStage::Zero0 {
                // After the optimizer step, in buckets of the same bytes of weights; exposed.
                let ready = vec![Seconds::ZERO; layers];
                exposed += bucketed(
                    Collective::AllGather,
                    "parameter all-gather bucket",
                    weights,
                    bucket,
                    &ready,
                    &cost,
                    &mut rows,
                )?;
            }
            exposed
        }
        ZeroStage::Zero3 => {
            let per_layer = layers as f64;
            let gather = cost(Collective::AllGather, weights / per_layer)?;
            let scatter = cost(Collective::ReduceScatter, gradients / per_layer)?;
            let m = input.micro_batches;
            let l = layers as u64;
            for (name, c) in [
                ("forward parameter all-gather", gather),
                ("backward parameter all-gather", gather),
            ] {
                rows.push(StepCollective {
                    name,
                    collective: Collective::AllGather,
                    bytes: c.bytes,
                    count: l * m,
                    cost: c,
                });
            }
            rows.push(StepCollective {
                name: "gradient reduce-scatter",
                collective: Collective::ReduceScatter,
                bytes: scatter.bytes,
                count: l * m,
                cost: scatter,
            });
            let one = forward_exposed(input.forward, gather.time())
                + backward_exposed(input.backward, gather.time(), scatter.time());
            one * m as f64
        }
    };
    let total = rows.iter().map(StepCollective::time).sum();
    let bytes_per_rank = rows.iter().map(StepCollective::traffic).sum();
    Ok(StepComm {
        total,
        exposed,
        bytes_per_rank,
        collectives: rows,
    })
}

/// A lower bound on [`step_communication`]'s exposed time, from the sizes alone (no layer
/// times), for a plan search to rule candidates out before pricing them in full: ZeRO-0/1/2's
/// last gradient bucket (launched when the backward ends, it runs after it), plus ZeRO-1/2's
/// parameter all-gather buckets (all after the optimizer step); ZeRO-3's first layer's gather
/// and last layer's reduce-scatter, once a micro-batch, over `layers` layers. 0 with one rank
/// or no parameters.
///
/// # Errors
/// As [`step_communication`]: quantities out of range, a group of other than N_d ranks, a
/// collective the fabric cannot price.
pub fn exposed_lower_bound(
    dp: &DataParallel,
    input: &StepInput<'_>,
    layers: u64,
    system: &System,
    group: Group,
) -> Result<Seconds, DataParallelError> {
    let psi = check("parameters", input.parameters, false)?;
    let bucket = check("bucket_bytes", dp.bucket_bytes.get(), true)?;
    if group.ranks != dp.degree {
        return Err(DataParallelError::Group(format!(
            "the group has {} ranks, the data-parallel degree is {}",
            group.ranks, dp.degree
        )));
    }
    if dp.degree <= 1 || psi <= 0.0 || layers == 0 {
        return Ok(Seconds::ZERO);
    }
    let eta = if dp.transfer_efficiency > 0.0 && dp.transfer_efficiency <= 1.0 {
        dp.transfer_efficiency
    } else {
        1.0
    };
    let time = |c, bytes: f64| -> Result<f64, DataParallelError> {
        let k = collective_cost(c, Bytes(bytes), group, &system.fabric, dp.algorithm)?;
        Ok(k.latency.get() + k.transfer.get() / eta)
    };
    let gradients = psi * input.gradient_bytes;
    let weights = psi * input.weight_bytes;
    // The last of `bytes` in buckets of `bucket`, and all of them.
    let last = |bytes: f64| {
        let full = (bytes / bucket).floor();
        let rest = bytes - full * bucket;
        if rest > 0.0 {
            rest
        } else {
            bucket.min(bytes)
        }
    };
    let exposed = match dp.zero {
        ZeroStage::Zero0 | ZeroStage::Zero1 | ZeroStage::Zero2 => {
            let reduce = if dp.zero == ZeroStage::Zero0 {
                Collective::AllReduce
            } else {
                Collective::ReduceScatter
            };
            let mut t = if gradients > 0.0 {
                time(reduce, last(gradients))?
            } else {
                0.0
            };
            if dp.zero != ZeroStage::Zero0 && weights > 0.0 {
                let buckets = (weights / bucket).ceil();
                if buckets > MAX_BUCKETS {
                    return Err(DataParallelError::TooManyBuckets { buckets });
                }
                let full = (weights / bucket).floor();
                let rest = weights - full * bucket;
                t += full * time(Collective::AllGather, bucket)?;
                if rest > 0.0 {
                    t += time(Collective::AllGather, rest)?;
                }
            }
            t
        }
        ZeroStage::Zero3 => {
            let l = layers as f64;
            let g = time(Collective::AllGather, weights / l)?;
            let r = time(Collective::ReduceScatter, gradients / l)?;
            (g + r) * input.micro_batches.max(1) as f64
        }
    };
    Ok(Seconds(exposed))
}

/// `bytes` in buckets of `bucket`, the last holding the remainder, each launched when the pass
/// of per-layer `times` (in the order it runs) has produced its last byte, run one after the
/// other; pushes the rows and returns the exposed time past the end of the pass.
///
/// Times are kept relative to the end of the pass (≤ 0 before it), so that a last bucket
/// launched at the end on an idle stream is exposed by exactly its own time.
fn bucketed(
    c: Collective,
    name: &'static str,
    bytes: f64,
    bucket: f64,
    times: &[Seconds],
    cost: &dyn Fn(Collective, f64) -> Result<CollectiveCost, CollectiveError>,
    rows: &mut Vec<StepCollective>,
) -> Result<Seconds, DataParallelError> {
    if bytes <= 0.0 {
        return Ok(Seconds::ZERO);
    }
    let buckets = (bytes / bucket).ceil();
    if buckets > MAX_BUCKETS {
        return Err(DataParallelError::TooManyBuckets { buckets });
    }
    let full = (bytes / bucket).floor();
    let rest = bytes - full * bucket;
    let full_n = full as u64;
    let full_cost = cost(c, bucket)?;
    let rest_cost = if rest > 0.0 {
        Some(cost(c, rest)?)
    } else {
        None
    };
    if full_n > 0 {
        rows.push(StepCollective {
            name,
            collective: c,
            bytes: Bytes(bucket),
            count: full_n,
            cost: full_cost,
        });
    }
    if let Some(r) = rest_cost {
        rows.push(StepCollective {
            name,
            collective: c,
            bytes: Bytes(rest),
            count: 1,
            cost: r,
        });
    }
    // remaining[j]: the pass's time after layer j ends.
    let layers = times.len();
    let mut remaining = vec![0.0; layers];
    for j in (0..layers.saturating_sub(1)).rev() {
        remaining[j] = remaining[j + 1] + times[j + 1].get();
    }
    let per_layer = bytes / layers as f64;
    // When the pass has produced byte `x` (0 < x ≤ bytes), relative to its end (≤ 0).
    let ready = |x: f64| -> f64 {
        let j = ((x / per_layer).ceil() as usize).clamp(1, layers) - 1;
        let left_in_layer = (j as f64 + 1.0) * per_layer - x;
        let fraction = (left_in_layer / per_layer).clamp(0.0, 1.0);
        -(remaining[j] + fraction * times[j].get())
    };
    let total_n = full_n + u64::from(rest_cost.is_some());
    let mut finish = f64::NEG_INFINITY;
    for k in 0..total_n {
        let (end, t) = if k < full_n {
            ((k as f64 + 1.0) * bucket, full_cost.time().get())
        } else {
            (bytes, rest_cost.map_or(0.0, |r| r.time().get()))
        };
        let at = if k + 1 == total_n { 0.0 } else { ready(end) };
        finish = finish.max(at) + t;
    }
    Ok(Seconds(finish.max(0.0)))
}

/// ZeRO-3's forward of one micro-batch: layer i's gather launched when layer i − 1 starts
/// (prefetch one ahead; the first at the start), one gather at a time; the time the forward
/// runs past its compute.
fn forward_exposed(forward: &[Seconds], gather: Seconds) -> Seconds {
    let g = gather.get();
    let (mut comm_free, mut compute_end, mut prev_start, mut compute) = (0.0f64, 0.0f64, 0.0, 0.0);
    for (i, f) in forward.iter().enumerate() {
        let launch = if i == 0 { 0.0 } else { prev_start };
        let gathered = comm_free.max(launch) + g;
        comm_free = gathered;
        let start = compute_end.max(gathered);
        compute_end = start + f.get();
        prev_start = start;
        compute += f.get();
    }
    Seconds((compute_end - compute).max(0.0))
}

/// ZeRO-3's backward of one micro-batch (layers in backward order): layer j's gather launched
/// when layer j − 1 starts (the first at the start), layer j's reduce-scatter when it ends, on
/// one stream in launch order (gather 0, gather 1, scatter 0, gather 2, scatter 1, …); the time
/// from the end of the backward compute's sum to the last scatter's end.
fn backward_exposed(backward: &[Seconds], gather: Seconds, scatter: Seconds) -> Seconds {
    let (g, r) = (gather.get(), scatter.get());
    let layers = backward.len();
    let mut comm_free = g; // gather 0 at the start
    let mut gathered = vec![0.0f64; layers];
    gathered[0] = g;
    let mut compute_end = 0.0f64;
    let mut compute = 0.0;
    for (j, b) in backward.iter().enumerate() {
        let start = compute_end.max(gathered[j]);
        if j + 1 < layers {
            comm_free = comm_free.max(start) + g;
            gathered[j + 1] = comm_free;
        }
        compute_end = start + b.get();
        compute += b.get();
        comm_free = comm_free.max(compute_end) + r;
    }
    Seconds((comm_free - compute).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::collective::Algorithm;

    use crate::parallel::tests::dgx;

    const PSI: f64 = 7e9;
    const LAYERS: usize = 32;

    fn ring(n: u32, zero: ZeroStage) -> DataParallel {
        DataParallel {
            algorithm: AlgorithmChoice::Only(Algorithm::Ring),
            ..DataParallel::new(n, zero)
        }
    }

    fn input<'a>(forward: &'a [Seconds], backward: &'a [Seconds]) -> StepInput<'a> {
        StepInput {
            parameters: PSI,
            gradient_bytes: 2.0,
            weight_bytes: 2.0,
            forward,
            backward,
            micro_batches: 1,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
    }

    #[test]
    fn data_parallel_zero0_ring_traffic_is_2_n_minus_1_over_n_of_the_gradients(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let s = dgx(1);
        let times = vec![Seconds(1e-3); LAYERS];
        let c = step_communication(
            &ring(8, ZeroStage::Zero0),
            &input(&[], &times),
            &s,
            s.group(8)?,
        )?;
        // S = 7e9 · 2 = 14e9 B; 2·7/8·14e9 = 24.5e9 B per rank.
        assert!(
            close(c.bytes_per_rank.get(), 24.5e9),
            "{:?}",
            c.bytes_per_rank
        );
        // 14e9 / 26,214,400 = 534 full buckets and 14e9 − 534·26,214,400 = 1,510,400 B.
        assert_eq!(c.collectives.len(), 2);
        assert_eq!(c.collectives[0].count, 534);
        assert_eq!(c.collectives[0].bytes, Bytes(26_214_400.0));
        assert_eq!(c.collectives[1].count, 1);
        assert_eq!(c.collectives[1].bytes, Bytes(1_510_400.0));
        // ZeRO-1 and ZeRO-2 move the same bytes (reduce-scatter + all-gather).
        for z in [ZeroStage::Zero1, ZeroStage::Zero2] {
            let c = step_communication(&ring(8, z), &input(&[], &times), &s, s.group(8)?)?;
            assert!(close(c.bytes_per_rank.get(), 24.5e9), "{z:?}");
        }
        Ok(())
    }

    #[test]
    fn data_parallel_zero3_moves_one_and_a_half_times_plain_dp(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let s = dgx(1);
        let times = vec![Seconds(1e-3); LAYERS];
        let g = s.group(8)?;
        let z0 = step_communication(&ring(8, ZeroStage::Zero0), &input(&times, &times), &s, g)?;
        let z3 = step_communication(&ring(8, ZeroStage::Zero3), &input(&times, &times), &s, g)?;
        // 3 · 7/8 · 14e9 = 36.75e9 B against 24.5e9 B.
        assert!(close(z3.bytes_per_rank.get(), 36.75e9));
        assert!(close(z3.bytes_per_rank / z0.bytes_per_rank, 1.5));
        // Gradient accumulation: ZeRO-3 per micro-batch, ZeRO-0 once per step.
        let mut four = input(&times, &times);
        four.micro_batches = 4;
        let z3_4 = step_communication(&ring(8, ZeroStage::Zero3), &four, &s, g)?;
        let z0_4 = step_communication(&ring(8, ZeroStage::Zero0), &four, &s, g)?;
        assert!(close(z3_4.bytes_per_rank.get(), 4.0 * 36.75e9));
        assert!(close(z3_4.exposed.get(), 4.0 * z3.exposed.get()));
        assert_eq!(z0_4.bytes_per_rank, z0.bytes_per_rank);
        Ok(())
    }

    #[test]
    fn data_parallel_long_backward_exposes_only_the_last_bucket(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let s = dgx(1);
        let g = s.group(8)?;
        // 1 s a layer: 437.5 MB of gradients a layer, a 25 MiB bucket every 60 ms of
        // backward, against ~100 µs a bucket.
        let times = vec![Seconds(1.0); LAYERS];
        let c = step_communication(&ring(8, ZeroStage::Zero0), &input(&[], &times), &s, g)?;
        let last = collective_cost(
            Collective::AllReduce,
            Bytes(1_510_400.0),
            g,
            &s.fabric,
            AlgorithmChoice::Only(Algorithm::Ring),
        )?;
        // Ring all-reduce of the 1,510,400 B remainder on 8 ranks: 1.75 · 1,510,400 =
        // 2,643,200 B per rank (the α–β time is collective_cost's, protocol included).
        assert_eq!(last.traffic, Bytes(2_643_200.0));
        assert_eq!(c.exposed, last.time(), "{last:?}");
        Ok(())
    }

    #[test]
    fn data_parallel_without_compute_exposes_everything() -> Result<(), Box<dyn std::error::Error>>
    {
        let s = dgx(1);
        let g = s.group(8)?;
        let zero = vec![Seconds::ZERO; LAYERS];
        for z in [
            ZeroStage::Zero0,
            ZeroStage::Zero1,
            ZeroStage::Zero2,
            ZeroStage::Zero3,
        ] {
            let c = step_communication(&ring(8, z), &input(&zero, &zero), &s, g)?;
            let serial: f64 = c
                .collectives
                .iter()
                .map(|r| r.cost.time().get() * r.count as f64)
                .sum();
            assert!(c.total.get() > 0.0);
            assert!(
                close(c.exposed.get(), serial),
                "{z:?}: {:?} {serial}",
                c.exposed
            );
        }
        Ok(())
    }

    #[test]
    fn data_parallel_zero3_prefetch_hides_gathers_behind_longer_layers(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // Layers far longer than a gather: the first forward gather, the first backward
        // gather and the last reduce-scatter are exposed.
        let s = dgx(1);
        let g = s.group(8)?;
        let times = vec![Seconds(1.0); LAYERS];
        let c = step_communication(&ring(8, ZeroStage::Zero3), &input(&times, &times), &s, g)?;
        let ring_of = |col, bytes| {
            collective_cost(
                col,
                Bytes(bytes),
                g,
                &s.fabric,
                AlgorithmChoice::Only(Algorithm::Ring),
            )
            .map(|c| c.time().get())
        };
        // 14e9 / 32 = 437.5e6 B a layer.
        let gather = ring_of(Collective::AllGather, 437.5e6)?;
        let scatter = ring_of(Collective::ReduceScatter, 437.5e6)?;
        // The compute's sums cancel to about 1e-14 s in the differences taken.
        assert!((c.exposed.get() - (2.0 * gather + scatter)).abs() < 1e-12);
        Ok(())
    }

    #[test]
    fn data_parallel_one_rank_communicates_nothing() -> Result<(), Box<dyn std::error::Error>> {
        let s = dgx(1);
        let times = vec![Seconds(1e-3); LAYERS];
        for z in [ZeroStage::Zero0, ZeroStage::Zero3] {
            let c = step_communication(
                &DataParallel::new(1, z),
                &input(&times, &times),
                &s,
                s.group(1)?,
            )?;
            assert_eq!(c, StepComm::none());
        }
        Ok(())
    }

    #[test]
    fn data_parallel_group_at_a_stride_and_errors() -> Result<(), Box<dyn std::error::Error>> {
        let s = dgx(4);
        // t = 8: one data-parallel rank a node.
        assert_eq!(
            dp_group(&s, 4, 8),
            Ok(Group {
                ranks: 4,
                ranks_per_node: 1
            })
        );
        // t = 2: 4 a node, 2 nodes for N_d = 8.
        assert_eq!(
            dp_group(&s, 8, 2),
            Ok(Group {
                ranks: 8,
                ranks_per_node: 4
            })
        );
        assert!(dp_group(&s, 8, 8).is_err());
        let times = vec![Seconds(1e-3); LAYERS];
        let g = s.group(8)?;
        let mut bad = input(&[], &times);
        bad.micro_batches = 0;
        assert!(step_communication(&ring(8, ZeroStage::Zero0), &bad, &s, g).is_err());
        assert!(matches!(
            step_communication(&ring(8, ZeroStage::Zero3), &input(&[], &times), &s, g),
            Err(DataParallelError::Layers { .. })
        ));
        assert!(matches!(
            step_communication(&ring(4, ZeroStage::Zero0), &input(&[], &times), &s, g),
            Err(DataParallelError::Group(_))
        ));
        Ok(())
    }
}
