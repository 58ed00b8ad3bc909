//! Fixtures shared by the benchmarks: Llama-2-7B as its config.json gives it, and two chips with
//! the catalog's datasheet figures (`crates/inputs/catalog/hardware/*.toml`).

#![allow(dead_code)] // each benchmark uses some of the fixtures

use roofline_core::device::Device;
use roofline_core::model::Transformer;
use roofline_core::precision::Precision;
use roofline_core::units::{Bytes, BytesPerSec, FlopPerSec, Seconds};

/// meta-llama/Llama-2-7b-hf.
pub fn llama2_7b() -> Transformer {
    Transformer::builder(4096, 32, 32, 11008, 32000)
        .name("llama-2-7b")
        .max_position_embeddings(Some(4096))
        .build()
        .expect("Llama-2-7B's dimensions are valid")
}

fn chip(id: &str, peaks: &[(Precision, f64)], bandwidth: f64, capacity: f64) -> Device {
    let mut b = Device::builder(id, id)
        .vendor("NVIDIA")
        .main_memory(
            "main",
            BytesPerSec(bandwidth),
            Some(Bytes(capacity)),
            "datasheet",
        )
        .launch_overhead(Seconds(5e-6), "typical");
    for &(p, v) in peaks {
        b = b.peak(p, FlopPerSec(v), "datasheet (dense)");
    }
    b.build()
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
