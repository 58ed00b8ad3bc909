//! A plan search for inference: every layout of tensor, pipeline and expert parallelism a
//! system can hold (and sequence and context parallelism for prefill), each analysed
//! ([`super::analyze_parallel`]), ranked by the time of one step and by tokens per second per
//! device, with what holds back each one that loses.

use super::analysis::{analyze_parallel, ParallelAnalysisError, ParallelStage};
use super::layout::{divisors, Layout};
use super::shard::ParallelError;
use crate::comm::collective::CollectiveError;
use crate::comm::System;
use crate::memory::Reserve;
use crate::model::Transformer;
use crate::units::Seconds;
use crate::workload::{Stage, Workload};
use serde::Serialize;

/// One layout of the search, analysed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The layout of one replica.
    pub layout: Layout,
    /// Replicas the system holds: ⌊devices / (t·p·e·c)⌋, each serving the workload's batch.
    pub replicas: u64,
    /// The replica's stage (rows, schedule, memory per device).
    pub stage: ParallelStage,
}

impl Plan {
    /// The step time of a replica (critical path + launch), seconds: the time per output
    /// token in decode, the time to the first token's prefill in prefill.
    pub fn step_time(&self) -> Seconds {
        self.stage.step_time()
    }

    /// Tokens per second per device: a replica's tokens/s over its devices.
    pub fn tokens_per_s_per_device(&self) -> f64 {
        self.stage.tokens_per_s() / self.stage.devices as f64
    }

    /// Tokens per second of every replica together.
    pub fn tokens_per_s(&self) -> f64 {
        self.stage.tokens_per_s() * self.replicas as f64
    }

    /// Whether one device's share fits its memory (unknown capacity counts as fitting).
    pub fn fits(&self) -> bool {
        self.stage.memory.fits() != Some(false)
    }

    /// The share of the step that is exposed communication, 0 to 1.
    pub fn exposed_share(&self) -> f64 {
        self.stage.schedule.exposed.get() / self.step_time().get()
    }
}

/// Every plan, and two rankings of the ones that fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanSearch {
    /// Every layout analysed, in the order enumerated (t, then p, then e, then c, then
    /// sequence parallelism).
    pub plans: Vec<Plan>,
    /// Indices into [`PlanSearch::plans`] of the plans that fit, fastest step first.
    pub by_latency: Vec<usize>,
    /// Indices of the plans that fit, most tokens per second per device first.
    pub by_throughput: Vec<usize>,
    /// Layouts skipped: the model or the workload does not take them (heads, KV heads or
    /// experts not divisible; context parallelism on a prompt shorter than its 2c chunks, or
    /// on multi-head latent attention), or their collectives need a link the system lacks.
    pub skipped: usize,
}

/// Searches every layout of `model` on `system` for `workload` (the batch one replica
/// serves), keeping `reserve` of each device's memory: t · p · e · c dividing the system's
/// devices, each degree one the model takes and the system's links carry (a layout whose
/// collectives need a link the system lacks is skipped). Context parallelism (c > 1) and
/// sequence parallelism are tried for prefill only; decode takes c = 1.
///
/// # Errors
/// The single-device analysis fails (invalid model, workload, reserve or chip), or a collective
/// cannot be priced on the fabric (a size that is not finite).
pub fn search(
    model: &Transformer,
    workload: &Workload,
    system: &System,
    reserve: Reserve,
) -> Result<PlanSearch, ParallelAnalysisError> {
    let n = system.devices();
    let mut plans = Vec::new();
    let mut skipped = 0;
    let sp_options: &[bool] = if workload.stage == Stage::Prefill {
        &[false, true]
    } else {
        &[false]
    };
    let prefill = workload.stage == Stage::Prefill;
    for tp in divisors(n) {
        for pp in divisors(n / tp) {
            for ep in divisors(n / tp / pp) {
                let rest = n / tp / pp / ep;
                for cp in divisors(rest).take_while(|&c| prefill || c == 1) {
                    for &sp in sp_options {
                        if sp && tp == 1 {
                            continue;
                        }
                        let layout = Layout {
                            tp: tp as u32,
                            pp: pp as u32,
                            ep: ep as u32,
                            cp: cp as u32,
                            sequence_parallel: sp,
                            ..Layout::SINGLE
                        };
                        if layout.validate_for(model, workload).is_err() {
                            skipped += 1;
                            continue;
                        }
                        let stage = match analyze_parallel(model, workload, system, layout, reserve)
                        {
                            Ok(s) => s,
                            // A layout whose collectives need a link the system lacks
                            // (across the nodes of a platform with no network between
                            // them): not a plan.
                            Err(ParallelAnalysisError::Parallel(ParallelError::Collective(
                                CollectiveError::NoLink { .. },
                            ))) => {
                                skipped += 1;
                                continue;
                            }
                            Err(e) => return Err(e),
                        };
                        plans.push(Plan {
                            layout,
                            replicas: n / layout.devices(),
                            stage,
                        });
                    }
                }
            }
        }
    }
    let fitting: Vec<usize> = (0..plans.len()).filter(|&i| plans[i].fits()).collect();
    let mut by_latency = fitting.clone();
    by_latency.sort_by(|&a, &b| {
        plans[a]
            .step_time()
            .get()
            .total_cmp(&plans[b].step_time().get())
            .then(plans[a].layout.devices().cmp(&plans[b].layout.devices()))
    });
    let mut by_throughput = fitting;
    by_throughput.sort_by(|&a, &b| {
        plans[b]
            .tokens_per_s_per_device()
            .total_cmp(&plans[a].tokens_per_s_per_device())
    });
    Ok(PlanSearch {
        plans,
        by_latency,
        by_throughput,
        skipped,
    })
}

