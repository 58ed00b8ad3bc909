//! End-to-end tests of `roofline import`, `analyze --profile` and `report --profile`: exit
//! codes, stdout and stderr. Numbers come from the sample files, read by hand, and hand
//! arithmetic written next to them.

mod common;

use common::{bad_input, json_of, roofline, shared};
use predicates::prelude::*;
use serde_json::Value;
use std::path::PathBuf;

fn samples(name: &str) -> String {
    shared("refs/samples").join(name).display().to_string()
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../inputs/tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn small_llama() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts/small-llama/config.json")
        .display()
        .to_string()
}

const NCU: &str = "SYNTHETIC_ncu_csv_format_illustration.csv";
const HTA: &str = "torch_profiler_trace_excerpt_hta_backward_thread.json";
const TRACE: &str = "SYNTHETIC_small_llama_cpu_trace.json";
/// The real trace: scripts/small-llama/profile_cpu.py on this machine's CPU.
const REAL_TRACE: &str = "small-llama-cpu-trace.json";

fn this_cpu() -> String {
    common::this_cpu().display().to_string()
}

/// Whether `v` is a number within 1e-9 of `expect`, relative to `expect`.
fn close(v: &Value, expect: f64) -> bool {
    common::close(v.as_f64().unwrap_or(f64::NAN), expect, 1e-9)
}

#[test]
fn every_sample_imports() {
    for f in [
        NCU,
        HTA,
        "mixbench_cuda_ro_GTX-1060.log",
        "ert_roofline.json",
        "ert_sum_FLOPS001_MPI0001_OpenMP0001.txt",
        "ert_try001_head_FLOPS001_MPI0001_OpenMP0001.txt",
    ] {
        roofline()
            .args(["import", &samples(f)])
            .assert()
            .success()
            .stderr("");
    }
}

#[test]
fn ncu_triad_on_the_h200_by_hand() -> Result<(), Box<dyn std::error::Error>> {
    // 134.22 + 67.11 Mbyte = 201.33e6 B in 52.10 µs; H200 4.8 TB/s: roofline time
    // 201.33e6 / 4.8e12 = 41.94375 µs, 80.51 % of the roof, 10.15625 µs lost; AI =
    // 33,554,432 / 201.33e6 = 0.1667 < ridge (67e12 / 4.8e12 = 13.96): memory-bound.
    let v = json_of(&["import", &samples(NCU), "--hardware", "h200"]);
    let k = &v["kernels"][0];
    assert!(close(&k["duration_s"], 52.10e-6));
    assert!(close(&k["flops"], 33_554_432.0));
    assert!(close(&k["roofline_time_s"], 201.33e6 / 4.8e12));
    assert!(close(&k["fraction_of_roof"], 201.33e6 / 4.8e12 / 52.10e-6));
    assert!(close(&k["time_lost_s"], 52.10e-6 - 201.33e6 / 4.8e12));
    assert_eq!(k["regime"], "memory");
    assert!(k["advice"]
        .as_str()
        .ok_or("expected a value, got None")?
        .contains("fuse"));
    assert_eq!(v["kind"], "profile");
    assert_eq!(v["hardware"]["id"], "h200");
    Ok(())
}

#[test]
fn hta_gemm_on_the_a100_by_hand() {
    // aten::mm 2048×2048·2048×256 in TF32 (a tensorop kernel), 45 µs: 2,147,483,648 FLOP;
    // 20,971,520 B. A100 TF32 156 TFLOP/s, 2.039 TB/s: compute time 13.766 µs > memory time
    // 10.285 µs; AI 102.4 > ridge 76.5: compute-bound at 30.6 % of the roof.
    let v = json_of(&["import", &samples(HTA), "--hardware", "a100-sxm-80gb"]);
    let k = &v["kernels"][0];
    assert!(close(&k["flops"], 2_147_483_648.0));
    assert!(close(
        &k["arithmetic_intensity"],
        2_147_483_648.0 / 20_971_520.0
    ));
    assert!(close(&k["peak_flops_per_s"], 156e12));
    assert!(close(
        &k["fraction_of_roof"],
        2_147_483_648.0 / 156e12 / 45e-6
    ));
    assert_eq!(k["precision"], "tf32");
    assert_eq!(k["regime"], "compute");
    assert_eq!(k["op"], "aten::mm");
}

