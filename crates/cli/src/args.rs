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
    /// Measure this machine's roofline: peak FLOP/s per precision, bandwidth per memory level;
    /// write it as a chip file (`--out host.toml`) that `--hardware host.toml` reads.
    Measure(MeasureArgs),
    /// Training MFU and HFU by four FLOP conventions, time to train, MFU as a function of N.
    Mfu(MfuArgs),
    /// Inference MBU (and MFU) of a measured decode step.
    Mbu(MbuArgs),
    /// Sweep batch, length, precision and chip: each operator's bound and crossover batch.
    Sweep(SweepArgs),
    /// Import a profile (`ncu --csv`, a PyTorch profiler trace) or an empirical roof (mixbench,
    /// ERT): every kernel on the roofline, ranked by the time it loses against its roof.
    Import(ImportArgs),
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

/// `--memory-reserve`: `10%` (a share of capacity), or a size in bytes with an optional
/// decimal (`kB`, `MB`, `GB`, `TB`) or binary (`KiB`, `MiB`, `GiB`, `TiB`) unit.
fn parse_reserve(s: &str) -> Result<roofline_core::memory::Reserve, String> {
    use roofline_core::memory::Reserve;
    use roofline_core::units::Bytes;
    let t = s.trim();
    let bad = || {
        format!(
            "`{}` is not a share (`10%`) or a size (`2GB`, `1.5GiB`, `0`)",
            t.chars().take(40).collect::<String>()
        )
    };
    let r = if let Some(pct) = t.strip_suffix('%') {
        Reserve::Fraction(pct.trim().parse::<f64>().map_err(|_| bad())? / 100.0)
    } else {
        let split = t
            .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let scale = match unit.trim() {
            "" | "B" => 1.0,
            "kB" | "KB" => 1e3,
            "MB" => 1e6,
            "GB" => 1e9,
            "TB" => 1e12,
            "KiB" => 1024.0,
            "MiB" => 1024.0 * 1024.0,
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            "TiB" => 1024.0f64.powi(4),
            _ => return Err(bad()),
        };
        Reserve::Bytes(Bytes(num.trim().parse::<f64>().map_err(|_| bad())? * scale))
    };
    r.validate()?;
    Ok(r)
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
    /// Memory the runtime keeps for itself on the chip: a share of its capacity (`10%`, the
    /// default: vLLM's --gpu-memory-utilization 0.9) or a size (`2GB`, `1.5GiB`, `0`); counted
    /// in the memory footprint and in whether the model fits.
    #[arg(long, default_value = "10%", value_parser = parse_reserve)]
    pub memory_reserve: roofline_core::memory::Reserve,
    /// Instead of the tables, the worked derivation of one operator (`q_proj`) in each stage.
    #[arg(long, value_name = "OPERATOR")]
    pub explain: Option<String>,
    #[command(flatten)]
    pub plot: PlotArgs,
    /// Also report kernel fusion: eager (every operator its own kernel), compiled
    /// (torch.compile-like) or max (every rule), before and after.
    #[arg(long, value_parser = parse_preset)]
    pub fusion: Option<roofline_core::fusion::Preset>,
    /// A PyTorch profiler trace of this model's run (`roofline import` reads it): predicted
    /// beside measured time per operator, matched by shape and forward order.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<std::path::PathBuf>,
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

/// A whole number of at least 1 and at most 2^24 (a larger size is taken for a typo).
fn parse_positive(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(v) if v > roofline_core::single::MAX_DIM => Err(format!(
            "{v} is beyond the largest accepted size ({})",
            roofline_core::single::MAX_DIM
        )),
        Ok(v) => Ok(v),
        Err(_) => Err(format!(
            "`{s}` is not a whole number: give a count such as 4096"
        )),
    }
}

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

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct MeasureArgs {
    /// `kernels`: real kernels timed against the roofline; none: measure the roofline.
    #[command(subcommand)]
    pub command: Option<MeasureCommand>,
    /// Seconds instead of a minute: short repetitions, a 2× sweep up to 256 MiB.
    #[arg(long)]
    pub quick: bool,
    /// Threads of the all-threads runs (default: every logical CPU this process may use).
    #[arg(long, value_parser = parse_positive)]
    pub threads: Option<u64>,
    /// Largest working set of the sweep, MiB (default 1024; 256 with --quick).
    #[arg(long, value_name = "MIB", value_parser = parse_positive)]
    pub max_working_set: Option<u64>,
    /// Write the measured chip to FILE (`.toml`, the catalog's format); never overwritten
    /// without --force.
    #[arg(long, value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,
    /// Chip id written into --out.
    #[arg(long, default_value = "host")]
    pub id: String,
    /// Chip name written into --out (default: the processor and host).
    #[arg(long)]
    pub name: Option<String>,
    /// Measure the NVIDIA GPU instead of the CPU (needs a build with `--features cuda`).
    #[arg(long)]
    pub gpu: bool,
    /// CUDA device ordinal for --gpu.
    #[arg(long, default_value_t = 0, requires = "gpu")]
    pub device: u32,
    /// `--plot FILE` draws the hierarchical roofline (`.svg` or `.png`); `--force` overwrites
    /// --plot and --out.
    #[command(flatten)]
    pub plot: PlotArgs,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Debug, Subcommand)]
