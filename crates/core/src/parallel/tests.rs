//! The parallel passes checked by hand: Llama-3.1-70B (its config.json: d = 8192, 80 blocks,
//! 64 heads, 8 KV heads, f = 28672, V = 128256) on 8 H100 SXM joined by NVLink 4.

use super::*;
use crate::cited::Cited;
use crate::comm::{Fabric, LinkTier, System};
use crate::graph::Role;
use crate::memory::Reserve;
use crate::model::Transformer;
use crate::units::{BytesPerSec, Seconds};
use crate::workload::{Stage, Workload};

pub(super) fn llama31_70b() -> Transformer {
    Transformer::builder(8192, 80, 64, 28672, 128256)
        .kv_heads(8)
        .build()
        .expect("a valid model")
}

/// 8 H100 SXM: NVLink 4 at 900 GB/s bidirectional = 450e9 B/s each way, 1 µs per step (a
/// test figure), and 50e9 B/s per GPU between nodes.
pub(crate) fn dgx(nodes: u64) -> System {
    let link = |name: &str, bw: f64| {
        LinkTier::new(
            name,
            Cited::new(BytesPerSec(bw), "test"),
            Cited::new(Seconds(1e-6), "test"),
        )
    };
    let fabric = Fabric {
        scale_up: Some(link("NVLink 4", 450e9)),
        in_network_reduction: false,
        scale_out: Some(link("NDR", 50e9)),
        ..Fabric::default()
    };
    System::new("dgx", "DGX", crate::fixtures::h100_sxm(), 8, nodes, fabric).expect("system")
}

fn tp(t: u32) -> Layout {
    Layout {
        tp: t,
        ..Layout::SINGLE
    }
}

#[test]
fn tp8_decode_has_two_all_reduces_a_block_of_b_s_d_2_bytes(
) -> Result<(), Box<dyn std::error::Error>> {
    let m = llama31_70b();
    let w = Workload::new(Stage::Decode, 32, 1, 4096);
    let a = analyze_parallel(&m, &w, &dgx(1), tp(8), Reserve::DEFAULT)?;
    let reduces: Vec<_> = a
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.role == Role::TpAllReduce && r.span.in_blocks())
        .collect();
    assert_eq!(reduces.len(), 2);
    // B·s·d·2 bytes = 32 · 1 · 8192 · 2 = 524,288 B each, in every one of the 80 blocks; a
    // ring all-reduce over 8 ranks sends 2·7/8 of it. At this size NCCL's LL protocol is the
    // fastest (6.6 µs + 14 steps of 1 µs × 0.6/3.4, and half the link: 13.2 µs, against
    // Simple's 8.4 + 14 · 1 + 2.04 = 24.4 µs).
    for &(i, r) in &reduces {
        assert_eq!(r.count, 80);
        let c = a.communication(i).ok_or("a collective")?;
        assert_eq!(c.traffic.get(), 524_288.0 * 2.0 * 7.0 / 8.0);
        assert_eq!(c.protocol, crate::comm::collective::Protocol::Ll);
        assert_eq!(c.transfer.get(), 524_288.0 * 1.75 / (450e9 * 0.5));
        assert_eq!(r.link().ok_or("a link row")?.transfer, c.transfer);
    }
    // Every all-reduce is read by the residual add right after it: all of it is exposed.
    let s = a.schedule;
    assert!((s.exposed.get() - s.communication.get()).abs() <= 1e-12 * s.step.get());
    assert!((s.step.get() - (s.compute.get() + s.communication.get())).abs() <= 1e-9);
    Ok(())
}

