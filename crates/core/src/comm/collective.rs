//! What a collective over a group of devices costs on a fabric: the α–β lower bound of the
//! algorithm NCCL would run, and an estimate beside it.
//!
//! A collective of S bytes (the buffer as nccl-tests counts it: the whole vector of an
//! all-reduce, the full output of an all-gather, the full input of a reduce-scatter) over a
//! [`Group`] costs `t = t_α + t_β`: a latency term (a base latency and α per step, from NCCL's
//! tuning model) and a transfer term (the bytes one rank sends over the link that bounds it,
//! over that link's per-direction bandwidth). The formulas are in [`super::alpha_beta`], written
//! once over [`crate::formula::Arith`] so that `--explain` prints the formula that computed the
//! number; the estimate's efficiencies are in [`super::estimate`].
//!
//! ```
//! use roofline_core::cited::Cited;
//! use roofline_core::comm::collective::{collective_cost, Algorithm, AlgorithmChoice, Collective};
//! use roofline_core::comm::{Fabric, Group, LinkTier};
//! use roofline_core::units::{Bytes, BytesPerSec, Seconds};
//!
//! let fabric = Fabric {
//!     scale_up: Some(LinkTier::new(
//!         "NVLink 3",
//!         Cited::new(BytesPerSec(300e9), "600 GB/s bidirectional ÷ 2"),
//!         Cited::new(Seconds(3.4e-6), "NCCL tuning.cc hwLatencies[NVLINK][Ring][Simple]"),
//!     )),
//!     ..Fabric::default()
//! };
//! let c = collective_cost(
//!     Collective::AllReduce,
//!     Bytes(64.0 * 1024.0 * 1024.0),
//!     Group::in_one_node(8),
//!     &fabric,
//!     AlgorithmChoice::Auto,
//! )?;
//! assert_eq!(c.algorithm, Algorithm::Ring);
//! // 2·7/8 of 67,108,864 B at 300 GB/s: 391.47 µs.
//! assert_eq!(c.traffic, Bytes(117_440_512.0));
//! assert!((c.transfer.get() - 117_440_512.0 / 300e9).abs() < 1e-15);
//! # Ok::<(), roofline_core::comm::collective::CollectiveError>(())
//! ```

use super::alpha_beta::{terms, Shape};
use super::fabric::{Fabric, LinkTier};
use super::system::Group;
use crate::units::{Bytes, BytesPerSec, Seconds};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// Largest buffer accepted: 2^50 B (1 PiB), beyond any device's memory.
pub const MAX_BYTES: f64 = 1_125_899_906_842_624.0;

/// A collective operation, as NCCL names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    /// Every rank ends with the sum of all ranks' S-byte buffers.
    AllReduce,
    /// Every rank ends with its 1/n share of the sum (S is the full input).
    ReduceScatter,
    /// Every rank ends with all ranks' S/n shares (S is the full output).
    AllGather,
    /// Every rank sends a distinct S/n slice of its S-byte buffer to every rank.
    AllToAll,
    /// One rank's S bytes reach every rank.
    Broadcast,
    /// One rank sends S bytes to another (a pipeline stage boundary).
    SendRecv,
}

impl Collective {
    /// Every collective, in the order of the enum.
    pub const ALL: [Collective; 6] = [
        Collective::AllReduce,
        Collective::ReduceScatter,
        Collective::AllGather,
        Collective::AllToAll,
        Collective::Broadcast,
        Collective::SendRecv,
    ];

    /// The name `roofline op` takes (`all-reduce`).
    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all-reduce",
            Collective::ReduceScatter => "reduce-scatter",
            Collective::AllGather => "all-gather",
            Collective::AllToAll => "all-to-all",
            Collective::Broadcast => "broadcast",
            Collective::SendRecv => "send-recv",
        }
    }
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no collective, kept (at most 40 characters) for the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    /// What was given.
    pub given: String,
    /// What it should have been (`collective`, `algorithm`).
    pub kind: &'static str,
    /// The names accepted.
    pub accepted: &'static str,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is no {}; expected one of {}",
            self.given, self.kind, self.accepted
        )
    }
}
impl std::error::Error for UnknownName {}

