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
//! | our operator graph ([`crate::decoder`]) | Σ block nodes | QKᵀ, softmax, S·V | norm, lm_head at every position | 3 × Σ forward |
//!
//! Attention is counted over the full T×T score matrix in every row (no causal halving), as PaLM
//! and Megatron do; the graph row uses the eager (unfused) graph, which computes every score.
//!
//! **MFU** = achieved model FLOP/s ÷ peak (PaLM §4.1): tokens/s × model FLOPs per token ÷
//! (devices × dense peak per device). **HFU** counts the FLOPs actually executed, recomputation
//! included ([`Recompute`]). The peak is always the chip's *dense* figure for the precision
//! trained in (see [`crate::device`]); a 2:4-sparse datasheet figure would halve the MFU.

use crate::analysis::{validate, AnalysisError};
use crate::decoder::build_graph;
use crate::memory::Reserve;
use crate::model::Transformer;
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

/// Forward FLOPs per token, split as recomputation needs it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ForwardSplit {
    /// Inside the decoder blocks, attention scores excluded: the projections and MLP (and, in
    /// our graph, norms, rotary and elementwise ops).
    pub blocks: Flop,
    /// Attention scores: QKᵀ and probabilities·V (and, in our graph, the softmax).
    pub attention: Flop,
    /// Outside the blocks: the logits (and embedding, final norm). Full recomputation does not
    /// recompute it.
    pub head: Flop,
}

