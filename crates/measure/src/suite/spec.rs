//! The suite's entries ([`Spec`]): their names, notes, and the launches with the costs the
//! analysis's cost model gives them.

use super::cpu::{AttentionShape, ChainShape};
use super::{CHAIN_BLOCK, FLASH_BLOCK, PRECISION};
use crate::MeasureError;
use roofline_core::fusion::{chain_graph, plan, plan_chain, ChainSpec, Preset};
use roofline_core::ops::{
    BatchedMatmul, Compute, Cost, Elementwise, FlashAttention, Gemm, RmsNorm, Softmax,
    ADD_FLOPS_PER_ELEMENT, MUL_FLOPS_PER_ELEMENT, SILU_FLOPS_PER_ELEMENT,
};
use roofline_core::prediction::Launch;
use roofline_core::units::Bytes;

/// One entry of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spec {
    /// `C[m,n] = A[m,k] · B[k,n]`.
    Gemm {
        /// Rows of A and C (tokens).
        m: usize,
        /// Columns of B and C (output features).
        n: usize,
        /// The reduction (input features).
        k: usize,
        /// Where the shape comes from.
        note: &'static str,
    },
    /// `out = a + b` over `n` elements.
    Add {
        /// Elements.
        n: usize,
        /// Where it is meant to run from (`DRAM`, `L3`).
        note: &'static str,
    },
    /// `out = silu(g) · u` over `n` elements.
    SiluMul {
        /// Elements.
        n: usize,
    },
    /// RMSNorm of `rows × cols`.
    RmsNorm {
        /// Rows (tokens).
        rows: usize,
        /// Columns (hidden size).
        cols: usize,
        /// Where it is meant to run from.
        note: &'static str,
    },
    /// Row softmax of `rows × cols`.
    Softmax {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
    },
    /// Causal attention, three kernels, the score matrix in memory.
    AttentionMaterialised(AttentionShape),
    /// Causal attention, one tiled kernel.
    AttentionFlash(AttentionShape),
    /// RMSNorm → Linear → SiLU → Linear, four kernels.
    ChainSeparate(ChainShape),
    /// The same chain, one fused tiled kernel.
    ChainFused(ChainShape),
}

fn count(n: usize) -> String {
    let n = n as f64;
    if n >= 1e6 {
        format!("{:.1}M", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.0}k", n / 1e3)
    } else {
        format!("{n}")
    }
}

/// Bytes in binary units (`3 MiB`, `192 MiB`).
pub fn mib(bytes: f64) -> String {
    let m = bytes / 1048576.0;
    if m >= 1.0 {
        format!("{m:.0} MiB")
    } else {
        format!("{:.0} KiB", bytes / 1024.0)
    }
}

pub(super) fn f32_bytes(elems: usize) -> f64 {
    elems as f64 * PRECISION.bytes()
}

impl Spec {
    /// Its name in the table (unique within a suite).
    pub fn name(&self) -> String {
        match *self {
            Spec::Gemm { m, n, k, .. } => format!("gemm {m}×{n}×{k}"),
            Spec::Add { n, .. } => format!("add {}", count(n)),
            Spec::SiluMul { n } => format!("silu·mul {}", count(n)),
            Spec::RmsNorm { rows, cols, .. } => format!("rmsnorm {rows}×{cols}"),
            Spec::Softmax { rows, cols } => format!("softmax {rows}×{cols}"),
            Spec::AttentionMaterialised(a) => {
                format!(
                    "attention {}×{}×{}, materialised",
                    a.heads, a.seq, a.head_dim
                )
            }
            Spec::AttentionFlash(a) => {
                format!("attention {}×{}×{}, flash", a.heads, a.seq, a.head_dim)
            }
            Spec::ChainSeparate(c) => format!(
                "chain {}×{}×{}, 4 kernels",
                c.tokens, c.hidden, c.intermediate
            ),
            Spec::ChainFused(c) => {
                format!("chain {}×{}×{}, fused", c.tokens, c.hidden, c.intermediate)
            }
        }
    }