fn unknown(s: &str, kind: &'static str, accepted: &'static str) -> UnknownName {
    UnknownName {
        given: s.chars().take(40).collect(),
        kind,
        accepted,
    }
}

impl FromStr for Collective {
    type Err = UnknownName;
    /// `all-reduce`, `reduce-scatter`, `all-gather`, `all-to-all`, `broadcast`, `send-recv`
    /// (underscores and case accepted: `all_reduce`, `AllReduce`).
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        let key: String = s
            .trim()
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .flat_map(char::to_lowercase)
            .collect();
        Collective::ALL
            .into_iter()
            .find(|c| c.name().replace('-', "") == key)
            .ok_or_else(|| {
                unknown(
                    s,
                    "collective",
                    "all-reduce, reduce-scatter, all-gather, all-to-all, broadcast, send-recv",
                )
            })
    }
}

/// How a collective is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// A ring of the n ranks (NCCL's ring; across nodes, one ring per NIC rail).
    Ring,
    /// NCCL's double binary tree (all-reduce only): chains inside a node, trees across nodes.
    Tree,
    /// In-network reduction in the NVLink switch (NVLink SHARP, NCCL's NVLS since 2.17.1),
    /// inside one NVLink domain: all-reduce, reduce-scatter, all-gather.
    Nvls,
    /// Across nodes: reduce-scatter inside each node, the collective of the 1/g shares across
    /// nodes (each GPU on its own NIC rail), all-gather inside each node.
    Hierarchical,
    /// Point to point: send-recv, and all-to-all as n−1 pairwise exchanges.
    Direct,
}

impl Algorithm {
    /// Every algorithm, in the order Auto tries them after the one that always runs (ring, or
    /// direct for all-to-all and send-recv); a tie keeps the earlier.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Ring,
        Algorithm::Nvls,
        Algorithm::Tree,
        Algorithm::Hierarchical,
        Algorithm::Direct,
    ];

    /// The name `--algorithm` takes (`ring`).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Tree => "tree",
            Algorithm::Nvls => "nvls",
            Algorithm::Hierarchical => "hierarchical",
            Algorithm::Direct => "direct",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = UnknownName;
    /// `ring`, `tree`, `nvls`, `hierarchical`, `direct` (any case).
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        let key = s.trim().to_ascii_lowercase();
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == key)
            .ok_or_else(|| {
                unknown(
                    s,
                    "algorithm",
                    "auto, ring, tree, nvls, hierarchical, direct",
                )
            })
    }
}

/// Which algorithm to cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AlgorithmChoice {
    /// The fastest (smallest bound) the collective, the group and the fabric allow, as NCCL's
    /// tuner picks the fastest by its own α–β model (`src/graph/tuning.cc`).
    #[default]
    Auto,
    /// This one, or an error when it cannot run here.
    Only(Algorithm),
}

impl fmt::Display for AlgorithmChoice {
    /// `auto` or the algorithm's name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AlgorithmChoice::Auto => f.write_str("auto"),
            AlgorithmChoice::Only(a) => a.fmt(f),
        }
    }
}

impl FromStr for AlgorithmChoice {
    type Err = UnknownName;
    /// `auto` or an [`Algorithm`] name.
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        if s.trim().eq_ignore_ascii_case("auto") {
            return Ok(AlgorithmChoice::Auto);
        }
        s.parse().map(AlgorithmChoice::Only)
    }
}

/// NCCL's wire protocol (NCCL `src/device/prims_*.h`): Simple moves whole buffers with a
/// fence per chunk (full bandwidth, the highest latency); LL128 moves 128-byte lines with a flag
/// word each; LL moves 8-byte words of 4 data bytes and a 4-byte flag (the lowest latency, half
/// the bandwidth). NCCL picks the fastest for each size; so does `Auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Whole buffers.
    Simple,
    /// 128-byte lines, 120 bytes of data each.
    Ll128,
    /// 8-byte words, 4 bytes of data each.
    Ll,
}

