//! A system: nodes of one chip joined by a fabric, and where a group of ranks sits on it.

use super::fabric::{Fabric, Platform};
use crate::device::Device;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Most devices a system holds: 2^20, above the largest training clusters built (≈ 10^5 GPUs).
pub const MAX_DEVICES: u32 = 1 << 20;

/// Nodes of one chip and the fabric that joins them (DGX H100: 8 H100 SXM per node over NVLink 4
/// and NVSwitch, nodes over 400 Gb/s InfiniBand per GPU).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct System {
    /// Short id (`dgx-h100`).
    pub id: String,
    /// Full name.
    pub name: String,
    /// The chip every device is.
    pub chip: Device,
    /// Devices in one node (one scale-up domain: 8 for a DGX, 72 for a GB200 NVL72).
    pub gpus_per_node: u32,
    /// Nodes.
    pub nodes: u32,
    /// Where `gpus_per_node` comes from (empty when not stated).
    #[serde(default)]
    pub gpus_per_node_source: String,
    /// Where `nodes` comes from (empty when not stated).
    #[serde(default)]
    pub nodes_source: String,
    /// The links.
    pub fabric: Fabric,
    /// Caveats about the figures.
    pub notes: Vec<String>,
}

/// Why a system cannot be made or a group cannot be placed on it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SystemError {
    /// The chip has no default node ([`Device::platform`]).
    NoPlatform {
        /// The chip's id.
        chip: String,
    },
    /// A count out of range: zero, or above [`MAX_DEVICES`].
    Count {
        /// What was counted (`devices`, `gpus_per_node`, `nodes`).
        quantity: &'static str,
        /// The value given.
        value: u64,
    },
    /// `devices` does not fill whole nodes of `gpus_per_node`.
    PartialNode {
        /// Devices asked for.
        devices: u32,
        /// Devices per node.
        gpus_per_node: u32,
    },
    /// A group needs more devices than the system has.
    TooFewDevices {
        /// Devices the group needs.
        needed: u64,
        /// Devices the system has.
        available: u64,
    },
}

impl fmt::Display for SystemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SystemError::NoPlatform { chip } => write!(
                f,
                "chip `{chip}` has no default node to build a multi-device system from"
            ),
            SystemError::Count { quantity, value } => write!(
                f,
                "{quantity} = {value} is out of range (1 to {MAX_DEVICES})"
            ),
            SystemError::PartialNode {
                devices,
                gpus_per_node,
            } => write!(
                f,
                "{devices} devices do not fill whole nodes of {gpus_per_node}"
            ),
            SystemError::TooFewDevices { needed, available } => write!(
                f,
                "the layout needs {needed} devices, the system has {available}"
            ),
        }
    }
}
impl std::error::Error for SystemError {}

fn count(quantity: &'static str, value: u64) -> Result<u32, SystemError> {
    if value == 0 || value > u64::from(MAX_DEVICES) {
        return Err(SystemError::Count { quantity, value });
    }
    Ok(value as u32)
}

