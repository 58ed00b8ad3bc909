//! Fixtures shared by the benchmarks: Llama-2-7B as its config.json gives it, and two chips with
//! the catalog's datasheet figures (`crates/inputs/catalog/hardware/*.toml`).

#![allow(dead_code)] // each benchmark uses some of the fixtures

use roofline_core::cited::Cited;
use roofline_core::device::{Device, MemoryKind, MemoryLevel};
use roofline_core::model::{Activation, MlpKind, NormKind, Transformer};
use roofline_core::precision::Precision;
use roofline_core::units::{Bytes, BytesPerSec, FlopPerSec, Seconds};

/// meta-llama/Llama-2-7b-hf.
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
        variant: Default::default(),
    }
}

fn chip(id: &str, peaks: &[(Precision, f64)], bandwidth: f64, capacity: f64) -> Device {
    Device {
        id: id.into(),
        name: id.into(),
        vendor: "NVIDIA".into(),
        peaks: peaks
            .iter()
            .map(|&(p, v)| (p, Cited::new(FlopPerSec(v), "datasheet (dense)")))
            .collect(),
        memory: vec![MemoryLevel {
            kind: MemoryKind::Main,
            name: "main".into(),
            bandwidth: Some(Cited::new(BytesPerSec(bandwidth), "datasheet")),
            capacity: Some(Cited::new(Bytes(capacity), "datasheet")),
        }],
        sm_count: None,
        shared_memory_per_sm: None,
        launch_overhead: Cited::new(Seconds(5e-6), "typical"),
        interconnect: None,
        host_link: None,
        notes: vec![],
    }
}

/// RTX A6000: fp32 38.7, bf16 154.8 TFLOP/s dense; 768 GB/s; 48 GB.
pub fn a6000() -> Device {
    chip(
        "a6000",
        &[(Precision::Fp32, 38.7e12), (Precision::Bf16, 154.8e12)],
        768e9,
        48e9,
    )
}

/// H100 SXM: fp32 67, bf16 989.5, fp8 1979 TFLOP/s dense; 3.35 TB/s; 80 GB.
pub fn h100_sxm() -> Device {
    chip(
        "h100-sxm",
        &[
            (Precision::Fp32, 67e12),
            (Precision::Bf16, 989.5e12),
            (Precision::Fp8, 1979e12),
        ],
        3.35e12,
        80e9,
    )
}
