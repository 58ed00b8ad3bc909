//! The collective cost model against hand arithmetic.

use super::alpha_beta::{terms, NVLS_LATENCY, RING_BASE_LATENCY, TREE_BASE_LATENCY};
use super::collective::*;
use super::estimate::efficiency;
use super::fabric::{Fabric, LinkTier};
use super::system::Group;
use crate::cited::Cited;
use crate::formula::{Sym, Tape};
use crate::units::{Bytes, BytesPerSec, Seconds};

const MIB: f64 = 1024.0 * 1024.0;
/// NVLink 4: 900 GB/s bidirectional per GPU (NVIDIA H100 datasheet) ÷ 2.
const NVLINK4: f64 = 450e9;
/// hwLatencies[NVLINK][Ring][Simple], NCCL 2.30.7 src/graph/tuning.cc.
const A_NVLINK: f64 = 3.4e-6;
/// InfiniBand NDR 400 Gb/s per GPU = 50e9 B/s.
const NDR: f64 = 50e9;
/// hwLatencies[NET][Ring][Simple], NCCL 2.30.7 src/graph/tuning.cc.
const A_NET: f64 = 14e-6;

fn tier(name: &str, b: f64, a: f64) -> LinkTier {
    LinkTier::new(
        name,
        Cited::new(BytesPerSec(b), "test"),
        Cited::new(Seconds(a), "test"),
    )
}

/// An HGX H100 node's links (NVLink 4 with NVLS, NDR per GPU), with or without NVLS.
fn hgx(nvls: bool) -> Fabric {
    Fabric {
        scale_up: Some(tier("NVLink 4", NVLINK4, A_NVLINK)),
        in_network_reduction: nvls,
        scale_out: Some(tier("NDR", NDR, A_NET)),
        ..Fabric::default()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-30)
}

fn cost(
    c: Collective,
    bytes: f64,
    g: Group,
    f: &Fabric,
    a: AlgorithmChoice,
) -> Result<CollectiveCost, CollectiveError> {
    collective_cost(c, Bytes(bytes), g, f, a)
}

/// `collective_cost_in` in NCCL's Simple protocol: the catalog's α and the link's whole
/// bandwidth, the arithmetic the tests below write by hand.
fn simple(
    c: Collective,
    bytes: f64,
    g: Group,
    f: &Fabric,
    a: Algorithm,
) -> Result<CollectiveCost, CollectiveError> {
    collective_cost_in(c, Bytes(bytes), g, f, a, Protocol::Simple)
}

fn two_nodes() -> Group {
    Group {
        ranks: 16,
        ranks_per_node: 8,
    }
}

#[test]
fn bus_factors_are_nccl_tests() {
    // doc/PERFORMANCE.md: all-reduce 2(n−1)/n, reduce-scatter/all-gather/all-to-all (n−1)/n,
    // broadcast and send-recv 1.
    assert_eq!(bus_factor(Collective::AllReduce, 8), 2.0 * 7.0 / 8.0);
    assert_eq!(bus_factor(Collective::ReduceScatter, 8), 7.0 / 8.0);
    assert_eq!(bus_factor(Collective::AllGather, 16), 15.0 / 16.0);
    assert_eq!(bus_factor(Collective::AllToAll, 4), 3.0 / 4.0);
    assert_eq!(bus_factor(Collective::Broadcast, 8), 1.0);
    assert_eq!(bus_factor(Collective::SendRecv, 2), 1.0);
    assert_eq!(bus_factor(Collective::AllReduce, 1), 0.0);
    assert_eq!(bus_factor(Collective::AllReduce, 0), 0.0);
}

