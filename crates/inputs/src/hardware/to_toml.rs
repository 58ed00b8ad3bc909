//! A [`Device`] written back as a chip file ([`device_to_toml`]).

use roofline_core::comm::{Fabric, LinkTier};
use roofline_core::device::{Device, Link, MemoryKind};
use roofline_core::precision::Precision;
use std::fmt::Write as _;

/// A TOML basic string, quoted and escaped.
fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML float that reads back to exactly `x` (shortest round-trip form, `9.895e14`).
fn toml_float(x: f64) -> String {
    if x.is_nan() {
        "nan".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{x:e}")
    }
}

fn cited_float(x: f64, source: &str) -> String {
    format!(
        "{{ value = {}, source = {} }}",
        toml_float(x),
        toml_string(source)
    )
}

fn kind_name(k: MemoryKind) -> &'static str {
    k.name()
}

fn write_link(out: &mut String, table: &str, link: &Link) {
    let _ = writeln!(out, "\n[{table}]");
    let _ = writeln!(out, "name = {}", toml_string(&link.name));
    if let Some(b) = &link.bandwidth {
        let _ = writeln!(
            out,
            "bandwidth_bytes_per_s = {}",
            cited_float(b.value.get(), &b.source)
        );
    }
}

fn write_tier(out: &mut String, table: &str, tier: &LinkTier) {
    let _ = writeln!(out, "\n[{table}]");
    let _ = writeln!(out, "name = {}", toml_string(&tier.name));
    let _ = writeln!(
        out,
        "bandwidth_bytes_per_s = {}",
        cited_float(tier.bandwidth.value.get(), &tier.bandwidth.source)
    );
    let _ = writeln!(
        out,
        "latency_s = {}",
        cited_float(tier.latency.value.get(), &tier.latency.source)
    );
}

/// The keys of a fabric inside table `table` (`platform`, `fabric`), whose header the caller
/// has written, and its tiers as sub-tables. A fabric without a source for
/// `in_network_reduction` and without it set writes no key (the parser's default, `false`);
/// one set without a source (built in code) says so, since the parser wants a source.
fn write_fabric(out: &mut String, table: &str, f: &Fabric) {
    if f.in_network_reduction || f.in_network_reduction_source.is_some() {
        let source = match f.in_network_reduction_source.as_deref() {
            Some(s) if !s.trim().is_empty() => s,
            _ => "no source given",
        };
        let _ = writeln!(
            out,
            "in_network_reduction = {{ value = {}, source = {} }}",
            f.in_network_reduction,
            toml_string(source)
        );
    }
    if let Some(t) = &f.topology {
        let _ = writeln!(out, "topology = {}", toml_string(t));
    }
    for (name, tier) in [
        ("scale_up", &f.scale_up),
        ("scale_out", &f.scale_out),
        ("pcie", &f.pcie),
    ] {
        if let Some(t) = tier {
            write_tier(out, &format!("{table}.{name}"), t);
        }
    }
}

/// The chip as TOML in the schema [`parse_device`](super::parse_device) reads (see the module docs), so that a
/// measured chip can be saved and loaded again: `parse_device(&device_to_toml(&d), _)` gives `d`
/// back for any valid device (peaks in [`Precision::ALL`] order, main memory first). Numbers are
/// written in SI base units in their shortest exact form (`9.895e14`).
pub fn device_to_toml(device: &Device) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# {}. Written by roofline; every number carries its source.",
        device.name.replace(['\n', '\r'], " ")
    );
    let _ = writeln!(out, "id = {}", toml_string(&device.id));
    let _ = writeln!(out, "name = {}", toml_string(&device.name));
    let _ = writeln!(out, "vendor = {}", toml_string(&device.vendor));
    if device.notes.is_empty() {
        out.push_str("notes = []\n");
    } else {
        out.push_str("notes = [\n");
        for n in &device.notes {
            let _ = writeln!(out, "    {},", toml_string(n));
        }
        out.push_str("]\n");
    }

    out.push_str("\n[peak_flops_per_s]\n");
    for p in Precision::ALL {
        if let Some(c) = device.peak_cited(p) {
            let _ = writeln!(
                out,
                "{} = {}",
                p.name(),
                cited_float(c.value.get(), &c.source)
            );
        }
    }

    let main = device.memory.iter().filter(|m| m.kind == MemoryKind::Main);
    let rest = device.memory.iter().filter(|m| m.kind != MemoryKind::Main);
    for m in main.chain(rest) {
        out.push_str("\n[[memory]]\n");
        let _ = writeln!(out, "level = {}", toml_string(kind_name(m.kind)));
        let _ = writeln!(out, "name = {}", toml_string(&m.name));
        if let Some(b) = &m.bandwidth {
            let _ = writeln!(
                out,
                "bandwidth_bytes_per_s = {}",
                cited_float(b.value.get(), &b.source)
            );
        }
        if let Some(c) = &m.capacity {
            let _ = writeln!(
                out,
                "capacity_bytes = {}",
                cited_float(c.value.get(), &c.source)
            );
        }
    }

    out.push_str("\n[compute]\n");
    if let Some(c) = &device.sm_count {
        let _ = writeln!(
            out,
            "sm_count = {{ value = {}, source = {} }}",
            c.value,
            toml_string(&c.source)
        );
    }
    if let Some(c) = &device.shared_memory_per_sm {
        let _ = writeln!(
            out,
            "shared_memory_per_sm_bytes = {}",
            cited_float(c.value.get(), &c.source)
        );
    }
    let _ = writeln!(
        out,
        "launch_overhead_s = {}",
        cited_float(
            device.launch_overhead.value.get(),
            &device.launch_overhead.source
        )
    );
    if device.launch_model != roofline_core::device::LaunchModel::PerKernel {
        let _ = writeln!(out, "launch_model = \"{}\"", device.launch_model.id());
    }

    if let Some(l) = &device.interconnect {
        write_link(&mut out, "interconnect", l);
    }
    if let Some(l) = &device.host_link {
        write_link(&mut out, "host", l);
    }
    if let Some(p) = &device.platform {
        out.push_str("\n[platform]\n");
        let _ = writeln!(out, "name = {}", toml_string(&p.name));
        let _ = writeln!(
            out,
            "gpus_per_node = {{ value = {}, source = {} }}",
            p.gpus_per_node.value,
            toml_string(&p.gpus_per_node.source)
        );
        write_fabric(&mut out, "platform", &p.fabric);
    }
    if let Some(e) = &device.efficiency {
        let v = &e.value;
        out.push_str("\n[efficiency]\n");
        // `{:?}` keeps every digit of an f64 (the chip reads back equal).
        let _ = writeln!(
            out,
            "value = {{ matmul = {:?}, matmul_fp8 = {:?}, attention = {:?}, vector = {:?}, \
             memory = {:?}, network = {:?} }}",
            v.matmul, v.matmul_fp8, v.attention, v.vector, v.memory, v.network
        );
        let _ = writeln!(out, "source = {}", toml_string(&e.source));
    }
    out
}
