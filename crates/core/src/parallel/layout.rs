//! How a model is split over devices: the degrees of tensor, pipeline, expert and context
//! parallelism, and whether the tensor-parallel group also splits the sequence.

use crate::model::Transformer;
use crate::workload::{Stage, Workload};
use serde::Serialize;
use std::fmt;

/// The parallel layout of one model replica.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Layout {
    /// Tensor-parallel degree t (Megatron-LM, Shoeybi et al. 2019): each linear split over t
    /// devices, column-wise (q, k, v, gate, up) or row-wise (o, down), two all-reduces a block.
    pub tp: u32,
    /// Pipeline-parallel degree p: the blocks in p contiguous ranges, one per device group.
    pub pp: u32,
    /// Sequence parallelism (Korthikanti et al. 2022): with tp > 1, the norms and residual
    /// adds run on 1/t of the tokens and each all-reduce becomes a reduce-scatter and an
    /// all-gather of the same bytes.
    pub sequence_parallel: bool,
    /// Expert-parallel degree e (GShard, Lepikhin et al. 2020; DeepSeek-V3 §3.4): the routed
    /// experts of a mixture of experts split over e devices, E/e each; attention runs
    /// data-parallel over them, each on ⌈B/e⌉ sequences; an all-to-all sends each routed token
    /// to its expert's device and one brings the outputs back.
    pub ep: u32,
    /// Routing skew under expert parallelism: the busiest device receives this many times the
    /// mean T·k/e routed rows (1 = perfectly balanced; at most e).
    pub expert_imbalance: f64,
    /// Context-parallel degree c (prefill only): each prompt split over c devices by ring
    /// attention (Liu et al. 2023, "Ring Attention with Blockwise Transformers", arXiv
    /// 2310.01889) with the load-balanced causal split of Megatron-Core and Llama 3 (Dubey et
    /// al. 2024, §3.3.2): the prompt in 2c chunks, device i holding chunks i and 2c − 1 − i, so
    /// that each device has ⌈s/2c⌉·2 tokens and 1/c of the causal attention; the K/V blocks
    /// pass round the ring in c − 1 send/recv steps, each hidden behind the attention of the
    /// block before ([`super::context`]).
    pub cp: u32,
}

impl Default for Layout {
    fn default() -> Self {
        Self::SINGLE
    }
}

/// Why a layout does not fit a model.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LayoutError {
    /// A degree of zero or above the devices any system holds.
    Degree {
        /// `tp` or `pp`.
        quantity: &'static str,
        /// The value.
        value: u32,
    },
    /// The tensor-parallel degree does not divide the heads, or the KV heads neither divide it
    /// nor are divided by it.
    Heads {
        /// The degree.
        tp: u32,
        /// Query heads.
        heads: u64,
        /// KV heads.
        kv_heads: u64,
    },
    /// More devices in all (t · p · e · c) than any system holds.
    Devices {
        /// t · p · e · c.
        devices: u64,
    },
    /// More pipeline stages than blocks.
    Stages {
        /// The degree.
        pp: u32,
        /// Blocks.
        layers: u64,
    },
    /// The expert-parallel degree does not divide the routed experts (or the model has none).
    Experts {
        /// The degree.
        ep: u32,
        /// Routed experts (0: not a mixture of experts).
        experts: u64,
    },
    /// An expert imbalance below 1, above the degree, or not finite.
    Imbalance {
        /// The factor.
        value: f64,
        /// The degree.
        ep: u32,
    },
    /// Context parallelism asked of a decode step: it splits a prompt's tokens, and a decode
    /// step has one token per sequence.
    ContextStage {
        /// The degree.
        cp: u32,
    },
    /// A prompt shorter than the 2c chunks of the load-balanced split (at least one token
    /// each).
    ContextLength {
        /// The degree.
        cp: u32,
        /// Prompt tokens per sequence.
        seq_len: u64,
    },
    /// Context parallelism with a model or workload its pass does not model: multi-head latent
    /// attention, or a sliding window shorter than the prompt.
    ContextUnsupported {
        /// The degree.
        cp: u32,
        /// What is not modelled, in words.
        what: &'static str,
    },
    /// A combination the passes do not model yet.
    Unsupported(&'static str),
}

