//! Every row of `shared/refs/mfu/mfu_published.csv` recomputed from its inputs with
//! `roofline_core::{mfu, mbu}`, against the MFU/HFU (or MBU) the source reports.
//!
//! The tolerance is 0.3 percentage points, except where the source is not self-consistent or
//! prints fewer digits; there the test asserts our recomputed value and says why
//! (`shared/refs/mfu/README.md` §1):
//!
//! - **GPT-3 175B (PaLM Table 3, 21.3 %)** is not reproducible: the 24.6 TFLOP/s per V100 it is
//!   based on gives 19.68 % of the V100's 125 TFLOP/s dense fp16 peak (20.22 % with attention);
//!   21.3 % needs a 115.5 TFLOP/s peak. We assert 19.68 % and 20.22 %.
//! - **Megatron-LM Table 1 (Narayanan et al. 2021)** prints "% of peak" as a whole number, from
//!   TFLOP/s that are whole numbers too: 142/312 = 45.51 % is printed 46 %. We assert our value
//!   rounds to the printed one (agreement to the printed precision, ±0.5 pt), and equals the
//!   README's recomputation to 0.01 pt.
//! - **Gopher (PaLM Table 3, 32.5 %)**: PaLM gives only 0.0152 steps/s; the batch (3072 × 2048)
//!   and the 123 TFLOP/s TPU v3 peak are reconstructed inputs that reproduce it.
//!
//! Every source counts the full T×T score matrix (PaLM App. B's 12·L·H·Q·T; Megatron's s/6h
//! term, 4·s·h per layer); `palm` and `megatron` are those expressions, [`ScoreMask::Full`].
//! `roofline mfu` counts causal attention by default (half the matrix) and reproduces these
//! figures with `--no-causal`; [`causal_counting_lowers_each_published_mfu_by_half_its_attention_term`]
//! gives what the causal count makes of them.
//!
//! The peak is always the dense one for the stated precision: for every chip in our catalog, the
//! CSV's peak equals the catalog's dense peak (A100 bf16 312, TPU v4 bf16 275, V100 fp16 125).

use roofline_core::mbu::{mbu, Accelerators, DecodeStep, Pace};
use roofline_core::mfu::{
    kaplan, megatron, palm, utilization, Cluster, ForwardSplit, Recompute, ScoreMask, Utilization,
};
use roofline_core::precision::Precision;
use roofline_core::units::{BytesPerSec, FlopPerSec, Seconds};
use roofline_inputs::hardware::find_device;
use std::collections::HashMap;
use std::path::PathBuf;

/// A path under the `shared/` folder beside the repository root.
fn shared(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared")).join(path)
}

/// Percentage points.
const TOL: f64 = 0.3;

struct Row(HashMap<String, String>);

impl Row {
    fn s(&self, k: &str) -> &str {
        self.0.get(k).map(|v| v.trim()).unwrap_or("")
    }
    fn f(&self, k: &str) -> Option<f64> {
        self.s(k).parse().ok()
    }
    fn u(&self, k: &str) -> u64 {
        self.s(k)
            .parse()
            .unwrap_or_else(|_| panic!("{}: `{k}` = `{}`", self.s("model"), self.s(k)))
    }
    fn model(&self) -> &str {
        self.s("model")
    }
}

fn rows() -> Vec<Row> {
    let mut r = csv::Reader::from_path(shared("refs/mfu/mfu_published.csv")).expect("CSV");
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            Row(headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect())
        })
        .collect()
}

/// The first number after `marker` in `text` (digits, commas, one point).
fn number_after(text: &str, marker: &str) -> Option<f64> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let num: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
        .filter(|c| *c != ',')
        .collect();
    num.trim_end_matches('.').parse().ok()
}

fn pct(u: &Utilization) -> (f64, f64) {
    (u.mfu * 100.0, u.hfu * 100.0)
}

fn cluster(r: &Row) -> Cluster {
    Cluster {
        devices: r.u("devices"),
        peak: FlopPerSec(r.f("peak_flops_per_device").expect("peak")),
    }
}

/// PaLM's 6N + 12·L·H·Q·T for a row; H·Q from the notes' head dim where given (PaLM 540B: 48
/// heads of 256, not hidden/heads = 384), else hidden.
fn palm_split(r: &Row) -> ForwardSplit {
    let heads = r.u("heads");
    let head_dim = number_after(r.s("notes"), "Head dim Q=")
        .map(|q| q as u64)
        .unwrap_or(r.u("hidden") / heads);
    palm(
        r.f("params").unwrap(),
        0.0,
        r.u("layers"),
        heads * head_dim,
        r.u("seq_len"),
    )
}

