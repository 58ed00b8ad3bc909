//! Worked derivations: every number of a roofline row, as a person would derive it by hand.
//!
//! A [`Derivation`] is data, not text: the values it starts from ([`Given`]), then one
//! [`Step`] per quantity with its formula, the values put into it, the result and its unit, and
//! where the formula or the figure comes from (the operator's cost formula in
//! `docs/cost-model.md`, the chip's datasheet as cited in the catalog, or Williams, Waterman and
//! Patterson 2009 for the roofline). `roofline-report` renders it as text, JSON or HTML.
//!
//! The results are the cost model's own values ([`Op::cost`], [`crate::roofline::Roof::evaluate`]).
//! An operator's cost steps are not restated here: its cost formula, written once in
//! [`crate::ops`] over [`crate::formula::Arith`], is recorded ([`Op::cost_terms`] on a
//! [`crate::formula::Tape`]) and printed in symbols and with its values put in, so the text is
//! the formula that computed the number and a reader can redo each line with a calculator.
//!
//! - `number`: how numbers are written ([`plain_number`], [`exact_number`]).
//! - `cost`: an operator's givens and cost steps, from its recorded formula.
//! - `roofline`: from FLOPs and bytes to bound and time on the chip.
//! - `origin`: where a model's node takes its shapes from, and the setting.
//! - `node`: a node's executions per forward pass and share of the stage.
//! - `collective`: a collective's α–β derivation ([`explain_collective`]).
//!
//! ```
//! use roofline_core::explain::{explain_op, Outcome};
//! use roofline_core::ops::{Gemm, Op};
//! use roofline_core::precision::Precision;
//! # use roofline_core::cited::Cited;
//! # use roofline_core::device::{Device, MemoryKind, MemoryLevel};
//! # use roofline_core::units::{Bytes, BytesPerSec, FlopPerSec, Seconds};
//! # let device = Device { id: "x".into(), name: "X".into(), vendor: "V".into(),
//! #   peaks: vec![(Precision::Bf16, Cited::new(FlopPerSec(989.5e12), "datasheet"))],
//! #   memory: vec![MemoryLevel { kind: MemoryKind::Main, name: "HBM3".into(),
//! #     bandwidth: Some(Cited::new(BytesPerSec(3.35e12), "datasheet")), capacity: None }],
//! #   sm_count: None, shared_memory_per_sm: None,
//! #   launch_overhead: Cited::new(Seconds(5e-6), "typical"),
//! #   launch_model: roofline_core::device::LaunchModel::PerKernel, interconnect: None,
//! #   host_link: None, platform: None, notes: vec![], efficiency: None };
//! let op = Op::Gemm(Gemm::uniform(1, 4096, 4096, Precision::Bf16));
//! let d = explain_op("gemm", &op, &device, Precision::Bf16)?;
//! assert_eq!(d.steps[0].formula, "2·m·n·k");
//! assert_eq!(d.steps[0].substituted, "2·1·4096·4096");
//! assert_eq!(d.steps[0].outcome, Outcome::Quantity { value: 33_554_432.0, unit: "FLOP" });
//! # Ok::<(), roofline_core::device::DeviceError>(())
//! ```

mod collective;
mod cost;
mod node;
mod number;
mod origin;
mod roofline;

pub use collective::{explain_collective, CollectiveDerivation};
pub use number::{exact_number, plain_number};

use crate::analysis::{OpRow, StageAnalysis};
use crate::device::{Device, DeviceError};
use crate::model::Transformer;
use crate::one_op::{evaluate_ops, RidgeDistance};
use crate::ops::{Op, OpKind};
use crate::precision::Precision;
use crate::units::BytesPerSec;
use serde::Serialize;
use std::fmt;

/// The roofline model's source, cited by every roofline step.
pub const ROOFLINE_SOURCE: &str = "Williams, Waterman and Patterson, \"Roofline: an insightful \
visual performance model for multicore architectures\", CACM 52(4):65-76, 2009 \
(docs/cost-model.md §5)";

