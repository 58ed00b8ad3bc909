//! Context parallelism checked by hand: Llama-3.1-70B (d = 8192, 80 blocks, 64 heads, 8 KV
//! heads of 128, f = 28672) prefill on the test DGX of [`super::tests`] (NVLink at 450e9 B/s
//! each way, α = 1 µs a step; 50e9 B/s between nodes).

use super::tests::{dgx, llama31_70b, mixtral};
use super::*;
use crate::analysis::OpRow;
use crate::cited::Cited;
use crate::comm::{Fabric, LinkTier, System};
use crate::graph::Role;
use crate::memory::Reserve;
use crate::model::Transformer;
use crate::units::{BytesPerSec, Seconds};
use crate::workload::{Logits, Workload};
use proptest::prelude::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn cp(c: u32) -> Layout {
    Layout {
        cp: c,
        ..Layout::SINGLE
    }
}

/// Σ FLOPs × count over the rows doing one of `roles`.
fn flops(rows: &[OpRow], roles: &[Role]) -> f64 {
    rows.iter()
        .filter(|r| roles.contains(&r.role))
        .map(|r| r.cost.flops.get() * r.count as f64)
        .sum()
}

const LINEARS: &[Role] = &[
    Role::QProj,
    Role::KProj,
    Role::VProj,
    Role::OProj,
    Role::GateProj,
    Role::UpProj,
    Role::DownProj,
];

/// One device of 8 with NVLink at `bw` B/s each way and α = 1 µs.
fn node_with_link(bw: f64) -> Result<System, crate::comm::SystemError> {
    let fabric = Fabric {
        scale_up: Some(LinkTier::new(
            "slow link",
            Cited::new(BytesPerSec(bw), "test"),
            Cited::new(Seconds(1e-6), "test"),
        )),
        ..Fabric::default()
    };
    System::new("slow", "slow", crate::fixtures::h100_sxm(), 8, 1, fabric)
}

