//! `roofline analyze` on many devices (`--tp`, `--pp`, `--ep`, `--cp`, `--sequence-parallel`,
//! `--system`, `--devices`): per stage, one device's operators with the collectives among them,
//! the step on a compute and a communication stream, throughput and the memory one device
//! holds; and `roofline sweep --tp`: a step at increasing tensor-parallel degrees.

use super::analyze::{compute_name, MemoryDoc, RooflineRowDoc, TotalsDoc, WorkloadDoc};
use super::SchemaVersion;
use roofline_core::analysis::OpRow;
use roofline_core::comm::collective::{Algorithm, Collective, Protocol, Tier};
use roofline_core::graph::{Role, Span};
use roofline_core::ops::{Communication, OpKind};
use roofline_core::parallel::{Layout, ParallelStage, Schedule};
use roofline_core::workload::Stage;
use schemars::JsonSchema;
use serde::Serialize;

/// The parallel layout of one model replica.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LayoutDoc {
    /// Tensor-parallel degree t: each linear split over t devices (Megatron-LM).
    pub tp: u32,
    /// Pipeline-parallel degree p: the blocks in p contiguous stages.
    pub pp: u32,
    /// Expert-parallel degree e: the routed experts split over e devices (1 for a dense
    /// model).
    pub ep: u32,
    /// Sequence parallelism: with t > 1, norms and residual adds on 1/t of the tokens, each
    /// all-reduce a reduce-scatter and an all-gather.
    pub sequence_parallel: bool,
    /// Routing skew under expert parallelism: the busiest device receives this many times the
    /// mean routed rows (1 = balanced; at most `ep`).
    pub expert_imbalance: f64,
    /// Context-parallel degree c (prefill): each prompt split over c devices by ring
    /// attention, two of its 2c chunks on each (1 without).
    pub cp: u32,
    /// Devices one replica uses: t · p · e · c.
    pub devices: u64,
}

impl LayoutDoc {
    /// The layout object of `l`.
    pub fn of(l: &Layout) -> Self {
        LayoutDoc {
            tp: l.tp,
            pp: l.pp,
            ep: l.ep,
            sequence_parallel: l.sequence_parallel,
            expert_imbalance: l.expert_imbalance,
            cp: l.cp,
            devices: l.devices(),
        }
    }
}

/// A collective on the link that bounds it: the α–β model's inputs and its two terms.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LinkDoc {
    /// Which collective (`all_reduce`, `all_gather`, `all_to_all`, `send_recv`, …).
    pub collective: Collective,
    /// How it runs (`ring`, `tree`, `nvls`, `hierarchical`, `direct`).
    pub algorithm: Algorithm,
    /// NCCL's protocol it runs in (`simple`, `ll128`, `ll`).
    pub protocol: Protocol,
    /// Ranks in its group.
    pub ranks: u32,
    /// Ranks of the group in each node (the group spans ranks ÷ ranks_per_node nodes).
    pub ranks_per_node: u32,
    /// S, the buffer as nccl-tests counts it, bytes.
    pub bytes: f64,
    /// Bytes one rank sends on the bounding link, bytes.
    pub traffic_bytes: f64,
    /// The α (latency) term, seconds.
    pub latency_s: f64,
    /// The β (bandwidth) term: traffic ÷ link bandwidth, seconds.
    pub transfer_s: f64,
    /// Bandwidth per direction of the bounding link, B/s.
    pub bandwidth_bytes_per_s: f64,
    /// The bounding link tier: `scale_up` (NVLink, xGMI, ICI), `scale_out` (the network
    /// between nodes) or `pcie`.
    pub tier: Tier,
}

impl LinkDoc {
    /// The link object of `c`, whose row `row` gives the two terms.
    pub fn of(c: &Communication, row: &OpRow) -> Self {
        let (latency, transfer) = match row.link() {
            Some(l) => (l.latency, l.transfer),
            None => (c.latency, c.transfer),
        };
        LinkDoc {
            collective: c.collective,
            algorithm: c.algorithm,
            protocol: c.protocol,
            ranks: c.group.ranks,
            ranks_per_node: c.group.ranks_per_node,
            bytes: c.bytes.get(),
            traffic_bytes: c.traffic.get(),
            latency_s: latency.get(),
            transfer_s: transfer.get(),
            bandwidth_bytes_per_s: c.link.get(),
            tier: c.tier,
        }
    }
}

/// One operator or collective of one device, ONE execution.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ParallelOpDoc {
    /// Unique name; Hugging Face module names for linears (`q_proj`), `<where>.<what>` for a
    /// collective (`attention.tp_reduce`).
    pub name: &'static str,
    /// What it does in the model (`q_proj`, `tp_all_reduce`, `pp_send_recv`, …).
    pub role: Role,
    /// Operator type (`communication` for a collective).
    pub kind: OpKind,
    /// Where it runs: prologue, blocks `first..=last`, epilogue, or the pipeline's stage
    /// boundaries.
    pub span: Span,
    /// Executions per forward pass on this device's path through the step.
    pub count: u64,
    /// Precision whose peak applies, `fp32 vector`, or `link` for a collective.
    pub compute: String,
    /// The row on its roof, one execution. A collective moves no main-memory bytes and does no
    /// FLOPs: its `memory_time_s` is the transfer term, its `time_s` latency + transfer, its
    /// `bound` `latency` or `network`, its `ridge_point` and peak 0.
    #[serde(flatten)]
    pub roofline: RooflineRowDoc,
    /// The collective on its link; on collective rows only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkDoc>,
}

