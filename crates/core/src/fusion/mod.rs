//! Kernel fusion: which operators share one kernel, and what that saves.
//!
//! A plan partitions the operator graph's nodes into kernels. Fusion is the decision of which
//! tensors stay on chip (tinygrad's scheduler has the same view): inside a kernel a tensor
//! produced and consumed there is never written to HBM, unless another kernel still needs it, or
//! it is persistent state (the KV cache) or an output of the pass. A tensor several nodes of one
//! kernel read is read once. So a kernel's bytes are
//!
//! - read = Σ node reads − Σ_{t made inside} (readers inside)·|t| − Σ_{t from outside} (readers inside − 1)·|t|
//! - written = Σ node writes − Σ_{t made inside, needed by no other kernel} |t|
//!
//! and its FLOPs are the sum of its nodes' FLOPs, except a flash-attention kernel, whose FLOPs
//! and bytes come from [`crate::ops::FlashAttention`] (causal blocks skipped; K and V read once
//! per query block). Rules and their sources: [`Rule`]; on-chip feasibility: [`tile`]. Only
//! operators inside the decoder block are fused; the once-per-model ones (embedding, final
//! norm, lm_head) stay as they are.

mod chain;
mod compare;
mod plan;
mod rules;
pub mod tile;

pub use chain::{chain_graph, ChainError, ChainSpec};
pub use compare::{
    compare_chain, compare_preset, ChainCompareError, ChainComparison, FusionComparison,
    FusionSaving,
};
pub use plan::{evaluate_plan, plan, plan_chain, FusedKernel, FusionPlan, FusionSummary, Rejected};
pub use rules::{Preset, Rule};

#[cfg(test)]
mod tests;
