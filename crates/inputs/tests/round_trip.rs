//! Every input deserialises from the JSON it serialises to: each embedded model preset, each
//! catalog chip, and workloads and precisions of every stage, quantization and attention form.

use roofline_core::device::Device;
use roofline_core::model::Transformer;
use roofline_core::precision::Precision;
use roofline_core::workload::{Precisions, Stage, Workload};
use roofline_inputs::config::{load_model, preset_ids};
use roofline_inputs::hardware::catalog;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Debug;

type R = Result<(), Box<dyn std::error::Error>>;

/// `x` → JSON → back, equal to `x`.
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(x: &T) -> R {
    let json = serde_json::to_string(x)?;
    let back: T = serde_json::from_str(&json)?;
    assert_eq!(&back, x, "{json}");
    Ok(())
}

#[test]
fn every_preset_round_trips() -> R {
    let ids = preset_ids();
    // The eleven presets of the README: Llama 2 (7B, 13B, 70B), Llama 3.1 (8B, 70B), Mixtral,
    // Qwen3-MoE, DeepSeek-V3 (MoE + MLA), GPT-2 (two sizes), OPT; and the training plan's
    // Llama-3.1-405B and GPT-3 175B.
    assert_eq!(ids.len(), 13, "{ids:?}");
    for id in ids {
        let m: Transformer = load_model(id)?;
        round_trip(&m)?;
    }
    Ok(())
}

#[test]
fn every_catalog_chip_round_trips() -> R {
    let chips: Vec<Device> = catalog()?;
    // `roofline hardware list`: 29 chips.
    assert_eq!(chips.len(), 29);
    for d in &chips {
        round_trip(d)?;
    }
    Ok(())
}

#[test]
fn workloads_and_precisions_round_trip() -> R {
    let int4_awq = Precisions::new(Precision::Int4, Precision::Fp16, Precision::Fp16)
        // an fp16 scale and zero point per 128 weights: (2 + 2) / 128 B per weight
        .with_weight_scale_bytes(4.0 / 128.0);
    let w8a8 = Precisions::new(Precision::Int8, Precision::Bf16, Precision::Fp8)
        .with_gemm(Some(Precision::Int8));
    // a group of 128 int8 weights with one bf16 scale, a weight size that is not a power of 2
    let odd = Precisions::new(Precision::Int8, Precision::Bf16, Precision::Bf16)
        .with_weight_scale_bytes(2.0 / 128.0 + 1.0 / 3.0);
    let mut workloads = Vec::new();
    for p in Precision::ALL {
        round_trip(&p)?;
        let uniform = Precisions::uniform(p);
        round_trip(&uniform)?;
        workloads.push(Workload::prefill(1, 2048).with_precisions(uniform));
        workloads.push(Workload::decode(64, 4096).with_precisions(uniform));
    }
    for p in [int4_awq, w8a8, odd] {
        round_trip(&p)?;
        workloads.push(
            Workload::decode(8, 32_768)
                .with_precisions(p)
                .flash_attention(true),
        );
    }
    workloads.push(Workload::new(Stage::Decode, 1, 2048, 2048).flash_attention(true));
    for w in &workloads {
        round_trip(w)?;
    }
    for s in [Stage::Prefill, Stage::Decode] {
        round_trip(&s)?;
    }
    // The names in the JSON are the ones the CLI's `--format json` prints.
    assert_eq!(serde_json::to_string(&Stage::Decode)?, "\"decode\"");
    assert_eq!(serde_json::to_string(&Precision::Bf16)?, "\"bf16\"");
    Ok(())
}

#[test]
fn a_model_built_by_hand_round_trips() -> R {
    // Mistral-7B-v0.1's shape (its config.json): GQA 32/8, a 4096-token sliding window.
    let m = Transformer::builder(4096, 32, 32, 14336, 32000)
        .name("mistral-7b")
        .architecture("MistralForCausalLM")
        .kv_heads(8)
        .sliding_window(Some(4096))
        .max_position_embeddings(Some(32_768))
        .build()?;
    round_trip(&m)?;
    // 2·32000·4096 + 32·(2·4096² + 2·4096·1024 + 3·4096·14336 + 2·4096) + 4096 = 7,241,732,096
    // (shared/models/README.md).
    assert_eq!(m.parameters(), 7_241_732_096);
    Ok(())
}

#[test]
fn any_finite_number_round_trips() -> R {
    // f64 bit patterns from a xorshift64 generator (Marsaglia 2003): every exponent, not only
    // the round datasheet figures of the catalog. Without serde_json's `float_roundtrip` about
    // a third of them come back an ulp off.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut checked = 0;
    while checked < 20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let v = f64::from_bits(x);
        if !v.is_finite() {
            continue;
        }
        let p = Precisions::uniform(Precision::Int4).with_weight_scale_bytes(v);
        round_trip(&Workload::decode(1, 1).with_precisions(p))?;
        checked += 1;
    }
    Ok(())
}
