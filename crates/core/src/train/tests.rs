//! The training step on Llama-2-7B, by hand: batch 1, sequence 2048, logits at every position.

use super::backward::{backward, Recompute, TrainingStep};
use super::optimizer::{Optimizer, OptimizerStep};
use super::TrainError;
use crate::decoder::build_graph;
use crate::fixtures::llama2_7b;
use crate::graph::{Grad, OpGraph, Pass, Role};
use crate::ops::Op;
use crate::precision::Precision;
use crate::workload::{Logits, Workload};
use proptest::prelude::*;

// Llama-2-7B: T tokens, d hidden, f MLP, L blocks, h heads of e, V vocabulary.
const T: f64 = 2048.0;
const D: f64 = 4096.0;
const F: f64 = 11008.0;
const L: f64 = 32.0;
const H: f64 = 32.0;
const E: f64 = 128.0;
const V: f64 = 32000.0;

fn training(flash: bool) -> Workload {
    Workload::prefill(1, 2048)
        .with_logits(Logits::All)
        .flash_attention(flash)
}

fn forward(flash: bool) -> OpGraph {
    build_graph(&llama2_7b(), &training(flash))
}

fn step(flash: bool, recompute: Recompute) -> Result<OpGraph, TrainError> {
    backward(&forward(flash), recompute)
}

/// FLOPs of the nodes of `g` passing `keep`, each over its span.
fn flops(g: &OpGraph, keep: impl Fn(&crate::graph::Node) -> bool) -> f64 {
    g.nodes()
        .iter()
        .filter(|n| keep(n))
        .map(|n| n.cost().flops.get() * n.count() as f64)
        .sum()
}

/// Forward FLOPs of one block by hand: q, k, v, o (2·T·d² each), gate, up, down (2·T·d·f
/// each), eager attention over all s² scores (QKᵀ and S·V 2·h·s²·e each, softmax with scale
/// and mask 7·h·s²), two RMSNorms (4·T·d each), rotary on 32 + 32 heads (3·T·64·e), SiLU
/// (3·T·f), the gate product (T·f) and two residual adds (T·d each).
fn block_forward() -> f64 {
    let linear = 8.0 * T * D * D + 6.0 * T * D * F;
    let core = 4.0 * H * T * T * E + 7.0 * H * T * T;
    linear + core + 8.0 * T * D + 3.0 * T * 64.0 * E + 4.0 * T * F + 2.0 * T * D
}

#[test]
fn every_gemm_backward_is_twice_its_forward() -> Result<(), TrainError> {
    let s = step(false, Recompute::None)?;
    let fwd = forward(false);
    let mut gemms = 0;
    for n in fwd.nodes().iter().filter(|n| matches!(n.op(), Op::Gemm(_))) {
        let grads: Vec<_> = s
            .nodes()
            .iter()
            .filter(|g| g.pass().is_backward() && g.role == n.role && g.span() == n.span())
            .collect();
        assert_eq!(grads.len(), 2, "{}: dX and dW", n.name);
        let b: f64 = grads.iter().map(|g| g.cost().flops.get()).sum();
        assert_eq!(b, 2.0 * n.cost().flops.get(), "{}", n.name);
        gemms += 1;
    }
    // 7 linear layers a block, and lm_head.
    assert_eq!(gemms, 8);
    // q_proj by hand: dX = dY·Wᵀ is 2048×4096 by 4096×4096, dW = xᵀ·dY 4096×2048 by
    // 2048×4096: 2·2048·4096·4096 FLOP each; dX reads dY and W and writes dX, dW reads x and
    // dY and writes dW (bf16).
    let q: Vec<_> = s
        .nodes()
        .iter()
        .filter(|g| g.role == Role::QProj && g.pass().is_backward())
        .collect();
    assert_eq!(q[0].pass(), Pass::Backward(Grad::Input));
    assert_eq!(q[1].pass(), Pass::Backward(Grad::Weight));
    for g in &q {
        assert_eq!(g.cost().flops.get(), 2.0 * T * D * D);
    }
    assert_eq!(q[0].cost().bytes_read.get(), (T * D + D * D) * 2.0);
    assert_eq!(q[1].cost().bytes_read.get(), (T * D + T * D) * 2.0);
    assert_eq!(q[0].cost().bytes_written.get(), T * D * 2.0);
    assert_eq!(q[1].cost().bytes_written.get(), D * D * 2.0);
    Ok(())
}

