//! The data of the communication panel ([`CommChart`]): the α–β model of the collectives a
//! parallel step runs, drawn as a roofline of its own under the operators' roofline.
//!
//! A collective does no FLOPs, so it has no place on the FLOP/s-against-intensity roofline. The
//! α–β model (Hockney's latency–bandwidth model, Parallel Computing 20(3), 1994; the terms of
//! [`roofline_core::comm::alpha_beta`]) gives it one of its own, on the axes nccl-tests reports
//! (`doc/PERFORMANCE.md`):
//!
//! - **x**: S, the collective's bytes as nccl-tests counts them ([`Communication::bytes`]: the
//!   whole vector of an all-reduce, the full output of an all-gather, the full input of a
//!   reduce-scatter), bytes, log axis.
//! - **y**: the bus bandwidth it achieves, (S / t) · f ([`Communication::busbw`]), B/s, log
//!   axis; t = t_α + t_β is the α–β time of one execution (the collective's row time,
//!   [`roofline_core::analysis::OpRow::link`]) and f nccl-tests' bus factor
//!   ([`Communication::bus_factor`], [`roofline_core::comm::bus_factor`]).
//! - **Link roofs** ([`LinkRoof`]), horizontal: one per tier of links the collectives are bound
//!   by, y = B, the tier's bandwidth per GPU per direction ([`Communication::link`], the
//!   fabric's [`roofline_core::comm::LinkTier::bandwidth`]): what nccl-tests compares a bus
//!   bandwidth with.
//! - **Latency roofs** ([`CommRoof`]), diagonal (slope 1 on log-log axes): one per algorithm
//!   and protocol, y = S · f / t_α, since t ≥ t_α; it rises to the **bandwidth ceiling**
//!   y = S · f / t_β ([`Communication::busbw_ceiling`], independent of S), which is B for a
//!   ring or direct collective in NCCL's Simple protocol inside a node (it sends D = f · S);
//!   NVLS's all-reduce reaches f · B, the LL protocol B / 2; a ceiling other than B is drawn as
//!   a thin roof of its own. The two meet at the **ridge** S* = t_α · ceiling / f = S · t_α /
//!   t_β ([`Communication::ridge_bytes`]), the message size at which the latency and transfer
//!   terms are equal; in bus bytes S* · f = t_α · B for a ring.
//! - A point lies under both roofs: 1 / busbw = 1 / (S · f / t_α) + 1 / (S · f / t_β) (the
//!   time is the sum of the terms, not their maximum), so at the ridge it sits at half the
//!   ceiling.
//!
//! Worked example: an all-reduce of S = 64 MiB = 67,108,864 B over 8 GPUs of one node, ring in
//! the Simple protocol, on links of B = 450 GB/s and α = 1 µs a step: f = 2 · 7/8 = 1.75,
//! t_α = 8.4 µs + 2 · 7 · 1 µs = 22.4 µs (NCCL's ring base latency and 14 steps), t_β = 1.75 ·
//! S / B = 260.98 µs, busbw = S · f / (t_α + t_β) = 414.4 GB/s under the 450 GB/s roof, ridge
//! S* = 22.4 µs · 450 GB/s / 1.75 = 5.76 MB (t_α · B = 10.08 MB of bus bytes).

use super::chart::Series;
use crate::units::{human_bytes, human_bytes_per_s, human_seconds};
use roofline_core::comm::collective::{Algorithm, Collective, Protocol, Tier};
use roofline_core::comm::Fabric;
use roofline_core::ops::Communication;

/// One tier of links: the horizontal roof y = B.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRoof {
    /// The tier's links by name (`NVLink 4 + NVSwitch`), from the fabric; the tier's name
    /// (`scale-up`) when the fabric does not name it.
    pub name: String,
    /// Which tier.
    pub tier: Tier,
    /// B, its bandwidth per GPU per direction ([`Communication::link`]), B/s.
    pub bandwidth: f64,
}

