//! Chip platforms (`[platform]`) and system files (`catalog/systems/*.toml`).

use super::*;
use crate::embedded::SYSTEM_FILES;
use crate::error::InputError;
use roofline_core::comm::{LinkTier, Platform};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The chips the catalog gives a platform (the node they are sold in).
const WITH_PLATFORM: &[&str] = &[
    "a100-sxm-40gb",
    "a100-sxm-80gb",
    "a6000",
    "b200",
    "gb200",
    "h100-sxm",
    "h200",
    "l4",
    "l40s",
    "mi300x",
    "mi325x",
    "tpu-v5p",
];

fn platform(id: &str) -> Result<Platform, Box<dyn std::error::Error>> {
    find_device(id)?
        .platform
        .ok_or_else(|| format!("{id} has no platform").into())
}

fn tier(t: &Option<LinkTier>, what: &str) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let t = t.as_ref().ok_or_else(|| format!("no {what} tier"))?;
    Ok((t.bandwidth.value.get(), t.latency.value.get()))
}

#[test]
fn every_platform_in_the_catalog_parses_with_sources() -> TestResult {
    let all = catalog()?;
    let with: Vec<&str> = all
        .iter()
        .filter(|d| d.platform.is_some())
        .map(|d| d.id.as_str())
        .collect();
    assert_eq!(with, WITH_PLATFORM);
    for d in &all {
        let Some(p) = &d.platform else { continue };
        assert!(!p.gpus_per_node.source.trim().is_empty(), "{}", d.id);
        assert!(p.fabric.intra_node().is_some() || p.gpus_per_node.value == 1);
        for t in [&p.fabric.scale_up, &p.fabric.scale_out, &p.fabric.pcie]
            .into_iter()
            .flatten()
        {
            assert!(!t.bandwidth.source.trim().is_empty(), "{}", d.id);
            assert!(!t.latency.source.trim().is_empty(), "{}", d.id);
        }
        if p.fabric.in_network_reduction {
            assert!(p.fabric.in_network_reduction_source.is_some(), "{}", d.id);
        }
    }
    Ok(())
}

#[test]
fn a_chip_with_a_platform_round_trips() -> TestResult {
    for id in WITH_PLATFORM {
        let d = find_device(id)?;
        let text = device_to_toml(&d);
        let back = parse_device(&text, "round-trip.toml")
            .map_err(|e| format!("{id}: {e} {:?}\n{text}", e.hint))?;
        assert_eq!(back, d, "{id}");
        assert!(text.contains("[platform.") || d.platform.is_none(), "{id}");
    }
    Ok(())
}

