//! `roofline op`: one operator on one chip.

use super::common::{FormatArg, PlotArgs};
use super::values::{parse_positive, parse_precision};
use clap::{Args, Subcommand, ValueEnum};
use roofline_core::ops::CausalCount;
use roofline_core::precision::Precision;

#[derive(Debug, Args)]
pub struct OpArgs {
    #[command(subcommand)]
    pub op: OpCommand,
}

/// Flags every `roofline op` operator takes.
#[derive(Debug, Args)]
pub struct OpCommon {
    /// Chip id (`roofline hardware list`) or a chip file in the catalog's TOML format.
    #[arg(long, default_value = "a6000")]
    pub hardware: String,
    /// Precision of every tensor and of the computation (fp32, tf32, bf16, fp16, fp8, int8, int4).
    #[arg(long, default_value = "bf16", value_parser = parse_precision)]
    pub precision: Precision,
    /// Instead of the table, the worked derivation of every number.
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub plot: PlotArgs,
    #[command(flatten)]
    pub format: FormatArg,
}

/// `--causal-count`: how the diagonal block of a causal mask is counted.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CausalCountArg {
    /// The pairs the mask leaves, diagonal included: s·(s+1)/2.
    Exact,
    /// Half the square: s²/2 (FlashAttention, Megatron-LM).
    Half,
}

impl From<CausalCountArg> for CausalCount {
    fn from(c: CausalCountArg) -> Self {
        match c {
            CausalCountArg::Exact => CausalCount::Exact,
            CausalCountArg::Half => CausalCount::Half,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum OpCommand {
    /// C[m,n] = A[m,k] · B[k,n] (+ bias): 2·m·n·k FLOP.
    Gemm {
        /// Rows of A and C (tokens).
        #[arg(long, value_parser = parse_positive)]
        m: u64,
        /// Columns of B and C (output features).
        #[arg(long, value_parser = parse_positive)]
        n: u64,
        /// Reduction dimension (input features).
        #[arg(long, value_parser = parse_positive)]
        k: u64,
        /// Add a bias of n elements.
        #[arg(long)]
        bias: bool,
        #[command(flatten)]
        common: OpCommon,
    },
    /// Attention: one fused kernel (`--fused`, FlashAttention) or QKᵀ, softmax and S·V.
    Attention {
        /// Sequences.
        #[arg(long, default_value_t = 1, value_parser = parse_positive)]
        batch: u64,
        /// Query heads.
        #[arg(long, value_parser = parse_positive)]
        heads: u64,
        /// Key/value heads (grouped-query attention); defaults to --heads.
        #[arg(long, value_parser = parse_positive)]
        kv_heads: Option<u64>,
        /// Elements per query and key head (the QKᵀ reduction).
        #[arg(long, value_parser = parse_positive)]
        head_dim: u64,
        /// Elements per value head, when it differs from --head-dim (MLA's v_head_dim:
        /// DeepSeek-V3 has 192 for queries and keys, 128 for values); S·V and the output use
        /// it. Defaults to --head-dim.
        #[arg(long, value_parser = parse_positive)]
        head_dim_v: Option<u64>,
        /// Queries per sequence (prefill: the prompt length; decode: 1).
        #[arg(long, value_parser = parse_positive)]
        q_len: u64,
        /// Keys per sequence; defaults to --q-len.
        #[arg(long, value_parser = parse_positive)]
        kv_len: Option<u64>,
        /// Causal mask: the fused kernel skips masked blocks (eager attention computes every
        /// score anyway). The queries are the last --q-len positions of --kv-len keys.
        #[arg(long, overrides_with = "no_causal")]
        causal: bool,
        /// No mask: every query attends to every key (the default).
        #[arg(long, overrides_with = "causal")]
        no_causal: bool,
        /// With --causal --fused, how the diagonal block (the queries' own positions) is
        /// counted: `exact`, the pairs the mask leaves, diagonal included (s·(s+1)/2 for a
        /// prefill; the decoder's count), or `half`, half the square (s²/2; FlashAttention's and
        /// Megatron-LM's FLOP counts).
        #[arg(long, value_enum)]
        causal_count: Option<CausalCountArg>,
        /// One fused FlashAttention kernel instead of three.
        #[arg(long)]
        fused: bool,
        /// Precision of K and V (the KV cache), overriding --precision.
        #[arg(long, value_parser = parse_precision)]
        kv_precision: Option<Precision>,
        #[command(flatten)]
        common: OpCommon,
    },
    /// Row-wise softmax with the attention scale and mask: 7 FLOP per element.
    Softmax {
        /// Rows (independent softmaxes).
        #[arg(long, value_parser = parse_positive)]
        rows: u64,
        /// Elements per row.
        #[arg(long, value_parser = parse_positive)]
        cols: u64,
        /// Plain softmax (5 FLOP per element), without the scale and mask.
        #[arg(long)]
        no_scale_mask: bool,
        #[command(flatten)]
        common: OpCommon,
    },
    /// RMSNorm over rows of cols elements: 4 FLOP per element.
    Rmsnorm {
        /// Rows (tokens).
        #[arg(long, value_parser = parse_positive)]
        rows: u64,
        /// Elements per row (hidden size).
        #[arg(long, value_parser = parse_positive)]
        cols: u64,
        #[command(flatten)]
        common: OpCommon,
    },
    /// LayerNorm with weight and bias over rows of cols elements: 7 FLOP per element.
    Layernorm {
        /// Rows (tokens).
        #[arg(long, value_parser = parse_positive)]
        rows: u64,
        /// Elements per row (hidden size).
        #[arg(long, value_parser = parse_positive)]
        cols: u64,
        #[command(flatten)]
        common: OpCommon,
    },
    /// An elementwise map of `inputs` tensors of `elements` elements into one.
    Elementwise {
        /// Input tensors (2 for an add).
        #[arg(long, default_value_t = 2, value_parser = parse_positive)]
        inputs: u64,
        /// Elements per tensor.
        #[arg(long, value_parser = parse_positive)]
        elements: u64,
        /// FLOPs per output element (1 for an add; SiLU·mul is 4).
        #[arg(long, default_value_t = 1.0)]
        flops_per_element: f64,
        #[command(flatten)]
        common: OpCommon,
    },
}

impl OpCommand {
    /// The flags every operator shares.
    pub fn common(&self) -> &OpCommon {
        match self {
            OpCommand::Gemm { common, .. }
            | OpCommand::Attention { common, .. }
            | OpCommand::Softmax { common, .. }
            | OpCommand::Rmsnorm { common, .. }
            | OpCommand::Layernorm { common, .. }
            | OpCommand::Elementwise { common, .. } => common,
        }
    }
}
