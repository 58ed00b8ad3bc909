//! Where the shape symbols of a model's node come from, and the setting a derivation states.

use crate::graph::Role;
use crate::model::Transformer;
use crate::ops::OpKind;
use crate::workload::{Stage, Workload};

/// Where a shape symbol of a model's node doing `role` comes from, in the notation of
/// `docs/cost-model.md`; `None` where the symbol has no simpler origin to state.
pub(super) fn origin(
    role: Role,
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
    // The attention output is h·e wide, or h·v_head_dim for multi-head latent attention.
    let hv = match m.variant.mla {
        Some(mla) => format!("h·e_v = {h}·{}", mla.v_head_dim),
        None => he.clone(),
    };
    use Role as R;
    let o = match (kind, role, symbol) {
        (OpKind::Gemm, R::LmHead, "m") => format!("B = {b} (the last position of each sequence)"),
        (OpKind::Gemm, R::LmHead, "n") => format!("V (vocabulary {v})"),
        (OpKind::Gemm, _, "m") => tokens,
        (OpKind::Gemm, R::QProj, "n") => he,
        (OpKind::Gemm, R::KProj | R::VProj, "n") => ge,
        (OpKind::Gemm, R::OProj, "k") => hv,
        (OpKind::Gemm, R::OProj | R::DownProj, "n") => dd,
        (OpKind::Gemm, R::GateProj | R::UpProj, "n") => ff,
        (OpKind::Gemm, R::DownProj, "k") => ff,
        // GEMMs that read the hidden state.
        (
            OpKind::Gemm,
            R::QProj
            | R::KProj
            | R::VProj
            | R::QkvProj
            | R::GateProj
            | R::UpProj
            | R::QDownProj
            | R::KvDownProj
            | R::Router
            | R::SharedGateProj
            | R::SharedUpProj
            | R::LmHead,
            "k",
        ) => dd,
        (OpKind::BatchedMatmul, R::AttentionScores | R::AttentionValues, "N") => {
            format!("B·h = {b}·{h}")
        }
        (OpKind::BatchedMatmul, R::AttentionScores | R::AttentionValues, "G") => {
            format!("h/g = {h}/{g}")
        }
        (OpKind::BatchedMatmul, R::AttentionScores | R::AttentionValues, "m") => {
            format!("s = {s} (queries per sequence)")
        }
        (OpKind::BatchedMatmul, R::AttentionScores, "n")
        | (OpKind::BatchedMatmul, R::AttentionValues, "k") => keys,
        (OpKind::BatchedMatmul, R::AttentionScores, "k")
        | (OpKind::BatchedMatmul, R::AttentionValues, "n")
            if m.variant.mla.is_none() =>
        {
            format!("e (head dim {e})")
        }
        (OpKind::Softmax, R::AttentionSoftmax, "r") => format!("B·h·s = {b}·{h}·{s}"),
        (OpKind::Softmax, R::AttentionSoftmax, "n") => keys,
        (
            OpKind::RmsNorm | OpKind::LayerNorm,
            R::AttentionNorm | R::MlpNorm | R::FinalNorm,
            "r",
        ) => tokens,
        (
            OpKind::RmsNorm | OpKind::LayerNorm,
            R::AttentionNorm | R::MlpNorm | R::FinalNorm,
            "n",
        ) => dd,
        (OpKind::Elementwise, R::Activation | R::GateMul, "E") => format!("T·f = {t}·{f}"),
        (OpKind::Elementwise, R::GateMul, "φ") => "multiply (1)".into(),
        (
            OpKind::Elementwise,
            R::AttentionResidual | R::MlpResidual | R::EmbeddingAdd | R::MoeCombine,
            "E",
        ) => format!("T·d = {t}·{d}"),
        (OpKind::Rotary, _, "T") | (OpKind::Embedding, _, "T") | (OpKind::KvCacheWrite, _, "T") => {
            tokens
        }
        (OpKind::Rotary, _, "H") if m.variant.mla.is_none() => format!("h + g = {h} + {g}"),
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
