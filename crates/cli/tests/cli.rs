//! End-to-end tests of the `roofline` binary: exit codes, stdout and stderr together.
//! Numbers asserted here come from hand arithmetic written next to them.

mod common;

use common::{bad_input, json_of, roofline, shared, LLAMA2_7B_CONFIG};
use predicates::prelude::*;
use serde_json::Value;
use std::ffi::OsStr;
use std::path::PathBuf;

fn op<'a>(stage: &'a Value, name: &str) -> &'a Value {
    stage["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == name)
        .unwrap_or_else(|| panic!("no op {name}"))
}

#[test]
fn default_analyze_runs_llama2_7b_on_h100_sxm_both_stages_with_flash_attention() {
    // q_proj in prefill: 2 · 2048 · 4096 · 4096 = 68.7 GFLOP.
    roofline()
        .arg("analyze")
        .assert()
        .success()
        .stdout(predicate::str::contains("prefill · llama-2-7b"))
        .stdout(predicate::str::contains("decode · llama-2-7b"))
        .stdout(predicate::str::contains("NVIDIA H100 SXM5 80GB (h100-sxm)"))
        .stdout(predicate::str::contains("FlashAttention on"))
        .stdout(predicate::str::contains("q_proj"))
        .stdout(predicate::str::contains("68.7 GFLOP"))
        .stderr("");
}

#[test]
fn analyze_json_has_the_documented_schema_and_hand_checked_numbers(
) -> Result<(), Box<dyn std::error::Error>> {
    let v = json_of(&["analyze", "llama-2-7b", "--hardware", "a6000"]);
    assert_eq!(v["schema_version"], roofline_report::doc::SCHEMA_VERSION);
    assert_eq!(v["model"]["parameters"], 6_738_415_616u64);
    assert_eq!(v["hardware"]["id"], "a6000");
    let prefill = &v["stages"][0];
    let decode = &v["stages"][1];
    assert_eq!(prefill["stage"], "prefill");
    assert_eq!(decode["stage"], "decode");
    // q_proj prefill: 2·2048·4096·4096 FLOP; 4096²·2 + 2·2048·4096·2 bytes; AI 1024 FLOP/B,
    // compute-bound above the A6000 ridge 154.8e12 / 768e9 = 201.6; time 68.72e9 / 154.8e12.
    let q = op(prefill, "q_proj");
    assert_eq!(q["count"], 32);
    assert_eq!(q["flops"], 68_719_476_736.0);
    assert_eq!(
        q["bytes_read"]
            .as_f64()
            .ok_or("expected a value, got None")?
            + q["bytes_written"]
                .as_f64()
                .ok_or("expected a value, got None")?,
        67_108_864.0
    );
    assert_eq!(q["arithmetic_intensity"], 1024.0);
    assert_eq!(q["bound"], "compute");
    assert!(
        (q["time_s"].as_f64().ok_or("expected a value, got None")? - 68_719_476_736.0 / 154.8e12)
            .abs()
            < 1e-12
    );
    // decode q_proj: 2·4096² FLOP over (4096 + 4096² + 4096)·2 bytes: memory-bound,
    // time = bytes / 768e9.
    let qd = op(decode, "q_proj");
    let bytes = (4096.0 + 4096.0 * 4096.0 + 4096.0) * 2.0;
    assert_eq!(qd["bound"], "memory");
    assert!(
        (qd["time_s"].as_f64().ok_or("expected a value, got None")? - bytes / 768e9).abs() < 1e-15
    );
    // Memory: weights 6,738,415,616 · 2 bytes; KV cache 2·32·2049·4096·2 bytes in decode.
    assert_eq!(decode["memory"]["weights_bytes"], 13_476_831_232.0);
    assert_eq!(
        decode["memory"]["kv_cache_bytes"],
        2.0 * 32.0 * 2049.0 * 4096.0 * 2.0
    );
    // Totals are the sum of count × per-op figures.
    for s in [prefill, decode] {
        let sum: f64 = s["ops"]
            .as_array()
            .ok_or("expected a value, got None")?
            .iter()
            .map(|o| o["flops"].as_f64().unwrap() * o["count"].as_f64().unwrap())
            .sum();
        assert!(
            (s["totals"]["flops"]
                .as_f64()
                .ok_or("expected a value, got None")?
                - sum)
                .abs()
                <= sum * 1e-12
        );
    }
    Ok(())
}

