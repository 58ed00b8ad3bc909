//! Memory per device for a training step: model states (weights, gradients, optimizer states)
//! sharded by the layout and the ZeRO stage, activations by Korthikanti et al. 2022, and whether
//! they fit beside the reserve of the one memory model ([`crate::memory`]).
//!
//! **Parameters per device** Ψ' ([`device_parameters`]): the blocks of pipeline stage 0 (the
//! largest stage, ⌈L/p⌉ blocks, [`Layout::stage_blocks`]), each with its linear layers split
//! over the t tensor-parallel ranks (⌈n/t⌉; K/V heads replicated when t exceeds them,
//! [`Layout::kv_heads_per_rank`]; routed experts split over t·e) and its norms replicated; plus
//! the pipeline ends: the first stage holds the word embedding (vocab-parallel, V·h/t) and a
//! learned position table (replicated), the last stage lm_head (V·h/t; a tied embedding keeps a
//! copy there when p > 1, as Megatron-LM does) and the final norm. With p = 1 one device holds
//! both ends; with p > 1 the bound taken is stage 0's blocks plus the larger end, an upper bound
//! on every stage (no stage has more blocks than stage 0). Row-parallel biases are counted as
//! split (they are replicated: at most 2·h·(1 − 1/t) parameters a block too few).
//!
//! **Model states** ([`model_states`], Rajbhandari et al. 2020, "ZeRO", §5): mixed-precision
//! Adam keeps w bytes of weights, g of gradients and K of optimizer state per parameter
//! ([`StateBytes`]; ZeRO's 2 + 2 + 12). Over N_d data-parallel ranks:
//!
//! | [`ZeroStage`] | bytes per device |
//! |---|---|
//! | `Zero0` (plain data parallelism) | (w + g + K)·Ψ' |
//! | `Zero1` (P_os) | (w + g)·Ψ' + K·Ψ'/N_d |
//! | `Zero2` (P_os+g) | w·Ψ' + (g + K)·Ψ'/N_d |
//! | `Zero3` (P_os+g+p) | (w + g + K)·Ψ'/N_d |
//!
//! Megatron-LM's distributed optimizer is `Zero1` with fp32 gradients
//! ([`StateBytes::MEGATRON_ADAM`]): 6 + 12/d bytes per parameter (Megatron-LM README).
//!
//! **Activations** ([`activations_per_layer`], Korthikanti et al. 2022, "Reducing Activation
//! Recomputation in Large Transformer Models", Table 2; 16-bit tensors, 1-byte dropout masks;
//! s tokens, b sequences, h hidden, a heads, t tensor-parallel degree), bytes per block:
//!
//! | layout, [`Recompute`] | bytes |
//! |---|---|
//! | t = 1 | s·b·h·(34 + 5·a·s/h) |
//! | tensor parallel | s·b·h·(10 + 24/t + 5·a·s/(h·t)) |
//! | tensor + sequence parallel | s·b·h·(34/t + 5·a·s/(h·t)) |
//! | `Selective` | the same without the 5·a·s/h term (the score matrix, its softmax and dropout) |
//! | `Full` | 2·s·b·h (the block's input; ÷ t with sequence parallelism, whose input is sharded) |
//!
//! FlashAttention never stores the s×s scores either: with `flash_attention` the 5·a·s/h term
//! goes (its per-row softmax statistics, 4·a·s·b bytes, are not counted). Table 2 is written for
//! the GPT block of its validation models: multi-head attention and a non-gated 4h MLP. It is
//! taken as published for every model: for GQA (smaller K and V) it overcounts, for a gated MLP
//! of another width it is an approximation; the published rows checked against it are GPT
//! models. With context parallelism each device holds c's share of the tokens
//! ([`Layout::cp_tokens`]) and s is that share (the scores one ring step holds).
//!
//! Stage 0 of a 1F1B pipeline holds ⌈L/p⌉ blocks for min(m, p) micro-batches in flight, times
//! 1 + (p − 1)/(p·v) with v > 1 interleaved chunks (Korthikanti §4.2.3; Narayanan et al. 2021,
//! §2.2). The embedding's dropout mask and the output layer's logits (Korthikanti §4.3) are not
//! counted. Full recomputation adds one block's un-recomputed activations for one micro-batch:
//! the block being recomputed in the backward pass.
//!
//! **Communication buffers**: with `Zero3`, two blocks of gathered weights (the block computed
//! and the one prefetched, FSDP's forward and backward prefetch) in w bytes per parameter; 0
//! otherwise (Megatron-LM's gradient buckets are views of the gradient buffer, counted in the
//! gradients; DeepSpeed's reduce and all-gather buckets, 5e8 elements each by default, are not
//! counted).
//!
//! A step fits when model states + activations + communication + reserve ≤ capacity, asked of
//! the one [`MemoryFootprint`] ([`TrainingMemory::footprint`]).

