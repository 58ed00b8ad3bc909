//! Sweeps: a model over batch × sequence length (prefill) or context (decode) × precision ×
//! chip, every point a full roofline evaluation, and each operator's **crossover batch**: the
//! smallest batch at which it becomes compute-bound.
//!
//! # Crossover in closed form
//!
//! For a fixed stage, length, precision and chip, every operator's FLOPs and bytes are affine in
//! the batch B: F(B) = F₀ + F₁·B, Q(B) = Q₀ + Q₁·B (a GEMM with M = B·s rows:
//! F = 2·M·N·K, Q = a·M·K + w·K·N + c·M·N, the weight traffic w·K·N being the constant). The
//! coefficients come from the operator's own cost at B = 0 and B = 1. The arithmetic intensity
//! AI(B) = F(B)/Q(B) is then a rational function of B and AI(B) ≥ R (the ridge of the roof the
//! operator is held against) is linear once cross-multiplied:
//!
//! B·(F₁ − R·Q₁) ≥ R·Q₀ − F₀.
//!
//! With D = F₁ − R·Q₁ > 0 the operator is compute-bound from B* = (R·Q₀ − F₀)/D on
//! ([`Crossover::At`], with B* and the smallest integer batch); with D ≤ 0 it never is
//! ([`Crossover::Never`]): its intensity tends to F₁/Q₁ < R however large the batch. Decode
//! attention is the standard case: every sequence reads its own KV cache, so F and Q are both
//! proportional to B and the intensity does not move.
//!
//! Where a cost is not affine in B, the intensity is not a rational function of it: a
//! mixture-of-experts GEMM reads the E·(1 − (1 − k/E)^T) experts its T tokens touch. Such an
//! operator is recognised by its cost at B = 2 and 3 departing from the line through B = 0 and 1,
//! and its crossover is searched over whole batches on its exact cost ([`Crossover::Searched`]),
//! doubling then bisecting, which assumes the intensity does not fall as the batch grows (true of
//! every operator the decoder emits).
//!
//! For a decode GEMM of N outputs and K inputs with 2-byte weights and activations, F₀ = 0,
//! F₁ = 2·N·K, Q₀ = 2·K·N, Q₁ = 2·(K + N), so B* = R / (1 − R·(1/N + 1/K)): slightly above the
//! ridge R, because the activations read and written grow with B too.
//!
//! # Speed
//!
//! The points run in parallel (rayon). Each point rebuilds one graph per thread, in place
//! ([`crate::decoder::rebuild_into`], what it was built from kept beside it), evaluates it with the analysis's own walk, and writes its
//! per-operator results into a slice of one buffer sized before the loop: the per-point work
//! allocates nothing. Every point equals [`crate::analysis::analyze`] of the same workload, bit
//! for bit, memory footprint included (a test checks it).

use crate::analysis::{walk, AnalysisError, ChipRoofs, Totals};
use crate::decoder::{build_graph, rebuild_into, BuiltFrom};
use crate::device::Device;
use crate::graph::{OpGraph, Role, Span};
use crate::memory::{footprint_of, MemoryFootprint, Reserve};
use crate::model::Transformer;
use crate::ops::{Cost, OpKind};
use crate::roofline::Bound;
use crate::units::{Bytes, FlopPerByte, FlopPerSec, Seconds};
use crate::workload::{Logits, Precisions, Stage, Workload, MAX_BATCH};
use rayon::prelude::*;
use serde::Serialize;

/// Where an operator turns compute-bound as the batch grows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Crossover {
    /// Compute-bound from batch `smallest` on. `exact` solves AI(B) = ridge over the reals; at
    /// or below 1 the operator is compute-bound from batch 1.
    At {
        /// The real batch B* at which the intensity equals the ridge.
        exact: f64,
        /// The smallest whole batch ≥ 1 at which the operator is compute-bound.
        smallest: u64,
    },
    /// Compute-bound from batch `smallest` on, found by searching whole batches: the intensity
    /// is not a rational function of the batch (mixture-of-experts GEMMs).
    Searched {
        /// The smallest whole batch ≥ 1 at which the operator is compute-bound.
        smallest: u64,
    },
    /// Memory-bound at every batch: the intensity tends to `limit`, below the ridge (for a
    /// searched operator: its intensity at the largest batch accepted).
    Never {
        /// The intensity as the batch grows without bound: F₁/Q₁, FLOP/byte.
        limit: FlopPerByte,
    },
}

