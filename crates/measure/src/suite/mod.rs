//! The kernel suite of `roofline measure kernels`: real kernels, timed, each with the FLOPs and
//! bytes the analysis's cost model gives it, so the time the measured roofline predicts for it
//! can be held against the time it took ([`roofline_core::prediction`]).
//!
//! The suite ([`Spec`], [`cpu_suite`]): GEMMs through the `gemm` crate (1×4096×4096, Llama-2-7B's
//! decode and prefill projections, a square GEMM), elementwise add (from DRAM and from L3) and
//! SiLU·multiply, RMSNorm, softmax, causal attention with a materialised score matrix and as a
//! tiled flash-style kernel, and the seed's RMSNorm → Linear → SiLU → Linear as four kernels and
//! as one fused tiled kernel. Every cost comes from [`roofline_core::ops`] (the chain's from
//! [`roofline_core::fusion::chain_graph`], [`roofline_core::fusion::plan`] and
//! [`roofline_core::fusion::plan_chain`]), never re-derived here. fp32 throughout.
//!
//! Timing ([`time_kernel`]): one warm-up execution (first touch of the outputs), one to
//! calibrate, then repetitions of enough back-to-back executions to last the method's target
//! time, until the method's stop rule ([`Method::done`]); the time is the median over the
//! window. Buffers are allocated and filled when an entry's turn comes and freed after it.
//!
//! The GPU suite (the `cuda` feature) is the same list in CUDA: [`run_gpu`].

pub mod cpu;
#[cfg(feature = "cuda")]
mod cuda;
pub mod matmul;
pub mod vector;

use crate::method::Method;
use crate::{MeasureError, Progress};
use cpu::{AttentionShape, ChainShape};
use rayon::prelude::*;
use roofline_core::cited::Cited;
use roofline_core::device::{Device, DeviceError};
use roofline_core::fusion::{chain_graph, plan, plan_chain, ChainSpec, Preset};
use roofline_core::measured::Stat;
use roofline_core::ops::{
    BatchedMatmul, Compute, Cost, Elementwise, FlashAttention, Gemm, RmsNorm, Softmax,
    ADD_FLOPS_PER_ELEMENT, MUL_FLOPS_PER_ELEMENT, SILU_FLOPS_PER_ELEMENT,
};
use roofline_core::precision::Precision;
use roofline_core::prediction::{check_suite, Ceilings, KernelTiming, Launch, SuiteCheck};
use roofline_core::units::{Bytes, BytesPerSec, FlopPerSec};
use std::time::Instant;

/// The precision of every kernel of the suite.
pub const PRECISION: Precision = Precision::Fp32;
/// Queries and keys per block of the CPU flash kernel (64 × 64 fp32 score tile: 16 KiB, in L1).
pub const FLASH_BLOCK: usize = 64;
/// Tokens per block of the CPU fused chain (a 64 × f fp32 intermediate: 172 KiB at f = 688, in
/// L2).
pub const CHAIN_BLOCK: usize = 64;

/// The calibration GEMM of the GEMM ceiling, n × n × n fp32: a square shape none of the
/// suite's entries has (their squares are 512 and 2048).
pub const CEILING_GEMM: usize = 1024;

/// The calibration GEMV of the GEMV ceiling, 1 × n × k fp32 (256 MiB of weights, from main
/// memory): a shape none of the suite's decode projections has (4096 and 11008 wide).
pub const CEILING_GEMV: (usize, usize) = (8192, 8192);

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

