//! Flags several commands share: the output format, the stage, `--plot` and `--force`, the
//! runtime memory reserve.

use super::values::parse_reserve;
use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum OutputFormat {
    Table,
    Json,
    Csv,
}

impl From<OutputFormat> for roofline_report::Format {
    fn from(f: OutputFormat) -> Self {
        match f {
            OutputFormat::Table => roofline_report::Format::Table,
            OutputFormat::Json => roofline_report::Format::Json,
            OutputFormat::Csv => roofline_report::Format::Csv,
        }
    }
}

/// The system and the parallel layout, shared by the commands that run a model on many
/// devices.
#[derive(Debug, Args)]
pub struct ParallelArgs {
    /// A system of many chips: an id (`roofline hardware list --systems`) or a system file;
    /// its chip replaces --hardware.
    #[arg(long, value_name = "NAME|FILE")]
    pub system: Option<String>,
    /// Devices of --hardware, in the chip's default node (`roofline hardware show CHIP`);
    /// defaults to tp × pp × ep × cp.
    #[arg(long, value_parser = super::values::parse_degree)]
    pub devices: Option<u32>,
    /// Tensor-parallel degree: each linear split over this many devices (Megatron-LM).
    #[arg(long, default_value_t = 1, value_parser = super::values::parse_degree)]
    pub tp: u32,
    /// Pipeline-parallel degree: the blocks in this many contiguous stages.
    #[arg(long, default_value_t = 1, value_parser = super::values::parse_degree)]
    pub pp: u32,
    /// Sequence parallelism (with --tp): norms and residual adds on 1/tp of the tokens, each
    /// all-reduce a reduce-scatter and an all-gather.
    #[arg(long)]
    pub sequence_parallel: bool,
    /// Expert-parallel degree (mixtures of experts): the routed experts split over this many
    /// devices, attention data-parallel over them, two all-to-alls a block.
    #[arg(long, default_value_t = 1, value_parser = super::values::parse_degree)]
    pub ep: u32,
    /// Routing skew under --ep: the busiest device gets this many times the mean routed tokens
    /// (1 = balanced, at most --ep).
    #[arg(long, default_value_t = 1.0)]
    pub expert_imbalance: f64,
    /// Context-parallel degree (prefill): each prompt split over this many devices by ring
    /// attention, in 2 × this many chunks for a balanced causal mask; the K/V blocks pass round
    /// the ring behind the attention.
    #[arg(long, default_value_t = 1, value_parser = super::values::parse_degree)]
    pub cp: u32,
}

impl ParallelArgs {
    /// Whether any flag asks for more than one device.
    pub fn any(&self) -> bool {
        self.system.is_some() || self.devices.is_some() || !self.layout().is_single()
    }

    /// The layout the flags give.
    pub fn layout(&self) -> roofline_core::parallel::Layout {
        roofline_core::parallel::Layout {
            tp: self.tp,
            pp: self.pp,
            sequence_parallel: self.sequence_parallel,
            ep: self.ep,
            expert_imbalance: self.expert_imbalance,
            cp: self.cp,
        }
    }
}

/// The chip every command analyses without `--hardware`: the H100 SXM, the chip most published
/// training and serving measurements were taken on.
pub const DEFAULT_CHIP: &str = "h100-sxm";

/// `--flash-attention` / `--no-flash-attention`, one switch and one default for every command:
/// FlashAttention, as serving engines (vLLM, TensorRT-LLM, SGLang) and trainers (Megatron-LM)
/// run attention. Giving both is an error.
#[derive(Debug, Clone, Copy, Args)]
pub struct AttentionArg {
    /// Attention as one fused FlashAttention kernel (the default).
    #[arg(long, conflicts_with = "no_flash_attention")]
    pub flash_attention: bool,
    /// Attention as separate QKᵀ, softmax and S·V kernels, the scores through main memory.
    #[arg(long)]
    pub no_flash_attention: bool,
}

