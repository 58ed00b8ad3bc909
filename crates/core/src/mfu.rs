//! Training efficiency: model FLOPs per token by four published conventions, model and hardware
//! FLOPs utilisation (MFU, HFU), the time to train, and the inverse questions.
//!
//! Every convention counts a multiply-add as 2 FLOP and the backward pass as twice the forward
//! pass, so model FLOPs per token = 3 × forward FLOPs per token. They differ in what the forward
//! pass holds ([`ForwardSplit`], per token of a T-token sequence, L layers, d hidden, H·Q the
//! query width, V vocabulary):
//!
//! | [`Formula`] | blocks | attention scores | head | model FLOPs / token |
//! |---|---|---|---|---|
//! | Kaplan et al. 2020, §2.1 | 2N | — | — | 6N (N non-embedding) |
//! | PaLM (Chowdhery et al. 2022), App. B | 2(N − N_emb) | 4·L·H·Q·T | 2·N_emb | 6N + 12·L·H·Q·T |
//! | Megatron (Narayanan et al. 2021; Korthikanti et al. 2022) | 24·L·d² | 4·L·d·T | 2·V·d | 72·L·d²·(1 + T/6d + V/12dL) |
//! | our operator graph ([`crate::decoder`]), [`model_flops_per_token`] | Σ block matmuls | QKᵀ, S·V | lm_head at every position | 3 × Σ forward matmuls |
//!
//! The attention-score term is counted under a [`ScoreMask`]: [`ScoreMask::Full`], the full T×T
//! score matrix as PaLM (App. B) and Megatron (Narayanan et al. 2021, §5.1) write it, or
//! [`ScoreMask::Causal`], half of it (T²/2 scores per head), as FlashAttention's benchmark
//! (`flops(..., causal=True)` divides by 2; Dao 2023) and Megatron-LM's current
//! `num_floating_point_operations` count a causal decoder. The half counts the diagonal as half a
//! row of scores; the exact lower triangle with its diagonal is T(T+1)/2 (1/T more, 0.05 % at
//! T = 2048). The graph row uses the eager (unfused) graph, which computes every score, and the
//! mask halves its QKᵀ and S·V alike.
//!
//! The graph row counts the matrix operators only (GEMMs, expert GEMMs, QKᵀ and S·V): norms,
//! rotary, activations, softmax, residual adds and the loss are the kernels' work, not the
//! model's, as in PaLM's and Megatron's counts. Under the causal mask it is *the* model FLOPs
//! per token ([`model_flops_per_token`]) that `roofline train` divides by too, whatever
//! attention kernel the step runs.
//!
//! A formula is reported only for a model it describes: Megatron's 24·L·h² per layer assumes
//! multi-head attention (K and V as wide as h) and a two-matrix MLP of 4h, so for GQA, MQA, MLA,
//! a gated (SwiGLU) MLP, another MLP width or a mixture of experts it is [`Unavailable::NotValid`]
//! with the reason ([`TrainingShape::megatron_mismatch`]).
//!
//! **MFU** = achieved model FLOP/s ÷ peak (PaLM §4.1): tokens/s × model FLOPs per token ÷
//! (devices × dense peak per device). **HFU** counts the FLOPs actually executed, recomputation
//! included ([`Recompute`]). The peak is always the chip's *dense* figure for the precision
//! trained in (see [`crate::device`]); a 2:4-sparse datasheet figure would halve the MFU.

use crate::analysis::{validate, AnalysisError};
use crate::decoder::build_graph;
use crate::memory::Reserve;
use crate::model::{MlpKind, Transformer};
use crate::ops::Compute;
use crate::precision::Precision;
use crate::units::{Flop, FlopPerSec, Seconds};
use crate::workload::{Logits, Precisions, Stage, Workload};
use serde::Serialize;
use std::fmt;

/// Activation recomputation: forward FLOPs run again in the backward pass. It raises hardware
/// FLOPs (HFU), never model FLOPs (MFU).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "non_attention")]
pub enum Recompute {
    /// Nothing recomputed: HFU = MFU.
    None,
    /// Selective recomputation (Korthikanti et al. 2022, §4.2): the attention scores. Counted as
    /// the paper's hardware-FLOPs expression 72·B·L·s·h²·(1 + s/(3h) + V/(12hL)), i.e. three
    /// times the attention-score forward FLOPs on top of the model FLOPs. A recount of
    /// recomputing QKᵀ and S·V once gives one times (s/(4.5h)); the paper's published HFUs are
    /// reproduced only with its own expression, so it is used as printed.
    Selective,
    /// Full recomputation (Narayanan et al. 2021, §5.1): one more forward pass of every block
    /// (logits and embedding are not recomputed): 96·B·s·L·h²·(1 + s/6h + V/16Lh) per iteration.
    Full,
    /// PaLM's scheme (Chowdhery et al. 2022, App. B): this fraction of the non-attention forward
    /// FLOPs, and all attention-score forward FLOPs, are recomputed (PaLM 540B: 0.75; 8B and 62B:
    /// 0, attention only).
    Partial(f64),
}

impl fmt::Display for Recompute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recompute::None => f.write_str("none"),
            Recompute::Selective => f.write_str("selective"),
            Recompute::Full => f.write_str("full"),
            Recompute::Partial(x) => write!(f, "partial={x}"),
        }
    }
}

/// Which attention scores a formula counts (see the module docs for the sources).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScoreMask {
    /// Every score of the T×T matrix, as PaLM App. B and Narayanan et al. 2021 §5.1 count.
    Full,
    /// A causal decoder: half the T×T matrix, T²/2 scores per head (FlashAttention's and
    /// Megatron-LM's count; the diagonal counted half, T(T+1)/2 would count it whole).
    Causal,
}

impl ScoreMask {
    /// The fraction of the full score matrix counted: 1, or 1/2.
    pub fn fraction(self) -> f64 {
        match self {
            ScoreMask::Full => 1.0,
            ScoreMask::Causal => 0.5,
        }
    }

    /// Short id (`full`, `causal`).
    pub fn id(self) -> &'static str {
        match self {
            ScoreMask::Full => "full",
            ScoreMask::Causal => "causal",
        }
    }

    /// How reports name it.
    pub fn label(self) -> &'static str {
        match self {
            ScoreMask::Full => "full (every T×T score, as PaLM and Narayanan et al. 2021 count)",
            ScoreMask::Causal => {
                "causal (T²/2 scores per head, as FlashAttention and Megatron-LM count; the diagonal counted half)"
            }
        }
    }
}

/// What PaLM's N holds of the embedding matrices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PalmEmbedding {
    /// N holds the matrices a token multiplies by: the output projection (lm_head, tied or not)
    /// but not an untied input embedding or a learned position table, which are looked up
    /// (0 FLOP, as `roofline analyze` counts them). For PaLM's own models (tied embedding, no
    /// position table) this is PaLM's N.
    Output,
    /// N is every parameter, as PaLM App. B writes it: an untied input embedding is charged
    /// 6 FLOP per parameter per token as if it were a matmul.
    All,
}

impl PalmEmbedding {
    /// Short id (`output`, `all`).
    pub fn id(self) -> &'static str {
        match self {
            PalmEmbedding::Output => "output",
            PalmEmbedding::All => "all",
        }
    }
}

/// Forward FLOPs per token, split as recomputation needs it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ForwardSplit {
    /// Inside the decoder blocks, attention scores excluded: the projections and MLP.
    pub blocks: Flop,
    /// Attention scores: QKᵀ and probabilities·V.
    pub attention: Flop,
    /// Outside the blocks: the logits. Full recomputation does not recompute it.
    pub head: Flop,
}

impl ForwardSplit {
    /// The split with its attention-score term counted under `mask` (the formulas' own
    /// expressions count every score, [`ScoreMask::Full`]).
    pub fn masked(self, mask: ScoreMask) -> Self {
        Self {
            attention: self.attention * mask.fraction(),
            ..self
        }
    }

