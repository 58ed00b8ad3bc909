//! Test fixtures, one copy for every test and benchmark of the workspace: Llama-2-7B as its
//! config.json gives it, and two chips with their datasheet figures (the catalog's
//! `crates/inputs/catalog/hardware/*.toml` holds the same figures with their full sources).
//!
//! Compiled for this crate's tests and, for other crates' tests and this crate's benchmarks,
//! behind the `test-fixtures` feature; never part of a release build.

use crate::cited::Cited;
use crate::device::{Device, MemoryKind, MemoryLevel};
use crate::model::{Activation, MlpKind, Moe, NormKind, Transformer, Variant};
use crate::precision::Precision;
use crate::units::{Bytes, BytesPerSec, FlopPerSec, Seconds};

/// Llama-2-7B as its config.json gives it (`meta-llama/Llama-2-7b-hf`: hidden 4096, 32 layers,
/// 32 heads of 128, MLP 11008, vocabulary 32000, untied embeddings, RMSNorm, SiLU-gated MLP).
pub fn llama2_7b() -> Transformer {
    Transformer {
        name: "llama-2-7b".into(),
        architecture: "LlamaForCausalLM".into(),
        hidden: 4096,
        layers: 32,
        heads: 32,
        kv_heads: 32,
        head_dim: 128,
        intermediate: 11008,
        vocab: 32000,
        tie_embeddings: false,
        qkv_bias: false,
        o_bias: false,
        mlp_bias: false,
        norm: NormKind::RmsNorm,
        mlp: MlpKind::Gated,
        activation: Activation::Silu,
        max_position_embeddings: Some(4096),
        variant: Variant::default(),
    }
}

/// The H100 SXM with its datasheet figures (dense BF16 989.5 TFLOP/s = 1,979/2; FP32 67;
/// HBM3 3.35 TB/s; 228 KiB shared memory per SM).
pub fn h100_sxm() -> Device {
    Device {
        id: "h100-sxm".into(),
        name: "NVIDIA H100 SXM5 80GB".into(),
        vendor: "NVIDIA".into(),
        peaks: vec![
            (Precision::Fp32, Cited::new(FlopPerSec(67e12), "datasheet")),
            (
                Precision::Bf16,
                Cited::new(FlopPerSec(989.5e12), "datasheet"),
            ),
            (
                Precision::Fp16,
                Cited::new(FlopPerSec(989.5e12), "datasheet"),
            ),
            (Precision::Fp8, Cited::new(FlopPerSec(1979e12), "datasheet")),
        ],
        memory: vec![MemoryLevel {
            kind: MemoryKind::Main,
            name: "HBM3".into(),
            bandwidth: Some(Cited::new(BytesPerSec(3.35e12), "datasheet")),
            capacity: Some(Cited::new(Bytes(80e9), "datasheet")),
        }],
        sm_count: Some(Cited::new(132, "whitepaper")),
        shared_memory_per_sm: Some(Cited::new(Bytes(228.0 * 1024.0), "tuning guide")),
        launch_overhead: Cited::new(Seconds(5e-6), "typical"),
        launch_model: crate::device::LaunchModel::PerKernel,
        interconnect: None,
        host_link: None,
        platform: None,
        notes: vec![],
        efficiency: None,
    }
}

/// The RTX A6000 with its datasheet figures (dense BF16 and FP16 154.8 TFLOP/s = 309.7/2 with
/// 2:4 sparsity halved; FP32 38.7 TFLOP/s; GDDR6 768 GB/s, 48 GB).
pub fn a6000() -> Device {
    let peak = |p, v| (p, Cited::new(FlopPerSec(v), "RTX A6000 datasheet"));
    Device {
        id: "a6000".into(),
        name: "NVIDIA RTX A6000".into(),
        vendor: "NVIDIA".into(),
        peaks: vec![
            peak(Precision::Fp32, 38.7e12),
            peak(Precision::Bf16, 154.8e12),
            peak(Precision::Fp16, 154.8e12),
        ],
        memory: vec![MemoryLevel {
            kind: MemoryKind::Main,
            name: "GDDR6".into(),
            bandwidth: Some(Cited::new(BytesPerSec(768e9), "RTX A6000 datasheet")),
            capacity: Some(Cited::new(Bytes(48e9), "RTX A6000 datasheet")),
        }],
        sm_count: None,
        shared_memory_per_sm: None,
        launch_overhead: Cited::new(Seconds(5e-6), "typical"),
        launch_model: crate::device::LaunchModel::PerKernel,
        interconnect: None,
        host_link: None,
        platform: None,
        notes: vec![],
        efficiency: None,
    }
}

/// Mixtral-8x7B's mixture of experts on Llama-2-7B's shape: 8 experts of 14336, 2 per token,
/// GQA 32/8.
pub fn mixtral_like() -> Transformer {
    Transformer {
        name: "mixtral-like".into(),
        architecture: "MixtralForCausalLM".into(),
        kv_heads: 8,
        intermediate: 14336,
        variant: Variant {
            moe: Some(Moe {
                experts: 8,
                top_k: 2,
                expert_intermediate: 14336,
                shared_experts: 0,
                dense_layers: 0,
                router_bias: false,
            }),
            ..Variant::default()
        },
        ..llama2_7b()
    }
}
