//! Chip files: the TOML schema, the embedded catalog (`catalog/hardware/*.toml`), lookup by id
//! or path, and writing a [`Device`](roofline_core::device::Device) back to TOML.
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

mod catalog;
mod parse;
#[cfg(test)]
mod tests;
mod to_toml;

pub use catalog::{catalog, catalog_ids, find_device};
pub use parse::parse_device;
pub use to_toml::device_to_toml;