    /// Forward FLOPs per token.
    pub fn forward(&self) -> Flop {
        self.blocks + self.attention + self.head
    }

    /// Model FLOPs per token: forward + backward (twice the forward) = 3 × forward (PaLM App. B:
    /// "the backward pass includes two matmuls for each one in the forward pass").
    pub fn model(&self) -> Flop {
        self.forward() * 3.0
    }

    /// Hardware FLOPs per token: model FLOPs plus what `recompute` runs again.
    pub fn hardware(&self, recompute: Recompute) -> Flop {
        let extra = match recompute {
            Recompute::None => Flop::ZERO,
            Recompute::Selective => self.attention * 3.0,
            Recompute::Full => self.blocks + self.attention,
            Recompute::Partial(f) => (self.blocks + self.head) * f + self.attention,
        };
        self.model() + extra
    }
}

/// A convention for model FLOPs per token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Formula {
    /// 6N, N the non-embedding parameters (Kaplan et al. 2020, arXiv:2001.08361, §2.1).
    Kaplan,
    /// 6N + 12·L·H·Q·T, N every parameter (Chowdhery et al. 2022, arXiv:2204.02311, App. B).
    Palm,
    /// 72·L·h²·(1 + s/6h + V/12hL) per token (Narayanan et al. 2021, arXiv:2104.04473, §5.1,
    /// without the recompute pass; Korthikanti et al. 2022, arXiv:2205.05198, model FLOPs).
    Megatron,
    /// 3 × the forward matrix FLOPs of our operator graph (prefill of one sequence, logits at
    /// every position, the attention scores under the mask): [`model_flops_per_token`] under
    /// the causal mask.
    Graph,
}

impl Formula {
    /// Every formula, in the order reports list them.
    pub const ALL: [Formula; 4] = [
        Formula::Kaplan,
        Formula::Palm,
        Formula::Megatron,
        Formula::Graph,
    ];

    /// Short id (`kaplan`, `palm`, `megatron`, `graph`).
    pub fn id(self) -> &'static str {
        match self {
            Formula::Kaplan => "kaplan",
            Formula::Palm => "palm",
            Formula::Megatron => "megatron",
            Formula::Graph => "graph",
        }
    }

    /// The expression and its source, as printed.
    pub fn label(self) -> &'static str {
        match self {
            Formula::Kaplan => "6N (Kaplan 2020)",
            Formula::Palm => "6N + 12·L·H·Q·T (PaLM 2022)",
            Formula::Megatron => "72·L·h²(1 + s/6h + V/12hL) (Megatron 2021)",
            Formula::Graph => "3 × forward matmuls of our graph",
        }
    }
}

/// 6N: forward 2N per token, all of it "blocks" (Kaplan et al. 2020, §2.1; N the non-embedding
/// parameters there, whatever count the caller passes here).
pub fn kaplan(params: f64) -> ForwardSplit {
    ForwardSplit {
        blocks: Flop(2.0 * params),
        attention: Flop::ZERO,
        head: Flop::ZERO,
    }
}

/// PaLM, App. B: 6N + 12·L·H·Q·T per token, so forward 2N + 4·L·(H·Q)·T. `embedding_params`
/// (the part of N in embedding matrices) is the head, which full recomputation does not redo.
pub fn palm(
    params: f64,
    embedding_params: f64,
    layers: u64,
    attention_width: u64,
    seq_len: u64,
) -> ForwardSplit {
    ForwardSplit {
        blocks: Flop(2.0 * (params - embedding_params)),
        attention: Flop(4.0 * layers as f64 * attention_width as f64 * seq_len as f64),
        head: Flop(2.0 * embedding_params),
    }
}

/// Megatron-LM (Narayanan et al. 2021, §5.1) per layer forward: QKV 6·B·s·h², QKᵀ 2·B·s²·h,
/// attention·V 2·B·s²·h, projection 2·B·s·h², MLP (4h) 16·B·s·h²; logits 2·B·s·h·V. Per token:
/// blocks 24·L·h², attention 4·L·h·s, head 2·V·h, so 3 × forward = 72·L·h²·(1 + s/6h + V/12hL).
pub fn megatron(layers: u64, hidden: u64, seq_len: u64, vocab: u64) -> ForwardSplit {
    let (l, h, s, v) = (layers as f64, hidden as f64, seq_len as f64, vocab as f64);
    ForwardSplit {
        blocks: Flop(24.0 * l * h * h),
        attention: Flop(4.0 * l * h * s),
        head: Flop(2.0 * v * h),
    }
}

/// Our operator graph's matrix FLOPs: the prefill of one sequence of `seq_len` tokens, eager
/// attention (every score), per token. Training computes logits at every position, so lm_head
/// runs on all `seq_len` of them ([`Logits::All`]; inference runs it on the last position
/// only). Only matrix operators count (GEMMs, expert GEMMs, QKᵀ and S·V; [`Compute::Matrix`]):
/// the norms, rotary, activations, softmax and residual adds are left out, as PaLM and
/// Megatron leave them out. Nodes outside the blocks are the head (lm_head; the embedding is a
/// lookup); QKᵀ and S·V are the attention scores, every one of them (mask them with
/// [`ForwardSplit::masked`]); the rest of each block's matmuls are blocks.
///
/// # Errors
/// An invalid model or sequence length.
pub fn graph(model: &Transformer, seq_len: u64) -> Result<ForwardSplit, AnalysisError> {
    let workload = Workload {
        stage: Stage::Prefill,
        batch: 1,
        seq_len,
        context: 0,
        cached: 0,
        precisions: Precisions::uniform(Precision::Bf16),
        flash_attention: false,
        logits: Logits::All,
    };
    validate(model, &workload, Reserve::DEFAULT)?;
    let graph = build_graph(model, &workload);
    let (mut blocks, mut attention, mut head) = (Flop::ZERO, Flop::ZERO, Flop::ZERO);
    for n in graph.nodes() {
        if !matches!(n.op().compute(), Compute::Matrix(_)) {
            continue;
        }
        let flops = n.cost().flops * n.count() as f64;
        if !n.span().in_blocks() {
            head += flops;
        } else if n.role.is_attention_core() {
            attention += flops;
        } else {
            blocks += flops;
        }
    }
    let t = seq_len as f64;
    Ok(ForwardSplit {
        blocks: blocks / t,
        attention: attention / t,
        head: head / t,
    })
}

/// Model FLOPs per token of training `model` on sequences of `seq_len` tokens: the one count
/// of model FLOPs that `roofline train` (MFU, the waterfall's T₀) and `roofline mfu` (its
/// graph row, causal) use.
///
/// **Definition.** Model FLOPs are the FLOPs of the model's math, not of the kernels that run
/// it (PaLM, Chowdhery et al. 2022, arXiv:2204.02311, App. B): per token, 3 × the forward
/// FLOPs of the matrix multiplies (2 FLOP a multiply-add; the backward pass is two matmuls for
/// each forward one), with
///
/// - every weight matrix a token multiplies by, lm_head on every position included (the loss
///   is taken at every position): 2·N forward, N the matmul parameters (a mixture of experts:
///   the routed experts a token uses; the input embedding and a position table are looked up,
///   0 FLOP);
/// - the attention scores of a causal decoder, QKᵀ and S·V over T²/2 (query, key) pairs per
///   head (the diagonal counted half): 2·2·H·Q·T/2 forward per token and layer, H query heads
///   of Q elements, whatever K/V sharing (GQA, MQA) the model has.
///
/// So for a dense decoder, model FLOPs per token = 6·N + 6·L·H·Q·T: PaLM's 6N + 12·L·H·Q·T
/// with the causal half of the scores, which is Megatron-LM's
/// `num_floating_point_operations` (`training.py`; the causal factor ½ in its attention term)
/// and the count of FlashAttention's benchmarks (`flops(…, causal=True)`; Dao 2023).
///
/// Not counted, whichever kernels run: norms, rotary, activations, softmax and its scale and
/// mask, residual adds and the loss (vector work); the scores a causal mask discards (an
/// eager kernel computes them all); the scores FlashAttention's backward recomputes; activation
/// recomputation. These are hardware FLOPs (HFU), not model FLOPs (MFU). A sliding window is
/// not counted either: the term is the causal one, as in the published formulas.
///
/// # Errors
/// An invalid model or sequence length.
pub fn model_flops_per_token(model: &Transformer, seq_len: u64) -> Result<Flop, AnalysisError> {
    Ok(graph(model, seq_len)?.masked(ScoreMask::Causal).model())
}

