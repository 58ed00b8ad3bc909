//! The time of any engine step, prefill and decode mixed, from a handful of analyses of the
//! (parallel) graph.
//!
//! Every node's FLOPs and bytes, and a collective's two α–β terms, are linear in the five
//! quantities of a [`Mix`] (T, S, X, D, K, and a constant): a projection reads its weights
//! once and moves T rows, lm_head S rows, attention does b·h·(X + D) pairs' work and reads
//! K + T keys' cache. So six analyses of homogeneous prefills, whose quantities are linearly
//! independent, give each node's six coefficients by solving a 6 × 6 system; decode steps get
//! their own three from three decode analyses (a decode graph may differ from a prefill's, as
//! MLA's absorbed attention does).
//!
//! A mixture of experts' grouped GEMMs are not linear in the step: the experts a step's
//! tokens touch grow as E·(1 − (1 − k/E)^T) ([`crate::ops::expected_experts_touched`]). For
//! them the routed token count T is fitted (it is linear) and the cost formula itself
//! ([`crate::ops::ExpertGemm::cost`]) is evaluated at the step's T: exact for every step.
//!
//! A step is then priced as an analysed one is ([`crate::pricing::price`]): each node on its
//! roof (the bound) or at an [`Estimate`]'s shares, the nodes on the critical path of the
//! graph's compute and communication streams, the launches a named addend.
//!
//! The exactness is checked, never assumed: [`StepModel::new`] evaluates the graph at three
//! further steps and keeps the largest relative difference ([`StepModel::fit_error`]). It is
//! at rounding level for dense models and mixtures of experts; a sliding window (pairs no
//! longer linear in the context) makes it larger, and every report prints it.

use super::mix::Mix;
use crate::comm::collective::{collective_cost, AlgorithmChoice, Collective};
use crate::comm::{Fabric, Group, System};
use crate::device::Device;
use crate::graph::{OpGraph, Role};
use crate::memory::Reserve;
use crate::model::Transformer;
use crate::ops::{Compute, ExpertGemm, Op};
use crate::parallel::analysis::{analyze_parallel, ParallelAnalysisError, ParallelStage};
use crate::parallel::schedule::schedule_with;
use crate::parallel::Layout;
use crate::pricing::{compose, Estimate, Launches, Pricing, StepTime};
use crate::roofline::Roof;
use crate::units::{Bytes, Seconds};
use crate::workload::{Stage, Workload};
use serde::Serialize;

/// Coefficients of a quantity over [`Mix::features`].
type Coef = [f64; 6];

/// The prefills (batch, new tokens, cached tokens) the prefill coefficients are solved from:
/// their quantities are linearly independent (the diagonal pairs grow as q², the cross pairs
/// and cached keys separate at c > 0).
const PREFILL_DESIGN: [(u64, u64, u64); 6] = [
    (4, 64, 0),
    (8, 64, 0),
    (4, 128, 0),
    (4, 192, 0),
    (4, 64, 512),
    (4, 128, 512),
];
/// The decodes (batch, context) the decode coefficients are solved from.
const DECODE_DESIGN: [(u64, u64); 3] = [(4, 512), (8, 512), (4, 1536)];

/// The step every default capacity is taken at: 8,192 tokens, vLLM's default
/// `max_num_batched_tokens` for online serving with chunked prefill (vLLM engine
/// arguments), whose activations the engine profiles before sizing its KV cache.
pub const DEFAULT_STEP_TOKENS: u64 = 8192;

/// One node of the graph, its quantities as linear functions of the step.
#[derive(Debug, Clone, PartialEq)]
struct NodeFit {
    count: f64,
    role: Role,
    compute: Compute,
    roof: Roof,
    /// A collective: its latency and transfer terms are fitted; else FLOPs and bytes.
    link: bool,
    a: Coef,
    b: Coef,
    /// A collective's kind and ranks, and its buffer's coefficients: at a step it is priced
    /// afresh at its buffer by the fastest algorithm (the choice changes with the size, so
    /// its time is not linear in the step though its bytes are).
    collective: Option<(Collective, Group)>,
    buffer: Coef,
    /// A grouped expert GEMM: its shape, and the coefficients of its routed tokens (its cost
    /// is evaluated at the step's tokens, not fitted).
    /// Boxed: the nodes stay small for the loop that prices a step.
    expert: Option<Box<(ExpertGemm, Coef)>>,
}

