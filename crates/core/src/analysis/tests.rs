//! The one evaluator against every other path to the same numbers, and against hand arithmetic.

use super::roofs::precision_index;
use super::*;
use crate::decoder::build_graph;
use crate::device::tests::h100_sxm;
use crate::model::tests::llama2_7b;
use crate::model::{Activation, MlpKind, NormKind};
use crate::precision::Precision;
use crate::workload::{Precisions, Stage};

/// Llama-2-7B, a GQA variant, a GPT-style model (LayerNorm, plain GELU MLP, biases, tied
/// embeddings) and a DeepSeek-V3-style one (MLA with a query latent, dense first blocks,
/// routed and shared experts, QK norm, a sliding window): every branch of the decoder.
pub(crate) fn models() -> Vec<Transformer> {
    let gqa = Transformer {
        kv_heads: 8,
        intermediate: 14336,
        vocab: 128256,
        ..llama2_7b()
    };
    let gpt = Transformer {
        hidden: 768,
        layers: 12,
        heads: 12,
        kv_heads: 12,
        head_dim: 64,
        intermediate: 3072,
        vocab: 50257,
        tie_embeddings: true,
        qkv_bias: true,
        o_bias: true,
        mlp_bias: true,
        norm: NormKind::LayerNorm,
        mlp: MlpKind::Plain,
        activation: Activation::Gelu,
        ..llama2_7b()
    };
    let moe = Transformer {
        kv_heads: 8,
        variant: crate::model::Variant {
            moe: Some(crate::model::Moe {
                experts: 8,
                top_k: 2,
                expert_intermediate: 1408,
                shared_experts: 2,
                dense_layers: 1,
                router_bias: true,
            }),
            mla: Some(crate::model::Mla {
                q_lora_rank: Some(1536),
                kv_lora_rank: 512,
                qk_nope_head_dim: 128,
                qk_rope_head_dim: 64,
                v_head_dim: 128,
            }),
            qk_norm: true,
            sliding_window: Some(1024),
            ..crate::model::Variant::default()
        },
        ..llama2_7b()
    };
    vec![llama2_7b(), gqa, gpt, moe]
}

pub(crate) fn workloads() -> Vec<Workload> {
    let mut out = Vec::new();
    for stage in [Stage::Prefill, Stage::Decode] {
        for batch in [1, 3, 64] {
            for len in [1, 17, 2048] {
                for flash in [false, true] {
                    for (w, a, c) in [
                        (Precision::Bf16, Precision::Bf16, Precision::Bf16),
                        (Precision::Int4, Precision::Fp16, Precision::Fp8),
                    ] {
                        out.push(Workload {
                            stage,
                            batch,
                            seq_len: len,
                            context: len,
                            cached: 0,
                            precisions: Precisions {
                                weight: w,
                                act: a,
                                kv: c,
                                weight_scale_bytes: 0.0,
                                gemm_act: None,
                            },
                            flash_attention: flash,
                            logits: crate::workload::Logits::Last,
                        });
                    }
                }
            }
        }
    }
    out
}

#[test]
fn analyze_equals_the_graph_path_exactly() -> Result<(), Box<dyn std::error::Error>> {
    let device = h100_sxm();
    let r = Reserve::DEFAULT;
    // One analysis reused for every model and workload, as a sweep would.
    let mut reused = StageAnalysis::empty(workloads()[0]);
    for m in models() {
        for w in workloads() {
            let a = analyze(&m, &w, &device, r)?;
            analyze_into(&m, &w, &device, r, &mut reused)?;
            assert_eq!(reused, a, "{} {w:?}", m.name);
            // Built by hand and evaluated: the same graph, rows, totals and memory.
            let mut by_hand = StageAnalysis::empty(w);
            by_hand.graph = build_graph(&m, &w);
            assert_eq!(by_hand.graph, a.graph);
            evaluate(&m, &w, &device, r, &mut by_hand)?;
            assert_eq!(by_hand, a, "{} {w:?}", m.name);
            // The totals-only view agrees bit for bit, and one row per node.
            assert_eq!(evaluate_totals(&a.graph, &w, &device)?, a.totals);
            assert_eq!(a.rows.len(), a.graph.nodes().len());
            for (n, row) in a.graph.nodes().iter().zip(&a.rows) {
                assert_eq!(
                    (n.name, n.role, n.span(), n.cost(), n.compute()),
                    (row.name, row.role, row.span, row.cost, row.compute)
                );
            }
        }
    }
    Ok(())
}

