//! Rendering of `roofline hardware compare`: chips side by side, one column each: dense peak per
//! precision, main-memory bandwidth and capacity, ridge point per precision.

use crate::doc::hardware::{HardwareCompareDoc, HardwareDoc};
use crate::doc::{write_json, SchemaVersion};
use crate::units::{human, human_bytes, human_bytes_per_s};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::device::Device;
use roofline_core::precision::Precision;
use std::io::Write;

fn peak_unit(p: Precision) -> &'static str {
    match p {
        Precision::Int8 | Precision::Int4 => "OP/s",
        _ => "FLOP/s",
    }
}

/// One row of the comparison: a label, a unit for CSV, and each chip's value (base units).
fn rows(devices: &[Device]) -> Vec<(String, &'static str, Vec<Option<f64>>)> {
    let used: Vec<Precision> = Precision::ALL
        .into_iter()
        .filter(|p| devices.iter().any(|d| d.peak(*p).is_ok()))
        .collect();
    let mut out = Vec::new();
    for p in &used {
        out.push((
            format!("{p} dense peak"),
            peak_unit(*p),
            devices
                .iter()
                .map(|d| d.peak(*p).ok().map(|x| x.get()))
                .collect(),
        ));
    }
    out.push((
        "main-memory bandwidth".into(),
        "B/s",
        devices
            .iter()
            .map(|d| d.bandwidth().ok().map(|x| x.get()))
            .collect(),
    ));
    out.push((
        "main-memory capacity".into(),
        "B",
        devices
            .iter()
            .map(|d| d.capacity().map(|x| x.get()))
            .collect(),
    ));
    for p in &used {
        out.push((
            format!("{p} ridge point"),
            "FLOP/B",
            devices
                .iter()
                .map(|d| d.ridge(*p).ok().map(|x| x.get()))
                .collect(),
        ));
    }
    out
}

/// Writes the chips side by side in `format`: a table with one column per chip (human units),
/// JSON (`{"schema_version": 2, "hardware": [chip, …]}` as in `hardware list`), or CSV (one row
/// per quantity, base units, one column per chip id).
///
/// # Errors
/// A failed write.
pub fn write_compare(
    devices: &[Device],
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    let table = rows(devices);
    match format {
        Format::Json => {
            let doc = HardwareCompareDoc {
                schema_version: SchemaVersion,
                hardware: devices.iter().map(HardwareDoc::of).collect(),
            };
            write_json(&doc, out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            let mut header = vec!["quantity".to_string(), "unit".to_string()];
            header.extend(devices.iter().map(|d| d.id.clone()));
            w.write_record(&header)?;
            for (label, unit, vals) in &table {
                let mut rec = vec![label.clone(), unit.to_string()];
                rec.extend(
                    vals.iter()
                        .map(|v| v.map(|x| x.to_string()).unwrap_or_default()),
                );
                w.write_record(&rec)?;
            }
            w.flush()?;
        }
        Format::Table => {
            let mut header: Vec<&str> = vec![""];
            header.extend(devices.iter().map(|d| d.id.as_str()));
            let mut t = new_table(&header);
            let mut name_row = vec!["name".to_string()];
            name_row.extend(devices.iter().map(|d| d.name.clone()));
            t.add_row(name_row);
            for (label, unit, vals) in &table {
                let mut row = vec![if *unit == "FLOP/B" {
                    format!("{label} (FLOP/B)")
                } else {
                    label.clone()
                }];
                row.extend(vals.iter().map(|v| match v {
                    None => "—".to_string(),
                    Some(x) => match *unit {
                        "B/s" => human_bytes_per_s(*x),
                        "B" => human_bytes(*x),
                        "FLOP/B" => format!("{x:.1}"),
                        u => human(*x, u),
                    },
                }));
                t.add_row(row);
            }
            align_right_from(&mut t, 1);
            writeln!(out, "{t}")?;
            writeln!(
                out,
                "dense peaks (never 2:4-sparse figures); ridge point = peak / main-memory bandwidth: an operator below it is memory-bound on that chip. `roofline hardware show ID` for sources."
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_core::units::{Bytes, BytesPerSec, FlopPerSec, Seconds};

    fn chip(id: &str, bf16: f64, bw: f64) -> Device {
        Device::builder(id, id.to_uppercase())
            .vendor("V")
            .peak(Precision::Bf16, FlopPerSec(bf16), "sheet")
            .main_memory("HBM", BytesPerSec(bw), Some(Bytes(80e9)), "sheet")
            .launch_overhead(Seconds(5e-6), "typical")
            .build()
    }

    #[test]
    fn columns_per_chip_with_ridge_by_hand() -> Result<(), Box<dyn std::error::Error>> {
        // A100 SXM: 312 TFLOP/s bf16, 2.039 TB/s → ridge 153.0; H100 SXM: 989.5 / 3.35 → 295.4.
        let ds = [chip("a", 312e12, 2.039e12), chip("h", 989.5e12, 3.35e12)];
        let mut buf = Vec::new();
        write_compare(&ds, Format::Csv, &mut buf)?;
        let text = String::from_utf8(buf)?;
        assert!(text.starts_with("quantity,unit,a,h\n"), "{text}");
        let ridge = text
            .lines()
            .find(|l| l.starts_with("bf16 ridge point"))
            .ok_or("expected a value, got None")?;
        let v: Vec<f64> = ridge
            .split(',')
            .skip(2)
            .map(|x| x.parse())
            .collect::<Result<_, _>>()?;
        assert!((v[0] - 312.0 / 2.039).abs() < 1e-9);
        assert!((v[1] - 989.5 / 3.35).abs() < 1e-9);
        Ok(())
    }
}