#[test]
fn hand_checked_platform_values() -> TestResult {
    // H100 SXM: NVIDIA's "900 GB/s NVLink" is the bidirectional aggregate of 18 links × 50 GB/s,
    // so 900e9 / 2 = 450e9 B/s each way. One ConnectX-7 at 400 Gb/s per GPU: 400e9 / 8 = 50e9
    // B/s. PCIe Gen5 x16, 128 GB/s bidirectional: 64e9 each way. NCCL's Ring/Simple per-step
    // figures: NVLink 3.4 µs, network 14.0 µs, PCIe 5.7 µs.
    let p = platform("h100-sxm")?;
    assert_eq!(p.gpus_per_node.value, 8);
    assert!(p.fabric.in_network_reduction);
    assert_eq!(tier(&p.fabric.scale_up, "scale_up")?, (900e9 / 2.0, 3.4e-6));
    assert_eq!(
        tier(&p.fabric.scale_out, "scale_out")?,
        (400e9 / 8.0, 14e-6)
    );
    assert_eq!(tier(&p.fabric.pcie, "pcie")?, (128e9 / 2.0, 5.7e-6));
    // The chip's own [interconnect] keeps the datasheet's bidirectional figure.
    let d = find_device("h100-sxm")?;
    let nvlink = d
        .interconnect
        .and_then(|l| l.bandwidth)
        .map(|b| b.value.get());
    assert_eq!(nvlink, Some(2.0 * tier(&p.fabric.scale_up, "scale_up")?.0));

    // H200: the same HGX board, the same figures.
    let h = platform("h200")?;
    for (a, b) in [
        (&h.fabric.scale_up, &p.fabric.scale_up),
        (&h.fabric.scale_out, &p.fabric.scale_out),
        (&h.fabric.pcie, &p.fabric.pcie),
    ] {
        assert_eq!(tier(a, "h200")?, tier(b, "h100-sxm")?);
    }

    // A100 SXM: NVLink 3, 600 GB/s bidirectional (12 × 50) = 300e9 each way; NVSwitch gen 2
    // has no SHARP; HDR 200 Gb/s per GPU = 25e9 B/s; PCIe Gen4 64 GB/s bidirectional = 32e9.
    for id in ["a100-sxm-80gb", "a100-sxm-40gb"] {
        let a = platform(id)?;
        assert!(!a.fabric.in_network_reduction, "{id}");
        assert_eq!(tier(&a.fabric.scale_up, "scale_up")?.0, 600e9 / 2.0);
        assert_eq!(tier(&a.fabric.scale_out, "scale_out")?.0, 200e9 / 8.0);
        assert_eq!(tier(&a.fabric.pcie, "pcie")?.0, 64e9 / 2.0);
    }

    // B200 and GB200: NVLink 5, 1,800 GB/s bidirectional = 900e9 each way, with SHARP; the
    // NVL72 is one NVLink domain of 72 GPUs.
    let b = platform("b200")?;
    assert_eq!(tier(&b.fabric.scale_up, "scale_up")?.0, 1800e9 / 2.0);
    assert!(b.fabric.in_network_reduction);
    let gb = platform("gb200")?;
    assert_eq!(gb.gpus_per_node.value, 72);
    assert_eq!(tier(&gb.fabric.scale_up, "scale_up")?.0, 1800e9 / 2.0);
    assert!(gb.fabric.in_network_reduction && gb.fabric.pcie.is_none());

    // MI300X: 7 xGMI links × 64 GB/s per direction = 448e9, a full mesh without a switch;
    // RCCL's MI300X model gives 2.1 µs per ring step over xGMI.
    let m = platform("mi300x")?;
    assert_eq!(tier(&m.fabric.scale_up, "scale_up")?, (7.0 * 64e9, 2.1e-6));
    assert!(!m.fabric.in_network_reduction);
    assert!(m
        .fabric
        .topology
        .as_deref()
        .is_some_and(|t| t.contains("mesh")));

    // TPU v5p: 1,200 GB/s bidirectional ICI per chip = 600e9 each way; DCN 50 Gb/s = 6.25e9.
    let t = platform("tpu-v5p")?;
    assert_eq!(tier(&t.fabric.scale_up, "scale_up")?.0, 1200e9 / 2.0);
    assert_eq!(tier(&t.fabric.scale_out, "scale_out")?.0, 50e9 / 8.0);

    // PCIe-only chips: no scale-up tier, PCIe Gen4 64 GB/s bidirectional = 32e9 each way.
    for id in ["l40s", "l4", "a6000"] {
        let q = platform(id)?;
        assert!(q.fabric.scale_up.is_none(), "{id}");
        assert_eq!(tier(&q.fabric.pcie, "pcie")?.0, 64e9 / 2.0, "{id}");
    }
    Ok(())
}

/// A minimal chip with a platform; tests break one field at a time.
const CHIP: &str = r#"
id = "toy"
name = "Toy chip"
[peak_flops_per_s]
bf16 = { value = 100e12, source = "test" }
[[memory]]
level = "main"
name = "HBM"
bandwidth_bytes_per_s = { value = 1e12, source = "test" }
[compute]
launch_overhead_s = { value = 5e-6, source = "test" }
[platform]
name = "Toy node"
gpus_per_node = { value = 8, source = "test" }
[platform.scale_up]
name = "Toy link"
bandwidth_bytes_per_s = { value = 100e9, source = "test" }
latency_s = { value = 2e-6, source = "test" }
"#;

fn chip_err(text: &str) -> InputError {
    match parse_device(text, "toy.toml") {
        Ok(_) => panic!("parsed:\n{text}"),
        Err(e) => e,
    }
}

