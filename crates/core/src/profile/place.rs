//! A measured kernel under its roof: achieved FLOP/s, intensity, % of the roof at its
//! intensity, time lost, regime and advice.
//!
//! For a kernel of F FLOP moving B bytes in measured time t, on a roof of peak P and bandwidth W
//! (Williams, Waterman and Patterson, "Roofline", CACM 2009):
//!
//! - achieved = F / t (FLOP/s); intensity I = F / B (FLOP/byte);
//! - roofline time t* = max(F / P, B / W), the least time the roof allows;
//! - % of roof = t* / t (= achieved / min(P, I·W) when F > 0, and achieved bandwidth / W for a
//!   copy with no FLOPs);
//! - time lost = max(0, t − t*): what the kernel would gain by reaching its roof. Kernels are
//!   ranked by it.
//!
//! Regime: **launch** when t is shorter than the chip's launch overhead (launching it takes at
//! least half of its wall time), else **memory** when I is below the ridge P / W, else
//! **compute**. The advice per regime is the seed's: memory-bound → fuse, batch, quantize;
//! compute-bound → tensor cores, lower precision; launch-bound → fewer launches, CUDA graphs.

use super::{CostSource, ProfiledKernel};
use crate::device::Device;
use crate::ops::Compute;
use crate::precision::Precision;
use crate::roofline::{Bound, Roof};
use crate::units::{Bytes, BytesPerSec, Flop, FlopPerByte, FlopPerSec, Seconds};
use serde::Serialize;
use std::fmt;

/// Below this fraction of its roof a kernel gets the advice to look at how it uses the
/// hardware, not only at its regime.
pub const LOW_FRACTION: f64 = 0.5;
/// Above this fraction of its roof a kernel beat the main-memory roof: its bytes came from a
/// cache.
pub const ABOVE_ROOF: f64 = 1.05;

/// What limits a profiled kernel (its regime).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProfiledBound {
    /// Shorter than one launch: launch overhead dominates.
    Launch,
    /// Intensity below the ridge: bandwidth limits it.
    Memory,
    /// Intensity at or above the ridge: peak FLOP/s limits it.
    Compute,
    /// No FLOPs or bytes known, or no roof to hold it against.
    Unknown,
}

impl fmt::Display for ProfiledBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProfiledBound::Launch => "launch",
            ProfiledBound::Memory => "memory",
            ProfiledBound::Compute => "compute",
            ProfiledBound::Unknown => "unknown",
        })
    }
}

/// One kernel placed under its roof.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Placement {
    /// The kernel's position in [`super::Profile::kernels`].
    pub index: usize,
    /// Kernel (or operator) name.
    pub name: String,
    /// What the cost model took it for, when costed by shape.
    pub shaped_as: Option<String>,
    /// Measured duration, seconds.
    pub duration: Seconds,
    /// FLOPs (all precisions).
    pub flops: Flop,
    /// Main-memory bytes, where known.
    pub bytes: Option<Bytes>,
    /// Where FLOPs and bytes come from.
    pub cost_source: CostSource,
    /// FLOPs / duration.
    pub achieved: FlopPerSec,
    /// bytes / duration, where bytes are known.
    pub achieved_bandwidth: Option<BytesPerSec>,
    /// FLOPs / bytes, where bytes are known and not zero.
    pub intensity: Option<FlopPerByte>,
    /// The roof it is held against: the peak of its precision and units, main-memory
    /// bandwidth.
    pub roof: Option<Roof>,
    /// The precision whose peak applies.
    pub precision: Option<Precision>,
    /// min(peak, intensity × bandwidth), FLOP/s.
    pub attainable: Option<FlopPerSec>,
    /// max(F / P, B / W), seconds.
    pub roofline_time: Option<Seconds>,
    /// roofline time / duration (1 = on the roof).
    pub fraction_of_roof: Option<f64>,
    /// max(0, duration − roofline time), seconds.
    pub time_lost: Option<Seconds>,
    /// Memory or compute, by intensity against the ridge.
    pub bound: Option<Bound>,
    /// What limits it.
    pub regime: ProfiledBound,
    /// What to do about it.
    pub advice: String,
}

