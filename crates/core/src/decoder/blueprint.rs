//! What decides the structure of a decoder's graph, so that a graph built for one batch or length
//! can be rewritten in place for another ([`super::build_into`]).

use crate::model::{Activation, MlpKind, NormKind, Transformer, Variant};
use crate::workload::{Stage, Workload};

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
