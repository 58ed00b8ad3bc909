//! What a node does in the model, independent of its name: the key every pass decides by.
//!
//! Names are for display (Hugging Face module names: `q_proj`, `c_attn`, `experts.w1`); fusion,
//! profile joining, MFU and the derivations ask a node's [`Role`] instead. A role is the node's
//! part in the forward pass of one transformer step; passes that add nodes (communication,
//! backward, optimizer) add roles of their own, so the enum is `#[non_exhaustive]`.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The semantic role of a node in a transformer step.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    // ---- prologue ----
    /// Token embedding lookup (`embed_tokens`, `wte`).
    TokenEmbedding,
    /// Learned position embedding lookup (`embed_positions`, `wpe`).
    PositionEmbedding,
    /// Sum of the token and position embeddings.
    EmbeddingAdd,
    // ---- attention ----
    /// The norm before attention (`input_layernorm`).
    AttentionNorm,
    /// Query projection.
    QProj,
    /// Key projection.
    KProj,
    /// Value projection.
    VProj,
    /// Query, key and value in one projection (GPT-2's `c_attn`).
    QkvProj,
    /// RMSNorm of each query head (Qwen3).
    QNorm,
    /// RMSNorm of each key head (Qwen3).
    KNorm,
    /// Down-projection of the query to its latent (MLA `q_a_proj`).
    QDownProj,
    /// Norm of the query latent (MLA `q_a_layernorm`).
    QLatentNorm,
    /// Up-projection of the query latent to the heads (MLA `q_b_proj`).
    QUpProj,
    /// Down-projection to the compressed key/value latent and the rotary key (MLA
    /// `kv_a_proj_with_mqa`).
    KvDownProj,
    /// Norm of the key/value latent (MLA `kv_a_layernorm`).
    KvLatentNorm,
    /// Up-projection of the latent to per-head keys and values (MLA `kv_b_proj`, prefill).
    KvUpProj,
    /// The query mapped into the latent space through W_UK (MLA decode, absorbed).
    QAbsorb,
    /// The latent attention output mapped back through W_UV (MLA decode, absorbed).
    OAbsorb,
    /// Rotary position embedding of queries and keys.
    Rotary,
    /// Write of the new keys and values into the KV cache.
    KvCacheWrite,
    /// Attention scores Q·Kᵀ (unfused).
    AttentionScores,
    /// Softmax over the scores, with scale and mask (unfused).
    AttentionSoftmax,
    /// Probabilities times values, P·V (unfused).
    AttentionValues,
    /// Attention in one fused kernel (FlashAttention).
    FusedAttention,
    /// Output projection of attention (`o_proj`, `out_proj`, `attn.c_proj`).
    OProj,
    /// Residual add after attention.
    AttentionResidual,
    // ---- dense MLP ----
    /// The norm before the MLP (`post_attention_layernorm`).
    MlpNorm,
    /// Gate projection of a gated MLP.
    GateProj,
    /// Up projection (`up_proj`, `fc1`, `mlp.c_fc`).
    UpProj,
    /// The activation function (SiLU, GELU, ReLU).
    Activation,
    /// activation(gate) × up of a gated MLP.
    GateMul,
    /// Down projection (`down_proj`, `fc2`, `mlp.c_proj`).
    DownProj,
    // ---- mixture of experts ----
    /// Router logits (`gate`).
    Router,
    /// Softmax and top-k over the router logits.
    RouterTopK,
    /// Gate projection of the routed experts (grouped GEMM).
    ExpertGateProj,
    /// Up projection of the routed experts (grouped GEMM).
    ExpertUpProj,
    /// Activation of the routed experts.
    ExpertActivation,
    /// activation(gate) × up of the routed experts.
    ExpertGateMul,
    /// Down projection of the routed experts (grouped GEMM).
    ExpertDownProj,
    /// Gate projection of the shared experts.
    SharedGateProj,
    /// Up projection of the shared experts.
    SharedUpProj,
    /// Activation of the shared experts.
    SharedActivation,
    /// activation(gate) × up of the shared experts.
    SharedGateMul,
    /// Down projection of the shared experts.
    SharedDownProj,
    /// Weighted sum of the routed (and shared) expert outputs.
    MoeCombine,
    /// Residual add after the MLP.
    MlpResidual,
    // ---- epilogue ----
    /// The final norm.
    FinalNorm,
    /// The output projection to the vocabulary.
    LmHead,
    /// Softmax cross-entropy over the logits (a training step's loss): its softmax in the
    /// forward, softmax − one-hot in the backward.
    Loss,
    // ---- communication (added by the parallel passes) ----
    /// The tensor-parallel all-reduce of a row-parallel output (after o_proj, down_proj, the
    /// expert combine, the vocabulary-parallel embedding).
    TpAllReduce,
    /// Sequence parallelism's reduce-scatter in place of that all-reduce.
    TpReduceScatter,
    /// Sequence parallelism's all-gather of the normed tokens before a column-parallel linear,
    /// or the all-gather of vocabulary-parallel logits.
    TpAllGather,
    /// Activations sent from one pipeline stage to the next.
    PpSendRecv,
    /// Expert parallelism's all-to-all that sends each routed token to its experts' rank.
    EpDispatch,
    /// The all-to-all that brings the experts' outputs back.
    EpCombine,
    /// Context parallelism's ring exchange of K/V blocks (ring attention, Liu et al. 2023):
    /// c − 1 send/recv steps of one device's K and V, each hidden behind the attention of the
    /// block before it.
    CpRingKv,
    // ---- outside a model ----
    /// An operator on its own or in a user-given chain (`roofline op`, `roofline fuse`).
    Operator,
}

