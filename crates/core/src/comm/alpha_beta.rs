//! The α–β time of a collective, written once over [`Arith`]: `t = t_α + t_β`, the latency term
//! (a base latency and α per step) and the transfer term `t_β = D / B`, D the bytes one rank
//! sends over the bounding link and B that link's bandwidth per GPU per direction.
//!
//! Symbols: S the buffer (bytes, as nccl-tests counts it), n ranks, g ranks per node, N nodes,
//! α_i and α_o the per-step latencies inside a node and between nodes (the tiers' `latency`),
//! L the base latency of the algorithm. Sources:
//!
//! - Traffic per rank: nccl-tests `doc/PERFORMANCE.md` (all-reduce 2(n−1)/n·S, reduce-scatter
//!   and all-gather (n−1)/n·S, broadcast S); the α–β ring (Thakur, Rabenseifner and Gropp,
//!   "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005):
//!   2(n−1) steps for all-reduce, n−1 for reduce-scatter, all-gather and the pipelined
//!   broadcast; `refs/parallel/README.md` for the hierarchical all-reduce.
//! - Latency: NCCL 2.30.7 `src/graph/tuning.cc`, `ncclTunerConstantsDefaults`: `baseLatencies`
//!   per protocol ([`base_latency`]; Simple: Ring and Tree 8.4 µs), NVLS 0, and the per-step α
//!   of LL and LL128 as the Simple α × [`alpha_ratio`]; an NVLS collective's latency is
//!   `hwLatencies[NVLINK][NVLS][Simple]` = 25 µs alone (`latencies = intraLat`); a ring's is
//!   `baseLat + (nsteps − nInterSteps)·intraLat + nInterSteps·interLat` with nInterSteps =
//!   2(N−1) for all-reduce, N−1 otherwise; a tree's `baseLat + 2·((n/N − 1)·intraLat +
//!   log2i(N)·interLat)`.
//! - Tree bandwidth: NCCL's double binary tree (Jeaugey, "Massively Scale Your Deep Learning
//!   Training with NCCL 2.4", NVIDIA technical blog, 2019): each rank sends and receives about
//!   2S in all (S/2 up and S/2 down each of two trees, as an inner node of one and a leaf of the
//!   other), the ring's 2(n−1)/n·S at large n; `tuning.cc` converts a tree's bus bandwidth to
//!   algorithm bandwidth by 0.5 (t = 2S/B). Inside a node NCCL's trees are chains, so their
//!   latency grows with g − 1 like a ring's.
//! - NVLS (NVLink SHARP: NCCL 2.17.1 release, commit 5d3ab08b, "Add new NVLS algorithm for
//!   allreduce using NVLink SHARP (intra-node only)"; reduce-scatter and all-gather in the
//!   2.30.7 tuner; NVIDIA technical blog "Upgrading Multi-GPU Interconnectivity with the
//!   Third-Generation NVIDIA NVSwitch"): the switch reduces (PTX `multimem.ld_reduce`) and
//!   multicasts (`multimem.st`), so an
//!   all-reduce sends each byte of S once and receives each once per GPU (D = S, against the
//!   ring's 2(n−1)/n·S: bus bandwidth up to 2(n−1)/n × the link). Reduce-scatter and all-gather
//!   gain latency but no bytes: D = (n−1)/n·S (`tuning.cc` scales NVLS reduce-scatter and
//!   all-gather bandwidth by (ppn−1)/ppn).
//! - Across nodes (N > 1), each GPU with its own NIC (rail-optimised): a flat ring runs one
//!   ring per rail, so a rank sends (g−1)/g of its traffic over the scale-up tier and 1/g over
//!   its NIC; the hierarchical algorithm reduce-scatters inside the node (k·(g−1)/g·S, k = 2 for
//!   all-reduce, 1 for reduce-scatter / all-gather) and runs the collective of the S/g shares
//!   across nodes (k·(N−1)/N·S/g per NIC). The tiers work at once, chunk by chunk (NCCL pipelines
//!   its phases: `tuning.cc` takes an NVLS-tree's bandwidth as min(intra, inter)), so the slower
//!   tier bounds: `t_β = max(D_i/B_i, D_o/B_o)`. The refs README adds the two terms, the time of
//!   phases run one after the other; the sum is not a lower bound of NCCL (a 2-node 8×H100
//!   all-reduce measured at 34.5 ms for 8 GiB beats the 54.9 ms sum).
//! - All-to-all (direct, pairwise): each rank sends S/n to each of the n−1 others: (g−1)/n·S
//!   over the scale-up tier and (n−g)/n·S over its NIC. NCCL posts the n − 1 sends and receives
//!   of an all-to-all as one group (`ncclGroupStart`/`ncclGroupEnd`, as nccl-tests'
//!   `alltoall_perf` and PyTorch's `all_to_all_single` run it), so they proceed together: the
//!   latency is one step of the slowest tier crossed (α_i in a node, the larger of α_i and α_o
//!   across nodes), not n − 1 steps. Send-recv: S over one link, one step. NCCL's
//!   point-to-point has no base latency in `tuning.cc`: L = 0.

