//! The operator graph against hand arithmetic: where peer tools are wrong, we are not.

use crate::analysis::analyze;
use crate::decoder::{build_graph, rebuild_into};
use crate::fixtures::h100_sxm;
use crate::fixtures::llama2_7b;
use crate::graph::{OpGraph, TensorRole};
use crate::model::Transformer;
use crate::ops::Cost;
use crate::precision::Precision;
use crate::workload::{Logits, Precisions, Stage, Workload};
use proptest::prelude::*;

fn llama3_8b() -> Transformer {
    Transformer {
        name: "llama-3.1-8b".into(),
        hidden: 4096,
        heads: 32,
        kv_heads: 8,
        head_dim: 128,
        intermediate: 14336,
        vocab: 128256,
        ..llama2_7b()
    }
}

fn wl(stage: Stage, batch: u64, len: u64, flash: bool) -> Workload {
    Workload {
        stage,
        batch,
        seq_len: len,
        context: len,
        cached: 0,
        precisions: Precisions::uniform(Precision::Bf16),
        flash_attention: flash,
        logits: Logits::Last,
    }
}

fn cost(g: &OpGraph, name: &str) -> Cost {
    g.find(name)
        .unwrap_or_else(|| panic!("no node {name}"))
        .op()
        .cost()
}

const NAMES_UNFUSED: [&str; 20] = [
    "embed_tokens",
    "input_layernorm",
    "q_proj",
    "k_proj",
    "v_proj",
    "rotary_emb",
    "kv_cache_write",
    "qk_matmul",
    "softmax",
    "sv_matmul",
    "o_proj",
    "attn_residual_add",
    "post_attention_layernorm",
    "gate_proj",
    "up_proj",
    "act_fn",
    "act_mul",
    "down_proj",
    "mlp_residual_add",
    "norm",
];

#[test]
fn operators_in_forward_order() {
    let g = build_graph(&llama2_7b(), &wl(Stage::Prefill, 1, 2048, false));
    let names: Vec<&str> = g.nodes().iter().map(|n| n.name).collect();
    let mut expect = NAMES_UNFUSED.to_vec();
    expect.push("lm_head");
    assert_eq!(names, expect);
    let g = build_graph(&llama2_7b(), &wl(Stage::Prefill, 1, 2048, true));
    assert!(g.find("attention").is_some() && g.find("qk_matmul").is_none());
}

#[test]
fn kv_traffic_uses_kv_heads() -> Result<(), Box<dyn std::error::Error>> {
    // Llama-3-8B, decode batch 1, context 2048 (2049 keys), bf16: k_proj is 4096 → 8·128.
    let g = build_graph(&llama3_8b(), &wl(Stage::Decode, 1, 2048, false));
    let k = cost(&g, "k_proj");
    assert_eq!(k.flops.get(), 2.0 * 4096.0 * 1024.0);
    assert_eq!(k.bytes_read.get(), (4096.0 + 4096.0 * 1024.0) * 2.0);
    // QKᵀ reads q (32 heads × 128) and K of 8 kv heads × 2049 keys × 128.
    let qk = cost(&g, "qk_matmul");
    assert_eq!(
        qk.bytes_read.get(),
        (32.0 * 128.0 + 8.0 * 2049.0 * 128.0) * 2.0
    );
    let sv = cost(&g, "sv_matmul");
    assert_eq!(
        sv.bytes_read.get(),
        (32.0 * 2049.0 + 8.0 * 2049.0 * 128.0) * 2.0
    );
    // KV cache: 2 · 32 layers · 2049 · 8 · 128 · 2 bytes.
    let a = analyze(
        &llama3_8b(),
        &wl(Stage::Decode, 1, 2048, false),
        &h100_sxm(),
        crate::memory::Reserve::DEFAULT,
    )?;
    assert_eq!(a.memory.kv_cache.get(), 2.0 * 32.0 * 2049.0 * 1024.0 * 2.0);
    Ok(())
}