pub use super::backward::Recompute;
use crate::memory::{MemoryFootprint, Reserve};
use crate::model::{NormKind, Positions, Transformer};
use crate::parallel::{Layout, LayoutError};
use crate::units::Bytes;
use serde::Serialize;
use std::fmt;

/// How far the model states are sharded over the data-parallel ranks (Rajbhandari et al.
/// 2020, §5). PyTorch FSDP's `FULL_SHARD` is `Zero3`, its `SHARD_GRAD_OP` is `Zero2`, its
/// `NO_SHARD` is `Zero0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ZeroStage {
    /// Plain data parallelism: every rank keeps all states.
    Zero0,
    /// Optimizer states sharded (P_os).
    Zero1,
    /// Optimizer states and gradients sharded (P_os+g).
    Zero2,
    /// Optimizer states, gradients and weights sharded (P_os+g+p).
    Zero3,
}

/// Bytes per parameter of each model state under mixed-precision training.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StateBytes {
    /// Weights as the forward pass reads them (2: fp16 or bf16).
    pub weight: f64,
    /// Gradients (2 in ZeRO's accounting; 4 when accumulated in fp32).
    pub gradient: f64,
    /// Optimizer states, ZeRO's K: for Adam an fp32 master copy, momentum and variance, 12.
    pub optimizer: f64,
}

impl StateBytes {
    /// ZeRO §5's mixed-precision Adam: 2 + 2 + 12 = 16 bytes per parameter.
    pub const ZERO_ADAM: StateBytes = StateBytes {
        weight: 2.0,
        gradient: 2.0,
        optimizer: 12.0,
    };
    /// Megatron-LM's mixed-precision Adam, gradients accumulated in fp32: 2 + 4 + 12 = 18
    /// bytes per parameter (Megatron-LM README, distributed optimizer).
    pub const MEGATRON_ADAM: StateBytes = StateBytes {
        weight: 2.0,
        gradient: 4.0,
        optimizer: 12.0,
    };

    /// w + g + K, bytes per parameter.
    pub fn total(self) -> f64 {
        self.weight + self.gradient + self.optimizer
    }
}

impl Default for StateBytes {
    fn default() -> Self {
        Self::ZERO_ADAM
    }
}

/// The model states one device keeps.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ModelStates {
    /// Weights, bytes.
    pub weights: Bytes,
    /// Gradients, bytes.
    pub gradients: Bytes,
    /// Optimizer states, bytes.
    pub optimizer: Bytes,
}

impl ModelStates {
    /// Weights + gradients + optimizer states, bytes.
    pub fn total(&self) -> Bytes {
        self.weights + self.gradients + self.optimizer
    }
}

/// The model states of `parameters` (Ψ', those one device holds after tensor and pipeline
/// sharding) at `bytes` per parameter, sharded over `data_parallel` ranks (N_d; 0 is taken as
/// 1) as `zero` says (ZeRO §5; the table in the module docs).
///
/// ```
/// use roofline_core::train::memory::{model_states, StateBytes, ZeroStage};
/// // ZeRO's own example: Ψ = 7.5B, N_d = 64, K = 12: ZeRO-3 keeps 16·7.5e9/64 B = 1.875 GB.
/// let s = model_states(7.5e9, ZeroStage::Zero3, 64, StateBytes::ZERO_ADAM);
/// assert_eq!(s.total().get(), 1.875e9);
/// ```
pub fn model_states(
    parameters: f64,
    zero: ZeroStage,
    data_parallel: u32,
    bytes: StateBytes,
) -> ModelStates {
    let n = f64::from(data_parallel.max(1));
    let (w, g, k) = match zero {
        ZeroStage::Zero0 => (1.0, 1.0, 1.0),
        ZeroStage::Zero1 => (1.0, 1.0, n),
        ZeroStage::Zero2 => (1.0, n, n),
        ZeroStage::Zero3 => (n, n, n),
    };
    ModelStates {
        weights: Bytes(parameters * bytes.weight / w),
        gradients: Bytes(parameters * bytes.gradient / g),
        optimizer: Bytes(parameters * bytes.optimizer / k),
    }
}