/// The part of the model a role belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// Embeddings.
    Embedding,
    /// Attention, from its norm to its residual add.
    Attention,
    /// A dense MLP, from its norm to its residual add.
    Mlp,
    /// A mixture-of-experts MLP: router, routed and shared experts, combine.
    Moe,
    /// Final norm and lm_head.
    Head,
    /// Collectives between devices.
    Communication,
    /// No model: an operator or chain on its own.
    Standalone,
}

impl Role {
    /// The part of the model it belongs to.
    pub fn part(self) -> Part {
        use Role::*;
        match self {
            TokenEmbedding | PositionEmbedding | EmbeddingAdd => Part::Embedding,
            AttentionNorm | QProj | KProj | VProj | QkvProj | QNorm | KNorm | QDownProj
            | QLatentNorm | QUpProj | KvDownProj | KvLatentNorm | KvUpProj | QAbsorb | OAbsorb
            | Rotary | KvCacheWrite | AttentionScores | AttentionSoftmax | AttentionValues
            | FusedAttention | OProj | AttentionResidual => Part::Attention,
            MlpNorm | GateProj | UpProj | Activation | GateMul | DownProj | MlpResidual => {
                Part::Mlp
            }
            Router | RouterTopK | ExpertGateProj | ExpertUpProj | ExpertActivation
            | ExpertGateMul | ExpertDownProj | SharedGateProj | SharedUpProj | SharedActivation
            | SharedGateMul | SharedDownProj | MoeCombine => Part::Moe,
            FinalNorm | LmHead | Loss => Part::Head,
            TpAllReduce | TpReduceScatter | TpAllGather | PpSendRecv | EpDispatch | EpCombine
            | CpRingKv => Part::Communication,
            Operator => Part::Standalone,
        }
    }

    /// The score-and-value core of attention (QKᵀ, softmax, P·V, or the fused kernel): the
    /// work whose FLOPs grow with the square of the sequence, excluded from 6N-style counts.
    pub fn is_attention_core(self) -> bool {
        matches!(
            self,
            Role::AttentionScores
                | Role::AttentionSoftmax
                | Role::AttentionValues
                | Role::FusedAttention
        )
    }