impl Protocol {
    /// Every protocol.
    pub const ALL: [Protocol; 3] = [Protocol::Simple, Protocol::Ll128, Protocol::Ll];

    /// `simple`, `ll128`, `ll`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Simple => "simple",
            Protocol::Ll128 => "ll128",
            Protocol::Ll => "ll",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// The tier of links that bounds a collective's transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// No link: one rank, or no bytes; the data stays where it is.
    Local,
    /// The scale-up fabric inside a node ([`Fabric::scale_up`]).
    ScaleUp,
    /// The network between nodes, one NIC per GPU ([`Fabric::scale_out`]).
    ScaleOut,
    /// PCIe, inside a node without a scale-up fabric ([`Fabric::pcie`]).
    Pcie,
}

impl Tier {
    /// `scale-up`, `scale-out`, `pcie`, `local`.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Local => "local",
            Tier::ScaleUp => "scale-up",
            Tier::ScaleOut => "scale-out",
            Tier::Pcie => "pcie",
        }
    }

    /// This tier's links in `fabric`, if it has them.
    pub fn link(self, fabric: &Fabric) -> Option<&LinkTier> {
        match self {
            Tier::Local => None,
            Tier::ScaleUp => fabric.scale_up.as_ref(),
            Tier::ScaleOut => fabric.scale_out.as_ref(),
            Tier::Pcie => fabric.pcie.as_ref(),
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which term of the α–β time is the larger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CommBound {
    /// The latency term α: more, smaller messages would not be slower.
    Latency,
    /// The transfer term β: the link's bandwidth bounds it.
    Bandwidth,
}

impl fmt::Display for CommBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CommBound::Latency => "latency-bound",
            CommBound::Bandwidth => "bandwidth-bound",
        })
    }
}

/// The cost of one collective: the α–β lower bound `time() = latency + transfer`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CollectiveCost {
    /// The collective.
    pub collective: Collective,
    /// The algorithm costed.
    pub algorithm: Algorithm,
    /// S, the buffer as nccl-tests counts it (`doc/PERFORMANCE.md`), bytes.
    pub bytes: Bytes,
    /// The ranks and where they sit.
    pub group: Group,
    /// Bytes one rank sends over the bounding link (per direction), bytes.
    pub traffic: Bytes,
    /// The α term: base latency plus α per step, seconds.
    pub latency: Seconds,
    /// The β term: `traffic / link`, seconds.
    pub transfer: Seconds,
    /// Per-direction bandwidth per GPU of the bounding tier, B/s (0 for [`Tier::Local`]).
    pub link: BytesPerSec,
    /// The tier that bounds the transfer.
    pub tier: Tier,
    /// α of one step inside a node (the intra-node tier's latency), seconds.
    pub alpha_intra: Seconds,
    /// α of one step between nodes (the scale-out tier's latency; 0 inside one node), seconds.
    pub alpha_inter: Seconds,
    /// NCCL's protocol; α_intra and α_inter are its per-step latencies (the catalog's Simple α
    /// × [`super::alpha_beta::alpha_ratio`]).
    pub protocol: Protocol,
}

impl CollectiveCost {
    /// A collective that moves nothing (one rank, or no bytes): zero time.
    fn free(collective: Collective, algorithm: Algorithm, bytes: Bytes, group: Group) -> Self {
        Self {
            collective,
            algorithm,
            bytes,
            group,
            traffic: Bytes::ZERO,
            latency: Seconds::ZERO,
            transfer: Seconds::ZERO,
            link: BytesPerSec::ZERO,
            tier: Tier::Local,
            alpha_intra: Seconds::ZERO,
            alpha_inter: Seconds::ZERO,
            protocol: Protocol::Simple,
        }
    }

    /// The α–β lower bound: latency + transfer, seconds.
    #[inline]
    pub fn time(&self) -> Seconds {
        self.latency + self.transfer
    }