pub enum MeasureCommand {
    /// Time a suite of real kernels (GEMMs, elementwise, RMSNorm, softmax, attention, the
    /// RMSNorm → Linear → SiLU → Linear chain unfused and fused) and hold each against the time
    /// this machine's measured roofline predicts: the error per kernel, the median error, the
    /// fused chain's measured and predicted speedup.
    Kernels(MeasureKernelsArgs),
}

#[derive(Debug, Args)]
pub struct MeasureKernelsArgs {
    /// Seconds instead of a minute: the quick roofline measurement and smaller kernels.
    #[arg(long)]
    pub quick: bool,
    /// Predict from this chip file (`roofline measure --out host.toml`) or catalog id instead
    /// of measuring the roofline now.
    #[arg(long, value_name = "FILE|ID")]
    pub hardware: Option<String>,
    /// Only the kernels whose name contains one of these (comma-separated: `gemm,chain`).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub only: Vec<String>,
    /// Run the suite on the NVIDIA GPU (needs a build with `--features cuda`).
    #[arg(long)]
    pub gpu: bool,
    /// CUDA device ordinal for --gpu.
    #[arg(long, default_value_t = 0, requires = "gpu")]
    pub device: u32,
    /// `--plot FILE` draws the measured and predicted points on the hierarchical roofline
    /// (`.svg` or `.png`); `--force` overwrites it.
    #[command(flatten)]
    pub plot: PlotArgs,
    #[command(flatten)]
    pub format: FormatArg,
}

// ---- `roofline mfu`, `roofline mbu`, `roofline sweep` ------------------------------------------

/// A count or rate: a number (`70e9`, `7000000000`, `7_000_000_000`) with an optional decimal
/// suffix k/K (1e3), M (1e6), B or G (1e9), T (1e12), P (1e15): `70B`, `1.4T`, `312T`.
pub fn parse_count(s: &str) -> Result<f64, String> {
    let t = s.trim().replace('_', "");
    let (num, scale) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        Some('B' | 'G') => (&t[..t.len() - 1], 1e9),
        Some('T') => (&t[..t.len() - 1], 1e12),
        Some('P') => (&t[..t.len() - 1], 1e15),
        _ => (t.as_str(), 1.0),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number: use e.g. 70e9, 70B or 1.4T"))?;
    let v = v * scale;
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("`{s}` must be a positive number"));
    }
    Ok(v)
}

/// A duration of any length: `30d`, `720h`, `90m` (or `90min`), `3600s`, `14ms`, `5us`, or a
/// bare number of seconds.
pub fn parse_time(s: &str) -> Result<f64, String> {
    let t = s.trim();
    const UNITS: [(&str, f64); 9] = [
        ("min", 60.0),
        ("ms", 1e-3),
        ("us", 1e-6),
        ("µs", 1e-6),
        ("ns", 1e-9),
        ("d", 86_400.0),
        ("h", 3_600.0),
        ("m", 60.0),
        ("s", 1.0),
    ];
    let (num, scale) = UNITS
        .iter()
        .find_map(|(u, k)| t.strip_suffix(u).map(|n| (n, *k)))
        .unwrap_or((t, 1.0));
    let v: f64 = num.trim().parse().map_err(|_| {
        format!(
            "`{s}` is not a duration: use a number with d, h, m, s, ms or us (30d, 720h, 90m, \
             3600s, 14ms), or a bare number of seconds"
        )
    })?;
    let secs = v * scale;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!("`{s}` must be a positive duration"));
    }
    Ok(secs)
}