use super::collective::{Algorithm, Collective, Protocol, Tier};
use crate::formula::Arith;

/// `baseLatencies[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE]`, NCCL 2.30.7 `src/graph/tuning.cc`
/// (`ncclTunerConstantsDefaults`): 8.4 µs, seconds.
pub const RING_BASE_LATENCY: f64 = 8.4e-6;
/// `baseLatencies[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE]`, NCCL 2.30.7 `src/graph/tuning.cc`:
/// 8.4 µs, seconds.
pub const TREE_BASE_LATENCY: f64 = 8.4e-6;
/// `hwLatencies[NCCL_HW_NVLINK][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE]`, NCCL 2.30.7
/// `src/graph/tuning.cc`: 25 µs, the whole latency NCCL gives an NVLS collective in one node,
/// seconds.
pub const NVLS_LATENCY: f64 = 25e-6;

/// NCCL's base latency of a ring or tree collective in each protocol,
/// `baseLatencies[algorithm][protocol]`, NCCL 2.30.7 `src/graph/tuning.cc`
/// (`ncclTunerConstantsDefaults`): ring LL 6.6, LL128 14.0, Simple 8.4 µs; tree LL 6.8,
/// LL128 14.0, Simple 8.4 µs. Seconds.
pub fn base_latency(algorithm: Algorithm, protocol: Protocol) -> f64 {
    match (algorithm, protocol) {
        (Algorithm::Tree, Protocol::Ll) => 6.8e-6,
        (_, Protocol::Ll) => 6.6e-6,
        (_, Protocol::Ll128) => 14.0e-6,
        (Algorithm::Tree, Protocol::Simple) => TREE_BASE_LATENCY,
        (_, Protocol::Simple) => RING_BASE_LATENCY,
    }
}

/// The per-step latency of `protocol` over a link of `tier` against the Simple protocol's
/// (the catalog's α): NCCL 2.30.7 `tuning.cc` `hwLatencies[link][RING][protocol] /
/// hwLatencies[link][RING][SIMPLE]`: NVLink LL 0.6, LL128 1.9, Simple 3.4 µs; PCI 1.0, 2.5,
/// 5.7 µs; network 2.7, 4.0, 14.0 µs.
pub fn alpha_ratio(tier: Tier, protocol: Protocol) -> f64 {
    let (ll, ll128, simple) = match tier {
        Tier::ScaleOut => (2.7, 4.0, 14.0),
        Tier::Pcie => (1.0, 2.5, 5.7),
        Tier::ScaleUp | Tier::Local => (0.6, 1.9, 3.4),
    };
    match protocol {
        Protocol::Simple => 1.0,
        Protocol::Ll128 => ll128 / simple,
        Protocol::Ll => ll / simple,
    }
}

/// The share of a link's bandwidth a protocol's payload gets: LL stores 4 bytes of data with
/// a 4-byte flag in each 8 (1/2); LL128 15 of every 16 8-byte words of a 128-byte line (120/128,
/// NCCL `src/device/prims_ll128.h`, `NCCL_LL128_DATAELEMS`); Simple all of it.
pub fn bandwidth_share(protocol: Protocol) -> f64 {
    match protocol {
        Protocol::Simple => 1.0,
        Protocol::Ll128 => 120.0 / 128.0,
        Protocol::Ll => 0.5,
    }
}

/// Where NCCL's latency constants come from.
pub const NCCL_TUNING_SOURCE: &str = "NCCL 2.30.7 src/graph/tuning.cc, ncclTunerConstantsDefaults: \
baseLatencies Ring LL/LL128/Simple 6.6/14/8.4 µs, Tree 6.8/14/8.4 µs; hwLatencies[NVLINK][NVLS] 25 µs";

/// Everything the α–β formula of one collective needs, fixed before it is evaluated: the
/// collective, the algorithm, the sizes and the figures of the tier that bounds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// The collective.
    pub collective: Collective,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// S, bytes.
    pub bytes: f64,
    /// n, ranks.
    pub ranks: u32,
    /// g, ranks per node.
    pub per_node: u32,
    /// N, nodes.
    pub nodes: u32,
    /// The tier whose traffic this evaluates (the bounding one, once chosen).
    pub tier: Tier,
    /// B, that tier's bandwidth per GPU per direction, B/s.
    pub bandwidth: f64,
    /// α_i, seconds.
    pub alpha_intra: f64,
    /// α_o, seconds (unused in one node).
    pub alpha_inter: f64,
    /// NCCL's protocol: its base latency ([`base_latency`]) and the share of the bandwidth its
    /// payload gets ([`bandwidth_share`]); α_i and α_o are already the protocol's.
    pub protocol: Protocol,
}

