//! Chip files: the TOML schema, the embedded catalog (`catalog/hardware/*.toml`), lookup by id
//! or path, and writing a [`Device`](roofline_core::device::Device) back to TOML; system files
//! (`catalog/systems/*.toml`: nodes of one chip and their links, [`load_system`]).
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
//!
//! [platform]                            # optional: the node the chip is sold in
//! name = "HGX H100 8-GPU"
//! gpus_per_node = { value = 8, source = "..." }                 # 1 ..= 2^20
//! in_network_reduction = { value = true, source = "..." }       # optional, false if absent
//! topology = "..."                                              # optional note
//!
//! [platform.scale_up]                   # optional; also [platform.scale_out], [platform.pcie]
//! name = "NVLink 4 + NVSwitch gen 3"
//! bandwidth_bytes_per_s = { value = 450e9, source = "..." }     # PER GPU, PER DIRECTION
//! latency_s = { value = 3.4e-6, source = "..." }                # one collective step, 1 ns ..= 10 ms
//! ```
//!
//! The `[platform]` bandwidths are per GPU and per direction, unlike `[interconnect]` and
//! `[host]`, which keep the datasheets' bidirectional aggregates: NVLink 4's "900 GB/s" is
//! `450e9` each way. `scale_up` joins the GPUs of one node at full speed (a switch, or a ring or
//! torus a ring collective runs on), `scale_out` is one NIC's bandwidth per GPU between nodes,
//! `pcie` the host link. A node of more than one GPU needs `scale_up` or `pcie`.
//!
//! # System files
//!
//! `catalog/systems/*.toml` ([`load_system`], [`system_ids`]): nodes of one catalog chip and
//! their links, read into a [`System`](roofline_core::comm::System).
//!
//! ```toml
//! id = "dgx-h100"
//! name = "NVIDIA DGX H100 (8x H100 SXM5 80GB)"
//! chip = "h100-sxm"                                 # a catalog id or alias, or a chip file
//! gpus_per_node = { value = 8, source = "..." }     # 1 ..= 2^20
//! nodes = { value = 1, source = "..." }             # 1 ..= 2^20; devices in all ≤ 2^20
//! notes = ["..."]                                   # optional
//!
//! [fabric.scale_out]                  # optional [fabric]: each tier given replaces the chip's
//! name = "RoCE 200 Gb/s"              # [platform] tier; in_network_reduction, topology too
//! bandwidth_bytes_per_s = { value = 25e9, source = "..." }   # per GPU, per direction
//! latency_s = { value = 14e-6, source = "..." }
//! ```
//!
//! Without `[fabric]` the system's links are its chip's `[platform]`; a node of more than one
//! GPU needs a `scale_up` or `pcie` tier, and more than one node a `scale_out` tier.

mod catalog;
mod parse;
mod platform;
#[cfg(test)]
mod platform_tests;
mod system;
#[cfg(test)]
mod tests;
mod to_toml;

pub use catalog::{catalog, catalog_ids, find_device};
pub use parse::{parse_device, parse_device_value};
pub use system::{
    find_chip_or_system, is_system_id, load_system, parse_system, system_ids, systems, ChipOrSystem,
};
pub use to_toml::device_to_toml;