#[test]
fn cp4_prefill_of_32k_tokens_splits_the_tokens_and_the_causal_pairs_four_ways() -> TestResult {
    let m = llama31_70b();
    let w = Workload::prefill(1, 32768).flash_attention(true);
    let one = analyze_parallel(&m, &w, &dgx(1), Layout::SINGLE, Reserve::DEFAULT)?;
    let a = analyze_parallel(&m, &w, &dgx(1), cp(4), Reserve::DEFAULT)?;
    assert_eq!(a.devices, 4);
    // 2c = 8 chunks of 4096 tokens, two on each device: 8192 tokens.
    assert_eq!(cp(4).cp_tokens(32768), 8192);

    // Linear layers on 8192 tokens, 2 FLOPs per multiply-add: q and o 8192², k and v
    // 8192 · 8 · 128 = 8192 · 1024, gate, up and down 8192 · 28672 each, in 80 blocks.
    let per_token = 2.0 * 8192.0 * 8192.0 + 2.0 * 8192.0 * 1024.0 + 3.0 * 8192.0 * 28672.0;
    let linear = 2.0 * 8192.0 * per_token * 80.0;
    assert_eq!(flops(&a.rows, LINEARS), linear);
    assert_eq!(flops(&one.rows, LINEARS), 4.0 * linear);

    // Attention: 4·128 + 7 = 519 FLOPs a (query, key) pair a head (QKᵀ, S·V, softmax, scale
    // and mask). The whole prompt has 32768 · 32769 / 2 causal pairs; a device its own block
    // (8192 · 8193 / 2 causal pairs) and three arriving blocks of 4096 queries × 8192 keys.
    let per_pair = 64.0 * 519.0;
    let local = per_pair * 8192.0 * 8193.0 / 2.0;
    let remote = per_pair * 3.0 * 4096.0 * 8192.0;
    let whole = per_pair * 32768.0 * 32769.0 / 2.0;
    assert_eq!(local + remote, whole / 4.0);
    let attention = |rows: &[OpRow]| flops(rows, &[Role::FusedAttention]);
    assert_eq!(attention(&a.rows), 80.0 * (local + remote));
    assert_eq!(attention(&one.rows), 80.0 * whole);

    // The ring: one block is K and V of 8192 tokens, 8 KV heads of 128, 2 bytes each:
    // 2 · 8192 · 8 · 128 · 2 = 33,554,432 B, sent c − 1 = 3 times in each of the 80 blocks,
    // each send α + S/B = 1 µs + S / 450e9 B/s inside the node.
    let s = 2.0 * 8192.0 * 8.0 * 128.0 * 2.0;
    assert_eq!(s, 33_554_432.0);
    let (i, ring) = a
        .rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.role == Role::CpRingKv)
        .ok_or("a ring exchange")?;
    assert_eq!(ring.count, 80);
    assert_eq!(
        a.rows.iter().filter(|r| r.role == Role::CpRingKv).count(),
        1
    );
    let c = a.communication(i).ok_or("a collective")?;
    assert_eq!(c.bytes.get(), s);
    assert_eq!(c.traffic.get(), 3.0 * s);
    assert_eq!(c.group.ranks, 4);
    assert_eq!(c.tier, crate::comm::collective::Tier::ScaleUp);
    assert_eq!(c.transfer.get(), 3.0 * (s / 450e9));
    assert_eq!(c.latency.get(), 3.0 * 1e-6);

    // The KV cache a device holds: its 8192 tokens', a quarter of the prompt's
    // 2 · 80 · 8 · 128 · 2 B × 32768 tokens.
    let kv = 2.0 * 80.0 * 8.0 * 128.0 * 2.0 * 32768.0;
    assert_eq!(one.memory.kv_cache.get(), kv);
    assert_eq!(a.memory.kv_cache.get(), kv / 4.0);
    // Weights whole on every device.
    assert_eq!(a.memory.weights, one.memory.weights);

    // Each send (3 · 75.6 µs in all) hides behind the ≥ 1 ms of attention of a block: the
    // ring is the only communication, and none of it is exposed.
    assert!(a.schedule.communication.get() > 0.0);
    assert_eq!(a.schedule.exposed.get(), 0.0);
    Ok(())
}

#[test]
fn a_ring_on_a_slow_link_exposes_what_the_attention_cannot_hide() -> TestResult {
    // At 1e9 B/s a send of 33.5 MB takes 33.6 ms, against about a millisecond of attention a
    // step: with the device's own block taking a₀ and each arriving one a, the pipeline ends
    // n·t_c + a after the ring starts, where the compute alone would end a₀ + n·a after it:
    // n·t_c + a − a₀ − n·a exposed, in each of the 80 blocks (n = 3).
    let m = llama31_70b();
    let w = Workload::prefill(1, 32768).flash_attention(true);
    let a = analyze_parallel(&m, &w, &node_with_link(1e9)?, cp(4), Reserve::DEFAULT)?;
    let time = |name: &str| -> Result<f64, String> {
        a.rows
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.point().time.get())
            .ok_or(format!("no {name}"))
    };
    let t_c = 1e-6 + 33_554_432.0 / 1e9;
    let ring = time("attention.cp_ring_kv")?;
    assert!((ring - 3.0 * t_c).abs() <= 1e-15 * ring);
    let a0 = time("attention")?;
    let step = time("attention.cp_remote")? / 3.0;
    let exposed = 80.0 * (3.0 * t_c + step - a0 - 3.0 * step);
    let got = a.schedule.exposed.get();
    assert!(
        (got - exposed).abs() <= 1e-9 * exposed,
        "{got} vs {exposed}"
    );
    Ok(())
}