/// The latency roof and bandwidth ceiling of one algorithm and protocol on one tier, shared by
/// the collectives with the same α–β shape (equal t_α, f and ceiling).
#[derive(Debug, Clone, PartialEq)]
pub struct CommRoof {
    /// The collectives that share it, in the order first met.
    pub collectives: Vec<Collective>,
    /// Their algorithm.
    pub algorithm: Algorithm,
    /// Their protocol.
    pub protocol: Protocol,
    /// The index of its tier in [`CommChart::links`].
    pub link: usize,
    /// t_α, the latency term of one execution ([`Communication::latency`]), seconds.
    pub latency: f64,
    /// f, the bus factor ([`Communication::bus_factor`]).
    pub bus_factor: f64,
    /// The bandwidth ceiling S · f / t_β ([`Communication::busbw_ceiling`]), B/s.
    pub ceiling: f64,
}

impl CommRoof {
    /// The collectives and how they run: `all-reduce ring ll`, `reduce-scatter/all-gather nvls
    /// simple`.
    pub fn label(&self) -> String {
        let names: Vec<&str> = self.collectives.iter().map(|c| c.name()).collect();
        format!("{} {} {}", names.join("/"), self.algorithm, self.protocol)
    }

    /// The latency roof at message size `s` bytes: s · f / t_α, B/s (infinite for t_α = 0).
    pub fn latency_roof(&self, s: f64) -> f64 {
        s * self.bus_factor / self.latency
    }

    /// The ridge: the message size where the latency roof meets the ceiling, t_α · ceiling / f,
    /// bytes (where t_α = t_β; [`Communication::ridge_bytes`]); 0 for t_α = 0.
    pub fn ridge(&self) -> f64 {
        self.latency * self.ceiling / self.bus_factor
    }
}

/// One collective as a point of the communication panel.
#[derive(Debug, Clone, PartialEq)]
pub struct CommPoint {
    /// Its node's name (`attention.tp_reduce`).
    pub label: String,
    /// [`Series::PrefillCollective`] or [`Series::DecodeCollective`].
    pub series: Series,
    /// Which collective (`all-reduce`).
    pub collective: String,
    /// S, bytes (x).
    pub bytes: f64,
    /// The bus bandwidth achieved, (S / t) · f, B/s (y).
    pub busbw: f64,
    /// The index of its roof in [`CommChart::roofs`].
    pub roof: usize,
    /// Tooltip lines (its numbers).
    pub tooltip: Vec<String>,
}

/// Everything the communication panel shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CommChart {
    /// The panel's title.
    pub title: String,
    /// A line under it.
    pub subtitle: String,
    /// The tiers the collectives are bound by, in the order first met.
    pub links: Vec<LinkRoof>,
    /// One roof per algorithm and protocol, in the order first met.
    pub roofs: Vec<CommRoof>,
    /// The collectives.
    pub points: Vec<CommPoint>,
    /// Collectives left out because they cross no link (one rank, or no bytes: no time, no
    /// place on log axes), by name.
    pub omitted: Vec<String>,
}

/// Whether two positive figures are equal to nine significant figures.
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