/// The block shape of a known model, for the formulas that assume one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BlockShape {
    /// Query heads H.
    pub heads: u64,
    /// Key/value heads (H without GQA).
    pub kv_heads: u64,
    /// Elements per head Q.
    pub head_dim: u64,
    /// Whether attention is multi-head latent attention (DeepSeek-V2/V3).
    pub mla: bool,
    /// Whether the MLP is gated (three matrices: SwiGLU, GeGLU).
    pub gated_mlp: bool,
    /// MLP width f.
    pub intermediate: u64,
    /// Routed experts E and experts per token k, for a mixture of experts.
    pub experts: Option<(u64, u64)>,
}

/// What a model is known to be, for the formulas that need more than N.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrainingShape {
    /// Parameters, every one (a mixture of experts: all E experts).
    pub params: f64,
    /// Active parameters: those a token uses (a mixture of experts: the k routed experts of each
    /// block; DeepSeek-V3: 37B of 671B). Equal to `params` for a dense model. Every formula
    /// counts these, as MFU does.
    pub active_params: f64,
    /// Parameters in embedding matrices (token embedding, lm_head when untied, a learned position
    /// table), if known: Kaplan's N excludes them.
    pub embedding_params: Option<f64>,
    /// The part of `embedding_params` that is only looked up, never multiplied by: an untied
    /// input embedding and a learned position table (0 FLOP). `None` when not known.
    pub lookup_params: Option<f64>,
    /// Decoder blocks L.
    pub layers: Option<u64>,
    /// Hidden size d (h in Megatron's notation).
    pub hidden: Option<u64>,
    /// Query heads × head dim (H·Q in PaLM's notation); `hidden` when not given.
    pub attention_width: Option<u64>,
    /// Vocabulary V.
    pub vocab: Option<u64>,
    /// Training sequence length T (s).
    pub seq_len: Option<u64>,
    /// The block's shape, when the model is known (not with `--params` alone).
    pub block: Option<BlockShape>,
}

impl TrainingShape {
    /// The shape of a known model trained on sequences of `seq_len` tokens.
    pub fn of_model(model: &Transformer, seq_len: Option<u64>) -> Self {
        let embedding = model.parameters() - model.non_embedding_parameters();
        let output = model.vocab * model.hidden;
        Self {
            params: model.parameters() as f64,
            active_params: model.active_parameters() as f64,
            embedding_params: Some(embedding as f64),
            lookup_params: Some(embedding.saturating_sub(output) as f64),
            layers: Some(model.layers),
            hidden: Some(model.hidden),
            attention_width: Some(model.heads * model.head_dim),
            vocab: Some(model.vocab),
            seq_len,
            block: Some(BlockShape {
                heads: model.heads,
                kv_heads: model.kv_heads,
                head_dim: model.head_dim,
                mla: model.variant.mla.is_some(),
                gated_mlp: model.mlp == MlpKind::Gated,
                intermediate: model.intermediate,
                experts: model.variant.moe.map(|m| (m.experts, m.top_k)),
            }),
        }
    }

    /// Active parameters without the embedding matrices, when they are known; else the active
    /// parameters: Kaplan's N.
    pub fn non_embedding_params(&self) -> f64 {
        self.active_params - self.embedding_params.unwrap_or(0.0)
    }

    /// PaLM's N and the part of it in embedding matrices (the head of the split), under
    /// `convention`. With [`PalmEmbedding::Output`] an untied input embedding and a position table
    /// ([`TrainingShape::lookup_params`]) leave N; where they are not known, N is as given.
    pub fn palm_params(&self, convention: PalmEmbedding) -> (f64, f64) {
        let emb = self.embedding_params.unwrap_or(0.0);
        match (convention, self.lookup_params) {
            (PalmEmbedding::Output, Some(lookup)) => (self.active_params - lookup, emb - lookup),
            _ => (self.active_params, emb),
        }
    }

    /// Why Megatron's 24·L·h² per layer (QKV 6h², projection 2h², MLP 16h²: Narayanan et al.
    /// 2021, §5.1) does not describe this model, or `None` when it does or the block is not known.
    /// It assumes K and V as wide as h (no GQA, MQA or MLA), H·Q = h, and a dense two-matrix MLP
    /// of width 4h.
    pub fn megatron_mismatch(&self) -> Option<String> {
        let b = self.block?;
        let h = self.hidden?;
        let mut why = Vec::new();
        if b.mla {
            why.push(
                "multi-head latent attention (Megatron assumes K and V as wide as h)".to_string(),
            );
        } else if b.kv_heads != b.heads {
            why.push(format!(
                "{} attention ({} KV heads for {} query heads; Megatron assumes K and V as wide as h)",
                if b.kv_heads == 1 { "multi-query" } else { "grouped-query" },
                b.kv_heads,
                b.heads
            ));
        }
        if b.heads * b.head_dim != h {
            why.push(format!(
                "query width H·Q = {} ≠ h = {h}",
                b.heads * b.head_dim
            ));
        }
        if let Some((e, k)) = b.experts {
            why.push(format!(
                "a mixture of experts ({k} of {e} routed experts per token; Megatron assumes one dense MLP)"
            ));
        } else if b.gated_mlp {
            why.push(format!(
                "a gated MLP (3 matrices of width {}; Megatron assumes 2 of width 4h = {})",
                b.intermediate,
                4 * h
            ));
        } else if b.intermediate != 4 * h {
            why.push(format!("MLP width {} ≠ 4h = {}", b.intermediate, 4 * h));
        }
        if why.is_empty() {
            None
        } else {
            Some(why.join("; "))
        }
    }
}

/// Why a formula has no value for the inputs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "reason")]
pub enum Unavailable {
    /// An input it needs is missing: which flags.
    Needs(&'static str),
    /// The formula does not describe this architecture: why.
    NotValid(String),
}

/// One formula's forward split, or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FormulaFlops {
    /// Which convention.
    pub formula: Formula,
    /// Its split (attention under the query's [`ScoreMask`]), or why it has none.
    pub split: Result<ForwardSplit, Unavailable>,
}

/// How a formula is counted: which attention scores, and what PaLM's N holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Conventions {
    /// Which attention scores count.
    pub mask: ScoreMask,
    /// What PaLM's N holds of the embeddings.
    pub palm_embedding: PalmEmbedding,
}

impl Default for Conventions {
    /// A causal decoder, PaLM's N without looked-up tables.
    fn default() -> Self {
        Self {
            mask: ScoreMask::Causal,
            palm_embedding: PalmEmbedding::Output,
        }
    }
}