#[test]
fn unfused_attention_computes_every_score_of_its_block_against_every_block() -> TestResult {
    // Eager attention computes every score, masked or not: 4096² a head on one device; under
    // cp 2 a device has 2048 queries against its own 2048 keys and one arriving block of
    // 2048: 2 · 2048² scores, half.
    let m = llama31_70b();
    let w = Workload::prefill(1, 4096);
    let one = analyze_parallel(&m, &w, &dgx(1), Layout::SINGLE, Reserve::DEFAULT)?;
    let a = analyze_parallel(&m, &w, &dgx(1), cp(2), Reserve::DEFAULT)?;
    let qk = 80.0 * 64.0 * 2.0 * 2048.0 * 2048.0 * 2.0 * 128.0;
    assert_eq!(flops(&a.rows, &[Role::AttentionScores]), qk);
    assert_eq!(flops(&one.rows, &[Role::AttentionScores]), 2.0 * qk);
    let core = [
        Role::AttentionScores,
        Role::AttentionSoftmax,
        Role::AttentionValues,
    ];
    assert_eq!(flops(&a.rows, &core) * 2.0, flops(&one.rows, &core));
    Ok(())
}

#[test]
fn context_parallelism_composes_with_tensor_parallelism_and_crosses_nodes() -> TestResult {
    let m = llama31_70b();
    let w = Workload::prefill(1, 4096).flash_attention(true);
    // tp 2 × cp 2: 2048 tokens a device, 8 / 2 = 4 KV heads a rank: a block of
    // 2 · 2048 · 4 · 128 · 2 = 4,194,304 B, one send inside the node.
    let l = Layout { tp: 2, ..cp(2) };
    let a = analyze_parallel(&m, &w, &dgx(1), l, Reserve::DEFAULT)?;
    assert_eq!(a.devices, 4);
    let (i, _) = a
        .rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.role == Role::CpRingKv)
        .ok_or("a ring")?;
    let c = a.communication(i).ok_or("a collective")?;
    assert_eq!(c.bytes.get(), 4_194_304.0);
    assert_eq!(c.traffic.get(), 4_194_304.0);
    assert_eq!(c.tier, crate::comm::collective::Tier::ScaleUp);
    // tp 8 × cp 2 on two nodes: the two context-parallel ranks sit on different nodes, so the
    // send crosses the network (50e9 B/s): 2 · 2048 · 1 · 128 · 2 = 1,048,576 B.
    let l = Layout { tp: 8, ..cp(2) };
    let a = analyze_parallel(&m, &w, &dgx(2), l, Reserve::DEFAULT)?;
    let (i, _) = a
        .rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.role == Role::CpRingKv)
        .ok_or("a ring")?;
    let c = a.communication(i).ok_or("a collective")?;
    assert_eq!(c.bytes.get(), 1_048_576.0);
    assert_eq!(c.tier, crate::comm::collective::Tier::ScaleOut);
    assert_eq!(c.transfer.get(), 1_048_576.0 / 50e9);
    Ok(())
}

#[test]
fn layouts_the_workload_cannot_take_are_refused_naming_cp() -> TestResult {
    let m = llama31_70b();
    let decode = Workload::decode(8, 4096);
    let e = cp(2).validate_for(&m, &decode).unwrap_err();
    assert_eq!(e, LayoutError::ContextStage { cp: 2 });
    assert_eq!(e.quantity(), "cp");
    assert!(analyze_parallel(&m, &decode, &dgx(1), cp(2), Reserve::DEFAULT).is_err());
    // 2c = 8 chunks need 8 tokens.
    let short = Workload::prefill(1, 7);
    assert_eq!(
        cp(4).validate_for(&m, &short),
        Err(LayoutError::ContextLength { cp: 4, seq_len: 7 })
    );
    assert!(cp(4).validate_for(&m, &Workload::prefill(1, 8)).is_ok());
    assert_eq!(cp(0).validate(&m).map_err(|e| e.quantity()), Err("cp"));
    // Multi-head latent attention and a window shorter than the prompt are not modelled.
    let models = crate::analysis::tests::models();
    let mla = models
        .iter()
        .find(|m| m.variant.mla.is_some())
        .ok_or("an MLA test model")?;
    assert!(matches!(
        cp(2).validate(mla),
        Err(LayoutError::ContextUnsupported { cp: 2, .. })
    ));
    let windowed = Transformer {
        variant: crate::model::Variant {
            sliding_window: Some(1024),
            ..m.variant
        },
        ..m.clone()
    };
    assert!(cp(2)
        .validate_for(&windowed, &Workload::prefill(1, 1024))
        .is_ok());
    assert!(matches!(
        cp(2).validate_for(&windowed, &Workload::prefill(1, 2048)),
        Err(LayoutError::ContextUnsupported { .. })
    ));
    // c multiplies the devices.
    assert_eq!(
        Layout {
            tp: 2,
            pp: 2,
            ..cp(4)
        }
        .devices(),
        16
    );
    Ok(())
}