#[test]
fn tp8_weights_are_an_eighth_plus_the_replicated_norms() -> Result<(), Box<dyn std::error::Error>> {
    let m = llama31_70b();
    let w = Workload::new(Stage::Decode, 1, 1, 1024);
    let one = analyze_parallel(&m, &w, &dgx(1), tp(1), Reserve::DEFAULT)?;
    let eight = analyze_parallel(&m, &w, &dgx(1), tp(8), Reserve::DEFAULT)?;
    // bf16: every parameter 2 bytes. The norms (2 per block + the final one, d each) stay
    // whole on every rank; every linear and both embedding tables split 8 ways (64 heads,
    // 8 KV heads, f = 28672 and V = 128256 all divide by 8).
    let total = m.parameters() as f64 * 2.0;
    let norms = (2.0 * 80.0 + 1.0) * 8192.0 * 2.0;
    assert_eq!(one.memory.weights.get(), total);
    assert_eq!(eight.memory.weights.get(), (total - norms) / 8.0 + norms);
    // KV heads 8 / TP 8 = 1 per rank: the cache is an eighth.
    assert_eq!(eight.memory.kv_cache.get(), one.memory.kv_cache.get() / 8.0);
    Ok(())
}

#[test]
fn sharding_keeps_the_flops_and_more_devices_never_hold_more_weight(
) -> Result<(), Box<dyn std::error::Error>> {
    let m = llama31_70b();
    for w in [
        Workload::new(Stage::Prefill, 2, 1024, 1024),
        Workload::new(Stage::Decode, 16, 1, 2048),
    ] {
        let one = analyze_parallel(&m, &w, &dgx(1), tp(1), Reserve::DEFAULT)?;
        let mut last = f64::INFINITY;
        for t in [1, 2, 4, 8] {
            let a = analyze_parallel(&m, &w, &dgx(1), tp(t), Reserve::DEFAULT)?;
            // Split work × t is the whole; replicated work (norms, residual adds, the
            // embedding lookup) runs on every rank.
            let (mut split, mut replicated) = (0.0, 0.0);
            for r in &a.rows {
                let f = r.cost.flops.get() * r.count as f64;
                if matches!(
                    r.role,
                    Role::AttentionNorm
                        | Role::MlpNorm
                        | Role::FinalNorm
                        | Role::AttentionResidual
                        | Role::MlpResidual
                        | Role::TokenEmbedding
                ) {
                    replicated += f;
                } else {
                    split += f;
                }
            }
            let total = one.totals.cost.flops.get();
            let rel = (split * f64::from(t) + replicated - total).abs() / total;
            assert!(rel < 1e-12, "tp {t}: {rel}");
            assert!(a.memory.weights.get() <= last);
            last = a.memory.weights.get();
        }
    }
    Ok(())
}

#[test]
fn sequence_parallelism_trades_each_all_reduce_for_a_reduce_scatter_and_an_all_gather(
) -> Result<(), Box<dyn std::error::Error>> {
    let m = llama31_70b();
    let w = Workload::new(Stage::Prefill, 1, 4096, 4096);
    let sp = Layout {
        sequence_parallel: true,
        ..tp(8)
    };
    let a = analyze_parallel(&m, &w, &dgx(1), sp, Reserve::DEFAULT)?;
    let count = |role| {
        a.rows
            .iter()
            .filter(|r| r.role == role && r.span.in_blocks())
            .count()
    };
    assert_eq!(count(Role::TpAllReduce), 0);
    assert_eq!(count(Role::TpReduceScatter), 2);
    assert_eq!(count(Role::TpAllGather), 2);
    // Reduce-scatter and all-gather each send (n−1)/n of S = T·d·2 = 4096·8192·2 bytes: together
    // what one all-reduce sends.
    for (i, _) in a.rows.iter().enumerate().filter(|(_, r)| {
        matches!(r.role, Role::TpReduceScatter | Role::TpAllGather) && r.span.in_blocks()
    }) {
        let c = a.communication(i).ok_or("a collective")?;
        assert_eq!(c.traffic.get(), 4096.0 * 8192.0 * 2.0 * 7.0 / 8.0);
    }
    // The norms run on T/8 = 512 tokens.
    let norm = a
        .rows
        .iter()
        .find(|r| r.role == Role::AttentionNorm)
        .ok_or("a norm")?;
    let whole = analyze_parallel(&m, &w, &dgx(1), Layout::SINGLE, Reserve::DEFAULT)?;
    let norm1 = whole
        .rows
        .iter()
        .find(|r| r.role == Role::AttentionNorm)
        .ok_or("a norm")?;
    assert_eq!(norm.cost.flops.get() * 8.0, norm1.cost.flops.get());
    Ok(())
}

