//! Worked derivations: every number of a roofline row, as a person would derive it by hand.
//!
//! A [`Derivation`] is data, not text: the values it starts from ([`Given`]), then one
//! [`Step`] per quantity with its formula, the values put into it, the result and its unit, and
//! where the formula or the figure comes from (the operator's cost formula in
//! `docs/cost-model.md`, the chip's datasheet as cited in the catalog, or Williams, Waterman and
//! Patterson 2009 for the roofline). `roofline-report` renders it as text, JSON or HTML.
//!
//! The results are the cost model's own values ([`Op::cost`], [`crate::roofline::Roof::evaluate`]);
//! the formulas and substituted values are written from the operator's fields, so a reader can
//! redo each line with a calculator.
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
//! #   launch_overhead: Cited::new(Seconds(5e-6), "typical"), interconnect: None,
//! #   host_link: None, notes: vec![] };
//! let op = Op::Gemm(Gemm::uniform(1, 4096, 4096, Precision::Bf16));
//! let d = explain_op("gemm", &op, &device, Precision::Bf16)?;
//! assert_eq!(d.steps[0].formula, "2·m·n·k");
//! assert_eq!(d.steps[0].substituted, "2·1·4096·4096");
//! assert_eq!(d.steps[0].outcome, Outcome::Quantity { value: 33_554_432.0, unit: "FLOP" });
//! # Ok::<(), roofline_core::device::DeviceError>(())
//! ```

use crate::analysis::{OpRow, StageAnalysis};
use crate::device::{Device, DeviceError};
use crate::graph::Span;
use crate::model::Transformer;
use crate::ops::{
    causal_pairs, Compute, Op, OpKind, LAYERNORM_FLOPS_PER_ELEMENT, RMSNORM_FLOPS_PER_ELEMENT,
    ROTARY_FLOPS_PER_ELEMENT, SCALE_MASK_FLOPS_PER_ELEMENT, SOFTMAX_FLOPS_PER_ELEMENT,
    TOKEN_ID_BYTES,
};
use crate::precision::Precision;
use crate::roofline::Bound;
use crate::single::{evaluate_ops, RidgeDistance};
use crate::units::BytesPerSec;
use crate::workload::{Stage, Workload};
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

/// A number as a person would write it in a derivation: counted integers exactly (thousands
/// separated by commas from 100,000: `33,570,816`), other values with four significant figures,
/// round figures from a million up and very large or small values in engineering notation
/// (`154.8e12`, `768e9`, `43.71e-6`).
pub fn plain_number(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "NaN".into()
        } else {
            "∞".into()
        };
    }
    if x == 0.0 {
        return "0".into();
    }
    let a = x.abs();
    // Counted integers exactly; round figures from 1e6 up (datasheet peaks, bandwidths) below.
    let round_figure = a >= 1e6 && {
        let mut i = a as u64;
        while i.is_multiple_of(10) {
            i /= 10;
        }
        i < 10_000
    };
    if x.fract() == 0.0 && a < 1e15 && !round_figure {
        let digits = format!("{}", a as u64);
        let body = if a >= 1e5 {
            let mut out = String::new();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 3 == 0 {
                    out.push(',');
                }
                out.push(c);
            }
            out
        } else {
            digits
        };
        return if x < 0.0 { format!("-{body}") } else { body };
    }
    if (1e-2..1e5).contains(&a) {
        let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{x:.decimals$}");
        return trim_zeros(&s);
    }
    // Engineering notation: exponent a multiple of 3, mantissa with 4 significant figures.
    let exp = (a.log10().floor() as i32).div_euclid(3) * 3;
    let mant = x / 10f64.powi(exp);
    let decimals = (3 - mant.abs().log10().floor() as i32).max(0) as usize;
    let m = trim_zeros(&format!("{mant:.decimals$}"));
    format!("{m}e{exp}")
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

fn n(x: u64) -> String {
    plain_number(x as f64)
}

fn bpe(p: Precision) -> String {
    plain_number(p.bytes())
}

fn given(symbol: &str, value: f64, unit: &'static str, meaning: impl Into<String>) -> Given {
    Given {
        symbol: symbol.into(),
        value,
        unit,
        meaning: meaning.into(),
        origin: None,
    }
}

fn bytes_given(symbol: &str, p: Precision, what: &str) -> Given {
    given(
        symbol,
        p.bytes(),
        "B",
        format!("bytes per element of {what} ({p})"),
    )
}

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

const GEMM_SOURCE: &str = "GEMM cost (roofline-core ops::Gemm; docs/cost-model.md §2): one \
multiply-add = 2 FLOP (Kaplan et al. 2020 §2.1); each operand crosses main memory once";
const BMM_SOURCE: &str = "batched matmul cost (ops::BatchedMatmul; docs/cost-model.md §2, \
attention unfused): one multiply-add = 2 FLOP; G query heads share one K/V head, read once \
(grouped-query attention, Ainslie et al. 2023)";
const ELEMENTWISE_SOURCE: &str = "elementwise cost (ops::Elementwise; docs/cost-model.md §3): \
each input read once, the output written once";