/// An operator's cost as an affine function of the batch: `base + batch × slope`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AffineCost {
    /// Cost at batch 0 (F₀, Q₀): the weights read whatever the batch.
    pub base: Cost,
    /// Cost added per sequence (F₁, Q₁).
    pub slope: Cost,
}

impl AffineCost {
    /// From the costs at batch 0 and batch 1.
    pub fn from_batches(at0: &Cost, at1: &Cost) -> Self {
        Self {
            base: *at0,
            slope: Cost {
                flops: at1.flops - at0.flops,
                bytes_read: at1.bytes_read - at0.bytes_read,
                bytes_written: at1.bytes_written - at0.bytes_written,
            },
        }
    }

    /// The cost at `batch`.
    pub fn at(&self, batch: f64) -> Cost {
        self.base + self.slope * batch
    }

    /// Whether `cost` (the operator's actual cost at `batch`) lies on this line, to a relative
    /// 1e-12 in FLOPs and in bytes.
    pub fn predicts(&self, batch: f64, cost: &Cost) -> bool {
        let p = self.at(batch);
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs());
        near(p.flops.get(), cost.flops.get()) && near(p.bytes().get(), cost.bytes().get())
    }

    /// Whether the operator is compute-bound at `batch` on a roof of ridge `ridge`, by the same
    /// rule as [`crate::roofline::Roof::evaluate`] (intensity ≥ ridge, or no bytes at all).
    pub fn is_compute_bound(&self, batch: f64, ridge: FlopPerByte) -> bool {
        let c = self.at(batch);
        c.bytes().get() == 0.0 || c.intensity() >= ridge
    }

    /// The crossover batch against `ridge`, in closed form (see the module documentation).
    pub fn crossover(&self, ridge: FlopPerByte) -> Crossover {
        let r = ridge.get();
        let (f0, f1) = (self.base.flops.get(), self.slope.flops.get());
        let (q0, q1) = (self.base.bytes().get(), self.slope.bytes().get());
        let d = f1 - r * q1;
        let e = r * q0 - f0;
        if d > 0.0 {
            let exact = e / d;
            let smallest = if exact <= 1.0 || !exact.is_finite() {
                1
            } else if exact >= 1e15 {
                exact.ceil() as u64
            } else {
                // The real root, then the integer the roofline's own comparison agrees on.
                let mut b = exact.ceil().max(1.0);
                while b > 1.0 && self.is_compute_bound(b - 1.0, ridge) {
                    b -= 1.0;
                }
                while !self.is_compute_bound(b, ridge) {
                    b += 1.0;
                }
                b as u64
            };
            Crossover::At { exact, smallest }
        } else if self.is_compute_bound(1.0, ridge) {
            // Intensity not rising with the batch, yet at or above the ridge at batch 1 (no
            // bytes at all, or exactly on the ridge).
            Crossover::At {
                exact: 1.0,
                smallest: 1,
            }
        } else {
            Crossover::Never {
                limit: FlopPerByte(if q1 > 0.0 { f1 / q1 } else { 0.0 }),
            }
        }
    }
}

/// What to sweep. Prefill points take their lengths from `seq_lens`, decode points from
/// `contexts`.
#[derive(Debug, Clone, Copy)]
pub struct SweepSpec<'a> {
    /// The model.
    pub model: &'a Transformer,
    /// Chips.
    pub devices: &'a [Device],
    /// Precision settings (weights, activations, KV cache).
    pub precisions: &'a [Precisions],
    /// Stages.
    pub stages: &'a [Stage],
    /// Prompt lengths for prefill.
    pub seq_lens: &'a [u64],
    /// Cached tokens for decode.
    pub contexts: &'a [u64],
    /// Batches.
    pub batches: &'a [u64],
    /// Fused attention.
    pub flash_attention: bool,
    /// The positions lm_head computes logits for in prefill ([`Logits`]).
    pub logits: Logits,
    /// Memory the runtime keeps on each device ([`crate::memory`]).
    pub reserve: Reserve,
}

