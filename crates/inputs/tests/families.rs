//! Every model family in shared/models against hand arithmetic: parameter counts (total and
//! active) from shared/models/README.md, KV-cache bytes per token, FLOPs and bytes of the new
//! operators (experts, MLA, fused c_attn, learned positions), sliding window and quantization.

use roofline_core::analysis::analyze;
use roofline_core::decoder::build_graph;
use roofline_core::graph::{OpGraph, Role, Span};
use roofline_core::memory::Reserve;
use roofline_core::ops::Cost;
use roofline_core::precision::Precision;
use roofline_core::workload::{Precisions, Stage, Workload};
use roofline_inputs::config::{load_model, parse_config};
use roofline_inputs::hardware::find_device;
use std::path::PathBuf;

fn shared(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(path)
        .display()
        .to_string()
}

fn decode(context: u64, batch: u64) -> Workload {
    Workload::new(Stage::Decode, batch, 1, context)
        .with_precisions(Precisions::uniform(Precision::Bf16))
}

fn cost(g: &OpGraph, name: &str) -> Cost {
    g.find(name)
        .unwrap_or_else(|| panic!("no node {name}"))
        .op()
        .cost()
}

#[test]
fn every_shared_config_parses_and_counts_match_the_readme() -> Result<(), Box<dyn std::error::Error>>
{
    // (folder, total, active) from shared/models/README.md, "computed" column.
    let table: [(&str, u64, u64); 11] = [
        ("meta-llama--Llama-2-7b-hf", 6_738_415_616, 6_738_415_616),
        ("meta-llama--Llama-2-13b-hf", 13_015_864_320, 13_015_864_320),
        (
            "meta-llama--Llama-2-70b-chat-hf",
            68_976_648_192,
            68_976_648_192,
        ),
        (
            "meta-llama--Meta-Llama-3.1-8B",
            8_030_261_248,
            8_030_261_248,
        ),
        (
            "meta-llama--Meta-Llama-3.1-70B",
            70_553_706_496,
            70_553_706_496,
        ),
        (
            "mistralai--Mixtral-8x7B-v0.1",
            46_702_792_704,
            12_879_925_248,
        ),
        ("Qwen--Qwen3-30B-A3B", 30_532_122_624, 3_353_032_704),
        ("openai-community--gpt2", 124_439_808, 124_439_808),
        ("openai-community--gpt2-xl", 1_557_611_200, 1_557_611_200),
        ("facebook--opt-6.7b", 6_658_473_984, 6_658_473_984),
        // DeepSeek-V3: the README gives the paper's 671B / 37B; the exact count is checked below.
        ("deepseek-ai--DeepSeek-V3", 671_000_000_000, 37_000_000_000),
    ];
    for (folder, total, active) in table {
        let m = load_model(&shared(&format!("models/{folder}/config.json")))?;
        let tol = if folder.contains("DeepSeek") {
            0.02
        } else {
            0.005
        };
        let rel = |a: u64, b: u64| (a as f64 - b as f64).abs() / b as f64;
        assert!(
            rel(m.parameters(), total) < tol,
            "{folder}: {}",
            m.parameters()
        );
        assert!(
            rel(m.active_parameters(), active) < tol,
            "{folder}: {}",
            m.active_parameters()
        );
    }
    Ok(())
}

#[test]
fn deepseek_v3_counts_by_hand() -> Result<(), Box<dyn std::error::Error>> {
    // d 7168, 61 layers (3 dense, 58 MoE), 128 heads, MLA: q_lora 1536, kv_lora 512, nope 128,
    // rope 64, v 128; 256 routed experts + 1 shared of 2048, top 8; dense ffn 18432; V 129280.
    let m = load_model("deepseek-v3")?;
    let d = 7168u64;
    let attn = d * 1536 + 1536 + 1536 * 128 * 192 + d * 576 + 512 + 512 * 128 * 256 + 128 * 128 * d;
    assert_eq!(attn, 187_107_328);
    let expert = 3 * d * 2048;
    let dense = attn + 3 * d * 18432 + 2 * d;
    let moe = attn + d * 256 + 256 + (256 + 1) * expert + 2 * d;
    let emb = 2 * 129280 * d + d;
    assert_eq!(m.parameters(), 3 * dense + 58 * moe + emb);
    assert_eq!(m.parameters(), 671_026_419_200);
    let moe_active = attn + d * 256 + 256 + (8 + 1) * expert + 2 * d;
    assert_eq!(m.active_parameters(), 3 * dense + 58 * moe_active + emb);
    Ok(())
}

