//! The links between chips: a scale-up fabric inside a node (NVLink and NVSwitch, AMD Infinity
//! Fabric / xGMI, TPU ICI), a scale-out network between nodes (InfiniBand or RoCE, one NIC per
//! GPU), and PCIe, each with the bandwidth per GPU per direction and the latency of one step.

use crate::cited::Cited;
use crate::units::{BytesPerSec, Seconds};
use serde::{Deserialize, Serialize};

/// One tier of links, as one GPU sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkTier {
    /// Name (`NVLink 4 + NVSwitch`, `InfiniBand NDR 400 Gb/s`).
    pub name: String,
    /// Bandwidth per GPU, per direction, B/s.
    pub bandwidth: Cited<BytesPerSec>,
    /// Latency of one step of a collective over it (α of the α–β model), seconds.
    pub latency: Cited<Seconds>,
}

impl LinkTier {
    /// A tier called `name` of `bandwidth` per GPU per direction and `latency` per step.
    pub fn new(
        name: impl Into<String>,
        bandwidth: Cited<BytesPerSec>,
        latency: Cited<Seconds>,
    ) -> Self {
        Self {
            name: name.into(),
            bandwidth,
            latency,
        }
    }
}

/// The links of a system, tier by tier.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Fabric {
    /// Links among the GPUs of one node, every pair at full speed (NVSwitch), or a ring or
    /// torus a ring collective runs on at full speed (xGMI, ICI); `None` when GPUs reach each
    /// other only over PCIe.
    pub scale_up: Option<LinkTier>,
    /// The scale-up switch reduces in the network (NVLink SHARP, "NVLS"): an all-reduce sends
    /// and receives each byte once per GPU instead of 2(n−1)/n times.
    pub in_network_reduction: bool,
    /// Where [`Fabric::in_network_reduction`] comes from (the switch's datasheet), when stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_network_reduction_source: Option<String>,
    /// How the GPUs of a node are joined, where the bandwidths alone mislead (a full mesh of
    /// point-to-point links gives a pair of GPUs one link, not the aggregate), when stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<String>,
    /// The network between nodes: one NIC's bandwidth per GPU (rail-optimised), `None` for a
    /// single-node system.
    pub scale_out: Option<LinkTier>,
    /// PCIe between a GPU and the host, the path between GPUs without a scale-up link.
    pub pcie: Option<LinkTier>,
}

impl Fabric {
    /// The tier GPUs of one node talk over: the scale-up fabric, or PCIe without one.
    pub fn intra_node(&self) -> Option<&LinkTier> {
        self.scale_up.as_ref().or(self.pcie.as_ref())
    }
}

/// The node a chip is sold in, the system `--hardware CHIP --devices N` builds: GPUs per node
/// and the fabric that joins them (and nodes to each other).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Platform {
    /// Name (`HGX H100 8-GPU`).
    pub name: String,
    /// GPUs in one node (one scale-up domain).
    pub gpus_per_node: Cited<u32>,
    /// The node's links.
    pub fabric: Fabric,
}
