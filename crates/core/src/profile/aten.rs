//! PyTorch operators (`aten::…`) into our cost model, by name and input shapes: the FLOPs and
//! bytes of a profiled operator come from the same formulas as the model's graph
//! (`docs/cost-model.md`), not from the profiler.
//!
//! | operator | taken for |
//! |---|---|
//! | `mm` `[m,k]·[k,n]`, `addmm` (bias, A, B), `linear` (x `[…,k]`, W `[n,k]`, bias), `matmul` with a 2-D right operand | [`Gemm`] (m = rows of x) |
//! | `bmm` `[b,m,k]·[b,k,n]`, `baddbmm`, `matmul` of two ≥3-D tensors | [`BatchedMatmul`] (batch = broadcast leading dims) |
//! | `softmax`, `_softmax`, `log_softmax`, `_log_softmax` | [`Softmax`] over the last dim, no scale or mask |
//! | `scaled_dot_product_attention` and its flash/efficient/cuDNN/CPU variants, q `[B,h,s,e]`, k `[B,g,L,e]` | [`FlashAttention`] (causal when the recorded `is_causal` is true) |
//! | `rms_norm`, `layer_norm`, `native_layer_norm` | [`RmsNorm`], [`LayerNorm`] over the last dim |
//! | `embedding` (W `[V,d]`, ids) | [`Embedding`] |
//! | `add` `sub` `mul` `div` `maximum` `minimum` (and in-place `_`) | map, 1 FLOP per output element, broadcasting |
//! | `silu` (3), `gelu` (9), `relu` (1), `sigmoid` (3), `tanh` `neg` `exp` `rsqrt` `sqrt` `reciprocal` `abs` `sin` `cos` `pow` (1) | map, FLOPs per element as named in [`crate::ops`] or written here |
//! | `mean`, `sum`, `amax` | reduction over the last dim: 1 FLOP per input element |
//! | `copy_` (dst, src), `_to_copy`, `clone`, `cat` | copy: 0 FLOP, every element read and written |
//!
//! Anything else (views, `to` without a copy, `contiguous` of a contiguous tensor, fills,
//! indexing) is not costed: its time is reported, not placed on a roofline. Bytes of a map are
//! what its inputs and output hold: a broadcast input (`[S,1]`) is read at its own size.

use super::ArgShape;
use crate::ops::{
    BatchedMatmul, Compute, Cost, Embedding, FlashAttention, Gemm, LayerNorm, Op, RmsNorm, Softmax,
    ADD_FLOPS_PER_ELEMENT, GELU_FLOPS_PER_ELEMENT, MUL_FLOPS_PER_ELEMENT, RELU_FLOPS_PER_ELEMENT,
    SILU_FLOPS_PER_ELEMENT,
};
use crate::precision::Precision;
use serde::Serialize;

/// Sigmoid `1 / (1 + e^-x)`: exp (1), add 1 (1), divide (1) = 3, as SiLU without its multiply
/// folded in.
pub const SIGMOID_FLOPS_PER_ELEMENT: f64 = 3.0;
/// A unary map counted as one operation: `neg`, `exp`, `rsqrt`, `sqrt`, `tanh`, `reciprocal`,
/// `abs`, `sin`, `cos`, and `pow` by a scalar (Llama's RMSNorm squares: one multiply). A
/// transcendental counts as 1, as in [`crate::ops`].
pub const UNARY_FLOPS_PER_ELEMENT: f64 = 1.0;
/// A reduction (`mean`, `sum`, `amax`): one add or compare per input element.
pub const REDUCE_FLOPS_PER_INPUT_ELEMENT: f64 = 1.0;

/// The kind of a map, reduction or copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MapKind {
    /// `a + b` (and `add_`).
    Add,
    /// `a * b`.
    Mul,
    /// `a - b`, `a / b`, `maximum`, `minimum`.
    OtherBinary,
    /// An activation function: `silu`, `gelu`, `relu`, `sigmoid`.
    Activation,
    /// `pow` by a scalar.
    Pow,
    /// Another unary map: `rsqrt`, `exp`, `neg`, …
    Unary,
    /// `mean`, `sum`, `amax` over the last dim.
    Reduce,
    /// A copy: `copy_`, `_to_copy`, `clone`, `cat`.
    Copy,
}

