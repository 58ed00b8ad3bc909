//! A collective's worked derivation (`roofline op all-reduce --explain`), read off the α–β
//! formula it was computed with ([`crate::comm::alpha_beta::terms`] recorded on a [`Tape`]):
//! the givens are the formula's symbols, the steps its traffic `D`, transfer `t_β`, latency
//! `t_α` and time `t`, then the bound, the algorithm and bus bandwidths, and the estimate.

use super::{exact_number, qty, Given, Outcome, Step};
use crate::comm::alpha_beta::{terms, NCCL_TUNING_SOURCE};
use crate::comm::collective::{Collective, CollectiveCost, Tier};
use crate::comm::estimate::EFFICIENCY_SOURCE;
use crate::comm::fabric::Fabric;
use crate::formula::{Arith, Sym, Tape};
use serde::Serialize;

const TRAFFIC_SOURCE: &str = "bytes per rank: nccl-tests doc/PERFORMANCE.md (all-reduce \
2(n−1)/n·S, reduce-scatter/all-gather (n−1)/n·S, broadcast S); NVLS S (switch reduction); tree \
2S (NCCL 2.4 double binary tree); across nodes the rail-optimised NIC carries 1/g of a ring's \
bytes, k(N−1)/N·S/g of a hierarchical one's (roofline-core comm::alpha_beta)";
const TRANSFER_SOURCE: &str = "α–β model (Thakur, Rabenseifner and Gropp 2005): bytes over the \
bounding tier's bandwidth per GPU per direction; across nodes the slower tier bounds";
const BUS_SOURCE: &str = "nccl-tests doc/PERFORMANCE.md: algbw = S / t, busbw = algbw × bus \
factor";

/// The worked derivation of one collective.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollectiveDerivation {
    /// The collective in words (`all-reduce of 64 MiB over 8 ranks (1 node × 8)`).
    pub title: String,
    /// The cost the steps arrive at.
    pub cost: CollectiveCost,
    /// Values the derivation starts from.
    pub given: Vec<Given>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

impl CollectiveDerivation {
    /// The step computing `symbol`, if any.
    pub fn step(&self, symbol: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.symbol == symbol)
    }
}

/// The name and source of `tier`'s links in `fabric`.
fn link_words(fabric: &Fabric, tier: Tier) -> (String, String) {
    match tier.link(fabric) {
        Some(l) => (
            format!("{} ({tier})", l.name),
            format!(
                "bandwidth: {}; latency: {}",
                l.bandwidth.source, l.latency.source
            ),
        ),
        None => (tier.to_string(), String::new()),
    }
}

/// For a protocol other than Simple, how its α follows from the catalog's (Simple) α.
fn protocol_note(cost: &CollectiveCost) -> String {
    match cost.protocol {
        crate::comm::collective::Protocol::Simple => String::new(),
        p => format!(
            " (the {p} protocol: the catalog's Simple α × NCCL 2.30.7 tuning.cc hwLatencies[link][RING][{p}] / [SIMPLE])"
        ),
    }
}