#[test]
fn activation_before_down_is_intermediate_wide() {
    // Llama-2-7B prefill 2048: act_mul over 2048 × 11008 elements, down_proj reads them.
    let g = build_graph(&llama2_7b(), &wl(Stage::Prefill, 1, 2048, false));
    let e = 2048.0 * 11008.0;
    let silu = cost(&g, "act_fn");
    assert_eq!(silu.bytes_read.get(), e * 2.0);
    assert_eq!(silu.flops.get(), e * 3.0); // SiLU: exp, add, divide
    let mul = cost(&g, "act_mul");
    assert_eq!(mul.bytes_read.get(), 2.0 * e * 2.0);
    assert_eq!(mul.bytes_written.get(), e * 2.0);
    assert_eq!(mul.flops.get(), e);
    let down = cost(&g, "down_proj");
    assert_eq!(down.bytes_read.get(), (e + 11008.0 * 4096.0) * 2.0);
}

#[test]
fn lm_head_counts_two_flop_per_multiply_add_and_every_sequence() {
    // batch 8: 2 · 8 · 32000 · 4096 FLOP, on the last position of each sequence.
    let g = build_graph(&llama2_7b(), &wl(Stage::Prefill, 8, 512, false));
    assert_eq!(
        cost(&g, "lm_head").flops.get(),
        2.0 * 8.0 * 32000.0 * 4096.0
    );
}

#[test]
fn logits_on_every_position_run_lm_head_on_every_token() -> Result<(), &'static str> {
    // Llama-2-7B, 4 prompts of 512 tokens: lm_head is 2048 × 4096 by 4096 × 32000 over every
    // position, 4 × 4096 by 4096 × 32000 on the last ones (bf16 weights and activations).
    let (t, d, v) = (4.0 * 512.0, 4096.0, 32000.0);
    let last = wl(Stage::Prefill, 4, 512, false);
    let all = last.with_logits(Logits::All);
    let g = build_graph(&llama2_7b(), &all);
    let c = cost(&g, "lm_head");
    assert_eq!(c.flops.get(), 2.0 * t * d * v);
    assert_eq!(c.bytes_read.get(), t * d * 2.0 + d * v * 2.0);
    assert_eq!(c.bytes_written.get(), t * v * 2.0);
    let logits = g
        .tensors()
        .iter()
        .find(|x| x.name == "logits")
        .ok_or("logits")?;
    assert_eq!(logits.bytes.get(), t * v * 2.0);
    // Every other node is the same as with the last position only.
    let g_last = build_graph(&llama2_7b(), &last);
    assert_eq!(cost(&g_last, "lm_head").flops.get(), 2.0 * 4.0 * d * v);
    for (a, b) in g.nodes().iter().zip(g_last.nodes()) {
        if a.name != "lm_head" {
            assert_eq!(a.cost(), b.cost(), "{}", a.name);
        }
    }
    // The same structure: rebuilt in place from one to the other, it equals a fresh build.
    let (mut re, mut built) = (OpGraph::new(0), None);
    rebuild_into(&llama2_7b(), &last, &mut re, &mut built);
    rebuild_into(&llama2_7b(), &all, &mut re, &mut built);
    assert_eq!(re, g);
    rebuild_into(&llama2_7b(), &last, &mut re, &mut built);
    assert_eq!(re, g_last);
    // Decode has one position per sequence either way.
    let dec = wl(Stage::Decode, 4, 512, false);
    assert_eq!(
        build_graph(&llama2_7b(), &dec.with_logits(Logits::All)),
        build_graph(&llama2_7b(), &dec)
    );
    Ok(())
}

#[test]
fn training_logits_per_token_are_megatrons_2_v_d() {
    // Megatron's logit term (Narayanan et al. 2021, §5.1, the V/12hL term of
    // 72·L·h²·(1 + s/6h + V/12hL)) is 2·V·d FLOP per token: lm_head over every position.
    let s = 2048;
    let g = build_graph(
        &llama2_7b(),
        &wl(Stage::Prefill, 1, s, false).with_logits(Logits::All),
    );
    let per_token = cost(&g, "lm_head").flops.get() / s as f64;
    assert_eq!(per_token, 2.0 * 32000.0 * 4096.0);
    assert_eq!(
        per_token,
        crate::mfu::megatron(32, 4096, s, 32000).head.get()
    );
}

