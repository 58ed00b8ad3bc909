//! Empirical Roofline Toolkit outputs (Lo et al., "Roofline model toolkit: a practical tool for
//! architectural and program analysis", PMBS 2014; ERT 1.1.0) into an empirical roof.
//!
//! - `roofline.json`, the run's summary database: `empirical.gbytes.data` = `[[level, GB/s],
//!   …]`, `empirical.gflops.data` = `[["GFLOPs", value]]`, `empirical.metadata` (host name,
//!   `CONFIG` with `ERT_GPU`, `ERT_PRECISION`).
//! - a `sum` file, one configuration's summary: `value GFLOPs`, `value Weight`, `value L1` …
//!   `value DRAM`, then `META_DATA`.
//! - a `try.NNN` file, raw trials: per line the working set (bytes), trials, time (µs), total
//!   bytes and total FLOPs (columns of ERT's `driver1.c`).
//!
//! Levels: `DRAM`, `HBM`, `MCDRAM` are main memory; `L1`, `L2`, `L3`; `L4` and beyond are
//! caches beyond L2. The FLOP/s peak is in ERT's precision: `ERT_PRECISION` when the config
//! has it, else double (ERT's default kernel computes in `double`). 1 GB/s = 1e9 B/s, 1 GFLOP/s
//! = 1e9 FLOP/s.

use super::at_line;
use crate::error::InputError;
use roofline_core::device::MemoryKind;
use roofline_core::precision::Precision;
use roofline_core::profile::{
    EmpiricalLevel, EmpiricalPeak, EmpiricalRoof, RoofFormat, RoofSample,
};
use roofline_core::units::{BytesPerSec, FlopPerByte, FlopPerSec};
use serde_json::Value;

const HINT: &str = "give ERT's Results.*/Run.*/roofline.json, or a FLOPS.*/MPI.*/OpenMP.*/sum or try.* file, unedited";

fn level_kind(name: &str) -> Option<MemoryKind> {
    Some(match name.trim().to_ascii_uppercase().as_str() {
        "DRAM" | "HBM" | "MCDRAM" | "DDR" | "MEMORY" => MemoryKind::Main,
        "L1" => MemoryKind::L1,
        "L2" => MemoryKind::L2,
        "L3" | "L4" | "L5" => MemoryKind::L3,
        _ => return None,
    })
}

/// ERT's precision from the text of its config: the value after `ERT_PRECISION`, else double.
fn precision_of(config: &str) -> (Precision, Option<String>) {
    let up = config.to_ascii_uppercase();
    if let Some(i) = up.find("ERT_PRECISION") {
        let after: String = up[i..].chars().take(40).collect();
        for (key, p) in [
            ("FP32", Precision::Fp32),
            ("FP16", Precision::Fp16),
            ("FP64", Precision::Fp64),
        ] {
            if after.contains(key) {
                return (p, None);
            }
        }
    }
    (
        Precision::Fp64,
        Some(
            "ERT_PRECISION not in the config: ERT's default, double precision, assumed for the \
             FLOP/s peak"
                .into(),
        ),
    )
}

/// The GFLOPs peak as a list of at most one.
fn peaks(gflops: Option<f64>, precision: Precision) -> Vec<EmpiricalPeak> {
    gflops
        .map(|g| EmpiricalPeak {
            precision: Some(precision),
            label: "GFLOPs".into(),
            value: FlopPerSec(g * 1e9),
            at_intensity: None,
            plateau: None,
        })
        .into_iter()
        .collect()
}