fn f32_bytes(elems: usize) -> f64 {
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
        let exp = "e^x is a polynomial of about 15 FLOP, counted as 1 by the cost model; where vector throughput is low (AMD Zen 1 splits every 256-bit operation in two) that makes the kernel bound by its instructions, not by memory";
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
        // `exps`: the e^x evaluations of the kernel as written in `cpu.rs`/`vector.rs`.
        let with_exps = |name: &str, cost: Cost, compute: Compute, exps: f64| Launch {
            name: name.to_string(),
            cost,
            compute,
            working_set: cost.bytes(),
            exps,
        };
        let plain = |name: &str, cost: Cost, compute: Compute| with_exps(name, cost, compute, 0.0);
        // Causal attention over `s` keys, `h` heads: query i sees keys 0..=i.
        let causal_scores = |h: u64, s: u64| (h * s * (s + 1) / 2) as f64;
        let u = |x: usize| x as u64;
        Ok(match *self {
            Spec::Gemm { m, n, k, .. } => vec![plain(
                "gemm",
                Gemm::uniform(u(m), u(n), u(k), p).cost(),
                Compute::Matrix(p),
            )],
            Spec::Add { n, .. } => vec![plain(
                "add",
                Elementwise {
                    elements: u(n),
                    inputs: 2,
                    flops_per_element: ADD_FLOPS_PER_ELEMENT,
                    precision: p,
                }
                .cost(),
                Compute::Vector,
            )],
            Spec::SiluMul { n } => vec![with_exps(
                "silu_mul",
                Elementwise {
                    elements: u(n),
                    inputs: 2,
                    flops_per_element: SILU_FLOPS_PER_ELEMENT + MUL_FLOPS_PER_ELEMENT,
                    precision: p,
                }
                .cost(),
                Compute::Vector,
                n as f64,
            )],
            Spec::RmsNorm { rows, cols, .. } => vec![plain(
                "rmsnorm",
                RmsNorm {
                    rows: u(rows),
                    cols: u(cols),
                    precision: p,
                    weight: p,
                }
                .cost(),
                Compute::Vector,
            )],
            Spec::Softmax { rows, cols } => vec![with_exps(
                "softmax",
                Softmax {
                    rows: u(rows),
                    cols: u(cols),
                    scale_mask: false,
                    precision: p,
                }
                .cost(),
                Compute::Vector,
                (rows * cols) as f64,
            )],
            Spec::AttentionMaterialised(a) => {
                // As the decoder's unfused attention: qk_matmul, softmax (scale and mask in
                // the kernel), sv_matmul.
                let (h, s, d) = (u(a.heads), u(a.seq), u(a.head_dim));
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
                    plain("qk_matmul", bmm(s, s, d).cost(), Compute::Matrix(p)),
                    with_exps(
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
                    ),
                    plain("sv_matmul", bmm(s, d, s).cost(), Compute::Matrix(p)),
                ]
            }
            Spec::AttentionFlash(a) => {
                let fa = FlashAttention {
                    batch: 1,
                    heads: u(a.heads),
                    kv_heads: u(a.heads),
                    head_dim: u(a.head_dim),
                    q_len: u(a.seq),
                    kv_len: u(a.seq),
                    causal: true,
                    window: None,
                    v_head_dim: None,
                    kv_shared: false,
                    block_q: Some(FLASH_BLOCK as u64),
                    act: p,
                    kv: p,
                };
                // One e^x per visible score, and one correction e^(m_old − m) per query row
                // per key block it visits (block b's rows visit blocks 0..=b).
                let (h, s) = (u(a.heads), u(a.seq));
                let blocks = s.div_ceil(FLASH_BLOCK as u64);
                let corrections = (0..blocks)
                    .map(|b| {
                        let rows = (FLASH_BLOCK as u64).min(s - b * FLASH_BLOCK as u64);
                        rows * (b + 1)
                    })
                    .sum::<u64>()
                    * h;
                vec![Launch {
                    name: "flash_attention".into(),
                    cost: fa.cost(),
                    compute: Compute::Matrix(p),
                    working_set: Bytes(f32_bytes(4 * a.qkv_len())),
                    exps: causal_scores(h, s) + corrections as f64,
                }]
            }
            Spec::ChainSeparate(c) | Spec::ChainFused(c) => {
                let spec = chain_spec(c);
                let (graph, labels, widest) =
                    chain_graph(&spec).map_err(|e| MeasureError::new(e.0, None))?;
                let kernels = if matches!(self, Spec::ChainFused(_)) {
                    plan_chain(&graph, widest, p, None).0.kernels
                } else {
                    plan(&graph, Preset::Eager, None).kernels
                };
                kernels
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
                        with_exps(&name, k.cost, k.compute, exps)
                    })
                    .collect()
            }
        })
    }
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

/// A suite: its entries and the fused/separate pairs whose speedups are compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// Entries, in the order they run.
    pub specs: Vec<Spec>,
    /// (what was fused, the separate entry's name, the fused entry's name).
    pub pairs: Vec<(String, String, String)>,
}

/// Llama-2-7B's hidden size (`../shared/models`, `hidden_size`).
const LLAMA_D: usize = 4096;
/// Llama-2-7B's MLP width (`intermediate_size`).
const LLAMA_F: usize = 11008;
/// The small Llama of `scripts/small-llama/config.json`: hidden 256, intermediate 688.
const SMALL_D: usize = 256;
const SMALL_F: usize = 688;

/// The CPU suite. Default: the DRAM-bound entries have working sets of 128 MiB or more (beyond
/// any L3 we run on); the run is about 15 s on two cores. `quick`: smaller shapes (still beyond
/// an 8 MiB L3 where meant for DRAM), a few seconds.
pub fn cpu_suite(quick: bool) -> Suite {
    let (prefill, square, elems, rows, seq, tokens) = if quick {
        (128, 512, 1 << 24, 4096, 512, 2048)
    } else {
        (128, 2048, 1 << 24, 4096, 1024, 8192)
    };
    let mut specs = vec![Spec::Gemm {
        m: 1,
        n: LLAMA_D,
        k: LLAMA_D,
        note: "Llama-2-7B decode, 1 token: q/k/v/o_proj",
    }];
    if !quick {
        specs.push(Spec::Gemm {
            m: 1,
            n: LLAMA_F,
            k: LLAMA_D,
            note: "Llama-2-7B decode, 1 token: gate/up_proj",
        });
        specs.push(Spec::Gemm {
            m: 1,
            n: LLAMA_D,
            k: LLAMA_F,
            note: "Llama-2-7B decode, 1 token: down_proj",
        });
    }
    specs.push(Spec::Gemm {
        m: prefill,
        n: LLAMA_D,
        k: LLAMA_D,
        note: "Llama-2-7B prefill, 128-token chunk: q/k/v/o_proj",
    });
    if !quick {
        specs.push(Spec::Gemm {
            m: prefill,
            n: LLAMA_F,
            k: LLAMA_D,
            note: "Llama-2-7B prefill, 128-token chunk: gate/up_proj",
        });
        specs.push(Spec::Gemm {
            m: prefill,
            n: LLAMA_D,
            k: LLAMA_F,
            note: "Llama-2-7B prefill, 128-token chunk: down_proj",
        });
    }
    specs.push(Spec::Gemm {
        m: square,
        n: square,
        k: square,
        note: "square",
    });
    specs.push(Spec::Add {
        n: elems,
        note: "from DRAM",
    });
    specs.push(Spec::Add {
        n: 1 << 18,
        note: "fits in L3",
    });
    specs.push(Spec::SiluMul { n: elems });
    specs.push(Spec::RmsNorm {
        rows,
        cols: LLAMA_D,
        note: "from DRAM",
    });
    specs.push(Spec::RmsNorm {
        rows: 128,
        cols: LLAMA_D,
        note: "fits in L3",
    });
    specs.push(Spec::Softmax {
        rows,
        cols: LLAMA_D,
    });
    let att = AttentionShape {
        heads: 8,
        seq,
        head_dim: 64,
    };
    specs.push(Spec::AttentionMaterialised(att));
    specs.push(Spec::AttentionFlash(att));
    let chain = ChainShape {
        tokens,
        hidden: SMALL_D,
        intermediate: SMALL_F,
    };
    specs.push(Spec::ChainSeparate(chain));
    specs.push(Spec::ChainFused(chain));
    Suite {
        specs,
        pairs: pairs(att, chain),
    }
}

