//! Builds the operator graph of a decoder-only transformer (Llama family) for one forward pass.
//!
//! Per block, in forward order (Hugging Face `LlamaDecoderLayer`): input_layernorm, q_proj,
//! k_proj, v_proj, rotary_emb, kv_cache_write, attention (qk_matmul, softmax, sv_matmul; or one
//! fused `attention`), o_proj, attn_residual_add, post_attention_layernorm, gate_proj, up_proj,
//! act_fn, act_mul, down_proj, mlp_residual_add. Once per model: embed_tokens, norm, lm_head (on the last
//! position of each sequence, or on every position: [`crate::workload::Logits`]).
//!
//! Notation: B batch, s tokens per sequence in this pass, T = B·s, L keys per sequence
//! ([`Workload::kv_len`]), d hidden, h heads, g kv heads, e head_dim, f intermediate, V vocab;
//! w, a, c bytes per element of weights, activations, KV cache.

use crate::graph::{Built, Emit, OpGraph, Reshape, Role, Span, TensorId, TensorRole};
use crate::model::{
    Activation, Mla, MlpKind, Moe, Naming, NormKind, Positions, Transformer, Variant,
};
use crate::one_op::AttentionSpec;
use crate::ops::{
    BatchedMatmul, CausalCount, Elementwise, Embedding, ExpertGemm, Gemm, KvCacheWrite, LayerNorm,
    Op, RmsNorm, Rotary, Softmax, ADD_FLOPS_PER_ELEMENT, GELU_FLOPS_PER_ELEMENT,
    MUL_FLOPS_PER_ELEMENT, RELU_FLOPS_PER_ELEMENT, SILU_FLOPS_PER_ELEMENT, TOKEN_ID_BYTES,
};
use crate::precision::Precision;
use crate::units::to_f64;
use crate::units::Bytes;
use crate::workload::{Stage, Workload};

/// The operator graph of one forward pass of `model` under `workload`.
///
/// Both are assumed validated ([`Transformer::validate`], [`Workload::validate`]).
pub fn build_graph(model: &Transformer, workload: &Workload) -> OpGraph {
    let mut gr = OpGraph::new(model.layers);
    emit(model, workload, &mut gr);
    gr.built = Some(Built::new(
        Blueprint::of(model, workload),
        model.parameters(),
    ));
    gr
}

/// [`build_graph`] into an existing graph, replacing what it held and keeping its buffers: once
/// they have room for the model's nodes and tensors, this allocates nothing (the sweep and
/// [`crate::analysis::analyze_into`] rebuild one graph per configuration this way).
///
/// When `gr` was last built by this function or [`build_graph`] for a model of the same shape,
/// in the same stage and attention form (its blueprint), only what a new batch, length or
/// precision changes is rewritten: each tensor's bytes and precision and each node's operator
/// and cost. Names, roles, spans, edges and liveness stay as they are. Otherwise the graph is
/// built afresh. Either way the result equals [`build_graph`]'s (checked after every rewrite in
/// debug builds, and by a test over every preset and many workloads).
///
/// Both are assumed validated ([`Transformer::validate`], [`Workload::validate`]).
pub fn build_into(model: &Transformer, workload: &Workload, gr: &mut OpGraph) {
    build_from(model, workload, &Blueprint::of(model, workload), gr);
}

/// [`build_into`] for a caller that already has `blueprint`, which must be
/// `Blueprint::of(model, workload)`; returns the model's parameter count
/// ([`Transformer::parameters`]), kept with the graph.
#[inline(always)]
pub(crate) fn build_from(
    model: &Transformer,
    workload: &Workload,
    blueprint: &Blueprint,
    gr: &mut OpGraph,
) -> u64 {
    let same = gr.built.as_ref().is_some_and(|b| b.blueprint == *blueprint);
    rebuild(model, workload, blueprint, same, gr)
}

/// [`build_from`] for a caller that compared `gr`'s blueprint with `blueprint` already: `same`
/// when `gr` was built from it.
#[inline(always)]
pub(crate) fn rebuild(
    model: &Transformer,
    workload: &Workload,
    blueprint: &Blueprint,
    same: bool,
    gr: &mut OpGraph,
) -> u64 {
    debug_assert_eq!(*blueprint, Blueprint::of(model, workload));
    debug_assert_eq!(
        same,
        gr.built.as_ref().is_some_and(|b| b.blueprint == *blueprint)
    );
    if let (true, Some(parameters)) = (same, gr.built.as_ref().map(|b| b.parameters)) {
        let mut reshape = Reshape::new(gr);
        emit(model, workload, &mut reshape);
        if reshape.finish() {
            gr.layers = model.layers;
            // Rebuilt once in place: the structure is being reused, so index its liveness.
            if !gr.live_indexed() {
                gr.index_live();
            }
            debug_assert_eq!(*gr, build_graph(model, workload), "a rewrite in place");
            return parameters;
        }
    }
    gr.clear(model.layers);
    emit(model, workload, gr);
    let parameters = model.parameters();
    gr.built = Some(Built::new(*blueprint, parameters));
    parameters
}

