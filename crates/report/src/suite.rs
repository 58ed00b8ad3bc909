//! Rendering of `roofline measure kernels`: per kernel the measured time, its achieved FLOP/s and
//! bytes/s, the time the measured roofline predicts (DRAM-only and hierarchical) and the error;
//! the fused kernels' measured speedups beside their predicted ones; the median error. As a
//! table, JSON (`schema_version` 2, base units) or CSV (one row per kernel).

use crate::units::{human_bytes_per_s, human_flops_per_s, human_intensity, human_seconds, percent};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::device::{Device, MemoryKind};
use roofline_core::precision::Precision;
use roofline_core::prediction::{Ceilings, SuiteCheck};
use std::io::Write;

/// Where the roofline and the timings came from, for the header and the JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteContext<'a> {
    /// The chip the predictions use (measured now, or read from a chip file).
    pub device: &'a Device,
    /// How the roofline was obtained (`measured now (--quick)`, `chip file host.toml`).
    pub roofline_source: String,
    /// Where the kernels ran (`CPU, 2 threads`, `GPU 0: NVIDIA H100`).
    pub target: String,
    /// The timing method, one line.
    pub method: String,
    /// Caveats, one line each.
    pub notes: Vec<String>,
}

fn roofs_line(d: &Device) -> String {
    let peak = d
        .peak(Precision::Fp32)
        .map(|p| format!("fp32 peak {}", human_flops_per_s(p.get())))
        .unwrap_or_else(|_| "no fp32 peak".into());
    let mut levels: Vec<_> = d.memory.iter().filter(|l| l.bandwidth.is_some()).collect();
    // Innermost first, main memory last.
    levels.sort_by_key(|l| match l.kind {
        MemoryKind::L1 => 0,
        MemoryKind::Sram => 1,
        MemoryKind::L2 => 2,
        MemoryKind::L3 => 3,
        MemoryKind::Main => 5,
        // A level added later: outside the caches, inside main memory.
        _ => 4,
    });
    let mem: Vec<String> = levels
        .iter()
        .map(|l| {
            let bw = l
                .bandwidth
                .as_ref()
                .map(|b| human_bytes_per_s(b.value.get()))
                .unwrap_or_default();
            match &l.capacity {
                Some(c) if l.kind != MemoryKind::Main => format!(
                    "{} {bw} ({})",
                    l.name,
                    crate::measure::human_binary(c.value.get())
                ),
                _ => format!("{} {bw}", l.name),
            }
        })
        .collect();
    format!("{peak}; memory {}", mem.join(", "))
}

/// Writes the suite's check in `format`.
///
/// # Errors
/// A failed write.
pub fn write_suite(
    check: &SuiteCheck,
    cx: &SuiteContext<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Json => {
            crate::doc::write_json(&crate::doc::measure::KernelsCheckDoc::of(check, cx), out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "kernel",
                "family",
                "launches",
                "level",
                "bound",
                "flops",
                "bytes_read",
                "bytes_written",
                "intensity_flop_per_byte",
                "working_set_bytes",
                "measured_s",
                "measured_min_s",
                "measured_max_s",
                "repetitions",
                "achieved_flop_per_s",
                "achieved_bytes_per_s",
                "predicted_dram_s",
                "error_dram",
                "predicted_s",
                "error",
                "note",
            ])?;
            for r in &check.rows {
                w.write_record([
                    r.name.clone(),
                    r.family.clone(),
                    r.launches.len().to_string(),
                    r.level.clone(),
                    r.bound.to_string(),
                    r.cost.flops.get().to_string(),
                    r.cost.bytes_read.get().to_string(),
                    r.cost.bytes_written.get().to_string(),
                    r.intensity.get().to_string(),
                    r.working_set.get().to_string(),
                    r.measured.median.to_string(),
                    r.measured.min.to_string(),
                    r.measured.max.to_string(),
                    r.measured.samples.to_string(),
                    r.achieved.get().to_string(),
                    r.achieved_bandwidth.get().to_string(),
                    r.predicted_dram.get().to_string(),
                    r.error_dram.to_string(),
                    r.predicted.get().to_string(),
                    r.error.to_string(),
                    r.note.clone(),
                ])?;
            }
            w.flush()?;
        }
        Format::Table => write_table(check, cx, out)?,
    }
    Ok(())
}