/// The GPU suite: the CPU suite's kernels at sizes for a data-centre GPU (a 50 MiB L2, tens of
/// GB of HBM): DRAM-bound entries of 256 MiB or more, L2-resident ones of 12 and 16 MiB, GEMMs
/// of a 2048-token prefill and 8192³, attention over 4096 tokens. `quick`: a quarter of each.
pub fn gpu_suite(quick: bool) -> Suite {
    let (prefill, square, elems, rows, seq, tokens) = if quick {
        (512, 4096, 1 << 24, 4096, 2048, 16384)
    } else {
        (2048, 8192, 1 << 26, 16384, 4096, 65536)
    };
    let mut specs = vec![
        Spec::Gemm {
            m: 1,
            n: LLAMA_D,
            k: LLAMA_D,
            note: "Llama-2-7B decode, 1 token: q/k/v/o_proj",
        },
        Spec::Gemm {
            m: 1,
            n: LLAMA_F,
            k: LLAMA_D,
            note: "Llama-2-7B decode, 1 token: gate/up_proj",
        },
        Spec::Gemm {
            m: 1,
            n: LLAMA_D,
            k: LLAMA_F,
            note: "Llama-2-7B decode, 1 token: down_proj",
        },
        Spec::Gemm {
            m: prefill,
            n: LLAMA_D,
            k: LLAMA_D,
            note: "Llama-2-7B prefill: q/k/v/o_proj",
        },
        Spec::Gemm {
            m: prefill,
            n: LLAMA_F,
            k: LLAMA_D,
            note: "Llama-2-7B prefill: gate/up_proj",
        },
        Spec::Gemm {
            m: prefill,
            n: LLAMA_D,
            k: LLAMA_F,
            note: "Llama-2-7B prefill: down_proj",
        },
        Spec::Gemm {
            m: square,
            n: square,
            k: square,
            note: "square",
        },
        Spec::Add {
            n: elems,
            note: "from HBM",
        },
        Spec::Add {
            n: 1 << 20,
            note: "fits in L2",
        },
        Spec::SiluMul { n: elems },
        Spec::RmsNorm {
            rows,
            cols: LLAMA_D,
            note: "from HBM",
        },
        Spec::RmsNorm {
            rows: 512,
            cols: LLAMA_D,
            note: "fits in L2",
        },
        Spec::Softmax {
            rows,
            cols: LLAMA_D,
        },
    ];
    let att = AttentionShape {
        heads: 32,
        seq,
        head_dim: 64,
    };
    let chain = ChainShape {
        tokens,
        hidden: SMALL_D,
        intermediate: SMALL_F,
    };
    specs.extend([
        Spec::AttentionMaterialised(att),
        Spec::AttentionFlash(att),
        Spec::ChainSeparate(chain),
        Spec::ChainFused(chain),
    ]);
    Suite {
        specs,
        pairs: pairs(att, chain),
    }
}

fn pairs(att: AttentionShape, chain: ChainShape) -> Vec<(String, String, String)> {
    vec![
        (
            "rmsnorm → linear → silu → linear".to_string(),
            Spec::ChainSeparate(chain).name(),
            Spec::ChainFused(chain).name(),
        ),
        (
            "attention: QKᵀ → softmax → ·V".to_string(),
            Spec::AttentionMaterialised(att).name(),
            Spec::AttentionFlash(att).name(),
        ),
    ]
}

