//! mixbench logs (Konstantinidis and Cotronis, "A quantitative roofline model for GPU kernel
//! performance estimation using micro-benchmarks and hardware metric profiling", JPDC 2017;
//! `github.com/ekondis/mixbench`) into an empirical roof.
//!
//! A log has a device header (`Device:`, `Compute throughput:`, `Memory bandwidth:` …) and,
//! after a `CSV data` rule, a group header (`Experiment ID, Single Precision ops,,,, Double
//! precision ops,,,, …`), a column header (`Compute iters, Flops/byte, ex.time, GFLOPS,
//! GB/sec, …`) and one row per experiment, until a rule of dashes. Each group is four columns:
//! operational intensity (FLOP/byte), time (ms), GFLOP/s, GB/s.
//!
//! The roof: per group, the **peak** is the largest GFLOP/s of any experiment (with the
//! intensity it was reached at) and the **bandwidth** the largest GB/s (the plateau of the
//! memory-bound experiments); main memory's roof is the largest bandwidth of any group.
//! Groups: `Single` → fp32, `Double` → fp64, `Half` → fp16; `Integer` (32-bit) has no
//! precision in the cost model and is kept in the notes. 1 GFLOP/s = 1e9 FLOP/s, 1 GB/s = 1e9
//! B/s.

use super::{at_line, parse_number};
use crate::error::InputError;
use roofline_core::device::limits;
use roofline_core::device::MemoryKind;
use roofline_core::precision::Precision;
use roofline_core::profile::{
    EmpiricalLevel, EmpiricalPeak, EmpiricalRoof, RoofFormat, RoofSample,
};
use roofline_core::units::{BytesPerSec, FlopPerByte, FlopPerSec};

const HINT: &str = "give mixbench's whole output (`./mixbench-cuda > mixbench.log`), from its \
                    banner to the closing rule of dashes";

struct Group {
    label: String,
    short: &'static str,
    precision: Option<Precision>,
    column: usize,
}

fn group(name: &str, column: usize) -> Group {
    let l = name.to_ascii_lowercase();
    let (short, precision) = if l.contains("single") {
        ("SP", Some(Precision::Fp32))
    } else if l.contains("double") {
        ("DP", Some(Precision::Fp64))
    } else if l.contains("half") {
        ("HP", Some(Precision::Fp16))
    } else if l.contains("int") {
        ("int", None)
    } else {
        ("?", None)
    };
    Group {
        label: name.trim().to_string(),
        short,
        precision,
        column,
    }
}