#[test]
fn linear_backward_is_twice_the_linear_forward_by_hand() -> Result<(), TrainError> {
    let s = step(false, Recompute::None)?;
    let gemm = |n: &crate::graph::Node| matches!(n.op(), Op::Gemm(_));
    let fwd = flops(&s, |n| gemm(n) && n.pass() == Pass::Forward);
    let bwd = flops(&s, |n| gemm(n) && n.pass().is_backward());
    // 32 blocks of 8·T·d² + 6·T·d·f, and lm_head 2·T·d·V.
    let hand = L * (8.0 * T * D * D + 6.0 * T * D * F) + 2.0 * T * D * V;
    assert_eq!(fwd, hand);
    assert_eq!(bwd, 2.0 * hand);
    // Half of the backward's linear FLOPs are weight gradients.
    let t = TrainingStep::of(&s);
    assert_eq!(t.weight_gradients.flops.get(), hand);
    Ok(())
}

#[test]
fn full_recompute_adds_one_forward_of_the_blocks() -> Result<(), TrainError> {
    let none = TrainingStep::of(&step(false, Recompute::None)?);
    let full_graph = step(false, Recompute::Full)?;
    let full = TrainingStep::of(&full_graph);
    // The forward graph's blocks are what the hand count says (the KV-cache write is 0 FLOP
    // and dropped).
    assert_eq!(
        flops(&forward(false), |n| n.span().in_blocks()),
        L * block_forward()
    );
    assert_eq!(full.executed_flops(), none.executed_flops());
    assert_eq!(full.recompute.flops.get(), L * block_forward());
    assert_eq!(
        full.hardware_flops().get(),
        none.executed_flops().get() + L * block_forward()
    );
    // No prologue or epilogue node is recomputed, and no KV-cache write is anywhere.
    assert!(full_graph
        .nodes()
        .iter()
        .filter(|n| n.pass() == Pass::Recompute)
        .all(|n| n.span().in_blocks()));
    assert!(full_graph
        .nodes()
        .iter()
        .all(|n| n.role != Role::KvCacheWrite));
    Ok(())
}

#[test]
fn selective_recompute_adds_only_the_attention_core() -> Result<(), TrainError> {
    let none = TrainingStep::of(&step(false, Recompute::None)?);
    let sel_graph = step(false, Recompute::Selective)?;
    let sel = TrainingStep::of(&sel_graph);
    // QKᵀ and S·V (2·h·s²·e each) and the softmax (7·h·s²) of 32 blocks.
    let core = L * (4.0 * H * T * T * E + 7.0 * H * T * T);
    assert_eq!(sel.recompute.flops.get(), core);
    assert_eq!(
        sel.hardware_flops().get(),
        none.executed_flops().get() + core
    );
    assert!(sel_graph
        .nodes()
        .iter()
        .filter(|n| n.pass() == Pass::Recompute)
        .all(|n| n.role.is_attention_core()));
    // With FlashAttention the kernel's backward recomputes the scores: nothing runs again.
    let flash = TrainingStep::of(&step(true, Recompute::Selective)?);
    assert_eq!(flash.recompute.flops.get(), 0.0);
    Ok(())
}

#[test]
fn flash_attention_backward_is_two_and_a_half_forward_matmuls() -> Result<(), TrainError> {
    let s = step(true, Recompute::None)?;
    let find = |pass: Pass| {
        s.nodes()
            .iter()
            .find(|n| n.role == Role::FusedAttention && n.pass() == pass)
            .map(|n| n.cost())
    };
    let (Some(fwd), Some(bwd)) = (find(Pass::Forward), find(Pass::Backward(Grad::Input))) else {
        panic!("no fused attention forward or backward");
    };
    // Causal prefill: P = s·(s + 1)/2 pairs a head; forward matmuls 4·e a pair, the
    // backward's five 10·e (FlashAttention-2 §4.1: 2.5×), plus 7 a score and D = rowsum(dO∘O)
    // (2·e a query row and head).
    let p = T * (T + 1.0) / 2.0;
    let fwd_matmul = H * p * 4.0 * E;
    assert_eq!(fwd.flops.get(), fwd_matmul + H * p * 7.0);
    assert_eq!(
        bwd.flops.get(),
        2.5 * fwd_matmul + H * p * 7.0 + 2.0 * T * H * E
    );
    // Reads Q, O, dO (3·T·h·e), K, V (2·T·h·e), the fp32 log-sum-exp (4·T·h); writes dQ, dK,
    // dV (3·T·h·e), bf16.
    assert_eq!(bwd.bytes_read.get(), 5.0 * T * H * E * 2.0 + 4.0 * T * H);
    assert_eq!(bwd.bytes_written.get(), 3.0 * T * H * E * 2.0);
    Ok(())
}

