//! The profile readers on the real samples in `../shared/refs/samples` (and the synthetic ncu
//! CSV as a format test). Every expected value is read by hand from the sample file and written
//! here with the line it comes from; derived values are hand arithmetic on those.

use roofline_core::device::MemoryKind;
use roofline_core::ops::Compute;
use roofline_core::precision::Precision;
use roofline_core::profile::{CostSource, ProfileFormat, RoofFormat};
use roofline_inputs::profile::{load, Imported};
use std::path::PathBuf;

fn samples(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/refs/samples")
        .join(name)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-30)
}

fn profile(name: &str) -> roofline_core::profile::Profile {
    match load(&samples(name)).unwrap() {
        Imported::Profile(p) => p,
        Imported::Roof(_) => panic!("{name} read as a roof"),
    }
}

fn roof(name: &str) -> roofline_core::profile::EmpiricalRoof {
    match load(&samples(name)).unwrap() {
        Imported::Roof(r) => r,
        Imported::Profile(_) => panic!("{name} read as a profile"),
    }
}

#[test]
fn synthetic_ncu_csv_triad_kernel() -> Result<(), Box<dyn std::error::Error>> {
    // SYNTHETIC_ncu_csv_format_illustration.csv: one kernel, ID 0, `==PROF==` lines before the
    // header; dram__bytes_read.sum 134.22 Mbyte, dram__bytes_write.sum 67.11 Mbyte,
    // gpu__time_duration.sum 52.10 usecond, ffma "16,777,216" inst (× 2 FLOP), fadd and fmul
    // 0, sm__inst_executed_pipe_tensor.sum 0.
    let p = profile("SYNTHETIC_ncu_csv_format_illustration.csv");
    assert_eq!(p.format, ProfileFormat::NcuCsv);
    assert_eq!(p.kernels.len(), 1);
    let k = &p.kernels[0];
    assert_eq!(
        k.name,
        "triad_kernel(float*, const float*, const float*, float, int)"
    );
    assert!(close(
        k.bytes_read.ok_or("expected a value, got None")?.get(),
        134.22e6
    ));
    assert!(close(
        k.bytes_written.ok_or("expected a value, got None")?.get(),
        67.11e6
    ));
    assert!(close(k.duration.get(), 52.10e-6));
    assert_eq!(k.flops.len(), 1);
    assert_eq!(k.flops[0].0, Precision::Fp32);
    assert_eq!(k.flops[0].1.get(), 2.0 * 16_777_216.0);
    assert_eq!(k.tensor_instructions, Some(0.0));
    assert_eq!(k.cost_source, CostSource::Counters);
    assert_eq!(k.l2_bytes, None);
    Ok(())
}

#[test]
fn hta_trace_kernel_links_to_its_mm_through_the_launch() -> Result<(), Box<dyn std::error::Error>> {
    // torch_profiler_trace_excerpt_hta_backward_thread.json: one kernel
    // `void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>`, dur 45 µs,
    // correlation 2131433; the cudaLaunchKernel of that correlation at ts …364374 on tid 24922
    // falls inside aten::mm (ts …364330, dur 58) with Input Dims [[2048,2048],[2048,256]],
    // float. One ProfilerStep#552.
    let p = profile("torch_profiler_trace_excerpt_hta_backward_thread.json");
    assert_eq!(p.format, ProfileFormat::TorchTrace);
    assert_eq!(p.steps, 1);
    assert_eq!(p.kernels.len(), 1);
    let k = &p.kernels[0];
    assert!(k.name.contains("cutlass_80_tensorop_s1688gemm"));
    assert_eq!(k.duration.get(), 45e-6);
    assert_eq!(
        k.op.as_ref().ok_or("expected a value, got None")?.name,
        "aten::mm"
    );
    assert_eq!(k.cost_source, CostSource::CostModel);
    // 2·m·n·k = 2·2048·256·2048 = 2,147,483,648 FLOP, computed in TF32 (a tensorop kernel).
    assert_eq!(k.total_flops().get(), 2_147_483_648.0);
    assert_eq!(k.compute, Some(Compute::Matrix(Precision::Tf32)));
    // Read (2048·2048 + 2048·256)·4 = 18,874,368 B; written 2048·256·4 = 2,097,152 B.
    assert_eq!(
        k.bytes_read.ok_or("expected a value, got None")?.get(),
        18_874_368.0
    );
    assert_eq!(
        k.bytes_written.ok_or("expected a value, got None")?.get(),
        2_097_152.0
    );
    assert_eq!(
        k.shaped_as.as_deref(),
        Some("gemm m=2048 n=256 k=2048 fp32")
    );
    Ok(())
}

