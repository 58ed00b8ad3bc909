//! The accuracy benchmark of the roofline model on this machine (not a test: it times real
//! kernels, and its figure depends on the machine and how busy it is).
//!
//! Measures this CPU's roofline (`roofline measure`'s method), times the kernel suite, predicts
//! each kernel from the measured roofline (DRAM-only and hierarchical), and prints per kernel the
//! measured and predicted times and the error, then the median error over the suite (goal:
//! 15 % or less) and the fused chain's measured and predicted speedup.
//!
//! ```sh
//! cargo bench -p roofline-measure --bench accuracy             # default sizes (about a minute)
//! cargo bench -p roofline-measure --bench accuracy -- --quick  # seconds
//! cargo bench -p roofline-measure --bench accuracy -- --runs 3 # three times: the spread
//! ```

#![allow(clippy::print_stdout, missing_docs)]

use roofline_core::precision::Precision;
use roofline_core::prediction::{device_with_best_bandwidths, level_mixes};
use roofline_measure::suite::{run_cpu, SuiteOptions};
use roofline_measure::{measure_cpu, CpuOptions, NoProgress};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    // `--runs N`: the whole benchmark N times (the figure moves with the machine's load).
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let mut medians = Vec::new();
    for run in 1..=runs {
        if runs > 1 {
            println!("== run {run} of {runs}");
        }
        match once(quick) {
            Ok(m) => medians.push(m),
            Err(e) => {
                println!("error: {e}");
                return;
            }
        }
    }
    if runs > 1 {
        let shown: Vec<String> = medians
            .iter()
            .map(|m| format!("{:.1} %", 100.0 * m))
            .collect();
        println!("median error of each run: {}", shown.join(", "));
    }
}

/// One benchmark: measure, time, predict, print; returns the hierarchical median error.
fn once(quick: bool) -> Result<f64, String> {
    let m = measure_cpu(
        &CpuOptions {
            quick,
            threads: None,
            max_working_set: None,
            date: "benchmark".into(),
        },
        &mut NoProgress,
    )
    .map_err(|e| e.message)?;
    let device = device_with_best_bandwidths(&m, "host", &m.processor);
    let mut run = run_cpu(
        &SuiteOptions {
            quick,
            only: vec![],
            device: 0,
        },
        &mut NoProgress,
    )
    .map_err(|e| e.message)?;
    run.ceilings.mix = level_mixes(&m);
    let check = run.check(&device).map_err(|e| e.to_string())?;
    let peak = device.peak(Precision::Fp32).map(|p| p.get()).unwrap_or(0.0);
    println!(
        "{} · {} threads · fp32 {:.1} GFLOP/s · {}",
        m.processor,
        m.threads,
        peak / 1e9,
        device
            .memory
            .iter()
            .filter_map(|l| l.bandwidth.as_ref().map(|b| format!(
                "{} {:.1} GB/s",
                l.name,
                b.value.get() / 1e9
            )))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let c = &check.ceilings;
    println!(
        "ceilings (hierarchical only): GEMM {}, GEMV {}, e^x {}, launch {}",
        c.gemm.as_ref().map_or("-".into(), |g| format!(
            "{:.1} GFLOP/s",
            g.value.get() / 1e9
        )),
        c.gemv
            .as_ref()
            .map_or("-".into(), |g| format!("{:.1} GB/s", g.value.get() / 1e9)),
        c.exp
            .as_ref()
            .map_or("-".into(), |e| format!("{:.2} G/s", e.value / 1e9)),
        c.launch
            .as_ref()
            .map_or("-".into(), |l| format!("{:.1} µs", l.value.get() * 1e6)),
    );
    println!(
        "{:<36} {:>7} {:>12} {:>12} {:>7} {:>12} {:>7}",
        "kernel", "level", "measured", "DRAM-only", "error", "hier.", "error"
    );
    for r in &check.rows {
        println!(
            "{:<36} {:>7} {:>9.3} ms {:>9.3} ms {:>6.1}% {:>9.3} ms {:>6.1}%",
            r.name,
            r.level,
            r.measured.median * 1e3,
            r.predicted_dram.get() * 1e3,
            100.0 * r.error_dram,
            r.predicted.get() * 1e3,
            100.0 * r.error
        );
    }
    for r in check.rows.iter().filter(|r| r.diagnosis.is_some()) {
        println!("  {}: {}", r.name, r.diagnosis.as_deref().unwrap_or(""));
    }
    for s in &check.speedups {
        println!(
            "{}: measured {:.2}×, predicted {:.2}× (hierarchical), {:.2}× (DRAM-only)",
            s.name, s.measured, s.predicted, s.predicted_dram
        );
    }
    println!(
        "median |predicted − measured| / measured over {} kernels: {:.1} % hierarchical, {:.1} % DRAM-only (goal ≤ {:.0} %)",
        check.rows.len(),
        100.0 * check.median_error,
        100.0 * check.median_error_dram,
        100.0 * check.goal
    );
    Ok(check.median_error)
}
