//! `op attention`'s causal count and value head size, `--logits` on analyze and sweep, and what
//! a decode document carries, end to end: every expected figure is hand arithmetic written here.

mod common;

use common::{bad_input, json_of, roofline};
use predicates::prelude::*;
use serde_json::Value;

fn f(v: &Value, path: &str) -> f64 {
    v.pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {path} in {v}"))
}

/// The operator named `name` in stage `stage` of an `analyze` document.
fn op<'a>(doc: &'a Value, stage: usize, name: &str) -> &'a Value {
    doc["stages"][stage]["ops"]
        .as_array()
        .expect("ops")
        .iter()
        .find(|o| o["name"] == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

const ATTN: [&str; 10] = [
    "op",
    "attention",
    "--heads",
    "32",
    "--head-dim",
    "128",
    "--q-len",
    "2048",
    "--hardware",
    "h100-sxm",
];

#[test]
fn op_attention_causal_count_is_chosen_and_printed() {
    let with = |extra: &[&'static str]| {
        let mut a = ATTN.to_vec();
        a.extend_from_slice(extra);
        a
    };
    let (h, s, e) = (32.0, 2048.0, 128.0);
    // Exact (the default, the decoder's count): s·(s+1)/2 pairs, 4·e + 7 FLOP each.
    let exact = json_of(&with(&["--causal", "--fused"]));
    assert_eq!(
        f(&exact, "/kernels/0/flops"),
        h * s * (s + 1.0) / 2.0 * (4.0 * e + 7.0)
    );
    assert_eq!(exact["kernels"][0]["shape"]["causal_count"], "exact");
    // Half the square, FlashAttention-2's benchmark count 4·s²·e·h/2 for the two matmuls.
    let half = json_of(&with(&["--causal", "--fused", "--causal-count", "half"]));
    assert_eq!(
        f(&half, "/kernels/0/flops"),
        4.0 * s * s * e * h / 2.0 + 7.0 * h * s * s / 2.0
    );
    assert_eq!(half["kernels"][0]["shape"]["causal_count"], "half");
    assert!(half["operator"]
        .as_str()
        .expect("operator")
        .contains("half the square"));
    // --no-causal after --causal wins: every one of the s² pairs.
    let none = json_of(&with(&["--causal", "--no-causal", "--fused"]));
    assert_eq!(f(&none, "/kernels/0/flops"), h * s * s * (4.0 * e + 7.0));
    assert_eq!(none["kernels"][0]["shape"]["causal"], false);
    // The table states the convention.
    roofline()
        .args(with(&["--causal", "--fused"]))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "causal (pairs counted exactly, diagonal included: s·(s+1)/2)",
        ));
    roofline()
        .args(with(&["--causal"]))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "causal (eager: every score computed, masked or not)",
        ));
    // A count with nothing to count is refused.
    bad_input(
        &with(&["--fused", "--causal-count", "half"]),
        "--causal-count",
    );
    bad_input(
        &with(&["--causal", "--causal-count", "half"]),
        "--causal-count",
    );
}

/// DeepSeek-V3 (config.json: 128 heads, qk_nope_head_dim 128 + qk_rope_head_dim 64 = 192,
/// v_head_dim 128), prefill of 512 tokens in bf16, as `op attention --head-dim-v` and as the
/// decoder's MLA attention node: the same kernels, both equal to hand arithmetic.
#[test]
fn value_head_size_in_op_attention_and_the_mla_decoder() {
    let (h, s) = (128.0, 512.0);
    let shape = [
        "op",
        "attention",
        "--heads",
        "128",
        "--head-dim",
        "192",
        "--head-dim-v",
        "128",
        "--q-len",
        "512",
        "--causal",
        "--hardware",
        "h200",
    ];
    let mut fused = shape.to_vec();
    fused.push("--fused");
    let op_fused = json_of(&fused);
    let k = &op_fused["kernels"][0];
    // s·(s+1)/2 pairs of 2·192 (QKᵀ) + 2·128 (S·V) + 7 FLOP; Q and K 192 wide, V and O 128.
    let pairs = s * (s + 1.0) / 2.0;
    assert_eq!(
        f(k, "/flops"),
        h * pairs * (2.0 * 192.0 + 2.0 * 128.0 + 7.0)
    );
    assert_eq!(
        f(k, "/bytes_read"),
        s * h * 192.0 * 2.0 + h * s * (192.0 + 128.0) * 2.0
    );
    assert_eq!(f(k, "/bytes_written"), s * h * 128.0 * 2.0);
    assert!(op_fused["operator"]
        .as_str()
        .expect("operator")
        .contains("head-dim=192 head-dim-v=128"));

    let model = |flash: bool| {
        let mut a = vec![
            "analyze",
            "deepseek-v3",
            "--stage",
            "prefill",
            "--seq-len",
            "512",
            "--hardware",
            "h200",
        ];
        a.push(if flash {
            "--flash-attention"
        } else {
            "--no-flash-attention"
        });
        json_of(&a)
    };
    let fused_graph = model(true);
    let node = op(&fused_graph, 0, "attention");
    for key in ["flops", "bytes_read", "bytes_written"] {
        assert_eq!(node[key], k[key], "{key}");
    }

    // Unfused: QKᵀ reduces over 192, S·V produces 128 per head.
    let op_eager = json_of(&shape);
    let eager_graph = model(false);
    assert_eq!(f(&op_eager, "/kernels/0/flops"), 2.0 * h * s * s * 192.0);
    assert_eq!(f(&op_eager, "/kernels/2/flops"), 2.0 * h * s * s * 128.0);
    assert_eq!(
        f(&op_eager, "/kernels/2/bytes_written"),
        h * s * 128.0 * 2.0
    );
    for (i, name) in ["qk_matmul", "softmax", "sv_matmul"].iter().enumerate() {
        let node = op(&eager_graph, 0, name);
        for key in ["flops", "bytes_read", "bytes_written"] {
            assert_eq!(node[key], op_eager["kernels"][i][key], "{name} {key}");
        }
    }
}