#[test]
fn a_bad_platform_value_names_its_field() -> TestResult {
    let d = parse_device(CHIP, "toy.toml")?;
    assert_eq!(d.platform.map(|p| p.gpus_per_node.value), Some(8));
    let cases = [
        ("value = 2e-6", "value = 0.5", "platform.scale_up.latency_s"),
        (
            "value = 2e-6",
            "value = 1e-12",
            "platform.scale_up.latency_s",
        ),
        (
            "value = 2e-6",
            "value = -1.0",
            "platform.scale_up.latency_s",
        ),
        (
            "value = 100e9",
            "value = 1e20",
            "platform.scale_up.bandwidth_bytes_per_s",
        ),
        (
            "value = 100e9",
            "value = 0.0",
            "platform.scale_up.bandwidth_bytes_per_s",
        ),
        ("value = 8,", "value = 0,", "platform.gpus_per_node"),
        ("value = 8,", "value = 2000000,", "platform.gpus_per_node"),
    ];
    for (from, to, field) in cases {
        let e = chip_err(&CHIP.replace(from, to));
        assert!(
            e.message.contains(&format!("`{field}`")),
            "{to}: {}",
            e.message
        );
        assert!(e.hint.is_some(), "{to}");
    }
    // An empty source, an unknown key, a node of 8 with no link inside it.
    let e = chip_err(&CHIP.replace(
        "latency_s = { value = 2e-6, source = \"test\" }",
        "latency_s = { value = 2e-6, source = \" \" }",
    ));
    assert!(
        e.message.contains("platform.scale_up.latency_s.source"),
        "{}",
        e.message
    );
    let e = chip_err(&CHIP.replace("name = \"Toy link\"", "name = \"Toy link\"\nspeed = 1"));
    assert!(e.message.contains("speed"), "{}", e.message);
    let no_link = CHIP.split("[platform.scale_up]").next().unwrap_or_default();
    let e = chip_err(no_link);
    assert!(e.message.contains("`platform`"), "{}", e.message);
    Ok(())
}

#[test]
fn every_system_file_loads_and_fills_its_nodes() -> TestResult {
    assert_eq!(SYSTEM_FILES.len(), system_ids().len());
    assert!(system_ids().len() >= 6);
    for s in systems()? {
        let (per_node, nodes) = (u64::from(s.gpus_per_node), u64::from(s.nodes));
        assert_eq!(s.devices(), per_node * nodes, "{}", s.id);
        assert!(!s.gpus_per_node_source.trim().is_empty(), "{}", s.id);
        assert!(!s.nodes_source.trim().is_empty(), "{}", s.id);
        assert!(s.fabric.intra_node().is_some(), "{}", s.id);
        if s.nodes > 1 {
            assert!(s.fabric.scale_out.is_some(), "{}", s.id);
        }
        // With no [fabric] override, the system's links are its chip's platform's.
        let chip = s.chip.platform.as_ref().map(|p| &p.fabric);
        assert_eq!(chip, Some(&s.fabric), "{}", s.id);
        assert_eq!(load_system(&s.id)?, s);
    }
    Ok(())
}

#[test]
fn hand_checked_systems() -> TestResult {
    // DGX H100: 8 GPUs × 1 node; NVLink 4 at 900 GB/s bidirectional = 450e9 each way.
    let s = load_system("dgx-h100")?;
    assert_eq!(
        (s.chip.id.as_str(), s.gpus_per_node, s.nodes),
        ("h100-sxm", 8, 1)
    );
    assert_eq!(tier(&s.fabric.scale_up, "scale_up")?.0, 450e9);
    // A DGX SuperPOD scalable unit: 32 DGX H100 × 8 = 256 GPUs.
    assert_eq!(load_system("dgx-h100-su")?.devices(), 32 * 8);
    assert_eq!(load_system("DGX_B200_SU")?.devices(), 256);
    // GB200 NVL72: one node of 72.
    let g = load_system("gb200-nvl72")?;
    assert_eq!((g.gpus_per_node, g.nodes, g.devices()), (72, 1, 72));
    assert_eq!(load_system("tpu-v5p-64")?.devices(), 64);
    assert_eq!(load_system("mi300x-8")?.chip.id, "mi300x");
    assert_eq!(load_system("dgx-a100")?.chip.id, "a100-sxm-80gb");
    assert_eq!(load_system("hgx-h200")?.chip.id, "h200");
    Ok(())
}

const SYSTEM: &str = r#"
id = "my-cluster"
name = "My cluster"
chip = "h100"
gpus_per_node = { value = 8, source = "test" }
nodes = { value = 4, source = "test" }
[fabric.scale_out]
name = "RoCE 200 Gb/s"
bandwidth_bytes_per_s = { value = 25e9, source = "test: 200 Gb/s / 8" }
latency_s = { value = 20e-6, source = "test" }
"#;

fn system_err(text: &str) -> InputError {
    match parse_system(text, "my.toml") {
        Ok(_) => panic!("parsed:\n{text}"),
        Err(e) => e,
    }
}