/// A value the derivation starts from: an operator field or a model dimension.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Given {
    /// Its symbol in the formulas (`m`, `a`).
    pub symbol: String,
    /// Its value, in `unit`.
    pub value: f64,
    /// Unit (`B` for bytes per element; empty for a count).
    pub unit: &'static str,
    /// What it is (`rows of A and C (tokens)`).
    pub meaning: String,
    /// Where it comes from in a model (`T = B·s = 1·1`), when the operator is a model's node.
    pub origin: Option<String>,
}

/// The result of a step: a quantity with its unit, or a verdict in words.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// A number in base units (FLOP, B, FLOP/B, FLOP/s, B/s, s; `×` for a ratio, `%` for a
    /// share, empty for a count).
    Quantity {
        /// The value.
        value: f64,
        /// Its unit.
        unit: &'static str,
    },
    /// A conclusion (`memory-bound`).
    Verdict {
        /// The conclusion.
        text: String,
    },
}

/// One line of a worked derivation.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Step {
    /// What is computed (`FLOPs`, `ridge point`).
    pub quantity: String,
    /// Its symbol (`F`, `R`).
    pub symbol: String,
    /// The formula in symbols (`2·m·n·k`).
    pub formula: String,
    /// The formula with the values put in (`2·1·4096·4096`).
    pub substituted: String,
    /// The result.
    pub outcome: Outcome,
    /// Where the formula or the figure comes from.
    pub source: String,
}

/// A worked derivation of one operator on one chip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Derivation {
    /// Operator name (`q_proj`).
    pub name: String,
    /// Operator type (`gemm`).
    pub kind: OpKind,
    /// Chip name and id.
    pub device: String,
    /// The setting, one line each (model, stage, workload), empty for a lone operator.
    pub context: Vec<String>,
    /// Values the derivation starts from.
    pub given: Vec<Given>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The row the steps arrive at (one execution).
    pub row: OpRow,
    /// Main-memory bandwidth used, B/s.
    pub bandwidth: BytesPerSec,
    /// How far from the ridge the operator sits.
    pub distance: RidgeDistance,
}

impl Derivation {
    /// The step computing `symbol`, if any.
    pub fn step(&self, symbol: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.symbol == symbol)
    }
}

/// Why an operator of an analysis cannot be explained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExplainError {
    /// No operator of that name in the stage's graph.
    UnknownOperator {
        /// The name asked for.
        name: String,
        /// The names the graph has, in forward order.
        available: Vec<&'static str>,
    },
    /// The chip lacks a figure.
    Device(DeviceError),
}

impl fmt::Display for ExplainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExplainError::UnknownOperator { name, .. } => {
                write!(f, "no operator `{name}` in this model's graph")
            }
            ExplainError::Device(e) => e.fmt(f),
        }
    }
}
impl std::error::Error for ExplainError {}
impl From<DeviceError> for ExplainError {
    fn from(e: DeviceError) -> Self {
        ExplainError::Device(e)
    }
}

/// A step whose outcome is a quantity.
fn qty(
    quantity: &str,
    symbol: &str,
    formula: impl Into<String>,
    substituted: impl Into<String>,
    value: f64,
    unit: &'static str,
    source: impl Into<String>,
) -> Step {
    Step {
        quantity: quantity.into(),
        symbol: symbol.into(),
        formula: formula.into(),
        substituted: substituted.into(),
        outcome: Outcome::Quantity { value, unit },
        source: source.into(),
    }
}

/// The derivation of `op`, whose analysis row is `row`: its cost steps, then the roofline steps.
fn derive(
    name: &str,
    op: &Op,
    row: OpRow,
    device: &Device,
    act: Precision,
) -> Result<Derivation, DeviceError> {
    let bw = device.bandwidth()?;
    let (given, mut steps) = cost::cost_steps(op);
    steps.extend(roofline::roofline_steps(&row, device, act, bw));
    Ok(Derivation {
        name: name.to_string(),
        kind: op.kind(),
        device: format!("{} ({})", device.name, device.id),
        context: Vec::new(),
        given,
        steps,
        distance: RidgeDistance::of(&row.point()),
        row,
        bandwidth: bw,
    })
}