#[test]
fn kv_cache_bytes_per_token() -> Result<(), Box<dyn std::error::Error>> {
    // Per token per layer in bf16: MLA 512 + 64 = 576 elements = 1,152 B; Mixtral GQA
    // 2·8·128·2 = 4,096 B; GPT-2 2·12·64·2 = 3,072 B; Llama-2-7B 2·32·128·2 = 16,384 B.
    for (id, per_layer) in [
        ("deepseek-v3", 1152.0),
        ("mixtral-8x7b", 4096.0),
        ("gpt2", 3072.0),
        ("llama-2-7b", 16384.0),
        ("qwen3-30b-a3b", 2.0 * 4.0 * 128.0 * 2.0),
    ] {
        let m = load_model(id)?;
        let b = m.kv_cache_bytes(1, 1, Precision::Bf16).get();
        assert_eq!(b, per_layer * m.layers as f64, "{id}");
    }
    Ok(())
}

#[test]
fn mixtral_decode_reads_only_the_chosen_experts() -> Result<(), Box<dyn std::error::Error>> {
    let m = load_model("mixtral-8x7b")?;
    // Batch 1: k = 2 experts; w1 = 2·1·2·14336·4096 FLOP and reads 2 experts' 4096×14336 bf16.
    let g = build_graph(&m, &decode(4096, 1));
    let w1 = cost(&g, "experts.w1");
    assert_eq!(w1.flops.get(), 2.0 * 2.0 * 14336.0 * 4096.0);
    let weights = 2.0 * 4096.0 * 14336.0 * 2.0;
    assert!((w1.bytes_read.get() - (2.0 * 4096.0 * 2.0 + weights)).abs() < 1e-3);
    // Batch 8: expected distinct experts 8·(1 − (6/8)^8) = 7.1991.
    let g = build_graph(&m, &decode(4096, 8));
    let u = 8.0 * (1.0 - 0.75f64.powi(8));
    let w1 = cost(&g, "experts.w1");
    let expect = 8.0 * 2.0 * 4096.0 * 2.0 + u * 4096.0 * 14336.0 * 2.0;
    assert!((w1.bytes_read.get() - expect).abs() < 1.0);
    // The router runs in every one of the 32 blocks, and is a router by role, not by name.
    let gate = g.find("gate").ok_or("expected a value, got None")?;
    assert_eq!(
        (gate.role, gate.span()),
        (Role::Router, Span::Blocks { first: 0, last: 31 })
    );
    assert_eq!(
        g.find_role(Role::ExpertGateProj).map(|(_, n)| n.name),
        Some("experts.w1")
    );
    Ok(())
}