/// Checks `--only` against the suite that would run, before anything is measured.
///
/// # Errors
/// A usage error when a name of `only` is empty, or matches no kernel (listing the suite's
/// kernels).
pub fn check_only(only: &[String], gpu: bool, quick: bool) -> Result<(), MeasureError> {
    let suite = if gpu {
        gpu_suite(quick)
    } else {
        cpu_suite(quick)
    };
    // Each name must select something: `gemm,nosuch` is a typo, not "the GEMMs", and an empty
    // name (`--only ""`, `gemm,`) would select everything.
    for o in only {
        if o.trim().is_empty() {
            return Err(MeasureError::usage(
                format!("`--only {}` has an empty name", only.join(",")),
                Some("name kernels by part of their name, comma-separated: `--only gemm,chain`; leave --only out for all".into()),
            ));
        }
        let one = [o.clone()];
        if selected(suite.clone(), &one).specs.is_empty() {
            return Err(no_match(&one, &suite));
        }
    }
    Ok(())
}

/// The method of the kernel suite: repetitions of ≥ 20 ms (5 ms with `quick`), 5 to 30 of them
/// (3 to 10), until the last 5 (3) agree within 5 % (8 %), at most 1 s (0.15 s) per kernel past
/// the minimum; the median of that window.
pub fn kernel_method(quick: bool) -> Method {
    if quick {
        Method {
            target_rep: 0.005,
            min_reps: 3,
            max_reps: 10,
            window: 3,
            tolerance: 0.08,
            max_task_secs: 0.15,
        }
    } else {
        Method {
            target_rep: 0.02,
            min_reps: 5,
            max_reps: 30,
            window: 5,
            tolerance: 0.05,
            max_task_secs: 1.0,
        }
    }
}

/// Times `run` (one execution of a kernel): a warm-up execution, a calibration execution, then
/// repetitions of `units` back-to-back executions (enough for the method's target time) until
/// [`Method::done`]. Returns seconds per execution: the median, min and max over the window.
///
/// # Errors
/// The first error `run` returns.
pub fn time_kernel(
    method: &Method,
    run: &mut dyn FnMut() -> Result<(), MeasureError>,
) -> Result<Stat, MeasureError> {
    run()?;
    let started = Instant::now();
    let t0 = Instant::now();
    run()?;
    let units = method.units_for(1, t0.elapsed().as_secs_f64());
    let mut rates = Vec::new();
    loop {
        let t = Instant::now();
        for _ in 0..units {
            run()?;
        }
        let s = t.elapsed().as_secs_f64();
        if s > 0.0 {
            rates.push(units as f64 / s);
        }
        if let Some(r) = method.done(&rates, started.elapsed().as_secs_f64()) {
            return Ok(r.reciprocal());
        }
    }
}

/// `n` deterministic values in [−1, 1) (a 64-bit LCG per 64 KiB chunk, Knuth's MMIX
/// constants), written in parallel so the pages are touched by the threads that use them.
///
/// # Errors
/// Not enough memory.
pub fn filled(n: usize, seed: u64) -> Result<Vec<f32>, MeasureError> {
    let mut v = zeros(n)?;
    v.par_chunks_mut(cpu::CHUNK).enumerate().for_each(|(i, c)| {
        let mut s = (seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1;
        for x in c {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            *x = ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0;
        }
    });
    Ok(v)
}

/// `n` zeros, every page written.
///
/// # Errors
/// Not enough memory.
pub fn zeros(n: usize) -> Result<Vec<f32>, MeasureError> {
    let mut v: Vec<f32> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        MeasureError::new(
            format!("cannot allocate {} for the kernel suite", mib(f32_bytes(n))),
            Some("free some memory, or pass --quick".into()),
        )
    })?;
    v.resize(n, 0.0);
    Ok(v)
}

/// An entry ready to run: its launches and one execution of them.
pub struct Built {
    /// The launches, with their costs.
    pub launches: Vec<Launch>,
    /// One execution of every launch, in order.
    pub run: Box<dyn FnMut() -> Result<(), MeasureError>>,
}