/// The peak a kernel is held against, and its precision: matrix units in their precision;
/// vector units at the fp32 peak (or the kernel's own precision on a chip with no fp32 figure);
/// counters without a unit: tensor-pipe work on matrix units (fp16 assumed: the raw page does
/// not say which precision), the rest in its dominant precision. A precision the chip has no
/// figure for (a bf16 GEMM on a CPU file with fp32 only) falls back to fp32.
///
/// # Errors
/// The chip's message when it has neither the peak needed nor an fp32 peak.
fn peak_of(k: &ProfiledKernel, device: &Device) -> Result<(FlopPerSec, Precision), String> {
    let dominant = k.dominant_precision().unwrap_or(Precision::Fp32);
    let want = match k.compute {
        Some(Compute::Matrix(p)) => p,
        Some(Compute::Vector | Compute::Network) if device.peak(Precision::Fp32).is_ok() => {
            Precision::Fp32
        }
        Some(Compute::Vector | Compute::Network) => dominant,
        None if k.tensor_instructions.is_some_and(|t| t > 0.0) => Precision::Fp16,
        None => dominant,
    };
    match device.peak(want) {
        Ok(p) => Ok((p, want)),
        Err(e) => device
            .peak(Precision::Fp32)
            .map(|p| (p, Precision::Fp32))
            .map_err(|_| e.to_string()),
    }
}

fn advice(
    regime: ProfiledBound,
    fraction: Option<f64>,
    k: &ProfiledKernel,
    used: Option<Precision>,
) -> String {
    let mut a = match regime {
        ProfiledBound::Launch => {
            "launch-bound (shorter than one launch): fewer launches: fuse it with its \
                           neighbours, capture CUDA graphs (torch.compile mode=\"reduce-overhead\")"
                .to_string()
        }
        ProfiledBound::Memory => {
            "memory-bound: fuse it with its neighbours (its tensors stay on chip), \
                           batch more tokens per weight read, quantize (fewer bytes per element)"
                .to_string()
        }
        ProfiledBound::Compute => {
            let on_matrix = matches!(k.compute, Some(Compute::Matrix(_)))
                || k.tensor_instructions.is_some_and(|t| t > 0.0);
            let wide = matches!(
                used,
                Some(Precision::Fp32 | Precision::Fp64 | Precision::Tf32)
            );
            match (on_matrix, wide) {
                (false, _) => {
                    "compute-bound on vector units: move it to tensor cores (matrix units) \
                               in a lower precision (bf16, fp8)"
                        .to_string()
                }
                (true, true) => {
                    "compute-bound: run it in a lower precision (bf16, fp8) on tensor cores"
                        .to_string()
                }
                (true, false) => {
                    "compute-bound on tensor cores: a lower precision (fp8) or fewer FLOPs \
                                  (a smaller model, sparsity) is what is left"
                        .to_string()
                }
            }
        }
        ProfiledBound::Unknown => {
            if k.cost_source == CostSource::Unknown {
                "no FLOPs or bytes known: profile it with ncu (DRAM bytes, FLOP counters) or record \
                 shapes (torch.profiler record_shapes=True)"
                    .to_string()
            } else {
                "no roof to hold it against: pass --hardware ID, a chip file or a mixbench/ERT output"
                    .to_string()
            }
        }
    };
    match fraction {
        Some(f) if f > ABOVE_ROOF => a.push_str(&format!(
            "; at {:.0} % of its main-memory roof: its bytes came from a cache (the count is \
             main-memory traffic), hold it against that cache's roof",
            f * 100.0
        )),
        Some(f) if f < LOW_FRACTION && regime != ProfiledBound::Launch => a.push_str(&format!(
            "; at {:.0} % of its roof: check access patterns (coalescing, strides), occupancy \
             and tile shapes",
            f * 100.0
        )),
        _ => {}
    }
    if k.tensor_instructions.is_some_and(|t| t > 0.0) {
        a.push_str(
            "; tensor-core FLOPs are not in the SASS FLOP counters: its FLOPs are a lower bound",
        );
    }
    a
}

