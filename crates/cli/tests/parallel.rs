//! `roofline analyze` on many devices, `sweep --tp` and `plan`, end to end: each JSON output
//! valid against its committed schema (`docs/schema/analyze-parallel`, `sweep-tp`, `plan`),
//! the collectives and the memory of one device checked by hand, the table's words, and every
//! bad input an exit 2 with one `error:` line naming the flag and a `hint:`.

mod common;

use common::{assert_valid, json_of, roofline};
use predicates::prelude::*;
use serde_json::Value;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Runs `args` with `--format json`, validates the output against the schema of `kind`.
fn checked(kind: &str, args: &[&str]) -> Value {
    let v = json_of(args);
    assert_valid(kind, &v, &format!("roofline {}", args.join(" ")));
    v
}

/// Llama-3.1-70B decode at batch 32 on a DGX H100, tensor parallel over its 8 GPUs.
const LLAMA_TP8: &[&str] = &[
    "analyze",
    "llama-3.1-70b",
    "--system",
    "dgx-h100",
    "--tp",
    "8",
    "--stage",
    "decode",
    "--batch",
    "32",
];

#[test]
fn analyze_tp8_has_two_all_reduces_a_block_of_the_hand_computed_size() -> TestResult {
    let v = checked("analyze-parallel", LLAMA_TP8);
    assert_eq!(v["model"], "llama-3.1-70b");
    assert_eq!(v["system"], "dgx-h100");
    assert_eq!(v["system_devices"], 8);
    let stages = v["stages"].as_array().ok_or("no stages")?;
    assert_eq!(stages.len(), 1);
    let s = &stages[0];
    assert_eq!(s["stage"], "decode");
    assert_eq!(s["layout"]["tp"], 8);
    assert_eq!(s["layout"]["devices"], 8);
    let ops = s["ops"].as_array().ok_or("no ops")?;
    // Megatron-LM: one all-reduce after o_proj and one after down_proj in each of the 80
    // blocks. S = batch × tokens per sequence × hidden × 2 bytes (bf16) = 32 · 1 · 8192 · 2.
    let s_bytes = 32.0 * 1.0 * 8192.0 * 2.0;
    assert_eq!(s_bytes, 524_288.0);
    let in_blocks: Vec<&Value> = ops
        .iter()
        .filter(|o| o["link"]["collective"] == "all_reduce" && o["span"]["kind"] == "blocks")
        .collect();
    assert_eq!(in_blocks.len(), 2, "{in_blocks:?}");
    for o in &in_blocks {
        assert_eq!(o["count"], 80, "{}", o["name"]);
        assert_eq!(o["kind"], "communication");
        assert_eq!(o["compute"], "link");
        let link = &o["link"];
        assert_eq!(link["bytes"].as_f64(), Some(s_bytes), "{}", o["name"]);
        assert_eq!(link["ranks"], 8);
        assert_eq!(link["ranks_per_node"], 8);
        assert_eq!(link["tier"], "scale_up");
        // What one rank sends: a ring all-reduce 2(n − 1)/n · S = 2 · 7/8 · 524 288; with
        // NVLink SHARP (the DGX H100's NVSwitch reduces) S once, the switch sends the sum back.
        let traffic = match link["algorithm"].as_str() {
            Some("ring") => 2.0 * 7.0 / 8.0 * s_bytes,
            Some("nvls") => s_bytes,
            other => return Err(format!("unexpected algorithm {other:?}").into()),
        };
        assert_eq!(link["traffic_bytes"].as_f64(), Some(traffic));
        let (lat, xfer) = (
            link["latency_s"].as_f64().ok_or("latency")?,
            link["transfer_s"].as_f64().ok_or("transfer")?,
        );
        let time = o["time_s"].as_f64().ok_or("time")?;
        assert!(
            (lat + xfer - time).abs() <= 1e-12 * time,
            "{lat} + {xfer} ≠ {time}"
        );
        // NCCL's protocols give the payload all of the link (Simple), 120 of each 128 bytes
        // (LL128) or 4 of each 8 (LL).
        let share = match link["protocol"].as_str() {
            Some("simple") => 1.0,
            Some("ll128") => 120.0 / 128.0,
            Some("ll") => 0.5,
            other => return Err(format!("unexpected protocol {other:?}").into()),
        };
        let bw = link["bandwidth_bytes_per_s"].as_f64().ok_or("bandwidth")?;
        assert!((xfer - traffic / (bw * share)).abs() <= 1e-9 * xfer);
    }
    let names: Vec<&str> = in_blocks
        .iter()
        .filter_map(|o| o["name"].as_str())
        .collect();
    assert_eq!(names, ["attention.tp_reduce", "mlp.tp_reduce"]);
    // The link object is on collective rows only.
    for o in ops {
        assert_eq!(
            o.get("link").is_some(),
            o["kind"] == "communication",
            "{}",
            o["name"]
        );
    }

    // Weights per device: every matrix split 8 ways, the norms replicated. Parameters from
    // the config by hand (d = 8192, L = 80, h = 64, g = 8, head_dim 128, f = 28672,
    // V = 128256, untied): per block q and o d², k and v d · g · 128, the MLP 3 d f, two norms
    // 2d; embedding and lm_head V d each; the final norm d.
    let (d, l, f, v_, kv) = (8192u64, 80u64, 28672u64, 128_256u64, 8 * 128u64);
    let block = 2 * d * d + 2 * d * kv + 3 * d * f + 2 * d;
    let params = l * block + 2 * v_ * d + d;
    assert_eq!(params, 70_553_706_496);
    let models = json_of(&["models"]);
    let listed = models["models"]
        .as_array()
        .ok_or("no models")?
        .iter()
        .find(|m| m["name"] == "llama-3.1-70b")
        .ok_or("no llama-3.1-70b")?;
    assert_eq!(listed["parameters"], params);
    let total = params as f64 * 2.0;
    let norms = (2.0 * 80.0 + 1.0) * 8192.0 * 2.0;
    let per_device = (total - norms) / 8.0 + norms;
    assert_eq!(per_device, 17_640_734_720.0);
    assert_eq!(s["memory"]["weights_bytes"].as_f64(), Some(per_device));
    assert_eq!(s["memory"]["fits_on_chip"], true);

    // The step: the critical path is compute plus the exposed communication; it is the step's
    // bound, the launch overhead a named addend beside it.
    let sc = &s["schedule"];
    let (compute, exposed, path) = (
        sc["compute_s"].as_f64().ok_or("compute")?,
        sc["exposed_communication_s"].as_f64().ok_or("exposed")?,
        sc["critical_path_s"].as_f64().ok_or("path")?,
    );
    assert!((compute + exposed - path).abs() <= 1e-12 * path);
    assert!(exposed <= sc["communication_s"].as_f64().ok_or("communication")?);
    let launch = s["totals"]["launch_overhead_s"].as_f64().ok_or("launch")?;
    let step = s["step_time_s"].as_f64().ok_or("step")?;
    assert!((path - step).abs() <= 1e-12 * step);
    assert_eq!(s["launch_and_host_s"].as_f64(), Some(launch));
    Ok(())
}

