//! Fusion against hand arithmetic and invariants.

use super::*;
use crate::decoder::build_graph;
use crate::fixtures::h100_sxm;
use crate::fixtures::llama2_7b;
use crate::graph::OpGraph;
use crate::precision::Precision;
use crate::units::Bytes;
use crate::workload::{Precisions, Stage, Workload};
use proptest::prelude::*;

const SMEM: Option<Bytes> = Some(Bytes(228.0 * 1024.0));

fn wl(stage: Stage, batch: u64, len: u64) -> Workload {
    Workload {
        stage,
        batch,
        seq_len: len,
        context: len,
        cached: 0,
        precisions: Precisions::uniform(Precision::Bf16),
        flash_attention: false,
        logits: crate::workload::Logits::Last,
    }
}

fn layer_kernels(p: &FusionPlan) -> Vec<String> {
    p.kernels
        .iter()
        .filter(|k| k.span.in_blocks())
        .map(|k| k.name.clone())
        .collect()
}

#[test]
fn llama_layer_kernels_per_preset() {
    let g = build_graph(&llama2_7b(), &wl(Stage::Decode, 1, 2048));
    // Eager: every operator its own kernel: 18 per block.
    assert_eq!(layer_kernels(&plan(&g, Preset::Eager, SMEM)).len(), 18);
    // Compiled: attention (3 → 1), rotary + KV write (2 → 1), SiLU + mul (2 → 1),
    // residual add + post-attention norm (2 → 1): 18 − 2 − 1 − 1 − 1 = 13.
    let c = layer_kernels(&plan(&g, Preset::Compiled, SMEM));
    assert_eq!(c.len(), 13, "{c:?}");
    assert!(c.contains(&"qk_matmul+softmax+sv_matmul".to_string()));
    assert!(c.contains(&"rotary_emb+kv_cache_write".to_string()));
    assert!(c.contains(&"act_fn+act_mul".to_string()));
    assert!(c.contains(&"attn_residual_add+post_attention_layernorm".to_string()));
    // Max: [norm + qkv + rotary + KV write], [attention], [o_proj + residual],
    // [norm + gate_up + SiLU + mul], [down_proj + residual] = 5.
    let m = layer_kernels(&plan(&g, Preset::Max, SMEM));
    assert_eq!(
        m,
        vec![
            "input_layernorm+q_proj+k_proj+v_proj+rotary_emb+kv_cache_write",
            "qk_matmul+softmax+sv_matmul",
            "o_proj+attn_residual_add",
            "post_attention_layernorm+gate_proj+up_proj+act_fn+act_mul",
            "down_proj+mlp_residual_add",
        ]
    );
}

#[test]
fn seed_chain_bytes_by_hand() -> Result<(), Box<dyn std::error::Error>> {
    // RMSNorm → Linear(d→f) → SiLU → Linear(f→d), T tokens, b bytes per element:
    // separate kernels move b·(4Td + 4Tf + 2df + d), the fused kernel b·(2Td + 2df + d).
    let (t, d, f, b) = (16u64, 4096u64, 11008u64, 2.0);
    let spec = ChainSpec {
        ops: ["rmsnorm", "linear", "silu", "linear"]
            .map(String::from)
            .to_vec(),
        tokens: t,
        hidden: d,
        intermediate: f,
        precision: Precision::Bf16,
    };
    let (g, _, widest) = chain_graph(&spec)?;
    assert_eq!(widest, f);
    let (tf, df, ff) = (t as f64, d as f64, f as f64);
    let separate: f64 = plan(&g, Preset::Eager, SMEM)
        .kernels
        .iter()
        .map(|k| k.cost.bytes().get())
        .sum();
    assert_eq!(
        separate,
        b * (4.0 * tf * df + 4.0 * tf * ff + 2.0 * df * ff + df)
    );
    // Fused (priced even where it does not fit, to print the saving): no SMEM limit.
    let (fused, tile) = plan_chain(&g, widest, Precision::Bf16, None);
    assert_eq!(fused.kernels.len(), 1);
    assert!(tile.fits);
    assert_eq!(
        fused.kernels[0].cost.bytes().get(),
        b * (2.0 * tf * df + 2.0 * df * ff + df)
    );
    // On the H100 the 11008-wide intermediate does not fit a 16-token tile.
    let (h100, tile) = plan_chain(&g, widest, Precision::Bf16, SMEM);
    assert!(!tile.fits);
    assert_eq!(h100.kernels.len(), 4);
    assert_eq!(h100.rejected.len(), 1);
    Ok(())
}

#[test]
fn flash_kernel_reads_kv_once_per_query_block() -> Result<(), Box<dyn std::error::Error>> {
    // Prefill 2048, H100: Br = 128 → 16 query blocks; causal: block j streams 128·(j+1) keys,
    // Σ = 128·(1+…+16) = 17,408 key rows per head for K and for V.
    let g = build_graph(&llama2_7b(), &wl(Stage::Prefill, 1, 2048));
    let p = plan(&g, Preset::Compiled, SMEM);
    let k = p
        .kernels
        .iter()
        .find(|k| k.name == "qk_matmul+softmax+sv_matmul")
        .ok_or("expected a value, got None")?;
    let q_bytes = 2048.0 * 32.0 * 128.0 * 2.0;
    assert_eq!(
        k.cost.bytes_read.get(),
        q_bytes + 2.0 * 32.0 * 17_408.0 * 128.0 * 2.0
    );
    assert_eq!(k.cost.bytes_written.get(), q_bytes);
    Ok(())
}