/// Places one kernel under the roof of `device` (or under none: achieved figures only).
pub fn place_kernel(k: &ProfiledKernel, device: Option<&Device>) -> Placement {
    let t = k.duration;
    let flops = k.total_flops();
    let bytes = k.bytes();
    let rate = |x: f64| if t.get() > 0.0 { x / t.get() } else { 0.0 };
    let achieved = FlopPerSec(rate(flops.get()));
    let achieved_bandwidth = bytes.map(|b| BytesPerSec(rate(b.get())));
    let intensity = bytes.filter(|b| b.get() > 0.0).map(|b| flops / b);
    let known = k.cost_source != CostSource::Unknown && (flops.get() > 0.0 || bytes.is_some());
    let mut p = Placement {
        index: k.index,
        name: k.name.clone(),
        shaped_as: k.shaped_as.clone(),
        duration: t,
        flops,
        bytes,
        cost_source: k.cost_source,
        achieved,
        achieved_bandwidth,
        intensity,
        roof: None,
        precision: None,
        attainable: None,
        roofline_time: None,
        fraction_of_roof: None,
        time_lost: None,
        bound: None,
        regime: ProfiledBound::Unknown,
        advice: String::new(),
    };
    let roof = device.and_then(|d| {
        let bw = d.bandwidth().ok()?;
        let (peak, used) = peak_of(k, d).ok()?;
        Some((
            Roof {
                peak,
                bandwidth: bw,
            },
            used,
            d.launch_overhead.value,
        ))
    });
    if let (Some((roof, used, launch)), true) = (roof, known) {
        let cost = k.cost().unwrap_or(crate::ops::Cost {
            flops,
            bytes_read: Bytes::ZERO,
            bytes_written: Bytes::ZERO,
        });
        let pt = roof.evaluate(&cost);
        let ideal = pt.time;
        p.roof = Some(roof);
        p.precision = Some(used);
        p.attainable = bytes.map(|_| pt.attainable);
        p.roofline_time = Some(ideal);
        p.fraction_of_roof = (t.get() > 0.0).then(|| ideal.get() / t.get());
        p.time_lost = Some(Seconds((t.get() - ideal.get()).max(0.0)));
        p.bound = bytes.map(|_| pt.bound);
        p.regime = if t < launch {
            ProfiledBound::Launch
        } else {
            match pt.bound {
                Bound::Memory if bytes.is_some() => ProfiledBound::Memory,
                _ => ProfiledBound::Compute,
            }
        };
    }
    p.advice = advice(p.regime, p.fraction_of_roof, k, p.precision);
    p
}

/// Places every kernel of `kernels` and ranks them: by time lost against their roof, largest
/// first; kernels without a roof after them, longest first.
pub fn place_all(kernels: &[ProfiledKernel], device: Option<&Device>) -> Vec<Placement> {
    let mut out: Vec<Placement> = kernels.iter().map(|k| place_kernel(k, device)).collect();
    out.sort_by(|a, b| match (a.time_lost, b.time_lost) {
        (Some(x), Some(y)) => y.get().total_cmp(&x.get()),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => b.duration.get().total_cmp(&a.duration.get()),
    });
    out
}

/// Time and count per regime, for a summary line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfiledBoundTotal {
    /// The regime.
    pub regime: ProfiledBound,
    /// Kernels in it.
    pub kernels: u64,
    /// Their measured time, seconds.
    pub time: Seconds,
    /// Their time lost against the roof, seconds.
    pub time_lost: Seconds,
}

