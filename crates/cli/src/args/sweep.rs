//! `roofline sweep`.

use super::common::{
    AttentionArg, FormatArg, LogitsArg, PlotArgs, ReserveArg, StageArg, DEFAULT_CHIP,
};
use super::values::{parse_degree, parse_precision, parse_uint_list, UintList};
use clap::Args;
use roofline_core::precision::Precision;

/// `roofline sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// A preset id, a config.json, or a folder holding one.
    #[arg(default_value = "llama-2-7b")]
    pub model: String,
    /// Chips, comma-separated (ids or chip files).
    #[arg(long, default_value = DEFAULT_CHIP, value_delimiter = ',')]
    pub hardware: Vec<String>,
    /// Stage: prefill sweeps --seq-len, decode sweeps --context.
    #[arg(long, value_enum, default_value_t = StageArg::Decode)]
    pub stage: StageArg,
    /// Batches: numbers and ranges, comma-separated, merged sorted without repeats (at most
    /// 4096): `1,8,32,128`; `a..b` doubles (`1..1024` is 1, 2, 4, …, 1024); `a..b:s` steps by
    /// s (`1..256:8` is 1, 9, 17, …, 249: b only when on the grid); `a..b*f` multiplies by a
    /// whole f ≥ 2 (`1..256*4` is 1, 4, 16, 64, 256).
    #[arg(long, default_value = "1..1024", value_parser = parse_uint_list)]
    pub batch: UintList,
    /// Prompt lengths for prefill: numbers and ranges as --batch takes them (`512,2048`,
    /// `512..8192` doubling, `1024..8192:1024` stepping, `128..32768*4` multiplying).
    #[arg(long, default_value = "2048", value_parser = parse_uint_list)]
    pub seq_len: UintList,
    /// Cached tokens for decode: numbers and ranges as --batch takes them (`2048`,
    /// `1024..32768` doubling, `1024..8192:1024` stepping, `256..65536*4`
    /// multiplying).
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
    #[command(flatten)]
    pub attention: AttentionArg,
    /// Prefill: the positions lm_head computes logits for: `last` (each sequence's last, what
    /// generation needs) or `all` (every position: training, scoring a whole sequence). Decode
    /// has one position per sequence either way.
    #[arg(long, value_enum, default_value_t = LogitsArg::Last)]
    pub logits: LogitsArg,
    #[command(flatten)]
    pub reserve: ReserveArg,
    /// Tensor-parallel degrees to sweep (`1,2,4,8` or `1..8`, ranges as --batch takes them):
    /// each batch and length analysed at each
    /// degree on one chip's default node (or --system), and where adding devices stops paying.
    /// Give a short --batch list with it.
    #[arg(long, value_parser = parse_uint_list)]
    pub tp: Option<UintList>,
    /// With --tp: a system of many chips (an id or file) instead of --hardware's default node.
    #[arg(long, value_name = "NAME|FILE")]
    pub system: Option<String>,
    /// With --tp: a pipeline-parallel degree held fixed beside each swept --tp.
    #[arg(long, value_parser = parse_degree)]
    pub pp: Option<u32>,
    /// With --tp: an expert-parallel degree held fixed beside each swept --tp (mixtures of
    /// experts).
    #[arg(long, value_parser = parse_degree)]
    pub ep: Option<u32>,
    /// With --tp and --ep: the busiest device gets this many times the mean routed tokens.
    #[arg(long)]
    pub expert_imbalance: Option<f64>,
    /// With --tp: sequence parallelism at every swept degree above 1.
    #[arg(long)]
    pub sequence_parallel: bool,
    /// With --tp and --stage prefill: a context-parallel degree held fixed beside each swept
    /// --tp (ring attention over the chunks of each prompt).
    #[arg(long, value_parser = parse_degree)]
    pub cp: Option<u32>,
    /// Throughput against latency: each batch, --tp degree, precision and chip serves a request
    /// of --seq-len prompt tokens and --generate output tokens; tokens/s per device against
    /// TPOT (and TTFT), bound and estimate, the Pareto front marked (`--plot` draws it).
    #[arg(long)]
    pub pareto: bool,
    /// With --pareto: output tokens per request (N; 256 when not given).
    #[arg(long, value_parser = super::values::parse_positive)]
    pub generate: Option<u64>,
    /// With --pareto: the TPOT target (`50ms`): the best throughput that meets it.
    #[arg(long, allow_hyphen_values = true, value_parser = super::values::parse_step_time)]
    pub slo_tpot: Option<f64>,
    /// With --pareto: the TTFT target (`1s`).
    #[arg(long, allow_hyphen_values = true, value_parser = super::values::parse_step_time)]
    pub slo_ttft: Option<f64>,
    /// With --pareto: the estimate launches each step once, as a CUDA graph.
    #[arg(long)]
    pub cuda_graphs: bool,
    /// `--plot FILE` draws throughput and latency against batch, and each operator's intensity
    /// against batch with the ridge (`.svg` or `.png`); `--force` overwrites it.
    #[command(flatten)]
    pub plot: PlotArgs,
    #[command(flatten)]
    pub format: FormatArg,
}
