//! Chip files: the TOML schema, the embedded catalog (`catalog/hardware/*.toml`), lookup by id
//! or path, and writing a [`Device`] back to TOML.
//!
//! # Schema
//!
//! Every number is a table `{ value = ..., source = "..." }` in SI base units: FLOP/s (OP/s for
//! integer formats), B/s, bytes, seconds. Decimal prefixes: 1 TFLOP/s = `1e12`, 1 GB/s = `1e9`.
//!
//! ```toml
//! id = "h100-sxm"                       # required, non-empty
//! name = "NVIDIA H100 SXM5 80GB"        # required
//! vendor = "NVIDIA"                     # optional
//! notes = ["..."]                       # optional
//!
//! [peak_flops_per_s]                    # DENSE peaks; keys fp64 fp32 tf32 bf16 fp16 fp8 int8 int4
//! bf16 = { value = 989.5e12, source = "datasheet 1,979 sparse, halved" }
//!
//! [[memory]]                            # exactly one level "main", with a bandwidth
//! level = "main"                        # main, l2, l3, l1 or sram
//! name = "HBM3"
//! bandwidth_bytes_per_s = { value = 3.35e12, source = "..." }   # optional except for main
//! capacity_bytes = { value = 80e9, source = "..." }             # optional
//!
//! [compute]
//! sm_count = { value = 132, source = "..." }                    # optional, integer
//! shared_memory_per_sm_bytes = { value = 233472, source = "..." } # optional
//! launch_overhead_s = { value = 5e-6, source = "..." }          # required
//!
//! [interconnect]                        # optional; also [host]
//! name = "NVLink 4 (18 links)"
//! bandwidth_bytes_per_s = { value = 900e9, source = "..." }     # optional
//! ```

use crate::embedded::HARDWARE_FILES;
use crate::error::InputError;
use roofline_core::cited::Cited;
use roofline_core::device::{Device, Link, MemoryKind, MemoryLevel};
use roofline_core::precision::Precision;
use roofline_core::units::{Bytes, BytesPerSec, FlopPerSec, Seconds};
use serde::Deserialize;
use std::fmt::Write as _;

/// Largest plausible dense peak, FLOP/s (1 EFLOP/s: far above any single chip).
const MAX_PEAK: f64 = 1e18;
/// Largest plausible bandwidth, B/s (1 PB/s).
const MAX_BANDWIDTH: f64 = 1e15;
/// Largest plausible kernel launch overhead, seconds.
const MAX_LAUNCH: f64 = 1.0;

/// Extra names accepted by [`find_device`] (lowercase, `-` separated) and the id they mean.
const ALIASES: &[(&str, &str)] = &[
    ("h100", "h100-sxm"),
    ("h100-sxm5", "h100-sxm"),
    ("h100-sxm-80gb", "h100-sxm"),
    ("h100-pcie-80gb", "h100-pcie"),
    ("h100-nvl-94gb", "h100-nvl"),
    ("h200-sxm", "h200"),
    ("a100", "a100-sxm-80gb"),
    ("a100-sxm", "a100-sxm-80gb"),
    ("a100-80gb", "a100-sxm-80gb"),
    ("a100-40gb", "a100-sxm-40gb"),
    ("a100-pcie", "a100-pcie-80gb"),
    ("rtx-a6000", "a6000"),
    ("4090", "rtx-4090"),
    ("rtx4090", "rtx-4090"),
    ("3090", "rtx-3090"),
    ("rtx3090", "rtx-3090"),
    ("v100-sxm2", "v100"),
    ("mi300", "mi300x"),
    ("mi325", "mi325x"),
    ("tpuv4", "tpu-v4"),
    ("tpuv5e", "tpu-v5e"),
    ("tpuv5p", "tpu-v5p"),
    ("gaudi-2", "gaudi2"),
    ("gaudi-3", "gaudi3"),
];

const SCHEMA_HINT: &str =
    "see an embedded catalog file (crates/inputs/catalog/hardware/h100-sxm.toml) \
     for the schema: every number is `{ value = ..., source = \"...\" }` in SI base units \
     (FLOP/s, B/s, bytes, seconds)";