impl LayoutError {
    /// The quantity at fault (`tp`, `pp`, `ep`, `cp`, `expert-imbalance`).
    pub fn quantity(&self) -> &'static str {
        match self {
            LayoutError::Degree { quantity, .. } => quantity,
            LayoutError::Heads { .. }
            | LayoutError::Unsupported(_)
            | LayoutError::Devices { .. } => "tp",
            LayoutError::Stages { .. } => "pp",
            LayoutError::Experts { .. } => "ep",
            LayoutError::Imbalance { .. } => "expert-imbalance",
            LayoutError::ContextStage { .. }
            | LayoutError::ContextLength { .. }
            | LayoutError::ContextUnsupported { .. } => "cp",
        }
    }
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::Degree { quantity, value } => write!(
                f,
                "{quantity} = {value} is out of range (1 to {})",
                crate::comm::system::MAX_DEVICES
            ),
            LayoutError::Heads {
                tp,
                heads,
                kv_heads,
            } => write!(
                f,
                "tp = {tp} must divide the {heads} attention heads, and the {kv_heads} KV heads \
                 must divide it or be divided by it"
            ),
            LayoutError::Devices { devices } => write!(
                f,
                "the layout needs {devices} devices, more than {}",
                crate::comm::system::MAX_DEVICES
            ),
            LayoutError::Stages { pp, layers } => {
                write!(
                    f,
                    "pp = {pp} is more pipeline stages than the {layers} blocks"
                )
            }
            LayoutError::Experts { ep, experts: 0 } => {
                write!(
                    f,
                    "ep = {ep} splits routed experts, and this model has none"
                )
            }
            LayoutError::Experts { ep, experts } => {
                write!(f, "ep = {ep} must divide the {experts} routed experts")
            }
            LayoutError::Imbalance { value, ep } => write!(
                f,
                "expert imbalance {value} must be between 1 (balanced) and ep = {ep} (every \
                 token on one device)"
            ),
            LayoutError::ContextStage { cp } => write!(
                f,
                "cp = {cp} splits a prompt's tokens over devices: context parallelism applies \
                 to prefill only, and a decode step has one token per sequence"
            ),
            LayoutError::ContextLength { cp, seq_len } => write!(
                f,
                "cp = {cp} splits each prompt into {} chunks (2 per device, for a balanced \
                 causal mask), more than its {seq_len} tokens",
                2 * u64::from(*cp)
            ),
            LayoutError::ContextUnsupported { cp, what } => write!(
                f,
                "cp = {cp}: context parallelism with {what} is not modelled yet"
            ),
            LayoutError::Unsupported(what) => write!(f, "{what}"),
        }
    }
}
impl std::error::Error for LayoutError {}

/// Whether `model` takes tensor-parallel degree `t`: t divides the heads, and the KV heads
/// divide t or are divided by it (multi-head latent attention caches one latent for every head:
/// only its heads split).
fn tp_fits(model: &Transformer, t: u64) -> bool {
    let (h, g) = (model.heads, model.kv_heads);
    t > 0
        && h.is_multiple_of(t)
        && (model.variant.mla.is_some() || g.is_multiple_of(t) || t.is_multiple_of(g))
}

/// Whether `model` takes expert-parallel degree `e`: a mixture of experts whose routed experts
/// e divides (1 for any model).
fn ep_fits(model: &Transformer, e: u64) -> bool {
    e == 1
        || model
            .variant
            .moe
            .is_some_and(|m| e > 0 && m.experts.is_multiple_of(e))
}

/// The divisors of `n`, ascending.
pub(crate) fn divisors(n: u64) -> impl Iterator<Item = u64> {
    (1..=n).filter(move |d| n.is_multiple_of(*d))
}