impl CommChart {
    /// An empty panel called `title`, `subtitle` under it.
    pub fn new(title: impl Into<String>, subtitle: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            subtitle: subtitle.into(),
            ..Self::default()
        }
    }

    /// Adds collective `c` (node `name`, run `count` times a forward pass) of the stage
    /// `series` belongs to; `prefix` starts its tooltip (`decode · `) and `fabric` names its
    /// links. A collective with no time or no transfer (it crosses no link) is listed in
    /// [`CommChart::omitted`] instead.
    pub fn push(
        &mut self,
        fabric: &Fabric,
        series: Series,
        prefix: &str,
        name: &str,
        count: u64,
        c: &Communication,
    ) {
        let (busbw, ceiling) = (c.busbw().get(), c.busbw_ceiling().get());
        let s = c.bytes.get();
        let usable = |v: f64| v.is_finite() && v > 0.0;
        if !(usable(s) && usable(busbw) && usable(ceiling) && c.tier != Tier::Local) {
            if !self.omitted.iter().any(|o| o == name) {
                self.omitted.push(name.to_string());
            }
            return;
        }
        let link_name = c
            .tier
            .link(fabric)
            .map_or_else(|| c.tier.name().to_string(), |l| l.name.clone());
        let b = c.link.get();
        let link = match self
            .links
            .iter()
            .position(|l| l.tier == c.tier && same(l.bandwidth, b))
        {
            Some(i) => i,
            None => {
                self.links.push(LinkRoof {
                    name: link_name.clone(),
                    tier: c.tier,
                    bandwidth: b,
                });
                self.links.len() - 1
            }
        };
        let (latency, f) = (c.latency.get(), c.bus_factor());
        let roof = match self.roofs.iter().position(|r| {
            r.link == link
                && r.algorithm == c.algorithm
                && r.protocol == c.protocol
                && same(r.latency, latency)
                && same(r.bus_factor, f)
                && same(r.ceiling, ceiling)
        }) {
            Some(i) => {
                let r = &mut self.roofs[i];
                if !r.collectives.contains(&c.collective) {
                    r.collectives.push(c.collective);
                }
                i
            }
            None => {
                self.roofs.push(CommRoof {
                    collectives: vec![c.collective],
                    algorithm: c.algorithm,
                    protocol: c.protocol,
                    link,
                    latency,
                    bus_factor: f,
                    ceiling,
                });
                self.roofs.len() - 1
            }
        };
        self.points.push(CommPoint {
            label: name.to_string(),
            series,
            collective: c.collective.to_string(),
            bytes: s,
            busbw,
            roof,
            tooltip: comm_tooltip(prefix, name, count, c, &link_name),
        });
    }
}

/// The tooltip of one collective: what it is, where it runs, its α–β terms, its bus bandwidth,
/// ceiling and ridge, each with the formula that gives it.
pub fn comm_tooltip(
    prefix: &str,
    name: &str,
    count: u64,
    c: &Communication,
    link_name: &str,
) -> Vec<String> {
    let (lat, xfer, t) = (c.latency.get(), c.transfer.get(), c.time().get());
    let nodes = c.group.nodes();
    let lines = vec![
        format!(
            "{prefix}{name} ({}){}",
            c.collective,
            if count > 1 {
                format!(", ×{count} per forward pass")
            } else {
                String::new()
            }
        ),
        format!(
            "S = {} over {} ranks in {} node{}, {} {}, on {link_name} ({})",
            human_bytes(c.bytes.get()),
            c.group.ranks,
            nodes,
            if nodes == 1 { "" } else { "s" },
            c.algorithm,
            c.protocol,
            c.tier
        ),
        if lat > xfer {
            "a collective, bound by the link's latency".to_string()
        } else {
            "a collective, bound by the link's bandwidth".to_string()
        },
        format!(
            "t = t_α + t_β = {} + {} = {}{}",
            human_seconds(lat),
            human_seconds(xfer),
            human_seconds(t),
            if count > 1 {
                format!(" (×{count} = {})", human_seconds(t * count as f64))
            } else {
                String::new()
            }
        ),
        format!(
            "bus bandwidth S·f/t = {} (f = {:.4}), of the link's {} per direction",
            human_bytes_per_s(c.busbw().get()),
            c.bus_factor(),
            human_bytes_per_s(c.link.get())
        ),
        format!(
            "ceiling S·f/t_β = {} · ridge S·t_α/t_β = {}",
            human_bytes_per_s(c.busbw_ceiling().get()),
            human_bytes(c.ridge_bytes().get())
        ),
    ];
    lines
}