#[test]
fn analyze_tp8_table_shows_the_collectives_and_the_exposed_communication() {
    roofline()
        .args(LLAMA_TP8)
        .assert()
        .success()
        .stdout(predicate::str::contains("attention.tp_reduce"))
        .stdout(predicate::str::contains("mlp.tp_reduce"))
        .stdout(predicate::str::contains("exposed communication"))
        .stdout(predicate::str::contains("-0%").not())
        .stderr("");
}

#[test]
fn every_layout_flag_writes_a_valid_document() {
    for args in [
        &[
            "analyze",
            "llama-3.1-70b",
            "--tp",
            "4",
            "--pp",
            "2",
            "--hardware",
            "h100-sxm",
        ][..],
        &[
            "analyze",
            "llama-3.1-70b",
            "--tp",
            "8",
            "--sequence-parallel",
            "--stage",
            "prefill",
            "--seq-len",
            "512",
            "--system",
            "dgx-h100",
        ],
        &[
            "analyze",
            "mixtral-8x7b",
            "--ep",
            "8",
            "--expert-imbalance",
            "2",
            "--system",
            "dgx-h100",
            "--stage",
            "decode",
            "--batch",
            "64",
        ],
        &[
            "analyze",
            "llama-3.1-70b",
            "--devices",
            "16",
            "--tp",
            "8",
            "--pp",
            "2",
            "--hardware",
            "h100-sxm",
        ],
        &["analyze", "gpt2", "--system", "dgx-a100"],
    ] {
        let v = checked("analyze-parallel", args);
        assert!(!v["stages"].as_array().unwrap().is_empty());
    }
}

