//! The join on a two-block model and a hand-written CPU operator list: every expected time is
//! the sum of the durations written here.

use super::*;
use crate::analysis::analyze;
use crate::fixtures::h100_sxm;
use crate::fixtures::llama2_7b;
use crate::model::Transformer;
use crate::profile::{ArgShape, CostSource, FrameworkOp, ProfileFormat, ProfiledKernel};
use crate::workload::{Precisions, Workload};

const S: u64 = 8;

fn small() -> Transformer {
    Transformer {
        hidden: 256,
        layers: 2,
        heads: 4,
        kv_heads: 2,
        head_dim: 64,
        intermediate: 688,
        vocab: 1000,
        ..llama2_7b()
    }
}

fn workload(p: Precision) -> Workload {
    Workload {
        stage: Stage::Prefill,
        batch: 1,
        seq_len: S,
        context: 0,
        cached: 0,
        precisions: Precisions::uniform(p),
        flash_attention: false,
        logits: crate::workload::Logits::Last,
    }
}

/// A CPU operator of `us` microseconds with these argument dims, all fp32 tensors (an empty
/// dims list is a scalar).
fn op(name: &str, dims: &[&[u64]], us: f64) -> ProfiledKernel {
    ProfiledKernel {
        name: name.into(),
        index: 0,
        duration: Seconds(us / 1e6),
        flops: vec![],
        tensor_instructions: None,
        bytes_read: None,
        bytes_written: None,
        l2_bytes: None,
        compute: None,
        cost_source: CostSource::CostModel,
        op: Some(FrameworkOp {
            name: name.into(),
            shapes: dims.iter().map(|d| ArgShape::Tensor(d.to_vec())).collect(),
            types: dims
                .iter()
                .map(|d| if d.is_empty() { "Scalar" } else { "float" }.to_string())
                .collect(),
            values: vec![],
            instance: None,
        }),
        shaped_as: None,
    }
}

fn norm(last_mul: f64) -> Vec<ProfiledKernel> {
    let (x, r): (&[u64], &[u64]) = (&[1, S, 256], &[1, S, 1]);
    vec![
        op("aten::pow", &[x, &[]], 5.0),
        op("aten::mean", &[x, &[], &[]], 6.0),
        op("aten::add", &[r, &[]], 3.0),
        op("aten::rsqrt", &[r], 2.0),
        op("aten::mul", &[x, r], 7.0),
        op("aten::mul", &[&[256], x], last_mul),
    ]
}

fn linear(k: u64, n: u64, us: f64) -> ProfiledKernel {
    op("aten::linear", &[&[1, S, k], &[n, k]], us)
}

fn trace() -> Vec<ProfiledKernel> {
    let mut v = vec![op("aten::embedding", &[&[1000, 256], &[1, S]], 20.0)];
    for _ in 0..2 {
        v.extend(norm(8.0)); // input_layernorm: 31
        v.push(linear(256, 256, 100.0)); // q_proj
        v.push(linear(256, 128, 60.0)); // k_proj
        v.push(linear(256, 128, 61.0)); // v_proj
        v.push(op("aten::add", &[&[1, 4, S, 64], &[1, 4, S, 64]], 3.0)); // rotary: unmatched
        v.push(op("aten::matmul", &[&[1, 4, S, 64], &[1, 4, 64, S]], 40.0)); // qk
        v.push(op("aten::softmax", &[&[1, 4, S, S], &[]], 25.0));
        v.push(op("aten::matmul", &[&[1, 4, S, S], &[1, 4, S, 64]], 41.0)); // sv
        v.push(linear(256, 256, 90.0)); // o_proj
        v.push(op("aten::add", &[&[1, S, 256], &[1, S, 256]], 11.0));
        v.extend(norm(9.0)); // post_attention_layernorm: 32
        v.push(linear(256, 688, 200.0));
        v.push(linear(256, 688, 201.0));
        v.push(op("aten::silu", &[&[1, S, 688]], 33.0));
        v.push(op("aten::mul", &[&[1, S, 688], &[1, S, 688]], 22.0));
        v.push(linear(688, 256, 190.0));
        v.push(op("aten::add", &[&[1, S, 256], &[1, S, 256]], 12.0));
    }
    v.extend(norm(10.0)); // norm: 33
    v.push(op("aten::linear", &[&[1, 1, 256], &[1000, 256]], 30.0)); // lm_head
    v
}

fn profile(kernels: Vec<ProfiledKernel>) -> Profile {
    Profile {
        format: ProfileFormat::TorchTrace,
        origin: "t.json".into(),
        total_time: kernels.iter().map(|k| k.duration).sum(),
        kernels,
        steps: 1,
        uncosted: vec![],
        notes: vec![],
    }
}

