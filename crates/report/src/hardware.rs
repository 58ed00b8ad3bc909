//! Rendering of `roofline hardware list` and `roofline hardware show`.

use crate::doc::hardware::{level_name, HardwareDoc, HardwareListDoc, HardwareShowDoc};
use crate::doc::{write_json, SchemaVersion};
use crate::units::{human_bytes, human_bytes_per_s, human_flops_per_s, human_seconds};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::device::Device;
use roofline_core::precision::Precision;
use std::io::Write;

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "—".into())
}

/// One line per chip: peaks for bf16, fp16, fp8, fp32, main memory, and the bf16 ridge point.
///
/// # Errors
/// A failed write.
pub fn write_list(
    devices: &[Device],
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Json => {
            let doc = HardwareListDoc {
                schema_version: SchemaVersion,
                hardware: devices.iter().map(HardwareDoc::of).collect(),
            };
            write_json(&doc, out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            let mut header = vec!["id".to_string(), "name".to_string()];
            header.extend(Precision::ALL.iter().map(|p| format!("{p}_flops_per_s")));
            header.extend(["bandwidth_bytes_per_s".into(), "capacity_bytes".into()]);
            header.extend(
                Precision::ALL
                    .iter()
                    .map(|p| format!("ridge_{p}_flop_per_byte")),
            );
            header.push("unusable_reason".into());
            w.write_record(&header)?;
            for d in devices {
                let mut rec = vec![d.id.clone(), d.name.clone()];
                rec.extend(
                    Precision::ALL
                        .iter()
                        .map(|p| opt(d.peak(*p).ok(), |x| x.get().to_string())),
                );
                rec.push(opt(d.bandwidth().ok(), |x| x.get().to_string()));
                rec.push(opt(d.capacity(), |x| x.get().to_string()));
                rec.extend(
                    Precision::ALL
                        .iter()
                        .map(|p| opt(d.ridge(*p).ok(), |x| x.get().to_string())),
                );
                rec.push(d.unusable_reason().unwrap_or_default().to_string());
                w.write_record(&rec)?;
            }
            w.flush()?;
        }
        Format::Table => {
            let mut t = new_table(&[
                "id",
                "name",
                "fp32",
                "bf16",
                "fp16",
                "fp8",
                "int8",
                "memory",
                "bandwidth",
                "ridge bf16 (FLOP/B)",
            ]);
            for d in devices {
                let peak = |p| opt(d.peak(p).ok(), |x| human_flops_per_s(x.get()));
                t.add_row(vec![
                    d.id.clone(),
                    d.name.clone(),
                    peak(Precision::Fp32),
                    peak(Precision::Bf16),
                    peak(Precision::Fp16),
                    peak(Precision::Fp8),
                    opt(d.peak(Precision::Int8).ok(), |x| {
                        crate::units::human(x.get(), "OP/s")
                    }),
                    opt(d.capacity(), |x| human_bytes(x.get())),
                    opt(d.bandwidth().ok(), |x| human_bytes_per_s(x.get())),
                    opt(d.ridge(Precision::Bf16).ok(), |x| format!("{:.1}", x.get())),
                ]);
            }
            align_right_from(&mut t, 2);
            writeln!(out, "{t}")?;
            writeln!(
                out,
                "dense peaks (never 2:4-sparse figures); ridge point = peak / main-memory bandwidth. `roofline hardware show ID` for every figure and its source."
            )?;
            for d in devices {
                if let Some(why) = d.unusable_reason() {
                    writeln!(out, "not usable for analysis: {} ({why})", d.id)?;
                }
            }
        }
    }
    Ok(())
}

/// A peak with its unit: integer formats count operations (OP/s), floating point FLOP/s.
fn peak_text(p: Precision, v: f64) -> String {
    match p {
        Precision::Int8 | Precision::Int4 => crate::units::human(v, "OP/s"),
        _ => human_flops_per_s(v),
    }
}

/// Every figure of one chip with its source, and the ridge point per precision.
///
/// # Errors
/// A failed write.
pub fn write_show(d: &Device, format: Format, out: &mut dyn Write) -> Result<(), WriteError> {
    match format {
        Format::Json => {
            write_json(&HardwareShowDoc::of(d), out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "precision",
                "peak_flops_per_s",
                "ridge_flop_per_byte",
                "source",
            ])?;
            for (p, c) in &d.peaks {
                w.write_record([
                    p.name().to_string(),
                    c.value.get().to_string(),
                    opt(d.ridge(*p).ok(), |x| x.get().to_string()),
                    c.source.clone(),
                ])?;
            }
            w.flush()?;
        }
        Format::Table => {
            writeln!(out, "{} ({}) — {}", d.name, d.id, d.vendor)?;
            if let Some(why) = d.unusable_reason() {
                writeln!(out, "not usable for analysis: {why}")?;
            }
            let mut t = new_table(&["precision", "dense peak", "ridge (FLOP/B)", "source"]);
            for (p, c) in &d.peaks {
                t.add_row(vec![
                    p.name().to_string(),
                    peak_text(*p, c.value.get()),
                    opt(d.ridge(*p).ok(), |x| format!("{:.1}", x.get())),
                    c.source.clone(),
                ]);
            }
            align_right_from(&mut t, 1);
            writeln!(out, "{t}")?;
            let mut m = new_table(&["memory level", "name", "bandwidth", "capacity", "source"]);
            for lvl in &d.memory {
                let src: Vec<&str> = lvl
                    .bandwidth
                    .iter()
                    .map(|c| c.source.as_str())
                    .chain(lvl.capacity.iter().map(|c| c.source.as_str()))
                    .collect();
                m.add_row(vec![
                    level_name(lvl.kind).to_string(),
                    lvl.name.clone(),
                    opt(lvl.bandwidth.as_ref(), |b| human_bytes_per_s(b.value.get())),
                    opt(lvl.capacity.as_ref(), |c| human_bytes(c.value.get())),
                    src.join("; "),
                ]);
            }
            writeln!(out, "{m}")?;
            if let Some(c) = &d.sm_count {
                writeln!(out, "SMs / compute units: {} ({})", c.value, c.source)?;
            }
            if let Some(c) = &d.shared_memory_per_sm {
                writeln!(
                    out,
                    "shared memory per SM: {} ({})",
                    human_bytes(c.value.get()),
                    c.source
                )?;
            }
            writeln!(
                out,
                "launch overhead: {} ({})",
                human_seconds(d.launch_overhead.value.get()),
                d.launch_overhead.source
            )?;
            for link in d.interconnect.iter().chain(d.host_link.iter()) {
                writeln!(
                    out,
                    "link: {} {}",
                    link.name,
                    opt(link.bandwidth.as_ref(), |b| format!(
                        "{} ({})",
                        human_bytes_per_s(b.value.get()),
                        b.source
                    ))
                )?;
            }
            for n in &d.notes {
                writeln!(out, "note: {n}")?;
            }
        }
    }
    Ok(())
}