#[test]
fn an_empirical_roof_is_a_hardware_and_a_chip_file() -> Result<(), Box<dyn std::error::Error>> {
    // The triad under the GTX 1060's mixbench roof: bandwidth 166.23 GB/s.
    let v = json_of(&[
        "import",
        &samples(NCU),
        "--hardware",
        &samples("mixbench_cuda_ro_GTX-1060.log"),
    ]);
    assert!(close(&v["kernels"][0]["bandwidth_bytes_per_s"], 166.23e9));
    assert!(v["hardware"]["name"]
        .as_str()
        .ok_or("expected a value, got None")?
        .contains("GeForce GTX 1060"));
    // --write-chip, then analyze on it: fp64 peak 288.33 GFLOP/s, DRAM 68.76 GB/s.
    let dir = tempfile::tempdir()?;
    let chip = dir.path().join("ert.toml");
    roofline()
        .args(["import", &samples("ert_roofline.json"), "--write-chip"])
        .arg(&chip)
        .assert()
        .success();
    let shown = roofline()
        .args(["hardware", "show"])
        .arg(&chip)
        .args(["--format", "json"])
        .output()?;
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains("288330000000") || text.contains("2.8833e11"),
        "{text}"
    );
    assert!(
        text.contains("68760000000") || text.contains("6.876e10"),
        "{text}"
    );
    Ok(())
}

#[test]
fn cpu_trace_kernels_are_the_outermost_costed_operators() -> Result<(), Box<dyn std::error::Error>>
{
    // SYNTHETIC_small_llama_cpu_trace.json: per block 6 + 6 norm pieces, 7 linears, 2 matmuls,
    // softmax, silu, mul, 2 residual adds, 10 rotary pieces (mul, neg, cat, mul, add for q and
    // k), a scale mul, a mask add, 3 clones = 41; 4 blocks = 164; plus embedding, 4 rotary
    // table ops (matmul, cat, cos, sin), the final norm's 6 and lm_head = 12: 176.
    let v = json_of(&["import", &fixture(TRACE)]);
    let kernels = v["kernels"]
        .as_array()
        .ok_or("expected a value, got None")?;
    assert_eq!(kernels.len(), 176);
    assert_eq!(v["steps"], 1);
    // No roof: ranked by duration, the longest first: up_proj, 201 µs.
    assert!(close(&kernels[0]["duration_s"], 201e-6));
    assert_eq!(kernels[0]["name"], "aten::linear");
    assert_eq!(kernels[0]["taken_for"], "gemm m=64 n=688 k=256 fp32");
    assert!(kernels[0]["fraction_of_roof"].is_null());
    Ok(())
}

#[test]
fn analyze_with_profile_prints_predicted_against_measured() -> Result<(), Box<dyn std::error::Error>>
{
    // Durations written in scripts/small-llama/synthetic_trace.py: q_proj 100 µs and o_proj
    // 90 µs per block (same shape, told apart by order), 4 blocks; input_layernorm 5+6+3+2+7+8
    // = 31 µs, post_attention_layernorm 32, final norm 33; lm_head 30.
    let args = [
        "analyze",
        &small_llama(),
        "--hardware",
        "h100-sxm",
        "--precision",
        "fp32",
        "--stage",
        "prefill",
        "--seq-len",
        "64",
        "--profile",
        &fixture(TRACE),
    ];
    let v = json_of(&args);
    let rows = v["stages"][0]["rows"]
        .as_array()
        .ok_or("expected a value, got None")?;
    let m = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))["measured_s"]
            .clone()
    };
    assert!(close(&m("q_proj"), 400e-6));
    assert!(close(&m("o_proj"), 360e-6));
    assert!(close(&m("input_layernorm"), 124e-6));
    assert!(close(&m("post_attention_layernorm"), 128e-6));
    assert!(close(&m("norm"), 33e-6));
    assert!(close(&m("lm_head"), 30e-6));
    assert!(m("rotary_emb").is_null());
    // The same on this machine's measured roof (scripts/small-llama/this-cpu.toml).
    let cpu = this_cpu();
    let mut on_cpu = args.to_vec();
    on_cpu[3] = &cpu;
    roofline()
        .args(&on_cpu)
        .assert()
        .success()
        .stdout(predicate::str::contains("400.0 µs"))
        .stderr("");
    roofline()
        .args(args)
        .assert()
        .success()
        .stdout(predicate::str::contains("measured / predicted"))
        .stdout(predicate::str::contains("q_proj"))
        .stdout(predicate::str::contains("400.0 µs"))
        .stderr("");
    Ok(())
}

