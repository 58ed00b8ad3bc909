//! `roofline mfu` and `roofline mbu`: which formula describes which model, the counting
//! conventions (causal attention, what PaLM's N holds) and that each is printed, an MFU from a
//! reported FLOP/s, dense peaks, total against active parameters, the target MFU in percent, and
//! impossible utilisations. Every expected number is hand arithmetic written beside it, from the
//! models' published shapes (`shared/models`) and datasheets.

mod common;

use common::{bad_input, close, json_of, roofline};
use predicates::prelude::*;
use serde_json::Value;

fn formula<'a>(v: &'a Value, id: &str) -> Option<&'a Value> {
    v["formulas"]
        .as_array()?
        .iter()
        .find(|f| f["formula"] == id)
}

fn num(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {pointer} in {v}"))
}

#[test]
fn megatron_is_printed_only_for_models_it_describes() -> Result<(), Box<dyn std::error::Error>> {
    // Llama-3.1-8B: 8 KV heads for 32 query heads, SwiGLU MLP of 14336. Megatron's 24·h² per
    // layer would be 24·4096² = 402.7M FLOP against 2·(2·4096² + 2·4096·1024 + 3·4096·14336) =
    // 436.2M by hand: 7.7 % low, so the row is left out with the reason.
    let args = [
        "mfu",
        "llama-3.1-8b",
        "--seq-len",
        "8192",
        "--tokens-per-s",
        "30000",
        "--devices",
        "8",
        "--hardware",
        "h100-sxm",
    ];
    let v = json_of(&args);
    assert!(formula(&v, "megatron").is_none());
    let nv = &v["not_valid"][0];
    assert_eq!(nv["formula"], "megatron");
    let why = nv["reason"].as_str().ok_or("a reason")?;
    assert!(
        why.contains("grouped-query attention (8 KV heads for 32 query heads"),
        "{why}"
    );
    assert!(
        why.contains("a gated MLP (3 matrices of width 14336"),
        "{why}"
    );
    roofline()
        .args(args)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "not valid for this architecture: 72·L·h²",
        ));
    // Mixtral: the mixture of experts is named too.
    let v = json_of(&[
        "mfu",
        "mixtral-8x7b",
        "--seq-len",
        "4096",
        "--tokens-per-s",
        "1000",
        "--hardware",
        "h100-sxm",
    ]);
    let why = v["not_valid"][0]["reason"].as_str().ok_or("a reason")?;
    assert!(
        why.contains("a mixture of experts (2 of 8 routed experts"),
        "{why}"
    );
    // GPT-2 (12 layers, h 768, MHA, a GELU MLP of 3072 = 4h, V 50257) is what Megatron
    // describes; at T = 1024, causal: forward 24·12·768² + 4·12·768·1024/2 + 2·50257·768.
    let v = json_of(&[
        "mfu",
        "gpt2",
        "--seq-len",
        "1024",
        "--tokens-per-s",
        "1000",
        "--hardware",
        "h100-sxm",
    ]);
    assert_eq!(v["not_valid"].as_array().map(Vec::len), Some(0));
    let m = formula(&v, "megatron").ok_or("the Megatron row")?;
    let (l, h, s, vocab) = (12.0, 768.0, 1024.0, 50257.0);
    let forward = 24.0 * l * h * h + 4.0 * l * h * s / 2.0 + 2.0 * vocab * h;
    assert!(close(
        num(m, "/model_flops_per_token"),
        3.0 * forward,
        1e-12
    ));
    Ok(())
}

#[test]
fn palm_row_says_how_the_embedding_counts() -> Result<(), Box<dyn std::error::Error>> {
    // Llama-2-7B, untied: N = 6,738,415,616 (Meta), embedding and lm_head 32000·4096 =
    // 131,072,000 each. By default PaLM's N leaves out the looked-up input table; `all` counts
    // every parameter. Full attention here: 12·L·H·Q·T = 12·32·4096·4096.
    let base = [
        "mfu",
        "llama-2-7b",
        "--seq-len",
        "4096",
        "--tokens-per-s",
        "30000",
        "--hardware",
        "a100-sxm-80gb",
        "--no-causal",
    ];
    let attention = 12.0 * 32.0 * 4096.0 * 4096.0;
    let table = 131_072_000.0;
    let v = json_of(&base);
    assert_eq!(v["conventions"]["palm_embedding"], "output");
    assert_eq!(v["model"]["palm_parameters"], 6_738_415_616.0 - table);
    let p = formula(&v, "palm").ok_or("the PaLM row")?;
    assert!(close(
        num(p, "/model_flops_per_token"),
        6.0 * (6_738_415_616.0 - table) + attention,
        1e-12
    ));
    let mut all = base.to_vec();
    all.extend(["--palm-embedding", "all"]);
    let v = json_of(&all);
    assert_eq!(v["conventions"]["palm_embedding"], "all");
    let p = formula(&v, "palm").ok_or("the PaLM row")?;
    assert!(close(
        num(p, "/model_flops_per_token"),
        6.0 * 6_738_415_616.0 + attention,
        1e-12
    ));
    roofline()
        .args(base)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "PaLM's N = 6.61B (6.74B active parameters less 131.1M looked up",
        ));
    Ok(())
}

