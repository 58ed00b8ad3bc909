//! Rendering of `roofline hardware list` and `roofline hardware show`.

use crate::doc::hardware::{
    level_name, HardwareDoc, HardwareListDoc, HardwareShowDoc, SystemDoc, SystemListDoc,
    SystemShowDoc,
};
use crate::doc::{write_json, SchemaVersion};
use crate::units::{human_bytes, human_bytes_per_s, human_flops_per_s, human_seconds};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::comm::{Fabric, LinkTier, Platform, System};
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
                "dense peaks (never 2:4-sparse figures); ridge point = peak / main-memory bandwidth. `roofline hardware show ID --sources` for every figure and its source."
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

/// Every figure of one chip with its source, and the ridge point per precision: as
/// [`write_show_sources`] with the sources in the table (JSON and CSV always carry them).
///
/// # Errors
/// A failed write.
pub fn write_show(d: &Device, format: Format, out: &mut dyn Write) -> Result<(), WriteError> {
    write_show_sources(d, format, true, out)
}

/// Every figure of one chip and the ridge point per precision; with `sources`, each figure's
/// source beside it in the table (`hardware show --sources`); without, the figures alone and a
/// line saying where the sources are. JSON and CSV always carry the sources.
///
/// # Errors
/// A failed write.
pub fn write_show_sources(
    d: &Device,
    format: Format,
    sources: bool,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
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
            let src = |s: &str| {
                if sources {
                    format!(" ({s})")
                } else {
                    String::new()
                }
            };
            let mut header = vec!["precision", "dense peak", "ridge (FLOP/B)"];
            if sources {
                header.push("source");
            }
            let mut t = crate::fitted_table(&header);
            for (p, c) in &d.peaks {
                let mut cells = vec![
                    p.name().to_string(),
                    peak_text(*p, c.value.get()),
                    opt(d.ridge(*p).ok(), |x| format!("{:.1}", x.get())),
                ];
                if sources {
                    cells.push(c.source.clone());
                }
                t.add_row(cells);
            }
            align_right_from(&mut t, 1);
            writeln!(out, "{t}")?;
            let mut header = vec!["memory level", "name", "bandwidth", "capacity"];
            if sources {
                header.push("source");
            }
            let mut m = crate::fitted_table(&header);
            for lvl in &d.memory {
                let level_sources: Vec<&str> = lvl
                    .bandwidth
                    .iter()
                    .map(|c| c.source.as_str())
                    .chain(lvl.capacity.iter().map(|c| c.source.as_str()))
                    .collect();
                let mut cells = vec![
                    level_name(lvl.kind).to_string(),
                    lvl.name.clone(),
                    opt(lvl.bandwidth.as_ref(), |b| human_bytes_per_s(b.value.get())),
                    opt(lvl.capacity.as_ref(), |c| human_bytes(c.value.get())),
                ];
                if sources {
                    cells.push(level_sources.join("; "));
                }
                m.add_row(cells);
            }
            writeln!(out, "{m}")?;
            if let Some(c) = &d.sm_count {
                writeln!(out, "SMs / compute units: {}{}", c.value, src(&c.source))?;
            }
            if let Some(c) = &d.shared_memory_per_sm {
                writeln!(
                    out,
                    "shared memory per SM: {}{}",
                    human_bytes(c.value.get()),
                    src(&c.source)
                )?;
            }
            writeln!(
                out,
                "launch overhead: {}{}",
                human_seconds(d.launch_overhead.value.get()),
                src(&d.launch_overhead.source)
            )?;
            write_efficiency(d, sources, out)?;
            for link in d.interconnect.iter().chain(d.host_link.iter()) {
                writeln!(
                    out,
                    "link: {} {}",
                    link.name,
                    opt(link.bandwidth.as_ref(), |b| format!(
                        "{}{}",
                        human_bytes_per_s(b.value.get()),
                        src(&b.source)
                    ))
                )?;
            }
            if let Some(p) = &d.platform {
                write_platform(p, sources, out)?;
            }
            if sources {
                for n in &d.notes {
                    writeln!(out, "note: {n}")?;
                }
            } else {
                writeln!(
                    out,
                    "every figure's source{}: `roofline hardware show {} --sources`",
                    if d.notes.is_empty() {
                        ""
                    } else {
                        " and the chip's notes"
                    },
                    d.id
                )?;
            }
        }
    }
    Ok(())
}

