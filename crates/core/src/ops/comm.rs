//! A collective as an operator of the graph: no FLOPs and no main-memory traffic of its own
//! account, its bytes on a link, its time from the α–β model of that link
//! ([`crate::comm::collective`]).

use crate::comm::collective::{bus_factor, Algorithm, Collective, CollectiveCost, Protocol, Tier};
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

    /// f, nccl-tests' bus factor of this collective over its ranks ([`bus_factor`],
    /// `doc/PERFORMANCE.md`): 2(n−1)/n for an all-reduce, (n−1)/n for a reduce-scatter,
    /// all-gather or all-to-all, 1 for a broadcast or send-recv. Dimensionless.
    #[inline]
    pub fn bus_factor(&self) -> f64 {
        bus_factor(self.collective, self.group.ranks)
    }

    /// Bus bandwidth, (S / time) × f (nccl-tests `busbw`), B/s; 0 when the time is 0. Computed
    /// as [`CollectiveCost::busbw`] of the cost it was made from, bit for bit.
    #[inline]
    pub fn busbw(&self) -> BytesPerSec {
        let t = self.time();
        if t.get() > 0.0 {
            (self.bytes / t) * self.bus_factor()
        } else {
            BytesPerSec::ZERO
        }
    }

    /// The bus bandwidth the transfer term alone allows, S · f / t_β, B/s: what
    /// [`Communication::busbw`] tends to as S grows under the same algorithm and protocol
    /// (t_β = D / B and every traffic D of [`crate::comm::alpha_beta`] is proportional to S, so
    /// this does not depend on S). A ring or direct collective in the Simple protocol inside a
    /// node sends D = f·S, and this is the link's bandwidth B (why nccl-tests defines the bus
    /// factor); NVLS's all-reduce sends D = S, f·B; the LL protocol carries half its bytes as
    /// flags, B/2. Infinite when t_β is 0 (nothing crosses a link).
    #[inline]
    pub fn busbw_ceiling(&self) -> BytesPerSec {
        BytesPerSec(self.bytes.get() * self.bus_factor() / self.transfer.get())
    }

    /// The message size at which this collective's latency and transfer terms are equal under
    /// the same algorithm and protocol, S · t_α / t_β (t_α does not depend on S, t_β is
    /// proportional to it), bytes: where the latency roof S · f / t_α meets
    /// [`Communication::busbw_ceiling`], the ridge point of the α–β model. Infinite when t_β
    /// is 0.
    #[inline]
    pub fn ridge_bytes(&self) -> Bytes {
        Bytes(self.bytes.get() * self.latency.get() / self.transfer.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cited::Cited;
    use crate::comm::collective::collective_cost_in;
    use crate::comm::{Fabric, LinkTier};

    #[test]
    fn bus_bandwidth_ceiling_and_ridge_by_hand() -> Result<(), crate::comm::CollectiveError> {
        // A ring all-reduce of 64 MiB over 8 ranks of one node, 450 GB/s and α = 1 µs, Simple.
        let fabric = Fabric {
            scale_up: Some(LinkTier::new(
                "NVLink",
                Cited::new(BytesPerSec(450e9), "test"),
                Cited::new(Seconds(1e-6), "test"),
            )),
            ..Fabric::default()
        };
        let s = 64.0 * 1024.0 * 1024.0;
        let cost = collective_cost_in(
            Collective::AllReduce,
            Bytes(s),
            Group::in_one_node(8),
            &fabric,
            Algorithm::Ring,
            Protocol::Simple,
        )?;
        let c = Communication::of(&cost);
        // f = 2·7/8; busbw as nccl-tests and the cost compute it.
        assert_eq!(c.bus_factor(), 1.75);
        assert_eq!(c.busbw(), cost.busbw());
        // t_β = 2·7/8·S / B, so S·f / t_β = B.
        assert!((c.busbw_ceiling().get() - 450e9).abs() <= 1e-6 * 450e9);
        // t_α = 8.4 µs + 2·7 · 1 µs = 22.4 µs; the ridge t_α·B/f = 22.4e-6 · 450e9 / 1.75.
        assert!((c.latency.get() - 22.4e-6).abs() < 1e-15);
        let ridge = 22.4e-6 * 450e9 / 1.75;
        assert!((c.ridge_bytes().get() - ridge).abs() <= 1e-9 * ridge);
        Ok(())
    }
}