    /// Algorithm bandwidth, S / time (nccl-tests `algbw`), B/s; 0 when the time is 0.
    #[inline]
    pub fn algbw(&self) -> BytesPerSec {
        let t = self.time().get();
        if t > 0.0 {
            self.bytes / self.time()
        } else {
            BytesPerSec::ZERO
        }
    }

    /// Bus bandwidth, algbw × [`bus_factor`] (nccl-tests `busbw`), comparable with the link
    /// speed, B/s.
    #[inline]
    pub fn busbw(&self) -> BytesPerSec {
        self.algbw() * bus_factor(self.collective, self.group.ranks)
    }

    /// [`CommBound::Latency`] when the α term is the larger, else [`CommBound::Bandwidth`].
    #[inline]
    pub fn bound(&self) -> CommBound {
        if self.latency > self.transfer {
            CommBound::Latency
        } else {
            CommBound::Bandwidth
        }
    }

    /// The shape of the α–β formula this cost evaluates ([`super::alpha_beta::terms`]), `None`
    /// for a collective that moves nothing.
    pub fn shape(&self) -> Option<Shape> {
        (self.tier != Tier::Local).then(|| Shape {
            collective: self.collective,
            algorithm: self.algorithm,
            bytes: self.bytes.get(),
            ranks: self.group.ranks,
            per_node: self.group.ranks_per_node,
            nodes: self.group.nodes(),
            tier: self.tier,
            bandwidth: self.link.get(),
            alpha_intra: self.alpha_intra.get(),
            alpha_inter: self.alpha_inter.get(),
            protocol: self.protocol,
        })
    }
}

/// nccl-tests' bus factor (`doc/PERFORMANCE.md`): busbw = algbw × factor, so that a bus
/// bandwidth compares with the link's speed whatever the rank count.
///
/// all-reduce 2(n−1)/n; reduce-scatter, all-gather, all-to-all (n−1)/n; broadcast and
/// send-recv 1. `ranks` of 0 gives 0 (and 1 gives 0 where the factor has n−1).
pub fn bus_factor(c: Collective, ranks: u32) -> f64 {
    if ranks == 0 {
        return 0.0;
    }
    let n = f64::from(ranks);
    match c {
        Collective::AllReduce => 2.0 * (n - 1.0) / n,
        Collective::ReduceScatter | Collective::AllGather | Collective::AllToAll => (n - 1.0) / n,
        Collective::Broadcast | Collective::SendRecv => 1.0,
    }
}

/// Why a collective cannot be costed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CollectiveError {
    /// The buffer size is not a finite number of bytes from 0 to [`MAX_BYTES`].
    Bytes {
        /// The value given.
        value: f64,
    },
    /// A group that cannot be placed: no ranks, no ranks per node, more per node than in all,
    /// or ranks that do not fill whole nodes.
    Group {
        /// The field at fault (`ranks`, `ranks_per_node`).
        quantity: &'static str,
        /// Its value.
        value: u32,
        /// What is wrong.
        reason: &'static str,
    },
    /// The fabric lacks the tier of links the collective needs.
    NoLink {
        /// The tier needed.
        tier: Tier,
        /// Why it is needed (`the group spans 2 nodes`).
        why: String,
    },
    /// A tier's figure is not usable: a bandwidth not finite and positive, a latency not finite
    /// and non-negative.
    Link {
        /// The tier.
        tier: Tier,
        /// `bandwidth` or `latency`.
        quantity: &'static str,
        /// The value.
        value: f64,
    },
    /// The algorithm asked for cannot run this collective on this group and fabric.
    Unsupported {
        /// The collective.
        collective: Collective,
        /// The algorithm.
        algorithm: Algorithm,
        /// Why not.
        reason: &'static str,
    },
}

