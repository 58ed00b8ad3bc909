//! Inputs that are not files, outputs that cannot be written, and usage errors: each one
//! `error:` line naming what is wrong, a `hint:` line with the fix, exit 2 (1 for a stdout that
//! cannot be written), never a hang, a panic or a file written that `--hardware` refuses.

mod common;

use common::{bad_input, roofline, shared};
use predicates::prelude::*;
use std::path::Path;
use std::time::Duration;

fn samples(name: &str) -> String {
    shared("refs/samples").join(name).display().to_string()
}

const MIXBENCH: &str = "mixbench_cuda_ro_GTX-1060.log";

/// The stderr of a failed run, asserting exit code `code`.
fn stderr_of(args: &[&str], code: i32) -> String {
    let out = roofline()
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn report_out_and_plot_on_one_path_is_an_error() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let f = dir.path().join("r.html").display().to_string();
    bad_input(
        &["report", "--out", &f, "--plot", &f],
        "`--out` and `--plot` name the same file",
    );
    assert!(!Path::new(&f).exists(), "nothing is written");
    // A report is HTML: an `--out` of another kind is refused before anything is written.
    let svg = dir.path().join("r.svg").display().to_string();
    bad_input(&["report", "--out", &svg], "a report is HTML");
    assert!(!Path::new(&svg).exists(), "nothing is written");
    Ok(())
}

#[test]
fn devices_fifos_and_oversized_files_are_refused_without_reading(
) -> Result<(), Box<dyn std::error::Error>> {
    if Path::new("/dev/zero").exists() {
        bad_input(&["import", "/dev/zero"], "not a regular file");
        bad_input(&["analyze", "/dev/zero"], "not a regular file");
        bad_input(
            &["analyze", "--hardware", "/dev/zero"],
            "not a regular file",
        );
    }
    let dir = tempfile::tempdir()?;
    let fifo = dir.path().join("pipe");
    // A FIFO with no writer: opening it would wait forever.
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let f = fifo.display().to_string();
        for args in [
            vec!["import", f.as_str()],
            vec!["analyze", f.as_str()],
            vec!["analyze", "--hardware", f.as_str()],
        ] {
            let err = stderr_of(&args, 2);
            assert!(err.contains("not a regular file"), "{args:?}: {err}");
            assert!(err.contains("hint: "), "{err}");
        }
    }
    // One byte over the 1 GiB limit of a profile (sparse: no disk used), 16 MiB for a config.
    let big = dir.path().join("big.json");
    std::fs::File::create(&big)?.set_len((1 << 30) + 1)?;
    let b = big.display().to_string();
    bad_input(&["import", &b], "over the 1 GiB limit");
    bad_input(&["analyze", &b], "over the 16 MiB limit");
    Ok(())
}

#[cfg(unix)]
#[test]
fn help_and_version_fail_when_stdout_cannot_be_written() -> Result<(), Box<dyn std::error::Error>> {
    if !Path::new("/dev/full").exists() {
        return Ok(());
    }
    for args in [
        &["--help"][..],
        &["--version"],
        &["analyze", "--help"],
        &["models"],
    ] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full")?;
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("roofline"))
            .args(args)
            .stdout(full)
            .output()?;
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
    // Written to a pipe that is read, help succeeds.
    roofline().arg("--help").assert().success();
    Ok(())
}

#[test]
fn a_negative_batch_says_it_must_be_positive() {
    let err = stderr_of(&["analyze", "--batch", "-1"], 2);
    assert!(
        err.starts_with("error: `--batch` must be positive, got `-1`\n"),
        "{err}"
    );
    assert!(
        err.contains("hint: give a number > 0; see `roofline analyze --help`"),
        "{err}"
    );
    assert!(!err.contains("tip:"), "{err}");
    let err = stderr_of(&["sweep", "--context", "-5"], 2);
    assert!(err.contains("`--context` must be positive"), "{err}");
    assert!(err.contains("`roofline sweep --help`"), "{err}");
}

#[test]
fn usage_errors_end_with_a_hint_naming_the_command() {
    let err = stderr_of(&["sweep", "--bogus"], 2);
    assert!(err.starts_with("error: "), "{err}");
    assert!(
        err.trim_end()
            .ends_with("hint: see `roofline sweep --help`"),
        "{err}"
    );
    assert!(!err.contains("For more information"), "{err}");
    let err = stderr_of(&["hardware", "show"], 2);
    assert!(
        err.trim_end()
            .ends_with("hint: see `roofline hardware show --help`"),
        "{err}"
    );
    assert!(!err.contains("as a value"), "{err}");
    let err = stderr_of(&["nonsense"], 2);
    assert!(
        err.trim_end().ends_with("hint: see `roofline --help`"),
        "{err}"
    );
}

