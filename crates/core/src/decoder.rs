//! Builds the operator graph of a decoder-only transformer (Llama family) for one forward pass.
//!
//! Per block, in forward order (Hugging Face `LlamaDecoderLayer`): input_layernorm, q_proj,
//! k_proj, v_proj, rotary_emb, kv_cache_write, attention (qk_matmul, softmax, sv_matmul; or one
//! fused `attention`), o_proj, attn_residual_add, post_attention_layernorm, gate_proj, up_proj,
//! act_fn, act_mul, down_proj, mlp_residual_add. Once per model: embed_tokens, norm, lm_head (on the last
//! position of each sequence).
//!
//! Notation: B batch, s tokens per sequence in this pass, T = B·s, L keys per sequence
//! ([`Workload::kv_len`]), d hidden, h heads, g kv heads, e head_dim, f intermediate, V vocab;
//! w, a, c bytes per element of weights, activations, KV cache.

use crate::graph::{GraphSink, OpGraph, Scope, TensorRole};
use crate::model::{Activation, MlpKind, NormKind, Transformer};
use crate::ops::{
    BatchedMatmul, Elementwise, Embedding, FlashAttention, Gemm, KvCacheWrite, LayerNorm, Op,
    RmsNorm, Rotary, Softmax, ADD_FLOPS_PER_ELEMENT, GELU_FLOPS_PER_ELEMENT, MUL_FLOPS_PER_ELEMENT,
    RELU_FLOPS_PER_ELEMENT, SILU_FLOPS_PER_ELEMENT, TOKEN_ID_BYTES,
};
use crate::units::Bytes;
use crate::workload::Workload;

/// The operator graph of one forward pass of `model` under `workload`.
///
/// Both are assumed validated ([`Transformer::validate`], [`Workload::validate`]).
pub fn build_graph(model: &Transformer, workload: &Workload) -> OpGraph {
    let mut gr = OpGraph::new(model.layers);
    emit(model, workload, &mut gr);
    gr
}

