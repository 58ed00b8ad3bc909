//! The `per_op_table` example, run on Llama-2-7B's real config.json on the RTX A6000: its table
//! carries every operator of both stages with the numbers `analyze` gives, and those numbers are
//! the ones hand arithmetic gives for q_proj and lm_head.

#[path = "../examples/per_op_table.rs"]
mod per_op_table;

use roofline::prelude::*;
use roofline::report::units::{human_bytes, human_flops, human_seconds};
use std::collections::HashMap;

/// The table rows of one stage's section: operator name → its cells (count, FLOPs, bytes, AI,
/// ridge, bound, attainable, time, launch, share), as printed.
fn rows(section: &str) -> HashMap<String, Vec<String>> {
    section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| operator"))
        .filter_map(|l| {
            let inner = l.trim_start_matches('|').trim_end_matches('|');
            // Columns are at least three spaces apart; a value and its unit, one.
            let cells: Vec<String> = inner
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect();
            let (name, rest) = cells.split_first()?;
            Some((name.clone(), rest.to_vec()))
        })
        .collect()
}

#[test]
fn example_prints_every_operator_with_the_numbers_of_analyze(
) -> Result<(), Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    per_op_table::run(per_op_table::DEFAULT_CONFIG, "a6000", &mut out)?;
    let text = String::from_utf8(out)?;

    // The serving headline, a blank line, then the stages.
    let (headline, stages) = text.split_once("\n\n").ok_or("no headline")?;
    assert!(headline.starts_with("serving: TTFT "), "{headline}");
    let (prefill_text, decode_text) = stages
        .split_once("\ndecode · ")
        .ok_or("no decode section")?;
    assert!(
        prefill_text.starts_with("prefill · meta-llama--Llama-2-7b-hf"),
        "{text}"
    );

    let model = load_model(per_op_table::DEFAULT_CONFIG)?;
    let chip = find_device("a6000")?;
    for (section, w) in [
        (prefill_text, Workload::prefill(1, 2048)),
        (decode_text, Workload::decode(1, 2048)),
    ] {
        let printed = rows(section);
        let analysis = analyze(&model, &w, &chip, Reserve::DEFAULT)?;
        assert_eq!(printed.len(), analysis.rows.len(), "{section}");
        for r in &analysis.rows {
            let cells = printed
                .get(r.name)
                .ok_or_else(|| format!("no row {}", r.name))?;
            let p = r.point();
            assert_eq!(cells[0], r.count.to_string(), "{}", r.name);
            assert_eq!(cells[1], human_flops(r.cost.flops.get()), "{}", r.name);
            assert_eq!(cells[2], human_bytes(r.cost.bytes().get()), "{}", r.name);
            // The default table: the ridge and the launch sit under it, not in columns.
            assert_eq!(cells[4], p.bound.to_string(), "{}", r.name);
            assert_eq!(cells[6], human_seconds(p.time.get()), "{}", r.name);
        }
    }

    // By hand, RTX A6000: 154.8 TFLOP/s dense bf16, 768 GB/s (its datasheet); Llama-2-7B: d 4096,
    // 32 blocks, vocab 32000; bf16, 2 bytes per element.
    let prefill = rows(prefill_text);
    let q = &prefill["q_proj"];
    // 2·2048·4096·4096 = 68,719,476,736 FLOP; weights 4096²·2 + input and output 2048·4096·2
    // each = 67,108,864 B; intensity 1024 FLOP/B > ridge 154.8e12 / 768e9 = 201.6: compute-bound,
    // 68,719,476,736 / 154.8e12 = 443.9 µs.
    assert_eq!(
        q[..7],
        [
            "32",
            "68.7 GFLOP",
            "67.1 MB",
            "1024.0",
            "compute",
            "154.8 TFLOP/s",
            "443.9 µs"
        ]
    );
    assert!(
        prefill_text.contains("201.6 FLOP/B (from q_proj)"),
        "{prefill_text}"
    );
    let decode = rows(decode_text);
    // 2·4096·4096 = 33.6 MFLOP; 4096²·2 + 2·4096·2 = 33,570,816 B; memory-bound,
    // 33,570,816 / 768e9 = 43.7 µs.
    assert_eq!(decode["q_proj"][1..3], ["33.6 MFLOP", "33.6 MB"]);
    assert_eq!(
        (decode["q_proj"][4].as_str(), decode["q_proj"][6].as_str()),
        ("memory", "43.7 µs")
    );
    // lm_head: 2·4096·32000 = 262,144,000 FLOP; 32000·4096·2 + 4096·2 + 32000·2 = 262,216,192 B;
    // 262,216,192 / 768e9 = 341.4 µs.
    assert_eq!(decode["lm_head"][..3], ["1", "262.1 MFLOP", "262.2 MB"]);
    assert_eq!(decode["lm_head"][6], "341.4 µs");
    Ok(())
}

#[test]
fn example_names_the_missing_file() {
    let mut out = Vec::new();
    let e = per_op_table::run("no/such/config.json", "a6000", &mut out).unwrap_err();
    assert!(matches!(e, Error::Input(_)), "{e:?}");
    assert!(e.to_string().contains("no/such/config.json"), "{e}");
    assert!(e.hint().is_some());
    assert!(out.is_empty());
}
