//! The PyTorch-profiler reader on a real CPU trace: `fixtures/small-llama-cpu-trace.json`, one
//! prefill (batch 1, 64 tokens, fp32, eager attention, `logits_to_keep=1`) of the small Llama in
//! `scripts/small-llama/config.json` (hidden 256, 4 layers, 4 heads, 2 kv heads, head 64,
//! intermediate 688, vocab 1000, random weights), recorded on this machine's 2 vCPUs by
//! `scripts/small-llama/profile_cpu.py` (torch 2.15.0, transformers 5.24.0): 1144 `cpu_op`
//! events and one `ProfilerStep#11`, one event a line. Every expected value is read by hand
//! from the file (`grep -n '"name":"aten::linear"'` …) and written here with its line number;
//! derived values are hand arithmetic on those.

use roofline_core::ops::Compute;
use roofline_core::precision::Precision;
use roofline_core::profile::{ArgShape, CostSource, Profile, ProfileFormat, ProfiledKernel};
use roofline_inputs::profile::{load, Imported};
use std::path::PathBuf;

fn trace() -> Profile {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small-llama-cpu-trace.json");
    match load(&path).unwrap() {
        Imported::Profile(p) => p,
        Imported::Roof(_) => panic!("the trace read as a roof"),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs()
}

fn named<'a>(p: &'a Profile, name: &str) -> Vec<&'a ProfiledKernel> {
    p.kernels.iter().filter(|k| k.name == name).collect()
}

fn dims(k: &ProfiledKernel) -> Vec<Vec<u64>> {
    k.op.as_ref()
        .unwrap()
        .shapes
        .iter()
        .map(|s| match s {
            ArgShape::Tensor(d) => d.clone(),
            ArgShape::List(_) => panic!("a list argument"),
        })
        .collect()
}

#[test]
fn one_step_and_the_outermost_costed_operators() {
    // Line 6: `ProfilerStep#11`, the only step. No operator lacks `Input Dims`: no note.
    let p = trace();
    assert_eq!(p.format, ProfileFormat::TorchTrace);
    assert_eq!(p.steps, 1);
    assert!(p.notes.is_empty(), "{:?}", p.notes);
    // Costed operators, outermost only. Per block: 2 norms as pieces (pow, mean, add, rsqrt,
    // mul, mul) = 12; 7 linears; rotary on q and on k (mul, neg, cat, mul, add) = 10; the KV
    // cache's 2 cats; repeat_kv's 2 clones; qk matmul, scale mul, mask add, softmax, sv matmul
    // = 5; the clone of the transposed output; 2 residual adds; silu and its mul = 43, × 4 =
    // 172. Before the blocks: embedding, the rotary table (mul of inv_freq by the positions,
    // cat, cos, sin, 2 muls by the attention scaling) = 7; after: the final norm's 6 pieces and
    // lm_head = 7. 172 + 7 + 7 = 186.
    assert_eq!(p.kernels.len(), 186);
    assert!(p
        .kernels
        .iter()
        .all(|k| k.cost_source == CostSource::CostModel));
    // Operators inside a costed one are not kernels again: aten::mm (29 events, in the
    // linears), aten::bmm (8, in the attention matmuls), aten::_softmax (4), aten::t,
    // aten::index_select (in the embedding), aten::sum and aten::div_ (in the means).
    for inner in [
        "aten::mm",
        "aten::bmm",
        "aten::_softmax",
        "aten::t",
        "aten::index_select",
        "aten::sum",
        "aten::div_",
    ] {
        assert!(named(&p, inner).is_empty(), "{inner}");
    }
    for (name, n) in [
        ("aten::linear", 29),
        ("aten::matmul", 8),
        ("aten::softmax", 4),
        ("aten::silu", 4),
        ("aten::pow", 9),
        ("aten::mean", 9),
        ("aten::rsqrt", 9),
        ("aten::neg", 8),
        ("aten::embedding", 1),
    ] {
        assert_eq!(named(&p, name).len(), n, "{name}");
    }
    // The time accounted for: top-level operators only, within the step's 19079.623 µs.
    assert!(p.total_time.get() > 0.0 && p.total_time.get() < 19079.623e-6);
}