impl fmt::Display for CollectiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CollectiveError::Bytes { value } => {
                write!(f, "bytes = {value} is not a size from 0 to 2^50 B (1 PiB)")
            }
            CollectiveError::Group {
                quantity,
                value,
                reason,
            } => write!(f, "{quantity} = {value}: {reason}"),
            CollectiveError::NoLink { tier, why } => {
                write!(f, "the fabric has no {tier} link, and {why}")
            }
            CollectiveError::Link {
                tier,
                quantity,
                value,
            } => write!(f, "the {tier} link's {quantity} = {value} is not usable"),
            CollectiveError::Unsupported {
                collective,
                algorithm,
                reason,
            } => write!(f, "{collective} cannot run as {algorithm}: {reason}"),
        }
    }
}
impl std::error::Error for CollectiveError {}

/// The bandwidth and latency of a tier, checked.
fn figures(tier: Tier, link: &LinkTier) -> Result<(f64, f64), CollectiveError> {
    let b = link.bandwidth.value.get();
    if !(b.is_finite() && b > 0.0) {
        return Err(CollectiveError::Link {
            tier,
            quantity: "bandwidth",
            value: b,
        });
    }
    let a = link.latency.value.get();
    if !(a.is_finite() && a >= 0.0) {
        return Err(CollectiveError::Link {
            tier,
            quantity: "latency",
            value: a,
        });
    }
    Ok((b, a))
}

/// The links a group uses: the intra-node tier (and its figures) and, across nodes, the
/// scale-out tier.
#[derive(Clone, Copy)]
struct Links {
    intra: Tier,
    b_intra: f64,
    a_intra: f64,
    /// Scale-out bandwidth and latency, when the group spans nodes.
    inter: Option<(f64, f64)>,
}

fn links(group: Group, fabric: &Fabric) -> Result<Links, CollectiveError> {
    let nodes = group.nodes();
    // One rank per node needs no intra-node link; its figures are then unused.
    let (intra, b_intra, a_intra) = match (&fabric.scale_up, &fabric.pcie) {
        (Some(l), _) => {
            let (b, a) = figures(Tier::ScaleUp, l)?;
            (Tier::ScaleUp, b, a)
        }
        (None, Some(l)) => {
            let (b, a) = figures(Tier::Pcie, l)?;
            (Tier::Pcie, b, a)
        }
        (None, None) if group.ranks_per_node <= 1 => (Tier::ScaleUp, f64::INFINITY, 0.0),
        (None, None) => {
            return Err(CollectiveError::NoLink {
                tier: Tier::ScaleUp,
                why: format!(
                    "{} ranks share a node (no scale-up or PCIe link given)",
                    group.ranks_per_node
                ),
            })
        }
    };
    let inter = if nodes > 1 {
        let l = fabric
            .scale_out
            .as_ref()
            .ok_or_else(|| CollectiveError::NoLink {
                tier: Tier::ScaleOut,
                why: format!("the group spans {nodes} nodes"),
            })?;
        Some(figures(Tier::ScaleOut, l)?)
    } else {
        None
    };
    Ok(Links {
        intra,
        b_intra,
        a_intra,
        inter,
    })
}

/// Why `algorithm` cannot run `c` here, or `None` when it can.
fn unsupported(
    c: Collective,
    algorithm: Algorithm,
    group: Group,
    fabric: &Fabric,
) -> Option<&'static str> {
    use Collective::*;
    let multi = group.nodes() > 1;
    match algorithm {
        Algorithm::Ring => matches!(c, AllToAll | SendRecv)
            .then_some("a ring carries reductions, gathers and broadcasts; this runs direct"),
        Algorithm::Tree => (c != AllReduce).then_some("NCCL's tree runs all-reduce only"),
        Algorithm::Nvls => {
            if !matches!(c, AllReduce | ReduceScatter | AllGather) {
                Some("NVLS runs all-reduce, reduce-scatter and all-gather only")
            } else if !fabric.in_network_reduction || fabric.scale_up.is_none() {
                Some("the fabric has no in-network reduction (NVLink SHARP)")
            } else if multi {
                Some("NVLS reduces inside one NVLink domain; this group spans nodes")
            } else {
                None
            }
        }
        Algorithm::Hierarchical => {
            if !matches!(c, AllReduce | ReduceScatter | AllGather) {
                Some("the hierarchical algorithm runs all-reduce, reduce-scatter and all-gather")
            } else if !multi {
                Some("the group sits in one node; there is no inter-node phase")
            } else {
                None
            }
        }
        Algorithm::Direct => (!matches!(c, AllToAll | SendRecv))
            .then_some("direct point-to-point runs send-recv and all-to-all only"),
    }
}

