//! Rendering of `roofline measure`: the measured peaks and memory levels beside their
//! theoretical limits, the sweep, and what was rejected; as a table, JSON or CSV (the sweep).
//!
//! JSON (`schema_version` 2) is the [`Measurement`] as serde writes it, base units (FLOP/s, B/s,
//! bytes, seconds, Hz), plus the chip it makes (`device`, the shape of `hardware show --format
//! json`). CSV is the sweep, one row per kernel and working set.

use crate::units::{human_bytes_per_s, human_flops_per_s, human_seconds};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::device::Device;
use roofline_core::measured::{BandwidthKernel, Measurement};
use roofline_core::precision::Precision;
use std::io::Write;

/// Binary size for working sets and caches: `32 KiB`, `1.41 MiB`, `1 GiB`.
pub fn human_binary(bytes: f64) -> String {
    const UNITS: [(f64, &str); 3] = [
        (1024.0 * 1024.0 * 1024.0, "GiB"),
        (1024.0 * 1024.0, "MiB"),
        (1024.0, "KiB"),
    ];
    for (scale, unit) in UNITS {
        if bytes >= scale {
            let x = bytes / scale;
            return if (x - x.round()).abs() < 0.005 {
                format!("{} {unit}", x.round())
            } else if x < 10.0 {
                format!("{x:.2} {unit}")
            } else {
                format!("{x:.1} {unit}")
            };
        }
    }
    format!("{bytes} B")
}

fn threads_word(n: u32) -> String {
    if n == 1 {
        "1 thread".into()
    } else {
        format!("{n} threads")
    }
}

fn pct(v: f64, of: Option<f64>) -> String {
    match of {
        Some(t) if t > 0.0 => format!("{:.0} %", 100.0 * v / t),
        _ => "—".into(),
    }
}

fn rate(p: Precision, v: f64) -> String {
    if matches!(p, Precision::Int8 | Precision::Int4) {
        crate::units::human(v, "OP/s")
    } else {
        human_flops_per_s(v)
    }
}

/// Writes a measurement and the chip it makes (`device`, from [`Measurement::to_device`]).
///
/// # Errors
/// A failed write.
pub fn write_measurement(
    m: &Measurement,
    device: &Device,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Json => {
            crate::doc::write_json(&crate::doc::measure::MeasureDoc::of(m, device), out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "kernel",
                "working_set_bytes",
                "bandwidth_bytes_per_s",
                "min_bytes_per_s",
                "max_bytes_per_s",
                "repetitions",
                "stable",
            ])?;
            for p in &m.sweep {
                w.write_record([
                    p.kernel.name().to_string(),
                    p.working_set.to_string(),
                    p.bandwidth.median.to_string(),
                    p.bandwidth.min.to_string(),
                    p.bandwidth.max.to_string(),
                    p.bandwidth.samples.to_string(),
                    p.bandwidth.stable.to_string(),
                ])?;
            }
            w.flush()?;
        }
        Format::Table => write_table(m, device, out)?,
    }
    Ok(())
}