#[test]
fn real_cpu_trace_predicted_against_measured_on_the_measured_cpu_roof(
) -> Result<(), Box<dyn std::error::Error>> {
    // small-llama-cpu-trace.json, one prefill of 64 tokens on this CPU, joined to the same
    // model on scripts/small-llama/this-cpu.toml (fp32 79.53479896399232 GFLOP/s, DRAM
    // 10.116817117473637 GB/s). Durations read from the trace, one event a line:
    // q_proj, the 1st linear of each block, lines 122, 376, 630, 884: 229.55 + 208.821 +
    // 208.23 + 226.876 = 873.477 µs; o_proj, the 4th, lines 284, 538, 792, 1046: 214.462 +
    // 200.015 + 199.123 + 199.173 = 812.773 µs; lm_head, line 1140: 147.667 µs.
    // Predicted q_proj: 2·64·256·256 = 8,388,608 FLOP / 79.53 GFLOP/s = 105.47 µs, above its
    // memory time (64·256 + 256·256 + 64·256)·4 = 393,216 B / 10.12 GB/s = 38.87 µs; × 4.
    let trace = fixture(REAL_TRACE);
    let cpu = this_cpu();
    let args = [
        "analyze",
        &small_llama(),
        "--hardware",
        &cpu,
        "--precision",
        "fp32",
        "--stage",
        "prefill",
        "--seq-len",
        "64",
        "--no-flash-attention",
        "--profile",
        &trace,
    ];
    let v = json_of(&args);
    let stage = &v["stages"][0];
    assert_eq!(stage["steps"], 1);
    let rows = stage["rows"]
        .as_array()
        .ok_or("expected a value, got None")?;
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))
            .clone()
    };
    let q = row("q_proj");
    assert!(close(&q["measured_s"], 873.477e-6));
    let predicted = 4.0 * 8_388_608.0 / 7.953479896399232e10;
    assert!(close(&q["predicted_s"], predicted));
    assert!(close(&q["measured_over_predicted"], 873.477e-6 / predicted));
    assert_eq!(
        (q["events"].as_u64(), q["expected_events"].as_u64()),
        (Some(4), Some(4))
    );
    assert!(close(&row("o_proj")["measured_s"], 812.773e-6));
    assert!(close(&row("lm_head")["measured_s"], 147.667e-6));
    // Every operator with a signature matched all its events; rotary and the KV-cache write
    // have none.
    for r in rows {
        if r["expected_events"].as_u64() == Some(0) {
            assert!(r["measured_s"].is_null(), "{}", r["name"]);
        } else {
            assert_eq!(r["events"], r["expected_events"], "{}", r["name"]);
        }
    }
    assert!(row("rotary_emb")["measured_s"].is_null());
    roofline()
        .args(args)
        .assert()
        .success()
        .stdout(predicate::str::contains("measured / predicted"))
        .stdout(predicate::str::contains("873.5 µs"))
        .stdout(predicate::str::contains("812.8 µs"))
        .stdout(predicate::str::contains("147.7 µs"))
        .stdout(predicate::str::contains("matched operators"))
        .stderr("");
    // The import alone: 186 costed operators (see crates/inputs/tests/cpu_trace.rs).
    roofline()
        .args(["import", &trace, "--hardware", &cpu])
        .assert()
        .success()
        .stdout(predicate::str::contains("186 kernel(s)"))
        .stderr("");
    Ok(())
}