#[test]
fn deepseek_dense_and_moe_blocks_are_counted_apart() -> Result<(), Box<dyn std::error::Error>> {
    let m = load_model("deepseek-v3")?;
    let g = build_graph(&m, &decode(4096, 1));
    // 61 blocks: first_k_dense_replace = 3 dense (blocks 0–2), the other 58 MoE (3–60).
    let span = |name: &str| g.find(name).map(|n| n.span());
    assert_eq!(span("gate_proj"), Some(Span::Blocks { first: 0, last: 2 }));
    assert_eq!(
        span("experts.gate_proj"),
        Some(Span::Blocks { first: 3, last: 60 })
    );
    assert_eq!(
        span("shared_experts.gate_proj"),
        Some(Span::Blocks { first: 3, last: 60 })
    );
    assert_eq!(span("o_proj"), Some(Span::Blocks { first: 0, last: 60 }));
    // Absorbed decode reads the 576-wide latent cache once for all 128 heads:
    // qk_matmul reads q (128·576) and 4097·576 cached elements in bf16.
    let qk = cost(&g, "qk_matmul");
    assert_eq!(qk.bytes_read.get(), (128.0 * 576.0 + 4097.0 * 576.0) * 2.0);
    assert_eq!(qk.flops.get(), 2.0 * 128.0 * 4097.0 * 576.0);
    // KV cache: 61 layers · 4097 tokens · 1,152 B.
    let a = analyze(
        &m,
        &decode(4096, 1),
        &find_device("h100-sxm")?,
        Reserve::DEFAULT,
    )?;
    assert_eq!(a.memory.kv_cache.get(), 61.0 * 4097.0 * 1152.0);
    Ok(())
}

#[test]
fn deepseek_prefill_expands_the_latent() -> Result<(), Box<dyn std::error::Error>> {
    let m = load_model("deepseek-v3")?;
    let w = Workload::new(Stage::Prefill, 1, 1024, 0);
    let g = build_graph(&m, &w);
    // kv_b_proj: 1024 tokens × 512 → 128·(128 + 128): 2·1024·512·32768 FLOP.
    assert_eq!(
        cost(&g, "kv_b_proj").flops.get(),
        2.0 * 1024.0 * 512.0 * 32768.0
    );
    // Scores with 192-wide q/k heads: 2·128·1024·1024·192.
    assert_eq!(
        cost(&g, "qk_matmul").flops.get(),
        2.0 * 128.0 * 1024.0 * 1024.0 * 192.0
    );
    Ok(())
}

#[test]
fn gpt2_fused_c_attn_learned_positions_tied_head() -> Result<(), Box<dyn std::error::Error>> {
    let m = load_model("gpt2")?;
    let w = Workload::new(Stage::Prefill, 1, 1024, 0);
    let g = build_graph(&m, &w);
    // c_attn: 1024 × 768 → 3·768 with bias: 2·1024·768·2304 + 1024·2304 FLOP.
    assert_eq!(
        cost(&g, "c_attn").flops.get(),
        2.0 * 1024.0 * 768.0 * 2304.0 + 1024.0 * 2304.0
    );
    assert!(g.find("wpe").is_some() && g.find("rotary_emb").is_none());
    assert!(g.find("mlp.c_fc").is_some() && g.find("gate_proj").is_none());
    // Forward FLOPs per token ≈ 2·N (Kaplan) plus attention and the lm_head on one position.
    let flops: f64 = g
        .nodes()
        .iter()
        .map(|n| n.cost().flops.get() * n.count() as f64)
        .sum();
    let non_emb = m.non_embedding_parameters() as f64;
    assert!(flops / 1024.0 > 2.0 * non_emb, "{}", flops / 1024.0);
    Ok(())
}

#[test]
fn opt_names_and_relu() -> Result<(), Box<dyn std::error::Error>> {
    let m = load_model("opt-6.7b")?;
    let g = build_graph(&m, &decode(100, 1));
    for n in ["q_proj", "out_proj", "fc1", "fc2", "embed_positions"] {
        assert!(g.find(n).is_some(), "{n}");
    }
    // fc1 4096 → 16384 with bias: 2·4096·16384 + 16384 FLOP at batch 1.
    assert_eq!(
        cost(&g, "fc1").flops.get(),
        2.0 * 4096.0 * 16384.0 + 16384.0
    );
    Ok(())
}