/// The coefficients of one graph (prefill or decode).
#[derive(Debug, Clone, PartialEq)]
struct GraphFit {
    /// The graph analysed, for its dependences (the critical path of a step).
    graph: OpGraph,
    /// No collective in the graph: its critical path is the serial sum of its nodes (one
    /// stream), summed without the schedule.
    serial: bool,
    nodes: Vec<NodeFit>,
    kernels: u64,
    activations: Coef,
}

/// Any engine step's time on one system under one layout ([module docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct StepModel {
    prefill: GraphFit,
    decode: GraphFit,
    chip: Device,
    fabric: Fabric,
    /// Weights one device holds, bytes.
    weights: Bytes,
    /// Runtime reserve, bytes.
    reserve: Bytes,
    /// Main-memory capacity, bytes.
    capacity: Option<Bytes>,
    /// KV cache one token of one sequence takes on one device, bytes.
    kv_per_token: f64,
    fit_error: f64,
}

/// The largest relative difference between a fitted and an analysed step
/// ([`StepModel::fit_error`]), with what was compared.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FitCheck {
    /// The step checked.
    pub mix: Mix,
    /// Its bound from the analysis of the graph, seconds.
    pub analysed: Seconds,
    /// Its bound from the fitted coefficients, seconds.
    pub fitted: Seconds,
}

impl StepModel {
    /// The step model of `model` on `system` under `layout`, with `base`'s precisions,
    /// attention kernel and logits, keeping `reserve` of each device's memory.
    ///
    /// # Errors
    /// Any error the parallel analysis of the design steps gives (model, chip, layout,
    /// system); a layout with context parallelism (the ring splits whole prompts, not the
    /// chunks of a step) is refused as [`crate::parallel::LayoutError::ContextUnsupported`].
    pub fn new(
        model: &Transformer,
        base: &Workload,
        system: &System,
        layout: Layout,
        reserve: Reserve,
    ) -> Result<StepModel, ParallelAnalysisError> {
        if layout.cp > 1 {
            return Err(ParallelAnalysisError::Parallel(
                crate::parallel::ParallelError::Layout(
                    crate::parallel::LayoutError::ContextUnsupported {
                        cp: layout.cp,
                        what: "engine steps that mix prefill chunks and decodes",
                    },
                ),
            ));
        }
        let run = |w: Workload| analyze_parallel(model, &w, system, layout, reserve);
        let prefill_w = |(b, q, c): (u64, u64, u64)| {
            Workload {
                stage: Stage::Prefill,
                batch: b,
                seq_len: q,
                context: 0,
                ..*base
            }
            .with_cached(c)
        };
        let decode_w = |(b, c): (u64, u64)| Workload {
            stage: Stage::Decode,
            batch: b,
            seq_len: 0,
            context: c,
            cached: 0,
            ..*base
        };
        let mut prefills = Vec::with_capacity(PREFILL_DESIGN.len());
        for &p in &PREFILL_DESIGN {
            prefills.push(run(prefill_w(p))?);
        }
        let mut decodes = Vec::with_capacity(DECODE_DESIGN.len());
        for &d in &DECODE_DESIGN {
            decodes.push(run(decode_w(d))?);
        }
        let prefill_mix: Vec<Mix> = PREFILL_DESIGN
            .iter()
            .map(|&(b, q, c)| Mix::sequences(b, q, c, true))
            .collect();
        let decode_mix: Vec<Mix> = DECODE_DESIGN
            .iter()
            .map(|&(b, c)| Mix::decode(b, c))
            .collect();
        let prefill = fit(&prefills, &prefill_mix, &[0, 1, 2, 3, 4, 5]);
        // A decode's T, S and D are all b, and X = K = Σ c: three coefficients, on the
        // constant, S and K.
        let decode = fit(&decodes, &decode_mix, &[0, 2, 5]);
        let first = &decodes[0];
        let kv_per_token = first.memory.kv_cache.get()
            / (first.workload.batch as f64 * first.workload.kv_len() as f64);
        let mut m = StepModel {
            prefill,
            decode,
            chip: system.chip.clone(),
            fabric: system.fabric.clone(),
            weights: first.memory.weights,
            reserve: first.memory.reserve,
            capacity: first.memory.capacity,
            kv_per_token,
            fit_error: 0.0,
        };
        let checks = [
            (prefill_w((2, 100, 300)), Mix::sequences(2, 100, 300, true)),
            (prefill_w((1, 1000, 0)), Mix::sequences(1, 1000, 0, true)),
            (decode_w((3, 777)), Mix::decode(3, 777)),
        ];
        for (w, mix) in checks {
            let c = m.check(&run(w)?, &mix);
            let err = (c.fitted.get() - c.analysed.get()).abs() / c.analysed.get();
            if err > m.fit_error {
                m.fit_error = err;
            }
        }
        Ok(m)
    }

