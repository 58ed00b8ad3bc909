//! What decides the structure of a decoder's graph, so that a graph built for one batch or length
//! can be rewritten in place for another ([`super::rebuild_into`]), and what a rebuilder keeps of
//! it beside the graph ([`BuiltFrom`]).

use crate::graph::{LiveActivations, LiveIndex, OpGraph};
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

/// What a graph was last built from, kept beside the graph by whoever rebuilds it
/// ([`super::rebuild_into`], [`crate::analysis::StageAnalysis`]): its blueprint (the model's
/// shape, the stage and the attention form) and what follows from that blueprint alone, so that
/// a rebuild for a new batch or length derives none of it again.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltFrom {
    /// The model's shape, the stage and the attention form.
    pub(crate) blueprint: Blueprint,
    /// [`Transformer::parameters`] of that model.
    pub(crate) parameters: u64,
    /// [`crate::analysis::analyze_into`] validated that model (its validity is a function of
    /// the blueprint alone).
    pub(crate) model_checked: bool,
    /// The graph's activation intervals, indexed on its first rewrite in place (a graph built
    /// once is scanned instead).
    pub(crate) live: LiveIndex,
}

impl BuiltFrom {
    /// A graph just built from `blueprint`, of a model of `parameters` parameters; `live` is
    /// cleared and its buffer reused.
    pub(crate) fn new(blueprint: Blueprint, parameters: u64, mut live: LiveIndex) -> Self {
        live.clear();
        Self {
            blueprint,
            parameters,
            model_checked: false,
            live,
        }
    }

    /// [`OpGraph::peak_live_activations`] of `graph`, the graph [`super::rebuild_into`] last
    /// built or rewrote with this: read through the activation intervals indexed on its first
    /// rewrite in place, or scanned before that. Equal to the scan (a test checks every preset
    /// through rewrites).
    #[inline(always)]
    pub fn peak_live_activations(&self, graph: &OpGraph) -> LiveActivations {
        self.live.peak(graph)
    }
}