/// `none`, `selective`, `full`, or `partial=F` (F in 0..=1: the fraction of non-attention forward
/// FLOPs recomputed, attention always; PaLM 540B is `partial=0.75`).
pub fn parse_recompute(s: &str) -> Result<roofline_core::mfu::Recompute, String> {
    use roofline_core::mfu::Recompute;
    match s.trim().to_ascii_lowercase().as_str() {
        "none" => Ok(Recompute::None),
        "selective" => Ok(Recompute::Selective),
        "full" => Ok(Recompute::Full),
        other => {
            let f = other
                .strip_prefix("partial=")
                .and_then(|f| f.parse::<f64>().ok())
                .filter(|f| (0.0..=1.0).contains(f))
                .ok_or_else(|| {
                    format!("`{s}`: use none, selective, full, or partial=F with F between 0 and 1")
                })?;
            Ok(Recompute::Partial(f))
        }
    }
}

/// An MFU in percent, `40` or `40%`, as a fraction (0.40).
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v: f64 = t
        .strip_suffix('%')
        .unwrap_or(t)
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a percentage: use e.g. 40 or 40%"))?;
    if !(v > 0.0 && v <= 100.0) {
        return Err(format!("`{s}` must be above 0 and at most 100"));
    }
    Ok(v / 100.0)
}

/// Whole numbers: a comma-separated list whose items are numbers or ranges `a..b`, which double
/// from a up to b (`1..1024` is 1, 2, 4, …, 1024): `1,8,32,128`, `1..1024`, `3,16..64`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UintList(pub Vec<u64>);

/// Parses a [`UintList`].
pub fn parse_uint_list(s: &str) -> Result<UintList, String> {
    let mut out = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let num = |x: &str| {
            x.trim()
                .replace('_', "")
                .parse::<u64>()
                .map_err(|_| format!("`{x}` is not a whole number"))
        };
        if let Some((a, b)) = item.split_once("..") {
            let (a, b) = (num(a)?, num(b.trim_start_matches('='))?);
            if a == 0 || b < a {
                return Err(format!(
                    "`{item}`: a range a..b needs 1 ≤ a ≤ b (it doubles from a up to b)"
                ));
            }
            out.extend(roofline_core::sweep::doubling(a, b));
        } else {
            out.push(num(item)?);
        }
    }
    if out.is_empty() {
        return Err(format!("`{s}`: give at least one number"));
    }
    Ok(UintList(out))
}

/// `roofline mfu`.
#[derive(Debug, Args)]
pub struct MfuArgs {
    /// A preset id or config.json. Without it, give --params; with neither, the MFU is printed
    /// as a function of N.
    pub model: Option<String>,
    /// Parameters N (`70e9`, `70B`), when no model is given.
    #[arg(long, value_parser = parse_count)]
    pub params: Option<f64>,
    /// Decoder blocks L (with --hidden and --seq-len: PaLM's attention term).
    #[arg(long, value_parser = parse_positive)]
    pub layers: Option<u64>,
    /// Hidden size d (= query heads × head dim unless --heads and --head-dim say otherwise).
    #[arg(long, value_parser = parse_positive)]
    pub hidden: Option<u64>,
    /// Query heads H, with --head-dim when H·Q differs from --hidden (PaLM 540B: 48 × 256).
    #[arg(long, value_parser = parse_positive, requires = "head_dim")]
    pub heads: Option<u64>,
    /// Head dim Q, with --heads.
    #[arg(long, value_parser = parse_positive, requires = "heads")]
    pub head_dim: Option<u64>,
    /// Vocabulary V (Megatron's logit term).
    #[arg(long, value_parser = parse_positive)]
    pub vocab: Option<u64>,
    /// Training sequence length T.
    #[arg(long, value_parser = parse_positive)]
    pub seq_len: Option<u64>,
    /// Tokens trained on (with --time); alone, the tokens to train for the time-to-train answer.
    #[arg(long, value_parser = parse_count)]
    pub tokens: Option<f64>,
    /// Time the tokens took: 30d, 720h, 90m, 3600s, or seconds.
    #[arg(long, value_parser = parse_time, requires = "tokens")]
    pub time: Option<f64>,
    /// Global training throughput, tokens per second.
    #[arg(long, value_parser = parse_count, conflicts_with_all = ["time", "step_time"])]
    pub tokens_per_s: Option<f64>,
    /// Time of one optimizer step (with --global-batch and --seq-len).
    #[arg(long, value_parser = parse_time, requires_all = ["global_batch", "seq_len"], conflicts_with = "time")]
    pub step_time: Option<f64>,
    /// Sequences per optimizer step.
    #[arg(long, value_parser = parse_positive)]
    pub global_batch: Option<u64>,
    /// Devices the run used.
    #[arg(long, default_value_t = 1, value_parser = parse_positive)]
    pub devices: u64,
    /// Chip id or chip file: its dense peak for --precision is the peak.
    #[arg(long)]
    pub hardware: Option<String>,
    /// Precision trained in: its dense peak applies.
    #[arg(long, default_value = "bf16", value_parser = parse_precision)]
    pub precision: Precision,
    /// Dense peak of one device in FLOP/s (`312e12`, `312T`), overriding the chip's.
    #[arg(long, value_parser = parse_count)]
    pub peak: Option<f64>,
    /// Activation recomputation: none, selective, full, or partial=F (PaLM's scheme).
    #[arg(long, default_value = "none", value_parser = parse_recompute)]
    pub recompute: roofline_core::mfu::Recompute,
    /// The MFU at which to answer the time to train --tokens, in percent.
    #[arg(long, default_value = "40", value_parser = parse_percent)]
    pub target_mfu: f64,
    /// Model sizes for the MFU-as-a-function-of-N table (no model or --params given).
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = parse_count,
        default_value = "1e9,3e9,7e9,13e9,34e9,70e9,175e9,405e9,1e12"
    )]
    pub sizes: Vec<f64>,
    #[command(flatten)]
    pub format: FormatArg,
}

