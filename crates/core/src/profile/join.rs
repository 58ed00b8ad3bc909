//! Profiled kernels joined to a model's operators: predicted time beside measured time.
//!
//! Each profiled operator (a CPU trace's operator, or a GPU trace's kernels grouped by the
//! operator that launched them) gets a **signature** from its shapes ([`super::aten`]):
//!
//! | signature | profiled operator | model operator |
//! |---|---|---|
//! | gemm m, n, k | `mm`, `addmm`, `linear`, 2-D `matmul` | [`Gemm`] (q/k/v/o_proj, gate/up/down_proj, lm_head) |
//! | bmm batch, m, n, k | `bmm`, ≥3-D `matmul` | [`BatchedMatmul`] (qk_matmul, sv_matmul) |
//! | softmax rows, cols | `softmax` | [`Softmax`] |
//! | norm rows, cols | `rms_norm`/`layer_norm`, or Hugging Face's RMSNorm as `pow`, `mean`, `add`, `rsqrt`, `mul`, `mul` in a row | [`RmsNorm`], [`LayerNorm`] |
//! | activation rows, cols | `silu`, `gelu`, `relu`, `sigmoid` | `act_fn` |
//! | mul rows, cols (same-shaped inputs) | `mul` | `act_mul` |
//! | add rows, cols (same-shaped inputs) | `add` | `attn_residual_add`, `mlp_residual_add` |
//! | embedding tokens, hidden | `embedding` | [`Embedding`] |
//! | attention | `scaled_dot_product_attention` family | [`FlashAttention`] |
//!
//! rows × cols is the output shape with cols its last dimension, so a residual add
//! (`[B,s,d]`) is not taken for the rotary add (`[B,h,s,e]`) even where h·e = d. Operators
//! with the same signature (q_proj and o_proj when h·e = d; the two residual adds; every norm)
//! are told apart by order: the i-th profiled operator of a signature is the i-th model
//! operator of that signature in forward order (embedding, every block in turn, final norm,
//! lm_head), wrapping around for each further forward pass. Profiled operators with no model
//! operator of their signature (the causal-mask add, the rotary pieces, copies) are listed as
//! unmatched with their time; model operators with no signature (rotary_emb, kv_cache_write)
//! keep their prediction and no measurement.
//!
//! [`Gemm`]: crate::ops::Gemm
//! [`BatchedMatmul`]: crate::ops::BatchedMatmul
//! [`Softmax`]: crate::ops::Softmax
//! [`RmsNorm`]: crate::ops::RmsNorm
//! [`LayerNorm`]: crate::ops::LayerNorm
//! [`Embedding`]: crate::ops::Embedding
//! [`FlashAttention`]: crate::ops::FlashAttention

use super::aten::{shaped_op, MapKind, Shaped};
use super::{Profile, ProfiledKernel};
use crate::analysis::StageAnalysis;
use crate::graph::{Role, Span};
use crate::ops::{Op, OpKind};
use crate::precision::Precision;
use crate::units::Seconds;
use crate::workload::Stage;
use serde::Serialize;
use std::collections::HashMap;

/// What an operator is, by shape: the key the join matches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Signature {
    /// A GEMM `[m,k]·[k,n]`.
    Gemm {
        /// Rows.
        m: u64,
        /// Output columns.
        n: u64,
        /// Reduction.
        k: u64,
    },
    /// `batch` matmuls `[m,k]·[k,n]`.
    Bmm {
        /// Matrices.
        batch: u64,
        /// Rows.
        m: u64,
        /// Output columns.
        n: u64,
        /// Reduction.
        k: u64,
    },
    /// Softmax over `rows` rows of `cols`.
    Softmax {
        /// Rows.
        rows: u64,
        /// Row length.
        cols: u64,
    },
    /// A normalisation of `rows` rows of `cols`.
    Norm {
        /// Rows.
        rows: u64,
        /// Row length.
        cols: u64,
    },
    /// An activation function over `rows` × `cols`.
    Activation {
        /// Rows.
        rows: u64,
        /// Last dimension.
        cols: u64,
    },
    /// A product of two same-shaped tensors.
    Mul {
        /// Rows.
        rows: u64,
        /// Last dimension.
        cols: u64,
    },
    /// A sum of two same-shaped tensors.
    Add {
        /// Rows.
        rows: u64,
        /// Last dimension.
        cols: u64,
    },
    /// An embedding lookup.
    Embedding {
        /// Tokens.
        tokens: u64,
        /// Row width.
        hidden: u64,
    },
    /// Fused attention.
    Attention {
        /// Sequences.
        batch: u64,
        /// Query heads.
        heads: u64,
        /// Queries per sequence.
        q_len: u64,
        /// Keys per sequence.
        kv_len: u64,
    },
}

