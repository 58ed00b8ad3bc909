//! `roofline measure` end to end: a quick measurement writes a chip file that reads back through
//! the catalog's parser and drives `analyze`; output files are never overwritten without
//! `--force`. No timing assertion: the figures are only checked to exist and be positive.

mod common;

use common::roofline;
use predicates::str::contains;
use roofline_core::device::MemoryKind;
use roofline_core::precision::Precision;

#[test]
fn quick_measure_writes_a_chip_file_that_analyze_reads() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let chip = dir.path().join("host.toml");
    let plot = dir.path().join("host.svg");
    let out = roofline()
        .args([
            "measure",
            "--quick",
            "--max-working-set",
            "32",
            "--format",
            "json",
            // The test reads the file's format, on a machine that runs other tests meanwhile.
            "--accept-unsettled",
        ])
        .arg("--out")
        .arg(&chip)
        .arg("--plot")
        .arg(&plot)
        .assert()
        .success()
        .stderr(contains("wrote"))
        .get_output()
        .stdout
        .clone();

    // The JSON: schema version, peaks at one and all threads, levels with main memory last.
    let v: serde_json::Value = serde_json::from_slice(&out)?;
    assert_eq!(v["schema_version"], roofline_report::doc::SCHEMA_VERSION);
    common::assert_valid("measure", &v, "roofline measure --quick --format json");
    let threads = v["threads"].as_u64().ok_or("expected a value, got None")?;
    assert!(threads >= 1);
    let peaks = v["peaks"].as_array().ok_or("expected a value, got None")?;
    for p in ["fp64", "fp32"] {
        for t in [1, threads] {
            assert!(
                peaks
                    .iter()
                    .any(|x| x["precision"] == p && x["threads"] == t),
                "{p} at {t} threads"
            );
        }
    }
    let levels = v["levels"].as_array().ok_or("expected a value, got None")?;
    assert_eq!(
        levels.last().ok_or("expected a value, got None")?["kind"],
        "main"
    );
    assert!(v["method"]
        .as_str()
        .ok_or("expected a value, got None")?
        .contains("median"));
    // A 16 KiB to 32 MiB sweep in 2× steps: 12 sizes × 3 kernels, minus any rejected.
    let sweep = v["sweep"].as_array().ok_or("expected a value, got None")?;
    assert!(!sweep.is_empty() && sweep.len() <= 36, "{}", sweep.len());

    // The chip file reads back through the catalog's parser.
    let d =
        roofline_inputs::hardware::find_device(chip.to_str().ok_or("expected a value, got None")?)?;
    assert_eq!(d.id, "host");
    for p in [Precision::Fp64, Precision::Fp32, Precision::Bf16] {
        assert!(d.peak(p)?.get() > 0.0, "{p}");
    }
    assert!(d.bandwidth()?.get() > 0.0);
    assert_eq!(d.memory[0].kind, MemoryKind::Main);
    let src = &d
        .peak_cited(Precision::Fp32)
        .ok_or("expected a value, got None")?
        .source;
    assert!(src.contains("measured by `roofline measure`"), "{src}");
    assert!(d.launch_overhead.value.get() > 0.0);

    // The hierarchical plot is an SVG with a labelled roof per level.
    let svg = std::fs::read_to_string(&plot)?;
    assert!(svg.starts_with("<svg") && svg.contains("roof-label") && svg.contains("DRAM"));

    // `analyze` with the default precision (bf16) runs on it.
    roofline()
        .args(["analyze", "llama-2-7b", "--hardware"])
        .arg(&chip)
        .assert()
        .success()
        .stdout(contains("llama-2-7b"));

    // A second run does not overwrite the file, and says so before measuring.
    let before = std::fs::read(&chip)?;
    roofline()
        .args(["measure", "--quick", "--out"])
        .arg(&chip)
        .assert()
        .code(2)
        .stderr(contains("already exists"))
        .stderr(contains("--force"));
    assert_eq!(std::fs::read(&chip)?, before);
    Ok(())
}

#[test]
fn bad_measure_flags_exit_2_naming_the_flag() {
    roofline()
        .args(["measure", "--out", "host.json"])
        .assert()
        .code(2)
        .stderr(contains("`--out host.json`"))
        .stderr(contains(".toml"));
    roofline()
        .args(["measure", "--threads", "0"])
        .assert()
        .code(2)
        .stderr(contains("--threads"));
    roofline()
        .args(["measure", "--accept-unsettled"])
        .assert()
        .code(2)
        .stderr(contains("--out"));
    roofline()
        .args(["measure", "--wait-idle", "0"])
        .assert()
        .code(2)
        .stderr(contains("--wait-idle"));
    roofline()
        .args(["measure", "--plot", "x.pdf"])
        .assert()
        .code(2)
        .stderr(contains("--plot"));
    roofline()
        .args(["measure", "--out", "no/such/folder/host.toml"])
        .assert()
        .code(2)
        .stderr(contains("does not exist"));
}

#[cfg(not(feature = "cuda"))]
#[test]
fn gpu_without_the_feature_is_a_usage_error() {
    roofline()
        .args(["measure", "--gpu"])
        .assert()
        .code(2)
        .stderr(contains("`cuda` feature"))
        .stderr(contains("--features cuda"));
}