/// An elementwise map, a reduction or a copy, with its output shape as rows × cols (cols the
/// last dimension).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MapOp {
    /// What it computes.
    pub kind: MapKind,
    /// The operator name without `aten::` and a trailing `_` (`silu`).
    pub func: String,
    /// Output rows: the product of every dimension but the last.
    pub rows: u64,
    /// Output columns: the last dimension.
    pub cols: u64,
    /// Whether it has two or more tensor inputs, all of the same shape (a residual add, SwiGLU's
    /// `act(gate) * up`), rather than a broadcast (`x * rsqrt(var)`) or a scalar.
    pub same_shape_inputs: bool,
    /// Dimensions of the output.
    pub dims: Vec<u64>,
}

/// What our cost model takes a profiled operator for.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "as", rename_all = "snake_case")]
pub enum Shaped {
    /// One of the cost model's operators.
    Op {
        /// The operator.
        op: Op,
    },
    /// A map, reduction or copy.
    Map {
        /// The map.
        map: MapOp,
    },
}

/// A profiled operator costed by shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapedOp {
    /// What it was taken for.
    pub shaped: Shaped,
    /// FLOPs, bytes read, bytes written.
    pub cost: Cost,
    /// The units it runs on (which peak applies).
    pub compute: Compute,
    /// The precision of its (first) input.
    pub precision: Precision,
    /// One line: `gemm m=64 n=256 k=256 fp32`.
    pub description: String,
}

/// A PyTorch type name (`Input type`) as a precision: `float`, `double`, `c10::Half`,
/// `c10::BFloat16`, `c10::Float8_e4m3fn`/`e5m2`, `signed char`. Integer index types, `bool`,
/// `Scalar` and the empty string (an absent argument) are `None`.
pub fn dtype(s: &str) -> Option<Precision> {
    let t = s.trim().trim_start_matches("c10::");
    Some(match t {
        "float" | "Float" | "float32" => Precision::Fp32,
        "double" | "Double" | "float64" => Precision::Fp64,
        "Half" | "half" | "float16" => Precision::Fp16,
        "BFloat16" | "bfloat16" => Precision::Bf16,
        "signed char" | "int8" | "Char" => Precision::Int8,
        _ if t.starts_with("Float8") || t.starts_with("float8") => Precision::Fp8,
        _ => return None,
    })
}

/// One tensor argument: its dims and precision.
struct Arg<'a> {
    dims: &'a [u64],
    p: Precision,
}

/// Most elements a tensor of a trace may have to be priced: 2^53, the largest count an f64
/// holds exactly (9·10^15 elements, 18 PB in bf16, far past any device). A shape beyond it
/// (a corrupt or hostile trace) leaves the operator unpriced rather than overflowing.
pub const MAX_ELEMENTS: u64 = 1 << 53;

/// The product of `d`, if it is at most [`MAX_ELEMENTS`].
fn checked_elems(d: &[u64]) -> Option<u64> {
    d.iter()
        .try_fold(1u64, |a, &x| a.checked_mul(x))
        .filter(|&e| e <= MAX_ELEMENTS)
}

/// The product of `d`, for a shape [`shaped_op`] has bounded (saturating, so it never panics).
fn elems(d: &[u64]) -> u64 {
    d.iter().fold(1u64, |a, &x| a.saturating_mul(x))
}

fn rows_cols(d: &[u64]) -> (u64, u64) {
    match d.split_last() {
        Some((last, rest)) => (elems(rest), *last),
        None => (1, 1),
    }
}

/// NumPy broadcasting of two shapes; `None` when they do not broadcast.
fn broadcast(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let y = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = match (x, y) {
            _ if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    checked_elems(&out).map(|_| out)
}

fn word(p: Precision) -> &'static str {
    p.name()
}

