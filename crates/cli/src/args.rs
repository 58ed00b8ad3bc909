//! Command-line flags, parsed once into typed values.

use clap::{Args, Parser, Subcommand, ValueEnum};
use roofline_core::precision::Precision;

/// How fast can a model run on a chip, and why? Roofline analysis of transformer inference.
#[derive(Debug, Parser)]
#[command(name = "roofline", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Per-operator roofline analysis of a transformer (prefill and decode).
    Analyze(AnalyzeArgs),
    /// The chip catalog: list chips, show one with every figure's source.
    Hardware {
        #[command(subcommand)]
        command: HardwareCommand,
    },
    /// List the embedded model presets.
    Models(FormatArg),
    /// One operator on one chip: FLOPs, bytes, intensity, ridge, bound, time (`--explain`).
    Op(OpArgs),
    /// A self-contained HTML report of `analyze`: tables, roofline plot, a derivation.
    Report(ReportArgs),
    /// Price a user-named chain of operators as separate kernels and as one fused kernel.
    Fuse(FuseArgs),
}

#[derive(Debug, Subcommand)]
pub enum HardwareCommand {
    /// One line per chip in the catalog.
    List(FormatArg),
    /// Every figure of one chip, its source, and the ridge point per precision.
    Show {
        /// Chip id (`h100-sxm`) or a chip file (`my-chip.toml`).
        name: String,
        #[command(flatten)]
        plot: PlotArgs,
        #[command(flatten)]
        format: FormatArg,
    },
    /// Chips side by side: peaks per precision, bandwidth, capacity, ridge points; `--plot`
    /// overlays their rooflines.
    Compare(CompareArgs),
}

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

fn parse_preset(s: &str) -> Result<roofline_core::fusion::Preset, String> {
    s.parse()
}

/// A short duration: a number with an optional unit s, ms, us, µs or ns (seconds by default).
pub fn parse_duration_small(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = [
        ("ms", 1e-3),
        ("us", 1e-6),
        ("µs", 1e-6),
        ("ns", 1e-9),
        ("s", 1.0),
    ]
    .iter()
    .find_map(|(u, k)| t.strip_suffix(u).map(|n| (n, *k)))
    .unwrap_or((t, 1.0));
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a duration: use e.g. 5us, 0.01ms or 5e-6"))?;
    let secs = v * scale;
    if !secs.is_finite() || !(0.0..=1.0).contains(&secs) {
        return Err(format!("`{s}` must be between 0 and 1 s"));
    }
    Ok(secs)
}

fn parse_precision(s: &str) -> Result<Precision, String> {
    s.parse::<Precision>().map_err(|e| e.to_string())
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// A preset id (`llama-2-7b`, see `roofline models`), a config.json, or a folder holding one.
    #[arg(default_value = "llama-2-7b")]
    pub model: String,
    /// Chip id (`roofline hardware list`) or a chip file in the catalog's TOML format.
    #[arg(long, default_value = "a6000")]
    pub hardware: String,
    /// Which stage to analyse.
    #[arg(long, value_enum, default_value_t = StageArg::Both)]
    pub stage: StageArg,
    /// Sequences processed together.
    #[arg(long, default_value_t = 1)]
    pub batch: u64,
    /// Prefill: prompt tokens per sequence.
    #[arg(long, default_value_t = 2048)]
    pub seq_len: u64,
    /// Decode: tokens already in the KV cache per sequence.
    #[arg(long, default_value_t = 2048)]
    pub context: u64,
    /// Precision of weights, activations and KV cache (fp32, bf16, fp16, fp8, int8, int4).
    #[arg(long, default_value = "bf16", value_parser = parse_precision)]
    pub precision: Precision,
    /// Weight precision, overriding --precision.
    #[arg(long, value_parser = parse_precision)]
    pub weight_precision: Option<Precision>,
    /// KV-cache precision, overriding --precision.
    #[arg(long, value_parser = parse_precision)]
    pub kv_precision: Option<Precision>,
    /// Group-wise weight quantization: one scale (and zero point) per this many weights
    /// (GPTQ/AWQ use 128); the scales' bytes are added to every weight read.
    #[arg(long)]
    pub group_size: Option<u64>,
    /// Precision of each group's scale.
    #[arg(long, default_value = "fp16", value_parser = parse_precision)]
    pub scale_precision: Precision,
    /// Precision of each group's zero point, if the format has one (asymmetric quantization).
    #[arg(long, value_parser = parse_precision)]
    pub zero_point_precision: Option<Precision>,
    /// W8A8 (SmoothQuant-style): weights and GEMM inputs in int8, GEMMs at the int8 peak;
    /// norms, softmax and the residual stream stay in --precision.
    #[arg(long)]
    pub w8a8: bool,
    /// Attention as one fused FlashAttention kernel instead of QKᵀ, softmax and S·V.
    #[arg(long)]
    pub flash_attention: bool,
    /// Instead of the tables, the worked derivation of one operator (`q_proj`) in each stage.
    #[arg(long, value_name = "OPERATOR")]
    pub explain: Option<String>,
    #[command(flatten)]
    pub plot: PlotArgs,
    /// Also report kernel fusion: eager (every operator its own kernel), compiled
    /// (torch.compile-like) or max (every rule), before and after.
    #[arg(long, value_parser = parse_preset)]
    pub fusion: Option<roofline_core::fusion::Preset>,
    /// Launch overhead per kernel, overriding the chip file's (`7us`, `0.5ms`, `5e-6`; seconds
    /// when no unit is given).
    #[arg(long, value_parser = parse_duration_small)]
    pub launch_overhead: Option<f64>,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Args)]