fn meaning(symbol: &str, cost: &CollectiveCost, fabric: &Fabric) -> (&'static str, String) {
    let intra = if fabric.scale_up.is_some() {
        Tier::ScaleUp
    } else {
        Tier::Pcie
    };
    match symbol {
        "S" => ("B", "the buffer, as nccl-tests counts it".into()),
        "n" => ("", "ranks".into()),
        "g" => ("", "ranks per node".into()),
        "N" => ("", "nodes".into()),
        "log₂N" => ("", "⌊log₂ N⌋, tree depth across nodes (NCCL log2i)".into()),
        "B" => {
            let (name, src) = link_words(fabric, cost.tier);
            (
                "B/s",
                format!("bandwidth per GPU per direction of the bounding tier, {name}; {src}"),
            )
        }
        "α_i" => {
            let (name, _) = link_words(fabric, intra);
            (
                "s",
                format!("latency of one step inside a node, {name}{}", protocol_note(cost)),
            )
        }
        "α_o" => {
            let (name, _) = link_words(fabric, Tier::ScaleOut);
            (
                "s",
                format!("latency of one step between nodes, {name}{}", protocol_note(cost)),
            )
        }
        "f_p" => (
            "",
            format!(
                "share of the link's bandwidth the {} protocol's payload gets (LL: 4 data bytes \
                 in each 8; LL128: 120 in each 128; NCCL src/device/prims_ll*.h)",
                cost.protocol
            ),
        ),
        "L_ring" => (
            "s",
            format!(
                "NCCL ring base latency, {} protocol; NCCL 2.30.7 src/graph/tuning.cc baseLatencies",
                cost.protocol
            ),
        ),
        "L_tree" => (
            "s",
            format!(
                "NCCL tree base latency, {} protocol; NCCL 2.30.7 src/graph/tuning.cc baseLatencies",
                cost.protocol
            ),
        ),
        "L_nvls" => ("s", format!("NCCL NVLS latency; {NCCL_TUNING_SOURCE}")),
        "η" => (
            "",
            format!("share of the link's speed NCCL reaches (estimate); {EFFICIENCY_SOURCE}"),
        ),
        _ => ("", String::new()),
    }
}