/// [`emit`] for the tests of [`crate::graph`]'s writers.
#[cfg(test)]
pub(crate) fn emit_for_tests(model: &Transformer, workload: &Workload, gr: &mut impl Emit) {
    emit(model, workload, gr);
}

/// What decides the structure of a decoder's graph (its nodes, their names, roles and spans,
/// and its edges): the model's shape without its name, and the stage and attention form. Batch,
/// sequence length, context and precisions only size the tensors and shape the operators.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Blueprint {
    dims: [u64; 7],
    flags: [bool; 4],
    norm: NormKind,
    mlp: MlpKind,
    activation: Activation,
    variant: Variant,
    stage: Stage,
    flash_attention: bool,
}

impl Blueprint {
    /// Every field of both is named, so a field added to either must be placed here or
    /// declared as not deciding the structure.
    #[inline(always)]
    pub(crate) fn of(model: &Transformer, workload: &Workload) -> Self {
        let Transformer {
            name: _,
            architecture: _,
            hidden,
            layers,
            heads,
            kv_heads,
            head_dim,
            intermediate,
            vocab,
            tie_embeddings,
            qkv_bias,
            o_bias,
            mlp_bias,
            norm,
            mlp,
            activation,
            max_position_embeddings: _,
            variant,
        } = model;
        let Workload {
            stage,
            batch: _,
            seq_len: _,
            context: _,
            cached: _,
            precisions: _,
            flash_attention,
            // Only lm_head's rows and the logits' size: the same node either way.
            logits: _,
        } = workload;
        Self {
            dims: [
                *hidden,
                *layers,
                *heads,
                *kv_heads,
                *head_dim,
                *intermediate,
                *vocab,
            ],
            flags: [*tie_embeddings, *qkv_bias, *o_bias, *mlp_bias],
            norm: *norm,
            mlp: *mlp,
            activation: *activation,
            variant: *variant,
            stage: *stage,
            flash_attention: *flash_attention,
        }
    }
}

/// Appends the operator graph of one forward pass of `model` under `workload` to `gr`, in
/// forward order: every tensor ([`OpGraph::tensor`]) and every node ([`OpGraph::node`]).
fn emit(model: &Transformer, workload: &Workload, gr: &mut impl Emit) {
    let cx = Cx::new(model, workload);
    let x0 = embed(&cx, gr);
    let x1 = norm(
        &cx,
        gr,
        "input_layernorm",
        Role::AttentionNorm,
        "input_layernorm.weight",
        "attn_norm_out",
        x0,
    );
    let attn_out = match model.variant.mla {
        Some(m) => attention_mla(&cx, gr, &m, x1),
        None => attention_mha(&cx, gr, x1),
    };
    let x2 = gr.tensor("hidden_mid", cx.tf * cx.df, cx.a, Act);
    gr.node(
        "attn_residual_add",
        Role::AttentionResidual,
        cx.all,
        cx.add(cx.t * cx.d),
        &[x0, attn_out],
        &[x2],
    );
    let x3 = norm(
        &cx,
        gr,
        "post_attention_layernorm",
        Role::MlpNorm,
        "post_attention_layernorm.weight",
        "mlp_norm_out",
        x2,
    );
    let mlp_out = gr.tensor("down", cx.tf * cx.df, cx.a, Act);
    match model.variant.moe {
        Some(m) => {
            let moe_layers = model.moe_layers();
            if m.dense_layers > 0 {
                let dense = m.dense_layers.min(model.layers);
                mlp_dense(&cx, gr, Span::blocks(0, dense), x3, mlp_out);
            }
            if moe_layers > 0 {
                let first_moe = model.layers - moe_layers;
                mlp_moe(
                    &cx,
                    gr,
                    &m,
                    Span::blocks(first_moe, moe_layers),
                    x3,
                    mlp_out,
                );
            }
        }
        None => mlp_dense(&cx, gr, cx.all, x3, mlp_out),
    }
    let x4 = gr.tensor("hidden_out", cx.tf * cx.df, cx.a, Act);
    gr.node(
        "mlp_residual_add",
        Role::MlpResidual,
        cx.all,
        cx.add(cx.t * cx.d),
        &[x2, mlp_out],
        &[x4],
    );
    head(&cx, gr, x4);
}

use TensorRole::{Activation as Act, Input, KvCache, Weight};

/// The shapes and precisions every part of the block needs.
struct Cx<'m> {
    model: &'m Transformer,
    w: Precision,
    /// Group-wise scale bytes per weight.
    w_scale: f64,
    /// Precision GEMM inputs are in and GEMMs compute in.
    ga: Precision,
    a: Precision,
    c: Precision,
    b: u64,
    s: u64,
    t: u64,
    /// Keys attended per sequence: seq_len in prefill; in decode the cached tokens
    /// (context + 1, or the sliding window).
    l: u64,
    d: u64,
    h: u64,
    g: u64,
    e: u64,
    tf: f64,
    df: f64,
    /// Rows lm_head computes logits for ([`Workload::logit_rows`]).
    logit_rows: u64,
    /// Every block.
    all: Span,
    flash: bool,
    prefill: bool,
}