/// An operator of the swept graph.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SweepNode {
    /// Node name (`q_proj`).
    pub name: &'static str,
    /// What the node does in the model.
    pub role: Role,
    /// Operator type (`gemm`).
    pub kind: OpKind,
    /// The blocks it runs in, or the prologue or epilogue.
    pub span: Span,
    /// Executions per forward pass.
    pub count: u64,
}

/// One (chip, precision, stage, length): the batches run inside it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepGroup {
    /// Index of the chip in [`SweepSpec::devices`].
    pub device: usize,
    /// Precisions.
    pub precisions: Precisions,
    /// Stage.
    pub stage: Stage,
    /// Prompt tokens per sequence (prefill; 1 in decode).
    pub seq_len: u64,
    /// Cached tokens per sequence (decode; 0 in prefill).
    pub context: u64,
    /// The positions lm_head computes logits for.
    pub logits: Logits,
    /// Dense matrix peak for the activation precision, FLOP/s.
    pub peak: FlopPerSec,
    /// Ridge of the matrix roof (activation precision), FLOP/byte.
    pub ridge: FlopPerByte,
    /// Main-memory capacity, if known.
    pub capacity: Option<Bytes>,
    /// The operators of this group's graph, in forward order. The same in every group of one
    /// stage; prefill and decode can differ (MLA decodes with absorbed projections).
    pub nodes: Vec<SweepNode>,
    /// Per operator (as [`SweepGroup::nodes`]): the ridge it is held against.
    pub node_ridges: Vec<FlopPerByte>,
    /// Per operator: its crossover batch.
    pub crossovers: Vec<Crossover>,
}

impl SweepGroup {
    /// The length that varies in this stage: seq_len in prefill, context in decode.
    pub fn length(&self) -> u64 {
        match self.stage {
            Stage::Prefill => self.seq_len,
            Stage::Decode => self.context,
        }
    }

    fn workload(&self, batch: u64, flash: bool) -> Workload {
        Workload {
            stage: self.stage,
            batch,
            seq_len: self.seq_len,
            context: self.context,
            cached: 0,
            precisions: self.precisions,
            flash_attention: flash,
            logits: self.logits,
        }
    }
}

/// One operator at one point: 16 bytes, since a sweep keeps one per operator per point (the
/// step totals hold the times).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OpPoint {
    /// Arithmetic intensity, FLOP/byte.
    pub intensity: FlopPerByte,
    /// Which roof limits it.
    pub bound: Bound,
}

impl OpPoint {
    const EMPTY: OpPoint = OpPoint {
        intensity: FlopPerByte(0.0),
        bound: Bound::Memory,
    };
}

/// One batch of one group: the whole step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Index in [`Sweep::groups`].
    pub group: usize,
    /// Sequences.
    pub batch: u64,
    /// Tokens per sequence in the step (seq_len in prefill, 1 in decode).
    pub tokens_per_seq: u64,
    /// Sums over the forward pass, as [`crate::analysis::analyze`] gives them.
    pub totals: Totals,
    /// Memory needed on the chip, as [`crate::analysis::analyze`] gives it
    /// ([`crate::memory::footprint`]).
    pub memory: MemoryFootprint,
}

impl SweepPoint {
    const EMPTY: SweepPoint = SweepPoint {
        group: 0,
        batch: 0,
        tokens_per_seq: 0,
        totals: Totals {
            cost: Cost {
                flops: crate::units::Flop(0.0),
                bytes_read: Bytes(0.0),
                bytes_written: Bytes(0.0),
            },
            time: Seconds(0.0),
            communication: Seconds(0.0),
            kernels: 0,
            launch_overhead: Seconds(0.0),
        },
        memory: MemoryFootprint::EMPTY,
    };

    /// Roofline time of the whole step (launch overhead excluded), seconds.
    pub fn step_time(&self) -> Seconds {
        self.totals.time
    }

    /// Tokens in the step.
    pub fn tokens(&self) -> u64 {
        self.batch * self.tokens_per_seq
    }

    /// Tokens per second: tokens in the step ÷ step time.
    pub fn tokens_per_s(&self) -> f64 {
        self.tokens() as f64 / self.totals.time.get()
    }