/// Parses ERT's `roofline.json`. `origin` names the file in errors.
///
/// # Errors
/// Malformed JSON (line and column); `empirical`, `empirical.gbytes.data` or
/// `empirical.gflops.data` missing; an entry that is not `[name, number]` (naming it); a level
/// name not in the list above; no main-memory level.
pub fn parse_json(text: &str, origin: &str) -> Result<EmpiricalRoof, InputError> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        at_line(
            origin,
            e.line(),
            format!("column {}: malformed JSON: {e}", e.column()),
        )
        .with_hint(HINT)
    })?;
    let missing = |field: &str| {
        InputError::new(format!(
            "{origin}: field `{field}` is missing or not a list"
        ))
        .with_hint(HINT)
    };
    let emp = v.get("empirical").ok_or_else(|| missing("empirical"))?;
    let pairs = |field: &str| -> Result<Vec<(String, f64)>, InputError> {
        let path: Vec<&str> = field.split('.').collect();
        let mut cur = emp;
        for p in &path[1..] {
            cur = cur.get(p).ok_or_else(|| missing(field))?;
        }
        let list = cur.as_array().ok_or_else(|| missing(field))?;
        list.iter()
            .enumerate()
            .map(|(i, e)| {
                let pair = e.as_array().filter(|a| a.len() == 2);
                match pair.map(|a| (a[0].as_str(), a[1].as_f64())) {
                    Some((Some(n), Some(x))) if x.is_finite() && x > 0.0 => Ok((n.to_string(), x)),
                    _ => Err(InputError::new(format!(
                        "{origin}: field `{field}[{i}]` is `{e}`, expected [name, value > 0]"
                    ))
                    .with_hint(HINT)),
                }
            })
            .collect()
    };
    let gbytes = pairs("empirical.gbytes.data")?;
    let gflops = pairs("empirical.gflops.data")?;
    let meta = emp.get("metadata");
    let machine = meta
        .and_then(|m| m.get("HOSTNAME"))
        .and_then(|h| h.get(0).or(Some(h)))
        .and_then(Value::as_str)
        .unwrap_or("ERT host")
        .to_string();
    let config = meta.and_then(|m| m.get("CONFIG"));
    let gpu = config
        .and_then(|c| c.get("ERT_GPU"))
        .and_then(|g| g.get(0).or(Some(g)))
        .and_then(|g| match g {
            Value::Bool(b) => Some(*b),
            Value::String(s) => Some(s.eq_ignore_ascii_case("true")),
            _ => None,
        });
    let (precision, note) = precision_of(&config.map(|c| c.to_string()).unwrap_or_default());
    let mut notes: Vec<String> = note.into_iter().collect();
    let mut levels = Vec::new();
    for (i, (name, gbs)) in gbytes.iter().enumerate() {
        let kind = level_kind(name).ok_or_else(|| {
            InputError::new(format!(
                "{origin}: field `empirical.gbytes.data[{i}]`: unknown level `{name}`"
            ))
            .with_hint("ERT names levels L1, L2, L3, L4, DRAM (HBM, MCDRAM)")
        })?;
        levels.push(EmpiricalLevel {
            kind,
            name: name.clone(),
            bandwidth: BytesPerSec(gbs * 1e9),
        });
    }
    if !levels.iter().any(|l| l.kind == MemoryKind::Main) {
        return Err(InputError::new(format!(
            "{origin}: field `empirical.gbytes.data` has no DRAM level: no main-memory roof"
        ))
        .with_hint(HINT));
    }
    let peak = gflops
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("GFLOPs"))
        .or(gflops.first())
        .map(|(_, g)| *g);
    if peak.is_none() {
        notes.push("no GFLOPs entry: the roof has bandwidths only".into());
    }
    Ok(EmpiricalRoof {
        format: RoofFormat::ErtJson,
        origin: origin.to_string(),
        machine,
        gpu,
        peaks: peaks(peak, precision),
        levels,
        samples: Vec::new(),
        notes,
    })
}

/// Parses an ERT `sum` file. `origin` names the file in errors.
///
/// # Errors
/// A line before `META_DATA` that is not `number name`, or whose number is not finite and > 0
/// (naming the line); no level and no GFLOPs; no DRAM level.
pub fn parse_sum(text: &str, origin: &str) -> Result<EmpiricalRoof, InputError> {
    let mut levels = Vec::new();
    let mut gflops = None;
    let mut notes = Vec::new();
    let mut meta = String::new();
    let mut in_meta = false;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if t == "META_DATA" {
            in_meta = true;
            continue;
        }
        if in_meta {
            meta.push_str(t);
            meta.push('\n');
            continue;
        }
        let mut f = t.split_whitespace();
        let (Some(v), Some(name), None) = (f.next(), f.next(), f.next()) else {
            return Err(at_line(
                origin,
                i + 1,
                format!("expected `value name` (`18.30 DRAM`), got `{t}`"),
            )
            .with_hint(HINT));
        };
        let x = match v.parse::<f64>() {
            Ok(x) if x.is_finite() && (x > 0.0 || (name == "Weight" && x == 0.0)) => x,
            Ok(_) => {
                return Err(at_line(
                    origin,
                    i + 1,
                    format!("`{name}` is `{v}`: a measured rate is a finite number > 0"),
                )
                .with_hint(HINT))
            }
            Err(_) => {
                return Err(at_line(origin, i + 1, format!("`{v}` is not a number")).with_hint(HINT))
            }
        };
        match name {
            "GFLOPs" => gflops = Some(x),
            "Weight" => notes.push(format!("ERT weight {x} (not a roof)")),
            other => match level_kind(other) {
                Some(kind) => levels.push(EmpiricalLevel {
                    kind,
                    name: other.to_string(),
                    bandwidth: BytesPerSec(x * 1e9),
                }),
                None => {
                    return Err(at_line(origin, i + 1, format!("unknown entry `{other}`"))
                        .with_hint(
                            "an ERT sum file lists GFLOPs, Weight, L1, L2, L3, L4 and DRAM",
                        ))
                }
            },
        }
    }
    if !levels.iter().any(|l| l.kind == MemoryKind::Main) {
        return Err(InputError::new(format!(
            "{origin}: no `DRAM` line before META_DATA: no main-memory roof (a truncated file?)"
        ))
        .with_hint(HINT));
    }
    let machine = meta
        .lines()
        .find_map(|l| l.strip_prefix("HOSTNAME"))
        .and_then(|h| h.split('\'').nth(1))
        .unwrap_or("ERT host")
        .to_string();
    let gpu = meta
        .lines()
        .find(|l| l.starts_with("CONFIG"))
        .and_then(|c| c.split("'ERT_GPU': [").nth(1))
        .map(|r| r.trim_start().starts_with("True"));
    let config = meta.lines().find(|l| l.starts_with("CONFIG")).unwrap_or("");
    let (precision, note) = precision_of(config);
    notes.extend(note);
    Ok(EmpiricalRoof {
        format: RoofFormat::ErtSum,
        origin: origin.to_string(),
        machine,
        gpu,
        peaks: peaks(gflops, precision),
        levels,
        samples: Vec::new(),
        notes,
    })
}