    /// The fitted and the analysed bound of the step `stage` is, whose quantities are `mix`.
    pub fn check(&self, stage: &ParallelStage, mix: &Mix) -> FitCheck {
        FitCheck {
            mix: *mix,
            analysed: stage.schedule.step,
            fitted: self.bound(mix),
        }
    }

    /// The largest relative difference between the fitted and the analysed bound at the check
    /// steps (a 100-token prefill chunk after 300 cached tokens at batch 2, a 1,000-token prompt,
    /// a decode at batch 3 and context 777): rounding level (below 1e-9) when every node is
    /// linear in the step's quantities (module docs).
    pub fn fit_error(&self) -> f64 {
        self.fit_error
    }

    fn graph(&self, mix: &Mix) -> &GraphFit {
        let decode_only = mix.tokens == mix.sampled
            && mix.tokens == mix.diagonal_pairs
            && mix.cross_pairs == mix.cached;
        if decode_only {
            &self.decode
        } else {
            &self.prefill
        }
    }

    /// The roofline bound of a step, seconds: every node at its roof, every collective at its
    /// α–β bound, on the critical path of the two streams, no launch cost. A lower bound on
    /// the step (0 for an empty step).
    pub fn bound(&self, mix: &Mix) -> Seconds {
        if mix.is_empty() {
            return Seconds::ZERO;
        }
        self.schedule(mix, Pricing::Bound).step
    }

    /// The estimated time of a step at `est`'s shares, launches included, seconds (labelled
    /// as an estimate wherever printed).
    pub fn estimate(&self, mix: &Mix, est: &Estimate) -> Seconds {
        self.price(mix, est.pricing(), est.launches).total
    }

    /// The step of quantities `mix` priced by `pricing`, launched as `launches`: as
    /// [`crate::pricing::price`] prices an analysed step.
    pub fn price(&self, mix: &Mix, pricing: Pricing<'_>, launches: Launches) -> StepTime {
        if mix.is_empty() {
            return StepTime::default();
        }
        let s = self.schedule(mix, pricing);
        compose(s, self.graph(mix).kernels, &self.chip, launches)
    }

    /// The step of quantities `mix` (not empty) on the compute and communication streams, each
    /// node priced by `pricing`.
    #[inline]
    fn schedule(&self, mix: &Mix, pricing: Pricing<'_>) -> crate::parallel::Schedule {
        let x = mix.features();
        let g = self.graph(mix);
        if g.serial {
            // One stream: each node starts when the one before it ends, so the critical path
            // is the sum in node order, as the schedule adds it. The pricing is chosen once,
            // outside the loop over the nodes.
            let mut t = 0.0;
            match pricing {
                Pricing::Bound => {
                    for n in &g.nodes {
                        t += self.node_time(n, &x, Pricing::Bound) * n.count;
                    }
                }
                Pricing::Estimate(e) => {
                    for n in &g.nodes {
                        t += self.node_time(n, &x, Pricing::Estimate(e)) * n.count;
                    }
                }
            }
            crate::parallel::Schedule {
                compute: Seconds(t),
                communication: Seconds::ZERO,
                exposed: Seconds::ZERO,
                step: Seconds(t),
            }
        } else {
            schedule_with(&g.graph, |i| {
                g.nodes
                    .get(i)
                    .map_or(0.0, |n| self.node_time(n, &x, pricing) * n.count)
            })
        }
    }