fn assert_close(what: &str, ours: f64, reported: f64, tol: f64) {
    assert!(
        (ours - reported).abs() <= tol,
        "{what}: ours {ours:.3} vs reported {reported} (tolerance {tol} pt)"
    );
}

#[test]
fn every_published_row_is_recomputed() {
    let rows = rows();
    assert_eq!(rows.len(), 19, "the CSV's rows");
    let mut checked = 0;
    for r in &rows {
        let source = r.s("source");
        if source.starts_with("Chowdhery") {
            check_palm_table_3(r);
        } else if source.starts_with("Narayanan") {
            check_megatron_table_1(r);
        } else if source.starts_with("Korthikanti") {
            check_korthikanti(r);
        } else if source.starts_with("Databricks") {
            check_databricks_mbu(r);
        } else {
            panic!("row `{}` from an unknown source `{source}`", r.model());
        }
        checked += 1;
    }
    assert_eq!(checked, rows.len());
}

/// PaLM Table 3: MFU = tokens/s × (6N + 12·L·H·Q·T) ÷ (devices × peak); HFU only for PaLM.
fn check_palm_table_3(r: &Row) {
    let model = r.model();
    let reported = r.f("reported_mfu").unwrap();
    let Some(tps) = r.f("tokens_per_sec_or_time") else {
        // GPT-3: only "24.6 non-attention model TFLOP/s per GPU" (Patterson et al. 2021).
        assert!(model.starts_with("GPT-3"), "{model}");
        check_gpt3_inconsistent(r, reported);
        return;
    };
    let c = cluster(r);
    let with_attention = utilization(&palm_split(r), Recompute::None, tps, &c);
    let (mfu, _) = pct(&with_attention);
    assert_close(&format!("{model} MFU"), mfu, reported, TOL);
    // The README's recomputation, to 0.01 pt.
    let ours = number_after(r.s("our_recompute"), "").unwrap();
    assert!(
        (mfu - ours).abs() < 0.01,
        "{model}: {mfu:.3} vs README {ours}"
    );
    if model.starts_with("PaLM") {
        // PaLM App. B: 540B rematerialises 75 % of the non-attention forward FLOPs and all of
        // the attention forward FLOPs: HFU 57.8 %.
        let u = utilization(&palm_split(r), Recompute::Partial(0.75), tps, &c);
        let (_, hfu) = pct(&u);
        assert_close("PaLM 540B HFU", hfu, r.f("reported_hfu").unwrap(), TOL);
        // Without the attention term and with N = 540e9: 45.7 % (PaLM's own arithmetic).
        let no_attn = utilization(&kaplan(540e9), Recompute::None, tps, &c);
        assert_close("PaLM 540B without attention", pct(&no_attn).0, 45.7, 0.05);
    }
    if model.starts_with("Megatron-Turing") {
        // 29.7 % without attention (PaLM truncates 29.77).
        let no_attn = utilization(&kaplan(r.f("params").unwrap()), Recompute::None, tps, &c);
        assert_close("MT-NLG without attention", pct(&no_attn).0, 29.77, 0.01);
    }
    if model.starts_with("Gopher") {
        // Reconstructed inputs (README §1.1): 0.0152 steps/s × 3072 × 2048 tokens per step.
        assert!(r.s("status").contains("reconstructed"));
        assert!((0.0152 * 3072.0 * 2048.0 - tps).abs() / tps < 0.001);
    }
}

/// GPT-3 in PaLM Table 3 (21.3 %) does not follow from its own inputs: assert ours and why.
fn check_gpt3_inconsistent(r: &Row, reported: f64) {
    assert!(r.s("status").contains("inconsistent"));
    let tflops = r.f("reported_tflops_per_device").unwrap() * 1e12;
    let peak = r.f("peak_flops_per_device").unwrap();
    let n = r.f("params").unwrap();
    // 24.6 TFLOP/s are 6N FLOP per token: tokens/s per GPU = 24.6e12 / 6N.
    let per_gpu = tflops / (6.0 * n);
    let one = Cluster {
        devices: 1,
        peak: FlopPerSec(peak),
    };
    let kaplan_mfu = pct(&utilization(&kaplan(n), Recompute::None, per_gpu, &one)).0;
    let palm_mfu = pct(&utilization(&palm_split(r), Recompute::None, per_gpu, &one)).0;
    assert!((kaplan_mfu - 19.68).abs() < 0.005, "{kaplan_mfu}");
    assert!((palm_mfu - 20.22).abs() < 0.005, "{palm_mfu}");
    // Neither is within the tolerance of the printed 21.3 %: the source is not self-consistent.
    assert!((kaplan_mfu - reported).abs() > TOL && (palm_mfu - reported).abs() > TOL);
    // 21.3 % would need a 115.5 TFLOP/s peak (no attention term).
    assert!((tflops / (reported / 100.0) / 1e12 - 115.5).abs() < 0.05);
}