#[test]
fn analyze_csv_has_one_row_per_operator() -> Result<(), Box<dyn std::error::Error>> {
    let out = roofline()
        .args([
            "analyze",
            "--stage",
            "decode",
            "--no-flash-attention",
            "--format",
            "csv",
        ])
        .output()?;
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout)?;
    let mut lines = text.lines();
    assert!(lines
        .next()
        .ok_or("expected a value, got None")?
        .starts_with("model,hardware,stage,batch"));
    // 21 operators: embedding, 18 per block (unfused attention), final norm, lm_head.
    assert_eq!(lines.count(), 21);
    Ok(())
}

#[test]
fn shared_configs_run_in_both_stages() {
    for cfg in [
        "models/meta-llama--Llama-2-7b-hf/config.json",
        "models/meta-llama--Meta-Llama-3.1-8B/config.json",
        "models/meta-llama--Llama-2-70b-chat-hf/config.json",
    ] {
        roofline()
            .arg("analyze")
            .arg(shared(cfg))
            .args(["--hardware", "h100-sxm", "--flash-attention"])
            .assert()
            .success()
            .stdout(predicate::str::contains("lm_head"));
    }
}

#[test]
fn hardware_list_and_show() {
    roofline()
        .args(["hardware", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("h100-sxm"))
        .stdout(predicate::str::contains("mi300x"));
    // H100 SXM bf16 ridge: 989.5e12 / 3.35e12 = 295.4 FLOP/byte.
    roofline()
        .args(["hardware", "show", "h100-sxm"])
        .assert()
        .success()
        .stdout(predicate::str::contains("295.4"));
    let v = json_of(&["hardware", "show", "h100-sxm"]);
    assert_eq!(v["peak_flops_per_s"]["bf16"], 989.5e12);
}

#[test]
fn hardware_show_prints_the_chips_node_per_direction() {
    // H100 SXM: NVIDIA's "900 GB/s" NVLink is bidirectional (18 links × 50 GB/s), so
    // 900 / 2 = 450 GB/s each way; one 400 Gb/s NIC per GPU is 400 / 8 = 50 GB/s.
    roofline()
        .args(["hardware", "show", "h100-sxm"])
        .assert()
        .success()
        .stdout(predicate::str::contains("node: HGX H100 8-GPU"))
        .stdout(predicate::str::contains("8 GPUs per node"))
        .stdout(predicate::str::contains("bandwidth per GPU per direction"))
        .stdout(predicate::str::contains("450.0 GB/s"))
        .stdout(predicate::str::contains("50.0 GB/s"))
        .stdout(predicate::str::contains(
            "in-network reduction (NVLink SHARP): yes",
        ))
        .stdout(predicate::str::contains("tuning.cc").not())
        .stdout(predicate::str::contains("hardware show h100-sxm --sources"));
    // The sources are one flag away, the table the same.
    roofline()
        .args(["hardware", "show", "h100-sxm", "--sources"])
        .assert()
        .success()
        .stdout(predicate::str::contains("450.0 GB/s"))
        .stdout(predicate::str::contains("tuning.cc"));
    let v = json_of(&["hardware", "show", "h100-sxm"]);
    let p = &v["platform"];
    assert_eq!(p["gpus_per_node"], 8);
    assert_eq!(p["fabric"]["scale_up"]["bandwidth_bytes_per_s"], 450e9);
    assert_eq!(p["fabric"]["scale_up"]["latency_s"], 3.4e-6);
    assert_eq!(p["fabric"]["scale_out"]["bandwidth_bytes_per_s"], 50e9);
    assert_eq!(p["fabric"]["in_network_reduction"], true);
    // A chip without a platform says nothing of one, and its JSON has `null`.
    let v = json_of(&["hardware", "show", "rtx-4090"]);
    assert!(v["platform"].is_null());
}

#[test]
fn hardware_show_a_system() {
    roofline()
        .args(["hardware", "show", "dgx-h100"])
        .assert()
        .success()
        .stdout(predicate::str::contains("NVIDIA DGX H100"))
        .stdout(predicate::str::contains(
            "chip: NVIDIA H100 SXM5 80GB (h100-sxm)",
        ))
        .stdout(predicate::str::contains(
            "1 node × 8 GPUs per node = 8 devices",
        ))
        .stdout(predicate::str::contains("450.0 GB/s"));
    // A SuperPOD scalable unit: 32 nodes × 8 GPUs = 256 devices.
    let v = json_of(&["hardware", "show", "dgx-h100-su"]);
    assert_eq!(v["chip"], "h100-sxm");
    assert_eq!(
        (v["gpus_per_node"].as_u64(), v["nodes"].as_u64()),
        (Some(8), Some(32))
    );
    assert_eq!(v["devices"], 256);
    assert_eq!(v["hardware"]["id"], "h100-sxm");
    assert_eq!(v["fabric"]["scale_out"]["bandwidth_bytes_per_s"], 50e9);
    // A system file: 4 nodes of 8 H100 with a 200 Gb/s network (25 GB/s per direction).
    let (_d, path) = write_temp(
        "cluster.toml",
        r#"id = "my-cluster"
name = "My cluster"
chip = "h100-sxm"
gpus_per_node = { value = 8, source = "test" }
nodes = { value = 4, source = "test" }
[fabric.scale_out]
name = "RoCE 200 Gb/s"
bandwidth_bytes_per_s = { value = 25e9, source = "test: 200 Gb/s / 8" }
latency_s = { value = 20e-6, source = "test" }
"#,
    );
    let v = json_of(&["hardware", "show", path.to_str().unwrap()]);
    assert_eq!(v["devices"], 32);
    assert_eq!(v["fabric"]["scale_out"]["bandwidth_bytes_per_s"], 25e9);
    assert_eq!(v["fabric"]["scale_up"]["bandwidth_bytes_per_s"], 450e9);
}

#[test]
fn hardware_list_systems() {
    roofline()
        .args(["hardware", "list", "--systems"])
        .assert()
        .success()
        .stdout(predicate::str::contains("dgx-h100"))
        .stdout(predicate::str::contains("gb200-nvl72"))
        .stdout(predicate::str::contains("mi300x-8"))
        .stdout(predicate::str::contains("tpu-v5p-64"))
        .stdout(predicate::str::contains("per GPU, per direction"));
    let v = json_of(&["hardware", "list", "--systems"]);
    let systems = v["systems"].as_array().unwrap();
    let nvl72 = systems.iter().find(|s| s["id"] == "gb200-nvl72").unwrap();
    // 72 GPUs in one NVLink domain; NVLink 5's 1,800 GB/s bidirectional is 900 GB/s each way.
    assert_eq!(
        (nvl72["gpus_per_node"].as_u64(), nvl72["devices"].as_u64()),
        (Some(72), Some(72))
    );
    assert_eq!(nvl72["fabric"]["scale_up"]["bandwidth_bytes_per_s"], 900e9);
    for s in systems {
        assert_eq!(
            s["devices"].as_u64(),
            Some(s["gpus_per_node"].as_u64().unwrap() * s["nodes"].as_u64().unwrap())
        );
    }
    let out = roofline()
        .args(["hardware", "list", "--systems", "--format", "csv"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout)
        .starts_with("id,name,chip,gpus_per_node,nodes,devices,scale_up_bytes_per_s"));
}

fn write_temp(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    (dir, p)
}

/// Llama-2-7B's config.json as the catalog embeds it, with `field` set to `value` (JSON text),
/// or removed when `value` is `None`.
fn llama_config_with(field: &str, value: Option<&str>) -> String {
    let mut v: Value = serde_json::from_str(LLAMA2_7B_CONFIG).unwrap();
    let obj = v.as_object_mut().unwrap();
    match value {
        Some(x) => obj.insert(field.into(), serde_json::from_str(x).unwrap()),
        None => obj.remove(field),
    };
    v.to_string()
}

fn bad_config(text: &str, needle: &str) {
    let (_d, p) = write_temp("config.json", text);
    bad_input(&[OsStr::new("analyze"), p.as_os_str()], needle);
}

#[test]
fn bad_configs_name_the_field_and_exit_2() {
    bad_config("{\"hidden_size\": 40", "malformed JSON");
    bad_config(&llama_config_with("vocab_size", Some("0")), "`vocab_size`");
    bad_config(
        &llama_config_with("hidden_size", Some("-4096")),
        "`hidden_size`",
    );
    bad_config(
        &llama_config_with("vocab_size", None),
        "`vocab_size` is missing",
    );
    bad_config(
        &llama_config_with("num_key_value_heads", Some("5")),
        "`num_key_value_heads`",
    );
    bad_config(
        &llama_config_with("architectures", Some("[\"BertModel\"]")),
        "`architectures`",
    );
}

#[test]
fn bad_flags_exit_2_with_one_clear_line() {
    let cases: [(&[&str], &str); 6] = [
        (&["analyze", "--batch", "0"], "`--batch`"),
        (
            &["analyze", "--stage", "prefill", "--seq-len", "0"],
            "`--seq-len`",
        ),
        (&["analyze", "--precision", "fp12"], "fp12"),
        (&["analyze", "--hardware", "h100-sxmm"], "h100-sxm"),
        (&["analyze", "--batch", "-3"], "-3"),
        (&["analyze", "no-such-model"], "unknown model"),
    ];
    for (args, needle) in cases {
        roofline()
            .args(args)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(needle));
    }
    roofline()
        .args(["analyze", "/no/such/config.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/no/such/config.json"));
}

