//! `roofline train`, and the training-layout flags `roofline mfu` shares with it.

use super::common::{FormatArg, ReserveArg};
use super::values::{parse_count, parse_degree, parse_positive, parse_precision, parse_step_time};
use clap::{Args, ValueEnum};
use roofline_core::precision::Precision;
use roofline_core::train::memory::{Recompute, ZeroStage};
use roofline_core::train::optimizer::Optimizer;
use roofline_core::train::pipeline::PipelineSchedule;
use roofline_core::train::Efficiency;

/// `--recompute`: which activations the backward recomputes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RecomputeArg {
    /// Nothing: every activation is kept.
    None,
    /// The attention core of every block (Korthikanti et al. 2022, §5).
    Selective,
    /// Every block's forward, keeping only its input.
    Full,
}

impl From<RecomputeArg> for Recompute {
    fn from(r: RecomputeArg) -> Self {
        match r {
            RecomputeArg::None => Recompute::None,
            RecomputeArg::Selective => Recompute::Selective,
            RecomputeArg::Full => Recompute::Full,
        }
    }
}

/// `--schedule`: the pipeline's order of forwards and backwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScheduleArg {
    /// 1F1B (PipeDream-Flush).
    #[value(name = "1f1b")]
    OneFOneB,
    /// Megatron's interleaved 1F1B, with --virtual-stages chunks per device.
    Interleaved,
    /// ZB-H1: weight gradients deferred into the bubble.
    ZeroBubble,
}

/// `--fsdp`: PyTorch FSDP's sharding strategies as ZeRO stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FsdpArg {
    /// `FULL_SHARD`: ZeRO-3 (weights, gradients and optimizer states sharded).
    Full,
    /// `SHARD_GRAD_OP`: ZeRO-2 (gradients and optimizer states sharded).
    GradOp,
    /// `HYBRID_SHARD`: ZeRO-3 within a node, replicas across nodes. Priced as ZeRO-3 over all
    /// the data-parallel ranks (the model does not split the group by node): the memory is
    /// FULL_SHARD's when the data-parallel ranks fit one node.
    Hybrid,
}

impl From<FsdpArg> for ZeroStage {
    fn from(f: FsdpArg) -> Self {
        match f {
            FsdpArg::Full | FsdpArg::Hybrid => ZeroStage::Zero3,
            FsdpArg::GradOp => ZeroStage::Zero2,
        }
    }
}

/// `--optimizer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OptimizerArg {
    /// AdamW: two fp32 moments a parameter.
    Adamw,
    /// SGD with momentum: one fp32 momentum buffer a parameter.
    Sgd,
}

impl From<OptimizerArg> for Optimizer {
    fn from(o: OptimizerArg) -> Self {
        match o {
            OptimizerArg::Adamw => Optimizer::AdamW,
            OptimizerArg::Sgd => Optimizer::SgdMomentum,
        }
    }
}

/// `--efficiency matmul=0.74,network=0.8,memory=1`: the shares that replace the chip's
/// ([`roofline_core::device::Device::efficiency`]), each in [0.01, 1]; a share not named keeps
/// the chip's value (named twice: refused).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EfficiencyOverride {
    /// η_matmul.
    pub matmul: Option<f64>,
    /// η of fp8 GEMMs.
    pub matmul_fp8: Option<f64>,
    /// η of attention kernels.
    pub attention: Option<f64>,
    /// η of vector FLOPs.
    pub vector: Option<f64>,
    /// η_memory.
    pub memory: Option<f64>,
    /// η_network.
    pub network: Option<f64>,
}

impl EfficiencyOverride {
    /// `base` with the shares given replaced.
    pub fn apply(&self, base: Efficiency) -> Efficiency {
        Efficiency {
            matmul: self.matmul.unwrap_or(base.matmul),
            matmul_fp8: self.matmul_fp8.unwrap_or(base.matmul_fp8),
            // Attention kernels take the matmul share where the chip's do, unless given.
            attention: self.attention.unwrap_or(match self.matmul {
                Some(m) if base.attention == base.matmul => m,
                _ => base.attention,
            }),
            vector: self.vector.unwrap_or(base.vector),
            memory: self.memory.unwrap_or(base.memory),
            network: self.network.unwrap_or(base.network),
        }
    }

    /// Where the shares of `apply(chip's)` come from, in words.
    pub fn source(this: Option<&Self>, chip: &roofline_core::device::Device) -> String {
        match this {
            Some(_) => format!("--efficiency, the rest from: {}", chip.efficiency_source()),
            None => chip.efficiency_source().to_string(),
        }
    }
}