/// The parameters one device of a tensor- and pipeline-parallel layout holds (the bound of the
/// module docs), in parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DeviceParameters {
    /// Pipeline stages p.
    pub stages: u32,
    /// Parameters of stage 0's ⌈L/p⌉ blocks on one tensor-parallel rank.
    pub blocks: u64,
    /// Parameters of one block on one tensor-parallel rank (the larger of a dense and a
    /// mixture-of-experts block where the model has both).
    pub per_block: u64,
    /// The first stage's extra: word embedding ⌈V·h/t⌉ and a learned position table.
    pub first_stage: u64,
    /// The last stage's extra: lm_head ⌈V·h/t⌉ (none for a tied embedding with p = 1) and the
    /// final norm.
    pub last_stage: u64,
}

impl DeviceParameters {
    /// Ψ': the blocks plus both ends with p = 1, plus the larger end with p > 1.
    pub fn largest(&self) -> u64 {
        let ends = if self.stages <= 1 {
            self.first_stage.saturating_add(self.last_stage)
        } else {
            self.first_stage.max(self.last_stage)
        };
        self.blocks.saturating_add(ends)
    }
}

fn norm_parameters(model: &Transformer) -> u64 {
    match model.norm {
        NormKind::RmsNorm => model.hidden,
        NormKind::LayerNorm => 2 * model.hidden,
    }
}

/// The parameters of `model` one device of `layout` holds (module docs: stage 0's blocks split
/// over t, the pipeline ends as stated). The caller validates `layout` against `model`
/// ([`Layout::validate`]); degrees of 0 are taken as 1.
pub fn device_parameters(model: &Transformer, layout: &Layout) -> DeviceParameters {
    let t = u64::from(layout.tp.max(1));
    let e_par = u64::from(layout.ep.max(1));
    let h = model.hidden;
    let norm = norm_parameters(model);
    let attention = model.attention_parameters();
    let attention_rank = if model.variant.mla.is_some() {
        attention.div_ceil(t)
    } else {
        let bias = u64::from(model.qkv_bias);
        let kv_head = 2 * (h + bias) * model.head_dim;
        let kv = kv_head * model.kv_heads;
        attention.saturating_sub(kv).div_ceil(t)
            + kv_head * layout.kv_heads_per_rank(model.kv_heads)
    };
    let moe_layers = model.moe_layers();
    let dense_rank = model.mlp_parameters(false, false).div_ceil(t);
    let mlp_rank = match model.variant.moe {
        Some(m) if moe_layers > 0 => {
            let routed = m.experts * 3 * h * m.expert_intermediate;
            let moe = model.mlp_parameters(true, false);
            let moe_rank = moe.saturating_sub(routed).div_ceil(t) + routed.div_ceil(t * e_par);
            if moe_layers < model.layers {
                moe_rank.max(dense_rank)
            } else {
                moe_rank
            }
        }
        _ => dense_rank,
    };
    let per_block = attention_rank + mlp_rank + 2 * norm;
    let stages = layout.pp.max(1);
    let blocks = Layout {
        pp: stages,
        ..*layout
    }
    .stage_blocks(model.layers, 0)
        * per_block;
    let embedding = (model.vocab * h).div_ceil(t);
    let positions = match model.variant.positions {
        Positions::Learned { rows } => rows * h,
        Positions::Rotary => 0,
    };
    let head = if model.tie_embeddings && stages == 1 {
        0
    } else {
        embedding
    };
    DeviceParameters {
        stages,
        blocks,
        per_block,
        first_stage: embedding + positions,
        last_stage: head + norm,
    }
}