impl ForwardSplit {
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
    /// 3 × the forward FLOPs of our operator graph (prefill of one sequence, logits at every
    /// position, every attention score).
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
            Formula::Graph => "3 × forward of our graph",
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

/// Our operator graph: the prefill of one sequence of `seq_len` tokens, eager attention (every
/// score), per token. Training computes logits at every position, so lm_head runs on all
/// `seq_len` of them ([`Logits::All`]; inference runs it on the last position only). Nodes
/// outside the blocks are the head; QKᵀ, softmax and S·V are the attention scores; the rest of
/// each block is blocks.
///
/// # Errors
/// An invalid model or sequence length.
pub fn graph(model: &Transformer, seq_len: u64) -> Result<ForwardSplit, AnalysisError> {
    let workload = Workload {
        stage: Stage::Prefill,
        batch: 1,
        seq_len,
        context: 0,
        precisions: Precisions::uniform(Precision::Bf16),
        flash_attention: false,
        logits: Logits::All,
    };
    validate(model, &workload, Reserve::DEFAULT)?;
    let graph = build_graph(model, &workload);
    let (mut blocks, mut attention, mut head) = (Flop::ZERO, Flop::ZERO, Flop::ZERO);
    for n in graph.nodes() {
        let flops = n.cost().flops * n.count() as f64;
        if !n.span.in_blocks() {
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

/// What a model is known to be, for the formulas that need more than N.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrainingShape {
    /// N, every parameter (PaLM's N).
    pub params: f64,
    /// Parameters in embedding matrices (token embedding, and lm_head when untied), if known.
    pub embedding_params: Option<f64>,
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
}

impl TrainingShape {
    /// The shape of a known model trained on sequences of `seq_len` tokens. N is the parameters
    /// a token uses ([`Transformer::active_parameters`]): for a mixture of experts, the k routed
    /// experts of each block, not all E (DeepSeek-V3: 37B of 671B), as MFU counts them.
    pub fn of_model(model: &Transformer, seq_len: Option<u64>) -> Self {
        let embedding = model.parameters() - model.non_embedding_parameters();
        Self {
            params: model.active_parameters() as f64,
            embedding_params: Some(embedding as f64),
            layers: Some(model.layers),
            hidden: Some(model.hidden),
            attention_width: Some(model.heads * model.head_dim),
            vocab: Some(model.vocab),
            seq_len,
        }
    }

    /// N without the embedding matrices, when they are known; else N.
    pub fn non_embedding_params(&self) -> f64 {
        self.params - self.embedding_params.unwrap_or(0.0)
    }
}

/// One formula's forward split, or the flags it still needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FormulaFlops {
    /// Which convention.
    pub formula: Formula,
    /// Its split, or what is missing to compute it.
    pub split: Result<ForwardSplit, &'static str>,
}

/// Model FLOPs per token by every formula the inputs allow, in [`Formula::ALL`] order. Formulas
/// that lack an input say which (`needs --layers, --hidden and --seq-len`).
///
/// # Errors
/// The graph formula's model or sequence length is invalid.
pub fn flops_per_token(
    shape: &TrainingShape,
    model: Option<&Transformer>,
) -> Result<Vec<FormulaFlops>, AnalysisError> {
    let mut out = Vec::with_capacity(Formula::ALL.len());
    out.push(FormulaFlops {
        formula: Formula::Kaplan,
        split: Ok(kaplan(shape.non_embedding_params())),
    });
    let palm_split = match (
        shape.layers,
        shape.hidden.or(shape.attention_width),
        shape.seq_len,
    ) {
        (Some(l), Some(h), Some(t)) => Ok(palm(
            shape.params,
            shape.embedding_params.unwrap_or(0.0),
            l,
            shape.attention_width.unwrap_or(h),
            t,
        )),
        _ => Err("needs --layers, --hidden and --seq-len (the attention term)"),
    };
    out.push(FormulaFlops {
        formula: Formula::Palm,
        split: palm_split,
    });
    let megatron_split = match (shape.layers, shape.hidden, shape.seq_len, shape.vocab) {
        (Some(l), Some(h), Some(s), Some(v)) => Ok(megatron(l, h, s, v)),
        _ => Err("needs --layers, --hidden, --seq-len and --vocab"),
    };
    out.push(FormulaFlops {
        formula: Formula::Megatron,
        split: megatron_split,
    });
    let graph_split = match (model, shape.seq_len) {
        (Some(m), Some(t)) => Ok(graph(m, t)?),
        (Some(_), None) => Err("needs --seq-len"),
        (None, _) => Err("needs a model config or preset"),
    };
    out.push(FormulaFlops {
        formula: Formula::Graph,
        split: graph_split,
    });
    Ok(out)
}

/// The seed's rating of an MFU (the seed names 55–65 % excellent, 40–55 % good, under 30 %
/// poor; 30–40 % is "fair" here, and above 65 % is flagged for a check of the inputs).
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
    /// Above 65 %: beyond what large runs publish; check the peak, the FLOP count and the time.
    AboveRange,
}

impl Rating {
    /// The rating of `mfu` (a fraction: 0.462 is 46.2 %).
    pub fn of(mfu: f64) -> Self {
        match mfu {
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
        }
    }
}

/// A bad MFU input: which flag, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MfuError {
    /// The flag at fault (`--time`).
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for MfuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.field, self.message)
    }
}
impl std::error::Error for MfuError {}