// ---- the file schema (serde) ----------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCited<T> {
    value: T,
    source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceFile {
    id: String,
    name: String,
    #[serde(default)]
    vendor: String,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    peak_flops_per_s: PeaksFile,
    memory: Vec<MemoryFile>,
    compute: ComputeFile,
    interconnect: Option<LinkFile>,
    host: Option<LinkFile>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PeaksFile {
    fp64: Option<FileCited<f64>>,
    fp32: Option<FileCited<f64>>,
    tf32: Option<FileCited<f64>>,
    bf16: Option<FileCited<f64>>,
    fp16: Option<FileCited<f64>>,
    fp8: Option<FileCited<f64>>,
    int8: Option<FileCited<f64>>,
    int4: Option<FileCited<f64>>,
}

impl PeaksFile {
    fn take(&mut self, p: Precision) -> Option<FileCited<f64>> {
        match p {
            Precision::Fp64 => self.fp64.take(),
            Precision::Fp32 => self.fp32.take(),
            Precision::Tf32 => self.tf32.take(),
            Precision::Bf16 => self.bf16.take(),
            Precision::Fp16 => self.fp16.take(),
            Precision::Fp8 => self.fp8.take(),
            Precision::Int8 => self.int8.take(),
            Precision::Int4 => self.int4.take(),
            // A precision this file format has no field for.
            _ => None,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoryFile {
    level: MemoryKind,
    name: String,
    bandwidth_bytes_per_s: Option<FileCited<f64>>,
    capacity_bytes: Option<FileCited<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ComputeFile {
    sm_count: Option<FileCited<u32>>,
    shared_memory_per_sm_bytes: Option<FileCited<f64>>,
    launch_overhead_s: FileCited<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkFile {
    name: String,
    bandwidth_bytes_per_s: Option<FileCited<f64>>,
}

// ---- validation ------------------------------------------------------------------------------

/// Checks one number of the file: finite, > 0 and at most `max` (in `unit`).
fn checked(
    origin: &str,
    field: &str,
    c: FileCited<f64>,
    max: Option<f64>,
    unit: &str,
) -> Result<Cited<f64>, InputError> {
    if !c.value.is_finite() || c.value <= 0.0 {
        return Err(InputError::new(format!(
            "{origin}: field `{field}` must be a finite number > 0, got {}",
            c.value
        ))
        .with_hint(format!(
            "give the value in {unit} (SI base units), or leave the entry out if the chip has no such figure"
        )));
    }
    if let Some(max) = max {
        if c.value > max {
            return Err(InputError::new(format!(
                "{origin}: field `{field}` = {:e} {unit} is not plausible (more than {max:e} {unit})",
                c.value
            ))
            .with_hint(
                "values are SI base units with decimal prefixes: 1 TFLOP/s = 1e12, 1 TB/s = 1e12, \
                 1 µs = 1e-6; check the exponent",
            ));
        }
    }
    check_source(origin, field, &c.source)?;
    Ok(Cited::new(c.value, c.source))
}

fn check_source(origin: &str, field: &str, source: &str) -> Result<(), InputError> {
    if source.trim().is_empty() {
        return Err(
            InputError::new(format!("{origin}: field `{field}.source` is empty")).with_hint(
                "every number carries its source: name the datasheet, paper or measurement",
            ),
        );
    }
    Ok(())
}

fn checked_link(
    origin: &str,
    table: &str,
    link: Option<LinkFile>,
) -> Result<Option<Link>, InputError> {
    let Some(l) = link else {
        return Ok(None);
    };
    let bandwidth = l
        .bandwidth_bytes_per_s
        .map(|c| {
            checked(
                origin,
                &format!("{table}.bandwidth_bytes_per_s"),
                c,
                Some(MAX_BANDWIDTH),
                "B/s",
            )
        })
        .transpose()?
        .map(|c| Cited::new(BytesPerSec(c.value), c.source));
    Ok(Some(Link::new(l.name, bandwidth)))
}

/// Parses and validates one chip file.
///
/// `text` is TOML in the schema of this module (see the module docs); `origin` names the file in
/// error messages (a path, or `catalog/hardware/<id>.toml` for the embedded catalog). All numbers
/// are read in SI base units: peaks in FLOP/s (OP/s for `int8`/`int4`), bandwidths in B/s,
/// capacities and shared memory in bytes, the launch overhead in seconds. Peaks come out in
/// [`Precision::ALL`] order and the main-memory level first.
///
/// # Errors
///
/// An [`InputError`] naming `origin` and the field, with a hint, when:
/// - the text is not TOML, a field is missing or of the wrong type, or a field is unknown (the
///   TOML parser's message, with line and column, is kept);
/// - `id` is empty;
/// - a value is not finite or not > 0, or a source string is empty (e.g. `peak_flops_per_s.bf16`);
/// - a value is absurd: a peak above 1e18 FLOP/s, a bandwidth above 1e15 B/s, a launch overhead
///   above 1 s;
/// - there is no `[[memory]]` level `"main"` with a bandwidth, or there is more than one.
pub fn parse_device(text: &str, origin: &str) -> Result<Device, InputError> {
    let mut file: DeviceFile = toml::from_str(text).map_err(|e| {
        InputError::new(format!("{origin}: {}", e.to_string().trim_end())).with_hint(SCHEMA_HINT)
    })?;

    if file.id.trim().is_empty() {
        return Err(InputError::new(format!("{origin}: field `id` is empty"))
            .with_hint("give the chip a short lowercase id, e.g. `id = \"my-gpu\"`"));
    }

    let mut peaks = Vec::new();
    for p in Precision::ALL {
        if let Some(c) = file.peak_flops_per_s.take(p) {
            let field = format!("peak_flops_per_s.{}", p.name());
            let unit = if matches!(p, Precision::Int8 | Precision::Int4) {
                "OP/s"
            } else {
                "FLOP/s"
            };
            let c = checked(origin, &field, c, Some(MAX_PEAK), unit)?;
            peaks.push((p, Cited::new(FlopPerSec(c.value), c.source)));
        }
    }

    let mut main = Vec::new();
    let mut rest = Vec::new();
    let mut main_count = 0usize;
    for (i, m) in file.memory.into_iter().enumerate() {
        let bandwidth = m
            .bandwidth_bytes_per_s
            .map(|c| {
                checked(
                    origin,
                    &format!("memory[{i}].bandwidth_bytes_per_s"),
                    c,
                    Some(MAX_BANDWIDTH),
                    "B/s",
                )
            })
            .transpose()?
            .map(|c| Cited::new(BytesPerSec(c.value), c.source));
        let capacity = m
            .capacity_bytes
            .map(|c| {
                checked(
                    origin,
                    &format!("memory[{i}].capacity_bytes"),
                    c,
                    None,
                    "bytes",
                )
            })
            .transpose()?
            .map(|c| Cited::new(Bytes(c.value), c.source));
        let mut level = MemoryLevel::new(m.level, m.name);
        level.bandwidth = bandwidth;
        level.capacity = capacity;
        if level.kind == MemoryKind::Main {
            main_count += 1;
            if level.bandwidth.is_none() {
                return Err(InputError::new(format!(
                    "{origin}: field `memory[{i}].bandwidth_bytes_per_s` is missing: the main memory \
                     needs a bandwidth (the roofline's memory roof)"
                ))
                .with_hint("add `bandwidth_bytes_per_s = { value = ..., source = \"...\" }` in B/s"));
            }
            main.push(level);
        } else {
            rest.push(level);
        }
    }
    if main_count == 0 {
        return Err(InputError::new(format!(
            "{origin}: field `memory`: no [[memory]] entry with level = \"main\""
        ))
        .with_hint(
            "add a [[memory]] entry with level = \"main\" (HBM, GDDR or DRAM) and its bandwidth_bytes_per_s",
        ));
    }
    if main_count > 1 {
        return Err(InputError::new(format!(
            "{origin}: field `memory`: {main_count} [[memory]] entries have level = \"main\"; only one may"
        ))
        .with_hint("describe caches and on-chip memory with level l2, l3, l1 or sram"));
    }
    main.append(&mut rest);

    let sm_count = match file.compute.sm_count {
        Some(c) if c.value == 0 => {
            return Err(InputError::new(format!(
                "{origin}: field `compute.sm_count` must be > 0, got 0"
            ))
            .with_hint("leave sm_count out if the number of SMs/CUs is not known"));
        }
        Some(c) => {
            check_source(origin, "compute.sm_count", &c.source)?;
            Some(Cited::new(c.value, c.source))
        }
        None => None,
    };
    let shared_memory_per_sm = file
        .compute
        .shared_memory_per_sm_bytes
        .map(|c| {
            checked(
                origin,
                "compute.shared_memory_per_sm_bytes",
                c,
                None,
                "bytes",
            )
        })
        .transpose()?
        .map(|c| Cited::new(Bytes(c.value), c.source));
    let launch = checked(
        origin,
        "compute.launch_overhead_s",
        file.compute.launch_overhead_s,
        Some(MAX_LAUNCH),
        "s",
    )?;

    let interconnect = checked_link(origin, "interconnect", file.interconnect)?;
    let host_link = checked_link(origin, "host", file.host)?;
    let mut device = Device::builder(file.id, file.name)
        .vendor(file.vendor)
        .launch_overhead(Seconds(launch.value), launch.source);
    for (p, c) in peaks {
        device = device.peak(p, c.value, c.source);
    }
    for level in main {
        device = device.memory(level);
    }
    if let Some(c) = sm_count {
        device = device.sm_count(c.value, c.source);
    }
    if let Some(c) = shared_memory_per_sm {
        device = device.shared_memory_per_sm(c.value, c.source);
    }
    if let Some(l) = interconnect {
        device = device.interconnect(l);
    }
    if let Some(l) = host_link {
        device = device.host_link(l);
    }
    for note in file.notes {
        device = device.note(note);
    }
    Ok(device.build())
}

// ---- the catalog -----------------------------------------------------------------------------

fn parse_embedded(stem: &str, text: &str) -> Result<Device, InputError> {
    let origin = format!("catalog/hardware/{stem}.toml");
    let device = parse_device(text, &origin)?;
    if device.id != stem {
        return Err(InputError::new(format!(
            "{origin}: field `id` = `{}` differs from the file name `{stem}`",
            device.id
        ))
        .with_hint("a catalog file is named after its id: rename the file or change the id"));
    }
    Ok(device)
}

/// Every chip of the embedded catalog (`catalog/hardware/*.toml`), sorted by id.
///
/// # Errors
///
/// An [`InputError`] naming the catalog file if one of them does not parse or validate (see
/// [`parse_device`]), or if a file's `id` differs from its file name. The unit tests check that
/// this never happens for the shipped catalog.
pub fn catalog() -> Result<Vec<Device>, InputError> {
    let mut out = HARDWARE_FILES
        .iter()
        .map(|(stem, text)| parse_embedded(stem, text))
        .collect::<Result<Vec<_>, _>>()?;
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// The ids of the embedded catalog (the file stems), sorted.
pub fn catalog_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = HARDWARE_FILES.iter().map(|(stem, _)| *stem).collect();
    ids.sort_unstable();
    ids
}

fn looks_like_path(s: &str) -> bool {
    s.to_ascii_lowercase().ends_with(".toml")
        || s.contains('/')
        || s.contains('\\')
        || s.contains(std::path::MAIN_SEPARATOR)
}

/// Lowercase, with `_` and spaces as `-`.
fn normalize(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '_' | ' ' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The `n` catalog ids closest to `name` (Jaro-Winkler similarity), best first.
fn closest_ids(name: &str, n: usize) -> Vec<&'static str> {
    let mut scored: Vec<(f64, &'static str)> = catalog_ids()
        .into_iter()
        .map(|id| (strsim::jaro_winkler(name, id), id))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(n).map(|(_, id)| id).collect()
}

/// A chip by catalog id or from a file.
///
/// - If `name_or_path` ends in `.toml` or contains a path separator, the file is read and parsed
///   with [`parse_device`] (its path is the origin in error messages).
/// - Otherwise it is looked up in the embedded catalog by id, case-insensitively (`_` and spaces
///   read as `-`), also accepting a few aliases: `h100` → `h100-sxm`, `a100` → `a100-sxm-80gb`,
///   `rtx-a6000` → `a6000`, `mi300` → `mi300x`, `4090` → `rtx-4090`, ….
///
/// # Errors
///
/// An [`InputError`] when the file cannot be read (naming the path) or does not parse (see
/// [`parse_device`]), or when no catalog chip has that id: "unknown chip `X`", with a hint
/// listing the three closest ids and `roofline hardware list`.
pub fn find_device(name_or_path: &str) -> Result<Device, InputError> {
    let given = name_or_path.trim();
    if looks_like_path(given) {
        let text = std::fs::read_to_string(given).map_err(|e| {
            InputError::new(format!("cannot read chip file `{given}`: {e}")).with_hint(
                "give the path of a TOML chip file, or a catalog id (`roofline hardware list`)",
            )
        })?;
        return parse_device(&text, given);
    }
    let key = normalize(given);
    let id = ALIASES
        .iter()
        .find(|(alias, _)| *alias == key)
        .map_or(key.as_str(), |(_, id)| *id);
    if let Some((stem, text)) = HARDWARE_FILES.iter().find(|(stem, _)| *stem == id) {
        return parse_embedded(stem, text);
    }
    let close: Vec<String> = closest_ids(&key, 3)
        .into_iter()
        .map(|id| format!("`{id}`"))
        .collect();
    Err(
        InputError::new(format!("unknown chip `{given}`")).with_hint(format!(
            "closest catalog ids: {}; `roofline hardware list` shows all {} chips; \
             a path to a .toml chip file also works",
            close.join(", "),
            HARDWARE_FILES.len()
        )),
    )
}

// ---- writing back ----------------------------------------------------------------------------

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

/// The chip as TOML in the schema [`parse_device`] reads (see the module docs), so that a
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

    if let Some(l) = &device.interconnect {
        write_link(&mut out, "interconnect", l);
    }
    if let Some(l) = &device.host_link {
        write_link(&mut out, "host", l);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chip(id: &str) -> Result<Device, Box<dyn std::error::Error>> {
        Ok(find_device(id)?)
    }

    fn bf16(d: &Device) -> Result<f64, Box<dyn std::error::Error>> {
        Ok(d.peak(Precision::Bf16)?.get())
    }

    /// A minimal valid file; tests break one field at a time.
    const MINIMAL: &str = r#"
id = "toy"
name = "Toy chip"
[peak_flops_per_s]
bf16 = { value = 100e12, source = "test" }
[[memory]]
level = "main"
name = "HBM"
bandwidth_bytes_per_s = { value = 1e12, source = "test" }
[compute]
launch_overhead_s = { value = 5e-6, source = "test" }
"#;

    fn err(text: &str) -> InputError {
        parse_device(text, "toy.toml").unwrap_err()
    }

    #[test]
    fn every_embedded_file_parses_and_is_named_after_its_id(
    ) -> Result<(), Box<dyn std::error::Error>> {
        assert_eq!(HARDWARE_FILES.len(), 29);
        for (stem, text) in HARDWARE_FILES {
            let d = parse_device(text, stem).unwrap_or_else(|e| panic!("{stem}: {e} {:?}", e.hint));
            assert_eq!(d.id, *stem);
        }
        let all = catalog()?;
        assert_eq!(all.len(), 29);
        let ids: Vec<&str> = all.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, catalog_ids());
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        assert_eq!(ids, sorted);
        // Every chip has main-memory bandwidth and the main level first.
        for d in &all {
            assert!(d.bandwidth().is_ok(), "{}", d.id);
            assert_eq!(d.memory[0].kind, MemoryKind::Main, "{}", d.id);
        }
        Ok(())
    }

    #[test]
    fn h100_sxm_matches_the_datasheet() -> Result<(), Box<dyn std::error::Error>> {
        // H100 datasheet: BF16 1,979 TFLOP/s with 2:4 sparsity -> 989.5 dense; HBM3 3.35 TB/s.
        let d = chip("h100-sxm")?;
        assert_eq!(bf16(&d)?, 989.5e12);
        assert_eq!(d.bandwidth()?.get(), 3.35e12);
        // Ridge: 989.5 / 3.35 = 295.37 FLOP/byte.
        let ridge = d.ridge(Precision::Bf16)?.get();
        assert!((ridge - 295.37).abs() < 0.01, "{ridge}");
        // FP64 Tensor Core 67, not the 34 vector figure; FP32 vector 67; FP8 3,958/2.
        assert_eq!(d.peak(Precision::Fp64)?.get(), 67e12);
        assert_eq!(d.peak(Precision::Fp32)?.get(), 67e12);
        assert_eq!(d.peak(Precision::Fp8)?.get(), 1979e12);
        assert!(d.peak(Precision::Int4).is_err());
        // 80 GB = 80e9 bytes; 50 MB L2 read as MiB = 52,428,800; 228 KiB shared = 233,472; 132 SMs.
        assert_eq!(
            d.capacity().ok_or("expected a value, got None")?.get(),
            80e9
        );
        let l2 = d
            .memory
            .iter()
            .find(|m| m.kind == MemoryKind::L2)
            .ok_or("no L2")?;
        assert_eq!(
            l2.capacity
                .as_ref()
                .ok_or("expected a value, got None")?
                .value
                .get(),
            52_428_800.0
        );
        assert_eq!(
            d.shared_memory_per_sm
                .as_ref()
                .ok_or("expected a value, got None")?
                .value
                .get(),
            233_472.0
        );
        assert_eq!(
            d.sm_count
                .as_ref()
                .ok_or("expected a value, got None")?
                .value,
            132
        );
        assert_eq!(d.launch_overhead.value.get(), 5e-6);
        // NVLink 4: 900 GB/s bidirectional; PCIe Gen5 x16: 128 GB/s.
        let nvlink = d
            .interconnect
            .as_ref()
            .ok_or("expected a value, got None")?
            .bandwidth
            .as_ref()
            .ok_or("expected a value, got None")?;
        assert_eq!(nvlink.value.get(), 900e9);
        let pcie = d
            .host_link
            .as_ref()
            .ok_or("expected a value, got None")?
            .bandwidth
            .as_ref()
            .ok_or("expected a value, got None")?;
        assert_eq!(pcie.value.get(), 128e9);
        // The source says where the number comes from and that it was halved.
        let src = &d
            .peak_cited(Precision::Bf16)
            .ok_or("expected a value, got None")?
            .source;
        assert!(src.contains("H100") && src.contains("halved"), "{src}");
        Ok(())
    }

    #[test]
    fn a6000_matches_the_datasheet() -> Result<(), Box<dyn std::error::Error>> {
        // RTX A6000 datasheet: 'Tensor Performance 309.7 TFLOPS' (sparse FP16) -> 154.8 dense;
        // 768 GB/s GDDR6. Ridge 154.8 / 0.768 = 201.5625 FLOP/byte.
        let d = chip("a6000")?;
        assert_eq!(bf16(&d)?, 154.8e12);
        assert_eq!(d.bandwidth()?.get(), 768e9);
        let ridge = d.ridge(Precision::Bf16)?.get();
        assert!((ridge - 201.5625).abs() < 1e-6, "{ridge}");
        // Derived figures are flagged in their source.
        let tf32 = &d
            .peak_cited(Precision::Tf32)
            .ok_or("expected a value, got None")?
            .source;
        assert!(tf32.contains("FLAG"), "{tf32}");
        Ok(())
    }

    #[test]
    fn a100_sxm_80gb_matches_the_datasheet() -> Result<(), Box<dyn std::error::Error>> {
        // A100 datasheet: BF16 312 | 624* (dense | sparse); 80GB SXM 2,039 GB/s.
        let d = chip("a100-sxm-80gb")?;
        assert_eq!(bf16(&d)?, 312e12);
        assert_eq!(d.bandwidth()?.get(), 2.039e12);
        // 312 / 2.039 = 153.02 FLOP/byte.
        let ridge = d.ridge(Precision::Bf16)?.get();
        assert!((ridge - 153.0).abs() < 0.05, "{ridge}");
        assert_eq!(d.peak(Precision::Fp64)?.get(), 19.5e12);
        assert!(d.peak(Precision::Fp8).is_err());
        Ok(())
    }

    #[test]
    fn other_hand_checked_values() -> Result<(), Box<dyn std::error::Error>> {
        // TPU v4: 32 GiB (binary, the doc says GiB) = 34,359,738,368 bytes; 275 TFLOP/s bf16.
        let v4 = chip("tpu-v4")?;
        assert_eq!(
            v4.capacity().ok_or("expected a value, got None")?.get(),
            34_359_738_368.0
        );
        assert_eq!(bf16(&v4)?, 275e12);
        // MI300X: 1,307.4 dense (2,614.9 is the sparse one); 5.3 TB/s; FP64 matrix 163.4.
        let mi = chip("mi300x")?;
        assert_eq!(bf16(&mi)?, 1307.4e12);
        assert_eq!(mi.bandwidth()?.get(), 5.3e12);
        assert_eq!(mi.peak(Precision::Fp64)?.get(), 163.4e12);
        // Gaudi 2: 48 MB SRAM read as MiB, level sram; RoCE 300 GB/s per direction doubled.
        let g2 = chip("gaudi2")?;
        let sram = g2
            .memory
            .iter()
            .find(|m| m.kind == MemoryKind::Sram)
            .ok_or("expected a value, got None")?;
        assert_eq!(
            sram.capacity
                .as_ref()
                .ok_or("expected a value, got None")?
                .value
                .get(),
            48.0 * 1024.0 * 1024.0
        );
        let roce = g2
            .interconnect
            .as_ref()
            .ok_or("expected a value, got None")?
            .bandwidth
            .as_ref()
            .ok_or("expected a value, got None")?;
        assert_eq!(roce.value.get(), 600e9);
        // V100: no FP64 tensor cores, so fp64 is the 7.8 vector figure; no INT8 peak.
        let v100 = chip("v100")?;
        assert_eq!(v100.peak(Precision::Fp64)?.get(), 7.8e12);
        assert!(v100.peak(Precision::Int8).is_err());
        // M3 Max: no published GPU peak at all, still a valid chip (bandwidth only).
        let m3 = chip("m3-max")?;
        assert!(m3.peaks.is_empty());
        assert_eq!(m3.bandwidth()?.get(), 400e9);
        Ok(())
    }

    #[test]
    fn no_bf16_peak_is_a_sparse_figure() -> Result<(), Box<dyn std::error::Error>> {
        // (id, the 2:4-sparse BF16/FP16 figure the datasheet prints, TFLOP/s).
        let sparse = [
            ("h100-sxm", 1979.0),
            ("h100-pcie", 1513.0),
            ("h100-nvl", 1671.0),
            ("h200", 1979.0),
            ("b200", 4500.0),
            ("gb200", 5000.0),
            ("a100-sxm-40gb", 624.0),
            ("a100-sxm-80gb", 624.0),
            ("a100-pcie-80gb", 624.0),
            ("a100-pcie-40gb", 624.0),
            ("a6000", 309.7),
            ("l40s", 733.0),
            ("l4", 242.0),
            ("a10", 250.0),
            ("mi300x", 2614.9),
            ("mi325x", 2614.9),
        ];
        assert_ne!(bf16(&chip("h100-sxm")?)?, 1979e12);
        for (id, s) in sparse {
            let v = bf16(&chip(id)?)? / 1e12;
            assert!(v != s, "{id}: bf16 is the sparse figure {s}");
            // Dense is half the sparse figure (the L40S sheet prints 362.05 | 733*).
            assert!(
                (v / (s / 2.0) - 1.0).abs() < 0.02,
                "{id}: {v} vs sparse {s}"
            );
        }
        // And across the whole catalog, bf16 never exceeds fp16 or fp8 (fp8 is at least the
        // bf16 rate where both exist), which a sparse bf16 next to dense fp8 would break.
        for d in catalog()? {
            if let (Ok(b), Ok(f8)) = (d.peak(Precision::Bf16), d.peak(Precision::Fp8)) {
                assert!(b.get() <= f8.get(), "{}", d.id);
            }
        }
        Ok(())
    }

    #[test]
    fn round_trip_every_catalog_chip() -> Result<(), Box<dyn std::error::Error>> {
        for d in catalog()? {
            let text = device_to_toml(&d);
            let back = parse_device(&text, "round-trip.toml")
                .unwrap_or_else(|e| panic!("{}: {e}\n{text}", d.id));
            assert_eq!(back, d, "{}", d.id);
        }
        Ok(())
    }

    #[test]
    fn minimal_file_parses() -> Result<(), Box<dyn std::error::Error>> {
        let d = parse_device(MINIMAL, "toy.toml")?;
        assert_eq!(d.id, "toy");
        assert_eq!(d.vendor, "");
        assert!(d.sm_count.is_none() && d.interconnect.is_none());
        assert_eq!(bf16(&d)?, 100e12);
        Ok(())
    }

    #[test]
    fn malformed_toml_names_the_file_and_line() {
        let e = err("id = \"toy\"\nname = \n");
        assert!(e.message.starts_with("toy.toml: "), "{}", e.message);
        assert!(e.message.contains("line 2"), "{}", e.message);
        assert!(e.hint.is_some());
    }

    #[test]
    fn unknown_field_is_named() {
        let e = err(&MINIMAL.replace("[compute]", "[compute]\nlaunch_overhead_us = 5"));
        assert!(e.message.contains("toy.toml"), "{}", e.message);
        assert!(e.message.contains("launch_overhead_us"), "{}", e.message);
        let e = err(&MINIMAL.replace("bf16 =", "fp4 ="));
        assert!(e.message.contains("fp4"), "{}", e.message);
    }

    #[test]
    fn negative_bandwidth_is_named() {
        let e = err(&MINIMAL.replace("value = 1e12", "value = -1e12"));
        assert!(
            e.message.contains("toy.toml") && e.message.contains("memory[0].bandwidth_bytes_per_s"),
            "{}",
            e.message
        );
    }

    #[test]
    fn zero_peak_is_named() {
        let e = err(&MINIMAL.replace("value = 100e12", "value = 0.0"));
        assert!(e.message.contains("peak_flops_per_s.bf16"), "{}", e.message);
        let e = err(&MINIMAL.replace("value = 100e12", "value = nan"));
        assert!(e.message.contains("peak_flops_per_s.bf16"), "{}", e.message);
    }

    #[test]
    fn absurd_values_are_rejected() {
        let e = err(&MINIMAL.replace("value = 100e12", "value = 2e18"));
        assert!(e.message.contains("peak_flops_per_s.bf16"), "{}", e.message);
        let e = err(&MINIMAL.replace("value = 1e12", "value = 2e15"));
        assert!(
            e.message.contains("memory[0].bandwidth_bytes_per_s"),
            "{}",
            e.message
        );
        let e = err(&MINIMAL.replace("value = 5e-6", "value = 5.0"));
        assert!(
            e.message.contains("compute.launch_overhead_s"),
            "{}",
            e.message
        );
    }

    #[test]
    fn structural_errors() {
        let e = err(&MINIMAL.replace("id = \"toy\"", "id = \"\""));
        assert!(e.message.contains("`id`"), "{}", e.message);
        let e = err(&MINIMAL.replace("level = \"main\"", "level = \"l2\""));
        assert!(e.message.contains("main"), "{}", e.message);
        let e = err(&MINIMAL.replace("level = \"main\"", "level = \"l4\""));
        assert!(e.message.contains("l4"), "{}", e.message);
        let e = err(&MINIMAL.replace(
            "source = \"test\" }\n[[memory]]",
            "source = \" \" }\n[[memory]]",
        ));
        assert!(
            e.message.contains("peak_flops_per_s.bf16.source"),
            "{}",
            e.message
        );
        let no_bw = MINIMAL.replace(
            "bandwidth_bytes_per_s = { value = 1e12, source = \"test\" }\n",
            "capacity_bytes = { value = 1e9, source = \"test\" }\n",
        );
        let e = err(&no_bw);
        assert!(
            e.message.contains("memory[0].bandwidth_bytes_per_s"),
            "{}",
            e.message
        );
    }

    #[test]
    fn unknown_chip_suggests_the_closest_ids() -> Result<(), Box<dyn std::error::Error>> {
        let e = find_device("h100-sxmm").unwrap_err();
        assert_eq!(e.message, "unknown chip `h100-sxmm`");
        let hint = e.hint.ok_or("expected a value, got None")?;
        assert!(
            hint.starts_with("closest catalog ids: `h100-sxm`"),
            "{hint}"
        );
        assert!(hint.contains("roofline hardware list"), "{hint}");
        Ok(())
    }

    #[test]
    fn ids_are_case_insensitive_and_aliases_resolve() -> Result<(), Box<dyn std::error::Error>> {
        assert_eq!(chip("H100-SXM")?.id, "h100-sxm");
        assert_eq!(chip("h100")?.id, "h100-sxm");
        assert_eq!(chip("A100")?.id, "a100-sxm-80gb");
        assert_eq!(chip("rtx-a6000")?.id, "a6000");
        assert_eq!(chip("RTX_A6000")?.id, "a6000");
        assert_eq!(chip("mi300")?.id, "mi300x");
        let ids = catalog_ids();
        for (alias, id) in ALIASES {
            assert!(ids.contains(id), "alias {alias} -> missing id {id}");
            assert!(!ids.contains(alias), "alias {alias} shadows an id");
        }
        Ok(())
    }

    #[test]
    fn chip_file_by_path() -> Result<(), Box<dyn std::error::Error>> {
        let mut d = chip("h100-sxm")?;
        d.id = "my-h100".into();
        d.peaks[0].1.source = "measured \"quoted\" \\ backslash".into();
        let path = std::env::temp_dir().join(format!("roofline-chip-{}.toml", std::process::id()));
        std::fs::write(&path, device_to_toml(&d))?;
        let back = find_device(path.to_str().ok_or("expected a value, got None")?);
        let _ = std::fs::remove_file(&path);
        assert_eq!(back?, d);

        let e = find_device("does/not/exist.toml").unwrap_err();
        assert!(e.message.contains("`does/not/exist.toml`"), "{}", e.message);
        Ok(())
    }
}
