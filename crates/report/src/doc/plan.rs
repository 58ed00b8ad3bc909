//! `roofline plan`: every layout of tensor, pipeline, expert and context parallelism a system holds,
//! ranked by the time of one step and by tokens per second per device, and what holds back
//! each one against the best.

use super::analyze::WorkloadDoc;
use super::parallel::LayoutDoc;
use super::SchemaVersion;
use roofline_core::parallel::{holdback, Holdback, Plan};
use roofline_core::workload::Stage;
use schemars::JsonSchema;
use serde::Serialize;

/// What holds a plan back against the best of its ranking, whichever explains the gap first.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum HoldbackDoc {
    /// A faster step than the best's, bought with more devices: fewer tokens per device.
    Devices {
        /// Devices per replica.
        devices: u64,
        /// The best's devices per replica.
        best_devices: u64,
        /// Its step time over the best's (below 1: faster).
        step_ratio: f64,
    },
    /// One device's share does not fit its memory.
    Memory {
        /// Bytes one device needs (weights + KV cache + activations + reserve).
        needed_bytes: f64,
        /// One device's main-memory capacity, bytes.
        capacity_bytes: f64,
    },
    /// More pipeline stages than the best: a step passes them one after the other.
    Pipeline {
        /// Its pipeline stages.
        stages: u32,
        /// The share of its step that is exposed communication, 0 to 1.
        exposed_share: f64,
    },
    /// More exposed communication than the best, by more than it saves in compute.
    Communication {
        /// The share of its step that is exposed collectives, 0 to 1.
        exposed_share: f64,
        /// Exposed communication beyond the best's, seconds.
        extra_s: f64,
    },
    /// More compute-stream time than the best (less of the work split, or replicated work).
    Compute {
        /// Compute time beyond the best's, seconds.
        extra_s: f64,
    },
    /// More kernel-launch overhead than the best (more kernels per device).
    Launch {
        /// Launch overhead beyond the best's, seconds.
        extra_s: f64,
    },
}

impl HoldbackDoc {
    /// The holdback object of `h`.
    pub fn of(h: &Holdback) -> Self {
        match *h {
            Holdback::Devices {
                devices,
                best_devices,
                step_ratio,
            } => HoldbackDoc::Devices {
                devices,
                best_devices,
                step_ratio,
            },
            Holdback::Memory { needed, capacity } => HoldbackDoc::Memory {
                needed_bytes: needed.get(),
                capacity_bytes: capacity.get(),
            },
            Holdback::Pipeline {
                stages,
                exposed_share,
            } => HoldbackDoc::Pipeline {
                stages,
                exposed_share,
            },
            Holdback::Communication {
                exposed_share,
                extra,
            } => HoldbackDoc::Communication {
                exposed_share,
                extra_s: extra.get(),
            },
            Holdback::Compute { extra } => HoldbackDoc::Compute {
                extra_s: extra.get(),
            },
            Holdback::Launch { extra } => HoldbackDoc::Launch {
                extra_s: extra.get(),
            },
        }
    }
}

/// One layout, analysed.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlanDoc {
    /// The layout of one replica (`devices`: t · p · e · c).
    pub layout: LayoutDoc,
    /// Replicas the system holds: ⌊system devices ÷ layout devices⌋, each serving the batch.
    pub replicas: u64,
    /// A replica's step (critical path + launch overhead), seconds: the time per output token
    /// in decode, the prefill's time to the first token in prefill.
    pub step_time_s: f64,
    /// Tokens per second of every replica together, tokens/s.
    pub tokens_per_s: f64,
    /// A replica's tokens per second ÷ its devices, tokens/s.
    pub tokens_per_s_per_device: f64,
    /// What one device holds (weights + KV cache + activations + reserve), bytes.
    pub memory_per_device_bytes: f64,
    /// Whether that fits one device's memory (an unknown capacity counts as fitting).
    pub fits: bool,
    /// Communication not hidden behind compute, seconds.
    pub exposed_communication_s: f64,
    /// The share of the step that is exposed communication, 0 to 1.
    pub exposed_share: f64,
    /// What holds it back against the first of its list; `null` for that first plan.
    pub holdback: Option<HoldbackDoc>,
}

impl PlanDoc {
    /// The plan object of `p`, held against `best` (`None`, or `p` itself: no holdback; a
    /// plan that does not fit is held back by memory whatever the best).
    pub fn of(p: &Plan, best: Option<&Plan>) -> Self {
        let h = if !p.fits() {
            Some(holdback(p, p))
        } else {
            best.filter(|b| !std::ptr::eq(*b, p))
                .map(|b| holdback(p, b))
        };
        PlanDoc {
            layout: LayoutDoc::of(&p.layout),
            replicas: p.replicas,
            step_time_s: p.step_time().get(),
            tokens_per_s: p.tokens_per_s(),
            tokens_per_s_per_device: p.tokens_per_s_per_device(),
            memory_per_device_bytes: p.stage.memory.total().get(),
            fits: p.fits(),
            exposed_communication_s: p.stage.schedule.exposed.get(),
            exposed_share: p.exposed_share(),
            holdback: h.as_ref().map(HoldbackDoc::of),
        }
    }
}

/// `roofline plan`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlanSearchDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The model: preset id or file name.
    pub model: String,
    /// The system: its catalog id, or `<chip>x<devices>` for `--devices` of a chip.
    pub system: String,
    /// The chip every device is (its id).
    pub chip: String,
    /// Devices the system has.
    pub devices: u64,
    /// The stage planned for: `prefill` or `decode`.
    pub stage: Stage,
    /// The workload one replica serves.
    pub workload: WorkloadDoc,
    /// Layouts analysed.
    pub analysed: usize,
    /// Layouts skipped: the model does not take them (heads, KV heads, experts or blocks not
    /// divisible) or the system's links cannot carry them.
    pub skipped: usize,
    /// The first `--top` plans that fit, fastest step first.
    pub by_latency: Vec<PlanDoc>,
    /// The first `--top` plans that fit, most tokens per second per device first.
    pub by_throughput: Vec<PlanDoc>,
    /// Every plan that does not fit one device's memory, in the order analysed.
    pub not_fitting: Vec<PlanDoc>,
}