#[test]
fn analysis_hints_point_at_the_command_that_ran() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("r.html").display().to_string();
    for (args, help) in [
        (
            vec!["report", "--out", out.as_str(), "--seq-len", "0"],
            "report",
        ),
        (
            vec!["sweep", "--stage", "prefill", "--seq-len", "0"],
            "sweep",
        ),
        (vec!["analyze", "--seq-len", "0"], "analyze"),
    ] {
        let err = stderr_of(&args, 2);
        assert!(err.starts_with("error: `--seq-len`"), "{err}");
        assert!(
            err.contains(&format!("hint: see `roofline {help} --help`")),
            "{args:?}: {err}"
        );
    }
    Ok(())
}

#[test]
fn long_bad_values_are_cut_on_one_line() {
    let long = "x".repeat(5000);
    let err = stderr_of(&["analyze", "--hardware", &long], 2);
    let first = err.lines().next().unwrap_or("");
    assert!(first.starts_with("error: unknown chip `"), "{first}");
    assert!(first.chars().count() < 120, "{first}");
    assert!(first.contains('…'), "{first}");
    assert!(err.lines().any(|l| l.starts_with("hint: ")), "{err}");
    let err = stderr_of(&["analyze", "--batch", &long], 2);
    assert!(err.lines().all(|l| l.chars().count() < 200), "{err}");
}

#[test]
fn a_hugging_face_id_names_the_preset_or_asks_for_a_path() {
    // The presets' configs were copied from these Hugging Face repositories
    // (shared/models/meta-llama--Llama-2-7b-hf, meta-llama--Llama-2-70b-chat-hf,
    // meta-llama--Meta-Llama-3.1-8B, openai-community--gpt2-xl).
    for (id, preset) in [
        ("meta-llama/Llama-2-7b-hf", "llama-2-7b"),
        ("meta-llama/Llama-2-70b-chat-hf", "llama-2-70b"),
        ("meta-llama/Meta-Llama-3.1-8B", "llama-3.1-8b"),
        ("openai-community/gpt2-xl", "gpt2-xl"),
    ] {
        let err = stderr_of(&["analyze", id], 2);
        assert!(err.contains("is a Hugging Face model id"), "{err}");
        assert!(
            err.contains(&format!("hint: the preset `{preset}` is this model")),
            "{id}: {err}"
        );
    }
    let err = stderr_of(&["analyze", "google/gemma-7b"], 2);
    assert!(err.contains("hint: pass a preset id"), "{err}");
    assert!(err.contains("download its config.json"), "{err}");
}

#[test]
fn a_top_level_json_that_is_not_an_object_has_a_hint() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let f = dir.path().join("config.json");
    std::fs::write(&f, "[1, 2]")?;
    bad_input(
        &["analyze", &f.display().to_string()],
        "expected a JSON object at the top level",
    );
    Ok(())
}

#[test]
fn roof_files_given_to_hardware_say_how_to_convert_them() -> Result<(), Box<dyn std::error::Error>>
{
    let m = samples(MIXBENCH);
    let err = stderr_of(&["analyze", "--hardware", &m], 2);
    assert!(
        err.contains("is a mixbench log (an empirical roof), not a chip file"),
        "{err}"
    );
    assert!(
        err.contains("hint: convert it once: `roofline import "),
        "{err}"
    );
    assert!(err.contains("--write-chip"), "{err}");
    let s = samples("ert_sum_FLOPS001_MPI0001_OpenMP0001.txt");
    let err = stderr_of(&["sweep", "--hardware", &s], 2);
    assert!(err.contains("is an ERT sum file"), "{err}");
    // Named without a path, from the folder that holds it.
    roofline()
        .current_dir(shared("refs/samples"))
        .args(["analyze", "--hardware", MIXBENCH])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is a mixbench log"))
        .stderr(predicate::str::contains("--write-chip"));
    // A FIFO named without a path is refused, not opened.
    let dir = tempfile::tempdir()?;
    if std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .is_ok_and(|s| s.success())
    {
        roofline()
            .current_dir(dir.path())
            .args(["analyze", "--hardware", "pipe"])
            .timeout(Duration::from_secs(60))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("not a regular file"));
    }
    // A profile is named as one.
    let err = stderr_of(
        &[
            "analyze",
            "--hardware",
            &samples("SYNTHETIC_ncu_csv_format_illustration.csv"),
        ],
        2,
    );
    assert!(
        err.contains("is an Nsight Compute CSV export (a profile)"),
        "{err}"
    );
    Ok(())
}