/// The worked derivation of `cost` (computed on `fabric` by
/// [`crate::comm::collective::collective_cost`]), titled `title`. A collective that moves
/// nothing (one rank, no bytes) has no givens and one step, its zero time.
pub fn explain_collective(
    title: impl Into<String>,
    cost: &CollectiveCost,
    fabric: &Fabric,
) -> CollectiveDerivation {
    let title = title.into();
    let Some(shape) = cost.shape() else {
        return CollectiveDerivation {
            title,
            cost: *cost,
            given: Vec::new(),
            steps: vec![qty(
                "time (one rank or no bytes: nothing moves)",
                "t",
                "0",
                "0",
                0.0,
                "s",
                "",
            )],
        };
    };
    let tape = Tape::default();
    let t = terms::<Sym>(&tape, &shape);
    let est = cost.estimate();
    let eta = Sym::sym(&tape, "η", est.efficiency);
    let t_est = t.latency + t.transfer / eta;
    let s = Sym::sym(&tape, "S", shape.bytes);
    let n = Sym::sym(&tape, "n", f64::from(shape.ranks));
    let one = Sym::num(&tape, 1.0);
    let factor = match cost.collective {
        Collective::AllReduce => Sym::num(&tape, 2.0) * (n - one) / n,
        Collective::ReduceScatter | Collective::AllGather | Collective::AllToAll => (n - one) / n,
        Collective::Broadcast | Collective::SendRecv => one,
    };
    let time = t.time.named("t");
    let algbw = (s / time).named("algbw");
    let busbw = algbw * factor;

    let given = tape
        .symbols()
        .into_iter()
        .map(|sy| {
            let (unit, meaning) = meaning(sy.name, cost, fabric);
            Given {
                symbol: sy.name.into(),
                value: sy.value,
                unit,
                meaning,
                origin: None,
            }
        })
        .collect();
    let step = |quantity: &str, symbol: &str, x: Sym<'_>, unit: &'static str, src: &str| {
        qty(
            quantity,
            symbol,
            tape.formula(x),
            tape.substituted(x, &exact_number),
            x.value(),
            unit,
            src,
        )
    };
    let defs = tape.definitions();
    let def = |name: &str| defs.iter().find(|d| d.name == name).map(|d| d.expr);
    let mut steps = Vec::new();
    let (tier_name, _) = link_words(fabric, cost.tier);
    if let Some(d) = def("D") {
        steps.push(step(
            &format!("bytes one rank sends over {tier_name}"),
            "D",
            d,
            "B",
            TRAFFIC_SOURCE,
        ));
    }
    if let Some(x) = def("t_β") {
        steps.push(step("transfer (β term)", "t_β", x, "s", TRANSFER_SOURCE));
    }
    if let Some(x) = def("t_α") {
        steps.push(step(
            &format!("latency (α term, {} algorithm)", cost.algorithm),
            "t_α",
            x,
            "s",
            NCCL_TUNING_SOURCE,
        ));
    }
    steps.push(step(
        "time, the α–β lower bound",
        "t",
        t.time,
        "s",
        TRANSFER_SOURCE,
    ));
    steps.push(Step {
        quantity: "bound".into(),
        symbol: "bound".into(),
        formula: "t_α > t_β ? latency : bandwidth".into(),
        substituted: format!(
            "{} {} {}",
            exact_number(t.latency.value()),
            if t.latency.value() > t.transfer.value() {
                ">"
            } else {
                "≤"
            },
            exact_number(t.transfer.value())
        ),
        outcome: Outcome::Verdict {
            text: cost.bound().to_string(),
        },
        source: "the larger of the α and β terms".into(),
    });
    if let Some(x) = def("algbw") {
        steps.push(step("algorithm bandwidth", "algbw", x, "B/s", BUS_SOURCE));
    }
    steps.push(step("bus bandwidth", "busbw", busbw, "B/s", BUS_SOURCE));
    steps.push(step(
        "estimated time (estimate, not a bound)",
        "t_est",
        t_est,
        "s",
        EFFICIENCY_SOURCE,
    ));
    CollectiveDerivation {
        title,
        cost: *cost,
        given,
        steps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cited::Cited;
    use crate::comm::collective::{collective_cost, AlgorithmChoice};
    use crate::comm::fabric::LinkTier;
    use crate::comm::system::Group;
    use crate::units::{Bytes, BytesPerSec, Seconds};

    fn value(d: &CollectiveDerivation, symbol: &str) -> f64 {
        match d.step(symbol).map(|s| &s.outcome) {
            Some(Outcome::Quantity { value, .. }) => *value,
            other => panic!("{symbol}: {other:?}"),
        }
    }

    #[test]
    fn ring_all_reduce_derivation_is_the_cost_bit_for_bit() -> Result<(), Box<dyn std::error::Error>>
    {
        let fabric = Fabric {
            scale_up: Some(LinkTier::new(
                "NVLink 4",
                Cited::new(BytesPerSec(450e9), "H100 datasheet 900 GB/s ÷ 2"),
                Cited::new(Seconds(3.4e-6), "NCCL hwLatencies"),
            )),
            ..Fabric::default()
        };
        let c = collective_cost(
            Collective::AllReduce,
            Bytes(67_108_864.0),
            Group::in_one_node(8),
            &fabric,
            AlgorithmChoice::Auto,
        )?;
        let d = explain_collective("all-reduce", &c, &fabric);
        let sub = |s: &str| d.step(s).map(|x| x.substituted.clone()).unwrap_or_default();
        assert_eq!(sub("D"), "2·(8 − 1)·67,108,864/8");
        assert_eq!(sub("t_β"), "117,440,512/450e9");
        assert_eq!(sub("t_α"), "8.4e-6 + 2·(8 − 1)·3.4e-6");
        assert_eq!(value(&d, "D"), c.traffic.get());
        assert_eq!(value(&d, "t").to_bits(), c.time().get().to_bits());
        assert_eq!(value(&d, "algbw").to_bits(), c.algbw().get().to_bits());
        assert_eq!(value(&d, "busbw").to_bits(), c.busbw().get().to_bits());
        assert_eq!(
            value(&d, "t_est").to_bits(),
            c.estimate().time.get().to_bits()
        );
        let symbols: Vec<&str> = d.given.iter().map(|g| g.symbol.as_str()).collect();
        assert_eq!(symbols, ["S", "n", "B", "L_ring", "α_i", "η"]);
        assert!(d.given[2].meaning.contains("NVLink 4 (scale-up)"));
        assert!(d.given[2].meaning.contains("datasheet"));
        assert_eq!(
            d.step("bound").map(|s| s.outcome.clone()),
            Some(Outcome::Verdict {
                text: "bandwidth-bound".into()
            })
        );
        // One rank: nothing moves.
        let one = collective_cost(
            Collective::AllReduce,
            Bytes(1.0),
            Group::in_one_node(1),
            &fabric,
            AlgorithmChoice::Auto,
        )?;
        assert_eq!(value(&explain_collective("x", &one, &fabric), "t"), 0.0);
        Ok(())
    }
}