#[test]
fn causal_attention_is_the_default_and_is_stated() -> Result<(), Box<dyn std::error::Error>> {
    // Llama-2-7B at T = 4096: PaLM's forward attention term 4·L·H·Q·T = 4·32·4096·4096 with every
    // score, half of it causal (T²/2 scores per head, FlashAttention's count).
    let args = [
        "mfu",
        "llama-2-7b",
        "--seq-len",
        "4096",
        "--tokens-per-s",
        "30000",
        "--hardware",
        "a100-sxm-80gb",
    ];
    let full = 4.0 * 32.0 * 4096.0 * 4096.0;
    let v = json_of(&args);
    assert_eq!(v["conventions"]["attention_mask"], "causal");
    let p = formula(&v, "palm").ok_or("the PaLM row")?;
    assert_eq!(num(p, "/forward_flops_per_token/attention"), full / 2.0);
    let mut no = args.to_vec();
    no.push("--no-causal");
    let v = json_of(&no);
    assert_eq!(v["conventions"]["attention_mask"], "full");
    assert_eq!(
        num(
            formula(&v, "palm").ok_or("PaLM")?,
            "/forward_flops_per_token/attention"
        ),
        full
    );
    // The last of --causal / --no-causal wins.
    no.push("--causal");
    assert_eq!(json_of(&no)["conventions"]["attention_mask"], "causal");
    roofline()
        .args(args)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "attention: causal (T²/2 scores per head",
        ))
        .stdout(predicate::str::contains("the diagonal counted half"));
    Ok(())
}