/// Model FLOPs per token by every formula the inputs allow, in [`Formula::ALL`] order, the
/// attention-score term under `conventions.mask`. Formulas that lack an input say which (`needs
/// --layers, --hidden and --seq-len`); Megatron's says why it does not describe the model
/// ([`TrainingShape::megatron_mismatch`]).
///
/// # Errors
/// The graph formula's model or sequence length is invalid.
pub fn flops_per_token(
    shape: &TrainingShape,
    model: Option<&Transformer>,
    conventions: Conventions,
) -> Result<Vec<FormulaFlops>, AnalysisError> {
    let mask = conventions.mask;
    let mut out = Vec::with_capacity(Formula::ALL.len());
    out.push(FormulaFlops {
        formula: Formula::Kaplan,
        split: Ok(kaplan(shape.non_embedding_params())),
    });
    let (palm_n, palm_emb) = shape.palm_params(conventions.palm_embedding);
    let palm_split = match (
        shape.layers,
        shape.hidden.or(shape.attention_width),
        shape.seq_len,
    ) {
        (Some(l), Some(h), Some(t)) => {
            Ok(palm(palm_n, palm_emb, l, shape.attention_width.unwrap_or(h), t).masked(mask))
        }
        _ => Err(Unavailable::Needs(
            "needs --layers, --hidden and --seq-len (the attention term)",
        )),
    };
    out.push(FormulaFlops {
        formula: Formula::Palm,
        split: palm_split,
    });
    let megatron_split = match (shape.layers, shape.hidden, shape.seq_len, shape.vocab) {
        (Some(l), Some(h), Some(s), Some(v)) => match shape.megatron_mismatch() {
            Some(why) => Err(Unavailable::NotValid(why)),
            None => Ok(megatron(l, h, s, v).masked(mask)),
        },
        _ => Err(Unavailable::Needs(
            "needs --layers, --hidden, --seq-len and --vocab",
        )),
    };
    out.push(FormulaFlops {
        formula: Formula::Megatron,
        split: megatron_split,
    });
    let graph_split = match (model, shape.seq_len) {
        (Some(m), Some(t)) => Ok(graph(m, t)?.masked(mask)),
        (Some(_), None) => Err(Unavailable::Needs("needs --seq-len")),
        (None, _) => Err(Unavailable::Needs("needs a model config or preset")),
    };
    out.push(FormulaFlops {
        formula: Formula::Graph,
        split: graph_split,
    });
    Ok(out)
}

/// The seed's rating of an MFU (the seed names 55–65 % excellent, 40–55 % good, under 30 %
/// poor; 30–40 % is "fair" here, above 65 % is flagged for a check of the inputs, and above
/// 100 % is impossible: more FLOP/s than the dense peak).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rating {
    /// Under 30 %.
    Poor,
    /// 30 % to 40 % (between the seed's poor and good bands).
    Fair,
    /// 40 % to 55 %.
    Good,
    /// 55 % to 65 %.
    Excellent,
    /// Above 65 % and at most 100 %: beyond what large runs publish; check the peak, the FLOP
    /// count and the time.
    AboveRange,
    /// Above 100 %: more than the dense peak, impossible; an input is wrong (a sparse peak, a
    /// per-device figure given as global, a time too short).
    Impossible,
}

impl Rating {
    /// The rating of `mfu` (a fraction: 0.462 is 46.2 %).
    pub fn of(mfu: f64) -> Self {
        match mfu {
            x if x > 1.0 => Rating::Impossible,
            x if x > 0.65 => Rating::AboveRange,
            x if x >= 0.55 => Rating::Excellent,
            x if x >= 0.40 => Rating::Good,
            x if x >= 0.30 => Rating::Fair,
            _ => Rating::Poor,
        }
    }

    /// Short id, as JSON and CSV give it (`above_range`).
    pub fn id(self) -> &'static str {
        match self {
            Rating::Poor => "poor",
            Rating::Fair => "fair",
            Rating::Good => "good",
            Rating::Excellent => "excellent",
            Rating::AboveRange => "above_range",
            Rating::Impossible => "impossible",
        }
    }

    /// How reports print it.
    pub fn label(self) -> &'static str {
        match self {
            Rating::Poor => "poor (< 30 %)",
            Rating::Fair => "fair (30–40 %)",
            Rating::Good => "good (40–55 %)",
            Rating::Excellent => "excellent (55–65 %)",
            Rating::AboveRange => "above 65 %: check the inputs",
            Rating::Impossible => "above 100 %: impossible, check the inputs",
        }
    }
}

/// A bad MFU input: which flag, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MfuError {
    /// The input at fault, as the field of the query that holds it: `tokens_per_s`, `time`,
    /// `peak`, `target_mfu`, `model` (the `roofline` CLI flag is the same with dashes:
    /// `--tokens-per-s`).
    pub quantity: &'static str,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for MfuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.quantity, self.message)
    }
}
impl std::error::Error for MfuError {}

/// `v` if it is a positive finite number, else an error naming `quantity`.
pub(crate) fn positive(quantity: &'static str, v: f64) -> Result<f64, MfuError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(MfuError {
            quantity,
            message: format!("must be a positive number, got {v}"),
        })
    }
}

/// The work a training run did, in one of the three ways runs are reported.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Work {
    /// Global tokens per second.
    TokensPerSecond(f64),
    /// `tokens` processed in `time` (wall clock of the run).
    Tokens {
        /// Tokens trained on.
        tokens: f64,
        /// Time taken.
        time: Seconds,
    },
    /// Achieved model FLOP/s of one device, as a run reports it (Megatron-LM, MosaicML and
    /// others publish TFLOP/s per GPU rather than tokens/s). The MFU is this ÷ the dense peak
    /// whatever the formula; each formula then gives the tokens/s it implies. If the source's
    /// count includes recomputation (Narayanan et al. 2021, Table 1 does), the ratio is an HFU.
    FlopsPerDevice(FlopPerSec),
    /// One optimizer step of `global_batch` sequences of `seq_len` tokens took `step_time`.
    Steps {
        /// Seconds per step.
        step_time: Seconds,
        /// Sequences per step.
        global_batch: u64,
        /// Tokens per sequence.
        seq_len: u64,
    },
}

impl Work {
    /// Global tokens per second.
    ///
    /// # Errors
    /// A zero, negative or non-finite input, naming its flag; [`Work::FlopsPerDevice`], whose
    /// tokens per second depend on the formula ([`Work::tokens_per_second_by`]).
    pub fn tokens_per_second(&self) -> Result<f64, MfuError> {
        match *self {
            Work::TokensPerSecond(t) => positive("tokens_per_s", t),
            Work::FlopsPerDevice(_) => Err(MfuError {
                quantity: "achieved_flops",
                message: "gives tokens per second only with a FLOP count per token: give a model or --params".into(),
            }),
            Work::Tokens { tokens, time } => {
                Ok(positive("tokens", tokens)? / positive("time", time.get())?)
            }
            Work::Steps {
                step_time,
                global_batch,
                seq_len,
            } => {
                let b = positive("global_batch", global_batch as f64)?;
                let s = positive("seq_len", seq_len as f64)?;
                Ok(b * s / positive("step_time", step_time.get())?)
            }
        }
    }

    /// Global tokens per second on `devices` when a token costs `model_flops_per_token`:
    /// [`Work::tokens_per_second`], or for [`Work::FlopsPerDevice`] achieved × devices ÷ FLOPs
    /// per token.
    ///
    /// # Errors
    /// As [`Work::tokens_per_second`], and a zero or non-finite reported FLOP/s.
    pub fn tokens_per_second_by(
        &self,
        model_flops_per_token: Flop,
        devices: u64,
    ) -> Result<f64, MfuError> {
        match *self {
            Work::FlopsPerDevice(f) => {
                Ok(positive("achieved_flops", f.get())? * devices as f64
                    / model_flops_per_token.get())
            }
            _ => self.tokens_per_second(),
        }
    }
}

/// The devices a run used: how many, and the dense peak of one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cluster {
    /// Devices (GPUs, TPU chips).
    pub devices: u64,
    /// Dense peak of one device for the precision trained in, FLOP/s.
    pub peak: FlopPerSec,
}

impl Cluster {
    /// devices × peak, FLOP/s.
    pub fn total_peak(&self) -> FlopPerSec {
        self.peak * self.devices as f64
    }

    fn validate(&self) -> Result<(), MfuError> {
        positive("devices", self.devices as f64)?;
        positive("peak", self.peak.get())?;
        Ok(())
    }
}

