use super::catalog::ALIASES;
use super::*;
use crate::embedded::HARDWARE_FILES;
use crate::error::InputError;
use roofline_core::device::{Device, MemoryKind};
use roofline_core::precision::Precision;

fn chip(id: &str) -> Result<Device, Box<dyn std::error::Error>> {
    Ok(find_device(id)?)
}

fn bf16(d: &Device) -> Result<f64, Box<dyn std::error::Error>> {
    Ok(d.peak(Precision::Bf16)?.get())
}

/// A minimal valid file; tests break one field at a time.
const MINIMAL: &str = r#"
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
"#;

fn err(text: &str) -> InputError {
    parse_device(text, "toy.toml").unwrap_err()
}

#[test]
fn every_embedded_file_parses_and_is_named_after_its_id() -> Result<(), Box<dyn std::error::Error>>
{
    assert_eq!(HARDWARE_FILES.len(), 29);
    for (stem, text) in HARDWARE_FILES {
        let d = parse_device(text, stem).unwrap_or_else(|e| panic!("{stem}: {e} {:?}", e.hint));
        assert_eq!(d.id, *stem);
    }
    let all = catalog()?;
    assert_eq!(all.len(), 29);
    let ids: Vec<&str> = all.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, catalog_ids());
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted);
    // Every chip has main-memory bandwidth and the main level first.
    for d in &all {
        assert!(d.bandwidth().is_ok(), "{}", d.id);
        assert_eq!(d.memory[0].kind, MemoryKind::Main, "{}", d.id);
    }
    Ok(())
}

#[test]
fn h100_sxm_matches_the_datasheet() -> Result<(), Box<dyn std::error::Error>> {
    // H100 datasheet: BF16 1,979 TFLOP/s with 2:4 sparsity -> 989.5 dense; HBM3 3.35 TB/s.
    let d = chip("h100-sxm")?;
    assert_eq!(bf16(&d)?, 989.5e12);
    assert_eq!(d.bandwidth()?.get(), 3.35e12);
    // Ridge: 989.5 / 3.35 = 295.37 FLOP/byte.
    let ridge = d.ridge(Precision::Bf16)?.get();
    assert!((ridge - 295.37).abs() < 0.01, "{ridge}");
    // FP64 Tensor Core 67, not the 34 vector figure; FP32 vector 67; FP8 3,958/2.
    assert_eq!(d.peak(Precision::Fp64)?.get(), 67e12);
    assert_eq!(d.peak(Precision::Fp32)?.get(), 67e12);
    assert_eq!(d.peak(Precision::Fp8)?.get(), 1979e12);
    assert!(d.peak(Precision::Int4).is_err());
    // 80 GB = 80e9 bytes; 50 MB L2 read as MiB = 52,428,800; 228 KiB shared = 233,472; 132 SMs.
    assert_eq!(
        d.capacity().ok_or("expected a value, got None")?.get(),
        80e9
    );
    let l2 = d
        .memory
        .iter()
        .find(|m| m.kind == MemoryKind::L2)
        .ok_or("no L2")?;
    assert_eq!(
        l2.capacity
            .as_ref()
            .ok_or("expected a value, got None")?
            .value
            .get(),
        52_428_800.0
    );
    assert_eq!(
        d.shared_memory_per_sm
            .as_ref()
            .ok_or("expected a value, got None")?
            .value
            .get(),
        233_472.0
    );
    assert_eq!(
        d.sm_count
            .as_ref()
            .ok_or("expected a value, got None")?
            .value,
        132
    );
    assert_eq!(d.launch_overhead.value.get(), 5e-6);
    // NVLink 4: 900 GB/s bidirectional; PCIe Gen5 x16: 128 GB/s.
    let nvlink = d
        .interconnect
        .as_ref()
        .ok_or("expected a value, got None")?
        .bandwidth
        .as_ref()
        .ok_or("expected a value, got None")?;
    assert_eq!(nvlink.value.get(), 900e9);
    let pcie = d
        .host_link
        .as_ref()
        .ok_or("expected a value, got None")?
        .bandwidth
        .as_ref()
        .ok_or("expected a value, got None")?;
    assert_eq!(pcie.value.get(), 128e9);
    // The source says where the number comes from and that it was halved.
    let src = &d
        .peak_cited(Precision::Bf16)
        .ok_or("expected a value, got None")?
        .source;
    assert!(src.contains("H100") && src.contains("halved"), "{src}");
    Ok(())
}