/// Given values and the three cost steps (F, D_r, D_w) of one operator.
fn cost_steps(op: &Op) -> (Vec<Given>, Vec<Step>) {
    let c = op.cost();
    let (f, r, w) = (c.flops.get(), c.bytes_read.get(), c.bytes_written.get());
    let flops =
        |formula: String, sub: String, src: &str| qty("FLOPs", "F", formula, sub, f, "FLOP", src);
    let read = |formula: String, sub: String, src: &str| {
        qty("bytes read", "D_r", formula, sub, r, "B", src)
    };
    let written = |formula: String, sub: String, src: &str| {
        qty("bytes written", "D_w", formula, sub, w, "B", src)
    };
    match op {
        Op::Gemm(g) => {
            let mut gv = vec![
                given("m", g.m as f64, "", "rows of A and C (tokens)"),
                given("n", g.n as f64, "", "columns of B and C (output features)"),
                given("k", g.k as f64, "", "reduction dimension (input features)"),
                bytes_given("a", g.a, "A, the activations"),
                bytes_given("b", g.b, "B, the weights"),
                bytes_given("c", g.c, "C, the output"),
            ];
            let (m, nn, k, a, b, cc) = (n(g.m), n(g.n), n(g.k), bpe(g.a), bpe(g.b), bpe(g.c));
            let steps = if g.bias {
                gv.push(given("bias", g.n as f64, "", "bias of n elements at b"));
                vec![
                    flops(
                        "2·m·n·k + m·n".into(),
                        format!("2·{m}·{nn}·{k} + {m}·{nn}"),
                        GEMM_SOURCE,
                    ),
                    read(
                        "m·k·a + k·n·b + n·b".into(),
                        format!("{m}·{k}·{a} + {k}·{nn}·{b} + {nn}·{b}"),
                        GEMM_SOURCE,
                    ),
                    written("m·n·c".into(), format!("{m}·{nn}·{cc}"), GEMM_SOURCE),
                ]
            } else {
                vec![
                    flops("2·m·n·k".into(), format!("2·{m}·{nn}·{k}"), GEMM_SOURCE),
                    read(
                        "m·k·a + k·n·b".into(),
                        format!("{m}·{k}·{a} + {k}·{nn}·{b}"),
                        GEMM_SOURCE,
                    ),
                    written("m·n·c".into(), format!("{m}·{nn}·{cc}"), GEMM_SOURCE),
                ]
            };
            (gv, steps)
        }
        Op::BatchedMatmul(g) => {
            let shared = g.shared.max(1);
            let gv = vec![
                given(
                    "N",
                    g.batch as f64,
                    "",
                    "independent products (batch × query heads)",
                ),
                given(
                    "G",
                    shared as f64,
                    "",
                    "products sharing one B (query heads per key/value head)",
                ),
                given("m", g.m as f64, "", "rows of each A and C"),
                given("n", g.n as f64, "", "columns of each B and C"),
                given("k", g.k as f64, "", "reduction dimension"),
                bytes_given("a", g.a, "A"),
                bytes_given("b", g.b, "B (the KV cache)"),
                bytes_given("c", g.c, "C"),
            ];
            let (bn, gg, m, nn, k) = (n(g.batch), n(shared), n(g.m), n(g.n), n(g.k));
            let (a, b, cc) = (bpe(g.a), bpe(g.b), bpe(g.c));
            (
                gv,
                vec![
                    flops(
                        "2·N·m·n·k".into(),
                        format!("2·{bn}·{m}·{nn}·{k}"),
                        BMM_SOURCE,
                    ),
                    read(
                        "N·m·k·a + (N/G)·k·n·b".into(),
                        format!("{bn}·{m}·{k}·{a} + ({bn}/{gg})·{k}·{nn}·{b}"),
                        BMM_SOURCE,
                    ),
                    written("N·m·n·c".into(), format!("{bn}·{m}·{nn}·{cc}"), BMM_SOURCE),
                ],
            )
        }
        Op::Elementwise(e) => {
            let gv = vec![
                given("E", e.elements as f64, "", "elements per tensor"),
                given("i", e.inputs as f64, "", "input tensors"),
                given(
                    "φ",
                    e.flops_per_element,
                    "FLOP",
                    "FLOPs per output element (docs/cost-model.md §3)",
                ),
                bytes_given("p", e.precision, "every input and the output"),
            ];
            let (ee, i, phi, p) = (
                n(e.elements),
                n(e.inputs as u64),
                plain_number(e.flops_per_element),
                bpe(e.precision),
            );
            (
                gv,
                vec![
                    flops("E·φ".into(), format!("{ee}·{phi}"), ELEMENTWISE_SOURCE),
                    read("i·E·p".into(), format!("{i}·{ee}·{p}"), ELEMENTWISE_SOURCE),
                    written("E·p".into(), format!("{ee}·{p}"), ELEMENTWISE_SOURCE),
                ],
            )
        }
        Op::Softmax(s) => {
            let per = SOFTMAX_FLOPS_PER_ELEMENT
                + if s.scale_mask {
                    SCALE_MASK_FLOPS_PER_ELEMENT
                } else {
                    0.0
                };
            let src = if s.scale_mask {
                "softmax cost (ops::Softmax; docs/cost-model.md §3): max, subtract, exp, sum, \
                 divide = 5 FLOP per score, plus scale by 1/√e and mask = 2 in the same kernel"
            } else {
                "softmax cost (ops::Softmax; docs/cost-model.md §3): max, subtract, exp, sum, \
                 divide = 5 FLOP per score"
            };
            let gv = vec![
                given("r", s.rows as f64, "", "rows (independent softmaxes)"),
                given("n", s.cols as f64, "", "elements per row"),
                given("φ", per, "FLOP", "FLOPs per element"),
                bytes_given("p", s.precision, "input and output"),
            ];
            let (rr, cc, phi, p) = (n(s.rows), n(s.cols), plain_number(per), bpe(s.precision));
            (
                gv,
                vec![
                    flops("r·n·φ".into(), format!("{rr}·{cc}·{phi}"), src),
                    read("r·n·p".into(), format!("{rr}·{cc}·{p}"), src),
                    written("r·n·p".into(), format!("{rr}·{cc}·{p}"), src),
                ],
            )
        }
        Op::RmsNorm(o) => {
            let src = "RMSNorm cost (ops::RmsNorm; Zhang and Sennrich 2019; docs/cost-model.md \
                       §3): square, accumulate, ×1/rms, ×weight = 4 FLOP per element; the \
                       weight vector is read once";
            let gv = vec![
                given("r", o.rows as f64, "", "rows (tokens)"),
                given("n", o.cols as f64, "", "elements per row (hidden size)"),
                bytes_given("p", o.precision, "input and output"),
                bytes_given("w", o.weight, "the weight"),
            ];
            let (rr, cc, p, ww) = (n(o.rows), n(o.cols), bpe(o.precision), bpe(o.weight));
            let phi = plain_number(RMSNORM_FLOPS_PER_ELEMENT);
            (
                gv,
                vec![
                    flops(format!("{phi}·r·n"), format!("{phi}·{rr}·{cc}"), src),
                    read(
                        "r·n·p + n·w".into(),
                        format!("{rr}·{cc}·{p} + {cc}·{ww}"),
                        src,
                    ),
                    written("r·n·p".into(), format!("{rr}·{cc}·{p}"), src),
                ],
            )
        }
        Op::LayerNorm(o) => {
            let src = "LayerNorm cost (ops::LayerNorm; Ba et al. 2016; docs/cost-model.md §3): \
                       7 FLOP per element; weight and bias read once";
            let gv = vec![
                given("r", o.rows as f64, "", "rows (tokens)"),
                given("n", o.cols as f64, "", "elements per row (hidden size)"),
                bytes_given("p", o.precision, "input and output"),
                bytes_given("w", o.weight, "weight and bias"),
            ];
            let (rr, cc, p, ww) = (n(o.rows), n(o.cols), bpe(o.precision), bpe(o.weight));
            let phi = plain_number(LAYERNORM_FLOPS_PER_ELEMENT);
            (
                gv,
                vec![
                    flops(format!("{phi}·r·n"), format!("{phi}·{rr}·{cc}"), src),
                    read(
                        "r·n·p + 2·n·w".into(),
                        format!("{rr}·{cc}·{p} + 2·{cc}·{ww}"),
                        src,
                    ),
                    written("r·n·p".into(), format!("{rr}·{cc}·{p}"), src),
                ],
            )
        }
        Op::Rotary(o) => {
            let src = "rotary embedding cost (ops::Rotary; Su et al. 2021; docs/cost-model.md \
                       §2-3): x·cos + rotate_half(x)·sin = 3 FLOP per element; cos and sin \
                       tables of one row per token";
            let gv = vec![
                given("T", o.tokens as f64, "", "tokens"),
                given("H", o.heads as f64, "", "heads rotated (query + key heads)"),
                given("e", o.head_dim as f64, "", "elements per head"),
                bytes_given("p", o.precision, "q, k and the tables"),
            ];
            let (t, h, e, p) = (n(o.tokens), n(o.heads), n(o.head_dim), bpe(o.precision));
            let phi = plain_number(ROTARY_FLOPS_PER_ELEMENT);
            (
                gv,
                vec![
                    flops(format!("{phi}·T·H·e"), format!("{phi}·{t}·{h}·{e}"), src),
                    read(
                        "(T·H·e + 2·T·e)·p".into(),
                        format!("({t}·{h}·{e} + 2·{t}·{e})·{p}"),
                        src,
                    ),
                    written("T·H·e·p".into(), format!("{t}·{h}·{e}·{p}"), src),
                ],
            )
        }
        Op::Embedding(o) => {
            let src = "embedding gather (ops::Embedding; docs/cost-model.md §2): no arithmetic; \
                       int64 token ids (8 B) and only the rows used are read";
            let gv = vec![
                given("T", o.tokens as f64, "", "tokens looked up"),
                given("d", o.hidden as f64, "", "row width (hidden size)"),
                bytes_given("w", o.weight, "the table"),
                bytes_given("a", o.act, "the output"),
            ];
            let (t, d, w8, a) = (n(o.tokens), n(o.hidden), bpe(o.weight), bpe(o.act));
            let id = plain_number(TOKEN_ID_BYTES);
            (
                gv,
                vec![
                    flops("0".into(), "0".into(), src),
                    read(
                        format!("T·{id} + T·d·w"),
                        format!("{t}·{id} + {t}·{d}·{w8}"),
                        src,
                    ),
                    written("T·d·a".into(), format!("{t}·{d}·{a}"), src),
                ],
            )
        }
        Op::KvCacheWrite(o) => {
            let src = "KV-cache write (ops::KvCacheWrite; docs/cost-model.md §2): keys and values \
                       of the new tokens copied into the cache; no FLOPs counted";
            let gv = vec![
                given("T", o.tokens as f64, "", "new tokens"),
                given("g", o.kv_heads as f64, "", "key/value heads"),
                given("e", o.head_dim as f64, "", "elements per head"),
                bytes_given("a", o.act, "the new keys and values"),
                bytes_given("c", o.kv, "the cache"),
            ];
            let (t, g, e, a, c2) = (
                n(o.tokens),
                n(o.kv_heads),
                n(o.head_dim),
                bpe(o.act),
                bpe(o.kv),
            );
            (
                gv,
                vec![
                    flops("0".into(), "0".into(), src),
                    read("2·T·g·e·a".into(), format!("2·{t}·{g}·{e}·{a}"), src),
                    written("2·T·g·e·c".into(), format!("2·{t}·{g}·{e}·{c2}"), src),
                ],
            )
        }
        Op::ExpertGemm(o) => {
            let src = "mixture-of-experts grouped GEMM (ops::ExpertGemm; docs/cost-model.md \
                       §MoE): 2 FLOP per multiply-add over the T·k routed rows; only the experts \
                       some token chose are read, U = E·(1 − (1 − k/E)^T) expected under uniform \
                       routing";
            let gv = vec![
                given("T", o.tokens as f64, "", "tokens routed"),
                given("k", o.top_k as f64, "", "experts per token"),
                given("E", o.experts as f64, "", "experts"),
                given("n", o.n as f64, "", "output features of one expert"),
                given("K", o.k as f64, "", "input features"),
                given(
                    "U",
                    o.experts_touched(),
                    "",
                    "expected distinct experts read",
                ),
                bytes_given("a", o.a, "the token rows"),
                bytes_given("b", o.b, "the expert weights"),
                bytes_given("c", o.c, "the output"),
            ];
            let (t, k, nn, kk) = (n(o.tokens), n(o.top_k), n(o.n), n(o.k));
            let u = plain_number(o.experts_touched());
            let (a, b, c2) = (bpe(o.a), bpe(o.b), bpe(o.c));
            (
                gv,
                vec![
                    flops("2·T·k·n·K".into(), format!("2·{t}·{k}·{nn}·{kk}"), src),
                    read(
                        "T·k·K·a + U·K·n·b".into(),
                        format!("{t}·{k}·{kk}·{a} + {u}·{kk}·{nn}·{b}"),
                        src,
                    ),
                    written("T·k·n·c".into(), format!("{t}·{k}·{nn}·{c2}"), src),
                ],
            )
        }
        Op::FlashAttention(o) if o.window.is_some() || o.v_head_dim.is_some() || o.kv_shared => {
            let src = "fused attention cost (ops::FlashAttention; Dao et al. 2022, \
                       arXiv:2205.14135; sliding window: Jiang et al. 2023 (Mistral 7B); MLA: \
                       DeepSeek-V2 arXiv:2405.04434 §2.1): 2·e FLOP per pair for QKᵀ, 2·e_v for \
                       S·V, + φ; K and V read once per kv head (once in all when they are MLA's \
                       shared latent); O written once";
            let per = SOFTMAX_FLOPS_PER_ELEMENT + SCALE_MASK_FLOPS_PER_ELEMENT;
            let gv = vec![
                given("B", o.batch as f64, "", "sequences"),
                given("h", o.heads as f64, "", "query heads"),
                given("g", o.kv_heads as f64, "", "key/value heads"),
                given("e", o.head_dim as f64, "", "query/key elements per head"),
                given("e_v", o.v_dim() as f64, "", "value elements per head"),
                given("s", o.q_len as f64, "", "queries per sequence"),
                given("L", o.kv_len as f64, "", "keys per sequence"),
                given(
                    "P",
                    o.pairs(),
                    "",
                    "(query, key) pairs per head (causal; windowed when a window is set)",
                ),
                given("R_k", o.key_rows_read(), "", "key rows read per kv head"),
                given(
                    "φ",
                    per,
                    "FLOP",
                    "softmax (5) + scale and mask (2) per score",
                ),
                bytes_given("a", o.act, "Q and O"),
                bytes_given("c", o.kv, "K and V"),
            ];
            let (b, h, g, e, ev, s) = (
                n(o.batch),
                n(o.heads),
                n(o.kv_heads),
                n(o.head_dim),
                n(o.v_dim()),
                n(o.q_len),
            );
            let (p, rows) = (plain_number(o.pairs()), plain_number(o.key_rows_read()));
            let (a, c2) = (bpe(o.act), bpe(o.kv));
            let width = if o.kv_shared {
                ("e".to_string(), e.clone())
            } else {
                ("(e + e_v)".to_string(), format!("({e} + {ev})"))
            };
            (
                gv,
                vec![
                    flops(
                        "B·h·P·(2·e + 2·e_v + φ)".into(),
                        format!("{b}·{h}·{p}·(2·{e} + 2·{ev} + {})", plain_number(per)),
                        src,
                    ),
                    read(
                        format!("B·s·h·e·a + B·g·R_k·{}·c", width.0),
                        format!("{b}·{s}·{h}·{e}·{a} + {b}·{g}·{rows}·{}·{c2}", width.1),
                        src,
                    ),
                    written("B·s·h·e_v·a".into(), format!("{b}·{s}·{h}·{ev}·{a}"), src),
                ],
            )
        }
        Op::FlashAttention(o) => {
            let src = "fused attention cost (ops::FlashAttention; Dao et al. 2022 §3.3, \
                       arXiv:2205.14135; docs/cost-model.md §2): 4·e FLOP per (query, key) pair \
                       for QKᵀ and S·V, + 5 softmax + 2 scale/mask; scores stay on chip, Q, K, V \
                       read once, O written once";
            let per = SOFTMAX_FLOPS_PER_ELEMENT + SCALE_MASK_FLOPS_PER_ELEMENT;
            let mut gv = vec![
                given("B", o.batch as f64, "", "sequences"),
                given("h", o.heads as f64, "", "query heads"),
                given("g", o.kv_heads as f64, "", "key/value heads"),
                given("e", o.head_dim as f64, "", "elements per head"),
                given("s", o.q_len as f64, "", "queries per sequence"),
                given("L", o.kv_len as f64, "", "keys per sequence"),
                bytes_given("a", o.act, "Q and O"),
                bytes_given("c", o.kv, "K and V"),
            ];
            let (b, h, g, e, s, l) = (
                n(o.batch),
                n(o.heads),
                n(o.kv_heads),
                n(o.head_dim),
                n(o.q_len),
                n(o.kv_len.max(o.q_len)),
            );
            let (a, c2) = (bpe(o.act), bpe(o.kv));
            let pairs = o.pairs();
            let rows = o.key_rows_read();
            let pairs_step = if o.causal {
                qty(
                    "(query, key) pairs per head",
                    "P",
                    "s·(L − s) + s·(s + 1)/2 (causal: query i sees L − s + i + 1 keys)",
                    format!("{s}·({l} − {s}) + {s}·({s} + 1)/2"),
                    causal_pairs(o.q_len, o.kv_len),
                    "",
                    "ops::causal_pairs; docs/cost-model.md §2 (masked blocks are skipped)",
                )
            } else {
                qty(
                    "(query, key) pairs per head",
                    "P",
                    "s·L",
                    format!("{s}·{}", n(o.kv_len)),
                    pairs,
                    "",
                    "every query attends to every key",
                )
            };
            gv.push(given(
                "φ",
                per,
                "FLOP",
                "softmax (5) + scale and mask (2) per score",
            ));
            let p = plain_number(pairs);
            let rows_s = plain_number(rows);
            let read_step = if o.block_q.is_some() {
                read(
                    "B·s·h·e·a + 2·B·g·R_k·e·c (R_k key rows streamed per kv head)".into(),
                    format!("{b}·{s}·{h}·{e}·{a} + 2·{b}·{g}·{rows_s}·{e}·{c2}"),
                    src,
                )
            } else {
                read(
                    "B·s·h·e·a + 2·B·g·L·e·c".into(),
                    format!("{b}·{s}·{h}·{e}·{a} + 2·{b}·{g}·{}·{e}·{c2}", n(o.kv_len)),
                    src,
                )
            };
            (
                gv,
                vec![
                    pairs_step,
                    flops(
                        "B·h·P·(4·e + φ)".into(),
                        format!("{b}·{h}·{p}·(4·{e} + {})", plain_number(per)),
                        src,
                    ),
                    read_step,
                    written("B·s·h·e·a".into(), format!("{b}·{s}·{h}·{e}·{a}"), src),
                ],
            )
        }
    }
}

