//! Every command evaluates the same built graph: on every embedded preset at several workloads,
//! `analyze`, `sweep`, `analyze --fusion eager`, `analyze --explain`, `op`, `mbu`, `mfu` (our
//! graph's row, its matrix operators) and `report` report the same FLOPs, bytes, times and memory for the same
//! configuration. Each figure is compared with `analyze`'s, exactly where the two are the same
//! computation and by the stated identity where a command counts differently (`mfu` charges
//! lm_head on every position of the sequence, `analyze` on the last one).

mod common;

use common::{json_of, roofline};
use serde_json::Value;

const CHIP: &str = "h100-sxm";

/// (batch, prefill prompt, decode context, flash attention).
const WORKLOADS: [(u64, u64, u64, bool); 3] = [
    (1, 512, 1024, false),
    (8, 2048, 4096, false),
    (3, 1000, 300, true),
];

fn num(v: &Value, path: &str) -> f64 {
    v.pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {path} in {v}"))
}

fn presets() -> Vec<String> {
    let v = json_of(&["models"]);
    v.as_array()
        .or_else(|| v["models"].as_array())
        .expect("a list of presets")
        .iter()
        .map(|m| m["name"].as_str().expect("a preset name").to_string())
        .collect()
}

fn workload_args(b: u64, s: u64, c: u64, flash: bool) -> Vec<String> {
    let mut a: Vec<String> = [
        "--hardware",
        CHIP,
        "--batch",
        &b.to_string(),
        "--seq-len",
        &s.to_string(),
        "--context",
        &c.to_string(),
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();
    a.push(
        if flash {
            "--flash-attention"
        } else {
            "--no-flash-attention"
        }
        .into(),
    );
    a
}

fn run(args: &[String]) -> Value {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    json_of(&refs)
}

#[test]
fn every_command_reports_the_same_numbers() {
    for id in presets() {
        for (wi, &(b, s, c, flash)) in WORKLOADS.iter().enumerate() {
            let wl = workload_args(b, s, c, flash);
            let with = |cmd: &[&str]| {
                let mut a: Vec<String> = cmd.iter().map(|x| x.to_string()).collect();
                a.push(id.clone());
                a.extend(wl.iter().cloned());
                a
            };
            let analysis = run(&with(&["analyze", "--stage", "both"]));
            let stages = analysis["stages"].as_array().expect("stages");
            assert_eq!(stages.len(), 2, "{id}");

            // sweep: the same step, the same memory.
            let sweep = run(&with(&["sweep", "--stage", "both"]));
            let groups = sweep["groups"].as_array().expect("groups");
            for (stage, group) in stages.iter().zip(groups) {
                let t = &stage["totals"];
                let m = &stage["memory"];
                let p = &group["points"][0];
                let what = format!("{id} workload {wi} sweep {}", stage["stage"]);
                assert_eq!(num(p, "/flops"), num(t, "/flops"), "{what}");
                assert_eq!(num(p, "/bytes"), num(t, "/bytes"), "{what}");
                assert_eq!(num(p, "/step_time_s"), num(t, "/time_s"), "{what}");
                for (sk, ak) in [
                    ("weights_bytes", "weights_bytes"),
                    ("kv_cache_bytes", "kv_cache_bytes"),
                    ("activation_bytes", "activation_bytes"),
                    ("reserve_bytes", "reserve_bytes"),
                    ("memory_bytes", "total_bytes"),
                ] {
                    assert_eq!(p[sk], m[ak], "{what}: {sk}");
                }
                assert_eq!(p["fits"], m["fits_on_chip"], "{what}");
            }

            // --fusion eager: every operator its own kernel, priced as the analysis prices it.
            let fused = run(&with(&["analyze", "--stage", "both", "--fusion", "eager"]));
            for (stage, f) in stages
                .iter()
                .zip(fused["stages"].as_array().expect("stages"))
            {
                let t = &stage["totals"];
                let before = &f["fusion"]["before"];
                let what = format!("{id} workload {wi} fusion {}", stage["stage"]);
                assert_eq!(num(before, "/flops"), num(t, "/flops"), "{what}");
                assert_eq!(num(before, "/kernels"), num(t, "/kernels"), "{what}");
                let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
                assert!(
                    close(num(before, "/bytes_read"), num(t, "/bytes_read")),
                    "{what}"
                );
                assert!(close(num(before, "/time_s"), num(t, "/time_s")), "{what}");
            }

            // --explain: each operator's derivation arrives at its row (every operator of the
            // first workload, the slowest of each stage for the others).
            for stage in stages {
                let name = stage["stage"].as_str().expect("stage");
                let ops = stage["ops"].as_array().expect("ops");
                let chosen: Vec<&Value> = if wi == 0 {
                    ops.iter().collect()
                } else {
                    let slowest = ops
                        .iter()
                        .max_by(|x, y| num(x, "/time_s").total_cmp(&num(y, "/time_s")))
                        .expect("an operator");
                    vec![slowest]
                };
                for op in chosen {
                    let op_name = op["name"].as_str().expect("name");
                    // One stage: the other stage's length flag left out.
                    let other = if name == "prefill" {
                        "--context"
                    } else {
                        "--seq-len"
                    };
                    let mut args = with(&["analyze", "--stage", name, "--explain", op_name]);
                    if let Some(i) = args.iter().position(|x| x == other) {
                        args.drain(i..i + 2);
                    }
                    let d = run(&args);
                    let row = &d["derivations"][0]["row"];
                    let what = format!("{id} workload {wi} {name} explain {op_name}");
                    assert_eq!(num(row, "/cost/flops"), num(op, "/flops"), "{what}");
                    assert_eq!(
                        num(row, "/cost/bytes_read"),
                        num(op, "/bytes_read"),
                        "{what}"
                    );
                    assert_eq!(num(row, "/point/time"), num(op, "/time_s"), "{what}");
                    assert_eq!(num(row, "/count"), num(op, "/count"), "{what}");
                }
            }

            // op gemm: the lm_head of decode (M = batch rows, N = vocab, K = hidden) on its own.
            let decode = &stages[1];
            let head = decode["ops"]
                .as_array()
                .expect("ops")
                .iter()
                .find(|o| o["role"] == "lm_head")
                .expect("an lm_head");
            let hidden = analysis["model"]["hidden_size"].as_u64().expect("hidden");
            let vocab = analysis["model"]["vocab_size"].as_u64().expect("vocab");
            let op = json_of(&[
                "op",
                "gemm",
                "--m",
                &b.to_string(),
                "--n",
                &vocab.to_string(),
                "--k",
                &hidden.to_string(),
                "--hardware",
                CHIP,
            ]);
            let k = &op["kernels"][0];
            let what = format!("{id} workload {wi} op gemm");
            assert_eq!(num(k, "/flops"), num(head, "/flops"), "{what}");
            assert_eq!(num(k, "/bytes_read"), num(head, "/bytes_read"), "{what}");
            assert_eq!(num(k, "/time_s"), num(head, "/time_s"), "{what}");

            // mbu: the decode step's FLOPs and KV cache are the analysis's.
            let mbu = json_of(&[
                "mbu",
                &id,
                "--tpot",
                "20ms",
                "--batch",
                &b.to_string(),
                "--context",
                &c.to_string(),
                "--hardware",
                CHIP,
            ]);
            let what = format!("{id} workload {wi} mbu");
            let dt = &decode["totals"];
            let dm = &decode["memory"];
            if !flash {
                assert_eq!(num(&mbu, "/flops_per_step"), num(dt, "/flops"), "{what}");
            }
            assert_eq!(
                num(&mbu, "/kv_cache_bytes"),
                num(dm, "/kv_cache_bytes"),
                "{what}"
            );

            // mfu, our graph's row: per token, the matrix operators of the prefill of one
            // sequence with lm_head on every position: (blocks + attention + head) · T =
            // F_matmul + lm_head · (T − 1).
            if b == 1 && !flash {
                let mfu = json_of(&[
                    "mfu",
                    &id,
                    "--seq-len",
                    &s.to_string(),
                    "--tokens-per-s",
                    "1000",
                    "--hardware",
                    CHIP,
                    // The eager graph computes every score; so does `analyze`.
                    "--no-causal",
                ]);
                let graph = mfu["formulas"]
                    .as_array()
                    .expect("formulas")
                    .iter()
                    .find(|f| f["formula"] == "graph")
                    .expect("the graph row");
                let f = &graph["forward_flops_per_token"];
                let per_token = num(f, "/blocks") + num(f, "/attention") + num(f, "/head");
                let prefill = &stages[0];
                let lm = prefill["ops"]
                    .as_array()
                    .expect("ops")
                    .iter()
                    .find(|o| o["role"] == "lm_head")
                    .map(|o| num(o, "/flops"))
                    .expect("an lm_head");
                let t = s as f64;
                let matmul: f64 = prefill["ops"]
                    .as_array()
                    .expect("ops")
                    .iter()
                    .filter(|o| {
                        ["gemm", "batched_matmul", "expert_gemm"]
                            .contains(&o["kind"].as_str().unwrap_or(""))
                    })
                    .map(|o| num(o, "/flops") * num(o, "/count"))
                    .sum();
                let want = matmul + lm * (t - 1.0);
                let what = format!("{id} mfu graph");
                assert!((per_token * t - want).abs() <= 1e-9 * want, "{what}");
            }

            // report: the page states the analysis's totals as the table prints them.
            if wi == 0 {
                let dir = tempfile::tempdir().expect("a temp dir");
                let page = dir.path().join("r.html");
                let mut a = with(&["report", "--out"]);
                a.insert(2, page.display().to_string());
                roofline().args(&a).assert().success();
                let html = std::fs::read_to_string(&page).expect("the page");
                let mut t = with(&["analyze", "--stage", "both"]);
                t.push("--format".into());
                t.push("table".into());
                let table = roofline().args(&t).assert().success().get_output().clone();
                let table = String::from_utf8_lossy(&table.stdout);
                // One total and one memory line per stage, each found in the page.
                let count = |p: &str| table.lines().filter(|l| l.starts_with(p)).count();
                assert_eq!((count("total: "), count("memory: ")), (2, 2), "{id}");
                for line in table.lines().filter(|l| l.starts_with("total: ")) {
                    let time = line.rsplit("= ").next().expect("a total time");
                    assert!(html.contains(time.trim()), "{id}: {time} not in the report");
                }
                for line in table.lines().filter(|l| l.starts_with("memory: ")) {
                    let total = line
                        .split(" = ")
                        .nth(1)
                        .and_then(|x| x.split(" of ").next())
                        .expect("a memory total");
                    assert!(
                        html.contains(total),
                        "{id}: memory {total} not in the report"
                    );
                }
            }
        }
    }
}

#[test]
fn the_memory_reserve_is_counted_and_checked() {
    // Llama-2-7B decoding at context 2048 on the RTX A6000 (48 GB), bf16: weights
    // 6,738,415,616·2 B; KV cache 2·32·2049·4096·2 B; activations at the softmax, the residual
    // 4096·2 B and the scores and probabilities 2·32·2049·2 B.
    let weights = 6_738_415_616.0 * 2.0;
    let kv = 2.0 * 32.0 * 2049.0 * 4096.0 * 2.0;
    let act = 4096.0 * 2.0 + 2.0 * 32.0 * 2049.0 * 2.0;
    for (reserve, bytes) in [
        ("10%", 4.8e9),
        ("0", 0.0),
        ("2GB", 2e9),
        ("1GiB", 1073741824.0),
    ] {
        let v = json_of(&[
            "analyze",
            "--hardware",
            "a6000",
            "--no-flash-attention",
            "--stage",
            "decode",
            "--memory-reserve",
            reserve,
        ]);
        let m = &v["stages"][0]["memory"];
        assert_eq!(num(m, "/reserve_bytes"), bytes, "{reserve}");
        assert_eq!(num(m, "/activation_bytes"), act);
        assert_eq!(
            num(m, "/total_bytes"),
            weights + kv + act + bytes,
            "{reserve}"
        );
    }
    // A reserve that leaves nothing, and a bare number that would be bytes: bad input.
    common::bad_input(
        &[
            "analyze",
            "--hardware",
            "a6000",
            "--stage",
            "decode",
            "--memory-reserve",
            "48GB",
        ],
        "--memory-reserve",
    );
    common::bad_input(
        &["sweep", "--hardware", "a6000", "--memory-reserve", "1TB"],
        "--memory-reserve",
    );
    roofline()
        .args(["analyze", "--memory-reserve", "0.9"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("has no unit"));
}

/// A command's JSON for string arguments.
fn json(args: &[&str]) -> Value {
    json_of(args)
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

/// One pricing of a step: the bound is the same figure in `analyze` (its parallel step) and in
/// `generate` (its TPOT), and neither has the launches in it: they are the named addend
/// `launch_and_host_s`, the chip's 5 µs once per kernel.
#[test]
fn the_bound_of_a_decode_step_is_one_figure_and_launches_are_beside_it() {
    let a = json(&[
        "analyze",
        "llama-3.1-70b",
        "--hardware",
        "h100-sxm",
        "--tp",
        "8",
        "--stage",
        "decode",
        "--batch",
        "16",
        "--context",
        "4096",
        "--no-flash-attention",
    ]);
    let g = json(&[
        "generate",
        "llama-3.1-70b",
        "--hardware",
        "h100-sxm",
        "--tp",
        "8",
        "--batch",
        "16",
        "--prompt",
        "4096",
        "--generate",
        "2",
        "--no-flash-attention",
    ]);
    let step = num(&a, "/stages/0/step_time_s");
    let path = num(&a, "/stages/0/schedule/critical_path_s");
    assert_eq!(step, path, "the bound is the critical path, no launch");
    assert!(close(num(&g, "/bound/tpot"), step, 1e-12));
    assert_eq!(num(&a, "/headline/decode/tpot_s"), step);
    // The launches: one per kernel, 5 µs each on the H100 SXM.
    let kernels = num(&a, "/stages/0/totals/kernels");
    let launch = num(&a, "/stages/0/launch_and_host_s");
    assert!(
        close(launch, kernels * 5e-6, 1e-12),
        "{launch} vs {kernels} × 5 µs"
    );
    assert_eq!(num(&a, "/headline/decode/launch_and_host_s"), launch);
}

/// `sweep` prices a decode step the same with or without a parallel flag (`--tp 1` is one
/// device): the bound, launches outside it in both.
#[test]
fn sweep_prices_a_step_the_same_with_and_without_tp_1() {
    let args = [
        "sweep",
        "llama-3.1-8b",
        "--hardware",
        "a6000",
        "--stage",
        "decode",
        "--batch",
        "20",
        "--context",
        "8192",
    ];
    let one = json(&args);
    let mut tp: Vec<&str> = args.to_vec();
    tp.extend(["--tp", "1"]);
    let tp1 = json(&tp);
    let a = num(&one, "/groups/0/points/0/step_time_s");
    let b = num(&tp1, "/series/0/points/0/step_time_s");
    assert_eq!(a, b);
}

/// The simulator prices its steps exactly as `generate` prices a request: one request alone
/// has the TTFT and TPOT of `generate --batch 1` on every preset, mixtures of experts included
/// (their experts touched are evaluated at each step's tokens, not fitted).
#[test]
fn serve_sim_with_one_request_is_generate_at_batch_1_on_every_preset() {
    for model in presets() {
        // The smallest layout whose KV cache has room beside the weights (GPT-3 175B and
        // DeepSeek-V3 need several H100s; heads must divide by the tensor-parallel degree).
        let sim = |tp: &str, pp: &str| {
            roofline()
                .args([
                    "serve-sim",
                    &model,
                    "--hardware",
                    "h100-sxm",
                    "--tp",
                    tp,
                    "--pp",
                    pp,
                ])
                .args(["--requests", "1", "--prompt-dist", "fixed:512"])
                .args([
                    "--output-dist",
                    "fixed:16",
                    "--rate",
                    "1/s",
                    "--format",
                    "json",
                ])
                .output()
                .expect("runs")
        };
        let layouts = [
            ("1", "1"),
            ("2", "1"),
            ("4", "1"),
            ("8", "1"),
            ("8", "2"),
            ("8", "4"),
        ];
        let (tp, pp, out) = layouts
            .iter()
            .map(|&(tp, pp)| (tp, pp, sim(tp, pp)))
            .find(|(_, _, o)| o.status.success())
            .unwrap_or_else(|| panic!("{model}: no layout up to tp 8 × pp 4 serves it"));
        let s: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let g = json(&[
            "generate",
            &model,
            "--hardware",
            "h100-sxm",
            "--tp",
            tp,
            "--pp",
            pp,
            "--batch",
            "1",
            "--prompt",
            "512",
            "--generate",
            "16",
        ]);
        let (gt, st) = (num(&g, "/bound/ttft"), num(&s, "/summary/ttft/mean"));
        assert!(
            close(gt, st, 1e-9),
            "{model}: TTFT generate {gt} serve-sim {st}"
        );
        let (gp, sp) = (num(&g, "/bound/tpot"), num(&s, "/summary/tpot/mean"));
        assert!(
            close(gp, sp, 1e-9),
            "{model}: TPOT generate {gp} serve-sim {sp}"
        );
    }
}

/// `plan --stage train` and `train` price a layout the same way, with the same attention
/// kernel: the best plan's layout, given to `train`, has the plan's bound, estimate and memory.
#[test]
fn a_training_plan_is_what_train_gives_for_its_layout() {
    let p = json(&[
        "plan",
        "llama-3.1-8b",
        "--stage",
        "train",
        "--devices",
        "8",
        "--global-batch",
        "64",
        "--seq-len",
        "4096",
        "--top",
        "1",
    ]);
    let best = &p["plans"][0];
    let int = |k: &str| {
        best[k]
            .as_u64()
            .unwrap_or_else(|| panic!("no {k} in {best}"))
            .to_string()
    };
    let text = |k: &str| {
        best[k]
            .as_str()
            .unwrap_or_else(|| panic!("no {k}"))
            .to_string()
    };
    let (tp, pp, dp, cp, mb, zero) = (
        int("tp"),
        int("pp"),
        int("dp"),
        int("cp"),
        int("micro_batch"),
        int("zero"),
    );
    let (recompute, schedule) = (text("recompute"), text("schedule"));
    let mut args = vec![
        "train",
        "llama-3.1-8b",
        "--devices",
        "8",
        "--global-batch",
        "64",
        "--seq-len",
        "4096",
        "--tp",
        &tp,
        "--pp",
        &pp,
        "--dp",
        &dp,
        "--cp",
        &cp,
        "--micro-batch",
        &mb,
        "--zero",
        &zero,
        "--recompute",
        &recompute,
        "--schedule",
        &schedule,
    ];
    if best["sequence_parallel"] == true {
        args.push("--sequence-parallel");
    }
    let t = json(&args);
    assert_eq!(
        num(&t, "/bound/step_time_s"),
        num(best, "/step_time_bound_s")
    );
    assert_eq!(num(&t, "/estimate/step_time_s"), num(best, "/step_time_s"));
    assert_eq!(
        num(&t, "/bound/memory/total_bytes"),
        num(best, "/memory_per_device_bytes")
    );
}

/// One efficiency, the chip's: `train`'s estimate and `generate`'s use the same shares on the
/// same chip, fp8 its own (the H100 SXM's published 1402.6 of 1979 TFLOP/s, beside bf16's 794.5
/// of 989).
#[test]
fn train_and_generate_estimate_at_the_same_shares() {
    let t = json(&[
        "train",
        "llama-3.1-8b",
        "--devices",
        "8",
        "--dp",
        "8",
        "--global-batch",
        "64",
        "--seq-len",
        "4096",
    ]);
    let g = json(&["generate", "llama-3.1-8b"]);
    for k in [
        "matmul",
        "matmul_fp8",
        "attention",
        "vector",
        "memory",
        "network",
    ] {
        assert_eq!(
            t["estimate"]["efficiency"][k], g["efficiency"]["shares"][k],
            "{k}"
        );
    }
    assert!((num(&g, "/efficiency/shares/matmul") - 794.5 / 989.0).abs() < 1e-12);
    assert!((num(&g, "/efficiency/shares/matmul_fp8") - 1402.6 / 1979.0).abs() < 1e-12);
}

/// Model FLOPs are a convention of the model's math (PaLM App. B; Megatron-LM's count with the
/// causal half of the scores), so `train` counts the same per token with FlashAttention and
/// without, and `mfu`'s graph row counts that too; the kernels' own FLOPs are hardware FLOPs.
#[test]
fn model_flops_per_token_are_one_figure_whatever_the_attention_kernel() {
    // Llama-3.1-8B: L = 32 blocks, d = 4096, 32 query heads of Q = 128 (H·Q = 4096), 8 KV heads
    // (K and V 1024 wide), a SwiGLU MLP of 14336, V = 128256, lm_head untied. The matrices a
    // token multiplies by: per block q and o 4096², k and v 4096·1024, gate, up and down
    // 3·4096·14336; lm_head 128256·4096 (the input embedding is looked up, 0 FLOP):
    // N = 32·(2·16,777,216 + 2·4,194,304 + 176,160,768) + 525,336,576 = 7,504,658,432.
    // At T = 4096: 6N = 45,027,950,592, and the causal scores (QKᵀ and S·V over T²/2 pairs a
    // head, forward 2·2·H·Q·T/2 a token and block, × 3) 6·L·H·Q·T = 6·32·4096·4096 =
    // 3,221,225,472: 48,249,176,064 FLOP a token.
    let n: f64 = 32.0 * (2.0 * 4096.0 * 4096.0 + 2.0 * 4096.0 * 1024.0 + 3.0 * 4096.0 * 14336.0)
        + 128256.0 * 4096.0;
    assert_eq!(n, 7_504_658_432.0);
    let hand = 6.0 * n + 6.0 * 32.0 * 4096.0 * 4096.0;
    assert_eq!(hand, 48_249_176_064.0);

    let tokens = 64.0 * 4096.0;
    let train = |flash: bool| {
        let mut args = vec![
            "train",
            "llama-3.1-8b",
            "--hardware",
            "h100-sxm",
            "--devices",
            "8",
            "--dp",
            "8",
            "--global-batch",
            "64",
            "--seq-len",
            "4096",
        ];
        if !flash {
            args.push("--no-flash-attention");
        }
        json(&args)
    };
    let (fa, eager) = (train(true), train(false));
    for (what, doc) in [("flash", &fa), ("eager", &eager)] {
        for side in ["bound", "estimate"] {
            let per_token = num(doc, &format!("/{side}/model_flops")) / tokens;
            assert!(
                close(per_token, hand, 1e-12),
                "train {what} {side}: {per_token} vs {hand}"
            );
        }
    }
    assert_eq!(
        num(&fa, "/bound/model_flops"),
        num(&eager, "/bound/model_flops")
    );
    // The kernels differ in what they execute (hardware FLOPs): FlashAttention-2's backward
    // recomputes the scores, an eager kernel computes every score under the mask.
    let hw = |d: &Value| num(d, "/bound/hardware_flops") / tokens;
    assert!(
        hand < hw(&fa) && hw(&fa) < hw(&eager),
        "{} {}",
        hw(&fa),
        hw(&eager)
    );

    // mfu: the graph row (causal, the default) is the same figure.
    let mfu = json(&[
        "mfu",
        "llama-3.1-8b",
        "--seq-len",
        "4096",
        "--tokens-per-s",
        "100000",
        "--devices",
        "8",
        "--hardware",
        "h100-sxm",
    ]);
    let graph = mfu["formulas"]
        .as_array()
        .expect("formulas")
        .iter()
        .find(|f| f["formula"] == "graph")
        .expect("the graph row");
    let per_token = num(graph, "/model_flops_per_token");
    assert!(close(per_token, hand, 1e-12), "mfu graph {per_token}");
    assert_eq!(per_token, num(&fa, "/bound/model_flops") / tokens);
}