#[test]
fn a6000_matches_the_datasheet() -> Result<(), Box<dyn std::error::Error>> {
    // RTX A6000 datasheet: 'Tensor Performance 309.7 TFLOPS' (sparse FP16) -> 154.8 dense;
    // 768 GB/s GDDR6. Ridge 154.8 / 0.768 = 201.5625 FLOP/byte.
    let d = chip("a6000")?;
    assert_eq!(bf16(&d)?, 154.8e12);
    assert_eq!(d.bandwidth()?.get(), 768e9);
    let ridge = d.ridge(Precision::Bf16)?.get();
    assert!((ridge - 201.5625).abs() < 1e-6, "{ridge}");
    // Derived figures are flagged in their source.
    let tf32 = &d
        .peak_cited(Precision::Tf32)
        .ok_or("expected a value, got None")?
        .source;
    assert!(tf32.contains("FLAG"), "{tf32}");
    Ok(())
}

#[test]
fn a100_sxm_80gb_matches_the_datasheet() -> Result<(), Box<dyn std::error::Error>> {
    // A100 datasheet: BF16 312 | 624* (dense | sparse); 80GB SXM 2,039 GB/s.
    let d = chip("a100-sxm-80gb")?;
    assert_eq!(bf16(&d)?, 312e12);
    assert_eq!(d.bandwidth()?.get(), 2.039e12);
    // 312 / 2.039 = 153.02 FLOP/byte.
    let ridge = d.ridge(Precision::Bf16)?.get();
    assert!((ridge - 153.0).abs() < 0.05, "{ridge}");
    assert_eq!(d.peak(Precision::Fp64)?.get(), 19.5e12);
    assert!(d.peak(Precision::Fp8).is_err());
    Ok(())
}

#[test]
fn other_hand_checked_values() -> Result<(), Box<dyn std::error::Error>> {
    // TPU v4: 32 GiB (binary, the doc says GiB) = 34,359,738,368 bytes; 275 TFLOP/s bf16.
    let v4 = chip("tpu-v4")?;
    assert_eq!(
        v4.capacity().ok_or("expected a value, got None")?.get(),
        34_359_738_368.0
    );
    assert_eq!(bf16(&v4)?, 275e12);
    // MI300X: 1,307.4 dense (2,614.9 is the sparse one); 5.3 TB/s; FP64 matrix 163.4.
    let mi = chip("mi300x")?;
    assert_eq!(bf16(&mi)?, 1307.4e12);
    assert_eq!(mi.bandwidth()?.get(), 5.3e12);
    assert_eq!(mi.peak(Precision::Fp64)?.get(), 163.4e12);
    // Gaudi 2: 48 MB SRAM read as MiB, level sram; RoCE 300 GB/s per direction doubled.
    let g2 = chip("gaudi2")?;
    let sram = g2
        .memory
        .iter()
        .find(|m| m.kind == MemoryKind::Sram)
        .ok_or("expected a value, got None")?;
    assert_eq!(
        sram.capacity
            .as_ref()
            .ok_or("expected a value, got None")?
            .value
            .get(),
        48.0 * 1024.0 * 1024.0
    );
    let roce = g2
        .interconnect
        .as_ref()
        .ok_or("expected a value, got None")?
        .bandwidth
        .as_ref()
        .ok_or("expected a value, got None")?;
    assert_eq!(roce.value.get(), 600e9);
    // V100: no FP64 tensor cores, so fp64 is the 7.8 vector figure; no INT8 peak.
    let v100 = chip("v100")?;
    assert_eq!(v100.peak(Precision::Fp64)?.get(), 7.8e12);
    assert!(v100.peak(Precision::Int8).is_err());
    // M3 Max: no published GPU peak at all, still a valid chip (bandwidth only).
    let m3 = chip("m3-max")?;
    assert!(m3.peaks.is_empty());
    assert_eq!(m3.bandwidth()?.get(), 400e9);
    Ok(())
}

#[test]
fn no_bf16_peak_is_a_sparse_figure() -> Result<(), Box<dyn std::error::Error>> {
    // (id, the 2:4-sparse BF16/FP16 figure the datasheet prints, TFLOP/s).
    let sparse = [
        ("h100-sxm", 1979.0),
        ("h100-pcie", 1513.0),
        ("h100-nvl", 1671.0),
        ("h200", 1979.0),
        ("b200", 4500.0),
        ("gb200", 5000.0),
        ("a100-sxm-40gb", 624.0),
        ("a100-sxm-80gb", 624.0),
        ("a100-pcie-80gb", 624.0),
        ("a100-pcie-40gb", 624.0),
        ("a6000", 309.7),
        ("l40s", 733.0),
        ("l4", 242.0),
        ("a10", 250.0),
        ("mi300x", 2614.9),
        ("mi325x", 2614.9),
    ];
    assert_ne!(bf16(&chip("h100-sxm")?)?, 1979e12);
    for (id, s) in sparse {
        let v = bf16(&chip(id)?)? / 1e12;
        assert!(v != s, "{id}: bf16 is the sparse figure {s}");
        // Dense is half the sparse figure (the L40S sheet prints 362.05 | 733*).
        assert!(
            (v / (s / 2.0) - 1.0).abs() < 0.02,
            "{id}: {v} vs sparse {s}"
        );
    }
    // And across the whole catalog, bf16 never exceeds fp16 or fp8 (fp8 is at least the
    // bf16 rate where both exist), which a sparse bf16 next to dense fp8 would break.
    for d in catalog()? {
        if let (Ok(b), Ok(f8)) = (d.peak(Precision::Bf16), d.peak(Precision::Fp8)) {
            assert!(b.get() <= f8.get(), "{}", d.id);
        }
    }
    Ok(())
}

