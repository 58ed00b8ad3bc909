//! Standard attention (multi-head, grouped-query, multi-query): the q/k/v projections, optional
//! q/k norms (Qwen3), rotary embedding, the KV-cache write, the attention kernels and the output
//! projection. The kernels themselves ([`attention_core`]) are shared with multi-head latent
//! attention ([`super::mla`]).

use super::cx::Cx;
use crate::graph::{Emit, Role, TensorId, TensorRole};
use crate::model::{Naming, Positions};
use crate::ops::{AttentionSpec, CausalCount, KvCacheWrite, Op, RmsNorm, Rotary};
use crate::precision::Precision;
use crate::units::to_f64;
use TensorRole::{Activation as Act, Input, KvCache, Weight};

/// Multi-head (GQA, MQA) attention: projections, optional q/k norms, rotary, KV-cache write,
/// attention, output projection. Returns the output projection's result.
#[inline(always)]
pub(super) fn attention_mha(cx: &Cx, gr: &mut impl Emit, x1: TensorId) -> TensorId {
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

/// The shape of the attention kernels proper ([`attention_core`]): one fused kernel, or QKᵀ,
/// softmax and S·V.
pub(super) struct AttnShape {
    pub(super) heads: u64,
    /// Key/value heads per sequence (1 for MLA's shared latent).
    pub(super) kv_heads: u64,
    pub(super) qk_dim: u64,
    pub(super) v_dim: u64,
    pub(super) kv_shared: bool,
    pub(super) window: Option<u64>,
    /// Precision of K and V as read (the cache, or activations for MLA's expanded prefill).
    pub(super) kv: Precision,
}

/// Appends the kernels of `sh` reading `q`, `k_src` and `v_src` and writing `out`: the fused
/// kernel, or the three eager ones with the scores and probabilities between them.
#[inline(always)]
pub(super) fn attention_core(
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