#[test]
fn tp2_on_an_a6000_workstation_runs_over_pcie() -> TestResult {
    // The A6000's default node is a 4-GPU PCIe server: two of them exchange over PCIe.
    let v = checked(
        "analyze-parallel",
        &[
            "analyze",
            "llama-3.1-70b",
            "--tp",
            "2",
            "--hardware",
            "a6000",
        ],
    );
    assert_eq!(v["chip"], "a6000");
    for s in v["stages"].as_array().ok_or("no stages")? {
        let tiers: Vec<&Value> = s["ops"]
            .as_array()
            .ok_or("no ops")?
            .iter()
            .filter_map(|o| o.get("link"))
            .map(|l| &l["tier"])
            .collect();
        assert!(!tiers.is_empty());
        assert!(tiers.iter().all(|t| *t == "pcie"), "{tiers:?}");
    }
    Ok(())
}

#[test]
fn sweep_tp_is_valid_and_has_one_series_per_batch() -> TestResult {
    let v = checked(
        "sweep-tp",
        &[
            "sweep",
            "llama-3.1-70b",
            "--tp",
            "1,2,4,8",
            "--batch",
            "1,32",
            "--hardware",
            "h100-sxm",
            "--stage",
            "decode",
        ],
    );
    let series = v["series"].as_array().ok_or("no series")?;
    assert_eq!(series.len(), 2);
    for (s, batch) in series.iter().zip([1, 32]) {
        assert_eq!(s["stage"], "decode");
        assert_eq!(s["workload"]["batch"], batch);
        let tps: Vec<u64> = s["points"]
            .as_array()
            .ok_or("no points")?
            .iter()
            .filter_map(|p| p["tp"].as_u64())
            .collect();
        assert_eq!(tps, [1, 2, 4, 8]);
        // One device's worth at TP 1: efficiency 1.
        assert_eq!(s["points"][0]["efficiency"].as_f64(), Some(1.0));
        // 141 GB of bf16 weights do not fit one 80 GB H100.
        assert_eq!(s["points"][0]["fits"], false);
    }
    Ok(())
}

/// Mixtral-8x7B on a DGX H100, batch 64 decode.
const MIXTRAL_PLAN: &[&str] = &[
    "plan",
    "mixtral-8x7b",
    "--system",
    "dgx-h100",
    "--batch",
    "64",
];