#[test]
fn logits_all_runs_lm_head_on_every_position() {
    // Llama-2-7B, batch 2, prompts of 1024: lm_head over 2·1024 rows of 4096 into 32000.
    let (t, d, v) = (2.0 * 1024.0, 4096.0, 32000.0);
    let run = |logits: &'static str| {
        json_of(&[
            "analyze",
            "llama-2-7b",
            "--batch",
            "2",
            "--seq-len",
            "1024",
            "--hardware",
            "h100-sxm",
            "--logits",
            logits,
        ])
    };
    let (last, all) = (run("last"), run("all"));
    assert_eq!(f(op(&last, 0, "lm_head"), "/flops"), 2.0 * 2.0 * d * v);
    assert_eq!(f(op(&all, 0, "lm_head"), "/flops"), 2.0 * t * d * v);
    assert_eq!(f(op(&all, 0, "lm_head"), "/bytes_written"), t * v * 2.0);
    assert_eq!(last["stages"][0]["workload"]["logits"], "last");
    assert_eq!(all["stages"][0]["workload"]["logits"], "all");
    // The prefill totals differ by lm_head alone; decode not at all.
    let diff = f(&all, "/stages/0/totals/flops") - f(&last, "/stages/0/totals/flops");
    assert_eq!(diff, 2.0 * (t - 2.0) * d * v);
    assert_eq!(last["stages"][1]["totals"], all["stages"][1]["totals"]);

    // sweep prints it and counts it the same.
    let sweep = json_of(&[
        "sweep",
        "llama-2-7b",
        "--stage",
        "prefill",
        "--batch",
        "2",
        "--seq-len",
        "1024",
        "--logits",
        "all",
    ]);
    assert_eq!(sweep["groups"][0]["logits"], "all");
    assert_eq!(
        f(&sweep, "/groups/0/points/0/flops"),
        f(&all, "/stages/0/totals/flops")
    );
    roofline()
        .args([
            "analyze",
            "--stage",
            "prefill",
            "--logits",
            "all",
            "--hardware",
            "h100-sxm",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "sequence length 2048, logits on every position",
        ));
}

#[test]
fn mfu_graph_row_is_analyze_with_logits_on_every_position() {
    // mfu's graph row is 3 × the forward matrix FLOPs per token of one sequence with logits at
    // every position: its forward per token × T is the GEMMs and batched matmuls of analyze's
    // prefill with --logits all, exactly. The eager graph computes every score, masked or not,
    // so mfu counts them all with --no-causal.
    let s = 1024.0;
    let mfu = json_of(&[
        "mfu",
        "llama-2-7b",
        "--no-causal",
        "--seq-len",
        "1024",
        "--tokens-per-s",
        "1000",
        "--hardware",
        "h100-sxm",
    ]);
    let graph = mfu["formulas"]
        .as_array()
        .expect("formulas")
        .iter()
        .find(|r| r["formula"] == "graph")
        .expect("the graph row");
    let fw = &graph["forward_flops_per_token"];
    let per_token = f(fw, "/blocks") + f(fw, "/attention") + f(fw, "/head");
    let analysis = json_of(&[
        "analyze",
        "llama-2-7b",
        "--stage",
        "prefill",
        "--seq-len",
        "1024",
        "--hardware",
        "h100-sxm",
        "--logits",
        "all",
        "--no-flash-attention",
    ]);
    let total: f64 = analysis["stages"][0]["ops"]
        .as_array()
        .expect("ops")
        .iter()
        .filter(|o| o["kind"] == "gemm" || o["kind"] == "batched_matmul")
        .map(|o| f(o, "/flops") * f(o, "/count"))
        .sum();
    assert!((per_token * s - total).abs() <= 1e-12 * total);
    // Its head is Megatron's logit term 2·V·d per token, nothing for the final RMSNorm (vector
    // work) or the embedding lookup (a gather, no FLOPs).
    let head = f(fw, "/head");
    assert_eq!(head, 2.0 * 32000.0 * 4096.0);
}

#[test]
fn decode_documents_carry_no_prompt_length() {
    let a = json_of(&["analyze", "llama-2-7b", "--stage", "both"]);
    let (pre, dec) = (&a["stages"][0]["workload"], &a["stages"][1]["workload"]);
    assert_eq!(pre["seq_len"], 2048);
    // A decode step has no prompt: its lengths are the cached tokens and the keys attended.
    assert!(dec.get("seq_len").is_none(), "{dec}");
    assert_eq!(
        (dec["context"].clone(), dec["kv_len"].clone()),
        (2048.into(), 2049.into())
    );
    assert_eq!(dec["tokens"], 1);
    let s = json_of(&["sweep", "llama-2-7b", "--stage", "both", "--batch", "1"]);
    let groups = s["groups"].as_array().expect("groups");
    assert_eq!(groups[0]["stage"], "prefill");
    assert_eq!(groups[0]["seq_len"], 2048);
    assert_eq!(groups[1]["stage"], "decode");
    assert!(groups[1].get("seq_len").is_none(), "{}", groups[1]);
    assert_eq!(groups[1]["context"], 2048);
}
