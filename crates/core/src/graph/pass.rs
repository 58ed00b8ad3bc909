//! Which pass of a training step a node belongs to: the forward pass, a recomputation of it,
//! or the backward pass. A node's [`crate::graph::Role`] says what it does in the model (`q_proj`);
//! its [`Pass`] says whether it runs that operator, runs it again, or computes its gradients.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Which gradient a backward node computes.
///
/// The split is the one zero-bubble pipeline schedules make (Qi et al. 2024, arXiv 2401.10241;
/// DeepSeek-V3's F/B/W): the input gradient is on the critical path to the previous layer,
/// the weight gradient can be deferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grad {
    /// The gradient with respect to the node's activation inputs: dX = dY·Wᵀ of a linear
    /// layer, both operands' gradients of an activation-by-activation matmul (QKᵀ, P·V), and
    /// the gradients of norms, activations, softmax, rotary, residual adds, the embedding's
    /// scatter-add and the mirrored collectives.
    Input,
    /// The gradient with respect to a weight: dW = Xᵀ·dY of a linear layer or an expert GEMM.
    Weight,
}

/// The pass of a training step a node runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pass {
    /// The forward pass (every node of an inference graph).
    #[default]
    Forward,
    /// A forward node run again before the backward pass so that its activations need not be
    /// kept (Korthikanti et al. 2022, arXiv 2205.05198, §5): counted in hardware FLOPs (HFU),
    /// not in model FLOPs (MFU).
    Recompute,
    /// A gradient of a forward node.
    Backward(Grad),
}

impl Pass {
    /// Whether it is [`Pass::Forward`] (what a node of an inference graph always is).
    #[inline(always)]
    pub fn is_forward(&self) -> bool {
        matches!(self, Pass::Forward)
    }

    /// Whether it is a [`Pass::Backward`] node.
    #[inline(always)]
    pub fn is_backward(&self) -> bool {
        matches!(self, Pass::Backward(_))
    }

    /// Whether its FLOPs count as model FLOPs (MFU): forward and backward, not recompute.
    #[inline(always)]
    pub fn is_model_work(&self) -> bool {
        !matches!(self, Pass::Recompute)
    }
}

impl fmt::Display for Pass {
    /// `forward`, `recompute`, `backward (input)`, `backward (weight)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pass::Forward => f.write_str("forward"),
            Pass::Recompute => f.write_str("recompute"),
            Pass::Backward(Grad::Input) => f.write_str("backward (input)"),
            Pass::Backward(Grad::Weight) => f.write_str("backward (weight)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forward_is_the_default_and_only_recompute_is_not_model_work() {
        assert_eq!(Pass::default(), Pass::Forward);
        assert!(Pass::Forward.is_model_work() && Pass::Backward(Grad::Weight).is_model_work());
        assert!(!Pass::Recompute.is_model_work());
        assert!(Pass::Backward(Grad::Input).is_backward() && !Pass::Recompute.is_backward());
        assert_eq!(
            Pass::Backward(Grad::Weight).to_string(),
            "backward (weight)"
        );
    }
}