/// The step of one device on a compute and a communication stream (lower bounds).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ScheduleDoc {
    /// Σ time of the compute kernels (roofline), seconds.
    pub compute_s: f64,
    /// Σ time of the collectives (α–β), seconds.
    pub communication_s: f64,
    /// Communication not hidden behind compute: step − compute, seconds.
    pub exposed_communication_s: f64,
    /// The critical path through the graph on the two streams, launch overhead excluded,
    /// seconds.
    pub critical_path_s: f64,
    /// The share of the communication hidden behind compute, 0 to 1 (1 with none).
    pub overlap: f64,
}

impl ScheduleDoc {
    /// The schedule object of `s`.
    pub fn of(s: &Schedule) -> Self {
        ScheduleDoc {
            compute_s: s.compute.get(),
            communication_s: s.communication.get(),
            exposed_communication_s: s.exposed.get(),
            critical_path_s: s.step.get(),
            overlap: s.overlap(),
        }
    }
}

/// Σ count × per-row value over one device's rows, compute and communication one after the
/// other (the serial sum; `schedule` overlaps them).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ParallelTotalsDoc {
    /// FLOPs, bytes, serial time, kernels (collectives included) and launch overhead.
    #[serde(flatten)]
    pub totals: TotalsDoc,
    /// The part of `time_s` spent in collectives, seconds.
    pub communication_s: f64,
}

/// One stage on many devices.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ParallelStageDoc {
    /// `prefill` or `decode`.
    pub stage: Stage,
    /// The workload one replica serves.
    pub workload: WorkloadDoc,
    /// The layout of the replica.
    pub layout: LayoutDoc,
    /// One device's operators and collectives in forward order (with p > 1 pipeline stages,
    /// the path of one step through every stage).
    pub ops: Vec<ParallelOpDoc>,
    /// Serial sums over `ops`.
    pub totals: ParallelTotalsDoc,
    /// The step on two streams.
    pub schedule: ScheduleDoc,
    /// The step's roofline bound: the critical path, no launch cost, seconds (the time per
    /// output token in decode).
    pub step_time_s: f64,
    /// The launch and host overhead of the step, seconds: the named addend beside the bound.
    pub launch_and_host_s: f64,
    /// Tokens a replica finishes per second: the step's tokens ÷ the step time, tokens/s.
    pub tokens_per_s: f64,
    /// `tokens_per_s` ÷ the replica's devices, tokens/s.
    pub tokens_per_s_per_device: f64,
    /// The step time over the single chip's time ÷ devices (1 = perfect scaling).
    pub scaling_cost: f64,
    /// What one device of the largest pipeline stage holds, bytes; `capacity_bytes` and
    /// `fits_on_chip` are one device's.
    pub memory: MemoryDoc,
    /// Warnings (the layout does not fit, …).
    pub warnings: Vec<String>,
}

impl ParallelStageDoc {
    /// The stage object of `s`.
    pub fn of(s: &ParallelStage) -> Self {
        let ops = s
            .rows
            .iter()
            .enumerate()
            .map(|(i, row)| ParallelOpDoc {
                name: row.name,
                role: row.role,
                kind: row.kind,
                span: row.span,
                count: row.count,
                compute: compute_name(row.compute),
                roofline: RooflineRowDoc::of(row),
                link: s.communication(i).map(|c| LinkDoc::of(c, row)),
            })
            .collect();
        let step = s.step_time().get();
        ParallelStageDoc {
            stage: s.workload.stage,
            workload: WorkloadDoc::of(&s.workload),
            layout: LayoutDoc::of(&s.layout),
            ops,
            totals: ParallelTotalsDoc {
                totals: TotalsDoc::of(&s.totals),
                communication_s: s.totals.communication.get(),
            },
            schedule: ScheduleDoc::of(&s.schedule),
            step_time_s: step,
            launch_and_host_s: s.launch_and_host().get(),
            tokens_per_s: s.tokens_per_s(),
            tokens_per_s_per_device: s.tokens_per_s() / s.devices as f64,
            scaling_cost: s.scaling_cost(),
            memory: MemoryDoc::of(&s.memory),
            warnings: s.warnings.clone(),
        }
    }
}

/// `roofline analyze` with `--tp`, `--pp`, `--ep`, `--cp`, `--sequence-parallel`, `--system`
/// or `--devices`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AnalyzeParallelDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The model: preset id or file name.
    pub model: String,
    /// The system: its catalog id, or `<chip>x<devices>` for `--devices` of a chip.
    pub system: String,
    /// The chip every device is (its id).
    pub chip: String,
    /// Devices the system has (a replica may use fewer).
    pub system_devices: u64,
    /// The serving headline of one replica: TTFT, TPOT and tokens/s (also per device),
    /// roofline lower bounds on time, the launch overhead beside them.
    pub headline: crate::headline::HeadlineDoc,
    /// The stages, in order (prefill, decode).
    pub stages: Vec<ParallelStageDoc>,
}

