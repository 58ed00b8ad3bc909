//! Communication between chips: the links that join them ([`fabric`]), the systems they form
//! ([`system`]) and what a collective over a group of them costs ([`collective`]: the α–β
//! bound, whose formulas are in [`alpha_beta`]; [`estimate`]: the estimate beside it).
//!
//! Conventions: a link's bandwidth is **per GPU, per direction**, in B/s (1 GB/s = 1e9 B/s);
//! NVIDIA's "900 GB/s" for the H100's NVLink 4 is the bidirectional aggregate, 450 GB/s each
//! way. A latency is the fixed time α of one step of a collective over that link, seconds.

pub mod alpha_beta;
pub mod collective;
pub mod estimate;
pub mod fabric;
pub mod system;

pub use collective::{
    bus_factor, collective_cost, Algorithm, AlgorithmChoice, Collective, CollectiveCost,
    CollectiveError, CommBound, Tier,
};
pub use fabric::{Fabric, LinkTier, Platform};
pub use system::{Group, System, SystemError};

#[cfg(test)]
mod tests;