    /// One execution of node `n` at the step of features `x`, seconds.
    #[inline(always)]
    fn node_time(&self, n: &NodeFit, x: &[f64; 6], pricing: Pricing<'_>) -> f64 {
        if n.link {
            let (a, b) = self.link_terms(n, x);
            return match pricing {
                Pricing::Bound => a + b,
                Pricing::Estimate(e) => e.link_time(Seconds(a), Seconds(b)).get(),
            };
        }
        let (flops, bytes) = match n.expert.as_deref() {
            Some((gemm, tokens)) => {
                let t = dot(tokens, x).round().max(0.0);
                let cost = ExpertGemm {
                    tokens: t as u64,
                    ..*gemm
                }
                .cost();
                (cost.flops.get(), cost.bytes().get())
            }
            None => (dot(&n.a, x).max(0.0), dot(&n.b, x).max(0.0)),
        };
        match pricing {
            Pricing::Bound => n.roof.time(&crate::ops::Cost::new(flops, bytes, 0.0)).get(),
            Pricing::Estimate(e) => e.kernel_time(n.role, n.compute, n.roof, flops, bytes).get(),
        }
    }

    /// A collective's α and β terms at the step of features `x`, seconds: priced afresh at its
    /// buffer (the fitted terms where it cannot be).
    fn link_terms(&self, n: &NodeFit, x: &[f64; 6]) -> (f64, f64) {
        if let Some((c, group)) = n.collective {
            let bytes = Bytes(dot(&n.buffer, x).max(0.0));
            if let Ok(cost) = collective_cost(c, bytes, group, &self.fabric, AlgorithmChoice::Auto)
            {
                return (cost.latency.get(), cost.transfer.get());
            }
        }
        (dot(&n.a, x).max(0.0), dot(&n.b, x).max(0.0))
    }

    /// Kernels one step launches (the prefill graph's, or the decode graph's for a decode-only
    /// step).
    pub fn kernels(&self, mix: &Mix) -> u64 {
        self.graph(mix).kernels
    }

    /// The peak of live activations in a step, bytes (fitted as the times are).
    pub fn activations(&self, mix: &Mix) -> Bytes {
        Bytes(dot(&self.graph(mix).activations, &mix.features()).max(0.0))
    }

    /// KV cache one token of one sequence takes on one device, bytes (its share of the KV
    /// heads and of the blocks under the layout).
    pub fn kv_bytes_per_token(&self) -> Bytes {
        Bytes(self.kv_per_token)
    }

    /// Weights one device holds, bytes.
    pub fn weights(&self) -> Bytes {
        self.weights
    }

    /// The tokens of KV cache that fit on one device beside the weights, the runtime reserve
    /// and the activations of a step of `step_tokens` prefill tokens: ⌊(capacity − reserve −
    /// weights − activations) / KV bytes per token⌋, as an engine sizes its cache after
    /// profiling a step (vLLM's `determine_num_available_blocks`). `None` when the capacity is
    /// unknown; `Some(0)` when nothing is left.
    pub fn kv_capacity_tokens_for(&self, step_tokens: u64) -> Option<u64> {
        let cap = self.capacity?;
        let act = self.activations(&Mix::sequences(1, step_tokens.max(1), 0, true));
        let free = cap.get() - self.reserve.get() - self.weights.get() - act.get();
        if free <= 0.0 || self.kv_per_token <= 0.0 {
            return Some(0);
        }
        Some((free / self.kv_per_token).floor() as u64)
    }

    /// [`StepModel::kv_capacity_tokens_for`] a step of [`DEFAULT_STEP_TOKENS`].
    pub fn kv_capacity_tokens(&self) -> Option<u64> {
        self.kv_capacity_tokens_for(DEFAULT_STEP_TOKENS)
    }
}