/// Activation bytes one block keeps for `micro_batch` sequences of `seq_len` tokens under
/// `layout` (t, sequence parallelism, c), `recompute` and `flash_attention`: Korthikanti et al.
/// 2022, Table 2 (the table in the module docs; 16-bit activations, taken as published for
/// every block shape).
///
/// ```
/// use roofline_core::parallel::Layout;
/// use roofline_core::train::memory::{activations_per_layer, Recompute};
/// // GPT-3 175B block (h 12288, 96 heads), s 2048, b 1, t 8, no sequence parallelism:
/// // s·b·h·(10 + 24/8 + 5·96·2048/(12288·8)) = 25,165,824 · 23 bytes.
/// let layout = Layout { tp: 8, ..Layout::SINGLE };
/// let a = activations_per_layer(12288, 96, &layout, 1, 2048, Recompute::None, false);
/// assert_eq!(a.get(), 25_165_824.0 * 23.0);
/// ```
pub fn activations_per_layer(
    hidden: u64,
    heads: u64,
    layout: &Layout,
    micro_batch: u64,
    seq_len: u64,
    recompute: Recompute,
    flash_attention: bool,
) -> Bytes {
    let t = f64::from(layout.tp.max(1));
    let s = layout.cp_tokens(seq_len) as f64;
    let h = hidden as f64;
    let sbh = s * micro_batch as f64 * h;
    let sp = layout.sequence_parallel && layout.tp > 1;
    if recompute == Recompute::Full {
        return Bytes(2.0 * sbh / if sp { t } else { 1.0 });
    }
    let scores = if flash_attention || recompute == Recompute::Selective {
        0.0
    } else {
        5.0 * heads as f64 * s / (h * t)
    };
    let rest = if sp { 34.0 / t } else { 10.0 + 24.0 / t };
    Bytes(sbh * (rest + scores))
}

/// Micro-batches whose activations stage 0 of a 1F1B pipeline of `stages` holds at its peak,
/// with `micro_batches` (m) per iteration and `interleave` (v) chunks per device:
/// min(m, p) · (1 + (p − 1)/(p·v)) for v > 1, min(m, p) for v = 1 (Korthikanti §4.2.3).
pub fn in_flight(stages: u32, micro_batches: u64, interleave: u32) -> f64 {
    let p = f64::from(stages.max(1));
    let base = (micro_batches.max(1) as f64).min(p);
    if interleave > 1 {
        base * (1.0 + (p - 1.0) / (p * f64::from(interleave)))
    } else {
        base
    }
}

/// A training step's parallel layout, batch and memory policy.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrainingSetup {
    /// Tensor, pipeline, expert and context parallelism, and sequence parallelism.
    pub layout: Layout,
    /// Data-parallel ranks N_d the model states shard over under ZeRO (with context
    /// parallelism, Megatron-LM shards over d·c: pass that product).
    pub data_parallel: u32,
    /// How the model states are sharded over them.
    pub zero: ZeroStage,
    /// Bytes per parameter of each model state.
    pub state: StateBytes,
    /// Sequences per micro-batch, b.
    pub micro_batch: u64,
    /// Tokens per sequence, s.
    pub seq_len: u64,
    /// Micro-batches per iteration on each pipeline, m (global batch ÷ (b · d)).
    pub micro_batches: u64,
    /// Interleaved pipeline chunks per device, v (1: plain 1F1B).
    pub interleave: u32,
    /// Which activations are kept.
    pub recompute: Recompute,
    /// Attention by FlashAttention: the score matrix is never stored.
    pub flash_attention: bool,
}

impl TrainingSetup {
    /// `layout` training `micro_batch` sequences of `seq_len` tokens: one data-parallel rank,
    /// no ZeRO, ZeRO's 16 bytes per parameter, one micro-batch, no interleaving, no
    /// recomputation, attention without FlashAttention.
    pub fn new(layout: Layout, micro_batch: u64, seq_len: u64) -> Self {
        TrainingSetup {
            layout,
            data_parallel: 1,
            zero: ZeroStage::Zero0,
            state: StateBytes::ZERO_ADAM,
            micro_batch,
            seq_len,
            micro_batches: 1,
            interleave: 1,
            recompute: Recompute::None,
            flash_attention: false,
        }
    }

    /// Checks the setup against `model`.
    ///
    /// # Errors
    /// The layout does not fit the model ([`TrainingMemoryError::Layout`]); a count of zero
    /// ([`TrainingMemoryError::Zero`]); bytes per state negative or not finite
    /// ([`TrainingMemoryError::StateBytes`]); v > 1 without a pipeline, or not dividing the
    /// stage's blocks ([`TrainingMemoryError::Interleave`]).
    pub fn validate(&self, model: &Transformer) -> Result<(), TrainingMemoryError> {
        self.layout
            .validate(model)
            .map_err(TrainingMemoryError::Layout)?;
        for (quantity, value) in [
            ("data_parallel", u64::from(self.data_parallel)),
            ("micro_batch", self.micro_batch),
            ("seq_len", self.seq_len),
            ("micro_batches", self.micro_batches),
            ("interleave", u64::from(self.interleave)),
        ] {
            if value == 0 {
                return Err(TrainingMemoryError::Zero(quantity));
            }
        }
        let s = self.state;
        if ![s.weight, s.gradient, s.optimizer]
            .iter()
            .all(|b| b.is_finite() && *b >= 0.0)
        {
            return Err(TrainingMemoryError::StateBytes);
        }
        let blocks = self.layout.stage_blocks(model.layers, 0);
        if self.interleave > 1
            && (self.layout.pp <= 1 || !blocks.is_multiple_of(u64::from(self.interleave)))
        {
            return Err(TrainingMemoryError::Interleave {
                interleave: self.interleave,
                pp: self.layout.pp,
                blocks,
            });
        }
        Ok(())
    }
}