#[test]
fn executed_flops_are_three_forwards_up_to_the_non_matmul_gradients() -> Result<(), TrainError> {
    let s = step(false, Recompute::None)?;
    let t = TrainingStep::of(&s);
    let matmul = L * (8.0 * T * D * D + 6.0 * T * D * F + 4.0 * H * T * T * E) + 2.0 * T * D * V;
    // Forward: the blocks, the final RMSNorm (4·T·d), lm_head (2·T·d·V); the embedding
    // lookup is 0 FLOP.
    let fwd = L * block_forward() + 4.0 * T * D + 2.0 * T * D * V;
    assert_eq!(t.forward.flops.get(), fwd);
    // Backward: every matmul twice; per block two RMSNorms (9·T·d each), rotary (3·T·64·e),
    // SiLU (7·T·f), the gate product's two gradients (2·T·f), two residual sums (T·d each),
    // softmax (5·h·s²); the final norm (9·T·d) and the embedding's scatter-add (T·d).
    let block_rest = 18.0 * T * D + 3.0 * T * 64.0 * E + 7.0 * T * F + 2.0 * T * F + 2.0 * T * D;
    let bwd = 2.0 * matmul + L * (block_rest + 5.0 * H * T * T) + 9.0 * T * D + T * D;
    assert_eq!(t.backward.flops.get(), bwd);
    // So executed FLOPs are 3 × forward exactly for the matmuls, and the norms, activations,
    // softmax, rotary and adds (0.13 % of the forward here) differ: within 0.1 % in all.
    let ratio = t.executed_flops().get() / (3.0 * fwd);
    assert!((ratio - 1.0).abs() < 1e-3, "{ratio}");
    Ok(())
}

#[test]
fn adamw_reads_and_writes_28_bytes_a_parameter() -> Result<(), TrainError> {
    // Llama-2-7B: 6,738,415,616 parameters; bf16 gradients. Reads master 4 + gradient 2 +
    // moments 8 = 14, writes master 4 + moments 8 + bf16 weight 2 = 14.
    let p = 6_738_415_616u64;
    assert_eq!(llama2_7b().parameters(), p);
    let adam = OptimizerStep::adamw(p);
    assert_eq!(adam.bytes_per_parameter(), (14.0, 14.0));
    let c = adam.cost()?;
    assert_eq!(c.bytes().get(), 28.0 * p as f64);
    assert_eq!(c.flops.get(), 15.0 * p as f64);
    // ZeRO over 8 data-parallel ranks: ⌈p/8⌉ = 842,301,952 a rank.
    let zero = OptimizerStep { shards: 8, ..adam };
    assert_eq!(zero.row()?.parameters, 842_301_952);
    assert_eq!(zero.cost()?.bytes().get(), 28.0 * 842_301_952.0);
    // fp32 gradients: 2 more bytes read. SGD with momentum: 4 + 2 + 4 read, 4 + 4 + 2
    // written, 6 FLOP.
    let fp32 = OptimizerStep {
        grad: Precision::Fp32,
        ..adam
    };
    assert_eq!(fp32.bytes_per_parameter(), (16.0, 14.0));
    let sgd = OptimizerStep {
        optimizer: Optimizer::SgdMomentum,
        ..adam
    };
    assert_eq!(sgd.bytes_per_parameter(), (10.0, 10.0));
    assert_eq!(sgd.cost()?.flops.get(), 6.0 * p as f64);
    assert_eq!(
        OptimizerStep { shards: 0, ..adam }.cost(),
        Err(TrainError::NoShards)
    );
    Ok(())
}

#[test]
fn a_training_graph_is_not_a_forward_graph() -> Result<(), TrainError> {
    let s = step(false, Recompute::None)?;
    assert!(matches!(
        backward(&s, Recompute::None),
        Err(TrainError::NotForward { .. })
    ));
    Ok(())
}

#[test]
fn gradients_keep_span_and_run_in_reverse() -> Result<(), TrainError> {
    let s = step(false, Recompute::Full)?;
    let passes: Vec<Pass> = s.nodes().iter().map(|n| n.pass()).collect();
    // Forward, then recompute, then backward: never back to forward.
    let first_re = passes.iter().position(|p| *p == Pass::Recompute);
    let first_bwd = passes.iter().position(|p| p.is_backward());
    let last_fwd = passes.iter().rposition(|p| p.is_forward());
    assert!(last_fwd < first_bwd && last_fwd < first_re);
    // lm_head's gradients come first, the embedding's last.
    let bwd: Vec<_> = s
        .nodes()
        .iter()
        .filter(|n| n.pass().is_backward())
        .collect();
    assert_eq!(bwd.first().map(|n| n.role), Some(Role::LmHead));
    assert_eq!(bwd.last().map(|n| n.role), Some(Role::TokenEmbedding));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn backward_flops_are_at_least_forward_flops(
        batch in 1u64..4, len in 1u64..600, flash: bool, all: bool,
    ) {
        let w = Workload::prefill(batch, len)
            .flash_attention(flash)
            .with_logits(if all { Logits::All } else { Logits::Last });
        for m in crate::analysis::tests::models() {
            let t = TrainingStep::of(&backward(&build_graph(&m, &w), Recompute::None)
                .map_err(|e| TestCaseError::fail(e.to_string()))?);
            prop_assert!(
                t.backward.flops.get() >= t.forward.flops.get(),
                "{}: {t:?}", m.name
            );
        }
    }
}