#[test]
fn linears_carry_their_input_dims_and_duration() -> Result<(), Box<dyn std::error::Error>> {
    // `grep -n '"name":"aten::linear"'`: 29 events, every one with Input type
    // ["float","float",""] (no bias). Input Dims, in file order per block: q_proj
    // [[1,64,256],[256,256],[]], k_proj and v_proj [[1,64,256],[128,256],[]], o_proj as q_proj,
    // gate_proj and up_proj [[1,64,256],[688,256],[]], down_proj [[1,64,688],[256,688],[]];
    // last, lm_head [[1,1,256],[1000,256],[]] (logits_to_keep=1: one position).
    let p = trace();
    let lin = named(&p, "aten::linear");
    let block: [(&[u64], &[u64]); 7] = [
        (&[1, 64, 256], &[256, 256]),
        (&[1, 64, 256], &[128, 256]),
        (&[1, 64, 256], &[128, 256]),
        (&[1, 64, 256], &[256, 256]),
        (&[1, 64, 256], &[688, 256]),
        (&[1, 64, 256], &[688, 256]),
        (&[1, 64, 688], &[256, 688]),
    ];
    for (i, k) in lin.iter().take(28).enumerate() {
        let (x, w) = block[i % 7];
        assert_eq!(dims(k), [x.to_vec(), w.to_vec(), vec![]], "linear {i}");
    }
    assert_eq!(dims(lin[28]), [vec![1, 1, 256], vec![1000, 256], vec![]]);
    assert_eq!(
        lin[28].shaped_as.as_deref(),
        Some("gemm m=1 n=1000 k=256 fp32")
    );
    // Line 122, block 0's q_proj: ts 1806.487, dur 229.55, External id 7797. It holds aten::t
    // (line 123) and aten::matmul (line 126, 208.551 µs) holding aten::mm (line 129,
    // 187.873 µs): one kernel of 229.55 µs, 2·64·256·256 = 8,388,608 FLOP; reads
    // (64·256 + 256·256)·4 = 327,680 B, writes 64·256·4 = 65,536 B.
    let q = lin[0];
    assert!(close(q.duration.get(), 229.55e-6));
    assert_eq!(
        q.op.as_ref().ok_or("expected a value, got None")?.instance,
        Some(7797)
    );
    assert_eq!(q.total_flops().get(), 8_388_608.0);
    assert_eq!(
        q.bytes_read.ok_or("expected a value, got None")?.get(),
        327_680.0
    );
    assert_eq!(
        q.bytes_written.ok_or("expected a value, got None")?.get(),
        65_536.0
    );
    assert_eq!(q.compute, Some(Compute::Matrix(Precision::Fp32)));
    assert_eq!(q.shaped_as.as_deref(), Some("gemm m=64 n=256 k=256 fp32"));
    // Line 1140, lm_head: dur 147.667.
    assert!(close(lin[28].duration.get(), 147.667e-6));
    Ok(())
}

#[test]
fn attention_matmuls_softmax_and_embedding() {
    // Line 238, block 0's QKᵀ: aten::matmul [[1,4,64,64],[1,4,64,64]], dur 103.705, holding
    // aten::bmm [[4,64,64],[4,64,64]] (line 247): a batched matmul of 4 heads, 2·4·64³ =
    // 2,097,152 FLOP. Line 262, S·V: the same shapes, dur 87.975.
    let p = trace();
    let mm = named(&p, "aten::matmul");
    assert_eq!(dims(mm[0]), [vec![1, 4, 64, 64], vec![1, 4, 64, 64]]);
    assert!(close(mm[0].duration.get(), 103.705e-6));
    assert!(close(mm[1].duration.get(), 87.975e-6));
    assert_eq!(mm[0].total_flops().get(), 2_097_152.0);
    assert_eq!(
        mm[0].shaped_as.as_deref(),
        Some("bmm batch=4 m=64 n=64 k=64 fp32")
    );
    // Line 257: aten::softmax [[1,4,64,64],[],[]], dur 43.311, holding aten::_softmax (line
    // 259, 34.434 µs): 4·64 = 256 rows of 64.
    let sm = named(&p, "aten::softmax");
    assert!(close(sm[0].duration.get(), 43.311e-6));
    assert_eq!(sm[0].shaped_as.as_deref(), Some("softmax 256×64 fp32"));
    // Line 7: aten::embedding [[1000,256],[1,64],…], dur 100.719: 64 tokens of 256.
    let e = named(&p, "aten::embedding");
    assert!(close(e[0].duration.get(), 100.719e-6));
    assert_eq!(e[0].shaped_as.as_deref(), Some("embedding 64×256 fp32"));
}