/// Allocates and fills `spec`'s buffers on the CPU and returns it ready to run.
///
/// # Errors
/// Not enough memory.
pub fn build_cpu(spec: &Spec) -> Result<Built, MeasureError> {
    use cpu::*;
    let launches = spec.launches()?;
    let run: Box<dyn FnMut() -> Result<(), MeasureError>> = match *spec {
        Spec::Gemm { m, n, k, .. } => gemm_kernel((m, n, k), 1)?,
        Spec::Add { n, .. } => {
            let (a, b, mut o) = (filled(n, 1)?, filled(n, 2)?, zeros(n)?);
            Box::new(move || {
                add(&a, &b, &mut o);
                Ok(())
            })
        }
        Spec::SiluMul { n } => {
            let (g, u, mut o) = (filled(n, 1)?, filled(n, 2)?, zeros(n)?);
            Box::new(move || {
                silu_mul(&g, &u, &mut o);
                Ok(())
            })
        }
        Spec::RmsNorm { rows, cols, .. } => {
            let (x, w, mut o) = (
                filled(rows * cols, 1)?,
                filled(cols, 2)?,
                zeros(rows * cols)?,
            );
            Box::new(move || {
                rmsnorm(&x, &w, &mut o, cols);
                Ok(())
            })
        }
        Spec::Softmax { rows, cols } => {
            let (x, mut o) = (filled(rows * cols, 1)?, zeros(rows * cols)?);
            Box::new(move || {
                softmax(&x, &mut o, cols, 1.0, None);
                Ok(())
            })
        }
        Spec::AttentionMaterialised(a) => {
            let (q, k, v) = (
                filled(a.qkv_len(), 1)?,
                filled(a.qkv_len(), 2)?,
                filled(a.qkv_len(), 3)?,
            );
            let (mut s, mut p, mut o) = (
                zeros(a.scores_len())?,
                zeros(a.scores_len())?,
                zeros(a.qkv_len())?,
            );
            Box::new(move || attention_materialised(a, &q, &k, &v, &mut s, &mut p, &mut o))
        }
        Spec::AttentionFlash(a) => {
            let (q, k, v) = (
                filled(a.qkv_len(), 1)?,
                filled(a.qkv_len(), 2)?,
                filled(a.qkv_len(), 3)?,
            );
            let mut o = zeros(a.qkv_len())?;
            Box::new(move || flash_attention(a, &q, &k, &v, &mut o, FLASH_BLOCK, FLASH_BLOCK))
        }
        Spec::ChainSeparate(c) | Spec::ChainFused(c) => {
            let (t, d, f) = (c.tokens, c.hidden, c.intermediate);
            let x = filled(t * d, 1)?;
            let norm = filled(d, 2)?;
            // Weights scaled by 1/√fan-in, as initialisers do, so activations stay O(1).
            let mut w1 = filled(d * f, 3)?;
            let mut w2 = filled(f * d, 4)?;
            w1.iter_mut().for_each(|v| *v /= (d as f32).sqrt());
            w2.iter_mut().for_each(|v| *v /= (f as f32).sqrt());
            let mut out = zeros(t * d)?;
            if matches!(spec, Spec::ChainFused(_)) {
                Box::new(move || {
                    let w = ChainWeights {
                        norm: &norm,
                        w1: &w1,
                        w2: &w2,
                    };
                    chain_fused(c, &x, w, &mut out, CHAIN_BLOCK)
                })
            } else {
                let (mut y, mut h, mut a) = (zeros(t * d)?, zeros(t * f)?, zeros(t * f)?);
                Box::new(move || {
                    let w = ChainWeights {
                        norm: &norm,
                        w1: &w1,
                        w2: &w2,
                    };
                    chain_separate(c, &x, w, &mut y, &mut h, &mut a, &mut out)
                })
            }
        }
    };
    Ok(Built { launches, run })
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteOptions {
    /// Smaller shapes and shorter repetitions.
    pub quick: bool,
    /// Only the entries whose name contains one of these (all when empty).
    pub only: Vec<String>,
    /// CUDA device ordinal (GPU suite only).
    pub device: usize,
}

/// A timed suite.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteRun {
    /// One timing per entry, in suite order.
    pub timings: Vec<KernelTiming>,
    /// (what was fused, separate entry, fused entry).
    pub pairs: Vec<(String, String, String)>,
    /// Threads (CPU) or SMs (GPU) the kernels ran on.
    pub threads: usize,
    /// The method, one line.
    pub method: String,
    /// Caveats, one line each (GPU: each kernel's check against the CPU reference).
    pub notes: Vec<String>,
    /// The matrix library's ceilings for the hierarchical prediction
    /// ([`roofline_core::prediction::Ceilings`]): its GEMM on [`CEILING_GEMM`]³ and its GEMV on
    /// [`CEILING_GEMV`]. Measured when an entry runs on the matrix units; none otherwise, and
    /// none on the GPU.
    pub ceilings: Ceilings,
}

impl SuiteRun {
    /// Every timing held against `device`'s roofs, with the run's fused pairs and ceilings
    /// ([`roofline_core::prediction::check_suite`]; the suite's vector work is fp32).
    ///
    /// # Errors
    /// The chip lacks the fp32 peak or the main-memory bandwidth a launch needs.
    pub fn check(&self, device: &Device) -> Result<SuiteCheck, DeviceError> {
        let pairs: Vec<(&str, &str, &str)> = self
            .pairs
            .iter()
            .map(|(what, separate, fused)| (what.as_str(), separate.as_str(), fused.as_str()))
            .collect();
        check_suite(
            &self.timings,
            &pairs,
            device,
            Precision::Fp32,
            &self.ceilings,
        )
    }
}

pub(crate) fn selected(suite: Suite, only: &[String]) -> Suite {
    if only.is_empty() {
        return suite;
    }
    let keep = |n: &str| only.iter().any(|o| n.contains(o.as_str()));
    Suite {
        specs: suite
            .specs
            .into_iter()
            .filter(|s| keep(&s.name()))
            .collect(),
        pairs: suite.pairs,
    }
}