#[test]
fn missing_precision_on_chip_is_bad_input() {
    // The V100 has no bf16 tensor cores.
    roofline()
        .args(["analyze", "--hardware", "v100", "--precision", "bf16"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bf16"));
}

#[test]
fn a_model_that_does_not_fit_is_flagged() {
    // Llama-2-70B in bf16: 68,976,648,192 · 2 B = 137.95 GB of weights > 48 GB on the A6000.
    roofline()
        .args([
            "analyze",
            "llama-2-70b",
            "--hardware",
            "a6000",
            "--stage",
            "decode",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("warning: weights + KV cache"));
    let v = json_of(&[
        "analyze",
        "llama-2-70b",
        "--hardware",
        "a6000",
        "--stage",
        "decode",
    ]);
    assert_eq!(v["stages"][0]["memory"]["fits_on_chip"], false);
    // 8192 tokens exceed Llama-2's max_position_embeddings of 4096.
    roofline()
        .args(["analyze", "--stage", "prefill", "--seq-len", "8192"])
        .assert()
        .success()
        .stdout(predicate::str::contains("max_position_embeddings (4096)"));
}

#[test]
fn every_shared_config_runs_in_both_stages() -> Result<(), Box<dyn std::error::Error>> {
    for dir in std::fs::read_dir(shared("models"))?.flatten() {
        let cfg = dir.path().join("config.json");
        if !cfg.exists() {
            continue;
        }
        roofline()
            .arg("analyze")
            .arg(&cfg)
            .args([
                "--hardware",
                "h100-sxm",
                "--seq-len",
                "512",
                "--context",
                "4096",
            ])
            .assert()
            .success()
            .stdout(predicate::str::contains("lm_head"));
    }
    Ok(())
}

#[test]
fn group_wise_quantization_flags() {
    // int4 with an fp16 scale and an fp16 zero point per 128 weights: 0.5 + 4/128 B per weight;
    // decode q_proj reads 4096·2 + 4096²·0.53125 bytes.
    let v = json_of(&[
        "analyze",
        "--stage",
        "decode",
        "--weight-precision",
        "int4",
        "--group-size",
        "128",
        "--zero-point-precision",
        "fp16",
    ]);
    let q = op(&v["stages"][0], "q_proj");
    assert_eq!(q["bytes_read"], 4096.0 * 2.0 + 4096.0 * 4096.0 * 0.53125);
    roofline()
        .args(["analyze", "--group-size", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`--group-size`"));
    // W8A8 on the A6000: q_proj held against the int8 peak, 309.7 TOP/s.
    let v = json_of(&[
        "analyze",
        "--hardware",
        "a6000",
        "--stage",
        "prefill",
        "--w8a8",
    ]);
    assert_eq!(op(&v["stages"][0], "q_proj")["peak_flops_per_s"], 309.7e12);
}

#[test]
fn integer_peaks_are_operations_per_second() {
    // H100 SXM dense int8: 3,958 TOP/s with 2:4 sparsity, halved: 1979 TOP/s = 1.98 POP/s.
    roofline()
        .args(["hardware", "show", "h100-sxm"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1.98 POP/s"));
}

#[test]
fn hardware_show_prints_the_chips_estimate_shares_and_their_source() {
    // The A100 SXM4 80 GB carries its own shares: matmul 230 of 312 TFLOP/s = 0.7372 (a large
    // fp16 torch.matmul, github.com/mli/transformers-benchmarks).
    roofline()
        .args(["hardware", "show", "a100-sxm-80gb"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "estimate shares of the roofs: matmul 0.7372, fp8 matmul 0.7372, attention 0.7372, \
             vector 1, memory 0.8337, network 0.8",
        ))
        .stdout(predicate::str::contains("transformers-benchmarks").not());
    roofline()
        .args(["hardware", "show", "a100-sxm-80gb", "--sources"])
        .assert()
        .success()
        .stdout(predicate::str::contains("matmul 0.7372"))
        .stdout(predicate::str::contains(
            "estimate shares source: measured on A100s",
        ))
        .stdout(predicate::str::contains("mli/transformers-benchmarks"));
    let v = json_of(&["hardware", "show", "a100-sxm-80gb"]);
    let e = &v["efficiency"];
    assert_eq!(e["matmul"], 0.7372);
    assert_eq!(e["memory"], 0.8337);
    assert_eq!(e["network"], 0.8);
    assert!(e["source"]
        .as_str()
        .is_some_and(|s| s.contains("mli/transformers-benchmarks")));
    // The H100 SXM has none of its own: the published shares, matmul 794.5 of 989 TFLOP/s
    // (ml-engineering's maximum-achievable-matmul table) = 0.80334…, printed 0.8033.
    roofline()
        .args(["hardware", "show", "h100-sxm", "--sources"])
        .assert()
        .success()
        .stdout(predicate::str::contains("matmul 0.8033,"))
        .stdout(predicate::str::contains("794.5 of 989"));
    let v = json_of(&["hardware", "show", "h100-sxm"]);
    let e = &v["efficiency"];
    let matmul = e["matmul"].as_f64().unwrap_or(f64::NAN);
    assert!((matmul - 794.5 / 989.0).abs() < 1e-12, "{matmul}");
    assert!(e["source"]
        .as_str()
        .is_some_and(|s| s.contains("794.5 of 989")));
}