fn joined(p: Precision, kernels: Vec<ProfiledKernel>) -> Result<Join, Box<dyn std::error::Error>> {
    let (m, w) = (small(), workload(p));
    let a = analyze(&m, &w, &h100_sxm(), crate::memory::Reserve::DEFAULT)?;
    Ok(join(&a, &profile(kernels)))
}

fn measured_us(j: &Join, name: &str) -> Result<Option<f64>, String> {
    let r = j
        .rows
        .iter()
        .find(|r| r.name == name)
        .ok_or(format!("no row {name}"))?;
    Ok(r.measured.map(|m| (m.get() * 1e6 * 1e6).round() / 1e6))
}

#[test]
fn same_shapes_are_told_apart_by_forward_order() -> Result<(), Box<dyn std::error::Error>> {
    let j = joined(Precision::Fp32, trace())?;
    // q_proj and o_proj are both gemm m=8 n=256 k=256: 2 × 100 and 2 × 90 µs.
    assert_eq!(measured_us(&j, "q_proj")?, Some(200.0));
    assert_eq!(measured_us(&j, "o_proj")?, Some(180.0));
    assert_eq!(measured_us(&j, "k_proj")?, Some(120.0));
    assert_eq!(measured_us(&j, "v_proj")?, Some(122.0));
    // qk_matmul and sv_matmul: bmm batch 4 m=8 and n=8, k=64 / n=64, k=8: different shapes.
    assert_eq!(measured_us(&j, "qk_matmul")?, Some(80.0));
    assert_eq!(measured_us(&j, "sv_matmul")?, Some(82.0));
    // Norm pieces grouped: 2 × 31, 2 × 32, 1 × 33.
    assert_eq!(measured_us(&j, "input_layernorm")?, Some(62.0));
    assert_eq!(measured_us(&j, "post_attention_layernorm")?, Some(64.0));
    assert_eq!(measured_us(&j, "norm")?, Some(33.0));
    assert_eq!(measured_us(&j, "attn_residual_add")?, Some(22.0));
    assert_eq!(measured_us(&j, "mlp_residual_add")?, Some(24.0));
    assert_eq!(measured_us(&j, "act_fn")?, Some(66.0));
    assert_eq!(measured_us(&j, "act_mul")?, Some(44.0));
    assert_eq!(measured_us(&j, "gate_proj")?, Some(400.0));
    assert_eq!(measured_us(&j, "up_proj")?, Some(402.0));
    assert_eq!(measured_us(&j, "lm_head")?, Some(30.0));
    assert_eq!(measured_us(&j, "embed_tokens")?, Some(20.0));
    assert_eq!(measured_us(&j, "rotary_emb")?, None);
    // The rotary add ([1,4,8,64], 2 × 3 µs) is not taken for a residual add.
    assert_eq!(j.unmatched.len(), 1);
    assert_eq!(j.unmatched[0].count, 2);
    assert!((j.unmatched_time.get() - 6e-6).abs() < 1e-15);
    let q = j
        .rows
        .iter()
        .find(|r| r.name == "q_proj")
        .ok_or("no q_proj")?;
    assert_eq!((q.events, q.expected_events), (2, 2));
    assert!(j.notes.is_empty(), "{:?}", j.notes);
    // Ratio = measured / predicted.
    assert!(
        (q.ratio.ok_or("expected a value, got None")?
            - q.measured.ok_or("expected a value, got None")?.get() / q.predicted.get())
        .abs()
            < 1e-12
    );
    Ok(())
}

#[test]
fn mismatches_are_named() -> Result<(), Box<dyn std::error::Error>> {
    // Predicted for bf16 while the profile ran fp32.
    let j = joined(Precision::Bf16, trace())?;
    assert!(
        j.notes.iter().any(|n| n.contains("--precision fp32")),
        "{:?}",
        j.notes
    );
    // A profile of another length: no GEMM matches, and the note names its m.
    let other: Vec<ProfiledKernel> = vec![op("aten::mm", &[&[128, 256], &[256, 256]], 10.0)];
    let j = joined(Precision::Fp32, other)?;
    assert!(
        j.notes.iter().any(|n| n.contains("m = 128")),
        "{:?}",
        j.notes
    );
    assert!(j.rows.iter().all(|r| r.measured.is_none()));
    // Two passes: every time halves, counts double.
    let mut twice = trace();
    twice.extend(trace());
    let mut p = profile(twice);
    p.steps = 2;
    let (m, w) = (small(), workload(Precision::Fp32));
    let a = analyze(&m, &w, &h100_sxm(), crate::memory::Reserve::DEFAULT)?;
    let j = join(&a, &p);
    assert_eq!(measured_us(&j, "q_proj")?, Some(200.0));
    let q = j
        .rows
        .iter()
        .find(|r| r.name == "q_proj")
        .ok_or("no q_proj")?;
    assert_eq!((q.events, q.expected_events), (4, 4));
    Ok(())
}