#[test]
fn sliding_window_caps_the_cache_and_the_keys() -> Result<(), Box<dyn std::error::Error>> {
    // Mistral-7B's key fields (shared/models/README.md table) with sliding_window 4096.
    let cfg = r#"{"architectures":["MistralForCausalLM"],"hidden_size":4096,"num_hidden_layers":32,
        "num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,
        "vocab_size":32000,"sliding_window":4096}"#;
    let m = parse_config(cfg, "mistral", "mistral")?;
    assert_eq!(m.parameters(), 7_241_732_096);
    let g = build_graph(&m, &decode(16384, 1));
    // Decode at context 16,384 attends only the 4,096 cached keys: K read 8·4096·128·2 B.
    let qk = cost(&g, "qk_matmul");
    assert_eq!(
        qk.bytes_read.get(),
        (32.0 * 128.0 + 8.0 * 4096.0 * 128.0) * 2.0
    );
    assert_eq!(
        m.kv_cache_bytes(1, 16385, Precision::Bf16).get(),
        32.0 * 4096.0 * 2.0 * 8.0 * 128.0 * 2.0
    );
    // Fused prefill of 8,192 tokens: Σ min(p + 1, 4096) = 4096·4097/2 + 4096·4096 pairs.
    let w = Workload::new(Stage::Prefill, 1, 8192, 0).flash_attention(true);
    let g = build_graph(&m, &w);
    let pairs = 4096.0 * 4097.0 / 2.0 + 4096.0 * 4096.0;
    assert_eq!(
        cost(&g, "attention").flops.get(),
        32.0 * pairs * (4.0 * 128.0 + 7.0)
    );
    Ok(())
}

#[test]
fn weight_only_and_w8a8_quantization() -> Result<(), Box<dyn std::error::Error>> {
    let m = load_model("llama-2-7b")?;
    let h100 = find_device("h100-sxm")?;
    // int4 weights, an fp16 scale and fp16 zero point per 128 weights: 0.5 + 4/128 B per weight.
    let mut w = decode(2048, 1);
    w.precisions.weight = Precision::Int4;
    w.precisions.weight_scale_bytes = (2.0 + 2.0) / 128.0;
    let a = analyze(&m, &w, &h100, Reserve::DEFAULT)?;
    let q = a.rows.iter().find(|r| r.name == "q_proj").unwrap();
    assert_eq!(
        q.cost.bytes_read.get(),
        4096.0 * 2.0 + 4096.0 * 4096.0 * (0.5 + 4.0 / 128.0)
    );
    // Weight-only: the GEMM still computes in bf16, so the bf16 peak applies.
    assert_eq!(q.peak().get(), 989.5e12);
    // W8A8: int8 weights and GEMM inputs, the int8 peak (1,979 TOP/s dense on the H100).
    let mut w = decode(2048, 1);
    w.precisions.weight = Precision::Int8;
    w.precisions.gemm_act = Some(Precision::Int8);
    let a = analyze(&m, &w, &h100, Reserve::DEFAULT)?;
    let q = a.rows.iter().find(|r| r.name == "q_proj").unwrap();
    assert_eq!(q.peak().get(), 1979e12);
    assert_eq!(q.cost.bytes_read.get(), 4096.0 + 4096.0 * 4096.0);
    // An fp8 KV cache halves the cache: 2·32·2049·4096·1 B.
    let mut w = decode(2048, 1);
    w.precisions.kv = Precision::Fp8;
    let a = analyze(&m, &w, &h100, Reserve::DEFAULT)?;
    assert_eq!(a.memory.kv_cache.get(), 2.0 * 32.0 * 2049.0 * 4096.0);
    Ok(())
}

#[test]
fn missing_and_unknown_fields_are_named() -> Result<(), Box<dyn std::error::Error>> {
    let e = parse_config(
        r#"{"architectures":["DeepseekV3ForCausalLM"],"hidden_size":7168,"num_hidden_layers":61,
        "num_attention_heads":128,"intermediate_size":18432,"vocab_size":129280}"#,
        "ds.json",
        "ds",
    )
    .unwrap_err();
    assert!(
        e.message.contains("`kv_lora_rank` is missing"),
        "{}",
        e.message
    );
    let e = parse_config(
        r#"{"architectures":["MixtralForCausalLM"],"hidden_size":4096,"num_hidden_layers":32,
        "num_attention_heads":32,"intermediate_size":14336,"vocab_size":32000,
        "num_local_experts":8,"num_experts_per_tok":9}"#,
        "mx.json",
        "mx",
    )
    .unwrap_err();
    assert!(e.message.contains("`num_experts_per_tok`"), "{}", e.message);
    let e = parse_config(r#"{"architectures":["FalconForCausalLM"]}"#, "f.json", "f").unwrap_err();
    assert!(
        e.message.contains("`architectures`")
            && e.hint
                .ok_or("expected a value, got None")?
                .contains("OPTForCausalLM")
    );
    Ok(())
}

