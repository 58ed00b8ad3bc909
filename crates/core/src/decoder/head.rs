//! The epilogue: the final norm and lm_head.

use super::cx::Cx;
use crate::graph::{Emit, Role, Span, TensorId, TensorRole};
use crate::units::to_f64;
use TensorRole::{Activation as Act, Weight};

/// Final norm, and lm_head on the positions [`crate::workload::Workload::logits`] asks for: the
/// last of each sequence (m = B) or every one (m = T).
#[inline(always)]
pub(super) fn head(cx: &Cx, gr: &mut impl Emit, x4: TensorId) {
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