/// A share as `hardware show` prints it: four decimals, trailing zeros dropped (0.7372, 0.8, 1).
fn share_text(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The chip's estimate shares ([`Device::efficiency`]) on one line, and with `sources` the
/// line of their source.
fn write_efficiency(d: &Device, sources: bool, out: &mut dyn Write) -> Result<(), WriteError> {
    let e = d.efficiency();
    let shares: Vec<String> = [
        ("matmul", e.matmul),
        ("fp8 matmul", e.matmul_fp8),
        ("attention", e.attention),
        ("vector", e.vector),
        ("memory", e.memory),
        ("network", e.network),
    ]
    .iter()
    .map(|(name, x)| format!("{name} {}", share_text(*x)))
    .collect();
    writeln!(out, "estimate shares of the roofs: {}", shares.join(", "))?;
    if sources {
        writeln!(out, "estimate shares source: {}", d.efficiency_source())?;
    }
    Ok(())
}

/// The tiers of a fabric that are given, with the name `hardware show` prints for each.
fn tiers(f: &Fabric) -> Vec<(&'static str, &LinkTier)> {
    [
        ("scale-up", &f.scale_up),
        ("scale-out", &f.scale_out),
        ("PCIe", &f.pcie),
    ]
    .into_iter()
    .filter_map(|(n, t)| t.as_ref().map(|t| (n, t)))
    .collect()
}

/// A fabric as a table (tier, link, bandwidth per GPU per direction, latency per step), then
/// the in-network reduction, the topology note and every figure's source.
fn write_fabric(f: &Fabric, sources: bool, out: &mut dyn Write) -> Result<(), WriteError> {
    let mut t = crate::fitted_table(&[
        "tier",
        "link",
        "bandwidth per GPU per direction",
        "latency per step",
    ]);
    for (tier, l) in tiers(f) {
        t.add_row(vec![
            tier.to_string(),
            l.name.clone(),
            human_bytes_per_s(l.bandwidth.value.get()),
            human_seconds(l.latency.value.get()),
        ]);
    }
    align_right_from(&mut t, 2);
    writeln!(out, "{t}")?;
    if f.scale_up.is_none() {
        writeln!(out, "no scale-up fabric: the GPUs of a node talk over PCIe")?;
    }
    writeln!(
        out,
        "in-network reduction (NVLink SHARP): {}{}",
        if f.in_network_reduction { "yes" } else { "no" },
        f.in_network_reduction_source
            .as_ref()
            .filter(|_| sources)
            .map(|s| format!(" ({s})"))
            .unwrap_or_default()
    )?;
    if let Some(topology) = &f.topology {
        writeln!(out, "topology: {topology}")?;
    }
    if sources {
        for (tier, l) in tiers(f) {
            writeln!(out, "{tier} bandwidth: {}", l.bandwidth.source)?;
            writeln!(out, "{tier} latency: {}", l.latency.source)?;
        }
    }
    Ok(())
}

/// The node a chip is sold in: its name, GPUs per node and links.
fn write_platform(p: &Platform, sources: bool, out: &mut dyn Write) -> Result<(), WriteError> {
    writeln!(
        out,
        "\nnode: {} — {} GPUs per node{}",
        p.name,
        p.gpus_per_node.value,
        if sources {
            format!(" ({})", p.gpus_per_node.source)
        } else {
            String::new()
        }
    )?;
    write_fabric(&p.fabric, sources, out)
}

/// One system: its chip, nodes × GPUs per node, and its links with their sources.
///
/// # Errors
/// A failed write.
pub fn write_system_show(
    s: &System,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    write_system_show_sources(s, format, true, out)
}

/// One system, as [`write_system_show`]; without `sources`, the table gives the figures alone
/// and a line says where the sources are.
///
/// # Errors
/// A failed write.
pub fn write_system_show_sources(
    s: &System,
    format: Format,
    sources: bool,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Json => write_json(&SystemShowDoc::of(s), out)?,
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "tier",
                "name",
                "bandwidth_bytes_per_s",
                "latency_s",
                "bandwidth_source",
                "latency_source",
            ])?;
            for (tier, l) in tiers(&s.fabric) {
                w.write_record([
                    tier.to_string(),
                    l.name.clone(),
                    l.bandwidth.value.get().to_string(),
                    l.latency.value.get().to_string(),
                    l.bandwidth.source.clone(),
                    l.latency.source.clone(),
                ])?;
            }
            w.flush()?;
        }
        Format::Table => {
            writeln!(out, "{} ({})", s.name, s.id)?;
            writeln!(out, "chip: {} ({})", s.chip.name, s.chip.id)?;
            writeln!(
                out,
                "{} node{} × {} GPUs per node = {} devices",
                s.nodes,
                if s.nodes == 1 { "" } else { "s" },
                s.gpus_per_node,
                s.devices()
            )?;
            if sources && !s.gpus_per_node_source.is_empty() {
                writeln!(out, "GPUs per node: {}", s.gpus_per_node_source)?;
            }
            if sources && !s.nodes_source.is_empty() {
                writeln!(out, "nodes: {}", s.nodes_source)?;
            }
            writeln!(out)?;
            write_fabric(&s.fabric, sources, out)?;
            if sources {
                for n in &s.notes {
                    writeln!(out, "note: {n}")?;
                }
            } else {
                writeln!(
                    out,
                    "every figure's source: `roofline hardware show {} --sources`",
                    s.id
                )?;
            }
            writeln!(
                out,
                "`roofline hardware show {}` for every figure of the chip.",
                s.chip.id
            )?;
        }
    }
    Ok(())
}