impl AttentionArg {
    /// Whether attention is one fused kernel.
    pub fn on(&self) -> bool {
        !self.no_flash_attention
    }
}

/// `--memory-reserve`, shared by every command that says whether a model fits.
#[derive(Debug, Args)]
pub struct ReserveArg {
    /// Memory the runtime keeps for itself on the chip: a share of its capacity (`10%`, the
    /// default: vLLM's --gpu-memory-utilization 0.9) or a size (`2GB`, `1.5GiB`, `0`); counted
    /// in the memory footprint and in whether the model fits.
    #[arg(long, default_value = "10%", value_parser = parse_reserve)]
    pub memory_reserve: roofline_core::memory::Reserve,
}

#[derive(Debug, Args)]
pub struct FormatArg {
    /// Output format: an aligned table, JSON (base units) or CSV.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum StageArg {
    Prefill,
    Decode,
    Both,
}

impl StageArg {
    /// The stages the flag names, in order.
    pub fn stages(self) -> &'static [roofline_core::workload::Stage] {
        use roofline_core::workload::Stage;
        match self {
            StageArg::Prefill => &[Stage::Prefill],
            StageArg::Decode => &[Stage::Decode],
            StageArg::Both => &[Stage::Prefill, Stage::Decode],
        }
    }
}

/// `--logits`: the positions lm_head computes logits for in prefill.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum LogitsArg {
    /// The last position of each sequence: what generation needs.
    #[default]
    Last,
    /// Every position: training, and scoring a whole sequence (perplexity).
    All,
}

impl From<LogitsArg> for roofline_core::workload::Logits {
    fn from(l: LogitsArg) -> Self {
        match l {
            LogitsArg::Last => roofline_core::workload::Logits::Last,
            LogitsArg::All => roofline_core::workload::Logits::All,
        }
    }
}

/// `--plot FILE` and `--force`, shared by every command that can draw a roofline.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Also draw the roofline plot to FILE (`.svg` or `.png`).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<std::path::PathBuf>,
    /// Overwrite output files that already exist.
    #[arg(long)]
    pub force: bool,
    /// Draw every compute roof of the chip on the roofline plot, not only those of the
    /// precisions in use.
    #[arg(long)]
    pub all_roofs: bool,
}

/// Storage and compute precisions: `analyze`'s, `generate`'s and `serve-sim`'s.
#[derive(Debug, Args)]
pub struct PrecisionArgs {
    /// Precision of weights, activations and KV cache (fp32, bf16, fp16, fp8, int8, int4).
    #[arg(long, default_value = "bf16", value_parser = super::values::parse_precision)]
    pub precision: roofline_core::precision::Precision,
    /// Weight precision, overriding --precision.
    #[arg(long, value_parser = super::values::parse_precision)]
    pub weight_precision: Option<roofline_core::precision::Precision>,
    /// KV-cache precision, overriding --precision.
    #[arg(long, value_parser = super::values::parse_precision)]
    pub kv_precision: Option<roofline_core::precision::Precision>,
    /// Group-wise weight quantization: one scale (and zero point) per this many weights
    /// (GPTQ/AWQ use 128); the scales' bytes are added to every weight read.
    #[arg(long)]
    pub group_size: Option<u64>,
    /// Precision of each group's scale.
    #[arg(long, default_value = "fp16", value_parser = super::values::parse_precision)]
    pub scale_precision: roofline_core::precision::Precision,
    /// Precision of each group's zero point, if the format has one (asymmetric quantization).
    #[arg(long, value_parser = super::values::parse_precision)]
    pub zero_point_precision: Option<roofline_core::precision::Precision>,
    /// W8A8 (SmoothQuant-style): weights and GEMM inputs in int8, GEMMs at the int8 peak;
    /// norms, softmax and the residual stream stay in --precision.
    #[arg(long)]
    pub w8a8: bool,
}
