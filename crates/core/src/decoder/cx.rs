//! What every block of the decoder graph reads: the shapes and precisions of one forward pass
//! ([`Cx`]), the operators they make (a linear, an add, a norm) and the module names of the
//! model's family.

use crate::graph::{Emit, Role, Span, TensorId, TensorRole};
use crate::model::{Activation, Naming, NormKind, Transformer};
use crate::ops::{
    Elementwise, Gemm, LayerNorm, Op, RmsNorm, ADD_FLOPS_PER_ELEMENT, GELU_FLOPS_PER_ELEMENT,
    RELU_FLOPS_PER_ELEMENT, SILU_FLOPS_PER_ELEMENT,
};
use crate::precision::Precision;
use crate::units::to_f64;
use crate::workload::{Stage, Workload};
use TensorRole::{Activation as Act, Weight};

/// The shapes and precisions every part of the block needs.
pub(super) struct Cx<'m> {
    pub(super) model: &'m Transformer,
    pub(super) w: Precision,
    /// Group-wise scale bytes per weight.
    pub(super) w_scale: f64,
    /// Precision GEMM inputs are in and GEMMs compute in.
    pub(super) ga: Precision,
    pub(super) a: Precision,
    pub(super) c: Precision,
    pub(super) b: u64,
    pub(super) s: u64,
    pub(super) t: u64,
    /// Keys attended per sequence: seq_len in prefill; in decode the cached tokens
    /// (context + 1, or the sliding window).
    pub(super) l: u64,
    pub(super) d: u64,
    pub(super) h: u64,
    pub(super) g: u64,
    pub(super) e: u64,
    pub(super) tf: f64,
    pub(super) df: f64,
    /// Rows lm_head computes logits for ([`Workload::logit_rows`]).
    pub(super) logit_rows: u64,
    /// Every block.
    pub(super) all: Span,
    pub(super) flash: bool,
    pub(super) prefill: bool,
}

impl<'m> Cx<'m> {
    pub(super) fn new(model: &'m Transformer, workload: &Workload) -> Self {
        let p = workload.precisions;
        let prefill = workload.stage == Stage::Prefill;
        let l = if prefill {
            workload.kv_len()
        } else {
            model.cached_tokens(workload.kv_len())
        };
        Cx {
            model,
            w: p.weight,
            w_scale: p.weight_scale_bytes,
            ga: p.gemm(),
            a: p.act,
            c: p.kv,
            b: workload.batch,
            s: workload.tokens_per_seq(),
            t: workload.tokens(),
            l,
            d: model.hidden,
            h: model.heads,
            g: model.kv_heads,
            e: model.head_dim,
            tf: to_f64(workload.tokens()),
            df: to_f64(model.hidden),
            logit_rows: workload.logit_rows(),
            all: Span::all_blocks(model.layers),
            flash: workload.flash_attention,
            prefill,
        }
    }

    #[inline(always)]
    pub(super) fn linear(&self, m: u64, n: u64, k: u64, bias: bool) -> Op {
        Op::Gemm(Gemm {
            m,
            n,
            k,
            bias,
            b_scale: self.w_scale,
            a: self.ga,
            b: self.w,
            c: self.a,
            compute: self.ga,
        })
    }

    #[inline(always)]
    pub(super) fn add(&self, elements: u64) -> Op {
        Op::Elementwise(Elementwise {
            elements,
            inputs: 2,
            flops_per_element: ADD_FLOPS_PER_ELEMENT,
            precision: self.a,
        })
    }

    #[inline(always)]
    pub(super) fn act_flops(&self) -> f64 {
        match self.model.activation {
            Activation::Silu => SILU_FLOPS_PER_ELEMENT,
            Activation::Gelu => GELU_FLOPS_PER_ELEMENT,
            Activation::Relu => RELU_FLOPS_PER_ELEMENT,
        }
    }

    #[inline(always)]
    pub(super) fn norm_op(&self, rows: u64, cols: u64) -> Op {
        match self.model.norm {
            NormKind::RmsNorm => Op::RmsNorm(RmsNorm {
                rows,
                cols,
                precision: self.a,
                weight: self.a,
            }),
            NormKind::LayerNorm => Op::LayerNorm(LayerNorm {
                rows,
                cols,
                precision: self.a,
                weight: self.a,
            }),
        }
    }

    #[inline(always)]
    pub(super) fn norm_weight_elems(&self, cols: u64) -> f64 {
        match self.model.norm {
            NormKind::RmsNorm => to_f64(cols),
            NormKind::LayerNorm => 2.0 * to_f64(cols),
        }
    }

    /// Hugging Face module names of the four attention and three MLP linears.
    #[inline(always)]
    pub(super) fn names(&self) -> Names {
        match self.model.variant.naming {
            Naming::Llama | Naming::Mixtral => Names {
                o: "o_proj",
                gate: "gate_proj",
                up: "up_proj",
                down: "down_proj",
            },
            Naming::Opt => Names {
                o: "out_proj",
                gate: "gate_proj",
                up: "fc1",
                down: "fc2",
            },
            Naming::Gpt2 => Names {
                o: "attn.c_proj",
                gate: "gate_proj",
                up: "mlp.c_fc",
                down: "mlp.c_proj",
            },
        }
    }
}

/// Hugging Face module names of the attention output projection and the three MLP linears.
pub(super) struct Names {
    pub(super) o: &'static str,
    pub(super) gate: &'static str,
    pub(super) up: &'static str,
    pub(super) down: &'static str,
}

/// A norm over the hidden size in every block (`input_layernorm`, `post_attention_layernorm`):
/// its weight, its output, and the node reading `x`.
#[inline(always)]
pub(super) fn norm(
    cx: &Cx,
    gr: &mut impl Emit,
    name: &'static str,
    role: Role,
    weight: &'static str,
    out: &'static str,
    x: TensorId,
) -> TensorId {
    let wt = gr.tensor(weight, cx.norm_weight_elems(cx.d), cx.a, Weight);
    let y = gr.tensor(out, cx.tf * cx.df, cx.a, Act);
    gr.node(name, role, cx.all, cx.norm_op(cx.t, cx.d), &[x, wt], &[y]);
    y
}