/// Times the CPU suite on the current rayon pool (every logical CPU by default).
///
/// # Errors
/// Not enough memory for an entry's buffers; `only` selecting nothing (a usage error).
pub fn run_cpu(opts: &SuiteOptions, progress: &mut dyn Progress) -> Result<SuiteRun, MeasureError> {
    check_only(&opts.only, false, opts.quick)?;
    let suite = selected(cpu_suite(opts.quick), &opts.only);
    let method = kernel_method(opts.quick);
    let (mut on_matrix, mut with_exps) = (false, false);
    for spec in &suite.specs {
        for l in spec.launches()? {
            on_matrix |= matches!(l.compute, Compute::Matrix(_));
            with_exps |= l.exps > 0.0;
        }
    }
    progress.start(suite.specs.len() as u64 + 2 * u64::from(on_matrix) + u64::from(with_exps));
    let mut ceilings = Ceilings::NONE;
    if on_matrix {
        progress.step(&format!("GEMM ceiling: gemm {CEILING_GEMM}³"));
        ceilings.gemm = Some(gemm_ceiling(&method)?);
        let (n, k) = CEILING_GEMV;
        progress.step(&format!("GEMV ceiling: gemm 1×{n}×{k}"));
        ceilings.gemv = Some(gemv_ceiling(&method)?);
    }
    if with_exps {
        progress.step("e^x ceiling");
        ceilings.exp = Some(exp_ceiling(&method)?);
    }
    let mut timings = Vec::with_capacity(suite.specs.len());
    for spec in &suite.specs {
        progress.step(&spec.name());
        let mut built = build_cpu(spec)?;
        let time = time_kernel(&method, &mut *built.run)?;
        timings.push(KernelTiming {
            name: spec.name(),
            family: spec.family().to_string(),
            note: spec.note(),
            launches: built.launches,
            time,
            caveat: spec.caveat(),
        });
    }
    progress.finish();
    let threads = rayon::current_num_threads();
    Ok(SuiteRun {
        timings,
        pairs: suite.pairs,
        threads,
        method: format!(
            "{threads} threads (rayon); warm-up and calibration executions, then {}",
            method.describe()
        ),
        notes: Vec::new(),
        ceilings,
    })
}