/// The signature of a model node doing `role`, `None` for those a profile cannot be matched to
/// (rotary_emb, kv_cache_write).
pub fn node_signature(role: Role, op: &Op, tokens: u64) -> Option<Signature> {
    let per_token = |elements: u64| (tokens, elements / tokens.max(1));
    Some(match op {
        Op::Gemm(g) => Signature::Gemm {
            m: g.m,
            n: g.n,
            k: g.k,
        },
        Op::BatchedMatmul(b) => Signature::Bmm {
            batch: b.batch,
            m: b.m,
            n: b.n,
            k: b.k,
        },
        Op::Softmax(s) => Signature::Softmax {
            rows: s.rows,
            cols: s.cols,
        },
        Op::RmsNorm(n) => Signature::Norm {
            rows: n.rows,
            cols: n.cols,
        },
        Op::LayerNorm(n) => Signature::Norm {
            rows: n.rows,
            cols: n.cols,
        },
        Op::Embedding(e) => Signature::Embedding {
            tokens: e.tokens,
            hidden: e.hidden,
        },
        Op::FlashAttention(f) => Signature::Attention {
            batch: f.batch,
            heads: f.heads,
            q_len: f.q_len,
            kv_len: f.kv_len,
        },
        Op::Elementwise(e) => {
            let (rows, cols) = per_token(e.elements);
            if role.is_activation() {
                Signature::Activation { rows, cols }
            } else if role.is_gate_mul() {
                Signature::Mul { rows, cols }
            } else if role.is_residual() {
                Signature::Add { rows, cols }
            } else {
                return None;
            }
        }
        // Rotary, KV-cache write, expert GEMMs and anything added later: not matched.
        _ => return None,
    })
}

/// The signature of a profiled operator's shaped form, `None` for one the model has no
/// operator like.
pub fn shaped_signature(s: &Shaped) -> Option<Signature> {
    match s {
        Shaped::Op { op } => match op {
            Op::Elementwise(_) => None,
            other => node_signature(Role::Operator, other, 1),
        },
        Shaped::Map { map } => {
            let (rows, cols) = (map.rows, map.cols);
            match map.kind {
                MapKind::Activation => Some(Signature::Activation { rows, cols }),
                MapKind::Mul if map.same_shape_inputs => Some(Signature::Mul { rows, cols }),
                MapKind::Add if map.same_shape_inputs => Some(Signature::Add { rows, cols }),
                _ => None,
            }
        }
    }
}

/// One profiled operator: one or more kernels of one operator instance (or, for a norm written
/// as pieces, the pieces).
#[derive(Debug, Clone)]
struct Item {
    label: String,
    shaped_as: Option<String>,
    signature: Option<Signature>,
    precision: Option<Precision>,
    time: Seconds,
    gemm_m: Option<u64>,
}

fn item_of(k: &ProfiledKernel) -> (Item, Option<Shaped>) {
    let shaped =
        k.op.as_ref()
            .and_then(|o| shaped_op(&o.name, &o.shapes, &o.types, &o.values));
    let label =
        k.op.as_ref()
            .map(|o| o.name.clone())
            .unwrap_or_else(|| k.name.clone());
    let gemm_m = match &shaped {
        Some(s) => match &s.shaped {
            Shaped::Op { op: Op::Gemm(g) } => Some(g.m),
            _ => None,
        },
        None => None,
    };
    (
        Item {
            label,
            shaped_as: shaped.as_ref().map(|s| s.description.clone()),
            signature: shaped.as_ref().and_then(|s| shaped_signature(&s.shaped)),
            precision: shaped.as_ref().map(|s| s.precision),
            time: k.duration,
            gemm_m,
        },
        shaped.map(|s| s.shaped),
    )
}