/// The `is_causal` flag of an SDPA call, from the recorded values, at the argument position
/// the operator's signature gives it.
fn causal_flag(name: &str, values: &[String]) -> bool {
    let at = match name {
        "scaled_dot_product_attention" => 5,
        "_scaled_dot_product_flash_attention" | "_scaled_dot_product_flash_attention_for_cpu" => 4,
        "_scaled_dot_product_efficient_attention" => 6,
        "_scaled_dot_product_cudnn_attention" => 7,
        _ => return false,
    };
    values
        .get(at)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// What our cost model takes the operator `name` (`aten::mm`) with argument `shapes`, `types`
/// and recorded scalar `values` for; `None` when it is not one we cost (see the module table)
/// or its shapes do not fit its signature (a matmul whose inner dimensions differ).
pub fn shaped_op(
    name: &str,
    shapes: &[ArgShape],
    types: &[String],
    values: &[String],
) -> Option<ShapedOp> {
    let base = name.strip_prefix("aten::")?;
    let func = base.strip_suffix('_').unwrap_or(base);
    let ty = |i: usize| types.get(i).and_then(|t| dtype(t));
    // Tensor arguments in order (list arguments and non-float ones left out).
    // A shape too large to price exactly leaves the operator unpriced.
    for s in shapes {
        match s {
            ArgShape::Tensor(d) => checked_elems(d).map(|_| ())?,
            ArgShape::List(l) => l.iter().try_for_each(|d| checked_elems(d).map(|_| ()))?,
        }
    }
    let tensors: Vec<Arg<'_>> = shapes
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((s.dims()?, ty(i)?)))
        .map(|(dims, p)| Arg { dims, p })
        .collect();
    let first = tensors.first();
    let gemm = |m: u64, n: u64, k: u64, bias: bool, a: Precision, b: Precision| {
        let g = Gemm {
            m,
            n,
            k,
            bias,
            b_scale: 0.0,
            a,
            b,
            c: a,
            compute: a,
        };
        let d = format!(
            "gemm m={m} n={n} k={k}{} {}",
            if bias { " +bias" } else { "" },
            word(a)
        );
        (Op::Gemm(g), d)
    };
    let bmm = |batch: u64, m: u64, n: u64, k: u64, a: Precision, b: Precision| {
        let o = BatchedMatmul {
            batch,
            shared: 1,
            m,
            n,
            k,
            a,
            b,
            c: a,
            compute: a,
        };
        (
            Op::BatchedMatmul(o),
            format!("bmm batch={batch} m={m} n={n} k={k} {}", word(a)),
        )
    };
    let model_op = |(op, description): (Op, String), precision: Precision| ShapedOp {
        cost: op.cost(),
        compute: op.compute(),
        shaped: Shaped::Op { op },
        precision,
        description,
    };

    match base {
        "mm" => {
            let (a, b) = (tensors.first()?, tensors.get(1)?);
            let (&[m, k], &[k2, n]) = (a.dims, b.dims) else {
                return None;
            };
            (k == k2).then(|| model_op(gemm(m, n, k, false, a.p, b.p), a.p))
        }
        "addmm" => {
            // addmm(bias, A, B): the bias is the first tensor.
            let (a, b) = (tensors.get(1)?, tensors.get(2)?);
            let (&[m, k], &[k2, n]) = (a.dims, b.dims) else {
                return None;
            };
            (k == k2).then(|| model_op(gemm(m, n, k, true, a.p, b.p), a.p))
        }
        "linear" => {
            let (x, w) = (tensors.first()?, tensors.get(1)?);
            let (&k, lead) = x.dims.split_last()?;
            let &[n, k2] = w.dims else { return None };
            let bias = tensors.get(2).is_some_and(|b| !b.dims.is_empty());
            (k == k2).then(|| model_op(gemm(elems(lead), n, k, bias, x.p, w.p), x.p))
        }
        "matmul" | "bmm" | "baddbmm" => {
            let (a, b) = if base == "baddbmm" {
                (tensors.get(1)?, tensors.get(2)?)
            } else {
                (tensors.first()?, tensors.get(1)?)
            };
            let (ra, rb) = (a.dims.len(), b.dims.len());
            if ra == 0 || rb == 0 {
                return None;
            }
            // A 1-D left operand is one row; a 1-D right operand one column.
            let (m, k) = if ra == 1 {
                (1, a.dims[0])
            } else {
                (a.dims[ra - 2], a.dims[ra - 1])
            };
            let (k2, n) = if rb == 1 {
                (b.dims[0], 1)
            } else {
                (b.dims[rb - 2], b.dims[rb - 1])
            };
            if k != k2 {
                return None;
            }
            if rb <= 2 && base == "matmul" {
                // x[…, m, k] · W[k, n]: one GEMM over every leading row.
                let rows = if ra == 1 { 1 } else { elems(&a.dims[..ra - 1]) };
                return Some(model_op(gemm(rows, n, k, false, a.p, b.p), a.p));
            }
            let lead_a = if ra > 2 { &a.dims[..ra - 2] } else { &[][..] };
            let lead_b = if rb > 2 { &b.dims[..rb - 2] } else { &[][..] };
            let batch = elems(&broadcast(lead_a, lead_b)?);
            Some(model_op(bmm(batch, m, n, k, a.p, b.p), a.p))
        }
        "softmax" | "_softmax" | "log_softmax" | "_log_softmax" => {
            let x = first?;
            let (rows, cols) = rows_cols(x.dims);
            let op = Op::Softmax(Softmax {
                rows,
                cols,
                scale_mask: false,
                precision: x.p,
            });
            Some(model_op(
                (op, format!("softmax {rows}×{cols} {}", word(x.p))),
                x.p,
            ))
        }
        "scaled_dot_product_attention"
        | "_scaled_dot_product_flash_attention"
        | "_scaled_dot_product_flash_attention_for_cpu"
        | "_scaled_dot_product_efficient_attention"
        | "_scaled_dot_product_cudnn_attention" => {
            let (q, k) = (tensors.first()?, tensors.get(1)?);
            let (&[b, h, s, e], &[b2, g, l, e2]) = (q.dims, k.dims) else {
                return None;
            };
            if b != b2 || e != e2 || g == 0 {
                return None;
            }
            let causal = causal_flag(base, values);
            let op = Op::FlashAttention(FlashAttention {
                batch: b,
                heads: h,
                kv_heads: g,
                head_dim: e,
                q_len: s,
                kv_len: l,
                causal,
                causal_count: crate::ops::CausalCount::Exact,
                window: None,
                v_head_dim: None,
                kv_shared: false,
                block_q: None,
                act: q.p,
                kv: k.p,
            });
            let d = format!(
                "attention b={b} h={h} g={g} e={e} q={s} kv={l}{} {}",
                if causal { " causal" } else { "" },
                word(q.p)
            );
            Some(model_op((op, d), q.p))
        }
        "rms_norm" | "_fused_rms_norm" | "layer_norm" | "native_layer_norm" => {
            let x = first?;
            let (rows, cols) = rows_cols(x.dims);
            let weight = tensors.get(1).map(|w| w.p).unwrap_or(x.p);
            let (op, word_) = if base.contains("rms") {
                (
                    Op::RmsNorm(RmsNorm {
                        rows,
                        cols,
                        precision: x.p,
                        weight,
                    }),
                    "rmsnorm",
                )
            } else {
                (
                    Op::LayerNorm(LayerNorm {
                        rows,
                        cols,
                        precision: x.p,
                        weight,
                    }),
                    "layernorm",
                )
            };
            Some(model_op(
                (op, format!("{word_} {rows}×{cols} {}", word(x.p))),
                x.p,
            ))
        }
        "embedding" => {
            let w = first?;
            let &[_, d] = w.dims else { return None };
            // The ids are int64: not a float tensor, so read them from the raw shapes.
            let ids = shapes.get(1)?.dims()?;
            let tokens = elems(ids);
            let op = Op::Embedding(Embedding {
                tokens,
                hidden: d,
                weight: w.p,
                act: w.p,
            });
            Some(model_op(
                (op, format!("embedding {tokens}×{d} {}", word(w.p))),
                w.p,
            ))
        }
        _ => map_op(func, &tensors, shapes),
    }
}