#[test]
fn flash_attention_writes_output_not_scores() {
    let g = build_graph(&llama2_7b(), &wl(Stage::Prefill, 2, 2048, true));
    let a = cost(&g, "attention");
    assert_eq!(a.bytes_written.get(), 2.0 * 2048.0 * 32.0 * 128.0 * 2.0);
}

#[test]
fn unfused_prefill_computes_every_score_fused_causal_half() {
    let s = 2048.0;
    let g = build_graph(&llama2_7b(), &wl(Stage::Prefill, 1, 2048, false));
    // QKᵀ: 2 · 32 heads · 2048 · 2048 · 128, masked or not; scores written: 32·2048² bf16.
    let qk = cost(&g, "qk_matmul");
    assert_eq!(qk.flops.get(), 2.0 * 32.0 * s * s * 128.0);
    assert_eq!(qk.bytes_written.get(), 32.0 * s * s * 2.0);
    let g = build_graph(&llama2_7b(), &wl(Stage::Prefill, 1, 2048, true));
    let pairs = s * (s + 1.0) / 2.0;
    assert_eq!(
        cost(&g, "attention").flops.get(),
        32.0 * pairs * (4.0 * 128.0 + 7.0)
    );
}

#[test]
fn node_bytes_match_the_tensors_they_touch() {
    // Every node reads its input tensors and writes its outputs, except the two that touch part
    // of a tensor: the embedding gathers T of V rows, lm_head reads the last position only.
    for flash in [false, true] {
        for stage in [Stage::Prefill, Stage::Decode] {
            let g = build_graph(&llama3_8b(), &wl(stage, 3, 100, flash));
            for n in g.nodes() {
                if n.name == "embed_tokens" || n.name == "lm_head" {
                    continue;
                }
                let c = n.cost();
                let r: f64 = n.inputs.iter().map(|&t| g.tensors()[t].bytes.get()).sum();
                let w: f64 = n.outputs.iter().map(|&t| g.tensors()[t].bytes.get()).sum();
                assert_eq!(c.bytes_read.get(), r, "{} read", n.name);
                assert_eq!(c.bytes_written.get(), w, "{} written", n.name);
            }
        }
    }
}

#[test]
fn weights_in_graph_equal_parameter_count() {
    let m = llama2_7b();
    let g = build_graph(&m, &wl(Stage::Decode, 1, 10, false));
    let mut total = 0.0;
    for (i, t) in g.tensors().iter().enumerate() {
        if t.role == TensorRole::Weight {
            let in_block = g.consumers(i).any(|(_, n)| n.span().in_blocks());
            total += t.bytes.get() / 2.0 * if in_block { 32.0 } else { 1.0 };
        }
    }
    assert_eq!(total, m.parameters() as f64);
}

#[test]
fn totals_are_the_sum_of_rows() -> Result<(), Box<dyn std::error::Error>> {
    let a = analyze(
        &llama2_7b(),
        &wl(Stage::Prefill, 1, 2048, false),
        &h100_sxm(),
        crate::memory::Reserve::DEFAULT,
    )?;
    let flops: f64 = a
        .rows
        .iter()
        .map(|r| r.cost.flops.get() * r.count as f64)
        .sum();
    let time: f64 = a
        .rows
        .iter()
        .map(|r| r.point().time.get() * r.count as f64)
        .sum();
    assert_eq!(a.totals.cost.flops.get(), flops);
    assert!((a.totals.time.get() - time).abs() < 1e-12);
    // 18 kernels per block (unfused attention) × 32 + embedding, final norm, lm_head.
    assert_eq!(a.totals.kernels, 18 * 32 + 3);
    // The H100 fixture's 5 µs per launch: 579 kernels × 5 µs = 2.895 ms.
    assert!((a.totals.launch_overhead.get() - 579.0 * 5e-6).abs() < 1e-15);
    Ok(())
}

proptest! {
    #[test]
    fn flops_grow_with_batch(b in 1u64..64, len in 1u64..4096, flash: bool, decode: bool) {
        let stage = if decode { Stage::Decode } else { Stage::Prefill };
        let m = llama3_8b();
        let f = |b| build_graph(&m, &wl(stage, b, len, flash)).nodes().iter()
            .map(|n| n.cost().flops.get()).sum::<f64>();
        prop_assert!(f(b + 1) > f(b));
    }
}