/// The profiled operators of `kernels` in order: kernels of one operator instance merged, and
/// Hugging Face's RMSNorm pieces (`pow`, then `mean`, `add`, `rsqrt`, `mul`, and a second `mul`
/// by the weight) merged into one norm.
fn items(kernels: &[ProfiledKernel]) -> Vec<Item> {
    let mut merged: Vec<(Item, Option<Shaped>, Option<u64>)> = Vec::new();
    for k in kernels {
        let inst = k.op.as_ref().and_then(|o| o.instance);
        if let (Some(i), Some(last)) = (inst, merged.last_mut()) {
            if last.2 == Some(i) {
                last.0.time += k.duration;
                continue;
            }
        }
        let (item, shaped) = item_of(k);
        merged.push((item, shaped, inst));
    }
    let mut out = Vec::with_capacity(merged.len());
    let mut i = 0;
    while i < merged.len() {
        let (item, shaped, _) = &merged[i];
        let pow = match shaped {
            Some(Shaped::Map { map }) if map.kind == MapKind::Pow => Some((map.rows, map.cols)),
            _ => None,
        };
        let Some((rows, cols)) = pow else {
            out.push(item.clone());
            i += 1;
            continue;
        };
        // A norm written as pieces: take the pieces up to and including the second multiply.
        let mut group = item.clone();
        let mut muls = 0;
        let mut j = i + 1;
        while j < merged.len() && muls < 2 {
            let kind = match &merged[j].1 {
                Some(Shaped::Map { map }) => Some(map.kind),
                _ => None,
            };
            match kind {
                Some(MapKind::Reduce | MapKind::Add | MapKind::Unary | MapKind::Copy) => {}
                Some(MapKind::Mul) => muls += 1,
                _ => break,
            }
            group.time += merged[j].0.time;
            j += 1;
        }
        if muls == 2 {
            group.label = "rmsnorm (pow, mean, add, rsqrt, mul, mul)".into();
            group.shaped_as = Some(format!("rmsnorm {rows}×{cols}"));
            group.signature = Some(Signature::Norm { rows, cols });
            out.push(group);
            i = j;
        } else {
            out.push(item.clone());
            i += 1;
        }
    }
    out
}

/// One model operator: predicted beside measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JoinRow {
    /// Model operator (`q_proj`).
    pub name: &'static str,
    /// Operator type (`gemm`).
    pub kind: OpKind,
    /// Executions per forward pass.
    pub count: u64,
    /// Roofline time per forward pass (one execution × count), seconds.
    pub predicted: Seconds,
    /// Launch overhead per forward pass (one launch per execution × count), seconds: a
    /// framework operator pays its dispatch even when its work takes no time.
    pub launch: Seconds,
    /// Measured time per forward pass (matched events / profiler steps), seconds; `None` when
    /// nothing matched.
    pub measured: Option<Seconds>,
    /// measured / predicted (> 1: slower than the roofline).
    pub ratio: Option<f64>,
    /// Profiled operators matched to it.
    pub events: u64,
    /// Profiled operators expected: count × steps (`0` when the operator has no signature).
    pub expected_events: u64,
}

/// Profiled operators the model has nothing like, by name and shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unmatched {
    /// Operator or kernel name (`aten::add`).
    pub name: String,
    /// What our cost model took it for, if costed.
    pub shaped_as: Option<String>,
    /// Occurrences.
    pub count: u64,
    /// Their time per forward pass, seconds.
    pub time: Seconds,
}

/// A stage's prediction joined to a profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Join {
    /// The stage predicted.
    pub stage: Stage,
    /// Forward passes in the profile; measured times are divided by it.
    pub steps: u64,
    /// One row per model operator, in forward order.
    pub rows: Vec<JoinRow>,
    /// Σ predicted, seconds per forward pass.
    pub predicted_total: Seconds,
    /// Σ predicted of the rows that have a measurement, seconds.
    pub predicted_matched: Seconds,
    /// Σ measured of matched rows, seconds per forward pass.
    pub measured_matched: Seconds,
    /// Costed operators the model has nothing like, largest time first.
    pub unmatched: Vec<Unmatched>,
    /// Their time per forward pass, seconds.
    pub unmatched_time: Seconds,
    /// Time per forward pass in operators with no cost (views, `to`, Python), seconds.
    pub uncosted_time: Seconds,
    /// The profile's whole time per forward pass, seconds.
    pub profile_time: Seconds,
    /// What a reader must know: precision differs, shapes did not match, counts differ.
    pub notes: Vec<String>,
}

fn group_unmatched(items: &[&Item], steps: f64) -> Vec<Unmatched> {
    let mut by: Vec<Unmatched> = Vec::new();
    for it in items {
        match by
            .iter_mut()
            .find(|u| u.name == it.label && u.shaped_as == it.shaped_as)
        {
            Some(u) => {
                u.count += 1;
                u.time += it.time / steps;
            }
            None => by.push(Unmatched {
                name: it.label.clone(),
                shaped_as: it.shaped_as.clone(),
                count: 1,
                time: it.time / steps,
            }),
        }
    }
    by.sort_by(|a, b| b.time.get().total_cmp(&a.time.get()));
    by
}

