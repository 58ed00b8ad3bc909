//! Every JSON document the CLI writes is valid against its committed schema
//! (`docs/schema/*.schema.json`, generated from the document types of `roofline_report::doc`):
//! every command, on every embedded preset, across workloads (prefill, decode, quantized
//! weights and KV cache, W8A8, FlashAttention, fusion presets), and on every chip of the
//! catalog. A field added to, renamed in or dropped from a document without its type (or the
//! schema regenerated) fails here.

mod common;

use common::{assert_valid, roofline, shared, this_cpu};
use serde_json::Value;
use std::path::{Path, PathBuf};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Runs `roofline` with `args` and `--format json`, asserts it succeeds, and parses stdout.
fn run(args: &[String]) -> Result<Value, Box<dyn std::error::Error>> {
    let out = roofline().args(args).args(["--format", "json"]).output()?;
    assert!(
        out.status.success(),
        "`roofline {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// Runs `args` and validates its output against the schema of `kind`.
fn check(kind: &str, args: &[&str]) -> Result<Value, Box<dyn std::error::Error>> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let v = run(&args)?;
    assert_valid(kind, &v, &format!("roofline {}", args.join(" ")));
    Ok(v)
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The embedded presets, as `roofline models` lists them.
fn presets() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let v = check("models", &["models"])?;
    let names: Vec<String> = v["models"]
        .as_array()
        .ok_or("`models` is not an array")?
        .iter()
        .filter_map(|m| m["name"].as_str().map(str::to_string))
        .collect();
    // The eleven presets of the README: Llama 2 (7B, 13B, 70B), Llama 3.1 (8B, 70B), Mixtral
    // 8x7B, Qwen3-30B-A3B, DeepSeek-V3, GPT-2, GPT-2 XL, OPT-6.7B; and the training plan's
    // Llama-3.1-405B and GPT-3 175B.
    assert_eq!(names.len(), 13, "{names:?}");
    Ok(names)
}

/// The workloads every preset is analysed under: both stages at the defaults; decode at batch
/// 8 with FlashAttention; int4 weights (group size 128) with an fp8 KV cache; W8A8 prefill.
const WORKLOADS: [&[&str]; 4] = [
    &[],
    &[
        "--stage",
        "decode",
        "--batch",
        "8",
        "--context",
        "4096",
        "--flash-attention",
    ],
    &[
        "--weight-precision",
        "int4",
        "--group-size",
        "128",
        "--kv-precision",
        "fp8",
    ],
    &["--w8a8", "--stage", "prefill", "--seq-len", "512"],
];

#[test]
fn analyze_on_every_preset_and_workload() -> TestResult {
    for p in presets()? {
        for w in WORKLOADS {
            let mut args = vec!["analyze", p.as_str(), "--hardware", "h100-sxm"];
            args.extend_from_slice(w);
            let v = check("analyze", &args)?;
            assert!(!v["stages"].as_array().ok_or("no stages")?.is_empty());
        }
    }
    Ok(())
}

#[test]
fn analyze_span_of_deepseek_v3_is_as_documented() -> TestResult {
    // DeepSeek-V3: 61 blocks, the first 3 dense (first_k_dense_replace = 3), the other 58 MoE;
    // their MLP operators run in blocks 0–2 and 3–60, so their span is a block range other
    // than all the blocks, which the schema must admit beside the prologue and the epilogue.
    let v = check(
        "analyze",
        &[
            "analyze",
            "deepseek-v3",
            "--hardware",
            "h200",
            "--stage",
            "decode",
        ],
    )?;
    let ops = v["stages"][0]["ops"].as_array().ok_or("no ops")?;
    let ranges: Vec<(u64, u64)> = ops
        .iter()
        .filter(|o| o["span"]["kind"] == "blocks")
        .filter_map(|o| Some((o["span"]["first"].as_u64()?, o["span"]["last"].as_u64()?)))
        .collect();
    assert!(ranges.contains(&(0, 2)), "{ranges:?}");
    assert!(ranges.contains(&(3, 60)), "{ranges:?}");
    assert!(ranges.contains(&(0, 60)), "{ranges:?}");
    assert!(ops.iter().any(|o| o["span"]["kind"] == "prologue"));
    assert!(ops.iter().any(|o| o["span"]["kind"] == "epilogue"));
    Ok(())
}

/// Whether `doc` is valid against the committed schema of `kind`.
fn is_valid(kind: &str, doc: &Value) -> Result<bool, Box<dyn std::error::Error>> {
    let s = common::schema(kind);
    Ok(jsonschema::draft202012::new(&s)?.is_valid(doc))
}

#[test]
fn the_schemas_reject_drift() -> TestResult {
    // The kinds of drift the schemas exist to catch, each made by hand on a real document.
    let v = check(
        "analyze",
        &[
            "analyze",
            "deepseek-v3",
            "--hardware",
            "h200",
            "--stage",
            "decode",
        ],
    )?;
    // A field the types do not have, in an operator.
    let mut extra = v.clone();
    extra["stages"][0]["ops"][0]["flops_per_token"] = 1.0.into();
    assert!(!is_valid("analyze", &extra)?);
    // A field dropped.
    let mut dropped = v.clone();
    if let Some(o) = dropped["stages"][0]["totals"].as_object_mut() {
        o.remove("time_s");
    }
    assert!(!is_valid("analyze", &dropped)?);
    // A block range without its last block, and a span of another kind.
    let mut span = v.clone();
    span["stages"][0]["ops"][1]["span"] = serde_json::json!({ "kind": "blocks", "first": 0 });
    assert!(!is_valid("analyze", &span)?);
    span["stages"][0]["ops"][1]["span"] = serde_json::json!({ "kind": "layer" });
    assert!(!is_valid("analyze", &span)?);
    // A role the types do not have.
    let mut role = v.clone();
    role["stages"][0]["ops"][0]["role"] = "q_projection".into();
    assert!(!is_valid("analyze", &role)?);
    // A number where the schema says string, and another schema version.
    let mut kind = v.clone();
    kind["stages"][0]["ops"][0]["kind"] = 3.into();
    assert!(!is_valid("analyze", &kind)?);
    let mut version = v.clone();
    let current = v["schema_version"].as_u64().expect("a schema version");
    version["schema_version"] = (current + 1).into();
    assert!(!is_valid("analyze", &version)?);
    // An unknown precision as a peak's key.
    let mut peak = v.clone();
    peak["hardware"]["peak_flops_per_s"]["fp6"] = 1e15.into();
    assert!(!is_valid("analyze", &peak)?);
    // An operator's shape with a member of another operator type (`op`: internally tagged).
    let mut op = check(
        "op",
        &["op", "gemm", "--m", "1", "--n", "4096", "--k", "4096"],
    )?;
    op["kernels"][0]["shape"]["rows"] = 1.into();
    assert!(!is_valid("op", &op)?);
    // The untouched document is valid.
    assert!(is_valid("analyze", &v)?);
    Ok(())
}

#[test]
fn analyze_fusion_on_every_preset() -> TestResult {
    for p in presets()? {
        for (preset, stage) in [
            ("eager", "decode"),
            ("compiled", "both"),
            ("max", "prefill"),
        ] {
            check(
                "analyze-fusion",
                &[
                    "analyze",
                    p.as_str(),
                    "--hardware",
                    "h100-sxm",
                    "--fusion",
                    preset,
                    "--stage",
                    stage,
                ],
            )?;
        }
    }
    Ok(())
}

#[test]
fn explain_the_first_and_last_operator_and_every_one_without_flops() -> TestResult {
    for p in presets()? {
        for stage in ["prefill", "decode"] {
            let args = ["analyze", p.as_str(), "--stage", stage];
            let a = check("analyze", &args)?;
            let ops = a["stages"][0]["ops"].as_array().ok_or("no ops")?;
            let mut names: Vec<&str> = ops
                .iter()
                .filter(|o| o["flops"] == 0.0)
                .filter_map(|o| o["name"].as_str())
                .collect();
            names.extend(ops.first().and_then(|o| o["name"].as_str()));
            names.extend(ops.last().and_then(|o| o["name"].as_str()));
            for n in names {
                check(
                    "explain",
                    &["analyze", p.as_str(), "--stage", stage, "--explain", n],
                )?;
            }
        }
    }
    // A lone operator's derivations (`stage` is null).
    let v = check(
        "explain",
        &[
            "op",
            "attention",
            "--heads",
            "32",
            "--kv-heads",
            "8",
            "--head-dim",
            "128",
            "--q-len",
            "2048",
            "--kv-len",
            "2048",
            "--explain",
        ],
    )?;
    assert!(v["derivations"][0]["stage"].is_null());
    Ok(())
}

#[test]
fn sweep_mfu_mbu_and_report_on_every_preset() -> TestResult {
    let dir = tempfile::tempdir()?;
    for p in presets()? {
        let v = check(
            "sweep",
            &[
                "sweep",
                p.as_str(),
                "--hardware",
                "h100-sxm",
                "--batch",
                "1..16",
            ],
        )?;
        assert_eq!(v["batches"].as_array().map(Vec::len), Some(5));
        check(
            "sweep",
            &[
                "sweep",
                p.as_str(),
                "--hardware",
                "a100-sxm-80gb",
                "--stage",
                "decode",
                "--batch",
                "1,64",
                "--context",
                "2048",
                "--flash-attention",
                "--kv-precision",
                "fp8",
            ],
        )?;
        check(
            "mfu",
            &[
                "mfu",
                p.as_str(),
                "--seq-len",
                "4096",
                "--tokens-per-s",
                "3000",
                "--hardware",
                "h100-sxm",
                "--recompute",
                "selective",
                "--tokens",
                "1e12",
            ],
        )?;
        check(
            "mbu",
            &[
                "mbu",
                p.as_str(),
                "--tpot",
                "30ms",
                "--hardware",
                "h100-sxm",
                "--devices",
                "8",
                "--context",
                "2048",
            ],
        )?;
        let out = path(&dir.path().join(format!("{p}.html")));
        let v = check(
            "report",
            &[
                "report",
                p.as_str(),
                "--hardware",
                "h100-sxm",
                "--out",
                &out,
            ],
        )?;
        assert_eq!(v["out"], out.as_str());
    }
    Ok(())
}

#[test]
fn mfu_and_mbu_without_a_model() -> TestResult {
    // MFU as a function of N (no model, no --params).
    check(
        "mfu-by-size",
        &[
            "mfu",
            "--tokens-per-s",
            "50000",
            "--devices",
            "8",
            "--hardware",
            "h100-sxm",
        ],
    )?;
    // A reported FLOP/s per device, no model.
    check(
        "mfu-reported",
        &[
            "mfu",
            "--achieved-flops",
            "150T",
            "--hardware",
            "a100-sxm-80gb",
        ],
    )?;
    // ... and with a model: each formula's implied tokens/s.
    check(
        "mfu",
        &[
            "mfu",
            "llama-3.1-8b",
            "--seq-len",
            "8192",
            "--achieved-flops",
            "150T",
            "--hardware",
            "a100-sxm-80gb",
        ],
    )?;
    // --params with tokens over a time; GPT-3's shape with steps (Narayanan et al. 2021).
    check(
        "mfu",
        &[
            "mfu",
            "--params",
            "70e9",
            "--tokens",
            "100e9",
            "--time",
            "30d",
            "--devices",
            "512",
            "--hardware",
            "a100-sxm-80gb",
        ],
    )?;
    check(
        "mfu",
        &[
            "mfu",
            "--params",
            "175e9",
            "--layers",
            "96",
            "--hidden",
            "12288",
            "--seq-len",
            "2048",
            "--vocab",
            "51200",
            "--step-time",
            "10s",
            "--global-batch",
            "1536",
            "--devices",
            "1024",
            "--peak",
            "312e12",
        ],
    )?;
    // Only the time to train (no work): `work` is null.
    let v = check(
        "mfu",
        &[
            "mfu",
            "llama-2-7b",
            "--tokens",
            "2e12",
            "--hardware",
            "h100-sxm",
        ],
    )?;
    assert!(v["work"].is_null());
    check(
        "mbu",
        &[
            "mbu",
            "--params",
            "7e9",
            "--tpot",
            "14ms",
            "--bandwidth",
            "2e12",
        ],
    )?;
    Ok(())
}

#[test]
fn op_and_fuse() -> TestResult {
    let ops: [&[&str]; 9] = [
        &[
            "gemm",
            "--m",
            "1",
            "--n",
            "4096",
            "--k",
            "4096",
            "--hardware",
            "h100-sxm",
        ],
        &[
            "gemm",
            "--m",
            "2048",
            "--n",
            "4096",
            "--k",
            "4096",
            "--precision",
            "fp8",
            "--hardware",
            "h100-sxm",
        ],
        &[
            "attention",
            "--heads",
            "32",
            "--kv-heads",
            "8",
            "--head-dim",
            "128",
            "--q-len",
            "1",
            "--kv-len",
            "4096",
            "--causal",
            "--fused",
        ],
        &[
            "attention",
            "--heads",
            "32",
            "--head-dim",
            "128",
            "--q-len",
            "2048",
            "--kv-len",
            "2048",
            "--causal",
        ],
        &["softmax", "--rows", "65536", "--cols", "2048"],
        &[
            "softmax",
            "--rows",
            "32",
            "--cols",
            "4096",
            "--no-scale-mask",
        ],
        &["rmsnorm", "--rows", "2048", "--cols", "4096"],
        &[
            "layernorm",
            "--rows",
            "2048",
            "--cols",
            "1600",
            "--precision",
            "fp32",
        ],
        &["elementwise", "--inputs", "2", "--elements", "8388608"],
    ];
    for o in ops {
        let mut args = vec!["op"];
        args.extend_from_slice(o);
        check("op", &args)?;
        args.push("--explain");
        check("explain", &args)?;
    }
    // The seed's chain, infeasible on the H100 (its 11008-wide intermediate does not fit), and
    // a small one that fits.
    let v = check(
        "fuse",
        &[
            "fuse",
            "--chain",
            "rmsnorm,linear,silu,linear",
            "--tokens",
            "2048",
            "--hidden",
            "4096",
            "--intermediate",
            "11008",
            "--hardware",
            "h100-sxm",
        ],
    )?;
    assert_eq!(v["feasible"], false);
    check(
        "fuse",
        &[
            "fuse",
            "--chain",
            "rmsnorm,linear",
            "--tokens",
            "16",
            "--hidden",
            "256",
            "--intermediate",
            "688",
            "--hardware",
            "a6000",
        ],
    )?;
    Ok(())
}

#[test]
fn hardware_on_every_chip_and_models() -> TestResult {
    let list = check("hardware-list", &["hardware", "list"])?;
    let ids: Vec<String> = list["hardware"]
        .as_array()
        .ok_or("`hardware` is not an array")?
        .iter()
        .filter_map(|d| d["id"].as_str().map(str::to_string))
        .collect();
    // 29 chips in the catalog (README, Use).
    assert_eq!(ids.len(), 29);
    for id in &ids {
        check("hardware-show", &["hardware", "show", id])?;
    }
    let mut args = vec!["hardware", "compare"];
    args.extend(ids.iter().map(String::as_str));
    let v = check("hardware-compare", &args)?;
    assert_eq!(v["hardware"].as_array().map(Vec::len), Some(29));
    check("hardware-show", &["hardware", "show", &path(&this_cpu())])?;
    Ok(())
}

#[test]
fn hardware_on_every_system() -> TestResult {
    let list = check("hardware-list-systems", &["hardware", "list", "--systems"])?;
    let ids: Vec<String> = list["systems"]
        .as_array()
        .ok_or("`systems` is not an array")?
        .iter()
        .filter_map(|s| s["id"].as_str().map(str::to_string))
        .collect();
    assert!(ids.len() >= 6, "{ids:?}");
    for id in &ids {
        let v = check("hardware-show-system", &["hardware", "show", id])?;
        assert_eq!(v["id"], id.as_str());
    }
    Ok(())
}

fn sample(name: &str) -> String {
    path(&shared("refs/samples").join(name))
}

fn trace() -> String {
    path(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../inputs/tests/fixtures/small-llama-cpu-trace.json"),
    )
}

#[test]
fn import_every_sample_and_join_a_trace() -> TestResult {
    let ncu = sample("SYNTHETIC_ncu_csv_format_illustration.csv");
    let torch = sample("torch_profiler_trace_excerpt_hta_backward_thread.json");
    let cpu = path(&this_cpu());
    let v = check("import-profile", &["import", &ncu])?;
    assert!(v["hardware"].is_null());
    check(
        "import-profile",
        &["import", &ncu, "--hardware", "h100-sxm"],
    )?;
    check(
        "import-profile",
        &["import", &torch, "--hardware", "a100-sxm-80gb"],
    )?;
    check("import-profile", &["import", &trace(), "--hardware", &cpu])?;
    for roof in [
        "mixbench_cuda_ro_GTX-1060.log",
        "ert_roofline.json",
        "ert_sum_FLOPS001_MPI0001_OpenMP0001.txt",
        "ert_try001_head_FLOPS001_MPI0001_OpenMP0001.txt",
    ] {
        let r = sample(roof);
        check("import-roof", &["import", &r])?;
        // The roof as the chip kernels are placed under.
        check("import-profile", &["import", &ncu, "--hardware", &r])?;
    }
    let config = path(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/small-llama/config.json"),
    );
    let v = check(
        "join",
        &[
            "analyze",
            &config,
            "--precision",
            "fp32",
            "--stage",
            "prefill",
            "--seq-len",
            "64",
            "--hardware",
            &cpu,
            "--profile",
            &trace(),
        ],
    )?;
    assert_eq!(v["kind"], "join");
    Ok(())
}
