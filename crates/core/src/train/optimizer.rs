//! The optimizer update as memory-bound operators: AdamW (Loshchilov and Hutter 2019, ICLR,
//! "Decoupled Weight Decay Regularization", Algorithm 2) and SGD with momentum, in
//! mixed-precision training (Micikevicius et al. 2018, ICLR, "Mixed Precision Training", §3.1:
//! an fp32 master copy of the weights, updated from the gradients, rounded to the working
//! 16-bit weights the next forward pass reads).
//!
//! Per parameter, AdamW reads the fp32 master weight (4 bytes), the gradient (its precision:
//! 2 in bf16, 4 when accumulated in fp32), the fp32 first and second moments (4 + 4), and
//! writes the master weight, both moments (4 + 4 + 4) and the working weight (2 in bf16):
//! 14 + 14 = 28 bytes a parameter with bf16 gradients. These are ZeRO's model states read and
//! written once (Rajbhandari et al. 2020, arXiv 1910.02054, §3.1: 2Ψ + 2Ψ + KΨ with K = 12,
//! 16 bytes a parameter of memory). SGD with momentum keeps one fp32 buffer instead of two:
//! 8 + g read, 10 written.
//!
//! Under ZeRO (stage 1 and up) each data-parallel rank updates 1/N_d of the parameters
//! ([`OptimizerStep::shards`]).

use super::TrainError;
use crate::ops::{Compute, Cost};
use crate::precision::Precision;
use crate::units::to_f64;
use serde::Serialize;

/// AdamW FLOPs per parameter, from the update with the per-step scalars folded (the bias
/// corrections c₁ = 1/(1 − β₁ᵗ), c₂ = 1/(1 − β₂ᵗ), the learning rate η and α into
/// s = η·α·c₁ and η·λ, computed once per step):
/// - m ← β₁·m + (1 − β₁)·g: 3 (two multiplies, an add);
/// - v ← β₂·v + (1 − β₂)·g²: 4 (the square, two multiplies, an add);
/// - θ ← θ − s·m / (√(c₂·v) + ε) − η·λ·θ: c₂·v (1), √ (1), + ε (1), ÷ (1), · s (1), − (1),
///   η·λ·θ (1), − (1) = 8;
///
/// 15 FLOP in all (the rounding to the working precision not counted).
pub const ADAMW_FLOPS_PER_PARAMETER: f64 = 15.0;

/// SGD with momentum and weight decay FLOPs per parameter (PyTorch's `SGD`): g ← g + λ·θ (2),
/// b ← μ·b + g (2), θ ← θ − η·b (2) = 6.
pub const SGD_MOMENTUM_FLOPS_PER_PARAMETER: f64 = 6.0;

/// Bytes of an fp32 master weight or optimizer state element.
const FP32: f64 = 4.0;

/// An optimizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Optimizer {
    /// AdamW: two fp32 moments a parameter.
    AdamW,
    /// SGD with momentum: one fp32 momentum buffer a parameter.
    SgdMomentum,
}

impl Optimizer {
    /// fp32 state elements a parameter (moments, momentum).
    pub fn states(self) -> u32 {
        match self {
            Optimizer::AdamW => 2,
            Optimizer::SgdMomentum => 1,
        }
    }

    /// FLOPs per parameter of one update ([`ADAMW_FLOPS_PER_PARAMETER`],
    /// [`SGD_MOMENTUM_FLOPS_PER_PARAMETER`]).
    pub fn flops_per_parameter(self) -> f64 {
        match self {
            Optimizer::AdamW => ADAMW_FLOPS_PER_PARAMETER,
            Optimizer::SgdMomentum => SGD_MOMENTUM_FLOPS_PER_PARAMETER,
        }
    }

    /// Short name (`adamw`, `sgd_momentum`).
    pub fn id(self) -> &'static str {
        match self {
            Optimizer::AdamW => "adamw",
            Optimizer::SgdMomentum => "sgd_momentum",
        }
    }
}

/// One optimizer update over a rank's share of the parameters, as a memory-bound kernel on
/// the vector units.
///
/// With P = ⌈parameters / shards⌉ parameters on the rank, s fp32 states a parameter
/// ([`Optimizer::states`]), g and w the bytes of a gradient and a working weight:
/// - FLOPs = P·φ ([`Optimizer::flops_per_parameter`]);
/// - bytes read = P·(4 + g + 4·s): the master weight, the gradient, the states;
/// - bytes written = P·(4 + 4·s + w): the master weight, the states, the working weight.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OptimizerStep {
    /// The optimizer.
    pub optimizer: Optimizer,
    /// Parameters of the model (of the rank's tensor- and pipeline-parallel share).
    pub parameters: u64,
    /// Data-parallel ranks the optimizer states are sharded over: 1 without ZeRO, N_d under
    /// ZeRO stage 1, 2 or 3 (Rajbhandari et al. 2020, §5.1).
    pub shards: u64,
    /// Precision of the gradients read (bf16, or fp32 when accumulated in fp32).
    pub grad: Precision,
    /// Precision of the working weights written (bf16 or fp16).
    pub weight: Precision,
}

/// The row of an optimizer update: its name, the parameters it updates and its cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OptimizerRow {
    /// The optimizer's id (`adamw`).
    pub name: &'static str,
    /// Parameters updated on the rank.
    pub parameters: u64,
    /// FLOPs and bytes of the update.
    pub cost: Cost,
    /// The units it runs on: the vector units, a memory-bound elementwise kernel.
    pub compute: Compute,
}

impl OptimizerStep {
    /// An AdamW update of `parameters` parameters with bf16 gradients and working weights,
    /// unsharded.
    pub fn adamw(parameters: u64) -> Self {
        Self {
            optimizer: Optimizer::AdamW,
            parameters,
            shards: 1,
            grad: Precision::Bf16,
            weight: Precision::Bf16,
        }
    }

    /// Parameters one rank updates: ⌈parameters / shards⌉.
    ///
    /// # Errors
    /// [`TrainError::NoShards`] if `shards` is 0.
    pub fn rank_parameters(&self) -> Result<u64, TrainError> {
        if self.shards == 0 {
            return Err(TrainError::NoShards);
        }
        Ok(self.parameters.div_ceil(self.shards))
    }

    /// Bytes read and written a parameter: (4 + g + 4·s, 4 + 4·s + w).
    pub fn bytes_per_parameter(&self) -> (f64, f64) {
        let s = f64::from(self.optimizer.states());
        (
            FP32 + self.grad.bytes() + FP32 * s,
            FP32 + FP32 * s + self.weight.bytes(),
        )
    }

    /// FLOPs and bytes of the update on one rank, as in the type's documentation.
    ///
    /// # Errors
    /// [`TrainError::NoShards`] if `shards` is 0.
    pub fn cost(&self) -> Result<Cost, TrainError> {
        let p = to_f64(self.rank_parameters()?);
        let (read, written) = self.bytes_per_parameter();
        Ok(Cost::new(
            p * self.optimizer.flops_per_parameter(),
            p * read,
            p * written,
        ))
    }

    /// The update as a row of its own.
    ///
    /// # Errors
    /// [`TrainError::NoShards`] if `shards` is 0.
    pub fn row(&self) -> Result<OptimizerRow, TrainError> {
        Ok(OptimizerRow {
            name: self.optimizer.id(),
            parameters: self.rank_parameters()?,
            cost: self.cost()?,
            compute: Compute::Vector,
        })
    }
}