#[test]
fn a_fabric_override_replaces_only_the_tiers_it_gives() -> TestResult {
    let s = parse_system(SYSTEM, "my.toml")?;
    assert_eq!((s.chip.id.as_str(), s.devices()), ("h100-sxm", 32));
    assert_eq!(tier(&s.fabric.scale_out, "scale_out")?, (25e9, 20e-6));
    let chip = platform("h100-sxm")?.fabric;
    assert_eq!(s.fabric.scale_up, chip.scale_up);
    assert_eq!(s.fabric.pcie, chip.pcie);
    assert!(s.fabric.in_network_reduction);
    Ok(())
}

#[test]
fn a_bad_system_file_names_its_field() -> TestResult {
    let cases = [
        ("value = 8,", "value = 0,", "gpus_per_node"),
        ("value = 4,", "value = 0,", "nodes"),
        ("value = 4,", "value = 4000000,", "nodes"),
        (
            "value = 20e-6",
            "value = 20.0",
            "fabric.scale_out.latency_s",
        ),
        (
            "value = 25e9",
            "value = 25.0",
            "fabric.scale_out.bandwidth_bytes_per_s",
        ),
        ("chip = \"h100\"", "chip = \"h1000-sxm\"", "chip"),
        ("chip = \"h100\"", "chip = \"\"", "chip"),
        ("id = \"my-cluster\"", "id = \" \"", "id"),
    ];
    for (from, to, field) in cases {
        let e = system_err(&SYSTEM.replace(from, to));
        assert!(
            e.message.contains(&format!("`{field}`")),
            "{to}: {}",
            e.message
        );
        assert!(e.hint.is_some(), "{to}");
    }
    // 8 × 2^18 = 2^21 devices: each count is in range, the product is not.
    let e = system_err(&SYSTEM.replace("value = 4,", "value = 262144,"));
    assert!(e.message.contains("gpus_per_node"), "{}", e.message);
    // Several nodes of a chip without a network between them.
    let e = system_err(
        "id = \"x\"\nname = \"x\"\nchip = \"l4\"\n\
         gpus_per_node = { value = 8, source = \"t\" }\nnodes = { value = 2, source = \"t\" }\n",
    );
    assert!(e.message.contains("fabric.scale_out"), "{}", e.message);
    // A chip without a platform and no [fabric].
    let e = system_err(
        "id = \"x\"\nname = \"x\"\nchip = \"rtx-4090\"\n\
         gpus_per_node = { value = 2, source = \"t\" }\nnodes = { value = 1, source = \"t\" }\n",
    );
    assert!(e.message.contains("`fabric`"), "{}", e.message);
    // Unknown fields and TOML errors keep the parser's message.
    let e = system_err(&format!("{SYSTEM}\nspeed = 3\n"));
    assert!(
        e.message.contains("speed") || e.message.contains("unknown"),
        "{}",
        e.message
    );
    Ok(())
}

#[test]
fn an_unknown_system_lists_the_ids() {
    let e = match load_system("dgx-h1000") {
        Ok(_) => panic!("found"),
        Err(e) => e,
    };
    assert!(
        e.message.contains("unknown system `dgx-h1000`"),
        "{}",
        e.message
    );
    let hint = e.hint.unwrap_or_default();
    assert!(
        hint.contains("dgx-h100") && hint.contains("tpu-v5p-64"),
        "{hint}"
    );
    assert!(hint.contains("--systems"), "{hint}");
}

#[test]
fn a_system_file_by_path() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("mine.toml");
    std::fs::write(&path, SYSTEM)?;
    let s = load_system(&path.display().to_string())?;
    assert_eq!(s.id, "my-cluster");
    let missing = dir.path().join("missing.toml");
    assert!(load_system(&missing.display().to_string()).is_err());
    assert!(is_system_id("dgx-h100") && !is_system_id("h100-sxm"));
    Ok(())
}

#[test]
fn a_platform_built_in_code_without_sources_still_round_trips() -> TestResult {
    let mut d = find_device("h100-sxm")?;
    if let Some(p) = d.platform.as_mut() {
        p.fabric.in_network_reduction_source = None;
        p.fabric.topology = None;
    }
    let back = parse_device(&device_to_toml(&d), "round-trip.toml")?;
    let f = back.platform.map(|p| p.fabric).unwrap_or_default();
    assert!(f.in_network_reduction);
    assert_eq!(
        f.in_network_reduction_source.as_deref(),
        Some("no source given")
    );
    Ok(())
}
