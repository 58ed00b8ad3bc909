//! `roofline measure kernels` end to end: the table, JSON and plot of a quick run against a chip
//! file, the measured-now path, and bad input. No timing assertion: times are only checked to be
//! positive; predictions are checked against the chip file's figures by hand.

mod common;

use common::{roofline, this_cpu as chip};
use predicates::str::contains;

const QUICK_KERNELS: [&str; 13] = [
    "gemm 1×4096×4096",
    "gemm 128×4096×4096",
    "gemm 512×512×512",
    "add 16.8M",
    "add 262k",
    "silu·mul 16.8M",
    "rmsnorm 4096×4096",
    "rmsnorm 128×4096",
    "softmax 4096×4096",
    "attention 8×512×64, materialised",
    "attention 8×512×64, flash",
    "chain 2048×256×688, 4 kernels",
    "chain 2048×256×688, fused",
];

#[test]
fn quick_table_and_plot_against_a_chip_file() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let plot = dir.path().join("kernels.svg");
    let out = roofline()
        .args(["measure", "kernels", "--quick", "--hardware"])
        .arg(chip())
        .arg("--plot")
        .arg(&plot)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let t = String::from_utf8(out)?;
    assert!(t.starts_with("Predicted against measured: CPU, "), "{t}");
    assert!(t.contains("fp32 peak 79.5 GFLOP/s"), "{t}");
    for k in QUICK_KERNELS {
        assert!(t.contains(k), "{k} missing:\n{t}");
    }
    assert!(
        t.contains("fused rmsnorm → linear → silu → linear: measured "),
        "{t}"
    );
    assert!(
        t.contains("fused attention: QKᵀ → softmax → ·V: measured "),
        "{t}"
    );
    assert!(
        t.contains("median |predicted − measured| / measured over 13 kernels: "),
        "{t}"
    );
    // The plot: a measured and a predicted point per kernel, joined, and a legend.
    let svg = std::fs::read_to_string(&plot)?;
    assert!(svg.starts_with("<svg"));
    assert_eq!(svg.matches(r#"class="measured""#).count(), 13);
    assert_eq!(svg.matches(r#"class="predicted""#).count(), 13);
    assert_eq!(svg.matches(r#"class="join""#).count(), 13);
    assert!(svg.contains("chain 2048×256×688, fused"));

    // The plot is not overwritten without --force, and that is said before anything runs.
    roofline()
        .args(["measure", "kernels", "--quick", "--hardware"])
        .arg(chip())
        .arg("--plot")
        .arg(&plot)
        .assert()
        .code(2)
        .stderr(contains("already exists"))
        .stderr(contains("--force"));
    Ok(())
}

#[test]
fn json_rows_hold_the_predictions_the_chip_file_gives() -> Result<(), Box<dyn std::error::Error>> {
    let out = roofline()
        .args([
            "measure",
            "kernels",
            "--quick",
            "--only",
            "add,chain",
            "--format",
            "json",
            "--hardware",
        ])
        .arg(chip())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out)?;
    assert_eq!(v["schema_version"], roofline_report::doc::SCHEMA_VERSION);
    common::assert_valid(
        "measure-kernels",
        &v,
        "roofline measure kernels --quick --only add,chain --format json",
    );
    let rows = v["rows"].as_array().ok_or("expected a value, got None")?;
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "add 16.8M",
            "add 262k",
            "chain 2048×256×688, 4 kernels",
            "chain 2048×256×688, fused"
        ]
    );
    // The chip file's roofs (read independently of the command).
    let d = roofline_inputs::hardware::find_device(
        chip().to_str().ok_or("expected a value, got None")?,
    )?;
    // NaN for a level the chip lacks: it fails every comparison below.
    let bw = |name: &str| {
        d.memory
            .iter()
            .find(|l| l.name == name)
            .and_then(|l| l.bandwidth.as_ref())
            .map_or(f64::NAN, |b| b.value.get())
    };
    // Every launch pays the measured fork/join of an empty parallel region (the chip file
    // carries no access mix: each level's single roof).
    let launch = v["ceilings"]["launch"]["value"]
        .as_f64()
        .ok_or("no launch ceiling")?;
    assert!(launch > 0.0);
    // add 262k: 2^18 elements, 2 read and 1 written, 4 bytes each: 3,145,728 B, which fits the
    // 8 MiB L3: predicted 3145728 / L3 + the launch; DRAM-only 3145728 / DRAM.
    let add = &rows[1];
    assert_eq!(add["level"], "L3");
    let p = add["predicted"]
        .as_f64()
        .ok_or("expected a value, got None")?;
    assert!((p - (3_145_728.0 / bw("L3") + launch)).abs() < 1e-12, "{p}");
    let p = add["predicted_dram"]
        .as_f64()
        .ok_or("expected a value, got None")?;
    assert!((p - 3_145_728.0 / bw("DRAM")).abs() < 1e-12, "{p}");
    // The error is |predicted − measured| / measured of the row's own numbers.
    let m = add["measured"]["median"]
        .as_f64()
        .ok_or("expected a value, got None")?;
    assert!(m > 0.0);
    let e = add["error"].as_f64().ok_or("expected a value, got None")?;
    assert!(
        (e - (add["predicted"]
            .as_f64()
            .ok_or("expected a value, got None")?
            - m)
            .abs()
            / m)
            .abs()
            < 1e-12
    );
    // add 16.8M: 2^24 × 12 = 201,326,592 B, beyond L3: from DRAM both ways.
    let big = &rows[0];
    assert_eq!(big["level"], "DRAM");
    let (hier, dram) = (
        big["predicted"].as_f64().ok_or("no prediction")?,
        big["predicted_dram"].as_f64().ok_or("no prediction")?,
    );
    assert!((hier - (dram + launch)).abs() < 1e-12, "{hier} {dram}");
    // The fused chain is one launch, the separate one four; one speedup (the attention pair
    // was not selected).
    assert_eq!(
        rows[2]["launches"]
            .as_array()
            .ok_or("expected a value, got None")?
            .len(),
        4
    );
    assert_eq!(
        rows[3]["launches"]
            .as_array()
            .ok_or("expected a value, got None")?
            .len(),
        1
    );
    let s = v["speedups"]
        .as_array()
        .ok_or("expected a value, got None")?;
    assert_eq!(s.len(), 1);
    let ratio = rows[2]["measured"]["median"]
        .as_f64()
        .ok_or("expected a value, got None")?
        / rows[3]["measured"]["median"]
            .as_f64()
            .ok_or("expected a value, got None")?;
    assert!(
        (s[0]["measured"]
            .as_f64()
            .ok_or("expected a value, got None")?
            - ratio)
            .abs()
            < 1e-12
    );
    // The chain runs on the matrix units and exponentiates (its SiLU): all three ceilings were
    // measured, each with its calibration shape named.
    let c = &v["ceilings"];
    let gemm = c["gemm"]["value"]
        .as_f64()
        .ok_or("expected a value, got None")?;
    let gemv = c["gemv"]["value"]
        .as_f64()
        .ok_or("expected a value, got None")?;
    let exp = c["exp"]["value"]
        .as_f64()
        .ok_or("expected a value, got None")?;
    assert!(gemm > 0.0 && gemv > 0.0 && exp > 0.0, "{c}");
    assert!(c["gemm"]["source"]
        .as_str()
        .ok_or("expected a value, got None")?
        .contains("1024×1024×1024"));
    assert!(c["gemv"]["source"]
        .as_str()
        .ok_or("expected a value, got None")?
        .contains("1×8192×8192"));
    // The fused chain's one launch: its hierarchical compute roof is min(peak, GEMM ceiling),
    // its e^x are the SiLU's, one per element of the 2048 × 688 intermediate, and its e^x time
    // is their count over the ceiling.
    let fused = &rows[3]["launches"][0];
    let peak = d.peak(roofline_core::precision::Precision::Fp32)?.get();
    assert_eq!(
        fused["hier_peak"]
            .as_f64()
            .ok_or("expected a value, got None")?,
        gemm.min(peak)
    );
    assert_eq!(
        fused["exps"].as_f64().ok_or("expected a value, got None")?,
        2048.0 * 688.0
    );
    let t = fused["exp_time"]
        .as_f64()
        .ok_or("expected a value, got None")?;
    assert!((t - 2048.0 * 688.0 / exp).abs() < 1e-15, "{t}");
    // The adds run on the vector units and do not exponentiate: no ceiling touches them.
    assert_eq!(
        add["launches"][0]["hier_peak"]
            .as_f64()
            .ok_or("expected a value, got None")?,
        peak
    );
    assert_eq!(
        add["launches"][0]["exp_time"]
            .as_f64()
            .ok_or("expected a value, got None")?,
        0.0
    );
    // Median of four errors: the mean of the middle two.
    let mut errs: Vec<f64> = rows.iter().map(|r| r["error"].as_f64().unwrap()).collect();
    errs.sort_by(f64::total_cmp);
    let median = (errs[1] + errs[2]) / 2.0;
    assert!(
        (v["median_error"]
            .as_f64()
            .ok_or("expected a value, got None")?
            - median)
            .abs()
            < 1e-12
    );
    Ok(())
}

#[test]
fn measures_the_roofline_itself_without_a_chip_file() {
    roofline()
        .args(["measure", "kernels", "--quick", "--only", "add 262k"])
        .assert()
        .success()
        .stdout(contains("roofline measured now with --quick"))
        .stdout(contains("add 262k"))
        .stdout(contains("over 1 kernels"));
}

#[test]
fn bad_input_exits_2_naming_the_flag() {
    roofline()
        .args(["measure", "kernels", "--only", "nothing"])
        .assert()
        .code(2)
        .stderr(contains("`--only nothing` matches no kernel"))
        .stderr(contains("gemm 1×4096×4096"));
    roofline()
        .args(["measure", "kernels", "--plot", "k.pdf"])
        .assert()
        .code(2)
        .stderr(contains("--plot"));
    roofline()
        .args(["measure", "kernels", "--hardware", "no-such-chip"])
        .assert()
        .code(2)
        .stderr(contains("no-such-chip"));
    // The roofline's flags belong before no subcommand.
    roofline()
        .args(["measure", "--quick", "kernels"])
        .assert()
        .code(2);
    // One name of several that matches nothing is a typo, not a filter: refused, named.
    roofline()
        .args(["measure", "kernels", "--only", "gemm,nosuch"])
        .assert()
        .code(2)
        .stderr(contains("`--only nosuch` matches no kernel"));
    for empty in ["", ",", "gemm,"] {
        roofline()
            .args(["measure", "kernels", "--only", empty])
            .assert()
            .code(2)
            .stderr(contains("empty name"));
    }
    // A CUDA ordinal without --gpu would be ignored: refused instead.
    for cmd in [&["measure", "kernels"][..], &["measure"][..]] {
        roofline()
            .args(cmd)
            .args(["--device", "3"])
            .assert()
            .code(2)
            .stderr(contains("--gpu"));
    }
}

#[cfg(not(feature = "cuda"))]
#[test]
fn gpu_without_the_feature_is_a_usage_error() {
    roofline()
        .args(["measure", "kernels", "--gpu", "--hardware"])
        .arg(chip())
        .assert()
        .code(2)
        .stderr(contains("`cuda` feature"))
        .stderr(contains("--features cuda"));
}

#[test]
fn a_gpu_chip_for_cpu_kernels_is_said() {
    // The prediction still runs (the user may want the comparison), with a note saying what it
    // compares.
    roofline()
        .args([
            "measure",
            "kernels",
            "--quick",
            "--only",
            "add 262k",
            "--hardware",
            "a6000",
        ])
        .assert()
        .success()
        .stdout(contains("`a6000` describes a GPU"));
}
