//! The prologue: token ids into hidden states (Hugging Face `embed_tokens`; GPT-2's `wte`, and
//! for learned positions `wpe` and their sum).

use super::cx::Cx;
use crate::graph::{Emit, Role, Span, TensorId, TensorRole};
use crate::model::{Naming, Positions};
use crate::ops::{Embedding, Op, TOKEN_ID_BYTES};
use crate::units::{to_f64, Bytes};
use TensorRole::{Activation as Act, Input, Weight};

/// Token embedding, and for learned positions the position embedding and their sum.
#[inline(always)]
pub(super) fn embed(cx: &Cx, gr: &mut impl Emit) -> TensorId {
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