/// How well a run used its devices, by one formula.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Utilization {
    /// Global tokens per second (for [`Work::FlopsPerDevice`], those the formula implies).
    pub tokens_per_s: f64,
    /// Model FLOPs per token.
    pub model_flops_per_token: Flop,
    /// Hardware FLOPs per token (recomputation included).
    pub hardware_flops_per_token: Flop,
    /// Achieved model FLOP/s per device.
    pub achieved_per_device: FlopPerSec,
    /// Achieved hardware FLOP/s per device.
    pub hardware_per_device: FlopPerSec,
    /// Model FLOPs utilisation, a fraction.
    pub mfu: f64,
    /// Hardware FLOPs utilisation, a fraction.
    pub hfu: f64,
    /// The seed's rating of the MFU.
    pub rating: Rating,
}

/// MFU and HFU of a run processing `tokens_per_s` global tokens per second on `cluster`.
pub fn utilization(
    split: &ForwardSplit,
    recompute: Recompute,
    tokens_per_s: f64,
    cluster: &Cluster,
) -> Utilization {
    let model = split.model();
    let hardware = split.hardware(recompute);
    let per_device = tokens_per_s / cluster.devices as f64;
    let achieved = FlopPerSec(model.get() * per_device);
    let hw = FlopPerSec(hardware.get() * per_device);
    let mfu = achieved / cluster.peak;
    Utilization {
        tokens_per_s,
        model_flops_per_token: model,
        hardware_flops_per_token: hardware,
        achieved_per_device: achieved,
        hardware_per_device: hw,
        mfu,
        hfu: hw / cluster.peak,
        rating: Rating::of(mfu),
    }
}

/// Time to train `tokens` tokens at `flops_per_token` on `cluster` running at `mfu`:
/// tokens × FLOPs per token ÷ (devices × peak × MFU). With 8·N FLOPs per token (6N and a
/// recompute forward) this is Narayanan et al.'s 8·T·P/(n·X) (§5.1).
pub fn time_to_train(tokens: f64, flops_per_token: Flop, cluster: &Cluster, mfu: f64) -> Seconds {
    Seconds(tokens * flops_per_token.get() / (cluster.total_peak().get() * mfu))
}

/// The MFU by 6N of an N-parameter model at `tokens_per_s` on `cluster`.
pub fn mfu_for_params(params: f64, tokens_per_s: f64, cluster: &Cluster) -> f64 {
    6.0 * params * tokens_per_s / cluster.total_peak().get()
}

/// The N at which `tokens_per_s` on `cluster` is an MFU of `mfu` by 6N: the inverse of
/// [`mfu_for_params`].
pub fn params_for_mfu(mfu: f64, tokens_per_s: f64, cluster: &Cluster) -> f64 {
    mfu * cluster.total_peak().get() / (6.0 * tokens_per_s)
}

/// The MFU of a run known only by the model FLOP/s per device it reports: no formula is needed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReportedMfu {
    /// The reported model FLOP/s of one device.
    pub achieved_per_device: FlopPerSec,
    /// achieved ÷ dense peak, a fraction.
    pub mfu: f64,
    /// Its rating.
    pub rating: Rating,
}

/// MFU = reported model FLOP/s per device ÷ the device's dense peak (PaLM §4.1's ratio, with
/// the numerator as the run reports it).
///
/// # Errors
/// A zero or non-finite FLOP/s, device count or peak, naming its flag.
pub fn reported_mfu(
    achieved_per_device: FlopPerSec,
    cluster: &Cluster,
) -> Result<ReportedMfu, MfuError> {
    cluster.validate()?;
    let a = positive("achieved_flops", achieved_per_device.get())?;
    let mfu = a / cluster.peak.get();
    Ok(ReportedMfu {
        achieved_per_device,
        mfu,
        rating: Rating::of(mfu),
    })
}

/// A question to [`mfu_report`]: the model, what it did, on what.
#[derive(Debug, Clone, Copy)]
pub struct MfuQuery<'a> {
    /// What is known of the model's shape.
    pub shape: TrainingShape,
    /// The model itself, for the graph formula.
    pub model: Option<&'a Transformer>,
    /// What the run did; `None` asks only the time to train.
    pub work: Option<Work>,
    /// Tokens to train on, for the time-to-train question.
    pub train_tokens: Option<f64>,
    /// The devices.
    pub cluster: Cluster,
    /// Recomputation used.
    pub recompute: Recompute,
    /// The MFU (a fraction) at which to answer the time-to-train question.
    pub target_mfu: f64,
    /// Which attention scores count, and what PaLM's N holds.
    pub conventions: Conventions,
}

/// One formula's answer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MfuRow {
    /// Which convention.
    pub formula: Formula,
    /// Its forward split.
    pub split: ForwardSplit,
    /// Model FLOPs per token.
    pub model_flops_per_token: Flop,
    /// Hardware FLOPs per token under the query's recomputation.
    pub hardware_flops_per_token: Flop,
    /// MFU and HFU, when the work is known.
    pub utilization: Option<Utilization>,
    /// Time to train the query's tokens at its target MFU, when a token count is known.
    pub time_at_target: Option<Seconds>,
}

/// Every formula's answer to an [`MfuQuery`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MfuReport {
    /// Global tokens per second, when the work gives them (not [`Work::FlopsPerDevice`], whose
    /// tokens per second each row's [`Utilization`] gives).
    pub tokens_per_s: Option<f64>,
    /// One row per formula the inputs allow and that describes the model.
    pub rows: Vec<MfuRow>,
    /// Formulas left out for a missing input, and what they need.
    pub missing: Vec<(Formula, &'static str)>,
    /// Formulas left out because they do not describe the model, and why.
    pub not_valid: Vec<(Formula, String)>,
}

/// Answers an [`MfuQuery`]: per formula, FLOPs per token, MFU and HFU (when the work is known)
/// and the time to train the token count at the target MFU (when one is known).
///
/// # Errors
/// A zero or non-finite input, naming its flag; an invalid model for the graph formula.
pub fn mfu_report(q: &MfuQuery<'_>) -> Result<MfuReport, MfuError> {
    q.cluster.validate()?;
    positive("params", q.shape.params)?;
    positive("active_params", q.shape.active_params)?;
    if q.shape.active_params > q.shape.params {
        return Err(MfuError {
            quantity: "active_params",
            message: format!(
                "{} active parameters exceed the {} parameters in all: --params is the total",
                q.shape.active_params, q.shape.params
            ),
        });
    }
    positive("target_mfu", q.target_mfu)?;
    let tokens_per_s = match q.work {
        Some(Work::FlopsPerDevice(f)) => {
            positive("achieved_flops", f.get())?;
            None
        }
        w => w.map(|w| w.tokens_per_second()).transpose()?,
    };
    let train_tokens = q.train_tokens.map(|t| positive("tokens", t)).transpose()?;
    let formulas = flops_per_token(&q.shape, q.model, q.conventions).map_err(|e| MfuError {
        quantity: "model",
        message: e.to_string(),
    })?;
    let mut rows = Vec::with_capacity(formulas.len());
    let mut missing = Vec::new();
    let mut not_valid = Vec::new();
    for f in formulas {
        match f.split {
            Ok(split) => {
                let tps = q
                    .work
                    .map(|w| w.tokens_per_second_by(split.model(), q.cluster.devices))
                    .transpose()?;
                rows.push(MfuRow {
                    formula: f.formula,
                    split,
                    model_flops_per_token: split.model(),
                    hardware_flops_per_token: split.hardware(q.recompute),
                    utilization: tps.map(|t| utilization(&split, q.recompute, t, &q.cluster)),
                    time_at_target: train_tokens
                        .map(|d| time_to_train(d, split.model(), &q.cluster, q.target_mfu)),
                })
            }
            Err(Unavailable::Needs(needs)) => missing.push((f.formula, needs)),
            Err(Unavailable::NotValid(why)) => not_valid.push((f.formula, why)),
        }
    }
    Ok(MfuReport {
        tokens_per_s,
        rows,
        missing,
        not_valid,
    })
}