#[test]
fn a_pipeline_sends_activations_across_each_boundary_and_holds_its_blocks(
) -> Result<(), Box<dyn std::error::Error>> {
    let m = llama31_70b();
    let w = Workload::new(Stage::Decode, 8, 1, 1024);
    let pp = Layout { pp: 4, ..tp(2) };
    let a = analyze_parallel(&m, &w, &dgx(1), pp, Reserve::DEFAULT)?;
    let (i, send) = a
        .rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.role == Role::PpSendRecv)
        .ok_or("a send")?;
    // 3 boundaries, each T·d·2 = 8 · 8192 · 2 = 131,072 B inside the node.
    assert_eq!(send.count, 3);
    assert_eq!(a.communication(i).ok_or("link")?.traffic.get(), 131_072.0);
    // The sends lie between stages and the all-reduces feed the residual adds: none of the
    // communication hides behind compute.
    let s = a.schedule;
    assert!((s.exposed.get() - s.communication.get()).abs() <= 1e-12 * s.step.get());
    // Each device holds 80 / 4 = 20 blocks of a 2-way split model.
    let two = analyze_parallel(&m, &w, &dgx(1), tp(2), Reserve::DEFAULT)?;
    let block_kv = two.memory.kv_cache.get() / 80.0;
    assert!((a.memory.kv_cache.get() - 20.0 * block_kv).abs() < 1e-3);
    // 9 stages of 80 blocks: the layout must leave no stage empty.
    let bad = Layout {
        pp: 81,
        ..Layout::SINGLE
    };
    assert!(analyze_parallel(&m, &w, &dgx(11), bad, Reserve::DEFAULT).is_err());
    Ok(())
}

#[test]
fn layouts_the_model_cannot_take_are_refused() {
    let m = llama31_70b();
    let w = Workload::new(Stage::Decode, 1, 1, 128);
    // 64 heads do not split 3 ways; 16 devices are more than one DGX holds.
    for (layout, sys) in [(tp(3), dgx(1)), (tp(16), dgx(1))] {
        assert!(analyze_parallel(&m, &w, &sys, layout, Reserve::DEFAULT).is_err());
    }
    assert!(tp(0).validate(&m).is_err());
}

/// Work every rank repeats whole under tensor parallelism.
fn replicated(role: Role) -> bool {
    matches!(
        role,
        Role::AttentionNorm
            | Role::MlpNorm
            | Role::FinalNorm
            | Role::AttentionResidual
            | Role::MlpResidual
            | Role::TokenEmbedding
            | Role::PositionEmbedding
            | Role::EmbeddingAdd
            | Role::Router
            | Role::RouterTopK
            | Role::MoeCombine
            | Role::QDownProj
            | Role::QLatentNorm
            | Role::KvDownProj
            | Role::KvLatentNorm
    )
}