impl System {
    /// A system of `nodes` nodes of `gpus_per_node` `chip`s joined by `fabric`.
    ///
    /// # Errors
    /// A count of zero, or more than [`MAX_DEVICES`] devices in all.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        chip: Device,
        gpus_per_node: u64,
        nodes: u64,
        fabric: Fabric,
    ) -> Result<Self, SystemError> {
        let gpus_per_node = count("gpus_per_node", gpus_per_node)?;
        let nodes = count("nodes", nodes)?;
        count("devices", u64::from(gpus_per_node) * u64::from(nodes))?;
        Ok(Self {
            id: id.into(),
            name: name.into(),
            chip,
            gpus_per_node,
            nodes,
            gpus_per_node_source: String::new(),
            nodes_source: String::new(),
            fabric,
            notes: Vec::new(),
        })
    }

    /// One `chip` alone: one node of one device, no links (what a single-device analysis runs
    /// on when the chip is sold in no node the catalog describes).
    pub fn single(chip: &Device) -> Self {
        Self {
            id: chip.id.clone(),
            name: format!("1 × {}", chip.name),
            chip: chip.clone(),
            gpus_per_node: 1,
            nodes: 1,
            gpus_per_node_source: "one device".into(),
            nodes_source: "one device".into(),
            fabric: Fabric::default(),
            notes: Vec::new(),
        }
    }

    /// `devices` of `chip` in the chip's default node ([`Device::platform`]): one node when
    /// they fit in one (fewer GPUs than the node holds use the same links), else whole nodes.
    ///
    /// # Errors
    /// The chip has no platform; `devices` is zero, above [`MAX_DEVICES`], or more than one
    /// node's worth that does not fill whole nodes.
    pub fn of_chip(chip: &Device, devices: u64) -> Result<Self, SystemError> {
        let Some(Platform {
            name,
            gpus_per_node,
            fabric,
        }) = chip.platform.clone()
        else {
            return Err(SystemError::NoPlatform {
                chip: chip.id.clone(),
            });
        };
        let devices = count("devices", devices)?;
        let per_node = count("gpus_per_node", u64::from(gpus_per_node.value))?;
        let (gpus_per_node, nodes) = if devices <= per_node {
            (devices, 1)
        } else if devices % per_node == 0 {
            (per_node, devices / per_node)
        } else {
            return Err(SystemError::PartialNode {
                devices,
                gpus_per_node: per_node,
            });
        };
        let mut s = Self::new(
            format!("{}x{}", chip.id, devices),
            format!("{devices} × {} ({name})", chip.name),
            chip.clone(),
            u64::from(gpus_per_node),
            u64::from(nodes),
            fabric,
        )?;
        if let Some(p) = &chip.platform {
            s.gpus_per_node_source = p.gpus_per_node.source.clone();
        }
        s.nodes_source = format!("{devices} devices asked for, in nodes of {per_node}");
        s.notes.push(format!(
            "{name}: {} GPUs per node, {}",
            gpus_per_node.min(per_node),
            chip.platform
                .as_ref()
                .map_or("", |p| p.gpus_per_node.source.as_str())
        ));
        Ok(s)
    }

    /// Devices in all: nodes × GPUs per node.
    pub fn devices(&self) -> u64 {
        u64::from(self.gpus_per_node) * u64::from(self.nodes)
    }

    /// A group of `ranks` consecutive devices (ranks fill a node before the next, as
    /// Megatron and NCCL place a tensor-parallel group), or an error when the system has fewer.
    ///
    /// # Errors
    /// `ranks` is zero or more than [`System::devices`].
    pub fn group(&self, ranks: u64) -> Result<Group, SystemError> {
        let ranks = count("ranks", ranks)?;
        if u64::from(ranks) > self.devices() {
            return Err(SystemError::TooFewDevices {
                needed: u64::from(ranks),
                available: self.devices(),
            });
        }
        Ok(Group {
            ranks,
            ranks_per_node: ranks.min(self.gpus_per_node),
        })
    }
}

/// Where the ranks of one collective sit: `ranks` in all, `ranks_per_node` of them in each node
/// (so `ranks / ranks_per_node` nodes, joined by the scale-out network).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Group {
    /// Ranks in the group.
    pub ranks: u32,
    /// Ranks in each node (≤ `ranks`).
    pub ranks_per_node: u32,
}

impl Group {
    /// `ranks` ranks inside one node.
    pub fn in_one_node(ranks: u32) -> Self {
        Self {
            ranks,
            ranks_per_node: ranks,
        }
    }

    /// Nodes the group spans: ⌈ranks / ranks_per_node⌉.
    pub fn nodes(&self) -> u32 {
        self.ranks.div_ceil(self.ranks_per_node.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cited::Cited;
    use crate::comm::fabric::LinkTier;
    use crate::units::{BytesPerSec, Seconds};

    fn chip_with_node(per_node: u32) -> Device {
        let mut d = crate::fixtures::h100_sxm();
        d.platform = Some(Platform {
            name: "HGX".into(),
            gpus_per_node: Cited::new(per_node, "test"),
            fabric: Fabric {
                scale_up: Some(LinkTier::new(
                    "NVLink",
                    Cited::new(BytesPerSec(450e9), "test"),
                    Cited::new(Seconds(1e-6), "test"),
                )),
                ..Fabric::default()
            },
        });
        d
    }

    #[test]
    fn devices_fill_nodes_of_the_chips_platform() -> Result<(), SystemError> {
        let chip = chip_with_node(8);
        let s = System::of_chip(&chip, 4)?;
        assert_eq!((s.gpus_per_node, s.nodes, s.devices()), (4, 1, 4));
        let s = System::of_chip(&chip, 32)?;
        assert_eq!((s.gpus_per_node, s.nodes, s.devices()), (8, 4, 32));
        assert_eq!(
            System::of_chip(&chip, 12),
            Err(SystemError::PartialNode {
                devices: 12,
                gpus_per_node: 8
            })
        );
        assert!(matches!(
            System::of_chip(&chip, 0),
            Err(SystemError::Count { .. })
        ));
        assert!(matches!(
            System::of_chip(&crate::fixtures::a6000(), 2),
            Err(SystemError::NoPlatform { .. })
        ));
        Ok(())
    }

    #[test]
    fn a_group_fills_a_node_before_the_next() -> Result<(), SystemError> {
        let s = System::of_chip(&chip_with_node(8), 32)?;
        assert_eq!(s.group(8)?, Group::in_one_node(8));
        let g = s.group(16)?;
        assert_eq!((g.ranks_per_node, g.nodes()), (8, 2));
        assert_eq!(s.group(2)?.nodes(), 1);
        assert!(matches!(
            s.group(64),
            Err(SystemError::TooFewDevices { .. })
        ));
        Ok(())
    }
}