    /// An activation function (dense, routed or shared experts).
    pub fn is_activation(self) -> bool {
        matches!(
            self,
            Role::Activation | Role::ExpertActivation | Role::SharedActivation
        )
    }

    /// activation(gate) × up (dense, routed or shared experts).
    pub fn is_gate_mul(self) -> bool {
        matches!(
            self,
            Role::GateMul | Role::ExpertGateMul | Role::SharedGateMul
        )
    }

    /// A residual add.
    pub fn is_residual(self) -> bool {
        matches!(self, Role::AttentionResidual | Role::MlpResidual)
    }

    /// The snake_case id, as serialised (`q_proj`, `attention_scores`).
    pub fn id(self) -> &'static str {
        use Role::*;
        match self {
            TokenEmbedding => "token_embedding",
            PositionEmbedding => "position_embedding",
            EmbeddingAdd => "embedding_add",
            AttentionNorm => "attention_norm",
            QProj => "q_proj",
            KProj => "k_proj",
            VProj => "v_proj",
            QkvProj => "qkv_proj",
            QNorm => "q_norm",
            KNorm => "k_norm",
            QDownProj => "q_down_proj",
            QLatentNorm => "q_latent_norm",
            QUpProj => "q_up_proj",
            KvDownProj => "kv_down_proj",
            KvLatentNorm => "kv_latent_norm",
            KvUpProj => "kv_up_proj",
            QAbsorb => "q_absorb",
            OAbsorb => "o_absorb",
            Rotary => "rotary",
            KvCacheWrite => "kv_cache_write",
            AttentionScores => "attention_scores",
            AttentionSoftmax => "attention_softmax",
            AttentionValues => "attention_values",
            FusedAttention => "fused_attention",
            OProj => "o_proj",
            AttentionResidual => "attention_residual",
            MlpNorm => "mlp_norm",
            GateProj => "gate_proj",
            UpProj => "up_proj",
            Activation => "activation",
            GateMul => "gate_mul",
            DownProj => "down_proj",
            Router => "router",
            RouterTopK => "router_top_k",
            ExpertGateProj => "expert_gate_proj",
            ExpertUpProj => "expert_up_proj",
            ExpertActivation => "expert_activation",
            ExpertGateMul => "expert_gate_mul",
            ExpertDownProj => "expert_down_proj",
            SharedGateProj => "shared_gate_proj",
            SharedUpProj => "shared_up_proj",
            SharedActivation => "shared_activation",
            SharedGateMul => "shared_gate_mul",
            SharedDownProj => "shared_down_proj",
            MoeCombine => "moe_combine",
            MlpResidual => "mlp_residual",
            FinalNorm => "final_norm",
            LmHead => "lm_head",
            Loss => "loss",
            TpAllReduce => "tp_all_reduce",
            TpReduceScatter => "tp_reduce_scatter",
            TpAllGather => "tp_all_gather",
            PpSendRecv => "pp_send_recv",
            EpDispatch => "ep_dispatch",
            EpCombine => "ep_combine",
            CpRingKv => "cp_ring_kv",
            Operator => "operator",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_the_serialised_name() -> Result<(), serde_json::Error> {
        for r in [
            Role::TokenEmbedding,
            Role::QProj,
            Role::AttentionScores,
            Role::RouterTopK,
            Role::SharedGateMul,
            Role::LmHead,
        ] {
            assert_eq!(serde_json::to_string(&r)?, format!("\"{}\"", r.id()));
        }
        Ok(())
    }

    #[test]
    fn parts() {
        assert_eq!(Role::KvCacheWrite.part(), Part::Attention);
        assert_eq!(Role::SharedDownProj.part(), Part::Moe);
        assert_eq!(Role::GateMul.part(), Part::Mlp);
        assert!(Role::FusedAttention.is_attention_core() && !Role::QAbsorb.is_attention_core());
        assert!(Role::ExpertActivation.is_activation() && Role::SharedGateMul.is_gate_mul());
    }
}