/// One execution of `C = A·B`, `m × n × k` fp32 row-major, through the suite's GEMM door with
/// every thread; A and B filled from `seed` and `seed + 1`.
fn gemm_kernel(
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<Box<dyn FnMut() -> Result<(), MeasureError>>, MeasureError> {
    use matmul::{matmul, Threads, View};
    let (a, b, mut c) = (
        filled(m * k, seed)?,
        filled(k * n, seed + 1)?,
        zeros(m * n)?,
    );
    Ok(Box::new(move || {
        matmul(
            &mut c,
            n,
            View::row_major(&a, m, k),
            View::row_major(&b, k, n),
            false,
            Threads::All,
        )
    }))
}

/// Times `m × n × k` through the suite's GEMM door with every thread (the suite's method):
/// the cost model's FLOPs and bytes of it, and its median seconds.
fn time_calibration(
    method: &Method,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<(Cost, Stat), MeasureError> {
    let mut run = gemm_kernel((m, n, k), seed)?;
    let time = time_kernel(method, &mut *run)?;
    Ok((
        Gemm::uniform(m as u64, n as u64, k as u64, PRECISION).cost(),
        time,
    ))
}

fn calibration_source(what: &str, (m, n, k): (usize, usize, usize), time: &Stat) -> String {
    format!(
        "the gemm crate on a {m}×{n}×{k} fp32 {what} (a calibration shape outside the suite), {} threads, median of {} repetitions: {:.3} ms",
        rayon::current_num_threads(),
        time.samples,
        time.median * 1e3
    )
}

/// The GEMM ceiling: the FLOP/s of the `gemm` crate on the [`CEILING_GEMM`]³ calibration
/// shape (2·n³ / median time), with how it was measured.
///
/// # Errors
/// Not enough memory for the operands.
pub fn gemm_ceiling(method: &Method) -> Result<Cited<FlopPerSec>, MeasureError> {
    let shape = (CEILING_GEMM, CEILING_GEMM, CEILING_GEMM);
    let (cost, time) = time_calibration(method, shape, 5)?;
    Ok(Cited::new(
        FlopPerSec(cost.flops.get() / time.median),
        calibration_source("GEMM", shape, &time),
    ))
}

/// The GEMV ceiling: the bytes/s the `gemm` crate's GEMV draws on the 1 × [`CEILING_GEMV`]
/// calibration shape (the cost model's bytes / median time), with how it was measured.
///
/// # Errors
/// Not enough memory for the operands.
pub fn gemv_ceiling(method: &Method) -> Result<Cited<BytesPerSec>, MeasureError> {
    let shape = (1, CEILING_GEMV.0, CEILING_GEMV.1);
    let (cost, time) = time_calibration(method, shape, 7)?;
    Ok(Cited::new(
        BytesPerSec(cost.bytes().get() / time.median),
        calibration_source("GEMV", shape, &time),
    ))
}

/// Elements of the e^x ceiling's calibration row: 16 KiB of fp32, in L1.
pub const CEILING_EXP_ROW: usize = 4096;

/// The e^x ceiling: e^x evaluations per second of the suite's exponential (softmax's
/// exponential pass, [`vector::exp_in_place`]) on one L1-resident row of [`CEILING_EXP_ROW`]
/// elements per thread, passed over 256 times per execution on every thread (about 1.6 ms: long enough that waking
/// the other threads is not part of the figure).
///
/// # Errors
/// Not enough memory (it needs a row per thread).
pub fn exp_ceiling(method: &Method) -> Result<Cited<f64>, MeasureError> {
    const PASSES: usize = 256;
    let threads = rayon::current_num_threads().max(1);
    let mut rows = Vec::with_capacity(threads);
    for t in 0..threads {
        rows.push(filled(CEILING_EXP_ROW, 11 + t as u64)?);
    }
    let time = time_kernel(method, &mut || {
        let sum: f32 = rows
            .par_iter_mut()
            .map(|row| {
                let mut s = 0.0;
                for _ in 0..PASSES {
                    // Scale 1/64, shift 1: values stay near e^−1, never overflow.
                    s += vector::exp_in_place(row, 1.0 / 64.0, 1.0);
                }
                s
            })
            .sum();
        std::hint::black_box(sum);
        Ok(())
    })?;
    let exps = (threads * PASSES * CEILING_EXP_ROW) as f64;
    Ok(Cited::new(
        exps / time.median,
        format!(
            "softmax's exponential pass over a {CEILING_EXP_ROW}-element row in L1, {PASSES} passes on each of {threads} threads ({}), median of {} repetitions: {:.3} ms",
            if vector::fast() { "AVX2 + FMA" } else { "SSE2" },
            time.samples,
            time.median * 1e3
        ),
    ))
}

fn no_match(only: &[String], suite: &Suite) -> MeasureError {
    MeasureError::usage(
        format!("`--only {}` matches no kernel of the suite", only.join(",")),
        Some(format!(
            "kernels: {}",
            suite
                .specs
                .iter()
                .map(Spec::name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    )
}

/// Times the GPU suite (CUDA C kernels compiled by NVRTC, cuBLAS GEMMs) on `opts.device`.
///
/// # Errors
/// Without the `cuda` feature: a usage error naming it. With it: no driver or libraries, a
/// CUDA call that failed, or a kernel whose result disagrees with the CPU reference.
pub fn run_gpu(opts: &SuiteOptions, progress: &mut dyn Progress) -> Result<SuiteRun, MeasureError> {
    #[cfg(feature = "cuda")]
    {
        cuda::run(opts, progress)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (opts, progress);
        Err(crate::gpu::without_cuda())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_core::ops::Compute;

    #[test]
    fn costs_come_from_the_cost_model() -> Result<(), Box<dyn std::error::Error>> {
        // gemm 1×4096×4096 fp32: 2·4096² = 33,554,432 FLOP; (4096 + 4096² + 4096)·4 bytes.
        let l = Spec::Gemm {
            m: 1,
            n: 4096,
            k: 4096,
            note: "",
        }
        .launches()?;
        assert_eq!(l[0].cost.flops.get(), 33_554_432.0);
        assert_eq!(
            l[0].cost.bytes().get(),
            (4096.0 + 16_777_216.0 + 4096.0) * 4.0
        );
        assert_eq!(l[0].compute, Compute::Matrix(Precision::Fp32));
        // add over 2^18: 2^18 FLOP, 3 × 2^18 × 4 = 3 MiB moved and touched.
        let l = Spec::Add {
            n: 1 << 18,
            note: "",
        }
        .launches()?;
        assert_eq!(l[0].cost.flops.get(), 262_144.0);
        assert_eq!(l[0].working_set.get(), 3.0 * 1048576.0);
        // silu·mul: 3 + 1 = 4 FLOP per element.
        let l = Spec::SiluMul { n: 10 }.launches()?;
        assert_eq!(l[0].cost.flops.get(), 40.0);
        Ok(())
    }

    #[test]
    fn materialised_attention_is_the_decoders_three_kernels(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // 2 heads × 8 tokens × 4: QKᵀ 2·2·8·8·4 = 1024 FLOP; softmax 2·8·8·7 = 896; S·V 1024.
        let a = AttentionShape {
            heads: 2,
            seq: 8,
            head_dim: 4,
        };
        let l = Spec::AttentionMaterialised(a).launches()?;
        let names: Vec<&str> = l.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["qk_matmul", "softmax", "sv_matmul"]);
        let f: Vec<f64> = l.iter().map(|l| l.cost.flops.get()).collect();
        assert_eq!(f, [1024.0, 896.0, 1024.0]);
        // Scores 2·8·8·4 = 512 bytes written by QKᵀ.
        assert_eq!(l[0].cost.bytes_written.get(), 512.0);
        // Flash: causal pairs 8·9/2 = 36 per head; 2·36·(4·4 + 7) = 1656 FLOP; writes O only.
        let l = Spec::AttentionFlash(a).launches()?;
        assert_eq!(l[0].cost.flops.get(), 1656.0);
        assert_eq!(l[0].cost.bytes_written.get(), 2.0 * 8.0 * 4.0 * 4.0);
        assert_eq!(l[0].working_set.get(), 4.0 * 64.0 * 4.0);
        Ok(())
    }

    #[test]
    fn each_launch_declares_the_exponentials_its_kernel_evaluates(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // 2 heads × 128 causal tokens: 128·129/2 = 8256 visible scores per head, 16,512 in all,
        // each exponentiated once (masked ones are written as 0).
        let a = AttentionShape {
            heads: 2,
            seq: 128,
            head_dim: 4,
        };
        let l = Spec::AttentionMaterialised(a).launches()?;
        let e: Vec<f64> = l.iter().map(|l| l.exps).collect();
        assert_eq!(e, [0.0, 16_512.0, 0.0]);
        // Flash, 64-row blocks: the same 16,512, plus one correction per query row per key
        // block it visits: block 0's 64 rows visit 1 block, block 1's visit 2: 64 + 128 = 192
        // per head, 384 for two: 16,896.
        let l = Spec::AttentionFlash(a).launches()?;
        assert_eq!(l[0].exps, 16_896.0);
        // Softmax rows × cols; SiLU·mul one per element; add, RMSNorm and GEMMs none.
        let sm = Spec::Softmax { rows: 3, cols: 5 }.launches()?;
        assert_eq!(sm[0].exps, 15.0);
        assert_eq!(Spec::SiluMul { n: 7 }.launches()?[0].exps, 7.0);
        let g = Spec::Gemm {
            m: 2,
            n: 3,
            k: 4,
            note: "",
        };
        assert_eq!(g.launches()?[0].exps, 0.0);
        // The chain: only the SiLU launch (or the fused one) exponentiates, T·f = 16·12 = 192.
        let c = ChainShape {
            tokens: 16,
            hidden: 8,
            intermediate: 12,
        };
        let sep = Spec::ChainSeparate(c).launches()?;
        let e: Vec<f64> = sep.iter().map(|l| l.exps).collect();
        assert_eq!(e, [0.0, 0.0, 192.0, 0.0]);
        assert_eq!(Spec::ChainFused(c).launches()?[0].exps, 192.0);
        Ok(())
    }

    #[test]
    fn the_chain_is_four_launches_or_one_with_the_fused_bytes(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // T 16, d 8, f 12, fp32. Separate: rmsnorm, linear1, silu, linear2. Fused: reads x
        // (16·8), the norm weight (8), W1 and W2 (2·8·12); writes out (16·8); × 4 bytes.
        let c = ChainShape {
            tokens: 16,
            hidden: 8,
            intermediate: 12,
        };
        let sep = Spec::ChainSeparate(c).launches()?;
        let names: Vec<&str> = sep.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["rmsnorm", "linear1", "silu", "linear2"]);
        let fused = Spec::ChainFused(c).launches()?;
        assert_eq!(fused.len(), 1);
        assert_eq!(fused[0].name, "rmsnorm+linear1+silu+linear2");
        assert_eq!(
            fused[0].cost.bytes_read.get(),
            (16.0 * 8.0 + 8.0 + 2.0 * 8.0 * 12.0) * 4.0
        );
        assert_eq!(fused[0].cost.bytes_written.get(), 16.0 * 8.0 * 4.0);
        // The same FLOPs either way: 4·16·8·12 (two GEMMs) + 4·16·8 (norm) + 3·16·12 (silu).
        let total: f64 = sep.iter().map(|l| l.cost.flops.get()).sum();
        assert_eq!(total, 6144.0 + 512.0 + 576.0);
        assert_eq!(fused[0].cost.flops.get(), total);
        Ok(())
    }

    #[test]
    fn every_entry_builds_and_runs_at_a_small_size() -> Result<(), Box<dyn std::error::Error>> {
        let a = AttentionShape {
            heads: 2,
            seq: 40,
            head_dim: 8,
        };
        let c = ChainShape {
            tokens: 70,
            hidden: 16,
            intermediate: 24,
        };
        let specs = [
            Spec::Gemm {
                m: 1,
                n: 300,
                k: 20,
                note: "",
            },
            Spec::Gemm {
                m: 9,
                n: 7,
                k: 5,
                note: "",
            },
            Spec::Add { n: 100, note: "" },
            Spec::SiluMul { n: 100 },
            Spec::RmsNorm {
                rows: 3,
                cols: 50,
                note: "",
            },
            Spec::Softmax { rows: 3, cols: 50 },
            Spec::AttentionMaterialised(a),
            Spec::AttentionFlash(a),
            Spec::ChainSeparate(c),
            Spec::ChainFused(c),
        ];
        let method = kernel_method(true);
        for s in specs {
            let mut b = build_cpu(&s)?;
            let t = time_kernel(&method, &mut *b.run)?;
            assert!(
                t.median > 0.0 && t.min <= t.median && t.median <= t.max,
                "{s:?}"
            );
            assert!(!s.note().is_empty());
        }
        Ok(())
    }

    #[test]
    fn suites_have_unique_names_and_their_pairs_exist() -> Result<(), Box<dyn std::error::Error>> {
        for quick in [false, true] {
            let s = cpu_suite(quick);
            let names: Vec<String> = s.specs.iter().map(Spec::name).collect();
            for (i, n) in names.iter().enumerate() {
                assert!(!names[i + 1..].contains(n), "{n} twice");
            }
            for (_, a, b) in &s.pairs {
                assert!(names.contains(a) && names.contains(b));
            }
        }
        assert_eq!(cpu_suite(false).specs.len(), 17);
        // `only` keeps what matches and says what there is when nothing does.
        let e = run_cpu(
            &SuiteOptions {
                quick: true,
                only: vec!["nothing".into()],
                device: 0,
            },
            &mut crate::NoProgress,
        )
        .unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Usage);
        assert!(e
            .hint
            .ok_or("expected a value, got None")?
            .contains("gemm 1×4096×4096"));
        Ok(())
    }
}