/// `roofline mbu`.
#[derive(Debug, Args)]
pub struct MbuArgs {
    /// A preset id or config.json (counts the KV cache); or give --params.
    pub model: Option<String>,
    /// Parameters N, when no model is given (the KV cache is then not counted).
    #[arg(long, value_parser = parse_count)]
    pub params: Option<f64>,
    /// Time per output token (one decode step): 14ms, 0.014, …
    #[arg(long, value_parser = parse_time)]
    pub tpot: Option<f64>,
    /// Output tokens per second over the whole batch (batch ÷ time per output token).
    #[arg(long, value_parser = parse_count, conflicts_with = "tpot")]
    pub tokens_per_s: Option<f64>,
    /// Sequences decoded together.
    #[arg(long, default_value_t = 1, value_parser = parse_positive)]
    pub batch: u64,
    /// Tokens already in the KV cache per sequence.
    #[arg(long, default_value_t = 2048)]
    pub context: u64,
    /// Precision of weights, activations and KV cache.
    #[arg(long, default_value = "bf16", value_parser = parse_precision)]
    pub precision: Precision,
    /// Weight precision, overriding --precision.
    #[arg(long, value_parser = parse_precision)]
    pub weight_precision: Option<Precision>,
    /// KV-cache precision, overriding --precision.
    #[arg(long, value_parser = parse_precision)]
    pub kv_precision: Option<Precision>,
    /// Devices the model is split over (tensor parallel).
    #[arg(long, default_value_t = 1, value_parser = parse_positive)]
    pub devices: u64,
    /// Chip id or chip file (bandwidth and dense peak).
    #[arg(long)]
    pub hardware: Option<String>,
    /// Main-memory bandwidth of one device in B/s (`2e12`, `2T`), overriding the chip's.
    #[arg(long, value_parser = parse_count)]
    pub bandwidth: Option<f64>,
    /// Dense peak of one device in FLOP/s, overriding the chip's.
    #[arg(long, value_parser = parse_count)]
    pub peak: Option<f64>,
    #[command(flatten)]
    pub format: FormatArg,
}

/// `roofline sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// A preset id, a config.json, or a folder holding one.
    #[arg(default_value = "llama-2-7b")]
    pub model: String,
    /// Chips, comma-separated (ids or chip files).
    #[arg(long, default_value = "h100-sxm", value_delimiter = ',')]
    pub hardware: Vec<String>,
    /// Stage: prefill sweeps --seq-len, decode sweeps --context.
    #[arg(long, value_enum, default_value_t = StageArg::Decode)]
    pub stage: StageArg,
    /// Batches: a list and/or ranges that double (`1,8,32,128`, `1..1024`).
    #[arg(long, default_value = "1..1024", value_parser = parse_uint_list)]
    pub batch: UintList,
    /// Prompt lengths for prefill (list or doubling ranges).
    #[arg(long, default_value = "2048", value_parser = parse_uint_list)]
    pub seq_len: UintList,
    /// Cached tokens for decode (list or doubling ranges).
    #[arg(long, default_value = "2048", value_parser = parse_uint_list)]
    pub context: UintList,
    /// Precisions of weights, activations and KV cache, comma-separated (`bf16,fp8`).
    #[arg(long, default_value = "bf16", value_delimiter = ',', value_parser = parse_precision)]
    pub precision: Vec<Precision>,
    /// Weight precision for every point, overriding --precision.
    #[arg(long, value_parser = parse_precision)]
    pub weight_precision: Option<Precision>,
    /// KV-cache precision for every point, overriding --precision.
    #[arg(long, value_parser = parse_precision)]
    pub kv_precision: Option<Precision>,
    /// Attention as one fused FlashAttention kernel.
    #[arg(long)]
    pub flash_attention: bool,
    /// Memory the runtime keeps for itself on the chip: a share of its capacity (`10%`, the
    /// default: vLLM's --gpu-memory-utilization 0.9) or a size (`2GB`, `1.5GiB`, `0`); counted
    /// in the memory footprint and in whether the model fits.
    #[arg(long, default_value = "10%", value_parser = parse_reserve)]
    pub memory_reserve: roofline_core::memory::Reserve,
    /// `--plot FILE` draws throughput and latency against batch, and each operator's intensity
    /// against batch with the ridge (`.svg` or `.png`); `--force` overwrites it.
    #[command(flatten)]
    pub plot: PlotArgs,
    #[command(flatten)]
    pub format: FormatArg,
}