#[test]
fn every_test_model_keeps_its_flops_under_every_layout_it_takes(
) -> Result<(), Box<dyn std::error::Error>> {
    let workloads = [
        Workload::new(Stage::Prefill, 2, 512, 512),
        Workload::new(Stage::Decode, 8, 1, 1024).flash_attention(true),
    ];
    let mut checked = 0;
    for m in crate::analysis::tests::models() {
        for w in &workloads {
            let one = analyze_parallel(&m, w, &dgx(1), tp(1), Reserve::DEFAULT)?;
            let total = one.totals.cost.flops.get();
            for t in [2, 4, 8] {
                if tp(t).validate(&m).is_err() {
                    continue;
                }
                let a = analyze_parallel(&m, w, &dgx(1), tp(t), Reserve::DEFAULT)?;
                let (mut split, mut whole) = (0.0, 0.0);
                for r in &a.rows {
                    let f = r.cost.flops.get() * r.count as f64;
                    if replicated(r.role) {
                        whole += f;
                    } else {
                        split += f;
                    }
                }
                // Rounding up a split that does not divide (an intermediate size, a
                // vocabulary) adds at most one row per rank: well under 1 %.
                let rel = (split * f64::from(t) + whole - total) / total;
                assert!((0.0..1e-2).contains(&rel), "{} tp {t} {w:?}: {rel}", m.name);
                assert!(a.memory.weights <= one.memory.weights, "{}", m.name);
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "{checked} layouts checked");
    Ok(())
}

/// Mixtral-8x7B (its config.json): d = 4096, 32 blocks, 32 heads, 8 KV heads, 8 experts of
/// f = 14336, top-2, V = 32000.
pub(super) fn mixtral() -> Transformer {
    Transformer::builder(4096, 32, 32, 14336, 32000)
        .kv_heads(8)
        .moe(Some(crate::model::Moe::new(8, 2, 14336)))
        .build()
        .expect("a valid model")
}

fn ep(e: u32) -> Layout {
    Layout {
        ep: e,
        ..Layout::SINGLE
    }
}

#[test]
fn expert_parallelism_dispatches_each_routed_token_and_splits_the_experts(
) -> Result<(), Box<dyn std::error::Error>> {
    let m = mixtral();
    let w = Workload::new(Stage::Decode, 64, 1, 1024);
    let one = analyze_parallel(&m, &w, &dgx(1), Layout::SINGLE, Reserve::DEFAULT)?;
    let a = analyze_parallel(&m, &w, &dgx(1), ep(8), Reserve::DEFAULT)?;
    // 64 sequences over 8 devices: 8 tokens each, each routed to 2 experts: S = 8 · 2 · 4096
    // · 2 B = 131,072 B, of which 7/8 leave the device; the combine returns as much.
    for role in [Role::EpDispatch, Role::EpCombine] {
        let (i, r) = a
            .rows
            .iter()
            .enumerate()
            .find(|(_, r)| r.role == role)
            .ok_or("an all-to-all")?;
        assert_eq!(r.count, 32);
        assert_eq!(
            a.communication(i).ok_or("link")?.traffic.get(),
            131_072.0 * 7.0 / 8.0
        );
    }
    // The experts' FLOPs of the 8 devices are the single device's; their weights an eighth.
    let experts = |rows: &[crate::analysis::OpRow]| -> f64 {
        rows.iter()
            .filter(|r| {
                matches!(
                    r.role,
                    Role::ExpertGateProj | Role::ExpertUpProj | Role::ExpertDownProj
                )
            })
            .map(|r| r.cost.flops.get() * r.count as f64)
            .sum()
    };
    assert_eq!(experts(&a.rows) * 8.0, experts(&one.rows));
    let expert_weights = 3.0 * 8.0 * 4096.0 * 14336.0 * 2.0 * 32.0;
    let rel = (one.memory.weights.get() - a.memory.weights.get()) - expert_weights * 7.0 / 8.0;
    assert!(rel.abs() < 1.0, "{rel}");
    // Twice the load on the busiest device doubles its expert work.
    let skew = Layout {
        expert_imbalance: 2.0,
        ..ep(8)
    };
    let b = analyze_parallel(&m, &w, &dgx(1), skew, Reserve::DEFAULT)?;
    assert_eq!(experts(&b.rows), 2.0 * experts(&a.rows));
    // 8 experts do not split 3 ways; a dense model has none to split.
    assert!(ep(3).validate(&m).is_err());
    assert!(ep(2).validate(&llama31_70b()).is_err());
    Ok(())
}

/// One sequence over 8 devices holding one expert each: the one token routes to 2 experts on 2
/// devices, so the busiest device runs 1 row, whatever the imbalance asked (a device cannot
/// receive a token twice for its one expert, nor tokens the batch does not have). Its gate
/// projection: 2 · 1 · 4096 · 14336 FLOP. With 64 sequences (8 a device, 16 rows on average)
/// the busiest device can receive at most all 64 tokens once: an imbalance of 8 is held at
/// 64/16 = 4.
#[test]
fn the_busiest_expert_device_runs_no_more_rows_than_the_batch_routes_to_it(
) -> Result<(), Box<dyn std::error::Error>> {
    let m = mixtral();
    let gate = |a: &super::ParallelStage| {
        a.rows
            .iter()
            .find(|r| r.role == Role::ExpertGateProj)
            .map(|r| r.cost.flops.get())
    };
    let skewed = |imbalance| Layout {
        expert_imbalance: imbalance,
        ..ep(8)
    };
    for imbalance in [1.0, 8.0] {
        let w = Workload::new(Stage::Decode, 1, 1, 1024);
        let a = analyze_parallel(&m, &w, &dgx(1), skewed(imbalance), Reserve::DEFAULT)?;
        assert_eq!(
            gate(&a),
            Some(2.0 * 4096.0 * 14336.0),
            "imbalance {imbalance}"
        );
    }
    let w = Workload::new(Stage::Decode, 64, 1, 1024);
    let four = analyze_parallel(&m, &w, &dgx(1), skewed(4.0), Reserve::DEFAULT)?;
    let eight = analyze_parallel(&m, &w, &dgx(1), skewed(8.0), Reserve::DEFAULT)?;
    assert_eq!(gate(&four), Some(2.0 * 64.0 * 4096.0 * 14336.0));
    assert_eq!(gate(&eight), gate(&four));
    Ok(())
}

#[test]
fn the_plan_search_tries_every_layout_of_8_devices_and_ranks_those_that_fit(
) -> Result<(), Box<dyn std::error::Error>> {
    let m = mixtral();
    let w = Workload::new(Stage::Decode, 64, 1, 2048);
    let s = search(&m, &w, &dgx(1), Reserve::DEFAULT)?;
    // t·p·e divides 8: the exponents of 2 in t, p and e sum to at most 3, C(6, 3) = 20
    // layouts, every one a layout Mixtral takes (32 heads, 8 KV heads, 8 experts, 32 blocks).
    assert_eq!((s.plans.len(), s.skipped), (20, 0));
    // One device holds 46.7e9 parameters × 2 B = 93 GB of weights: more than its 80 GB.
    let single = s
        .plans
        .iter()
        .find(|p| p.layout.devices() == 1)
        .ok_or("the single device")?;
    assert!(!single.fits());
    assert!(matches!(
        holdback(single, &s.plans[s.by_latency[0]]),
        Holdback::Memory { .. }
    ));
    // Rankings hold only plans that fit, in order.
    assert!(!s.by_latency.is_empty());
    for pair in s.by_latency.windows(2) {
        assert!(s.plans[pair[0]].step_time() <= s.plans[pair[1]].step_time());
    }
    for pair in s.by_throughput.windows(2) {
        let (a, b) = (&s.plans[pair[0]], &s.plans[pair[1]]);
        assert!(a.tokens_per_s_per_device() >= b.tokens_per_s_per_device());
    }
    assert!(s.by_latency.iter().all(|&i| s.plans[i].fits()));
    Ok(())
}

#[test]
fn decode_at_batch_1_still_gains_from_each_doubling_of_tp_over_nvlink(
) -> Result<(), Box<dyn std::error::Error>> {
    // Llama-3.1-70B decode at batch 1: each step reads the weights once (141 GB over 8
    // devices), which halves with each doubling of t; the all-reduces of 8 KiB each are
    // latency-bound (1 µs per ring step here) and grow with t: 2(t−1) steps, 160 a step.
    let m = llama31_70b();
    let w = Workload::new(Stage::Decode, 1, 1, 1024);
    let s = scaling::over_tp(
        &m,
        &w,
        &dgx(1),
        Layout::SINGLE,
        &[1, 2, 4, 8],
        Reserve::DEFAULT,
    )?;
    assert_eq!(s.len(), 4);
    for pair in s.windows(2) {
        // Each doubling halves the weight reads and adds ring steps: still faster here.
        assert!(pair[1].step_time() < pair[0].step_time());
        assert!(scaling::efficiency(&pair[1]) < scaling::efficiency(&pair[0]) + 1e-12);
    }
    assert!((scaling::efficiency(&s[0]) - 1.0).abs() < 1e-9);
    assert_eq!(scaling::stops_paying(&s), None);
    Ok(())
}

#[test]
fn one_device_through_the_passes_is_the_single_device_analysis(
) -> Result<(), Box<dyn std::error::Error>> {
    // tp = pp = ep = 1: no pass changes the graph, so the rows, the serial totals and the
    // memory are the single device's, bit for bit, and the step is the serial sum (no
    // collective to overlap).
    for m in crate::analysis::tests::models() {
        for w in crate::analysis::tests::workloads() {
            let a = analyze_parallel(&m, &w, &dgx(1), Layout::SINGLE, Reserve::DEFAULT)?;
            assert_eq!(a.rows, a.single.rows, "{} {w:?}", m.name);
            assert_eq!(a.totals.cost, a.single.totals.cost);
            assert_eq!(a.totals.kernels, a.single.totals.kernels);
            assert_eq!(a.memory, a.single.memory);
            assert_eq!(a.schedule.exposed.get(), 0.0);
            let serial = a.single.totals.time.get();
            assert!((a.schedule.step.get() - serial).abs() <= 1e-12 * serial);
        }
    }
    Ok(())
}

#[test]
fn the_degrees_a_model_takes_follow_its_heads_and_experts() {
    // 64 heads, 8 KV heads: every divisor of 64 (8 divides 16, 32, 64; 1, 2, 4 divide 8).
    let d: Vec<u64> = Layout::tp_degrees(&llama31_70b()).collect();
    assert_eq!(d, [1, 2, 4, 8, 16, 32, 64]);
    // 32 heads, 8 KV heads; 8 experts.
    assert_eq!(
        Layout::tp_degrees(&mixtral()).collect::<Vec<_>>(),
        [1, 2, 4, 8, 16, 32]
    );
    assert_eq!(
        Layout::ep_degrees(&mixtral()).collect::<Vec<_>>(),
        [1, 2, 4, 8]
    );
    assert_eq!(Layout::ep_degrees(&llama31_70b()).collect::<Vec<_>>(), [1]);
    for t in Layout::tp_degrees(&mixtral()) {
        assert!(tp(t as u32).validate(&mixtral()).is_ok());
    }
}

#[test]
fn sequence_parallel_learned_positions_run_on_each_ranks_share_of_the_tokens(
) -> Result<(), Box<dyn std::error::Error>> {
    // GPT-2-shaped: d = 768, 12 heads, learned positions. TP 2 with sequence parallelism on a
    // prompt of 1024 tokens: the token embeddings are reduce-scattered, so each rank looks up
    // and adds the positions of its 512 tokens: 512 lookups, 512 · 768 additions.
    let model = Transformer::builder(768, 2, 12, 3072, 50257)
        .positions(crate::model::Positions::Learned { rows: 1024 })
        .build()?;
    let layout = Layout {
        tp: 2,
        sequence_parallel: true,
        ..Layout::SINGLE
    };
    let w = Workload::new(Stage::Prefill, 1, 1024, 0);
    let a = analyze_parallel(&model, &w, &dgx(1), layout, Reserve::DEFAULT)?;
    let node = |role| {
        a.graph
            .nodes()
            .iter()
            .find(|n| n.role == role)
            .map(|n| n.op().clone())
    };
    match node(Role::PositionEmbedding) {
        Some(crate::ops::Op::Embedding(e)) => assert_eq!(e.tokens, 512),
        other => return Err(format!("position embedding: {other:?}").into()),
    }
    match node(Role::EmbeddingAdd) {
        Some(crate::ops::Op::Elementwise(e)) => assert_eq!(e.elements, 512 * 768),
        other => return Err(format!("embedding add: {other:?}").into()),
    }
    // The token embedding's reduction is a reduce-scatter under sequence parallelism.
    assert!(a
        .graph
        .nodes()
        .iter()
        .any(|n| n.role == Role::TpReduceScatter && !n.span().in_blocks()));
    Ok(())
}

#[test]
fn one_device_is_every_degree_one_without_sequence_parallelism_or_skew() {
    assert!(Layout::SINGLE.is_single());
    for many in [
        Layout {
            tp: 2,
            ..Layout::SINGLE
        },
        Layout {
            pp: 2,
            ..Layout::SINGLE
        },
        Layout {
            ep: 2,
            ..Layout::SINGLE
        },
        Layout {
            cp: 2,
            ..Layout::SINGLE
        },
        Layout {
            sequence_parallel: true,
            ..Layout::SINGLE
        },
        Layout {
            expert_imbalance: 1.5,
            ..Layout::SINGLE
        },
    ] {
        assert!(!many.is_single(), "{many:?}");
    }
}
