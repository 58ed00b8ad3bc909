//! Where the shape symbols of a model's node come from, and the setting a derivation states.

use crate::model::Transformer;
use crate::ops::OpKind;
use crate::workload::{Stage, Workload};

/// Where a shape symbol of a model's node comes from, in the notation of `docs/cost-model.md`.
pub(super) fn origin(
    node: &str,
    kind: OpKind,
    symbol: &str,
    m: &Transformer,
    w: &Workload,
) -> Option<String> {
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

/// The setting of a node's derivation, one line each: the model's dimensions, then the stage,
/// batch, lengths, precisions and attention kernel of the workload.
pub(super) fn context(model: &Transformer, w: &Workload) -> Vec<String> {
    let p = w.precisions;
    let lengths = match w.stage {
        Stage::Prefill => format!("prompt s = {} tokens per sequence", w.seq_len),
        Stage::Decode => format!("s = 1 new token per sequence, context {}", w.context),
    };
    vec![
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
    ]
}
