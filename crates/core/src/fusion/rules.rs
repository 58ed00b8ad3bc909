//! The fusion rules: each named, with its source, and the presets that apply them.

use serde::Serialize;

/// A fusion rule. Each one decides that some tensors stay on chip instead of crossing HBM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// QKᵀ → scale/mask → softmax → ·V as one kernel: the score matrix never reaches HBM.
    FlashAttention,
    /// GEMMs that read the same input become one GEMM with the output widths concatenated
    /// (q/k/v → qkv; gate + up → gate_up): the input is read once, one launch.
    HorizontalGemm,
    /// RMSNorm folded into the prologue of the GEMM that consumes it: the norm weight is
    /// multiplied into the GEMM weight ahead of time and the per-row 1/rms, accumulated while
    /// the GEMM streams the row, is applied in the epilogue, since (x/rms)·W = (x·W)/rms.
    NormPrologue,
    /// Elementwise consumers of a GEMM's output (bias, activation, SwiGLU multiply, rotary
    /// embedding, KV-cache write, residual add) run in its epilogue on the accumulator tile.
    GemmEpilogue,
    /// Vertical fusion of elementwise and reduction chains (activation then multiply; rotary
    /// then KV-cache write): one pass over the data.
    ElementwiseChain,
    /// A residual add and the norm that reads its result, in one kernel: the sum is written once
    /// (the residual stream still needs it) and normalised from registers.
    ResidualNorm,
    /// A chain the user named, GEMMs included.
    UserChain,
}

impl Rule {
    /// Short name, as printed.
    pub fn name(self) -> &'static str {
        match self {
            Rule::FlashAttention => "flash_attention",
            Rule::HorizontalGemm => "horizontal_gemm",
            Rule::NormPrologue => "norm_prologue",
            Rule::GemmEpilogue => "gemm_epilogue",
            Rule::ElementwiseChain => "elementwise_chain",
            Rule::ResidualNorm => "residual_norm",
            Rule::UserChain => "user_chain",
        }
    }

    /// Where the rule comes from.
    pub fn source(self) -> &'static str {
        match self {
            Rule::FlashAttention => {
                "Dao et al. 2022, FlashAttention (arXiv:2205.14135) §3.1 Alg. 1; Dao 2023, FlashAttention-2 (arXiv:2307.08691)"
            }
            Rule::HorizontalGemm => {
                "fused QKV / gate_up projections (vLLM QKVParallelLinear, MergedColumnParallelLinear); XLA horizontal (sibling) fusion"
            }
            Rule::NormPrologue => {
                "RMSNorm folding: weight pre-scaled, per-row 1/rms in the epilogue (Liger-Kernel fused linear ops; TVM/XLA producer-consumer fusion into GEMM prologue)"
            }
            Rule::GemmEpilogue => {
                "CUTLASS/cuBLASLt epilogue fusion (bias, activation, elementwise); TVM 'injective into out-fusable' pattern (Chen et al. 2018, OSDI, §4.1)"
            }
            Rule::ElementwiseChain => {
                "TVM injective-operator fusion (Chen et al. 2018 §4.1); XLA loop fusion; TorchInductor pointwise/reduction fusion (Ansel et al. 2024, PyTorch 2)"
            }
            Rule::ResidualNorm => {
                "fused add + RMSNorm (Liger-Kernel LigerRMSNorm with residual; vLLM fused_add_rms_norm)"
            }
            Rule::UserChain => "named by the user with --chain",
        }
    }
}

/// A stack whose kernels the plan models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// Every operator its own kernel (PyTorch eager).
    Eager,
    /// Elementwise and reduction chains fused, flash attention, GEMMs as library calls
    /// (torch.compile-like).
    Compiled,
    /// Every rule.
    Max,
}

impl Preset {
    /// The rules this preset applies, in the order they are tried.
    pub fn rules(self) -> &'static [Rule] {
        match self {
            Preset::Eager => &[],
            Preset::Compiled => &[
                Rule::FlashAttention,
                Rule::ElementwiseChain,
                Rule::ResidualNorm,
            ],
            Preset::Max => &[
                Rule::FlashAttention,
                Rule::HorizontalGemm,
                Rule::NormPrologue,
                Rule::GemmEpilogue,
                Rule::ElementwiseChain,
                Rule::ResidualNorm,
            ],
        }
    }

    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Eager => "eager",
            Preset::Compiled => "compiled",
            Preset::Max => "max",
        }
    }
}

impl std::str::FromStr for Preset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "eager" => Ok(Preset::Eager),
            "compiled" => Ok(Preset::Compiled),
            "max" => Ok(Preset::Max),
            _ => Err(format!(
                "unknown fusion preset `{s}`: use eager, compiled or max"
            )),
        }
    }
}