#[cfg(test)]
mod perf_args_tests {
    use super::*;
    use roofline_core::mfu::Recompute;

    #[test]
    fn times_take_days_hours_minutes_seconds() {
        assert_eq!(parse_time("30d"), Ok(2_592_000.0));
        assert_eq!(parse_time("720h"), Ok(2_592_000.0));
        assert_eq!(parse_time("90m"), Ok(5_400.0));
        assert_eq!(parse_time("90min"), Ok(5_400.0));
        assert_eq!(parse_time("3600s"), Ok(3_600.0));
        assert_eq!(parse_time("3600"), Ok(3_600.0));
        assert!(parse_time("14ms").is_ok_and(|t| (t - 0.014).abs() < 1e-15));
        let e = parse_time("30x").unwrap_err();
        assert!(e.contains("`30x`") && e.contains("30d"), "{e}");
        assert!(parse_time("0s").is_err() && parse_time("-1h").is_err());
    }

    #[test]
    fn counts_take_exponents_and_suffixes() {
        assert_eq!(parse_count("70e9"), Ok(70e9));
        assert_eq!(parse_count("70B"), Ok(70e9));
        assert_eq!(parse_count("1.4T"), Ok(1.4e12));
        assert_eq!(parse_count("7_000"), Ok(7000.0));
        assert!(parse_count("seventy").is_err() && parse_count("0").is_err());
    }

    #[test]
    fn recompute_percent_and_lists() {
        assert_eq!(parse_recompute("full"), Ok(Recompute::Full));
        assert_eq!(
            parse_recompute("partial=0.75"),
            Ok(Recompute::Partial(0.75))
        );
        assert!(parse_recompute("partial=2").is_err() && parse_recompute("some").is_err());
        assert_eq!(parse_percent("40"), Ok(0.4));
        assert_eq!(parse_percent("55%"), Ok(0.55));
        assert!(parse_percent("0").is_err() && parse_percent("120").is_err());
        assert_eq!(
            parse_uint_list("1,8,32,128"),
            Ok(UintList(vec![1, 8, 32, 128]))
        );
        assert_eq!(parse_uint_list("1..1024").map(|l| l.0.len()), Ok(11));
        assert_eq!(
            parse_uint_list("3,16..64"),
            Ok(UintList(vec![3, 16, 32, 64]))
        );
        assert!(parse_uint_list("8..2").is_err() && parse_uint_list("x").is_err());
    }
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The file: an `ncu --csv` export, a PyTorch profiler trace (.json), a mixbench log, or an
    /// ERT roofline.json, sum or try file (told apart by content).
    pub file: std::path::PathBuf,
    /// The roof kernels are held against: a chip id (`h100-sxm`), a chip file, or a mixbench/ERT
    /// output. Without it only achieved FLOP/s and intensity are reported.
    #[arg(long)]
    pub hardware: Option<String>,
    /// Kernels shown in the table, by time lost (JSON and CSV have every kernel).
    #[arg(long, default_value_t = 20, value_parser = parse_positive_usize)]
    pub top: usize,
    /// Write an empirical roof (mixbench, ERT) as a chip file for `--hardware FILE.toml`.
    #[arg(long, value_name = "FILE.toml")]
    pub write_chip: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub plot: PlotArgs,
    #[command(flatten)]
    pub format: FormatArg,
}

/// A count of at least 1.
fn parse_positive_usize(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(v) => Ok(v),
        Err(_) => Err(format!(
            "`{s}` is not a whole number: give a count such as 20"
        )),
    }
}