#[test]
fn round_trip_every_catalog_chip() -> Result<(), Box<dyn std::error::Error>> {
    for d in catalog()? {
        let text = device_to_toml(&d);
        let back = parse_device(&text, "round-trip.toml")
            .unwrap_or_else(|e| panic!("{}: {e}\n{text}", d.id));
        assert_eq!(back, d, "{}", d.id);
    }
    Ok(())
}

#[test]
fn minimal_file_parses() -> Result<(), Box<dyn std::error::Error>> {
    let d = parse_device(MINIMAL, "toy.toml")?;
    assert_eq!(d.id, "toy");
    assert_eq!(d.vendor, "");
    assert!(d.sm_count.is_none() && d.interconnect.is_none());
    assert_eq!(bf16(&d)?, 100e12);
    Ok(())
}

#[test]
fn malformed_toml_names_the_file_and_line() {
    let e = err("id = \"toy\"\nname = \n");
    assert!(e.message.starts_with("toy.toml: "), "{}", e.message);
    assert!(e.message.contains("line 2"), "{}", e.message);
    assert!(e.hint.is_some());
}

#[test]
fn unknown_field_is_named() {
    let e = err(&MINIMAL.replace("[compute]", "[compute]\nlaunch_overhead_us = 5"));
    assert!(e.message.contains("toy.toml"), "{}", e.message);
    assert!(e.message.contains("launch_overhead_us"), "{}", e.message);
    let e = err(&MINIMAL.replace("bf16 =", "fp4 ="));
    assert!(e.message.contains("fp4"), "{}", e.message);
}

#[test]
fn negative_bandwidth_is_named() {
    let e = err(&MINIMAL.replace("value = 1e12", "value = -1e12"));
    assert!(
        e.message.contains("toy.toml") && e.message.contains("memory[0].bandwidth_bytes_per_s"),
        "{}",
        e.message
    );
}

#[test]
fn zero_peak_is_named() {
    let e = err(&MINIMAL.replace("value = 100e12", "value = 0.0"));
    assert!(e.message.contains("peak_flops_per_s.bf16"), "{}", e.message);
    let e = err(&MINIMAL.replace("value = 100e12", "value = nan"));
    assert!(e.message.contains("peak_flops_per_s.bf16"), "{}", e.message);
}

#[test]
fn absurd_values_are_rejected() {
    let e = err(&MINIMAL.replace("value = 100e12", "value = 2e18"));
    assert!(e.message.contains("peak_flops_per_s.bf16"), "{}", e.message);
    let e = err(&MINIMAL.replace("value = 1e12", "value = 2e15"));
    assert!(
        e.message.contains("memory[0].bandwidth_bytes_per_s"),
        "{}",
        e.message
    );
    let e = err(&MINIMAL.replace("value = 5e-6", "value = 5.0"));
    assert!(
        e.message.contains("compute.launch_overhead_s"),
        "{}",
        e.message
    );
}