/// Joins `profile` to the operators of `analysis`'s graph, by signature and forward order (see
/// the module docs).
pub fn join(analysis: &StageAnalysis, profile: &Profile) -> Join {
    let graph = &analysis.graph;
    let tokens = analysis.workload.tokens();
    let steps = profile.steps.max(1);
    let stepsf = steps as f64;
    // Forward order: the prologue, then each block's nodes (those whose span holds it), then
    // the epilogue.
    let all = 0..graph.nodes().len();
    let span = |i: usize| graph.nodes()[i].span();
    let mut forward: Vec<usize> = all.clone().filter(|&i| span(i) == Span::Prologue).collect();
    for b in 0..graph.layers {
        forward.extend(all.clone().filter(
            |&i| matches!(span(i), Span::Blocks { first, last } if first <= b && b <= last),
        ));
    }
    forward.extend(all.clone().filter(|&i| span(i) == Span::Epilogue));
    let sigs: Vec<Option<Signature>> = graph
        .nodes()
        .iter()
        .map(|n| node_signature(n.role, n.op(), tokens))
        .collect();
    let mut expected: HashMap<Signature, Vec<usize>> = HashMap::new();
    for &i in &forward {
        if let Some(s) = sigs[i] {
            expected.entry(s).or_default().push(i);
        }
    }

    let items = items(&profile.kernels);
    let mut seen: HashMap<Signature, usize> = HashMap::new();
    let mut measured = vec![Seconds::ZERO; graph.nodes().len()];
    let mut events = vec![0u64; graph.nodes().len()];
    let mut unmatched: Vec<&Item> = Vec::new();
    let mut precisions: Vec<Precision> = Vec::new();
    for it in &items {
        match it.signature.and_then(|s| expected.get(&s).map(|e| (s, e))) {
            Some((s, list)) => {
                let n = seen.entry(s).or_insert(0);
                let node = list[*n % list.len()];
                *n += 1;
                measured[node] += it.time;
                events[node] += 1;
                if let Some(p) = it.precision {
                    if !precisions.contains(&p) {
                        precisions.push(p);
                    }
                }
            }
            None => unmatched.push(it),
        }
    }

    let mut rows = Vec::with_capacity(graph.nodes().len());
    let mut notes = Vec::new();
    for (i, node) in graph.nodes().iter().enumerate() {
        let Some(row) = analysis.rows.get(i) else {
            continue;
        };
        let predicted = row.point().time * row.count as f64;
        let got = (events[i] > 0).then(|| measured[i] / stepsf);
        let expected_events = if sigs[i].is_some() {
            row.count * steps
        } else {
            0
        };
        if events[i] > 0 && events[i] != expected_events {
            notes.push(format!(
                "{}: {} profiled operators matched, {} expected ({} per pass × {} passes)",
                node.name, events[i], expected_events, row.count, steps
            ));
        }
        rows.push(JoinRow {
            name: node.name,
            kind: node.kind(),
            count: row.count,
            predicted,
            launch: row.launch_overhead * row.count as f64,
            measured: got,
            ratio: got
                .filter(|_| predicted.get() > 0.0)
                .map(|m| m.get() / predicted.get()),
            events: events[i],
            expected_events,
        });
    }
    let act = analysis.workload.precisions.act;
    if let Some(p) = precisions.iter().find(|&&p| p != act) {
        notes.push(format!(
            "the profile ran in {p} but the prediction is for {act} activations: pass --precision {p}"
        ));
    }
    let gemm_matched = rows.iter().any(|r| r.kind == OpKind::Gemm && r.events > 0);
    if !gemm_matched {
        let mut ms: Vec<u64> = items.iter().filter_map(|i| i.gemm_m).collect();
        ms.sort_unstable();
        ms.dedup();
        if ms.is_empty() {
            notes.push(
                "no profiled operator has GEMM shapes: was the trace recorded with \
                 record_shapes=True?"
                    .into(),
            );
        } else {
            notes.push(format!(
                "no profiled GEMM matched this {} stage's shapes (m = {tokens} tokens): the \
                 profile's GEMMs have m = {}; set --batch, --seq-len and --stage to the profiled run's",
                analysis.workload.stage,
                ms.iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    let unmatched_time: Seconds = unmatched.iter().map(|i| i.time).sum::<Seconds>() / stepsf;
    let uncosted_time: Seconds = profile.uncosted.iter().map(|u| u.time).sum::<Seconds>() / stepsf;
    Join {
        stage: analysis.workload.stage,
        steps,
        predicted_total: rows.iter().map(|r| r.predicted).sum(),
        predicted_matched: rows
            .iter()
            .filter(|r| r.measured.is_some())
            .map(|r| r.predicted)
            .sum(),
        measured_matched: rows.iter().filter_map(|r| r.measured).sum(),
        rows,
        unmatched: group_unmatched(&unmatched, stepsf),
        unmatched_time,
        uncosted_time,
        profile_time: profile.total_time / stepsf,
        notes,
    }
}

#[cfg(test)]
#[path = "join_tests.rs"]
mod tests;