/// What holds a plan back against the best one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Holdback {
    /// A faster step than the best's, bought with more devices: less per device.
    Devices {
        /// Devices per replica.
        devices: u64,
        /// The best's devices per replica.
        best_devices: u64,
        /// Its step over the best's (below 1: faster).
        step_ratio: f64,
    },
    /// One device's share does not fit its memory.
    Memory {
        /// Bytes one device needs.
        needed: crate::units::Bytes,
        /// Its capacity.
        capacity: crate::units::Bytes,
    },
    /// More pipeline stages than the best: a step passes them one after the other.
    Pipeline {
        /// The stages.
        stages: u32,
        /// The share of the step that is exposed communication.
        exposed_share: f64,
    },
    /// More exposed communication than the best, by more than it saves in compute.
    Communication {
        /// The share of its step that is exposed collectives.
        exposed_share: f64,
        /// Exposed communication beyond the best's, seconds.
        extra: Seconds,
    },
    /// More compute-stream time than the best (less of the work split, or replicated work).
    Compute {
        /// Compute time beyond the best's, seconds.
        extra: Seconds,
    },
    /// More kernel launches than the best (more nodes per device: collectives, pipeline
    /// sends), by more than its compute or exposed communication.
    Launch {
        /// Launch overhead beyond the best's, seconds.
        extra: Seconds,
    },
}

/// What holds `plan` back against `best`: memory; for tokens per device, a faster step bought
/// with more devices; a longer pipeline; then the largest of its extra launch overhead, exposed
/// communication and compute.
pub fn holdback(plan: &Plan, best: &Plan) -> Holdback {
    let step_ratio = plan.step_time().get() / best.step_time().get();
    if plan.fits() && step_ratio < 1.0 {
        return Holdback::Devices {
            devices: plan.layout.devices(),
            best_devices: best.layout.devices(),
            step_ratio,
        };
    }
    if !plan.fits() {
        let m = &plan.stage.memory;
        return Holdback::Memory {
            needed: m.total(),
            capacity: m.capacity.unwrap_or(crate::units::Bytes::ZERO),
        };
    }
    if plan.layout.pp > best.layout.pp {
        return Holdback::Pipeline {
            stages: plan.layout.pp,
            exposed_share: plan.exposed_share(),
        };
    }
    let (s, b) = (&plan.stage.schedule, &best.stage.schedule);
    let extra_comm = s.exposed.get() - b.exposed.get();
    let extra_compute = s.compute.get() - b.compute.get();
    let extra_launch =
        plan.stage.totals.launch_overhead.get() - best.stage.totals.launch_overhead.get();
    if extra_launch > extra_comm.max(extra_compute) {
        Holdback::Launch {
            extra: Seconds(extra_launch),
        }
    } else if extra_comm > extra_compute {
        Holdback::Communication {
            exposed_share: plan.exposed_share(),
            extra: Seconds(extra_comm),
        }
    } else {
        Holdback::Compute {
            extra: Seconds(extra_compute.max(0.0)),
        }
    }
}