#[test]
fn mfu_from_a_reported_flops_per_device() -> Result<(), Box<dyn std::error::Error>> {
    // 150 TFLOP/s per A100 (312 dense bf16, NVIDIA's datasheet): MFU 150/312 = 48.08 %.
    let v = json_of(&[
        "mfu",
        "--achieved-flops",
        "150T",
        "--hardware",
        "a100-sxm-80gb",
    ]);
    assert_eq!(v["mode"], "reported");
    assert!(close(num(&v, "/mfu"), 150.0 / 312.0, 1e-12));
    assert_eq!(v["rating"], "good");
    roofline()
        .args([
            "mfu",
            "--achieved-flops",
            "150T",
            "--hardware",
            "a100-sxm-80gb",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("48.08 %"));
    // With N = 70e9 on 8 devices, 6N implies 150e12·8 / 420e9 = 2857.14 tokens/s; the MFU is
    // the same ratio by every formula.
    let v = json_of(&[
        "mfu",
        "--params",
        "70e9",
        "--achieved-flops",
        "150e12",
        "--devices",
        "8",
        "--hardware",
        "a100-sxm-80gb",
    ]);
    let k = formula(&v, "kaplan").ok_or("the 6N row")?;
    assert!(close(num(k, "/tokens_per_s"), 150e12 * 8.0 / 420e9, 1e-12));
    assert!(close(num(k, "/mfu"), 150.0 / 312.0, 1e-12));
    assert!(v["work"]["tokens_per_s"].is_null());
    assert_eq!(v["work"]["achieved_flops_per_s_per_device"], 150e12);
    // 400 TFLOP/s of a 312 TFLOP/s chip is impossible, and rated so.
    let v = json_of(&[
        "mfu",
        "--achieved-flops",
        "400T",
        "--hardware",
        "a100-sxm-80gb",
    ]);
    assert_eq!(v["rating"], "impossible");
    // Zero is refused by the value parser, naming the flag.
    roofline()
        .args([
            "mfu",
            "--achieved-flops",
            "0",
            "--hardware",
            "a100-sxm-80gb",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--achieved-flops"));
    Ok(())
}

#[test]
fn a_sparse_peak_is_refused_unless_asked_for() -> Result<(), Box<dyn std::error::Error>> {
    // NVIDIA's A100 datasheet: bf16 312 TFLOP/s dense, 624 with 2:4 sparsity.
    let sparse = [
        "mfu",
        "--params",
        "7e9",
        "--tokens-per-s",
        "3000",
        "--hardware",
        "a100-sxm-80gb",
        "--peak",
        "624T",
    ];
    bad_input(&sparse, "--peak");
    roofline()
        .args(sparse)
        .assert()
        .stderr(predicate::str::contains("hint: give --peak 3.12e14"));
    let mut allowed = sparse.to_vec();
    allowed.push("--allow-sparse-peak");
    let v = json_of(&allowed);
    // 6·7e9·3000 / 624e12 = 0.2019 %: half of the dense MFU.
    assert!(close(
        num(&v, "/formulas/0/mfu"),
        6.0 * 7e9 * 3000.0 / 624e12,
        1e-12
    ));
    // The dense figure itself is accepted.
    let mut dense = sparse.to_vec();
    dense[8] = "312T";
    assert!(close(
        num(&json_of(&dense), "/formulas/0/mfu"),
        6.0 * 7e9 * 3000.0 / 312e12,
        1e-12
    ));
    // mbu too.
    bad_input(
        &[
            "mbu",
            "--params",
            "7e9",
            "--tpot",
            "14ms",
            "--hardware",
            "a100-sxm-80gb",
            "--peak",
            "624T",
        ],
        "--peak",
    );
    Ok(())
}

#[test]
fn parameters_are_the_total_and_active_ones_are_named() -> Result<(), Box<dyn std::error::Error>> {
    // Mixtral-8x7B (shared/models/README.md): 46,702,792,704 total, 12,879,925,248 active.
    let args = [
        "mfu",
        "mixtral-8x7b",
        "--seq-len",
        "4096",
        "--tokens-per-s",
        "1000",
        "--hardware",
        "h100-sxm",
    ];
    let v = json_of(&args);
    assert_eq!(v["model"]["parameters"], 46_702_792_704.0);
    assert_eq!(v["model"]["active_parameters"], 12_879_925_248.0);
    // Kaplan's N: the active parameters less embedding and lm_head (2·32000·4096, untied).
    let kaplan = formula(&v, "kaplan").ok_or("the 6N row")?;
    assert_eq!(
        num(kaplan, "/model_flops_per_token"),
        6.0 * (12_879_925_248.0 - 2.0 * 32000.0 * 4096.0)
    );
    roofline()
        .args(args)
        .assert()
        .success()
        .stdout(predicate::str::contains("(46.7B parameters, 12.9B active)"));
    // --params is the total; --active-params the active count.
    let v = json_of(&[
        "mfu",
        "--params",
        "46.7e9",
        "--active-params",
        "12.9e9",
        "--tokens-per-s",
        "1000",
        "--hardware",
        "h100-sxm",
    ]);
    assert_eq!(v["model"]["parameters"], 46.7e9);
    assert_eq!(num(&v, "/formulas/0/model_flops_per_token"), 6.0 * 12.9e9);
    Ok(())
}

#[test]
fn target_mfu_is_a_percent() {
    // 45 is 45 %: 1e12 tokens × 6·70e9 FLOP / (989.5e12 × 0.45) seconds on one H100.
    let v = json_of(&[
        "mfu",
        "--params",
        "70e9",
        "--tokens",
        "1e12",
        "--hardware",
        "h100-sxm",
        "--target-mfu",
        "45",
    ]);
    assert_eq!(v["target_mfu"], 0.45);
    assert!(close(
        num(&v, "/formulas/0/time_to_train_at_target_s"),
        1e12 * 6.0 * 70e9 / (989.5e12 * 0.45),
        1e-12
    ));
    // 0.45 would be 0.45 %: refused, asking for the percent.
    bad_input(
        &[
            "mfu",
            "--params",
            "70e9",
            "--tokens",
            "1e12",
            "--hardware",
            "h100-sxm",
            "--target-mfu",
            "0.45",
        ],
        "write 45 for 45 %",
    );
    let v = json_of(&[
        "mfu",
        "--params",
        "70e9",
        "--tokens",
        "1e12",
        "--hardware",
        "h100-sxm",
        "--target-mfu",
        "0.45%",
    ]);
    assert!(close(num(&v, "/target_mfu"), 0.0045, 1e-12));
}

#[test]
fn mbu_flags_impossible_utilisations_and_refuses_infinite_ones(
) -> Result<(), Box<dyn std::error::Error>> {
    // 7B in 16 bits is 14 GB; in 1 ms that is 14 TB/s, 700 % of 2 TB/s: impossible.
    let args = [
        "mbu",
        "--params",
        "7e9",
        "--tpot",
        "1ms",
        "--bandwidth",
        "2e12",
    ];
    let v = json_of(&args);
    assert!(close(num(&v, "/mbu"), 7.0, 1e-12));
    assert_eq!(v["impossible"], serde_json::json!(["MBU"]));
    roofline()
        .args(args)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "700.0 % — impossible: check the inputs",
        ))
        .stdout(predicate::str::contains(
            "warning: MBU above 100 % is impossible",
        ));
    // The Databricks example (50 %) is not flagged.
    let ok = json_of(&[
        "mbu",
        "--params",
        "7e9",
        "--tpot",
        "14ms",
        "--bandwidth",
        "2e12",
    ]);
    assert_eq!(ok["impossible"], serde_json::json!([]));
    // 14 GB in 1e-310 s overflows: an error naming --tpot, not `inf %`.
    bad_input(
        &[
            "mbu",
            "--params",
            "7e9",
            "--tpot",
            "1e-310",
            "--bandwidth",
            "2e12",
        ],
        "--tpot",
    );
    Ok(())
}
