//! `roofline op all-reduce` and the other collectives on the catalog's platforms and systems,
//! by hand arithmetic (the model itself is tested in roofline-core against hand arithmetic and
//! the published measurements); bad input is one `error:` line and a `hint:`, exit 2.

mod common;
use common::{assert_valid, bad_input, json_of, roofline, this_cpu};
use serde_json::Value;

const MIB: f64 = 1024.0 * 1024.0;

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k}: {v}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs()
}

#[test]
fn all_reduce_on_the_catalogs_h100_and_a100_nodes_by_hand() {
    // 8 × H100 SXM (catalog: NVLink 4 450e9 B/s per direction, NVLS): NVLS sends S once,
    // 67,108,864 B / 450e9 = 149.13 µs, plus NCCL's 25 µs NVLS latency.
    let args = [
        "op",
        "all-reduce",
        "--bytes",
        "64MiB",
        "--devices",
        "8",
        "--hardware",
        "h100-sxm",
    ];
    let h = json_of(&args);
    assert_valid("collective", &h, &args.join(" "));
    assert_eq!(h["algorithm"], "nvls");
    assert_eq!(h["tier"], "scale_up");
    assert_eq!(f(&h, "traffic_bytes"), 64.0 * MIB);
    assert!(close(f(&h, "transfer_s"), 64.0 * MIB / 450e9));
    assert!(close(f(&h, "latency_s"), 25e-6));
    assert_eq!(h["estimate"]["label"], "estimate");
    assert!(f(&h["estimate"], "time_s") > f(&h, "time_s"));
    // 16 × A100 (2 nodes, HDR 25e9 per GPU): hierarchical; inside 2·7/8·S = 117,440,512 B
    // at 300e9 = 391.47 µs, across 2·(1/2)·S/8 = 8,388,608 B at 25e9 = 335.54 µs: NVLink
    // bounds; t_α = 8.4 + 2·7·3.4 + 2·1·14 = 84 µs.
    let a = json_of(&[
        "op",
        "all-reduce",
        "--bytes",
        "64MiB",
        "--devices",
        "16",
        "--hardware",
        "a100-sxm-80gb",
    ]);
    assert_eq!(a["algorithm"], "hierarchical");
    assert_eq!(
        (a["nodes"].as_u64(), a["ranks_per_node"].as_u64()),
        (Some(2), Some(8))
    );
    assert_eq!(f(&a, "traffic_bytes"), 117_440_512.0);
    assert!(close(f(&a, "transfer_s"), 117_440_512.0 / 300e9));
    assert!(close(
        f(&a, "latency_s"),
        8.4e-6 + 14.0 * 3.4e-6 + 2.0 * 14e-6
    ));
    // The same 16 over 4 nodes of 4 (--nodes): across 2·(3/4)·S/4 = 25,165,824 B at 25e9 =
    // 1.0066 ms, above inside 2·(3/4)·S = 100,663,296 B at 300e9 = 335.5 µs.
    let n = json_of(&[
        "op",
        "all-reduce",
        "--bytes",
        "64MiB",
        "--devices",
        "16",
        "--nodes",
        "4",
        "--hardware",
        "a100-sxm-80gb",
    ]);
    assert_eq!(n["tier"], "scale_out");
    assert_eq!(f(&n, "traffic_bytes"), 25_165_824.0);
}

#[test]
fn a_catalog_system_costs_the_published_two_node_run_under_its_measurement() {
    // 2 DGX H100 (16 ranks) of the SuperPOD unit, 8 GiB: the ring inside each node bounds,
    // 2·7/8·8 GiB / 450e9 = 33.40 ms + 84 µs; SkyPilot's nccl-tests measured 467.28 GB/s
    // bus bandwidth: 8 GiB·2·15/16 / 467.28e9 = 34.47 ms (refs/parallel/parallel_published.csv).
    let s = 8.0 * 1024.0 * MIB;
    let v = json_of(&[
        "op",
        "all-reduce",
        "--bytes",
        "8GiB",
        "--system",
        "dgx-h100-su",
        "--devices",
        "16",
    ]);
    assert_eq!(v["algorithm"], "hierarchical");
    let bound = 8.4e-6 + 14.0 * 3.4e-6 + 2.0 * 14e-6 + 2.0 * 7.0 / 8.0 * s / 450e9;
    assert!(close(f(&v, "time_s"), bound));
    let measured = s * 2.0 * 15.0 / 16.0 / 467.28e9;
    assert!(f(&v, "time_s") < measured);
    let est = f(&v["estimate"], "time_s");
    assert!(
        (est / measured - 1.0).abs() < 0.25,
        "{est} against {measured}"
    );
}

#[test]
fn explain_prints_the_formula_with_the_numbers_in() {
    let out = roofline()
        .args([
            "op",
            "all-reduce",
            "--bytes",
            "64MiB",
            "--hardware",
            "h100-sxm",
            "--algorithm",
            "ring",
            "--explain",
        ])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "D = 2·(n − 1)·S/n",
        "= 2·(8 − 1)·67,108,864/8",
        "t_α = L_ring + 2·(n − 1)·α_i",
        "= 8.4e-6 + 2·(8 − 1)·3.4e-6",
        "estimated time (estimate, not a bound)",
        "ring (--algorithm)",
    ] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
    let j = json_of(&[
        "op",
        "all-reduce",
        "--bytes",
        "64MiB",
        "--hardware",
        "h100-sxm",
        "--explain",
    ]);
    assert_valid("collective", &j, "op all-reduce --explain");
    assert!(j["steps"].as_array().is_some_and(|s| s.len() >= 8));
}

#[test]
fn bad_collective_flags_exit_2_with_a_hint() {
    let cases: [(&[&str], &str); 9] = [
        (
            &["op", "all-reduce", "--bytes", "64XB"],
            "`64XB` is not a size",
        ),
        (
            &["op", "all-reduce", "--bytes", "1e300"],
            "outside 0 to 1 PiB",
        ),
        (&["op", "all-gather", "--bytes", "2PiB"], "2PiB"),
        (
            &[
                "op",
                "all-reduce",
                "--bytes",
                "1MiB",
                "--algorithm",
                "rings",
            ],
            "`rings` is no algorithm",
        ),
        (
            &["op", "broadcast", "--bytes", "1MiB", "--devices", "0"],
            "--devices",
        ),
        (
            &[
                "op",
                "all-to-all",
                "--bytes",
                "1MiB",
                "--devices",
                "2000000",
            ],
            "outside 1 to",
        ),
        (
            &[
                "op",
                "send-recv",
                "--bytes",
                "1MiB",
                "--devices",
                "12",
                "--nodes",
                "5",
            ],
            "do not split evenly",
        ),
        (&["op", "reduce-scatter"], "--bytes"),
        (
            &["op", "all-gather", "--bytes", "1MiB", "--algorithm", "tree"],
            "cannot run as tree",
        ),
    ];
    for (args, needle) in cases {
        bad_input(args, needle);
    }
}

#[test]
fn a_chip_without_a_node_says_so() {
    let cpu = this_cpu();
    bad_input(
        &[
            "op",
            "all-reduce",
            "--bytes",
            "64MiB",
            "--hardware",
            cpu.to_str().expect("UTF-8 path"),
        ],
        "no default node",
    );
}