/// A mixbench log of one experiment row whose GFLOPS is `gflops`.
fn mixbench_row(gflops: &str) -> String {
    format!(
        "mixbench/read-only\nDevice: Test GPU\n--- CSV data ---\n\
         Experiment ID, Single Precision ops,,,, \n\
         Compute iters, Flops/byte, ex.time,  GFLOPS, GB/sec\n\
         0, 0.25, 1.0, {gflops}, 40.0\n---\n"
    )
}

#[test]
fn write_chip_never_writes_a_chip_that_hardware_refuses() -> Result<(), Box<dyn std::error::Error>>
{
    let dir = tempfile::tempdir()?;
    let chip = dir.path().join("chip.toml");
    let c = chip.display().to_string();
    for (gflops, says) in [
        ("-1", "field 4 (`GFLOPS`) is -1"),
        ("0", "field 4 (`GFLOPS`) is 0"),
        ("nan", "not a finite number"),
        // 1e10 GFLOP/s = 1e19 FLOP/s: above the 1e18 FLOP/s of any chip, refused by the reader.
        ("1e10", "beyond any chip"),
        // 1e-4 GFLOP/s = 1e5 FLOP/s: a measured rate the reader takes, below the 1e6 FLOP/s a
        // chip file may hold, so the chip check before writing refuses it.
        ("0.0001", "is not plausible"),
    ] {
        let log = dir.path().join("m.log");
        std::fs::write(&log, mixbench_row(gflops))?;
        let l = log.display().to_string();
        let err = stderr_of(&["import", &l, "--write-chip", &c], 2);
        assert!(err.contains(says), "{gflops}: {err}");
        assert!(err.contains("hint: "), "{err}");
        assert!(!chip.exists(), "{gflops}: no chip file written");
    }
    // A real log's chip is written and read back by --hardware.
    roofline()
        .args(["import", &samples(MIXBENCH), "--write-chip", &c])
        .assert()
        .success();
    roofline()
        .args([
            "analyze",
            "--hardware",
            &c,
            "--stage",
            "decode",
            "--precision",
            "fp32",
        ])
        .assert()
        .success();
    Ok(())
}

#[test]
fn an_unknown_system_lists_the_systems() {
    let err = stderr_of(&["hardware", "show", "dgx-h1000"], 2);
    assert!(
        err.starts_with("error: unknown chip or system `dgx-h1000`"),
        "{err}"
    );
    assert!(
        err.contains("hint: ") && err.contains("closest system: `dgx-h100`"),
        "{err}"
    );
    assert!(err.contains("roofline hardware list --systems"), "{err}");
    assert_eq!(err.lines().count(), 2, "{err}");
}

#[test]
fn a_bad_system_file_names_its_field() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let good = "id = \"x\"\nname = \"x\"\nchip = \"h100-sxm\"\n\
                gpus_per_node = { value = 8, source = \"t\" }\n\
                nodes = { value = 2, source = \"t\" }\n";
    let cases = [
        ("value = 8,", "value = 0,", "field `gpus_per_node` = 0"),
        ("value = 2,", "value = 0,", "field `nodes` = 0"),
        (
            "chip = \"h100-sxm\"",
            "chip = \"h100-sxmm\"",
            "field `chip`",
        ),
    ];
    for (i, (from, to, needle)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("bad{i}.toml"));
        std::fs::write(&p, good.replace(from, to))?;
        let err = stderr_of(&["hardware", "show", &p.display().to_string()], 2);
        assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
        assert!(err.contains("\nhint: "), "{err}");
    }
    // A latency in microseconds written as seconds.
    let p = dir.path().join("slow.toml");
    std::fs::write(
        &p,
        format!(
            "{good}[fabric.scale_out]\nname = \"IB\"\n\
             bandwidth_bytes_per_s = {{ value = 50e9, source = \"t\" }}\n\
             latency_s = {{ value = 14.0, source = \"t\" }}\n"
        ),
    )?;
    let err = stderr_of(&["hardware", "show", &p.display().to_string()], 2);
    assert!(err.contains("field `fabric.scale_out.latency_s`"), "{err}");
    Ok(())
}
