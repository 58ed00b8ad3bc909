//! End-to-end tests of fusion: `analyze --fusion` and `fuse --chain`, against hand arithmetic.

mod common;

use common::{json_of, roofline};
use predicates::prelude::*;

#[test]
fn analyze_fusion_presets_report_kernels_per_layer() -> Result<(), Box<dyn std::error::Error>> {
    for (preset, kernels) in [("eager", 18), ("compiled", 13), ("max", 5)] {
        let v = json_of(&[
            "analyze",
            "llama-2-7b",
            "--hardware",
            "h100-sxm",
            "--no-flash-attention",
            "--fusion",
            preset,
        ]);
        for s in v["stages"].as_array().ok_or("expected a value, got None")? {
            let f = &s["fusion"];
            // A mean over the blocks (whole for a model whose blocks are all alike).
            assert_eq!(f["before"]["kernels_per_layer"].as_f64(), Some(18.0));
            let after = f["after"]["kernels_per_layer"].as_f64();
            assert_eq!(after, Some(kernels as f64), "{preset}");
            // 32 blocks + embedding, final norm, lm_head.
            assert_eq!(f["after"]["kernels"], kernels * 32 + 3);
        }
    }
    roofline()
        .args([
            "analyze",
            "--no-flash-attention",
            "--fusion",
            "max",
            "--stage",
            "decode",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("regime: launch-bound"))
        .stdout(predicate::str::contains("before, per layer"));
    Ok(())
}

#[test]
fn launch_overhead_override() -> Result<(), Box<dyn std::error::Error>> {
    // Eager decode: 18·32 + 3 = 579 kernels × 7 µs.
    let v = json_of(&[
        "analyze",
        "--no-flash-attention",
        "--stage",
        "decode",
        "--fusion",
        "eager",
        "--launch-overhead",
        "7us",
    ]);
    let l = v["stages"][0]["fusion"]["before"]["launch_overhead_s"]
        .as_f64()
        .ok_or("expected a value, got None")?;
    assert!((l - 579.0 * 7e-6).abs() < 1e-12);
    roofline()
        .args(["analyze", "--launch-overhead", "7 parsecs"])
        .assert()
        .code(2);
    Ok(())
}

#[test]
fn seed_chain_bytes_and_feasibility() -> Result<(), Box<dyn std::error::Error>> {
    let v = json_of(&[
        "fuse",
        "--chain",
        "rmsnorm,linear,silu,linear",
        "--tokens",
        "2048",
        "--hidden",
        "4096",
        "--intermediate",
        "11008",
        "--precision",
        "bf16",
        "--hardware",
        "h100-sxm",
    ]);
    let (t, d, f, b) = (2048.0, 4096.0, 11008.0, 2.0);
    let sep = v["separate"]["bytes_read"]
        .as_f64()
        .ok_or("expected a value, got None")?
        + v["separate"]["bytes_written"]
            .as_f64()
            .ok_or("expected a value, got None")?;
    let fused = v["fused"]["bytes_read"]
        .as_f64()
        .ok_or("expected a value, got None")?
        + v["fused"]["bytes_written"]
            .as_f64()
            .ok_or("expected a value, got None")?;
    assert_eq!(sep, b * (4.0 * t * d + 4.0 * t * f + 2.0 * d * f + d));
    assert_eq!(fused, b * (2.0 * t * d + 2.0 * d * f + d));
    // 16 tokens × 11008 × 2 B + 4 weight tiles of 64×64×2 B = 385,024 B > 228 KiB.
    assert_eq!(v["feasible"], false);
    assert_eq!(v["tile"]["working_set_bytes"], 385_024.0);
    roofline()
        .args([
            "fuse",
            "--chain",
            "rmsnorm,linear,silu,linear",
            "--tokens",
            "16",
            "--hidden",
            "4096",
            "--intermediate",
            "1024",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("fits: the fusion applies"));
    Ok(())
}

#[test]
fn bad_chain_is_bad_input() {
    roofline()
        .args([
            "fuse",
            "--chain",
            "rmsnorm,conv",
            "--tokens",
            "1",
            "--hidden",
            "8",
            "--intermediate",
            "16",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown operator `conv`"));
    roofline()
        .args([
            "fuse",
            "--chain",
            "linear",
            "--tokens",
            "0",
            "--hidden",
            "8",
            "--intermediate",
            "16",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`--tokens`"));
}

#[test]
fn fused_kernels_are_their_own_points_on_the_plot() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let svg = dir.path().join("fused.svg");
    roofline()
        .args([
            "analyze",
            "--hardware",
            "h100-sxm",
            "--no-flash-attention",
            "--fusion",
            "max",
            "--plot",
        ])
        .arg(&svg)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg)?;
    // `max` leaves 5 kernels per block, each of two or more operators, in each stage.
    assert_eq!(
        text.matches("data-stage=\"fused prefill\" data-name")
            .count(),
        5
    );
    assert_eq!(
        text.matches("data-stage=\"fused decode\" data-name")
            .count(),
        5
    );
    Ok(())
}