impl Layout {
    /// The tensor-parallel degrees `model` takes ([`Layout::validate`]'s rule), ascending.
    pub fn tp_degrees(model: &Transformer) -> impl Iterator<Item = u64> + '_ {
        divisors(model.heads).filter(move |&t| tp_fits(model, t))
    }

    /// The expert-parallel degrees `model` takes: the divisors of its routed experts (1 for a
    /// dense model), ascending.
    pub fn ep_degrees(model: &Transformer) -> impl Iterator<Item = u64> + '_ {
        divisors(model.variant.moe.map_or(1, |m| m.experts)).filter(move |&e| ep_fits(model, e))
    }

    /// One device.
    pub const SINGLE: Layout = Layout {
        tp: 1,
        pp: 1,
        sequence_parallel: false,
        ep: 1,
        expert_imbalance: 1.0,
        cp: 1,
    };

    /// Whether it asks for nothing beyond one device: every degree 1, no sequence parallelism
    /// and no routing skew (a skew on one device would be ignored, so it asks for many).
    pub fn is_single(&self) -> bool {
        self.tp <= 1
            && self.pp <= 1
            && self.ep <= 1
            && self.cp <= 1
            && !self.sequence_parallel
            && self.expert_imbalance == 1.0
    }

    /// Devices one replica uses: t · p · e · c.
    pub fn devices(&self) -> u64 {
        u64::from(self.tp) * u64::from(self.pp) * u64::from(self.ep) * u64::from(self.cp)
    }

    /// Prompt tokens each context-parallel device holds of a prompt of `seq_len`: 2·⌈s/2c⌉,
    /// two chunks of the load-balanced split (the prompt padded to a multiple of 2c, as
    /// Megatron-Core asks the sequence to be divisible by 2c); `seq_len` itself with c = 1.
    pub fn cp_tokens(&self, seq_len: u64) -> u64 {
        if self.cp <= 1 {
            return seq_len;
        }
        2 * seq_len.div_ceil(2 * u64::from(self.cp))
    }

    /// KV heads each tensor-parallel rank holds: g / t, or 1 when t > g (each rank keeps the
    /// KV head its query heads read; Megatron-LM and vLLM replicate them).
    pub fn kv_heads_per_rank(&self, kv_heads: u64) -> u64 {
        (kv_heads / u64::from(self.tp)).max(1)
    }

    /// Blocks of pipeline stage `stage` (0-based): ⌈L / p⌉ for the first L mod p stages and
    /// ⌊L / p⌋ for the rest (Megatron-LM's even split when p divides L).
    pub fn stage_blocks(&self, layers: u64, stage: u32) -> u64 {
        let p = u64::from(self.pp);
        layers / p + u64::from(u64::from(stage) < layers % p)
    }

    /// Checks the layout against `model`.
    ///
    /// # Errors
    /// A degree out of range; `tp` not dividing the heads, or the KV heads and `tp` not
    /// dividing one another (multi-head latent attention splits only its heads); more devices
    /// than any system holds; `ep` not dividing the routed experts; an expert imbalance out of
    /// range; more stages than blocks; context parallelism on multi-head latent attention
    /// ([`LayoutError::ContextUnsupported`]: its K/V exchange would be the latent, re-expanded
    /// on every device, which the pass does not model).
    pub fn validate(&self, model: &Transformer) -> Result<(), LayoutError> {
        let max = crate::comm::system::MAX_DEVICES;
        for (quantity, value) in [
            ("tp", self.tp),
            ("pp", self.pp),
            ("ep", self.ep),
            ("cp", self.cp),
        ] {
            if value == 0 || value > max {
                return Err(LayoutError::Degree { quantity, value });
            }
        }
        if !tp_fits(model, u64::from(self.tp)) {
            return Err(LayoutError::Heads {
                tp: self.tp,
                heads: model.heads,
                kv_heads: model.kv_heads,
            });
        }
        if self.devices() > u64::from(max) {
            return Err(LayoutError::Devices {
                devices: self.devices(),
            });
        }
        if self.ep > 1 && !ep_fits(model, u64::from(self.ep)) {
            return Err(LayoutError::Experts {
                ep: self.ep,
                experts: model.variant.moe.map_or(0, |m| m.experts),
            });
        }
        let imb = self.expert_imbalance;
        if !(imb.is_finite() && imb >= 1.0 && imb <= f64::from(self.ep.max(1))) {
            return Err(LayoutError::Imbalance {
                value: imb,
                ep: self.ep,
            });
        }
        if u64::from(self.pp) > model.layers {
            return Err(LayoutError::Stages {
                pp: self.pp,
                layers: model.layers,
            });
        }
        if self.cp > 1 && model.variant.mla.is_some() {
            return Err(LayoutError::ContextUnsupported {
                cp: self.cp,
                what: "multi-head latent attention (DeepSeek-V2/V3)",
            });
        }
        Ok(())
    }

    /// Checks the layout against `model` ([`Layout::validate`]) and against `workload`: context
    /// parallelism needs a prefill whose prompt fills the 2c chunks of the load-balanced split,
    /// and no sliding window shorter than the prompt.
    ///
    /// # Errors
    /// As [`Layout::validate`]; [`LayoutError::ContextStage`] for cp > 1 in decode;
    /// [`LayoutError::ContextLength`] for a prompt of fewer than 2c tokens;
    /// [`LayoutError::ContextUnsupported`] for a sliding window shorter than the prompt (the
    /// ring would skip the blocks outside it, which the pass does not model).
    pub fn validate_for(
        &self,
        model: &Transformer,
        workload: &Workload,
    ) -> Result<(), LayoutError> {
        self.validate(model)?;
        if self.cp <= 1 {
            return Ok(());
        }
        if workload.stage != Stage::Prefill {
            return Err(LayoutError::ContextStage { cp: self.cp });
        }
        if workload.seq_len < 2 * u64::from(self.cp) {
            return Err(LayoutError::ContextLength {
                cp: self.cp,
                seq_len: workload.seq_len,
            });
        }
        if workload.cached > 0 {
            return Err(LayoutError::ContextUnsupported {
                cp: self.cp,
                what: "a prefill after cached tokens (the ring splits whole prompts)",
            });
        }
        if model
            .variant
            .sliding_window
            .is_some_and(|w| w < workload.seq_len)
        {
            return Err(LayoutError::ContextUnsupported {
                cp: self.cp,
                what: "a sliding window shorter than the prompt",
            });
        }
        Ok(())
    }
}