/// One line per system: chip, GPUs per node, nodes, devices, scale-up and scale-out bandwidth
/// per GPU per direction.
///
/// # Errors
/// A failed write.
pub fn write_system_list(
    systems: &[System],
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    let bw = |t: &Option<LinkTier>| t.as_ref().map(|l| l.bandwidth.value.get());
    match format {
        Format::Json => {
            let doc = SystemListDoc {
                schema_version: crate::doc::SchemaVersion,
                systems: systems.iter().map(SystemDoc::of).collect(),
            };
            write_json(&doc, out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "id",
                "name",
                "chip",
                "gpus_per_node",
                "nodes",
                "devices",
                "scale_up_bytes_per_s",
                "scale_out_bytes_per_s",
                "in_network_reduction",
            ])?;
            for s in systems {
                w.write_record([
                    s.id.clone(),
                    s.name.clone(),
                    s.chip.id.clone(),
                    s.gpus_per_node.to_string(),
                    s.nodes.to_string(),
                    s.devices().to_string(),
                    opt(bw(&s.fabric.scale_up), |x| x.to_string()),
                    opt(bw(&s.fabric.scale_out), |x| x.to_string()),
                    s.fabric.in_network_reduction.to_string(),
                ])?;
            }
            w.flush()?;
        }
        Format::Table => {
            let mut t = new_table(&[
                "id",
                "chip",
                "GPUs/node",
                "nodes",
                "devices",
                "scale-up /dir",
                "scale-out /dir",
            ]);
            for s in systems {
                t.add_row(vec![
                    s.id.clone(),
                    s.chip.id.clone(),
                    s.gpus_per_node.to_string(),
                    s.nodes.to_string(),
                    s.devices().to_string(),
                    opt(bw(&s.fabric.scale_up), human_bytes_per_s),
                    opt(bw(&s.fabric.scale_out), human_bytes_per_s),
                ]);
            }
            align_right_from(&mut t, 2);
            writeln!(out, "{t}")?;
            writeln!(
                out,
                "bandwidths per GPU, per direction (NVIDIA's bidirectional \"900 GB/s\" NVLink is 450 GB/s each way). `roofline hardware show ID` for the links, their latencies and sources."
            )?;
        }
    }
    Ok(())
}