#[test]
fn a_row_serialises_with_its_point_computed_by_hand() -> Result<(), Box<dyn std::error::Error>> {
    // q_proj of Llama-2-7B decoding one token on the H100 SXM, bf16: a 1×4096 by 4096×4096
    // GEMV. FLOPs 2·4096² = 33,554,432; bytes read 2·4096 + 2·4096² = 33,562,624, written
    // 2·4096 = 8,192; time = 33,570,816 B / 3.35e12 B/s = 10.0211391 µs, memory-bound at
    // 33,554,432 / 33,570,816 = 0.99951 FLOP/B against a ridge of 989.5e12 / 3.35e12 = 295.37.
    let w = Workload {
        stage: Stage::Decode,
        batch: 1,
        seq_len: 1,
        cached: 0,
        context: 1,
        precisions: Precisions::uniform(Precision::Bf16),
        flash_attention: false,
        logits: crate::workload::Logits::Last,
    };
    let a = analyze(&llama2_7b(), &w, &h100_sxm(), Reserve::DEFAULT)?;
    let row = a
        .rows
        .iter()
        .find(|r| r.name == "q_proj")
        .ok_or("no q_proj")?;
    assert_eq!((row.kind, row.count), (OpKind::Gemm, 32));
    let j = serde_json::to_value(row)?;
    let num = |path: &str| j.pointer(path).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
    assert_eq!(j["kind"], "gemm");
    assert_eq!(j["role"], "q_proj");
    assert_eq!(
        j["span"],
        serde_json::json!({"kind": "blocks", "first": 0, "last": 31})
    );
    assert_eq!(num("/cost/flops"), 33_554_432.0);
    assert_eq!(num("/cost/bytes_read"), 33_562_624.0);
    assert_eq!(num("/cost/bytes_written"), 8_192.0);
    assert_eq!(num("/peak"), 989.5e12);
    assert_eq!(num("/bandwidth"), 3.35e12);
    assert_eq!(j["point"]["bound"], "memory");
    assert!((num("/point/time") - 10.021_139_1e-6).abs() < 1e-13);
    assert!((num("/point/intensity") - 0.999_51).abs() < 1e-5);
    assert!((num("/point/ridge") - 295.373_1).abs() < 1e-4);
    assert_eq!(num("/launch_overhead"), 5e-6);
    Ok(())
}

#[test]
fn into_parts_agrees_with_kind_cost_and_compute() -> Result<(), Box<dyn std::error::Error>> {
    // Every operator type the decoder emits (MoE and MLA included, `models`): the one-match
    // summary the visitors use equals the three separate accessors the graph path uses.
    let mut kinds = std::collections::BTreeSet::new();
    // Two devices over one link, for the collectives the tensor-parallel pass adds.
    let link = crate::comm::LinkTier::new(
        "link",
        crate::cited::Cited::new(crate::units::BytesPerSec(450e9), "test"),
        crate::cited::Cited::new(Seconds(1e-6), "test"),
    );
    let fabric = crate::comm::Fabric {
        scale_up: Some(link),
        ..Default::default()
    };
    let system = crate::comm::System::new("two", "two", h100_sxm(), 2, 1, fabric)?;
    let tp2 = crate::parallel::Layout {
        tp: 2,
        ..crate::parallel::Layout::SINGLE
    };
    for m in models() {
        for w in workloads() {
            let single = build_graph(&m, &w);
            let sharded = crate::parallel::shard(&single, &m, &w, tp2, &system)?;
            let step =
                crate::train::backward::backward(&single, crate::train::backward::Recompute::Full)?;
            for node in single
                .nodes()
                .iter()
                .chain(sharded.nodes())
                .chain(step.nodes())
            {
                let (kind, cost, compute) = node.op().clone().into_parts();
                assert_eq!(kind, node.kind());
                assert_eq!(cost, node.cost());
                assert_eq!(compute, node.compute());
                kinds.insert(kind);
            }
        }
    }
    assert_eq!(kinds.len(), 13, "every Op variant was exercised: {kinds:?}");
    // `OpKind::ALL` lists exactly the kinds the operators have.
    assert_eq!(kinds.into_iter().collect::<Vec<_>>(), OpKind::ALL.to_vec());
    Ok(())
}

