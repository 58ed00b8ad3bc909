//! What a collective over a group of devices costs on a fabric: the α–β model of a ring.
//!
//! For a buffer of S bytes on n ranks over links of bandwidth B per direction and latency α per
//! step (nccl-tests `doc/PERFORMANCE.md` for the traffic): all-reduce sends 2(n−1)/n·S per rank
//! in 2(n−1) steps; reduce-scatter and all-gather (n−1)/n·S in n−1 steps; all-to-all (n−1)/n·S
//! in n−1 steps; broadcast and send/recv S in one. Time = steps·α + traffic / B, a lower bound.

use super::fabric::{Fabric, LinkTier};
use super::system::Group;
use crate::units::{Bytes, BytesPerSec, Seconds};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A collective operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    /// Every rank ends with the sum of every rank's buffer.
    AllReduce,
    /// Every rank ends with its 1/n of the sum.
    ReduceScatter,
    /// Every rank ends with every rank's 1/n.
    AllGather,
    /// Every rank sends a distinct 1/n to each other rank.
    AllToAll,
    /// One rank's buffer to every rank.
    Broadcast,
    /// One rank's buffer to one other.
    SendRecv,
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Collective::AllReduce => "all-reduce",
            Collective::ReduceScatter => "reduce-scatter",
            Collective::AllGather => "all-gather",
            Collective::AllToAll => "all-to-all",
            Collective::Broadcast => "broadcast",
            Collective::SendRecv => "send-recv",
        })
    }
}

/// How a collective moves its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// A ring over the ranks.
    Ring,
    /// NCCL's double binary tree.
    Tree,
    /// NVLink SHARP: the switch reduces.
    Nvls,
    /// Within each node, then across nodes over the rails, then within each node.
    Hierarchical,
    /// Point to point.
    Direct,
}

/// The algorithm to price: the fastest the fabric allows, or one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlgorithmChoice {
    /// The fastest.
    Auto,
    /// This one.
    Only(Algorithm),
}

/// The link tier a collective is bounded by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// NVLink, xGMI, ICI.
    ScaleUp,
    /// The network between nodes.
    ScaleOut,
    /// PCIe.
    Pcie,
}

/// The α–β cost of one collective.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CollectiveCost {
    /// Which collective.
    pub collective: Collective,
    /// How it is run.
    pub algorithm: Algorithm,
    /// S: the buffer, as nccl-tests counts it.
    pub bytes: Bytes,
    /// The ranks.
    pub group: Group,
    /// Bytes one rank sends on the bounding link.
    pub traffic: Bytes,
    /// The α term, seconds.
    pub latency: Seconds,
    /// The β term (traffic / link), seconds.
    pub transfer: Seconds,
    /// Bandwidth per direction of the bounding tier.
    pub link: BytesPerSec,
    /// The bounding tier.
    pub tier: Tier,
}

impl CollectiveCost {
    /// Latency + transfer: the α–β lower bound, seconds.
    pub fn time(&self) -> Seconds {
        self.latency + self.transfer
    }
}

/// Why a collective cannot be priced.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CollectiveError {
    /// The fabric lacks the tier the group needs.
    NoLink {
        /// The tier.
        tier: Tier,
    },
    /// A size that is negative or not finite.
    Bytes(f64),
}

impl fmt::Display for CollectiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CollectiveError::NoLink { tier } => write!(f, "the fabric has no {tier:?} link"),
            CollectiveError::Bytes(b) => write!(f, "bytes = {b} is not a size"),
        }
    }
}
impl std::error::Error for CollectiveError {}

/// nccl-tests' bus-bandwidth factor: all-reduce 2(n−1)/n; reduce-scatter, all-gather and
/// all-to-all (n−1)/n; broadcast and send/recv 1.
pub fn bus_factor(c: Collective, ranks: u32) -> f64 {
    let n = f64::from(ranks.max(1));
    match c {
        Collective::AllReduce => 2.0 * (n - 1.0) / n,
        Collective::ReduceScatter | Collective::AllGather | Collective::AllToAll => (n - 1.0) / n,
        Collective::Broadcast | Collective::SendRecv => 1.0,
    }
}

fn steps(c: Collective, ranks: u32) -> f64 {
    let n = f64::from(ranks.max(1));
    match c {
        Collective::AllReduce => 2.0 * (n - 1.0),
        Collective::ReduceScatter | Collective::AllGather | Collective::AllToAll => n - 1.0,
        Collective::Broadcast | Collective::SendRecv => 1.0,
    }
}

/// The ring cost of `c` on `bytes` over `group` on `fabric`: within one node over its
/// intra-node tier, across nodes bounded by the scale-out tier.
///
/// # Errors
/// Bytes not a size; the fabric lacks the tier needed.
pub fn collective_cost(
    c: Collective,
    bytes: Bytes,
    group: Group,
    fabric: &Fabric,
    _choice: AlgorithmChoice,
) -> Result<CollectiveCost, CollectiveError> {
    if !(bytes.get().is_finite() && bytes.get() >= 0.0) {
        return Err(CollectiveError::Bytes(bytes.get()));
    }
    let (tier, link): (Tier, &LinkTier) = if group.nodes() > 1 {
        (
            Tier::ScaleOut,
            fabric.scale_out.as_ref().ok_or(CollectiveError::NoLink {
                tier: Tier::ScaleOut,
            })?,
        )
    } else if let Some(l) = fabric.scale_up.as_ref() {
        (Tier::ScaleUp, l)
    } else {
        (
            Tier::Pcie,
            fabric
                .pcie
                .as_ref()
                .ok_or(CollectiveError::NoLink { tier: Tier::Pcie })?,
        )
    };
    let traffic = if group.ranks <= 1 {
        Bytes::ZERO
    } else {
        bytes * bus_factor(c, group.ranks)
    };
    let latency = if group.ranks <= 1 {
        Seconds(0.0)
    } else {
        link.latency.value * steps(c, group.ranks)
    };
    Ok(CollectiveCost {
        collective: c,
        algorithm: Algorithm::Ring,
        bytes,
        group,
        traffic,
        latency,
        transfer: traffic / link.bandwidth.value,
        link: link.bandwidth.value,
        tier,
    })
}
