//! The links of a node in a file: a chip's `[platform]` and a system's `[fabric]` (the same
//! sub-tables `scale_up`, `scale_out`, `pcie`), read and checked.

use super::parse::{check_source, checked, FileCited};
use crate::error::InputError;
use roofline_core::cited::Cited;
use roofline_core::comm::{Fabric, LinkTier, Platform};
use roofline_core::device::limits::{
    MAX_BANDWIDTH, MAX_GPUS_PER_NODE, MAX_LATENCY, MIN_BANDWIDTH, MIN_LATENCY,
};
use roofline_core::units::{BytesPerSec, Seconds};
use serde::Deserialize;

/// The bandwidth range of a link tier, B/s per direction.
const BANDWIDTH: (f64, f64) = (MIN_BANDWIDTH, MAX_BANDWIDTH);
/// The latency range of one step over a link tier, seconds.
const LATENCY: (f64, f64) = (MIN_LATENCY, MAX_LATENCY);

/// One tier of links: `[platform.scale_up]`, `[fabric.scale_out]`, ….
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LinkTierFile {
    name: String,
    bandwidth_bytes_per_s: FileCited<f64>,
    latency_s: FileCited<f64>,
}

/// The links of a node: the fields a `[platform]` and a `[fabric]` share.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FabricFile {
    #[serde(default)]
    in_network_reduction: Option<FileCited<bool>>,
    #[serde(default)]
    topology: Option<String>,
    scale_up: Option<LinkTierFile>,
    scale_out: Option<LinkTierFile>,
    pcie: Option<LinkTierFile>,
}

/// A chip's `[platform]`: the node it is sold in.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlatformFile {
    name: String,
    gpus_per_node: FileCited<u32>,
    #[serde(default)]
    in_network_reduction: Option<FileCited<bool>>,
    #[serde(default)]
    topology: Option<String>,
    scale_up: Option<LinkTierFile>,
    scale_out: Option<LinkTierFile>,
    pcie: Option<LinkTierFile>,
}

/// A count of GPUs (`gpus_per_node`, `nodes`): 1 ..= [`MAX_GPUS_PER_NODE`], with a source.
pub(crate) fn checked_count(
    origin: &str,
    field: &str,
    c: FileCited<u32>,
    what: &str,
) -> Result<Cited<u32>, InputError> {
    if c.value == 0 || c.value > MAX_GPUS_PER_NODE {
        return Err(InputError::new(format!(
            "{origin}: field `{field}` = {} is out of range (1 to {MAX_GPUS_PER_NODE})",
            c.value
        ))
        .with_hint(format!("give the number of {what}, a whole number ≥ 1")));
    }
    check_source(origin, field, &c.source)?;
    Ok(Cited::new(c.value, c.source))
}

fn checked_tier(
    origin: &str,
    table: &str,
    tier: Option<LinkTierFile>,
) -> Result<Option<LinkTier>, InputError> {
    let Some(t) = tier else {
        return Ok(None);
    };
    if t.name.trim().is_empty() {
        return Err(
            InputError::new(format!("{origin}: field `{table}.name` is empty"))
                .with_hint("name the link (`NVLink 4 + NVSwitch`, `InfiniBand NDR 400 Gb/s`)"),
        );
    }
    let bw = checked(
        origin,
        &format!("{table}.bandwidth_bytes_per_s"),
        t.bandwidth_bytes_per_s,
        BANDWIDTH,
        "B/s",
    )?;
    let lat = checked(
        origin,
        &format!("{table}.latency_s"),
        t.latency_s,
        LATENCY,
        "s",
    )?;
    Ok(Some(LinkTier::new(
        t.name,
        Cited::new(BytesPerSec(bw.value), bw.source),
        Cited::new(Seconds(lat.value), lat.source),
    )))
}

/// The tiers of `file` (in table `table`, `platform` or `fabric`), each checked; tiers the
/// file leaves out stay as in `base` (a system's `[fabric]` over its chip's platform).
pub(crate) fn checked_fabric(
    origin: &str,
    table: &str,
    file: FabricFile,
    base: Fabric,
) -> Result<Fabric, InputError> {
    let mut fabric = base;
    if let Some(r) = file.in_network_reduction {
        check_source(origin, &format!("{table}.in_network_reduction"), &r.source)?;
        fabric.in_network_reduction = r.value;
        fabric.in_network_reduction_source = Some(r.source);
    }
    if let Some(t) = file.topology {
        fabric.topology = Some(t);
    }
    let tiers = [
        ("scale_up", file.scale_up),
        ("scale_out", file.scale_out),
        ("pcie", file.pcie),
    ];
    for (name, tier) in tiers {
        if let Some(t) = checked_tier(origin, &format!("{table}.{name}"), tier)? {
            let slot = match name {
                "scale_up" => &mut fabric.scale_up,
                "scale_out" => &mut fabric.scale_out,
                _ => &mut fabric.pcie,
            };
            *slot = Some(t);
        }
    }
    Ok(fabric)
}

/// A chip's `[platform]`, checked: a name, 1 ..= 2^20 GPUs per node, and its tiers.
pub(crate) fn checked_platform(
    origin: &str,
    file: Option<PlatformFile>,
) -> Result<Option<Platform>, InputError> {
    let Some(p) = file else {
        return Ok(None);
    };
    if p.name.trim().is_empty() {
        return Err(
            InputError::new(format!("{origin}: field `platform.name` is empty"))
                .with_hint("name the node the chip is sold in (`HGX H100 8-GPU`)"),
        );
    }
    let gpus_per_node = checked_count(
        origin,
        "platform.gpus_per_node",
        p.gpus_per_node,
        "GPUs in one node",
    )?;
    let file = FabricFile {
        in_network_reduction: p.in_network_reduction,
        topology: p.topology,
        scale_up: p.scale_up,
        scale_out: p.scale_out,
        pcie: p.pcie,
    };
    let fabric = checked_fabric(origin, "platform", file, Fabric::default())?;
    if fabric.intra_node().is_none() && gpus_per_node.value > 1 {
        return Err(InputError::new(format!(
            "{origin}: field `platform`: {} GPUs per node and neither `platform.scale_up` nor \
             `platform.pcie`",
            gpus_per_node.value
        ))
        .with_hint(
            "give the link the GPUs of one node talk over: [platform.scale_up] or [platform.pcie]",
        ));
    }
    Ok(Some(Platform {
        name: p.name,
        gpus_per_node,
        fabric,
    }))
}