#[test]
fn report_with_profile_has_the_section() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let html = dir.path().join("r.html");
    roofline()
        .args([
            "report",
            &small_llama(),
            "--hardware",
            "h100-sxm",
            "--precision",
            "fp32",
            "--stage",
            "prefill",
            "--seq-len",
            "64",
            "--profile",
            &fixture(TRACE),
            "--out",
        ])
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html)?;
    assert!(page.contains("id=\"profile\""));
    assert!(page.contains("Profile: predicted against measured"));
    assert!(page.contains("id=\"profile-join-prefill\""));
    assert!(page.contains("<tr data-name=\"q_proj\"><td>q_proj</td><td>4</td>"));
    assert!(page.find("id=\"profile\"") < page.find("<footer"));
    Ok(())
}

#[test]
fn plot_of_a_profile() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let svg = dir.path().join("k.svg");
    roofline()
        .args(["import", &samples(NCU), "--hardware", "h200", "--plot"])
        .arg(&svg)
        .assert()
        .success();
    let s = std::fs::read_to_string(&svg)?;
    assert!(s.contains("<svg") && s.contains("triad_kernel"));
    Ok(())
}

#[test]
fn bad_files_exit_2_naming_line_or_field() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let write = |name: &str, text: &str| -> std::io::Result<String> {
        let p = dir.path().join(name);
        std::fs::write(&p, text)?;
        Ok(p.display().to_string())
    };
    // A trace cut short.
    let full = std::fs::read_to_string(fixture(TRACE))?;
    let cut = write("cut.json", &full[..2000])?;
    bad_input(&["import", &cut], "truncated");
    // A trace with no kernels and no operators.
    let empty = write(
        "none.json",
        r#"{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","ts":1,"dur":2}]}"#,
    )?;
    bad_input(&["import", &empty], "no `kernel` and no `cpu_op`");
    // ncu: wrong columns, unknown unit, truncated row.
    let cols = write("cols.csv", "\"Kernel\",\"Time\"\n\"a\",\"1\"\n")?;
    bad_input(&["import", &cols], "line 1: the header has no `ID` column");
    let csv = std::fs::read_to_string(samples(NCU))?;
    let unit = write("unit.csv", &csv.replace("\"usecond\"", "\"fortnight\""))?;
    bad_input(
        &["import", &unit],
        "line 7: metric `gpu__time_duration.sum`: unknown unit `fortnight`",
    );
    let lines: Vec<&str> = csv.lines().collect();
    let trunc = write(
        "trunc.csv",
        &format!("{}\n{}", lines[..6].join("\n"), &lines[6][..60]),
    )?;
    bad_input(&["import", &trunc], "line 7");
    // mixbench cut inside its table.
    let mix = std::fs::read_to_string(samples("mixbench_cuda_ro_GTX-1060.log"))?;
    let cut_mix: String = mix.lines().take(26).collect::<Vec<_>>().join("\n") + "\n 1, 0.75,";
    let m = write("mix.log", &cut_mix)?;
    bad_input(&["import", &m], "line 27");
    // Not a known format; a missing file.
    let txt = write("x.txt", "hello\n")?;
    bad_input(&["import", &txt], "not a format roofline imports");
    bad_input(&["import", "/nonexistent/p.json"], "cannot read");
    // Flags that do not fit the file.
    bad_input(
        &[
            "import",
            &samples(NCU),
            "--write-chip",
            &dir.path().join("c.toml").display().to_string(),
        ],
        "is a profile, not an empirical roof",
    );
    bad_input(
        &[
            "import",
            &samples(NCU),
            "--plot",
            &dir.path().join("p.svg").display().to_string(),
        ],
        "`--plot` needs a roof",
    );
    bad_input(
        &[
            "analyze",
            &small_llama(),
            "--stage",
            "prefill",
            "--profile",
            &samples(NCU),
        ],
        "no operator shapes",
    );
    Ok(())
}
