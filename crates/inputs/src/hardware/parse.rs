//! One chip file read and validated ([`parse_device`]): the file schema (serde) and the checks
//! of every number.

use crate::error::InputError;
use roofline_core::cited::Cited;
use roofline_core::device::{Device, Link, MemoryKind, MemoryLevel};
use roofline_core::precision::Precision;
use roofline_core::units::{Bytes, BytesPerSec, FlopPerSec, Seconds};
use serde::Deserialize;

// The plausible range of every figure: roofline_core::device::limits (a reason for each).
use roofline_core::device::limits::{
    MAX_BANDWIDTH, MAX_CAPACITY, MAX_LAUNCH, MAX_PEAK, MAX_SHARED_MEMORY, MAX_SM_COUNT,
    MIN_BANDWIDTH, MIN_CAPACITY, MIN_LAUNCH, MIN_PEAK, MIN_SHARED_MEMORY,
};

/// The peak range, FLOP/s.
const PEAK: (f64, f64) = (MIN_PEAK, MAX_PEAK);
/// The bandwidth range, B/s (memory levels and links).
const BANDWIDTH: (f64, f64) = (MIN_BANDWIDTH, MAX_BANDWIDTH);
/// The capacity range of a memory level, bytes.
const CAPACITY: (f64, f64) = (MIN_CAPACITY, MAX_CAPACITY);
/// The shared memory range per SM, bytes.
const SHARED_MEMORY: (f64, f64) = (MIN_SHARED_MEMORY, MAX_SHARED_MEMORY);
/// The launch overhead range, seconds.
const LAUNCH: (f64, f64) = (MIN_LAUNCH, MAX_LAUNCH);