/// The worked derivation of one operator `op`, named `name`, on `device`, with `act` the
/// fallback precision for vector work on chips without an fp32 peak.
///
/// Steps: the operator's FLOPs `F`, bytes read `D_r` and written `D_w` (its cost formula), bytes
/// moved `D`, arithmetic intensity `I`, the peak `P` and bandwidth `W` with their datasheet
/// sources, the ridge point `R`, the bound, attainable performance `A`, compute, memory and
/// total time, and the distance from the ridge (×).
///
/// # Errors
/// A [`DeviceError`] when the chip has no peak for the operator's precision or no bandwidth.
pub fn explain_op(
    name: &str,
    op: &Op,
    device: &Device,
    act: Precision,
) -> Result<Derivation, DeviceError> {
    let row = evaluate_ops(&[("op", op.clone())], device, act)?
        .pop()
        .ok_or(DeviceError::NoBandwidth {
            device: device.id.clone(),
        })?;
    derive(name, op, row, device, act)
}

/// The worked derivation of the operator `name` of `stage` (an analysis of `model` on
/// `device`): the operator's own steps ([`explain_op`]), its shapes traced back to the model and
/// workload, then its count per forward pass, its time per forward pass and its share of the
/// stage's roofline time.
///
/// # Errors
/// [`ExplainError::UnknownOperator`] (with the names the graph has) when no node is called
/// `name`; [`ExplainError::Device`] when the chip lacks a figure.
pub fn explain_node(
    model: &Transformer,
    stage: &StageAnalysis,
    device: &Device,
    name: &str,
) -> Result<Derivation, ExplainError> {
    let w = &stage.workload;
    let graph = &stage.graph;
    let node = graph
        .find(name)
        .ok_or_else(|| ExplainError::UnknownOperator {
            name: name.to_string(),
            available: graph.nodes().iter().map(|n| n.name).collect(),
        })?;
    let row = stage
        .rows
        .iter()
        .find(|r| r.name == name)
        .copied()
        .ok_or_else(|| ExplainError::UnknownOperator {
            name: name.to_string(),
            available: stage.rows.iter().map(|r| r.name).collect(),
        })?;
    let act = w.precisions.act;
    let mut d = derive(name, node.op(), row, device, act)?;
    for g in &mut d.given {
        g.origin = origin::origin(node.role, d.kind, &g.symbol, model, w);
    }
    d.context = origin::context(model, w);
    d.steps.extend(node::pass_steps(node.span(), &row, stage));
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use crate::device::tests::h100_sxm;
    use crate::model::tests::llama2_7b;
    use crate::ops::{FlashAttention, Gemm};
    use crate::workload::{Precisions, Stage, Workload};

    fn value(d: &Derivation, symbol: &str) -> Result<f64, String> {
        match &d.step(symbol).ok_or(format!("no step {symbol}"))?.outcome {
            Outcome::Quantity { value, .. } => Ok(*value),
            Outcome::Verdict { text } => Err(format!("{symbol} is a verdict: {text}")),
        }
    }

    #[test]
    fn gemv_on_h100_derivation_by_hand() -> Result<(), Box<dyn std::error::Error>> {
        // 1×4096×4096 bf16: F = 2·4096² = 33,554,432; D = 2·(4096 + 4096² + 4096) = 33,570,816;
        // I = 0.99951; R = 989.5e12 / 3.35e12 = 295.37; memory-bound; t = D / 3.35e12.
        let op = Op::Gemm(Gemm::uniform(1, 4096, 4096, Precision::Bf16));
        let d = explain_op("gemm", &op, &h100_sxm(), Precision::Bf16)?;
        assert_eq!(d.steps[0].substituted, "2·1·4096·4096");
        assert_eq!(d.steps[1].substituted, "1·4096·2 + 4096·4096·2");
        assert_eq!(value(&d, "F")?, 33_554_432.0);
        assert_eq!(value(&d, "D")?, 33_570_816.0);
        assert!((value(&d, "I")? - 33_554_432.0 / 33_570_816.0).abs() < 1e-12);
        assert!((value(&d, "R")? - 989.5 / 3.35).abs() < 1e-9);
        assert_eq!(
            d.step("R").ok_or("expected a value, got None")?.substituted,
            "989.5e12 / 3.35e12"
        );
        assert_eq!(
            d.step("bound").ok_or("expected a value, got None")?.outcome,
            Outcome::Verdict {
                text: "memory-bound".into()
            }
        );
        assert!((value(&d, "t")? - 33_570_816.0 / 3.35e12).abs() < 1e-18);
        let ratio = (989.5 / 3.35) / (33_554_432.0 / 33_570_816.0);
        let dist = d.steps.last().ok_or("expected a value, got None")?;
        assert!(dist.quantity.starts_with("distance below the ridge"));
        match dist.outcome {
            Outcome::Quantity { value, unit } => {
                assert_eq!(unit, "×");
                assert!((value - ratio).abs() < 1e-9);
            }
            _ => panic!("distance is a number"),
        }
        assert!(d
            .step("P")
            .ok_or("expected a value, got None")?
            .source
            .contains("datasheet"));
        assert!(d
            .step("I")
            .ok_or("expected a value, got None")?
            .source
            .contains("Williams"));
        Ok(())
    }

    #[test]
    fn fused_causal_attention_counts_pairs() -> Result<(), Box<dyn std::error::Error>> {
        let op = Op::FlashAttention(FlashAttention {
            batch: 1,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            q_len: 4,
            kv_len: 4,
            causal: true,
            causal_count: crate::ops::CausalCount::Exact,
            window: None,
            v_head_dim: None,
            kv_shared: false,
            block_q: None,
            act: Precision::Bf16,
            kv: Precision::Bf16,
        });
        let d = explain_op("attention", &op, &h100_sxm(), Precision::Bf16)?;
        // 4 queries, causal: 1 + 2 + 3 + 4 = 10 pairs; F = 32·10·(4·128 + 7).
        assert_eq!(value(&d, "P")?, 10.0);
        assert_eq!(value(&d, "F")?, 32.0 * 10.0 * 519.0);
        Ok(())
    }

    #[test]
    fn decode_q_proj_traces_shapes_to_the_model_and_counts_blocks(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let m = llama2_7b();
        let w = Workload {
            stage: Stage::Decode,
            batch: 1,
            seq_len: 2048,
            context: 2048,
            cached: 0,
            precisions: Precisions::uniform(Precision::Bf16),
            flash_attention: false,
            logits: crate::workload::Logits::Last,
        };
        let dev = h100_sxm();
        let s = analyze(&m, &w, &dev, crate::memory::Reserve::DEFAULT)?;
        let d = explain_node(&m, &s, &dev, "q_proj")?;
        let origin = |sym: &str| {
            d.given
                .iter()
                .find(|g| g.symbol == sym)
                .and_then(|g| g.origin.clone())
                // None fails the assertions below ("" is no expected origin).
                .unwrap_or_default()
        };
        assert_eq!(origin("m"), "T = B·s = 1·1 (tokens in this pass)");
        assert_eq!(origin("n"), "h·e = 32·128");
        assert_eq!(value(&d, "n")?, 32.0);
        // 32 blocks × 33,570,816 B / 3.35e12 B/s.
        assert!((value(&d, "t_pass")? - 32.0 * 33_570_816.0 / 3.35e12).abs() < 1e-15);
        let e = explain_node(&m, &s, &dev, "q_prj").unwrap_err();
        match e {
            ExplainError::UnknownOperator { available, .. } => {
                assert!(available.contains(&"q_proj"))
            }
            other => panic!("{other}"),
        }
        Ok(())
    }
}