#[test]
fn summary_counts_launches() -> Result<(), Box<dyn std::error::Error>> {
    let d = h100_sxm();
    let g = build_graph(&llama2_7b(), &wl(Stage::Decode, 1, 2048));
    let launch = d.launch_overhead.value;
    let e = evaluate_plan(
        &plan(&g, Preset::Eager, SMEM),
        32,
        Precision::Bf16,
        &d,
        launch,
    )?;
    let m = evaluate_plan(
        &plan(&g, Preset::Max, SMEM),
        32,
        Precision::Bf16,
        &d,
        launch,
    )?;
    assert_eq!(e.kernels, 18 * 32 + 3);
    assert_eq!(m.kernels, 5 * 32 + 3);
    assert_eq!(m.launch_overhead.get(), (5.0 * 32.0 + 3.0) * 5e-6);
    // The unfused plan's launch overhead is the analysis's, exactly: 579 × 5 µs.
    assert_eq!(e.launch_overhead.get(), 579.0 * 5e-6);
    let a = crate::analysis::analyze(
        &llama2_7b(),
        &wl(Stage::Decode, 1, 2048),
        &d,
        crate::memory::Reserve::DEFAULT,
    )?;
    assert_eq!(a.totals.launch_overhead, e.launch_overhead);
    Ok(())
}

fn sinks(g: &OpGraph) -> Vec<usize> {
    (0..g.tensors().len())
        .filter(|&t| g.producer(t).is_some() && g.consumers(t).next().is_none())
        .collect()
}

proptest! {
    #[test]
    fn fusion_never_adds_bytes_or_kernels_and_keeps_flops(
        batch in 1u64..16, len in 1u64..3000, decode: bool, kv in 1u64..5, preset in 0usize..3,
    ) {
        let stage = if decode { Stage::Decode } else { Stage::Prefill };
        let mut m = llama2_7b();
        m.kv_heads = [32, 16, 8, 4, 1][kv as usize];
        let g = build_graph(&m, &wl(stage, batch, len));
        let preset = [Preset::Eager, Preset::Compiled, Preset::Max][preset];
        let eager = plan(&g, Preset::Eager, SMEM);
        let fused = plan(&g, preset, SMEM);
        let sum = |p: &FusionPlan| p.kernels.iter().map(|k| k.cost).sum::<crate::ops::Cost>();
        let (a, b) = (sum(&eager), sum(&fused));
        prop_assert!(b.bytes().get() <= a.bytes().get() * (1.0 + 1e-12));
        prop_assert!(b.bytes_read.get() >= 0.0 && b.bytes_written.get() >= 0.0);
        prop_assert!(fused.kernels.len() <= eager.kernels.len());
        // FLOPs unchanged, except that flash attention skips the masked half of causal
        // attention: unfused computes B·h·s·L scores, fused only the causal pairs.
        let masked = if preset == Preset::Eager { 0.0 } else {
            let s = if decode { 1.0 } else { len as f64 };
            let l = if decode { len as f64 + 1.0 } else { len as f64 };
            let pairs = crate::ops::causal_pairs(s as u64, l as u64);
            batch as f64 * 32.0 * (s * l - pairs) * (4.0 * 128.0 + 7.0)
        };
        prop_assert!((a.flops.get() - masked - b.flops.get()).abs() <= a.flops.get() * 1e-12);
        // Every node in exactly one kernel; the same sink tensors (outputs) are written.
        let mut seen: Vec<usize> = fused.kernels.iter().flat_map(|k| k.nodes.clone()).collect();
        seen.sort_unstable();
        prop_assert_eq!(seen, (0..g.nodes().len()).collect::<Vec<_>>());
        for t in sinks(&g) {
            let Some((p, _)) = g.producer(t) else {
                prop_assert!(false, "sink tensor {} has no producer", t);
                continue;
            };
            prop_assert!(fused.kernels.iter().any(|k| k.nodes.contains(&p)));
        }
    }
}

#[test]
fn chain_sizes_past_their_bounds_are_refused_not_overflowed() {
    // 2^63 wide: tokens × width would wrap u64.
    let spec = |tokens, hidden, intermediate| ChainSpec {
        ops: ["rmsnorm", "linear"].map(String::from).to_vec(),
        tokens,
        hidden,
        intermediate,
        precision: Precision::Bf16,
    };
    let e = chain_graph(&spec(2048, 1 << 63, 11008)).expect_err("too wide");
    assert!(
        e.0.contains("--hidden") && e.0.contains("16777216"),
        "{}",
        e.0
    );
    let e = chain_graph(&spec(2048, 7, u64::MAX)).expect_err("too wide");
    assert!(e.0.contains("--intermediate"), "{}", e.0);
    let e = chain_graph(&spec(1 << 27, 4096, 11008)).expect_err("too long");
    assert!(e.0.contains("--tokens"), "{}", e.0);
    // At the bounds, built: 2^26 tokens × 2^24 wide = 2^50 elements.
    assert!(chain_graph(&spec(1 << 26, 1 << 24, 1 << 24)).is_ok());
}