/// Why a training setup cannot be evaluated.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TrainingMemoryError {
    /// The layout does not fit the model.
    Layout(LayoutError),
    /// A count that must be at least 1 is 0 (the field's name).
    Zero(&'static str),
    /// Bytes per parameter of a state negative or not finite.
    StateBytes,
    /// Interleaving without a pipeline, or v not dividing stage 0's blocks.
    Interleave {
        /// Chunks per device, v.
        interleave: u32,
        /// Pipeline stages, p.
        pp: u32,
        /// Blocks of stage 0.
        blocks: u64,
    },
}

impl fmt::Display for TrainingMemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrainingMemoryError::Layout(e) => write!(f, "{e}"),
            TrainingMemoryError::Zero(q) => write!(f, "{q} must be at least 1"),
            TrainingMemoryError::StateBytes => {
                write!(f, "bytes per parameter must be finite and not negative")
            }
            TrainingMemoryError::Interleave {
                interleave,
                pp,
                blocks,
            } => write!(
                f,
                "{interleave} interleaved chunks need a pipeline (pp = {pp}) whose stage's \
                 {blocks} blocks they divide"
            ),
        }
    }
}
impl std::error::Error for TrainingMemoryError {}

/// Memory one device needs for a training step: the largest pipeline stage's model states and
/// stage 0's activations (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrainingMemory {
    /// Parameters the device holds, Ψ' ([`DeviceParameters::largest`]).
    pub parameters: u64,
    /// Weights after ZeRO sharding, bytes.
    pub weights: Bytes,
    /// Gradients after ZeRO sharding, bytes.
    pub gradients: Bytes,
    /// Optimizer states after ZeRO sharding, bytes.
    pub optimizer: Bytes,
    /// Activations kept for the backward pass on stage 0 at the pipeline's peak, bytes.
    pub activations: Bytes,
    /// Communication buffers, bytes (module docs: ZeRO-3's gathered blocks, else 0).
    pub communication: Bytes,
    /// Kept by the runtime, bytes ([`Reserve`]).
    pub reserve: Bytes,
    /// Main-memory capacity of the device, if known, bytes.
    pub capacity: Option<Bytes>,
}

impl TrainingMemory {
    /// Weights + gradients + optimizer states, bytes.
    pub fn model_states(&self) -> Bytes {
        self.weights + self.gradients + self.optimizer
    }

    /// The same memory as the one footprint: model states as its weights, activations and
    /// communication buffers as its activations, no KV cache.
    pub fn footprint(&self) -> MemoryFootprint {
        MemoryFootprint {
            weights: self.model_states(),
            kv_cache: Bytes::ZERO,
            activations: self.activations + self.communication,
            activations_at: "pipeline stage 0",
            reserve: self.reserve,
            capacity: self.capacity,
        }
    }

    /// Model states + activations + communication + reserve, bytes.
    pub fn total(&self) -> Bytes {
        self.footprint().total()
    }

    /// Whether the total fits in the capacity (`None` when it is unknown),
    /// [`MemoryFootprint::fits`].
    pub fn fits(&self) -> Option<bool> {
        self.footprint().fits()
    }
}

/// The memory per device of `model` trained as `setup` says, on a device of `capacity`
/// keeping `reserve` (module docs for each term).
///
/// # Errors
/// [`TrainingSetup::validate`]'s.
pub fn training_memory(
    model: &Transformer,
    setup: &TrainingSetup,
    capacity: Option<Bytes>,
    reserve: Reserve,
) -> Result<TrainingMemory, TrainingMemoryError> {
    setup.validate(model)?;
    Ok(evaluate(model, setup, capacity, reserve))
}

