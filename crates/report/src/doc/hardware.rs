//! The chip documents: the chip object every document embeds (`hardware`), and
//! `roofline hardware list`, `show` and `compare`.

use super::SchemaVersion;
use roofline_core::device::{Device, MemoryKind};
use roofline_core::precision::Precision;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;

/// A chip: dense peaks, main-memory bandwidth and capacity, ridge points, launch overhead.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HardwareDoc {
    /// Short id (`h100-sxm`).
    pub id: String,
    /// Full name.
    pub name: String,
    /// Vendor.
    pub vendor: String,
    /// Dense peak per precision, FLOP/s (integer formats: OP/s); never 2:4-sparse figures.
    #[schemars(schema_with = "super::precision_map_num")]
    pub peak_flops_per_s: BTreeMap<Precision, f64>,
    /// Main-memory (HBM, GDDR, DRAM) bandwidth, B/s; `null` when the chip has none.
    pub bandwidth_bytes_per_s: Option<f64>,
    /// Main-memory capacity, bytes; `null` when unknown.
    pub capacity_bytes: Option<f64>,
    /// Ridge point per precision (peak ÷ bandwidth), FLOP/byte.
    #[schemars(schema_with = "super::precision_map_num")]
    pub ridge_point_flop_per_byte: BTreeMap<Precision, f64>,
    /// Fixed cost of one kernel launch, seconds.
    pub launch_overhead_s: f64,
    /// Why the chip cannot be used for a roofline analysis (no dense peak for any
    /// precision); `null` for a usable chip.
    pub unusable_reason: Option<String>,
}

impl HardwareDoc {
    /// The chip object of `d`.
    pub fn of(d: &Device) -> Self {
        HardwareDoc {
            id: d.id.clone(),
            name: d.name.clone(),
            vendor: d.vendor.clone(),
            peak_flops_per_s: d.peaks.iter().map(|(p, c)| (*p, c.value.get())).collect(),
            bandwidth_bytes_per_s: d.bandwidth().ok().map(|b| b.get()),
            capacity_bytes: d.capacity().map(|c| c.get()),
            ridge_point_flop_per_byte: Precision::ALL
                .iter()
                .filter_map(|p| d.ridge(*p).ok().map(|r| (*p, r.get())))
                .collect(),
            launch_overhead_s: d.launch_overhead.value.get(),
            unusable_reason: d.unusable_reason().map(str::to_string),
        }
    }
}

/// `roofline hardware list`: every chip of the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HardwareListDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The chips, in catalog order.
    pub hardware: Vec<HardwareDoc>,
}

/// `roofline hardware compare`: the chips side by side.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HardwareCompareDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The chips, in the order given.
    pub hardware: Vec<HardwareDoc>,
}

/// Where the figures of a chip come from.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SourcesDoc {
    /// Source of each dense peak, by precision.
    #[schemars(schema_with = "super::precision_map_str")]
    pub peaks: BTreeMap<Precision, String>,
    /// Source of the launch overhead.
    pub launch_overhead: String,
}

/// One memory level of a chip.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MemoryLevelDoc {
    /// `main memory`, `L2`, `L3`, `L1` or `SRAM`.
    pub level: &'static str,
    /// Name (`HBM3`).
    pub name: String,
    /// Bandwidth, B/s, where known.
    pub bandwidth_bytes_per_s: Option<f64>,
    /// Capacity, bytes, where known.
    pub capacity_bytes: Option<f64>,
}

/// `roofline hardware show ID`: the chip object, and every figure's source.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HardwareShowDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The chip object.
    #[serde(flatten)]
    pub hardware: HardwareDoc,
    /// Sources of the peaks and the launch overhead.
    pub sources: SourcesDoc,
    /// Memory levels, main memory first.
    pub memory: Vec<MemoryLevelDoc>,
    /// Streaming multiprocessors (compute units, cores), where known.
    pub sm_count: Option<u32>,
    /// Shared memory one SM can use, bytes, where known.
    pub shared_memory_per_sm_bytes: Option<f64>,
    /// Caveats about the figures.
    pub notes: Vec<String>,
}

/// The name of a memory level as `hardware show` writes it.
pub fn level_name(k: MemoryKind) -> &'static str {
    match k {
        MemoryKind::Main => "main memory",
        MemoryKind::L2 => "L2",
        MemoryKind::L3 => "L3",
        MemoryKind::L1 => "L1",
        MemoryKind::Sram => "SRAM",
        other => other.name(),
    }
}

impl HardwareShowDoc {
    /// The document of `d`.
    pub fn of(d: &Device) -> Self {
        HardwareShowDoc {
            schema_version: SchemaVersion,
            hardware: HardwareDoc::of(d),
            sources: SourcesDoc {
                peaks: d
                    .peaks
                    .iter()
                    .map(|(p, c)| (*p, c.source.clone()))
                    .collect(),
                launch_overhead: d.launch_overhead.source.clone(),
            },
            memory: d
                .memory
                .iter()
                .map(|m| MemoryLevelDoc {
                    level: level_name(m.kind),
                    name: m.name.clone(),
                    bandwidth_bytes_per_s: m.bandwidth.as_ref().map(|b| b.value.get()),
                    capacity_bytes: m.capacity.as_ref().map(|c| c.value.get()),
                })
                .collect(),
            sm_count: d.sm_count.as_ref().map(|c| c.value),
            shared_memory_per_sm_bytes: d.shared_memory_per_sm.as_ref().map(|c| c.value.get()),
            notes: d.notes.clone(),
        }
    }
}