#[test]
fn plan_lists_a_best_plan_and_the_single_device_that_does_not_fit() -> TestResult {
    let v = checked("plan", MIXTRAL_PLAN);
    assert_eq!(v["devices"], 8);
    let best = &v["by_latency"][0];
    assert!(best.is_object(), "no best plan");
    assert_eq!(best["holdback"], Value::Null);
    assert_eq!(best["fits"], true);
    assert!(v["by_latency"]
        .as_array()
        .ok_or("no ranking")?
        .iter()
        .skip(1)
        .all(|p| p["holdback"].is_object()));
    // Mixtral-8x7B holds about 46.7e9 parameters: × 2 bytes (bf16) = 93 GB > 80 GB.
    let models = json_of(&["models"]);
    let params = models["models"]
        .as_array()
        .ok_or("no models")?
        .iter()
        .find(|m| m["name"] == "mixtral-8x7b")
        .and_then(|m| m["parameters"].as_f64())
        .ok_or("no mixtral")?;
    assert!((params - 46.7e9).abs() < 0.1e9, "{params}");
    assert!(params * 2.0 > 80e9);
    let single = v["not_fitting"]
        .as_array()
        .ok_or("no not_fitting")?
        .iter()
        .find(|p| p["layout"]["devices"] == 1)
        .ok_or("the single device should not fit")?;
    assert_eq!(single["fits"], false);
    assert_eq!(single["holdback"]["reason"], "memory");
    let needed = single["holdback"]["needed_bytes"]
        .as_f64()
        .ok_or("needed")?;
    assert!(needed > params * 2.0, "{needed}");
    assert_eq!(single["holdback"]["capacity_bytes"].as_f64(), Some(80e9));

    roofline()
        .args(MIXTRAL_PLAN)
        .assert()
        .success()
        .stdout(predicate::str::contains("best"))
        .stdout(predicate::str::contains(
            "do not fit in memory: TP 1 × PP 1 × EP 1",
        ))
        .stderr("");
    Ok(())
}

#[test]
fn plan_on_nodes_without_a_network_skips_the_layouts_that_cross_them() -> TestResult {
    // Eight A6000s are two 4-GPU PCIe servers with no network between them: the layouts that
    // span both are skipped, the ones within a server planned (two replicas).
    let v = checked(
        "plan",
        &[
            "plan",
            "llama-3.1-8b",
            "--devices",
            "8",
            "--hardware",
            "a6000",
        ],
    );
    assert!(v["skipped"].as_u64().ok_or("skipped")? > 0);
    let plans = v["by_latency"].as_array().ok_or("no ranking")?;
    assert!(!plans.is_empty());
    assert!(plans
        .iter()
        .all(|p| p["layout"]["devices"].as_u64().is_some_and(|d| d <= 4)));
    Ok(())
}