#[inline(always)]
fn dot(a: &Coef, x: &[f64; 6]) -> f64 {
    a[0] * x[0] + a[1] * x[1] + a[2] * x[2] + a[3] * x[3] + a[4] * x[4] + a[5] * x[5]
}

/// Solves each node's coefficients on the feature columns `cols` from the analyses `stages`
/// of the steps `mixes` (as many as columns).
fn fit(stages: &[ParallelStage], mixes: &[Mix], cols: &[usize]) -> GraphFit {
    let n = cols.len();
    let rows: Vec<Vec<f64>> = mixes
        .iter()
        .map(|m| {
            let f = m.features();
            cols.iter().map(|&c| f[c]).collect()
        })
        .collect();
    let solve = |y: &[f64]| -> Coef {
        let x = gauss(&rows, y);
        let mut c = [0.0; 6];
        for (k, &col) in cols.iter().enumerate().take(n) {
            c[col] = x[k];
        }
        c
    };
    let base = &stages[0];
    let mut nodes = Vec::with_capacity(base.rows.len());
    for (i, r) in base.rows.iter().enumerate() {
        let link = r.link().is_some();
        let (mut ya, mut yb) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut ys = Vec::with_capacity(n);
        let collective = base.communication(i).map(|c| (c.collective, c.group));
        let expert = match base.graph.nodes().get(i).map(|n| n.op()) {
            Some(Op::ExpertGemm(g)) => Some(*g),
            _ => None,
        };
        let mut yt = Vec::with_capacity(n);
        for s in stages {
            yt.push(match s.graph.nodes().get(i).map(|n| n.op()) {
                Some(Op::ExpertGemm(g)) => g.tokens as f64,
                _ => 0.0,
            });
            ys.push(
                s.communication(i)
                    .filter(|c| Some((c.collective, c.group)) == collective)
                    .map_or(0.0, |c| c.bytes.get()),
            );
            // The graphs of one stage and layout have the same nodes in the same order; a node
            // missing at some step contributes nothing there.
            let row = s.rows.get(i).filter(|x| x.role == r.role);
            let (a, b) = match (row, link) {
                (Some(x), true) => x
                    .link()
                    .map_or((0.0, 0.0), |l| (l.latency.get(), l.transfer.get())),
                (Some(x), false) => (x.cost.flops.get(), x.cost.bytes().get()),
                (None, _) => (0.0, 0.0),
            };
            ya.push(a);
            yb.push(b);
        }
        nodes.push(NodeFit {
            count: r.count as f64,
            role: r.role,
            compute: r.compute,
            roof: r.roof,
            link,
            a: solve(&ya),
            b: solve(&yb),
            collective,
            buffer: solve(&ys),
            expert: expert.map(|g| Box::new((g, solve(&yt)))),
        });
    }
    let acts: Vec<f64> = stages.iter().map(|s| s.memory.activations.get()).collect();
    GraphFit {
        graph: base.graph.clone(),
        serial: base.rows.iter().all(|r| r.compute != Compute::Network),
        nodes,
        kernels: base.totals.kernels,
        activations: solve(&acts),
    }
}

/// x with A·x = y, A square (rows of `a`), by Gaussian elimination with partial pivoting;
/// zeros where A is singular in a column.
fn gauss(a: &[Vec<f64>], y: &[f64]) -> Vec<f64> {
    let n = y.len();
    let mut m: Vec<Vec<f64>> = a
        .iter()
        .zip(y)
        .map(|(r, &v)| {
            let mut r = r.clone();
            r.push(v);
            r
        })
        .collect();
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))
            .unwrap_or(col);
        m.swap(col, pivot);
        let p = m[col][col];
        if p == 0.0 {
            continue;
        }
        let pivot_row = m[col].clone();
        for (r, row) in m.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / p;
                if f != 0.0 {
                    for (x, &y) in row.iter_mut().zip(&pivot_row).skip(col) {
                        *x -= f * y;
                    }
                }
            }
        }
    }
    (0..n)
        .map(|i| {
            if m[i][i] == 0.0 {
                0.0
            } else {
                m[i][n] / m[i][i]
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "step_model_tests.rs"]
mod tests;