fn evaluate(
    model: &Transformer,
    setup: &TrainingSetup,
    capacity: Option<Bytes>,
    reserve: Reserve,
) -> TrainingMemory {
    let params = device_parameters(model, &setup.layout);
    let psi = params.largest();
    let states = model_states(psi as f64, setup.zero, setup.data_parallel, setup.state);
    let layer = |recompute| {
        activations_per_layer(
            model.hidden,
            model.heads,
            &setup.layout,
            setup.micro_batch,
            setup.seq_len,
            recompute,
            setup.flash_attention,
        )
    };
    let blocks = setup.layout.stage_blocks(model.layers, 0) as f64;
    let flight = in_flight(setup.layout.pp, setup.micro_batches, setup.interleave);
    let mut activations = layer(setup.recompute) * (blocks * flight);
    if setup.recompute == Recompute::Full {
        activations += layer(Recompute::None);
    }
    let communication = if setup.zero == ZeroStage::Zero3 {
        Bytes(2.0 * params.per_block as f64 * setup.state.weight)
    } else {
        Bytes::ZERO
    };
    TrainingMemory {
        parameters: psi,
        weights: states.weights,
        gradients: states.gradients,
        optimizer: states.optimizer,
        activations,
        communication,
        reserve: reserve.bytes(capacity),
        capacity,
    }
}