#[test]
fn every_preset_fits_the_allocation_free_node_list() -> Result<(), Box<dyn std::error::Error>> {
    // DeepSeek-V3 in prefill, by hand: embed_tokens; per block input_layernorm, q_a_proj,
    // q_a_layernorm, q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, rotary_emb,
    // kv_cache_write, qk_matmul, softmax, sv_matmul, o_proj, attn_residual_add,
    // post_attention_layernorm (15); the dense MLP of the first 3 blocks (gate, up, act, mul,
    // down: 5); the MoE MLP of the other 58 (gate, router_topk, 5 routed-expert and 5
    // shared-expert operators, moe_combine: 13); mlp_residual_add; then norm and lm_head:
    // 1 + 15 + 5 + 13 + 1 + 2 = 37. Decode absorbs kv_b_proj into q_absorb and o_absorb: 38.
    // A node list of 32 once cut the last ones from sweeps, MFU and MBU without a word.
    let mut deepseek = Vec::new();
    for id in roofline_inputs::config::preset_ids() {
        let m = load_model(id)?;
        for stage in [Stage::Prefill, Stage::Decode] {
            for flash in [false, true] {
                let seq_len = if stage == Stage::Prefill { 2048 } else { 1 };
                let w = Workload::new(stage, 1, seq_len, 2048).flash_attention(flash);
                let g = build_graph(&m, &w);
                let last = g.nodes().last().map(|n| (n.role, n.span()));
                assert_eq!(last, Some((Role::LmHead, Span::Epilogue)), "{id}");
                if id == "deepseek-v3" && !flash {
                    deepseek.push(g.nodes().len());
                }
            }
        }
    }
    assert_eq!(deepseek, [37, 38]);
    Ok(())
}

#[test]
fn every_preset_rebuilt_in_place_equals_a_fresh_build() -> Result<(), Box<dyn std::error::Error>> {
    // One graph reused over batches, lengths, precisions, stages and attention forms, as a
    // sweep or `analyze_into` reuses it: each rebuild equals the graph built from nothing, and
    // so does its peak of live activations.
    let int4 = Precisions::new(Precision::Int4, Precision::Fp16, Precision::Fp8)
        .with_weight_scale_bytes(0.0625);
    let mut workloads = Vec::new();
    for stage in [Stage::Prefill, Stage::Decode] {
        for (batch, len) in [(1, 128), (8, 4096), (3, 17)] {
            for flash in [false, true] {
                let seq = if stage == Stage::Prefill { len } else { 1 };
                let w = Workload::new(stage, batch, seq, len).flash_attention(flash);
                workloads.push(w.with_precisions(Precisions::uniform(Precision::Bf16)));
                workloads.push(w.with_precisions(int4));
            }
        }
    }
    for id in roofline_inputs::config::preset_ids() {
        let m = load_model(id)?;
        let (mut g, mut built) = (OpGraph::new(0), None);
        for w in &workloads {
            roofline_core::decoder::rebuild_into(&m, w, &mut g, &mut built);
            let fresh = build_graph(&m, w);
            assert_eq!(g, fresh, "{id} {w:?}");
            assert_eq!(
                built.as_ref().map(|b| b.peak_live_activations(&g)),
                Some(fresh.peak_live_activations()),
                "{id} {w:?}"
            );
        }
    }
    Ok(())
}