/// Megatron-LM Table 1: "% of theoretical peak" counts the full-recompute FLOPs (an HFU), from a
/// whole-number TFLOP/s per GPU.
fn check_megatron_table_1(r: &Row) {
    let model = r.model();
    let c = cluster(r);
    let tflops = r.f("reported_tflops_per_device").unwrap() * 1e12;
    let (l, h, s, v) = (r.u("layers"), r.u("hidden"), r.u("seq_len"), r.u("vocab"));
    let split = megatron(l, h, s, v);
    // Tokens/s from the TFLOP/s: F_iter/token = 96·L·h²·(1 + s/6h + V/16Lh), Narayanan §5.1.
    let tps = tflops * c.devices as f64 / split.hardware(Recompute::Full).get();
    let u = utilization(&split, Recompute::Full, tps, &c);
    let (mfu, hfu) = pct(&u);
    assert!((hfu - tflops / c.peak.get() * 100.0).abs() < 1e-9);
    // Printed as a whole percent: ours must round to it.
    let printed = r.f("reported_hfu").unwrap();
    assert_eq!(
        hfu.round(),
        printed,
        "{model}: HFU {hfu:.2} prints as {printed}"
    );
    assert!((hfu - printed).abs() <= 0.5);
    let readme = number_after(r.s("our_recompute"), "").unwrap();
    assert!(
        (hfu - readme).abs() < 0.01,
        "{model}: {hfu:.3} vs README {readme}"
    );
    // The README's derived throughput and implied MFU (model FLOPs 72·L·h²(1 + s/6h + V/12Lh)).
    let notes = r.s("notes");
    let want_tps = number_after(notes, "throughput ").unwrap();
    assert!(
        (tps - want_tps).abs() / want_tps < 1e-4,
        "{model}: {tps} vs {want_tps}"
    );
    let want_mfu = number_after(notes, "V/12lh)) = ").unwrap();
    assert!(
        (mfu - want_mfu).abs() < 0.05,
        "{model}: MFU {mfu:.2} vs {want_mfu}"
    );
}

/// Korthikanti et al.: MFU by the model FLOPs 72·B·L·s·h²·(1 + s/6h + V/12hL), HFU by the
/// selective-recompute hardware FLOPs 72·B·L·s·h²·(1 + s/3h + V/12hL).
fn check_korthikanti(r: &Row) {
    let model = r.model();
    let c = cluster(r);
    let tps = r.f("tokens_per_sec_or_time").unwrap();
    let split = megatron(r.u("layers"), r.u("hidden"), r.u("seq_len"), r.u("vocab"));
    let (mfu, hfu) = pct(&utilization(&split, Recompute::Selective, tps, &c));
    assert_close(
        &format!("{model} MFU"),
        mfu,
        r.f("reported_mfu").unwrap(),
        TOL,
    );
    assert_close(
        &format!("{model} HFU"),
        hfu,
        r.f("reported_hfu").unwrap(),
        TOL,
    );
    // tokens/s = global batch × 2048 / iteration time (the notes' step time).
    let batch = number_after(r.s("global_batch"), "").unwrap();
    let step = number_after(r.s("notes"), "Iteration time ").unwrap();
    assert!((batch * 2048.0 / step - tps).abs() / tps < 1e-3, "{model}");
}

/// Databricks's worked example: 7B, 16-bit weights, 14 ms per token, a 2 TB/s part: MBU 50 %.
fn check_databricks_mbu(r: &Row) {
    assert!(r.s("status").contains("MBU=50%"));
    let tpot_ms = number_after(r.s("tokens_per_sec_or_time"), "TPOT ").unwrap();
    let step = DecodeStep::of_params(r.f("params").unwrap(), 1, 2.0);
    let m = mbu(
        &step,
        Pace::TimePerToken(Seconds(tpot_ms * 1e-3)),
        &Accelerators {
            devices: r.u("devices"),
            bandwidth: BytesPerSec(2e12),
            peak: None,
        },
    )
    .unwrap();
    assert!((m.achieved_bandwidth.get() - 1e12).abs() < 1.0);
    assert_close("Databricks MBU", m.mbu * 100.0, 50.0, 1e-9);
}