/// One tensor-parallel degree of a `sweep --tp` series.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ScalingPointDoc {
    /// Tensor-parallel degree.
    pub tp: u32,
    /// Devices the replica uses.
    pub devices: u64,
    /// The step's roofline bound (the critical path, no launch cost), seconds.
    pub step_time_s: f64,
    /// Tokens per second of the replica, tokens/s.
    pub tokens_per_s: f64,
    /// `tokens_per_s` ÷ devices, tokens/s.
    pub tokens_per_s_per_device: f64,
    /// Parallel efficiency: the single chip's step ÷ devices, over this step (1 = every
    /// device's worth used).
    pub efficiency: f64,
    /// Communication not hidden behind compute, seconds.
    pub exposed_communication_s: f64,
    /// What one device holds (weights + KV cache + activations + reserve), bytes.
    pub memory_per_device_bytes: f64,
    /// Whether it fits one device's memory; `null` when the capacity is unknown.
    pub fits: Option<bool>,
}

impl ScalingPointDoc {
    /// The point of `s`.
    pub fn of(s: &ParallelStage) -> Self {
        ScalingPointDoc {
            tp: s.layout.tp,
            devices: s.devices,
            step_time_s: s.step_time().get(),
            tokens_per_s: s.tokens_per_s(),
            tokens_per_s_per_device: s.tokens_per_s() / s.devices as f64,
            efficiency: roofline_core::parallel::scaling::efficiency(s),
            exposed_communication_s: s.schedule.exposed.get(),
            memory_per_device_bytes: s.memory.total().get(),
            fits: s.memory.fits(),
        }
    }
}

/// The degrees a `sweep --tp` series holds fixed beside the swept tensor-parallel degree
/// (`--pp`, `--ep`, `--expert-imbalance`, `--sequence-parallel`, `--cp`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FixedLayoutDoc {
    /// Pipeline-parallel degree p.
    pub pp: u32,
    /// Expert-parallel degree e.
    pub ep: u32,
    /// Routing skew under expert parallelism (1 = balanced).
    pub expert_imbalance: f64,
    /// Sequence parallelism at every swept degree above 1.
    pub sequence_parallel: bool,
    /// Context-parallel degree c.
    pub cp: u32,
}

impl FixedLayoutDoc {
    /// The fixed degrees of a series (one workload over increasing tensor-parallel degrees),
    /// or `None` when every one is a single device's (a plain `sweep --tp`) or the series is
    /// empty.
    pub fn of(stages: &[ParallelStage]) -> Option<Self> {
        let first = stages.first()?;
        let l = Layout {
            sequence_parallel: stages.iter().any(|s| s.layout.sequence_parallel),
            ..first.layout
        };
        let plain = l.pp == 1
            && l.ep == 1
            && l.cp == 1
            && !l.sequence_parallel
            && l.expert_imbalance == 1.0;
        (!plain).then_some(FixedLayoutDoc {
            pp: l.pp,
            ep: l.ep,
            expert_imbalance: l.expert_imbalance,
            sequence_parallel: l.sequence_parallel,
            cp: l.cp,
        })
    }
}

/// One workload (stage, batch, length) over increasing tensor-parallel degrees.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ScalingSeriesDoc {
    /// `prefill` or `decode`.
    pub stage: Stage,
    /// The workload.
    pub workload: WorkloadDoc,
    /// The degrees held fixed beside the swept one; absent for a plain `sweep --tp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed: Option<FixedLayoutDoc>,
    /// One per degree of `--tp`, in the order given.
    pub points: Vec<ScalingPointDoc>,
    /// The first degree whose step is no faster than the one before it: where adding devices
    /// stops paying; `null` when every added device still shortens the step.
    pub stops_paying_at_tp: Option<u32>,
}

impl ScalingSeriesDoc {
    /// The series of `stages` (one workload, increasing degrees); `None` when empty.
    pub fn of(stages: &[ParallelStage]) -> Option<Self> {
        let first = stages.first()?;
        Some(ScalingSeriesDoc {
            stage: first.workload.stage,
            workload: WorkloadDoc::of(&first.workload),
            fixed: FixedLayoutDoc::of(stages),
            points: stages.iter().map(ScalingPointDoc::of).collect(),
            stops_paying_at_tp: roofline_core::parallel::scaling::stops_paying(stages)
                .map(|j| stages[j].layout.tp),
        })
    }
}

/// `roofline sweep --tp`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SweepTpDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The model: preset id or file name.
    pub model: String,
    /// The system: its catalog id, or `<chip>x<devices>` for a chip's default node.
    pub system: String,
    /// The chip every device is (its id).
    pub chip: String,
    /// One series per (stage, length, batch).
    pub series: Vec<ScalingSeriesDoc>,
}