#[test]
fn the_plan_search_tries_context_parallelism_for_prefill_only() -> TestResult {
    let m = llama31_70b();
    let prefill = Workload::prefill(1, 8192).flash_attention(true);
    let s = search(&m, &prefill, &dgx(1), Reserve::DEFAULT)?;
    assert!(s.plans.iter().any(|p| p.layout.cp == 8));
    assert!(s.plans.iter().any(|p| p.layout.cp == 2 && p.layout.tp == 4));
    for p in &s.plans {
        assert!(p.layout.devices() <= 8);
        assert_eq!(p.replicas, 8 / p.layout.devices());
    }
    let decode = Workload::decode(8, 8192);
    let d = search(&m, &decode, &dgx(1), Reserve::DEFAULT)?;
    assert!(d.plans.iter().all(|p| p.layout.cp == 1));
    Ok(())
}

/// Dense test models with rotary positions and no window, and Mixtral.
fn cp_models() -> Vec<Transformer> {
    let mut v: Vec<Transformer> = crate::analysis::tests::models()
        .into_iter()
        .filter(|m| m.variant.mla.is_none() && m.variant.sliding_window.is_none())
        .collect();
    v.push(mixtral());
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// With the prompt a multiple of 2c, a device does 1/c of every FLOP: the linears, norms
    /// and activations on 1/c of the tokens, attention on 1/c of the causal pairs (unfused:
    /// 1/c of the scores); with logits at every position lm_head too.
    #[test]
    fn context_parallelism_keeps_the_flops(
        model in 0usize..4,
        c in prop::sample::select(vec![2u32, 4, 8]),
        chunk in 1u64..48,
        batch in 1u64..3,
        flash: bool,
    ) {
        let models = cp_models();
        let m = &models[model % models.len()];
        let w = Workload::prefill(batch, 2 * u64::from(c) * chunk)
            .flash_attention(flash)
            .with_logits(Logits::All);
        let one = analyze_parallel(m, &w, &dgx(1), Layout::SINGLE, Reserve::DEFAULT)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let a = analyze_parallel(m, &w, &dgx(1), cp(c), Reserve::DEFAULT)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let total = one.totals.cost.flops.get();
        let split = a.totals.cost.flops.get() * f64::from(c);
        prop_assert!((split - total).abs() <= 1e-12 * total, "{}: {split} vs {total}", m.name);
    }

    /// A device never holds more KV cache than the single device, whatever the prompt.
    #[test]
    fn context_parallelism_never_raises_the_kv_cache(
        model in 0usize..4,
        c in 2u32..9,
        extra in 0u64..200,
        batch in 1u64..3,
    ) {
        let models = cp_models();
        let m = &models[model % models.len()];
        let w = Workload::prefill(batch, 2 * u64::from(c) + extra);
        let one = analyze_parallel(m, &w, &dgx(1), Layout::SINGLE, Reserve::DEFAULT)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let a = analyze_parallel(m, &w, &dgx(1), cp(c), Reserve::DEFAULT)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(a.memory.kv_cache <= one.memory.kv_cache);
        prop_assert!(a.memory.weights == one.memory.weights);
    }
}