    /// Time per token of one sequence: step time ÷ tokens per sequence. In decode this is the
    /// time per output token (TPOT), the latency each sequence sees; in prefill, the prompt's
    /// time divided over its tokens.
    pub fn time_per_token(&self) -> Seconds {
        self.totals.time / self.tokens_per_seq as f64
    }

    /// Whether the step fits in the chip's memory (`None`: capacity unknown).
    pub fn fits(&self) -> Option<bool> {
        self.memory.fits()
    }
}

/// A finished sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// The batches swept, in the order given.
    pub batches: Vec<u64>,
    /// One per (chip, precision, stage, length), in that nesting order.
    pub groups: Vec<SweepGroup>,
    /// `groups.len() × batches.len()` points, group-major.
    pub points: Vec<SweepPoint>,
    /// `points.len() × width` operator results, point-major, where `width` is the most
    /// operators of any group ([`Sweep::ops_at`] gives a point's own).
    pub ops: Vec<OpPoint>,
    #[serde(skip)]
    width: usize,
}

impl Sweep {
    /// The points of group `g`, one per batch.
    pub fn group_points(&self, g: usize) -> &[SweepPoint] {
        let n = self.batches.len();
        &self.points[g * n..(g + 1) * n]
    }

    /// The operator results of point `p` (an index into [`Sweep::points`]), one per operator
    /// of its group ([`SweepGroup::nodes`]).
    pub fn ops_at(&self, p: usize) -> &[OpPoint] {
        let n = self.groups[self.points[p].group].nodes.len();
        &self.ops[p * self.width..p * self.width + n]
    }
}