#[test]
fn a_missing_peak_is_the_same_error_on_every_path() -> Result<(), Box<dyn std::error::Error>> {
    let mut device = h100_sxm();
    device.peaks.retain(|(p, _)| *p != Precision::Bf16);
    let (m, w, r) = (llama2_7b(), workloads()[0], Reserve::DEFAULT);
    let g = build_graph(&m, &w);
    let expect = AnalysisError::from(evaluate_totals(&g, &w, &device).unwrap_err());
    assert_eq!(analyze(&m, &w, &device, r).unwrap_err(), expect);
    // Into an analysis that had rows: the same error, and nothing left behind.
    let mut out = analyze(&m, &w, &h100_sxm(), r)?;
    assert!(!out.rows.is_empty());
    assert_eq!(
        analyze_into(&m, &w, &device, r, &mut out).unwrap_err(),
        expect
    );
    assert_eq!(out, StageAnalysis::empty(w));
    // And on an invalid workload or reserve, before the chip is looked at.
    let mut out = analyze(&m, &w, &h100_sxm(), r)?;
    let zero = Workload { batch: 0, ..w };
    assert!(analyze_into(&m, &zero, &h100_sxm(), r, &mut out).is_err());
    assert_eq!(out, StageAnalysis::empty(zero));
    let bad = Reserve::Fraction(1.5);
    assert!(matches!(
        analyze(&m, &w, &h100_sxm(), bad),
        Err(AnalysisError::Reserve(_))
    ));
    Ok(())
}

#[test]
fn every_decoder_variant_has_its_roles_and_spans() -> Result<(), Box<dyn std::error::Error>> {
    for m in models() {
        for w in workloads() {
            let g = build_graph(&m, &w);
            // Each block's nodes add up to one execution per block per node kind: the spans of
            // the MLP kinds of a model with dense and MoE blocks partition the blocks.
            let in_blocks: u64 = g
                .nodes()
                .iter()
                .filter(|n| n.role.part() == crate::graph::Part::Mlp && n.span().in_blocks())
                .filter(|n| n.role == Role::DownProj)
                .map(|n| n.count())
                .sum();
            let moe: u64 = g
                .nodes()
                .iter()
                .filter(|n| n.role == Role::MoeCombine)
                .map(|n| n.count())
                .sum();
            assert_eq!(in_blocks + moe, m.layers, "{}", m.name);
            assert_eq!(
                g.find_role(Role::LmHead).map(|(_, n)| n.span()),
                Some(Span::Epilogue)
            );
            assert_eq!(
                g.find_role(Role::TokenEmbedding).map(|(_, n)| n.span()),
                Some(Span::Prologue)
            );
        }
    }
    Ok(())
}

#[test]
fn chip_roofs_answer_as_peak_for() -> Result<(), Box<dyn std::error::Error>> {
    for (i, p) in Precision::ALL.iter().enumerate() {
        assert_eq!(precision_index(*p), i);
    }
    // A chip with no fp32 figure (TPU-like): vector work falls back to the activation peak;
    // a precision the chip lacks is the same error either way.
    let mut tpu = h100_sxm();
    tpu.peaks.retain(|(p, _)| *p != Precision::Fp32);
    for device in [h100_sxm(), tpu] {
        for act in Precision::ALL {
            let roofs = ChipRoofs::new(&device, act)?;
            for compute in Precision::ALL
                .iter()
                .map(|&p| Compute::Matrix(p))
                .chain([Compute::Vector])
            {
                assert_eq!(roofs.peak(compute), peak_for(&device, compute, act));
            }
        }
    }
    Ok(())
}

#[test]
fn a_reused_analysis_still_refuses_an_invalid_model() -> Result<(), AnalysisError> {
    // The model check is skipped only for the blueprint already validated; any other shape,
    // such as zero key/value heads or a top-k past the experts, is checked again.
    let (device, r) = (h100_sxm(), Reserve::DEFAULT);
    let w = workloads()[0];
    let mut out = analyze(&llama2_7b(), &w, &device, r)?;
    analyze_into(&llama2_7b(), &w, &device, r, &mut out)?;
    let bad = Transformer {
        kv_heads: 0,
        ..llama2_7b()
    };
    assert!(matches!(
        analyze_into(&bad, &w, &device, r, &mut out),
        Err(AnalysisError::Model(e)) if e.field == "num_key_value_heads"
    ));
    assert_eq!(out, StageAnalysis::empty(w));
    // And after that failure, the valid model again analyses as from scratch.
    analyze_into(&llama2_7b(), &w, &device, r, &mut out)?;
    assert_eq!(out, analyze(&llama2_7b(), &w, &device, r)?);
    Ok(())
}