/// The cited peak an operator is held against, a description of which peak that is, and its
/// source.
fn peak_source(device: &Device, compute: Compute, act: Precision) -> (String, String) {
    let cited = |p: Precision| {
        device
            .peak_cited(p)
            .map(|c| c.source.clone())
            .unwrap_or_else(|| "catalog".into())
    };
    match compute {
        Compute::Matrix(p) => (
            format!("dense {p} matrix peak (tensor cores; never a 2:4-sparse figure)"),
            cited(p),
        ),
        Compute::Vector => {
            if device.peak_cited(Precision::Fp32).is_some() {
                (
                    "fp32 vector peak (elementwise and reduction kernels upcast to fp32 and do \
                     not use matrix units; docs/cost-model.md §4)"
                        .into(),
                    cited(Precision::Fp32),
                )
            } else {
                (
                    format!(
                        "{act} peak (the chip publishes no fp32 figure; docs/cost-model.md §4)"
                    ),
                    cited(act),
                )
            }
        }
    }
}

/// The roofline steps from the row the cost steps arrive at.
fn roofline_steps(row: &OpRow, device: &Device, act: Precision, bw: BytesPerSec) -> Vec<Step> {
    let c = &row.cost;
    let p = &row.point();
    let (f, d) = (c.flops.get(), c.bytes().get());
    let (peak, w) = (row.peak().get(), bw.get());
    let (i, r) = (p.intensity.get(), p.ridge.get());
    let pn = plain_number;
    let (peak_what, peak_src) = peak_source(device, row.compute, act);
    let mem = device.main_memory();
    let bw_src = mem
        .and_then(|m| m.bandwidth.as_ref())
        .map(|b| b.source.clone())
        .unwrap_or_default();
    let mem_name = mem.map(|m| m.name.clone()).unwrap_or_default();
    let mut steps = vec![
        qty(
            "bytes moved",
            "D",
            "D_r + D_w",
            format!("{} + {}", pn(c.bytes_read.get()), pn(c.bytes_written.get())),
            d,
            "B",
            "docs/cost-model.md §5: every byte read or written crosses main memory once",
        ),
        qty(
            "arithmetic intensity",
            "I",
            "F / D",
            format!("{} / {}", pn(f), pn(d)),
            i,
            "FLOP/B",
            ROOFLINE_SOURCE,
        ),
        qty(
            "peak that applies",
            "P",
            peak_what,
            pn(peak),
            peak,
            "FLOP/s",
            peak_src,
        ),
        qty(
            "main-memory bandwidth",
            "W",
            format!("peak bandwidth of {mem_name}"),
            pn(w),
            w,
            "B/s",
            bw_src,
        ),
        qty(
            "ridge point",
            "R",
            "P / W",
            format!("{} / {}", pn(peak), pn(w)),
            r,
            "FLOP/B",
            ROOFLINE_SOURCE,
        ),
    ];
    let (cmp, verdict) = match p.bound {
        Bound::Compute if d == 0.0 => ("no bytes moved".to_string(), "compute-bound"),
        Bound::Compute => (format!("I = {} ≥ R = {}", pn(i), pn(r)), "compute-bound"),
        Bound::Memory => (format!("I = {} < R = {}", pn(i), pn(r)), "memory-bound"),
    };
    steps.push(Step {
        quantity: "bound".into(),
        symbol: "bound".into(),
        formula: "compute-bound if I ≥ R, else memory-bound".into(),
        substituted: cmp,
        outcome: Outcome::Verdict {
            text: verdict.into(),
        },
        source: ROOFLINE_SOURCE.into(),
    });
    steps.extend([
        qty(
            "attainable performance",
            "A",
            "min(P, I·W)",
            format!("min({}, {}·{})", pn(peak), pn(i), pn(w)),
            p.attainable.get(),
            "FLOP/s",
            ROOFLINE_SOURCE,
        ),
        qty(
            "compute time",
            "t_c",
            "F / P",
            format!("{} / {}", pn(f), pn(peak)),
            p.compute_time.get(),
            "s",
            ROOFLINE_SOURCE,
        ),
        qty(
            "memory time",
            "t_m",
            "D / W",
            format!("{} / {}", pn(d), pn(w)),
            p.memory_time.get(),
            "s",
            ROOFLINE_SOURCE,
        ),
        qty(
            "time",
            "t",
            "max(t_c, t_m)",
            format!(
                "max({}, {})",
                pn(p.compute_time.get()),
                pn(p.memory_time.get())
            ),
            p.time.get(),
            "s",
            ROOFLINE_SOURCE,
        ),
    ]);
    let dist = RidgeDistance::of(p);
    steps.push(match dist.bound {
        _ if f == 0.0 => Step {
            quantity: "distance from the ridge".into(),
            symbol: String::new(),
            formula: "R / I".into(),
            substituted: format!("{} / 0", pn(r)),
            outcome: Outcome::Verdict {
                text: "no FLOPs: pure data movement, bound by bandwidth at any intensity".into(),
            },
            source: ROOFLINE_SOURCE.into(),
        },
        Bound::Memory => qty(
            "distance below the ridge (how many times the intensity must grow to reach it)",
            "",
            "R / I",
            format!("{} / {}", pn(r), pn(i)),
            dist.factor,
            "×",
            ROOFLINE_SOURCE,
        ),
        Bound::Compute => qty(
            "distance above the ridge",
            "",
            "I / R",
            format!("{} / {}", pn(i), pn(r)),
            dist.factor,
            "×",
            ROOFLINE_SOURCE,
        ),
    });
    steps
}

