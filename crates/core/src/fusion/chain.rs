//! A user-named chain of operators (`rmsnorm,linear,silu,linear`) as an operator graph.
//!
//! Widths: the chain starts `hidden` wide; each `linear` maps hidden → intermediate or
//! intermediate → hidden, alternating; elementwise and norm operators keep the width.

use crate::graph::{OpGraph, Role, Span, TensorRole};
use crate::ops::{
    Elementwise, Gemm, LayerNorm, Op, RmsNorm, GELU_FLOPS_PER_ELEMENT, RELU_FLOPS_PER_ELEMENT,
    SILU_FLOPS_PER_ELEMENT,
};
use crate::precision::Precision;
use serde::Serialize;
use std::fmt;

/// A chain to fuse.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChainSpec {
    /// Operator names in order: rmsnorm, layernorm, linear, silu, gelu, relu.
    pub ops: Vec<String>,
    /// Tokens T (rows).
    pub tokens: u64,
    /// Hidden size d.
    pub hidden: u64,
    /// Intermediate size f.
    pub intermediate: u64,
    /// Precision of every tensor (b bytes per element).
    pub precision: Precision,
}

/// A chain that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainError(pub String);

impl fmt::Display for ChainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ChainError {}

/// Leaks nothing: node and tensor names come from this fixed table.
const NODE_NAMES: [&str; 16] = [
    "op1", "op2", "op3", "op4", "op5", "op6", "op7", "op8", "op9", "op10", "op11", "op12", "op13",
    "op14", "op15", "op16",
];
const TENSOR_NAMES: [&str; 17] = [
    "x", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10", "t11", "t12", "t13", "t14",
    "t15", "t16",
];

/// Largest `--hidden` or `--intermediate`: the largest dimension a model config may give.
pub const MAX_WIDTH: u64 = 1 << 24;

/// The chain as a one-block graph, and the widest tensor between two of its operators (the
/// intermediate a fused kernel must hold on chip).
///
/// # Errors
/// An empty chain, more than 16 operators, an unknown operator name, a zero size, or a size
/// above its bound ([`crate::workload::MAX_TOKENS`] tokens, `MAX_WIDTH` elements wide).
pub fn chain_graph(spec: &ChainSpec) -> Result<(OpGraph, Vec<String>, u64), ChainError> {
    if spec.ops.is_empty() {
        return Err(ChainError(
            "`--chain` is empty: name operators, e.g. rmsnorm,linear,silu,linear".into(),
        ));
    }
    if spec.ops.len() > NODE_NAMES.len() {
        return Err(ChainError(format!(
            "`--chain` has {} operators; at most 16",
            spec.ops.len()
        )));
    }
    for (flag, v) in [
        ("--tokens", spec.tokens),
        ("--hidden", spec.hidden),
        ("--intermediate", spec.intermediate),
    ] {
        if v == 0 {
            return Err(ChainError(format!("`{flag}` must be at least 1")));
        }
    }
    // Each product of two sizes below (tokens × width, width × width) must be exact in u64 and
    // in f64: the largest model dimension a config may give (2^24) and the longest sequence of
    // a workload (2^26 tokens) keep every product under 2^50.
    for (flag, v, max) in [
        ("--tokens", spec.tokens, crate::workload::MAX_TOKENS),
        ("--hidden", spec.hidden, MAX_WIDTH),
        ("--intermediate", spec.intermediate, MAX_WIDTH),
    ] {
        if v > max {
            return Err(ChainError(format!(
                "`{flag}` {v} is above the largest accepted, {max}"
            )));
        }
    }
    let p = spec.precision;
    let (t, d, f) = (spec.tokens, spec.hidden, spec.intermediate);
    let mut g = OpGraph::new(1);
    let mut width = d;
    let mut x = g.tensor(TENSOR_NAMES[0], (t * width) as f64, p, TensorRole::Input);
    let mut labels = Vec::new();
    let mut widest_inner = 0;
    let mut linears = 0;
    for (i, name) in spec.ops.iter().enumerate() {
        let lower = name.trim().to_ascii_lowercase();
        let (op, out_width, weight_elems) = match lower.as_str() {
            "rmsnorm" => (
                Op::RmsNorm(RmsNorm { rows: t, cols: width, precision: p, weight: p }),
                width,
                width,
            ),
            "layernorm" => (
                Op::LayerNorm(LayerNorm { rows: t, cols: width, precision: p, weight: p }),
                width,
                2 * width,
            ),
            "linear" => {
                linears += 1;
                let out = if width == d { f } else { d };
                (Op::Gemm(Gemm::uniform(t, out, width, p)), out, width * out)
            }
            "silu" | "gelu" | "relu" => {
                let per = match lower.as_str() {
                    "silu" => SILU_FLOPS_PER_ELEMENT,
                    "gelu" => GELU_FLOPS_PER_ELEMENT,
                    _ => RELU_FLOPS_PER_ELEMENT,
                };
                (
                    Op::Elementwise(Elementwise { elements: t * width, inputs: 1, flops_per_element: per, precision: p }),
                    width,
                    0,
                )
            }
            other => {
                return Err(ChainError(format!(
                    "unknown operator `{other}` in `--chain`: use rmsnorm, layernorm, linear, silu, gelu, relu"
                )))
            }
        };
        let mut inputs = vec![x];
        if weight_elems > 0 {
            inputs.push(g.tensor("weight", weight_elems as f64, p, TensorRole::Weight));
        }
        let y = g.tensor(
            TENSOR_NAMES[i + 1],
            (t * out_width) as f64,
            p,
            TensorRole::Activation,
        );
        g.node(
            NODE_NAMES[i],
            Role::Operator,
            Span::all_blocks(1),
            op,
            &inputs,
            &[y],
        );
        if i + 1 < spec.ops.len() {
            widest_inner = widest_inner.max(out_width);
        }
        labels.push(if lower == "linear" {
            format!("linear{linears}")
        } else {
            lower
        });
        width = out_width;
        x = y;
    }
    Ok((g, labels, widest_inner))
}