/// Parses `matmul=0.74,network=0.8,memory=1`.
pub fn parse_efficiency(s: &str) -> Result<EfficiencyOverride, String> {
    let mut e = EfficiencyOverride::default();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| format!("`{part}`: write name=share, e.g. matmul=0.74"))?;
        let v: f64 = value
            .trim()
            .parse()
            .map_err(|_| format!("`{part}`: the share is not a number"))?;
        if !(roofline_core::pricing::MIN_SHARE..=1.0).contains(&v) {
            return Err(format!(
                "`{part}`: a share is in [0.01, 1] (0.74 is 74 % of the roof)"
            ));
        }
        let slot = match key.trim() {
            "matmul" => &mut e.matmul,
            "matmul_fp8" => &mut e.matmul_fp8,
            "attention" => &mut e.attention,
            "vector" => &mut e.vector,
            "memory" => &mut e.memory,
            "network" => &mut e.network,
            other => {
                return Err(format!(
                    "`{other}`: the shares are matmul, matmul_fp8, attention, vector, memory and network"
                ))
            }
        };
        if slot.is_some() {
            return Err(format!(
                "`{}` is named twice: give each share once",
                key.trim()
            ));
        }
        *slot = Some(v);
    }
    Ok(e)
}

/// The training layout and policies, shared by `roofline train` and `roofline mfu` (where any
/// of them asks for the predicted waterfall beside the measured step).
#[derive(Debug, Args)]
pub struct TrainLayoutArgs {
    /// Tensor-parallel degree t (default 1).
    #[arg(long, value_parser = parse_degree)]
    pub tp: Option<u32>,
    /// Pipeline-parallel degree p (default 1).
    #[arg(long, value_parser = parse_degree)]
    pub pp: Option<u32>,
    /// Data-parallel replicas d (default 1).
    #[arg(long, value_parser = parse_degree)]
    pub dp: Option<u32>,
    /// Context-parallel degree c: each sequence split over c devices by ring attention.
    #[arg(long, value_parser = parse_degree)]
    pub cp: Option<u32>,
    /// Expert-parallel degree e (mixtures of experts).
    #[arg(long, value_parser = parse_degree)]
    pub ep: Option<u32>,
    /// Sequence parallelism (with --tp): norms and residual adds on 1/t of the tokens.
    #[arg(long)]
    pub sequence_parallel: bool,
    /// Sequences per micro-batch on each device, b (default 1).
    #[arg(long, value_parser = parse_positive)]
    pub micro_batch: Option<u64>,
    /// ZeRO stage over the data-parallel ranks: 0 (none), 1 (optimizer states), 2 (and
    /// gradients), 3 (and weights).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=3), conflicts_with = "fsdp")]
    pub zero: Option<u8>,
    /// PyTorch FSDP's sharding: full (ZeRO-3), grad-op (ZeRO-2), hybrid (ZeRO-3 within a node;
    /// priced as ZeRO-3 over every data-parallel rank).
    #[arg(long, value_enum)]
    pub fsdp: Option<FsdpArg>,
    /// Pipeline schedule (default 1f1b).
    #[arg(long, value_enum)]
    pub schedule: Option<ScheduleArg>,
    /// Model chunks per device of the interleaved schedule, v (with --schedule interleaved).
    #[arg(long, value_parser = parse_degree)]
    pub virtual_stages: Option<u32>,
    /// The optimizer (default adamw).
    #[arg(long, value_enum)]
    pub optimizer: Option<OptimizerArg>,
    #[command(flatten)]
    pub attention: super::common::AttentionArg,
    /// Reduce the gradients after the backward instead of in buckets during it (Megatron-LM
    /// without `--overlap-grad-reduce`, as in its 2021–2022 published runs).
    #[arg(long)]
    pub no_overlap_grad_reduce: bool,
    /// Pipeline sends block their stage (Megatron-LM without `--overlap-p2p-communication`)
    /// instead of running beside its compute.
    #[arg(long)]
    pub blocking_p2p: bool,
    /// The estimate's shares of the roofs, replacing the published ones
    /// (`matmul=0.74,network=0.8,memory=1`; each in [0.01, 1]).
    #[arg(long, value_parser = parse_efficiency)]
    pub efficiency: Option<EfficiencyOverride>,
}