/// Maps, reductions and copies.
fn map_op(func: &str, tensors: &[Arg<'_>], shapes: &[ArgShape]) -> Option<ShapedOp> {
    let (kind, flops_per) = match func {
        "add" => (MapKind::Add, ADD_FLOPS_PER_ELEMENT),
        "mul" => (MapKind::Mul, MUL_FLOPS_PER_ELEMENT),
        "sub" | "div" | "maximum" | "minimum" => (MapKind::OtherBinary, 1.0),
        "silu" => (MapKind::Activation, SILU_FLOPS_PER_ELEMENT),
        "gelu" => (MapKind::Activation, GELU_FLOPS_PER_ELEMENT),
        "relu" => (MapKind::Activation, RELU_FLOPS_PER_ELEMENT),
        "sigmoid" => (MapKind::Activation, SIGMOID_FLOPS_PER_ELEMENT),
        "pow" => (MapKind::Pow, UNARY_FLOPS_PER_ELEMENT),
        "rsqrt" | "sqrt" | "exp" | "neg" | "tanh" | "reciprocal" | "abs" | "sin" | "cos" => {
            (MapKind::Unary, UNARY_FLOPS_PER_ELEMENT)
        }
        "mean" | "sum" | "amax" => (MapKind::Reduce, REDUCE_FLOPS_PER_INPUT_ELEMENT),
        "copy" | "_to_copy" | "clone" | "cat" => (MapKind::Copy, 0.0),
        _ => return None,
    };
    if func == "cat" {
        // cat(tensors, dim): every listed tensor read once, the result written once.
        let list = shapes.iter().find_map(|s| match s {
            ArgShape::List(l) => Some(l),
            ArgShape::Tensor(_) => None,
        })?;
        // A list's type is `TensorList`, which names no precision: take the first float
        // tensor argument's, else fp32.
        let prec = tensors.first().map(|a| a.p).unwrap_or(Precision::Fp32);
        let total = list
            .iter()
            .try_fold(0u64, |t, d| t.checked_add(elems(d)))
            .filter(|&t| t <= MAX_ELEMENTS)?;
        let first = list.first()?;
        let (rows, cols) = rows_cols(first);
        let b = total as f64 * prec.bytes();
        return Some(ShapedOp {
            shaped: Shaped::Map {
                map: MapOp {
                    kind,
                    func: func.to_string(),
                    rows,
                    cols,
                    same_shape_inputs: false,
                    dims: first.clone(),
                },
            },
            cost: Cost::new(0.0, b, b),
            compute: Compute::Vector,
            precision: prec,
            description: format!("cat of {} tensors, {total} elements", list.len()),
        });
    }
    let first = tensors.first()?;
    // copy_(dst, src): the source is read, the destination written.
    let (read_from, out_dims, out_p): (&[Arg<'_>], Vec<u64>, Precision) = if func == "copy" {
        let src = tensors.get(1)?;
        (std::slice::from_ref(src), first.dims.to_vec(), first.p)
    } else {
        let mut out = first.dims.to_vec();
        for t in &tensors[1..] {
            out = broadcast(&out, t.dims)?;
        }
        (tensors, out, first.p)
    };
    let read: f64 = read_from
        .iter()
        .map(|a| elems(a.dims) as f64 * a.p.bytes())
        .sum();
    let (rows, cols) = rows_cols(&out_dims);
    let (flops, written) = if kind == MapKind::Reduce {
        // Reduced over the last dim (the case in a norm): one output per row.
        (
            elems(first.dims) as f64 * flops_per,
            rows as f64 * out_p.bytes(),
        )
    } else {
        let e = elems(&out_dims) as f64;
        (e * flops_per, e * out_p.bytes())
    };
    let same_shape_inputs = tensors.len() >= 2 && tensors.iter().all(|t| t.dims == first.dims);
    Some(ShapedOp {
        shaped: Shaped::Map {
            map: MapOp {
                kind,
                func: func.to_string(),
                rows,
                cols,
                same_shape_inputs,
                dims: out_dims.clone(),
            },
        },
        cost: Cost::new(flops, read, written),
        compute: Compute::Vector,
        precision: first.p,
        description: format!(
            "{func} {} {}",
            out_dims
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("×"),
            word(first.p)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(d: &[u64]) -> ArgShape {
        ArgShape::Tensor(d.to_vec())
    }
    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn dtypes_as_the_profiler_writes_them() {
        assert_eq!(dtype("float"), Some(Precision::Fp32));
        assert_eq!(dtype("c10::BFloat16"), Some(Precision::Bf16));
        assert_eq!(dtype("c10::Half"), Some(Precision::Fp16));
        assert_eq!(dtype("c10::Float8_e4m3fn"), Some(Precision::Fp8));
        assert_eq!(dtype("long int"), None);
        assert_eq!(dtype("Scalar"), None);
        assert_eq!(dtype(""), None);
    }

    #[test]
    fn shapes_too_large_to_price_exactly_are_left_unpriced() {
        let f = s(&["float", "float"]);
        // 2^63 rows: the product of dims overflows u64 before any cost is computed.
        let huge = 1u64 << 63;
        assert!(shaped_op("aten::mm", &[t(&[huge, 2]), t(&[2, 8])], &f, &[]).is_none());
        // 2^27 · 2^27 = 2^54 elements, past 2^53 (exact in f64).
        let wide = 1u64 << 27;
        assert!(shaped_op("aten::add", &[t(&[wide, wide]), t(&[wide, wide])], &f, &[]).is_none());
        // Two shapes each within bounds whose broadcast is not: [2^30, 1] + [1, 2^30] = 2^60.
        let g = 1u64 << 30;
        assert!(shaped_op("aten::add", &[t(&[g, 1]), t(&[1, g])], &f, &[]).is_none());
        // A cat of lists each within bounds but past it in sum is left unpriced too.
        let half = 1u64 << 52;
        let list = ArgShape::List(vec![vec![half], vec![half], vec![half]]);
        assert!(shaped_op("aten::cat", &[list], &s(&["TensorList"]), &[]).is_none());
        // At the bound, priced: 2^26 · 2^26 = 2^52 elements added, 2 inputs, fp32.
        let ok = 1u64 << 26;
        assert!(shaped_op("aten::add", &[t(&[ok, ok]), t(&[ok, ok])], &f, &[]).is_some());
    }

    #[test]
    fn mm_from_the_hta_sample_is_a_gemm() -> Result<(), Box<dyn std::error::Error>> {
        // aten::mm [2048,2048]·[2048,256] float: 2·2048·256·2048 = 2,147,483,648 FLOP;
        // bytes (2048·2048 + 2048·256) · 4 read, 2048·256 · 4 written.
        let o = shaped_op(
            "aten::mm",
            &[t(&[2048, 2048]), t(&[2048, 256])],
            &s(&["float", "float"]),
            &[],
        )
        .ok_or("expected a value, got None")?;
        assert_eq!(o.cost.flops.get(), 2_147_483_648.0);
        assert_eq!(
            o.cost.bytes_read.get(),
            (2048.0 * 2048.0 + 2048.0 * 256.0) * 4.0
        );
        assert_eq!(o.cost.bytes_written.get(), 2048.0 * 256.0 * 4.0);
        assert_eq!(o.compute, Compute::Matrix(Precision::Fp32));
        assert_eq!(o.description, "gemm m=2048 n=256 k=2048 fp32");
        // Inner dimensions that differ are not a GEMM.
        assert!(shaped_op(
            "aten::mm",
            &[t(&[2, 3]), t(&[4, 5])],
            &s(&["float", "float"]),
            &[]
        )
        .is_none());
        Ok(())
    }

    #[test]
    fn linear_flattens_leading_dims_and_sees_its_bias() -> Result<(), Box<dyn std::error::Error>> {
        // x [1,64,256], W [688,256], bias [688]: m = 64, n = 688, k = 256, + m·n for the bias.
        let o = shaped_op(
            "aten::linear",
            &[t(&[1, 64, 256]), t(&[688, 256]), t(&[688])],
            &s(&["float", "float", "float"]),
            &[],
        )
        .ok_or("expected a value, got None")?;
        assert_eq!(
            o.cost.flops.get(),
            2.0 * 64.0 * 688.0 * 256.0 + 64.0 * 688.0
        );
        let none = shaped_op(
            "aten::linear",
            &[t(&[1, 64, 256]), t(&[688, 256]), t(&[])],
            &s(&["float", "float", ""]),
            &[],
        )
        .ok_or("expected a value, got None")?;
        assert_eq!(none.cost.flops.get(), 2.0 * 64.0 * 688.0 * 256.0);
        Ok(())
    }

    #[test]
    fn four_d_matmul_is_a_batched_matmul() -> Result<(), Box<dyn std::error::Error>> {
        // q [1,4,64,64] · kᵀ [1,4,64,64]: batch 4, m = n = k = 64: 2·4·64³ FLOP.
        let o = shaped_op(
            "aten::matmul",
            &[t(&[1, 4, 64, 64]), t(&[1, 4, 64, 64])],
            &s(&["float", "float"]),
            &[],
        )
        .ok_or("expected a value, got None")?;
        assert_eq!(o.cost.flops.get(), 2.0 * 4.0 * 64f64.powi(3));
        assert!(matches!(
            o.shaped,
            Shaped::Op {
                op: Op::BatchedMatmul(BatchedMatmul { batch: 4, .. })
            }
        ));
        // Broadcast leading dims: [2,1,8,16]·[1,3,16,4] → batch 2·3.
        let b = shaped_op(
            "aten::matmul",
            &[t(&[2, 1, 8, 16]), t(&[1, 3, 16, 4])],
            &s(&["float", "float"]),
            &[],
        )
        .ok_or("expected a value, got None")?;
        assert_eq!(b.cost.flops.get(), 2.0 * 6.0 * 8.0 * 4.0 * 16.0);
        Ok(())
    }

    #[test]
    fn maps_read_broadcast_inputs_at_their_own_size() -> Result<(), Box<dyn std::error::Error>> {
        // x [1,64,256] * r [1,64,1]: 64·256 FLOP; reads (64·256 + 64)·4; writes 64·256·4.
        let o = shaped_op(
            "aten::mul",
            &[t(&[1, 64, 256]), t(&[1, 64, 1])],
            &s(&["float", "float"]),
            &[],
        )
        .ok_or("expected a value, got None")?;
        assert_eq!(o.cost, Cost::new(16384.0, (16384.0 + 64.0) * 4.0, 65536.0));
        let Shaped::Map { map } = &o.shaped else {
            panic!()
        };
        assert_eq!(
            (map.rows, map.cols, map.same_shape_inputs),
            (64, 256, false)
        );
        // A scalar second argument is not a tensor input.
        let sc = shaped_op(
            "aten::add",
            &[t(&[1, 64, 1]), t(&[])],
            &s(&["float", "Scalar"]),
            &[],
        )
        .ok_or("expected a value, got None")?;
        assert_eq!(sc.cost, Cost::new(64.0, 256.0, 256.0));
        // silu: 3 FLOP per element.
        let a = shaped_op("aten::silu", &[t(&[1, 64, 688])], &s(&["float"]), &[])
            .ok_or("expected a value, got None")?;
        assert_eq!(a.cost.flops.get(), 3.0 * 64.0 * 688.0);
        // mean over the last dim: one output per row.
        let m = shaped_op(
            "aten::mean",
            &[t(&[1, 64, 256]), t(&[]), t(&[])],
            &s(&["float", "", ""]),
            &[],
        )
        .ok_or("expected a value, got None")?;
        assert_eq!(m.cost, Cost::new(16384.0, 65536.0, 256.0));
        // Views are not costed.
        assert!(shaped_op("aten::view", &[t(&[1, 64, 256])], &s(&["float"]), &[]).is_none());
        Ok(())
    }

    #[test]
    fn sdpa_reads_causal_from_the_recorded_values() -> Result<(), Box<dyn std::error::Error>> {
        let shapes = [t(&[1, 4, 64, 64]), t(&[1, 2, 64, 64]), t(&[1, 2, 64, 64])];
        let types = s(&["float", "float", "float", "", "Scalar", "Scalar"]);
        let values = s(&["", "", "", "", "0.", "True"]);
        let o = shaped_op(
            "aten::scaled_dot_product_attention",
            &shapes,
            &types,
            &values,
        )
        .ok_or("expected a value, got None")?;
        let Shaped::Op {
            op: Op::FlashAttention(f),
        } = o.shaped
        else {
            panic!()
        };
        assert!(f.causal);
        assert_eq!((f.heads, f.kv_heads, f.q_len, f.kv_len), (4, 2, 64, 64));
        Ok(())
    }

    #[test]
    fn cat_reads_and_writes_every_listed_element() -> Result<(), Box<dyn std::error::Error>> {
        let o = shaped_op(
            "aten::cat",
            &[
                ArgShape::List(vec![vec![1, 4, 64, 32], vec![1, 4, 64, 32]]),
                t(&[]),
            ],
            &s(&["TensorList", "Scalar"]),
            &[],
        )
        .ok_or("expected a value, got None")?;
        assert_eq!(o.cost, Cost::new(0.0, 16384.0 * 4.0, 16384.0 * 4.0));
        Ok(())
    }
}