/// Parses a mixbench log. `origin` names the file in errors.
///
/// # Errors
/// An [`InputError`] naming the line when the `CSV data` rule, the group header or the column
/// header is missing; when a row has a different number of fields than the header or a field
/// that is not a number; or when no experiment row follows (a truncated log).
pub fn parse(text: &str, origin: &str) -> Result<EmpiricalRoof, InputError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut machine = String::from("mixbench device");
    let mut notes = Vec::new();
    let mut csv_at = None;
    for (i, l) in lines.iter().enumerate() {
        if let Some(d) = l.strip_prefix("Device:") {
            machine = d.trim().to_string();
        }
        for key in [
            "Compute throughput:",
            "Memory bandwidth:",
            "GPU clock rate:",
        ] {
            if let Some(v) = l.strip_prefix(key) {
                notes.push(format!("header {} {}", key.trim_end_matches(':'), v.trim()));
            }
        }
        if l.contains("CSV data") {
            csv_at = Some(i);
            break;
        }
    }
    let Some(c) = csv_at else {
        return Err(InputError::new(format!(
            "{origin}: no `CSV data` rule: not a mixbench log, or cut before its results"
        ))
        .with_hint(HINT));
    };
    let groups_line = c + 1;
    let Some(gl) = lines.get(groups_line) else {
        return Err(at_line(
            origin,
            groups_line + 1,
            "the log ends after the `CSV data` rule (truncated)",
        )
        .with_hint(HINT));
    };
    let fields: Vec<&str> = gl.split(',').collect();
    let groups: Vec<Group> = fields
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, f)| !f.trim().is_empty())
        .map(|(j, f)| group(f, j))
        .collect();
    if !fields[0].contains("Experiment") || groups.is_empty() {
        return Err(at_line(
            origin,
            groups_line + 1,
            format!(
                "expected the group header `Experiment ID, Single Precision ops,,,, …`, got `{}`",
                gl.trim()
            ),
        )
        .with_hint(HINT));
    }
    let header_line = c + 2;
    let header: Vec<String> = lines
        .get(header_line)
        .map(|h| h.split(',').map(|x| x.trim().to_string()).collect())
        .unwrap_or_default();
    let width = 1 + 4 * groups.len();
    if header.len() < width || !header[0].contains("Compute iters") {
        return Err(at_line(
            origin,
            header_line + 1,
            format!(
                "expected the column header `Compute iters, Flops/byte, ex.time, GFLOPS, GB/sec, …` ({width} columns for {} groups)",
                groups.len()
            ),
        )
        .with_hint(HINT));
    }
    for g in &groups {
        let got = &header[g.column + 2];
        if !got.starts_with('G') {
            return Err(at_line(
                origin,
                header_line + 1,
                format!(
                    "column {} is `{got}`, expected GFLOPS (or GIOPS) for `{}`",
                    g.column + 3,
                    g.label
                ),
            )
            .with_hint(HINT));
        }
    }
    let mut samples = Vec::new();
    let mut best: Vec<(f64, f64, f64)> = vec![(0.0, 0.0, 0.0); groups.len()]; // (gflops, at ai, gb/s)
    let mut rows = 0;
    let mut closed = false;
    for (i, l) in lines.iter().enumerate().skip(header_line + 1) {
        let t = l.trim();
        if t.starts_with("---") {
            closed = true;
            break;
        }
        if t.is_empty() {
            continue;
        }
        let f: Vec<&str> = t.split(',').map(str::trim).collect();
        if f.len() != width && !(f.len() == width + 1 && f[width].is_empty()) {
            return Err(at_line(
                origin,
                i + 1,
                format!("{} fields where the header has {width}", f.len()),
            )
            .with_hint(HINT));
        }
        // Intensity, time, GFLOP/s and GB/s of a group: each a finite number > 0 (mixbench's
        // smallest intensity is 1/8 FLOP/byte, at 0 compute iterations).
        let num = |j: usize| {
            let column = header.get(j).map_or("", String::as_str);
            match parse_number(f[j]) {
                Some(v) if v > 0.0 => Ok(v),
                Some(v) => Err(at_line(
                    origin,
                    i + 1,
                    format!(
                        "field {} (`{column}`) is {v}: a measured rate, time or intensity is > 0",
                        j + 1
                    ),
                )
                .with_hint(HINT)),
                None => {
                    let what = match f[j].trim().parse::<f64>() {
                        Ok(_) => "not a finite number",
                        Err(_) => "not a number",
                    };
                    Err(at_line(
                        origin,
                        i + 1,
                        format!("field {} (`{}`) is {what}", j + 1, f[j]),
                    )
                    .with_hint(HINT))
                }
            }
        };
        for (g, b) in groups.iter().zip(best.iter_mut()) {
            num(g.column + 1)?; // ex.time
            let (ai, gflops, gbs) = (num(g.column)?, num(g.column + 2)?, num(g.column + 3)?);
            // A rate no chip reaches is a corrupt log (and would overflow what it feeds).
            for (j, v, max, unit) in [
                (g.column + 2, gflops * 1e9, limits::MAX_PEAK, "FLOP/s"),
                (g.column + 3, gbs * 1e9, limits::MAX_BANDWIDTH, "B/s"),
            ] {
                if v > max {
                    return Err(at_line(
                        origin,
                        i + 1,
                        format!(
                            "field {} (`{}`) is {v:e} {unit}, beyond any chip (at most {max:e})",
                            j + 1,
                            f[j]
                        ),
                    )
                    .with_hint(HINT));
                }
            }
            if gflops > b.0 {
                b.0 = gflops;
                b.1 = ai;
            }
            b.2 = b.2.max(gbs);
            samples.push(RoofSample {
                label: g.short.to_string(),
                intensity: FlopPerByte(ai),
                flops_per_s: FlopPerSec(gflops * 1e9),
                bytes_per_s: BytesPerSec(gbs * 1e9),
            });
        }
        rows += 1;
    }
    if rows == 0 {
        return Err(at_line(
            origin,
            header_line + 2,
            "no experiment rows after the column header (a truncated log)",
        )
        .with_hint(HINT));
    }
    if !closed {
        notes
            .push("the CSV section has no closing rule of dashes: the log may be truncated".into());
    }
    let mut peaks = Vec::new();
    let mut main_bw: f64 = 0.0;
    for (g, b) in groups.iter().zip(&best) {
        main_bw = main_bw.max(b.2);
        notes.push(format!(
            "{}: peak {:.2} GFLOP/s at {:.3} FLOP/byte, bandwidth plateau {:.2} GB/s",
            g.label, b.0, b.1, b.2
        ));
        if g.precision.is_none() {
            notes.push(format!(
                "{}: no precision in the cost model for it (32-bit integers); not a roof",
                g.label
            ));
        }
        peaks.push(EmpiricalPeak {
            precision: g.precision,
            label: g.label.clone(),
            value: FlopPerSec(b.0 * 1e9),
            at_intensity: Some(FlopPerByte(b.1)),
            plateau: Some(BytesPerSec(b.2 * 1e9)),
        });
    }
    Ok(EmpiricalRoof {
        format: RoofFormat::Mixbench,
        origin: origin.to_string(),
        machine,
        gpu: Some(true),
        peaks,
        levels: vec![EmpiricalLevel {
            kind: MemoryKind::Main,
            name: "global memory (largest GB/s of any experiment)".into(),
            bandwidth: BytesPerSec(main_bw * 1e9),
        }],
        samples,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "mixbench/read-only\nDevice: Test GPU\n--- CSV data ---\n\
        Experiment ID, Single Precision ops,,,, \n\
        Compute iters, Flops/byte, ex.time,  GFLOPS, GB/sec\n";

    #[test]
    fn peak_is_the_largest_rate_and_bandwidth_the_plateau() -> Result<(), Box<dyn std::error::Error>>
    {
        let t = format!("{HEAD}0, 0.25, 1.0, 10.0, 40.0\n1, 1.0, 1.0, 39.0, 39.0\n2, 8.0, 1.0, 80.0, 10.0\n---\n");
        let r = parse(&t, "m.log")?;
        assert_eq!(r.machine, "Test GPU");
        assert_eq!(
            r.peak(Precision::Fp32)
                .ok_or("expected a value, got None")?
                .value,
            FlopPerSec(80e9)
        );
        assert_eq!(
            r.main().ok_or("expected a value, got None")?.bandwidth,
            BytesPerSec(40e9)
        );
        assert_eq!(r.samples.len(), 3);
        Ok(())
    }

    #[test]
    fn bad_logs_name_the_line() {
        let e = parse("mixbench\nDevice: x\n", "m.log").unwrap_err();
        assert!(e.message.contains("no `CSV data`"), "{}", e.message);
        let e = parse(&format!("{HEAD}0, 0.25, 1.0\n"), "m.log").unwrap_err();
        assert!(
            e.message.contains("m.log: line 6: 3 fields"),
            "{}",
            e.message
        );
        let e = parse(&format!("{HEAD}0, 0.25, 1.0, fast, 40\n"), "m.log").unwrap_err();
        assert!(
            e.message.contains("line 6") && e.message.contains("`fast`"),
            "{}",
            e.message
        );
        let e = parse(HEAD, "m.log").unwrap_err();
        assert!(e.message.contains("no experiment rows"), "{}", e.message);
        for (bad, says) in [
            ("-10.0", "field 4 (`GFLOPS`) is -10"),
            ("0", "field 4 (`GFLOPS`) is 0"),
            ("nan", "field 4 (`nan`) is not a finite number"),
            ("inf", "field 4 (`inf`) is not a finite number"),
            // 1e308 GFLOP/s is 1e317 FLOP/s, past f64 and far past any chip (1e18).
            ("1e308", "field 4 (`1e308`) is inf FLOP/s, beyond any chip"),
            // 2e9 GFLOP/s = 2e18 FLOP/s, twice the largest peak accepted.
            (
                "2e9",
                "field 4 (`2e9`) is 2e18 FLOP/s, beyond any chip (at most 1e18)",
            ),
        ] {
            let e = parse(&format!("{HEAD}0, 0.25, 1.0, {bad}, 40\n"), "m.log").unwrap_err();
            assert!(
                e.message.contains("m.log: line 6") && e.message.contains(says),
                "{bad}: {}",
                e.message
            );
        }
        let e = parse(&format!("{HEAD}0, 0.25, 0, 10, 40\n"), "m.log").unwrap_err();
        assert!(
            e.message.contains("field 3 (`ex.time`) is 0"),
            "{}",
            e.message
        );
        let e = parse(
            "mixbench\n--- CSV data ---\nExperiment ID, Single,,,,\nIters, a, b, c, d\n",
            "m.log",
        )
        .unwrap_err();
        assert!(e.message.contains("line 4"), "{}", e.message);
    }
}