/// The cost of `algorithm` for `c`, on `links`, checked as supported.
fn cost_of(
    c: Collective,
    algorithm: Algorithm,
    protocol: Protocol,
    bytes: f64,
    group: Group,
    l: Links,
) -> CollectiveCost {
    let nodes = group.nodes();
    let (b_inter, a_inter) = l.inter.unwrap_or((0.0, 0.0));
    let a_inter = a_inter * super::alpha_beta::alpha_ratio(Tier::ScaleOut, protocol);
    let a_intra = l.a_intra * super::alpha_beta::alpha_ratio(l.intra, protocol);
    let base = Shape {
        collective: c,
        algorithm,
        bytes,
        ranks: group.ranks,
        per_node: group.ranks_per_node,
        nodes,
        tier: l.intra,
        bandwidth: l.b_intra,
        alpha_intra: a_intra,
        alpha_inter: a_inter,
        protocol,
    };
    // Across nodes the two tiers carry their shares at once: the slower bounds (a tie goes to
    // the network).
    let shape = if nodes > 1 {
        let inter = Shape {
            tier: Tier::ScaleOut,
            bandwidth: b_inter,
            ..base
        };
        let t_intra = terms::<f64>((), &base).transfer;
        let t_inter = terms::<f64>((), &inter).transfer;
        if t_intra > t_inter {
            base
        } else {
            inter
        }
    } else {
        base
    };
    let t = terms::<f64>((), &shape);
    CollectiveCost {
        collective: c,
        algorithm,
        bytes: Bytes(bytes),
        group,
        traffic: Bytes(t.traffic),
        latency: Seconds(t.latency),
        transfer: Seconds(t.transfer),
        link: BytesPerSec(shape.bandwidth),
        tier: shape.tier,
        alpha_intra: Seconds(a_intra),
        alpha_inter: Seconds(a_inter),
        protocol,
    }
}

/// The protocols NCCL runs `algorithm` in: LL and LL128 for the ring and the tree, Simple for
/// every algorithm (NVLS, the hierarchical reductions as modelled and point-to-point use
/// Simple only).
fn protocols(algorithm: Algorithm) -> &'static [Protocol] {
    match algorithm {
        Algorithm::Ring | Algorithm::Tree => &Protocol::ALL,
        _ => &[Protocol::Simple],
    }
}

/// The fastest protocol of `algorithm` (a tie keeps the earlier: Simple first).
fn best_of(
    c: Collective,
    algorithm: Algorithm,
    bytes: f64,
    group: Group,
    l: Links,
) -> CollectiveCost {
    let mut best = cost_of(c, algorithm, Protocol::Simple, bytes, group, l);
    for &p in &protocols(algorithm)[1..] {
        let x = cost_of(c, algorithm, p, bytes, group, l);
        if x.time() < best.time() {
            best = x;
        }
    }
    best
}

/// [`collective_cost`] of one algorithm in one protocol, as NCCL runs it when both are forced
/// (`NCCL_ALGO`, `NCCL_PROTO`): for checking a formula by hand, or a tuner's choice.
///
/// # Errors
/// As [`collective_cost`]; and a protocol the algorithm does not run in (LL and LL128 are the
/// ring's and the tree's).
pub fn collective_cost_in(
    c: Collective,
    bytes: Bytes,
    group: Group,
    fabric: &Fabric,
    algorithm: Algorithm,
    protocol: Protocol,
) -> Result<CollectiveCost, CollectiveError> {
    let checked = collective_cost(c, bytes, group, fabric, AlgorithmChoice::Only(algorithm))?;
    if checked.tier == Tier::Local || checked.protocol == protocol {
        return Ok(checked);
    }
    if !protocols(algorithm).contains(&protocol) {
        return Err(CollectiveError::Unsupported {
            collective: c,
            algorithm,
            reason: "LL and LL128 run in NCCL's ring and tree only",
        });
    }
    Ok(cost_of(
        c,
        algorithm,
        protocol,
        bytes.get(),
        group,
        links(group, fabric)?,
    ))
}