fn write_table(
    check: &SuiteCheck,
    cx: &SuiteContext<'_>,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    writeln!(
        out,
        "Predicted against measured: {} on {} ({})",
        cx.target, cx.device.name, cx.roofline_source
    )?;
    writeln!(out, "{}", roofs_line(cx.device))?;
    if let Some(c) = &check.ceilings.gemm {
        let of_peak = cx
            .device
            .peak(Precision::Fp32)
            .map(|p| {
                let share = c.value.get() / p.get();
                let low = if share > 1.0 {
                    " (above the peak: the peak was measured low, on a busy machine; the peak is used)"
                } else {
                    ""
                };
                format!(", {} of the fp32 peak{low}", percent(share, 0))
            })
            .unwrap_or_default();
        writeln!(
            out,
            "GEMM ceiling {}{of_peak} ({})",
            human_flops_per_s(c.value.get()),
            c.source
        )?;
    }
    if let Some(c) = &check.ceilings.gemv {
        let of_main = cx
            .device
            .bandwidth()
            .map(|b| format!(", {} of the DRAM roof", percent(c.value.get() / b.get(), 0)))
            .unwrap_or_default();
        writeln!(
            out,
            "GEMV ceiling {}{of_main} ({})",
            human_bytes_per_s(c.value.get()),
            c.source
        )?;
    }
    if let Some(c) = &check.ceilings.exp {
        writeln!(
            out,
            "e^x ceiling {:.2} G e^x/s ({})",
            c.value / 1e9,
            c.source
        )?;
    }
    if let Some(c) = &check.ceilings.launch {
        writeln!(
            out,
            "launch {} per kernel launch ({})",
            human_seconds(c.value.get()),
            c.source
        )?;
    }
    if !check.ceilings.mix.is_empty() {
        writeln!(
            out,
            "access mix: each launch at its level's bandwidth for its share of stores (read 0, triad ¼, copy ½ of the bytes; stores cost what the sweep measured)"
        )?;
    }
    if check.ceilings != Ceilings::NONE {
        writeln!(
            out,
            "(hierarchical: each launch also held against these ceilings, below the roofs: GEMM and GEMV for matrix-unit launches, e^x for launches that exponentiate, plus the launch; DRAM-only: the plain roofline)"
        )?;
    }
    writeln!(out)?;
    let mut t = new_table(&[
        "kernel",
        "from",
        "FLOP/B",
        "measured",
        "achieved",
        "bytes/s",
        "DRAM-only",
        "error",
        "hierarchical",
        "error",
    ]);
    for r in &check.rows {
        t.add_row(vec![
            r.name.clone(),
            r.level.clone(),
            human_intensity(r.intensity.get()),
            format!(
                "{}{}",
                human_seconds(r.measured.median),
                if r.measured.stable { "" } else { " !" }
            ),
            human_flops_per_s(r.achieved.get()),
            human_bytes_per_s(r.achieved_bandwidth.get()),
            human_seconds(r.predicted_dram.get()),
            percent(r.error_dram, 0),
            human_seconds(r.predicted.get()),
            percent(r.error, 0),
        ]);
    }
    align_right_from(&mut t, 2);
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "(from: the memory level the working set fits in; ! = repetitions did not settle)"
    )?;
    writeln!(out)?;
    for s in &check.speedups {
        let (b, a) = (
            check.rows.iter().find(|r| r.name == s.before),
            check.rows.iter().find(|r| r.name == s.after),
        );
        let times = match (b, a) {
            (Some(b), Some(a)) => format!(
                " ({} → {})",
                human_seconds(b.measured.median),
                human_seconds(a.measured.median)
            ),
            _ => String::new(),
        };
        writeln!(
            out,
            "fused {}: measured {:.2}×{times}, predicted {:.2}× (hierarchical), {:.2}× (DRAM-only)",
            s.name, s.measured, s.predicted, s.predicted_dram
        )?;
    }
    let met = if check.median_error <= check.goal {
        "met"
    } else {
        "missed"
    };
    writeln!(
        out,
        "median |predicted − measured| / measured over {} kernels: {} hierarchical (goal ≤ {}: {met}), {} DRAM-only",
        check.rows.len(),
        percent(check.median_error, 1),
        percent(check.goal, 0),
        percent(check.median_error_dram, 1)
    )?;
    let misses: Vec<_> = check
        .rows
        .iter()
        .filter_map(|r| r.diagnosis.as_ref().map(|d| (r, d)))
        .collect();
    if !misses.is_empty() {
        writeln!(out)?;
        writeln!(out, "Misses over {}:", percent(check.goal, 0))?;
        for (r, d) in misses {
            writeln!(out, "  {} ({}): {d}", r.name, percent(r.error, 0))?;
        }
    }
    for n in &cx.notes {
        writeln!(out, "note: {n}")?;
    }
    writeln!(out, "method: {}", cx.method)?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use roofline_core::device::MemoryLevel;
    use roofline_core::measured::Stat;
    use roofline_core::ops::{Compute, Elementwise, Gemm, ADD_FLOPS_PER_ELEMENT};
    use roofline_core::prediction::{check_suite, Launch, SuiteKernel};
    use roofline_core::units::{Bytes, BytesPerSec, FlopPerSec, Seconds};

    /// 100 GFLOP/s fp32; L3 8 MiB at 50 GB/s; DRAM 10 GB/s.
    pub(crate) fn device() -> Device {
        let level = |kind, name: &str, bw: f64, cap: f64| {
            MemoryLevel::new(kind, name)
                .with_bandwidth(BytesPerSec(bw), "test")
                .with_capacity(Bytes(cap), "test")
        };
        Device::builder("box", "Box")
            .peak(Precision::Fp32, FlopPerSec(100e9), "test")
            .memory(level(MemoryKind::Main, "DRAM", 10e9, 16e9))
            .memory(level(MemoryKind::L3, "L3", 50e9, 8.0 * 1048576.0))
            .launch_overhead(Seconds(1e-6), "test")
            .build()
    }

    /// Two kernels: a 2^24-element add (201,326,592 B, DRAM: 20.13 ms predicted) measured at
    /// 25 ms, and a 1024³ GEMM (21.47 ms predicted) measured at 26 ms; the add counts as the
    /// "separate" and the GEMM as the "fused" of one pair.
    pub(crate) fn check() -> Result<SuiteCheck, String> {
        let stat = |t: f64| Stat {
            median: t,
            min: t,
            max: t,
            samples: 5,
            stable: true,
        };
        let add = Elementwise {
            elements: 1 << 24,
            inputs: 2,
            flops_per_element: ADD_FLOPS_PER_ELEMENT,
            precision: Precision::Fp32,
        }
        .cost();
        let gemm = Gemm::uniform(1024, 1024, 1024, Precision::Fp32).cost();
        let timings = vec![
            SuiteKernel {
                name: "add 16.8M".into(),
                family: "elementwise".into(),
                note: "n".into(),
                launches: vec![Launch {
                    name: "add".into(),
                    cost: add,
                    compute: Compute::Vector,
                    working_set: add.bytes(),
                    exps: 0.0,
                    exp_pass: false,
                }],
                time: stat(25e-3),
                caveat: None,
            },
            SuiteKernel {
                name: "gemm 1024×1024×1024".into(),
                family: "gemm".into(),
                note: "square".into(),
                launches: vec![Launch {
                    name: "gemm".into(),
                    cost: gemm,
                    compute: Compute::Matrix(Precision::Fp32),
                    working_set: gemm.bytes(),
                    exps: 0.0,
                    exp_pass: false,
                }],
                time: stat(26e-3),
                caveat: None,
            },
        ];
        check_suite(
            &timings,
            &[("pair", "add 16.8M", "gemm 1024×1024×1024")],
            &device(),
            Precision::Fp32,
            &Ceilings::NONE,
        )
        .map_err(|e| e.to_string())
    }

    fn render(format: Format) -> Result<String, String> {
        render_check(&check()?, format)
    }

    fn render_check(chk: &SuiteCheck, format: Format) -> Result<String, String> {
        let d = device();
        let cx = SuiteContext {
            device: &d,
            roofline_source: "chip file box.toml".into(),
            target: "CPU, 2 threads".into(),
            method: "m".into(),
            notes: vec!["a note".into()],
        };
        let mut out = Vec::new();
        write_suite(chk, &cx, format, &mut out).map_err(|e| e.to_string())?;
        String::from_utf8(out).map_err(|e| e.to_string())
    }

    #[test]
    fn the_ceilings_are_printed_with_their_share_of_the_roofs(
    ) -> Result<(), Box<dyn std::error::Error>> {
        use roofline_core::cited::Cited;
        use roofline_core::units::{BytesPerSec, FlopPerSec};
        let mut chk = check()?;
        // The test chip: fp32 peak 100 GFLOP/s, DRAM 10 GB/s. GEMM 80 GFLOP/s = 80 % of the peak;
        // GEMV 8 GB/s = 80 % of the DRAM roof; e^x 1.25e9/s = 1.25 G e^x/s.
        chk.ceilings = Ceilings {
            gemm: Some(Cited::new(FlopPerSec(80e9), "calibration A")),
            gemv: Some(Cited::new(BytesPerSec(8e9), "calibration B")),
            exp: Some(Cited::new(1.25e9, "calibration C")),
            ..Ceilings::NONE
        };
        let t = render_check(&chk, Format::Table)?;
        assert!(
            t.contains("GEMM ceiling 80.0 GFLOP/s, 80 % of the fp32 peak (calibration A)"),
            "{t}"
        );
        assert!(
            t.contains("GEMV ceiling 8.00 GB/s, 80 % of the DRAM roof (calibration B)"),
            "{t}"
        );
        assert!(
            t.contains("e^x ceiling 1.25 G e^x/s (calibration C)"),
            "{t}"
        );
        assert!(t.contains("(hierarchical: each launch also held against these ceilings"));
        // 120 GFLOP/s is 120 % of a 100 GFLOP/s peak: the peak was measured low, and said so.
        chk.ceilings.gemm = Some(Cited::new(FlopPerSec(120e9), "calibration A"));
        let t = render_check(&chk, Format::Table)?;
        assert!(
            t.contains("GEMM ceiling 120.0 GFLOP/s, 120 % of the fp32 peak (above the peak"),
            "{t}"
        );
        // Without ceilings, no ceiling line.
        assert!(!render(Format::Table)?.contains("ceiling"));
        Ok(())
    }

    #[test]
    fn table_shows_times_errors_speedups_and_the_median() -> Result<(), Box<dyn std::error::Error>>
    {
        let t = render(Format::Table)?;
        assert!(
            t.contains("fp32 peak 100.0 GFLOP/s; memory L3 50.0 GB/s (8 MiB), DRAM 10.0 GB/s"),
            "{t}"
        );
        // add: predicted 20.13 ms, measured 25 ms: error 19 %; gemm: 21.47 vs 26 ms: 17 %.
        assert!(t.contains("20.13 ms") && t.contains("19 %"), "{t}");
        assert!(t.contains("21.47 ms") && t.contains("17 %"), "{t}");
        // Speedup 25 / 26 = 0.96 measured, 20.13 / 21.47 = 0.94 predicted.
        assert!(
            t.contains("fused pair: measured 0.96× (25.00 ms → 26.00 ms), predicted 0.94×"),
            "{t}"
        );
        // Median of 19.47 % and 17.40 % = 18.4 %: above the goal.
        assert!(
            t.contains("18.4 % hierarchical (goal ≤ 15 %: missed)"),
            "{t}"
        );
        assert!(
            t.contains("Misses over 15 %:\n  add 16.8M (19 %): memory-bound on DRAM"),
            "{t}"
        );
        assert!(t.contains("note: a note") && t.contains("method: m"));
        Ok(())
    }

    #[test]
    fn json_and_csv_in_base_units() -> Result<(), Box<dyn std::error::Error>> {
        let v: serde_json::Value = serde_json::from_str(&render(Format::Json)?)?;
        assert_eq!(v["schema_version"], crate::doc::SCHEMA_VERSION);
        assert_eq!(v["rows"][0]["measured"]["median"], 25e-3);
        assert_eq!(v["rows"][1]["bound"], "compute");
        // 25 ms before ÷ 26 ms after, in seconds as the check holds them.
        assert_eq!(v["speedups"][0]["measured"], 25e-3 / 26e-3);
        assert_eq!(v["roofline"]["source"], "chip file box.toml");
        let csv = render(Format::Csv)?;
        let mut lines = csv.lines();
        assert!(lines
            .next()
            .ok_or("expected a value, got None")?
            .starts_with("kernel,family,launches,level"));
        let add = lines.next().ok_or("expected a value, got None")?;
        assert!(
            add.starts_with("add 16.8M,elementwise,1,DRAM,memory,16777216,"),
            "{add}"
        );
        assert_eq!(csv.lines().count(), 3);
        Ok(())
    }
}