fn write_table(m: &Measurement, device: &Device, out: &mut dyn Write) -> Result<(), WriteError> {
    let ghz = |c: Option<f64>| c.map(|c| format!("{:.2} GHz", c / 1e9));
    writeln!(out, "Measured roofline of {} ({})", m.host, m.processor)?;
    writeln!(
        out,
        "{}{}, ISA {}, clock {} (1 thread) / {} (all threads), {}",
        threads_word(m.threads),
        if m.pinned { " pinned" } else { " (not pinned)" },
        m.isa,
        ghz(m.clock_hz).unwrap_or_else(|| "unknown".into()),
        ghz(m.clock_all_hz).unwrap_or_else(|| "unknown".into()),
        m.date
    )?;
    if !m.clock_source.is_empty() {
        writeln!(out, "Clock: {}", m.clock_source)?;
    }
    writeln!(out)?;

    writeln!(
        out,
        "Compute peaks (theoretical = threads × clock × FLOP per instruction × FMA units)"
    )?;
    let mut t = new_table(&[
        "precision",
        "kernel",
        "FLOP/instr",
        "threads",
        "median",
        "spread",
        "reps",
        "theoretical",
        "of theor.",
    ]);
    for p in &m.peaks {
        t.add_row(vec![
            p.precision.to_string(),
            p.kernel.clone(),
            format!("{}", p.flop_per_instruction),
            p.threads.to_string(),
            rate(p.precision, p.value.median),
            format!(
                "{:.1} %{}",
                100.0 * p.value.spread(),
                if p.value.stable { "" } else { " !" }
            ),
            p.value.samples.to_string(),
            p.theoretical
                .map(|v| rate(p.precision, v))
                .unwrap_or_else(|| "—".into()),
            pct(p.value.median, p.theoretical),
        ]);
    }
    align_right_from(&mut t, 2);
    writeln!(out, "{t}")?;
    writeln!(out)?;

    writeln!(
        out,
        "Memory levels, {} (bytes = loads + stores named; write-allocate not counted)",
        threads_word(m.threads)
    )?;
    let mut t = new_table(&[
        "level",
        "capacity",
        "working sets",
        "read",
        "copy",
        "triad",
        "theoretical read",
        "of theor.",
    ]);
    let bw = |v: Option<f64>| v.map(human_bytes_per_s).unwrap_or_else(|| "—".into());
    for l in &m.levels {
        t.add_row(vec![
            l.name.clone(),
            match (l.capacity, l.effective_capacity) {
                (Some(c), Some(e)) if e < 0.75 * c => {
                    format!("{} (falls at {})", human_binary(c), human_binary(e))
                }
                (Some(c), _) => human_binary(c),
                (None, Some(e)) => format!("falls at {}", human_binary(e)),
                (None, None) => "—".into(),
            },
            format!(
                "{}–{} ({})",
                human_binary(l.window.0),
                human_binary(l.window.1),
                l.points
            ),
            bw(l.read),
            bw(l.copy),
            bw(l.triad),
            bw(l.theoretical),
            l.read.map(|r| pct(r, l.theoretical)).unwrap_or_default(),
        ]);
    }
    align_right_from(&mut t, 1);
    writeln!(out, "{t}")?;
    if !m.unsettled.is_empty() {
        writeln!(
            out,
            "Did not settle (! above; refused for a chip file without --accept-unsettled): {}",
            m.unsettled.join("; ")
        )?;
    }
    if let Some(f) = &m.launch_overhead {
        writeln!(
            out,
            "Fork/join of an empty parallel region ({}): {} (median of {})",
            threads_word(m.threads),
            human_seconds(f.median),
            f.samples
        )?;
    }
    // Ridge points of the chip the measurement makes.
    let ridges: Vec<String> = device
        .peaks
        .iter()
        .filter_map(|(p, _)| device.ridge(*p).ok().map(|r| format!("{p} {:.2}", r.get())))
        .collect();
    if !ridges.is_empty() {
        writeln!(
            out,
            "Ridge points against DRAM read, FLOP/byte: {}",
            ridges.join(", ")
        )?;
    }
    writeln!(out)?;

    writeln!(out, "Working-set sweep, {}", threads_word(m.threads))?;
    // One row per step of the sweep: each kernel rounds the size to whole vectors per stream and
    // thread, so the kernels' working sets of one step differ by a few percent (the steps are
    // 41 % apart); the row shows the largest.
    let same_step = |a: f64, b: f64| (a / b - 1.0).abs() < 0.15;
    let mut sizes: Vec<f64> = Vec::new();
    let mut all: Vec<f64> = m.sweep.iter().map(|p| p.working_set).collect();
    all.sort_by(f64::total_cmp);
    for w in all {
        match sizes.last_mut() {
            Some(last) if same_step(*last, w) => *last = w,
            _ => sizes.push(w),
        }
    }
    let mut t = new_table(&["working set", "read", "copy", "triad"]);
    for s in sizes {
        let cell = |k: BandwidthKernel| {
            m.sweep
                .iter()
                .find(|p| p.kernel == k && same_step(p.working_set, s))
                .map(|p| {
                    format!(
                        "{}{}",
                        human_bytes_per_s(p.bandwidth.median),
                        if p.bandwidth.stable { "" } else { " !" }
                    )
                })
                .unwrap_or_else(|| "—".into())
        };
        t.add_row(vec![
            human_binary(s),
            cell(BandwidthKernel::Read),
            cell(BandwidthKernel::Copy),
            cell(BandwidthKernel::Triad),
        ]);
    }
    align_right_from(&mut t, 0);
    writeln!(out, "{t}")?;
    writeln!(out, "(! = did not settle within the method's tolerance)")?;
    for r in &m.rejected {
        writeln!(out, "rejected: {r}")?;
    }
    for n in &m.notes {
        writeln!(out, "note: {n}")?;
    }
    writeln!(out, "method: {}", m.method)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_core::device::MemoryKind;
    use roofline_core::measured::{BandwidthPoint, MeasuredLevel, MeasuredPeak, Stat};

    fn stat(v: f64, stable: bool) -> Stat {
        Stat {
            median: v,
            min: v * 0.99,
            max: v * 1.01,
            samples: 5,
            stable,
        }
    }

    fn sample() -> Measurement {
        Measurement {
            host: "box".into(),
            processor: "Test CPU".into(),
            vendor: "AMD".into(),
            date: "2025-01-31".into(),
            isa: "avx2 fma".into(),
            threads: 2,
            pinned: true,
            clock_hz: Some(3.5e9),
            clock_all_hz: Some(3.4e9),
            clock_source: String::new(),
            unsettled: vec![],
            peaks: vec![MeasuredPeak {
                precision: Precision::Fp32,
                kernel: "avx2 vfmadd231ps ymm".into(),
                flop_per_instruction: 16.0,
                threads: 2,
                value: stat(200e9, true),
                theoretical: Some(224e9),
            }],
            sweep: vec![
                BandwidthPoint {
                    kernel: BandwidthKernel::Read,
                    working_set: 32768.0,
                    bandwidth: stat(380e9, true),
                },
                BandwidthPoint {
                    kernel: BandwidthKernel::Triad,
                    working_set: 32768.0,
                    bandwidth: stat(150e9, false),
                },
            ],
            levels: vec![MeasuredLevel {
                kind: MemoryKind::Main,
                name: "DRAM".into(),
                capacity: Some(24e9),
                effective_capacity: None,
                window: (32768.0, 32768.0),
                points: 1,
                read: Some(40e9),
                copy: None,
                triad: Some(20e9),
                theoretical: None,
                theoretical_source: None,
            }],
            launch_overhead: Some(stat(20e-6, true)),
            rejected: vec!["copy at 16 KiB: rejected".into()],
            notes: vec!["a note".into()],
            method: "the method".into(),
        }
    }

    #[test]
    fn table_json_and_csv() -> Result<(), Box<dyn std::error::Error>> {
        let m = sample();
        let d = m.to_device("host", "Host");
        let mut out = Vec::new();
        write_measurement(&m, &d, Format::Table, &mut out)?;
        let t = String::from_utf8(out)?;
        for s in [
            "Measured roofline of box",
            "2 threads pinned",
            "200.0 GFLOP/s",
            "224.0 GFLOP/s",
            // 200 / 224 = 89 %.
            "89 %",
            "40.0 GB/s",
            "380.0 GB/s",
            "150.0 GB/s !",
            "20.0 µs",
            // Ridge fp32 against DRAM: 200 / 40 = 5 FLOP/byte.
            "fp32 5.00",
            "rejected: copy at 16 KiB",
            "note: a note",
            "method: the method",
        ] {
            assert!(t.contains(s), "missing {s:?} in\n{t}");
        }
        let mut out = Vec::new();
        write_measurement(&m, &d, Format::Json, &mut out)?;
        let v: serde_json::Value = serde_json::from_slice(&out)?;
        assert_eq!(v["schema_version"], crate::doc::SCHEMA_VERSION);
        assert_eq!(v["peaks"][0]["value"]["median"], 200e9);
        assert_eq!(v["levels"][0]["kind"], "main");
        assert!(v["device"].is_object());
        let mut out = Vec::new();
        write_measurement(&m, &d, Format::Csv, &mut out)?;
        let csv = String::from_utf8(out)?;
        assert!(csv.starts_with("kernel,working_set_bytes,bandwidth_bytes_per_s"));
        assert!(csv.contains("\ntriad,32768,150000000000,"), "{csv}");
        Ok(())
    }

    #[test]
    fn effective_capacity_clock_and_unsettled_lines() -> Result<(), Box<dyn std::error::Error>> {
        let mut m = sample();
        // An L3 the OS calls 100 MiB whose bandwidth falls at 24 MiB: a share of a shared cache.
        m.levels.push(MeasuredLevel {
            kind: MemoryKind::L3,
            name: "L3".into(),
            capacity: Some(100.0 * 1048576.0),
            effective_capacity: Some(24.0 * 1048576.0),
            ..m.levels[0].clone()
        });
        m.clock_source = "3.500 GHz from the chains".into();
        m.unsettled = vec!["fp32 peak: spread 30 %".into()];
        let device = m.to_device("host", "Host");
        let mut out = Vec::new();
        write_measurement(&m, &device, Format::Table, &mut out)?;
        let t = String::from_utf8(out)?;
        assert!(t.contains("100 MiB (falls at 24 MiB)"), "{t}");
        assert!(t.contains("Clock: 3.500 GHz from the chains"), "{t}");
        assert!(t.contains("Did not settle"), "{t}");
        assert!(t.contains("fp32 peak: spread 30 %"), "{t}");
        // The chip takes the 24 MiB the sweep showed, not the OS's 100.
        let l3 = device
            .memory
            .iter()
            .find(|l| l.name == "L3")
            .and_then(|l| l.capacity.as_ref())
            .ok_or("no L3 capacity")?;
        assert_eq!(l3.value.get(), 24.0 * 1048576.0);
        Ok(())
    }

    #[test]
    fn binary_sizes() {
        assert_eq!(human_binary(32768.0), "32 KiB");
        // 16 KiB · √2 = 23170 bytes = 22.63 KiB.
        assert_eq!(human_binary(23170.0), "22.6 KiB");
        assert_eq!(human_binary(1.5 * 1048576.0), "1.50 MiB");
        assert_eq!(human_binary(1073741824.0), "1 GiB");
        assert_eq!(human_binary(100.0), "100 B");
    }
}