#[test]
fn tiny_and_huge_values_are_rejected_both_ways() {
    // A peak or bandwidth of 1e-300 (prints `inf` times and NaN shares downstream) is below
    // every plausible figure: 1e6 FLOP/s, 1e6 B/s.
    for (from, to, field) in [
        ("value = 100e12", "value = 1e-300", "peak_flops_per_s.bf16"),
        (
            "value = 1e12",
            "value = 1e-300",
            "memory[0].bandwidth_bytes_per_s",
        ),
        ("value = 5e-6", "value = 1e-12", "compute.launch_overhead_s"),
    ] {
        let e = err(&MINIMAL.replace(from, to));
        assert!(e.message.contains(field), "{}", e.message);
        assert!(e.message.contains("less than"), "{}", e.message);
        assert!(e.hint.is_some_and(|h| h.contains("exponent")));
    }
    // Capacities: 1 PB (1e15 B) is the most, 1 kB the least; shared memory at most 16 MiB.
    let with_compute = |line: &str| MINIMAL.replace("[compute]\n", &format!("[compute]\n{line}\n"));
    let capacity = |v: &str| {
        MINIMAL.replace(
            "bandwidth_bytes_per_s = { value = 1e12, source = \"test\" }",
            &format!(
                "bandwidth_bytes_per_s = {{ value = 1e12, source = \"test\" }}\n\
                 capacity_bytes = {{ value = {v}, source = \"test\" }}"
            ),
        )
    };
    assert!(parse_device(&capacity("80e9"), "toy.toml").is_ok());
    for v in ["2e15", "10"] {
        let e = err(&capacity(v));
        assert!(
            e.message.contains("memory[0].capacity_bytes"),
            "{}",
            e.message
        );
    }
    let shared = |v: &str| {
        with_compute(&format!(
            "shared_memory_per_sm_bytes = {{ value = {v}, source = \"test\" }}"
        ))
    };
    // The H100's 228 KiB = 233,472 bytes is accepted; 1 GiB and 10 bytes are not.
    assert!(parse_device(&shared("233472"), "toy.toml").is_ok());
    for v in ["1073741824", "10"] {
        let e = err(&shared(v));
        assert!(
            e.message.contains("compute.shared_memory_per_sm_bytes"),
            "{}",
            e.message
        );
    }
    let e = err(&with_compute(
        "sm_count = { value = 4000000000, source = \"test\" }",
    ));
    assert!(e.message.contains("compute.sm_count"), "{}", e.message);
}

#[test]
fn structural_errors() {
    let e = err(&MINIMAL.replace("id = \"toy\"", "id = \"\""));
    assert!(e.message.contains("`id`"), "{}", e.message);
    let e = err(&MINIMAL.replace("level = \"main\"", "level = \"l2\""));
    assert!(e.message.contains("main"), "{}", e.message);
    let e = err(&MINIMAL.replace("level = \"main\"", "level = \"l4\""));
    assert!(e.message.contains("l4"), "{}", e.message);
    let e = err(&MINIMAL.replace(
        "source = \"test\" }\n[[memory]]",
        "source = \" \" }\n[[memory]]",
    ));
    assert!(
        e.message.contains("peak_flops_per_s.bf16.source"),
        "{}",
        e.message
    );
    let no_bw = MINIMAL.replace(
        "bandwidth_bytes_per_s = { value = 1e12, source = \"test\" }\n",
        "capacity_bytes = { value = 1e9, source = \"test\" }\n",
    );
    let e = err(&no_bw);
    assert!(
        e.message.contains("memory[0].bandwidth_bytes_per_s"),
        "{}",
        e.message
    );
}

#[test]
fn unknown_chip_suggests_the_closest_ids() -> Result<(), Box<dyn std::error::Error>> {
    let e = find_device("h100-sxmm").unwrap_err();
    assert_eq!(e.message, "unknown chip `h100-sxmm`");
    let hint = e.hint.ok_or("expected a value, got None")?;
    assert!(
        hint.starts_with("closest catalog ids: `h100-sxm`"),
        "{hint}"
    );
    assert!(hint.contains("roofline hardware list"), "{hint}");
    Ok(())
}

#[test]
fn ids_are_case_insensitive_and_aliases_resolve() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(chip("H100-SXM")?.id, "h100-sxm");
    assert_eq!(chip("h100")?.id, "h100-sxm");
    assert_eq!(chip("A100")?.id, "a100-sxm-80gb");
    assert_eq!(chip("rtx-a6000")?.id, "a6000");
    assert_eq!(chip("RTX_A6000")?.id, "a6000");
    assert_eq!(chip("mi300")?.id, "mi300x");
    let ids = catalog_ids();
    for (alias, id) in ALIASES {
        assert!(ids.contains(id), "alias {alias} -> missing id {id}");
        assert!(!ids.contains(alias), "alias {alias} shadows an id");
    }
    Ok(())
}

#[test]
fn chip_file_by_path() -> Result<(), Box<dyn std::error::Error>> {
    let mut d = chip("h100-sxm")?;
    d.id = "my-h100".into();
    d.peaks[0].1.source = "measured \"quoted\" \\ backslash".into();
    let path = std::env::temp_dir().join(format!("roofline-chip-{}.toml", std::process::id()));
    std::fs::write(&path, device_to_toml(&d))?;
    let back = find_device(path.to_str().ok_or("expected a value, got None")?);
    let _ = std::fs::remove_file(&path);
    assert_eq!(back?, d);

    let e = find_device("does/not/exist.toml").unwrap_err();
    assert!(e.message.contains("`does/not/exist.toml`"), "{}", e.message);
    Ok(())
}