/// The MFU by 6N of one model size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SizeRow {
    /// N.
    pub params: f64,
    /// 6N.
    pub flops_per_token: Flop,
    /// MFU, a fraction.
    pub mfu: f64,
    /// Its rating.
    pub rating: Rating,
}

/// MFU as a function of N, when the model size is not given: by 6N, for each of `sizes`, and
/// the N that would make the run's throughput the `target` MFU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeSweep {
    /// Global tokens per second.
    pub tokens_per_s: f64,
    /// One row per size.
    pub rows: Vec<SizeRow>,
    /// The target MFU, a fraction.
    pub target_mfu: f64,
    /// N at the target MFU.
    pub params_for_target: f64,
}

/// MFU by 6N for each of `sizes`, and N at `target_mfu` ([`params_for_mfu`]).
///
/// # Errors
/// A zero or non-finite input, naming its flag.
pub fn mfu_by_size(
    sizes: &[f64],
    work: &Work,
    cluster: &Cluster,
    target_mfu: f64,
) -> Result<SizeSweep, MfuError> {
    cluster.validate()?;
    positive("target_mfu", target_mfu)?;
    let tps = work.tokens_per_second()?;
    let rows = sizes
        .iter()
        .map(|&n| {
            let n = positive("sizes", n)?;
            let mfu = mfu_for_params(n, tps, cluster);
            Ok(SizeRow {
                params: n,
                flops_per_token: Flop(6.0 * n),
                mfu,
                rating: Rating::of(mfu),
            })
        })
        .collect::<Result<Vec<_>, MfuError>>()?;
    Ok(SizeSweep {
        tokens_per_s: tps,
        rows,
        target_mfu,
        params_for_target: params_for_mfu(target_mfu, tps, cluster),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::llama2_7b;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn palm_table_22_flops_per_token() {
        // PaLM App. B Table 22, TFLOPs per token without / with rematerialisation. Shapes from
        // Table 1 (head dim 256, T = 2048): 8B 32 layers 16 heads 8.63e9; 62B 64, 32, 62.50e9;
        // 540B 118, 48, 540.35e9. 8B and 62B recompute attention only; 540B also 75 % of the
        // non-attention forward.
        let cases = [
            (8.63e9, 32, 16, 0.0, 0.0550, 0.0561),
            (62.50e9, 64, 32, 0.0, 0.388, 0.392),
            (540.35e9, 118, 48, 0.75, 3.28, 4.10),
        ];
        for (n, l, h, remat, model, with_remat) in cases {
            let s = palm(n, 0.0, l, h * 256, 2048);
            let m = s.model().get() / 1e12;
            let hw = s.hardware(Recompute::Partial(remat)).get() / 1e12;
            // Table 22 prints three significant figures.
            assert!(close(m, model, 0.002), "{n}: {m} vs {model}");
            assert!(close(hw, with_remat, 0.002), "{n}: {hw} vs {with_remat}");
        }
    }

    #[test]
    fn palm_equals_megatron_for_a_gpt_with_4h_mlp() {
        // README §2: with N = 12·L·h² + V·h (blocks + one output matrix), 6N + 12·L·H·Q·T =
        // 72·L·h²·(1 + s/6h + V/12hL) exactly; and the splits match part by part.
        let (l, h, s, v) = (96u64, 12288u64, 2048u64, 51200u64);
        let emb = (v * h) as f64;
        let n = 12.0 * (l * h * h) as f64 + emb;
        let p = palm(n, emb, l, h, s);
        let m = megatron(l, h, s, v);
        assert_eq!(p, m);
        let (lf, hf, sf, vf) = (l as f64, h as f64, s as f64, v as f64);
        let expr = 72.0 * lf * hf * hf * (1.0 + sf / (6.0 * hf) + vf / (12.0 * hf * lf));
        assert!(close(m.model().get(), expr, 1e-12));
    }

    #[test]
    fn recompute_expressions_are_the_papers() {
        // Korthikanti et al.: selective = 72·L·h²·(1 + s/3h + V/12hL); Narayanan et al.: full =
        // 96·L·h²·(1 + s/6h + V/16Lh).
        let (l, h, s, v) = (48.0, 6144.0, 2048.0, 51200.0);
        let m = megatron(48, 6144, 2048, 51200);
        let sel = 72.0 * l * h * h * (1.0 + s / (3.0 * h) + v / (12.0 * h * l));
        let full = 96.0 * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
        assert!(close(m.hardware(Recompute::Selective).get(), sel, 1e-12));
        assert!(close(m.hardware(Recompute::Full).get(), full, 1e-12));
        assert_eq!(m.hardware(Recompute::None), m.model());
    }

    #[test]
    fn graph_formula_by_hand_for_llama2_7b() -> Result<(), Box<dyn std::error::Error>> {
        // Per token at T = 2048, Llama-2-7B: the seven projections are 2·(4·4096² + 3·4096·11008)
        // per layer; attention scores 2·2·32·128·2048 (QKᵀ, S·V) per layer, every score;
        // lm_head 2·4096·32000. Matrix FLOPs only: the norms, rotary, SwiGLU product, softmax
        // and residual adds are left out.
        let s = graph(&llama2_7b(), 2048)?;
        let proj = 2.0 * (4.0 * 4096f64.powi(2) + 3.0 * 4096.0 * 11008.0) * 32.0;
        let attn = 4.0 * 32.0 * 128.0 * 2048.0 * 32.0;
        let lm_head = 2.0 * 4096.0 * 32000.0;
        assert_eq!(s.blocks.get(), proj);
        assert_eq!(s.attention.get(), attn);
        assert_eq!(s.head.get(), lm_head);
        // So 3 × forward is 6N + 12·L·H·Q·T, N the matmul weights (the 262,144 norm weights
        // and the 131,072,000 looked-up embedding out).
        let n = llama2_7b().parameters() as f64 - 32000.0 * 4096.0 - 65.0 * 4096.0;
        let palm = 6.0 * n + 12.0 * 32.0 * 4096.0 * 2048.0;
        assert!(close(s.model().get(), palm, 1e-12), "{}", s.model().get());
        // Under the causal mask: the model FLOPs per token train and mfu count.
        let causal = 6.0 * n + 6.0 * 32.0 * 4096.0 * 2048.0;
        let m = model_flops_per_token(&llama2_7b(), 2048)?;
        assert!(close(m.get(), causal, 1e-12), "{}", m.get());
        Ok(())
    }

    #[test]
    fn seed_exercise_70b_100b_tokens_30_days_1024_h100() -> Result<(), Box<dyn std::error::Error>> {
        // 100e9 tokens / (30·86400 s) = 38,580.2 tok/s; 6·70e9 FLOP/token; 1024 × 989.5e12.
        let work = Work::Tokens {
            tokens: 100e9,
            time: Seconds(30.0 * 86400.0),
        };
        let c = Cluster {
            devices: 1024,
            peak: FlopPerSec(989.5e12),
        };
        let tps = work.tokens_per_second()?;
        let u = utilization(&kaplan(70e9), Recompute::None, tps, &c);
        let expect = 6.0 * 70e9 * (100e9 / 2_592_000.0) / (1024.0 * 989.5e12);
        assert!(close(u.mfu, expect, 1e-12));
        assert!(close(u.mfu, 0.015_991, 1e-4));
        assert_eq!(u.rating, Rating::Poor);
        // At 40 % MFU the same tokens take 30 d × MFU / 0.40.
        let t = time_to_train(100e9, kaplan(70e9).model(), &c, 0.40);
        assert!(close(t.get(), 30.0 * 86400.0 * expect / 0.40, 1e-12));
        // N at 40 %: 0.40 · 1024 · 989.5e12 / (6 · 38,580.2) = 1.751e12.
        let n = params_for_mfu(0.40, tps, &c);
        assert!(close(mfu_for_params(n, tps, &c), 0.40, 1e-12));
        assert!(close(n, 0.40 * 1024.0 * 989.5e12 / (6.0 * tps), 1e-12));
        Ok(())
    }

    #[test]
    fn narayanan_training_time_examples() {
        // §5.1: 8·T·P/(n·X): GPT-3 175B, 300e9 tokens, 1024 A100 at 140 TFLOP/s → 34 days;
        // 1T, 450e9 tokens, 3072 A100 at 163 TFLOP/s → 84 days (33.9 and 83.9 unrounded, the
        // "1T" being Table 1's 1008.0B model; 1.000e12 would give 83.2).
        let day = 86400.0;
        let a100 = |n| Cluster {
            devices: n,
            peak: FlopPerSec(312e12),
        };
        let t1 = time_to_train(300e9, Flop(8.0 * 175e9), &a100(1024), 140.0 / 312.0);
        let t2 = time_to_train(450e9, Flop(8.0 * 1008e9), &a100(3072), 163.0 / 312.0);
        assert!((t1.get() / day - 33.9).abs() < 0.05, "{}", t1.get() / day);
        assert!((t2.get() / day - 83.9).abs() < 0.05, "{}", t2.get() / day);
    }

    #[test]
    fn ratings_follow_the_seed_bands() {
        assert_eq!(Rating::of(0.29), Rating::Poor);
        assert_eq!(Rating::of(0.30), Rating::Fair);
        assert_eq!(Rating::of(0.40), Rating::Good);
        assert_eq!(Rating::of(0.549), Rating::Good);
        assert_eq!(Rating::of(0.55), Rating::Excellent);
        assert_eq!(Rating::of(0.65), Rating::Excellent);
        assert_eq!(Rating::of(0.70), Rating::AboveRange);
    }

    #[test]
    fn work_in_three_forms_and_bad_values_name_the_flag() -> Result<(), Box<dyn std::error::Error>>
    {
        let steps = Work::Steps {
            step_time: Seconds(1.1),
            global_batch: 4,
            seq_len: 2048,
        };
        assert!(close(steps.tokens_per_second()?, 7447.27, 1e-5));
        let e = Work::Tokens {
            tokens: 1e9,
            time: Seconds(0.0),
        }
        .tokens_per_second()
        .unwrap_err();
        assert_eq!(e.quantity, "time");
        assert_eq!(
            Work::TokensPerSecond(f64::NAN)
                .tokens_per_second()
                .unwrap_err()
                .quantity,
            "tokens_per_s"
        );
        Ok(())
    }

    #[test]
    fn report_lists_what_the_inputs_allow() -> Result<(), Box<dyn std::error::Error>> {
        let shape = TrainingShape {
            params: 70e9,
            active_params: 70e9,
            embedding_params: None,
            lookup_params: None,
            layers: None,
            hidden: None,
            attention_width: None,
            vocab: None,
            seq_len: None,
            block: None,
        };
        let q = MfuQuery {
            shape,
            model: None,
            work: Some(Work::TokensPerSecond(1e6)),
            train_tokens: Some(1e12),
            cluster: Cluster {
                devices: 8,
                peak: FlopPerSec(312e12),
            },
            recompute: Recompute::Full,
            target_mfu: 0.4,
            conventions: Conventions::default(),
        };
        let r = mfu_report(&q)?;
        assert_eq!(r.rows.len(), 1);
        assert_eq!(r.rows[0].formula, Formula::Kaplan);
        assert_eq!(r.missing.len(), 3);
        let u = r.rows[0].utilization.ok_or("no utilization")?;
        // Full recompute: HFU = 8N/6N × MFU.
        assert!(close(u.hfu, u.mfu * 8.0 / 6.0, 1e-12));
        // A preset gives all four.
        let m = llama2_7b();
        let q2 = MfuQuery {
            shape: TrainingShape::of_model(&m, Some(4096)),
            model: Some(&m),
            ..q
        };
        let r2 = mfu_report(&q2)?;
        // Llama-2 has a gated MLP of 11008 = 2.6875h: Megatron's 24·h² does not describe it.
        assert_eq!(r2.rows.len(), 3);
        assert!(r2.missing.is_empty());
        assert_eq!(r2.not_valid.len(), 1);
        assert_eq!(r2.not_valid[0].0, Formula::Megatron);
        // Kaplan's N is the non-embedding count there.
        assert!(close(
            r2.rows[0].model_flops_per_token.get(),
            6.0 * 6_476_271_616.0,
            1e-12
        ));
        Ok(())
    }

    #[test]
    fn a_mixture_of_experts_counts_its_active_parameters() {
        // Mixtral's shape: 8 experts of 3·4096·14336, 2 per token. 6N uses the 2 routed
        // experts, not 8; the graph formula agrees within its attention and norm terms.
        let moe = Transformer {
            kv_heads: 8,
            intermediate: 14336,
            variant: crate::model::Variant {
                moe: Some(crate::model::Moe {
                    experts: 8,
                    top_k: 2,
                    expert_intermediate: 14336,
                    shared_experts: 0,
                    dense_layers: 0,
                    router_bias: false,
                }),
                ..Default::default()
            },
            ..llama2_7b()
        };
        let shape = TrainingShape::of_model(&moe, Some(4096));
        let idle_experts = 32.0 * 6.0 * 3.0 * 4096.0 * 14336.0;
        assert_eq!(shape.active_params, moe.parameters() as f64 - idle_experts);
        assert_eq!(shape.params, moe.parameters() as f64);
        let graph = graph(&moe, 4096).map_err(|e| e.to_string());
        let six_n = 6.0 * shape.active_params;
        assert!(graph.is_ok_and(|g| g.model().get() > six_n && g.model().get() < six_n * 1.2));
    }

    /// Llama-3-8B's shape (Meta's config.json): d 4096, 32 layers, 32 query and 8 KV heads of
    /// 128, SwiGLU MLP of 14336, vocabulary 128256, untied.
    fn llama3_8b() -> Transformer {
        Transformer {
            kv_heads: 8,
            intermediate: 14336,
            vocab: 128_256,
            ..llama2_7b()
        }
    }

    #[test]
    fn megatron_is_not_valid_for_gqa_swiglu_or_moe() {
        // Llama-3-8B per layer, by hand: q and o 4096² each, k and v 4096·1024 each, MLP
        // 3·4096·14336: 2·(2·4096² + 2·4096·1024 + 3·4096·14336) = 2 × 218,103,808 FLOP, against
        // Megatron's 24·4096² = 402,653,184: Megatron would be 7.7 % low on the blocks.
        let per_layer =
            2.0 * (2.0 * 4096f64.powi(2) + 2.0 * 4096.0 * 1024.0 + 3.0 * 4096.0 * 14336.0);
        assert!((24.0 * 4096f64.powi(2) / per_layer - 0.923).abs() < 0.001);
        let shape = TrainingShape::of_model(&llama3_8b(), Some(8192));
        let why = shape.megatron_mismatch().unwrap_or_default();
        assert!(
            why.contains("grouped-query attention (8 KV heads for 32 query heads"),
            "{why}"
        );
        assert!(
            why.contains("a gated MLP (3 matrices of width 14336"),
            "{why}"
        );
        let rows = flops_per_token(&shape, None, Conventions::default()).unwrap_or_default();
        assert!(matches!(&rows[2].split, Err(Unavailable::NotValid(w)) if *w == why));
        // Mixtral-like: the mixture of experts is named.
        let moe = Transformer {
            variant: crate::model::Variant {
                moe: Some(crate::model::Moe {
                    experts: 8,
                    top_k: 2,
                    expert_intermediate: 14336,
                    shared_experts: 0,
                    dense_layers: 0,
                    router_bias: false,
                }),
                ..Default::default()
            },
            ..llama3_8b()
        };
        let why = TrainingShape::of_model(&moe, Some(4096)).megatron_mismatch();
        assert!(why.is_some_and(|w| w.contains("mixture of experts (2 of 8")));
        // A GPT-style block (MHA, two-matrix GELU MLP of 4h) is what Megatron describes: its row
        // is 24·L·h², 4·L·h·T (half under the causal mask) and 2·V·h, by hand.
        let gpt = Transformer {
            mlp: MlpKind::Plain,
            activation: crate::model::Activation::Gelu,
            intermediate: 4 * 4096,
            ..llama2_7b()
        };
        let shape = TrainingShape::of_model(&gpt, Some(2048));
        assert_eq!(shape.megatron_mismatch(), None);
        let rows = flops_per_token(&shape, None, Conventions::default()).unwrap_or_default();
        let m = rows[2].split.clone().unwrap_or(kaplan(0.0));
        assert_eq!(m.blocks.get(), 24.0 * 32.0 * 4096f64.powi(2));
        assert_eq!(m.attention.get(), 4.0 * 32.0 * 4096.0 * 2048.0 / 2.0);
        assert_eq!(m.head.get(), 2.0 * 32000.0 * 4096.0);
        // With --params only the block is unknown and the row is computed as stated.
        assert_eq!(
            TrainingShape {
                block: None,
                ..shape
            }
            .megatron_mismatch(),
            None
        );
    }

    #[test]
    fn palm_n_charges_the_output_projection_not_an_untied_input_table() {
        // Llama-2-7B, untied: N = 6,738,415,616 (Meta's count), of which the input embedding and
        // lm_head are 32000·4096 = 131,072,000 each. By default PaLM's N leaves the input table
        // out (a lookup): N = 6,607,343,616, head 2·131,072,000 FLOP; with `all` it is every
        // parameter and the head charges both tables, 4·131,072,000.
        let table = 32000.0 * 4096.0;
        let shape = TrainingShape::of_model(&llama2_7b(), Some(4096));
        assert_eq!(shape.params, 6_738_415_616.0);
        assert_eq!(
            shape.palm_params(PalmEmbedding::Output),
            (6_738_415_616.0 - table, table)
        );
        assert_eq!(
            shape.palm_params(PalmEmbedding::All),
            (6_738_415_616.0, 2.0 * table)
        );
        let split = |e| {
            let c = Conventions {
                mask: ScoreMask::Full,
                palm_embedding: e,
            };
            flops_per_token(&shape, None, c).unwrap_or_default()[1]
                .split
                .clone()
        };
        let out = split(PalmEmbedding::Output).unwrap_or(kaplan(0.0));
        let all = split(PalmEmbedding::All).unwrap_or(kaplan(0.0));
        assert_eq!(out.head.get(), 2.0 * table);
        assert_eq!(all.head.get(), 4.0 * table);
        // The blocks are the same; the difference is 6 × the input table per token.
        assert_eq!(out.blocks, all.blocks);
        assert_eq!(all.model().get() - out.model().get(), 6.0 * table);
        // A tied model (no lookup-only table): both conventions agree.
        let tied = TrainingShape::of_model(
            &Transformer {
                tie_embeddings: true,
                ..llama2_7b()
            },
            Some(4096),
        );
        assert_eq!(
            tied.palm_params(PalmEmbedding::Output),
            tied.palm_params(PalmEmbedding::All)
        );
    }

    #[test]
    fn causal_mask_halves_the_score_term_of_every_row() -> Result<(), Box<dyn std::error::Error>> {
        // PaLM 540B (Table 1: 118 layers, 48 heads of 256, T = 2048): 12·L·H·Q·T = 12·118·12288·
        // 2048 = 35,634,806,784 FLOP per token with every score; a causal decoder computes half
        // of the T×T matrix (FlashAttention's count), 17,817,403,392.
        let full = palm(540.35e9, 0.0, 118, 48 * 256, 2048);
        assert_eq!(full.model().get() - 6.0 * 540.35e9, 35_634_806_784.0);
        let causal = full.masked(ScoreMask::Causal);
        assert_eq!(causal.model().get() - 6.0 * 540.35e9, 17_817_403_392.0);
        assert_eq!(full.masked(ScoreMask::Full), full);
        // The graph row: QKᵀ and S·V halve alike (Llama-2-7B at 2048, by hand as in
        // graph_formula_by_hand_for_llama2_7b).
        let shape = TrainingShape::of_model(&llama2_7b(), Some(2048));
        let c = Conventions {
            mask: ScoreMask::Causal,
            ..Conventions::default()
        };
        let rows = flops_per_token(&shape, Some(&llama2_7b()), c)?;
        let g = rows[3].split.clone().map_err(|e| format!("{e:?}"))?;
        let attn = 4.0 * 32.0 * 128.0 * 2048.0 * 32.0;
        assert!(close(g.attention.get(), attn / 2.0, 1e-12));
        Ok(())
    }

    #[test]
    fn reported_flops_per_device_give_the_mfu_directly() -> Result<(), Box<dyn std::error::Error>> {
        // 150 TFLOP/s per A100 (312 dense bf16): MFU = 150/312 = 48.08 %, whatever the formula;
        // 6N of a 70e9 model implies 150e12·8 / 420e9 = 2857.1 tokens/s on 8 devices.
        let q = MfuQuery {
            shape: TrainingShape {
                params: 70e9,
                active_params: 70e9,
                embedding_params: None,
                lookup_params: None,
                layers: None,
                hidden: None,
                attention_width: None,
                vocab: None,
                seq_len: None,
                block: None,
            },
            model: None,
            work: Some(Work::FlopsPerDevice(FlopPerSec(150e12))),
            train_tokens: None,
            cluster: Cluster {
                devices: 8,
                peak: FlopPerSec(312e12),
            },
            recompute: Recompute::None,
            target_mfu: 0.4,
            conventions: Conventions::default(),
        };
        let r = mfu_report(&q)?;
        assert_eq!(r.tokens_per_s, None);
        let u = r.rows[0].utilization.ok_or("no utilization")?;
        assert!(close(u.mfu, 150.0 / 312.0, 1e-12));
        assert!(close(u.tokens_per_s, 150e12 * 8.0 / 420e9, 1e-12));
        assert_eq!(u.rating, Rating::Good);
        let more_active = MfuQuery {
            shape: TrainingShape {
                active_params: 80e9,
                ..q.shape
            },
            ..q
        };
        assert_eq!(
            mfu_report(&more_active).map_err(|e| e.quantity),
            Err("active_params")
        );
        let bad = MfuQuery {
            work: Some(Work::FlopsPerDevice(FlopPerSec(0.0))),
            ..q
        };
        assert_eq!(
            mfu_report(&bad).map_err(|e| e.quantity),
            Err("achieved_flops")
        );
        // Without a model: the same ratio.
        let direct = reported_mfu(FlopPerSec(150e12), &q.cluster)?;
        assert!(close(direct.mfu, 150.0 / 312.0, 1e-12));
        // Above the peak is impossible, not merely above range.
        assert_eq!(Rating::of(1.01), Rating::Impossible);
        assert_eq!(Rating::of(1.0), Rating::AboveRange);
        Ok(())
    }

    #[test]
    fn mfu_by_size_inverts() -> Result<(), Box<dyn std::error::Error>> {
        let c = Cluster {
            devices: 1024,
            peak: FlopPerSec(989.5e12),
        };
        let s = mfu_by_size(&[7e9, 70e9], &Work::TokensPerSecond(38_580.0), &c, 0.4)?;
        assert!(close(
            s.rows[1].mfu,
            6.0 * 70e9 * 38_580.0 / (1024.0 * 989.5e12),
            1e-12
        ));
        assert!(close(
            mfu_for_params(s.params_for_target, 38_580.0, &c),
            0.4,
            1e-12
        ));
        Ok(())
    }
}