/// Parses an ERT `try.NNN` raw trial file. `origin` names the file in errors.
///
/// Each line is one trial: bandwidth = bytes / time, FLOP/s = FLOPs / time, intensity =
/// FLOPs / bytes. The roof: the best bandwidth at the largest working set in the file as main
/// memory (a whole file's largest sets are DRAM-sized; a file's first lines are not, and the
/// notes say so), and the best FLOP/s of any trial, in double precision.
///
/// # Errors
/// A line that is not five numbers, or a number there that is zero, negative, NaN or infinite
/// (naming the line and column); no lines.
pub fn parse_trials(text: &str, origin: &str) -> Result<EmpiricalRoof, InputError> {
    let mut samples = Vec::new();
    let mut largest = (0.0f64, 0.0f64); // (working set, best B/s there)
    let mut best_flops: f64 = 0.0;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        let f: Vec<f64> = t
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if f.len() != 5 || t.split_whitespace().count() != 5 {
            return Err(at_line(
                origin,
                i + 1,
                format!(
                    "expected 5 numbers (working set bytes, trials, µs, bytes, FLOPs), got `{t}`"
                ),
            )
            .with_hint(HINT));
        }
        const COLUMNS: [&str; 5] = ["working set", "trials", "time (µs)", "bytes", "FLOPs"];
        if let Some((j, x)) = f
            .iter()
            .enumerate()
            .find(|(_, x)| !(x.is_finite() && **x > 0.0))
        {
            let why = if x.is_finite() {
                "a trial's sizes, count and time are > 0"
            } else {
                "not a finite number"
            };
            return Err(at_line(
                origin,
                i + 1,
                format!("field {} ({}) is `{x}`: {why}", j + 1, COLUMNS[j]),
            )
            .with_hint(HINT));
        }
        let (ws, secs, bytes, flops) = (f[0], f[2] / 1e6, f[3], f[4]);
        let (bw, fl) = (bytes / secs, flops / secs);
        if ws > largest.0 {
            largest = (ws, bw);
        } else if ws == largest.0 {
            largest.1 = largest.1.max(bw);
        }
        best_flops = best_flops.max(fl);
        samples.push(RoofSample {
            label: format!("working set {ws} B"),
            intensity: FlopPerByte(if bytes > 0.0 { flops / bytes } else { 0.0 }),
            flops_per_s: FlopPerSec(fl),
            bytes_per_s: BytesPerSec(bw),
        });
    }
    if samples.is_empty() {
        return Err(InputError::new(format!("{origin}: no trial lines")).with_hint(HINT));
    }
    Ok(EmpiricalRoof {
        format: RoofFormat::ErtTrials,
        origin: origin.to_string(),
        machine: "ERT trials".into(),
        gpu: None,
        peaks: peaks(Some(best_flops / 1e9), Precision::Fp64),
        levels: vec![EmpiricalLevel {
            kind: MemoryKind::Main,
            name: format!("best at the largest working set, {} B", largest.0),
            bandwidth: BytesPerSec(largest.1),
        }],
        samples,
        notes: vec![format!(
            "raw trials: the largest working set here is {} B; only a DRAM-sized working set \
             (much larger than the last cache) measures main memory, so read these roofs as \
             what the file shows, not as the machine's",
            largest.0
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_levels_and_precision() -> Result<(), Box<dyn std::error::Error>> {
        let t = r#"{"empirical":{"gbytes":{"data":[["L1",100.0],["DRAM",10.0]]},
            "gflops":{"data":[["GFLOPs",50.0]]},
            "metadata":{"HOSTNAME":["box"],"CONFIG":{"ERT_GPU":[false],"ERT_PRECISION":["FP32"]}}}}"#;
        let r = parse_json(t, "r.json")?;
        assert_eq!(r.machine, "box");
        assert_eq!(r.gpu, Some(false));
        assert_eq!(
            r.peak(Precision::Fp32)
                .ok_or("expected a value, got None")?
                .value,
            FlopPerSec(50e9)
        );
        assert_eq!(
            r.main().ok_or("expected a value, got None")?.bandwidth,
            BytesPerSec(10e9)
        );
        Ok(())
    }

    #[test]
    fn bad_files_name_the_field_or_line() {
        let e = parse_json(
            r#"{"empirical":{"gbytes":{"data":[["L1","fast"]]},"gflops":{"data":[]}}}"#,
            "r.json",
        )
        .unwrap_err();
        assert!(
            e.message.contains("`empirical.gbytes.data[0]`"),
            "{}",
            e.message
        );
        let e = parse_json(r#"{"empirical":{"gflops":{"data":[]}}}"#, "r.json").unwrap_err();
        assert!(
            e.message.contains("`empirical.gbytes.data`"),
            "{}",
            e.message
        );
        let e = parse_json(
            r#"{"empirical":{"gbytes":{"data":[["L9",1.0]]},"gflops":{"data":[]}}}"#,
            "r.json",
        )
        .unwrap_err();
        assert!(e.message.contains("unknown level `L9`"), "{}", e.message);
        let e = parse_json(r#"{"empirical": {"#, "r.json").unwrap_err();
        assert!(e.message.contains("r.json: line 1"), "{}", e.message);
        let e = parse_sum("  11.03 GFLOPs\n  176.44 L1\n", "s").unwrap_err();
        assert!(e.message.contains("no `DRAM`"), "{}", e.message);
        let e = parse_sum("  11.03 GFLOPs extra\n", "s").unwrap_err();
        assert!(e.message.contains("s: line 1"), "{}", e.message);
        let e = parse_trials("8 1 0.8 16\n", "t").unwrap_err();
        assert!(
            e.message.contains("t: line 1: expected 5 numbers"),
            "{}",
            e.message
        );
        let e = parse_trials("8 1 0.8 16 1\n8 1 0 16 1\n", "t").unwrap_err();
        assert!(
            e.message.contains("t: line 2: field 3 (time (µs)) is `0`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn zero_negative_nan_and_infinite_values_name_the_line() {
        for (line, says) in [
            ("8 1 0.8 -16 1", "field 4 (bytes) is `-16`"),
            (
                "8 1 NaN 16 1",
                "field 3 (time (µs)) is `NaN`: not a finite number",
            ),
            (
                "8 1 0.8 16 inf",
                "field 5 (FLOPs) is `inf`: not a finite number",
            ),
            ("0 1 0.8 16 1", "field 1 (working set) is `0`"),
        ] {
            let e = parse_trials(&format!("8 1 0.8 16 1\n{line}\n"), "t").unwrap_err();
            assert!(
                e.message.contains("t: line 2: ") && e.message.contains(says),
                "{line}: {}",
                e.message
            );
        }
        for (line, says) in [
            ("-18.30 DRAM", "`DRAM` is `-18.30`"),
            ("0 DRAM", "`DRAM` is `0`"),
            ("nan DRAM", "`DRAM` is `nan`"),
            ("inf GFLOPs", "`GFLOPs` is `inf`"),
        ] {
            let e = parse_sum(&format!("  176.44 L1\n{line}\n"), "s").unwrap_err();
            assert!(
                e.message.contains("s: line 2: ") && e.message.contains(says),
                "{line}: {}",
                e.message
            );
        }
        // The weight is not a rate and no roof: 0 is read as it stands.
        assert!(parse_sum("0 Weight\n18.30 DRAM\n", "s").is_ok());
        let e = parse_json(
            r#"{"empirical":{"gbytes":{"data":[["DRAM",-1.0]]},"gflops":{"data":[]}}}"#,
            "r.json",
        )
        .unwrap_err();
        assert!(
            e.message.contains("`empirical.gbytes.data[0]`"),
            "{}",
            e.message
        );
    }
}