/// `v` if it is a positive finite number, else an error naming `field`.
pub(crate) fn positive(field: &'static str, v: f64) -> Result<f64, MfuError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(MfuError {
            field,
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
    /// A zero, negative or non-finite input, naming its flag.
    pub fn tokens_per_second(&self) -> Result<f64, MfuError> {
        match *self {
            Work::TokensPerSecond(t) => positive("--tokens-per-s", t),
            Work::Tokens { tokens, time } => {
                Ok(positive("--tokens", tokens)? / positive("--time", time.get())?)
            }
            Work::Steps {
                step_time,
                global_batch,
                seq_len,
            } => {
                let b = positive("--global-batch", global_batch as f64)?;
                let s = positive("--seq-len", seq_len as f64)?;
                Ok(b * s / positive("--step-time", step_time.get())?)
            }
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
        positive("--devices", self.devices as f64)?;
        positive("--peak", self.peak.get())?;
        Ok(())
    }
}

/// How well a run used its devices, by one formula.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Utilization {
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
    /// Global tokens per second, when the work is known.
    pub tokens_per_s: Option<f64>,
    /// One row per formula the inputs allow.
    pub rows: Vec<MfuRow>,
    /// Formulas left out, and what they need.
    pub missing: Vec<(Formula, &'static str)>,
}

/// Answers an [`MfuQuery`]: per formula, FLOPs per token, MFU and HFU (when the work is known)
/// and the time to train the token count at the target MFU (when one is known).
///
/// # Errors
/// A zero or non-finite input, naming its flag; an invalid model for the graph formula.
pub fn mfu_report(q: &MfuQuery<'_>) -> Result<MfuReport, MfuError> {
    q.cluster.validate()?;
    positive("--params", q.shape.params)?;
    positive("--target-mfu", q.target_mfu)?;
    let tokens_per_s = q.work.map(|w| w.tokens_per_second()).transpose()?;
    let train_tokens = q
        .train_tokens
        .map(|t| positive("--tokens", t))
        .transpose()?;
    let formulas = flops_per_token(&q.shape, q.model).map_err(|e| MfuError {
        field: "MODEL",
        message: e.to_string(),
    })?;
    let mut rows = Vec::with_capacity(formulas.len());
    let mut missing = Vec::new();
    for f in formulas {
        match f.split {
            Ok(split) => rows.push(MfuRow {
                formula: f.formula,
                split,
                model_flops_per_token: split.model(),
                hardware_flops_per_token: split.hardware(q.recompute),
                utilization: tokens_per_s.map(|t| utilization(&split, q.recompute, t, &q.cluster)),
                time_at_target: train_tokens
                    .map(|d| time_to_train(d, split.model(), &q.cluster, q.target_mfu)),
            }),
            Err(needs) => missing.push((f.formula, needs)),
        }
    }
    Ok(MfuReport {
        tokens_per_s,
        rows,
        missing,
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
    positive("--target-mfu", target_mfu)?;
    let tps = work.tokens_per_second()?;
    let rows = sizes
        .iter()
        .map(|&n| {
            let n = positive("--sizes", n)?;
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
        // per layer; attention scores 2·2·32·128·2048 (QKᵀ, S·V) + 7·32·2048 (softmax) per layer;
        // lm_head 2·4096·32000. The graph is 6N-like but counts norms and elementwise ops too.
        let s = graph(&llama2_7b(), 2048)?;
        let proj = 2.0 * (4.0 * 4096f64.powi(2) + 3.0 * 4096.0 * 11008.0) * 32.0;
        let attn = (4.0 * 32.0 * 128.0 * 2048.0 + 7.0 * 32.0 * 2048.0) * 32.0;
        assert!(
            close(s.attention.get(), attn, 1e-12),
            "{}",
            s.attention.get()
        );
        assert!(s.blocks.get() > proj && s.blocks.get() < proj * 1.001);
        let lm_head = 2.0 * 4096.0 * 32000.0;
        assert!(s.head.get() > lm_head && s.head.get() < lm_head * 1.001);
        // Against 6N: within a few percent (the attention term is ~6 % at 2048 tokens).
        let six_n = 6.0 * llama2_7b().parameters() as f64;
        assert!(s.model().get() > six_n && s.model().get() < six_n * 1.1);
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
        assert_eq!(e.field, "--time");
        assert_eq!(
            Work::TokensPerSecond(f64::NAN)
                .tokens_per_second()
                .unwrap_err()
                .field,
            "--tokens-per-s"
        );
        Ok(())
    }

    #[test]
    fn report_lists_what_the_inputs_allow() -> Result<(), Box<dyn std::error::Error>> {
        let shape = TrainingShape {
            params: 70e9,
            embedding_params: None,
            layers: None,
            hidden: None,
            attention_width: None,
            vocab: None,
            seq_len: None,
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
        assert_eq!(r2.rows.len(), 4);
        assert!(r2.missing.is_empty());
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
        assert_eq!(shape.params, moe.parameters() as f64 - idle_experts);
        let graph = graph(&moe, 4096).map_err(|e| e.to_string());
        let six_n = 6.0 * shape.params;
        assert!(graph.is_ok_and(|g| g.model().get() > six_n && g.model().get() < six_n * 1.2));
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