/// The largest micro-batch b ≤ `limit` with which `model` trained as `setup` (its
/// `micro_batch` ignored) fits a device of `capacity` keeping `reserve`; `None` when b = 1 does
/// not fit or `limit` is 0. Memory grows with b, so the search doubles b and then bisects: O(log b)
/// evaluations, no allocation.
///
/// # Errors
/// [`TrainingSetup::validate`]'s.
pub fn largest_micro_batch(
    model: &Transformer,
    setup: &TrainingSetup,
    capacity: Bytes,
    reserve: Reserve,
    limit: u64,
) -> Result<Option<u64>, TrainingMemoryError> {
    let at = |b: u64| TrainingSetup {
        micro_batch: b,
        ..*setup
    };
    at(1).validate(model)?;
    let fits = |b: u64| evaluate(model, &at(b), Some(capacity), reserve).fits() == Some(true);
    if limit == 0 || !fits(1) {
        return Ok(None);
    }
    // fits(lo) holds; find hi with !fits(hi) or hi = limit + 1.
    let mut lo = 1u64;
    let mut hi = 2u64;
    while hi <= limit && fits(hi) {
        lo = hi;
        hi = hi.saturating_mul(2);
    }
    let mut hi = hi.min(limit.saturating_add(1));
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(lo))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GPT block as Korthikanti's models: LayerNorm, GeLU 4h MLP, biases, learned positions,
    /// tied embedding.
    fn gpt(
        hidden: u64,
        layers: u64,
        heads: u64,
        vocab: u64,
        seq: u64,
    ) -> Result<Transformer, crate::model::ModelError> {
        Transformer::builder(hidden, layers, heads, 4 * hidden, vocab)
            .megatron_gpt(seq)
            .build()
    }

    #[test]
    fn zero_stages_as_in_the_zero_paper() {
        // ZeRO §5 / Figure 1: Ψ = 7.5B, N_d = 64, K = 12.
        let s = |z| {
            model_states(7.5e9, z, 64, StateBytes::ZERO_ADAM)
                .total()
                .get()
        };
        assert_eq!(s(ZeroStage::Zero0), 16.0 * 7.5e9); // 120 GB
        assert_eq!(s(ZeroStage::Zero1), 4.0 * 7.5e9 + 12.0 * 7.5e9 / 64.0); // 31.4 GB
        assert_eq!(s(ZeroStage::Zero2), 2.0 * 7.5e9 + 14.0 * 7.5e9 / 64.0); // 16.6 GB
        assert_eq!(s(ZeroStage::Zero3), 1.875e9);
        // Megatron's distributed optimizer: 6 + 12/d bytes per parameter; d = 8 → 7.5.
        let m = model_states(1.0, ZeroStage::Zero1, 8, StateBytes::MEGATRON_ADAM);
        assert_eq!(m.total().get(), 7.5);
        // N_d = 0 is taken as 1.
        assert_eq!(
            model_states(1.0, ZeroStage::Zero3, 0, StateBytes::ZERO_ADAM).total(),
            Bytes(16.0)
        );
    }

    #[test]
    fn table_2_by_hand() {
        // GPT-22B block: h 6144, a 64, s 2048, b 4. sbh = 50,331,648.
        let sbh = 2048.0 * 4.0 * 6144.0;
        let tp = Layout {
            tp: 8,
            ..Layout::SINGLE
        };
        let sp = Layout {
            sequence_parallel: true,
            ..tp
        };
        let a = |l: &Layout, r, f| activations_per_layer(6144, 64, l, 4, 2048, r, f).get();
        // 5·a·s/(h·t) = 5·64·2048/(6144·8) = 40/3.
        assert!((a(&tp, Recompute::None, false) - sbh * (13.0 + 40.0 / 3.0)).abs() < 1.0);
        assert_eq!(a(&sp, Recompute::Selective, false), sbh * 34.0 / 8.0);
        assert_eq!(a(&sp, Recompute::None, true), sbh * 34.0 / 8.0);
        assert_eq!(a(&tp, Recompute::Full, false), 2.0 * sbh);
        assert_eq!(a(&sp, Recompute::Full, false), 2.0 * sbh / 8.0);
        // t = 1: 34 + 5·a·s/h = 34 + 5·64·2048/6144.
        let one = a(&Layout::SINGLE, Recompute::None, false);
        assert!((one - sbh * (34.0 + 5.0 * 64.0 * 2048.0 / 6144.0)).abs() < 1.0);
        // 48 blocks, no pipeline: 59.25 GiB (Korthikanti Figure 1, 22B, TP only).
        let total = a(&tp, Recompute::None, false) * 48.0;
        assert!((total - 59.25 * 1024f64.powi(3)).abs() < 1.0);
    }

    #[test]
    fn pipeline_in_flight() {
        assert_eq!(in_flight(1, 4, 1), 1.0);
        assert_eq!(in_flight(8, 64, 1), 8.0);
        assert_eq!(in_flight(8, 3, 1), 3.0);
        // v = 3: 8 · (1 + 7/24).
        assert!((in_flight(8, 64, 3) - 8.0 * 31.0 / 24.0).abs() < 1e-12);
    }

    #[test]
    fn parameters_per_device_by_hand() -> Result<(), Box<dyn std::error::Error>> {
        // h 64, 4 blocks, 4 heads, V 100, 16 positions, t 2, p 2.
        let m = gpt(64, 4, 4, 100, 16)?;
        let layout = Layout {
            tp: 2,
            pp: 2,
            ..Layout::SINGLE
        };
        let d = device_parameters(&m, &layout);
        // Block: attention 4h² + 4h (q, k, v, o and biases), MLP 8h² + 5h, two LayerNorms 4h.
        // Split: attention and MLP over 2, norms replicated.
        let (attn, mlp) = (4 * 64 * 64 + 4 * 64, 8 * 64 * 64 + 5 * 64);
        assert_eq!(d.per_block, attn / 2 + mlp / 2 + 4 * 64);
        assert_eq!(d.blocks, 2 * d.per_block);
        assert_eq!(d.first_stage, 100 * 64 / 2 + 16 * 64);
        assert_eq!(d.last_stage, 100 * 64 / 2 + 2 * 64);
        assert_eq!(d.largest(), d.blocks + d.first_stage);
        // One device: every parameter, the tied embedding once.
        let one = device_parameters(&m, &Layout::SINGLE);
        assert_eq!(one.largest(), m.parameters());
        Ok(())
    }

    #[test]
    fn kv_heads_replicated_past_their_count() -> Result<(), Box<dyn std::error::Error>> {
        // 8 query heads, 2 KV heads, t = 4: each rank keeps one KV head (of 16 dims).
        let m = Transformer::builder(128, 2, 8, 256, 10)
            .kv_heads(2)
            .build()?;
        let l = Layout {
            tp: 4,
            ..Layout::SINGLE
        };
        let d = device_parameters(&m, &l);
        let (q, kv_head) = (128 * 128, 2 * 128 * 16);
        assert_eq!(
            d.per_block,
            (2 * q) / 4 + kv_head + 3 * 128 * 256 / 4 + 2 * 128
        );
        Ok(())
    }

    #[test]
    fn routed_experts_split_over_tp_and_ep() -> Result<(), Box<dyn std::error::Error>> {
        // 4 blocks, all MoE: 8 experts of f_e 32, top-2, no shared expert; t = 2, e = 4.
        let m = Transformer::builder(64, 4, 4, 128, 10)
            .moe(Some(crate::model::Moe::new(8, 2, 32)))
            .build()?;
        let l = Layout {
            tp: 2,
            ep: 4,
            ..Layout::SINGLE
        };
        let d = device_parameters(&m, &l);
        let (attention, router, routed) = (4 * 64 * 64, 64 * 8, 8 * 3 * 64 * 32);
        assert_eq!(
            d.per_block,
            attention / 2 + router / 2 + routed / 8 + 2 * 64
        );
        Ok(())
    }

    #[test]
    fn fits_and_the_largest_micro_batch() -> Result<(), Box<dyn std::error::Error>> {
        let m = gpt(1024, 8, 16, 1000, 512)?;
        let base = TrainingSetup::new(Layout::SINGLE, 1, 512);
        let one = training_memory(&m, &base, None, Reserve::DEFAULT)?;
        assert_eq!(one.fits(), None);
        assert_eq!(one.communication, Bytes::ZERO);
        assert_eq!(one.model_states().get(), 16.0 * m.parameters() as f64);
        // Capacity for the states, the reserve and exactly 5 sequences' activations.
        let per_seq = one.activations.get();
        let reserve = Reserve::Bytes(Bytes(1e9));
        let cap = Bytes(one.model_states().get() + 1e9 + 5.0 * per_seq);
        let at = |b| {
            training_memory(
                &m,
                &TrainingSetup::new(Layout::SINGLE, b, 512),
                Some(cap),
                reserve,
            )
            .map(|t| t.fits())
        };
        assert_eq!(at(5)?, Some(true));
        assert_eq!(at(6)?, Some(false));
        let best = |limit| largest_micro_batch(&m, &base, cap, reserve, limit);
        assert_eq!(best(1000)?, Some(5));
        assert_eq!(best(3)?, Some(3));
        assert_eq!(best(0)?, None);
        let small = Bytes(one.model_states().get());
        assert_eq!(largest_micro_batch(&m, &base, small, reserve, 10)?, None);
        Ok(())
    }

    #[test]
    fn full_recompute_keeps_inputs_and_one_block() -> Result<(), Box<dyn std::error::Error>> {
        let m = gpt(1024, 8, 16, 1000, 512)?;
        let setup = TrainingSetup {
            recompute: Recompute::Full,
            ..TrainingSetup::new(Layout::SINGLE, 2, 512)
        };
        let mem = training_memory(&m, &setup, None, Reserve::DEFAULT)?;
        let sbh = 512.0 * 2.0 * 1024.0;
        let block = sbh * (34.0 + 5.0 * 16.0 * 512.0 / 1024.0);
        assert_eq!(mem.activations.get(), 8.0 * 2.0 * sbh + block);
        Ok(())
    }

    #[test]
    fn zero3_counts_two_gathered_blocks() -> Result<(), Box<dyn std::error::Error>> {
        let m = gpt(1024, 8, 16, 1000, 512)?;
        let setup = TrainingSetup {
            zero: ZeroStage::Zero3,
            data_parallel: 8,
            ..TrainingSetup::new(Layout::SINGLE, 1, 512)
        };
        let mem = training_memory(&m, &setup, None, Reserve::DEFAULT)?;
        let per_block = device_parameters(&m, &Layout::SINGLE).per_block as f64;
        assert_eq!(mem.communication.get(), 2.0 * 2.0 * per_block);
        assert_eq!(mem.model_states().get(), 16.0 * m.parameters() as f64 / 8.0);
        Ok(())
    }

    #[test]
    fn bad_setups_are_refused() -> Result<(), Box<dyn std::error::Error>> {
        let m = gpt(1024, 8, 16, 1000, 512)?;
        let base = TrainingSetup::new(Layout::SINGLE, 1, 512);
        let check = |s: TrainingSetup| training_memory(&m, &s, None, Reserve::DEFAULT);
        assert_eq!(
            check(TrainingSetup {
                micro_batches: 0,
                ..base
            }),
            Err(TrainingMemoryError::Zero("micro_batches"))
        );
        assert!(matches!(
            check(TrainingSetup {
                interleave: 2,
                ..base
            }),
            Err(TrainingMemoryError::Interleave { .. })
        ));
        assert!(matches!(
            check(TrainingSetup {
                layout: Layout {
                    tp: 3,
                    ..Layout::SINGLE
                },
                ..base
            }),
            Err(TrainingMemoryError::Layout(_))
        ));
        assert_eq!(
            check(TrainingSetup {
                state: StateBytes {
                    weight: f64::NAN,
                    ..StateBytes::ZERO_ADAM
                },
                ..base
            }),
            Err(TrainingMemoryError::StateBytes)
        );
        Ok(())
    }
}