/// Sums of [`place_all`]'s placements per regime, in the order launch, memory, compute,
/// unknown; regimes with no kernel left out.
pub fn by_regime(placements: &[Placement]) -> Vec<ProfiledBoundTotal> {
    [
        ProfiledBound::Launch,
        ProfiledBound::Memory,
        ProfiledBound::Compute,
        ProfiledBound::Unknown,
    ]
    .into_iter()
    .filter_map(|r| {
        let of: Vec<&Placement> = placements.iter().filter(|p| p.regime == r).collect();
        (!of.is_empty()).then(|| ProfiledBoundTotal {
            regime: r,
            kernels: of.len() as u64,
            time: of.iter().map(|p| p.duration).sum(),
            time_lost: of.iter().filter_map(|p| p.time_lost).sum(),
        })
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::h100_sxm;

    fn kernel(f: f64, b: Option<f64>, secs: f64, compute: Option<Compute>) -> ProfiledKernel {
        ProfiledKernel {
            name: "k".into(),
            index: 0,
            duration: Seconds(secs),
            flops: vec![(Precision::Fp32, Flop(f))],
            tensor_instructions: None,
            bytes_read: b.map(Bytes),
            bytes_written: Some(Bytes::ZERO),
            l2_bytes: None,
            compute,
            cost_source: CostSource::Counters,
            op: None,
            shaped_as: None,
        }
    }

    #[test]
    fn memory_bound_kernel_by_hand() -> Result<(), Box<dyn std::error::Error>> {
        // Triad-like: 33.55 MFLOP, 201.33 MB in 100 µs on the H100 (fp32 vector 67 TFLOP/s,
        // 3.35 TB/s): t* = max(33.55e6/67e12, 201.33e6/3.35e12) = 60.10 µs; 60.1 % of the roof;
        // 39.90 µs lost; AI 0.1667 < ridge 20 → memory.
        let d = h100_sxm();
        let k = kernel(33.554432e6, Some(201.326592e6), 100e-6, None);
        let p = place_kernel(&k, Some(&d));
        let ideal = 201.326592e6 / 3.35e12;
        assert!((p.roofline_time.ok_or("expected a value, got None")?.get() - ideal).abs() < 1e-15);
        assert!(
            (p.fraction_of_roof.ok_or("expected a value, got None")? - ideal / 100e-6).abs()
                < 1e-12
        );
        assert!(
            (p.time_lost.ok_or("expected a value, got None")?.get() - (100e-6 - ideal)).abs()
                < 1e-15
        );
        assert_eq!(p.regime, ProfiledBound::Memory);
        assert_eq!(p.bound, Some(Bound::Memory));
        assert_eq!(
            p.roof.ok_or("expected a value, got None")?.peak.get(),
            67e12
        );
        assert!(p.advice.starts_with("memory-bound: fuse"), "{}", p.advice);
        // achieved = F / t = 335.5 GFLOP/s.
        assert!((p.achieved.get() - 335.54432e9).abs() < 1.0);
        Ok(())
    }

    #[test]
    fn short_kernel_is_launch_bound_and_gemm_is_compute_bound(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let d = h100_sxm(); // 5 µs launch overhead
        let short = kernel(1e6, Some(1e6), 2e-6, None);
        assert_eq!(place_kernel(&short, Some(&d)).regime, ProfiledBound::Launch);
        assert!(place_kernel(&short, Some(&d))
            .advice
            .contains("CUDA graphs"));
        // A bf16 GEMM on matrix units at AI 1000: compute-bound against 989.5 TFLOP/s.
        let mut g = kernel(
            1e12,
            Some(1e9),
            2e-3,
            Some(Compute::Matrix(Precision::Bf16)),
        );
        g.flops = vec![(Precision::Bf16, Flop(1e12))];
        let p = place_kernel(&g, Some(&d));
        assert_eq!(p.regime, ProfiledBound::Compute);
        assert_eq!(
            p.roof.ok_or("expected a value, got None")?.peak.get(),
            989.5e12
        );
        // 1e12 / 989.5e12 = 1.0106 ms of 2 ms: 50.5 %.
        assert!(
            (p.fraction_of_roof.ok_or("expected a value, got None")? - 1e12 / 989.5e12 / 2e-3)
                .abs()
                < 1e-12
        );
        assert!(p.advice.contains("fp8"), "{}", p.advice);
        Ok(())
    }

    #[test]
    fn ranking_by_time_lost_then_unknowns_by_duration() {
        let d = h100_sxm();
        let mut a = kernel(0.0, Some(3.35e6), 10e-6, None); // ideal 1 µs, lost 9 µs
        a.name = "a".into();
        let mut b = kernel(0.0, Some(3.35e6), 30e-6, None); // lost 29 µs
        b.name = "b".into();
        let mut u = kernel(0.0, None, 50e-6, None);
        u.cost_source = CostSource::Unknown;
        u.flops.clear();
        u.name = "u".into();
        let ranked = place_all(&[a, u, b], Some(&d));
        let names: Vec<&str> = ranked.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["b", "a", "u"]);
        assert_eq!(ranked[2].regime, ProfiledBound::Unknown);
        let totals = by_regime(&ranked);
        assert_eq!(totals[0].regime, ProfiledBound::Memory);
        assert_eq!(totals[0].kernels, 2);
        assert!((totals[0].time_lost.get() - 38e-6).abs() < 1e-15);
    }

    #[test]
    fn faster_than_the_roof_is_flagged_as_cache() -> Result<(), Box<dyn std::error::Error>> {
        let d = h100_sxm();
        let k = kernel(0.0, Some(3.35e9), 0.5e-3, None); // ideal 1 ms, ran in 0.5 ms
        let p = place_kernel(&k, Some(&d));
        assert!((p.fraction_of_roof.ok_or("expected a value, got None")? - 2.0).abs() < 1e-12);
        assert_eq!(p.time_lost.ok_or("expected a value, got None")?.get(), 0.0);
        assert!(p.advice.contains("cache"), "{}", p.advice);
        Ok(())
    }

    #[test]
    fn without_a_chip_only_achieved_figures() -> Result<(), Box<dyn std::error::Error>> {
        let k = kernel(2e9, Some(1e9), 1e-3, None);
        let p = place_kernel(&k, None);
        assert_eq!(p.regime, ProfiledBound::Unknown);
        assert_eq!(p.achieved.get(), 2e12);
        assert_eq!(p.intensity.ok_or("expected a value, got None")?.get(), 2.0);
        assert!(p.roof.is_none() && p.fraction_of_roof.is_none());
        assert!(p.advice.contains("--hardware"));
        Ok(())
    }
}