/// The cost of collective `c` of `bytes` (S, as nccl-tests counts it) over `group` on
/// `fabric`, by the algorithm `choice` names or, for [`AlgorithmChoice::Auto`], the fastest
/// one the fabric supports. Pure and allocation-free on success.
///
/// A group of one rank, or a buffer of 0 bytes, costs nothing ([`Tier::Local`]). The formulas
/// of each algorithm, with their sources, are in [`super::alpha_beta`].
///
/// # Errors
/// [`CollectiveError::Bytes`] for a size not finite, negative or above [`MAX_BYTES`];
/// [`CollectiveError::Group`] for a group of no ranks, no ranks per node, more ranks per node
/// than ranks, or ranks not filling whole nodes; [`CollectiveError::NoLink`] when the fabric
/// lacks the intra-node link (several ranks in a node) or the scale-out network (several
/// nodes); [`CollectiveError::Link`] for a tier with an unusable bandwidth or latency;
/// [`CollectiveError::Unsupported`] when the algorithm asked for cannot run here.
pub fn collective_cost(
    c: Collective,
    bytes: Bytes,
    group: Group,
    fabric: &Fabric,
    choice: AlgorithmChoice,
) -> Result<CollectiveCost, CollectiveError> {
    let s = bytes.get();
    if !(s.is_finite() && (0.0..=MAX_BYTES).contains(&s)) {
        return Err(CollectiveError::Bytes { value: s });
    }
    let bad = |quantity, value, reason| CollectiveError::Group {
        quantity,
        value,
        reason,
    };
    if group.ranks == 0 {
        return Err(bad("ranks", 0, "a collective needs at least one rank"));
    }
    if group.ranks_per_node == 0 {
        return Err(bad("ranks_per_node", 0, "a node holds at least one rank"));
    }
    if group.ranks_per_node > group.ranks {
        return Err(bad(
            "ranks_per_node",
            group.ranks_per_node,
            "more ranks per node than ranks in the group",
        ));
    }
    if !group.ranks.is_multiple_of(group.ranks_per_node) {
        return Err(bad(
            "ranks",
            group.ranks,
            "the ranks do not fill whole nodes of ranks_per_node",
        ));
    }
    if let AlgorithmChoice::Only(a) = choice {
        if let Some(reason) = unsupported(c, a, group, fabric) {
            return Err(CollectiveError::Unsupported {
                collective: c,
                algorithm: a,
                reason,
            });
        }
    }
    // Auto starts from the algorithm that always runs; a tie keeps it.
    let default = match c {
        Collective::AllToAll | Collective::SendRecv => Algorithm::Direct,
        _ => Algorithm::Ring,
    };
    if group.ranks == 1 || s == 0.0 {
        let a = match choice {
            AlgorithmChoice::Only(a) => a,
            AlgorithmChoice::Auto => default,
        };
        return Ok(CollectiveCost::free(c, a, bytes, group));
    }
    let l = links(group, fabric)?;
    match choice {
        AlgorithmChoice::Only(a) => Ok(best_of(c, a, s, group, l)),
        AlgorithmChoice::Auto => {
            let mut best = best_of(c, default, s, group, l);
            for a in Algorithm::ALL {
                if a != default && unsupported(c, a, group, fabric).is_none() {
                    let x = best_of(c, a, s, group, l);
                    if x.time() < best.time() {
                        best = x;
                    }
                }
            }
            Ok(best)
        }
    }
}