const SCHEMA_HINT: &str =
    "see an embedded catalog file (crates/inputs/catalog/hardware/h100-sxm.toml) \
     for the schema: every number is `{ value = ..., source = \"...\" }` in SI base units \
     (FLOP/s, B/s, bytes, seconds)";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileCited<T> {
    pub(crate) value: T,
    pub(crate) source: String,
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
    platform: Option<super::platform::PlatformFile>,
    /// The shares of the roofs real kernels reach (`[efficiency]`: matmul, matmul_fp8,
    /// attention, vector, memory, network).
    efficiency: Option<FileCited<roofline_core::pricing::Efficiency>>,
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
    /// `per_kernel` (the default) or `per_program`.
    #[serde(default)]
    launch_model: roofline_core::device::LaunchModel,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkFile {
    name: String,
    bandwidth_bytes_per_s: Option<FileCited<f64>>,
}

/// Checks one number of the file: finite, > 0 and within `(min, max)` (in `unit`).
pub(crate) fn checked(
    origin: &str,
    field: &str,
    c: FileCited<f64>,
    (min, max): (f64, f64),
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
    let bound = if c.value > max {
        Some(format!("more than {max:e} {unit}"))
    } else if c.value < min {
        Some(format!("less than {min:e} {unit}"))
    } else {
        None
    };
    if let Some(bound) = bound {
        return Err(InputError::new(format!(
            "{origin}: field `{field}` = {:e} {unit} is not plausible ({bound})",
            c.value
        ))
        .with_hint(format!(
            "values are SI base units with decimal prefixes (1 TFLOP/s = 1e12, 1 TB/s = 1e12, \
             1 GB = 1e9, 1 µs = 1e-6), between {min:e} and {max:e} {unit} here; check the exponent"
        )));
    }
    check_source(origin, field, &c.source)?;
    Ok(Cited::new(c.value, c.source))
}

pub(crate) fn check_source(origin: &str, field: &str, source: &str) -> Result<(), InputError> {
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
                BANDWIDTH,
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
/// - a value is outside its plausible range ([`roofline_core::device::limits`]): a peak outside
///   1e6..=1e18 FLOP/s, a bandwidth outside 1e6..=1e15 B/s, a capacity outside 1e3..=1e15
///   bytes, shared memory per SM outside 1e3 bytes..=16 MiB, more than 10^7 SMs, a launch
///   overhead outside 1 ns..=1 s;
/// - there is no `[[memory]]` level `"main"` with a bandwidth, or there is more than one;
/// - in `[platform]`: `gpus_per_node` outside 1..=2^20, a link tier's bandwidth outside
///   1e6..=1e15 B/s or its latency outside 1 ns..=10 ms, an empty name or source, or more than
///   one GPU per node with neither a `scale_up` nor a `pcie` tier.
pub fn parse_device(text: &str, origin: &str) -> Result<Device, InputError> {
    let file: DeviceFile = toml::from_str(text).map_err(|e| {
        InputError::new(format!("{origin}: {}", e.to_string().trim_end())).with_hint(SCHEMA_HINT)
    })?;
    checked_device(file, origin)
}

/// A chip given inline as JSON (`value`: the chip file's tables and keys, as serde reads the
/// TOML of [`parse_device`]), checked as [`parse_device`] checks a file; the file system is not
/// touched. `origin` names the chip in errors.
///
/// # Errors
/// As [`parse_device`]: a field missing, unknown or of the wrong type (serde's message), or a
/// value out of its range.
pub fn parse_device_value(value: serde_json::Value, origin: &str) -> Result<Device, InputError> {
    let file: DeviceFile = serde_json::from_value(value).map_err(|e| {
        InputError::new(format!("{origin}: {}", e.to_string().trim_end())).with_hint(SCHEMA_HINT)
    })?;
    checked_device(file, origin)
}

/// The checks of every figure of a chip file read by serde.
fn checked_device(mut file: DeviceFile, origin: &str) -> Result<Device, InputError> {
    if file.id.trim().is_empty() {
        return Err(InputError::new(format!("{origin}: field `id` is empty"))
            .with_hint("give the chip a short lowercase id, e.g. `id = \"my-gpu\"`"));
    }

    let peaks = checked_peaks(origin, &mut file.peak_flops_per_s)?;
    let memory = checked_memory(origin, file.memory)?;
    let compute = checked_compute(origin, file.compute)?;
    Ok(Device {
        id: file.id,
        name: file.name,
        vendor: file.vendor,
        peaks,
        memory,
        sm_count: compute.sm_count,
        shared_memory_per_sm: compute.shared_memory_per_sm,
        launch_overhead: compute.launch_overhead,
        launch_model: compute.launch_model,
        interconnect: checked_link(origin, "interconnect", file.interconnect)?,
        host_link: checked_link(origin, "host", file.host)?,
        platform: super::platform::checked_platform(origin, file.platform)?,
        notes: file.notes,
        efficiency: checked_efficiency(origin, file.efficiency)?,
    })
}

/// The chip's own shares of its roofs, each in [`roofline_core::pricing::MIN_SHARE`]..=1.
fn checked_efficiency(
    origin: &str,
    e: Option<FileCited<roofline_core::pricing::Efficiency>>,
) -> Result<Option<Cited<roofline_core::pricing::Efficiency>>, InputError> {
    let Some(e) = e else { return Ok(None) };
    {
        e.value.validate().map_err(|err| {
            InputError::new(format!(
                "{origin}: field `efficiency.{}` = {} is not a share in [{}, 1]",
                err.field,
                err.value,
                roofline_core::pricing::MIN_SHARE
            ))
            .with_hint("give each share as a fraction of its roof, e.g. `matmul = 0.8`")
        })?;
    }
    Ok(Some(Cited::new(e.value, e.source)))
}

/// The dense peaks, in [`Precision::ALL`] order, each within [`MIN_PEAK`]..=[`MAX_PEAK`].
fn checked_peaks(
    origin: &str,
    file: &mut PeaksFile,
) -> Result<Vec<(Precision, Cited<FlopPerSec>)>, InputError> {
    let mut peaks = Vec::new();
    for p in Precision::ALL {
        if let Some(c) = file.take(p) {
            let field = format!("peak_flops_per_s.{}", p.name());
            let unit = if matches!(p, Precision::Int8 | Precision::Int4) {
                "OP/s"
            } else {
                "FLOP/s"
            };
            let c = checked(origin, &field, c, PEAK, unit)?;
            peaks.push((p, Cited::new(FlopPerSec(c.value), c.source)));
        }
    }
    Ok(peaks)
}

/// The memory levels, the main memory first: exactly one `main` level, with a bandwidth.
fn checked_memory(origin: &str, file: Vec<MemoryFile>) -> Result<Vec<MemoryLevel>, InputError> {
    let mut main = Vec::new();
    let mut rest = Vec::new();
    let mut main_count = 0usize;
    for (i, m) in file.into_iter().enumerate() {
        let level = checked_level(origin, i, m)?;
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
    Ok(main)
}

/// The `i`-th `[[memory]]` entry: its bandwidth ([`MIN_BANDWIDTH`]..=[`MAX_BANDWIDTH`]) and
/// capacity ([`MIN_CAPACITY`]..=[`MAX_CAPACITY`]) checked.
fn checked_level(origin: &str, i: usize, m: MemoryFile) -> Result<MemoryLevel, InputError> {
    let bandwidth = m
        .bandwidth_bytes_per_s
        .map(|c| {
            checked(
                origin,
                &format!("memory[{i}].bandwidth_bytes_per_s"),
                c,
                BANDWIDTH,
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
                CAPACITY,
                "bytes",
            )
        })
        .transpose()?
        .map(|c| Cited::new(Bytes(c.value), c.source));
    Ok(MemoryLevel {
        kind: m.level,
        name: m.name,
        bandwidth,
        capacity,
    })
}

/// The `[compute]` table, checked.
struct Compute {
    sm_count: Option<Cited<u32>>,
    shared_memory_per_sm: Option<Cited<Bytes>>,
    launch_overhead: Cited<Seconds>,
    launch_model: roofline_core::device::LaunchModel,
}

/// The `[compute]` table: 0 < SMs ≤ [`MAX_SM_COUNT`], shared memory within
/// [`MIN_SHARED_MEMORY`]..=[`MAX_SHARED_MEMORY`], a launch overhead within
/// [`MIN_LAUNCH`]..=[`MAX_LAUNCH`].
fn checked_compute(origin: &str, file: ComputeFile) -> Result<Compute, InputError> {
    let sm_count = match file.sm_count {
        Some(c) if c.value == 0 => {
            return Err(InputError::new(format!(
                "{origin}: field `compute.sm_count` must be > 0, got 0"
            ))
            .with_hint("leave sm_count out if the number of SMs/CUs is not known"));
        }
        Some(c) if c.value > MAX_SM_COUNT => {
            return Err(InputError::new(format!(
                "{origin}: field `compute.sm_count` = {} is not plausible (more than {MAX_SM_COUNT})",
                c.value
            ))
            .with_hint("count streaming multiprocessors, compute units or cores of one chip"));
        }
        Some(c) => {
            check_source(origin, "compute.sm_count", &c.source)?;
            Some(Cited::new(c.value, c.source))
        }
        None => None,
    };
    let shared_memory_per_sm = file
        .shared_memory_per_sm_bytes
        .map(|c| {
            checked(
                origin,
                "compute.shared_memory_per_sm_bytes",
                c,
                SHARED_MEMORY,
                "bytes",
            )
        })
        .transpose()?
        .map(|c| Cited::new(Bytes(c.value), c.source));
    let launch = checked(
        origin,
        "compute.launch_overhead_s",
        file.launch_overhead_s,
        LAUNCH,
        "s",
    )?;
    Ok(Compute {
        sm_count,
        shared_memory_per_sm,
        launch_overhead: Cited::new(Seconds(launch.value), launch.source),
        launch_model: file.launch_model,
    })
}