#[test]
fn mixbench_log_peaks_and_plateau() -> Result<(), Box<dyn std::error::Error>> {
    // mixbench_cuda_ro_GTX-1060.log: `Device: GeForce GTX 1060 6GB`; SP GFLOPS peaks at 4521.01
    // (row 128, Flops/byte 64.250); SP GB/sec plateau 165.91 (rows 0, 6, 9); DP GFLOPS peaks at
    // 147.51 (row 192, 48.125) with GB/sec 166.23 at row 1; integer GIOPS peak 1467.73 (row 64).
    // 33 experiment rows × 3 groups = 99 samples.
    let r = roof("mixbench_cuda_ro_GTX-1060.log");
    assert_eq!(r.format, RoofFormat::Mixbench);
    assert_eq!(r.machine, "GeForce GTX 1060 6GB");
    let sp = r
        .peak(Precision::Fp32)
        .ok_or("expected a value, got None")?;
    assert!(close(sp.value.get(), 4521.01e9));
    assert!(close(
        sp.at_intensity.ok_or("expected a value, got None")?.get(),
        64.25
    ));
    assert!(close(
        sp.plateau.ok_or("expected a value, got None")?.get(),
        165.91e9
    ));
    let dp = r
        .peak(Precision::Fp64)
        .ok_or("expected a value, got None")?;
    assert!(close(dp.value.get(), 147.51e9));
    assert!(close(
        dp.plateau.ok_or("expected a value, got None")?.get(),
        166.23e9
    ));
    let int = r.peaks.iter().find(|p| p.precision.is_none()).unwrap();
    assert!(close(int.value.get(), 1467.73e9));
    // Main memory: the largest GB/s of any experiment, DP row 1.
    assert!(close(
        r.main()
            .ok_or("expected a value, got None")?
            .bandwidth
            .get(),
        166.23e9
    ));
    assert_eq!(r.samples.len(), 99);
    let d = r.to_device("gtx-1060-mixbench")?;
    // Ridge fp32 = 4521.01 / 166.23 = 27.197 FLOP/byte.
    assert!(close(d.ridge(Precision::Fp32)?.get(), 4521.01 / 166.23));
    Ok(())
}

#[test]
fn ert_roofline_json_levels_and_peak() -> Result<(), Box<dyn std::error::Error>> {
    // ert_roofline.json: empirical.gbytes.data L1 1002.83, L2 541.98, L3 290.41, DRAM 68.76;
    // empirical.gflops.data GFLOPs 288.33; HOSTNAME kcadmin-UniServer-R5200-G3; ERT_GPU false;
    // no ERT_PRECISION (double assumed).
    let r = roof("ert_roofline.json");
    assert_eq!(r.format, RoofFormat::ErtJson);
    assert_eq!(r.machine, "kcadmin-UniServer-R5200-G3");
    assert_eq!(r.gpu, Some(false));
    let bw: Vec<(MemoryKind, f64)> = r
        .levels
        .iter()
        .map(|l| (l.kind, l.bandwidth.get()))
        .collect();
    assert_eq!(
        bw,
        [
            (MemoryKind::L1, 1002.83e9),
            (MemoryKind::L2, 541.98e9),
            (MemoryKind::L3, 290.41e9),
            (MemoryKind::Main, 68.76e9)
        ]
    );
    assert!(close(
        r.peak(Precision::Fp64)
            .ok_or("expected a value, got None")?
            .value
            .get(),
        288.33e9
    ));
    assert!(r.notes.iter().any(|n| n.contains("ERT_PRECISION")));
    let d = r.to_device("ert")?;
    assert_eq!(d.memory[0].kind, MemoryKind::Main);
    // A CPU run: the 1 µs CPU launch overhead assumed.
    assert_eq!(d.launch_overhead.value.get(), 1e-6);
    Ok(())
}

#[test]
fn ert_sum_file() -> Result<(), Box<dyn std::error::Error>> {
    // ert_sum_FLOPS001_MPI0001_OpenMP0001.txt: 11.03 GFLOPs, 1458.88 Weight, L1 176.44, L2
    // 102.18, L3 45.70, L4 22.90, DRAM 18.30; HOSTNAME ('kcadmin-UniServer-R5200-G3', …);
    // 'ERT_GPU': [False].
    let r = roof("ert_sum_FLOPS001_MPI0001_OpenMP0001.txt");
    assert_eq!(r.format, RoofFormat::ErtSum);
    assert_eq!(r.machine, "kcadmin-UniServer-R5200-G3");
    assert_eq!(r.gpu, Some(false));
    assert!(close(
        r.peak(Precision::Fp64)
            .ok_or("expected a value, got None")?
            .value
            .get(),
        11.03e9
    ));
    let names: Vec<(&str, f64)> = r
        .levels
        .iter()
        .map(|l| (l.name.as_str(), l.bandwidth.get()))
        .collect();
    assert_eq!(
        names,
        [
            ("L1", 176.44e9),
            ("L2", 102.18e9),
            ("L3", 45.70e9),
            ("L4", 22.90e9),
            ("DRAM", 18.30e9)
        ]
    );
    assert_eq!(r.levels[3].kind, MemoryKind::L3); // L4: a cache beyond L2
    assert!(r.notes.iter().any(|n| n.contains("1458.88")));
    Ok(())
}

#[test]
fn ert_trial_file_head() -> Result<(), Box<dyn std::error::Error>> {
    // ert_try001_head_…txt: 55 lines, working sets 8 and 16 B. Best rate at the largest (16 B):
    // the last line, 2147483648 bytes and 134217728 FLOPs in 196196.564 µs.
    let r = roof("ert_try001_head_FLOPS001_MPI0001_OpenMP0001.txt");
    assert_eq!(r.format, RoofFormat::ErtTrials);
    assert_eq!(r.samples.len(), 55);
    let secs = 196196.564 / 1e6;
    assert!(close(
        r.main()
            .ok_or("expected a value, got None")?
            .bandwidth
            .get(),
        2147483648.0 / secs
    ));
    assert!(close(
        r.peak(Precision::Fp64)
            .ok_or("expected a value, got None")?
            .value
            .get(),
        134217728.0 / secs
    ));
    assert!(r.notes[0].contains("16 B"));
    Ok(())
}
