//! The chip documents: the chip object every document embeds (`hardware`), and
//! `roofline hardware list`, `show` and `compare`.

use super::SchemaVersion;
use roofline_core::comm::{Fabric, LinkTier, Platform, System};
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
    /// The node the chip is sold in and its links; `null` when the catalog gives none.
    pub platform: Option<PlatformDoc>,
    /// The shares of its roofs real kernels reach, which the estimates apply
    /// ([`Device::efficiency`]), and their source.
    pub efficiency: EfficiencyDoc,
    /// Caveats about the figures.
    pub notes: Vec<String>,
}

/// A chip's estimate shares ([`roofline_core::pricing::Efficiency`]): each the share of a
/// roof real kernels reach, 0.01 to 1.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct EfficiencyDoc {
    /// The shares, one field each.
    #[serde(flatten)]
    pub shares: roofline_core::pricing::Efficiency,
    /// Where the shares come from: the chip's own measurements, or the published shares every
    /// chip without its own takes.
    pub source: String,
}

impl EfficiencyDoc {
    /// The shares of `d` ([`Device::efficiency`], [`Device::efficiency_source`]).
    pub fn of(d: &Device) -> Self {
        EfficiencyDoc {
            shares: d.efficiency(),
            source: d.efficiency_source().to_string(),
        }
    }
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
            platform: d.platform.as_ref().map(PlatformDoc::of),
            efficiency: EfficiencyDoc::of(d),
            notes: d.notes.clone(),
        }
    }
}

/// One tier of links as one GPU sees it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LinkTierDoc {
    /// Name (`NVLink 4 + NVSwitch gen 3`).
    pub name: String,
    /// Bandwidth per GPU, per direction, B/s (NVIDIA's bidirectional "900 GB/s" is 450e9).
    pub bandwidth_bytes_per_s: f64,
    /// Where the bandwidth comes from.
    pub bandwidth_source: String,
    /// Latency of one step of a collective over the tier, seconds.
    pub latency_s: f64,
    /// Where the latency comes from.
    pub latency_source: String,
}

impl LinkTierDoc {
    /// The document of `t`.
    pub fn of(t: &LinkTier) -> Self {
        LinkTierDoc {
            name: t.name.clone(),
            bandwidth_bytes_per_s: t.bandwidth.value.get(),
            bandwidth_source: t.bandwidth.source.clone(),
            latency_s: t.latency.value.get(),
            latency_source: t.latency.source.clone(),
        }
    }
}

/// The links of a node, tier by tier.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FabricDoc {
    /// Links among the GPUs of one node (NVLink and NVSwitch, xGMI, ICI); `null` without.
    pub scale_up: Option<LinkTierDoc>,
    /// The scale-up switch reduces in the network (NVLink SHARP).
    pub in_network_reduction: bool,
    /// Where `in_network_reduction` comes from, when stated.
    pub in_network_reduction_source: Option<String>,
    /// How the GPUs are joined, where the bandwidths alone mislead, when stated.
    pub topology: Option<String>,
    /// The network between nodes, one NIC's bandwidth per GPU; `null` without.
    pub scale_out: Option<LinkTierDoc>,
    /// PCIe between a GPU and its host; `null` when not given.
    pub pcie: Option<LinkTierDoc>,
}

impl FabricDoc {
    /// The document of `f`.
    pub fn of(f: &Fabric) -> Self {
        FabricDoc {
            scale_up: f.scale_up.as_ref().map(LinkTierDoc::of),
            in_network_reduction: f.in_network_reduction,
            in_network_reduction_source: f.in_network_reduction_source.clone(),
            topology: f.topology.clone(),
            scale_out: f.scale_out.as_ref().map(LinkTierDoc::of),
            pcie: f.pcie.as_ref().map(LinkTierDoc::of),
        }
    }
}

/// The node a chip is sold in.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlatformDoc {
    /// Name (`HGX H100 8-GPU`).
    pub name: String,
    /// GPUs in one node (one scale-up domain).
    pub gpus_per_node: u32,
    /// Where `gpus_per_node` comes from.
    pub gpus_per_node_source: String,
    /// The node's links.
    pub fabric: FabricDoc,
}

impl PlatformDoc {
    /// The document of `p`.
    pub fn of(p: &Platform) -> Self {
        PlatformDoc {
            name: p.name.clone(),
            gpus_per_node: p.gpus_per_node.value,
            gpus_per_node_source: p.gpus_per_node.source.clone(),
            fabric: FabricDoc::of(&p.fabric),
        }
    }
}

/// A system: nodes of one chip and the fabric that joins them.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SystemDoc {
    /// Short id (`dgx-h100`).
    pub id: String,
    /// Full name.
    pub name: String,
    /// The chip every device is (its catalog id).
    pub chip: String,
    /// The chip's full name.
    pub chip_name: String,
    /// GPUs in one node (one scale-up domain).
    pub gpus_per_node: u32,
    /// Where `gpus_per_node` comes from.
    pub gpus_per_node_source: String,
    /// Nodes.
    pub nodes: u32,
    /// Where `nodes` comes from.
    pub nodes_source: String,
    /// Devices in all: nodes × GPUs per node.
    pub devices: u64,
    /// The links.
    pub fabric: FabricDoc,
    /// Caveats about the figures.
    pub notes: Vec<String>,
}

impl SystemDoc {
    /// The document of `s`.
    pub fn of(s: &System) -> Self {
        SystemDoc {
            id: s.id.clone(),
            name: s.name.clone(),
            chip: s.chip.id.clone(),
            chip_name: s.chip.name.clone(),
            gpus_per_node: s.gpus_per_node,
            gpus_per_node_source: s.gpus_per_node_source.clone(),
            nodes: s.nodes,
            nodes_source: s.nodes_source.clone(),
            devices: s.devices(),
            fabric: FabricDoc::of(&s.fabric),
            notes: s.notes.clone(),
        }
    }
}

/// `roofline hardware show SYSTEM`: the system and the chip object of its devices.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SystemShowDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The system.
    #[serde(flatten)]
    pub system: SystemDoc,
    /// The chip every device is.
    pub hardware: HardwareDoc,
}

impl SystemShowDoc {
    /// The document of `s`.
    pub fn of(s: &System) -> Self {
        SystemShowDoc {
            schema_version: SchemaVersion,
            system: SystemDoc::of(s),
            hardware: HardwareDoc::of(&s.chip),
        }
    }
}

/// `roofline hardware list --systems`: every system of the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SystemListDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The systems, in catalog order.
    pub systems: Vec<SystemDoc>,
}