impl<'m> Cx<'m> {
    fn new(model: &'m Transformer, workload: &Workload) -> Self {
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
    fn linear(&self, m: u64, n: u64, k: u64, bias: bool) -> Op {
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
    fn add(&self, elements: u64) -> Op {
        Op::Elementwise(Elementwise {
            elements,
            inputs: 2,
            flops_per_element: ADD_FLOPS_PER_ELEMENT,
            precision: self.a,
        })
    }

    #[inline(always)]
    fn act_flops(&self) -> f64 {
        match self.model.activation {
            Activation::Silu => SILU_FLOPS_PER_ELEMENT,
            Activation::Gelu => GELU_FLOPS_PER_ELEMENT,
            Activation::Relu => RELU_FLOPS_PER_ELEMENT,
        }
    }

    #[inline(always)]
    fn norm_op(&self, rows: u64, cols: u64) -> Op {
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
    fn norm_weight_elems(&self, cols: u64) -> f64 {
        match self.model.norm {
            NormKind::RmsNorm => to_f64(cols),
            NormKind::LayerNorm => 2.0 * to_f64(cols),
        }
    }

    /// Hugging Face module names of the four attention and three MLP linears.
    #[inline(always)]
    fn names(&self) -> Names {
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

struct Names {
    o: &'static str,
    gate: &'static str,
    up: &'static str,
    down: &'static str,
}

#[inline(always)]
fn norm(
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

/// Token embedding, and for learned positions the position embedding and their sum.
#[inline(always)]
fn embed(cx: &Cx, gr: &mut impl Emit) -> TensorId {
    let m = cx.model;
    let gpt2 = m.variant.naming == Naming::Gpt2;
    let ids = gr.tensor_bytes("input_ids", Bytes(cx.tf * TOKEN_ID_BYTES), cx.a, Input);
    let emb_w = gr.tensor("embed_tokens.weight", to_f64(m.vocab * cx.d), cx.w, Weight);
    let lookup = Op::Embedding(Embedding {
        tokens: cx.t,
        hidden: cx.d,
        weight: cx.w,
        act: cx.a,
    });
    match m.variant.positions {
        Positions::Rotary => {
            let x0 = gr.tensor("hidden_in", cx.tf * cx.df, cx.a, Act);
            gr.node(
                "embed_tokens",
                Role::TokenEmbedding,
                Span::Prologue,
                lookup.clone(),
                &[ids, emb_w],
                &[x0],
            );
            x0
        }
        Positions::Learned { rows } => {
            let tok = gr.tensor("token_embeds", cx.tf * cx.df, cx.a, Act);
            gr.node(
                if gpt2 { "wte" } else { "embed_tokens" },
                Role::TokenEmbedding,
                Span::Prologue,
                lookup.clone(),
                &[ids, emb_w],
                &[tok],
            );
            let pos_ids =
                gr.tensor_bytes("position_ids", Bytes(cx.tf * TOKEN_ID_BYTES), cx.a, Input);
            let pos_w = gr.tensor("embed_positions.weight", to_f64(rows * cx.d), cx.w, Weight);
            let pos = gr.tensor("position_embeds", cx.tf * cx.df, cx.a, Act);
            gr.node(
                if gpt2 { "wpe" } else { "embed_positions" },
                Role::PositionEmbedding,
                Span::Prologue,
                lookup,
                &[pos_ids, pos_w],
                &[pos],
            );
            let x0 = gr.tensor("hidden_in", cx.tf * cx.df, cx.a, Act);
            gr.node(
                "embed_add",
                Role::EmbeddingAdd,
                Span::Prologue,
                cx.add(cx.t * cx.d),
                &[tok, pos],
                &[x0],
            );
            x0
        }
    }
}

/// Multi-head (GQA, MQA) attention: projections, optional q/k norms, rotary, KV-cache write,
/// attention, output projection. Returns the output projection's result.
#[inline(always)]
fn attention_mha(cx: &Cx, gr: &mut impl Emit, x1: TensorId) -> TensorId {
    let m = cx.model;
    let (t, d, h, g, e) = (cx.t, cx.d, cx.h, cx.g, cx.e);
    let (tf, df) = (cx.tf, cx.df);
    let (qf, kvf) = (to_f64(h * e), to_f64(g * e));
    let (w, a, c) = (cx.w, cx.a, cx.c);
    let qb = m.qkv_bias;
    let bias = |n: f64| if qb { n } else { 0.0 };
    let q = gr.tensor("q", tf * qf, a, Act);
    let k = gr.tensor("k", tf * kvf, a, Act);
    let vv = gr.tensor("v", tf * kvf, a, Act);
    if m.variant.naming == Naming::Gpt2 {
        let n = (h + 2 * g) * e;
        let wqkv = gr.tensor("c_attn.weight", df * to_f64(n) + bias(to_f64(n)), w, Weight);
        gr.node(
            "c_attn",
            Role::QkvProj,
            cx.all,
            cx.linear(t, n, d, qb),
            &[x1, wqkv],
            &[q, k, vv],
        );
    } else {
        let wq = gr.tensor("q_proj.weight", df * qf + bias(qf), w, Weight);
        let wk = gr.tensor("k_proj.weight", df * kvf + bias(kvf), w, Weight);
        let wv = gr.tensor("v_proj.weight", df * kvf + bias(kvf), w, Weight);
        gr.node(
            "q_proj",
            Role::QProj,
            cx.all,
            cx.linear(t, h * e, d, qb),
            &[x1, wq],
            &[q],
        );
        gr.node(
            "k_proj",
            Role::KProj,
            cx.all,
            cx.linear(t, g * e, d, qb),
            &[x1, wk],
            &[k],
        );
        gr.node(
            "v_proj",
            Role::VProj,
            cx.all,
            cx.linear(t, g * e, d, qb),
            &[x1, wv],
            &[vv],
        );
    }
    let (mut q, mut k) = (q, k);
    if m.variant.qk_norm {
        for (name, role, wname, out, heads, x) in [
            (
                "q_norm",
                Role::QNorm,
                "q_norm.weight",
                "q_normed",
                h,
                &mut q,
            ),
            (
                "k_norm",
                Role::KNorm,
                "k_norm.weight",
                "k_normed",
                g,
                &mut k,
            ),
        ] {
            let wt = gr.tensor(wname, to_f64(e), a, Weight);
            let y = gr.tensor(out, tf * to_f64(heads * e), a, Act);
            let op = Op::RmsNorm(RmsNorm {
                rows: t * heads,
                cols: e,
                precision: a,
                weight: a,
            });
            gr.node(name, role, cx.all, op, &[*x, wt], &[y]);
            *x = y;
        }
    }
    let (q_rot, k_rot) = match m.variant.positions {
        Positions::Rotary => {
            let tab = gr.tensor("rope_cos_sin", 2.0 * tf * to_f64(e), a, Input);
            let q_rot = gr.tensor("q_rot", tf * qf, a, Act);
            let k_rot = gr.tensor("k_rot", tf * kvf, a, Act);
            let op = Op::Rotary(Rotary {
                tokens: t,
                heads: h + g,
                head_dim: e,
                precision: a,
            });
            gr.node(
                "rotary_emb",
                Role::Rotary,
                cx.all,
                op,
                &[q, k, tab],
                &[q_rot, k_rot],
            );
            (q_rot, k_rot)
        }
        Positions::Learned { .. } => (q, k),
    };
    let kv_new = gr.tensor("kv_cache_update", 2.0 * tf * kvf, c, KvCache);
    let write = Op::KvCacheWrite(KvCacheWrite {
        tokens: t,
        kv_heads: g,
        head_dim: e,
        act: a,
        kv: c,
    });
    gr.node(
        "kv_cache_write",
        Role::KvCacheWrite,
        cx.all,
        write,
        &[k_rot, vv],
        &[kv_new],
    );

    let bl = to_f64(cx.b * cx.l);
    let k_cache = gr.tensor("k_cache", bl * kvf, c, KvCache);
    let v_cache = gr.tensor("v_cache", bl * kvf, c, KvCache);
    let attn = gr.tensor("attn_out", tf * qf, a, Act);
    let window = if cx.prefill {
        m.variant.sliding_window
    } else {
        None
    };
    attention_core(
        cx,
        gr,
        AttnShape {
            heads: h,
            kv_heads: g,
            qk_dim: e,
            v_dim: e,
            kv_shared: false,
            window,
            kv: c,
        },
        [q_rot, k_cache, v_cache],
        attn,
    );
    let names = cx.names();
    let wo = gr.tensor(
        "o_proj.weight",
        qf * df + if m.o_bias { df } else { 0.0 },
        w,
        Weight,
    );
    let o = gr.tensor("o_proj_out", tf * df, a, Act);
    gr.node(
        names.o,
        Role::OProj,
        cx.all,
        cx.linear(t, d, h * e, m.o_bias),
        &[attn, wo],
        &[o],
    );
    o
}

/// The attention kernels proper: one fused kernel, or QKᵀ, softmax and S·V.
struct AttnShape {
    heads: u64,
    /// Key/value heads per sequence (1 for MLA's shared latent).
    kv_heads: u64,
    qk_dim: u64,
    v_dim: u64,
    kv_shared: bool,
    window: Option<u64>,
    /// Precision of K and V as read (the cache, or activations for MLA's expanded prefill).
    kv: Precision,
}

#[inline(always)]
fn attention_core(
    cx: &Cx,
    gr: &mut impl Emit,
    sh: AttnShape,
    [q, k_src, v_src]: [TensorId; 3],
    out: TensorId,
) {
    let (b, s, l, a) = (cx.b, cx.s, cx.l, cx.a);
    // The kernels as `roofline op attention` builds them (one description, one formula).
    let spec = AttentionSpec {
        batch: b,
        heads: sh.heads,
        kv_heads: sh.kv_heads,
        head_dim: sh.qk_dim,
        head_dim_v: (sh.v_dim != sh.qk_dim).then_some(sh.v_dim),
        q_len: s,
        kv_len: l,
        causal: true,
        causal_count: CausalCount::Exact,
        window: sh.window,
        kv_shared: sh.kv_shared,
        fused: cx.flash,
        act: a,
        kv: sh.kv,
    };
    if cx.flash {
        gr.node(
            "attention",
            Role::FusedAttention,
            cx.all,
            spec.fused_kernel(),
            &[q, k_src, v_src],
            &[out],
        );
        return;
    }
    // Eager attention computes every score, masked or not (Hugging Face `eager_attention_forward`).
    let score_elems = to_f64(b * sh.heads * s) * to_f64(l);
    let scores = gr.tensor("scores", score_elems, a, Act);
    let probs = gr.tensor("probs", score_elems, a, Act);
    gr.node(
        "qk_matmul",
        Role::AttentionScores,
        cx.all,
        spec.qk_kernel(),
        &[q, k_src],
        &[scores],
    );
    gr.node(
        "softmax",
        Role::AttentionSoftmax,
        cx.all,
        spec.softmax_kernel(),
        &[scores],
        &[probs],
    );
    gr.node(
        "sv_matmul",
        Role::AttentionValues,
        cx.all,
        spec.sv_kernel(),
        &[probs, v_src],
        &[out],
    );
}

/// Multi-head latent attention (DeepSeek-V2 §2.1, DeepSeek-V3): low-rank q and kv paths, a
/// cache of kv_lora_rank + qk_rope_head_dim elements per token. Prefill expands the latent
/// into per-head keys and values (kv_b_proj); decode uses the absorbed form, attending over the
/// latent directly with W_UK folded into the query and W_UV applied after.
fn attention_mla(cx: &Cx, gr: &mut impl Emit, m: &Mla, x1: TensorId) -> TensorId {
    let (t, d, h) = (cx.t, cx.d, cx.h);
    let (tf, df) = (cx.tf, cx.df);
    let (w, a, c) = (cx.w, cx.a, cx.c);
    let (nope, rope, r_kv, vd) = (
        m.qk_nope_head_dim,
        m.qk_rope_head_dim,
        m.kv_lora_rank,
        m.v_head_dim,
    );
    let qk = m.qk_head_dim();
    let q = gr.tensor("q", tf * to_f64(h * qk), a, Act);
    match m.q_lora_rank {
        Some(r_q) => {
            let wa = gr.tensor("q_a_proj.weight", df * to_f64(r_q), w, Weight);
            let qa = gr.tensor("q_latent", tf * to_f64(r_q), a, Act);
            gr.node(
                "q_a_proj",
                Role::QDownProj,
                cx.all,
                cx.linear(t, r_q, d, false),
                &[x1, wa],
                &[qa],
            );
            let nw = gr.tensor("q_a_layernorm.weight", to_f64(r_q), a, Weight);
            let qn = gr.tensor("q_latent_normed", tf * to_f64(r_q), a, Act);
            let op = Op::RmsNorm(RmsNorm {
                rows: t,
                cols: r_q,
                precision: a,
                weight: a,
            });
            gr.node(
                "q_a_layernorm",
                Role::QLatentNorm,
                cx.all,
                op,
                &[qa, nw],
                &[qn],
            );
            let wb = gr.tensor("q_b_proj.weight", to_f64(r_q * h * qk), w, Weight);
            gr.node(
                "q_b_proj",
                Role::QUpProj,
                cx.all,
                cx.linear(t, h * qk, r_q, false),
                &[qn, wb],
                &[q],
            );
        }
        None => {
            let wq = gr.tensor("q_proj.weight", df * to_f64(h * qk), w, Weight);
            gr.node(
                "q_proj",
                Role::QProj,
                cx.all,
                cx.linear(t, h * qk, d, false),
                &[x1, wq],
                &[q],
            );
        }
    }
    let wkva = gr.tensor(
        "kv_a_proj_with_mqa.weight",
        df * to_f64(r_kv + rope),
        w,
        Weight,
    );
    let kva = gr.tensor("kv_latent_and_rope_key", tf * to_f64(r_kv + rope), a, Act);
    gr.node(
        "kv_a_proj_with_mqa",
        Role::KvDownProj,
        cx.all,
        cx.linear(t, r_kv + rope, d, false),
        &[x1, wkva],
        &[kva],
    );
    let nw = gr.tensor("kv_a_layernorm.weight", to_f64(r_kv), a, Weight);
    let ckv = gr.tensor("kv_latent", tf * to_f64(r_kv), a, Act);
    let op = Op::RmsNorm(RmsNorm {
        rows: t,
        cols: r_kv,
        precision: a,
        weight: a,
    });
    gr.node(
        "kv_a_layernorm",
        Role::KvLatentNorm,
        cx.all,
        op,
        &[kva, nw],
        &[ckv],
    );
    // Rotary on the rope part of every query head and of the one shared key.
    let tab = gr.tensor("rope_cos_sin", 2.0 * tf * to_f64(rope), a, Input);
    let q_rot = gr.tensor("q_rot", tf * to_f64(h * qk), a, Act);
    let k_rope = gr.tensor("k_rope", tf * to_f64(rope), a, Act);
    let op = Op::Rotary(Rotary {
        tokens: t,
        heads: h + 1,
        head_dim: rope,
        precision: a,
    });
    gr.node(
        "rotary_emb",
        Role::Rotary,
        cx.all,
        op,
        &[q, kva, tab],
        &[q_rot, k_rope],
    );
    // The cache holds the latent and the rotary key: (kv_lora_rank + qk_rope_head_dim) per token,
    // written as one "head" of half that width for K and V each (exact when the sum is even).
    let cache_elems = m.cache_elements();
    let kv_new = gr.tensor("kv_cache_update", tf * to_f64(cache_elems), c, KvCache);
    let write = Op::KvCacheWrite(KvCacheWrite {
        tokens: t,
        kv_heads: 1,
        head_dim: cache_elems.div_ceil(2),
        act: a,
        kv: c,
    });
    gr.node(
        "kv_cache_write",
        Role::KvCacheWrite,
        cx.all,
        write,
        &[ckv, k_rope],
        &[kv_new],
    );

    let wkvb_elems = to_f64(r_kv * h * (nope + vd));
    let attn_v = gr.tensor("attn_out", tf * to_f64(h * vd), a, Act);
    if cx.prefill {
        // Expand the latent of every key into per-head K (nope part) and V: the b·l keys
        // attended (the new tokens, and the cached ones after a cached prefix).
        let wkvb = gr.tensor("kv_b_proj.weight", wkvb_elems, w, Weight);
        let bl = to_f64(cx.b * cx.l);
        let kv = gr.tensor("k_nope_and_v", bl * to_f64(h * (nope + vd)), a, Act);
        gr.node(
            "kv_b_proj",
            Role::KvUpProj,
            cx.all,
            cx.linear(cx.b * cx.l, h * (nope + vd), r_kv, false),
            &[ckv, wkvb],
            &[kv],
        );
        attention_core(
            cx,
            gr,
            AttnShape {
                heads: h,
                kv_heads: h,
                qk_dim: qk,
                v_dim: vd,
                kv_shared: false,
                window: None,
                kv: a,
            },
            [q_rot, kv, kv],
            attn_v,
        );
    } else {
        // Absorbed: q_nope·W_UK per head gives a query in latent space; attention reads the
        // cached latent (576 wide: latent + rotary key) once for all heads; W_UV maps the
        // latent output back to v_head_dim.
        let wuk = gr.tensor("kv_b_proj.weight", wkvb_elems, w, Weight);
        let q_lat = gr.tensor("q_in_latent", tf * to_f64(h * (r_kv + rope)), a, Act);
        let absorb = |m_: u64, n: u64, k: u64| {
            Op::BatchedMatmul(BatchedMatmul {
                batch: h,
                shared: 1,
                m: m_,
                n,
                k,
                a,
                b: w,
                c: a,
                compute: a,
            })
        };
        gr.node(
            "q_absorb",
            Role::QAbsorb,
            cx.all,
            absorb(t, r_kv, nope),
            &[q_rot, wuk],
            &[q_lat],
        );
        let bl = to_f64(cx.b * cx.l);
        let k_cache = gr.tensor("kv_cache", bl * to_f64(cache_elems), c, KvCache);
        let v_cache = gr.tensor("kv_cache_latent", bl * to_f64(r_kv), c, KvCache);
        let o_lat = gr.tensor("attn_out_latent", tf * to_f64(h * r_kv), a, Act);
        attention_core(
            cx,
            gr,
            AttnShape {
                heads: h,
                kv_heads: 1,
                qk_dim: cache_elems,
                v_dim: r_kv,
                kv_shared: true,
                window: None,
                kv: c,
            },
            [q_lat, k_cache, v_cache],
            o_lat,
        );
        gr.node(
            "o_absorb",
            Role::OAbsorb,
            cx.all,
            absorb(t, vd, r_kv),
            &[o_lat, wuk],
            &[attn_v],
        );
    }
    let wo = gr.tensor("o_proj.weight", to_f64(h * vd) * df, w, Weight);
    let o = gr.tensor("o_proj_out", tf * df, a, Act);
    gr.node(
        "o_proj",
        Role::OProj,
        cx.all,
        cx.linear(t, d, h * vd, false),
        &[attn_v, wo],
        &[o],
    );
    o
}

/// A dense MLP in `span`: gated (gate, up, act, mul, down) or plain (up, act, down), writing
/// `out`.
#[inline(always)]
fn mlp_dense(cx: &Cx, gr: &mut impl Emit, span: Span, x3: TensorId, out: TensorId) {
    let m = cx.model;
    let (t, d, f) = (cx.t, cx.d, m.intermediate);
    let (tf, df, ff) = (cx.tf, cx.df, to_f64(f));
    let (w, a) = (cx.w, cx.a);
    let mb = m.mlp_bias;
    let bias = |n: f64| if mb { n } else { 0.0 };
    let names = cx.names();
    let hidden_act = gr.tensor("mlp_act_out", tf * ff, a, Act);
    let unary = |flops| {
        Op::Elementwise(Elementwise {
            elements: t * f,
            inputs: 1,
            flops_per_element: flops,
            precision: a,
        })
    };
    match m.mlp {
        MlpKind::Gated => {
            let wg = gr.tensor("gate_proj.weight", df * ff + bias(ff), w, Weight);
            let wu = gr.tensor("up_proj.weight", df * ff + bias(ff), w, Weight);
            let gate = gr.tensor("gate", tf * ff, a, Act);
            let up = gr.tensor("up", tf * ff, a, Act);
            let gate_act = gr.tensor("gate_act", tf * ff, a, Act);
            gr.node(
                names.gate,
                Role::GateProj,
                span,
                cx.linear(t, f, d, mb),
                &[x3, wg],
                &[gate],
            );
            gr.node(
                names.up,
                Role::UpProj,
                span,
                cx.linear(t, f, d, mb),
                &[x3, wu],
                &[up],
            );
            // Eager PyTorch runs `act_fn(gate) * up` as two kernels.
            gr.node(
                "act_fn",
                Role::Activation,
                span,
                unary(cx.act_flops()),
                &[gate],
                &[gate_act],
            );
            let mul = Op::Elementwise(Elementwise {
                elements: t * f,
                inputs: 2,
                flops_per_element: MUL_FLOPS_PER_ELEMENT,
                precision: a,
            });
            gr.node(
                "act_mul",
                Role::GateMul,
                span,
                mul,
                &[gate_act, up],
                &[hidden_act],
            );
        }
        MlpKind::Plain => {
            let w1 = gr.tensor("up_proj.weight", df * ff + bias(ff), w, Weight);
            let up = gr.tensor("up", tf * ff, a, Act);
            gr.node(
                names.up,
                Role::UpProj,
                span,
                cx.linear(t, f, d, mb),
                &[x3, w1],
                &[up],
            );
            gr.node(
                "act_fn",
                Role::Activation,
                span,
                unary(cx.act_flops()),
                &[up],
                &[hidden_act],
            );
        }
    }
    let wd = gr.tensor("down_proj.weight", ff * df + bias(df), w, Weight);
    gr.node(
        names.down,
        Role::DownProj,
        span,
        cx.linear(t, d, f, mb),
        &[hidden_act, wd],
        &[out],
    );
}

/// A mixture-of-experts MLP in `span`: router GEMM and top-k, the routed experts as grouped
/// GEMMs over the T·k routed rows (only the experts some token chose are read, see
/// [`crate::ops::ExpertGemm`]), shared experts as a dense gated MLP, and the weighted combine.
fn mlp_moe(cx: &Cx, gr: &mut impl Emit, moe: &Moe, span: Span, x3: TensorId, out: TensorId) {
    let (t, d) = (cx.t, cx.d);
    let (tf, df) = (cx.tf, cx.df);
    let (w, a) = (cx.w, cx.a);
    let (e_n, k, fe) = (moe.experts, moe.top_k, moe.expert_intermediate);
    let mixtral = cx.model.variant.naming == Naming::Mixtral;
    let wr = gr.tensor("gate.weight", df * to_f64(e_n), w, Weight);
    let logits = gr.tensor("router_logits", tf * to_f64(e_n), a, Act);
    gr.node(
        "gate",
        Role::Router,
        span,
        cx.linear(t, e_n, d, false),
        &[x3, wr],
        &[logits],
    );
    let probs = gr.tensor("router_probs", tf * to_f64(e_n), a, Act);
    let topk = Op::Softmax(Softmax {
        rows: t,
        cols: e_n,
        scale_mask: false,
        precision: a,
    });
    gr.node(
        "router_topk",
        Role::RouterTopK,
        span,
        topk,
        &[logits],
        &[probs],
    );
    let rows = to_f64(t * k);
    let expert = |n: u64, kk: u64| {
        Op::ExpertGemm(ExpertGemm {
            tokens: t,
            top_k: k,
            experts: e_n,
            n,
            k: kk,
            a: cx.ga,
            b: w,
            b_scale: cx.w_scale,
            c: a,
            compute: cx.ga,
        })
    };
    let (n_gate, n_up, n_down) = if mixtral {
        ("experts.w1", "experts.w3", "experts.w2")
    } else {
        ("experts.gate_proj", "experts.up_proj", "experts.down_proj")
    };
    let ew = to_f64(e_n * d * fe);
    let wg = gr.tensor("experts.gate.weight", ew, w, Weight);
    let wu = gr.tensor("experts.up.weight", ew, w, Weight);
    let wd = gr.tensor("experts.down.weight", ew, w, Weight);
    let gate = gr.tensor("expert_gate", rows * to_f64(fe), a, Act);
    let up = gr.tensor("expert_up", rows * to_f64(fe), a, Act);
    let gact = gr.tensor("expert_gate_act", rows * to_f64(fe), a, Act);
    let hact = gr.tensor("expert_act_out", rows * to_f64(fe), a, Act);
    let eout = gr.tensor("expert_out", rows * df, a, Act);
    gr.node(
        n_gate,
        Role::ExpertGateProj,
        span,
        expert(fe, d),
        &[x3, wg],
        &[gate],
    );
    gr.node(
        n_up,
        Role::ExpertUpProj,
        span,
        expert(fe, d),
        &[x3, wu],
        &[up],
    );
    let unary = Op::Elementwise(Elementwise {
        elements: t * k * fe,
        inputs: 1,
        flops_per_element: cx.act_flops(),
        precision: a,
    });
    gr.node(
        "experts.act_fn",
        Role::ExpertActivation,
        span,
        unary,
        &[gate],
        &[gact],
    );
    let mul = Op::Elementwise(Elementwise {
        elements: t * k * fe,
        inputs: 2,
        flops_per_element: MUL_FLOPS_PER_ELEMENT,
        precision: a,
    });
    gr.node(
        "experts.act_mul",
        Role::ExpertGateMul,
        span,
        mul,
        &[gact, up],
        &[hact],
    );
    gr.node(
        n_down,
        Role::ExpertDownProj,
        span,
        expert(d, fe),
        &[hact, wd],
        &[eout],
    );
    // A fixed array, not a `Vec`: walking the graph allocates nothing (sweeps rely on it).
    let mut combine_in = [eout, probs, probs];
    let mut combine_n = 2;
    let mut inputs = k;
    if moe.shared_experts > 0 {
        let fs = moe.shared_experts * fe;
        let (fsf, sw) = (to_f64(fs), to_f64(d * fs));
        let wsg = gr.tensor("shared_experts.gate_proj.weight", sw, w, Weight);
        let wsu = gr.tensor("shared_experts.up_proj.weight", sw, w, Weight);
        let wsd = gr.tensor("shared_experts.down_proj.weight", sw, w, Weight);
        let sg = gr.tensor("shared_gate", tf * fsf, a, Act);
        let su = gr.tensor("shared_up", tf * fsf, a, Act);
        let sga = gr.tensor("shared_gate_act", tf * fsf, a, Act);
        let sh = gr.tensor("shared_act_out", tf * fsf, a, Act);
        let so = gr.tensor("shared_out", tf * df, a, Act);
        gr.node(
            "shared_experts.gate_proj",
            Role::SharedGateProj,
            span,
            cx.linear(t, fs, d, false),
            &[x3, wsg],
            &[sg],
        );
        gr.node(
            "shared_experts.up_proj",
            Role::SharedUpProj,
            span,
            cx.linear(t, fs, d, false),
            &[x3, wsu],
            &[su],
        );
        let op = Op::Elementwise(Elementwise {
            elements: t * fs,
            inputs: 1,
            flops_per_element: cx.act_flops(),
            precision: a,
        });
        gr.node(
            "shared_experts.act_fn",
            Role::SharedActivation,
            span,
            op,
            &[sg],
            &[sga],
        );
        let op = Op::Elementwise(Elementwise {
            elements: t * fs,
            inputs: 2,
            flops_per_element: MUL_FLOPS_PER_ELEMENT,
            precision: a,
        });
        gr.node(
            "shared_experts.act_mul",
            Role::SharedGateMul,
            span,
            op,
            &[sga, su],
            &[sh],
        );
        gr.node(
            "shared_experts.down_proj",
            Role::SharedDownProj,
            span,
            cx.linear(t, d, fs, false),
            &[sh, wsd],
            &[so],
        );
        combine_in[2] = so;
        combine_n = 3;
        inputs += 1;
    }
    // Σ_i p_i·y_i over the k routed outputs (+ the shared output): a multiply and an add each.
    let combine = Op::Elementwise(Elementwise {
        elements: t * d,
        inputs: inputs as u32,
        flops_per_element: 2.0 * to_f64(inputs),
        precision: a,
    });
    gr.node(
        "moe_combine",
        Role::MoeCombine,
        span,
        combine,
        &combine_in[..combine_n],
        &[out],
    );
}

/// Final norm, and lm_head on the positions [`Workload::logits`] asks for: the last of each
/// sequence (m = B) or every one (m = T).
#[inline(always)]
fn head(cx: &Cx, gr: &mut impl Emit, x4: TensorId) {
    let m = cx.model;
    let lnf_w = gr.tensor("norm.weight", cx.norm_weight_elems(cx.d), cx.a, Weight);
    let xf = gr.tensor("final_norm_out", cx.tf * cx.df, cx.a, Act);
    gr.node(
        "norm",
        Role::FinalNorm,
        Span::Epilogue,
        cx.norm_op(cx.t, cx.d),
        &[x4, lnf_w],
        &[xf],
    );
    // A tied lm_head reads the embedding matrix: a tensor of the same size.
    let head_w = gr.tensor(
        if m.tie_embeddings {
            "embed_tokens.weight (tied)"
        } else {
            "lm_head.weight"
        },
        to_f64(m.vocab * cx.d),
        cx.w,
        Weight,
    );
    let logits = gr.tensor("logits", to_f64(cx.logit_rows * m.vocab), cx.a, Act);
    gr.node(
        "lm_head",
        Role::LmHead,
        Span::Epilogue,
        cx.linear(cx.logit_rows, m.vocab, cx.d, false),
        &[xf, head_w],
        &[logits],
    );
}