fn derive(
    name: &str,
    op: &Op,
    row: OpRow,
    device: &Device,
    act: Precision,
) -> Result<Derivation, DeviceError> {
    let bw = device.bandwidth()?;
    let (given, mut steps) = cost_steps(op);
    steps.extend(roofline_steps(&row, device, act, bw));
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

/// Where a shape symbol of a model's node comes from, in the notation of `docs/cost-model.md`.
fn origin(node: &str, kind: OpKind, symbol: &str, m: &Transformer, w: &Workload) -> Option<String> {
    let (b, s, t, l) = (w.batch, w.tokens_per_seq(), w.tokens(), w.kv_len());
    let (d, h, g, e, f, v) = (
        m.hidden,
        m.heads,
        m.kv_heads,
        m.head_dim,
        m.intermediate,
        m.vocab,
    );
    let tokens = format!("T = B·s = {b}·{s} (tokens in this pass)");
    let he = format!("h·e = {h}·{e}");
    let ge = format!("g·e = {g}·{e}");
    let dd = format!("d (hidden size {d})");
    let ff = format!("f (MLP width {f})");
    let keys = match w.stage {
        Stage::Prefill => format!("L = {l} (the prompt's keys)"),
        Stage::Decode => format!(
            "L = context + 1 = {} + 1 (cached keys and the new one)",
            w.context
        ),
    };
    let o = match (kind, node, symbol) {
        (OpKind::Gemm, "lm_head", "m") => format!("B = {b} (the last position of each sequence)"),
        (OpKind::Gemm, "lm_head", "n") => format!("V (vocabulary {v})"),
        (OpKind::Gemm, _, "m") => tokens,
        (OpKind::Gemm, "q_proj", "n") => he,
        (OpKind::Gemm, "k_proj" | "v_proj", "n") => ge,
        (OpKind::Gemm, "o_proj", "k") => he,
        (OpKind::Gemm, "o_proj" | "down_proj", "n") => dd,
        (OpKind::Gemm, "gate_proj" | "up_proj", "n") => ff,
        (OpKind::Gemm, "down_proj", "k") => ff,
        (OpKind::Gemm, _, "k") => dd,
        (OpKind::BatchedMatmul, _, "N") => format!("B·h = {b}·{h}"),
        (OpKind::BatchedMatmul, _, "G") => format!("h/g = {h}/{g}"),
        (OpKind::BatchedMatmul, _, "m") => format!("s = {s} (queries per sequence)"),
        (OpKind::BatchedMatmul, "qk_matmul", "n") | (OpKind::BatchedMatmul, "sv_matmul", "k") => {
            keys
        }
        (OpKind::BatchedMatmul, _, "n" | "k") => format!("e (head dim {e})"),
        (OpKind::Softmax, _, "r") => format!("B·h·s = {b}·{h}·{s}"),
        (OpKind::Softmax, _, "n") => keys,
        (OpKind::RmsNorm | OpKind::LayerNorm, _, "r") => tokens,
        (OpKind::RmsNorm | OpKind::LayerNorm, _, "n") => dd,
        (OpKind::Elementwise, "act_mul" | "act", "E") => format!("T·f = {t}·{f}"),
        (OpKind::Elementwise, "act_mul", "φ") => "SiLU (3) + multiply (1)".into(),
        (OpKind::Elementwise, _, "E") => format!("T·d = {t}·{d}"),
        (OpKind::Rotary, _, "T") | (OpKind::Embedding, _, "T") | (OpKind::KvCacheWrite, _, "T") => {
            tokens
        }
        (OpKind::Rotary, _, "H") => format!("h + g = {h} + {g}"),
        (OpKind::FlashAttention, _, "L") => keys,
        _ => return None,
    };
    Some(o)
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
            available: graph.nodes.iter().map(|n| n.name).collect(),
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
        g.origin = origin(name, d.kind, &g.symbol, model, w);
    }
    let p = w.precisions;
    let lengths = match w.stage {
        Stage::Prefill => format!("prompt s = {} tokens per sequence", w.seq_len),
        Stage::Decode => format!("s = 1 new token per sequence, context {}", w.context),
    };
    d.context = vec![
        format!(
            "{} ({:.2}B parameters): d = {}, h = {}, g = {}, e = {}, f = {}, V = {}, n_L = {} \
             decoder blocks",
            model.name,
            model.parameters() as f64 / 1e9,
            model.hidden,
            model.heads,
            model.kv_heads,
            model.head_dim,
            model.intermediate,
            model.vocab,
            model.layers
        ),
        format!(
            "{}: batch B = {}, {lengths}, T = {} tokens, L = {} keys; weights {}, activations \
             {}, KV cache {}; attention {}",
            w.stage,
            w.batch,
            w.tokens(),
            w.kv_len(),
            p.weight,
            p.act,
            p.kv,
            if w.flash_attention {
                "fused (FlashAttention)"
            } else {
                "unfused (QKᵀ, softmax, S·V)"
            }
        ),
    ];
    let blocks_formula;
    let (count_formula, count_src) = match node.span {
        Span::Blocks { first, last } if first == 0 && last + 1 == stage.graph.layers => (
            "n_L (once in every decoder block)",
            "docs/cost-model.md §2: nodes inside a block run n_L times per forward pass",
        ),
        Span::Blocks { first, last } => {
            blocks_formula =
                format!("{last} − {first} + 1 (once in each of blocks {first}–{last})");
            (
                blocks_formula.as_str(),
                "docs/cost-model.md: nodes of a block kind that only some blocks have (dense or MoE MLP) run that many times",
            )
        }
        Span::Prologue | Span::Epilogue => (
            "1 (once per forward pass)",
            "docs/cost-model.md §2: embed_tokens, norm and lm_head run once",
        ),
    };
    let count = row.count as f64;
    let t = row.point().time.get();
    let per_pass = t * count;
    let total = stage.totals.time.get();
    d.steps.extend([
        qty(
            "executions per forward pass",
            "n",
            count_formula,
            plain_number(count),
            count,
            "",
            count_src,
        ),
        qty(
            "time per forward pass",
            "t_pass",
            "n·t",
            format!("{}·{}", plain_number(count), plain_number(t)),
            per_pass,
            "s",
            "docs/cost-model.md §5: totals multiply each row by its count",
        ),
        qty(
            "share of the stage's roofline time",
            "share",
            "n·t / Σ n·t (every operator of the forward pass)",
            format!("{} / {}", plain_number(per_pass), plain_number(total)),
            if total > 0.0 {
                per_pass / total * 100.0
            } else {
                0.0
            },
            "%",
            "docs/cost-model.md §5 (launch overhead, 1 kernel per execution, is reported \
             separately)",
        ),
    ]);
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use crate::device::tests::h100_sxm;
    use crate::model::tests::llama2_7b;
    use crate::ops::{FlashAttention, Gemm};
    use crate::workload::Precisions;

    fn value(d: &Derivation, symbol: &str) -> Result<f64, String> {
        match &d.step(symbol).ok_or(format!("no step {symbol}"))?.outcome {
            Outcome::Quantity { value, .. } => Ok(*value),
            Outcome::Verdict { text } => Err(format!("{symbol} is a verdict: {text}")),
        }
    }

    #[test]
    fn plain_numbers_read_like_hand_arithmetic() {
        assert_eq!(plain_number(4096.0), "4096");
        assert_eq!(plain_number(33_570_816.0), "33,570,816");
        assert_eq!(plain_number(0.99951), "0.9995");
        assert_eq!(plain_number(201.5625), "201.6");
        assert_eq!(plain_number(154.8e12), "154.8e12");
        assert_eq!(plain_number(768e9), "768e9");
        assert_eq!(plain_number(4.3712e-5), "43.71e-6");
        assert_eq!(plain_number(0.0013987), "1.399e-3");
        assert_eq!(plain_number(2.0), "2");
        assert_eq!(plain_number(0.5), "0.5");
        assert_eq!(plain_number(1365.3333), "1365");
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
            precisions: Precisions::uniform(Precision::Bf16),
            flash_attention: false,
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