#[test]
fn csv_peaks_are_the_catalogs_dense_peaks() -> Result<(), Box<dyn std::error::Error>> {
    // (device_type prefix, catalog id, precision of the stated runs)
    let chips = [
        ("NVIDIA A100", "a100-sxm-80gb", Precision::Bf16),
        ("TPU v4", "tpu-v4", Precision::Bf16),
        ("NVIDIA V100", "v100", Precision::Fp16),
    ];
    let mut seen = 0;
    for r in rows() {
        let Some(peak) = r.f("peak_flops_per_device") else {
            continue; // the MBU row: a bandwidth, no FLOP peak
        };
        let dev = r.s("device_type");
        if let Some((_, id, p)) = chips.iter().find(|(prefix, _, _)| dev.starts_with(prefix)) {
            let catalog = find_device(id)?.peak(*p)?.get();
            assert_eq!(peak, catalog, "{}: {dev}", r.model());
            seen += 1;
        } else {
            // TPU v3 is not in the catalog; 123 TFLOP/s is a reconstructed input (Gopher).
            assert!(dev.starts_with("TPU v3"), "{dev}");
        }
    }
    assert_eq!(seen, 17);
    Ok(())
}

/// PaLM's rows with a throughput, and Korthikanti's: the MFU with every score (the published
/// convention) and with half of them (a causal decoder, FlashAttention's count). By hand, the
/// causal model FLOPs per token are 6N + 6·L·H·Q·T (PaLM) and 72·L·h²·(1 + s/12h + V/12hL)
/// (Megatron's expression with the s/6h score term halved).
#[test]
fn causal_counting_lowers_each_published_mfu_by_half_its_attention_term() {
    let mut seen = Vec::new();
    for r in rows() {
        let source = r.s("source");
        let Some(tps) = r.f("tokens_per_sec_or_time") else {
            continue;
        };
        let c = cluster(&r);
        let (split, causal_by_hand) = if source.starts_with("Chowdhery") {
            let split = palm_split(&r);
            let (n, l, t) = (
                r.f("params").unwrap(),
                r.u("layers") as f64,
                r.u("seq_len") as f64,
            );
            let hq = split.attention.get() / (4.0 * l * t);
            (split, 6.0 * n + 6.0 * l * hq * t)
        } else if source.starts_with("Korthikanti") {
            let (l, h, s, v) = (r.u("layers"), r.u("hidden"), r.u("seq_len"), r.u("vocab"));
            let (lf, hf, sf, vf) = (l as f64, h as f64, s as f64, v as f64);
            let by_hand = 72.0 * lf * hf * hf * (1.0 + sf / (12.0 * hf) + vf / (12.0 * hf * lf));
            (megatron(l, h, s, v), by_hand)
        } else {
            continue;
        };
        assert_eq!(split.masked(ScoreMask::Full), split);
        let full = pct(&utilization(&split, Recompute::None, tps, &c)).0;
        let causal = pct(&utilization(
            &split.masked(ScoreMask::Causal),
            Recompute::None,
            tps,
            &c,
        ))
        .0;
        let want = tps * causal_by_hand / c.total_peak().get() * 100.0;
        assert!(
            (causal - want).abs() < 1e-9 * want,
            "{}: {causal} vs {want}",
            r.model()
        );
        assert!(causal < full);
        seen.push((r.model().to_string(), full, causal));
    }
    assert_eq!(
        seen.len(),
        7,
        "PaLM 540B, MT-NLG, Gopher and Korthikanti's four"
    );
    // The two headline rows, to 0.01 pt: PaLM 540B 46.23 → 45.98 %, GPT-3 175B (Korthikanti)
    // 51.39 → 50.70 %.
    let get = |m: &str| seen.iter().find(|(name, _, _)| name == m).map(|x| x.2);
    assert!(get("PaLM 540B").is_some_and(|x| (x - 45.98).abs() < 0.01));
    assert!(get("GPT 175B (GPT-3)").is_some_and(|x| (x - 50.70).abs() < 0.01));
    // Korthikanti's 22B loses 1.08 pt (41.65 → 40.57) against a reported 41.5: outside the
    // tolerance, so the published figures are reproduced only with their own (full) count.
    assert!(get("GPT 22B").is_some_and(|x| (x - 41.5).abs() > TOL));
}