/// The α–β terms of one collective, in an [`Arith`]metic.
#[derive(Debug, Clone, Copy)]
pub struct CollectiveTerms<A> {
    /// D, bytes one rank sends over the tier, named `D`.
    pub traffic: A,
    /// t_β = D / B, seconds, named `t_β`.
    pub transfer: A,
    /// t_α, the base latency and α per step, seconds, named `t_α`.
    pub latency: A,
    /// t = t_α + t_β, seconds.
    pub time: A,
}

/// ⌊log₂ x⌋ for x ≥ 1 (NCCL's `log2i`), 0 for 0.
fn log2i(x: u32) -> u32 {
    x.checked_ilog2().unwrap_or(0)
}

/// The α–β terms of `s`, as documented in this module.
#[inline]
pub fn terms<A: Arith>(cx: A::Cx, s: &Shape) -> CollectiveTerms<A> {
    use Algorithm as Al;
    use Collective as C;
    let sym = |name, v: f64| A::sym(cx, name, v);
    let num = |v: f64| A::num(cx, v);
    let one = num(1.0);
    let multi = s.nodes > 1;
    let inter = s.tier == Tier::ScaleOut;
    let big_s = sym("S", s.bytes);
    let n = sym("n", f64::from(s.ranks));
    let g = || sym("g", f64::from(s.per_node));
    let big_n = || sym("N", f64::from(s.nodes));
    let alpha_i = || sym("α_i", s.alpha_intra);
    let alpha_o = || sym("α_o", s.alpha_inter);
    // k·x, written without a factor of 1.
    let times = |k: f64, x: A| if k == 1.0 { x } else { num(k) * x };

    // D: bytes one rank sends over the tier.
    let traffic = match (s.algorithm, s.collective) {
        (Al::Direct, C::SendRecv) => big_s,
        (Al::Direct, _) => match (multi, inter) {
            (false, _) => (n - one) * big_s / n,
            (true, false) => (g() - one) * big_s / n,
            (true, true) => (n - g()) * big_s / n,
        },
        (Al::Nvls, C::AllReduce) => big_s,
        (Al::Nvls, _) => (n - one) * big_s / n,
        (Al::Tree, _) => match inter {
            false => num(2.0) * big_s,
            true => num(2.0) * big_s / g(),
        },
        (Al::Hierarchical, c) => {
            let k = if c == C::AllReduce { 2.0 } else { 1.0 };
            match inter {
                false => times(k, g() - one) * big_s / g(),
                true => times(k, big_n() - one) * big_s / (big_n() * g()),
            }
        }
        (Al::Ring, c) => {
            let k = match c {
                C::AllReduce => 2.0,
                C::Broadcast | C::SendRecv => 0.0,
                _ => 1.0,
            };
            match (k == 0.0, multi, inter) {
                (true, false, _) => big_s,
                (true, true, false) => (g() - one) * big_s / g(),
                (true, true, true) => big_s / g(),
                (false, false, _) => times(k, n - one) * big_s / n,
                (false, true, false) => times(k, n - one) * (g() - one) * big_s / (n * g()),
                (false, true, true) => times(k, n - one) * big_s / (n * g()),
            }
        }
    }
    .named("D");
    let bandwidth = match s.protocol {
        Protocol::Simple => sym("B", s.bandwidth),
        p => sym("B", s.bandwidth) * sym("f_p", bandwidth_share(p)),
    };
    let transfer = (traffic / bandwidth).named("t_β");
    let l_ring = || sym("L_ring", base_latency(Al::Ring, s.protocol));
    let l_tree = || sym("L_tree", base_latency(Al::Tree, s.protocol));

    // t_α: base latency and α per step.
    let ring_steps = |x: A| {
        if s.collective == C::AllReduce {
            num(2.0) * (x - one)
        } else {
            x - one
        }
    };
    let latency = match s.algorithm {
        Al::Direct if s.collective == C::SendRecv => {
            if multi {
                alpha_o()
            } else {
                alpha_i()
            }
        }
        // Every pairwise send is posted at once (one NCCL group), so they wait on one step of
        // the slowest tier they cross, not on n − 1 in turn.
        Al::Direct if multi && s.alpha_inter >= s.alpha_intra => alpha_o(),
        Al::Direct => alpha_i(),
        Al::Nvls => sym("L_nvls", NVLS_LATENCY),
        Al::Tree if multi => {
            l_tree()
                + num(2.0)
                    * ((g() - one) * alpha_i()
                        + sym("log₂N", f64::from(log2i(s.nodes))) * alpha_o())
        }
        Al::Tree => l_tree() + num(2.0) * (n - one) * alpha_i(),
        Al::Hierarchical => {
            l_ring() + ring_steps(g()) * alpha_i() + ring_steps(big_n()) * alpha_o()
        }
        Al::Ring if multi => {
            l_ring()
                + (ring_steps(n) - ring_steps(big_n())) * alpha_i()
                + ring_steps(big_n()) * alpha_o()
        }
        Al::Ring => l_ring() + ring_steps(n) * alpha_i(),
    }
    .named("t_α");
    CollectiveTerms {
        traffic,
        transfer,
        latency,
        time: latency + transfer,
    }
}
