//! End-to-end tests of the bounds on inputs: no count wraps, no figure is implausibly small or
//! large, a chip without peaks says so. Expected numbers come from hand arithmetic beside them.

mod common;

use common::{bad_input, json_of, roofline};
use predicates::prelude::*;

/// A config file in a fresh temporary folder.
fn config_file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("config.json");
    std::fs::write(&path, text).expect("written");
    (dir, path)
}

#[test]
fn a_config_whose_counts_overflow_u64_is_refused() {
    // hidden, layers, heads and intermediate at the 2^24 limit: 3 · 2^24 · 2^24 · 2^24 MLP
    // weights ≈ 1.4e22 alone, past u64::MAX ≈ 1.8e19 (it wrapped to a negative MBU before).
    let (_dir, path) = config_file(
        r#"{"architectures":["LlamaForCausalLM"],"hidden_size":16777216,
            "num_hidden_layers":16777216,"num_attention_heads":16777216,
            "intermediate_size":16777216,"vocab_size":32000}"#,
    );
    let path = path.to_str().expect("utf-8 path");
    for args in [
        vec!["mbu", path, "--tpot", "14ms", "--hardware", "h100-sxm"],
        vec!["analyze", path, "--hardware", "h100-sxm"],
    ] {
        bad_input(&args, "field `parameters`");
        bad_input(&args, "beyond the largest accepted (1000000000000000)");
    }
}

#[test]
fn a_context_at_the_limit_does_not_contradict_itself() {
    // 2^26 = 67,108,864 cached tokens + the new one = 67,108,865 keys > 2^26.
    bad_input(&["analyze", "--context", "67108864"], "67108865 keys");
    bad_input(&["analyze", "--context", "67108864"], "at most 67108863");
    roofline()
        .args(["analyze", "--context", "67108864"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("67108864 is beyond the longest accepted (67108864)").not(),
        );
}

#[test]
fn a_pass_holds_at_most_2_30_tokens() {
    // 1024 × 2,097,152 = 2^31 tokens: refused, naming the length and its largest value at
    // batch 1024 (2^30 / 1024 = 1,048,576).
    bad_input(
        &[
            "analyze",
            "--stage",
            "prefill",
            "--batch",
            "1024",
            "--seq-len",
            "2097152",
        ],
        "at most 1048576",
    );
    bad_input(
        &[
            "mbu",
            "llama-2-7b",
            "--tpot",
            "14ms",
            "--hardware",
            "h100-sxm",
            "--batch",
            "4096",
            "--context",
            "1048576",
        ],
        "`--context`",
    );
}

#[test]
fn tiny_and_huge_floats_are_refused() {
    for (bandwidth, peak, tpot, flag) in [
        ("1e-300", "1P", "14ms", "--bandwidth"),
        ("2T", "1e-300", "14ms", "--peak"),
        ("1e300", "1P", "14ms", "--bandwidth"),
        ("2T", "1P", "1ns", "--tpot"),
    ] {
        roofline()
            .args(["mbu", "--params", "7B", "--tpot", tpot])
            .args(["--bandwidth", bandwidth, "--peak", peak])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(flag))
            .stderr(predicate::str::contains("not plausible"));
    }
    // `--params 7` (meant 7B) is below any language model.
    roofline()
        .args([
            "mfu", "--params", "7", "--tokens", "1e9", "--time", "1h", "--peak", "312T",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--params"));
}

#[test]
fn a_chip_file_with_a_tiny_peak_is_refused() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("tiny.toml");
    std::fs::write(
        &path,
        r#"id = "tiny"
name = "Tiny"
[peak_flops_per_s]
bf16 = { value = 1e-300, source = "test" }
[[memory]]
level = "main"
name = "HBM"
bandwidth_bytes_per_s = { value = 1e12, source = "test" }
[compute]
launch_overhead_s = { value = 5e-6, source = "test" }
"#,
    )
    .expect("written");
    bad_input(
        &["analyze", "--hardware", path.to_str().expect("utf-8 path")],
        "`peak_flops_per_s.bf16` = 1e-300 FLOP/s is not plausible (less than 1e6 FLOP/s)",
    );
}

#[test]
fn a_chip_without_peaks_is_listed_as_not_usable() {
    // Apple publishes no GPU FLOP/s for the M3 Max (shared/hardware/README.md, flag 15).
    bad_input(
        &["analyze", "--hardware", "m3-max"],
        "not usable for a roofline",
    );
    bad_input(
        &["analyze", "--hardware", "m3-max"],
        "roofline measure --out",
    );
    let list = json_of(&["hardware", "list"]);
    let chips = list["hardware"].as_array().expect("a list");
    for c in chips {
        let unusable = !c["unusable_reason"].is_null();
        assert_eq!(unusable, c["id"] == "m3-max", "{}", c["id"]);
    }
    roofline()
        .args(["hardware", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("not usable for analysis: m3-max"));
    // Its bandwidth still serves the MBU: 7e9 × 2 B = 14 GB read in 14 ms = 1 TB/s against
    // 400 GB/s (Apple newsroom, M3 family) = 2.5; no peak, so no MFU.
    let mbu = json_of(&[
        "mbu",
        "--params",
        "7B",
        "--tpot",
        "14ms",
        "--hardware",
        "m3-max",
    ]);
    assert_eq!(mbu["mbu"], 2.5);
    assert!(mbu["mfu"].is_null());
}

#[test]
fn deepseek_v3_kv_cache_is_the_mla_latent() {
    // DeepSeek-V3's config.json: kv_lora_rank 512 + qk_rope_head_dim 64 = 576 elements per
    // token per layer, not 2 × 128 heads × 192 = 49,152.
    let doc = json_of(&["models"]);
    let v3 = doc["models"]
        .as_array()
        .expect("a list")
        .iter()
        .find(|m| m["name"] == "deepseek-v3")
        .expect("the preset");
    assert_eq!(v3["kv_cache_elements_per_token_per_layer"], 576);
    assert_eq!(
        v3["kv_cache_layout"],
        "MLA: kv_lora_rank 512 + qk_rope_head_dim 64"
    );
    roofline()
        .arg("models")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "deepseek-v3: MLA: kv_lora_rank 512 + qk_rope_head_dim 64 = 576",
        ));
}