#[test]
fn ring_all_reduce_of_64_mib_on_8_gpus_by_hand() -> Result<(), CollectiveError> {
    // S = 67,108,864 B; D = 2·7/8·S = 117,440,512 B; t_β = D / 450e9 = 260.98 µs;
    // t_α = 8.4 µs + 2·7·3.4 µs = 56 µs.
    let c = cost(
        Collective::AllReduce,
        64.0 * MIB,
        Group::in_one_node(8),
        &hgx(false),
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(c.algorithm, Algorithm::Ring);
    assert_eq!(c.tier, Tier::ScaleUp);
    assert_eq!(c.traffic, Bytes(117_440_512.0));
    assert!(close(c.transfer.get(), 117_440_512.0 / 450e9));
    assert!((c.transfer.get() - 260.98e-6).abs() < 0.01e-6);
    assert!(close(c.latency.get(), 8.4e-6 + 14.0 * 3.4e-6));
    assert!(close(c.time().get(), c.latency.get() + c.transfer.get()));
    assert_eq!(c.bound(), CommBound::Bandwidth);
    assert!(close(c.algbw().get(), 67_108_864.0 / c.time().get()));
    assert!(close(c.busbw().get(), c.algbw().get() * 1.75));
    assert_eq!(c.link, BytesPerSec(NVLINK4));
    // 1 KiB: t_β = 2·7/8·1024 / 450e9 = 3.98 ns, far under t_α.
    let small = cost(
        Collective::AllReduce,
        1024.0,
        Group::in_one_node(8),
        &hgx(false),
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(small.bound(), CommBound::Latency);
    Ok(())
}

#[test]
fn reduce_scatter_all_gather_broadcast_rings_by_hand() -> Result<(), CollectiveError> {
    let f = hgx(false);
    let g = Group::in_one_node(8);
    let s = 64.0 * MIB;
    for c in [Collective::ReduceScatter, Collective::AllGather] {
        // D = 7/8·S = 58,720,256 B; 7 steps: 8.4 + 7·3.4 = 32.2 µs.
        let x = cost(c, s, g, &f, AlgorithmChoice::Only(Algorithm::Ring))?;
        assert_eq!(x.traffic, Bytes(58_720_256.0));
        assert!(close(x.transfer.get(), 58_720_256.0 / 450e9));
        assert!(close(x.latency.get(), 8.4e-6 + 7.0 * 3.4e-6));
    }
    // Pipelined ring broadcast: S/B + 8.4 µs + 7·3.4 µs.
    let b = cost(Collective::Broadcast, s, g, &f, AlgorithmChoice::Auto)?;
    assert_eq!(b.algorithm, Algorithm::Ring);
    assert_eq!(b.traffic, Bytes(s));
    assert!(close(b.transfer.get(), s / 450e9));
    assert!(close(b.latency.get(), 8.4e-6 + 7.0 * 3.4e-6));
    assert!(close(b.busbw().get(), s / b.time().get()));
    Ok(())
}

#[test]
fn direct_all_to_all_and_send_recv_by_hand() -> Result<(), CollectiveError> {
    let f = hgx(false);
    let s = 64.0 * MIB;
    // 8 ranks in a node: 7/8·S over NVLink; the 7 sends posted together wait one α, no base
    // latency.
    let a = cost(
        Collective::AllToAll,
        s,
        Group::in_one_node(8),
        &f,
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(a.algorithm, Algorithm::Direct);
    assert_eq!(a.traffic, Bytes(58_720_256.0));
    assert!(close(a.latency.get(), 3.4e-6));
    // 2 nodes of 8: 7/16·S = 29,360,128 B over NVLink (65.24 µs), 8/16·S over the NIC
    // (33,554,432 B / 50e9 = 671.1 µs): the NIC bounds; one step of the network's α.
    let m = cost(
        Collective::AllToAll,
        s,
        two_nodes(),
        &f,
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(m.tier, Tier::ScaleOut);
    assert_eq!(m.traffic, Bytes(33_554_432.0));
    assert!(close(m.transfer.get(), 33_554_432.0 / 50e9));
    assert!(close(m.latency.get(), 14e-6));
    // Send-recv: S/B + α, in a node and across nodes.
    let p = cost(
        Collective::SendRecv,
        s,
        Group::in_one_node(2),
        &f,
        AlgorithmChoice::Auto,
    )?;
    assert!(close(p.time().get(), s / 450e9 + 3.4e-6));
    assert!(close(p.busbw().get(), s / p.time().get()));
    let q = cost(
        Collective::SendRecv,
        s,
        Group {
            ranks: 2,
            ranks_per_node: 1,
        },
        &f,
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(q.tier, Tier::ScaleOut);
    assert!(close(q.time().get(), s / 50e9 + 14e-6));
    Ok(())
}

#[test]
fn broadcast_across_nodes_is_a_ring_per_rail() -> Result<(), CollectiveError> {
    // 2 nodes × 8, 64 MiB: per NIC S/8 = 8,388,608 B at 50e9 = 167.77 µs; over NVLink
    // 7/8·S = 58,720,256 B at 450e9 = 130.49 µs: the NIC bounds. 15 steps, 1 between nodes:
    // 8.4 + 14·3.4 + 14 µs.
    let s = 64.0 * MIB;
    let b = collective_cost_in(
        Collective::Broadcast,
        Bytes(s),
        two_nodes(),
        &hgx(true),
        Algorithm::Ring,
        Protocol::Simple,
    )?;
    assert_eq!(b.algorithm, Algorithm::Ring);
    assert_eq!(b.tier, Tier::ScaleOut);
    assert_eq!(b.traffic, Bytes(8_388_608.0));
    assert!(close(b.latency.get(), 8.4e-6 + 14.0 * 3.4e-6 + 14e-6));
    Ok(())
}

#[test]
fn nvls_all_reduce_sends_each_byte_once() -> Result<(), CollectiveError> {
    // D = S = 67,108,864 B; t_β = S / 450e9 = 149.13 µs; t_α = 25 µs (NCCL hwLat NVLS).
    let c = cost(
        Collective::AllReduce,
        64.0 * MIB,
        Group::in_one_node(8),
        &hgx(true),
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(c.algorithm, Algorithm::Nvls);
    assert_eq!(c.traffic, Bytes(67_108_864.0));
    assert!(close(c.transfer.get(), 67_108_864.0 / 450e9));
    assert_eq!(c.latency, Seconds(NVLS_LATENCY));
    // Bus bandwidth above the link: bounded by 2·7/8·450 = 787.5 GB/s.
    assert!(c.busbw().get() > NVLINK4 && c.busbw().get() < 787.5e9);
    // Reduce-scatter over NVLS: 7/8·S, 25 µs (against the ring's 8.4 + 7·3.4 = 32.2 µs).
    let r = cost(
        Collective::ReduceScatter,
        64.0 * MIB,
        Group::in_one_node(8),
        &hgx(true),
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(r.algorithm, Algorithm::Nvls);
    assert_eq!(r.traffic, Bytes(58_720_256.0));
    Ok(())
}

#[test]
fn tree_all_reduce_by_hand() -> Result<(), CollectiveError> {
    // One node: D = 2·S, t_α = 8.4 µs + 2·7·3.4 µs (NCCL's intra-node chain).
    let s = 64.0 * MIB;
    let c = simple(
        Collective::AllReduce,
        s,
        Group::in_one_node(8),
        &hgx(false),
        Algorithm::Tree,
    )?;
    assert_eq!(c.traffic, Bytes(2.0 * s));
    assert!(close(c.latency.get(), TREE_BASE_LATENCY + 14.0 * 3.4e-6));
    // 16 nodes of 8: t_α = 8.4 + 2·(7·3.4 + ⌊log₂16⌋·14) = 168 µs; per NIC 2·S/8.
    let g = Group {
        ranks: 128,
        ranks_per_node: 8,
    };
    let t = simple(Collective::AllReduce, s, g, &hgx(false), Algorithm::Tree)?;
    assert!(close(
        t.latency.get(),
        8.4e-6 + 2.0 * (7.0 * 3.4e-6 + 4.0 * 14e-6)
    ));
    assert_eq!(t.tier, Tier::ScaleOut);
    assert_eq!(t.traffic, Bytes(2.0 * s / 8.0));
    Ok(())
}

#[test]
fn hierarchical_two_nodes_by_hand() -> Result<(), CollectiveError> {
    // 2 nodes × 8, 64 MiB. Inside: 2·7/8·S = 117,440,512 B at 450e9 = 260.98 µs; across:
    // 2·(1/2)·S/8 = 8,388,608 B at 50e9 = 167.77 µs. NVLink bounds. t_α = 8.4 + 2·7·3.4 +
    // 2·1·14 = 84 µs.
    let s = 64.0 * MIB;
    let c = cost(
        Collective::AllReduce,
        s,
        two_nodes(),
        &hgx(false),
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(c.algorithm, Algorithm::Hierarchical);
    assert_eq!(c.tier, Tier::ScaleUp);
    assert_eq!(c.traffic, Bytes(117_440_512.0));
    assert!(close(c.transfer.get(), 117_440_512.0 / 450e9));
    assert!(close(
        c.latency.get(),
        RING_BASE_LATENCY + 14.0 * 3.4e-6 + 2.0 * 14e-6
    ));
    assert_eq!(c.alpha_inter, Seconds(A_NET));
    // Half the NIC (25e9): 8,388,608 / 25e9 = 335.54 µs > 260.98 µs, the NIC bounds.
    let mut slow = hgx(false);
    slow.scale_out = Some(tier("HDR", 25e9, A_NET));
    let d = cost(
        Collective::AllReduce,
        s,
        two_nodes(),
        &slow,
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(d.tier, Tier::ScaleOut);
    assert_eq!(d.traffic, Bytes(8_388_608.0));
    assert_eq!(d.link, BytesPerSec(25e9));
    // The flat ring across the same nodes: per NIC 2·15/16·S/8 = 15,728,640 B at 50e9
    // = 314.57 µs, slower than the hierarchical 260.98 µs.
    let r = simple(
        Collective::AllReduce,
        s,
        two_nodes(),
        &hgx(false),
        Algorithm::Ring,
    )?;
    assert_eq!(r.tier, Tier::ScaleOut);
    assert_eq!(r.traffic, Bytes(15_728_640.0));
    // 2·15 steps, 2·1 of them between nodes: 8.4 + 28·3.4 + 2·14 µs.
    assert!(close(r.latency.get(), 8.4e-6 + 28.0 * 3.4e-6 + 2.0 * 14e-6));
    Ok(())
}

#[test]
fn auto_takes_the_latency_optimal_tree_for_small_and_hierarchical_for_large(
) -> Result<(), CollectiveError> {
    // 16 nodes × 8. 1 KiB: ring t_α = 8.4 + 224·3.4 + 30·14 = 1,190 µs; hierarchical 8.4 +
    // 14·3.4 + 30·14 = 476 µs; tree 8.4 + 2·(7·3.4 + 4·14) = 168 µs.
    let g = Group {
        ranks: 128,
        ranks_per_node: 8,
    };
    let f = hgx(false);
    let small = cost(Collective::AllReduce, 1024.0, g, &f, AlgorithmChoice::Auto)?;
    assert_eq!(small.algorithm, Algorithm::Tree);
    // 1 GiB: tree per NIC 2·S/8 at 50e9 = 5.37 ms; hierarchical 2·15/16·S/8 at 50e9 = 5.03 ms.
    let large = cost(
        Collective::AllReduce,
        1024.0 * MIB,
        g,
        &f,
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(large.algorithm, Algorithm::Hierarchical);
    // One node of 8 with NVLS. 1 MiB: the ring in LL, 6.6 + 14·0.6 = 15.0 µs + 2·7/8·S =
    // 1,835,008 B at 450e9 × 1/2 = 8.16 µs, 23.2 µs in all, beats NVLS's 25 + S/450e9 =
    // 27.3 µs (and the ring in Simple, 8.4 + 14·3.4 + 4.08 = 60.1 µs). 1 GiB: NVLS (S against
    // the ring's 2·7/8·S). 2 GPUs: the ring either way (D = S, and NVLS's 25 µs is more).
    let x = cost(
        Collective::AllReduce,
        MIB,
        Group::in_one_node(8),
        &hgx(true),
        AlgorithmChoice::Auto,
    )?;
    assert_eq!((x.algorithm, x.protocol), (Algorithm::Ring, Protocol::Ll));
    assert!(close(x.latency.get(), 6.6e-6 + 14.0 * 0.6e-6));
    assert!(close(x.transfer.get(), 1_835_008.0 / 225e9));
    let x = cost(
        Collective::AllReduce,
        1024.0 * MIB,
        Group::in_one_node(8),
        &hgx(true),
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(
        (x.algorithm, x.protocol),
        (Algorithm::Nvls, Protocol::Simple)
    );
    for s in [MIB, 1024.0 * MIB] {
        let y = cost(
            Collective::AllReduce,
            s,
            Group::in_one_node(2),
            &hgx(true),
            AlgorithmChoice::Auto,
        )?;
        assert_eq!(y.algorithm, Algorithm::Ring);
    }
    // Large messages stay in Simple: 1 GiB over 8 GPUs in LL128 would send the same bytes at
    // 120/128 of the link.
    let big = simple(
        Collective::AllReduce,
        1024.0 * MIB,
        Group::in_one_node(8),
        &hgx(false),
        Algorithm::Ring,
    )?;
    let auto = cost(
        Collective::AllReduce,
        1024.0 * MIB,
        Group::in_one_node(8),
        &hgx(false),
        AlgorithmChoice::Only(Algorithm::Ring),
    )?;
    assert_eq!(auto, big);
    Ok(())
}

#[test]
fn one_rank_or_no_bytes_cost_nothing() -> Result<(), CollectiveError> {
    for c in Collective::ALL {
        let x = cost(
            c,
            64.0 * MIB,
            Group::in_one_node(1),
            &Fabric::default(),
            AlgorithmChoice::Auto,
        )?;
        assert_eq!(x.time(), Seconds::ZERO);
        assert_eq!(x.tier, Tier::Local);
        assert_eq!(x.algbw(), BytesPerSec::ZERO);
        let y = cost(
            c,
            0.0,
            Group::in_one_node(8),
            &hgx(false),
            AlgorithmChoice::Auto,
        )?;
        assert_eq!(y.time(), Seconds::ZERO);
    }
    Ok(())
}

#[test]
fn errors_name_the_quantity() {
    let f = hgx(false);
    let g = Group::in_one_node(8);
    let ar = Collective::AllReduce;
    for bad in [f64::NAN, f64::INFINITY, -1.0, 2.0 * MAX_BYTES] {
        assert!(matches!(
            cost(ar, bad, g, &f, AlgorithmChoice::Auto),
            Err(CollectiveError::Bytes { .. })
        ));
    }
    let zero = Group {
        ranks: 0,
        ranks_per_node: 0,
    };
    assert!(matches!(
        cost(ar, 1.0, zero, &f, AlgorithmChoice::Auto),
        Err(CollectiveError::Group {
            quantity: "ranks",
            ..
        })
    ));
    let ragged = Group {
        ranks: 12,
        ranks_per_node: 8,
    };
    assert!(matches!(
        cost(ar, 1.0, ragged, &f, AlgorithmChoice::Auto),
        Err(CollectiveError::Group {
            quantity: "ranks",
            ..
        })
    ));
    let over = Group {
        ranks: 4,
        ranks_per_node: 8,
    };
    assert!(matches!(
        cost(ar, 1.0, over, &f, AlgorithmChoice::Auto),
        Err(CollectiveError::Group {
            quantity: "ranks_per_node",
            ..
        })
    ));
    let one_node = Fabric {
        scale_out: None,
        ..hgx(false)
    };
    let e = cost(ar, 1.0, two_nodes(), &one_node, AlgorithmChoice::Auto);
    assert!(matches!(
        e,
        Err(CollectiveError::NoLink {
            tier: Tier::ScaleOut,
            ..
        })
    ));
    assert!(e.unwrap_err().to_string().contains("2 nodes"));
    assert!(matches!(
        cost(ar, 1.0, g, &Fabric::default(), AlgorithmChoice::Auto),
        Err(CollectiveError::NoLink {
            tier: Tier::ScaleUp,
            ..
        })
    ));
    let mut broken = hgx(false);
    broken.scale_up = Some(tier("x", 0.0, A_NVLINK));
    assert!(matches!(
        cost(ar, 1.0, g, &broken, AlgorithmChoice::Auto),
        Err(CollectiveError::Link {
            quantity: "bandwidth",
            ..
        })
    ));
    for (c, a, group) in [
        (ar, Algorithm::Nvls, g),
        (ar, Algorithm::Hierarchical, g),
        (ar, Algorithm::Direct, g),
        (Collective::AllToAll, Algorithm::Ring, g),
        (Collective::AllGather, Algorithm::Tree, g),
        (ar, Algorithm::Nvls, two_nodes()),
    ] {
        let fab = if group.nodes() > 1 {
            hgx(true)
        } else {
            f.clone()
        };
        assert!(matches!(
            cost(c, 1.0, group, &fab, AlgorithmChoice::Only(a)),
            Err(CollectiveError::Unsupported { .. })
        ));
    }
}

#[test]
fn pcie_carries_a_node_without_a_scale_up_fabric() -> Result<(), CollectiveError> {
    // PCIe 4.0 x16: 32 GB/s per direction; hwLatencies[PCI][Ring][Simple] = 5.7 µs.
    let f = Fabric {
        pcie: Some(tier("PCIe 4.0 x16", 32e9, 5.7e-6)),
        ..Fabric::default()
    };
    let c = cost(
        Collective::AllReduce,
        64.0 * MIB,
        Group::in_one_node(4),
        &f,
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(c.tier, Tier::Pcie);
    // 2·3/4·S = 100,663,296 B at 32e9; 8.4 + 6·5.7 µs.
    assert_eq!(c.traffic, Bytes(100_663_296.0));
    assert!(close(c.latency.get(), 8.4e-6 + 6.0 * 5.7e-6));
    Ok(())
}

#[test]
fn the_recorded_formula_is_the_f64_computation_bit_for_bit(
) -> Result<(), Box<dyn std::error::Error>> {
    let groups = [
        Group::in_one_node(8),
        Group::in_one_node(2),
        two_nodes(),
        Group {
            ranks: 96,
            ranks_per_node: 8,
        },
        Group {
            ranks: 4,
            ranks_per_node: 1,
        },
    ];
    let mut checked = 0;
    for c in Collective::ALL {
        for a in Algorithm::ALL {
            for g in groups {
                for s in [1000.0, 3.0 * MIB + 7.0, 1e11] {
                    let Ok(x) = cost(c, s, g, &hgx(true), AlgorithmChoice::Only(a)) else {
                        continue;
                    };
                    let shape = x.shape().ok_or("a collective that moves bytes")?;
                    let tape = Tape::default();
                    let t = terms::<Sym>(&tape, &shape);
                    assert_eq!(t.time.value().to_bits(), x.time().get().to_bits());
                    assert_eq!(t.traffic.value().to_bits(), x.traffic.get().to_bits());
                    assert_eq!(t.latency.value().to_bits(), x.latency.get().to_bits());
                    assert_eq!(t.transfer.value().to_bits(), x.transfer.get().to_bits());
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 60, "{checked}");
    // The ring all-reduce in one node, in symbols and with the numbers in.
    let x = cost(
        Collective::AllReduce,
        64.0 * MIB,
        Group::in_one_node(8),
        &hgx(false),
        AlgorithmChoice::Auto,
    )?;
    let tape = Tape::default();
    let t = terms::<Sym>(&tape, &x.shape().ok_or("a collective that moves bytes")?);
    let defs = tape.definitions();
    let d = defs.iter().find(|d| d.name == "D").ok_or("D defined")?;
    assert_eq!(tape.formula(d.expr), "2·(n − 1)·S/n");
    assert_eq!(
        tape.substituted(d.expr, &|v| v.to_string()),
        "2·(8 − 1)·67108864/8"
    );
    let l = defs.iter().find(|d| d.name == "t_α").ok_or("t_α defined")?;
    assert_eq!(tape.formula(l.expr), "L_ring + 2·(n − 1)·α_i");
    assert_eq!(tape.formula(t.transfer), "t_β");
    assert_eq!(tape.formula(t.time), "t_α + t_β");
    Ok(())
}

#[test]
fn estimate_divides_the_transfer_by_the_published_efficiency() -> Result<(), CollectiveError> {
    // η_ring = 240/300 = 0.8: t = 56 µs + 260.98 µs / 0.8.
    let c = cost(
        Collective::AllReduce,
        64.0 * MIB,
        Group::in_one_node(8),
        &hgx(false),
        AlgorithmChoice::Auto,
    )?;
    assert_eq!(efficiency(Algorithm::Ring), 240.0 / 300.0);
    assert!(close(efficiency(Algorithm::Nvls), 470.0 / 787.5));
    let e = c.estimate();
    assert!(close(
        e.time.get(),
        c.latency.get() + c.transfer.get() / 0.8
    ));
    assert!(e.time > c.time());
    assert!(close(e.busbw.get(), 64.0 * MIB / e.time.get() * 1.75));
    // η outside (0, 1] is the bound.
    assert_eq!(c.estimate_at(0.0).time, c.time());
    assert_eq!(c.estimate_at(f64::NAN).time, c.time());
    Ok(())
}

#[test]
fn names_read_back_and_serialise_in_snake_case() -> Result<(), Box<dyn std::error::Error>> {
    for c in Collective::ALL {
        assert_eq!(c.to_string().parse::<Collective>()?, c);
    }
    assert_eq!("all_reduce".parse::<Collective>()?, Collective::AllReduce);
    assert_eq!("AllGather".parse::<Collective>()?, Collective::AllGather);
    assert!("allreduce2".parse::<Collective>().is_err());
    for a in Algorithm::ALL {
        assert_eq!(
            a.to_string().parse::<AlgorithmChoice>()?,
            AlgorithmChoice::Only(a)
        );
    }
    assert_eq!("Auto".parse::<AlgorithmChoice>()?, AlgorithmChoice::Auto);
    assert!("rings".parse::<Algorithm>().is_err());
    assert_eq!(
        serde_json::to_string(&Collective::ReduceScatter)?,
        "\"reduce_scatter\""
    );
    assert_eq!(serde_json::to_string(&Tier::ScaleOut)?, "\"scale_out\"");
    Ok(())
}
