//! An estimate beside the α–β bound: real NCCL moves bytes at a fraction of the link's speed.
//!
//! The estimate keeps the latency term and divides the transfer term by an efficiency:
//! `t_est = t_α + t_β / η`. The efficiencies are measured bus bandwidths over the bound's bus
//! bandwidth on the same system (`refs/parallel/parallel_published.csv`, nccl-tests
//! all_reduce_perf at large messages on one 8-GPU node):
//!
//! - η_ring = 240 / 300 = 0.80: 8×A100 SXM4 reach 230–250 GB/s bus bandwidth (midpoint 240)
//!   over NVLink 3 at 300 GB/s per direction (600 GB/s bidirectional, NVIDIA A100 datasheet);
//!   A100 has no NVLS, so this is the ring. It stands for every algorithm that moves its bytes
//!   over point-to-point links (ring, tree, hierarchical, direct).
//! - η_nvls = 470 / (2·7/8·450) = 0.597: 8×H100 SXM reach 460–480 GB/s (midpoint 470), above
//!   the 450 GB/s link, which only in-network reduction allows; NVLS's bound bus bandwidth is
//!   2(n−1)/n·B = 787.5 GB/s.
//!
//! These are one pair of published figures (secondary sources, not single runs: see the csv's
//! notes); an estimate, never a bound.

use super::collective::{Algorithm, CollectiveCost};
use crate::units::{BytesPerSec, Seconds};
use serde::Serialize;

/// Bus bandwidth of nccl-tests all_reduce_perf on 8×A100 SXM4, large messages, midpoint of
/// 230–250 GB/s (`refs/parallel/parallel_published.csv`, alayanew "NCCL-tests in practice"
/// reference table), B/s.
pub const A100_RING_BUSBW: f64 = 240e9;
/// NVLink 3 per GPU per direction: 600 GB/s bidirectional ÷ 2 (NVIDIA A100 datasheet), B/s.
pub const A100_NVLINK: f64 = 300e9;
/// Bus bandwidth of nccl-tests all_reduce_perf on 8×H100 SXM, large messages, midpoint of
/// 460–480 GB/s (same row), B/s.
pub const H100_NVLS_BUSBW: f64 = 470e9;
/// NVLink 4 per GPU per direction: 900 GB/s bidirectional ÷ 2 (NVIDIA H100 datasheet), B/s.
pub const H100_NVLINK: f64 = 450e9;

/// Source of the efficiencies.
pub const EFFICIENCY_SOURCE: &str = "nccl-tests all_reduce_perf bus bandwidth, 8-GPU nodes, \
large messages (refs/parallel/parallel_published.csv): 8×A100 230–250 GB/s over NVLink 3 300 GB/s \
(η_ring = 240/300); 8×H100 460–480 GB/s over NVLS's bound 2·7/8·450 GB/s (η_nvls = 470/787.5)";

/// η of `algorithm`: the share of the bound's transfer rate NCCL reaches (module docs).
pub fn efficiency(algorithm: Algorithm) -> f64 {
    match algorithm {
        Algorithm::Nvls => H100_NVLS_BUSBW / (2.0 * 7.0 / 8.0 * H100_NVLINK),
        _ => A100_RING_BUSBW / A100_NVLINK,
    }
}

/// An estimated time of a collective: the bound's latency, its transfer at an efficiency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// t_α + t_β / η, seconds.
    pub time: Seconds,
    /// η, the share of the link's speed assumed.
    pub efficiency: f64,
    /// S / time, B/s (0 for a zero time).
    pub algbw: BytesPerSec,
    /// algbw × the bus factor, B/s.
    pub busbw: BytesPerSec,
}

impl CollectiveCost {
    /// The estimate at efficiency η (0 < η ≤ 1): `t_α + t_β / η`. An η outside (0, 1] is taken
    /// as 1 (the bound).
    pub fn estimate_at(&self, efficiency: f64) -> Estimate {
        let eta = if efficiency > 0.0 && efficiency <= 1.0 {
            efficiency
        } else {
            1.0
        };
        let time = self.latency + Seconds(self.transfer.get() / eta);
        let algbw = if time.get() > 0.0 {
            self.bytes / time
        } else {
            BytesPerSec::ZERO
        };
        Estimate {
            time,
            efficiency: eta,
            algbw,
            busbw: algbw * super::collective::bus_factor(self.collective, self.group.ranks),
        }
    }

    /// The estimate at the algorithm's published [`efficiency`].
    pub fn estimate(&self) -> Estimate {
        self.estimate_at(efficiency(self.algorithm))
    }
}
