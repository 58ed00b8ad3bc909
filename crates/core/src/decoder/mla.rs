//! Multi-head latent attention (DeepSeek-V2 §2.1, DeepSeek-V3): queries and keys/values through
//! low-rank latents, one cached latent per token shared by every head.

use super::attention::{attention_core, AttnShape};
use super::cx::Cx;
use crate::graph::{Emit, Role, TensorId, TensorRole};
use crate::model::Mla;
use crate::ops::{BatchedMatmul, KvCacheWrite, Op, RmsNorm, Rotary};
use crate::units::to_f64;
use TensorRole::{Activation as Act, Input, KvCache, Weight};

/// Multi-head latent attention (DeepSeek-V2 §2.1, DeepSeek-V3): low-rank q and kv paths, a
/// cache of kv_lora_rank + qk_rope_head_dim elements per token. Prefill expands the latent
/// into per-head keys and values (kv_b_proj); decode uses the absorbed form, attending over the
/// latent directly with W_UK folded into the query and W_UV applied after.
pub(super) fn attention_mla(cx: &Cx, gr: &mut impl Emit, m: &Mla, x1: TensorId) -> TensorId {
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