impl TrainLayoutArgs {
    /// Whether any flag of the training layout was given.
    pub fn any(&self) -> bool {
        self.tp.is_some()
            || self.pp.is_some()
            || self.dp.is_some()
            || self.cp.is_some()
            || self.ep.is_some()
            || self.sequence_parallel
            || self.micro_batch.is_some()
            || self.zero.is_some()
            || self.fsdp.is_some()
            || self.schedule.is_some()
            || self.virtual_stages.is_some()
            || self.optimizer.is_some()
            || self.attention.no_flash_attention
            || self.attention.flash_attention
            || self.no_overlap_grad_reduce
            || self.blocking_p2p
            || self.efficiency.is_some()
    }

    /// The layout the flags give (1 for each degree not given).
    pub fn layout(&self) -> roofline_core::parallel::Layout {
        roofline_core::parallel::Layout {
            tp: self.tp.unwrap_or(1),
            pp: self.pp.unwrap_or(1),
            sequence_parallel: self.sequence_parallel,
            ep: self.ep.unwrap_or(1),
            expert_imbalance: 1.0,
            cp: self.cp.unwrap_or(1),
        }
    }

    /// The ZeRO stage: --zero, else --fsdp's, else none.
    pub fn zero_stage(&self) -> ZeroStage {
        match (self.zero, self.fsdp) {
            (Some(1), _) => ZeroStage::Zero1,
            (Some(2), _) => ZeroStage::Zero2,
            (Some(3), _) => ZeroStage::Zero3,
            (Some(_), _) => ZeroStage::Zero0,
            (None, Some(f)) => f.into(),
            (None, None) => ZeroStage::Zero0,
        }
    }

    /// The pipeline schedule.
    ///
    /// # Errors
    /// `--virtual-stages` without `--schedule interleaved`, as (message, hint).
    pub fn schedule(&self) -> Result<PipelineSchedule, (String, String)> {
        match (self.schedule, self.virtual_stages) {
            (Some(ScheduleArg::Interleaved), v) => Ok(PipelineSchedule::Interleaved {
                virtual_stages: v.unwrap_or(2) as usize,
            }),
            (_, Some(v)) => Err((
                format!("`--virtual-stages {v}` is for the interleaved schedule"),
                "add --schedule interleaved, or drop --virtual-stages".into(),
            )),
            (Some(ScheduleArg::ZeroBubble), None) => Ok(PipelineSchedule::ZeroBubble),
            _ => Ok(PipelineSchedule::OneFOneB),
        }
    }
}

/// `roofline train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// A preset id (`llama-3.1-8b`, see `roofline models`), a config.json, or a folder holding
    /// one.
    pub model: String,
    /// A system of many chips: an id (`roofline hardware list --systems`) or a system file;
    /// its chip replaces --hardware.
    #[arg(long, value_name = "NAME|FILE")]
    pub system: Option<String>,
    /// Chip id, with --devices: that many of it in the chip's default node.
    #[arg(long, default_value = super::common::DEFAULT_CHIP)]
    pub hardware: String,
    /// Devices of --hardware; defaults to tp × pp × cp × ep × dp.
    #[arg(long, value_parser = parse_degree)]
    pub devices: Option<u32>,
    /// Sequences per optimizer step over every replica, B_global.
    #[arg(long, value_parser = parse_positive)]
    pub global_batch: u64,
    /// Tokens per sequence, s.
    #[arg(long, default_value_t = 2048, value_parser = parse_positive)]
    pub seq_len: u64,
    /// Activation recomputation.
    #[arg(long, value_enum, default_value_t = RecomputeArg::None)]
    pub recompute: RecomputeArg,
    /// Precision of the forward and backward (weights as the forward reads them, activations).
    #[arg(long, default_value = "bf16", value_parser = parse_precision)]
    pub precision: Precision,
    #[command(flatten)]
    pub layout: TrainLayoutArgs,
    /// Tokens to train for (`1T`, `2e12`): the time to train them at each prediction's rate.
    #[arg(long, value_parser = parse_count)]
    pub tokens: Option<f64>,
    /// A measured step time (`20.1s`, `850ms`): the waterfall as shares of it, with the time
    /// it adds beyond the estimate as the unexplained bar.
    #[arg(long, value_parser = parse_step_time)]
    pub measured_step: Option<f64>,
    /// Also draw the estimate's MFU waterfall to FILE (`.svg` or `.png`).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<std::path::PathBuf>,
    /// Also write a self-contained HTML report to FILE (`.html`): the waterfall and the step,
    /// memory, stage and waterfall tables.
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    /// Overwrite output files that already exist.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub reserve: ReserveArg,
    #[command(flatten)]
    pub format: FormatArg,
}
