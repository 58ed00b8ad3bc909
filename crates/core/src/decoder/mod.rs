//! Builds the operator graph of a decoder-only transformer (Llama family) for one forward pass.
//!
//! Per block, in forward order (Hugging Face `LlamaDecoderLayer`): input_layernorm, q_proj,
//! k_proj, v_proj, rotary_emb, kv_cache_write, attention (qk_matmul, softmax, sv_matmul; or one
//! fused `attention`), o_proj, attn_residual_add, post_attention_layernorm, gate_proj, up_proj,
//! act_fn, act_mul, down_proj, mlp_residual_add. Once per model: embed_tokens, norm, lm_head (on the
//! last position of each sequence, or on every position: [`crate::workload::Logits`]).
//!
//! Notation: B batch, s tokens per sequence in this pass, T = B·s, L keys per sequence
//! ([`Workload::kv_len`]), d hidden, h heads, g kv heads, e head_dim, f intermediate, V vocab;
//! w, a, c bytes per element of weights, activations, KV cache.
//!
//! One file per part of the block: the prologue (`embedding`), standard attention and the
//! attention kernels (`attention`), multi-head latent attention (`mla`), the dense MLP (`mlp`),
//! the mixture of experts (`moe`) and the epilogue (`head`); the shapes and precisions they share
//! (`cx`), and what decides a graph's structure (`blueprint`).

mod attention;
mod blueprint;
mod cx;
mod embedding;
mod head;
mod mla;
mod mlp;
mod moe;
#[cfg(test)]
mod tests;

pub(crate) use blueprint::Blueprint;
pub use blueprint::BuiltFrom;

use crate::graph::{Emit, OpGraph, Reshape, Role, Span, TensorRole};
use crate::model::Transformer;
use crate::workload::Workload;
use attention::attention_mha;
use cx::{norm, Cx};
use embedding::embed;
use head::head;
use mla::attention_mla;
use mlp::mlp_dense;
use moe::mlp_moe;
use TensorRole::Activation as Act;

/// The operator graph of one forward pass of `model` under `workload`.
///
/// Both are assumed validated ([`Transformer::validate`], [`Workload::validate`]).
pub fn build_graph(model: &Transformer, workload: &Workload) -> OpGraph {
    let mut gr = OpGraph::new(model.layers);
    emit(model, workload, &mut gr);
    gr
}

/// [`build_graph`] into an existing graph, replacing what it held and keeping its buffers: once
/// they have room for the model's nodes and tensors, this allocates nothing. To rewrite only
/// what a new batch or length changes, [`rebuild_into`] keeps what the graph was built from
/// beside it.
///
/// Both are assumed validated ([`Transformer::validate`], [`Workload::validate`]).
pub fn build_into(model: &Transformer, workload: &Workload, gr: &mut OpGraph) {
    gr.clear(model.layers);
    emit(model, workload, gr);
}

/// [`build_into`] that rewrites `gr` in place when `built` says it was built from the same
/// blueprint: a model of the same shape, in the same stage and attention form. Only what a new
/// batch, length or precision changes is then rewritten: each tensor's bytes and precision and
/// each node's operator and cost; names, roles, spans and edges stay as they are. Otherwise the
/// graph is built afresh and `built` records its blueprint. Either way the result equals
/// [`build_graph`]'s (checked after every rewrite in debug builds, and by a test over every
/// preset and many workloads). Returns the model's parameter count
/// ([`Transformer::parameters`]), kept in `built`.
///
/// `built` must describe `gr`: `None` for a graph of unknown origin, else what the last call
/// with this `gr` left there (the sweep and [`crate::analysis::analyze_into`] rebuild one
/// graph per configuration this way).
///
/// Both are assumed validated ([`Transformer::validate`], [`Workload::validate`]).
pub fn rebuild_into(
    model: &Transformer,
    workload: &Workload,
    gr: &mut OpGraph,
    built: &mut Option<BuiltFrom>,
) -> u64 {
    let blueprint = Blueprint::of(model, workload);
    let same = built.as_ref().is_some_and(|b| b.blueprint == blueprint);
    rebuild(model, workload, &blueprint, same, gr, built)
}

/// [`rebuild_into`] for a caller that has `blueprint` (`Blueprint::of(model, workload)`) and
/// compared it with `built`'s already: `same` when they are equal.
#[inline(always)]
pub(crate) fn rebuild(
    model: &Transformer,
    workload: &Workload,
    blueprint: &Blueprint,
    same: bool,
    gr: &mut OpGraph,
    built: &mut Option<BuiltFrom>,
) -> u64 {
    debug_assert_eq!(*blueprint, Blueprint::of(model, workload));
    debug_assert_eq!(
        same,
        built.as_ref().is_some_and(|b| b.blueprint == *blueprint)
    );
    if let (true, Some(b)) = (same, built.as_mut()) {
        let mut reshape = Reshape::new(gr);
        emit(model, workload, &mut reshape);
        if reshape.finish() {
            gr.layers = model.layers;
            // Rebuilt once in place: the structure is being reused, so index its liveness.
            if !b.live.is_indexed() {
                b.live.index(gr);
            }
            debug_assert_eq!(*gr, build_graph(model, workload), "a rewrite in place");
            return b.parameters;
        }
    }
    build_into(model, workload, gr);
    let parameters = model.parameters();
    let live = built.take().map(|b| b.live).unwrap_or_default();
    *built = Some(BuiltFrom::new(*blueprint, parameters, live));
    parameters
}

/// [`emit`] for the tests of [`crate::graph`]'s writers.
#[cfg(test)]
pub(crate) fn emit_for_tests(model: &Transformer, workload: &Workload, gr: &mut impl Emit) {
    emit(model, workload, gr);
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