    /// Its family: `gemm`, `elementwise`, `norm`, `softmax`, `attention`, `chain`.
    pub fn family(&self) -> &'static str {
        match self {
            Spec::Gemm { .. } => "gemm",
            Spec::Add { .. } | Spec::SiluMul { .. } => "elementwise",
            Spec::RmsNorm { .. } => "norm",
            Spec::Softmax { .. } => "softmax",
            Spec::AttentionMaterialised(_) | Spec::AttentionFlash(_) => "attention",
            Spec::ChainSeparate(_) | Spec::ChainFused(_) => "chain",
        }
    }

    /// Where the shape comes from, and its footprint.
    pub fn note(&self) -> String {
        let ws: f64 = self
            .launches()
            .map(|l| l.iter().map(|l| l.working_set.get()).fold(0.0, f64::max))
            .unwrap_or(0.0);
        let what = match *self {
            Spec::Gemm { note, .. } => note.to_string(),
            Spec::Add { note, .. } => format!("residual add, {note}"),
            Spec::SiluMul { .. } => "SwiGLU silu(gate) · up".into(),
            Spec::RmsNorm { note, .. } => format!("RMSNorm, {note}"),
            Spec::Softmax { .. } => "row softmax".into(),
            Spec::AttentionMaterialised(a) => format!(
                "causal prefill: QKᵀ, softmax (scale, mask), ·V; {} of scores",
                mib(f32_bytes(a.scores_len()))
            ),
            Spec::AttentionFlash(_) => {
                format!("causal prefill, {FLASH_BLOCK}×{FLASH_BLOCK} tiles, online softmax")
            }
            Spec::ChainSeparate(c) | Spec::ChainFused(c) => format!(
                "the seed's RMSNorm → Linear → SiLU → Linear, small-Llama widths (d {}, f {}){}",
                c.hidden,
                c.intermediate,
                if matches!(self, Spec::ChainFused(_)) {
                    format!(", {CHAIN_BLOCK}-token tiles")
                } else {
                    String::new()
                }
            ),
        };
        format!("{what}; {}", mib(ws))
    }

    /// What limits the kernel beyond the roofline, as far as its author knows; said when the
    /// prediction misses.
    pub fn caveat(&self) -> Option<String> {
        let exp = "e^x is a polynomial of about 15 FLOP, counted as 1 by the cost model (the measured e^x ceiling holds it)";
        match *self {
            Spec::Gemm { m: 1, .. } => Some(
                "a GEMV (m = 1) through gemm: each thread streams its slice of the weights once, one stream per thread; where DRAM bandwidth grows with the streams in flight, that stays below the roof (the GEMV ceiling, measured on another shape, holds it there)".into(),
            ),
            Spec::SiluMul { .. } => Some(format!("SiLU's e^x and divide: {exp}")),
            Spec::Softmax { .. } => Some(format!(
                "{exp}; three passes over each row (max, exp and sum, scale)"
            )),
            Spec::AttentionMaterialised(_) => {
                Some(format!("its softmax over the score matrix: {exp}"))
            }
            Spec::AttentionFlash(_) => Some(format!(
                "one e^x per score on the vector units ({exp}), and {FLASH_BLOCK}×{FLASH_BLOCK} tile GEMMs, each a call into gemm with its own packing"
            )),
            _ => None,
        }
    }

    /// The launches with their costs from the analysis's cost model. The working set of a launch
    /// is the bytes its cost moves (each tensor once), except the flash kernel's: Q, K, V and O
    /// once (its cost counts K and V once per query block).
    ///
    /// # Errors
    /// A chain the analysis rejects (never for the suite's shapes).
    pub fn launches(&self) -> Result<Vec<Launch>, MeasureError> {
        let p = PRECISION;
        Ok(match *self {
            Spec::Gemm { m, n, k, .. } => vec![launch(
                "gemm",
                Gemm::uniform(wide(m), wide(n), wide(k), p).cost(),
                Compute::Matrix(p),
                0.0,
            )],
            Spec::Add { n, .. } => vec![launch(
                "add",
                Elementwise {
                    elements: wide(n),
                    inputs: 2,
                    flops_per_element: ADD_FLOPS_PER_ELEMENT,
                    precision: p,
                }
                .cost(),
                Compute::Vector,
                0.0,
            )],
            Spec::SiluMul { n } => vec![launch(
                "silu_mul",
                Elementwise {
                    elements: wide(n),
                    inputs: 2,
                    flops_per_element: SILU_FLOPS_PER_ELEMENT + MUL_FLOPS_PER_ELEMENT,
                    precision: p,
                }
                .cost(),
                Compute::Vector,
                n as f64,
            )],
            Spec::RmsNorm { rows, cols, .. } => vec![launch(
                "rmsnorm",
                RmsNorm {
                    rows: wide(rows),
                    cols: wide(cols),
                    precision: p,
                    weight: p,
                }
                .cost(),
                Compute::Vector,
                0.0,
            )],
            Spec::Softmax { rows, cols } => vec![in_row_passes(launch(
                "softmax",
                Softmax {
                    rows: wide(rows),
                    cols: wide(cols),
                    scale_mask: false,
                    precision: p,
                }
                .cost(),
                Compute::Vector,
                (rows * cols) as f64,
            ))],
            Spec::AttentionMaterialised(a) => materialised_attention_launches(a),
            Spec::AttentionFlash(a) => vec![flash_attention_launch(a)],
            Spec::ChainSeparate(c) => chain_launches(c, false)?,
            Spec::ChainFused(c) => chain_launches(c, true)?,
        })
    }
}

/// `x` as the cost model's `u64`.
fn wide(x: usize) -> u64 {
    x as u64
}

