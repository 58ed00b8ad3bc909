//! `roofline op`: one operator on one chip.

use super::common::{FormatArg, PlotArgs};
use super::values::{parse_algorithm, parse_bytes, parse_devices, parse_positive, parse_precision};
use clap::{Args, Subcommand, ValueEnum};
use roofline_core::comm::{AlgorithmChoice, Collective};
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
    #[arg(long, default_value = super::common::DEFAULT_CHIP)]
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

/// Flags every collective (`roofline op all-reduce …`) takes.
#[derive(Debug, Args)]
pub struct CollectiveArgs {
    /// The buffer S as nccl-tests counts it (the whole vector of an all-reduce, the full
    /// output of an all-gather, the full input of a reduce-scatter), with a binary (`KiB`,
    /// `MiB`, `GiB`) or decimal (`kB`, `MB`, `GB`) unit, or bare bytes: `64MiB`, `1GB`, `4096`.
    #[arg(long, value_parser = parse_bytes)]
    pub bytes: f64,
    /// Devices in the group (all ranks of the collective); 8 by default with --hardware, the
    /// whole system with --system.
    #[arg(long, value_parser = parse_devices)]
    pub devices: Option<u64>,
    /// A system (`roofline hardware list --systems`, or a system file) instead of
    /// --hardware: its nodes and links; the group is its first --devices devices, a node
    /// filled before the next.
    #[arg(long, conflicts_with_all = ["hardware", "nodes"])]
    pub system: Option<String>,
    /// Nodes the devices span, devices/nodes GPUs each; by default the chip's node
    /// (`roofline hardware show`) fills before the next.
    #[arg(long, value_parser = parse_devices)]
    pub nodes: Option<u64>,
    /// Chip id (`roofline hardware list`) or a chip file; its platform gives the node and its
    /// links.
    #[arg(long, default_value = super::common::DEFAULT_CHIP)]
    pub hardware: String,
    /// The algorithm: `auto` (the fastest bound the fabric supports), `ring`, `tree`
    /// (all-reduce), `nvls` (in-network reduction, one node), `hierarchical` (across nodes),
    /// `direct` (all-to-all, send-recv).
    #[arg(long, default_value = "auto", value_parser = parse_algorithm)]
    pub algorithm: AlgorithmChoice,
    /// Instead of the summary, the worked derivation of every number.
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub format: FormatArg,
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
    /// Every rank ends with the sum of all ranks' buffers: 2(n−1)/n·S per rank over a ring.
    AllReduce(CollectiveArgs),
    /// Every rank ends with its 1/n share of the sum: (n−1)/n·S per rank.
    ReduceScatter(CollectiveArgs),
    /// Every rank ends with every rank's 1/n share: (n−1)/n·S per rank.
    AllGather(CollectiveArgs),
    /// Every rank sends a distinct 1/n slice to every other: (n−1)/n·S per rank.
    AllToAll(CollectiveArgs),
    /// One rank's S bytes reach every rank: S per rank over a pipelined ring.
    Broadcast(CollectiveArgs),
    /// One rank sends S bytes to another (a pipeline stage boundary).
    SendRecv(CollectiveArgs),
}

impl OpCommand {
    /// The flags every operator shares; `None` for a collective.
    pub fn common(&self) -> Option<&OpCommon> {
        match self {
            OpCommand::Gemm { common, .. }
            | OpCommand::Attention { common, .. }
            | OpCommand::Softmax { common, .. }
            | OpCommand::Rmsnorm { common, .. }
            | OpCommand::Layernorm { common, .. }
            | OpCommand::Elementwise { common, .. } => Some(common),
            _ => None,
        }
    }

    /// The collective and its flags, for a collective.
    pub fn collective(&self) -> Option<(Collective, &CollectiveArgs)> {
        Some(match self {
            OpCommand::AllReduce(a) => (Collective::AllReduce, a),
            OpCommand::ReduceScatter(a) => (Collective::ReduceScatter, a),
            OpCommand::AllGather(a) => (Collective::AllGather, a),
            OpCommand::AllToAll(a) => (Collective::AllToAll, a),
            OpCommand::Broadcast(a) => (Collective::Broadcast, a),
            OpCommand::SendRecv(a) => (Collective::SendRecv, a),
            _ => return None,
        })
    }
}