pub struct FuseArgs {
    /// Operators in order, comma-separated: rmsnorm, layernorm, linear, silu, gelu, relu.
    /// Linears alternate hidden → intermediate → hidden.
    #[arg(long, value_delimiter = ',', required = true)]
    pub chain: Vec<String>,
    /// Tokens T (rows of every tensor).
    #[arg(long)]
    pub tokens: u64,
    /// Hidden size d.
    #[arg(long)]
    pub hidden: u64,
    /// Intermediate size f.
    #[arg(long)]
    pub intermediate: u64,
    /// Precision of every tensor.
    #[arg(long, default_value = "bf16", value_parser = parse_precision)]
    pub precision: Precision,
    /// Chip id or chip file.
    #[arg(long, default_value = "h100-sxm")]
    pub hardware: String,
    /// Launch overhead per kernel, overriding the chip file's.
    #[arg(long, value_parser = parse_duration_small)]
    pub launch_overhead: Option<f64>,
    #[command(flatten)]
    pub format: FormatArg,
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
}

/// A whole number of at least 1.
fn parse_positive(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(v) => Ok(v),
        Err(_) => Err(format!(
            "`{s}` is not a whole number: give a count such as 4096"
        )),
    }
}

#[derive(Debug, Args)]
pub struct OpArgs {
    #[command(subcommand)]
    pub op: OpKind,
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

#[derive(Debug, Subcommand)]
pub enum OpKind {
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
        /// Elements per head.
        #[arg(long, value_parser = parse_positive)]
        head_dim: u64,
        /// Queries per sequence (prefill: the prompt length; decode: 1).
        #[arg(long, value_parser = parse_positive)]
        q_len: u64,
        /// Keys per sequence; defaults to --q-len.
        #[arg(long, value_parser = parse_positive)]
        kv_len: Option<u64>,
        /// Causal mask: the fused kernel skips masked blocks (eager attention computes every
        /// score anyway).
        #[arg(long)]
        causal: bool,
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

impl OpKind {
    /// The flags every operator shares.
    pub fn common(&self) -> &OpCommon {
        match self {
            OpKind::Gemm { common, .. }
            | OpKind::Attention { common, .. }
            | OpKind::Softmax { common, .. }
            | OpKind::Rmsnorm { common, .. }
            | OpKind::Layernorm { common, .. }
            | OpKind::Elementwise { common, .. } => common,
        }
    }
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The HTML file to write (never overwritten without --force).
    #[arg(long, value_name = "FILE")]
    pub out: std::path::PathBuf,
    #[command(flatten)]
    pub analyze: AnalyzeArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more chip ids (`a100-sxm-80gb h100-sxm h200`) or chip files.
    #[arg(required = true, num_args = 2..)]
    pub names: Vec<String>,
    /// Precisions drawn bold in the plot (comma-separated); all the chips' roofs are drawn.
    #[arg(long, value_delimiter = ',', value_parser = parse_precision)]
    pub precision: Vec<Precision>,
    #[command(flatten)]
    pub plot: PlotArgs,
    #[command(flatten)]
    pub format: FormatArg,
}