/// A launch whose working set is the bytes its cost moves (each tensor once); `exps`: the e^x
/// evaluations of the kernel as written in `cpu.rs`/`vector.rs`.
fn launch(name: &str, cost: Cost, compute: Compute, exps: f64) -> Launch {
    Launch {
        name: name.to_string(),
        cost,
        compute,
        working_set: cost.bytes(),
        exps,
        exp_pass: false,
    }
}

/// `l` as a kernel whose e^x run in a pass of their own over each row already loaded (the
/// suite's softmax: max, then exp and sum, then scale; [`Launch::exp_pass`]).
fn in_row_passes(mut l: Launch) -> Launch {
    l.exp_pass = true;
    l
}

/// The visible scores of causal attention over `s` keys, `h` heads: query i sees keys 0..=i.
fn causal_scores(h: u64, s: u64) -> f64 {
    (h * s * (s + 1) / 2) as f64
}

/// Causal attention as the decoder's unfused attention: qk_matmul, softmax (scale and mask in
/// the kernel), sv_matmul.
fn materialised_attention_launches(a: AttentionShape) -> Vec<Launch> {
    let p = PRECISION;
    let (h, s, d) = (wide(a.heads), wide(a.seq), wide(a.head_dim));
    let bmm = |m, n, k| BatchedMatmul {
        batch: h,
        shared: 1,
        m,
        n,
        k,
        a: p,
        b: p,
        c: p,
        compute: p,
    };
    vec![
        launch("qk_matmul", bmm(s, s, d).cost(), Compute::Matrix(p), 0.0),
        // The same three-pass softmax as the suite's own.
        in_row_passes(launch(
            "softmax",
            Softmax {
                rows: h * s,
                cols: s,
                scale_mask: true,
                precision: p,
            }
            .cost(),
            Compute::Vector,
            // The masked scores are written as 0, not exponentiated.
            causal_scores(h, s),
        )),
        launch("sv_matmul", bmm(s, d, s).cost(), Compute::Matrix(p), 0.0),
    ]
}

/// Causal attention as one tiled kernel; its working set is Q, K, V and O once (its cost counts
/// K and V once per query block).
fn flash_attention_launch(a: AttentionShape) -> Launch {
    let p = PRECISION;
    let fa = FlashAttention {
        batch: 1,
        heads: wide(a.heads),
        kv_heads: wide(a.heads),
        head_dim: wide(a.head_dim),
        q_len: wide(a.seq),
        kv_len: wide(a.seq),
        causal: true,
        causal_count: roofline_core::ops::CausalCount::Exact,
        window: None,
        v_head_dim: None,
        kv_shared: false,
        block_q: Some(FLASH_BLOCK as u64),
        act: p,
        kv: p,
    };
    // One e^x per visible score, and one correction e^(m_old − m) per query row
    // per key block it visits (block b's rows visit blocks 0..=b).
    let (h, s) = (wide(a.heads), wide(a.seq));
    let blocks = s.div_ceil(FLASH_BLOCK as u64);
    let corrections = (0..blocks)
        .map(|b| {
            let rows = (FLASH_BLOCK as u64).min(s - b * FLASH_BLOCK as u64);
            rows * (b + 1)
        })
        .sum::<u64>()
        * h;
    Launch {
        name: "flash_attention".into(),
        cost: fa.cost(),
        compute: Compute::Matrix(p),
        working_set: Bytes(f32_bytes(4 * a.qkv_len())),
        exps: causal_scores(h, s) + corrections as f64,
        exp_pass: false,
    }
}

/// The chain's kernels as the analysis plans them: eager (four) or, `fused`, the chain plan's
/// one tiled kernel.
fn chain_launches(c: ChainShape, fused: bool) -> Result<Vec<Launch>, MeasureError> {
    let p = PRECISION;
    let spec = chain_spec(c);
    let (graph, labels, widest) = chain_graph(&spec).map_err(|e| MeasureError::new(e.0, None))?;
    let kernels = if fused {
        plan_chain(&graph, widest, p, None).0.kernels
    } else {
        plan(&graph, Preset::Eager, None).kernels
    };
    Ok(kernels
        .iter()
        .map(|k| {
            let name = k
                .nodes
                .iter()
                .filter_map(|&i| labels.get(i).cloned())
                .collect::<Vec<_>>()
                .join("+");
            // The SiLU's e^x, one per element of the t × f intermediate.
            let exps = if name.contains("silu") {
                (c.tokens * c.intermediate) as f64
            } else {
                0.0
            };
            launch(&name, k.cost, k.compute, exps)
        })
        .collect())
}

/// The analysis's description of a suite chain.
pub fn chain_spec(c: ChainShape) -> ChainSpec {
    ChainSpec {
        ops: ["rmsnorm", "linear", "silu", "linear"]
            .map(String::from)
            .to_vec(),
        tokens: c.tokens as u64,
        hidden: c.hidden as u64,
        intermediate: c.intermediate as u64,
        precision: PRECISION,
    }
}