/// Asserts `args` is bad input: exit 2, nothing on stdout, exactly one `error:` line that
/// names `flag`, and a `hint:` line.
fn refused(args: &[&str], flag: &str) {
    let out = roofline().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let what = format!("roofline {}", args.join(" "));
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(out.stdout.is_empty(), "{what}: stdout not empty");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{what}: {err}");
    assert!(
        errors[0].contains(flag),
        "{what}: `{}` names no {flag}",
        errors[0]
    );
    assert!(
        err.lines().any(|l| l.starts_with("hint: ")),
        "{what}: {err}"
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
}

#[test]
fn bad_layouts_and_systems_name_their_flag_with_a_hint() {
    // 3 does not divide the 64 heads.
    refused(&["analyze", "llama-3.1-70b", "--tp", "3"], "--tp");
    refused(&["analyze", "llama-3.1-70b", "--tp", "0"], "--tp");
    // A dense model has no experts to split.
    refused(&["analyze", "llama-3.1-70b", "--ep", "2"], "--ep");
    refused(
        &[
            "analyze",
            "mixtral-8x7b",
            "--expert-imbalance",
            "0.5",
            "--ep",
            "8",
        ],
        "--expert-imbalance",
    );
    // A skew with no expert parallelism is not silently ignored.
    refused(
        &["analyze", "mixtral-8x7b", "--expert-imbalance", "2"],
        "--expert-imbalance",
    );
    // A DGX H100 has 8 GPUs.
    refused(
        &[
            "analyze",
            "llama-3.1-70b",
            "--tp",
            "16",
            "--system",
            "dgx-h100",
        ],
        "--tp",
    );
    refused(&["plan", "llama-3.1-70b"], "--devices");
    // 12 does not fill nodes of 8.
    refused(
        &[
            "analyze",
            "llama-3.1-70b",
            "--devices",
            "12",
            "--hardware",
            "h100-sxm",
            "--tp",
            "4",
        ],
        "--devices",
    );
    // Without --devices, the layout's 12 devices are at fault.
    refused(
        &[
            "analyze",
            "llama-3.1-70b",
            "--tp",
            "4",
            "--pp",
            "3",
            "--hardware",
            "h100-sxm",
        ],
        "--tp 4 --pp 3",
    );
    // More stages than blocks, named before any system is built.
    refused(&["analyze", "llama-3.1-70b", "--pp", "81"], "--pp");
    // Two A6000 servers have no network between them.
    refused(
        &[
            "analyze",
            "llama-3.1-70b",
            "--tp",
            "8",
            "--hardware",
            "a6000",
        ],
        "--tp 8",
    );
    refused(
        &["analyze", "llama-3.1-70b", "--system", "nope"],
        "--system",
    );
    refused(&["plan", "llama-3.1-70b", "--system", "nope"], "--system");
    // A system fixes its chip: another --hardware beside it is a conflict, not ignored.
    refused(
        &[
            "analyze",
            "llama-3.1-70b",
            "--system",
            "dgx-h100",
            "--hardware",
            "a100-sxm-80gb",
            "--tp",
            "8",
        ],
        "--hardware",
    );
    refused(&["sweep", "llama-3.1-70b", "--tp", "1,3"], "--tp");
    refused(&["sweep", "llama-3.1-70b", "--tp", "0,2"], "--tp");
    refused(
        &["sweep", "llama-3.1-70b", "--system", "dgx-h100"],
        "--system",
    );
    refused(
        &[
            "analyze",
            "llama-3.1-70b",
            "--tp",
            "2",
            "--hardware",
            "m1-max",
        ],
        "--hardware",
    );
}

/// Llama-3.1-70B prefill of one 32768-token prompt on a DGX H100, context parallel over 4
/// GPUs, FlashAttention.
const LLAMA_CP4: &[&str] = &[
    "analyze",
    "llama-3.1-70b",
    "--system",
    "dgx-h100",
    "--cp",
    "4",
    "--stage",
    "prefill",
    "--seq-len",
    "32768",
    "--flash-attention",
];

#[test]
fn analyze_cp4_has_a_ring_of_three_sends_of_the_hand_computed_block() -> TestResult {
    let v = checked("analyze-parallel", LLAMA_CP4);
    let s = &v["stages"][0];
    assert_eq!(s["stage"], "prefill");
    assert_eq!(s["layout"]["cp"], 4);
    assert_eq!(s["layout"]["tp"], 1);
    assert_eq!(s["layout"]["devices"], 4);
    let ops = s["ops"].as_array().ok_or("no ops")?;
    let rings: Vec<&Value> = ops.iter().filter(|o| o["role"] == "cp_ring_kv").collect();
    assert_eq!(rings.len(), 1);
    let ring = rings[0];
    assert_eq!(ring["name"], "attention.cp_ring_kv");
    assert_eq!(ring["count"], 80);
    // 2c = 8 chunks of 4096 tokens, two a device: its block is K and V of 8192 tokens, 8 KV
    // heads of 128, bf16: 2 · 8192 · 8 · 128 · 2 = 33,554,432 B, sent c − 1 = 3 times.
    let block = 2.0 * 8192.0 * 8.0 * 128.0 * 2.0;
    let link = &ring["link"];
    assert_eq!(link["collective"], "send_recv");
    assert_eq!(link["ranks"], 4);
    assert_eq!(link["tier"], "scale_up");
    assert_eq!(link["bytes"].as_f64(), Some(block));
    assert_eq!(link["traffic_bytes"].as_f64(), Some(3.0 * block));
    let bw = link["bandwidth_bytes_per_s"].as_f64().ok_or("bandwidth")?;
    let xfer = link["transfer_s"].as_f64().ok_or("transfer")?;
    assert!((xfer - 3.0 * block / bw).abs() <= 1e-12 * xfer);
    // The device's own block of attention and the three that arrive.
    let names: Vec<&str> = ops
        .iter()
        .filter(|o| o["role"] == "fused_attention")
        .filter_map(|o| o["name"].as_str())
        .collect();
    assert_eq!(names, ["attention", "attention.cp_remote"]);
    // Its KV cache: 2 · 80 blocks · 8 · 128 · 2 B × 8192 tokens, a quarter of the prompt's.
    let kv = 2.0 * 80.0 * 8.0 * 128.0 * 2.0 * 8192.0;
    assert_eq!(s["memory"]["kv_cache_bytes"].as_f64(), Some(kv));
    // 75 µs sends beside milliseconds of attention a block: all hidden.
    let sc = &s["schedule"];
    assert!(sc["communication_s"].as_f64().ok_or("communication")? > 0.0);
    assert_eq!(sc["exposed_communication_s"].as_f64(), Some(0.0));

    roofline()
        .args(LLAMA_CP4)
        .assert()
        .success()
        .stdout(predicate::str::contains("attention.cp_ring_kv"))
        .stdout(predicate::str::contains("attention.cp_remote"))
        .stdout(predicate::str::contains(
            "CP 4 (ring attention, 8192 prompt tokens per device)",
        ))
        .stdout(predicate::str::contains("exposed communication 0 s"))
        .stderr("");
    Ok(())
}

#[test]
fn context_parallelism_outside_a_long_enough_prefill_is_refused_naming_cp() {
    refused(
        &["analyze", "llama-3.1-70b", "--cp", "2", "--stage", "decode"],
        "--cp",
    );
    // --stage both (the default) has a decode step.
    refused(&["analyze", "llama-3.1-70b", "--cp", "2"], "--cp");
    // 2c = 8 chunks of a 6-token prompt.
    refused(
        &[
            "analyze",
            "llama-3.1-70b",
            "--cp",
            "4",
            "--stage",
            "prefill",
            "--seq-len",
            "6",
        ],
        "--cp",
    );
    refused(
        &["analyze", "deepseek-v3", "--cp", "2", "--stage", "prefill"],
        "--cp",
    );
    refused(&["analyze", "llama-3.1-70b", "--cp", "0"], "--cp");
    // A DGX H100 has 8 GPUs: tp 4 × cp 4 needs 16.
    refused(
        &[
            "analyze",
            "llama-3.1-70b",
            "--tp",
            "4",
            "--cp",
            "4",
            "--stage",
            "prefill",
            "--system",
            "dgx-h100",
        ],
        "--tp 4 --cp 4",
    );
}

#[test]
fn plan_for_prefill_lists_context_parallel_layouts() -> TestResult {
    let args = [
        "plan",
        "llama-3.1-70b",
        "--system",
        "dgx-h100",
        "--stage",
        "prefill",
        "--seq-len",
        "32768",
        "--flash-attention",
        "--top",
        "100",
    ];
    let v = checked("plan", &args);
    let ranked = v["by_latency"].as_array().ok_or("no ranking")?;
    assert!(ranked.iter().any(|p| p["layout"]["cp"].as_u64() > Some(1)));
    for p in ranked {
        let l = &p["layout"];
        let product = ["tp", "pp", "ep", "cp"]
            .iter()
            .map(|k| l[*k].as_u64().unwrap_or(0))
            .product::<u64>();
        assert_eq!(l["devices"].as_u64(), Some(product));
    }
    roofline()
        .args(args)
        .assert()
        .success()
        .stdout(predicate::str::contains("× CP 2"))
        .stderr("");
    // Decode plans no context parallelism.
    let d = checked("plan", MIXTRAL_PLAN);
    for key in ["by_latency", "not_fitting"] {
        for p in d[key].as_array().ok_or("no plans")? {
            assert_eq!(p["layout"]["cp"], 1);
        }
    }
    Ok(())
}

#[test]
fn sweep_tp_holds_the_other_degrees_fixed() -> TestResult {
    let v = checked(
        "sweep-tp",
        &[
            "sweep",
            "llama-3.1-70b",
            "--tp",
            "1,2",
            "--pp",
            "2",
            "--batch",
            "8",
            "--hardware",
            "h100-sxm",
        ],
    );
    let series = v["series"].as_array().ok_or("no series")?;
    assert_eq!(series.len(), 1);
    assert_eq!(series[0]["fixed"]["pp"], 2);
    let devices: Vec<u64> = series[0]["points"]
        .as_array()
        .ok_or("no points")?
        .iter()
        .filter_map(|p| p["devices"].as_u64())
        .collect();
    // t · p: 1 · 2 and 2 · 2.
    assert_eq!(devices, [2, 4]);
    // Mixtral with its experts split 4 ways beside each tp.
    let v = checked(
        "sweep-tp",
        &[
            "sweep",
            "mixtral-8x7b",
            "--tp",
            "1,2",
            "--ep",
            "4",
            "--batch",
            "8",
            "--hardware",
            "h100-sxm",
        ],
    );
    assert_eq!(v["series"][0]["fixed"]["ep"], 4);
    assert_eq!(v["series"][0]["points"][1]["devices"], 8);
    // Context parallelism beside tp in prefill.
    let v = checked(
        "sweep-tp",
        &[
            "sweep",
            "llama-3.1-70b",
            "--tp",
            "1,2",
            "--cp",
            "2",
            "--stage",
            "prefill",
            "--seq-len",
            "4096",
            "--batch",
            "1",
            "--hardware",
            "h100-sxm",
        ],
    );
    assert_eq!(v["series"][0]["fixed"]["cp"], 2);
    // A plain sweep --tp is unchanged: no `fixed`.
    let plain = checked(
        "sweep-tp",
        &[
            "sweep",
            "llama-3.1-70b",
            "--tp",
            "1,2",
            "--batch",
            "8",
            "--hardware",
            "h100-sxm",
        ],
    );
    assert!(plain["series"][0].get("fixed").is_none());
    roofline()
        .args([
            "sweep",
            "llama-3.1-70b",
            "--tp",
            "1,2",
            "--pp",
            "2",
            "--batch",
            "8",
            "--hardware",
            "h100-sxm",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("fixed beside TP: PP 2"))
        .stderr("");
    Ok(())
}

#[test]
fn sweep_refuses_fixed_degrees_that_make_no_sense() {
    // Without --tp there is no layout to hold them in.
    refused(&["sweep", "llama-3.1-70b", "--pp", "2"], "--pp");
    refused(&["sweep", "llama-3.1-70b", "--cp", "2"], "--cp");
    refused(
        &["sweep", "llama-3.1-70b", "--sequence-parallel"],
        "--sequence-parallel",
    );
    // The sweep's default stage is decode.
    refused(
        &["sweep", "llama-3.1-70b", "--tp", "1,2", "--cp", "2"],
        "--cp",
    );
    refused(
        &["sweep", "llama-3.1-70b", "--tp", "1,2", "--ep", "2"],
        "--ep",
    );
    refused(
        &[
            "sweep",
            "mixtral-8x7b",
            "--tp",
            "1,2",
            "--expert-imbalance",
            "2",
        ],
        "--expert-imbalance",
    );
    refused(
        &["sweep", "llama-3.1-70b", "--tp", "1,2", "--pp", "81"],
        "--pp",
    );
}