/// The crossover of operator `k` of `base`'s graph found over whole batches on its exact cost:
/// doubling from 1 to the first compute-bound batch, then bisecting (the intensity is assumed
/// not to fall as the batch grows). [`Crossover::Never`] if it is memory-bound at
/// [`MAX_BATCH`].
fn search_crossover(
    model: &Transformer,
    base: &Workload,
    k: usize,
    ridge: FlopPerByte,
) -> Crossover {
    let cost = |batch: u64| {
        let c = build_graph(model, &Workload { batch, ..*base });
        c.nodes().get(k).map(|n| n.cost()).unwrap_or_default()
    };
    let compute = |batch: u64| {
        let c = cost(batch);
        c.bytes().get() == 0.0 || c.intensity() >= ridge
    };
    let mut hi = 1;
    while !compute(hi) {
        if hi >= MAX_BATCH {
            return Crossover::Never {
                limit: cost(MAX_BATCH).intensity(),
            };
        }
        hi = (hi * 2).min(MAX_BATCH);
    }
    // compute(hi) holds and, unless hi = 1, compute(hi / 2) does not.
    let mut lo = hi / 2;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if compute(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Crossover::Searched { smallest: hi }
}

/// Plans one group: resolves each operator's roof (errors surface here, before the loop) and
/// solves its crossover.
fn plan_group(
    spec: &SweepSpec<'_>,
    device_index: usize,
    precisions: Precisions,
    stage: Stage,
    seq_len: u64,
    context: u64,
) -> Result<SweepGroup, AnalysisError> {
    let device = &spec.devices[device_index];
    spec.reserve
        .validate_for(device.capacity())
        .map_err(AnalysisError::Reserve)?;
    let roofs_of_chip = ChipRoofs::new(device, precisions.act)?;
    let peak = roofs_of_chip.peak(crate::ops::Compute::Matrix(precisions.act))?;
    let mut group = SweepGroup {
        device: device_index,
        precisions,
        stage,
        seq_len,
        context,
        logits: spec.logits,
        peak,
        ridge: peak / roofs_of_chip.bandwidth,
        capacity: device.capacity(),
        nodes: Vec::new(),
        node_ridges: Vec::new(),
        crossovers: Vec::new(),
    };
    for &b in spec.batches {
        group
            .workload(b, spec.flash_attention)
            .validate()
            .map_err(AnalysisError::Workload)?;
    }
    let flash = spec.flash_attention;
    let at: [OpGraph; 4] = [0, 1, 2, 3].map(|b| build_graph(spec.model, &group.workload(b, flash)));
    for (k, n1) in at[1].nodes().iter().enumerate() {
        let (kind, cost, compute) = (n1.kind(), n1.cost(), n1.compute());
        let roof = roofs_of_chip.roof(compute)?;
        let affine = AffineCost::from_batches(&at[0].nodes()[k].cost(), &cost);
        let is_affine = (2..4).all(|b| affine.predicts(b as f64, &at[b].nodes()[k].cost()));
        group.node_ridges.push(roof.ridge());
        group.crossovers.push(if is_affine {
            affine.crossover(roof.ridge())
        } else {
            search_crossover(spec.model, &group.workload(1, flash), k, roof.ridge())
        });
        group.nodes.push(SweepNode {
            name: n1.name,
            role: n1.role,
            kind,
            span: n1.span(),
            count: n1.count(),
        });
    }
    Ok(group)
}

/// Evaluates one point into `point` and `ops`, rebuilding `graph` (built from `built`):
/// [`crate::analysis::analyze`] without the rows, allocation-free once `graph` has room.
fn evaluate_point(
    spec: &SweepSpec<'_>,
    group: &SweepGroup,
    g: usize,
    batch: u64,
    (graph, built): &mut (OpGraph, Option<BuiltFrom>),
    point: &mut SweepPoint,
    ops: &mut [OpPoint],
) {
    let device = &spec.devices[group.device];
    let w = group.workload(batch, spec.flash_attention);
    let parameters = rebuild_into(spec.model, &w, graph, built);
    // The roofs were resolved when the group was planned: no error is left to meet here.
    let Ok(roofs) = ChipRoofs::new(device, w.precisions.act) else {
        return;
    };
    let mut i = 0;
    let Ok(totals) = walk(graph, &roofs, |row| {
        if let Some(slot) = ops.get_mut(i) {
            let p = row.point();
            *slot = OpPoint {
                intensity: p.intensity,
                bound: p.bound,
            };
        }
        i += 1;
    }) else {
        return;
    };
    *point = SweepPoint {
        group: g,
        batch,
        tokens_per_seq: w.tokens_per_seq(),
        totals,
        memory: footprint_of(
            parameters,
            match built {
                Some(b) => b.peak_live_activations(graph),
                None => graph.peak_live_activations(),
            },
            spec.model,
            &w,
            device.capacity(),
            spec.reserve,
        ),
    };
}

/// Runs a sweep: every (chip, precision, stage, length, batch), in parallel.
///
/// # Errors
/// An invalid model, batch or length; a chip without the bandwidth or a peak the graph needs.
pub fn sweep(spec: &SweepSpec<'_>) -> Result<Sweep, AnalysisError> {
    spec.model.validate().map_err(AnalysisError::Model)?;
    spec.reserve.validate().map_err(AnalysisError::Reserve)?;
    let mut groups = Vec::new();
    for d in 0..spec.devices.len() {
        for &p in spec.precisions {
            for &stage in spec.stages {
                let lengths = match stage {
                    Stage::Prefill => spec.seq_lens,
                    Stage::Decode => spec.contexts,
                };
                for &len in lengths {
                    let (seq_len, context) = match stage {
                        Stage::Prefill => (len, 0),
                        Stage::Decode => (1, len),
                    };
                    groups.push(plan_group(spec, d, p, stage, seq_len, context)?);
                }
            }
        }
    }
    let nb = spec.batches.len();
    let mut points = vec![SweepPoint::EMPTY; groups.len() * nb];
    // Each point's operators in a slot as wide as the widest group's; a narrower group leaves
    // the end of its slot unused.
    let width = groups
        .iter()
        .map(|g| g.nodes.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let mut ops = vec![OpPoint::EMPTY; points.len() * width];
    points
        .par_iter_mut()
        .zip(ops.par_chunks_mut(width))
        .enumerate()
        .for_each_init(
            || (OpGraph::new(spec.model.layers), None),
            |state, (i, (point, op_slice))| {
                let g = i / nb.max(1);
                let b = spec.batches[i % nb];
                evaluate_point(spec, &groups[g], g, b, state, point, op_slice);
            },
        );
    Ok(Sweep {
        batches: spec.batches.to_vec(),
        groups,
        points,
        ops,
        width,
    })
}

/// `from..=to` by doubling: `1..1024` is 1, 2, 4, …, 1024; `3..100` is 3, 6, 12, 24, 48, 96.
pub fn doubling(from: u64, to: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut b = from.max(1);
    while b <= to {
        out.push(b);
        match b.checked_mul(2) {
            Some(n) => b = n,
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use crate::device::tests::h100_sxm;
    use crate::model::tests::llama2_7b;
    use crate::precision::Precision;

    fn bf16() -> Precisions {
        Precisions::uniform(Precision::Bf16)
    }

    fn seed_sweep() -> Result<Sweep, AnalysisError> {
        let devices = [h100_sxm()];
        let spec = SweepSpec {
            model: &llama2_7b(),
            devices: &devices,
            precisions: &[bf16()],
            stages: &[Stage::Decode],
            seq_lens: &[],
            contexts: &[2048],
            batches: &[1, 8, 32, 128],
            flash_attention: false,
            logits: Logits::Last,
            reserve: Reserve::DEFAULT,
        };
        sweep(&spec)
    }

    fn node(s: &Sweep, name: &str) -> Result<usize, String> {
        s.groups[0]
            .nodes
            .iter()
            .position(|n| n.name == name)
            .ok_or(format!("no operator {name}"))
    }

    #[test]
    fn seed_exercise_llama2_7b_h100_decode() -> Result<(), Box<dyn std::error::Error>> {
        // The H100 SXM ridge in bf16: 989.5e12 / 3.35e12 = 295.373 FLOP/byte. At batch 1, 8,
        // 32 and 128 every decode operator is memory-bound.
        let s = seed_sweep()?;
        let g = &s.groups[0];
        assert!((g.ridge.get() - 295.373_134).abs() < 1e-6);
        for p in 0..s.points.len() {
            assert!(s.ops_at(p).iter().all(|o| o.bound == Bound::Memory));
        }
        // The linear layers cross over a little above the ridge, because the activations read
        // and written also grow with the batch. For a bf16 GEMM with K inputs and N outputs,
        // F = 2·B·N·K and Q = 2·(K·N + B·K + B·N), so AI = R at
        // B* = R / (1 − R·(1/N + 1/K)).
        let r = 989.5e12 / 3.35e12;
        let exact = |n: f64, k: f64| r / (1.0 - r * (1.0 / n + 1.0 / k));
        let cases = [
            ("q_proj", exact(4096.0, 4096.0), 346),     // 345.153
            ("o_proj", exact(4096.0, 4096.0), 346),     // 345.153
            ("gate_proj", exact(11008.0, 4096.0), 328), // 327.808
            ("down_proj", exact(4096.0, 11008.0), 328), // 327.808
            ("lm_head", exact(32000.0, 4096.0), 322),   // 321.527
        ];
        for (name, want, smallest) in cases {
            match g.crossovers[node(&s, name)?] {
                Crossover::At { exact, smallest: b } => {
                    assert!(
                        (exact - want).abs() < 1e-9 * want,
                        "{name}: {exact} vs {want}"
                    );
                    assert_eq!(b, smallest, "{name}");
                }
                c => panic!("{name}: {c:?}"),
            }
        }
        assert!((exact(4096.0, 4096.0) - 345.153).abs() < 1e-3);
        assert!((exact(11008.0, 4096.0) - 327.808).abs() < 1e-3);
        assert!((exact(32000.0, 4096.0) - 321.527).abs() < 1e-3);
        // Attention over the KV cache never crosses: each sequence reads its own cache.
        for name in [
            "qk_matmul",
            "sv_matmul",
            "softmax",
            "input_layernorm",
            "act_mul",
        ] {
            assert!(
                matches!(g.crossovers[node(&s, name)?], Crossover::Never { .. }),
                "{name}"
            );
        }
        // qk_matmul's intensity is the same at every batch: 2·2049·128 FLOP per head over
        // (128 + 2049·128 + 2049)·2 bytes.
        let qk = node(&s, "qk_matmul")?;
        let want = 2.0 * 2049.0 * 128.0 / ((128.0 + 2049.0 * 128.0 + 2049.0) * 2.0);
        for p in 0..4 {
            assert!((s.ops_at(p)[qk].intensity.get() - want).abs() < 1e-12);
        }
        Ok(())
    }

    #[test]
    fn closed_form_agrees_with_brute_force() -> Result<(), Box<dyn std::error::Error>> {
        // For every operator, model and stage, the smallest batch from the closed form (or the
        // search, for expert GEMMs) is the first batch at which the full analysis says "compute".
        let h100 = h100_sxm();
        let batches: Vec<u64> = (1..=2048).collect();
        let mut models = crate::analysis::tests::models();
        models.push(crate::fixtures::mixtral_like());
        let mut searched = 0;
        for m in models {
            for (stage, len) in [
                (Stage::Decode, 2048),
                (Stage::Prefill, 1),
                (Stage::Prefill, 3),
            ] {
                let devices = [h100.clone()];
                let spec = SweepSpec {
                    model: &m,
                    devices: &devices,
                    precisions: &[
                        bf16(),
                        Precisions {
                            weight: Precision::Int4,
                            kv: Precision::Fp8,
                            ..bf16()
                        },
                    ],
                    stages: &[stage],
                    seq_lens: &[len],
                    contexts: &[len],
                    batches: &batches,
                    flash_attention: false,
                    logits: Logits::Last,
                    reserve: Reserve::DEFAULT,
                };
                let s = sweep(&spec)?;
                for (g, group) in s.groups.iter().enumerate() {
                    for (k, c) in group.crossovers.iter().enumerate() {
                        let name = group.nodes[k].name;
                        let first = s
                            .group_points(g)
                            .iter()
                            .enumerate()
                            .find(|(i, _)| {
                                s.ops_at(g * batches.len() + i)[k].bound == Bound::Compute
                            })
                            .map(|(_, p)| p.batch);
                        let smallest = match c {
                            Crossover::At { smallest, .. } => Some(*smallest),
                            Crossover::Searched { smallest } => {
                                searched += 1;
                                Some(*smallest)
                            }
                            Crossover::Never { .. } => None,
                        };
                        match (smallest, first) {
                            (Some(a), Some(b)) => assert_eq!(a, b, "{} {name}", m.name),
                            (Some(a), None) => assert!(a > 2048, "{} {name}: {a}", m.name),
                            (None, None) => {}
                            (a, b) => panic!("{} {name}: {a:?} vs {b:?}", m.name),
                        }
                        // Expert GEMMs are the operators whose cost is not affine in the batch.
                        assert_eq!(
                            matches!(c, Crossover::Searched { .. }),
                            group.nodes[k].kind == OpKind::ExpertGemm,
                            "{} {name}: {c:?}",
                            m.name
                        );
                    }
                }
            }
        }
        assert!(searched > 0);
        Ok(())
    }

    #[test]
    fn every_point_equals_analyze() -> Result<(), Box<dyn std::error::Error>> {
        let devices = [h100_sxm()];
        // Every decoder variant, the MLA + MoE one with more than 32 operators included.
        for m in crate::analysis::tests::models() {
            every_point_of(&m, &devices)?;
        }
        Ok(())
    }

    fn every_point_of(
        m: &Transformer,
        devices: &[Device],
    ) -> Result<(), Box<dyn std::error::Error>> {
        let spec = SweepSpec {
            model: m,
            devices,
            precisions: &[bf16()],
            stages: &[Stage::Prefill, Stage::Decode],
            seq_lens: &[128, 2048],
            contexts: &[0, 4095],
            batches: &[1, 3, 64, 1024],
            flash_attention: true,
            logits: Logits::Last,
            reserve: Reserve::DEFAULT,
        };
        let s = sweep(&spec)?;
        assert_eq!(s.points.len(), 4 * 4);
        for (p, point) in s.points.iter().enumerate() {
            let g = &s.groups[point.group];
            let a = analyze(
                m,
                &g.workload(point.batch, true),
                &devices[0],
                Reserve::DEFAULT,
            )?;
            // Each group's own operators (MLA decodes with absorbed projections), all of them.
            let names: Vec<_> = g.nodes.iter().map(|n| n.name).collect();
            let rows: Vec<_> = a.rows.iter().map(|r| r.name).collect();
            assert_eq!(names, rows, "{}", m.name);
            assert_eq!(s.ops_at(p).len(), a.rows.len());
            assert_eq!(point.totals, a.totals);
            // One memory model: the sweep's footprint is the analysis's, activations and
            // reserve included.
            assert_eq!(point.memory, a.memory);
            for (o, row) in s.ops_at(p).iter().zip(&a.rows) {
                let rp = row.point();
                assert_eq!((o.intensity, o.bound), (rp.intensity, rp.bound));
            }
        }
        Ok(())
    }

    #[test]
    fn memory_marks_batches_that_do_not_fit() -> Result<(), Box<dyn std::error::Error>> {
        // Llama-2-7B bf16 decoding at context 4096 on the H100 SXM (80 GB, 8 GB of it kept by
        // the runtime): weights 6,738,415,616 · 2 B; the KV cache of the 4097 keys attended,
        // 2·32·4097·4096·2 B per sequence. Unfused attention: the peak of live activations is
        // at the softmax, the residual (4096·2 B), the scores and the probabilities
        // (32·4097·2 B each) per sequence: 532,608 B. Batch b fits while
        // 13,476,831,232 + b·(2,147,991,552 + 532,608) + 8e9 ≤ 80e9: b ≤ 27.24.
        let devices = [h100_sxm()];
        let spec = SweepSpec {
            model: &llama2_7b(),
            devices: &devices,
            precisions: &[bf16()],
            stages: &[Stage::Decode],
            seq_lens: &[],
            contexts: &[4096],
            batches: &[27, 28],
            flash_attention: false,
            logits: Logits::Last,
            reserve: Reserve::DEFAULT,
        };
        let s = sweep(&spec)?;
        let per_seq = 2.0 * 32.0 * 4097.0 * 4096.0 * 2.0;
        let m = &s.points[0].memory;
        assert_eq!(m.weights.get(), 6_738_415_616.0 * 2.0);
        assert_eq!(m.kv_cache.get(), 27.0 * per_seq);
        assert_eq!(m.activations.get(), 27.0 * 532_608.0);
        assert_eq!(m.activations_at, "softmax");
        assert_eq!(m.reserve.get(), 8e9);
        assert_eq!(s.points[0].fits(), Some(true));
        assert_eq!(s.points[1].fits(), Some(false));
        // Without a reserve, batch 30 (77.93 GB) fits and 31 (80.08 GB) does not.
        let none = SweepSpec {
            batches: &[30, 31],
            reserve: Reserve::Bytes(Bytes::ZERO),
            ..spec
        };
        let s2 = sweep(&none)?;
        assert_eq!(
            (s2.points[0].fits(), s2.points[1].fits()),
            (Some(true), Some(false))
        );
        // Throughput and latency: decode makes one token per sequence per step.
        let p = &s.points[0];
        assert_eq!(p.tokens(), 27);
        assert_eq!(p.time_per_token(), p.step_time());
        assert!((p.tokens_per_s() - 27.0 / p.step_time().get()).abs() < 1e-9);
        Ok(())
    }

    #[test]
    fn bad_inputs_fail_before_the_loop() {
        let devices = [h100_sxm()];
        let m = llama2_7b();
        let mut spec = SweepSpec {
            model: &m,
            devices: &devices,
            precisions: &[bf16()],
            stages: &[Stage::Decode],
            seq_lens: &[],
            contexts: &[2048],
            batches: &[0],
            flash_attention: false,
            logits: Logits::Last,
            reserve: Reserve::DEFAULT,
        };
        assert!(matches!(sweep(&spec), Err(AnalysisError::Workload(e)) if e.quantity == "batch"));
        spec.batches = &[1];
        let int4 = [Precisions::uniform(Precision::Int4)];
        spec.precisions = &int4;
        assert!(matches!(sweep(&spec), Err(AnalysisError::Device(_))));
    }

    #[test]
    fn doubling_ranges() {
        assert_eq!(
            doubling(1, 1024),
            vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        );
        assert_eq!(doubling(3, 100), vec![3, 6, 12, 24, 48, 96]);
        assert_eq!(doubling(5, 4), Vec::<u64>::new());
    }
}