/// Walks the operator graph of one forward pass of `model` under `workload`, in forward order,
/// into `gr`: every tensor ([`GraphSink::tensor`]) and every node ([`GraphSink::node`]).
/// [`build_graph`] is this into an [`OpGraph`]; a [`crate::graph::NodeCosts`] sink gives the
/// same node costs without allocating.
///
/// Both are assumed validated ([`Transformer::validate`], [`Workload::validate`]).
pub fn emit<S: GraphSink>(model: &Transformer, workload: &Workload, gr: &mut S) {
    use Scope::{Layer, Model};
    use TensorRole::{Activation as Act, Input, KvCache, Weight};

    let p = workload.precisions;
    let (w, a, c) = (p.weight, p.act, p.kv);
    let b = workload.batch;
    let s = workload.tokens_per_seq();
    let t = workload.tokens();
    let l = workload.kv_len();
    let (d, h, g, e, f, v) = (
        model.hidden,
        model.heads,
        model.kv_heads,
        model.head_dim,
        model.intermediate,
        model.vocab,
    );
    let (tf, df, qf, kvf, ff) = (t as f64, d as f64, (h * e) as f64, (g * e) as f64, f as f64);

    let linear = |m: u64, n: u64, k: u64, bias: bool| {
        Op::Gemm(Gemm {
            m,
            n,
            k,
            bias,
            a,
            b: w,
            c: a,
            compute: a,
        })
    };
    let norm_op = |rows: u64| match model.norm {
        NormKind::RmsNorm => Op::RmsNorm(RmsNorm {
            rows,
            cols: d,
            precision: a,
            weight: a,
        }),
        NormKind::LayerNorm => Op::LayerNorm(LayerNorm {
            rows,
            cols: d,
            precision: a,
            weight: a,
        }),
    };
    let norm_weight_elems = match model.norm {
        NormKind::RmsNorm => df,
        NormKind::LayerNorm => 2.0 * df,
    };
    let add = |elements: u64| {
        Op::Elementwise(Elementwise {
            elements,
            inputs: 2,
            flops_per_element: ADD_FLOPS_PER_ELEMENT,
            precision: a,
        })
    };

    // ---- once per model: embedding ----
    let ids = gr.tensor_bytes("input_ids", Bytes(tf * TOKEN_ID_BYTES), a, Input);
    let emb_w = gr.tensor("embed_tokens.weight", (v * d) as f64, w, Weight);
    let x0 = gr.tensor("hidden_in", tf * df, a, Act);
    gr.node(
        "embed_tokens",
        Model,
        Op::Embedding(Embedding {
            tokens: t,
            hidden: d,
            weight: w,
            act: a,
        }),
        &[ids, emb_w],
        &[x0],
    );

    // ---- one decoder block ----
    let ln1_w = gr.tensor("input_layernorm.weight", norm_weight_elems, a, Weight);
    let x1 = gr.tensor("attn_norm_out", tf * df, a, Act);
    gr.node("input_layernorm", Layer, norm_op(t), &[x0, ln1_w], &[x1]);

    let qb = model.qkv_bias;
    let bias_elems = |n: f64| if qb { n } else { 0.0 };
    let wq = gr.tensor("q_proj.weight", df * qf + bias_elems(qf), w, Weight);
    let wk = gr.tensor("k_proj.weight", df * kvf + bias_elems(kvf), w, Weight);
    let wv = gr.tensor("v_proj.weight", df * kvf + bias_elems(kvf), w, Weight);
    let q = gr.tensor("q", tf * qf, a, Act);
    let k = gr.tensor("k", tf * kvf, a, Act);
    let vv = gr.tensor("v", tf * kvf, a, Act);
    gr.node("q_proj", Layer, linear(t, h * e, d, qb), &[x1, wq], &[q]);
    gr.node("k_proj", Layer, linear(t, g * e, d, qb), &[x1, wk], &[k]);
    gr.node("v_proj", Layer, linear(t, g * e, d, qb), &[x1, wv], &[vv]);

    let rope_tab = gr.tensor("rope_cos_sin", 2.0 * tf * e as f64, a, Input);
    let q_rot = gr.tensor("q_rot", tf * qf, a, Act);
    let k_rot = gr.tensor("k_rot", tf * kvf, a, Act);
    gr.node(
        "rotary_emb",
        Layer,
        Op::Rotary(Rotary {
            tokens: t,
            heads: h + g,
            head_dim: e,
            precision: a,
        }),
        &[q, k, rope_tab],
        &[q_rot, k_rot],
    );

    let kv_new = gr.tensor("kv_cache_update", 2.0 * tf * kvf, c, KvCache);
    gr.node(
        "kv_cache_write",
        Layer,
        Op::KvCacheWrite(KvCacheWrite {
            tokens: t,
            kv_heads: g,
            head_dim: e,
            act: a,
            kv: c,
        }),
        &[k_rot, vv],
        &[kv_new],
    );

    let bl = (b * l) as f64;
    let k_cache = gr.tensor("k_cache", bl * kvf, c, KvCache);
    let v_cache = gr.tensor("v_cache", bl * kvf, c, KvCache);
    let attn = gr.tensor("attn_out", tf * qf, a, Act);
    if workload.flash_attention {
        gr.node(
            "attention",
            Layer,
            Op::FlashAttention(FlashAttention {
                batch: b,
                heads: h,
                kv_heads: g,
                head_dim: e,
                q_len: s,
                kv_len: l,
                causal: true,
                block_q: None,
                act: a,
                kv: c,
            }),
            &[q_rot, k_cache, v_cache],
            &[attn],
        );
    } else {
        // Eager attention computes every score, masked or not (Hugging Face `eager_attention_forward`).
        let score_elems = (b * h * s) as f64 * l as f64;
        let scores = gr.tensor("scores", score_elems, a, Act);
        let probs = gr.tensor("probs", score_elems, a, Act);
        let bmm = |m: u64, n: u64, kk: u64, bprec| {
            Op::BatchedMatmul(BatchedMatmul {
                batch: b * h,
                shared: h / g,
                m,
                n,
                k: kk,
                a,
                b: bprec,
                c: a,
                compute: a,
            })
        };
        gr.node(
            "qk_matmul",
            Layer,
            bmm(s, l, e, c),
            &[q_rot, k_cache],
            &[scores],
        );
        gr.node(
            "softmax",
            Layer,
            Op::Softmax(Softmax {
                rows: b * h * s,
                cols: l,
                scale_mask: true,
                precision: a,
            }),
            &[scores],
            &[probs],
        );
        gr.node(
            "sv_matmul",
            Layer,
            bmm(s, e, l, c),
            &[probs, v_cache],
            &[attn],
        );
    }

    let wo = gr.tensor(
        "o_proj.weight",
        qf * df + if model.o_bias { df } else { 0.0 },
        w,
        Weight,
    );
    let o = gr.tensor("o_proj_out", tf * df, a, Act);
    gr.node(
        "o_proj",
        Layer,
        linear(t, d, h * e, model.o_bias),
        &[attn, wo],
        &[o],
    );

    let x2 = gr.tensor("hidden_mid", tf * df, a, Act);
    gr.node("attn_residual_add", Layer, add(t * d), &[x0, o], &[x2]);

    let ln2_w = gr.tensor(
        "post_attention_layernorm.weight",
        norm_weight_elems,
        a,
        Weight,
    );
    let x3 = gr.tensor("mlp_norm_out", tf * df, a, Act);
    gr.node(
        "post_attention_layernorm",
        Layer,
        norm_op(t),
        &[x2, ln2_w],
        &[x3],
    );

    let mb = model.mlp_bias;
    let act_flops = match model.activation {
        Activation::Silu => SILU_FLOPS_PER_ELEMENT,
        Activation::Gelu => GELU_FLOPS_PER_ELEMENT,
        Activation::Relu => RELU_FLOPS_PER_ELEMENT,
    };
    let mlp_bias_elems = |n: f64| if mb { n } else { 0.0 };
    let hidden_act = gr.tensor("mlp_act_out", tf * ff, a, Act);
    match model.mlp {
        MlpKind::Gated => {
            let wg = gr.tensor("gate_proj.weight", df * ff + mlp_bias_elems(ff), w, Weight);
            let wu = gr.tensor("up_proj.weight", df * ff + mlp_bias_elems(ff), w, Weight);
            let gate = gr.tensor("gate", tf * ff, a, Act);
            let up = gr.tensor("up", tf * ff, a, Act);
            let gate_act = gr.tensor("gate_act", tf * ff, a, Act);
            gr.node("gate_proj", Layer, linear(t, f, d, mb), &[x3, wg], &[gate]);
            gr.node("up_proj", Layer, linear(t, f, d, mb), &[x3, wu], &[up]);
            // Eager PyTorch runs `act_fn(gate) * up` as two kernels.
            gr.node(
                "act_fn",
                Layer,
                Op::Elementwise(Elementwise {
                    elements: t * f,
                    inputs: 1,
                    flops_per_element: act_flops,
                    precision: a,
                }),
                &[gate],
                &[gate_act],
            );
            gr.node(
                "act_mul",
                Layer,
                Op::Elementwise(Elementwise {
                    elements: t * f,
                    inputs: 2,
                    flops_per_element: MUL_FLOPS_PER_ELEMENT,
                    precision: a,
                }),
                &[gate_act, up],
                &[hidden_act],
            );
        }
        MlpKind::Plain => {
            let w1 = gr.tensor("up_proj.weight", df * ff + mlp_bias_elems(ff), w, Weight);
            let up = gr.tensor("up", tf * ff, a, Act);
            gr.node("up_proj", Layer, linear(t, f, d, mb), &[x3, w1], &[up]);
            gr.node(
                "act_fn",
                Layer,
                Op::Elementwise(Elementwise {
                    elements: t * f,
                    inputs: 1,
                    flops_per_element: act_flops,
                    precision: a,
                }),
                &[up],
                &[hidden_act],
            );
        }
    }
    let wd = gr.tensor("down_proj.weight", ff * df + mlp_bias_elems(df), w, Weight);
    let down = gr.tensor("down", tf * df, a, Act);
    gr.node(
        "down_proj",
        Layer,
        linear(t, d, f, mb),
        &[hidden_act, wd],
        &[down],
    );
    let x4 = gr.tensor("hidden_out", tf * df, a, Act);
    gr.node("mlp_residual_add", Layer, add(t * d), &[x2, down], &[x4]);

    // ---- once per model: final norm and lm_head ----
    let lnf_w = gr.tensor("norm.weight", norm_weight_elems, a, Weight);
    let xf = gr.tensor("final_norm_out", tf * df, a, Act);
    gr.node("norm", Model, norm_op(t), &[x4, lnf_w], &[xf]);
    let head_w = if model.tie_embeddings {
        emb_w
    } else {
        gr.tensor("lm_head.weight", (v * d) as f64, w, Weight)
    };
    let logits = gr.tensor("logits", (b * v) as f64, a, Act);
    gr.node(
        "lm_head",
        Model,
        linear(b, v, d, false),
        &[xf, head_w],
        &[logits],
    );
}
