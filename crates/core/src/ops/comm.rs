//! A collective as an operator of the graph: no FLOPs and no main-memory traffic of its own
//! account, its bytes on a link, its time from the α–β model of that link
//! ([`crate::comm::collective`]).

use crate::comm::collective::{Algorithm, Collective, CollectiveCost, Protocol, Tier};
use crate::comm::Group;
use crate::units::{Bytes, BytesPerSec, Seconds};
use serde::Serialize;

/// One collective, priced on the fabric of the system the graph was sharded for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Communication {
    /// Which collective.
    pub collective: Collective,
    /// How it runs.
    pub algorithm: Algorithm,
    /// S, the buffer (nccl-tests' size), bytes.
    pub bytes: Bytes,
    /// The ranks it runs over.
    pub group: Group,
    /// Bytes one rank sends on the bounding link.
    pub traffic: Bytes,
    /// The α term, seconds.
    pub latency: Seconds,
    /// The β term, seconds: traffic / link.
    pub transfer: Seconds,
    /// Bandwidth per direction of the bounding link, B/s.
    pub link: BytesPerSec,
    /// The bounding link tier.
    pub tier: Tier,
    /// NCCL's protocol it runs in.
    pub protocol: Protocol,
}

impl Communication {
    /// The operator of a priced collective.
    pub fn of(c: &CollectiveCost) -> Self {
        Self {
            collective: c.collective,
            algorithm: c.algorithm,
            bytes: c.bytes,
            group: c.group,
            traffic: c.traffic,
            latency: c.latency,
            transfer: c.transfer,
            link: c.link,
            tier: c.tier,
            protocol: c.protocol,
        }
    }

    /// Latency + transfer, seconds: the α–β lower bound.
    #[inline]
    pub fn time(&self) -> Seconds {
        self.latency + self.transfer
    }
}
