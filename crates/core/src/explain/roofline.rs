//! The roofline steps of a derivation: from an operator's FLOPs and bytes to its bound and
//! time on a chip (Williams, Waterman and Patterson 2009).

use super::{plain_number, qty, Outcome, Step, ROOFLINE_SOURCE};
use crate::analysis::OpRow;
use crate::device::Device;
use crate::one_op::RidgeDistance;
use crate::ops::Compute;
use crate::precision::Precision;
use crate::roofline::Bound;
use crate::units::BytesPerSec;

/// The cited peak an operator is held against, a description of which peak that is, and its
/// source.
fn peak_source(device: &Device, compute: Compute, act: Precision) -> (String, String) {
    let cited = |p: Precision| {
        device
            .peak_cited(p)
            .map(|c| c.source.clone())
            .unwrap_or_else(|| "catalog".into())
    };
    match compute {
        Compute::Matrix(p) => (
            format!("dense {p} matrix peak (tensor cores; never a 2:4-sparse figure)"),
            cited(p),
        ),
        Compute::Network => (
            "the link's bandwidth (a collective does no FLOPs)".into(),
            "comm::collective".into(),
        ),
        Compute::Vector => {
            if device.peak_cited(Precision::Fp32).is_some() {
                (
                    "fp32 vector peak (elementwise and reduction kernels upcast to fp32 and do \
                     not use matrix units; docs/cost-model.md §4)"
                        .into(),
                    cited(Precision::Fp32),
                )
            } else {
                (
                    format!(
                        "{act} peak (the chip publishes no fp32 figure; docs/cost-model.md §4)"
                    ),
                    cited(act),
                )
            }
        }
    }
}

/// The roofline steps from the row the cost steps arrive at: bytes moved, intensity, peak,
/// bandwidth, ridge, bound, attainable performance, times and the distance from the ridge.
pub(super) fn roofline_steps(
    row: &OpRow,
    device: &Device,
    act: Precision,
    bw: BytesPerSec,
) -> Vec<Step> {
    let mut steps = intensity_and_ridge(row, device, act, bw);
    steps.push(bound_step(row));
    steps.extend(time_steps(row, bw));
    steps.push(distance_step(row));
    steps
}

/// Bytes moved, intensity, the peak and bandwidth that apply, and the ridge point.
fn intensity_and_ridge(row: &OpRow, device: &Device, act: Precision, bw: BytesPerSec) -> Vec<Step> {
    let c = &row.cost;
    let p = &row.point();
    let (f, d) = (c.flops.get(), c.bytes().get());
    let (peak, w) = (row.peak().get(), bw.get());
    let (i, r) = (p.intensity.get(), p.ridge.get());
    let pn = plain_number;
    let (peak_what, peak_src) = peak_source(device, row.compute, act);
    let mem = device.main_memory();
    let bw_src = mem
        .and_then(|m| m.bandwidth.as_ref())
        .map(|b| b.source.clone())
        .unwrap_or_default();
    let mem_name = mem.map(|m| m.name.clone()).unwrap_or_default();
    vec![
        qty(
            "bytes moved",
            "D",
            "D_r + D_w",
            format!("{} + {}", pn(c.bytes_read.get()), pn(c.bytes_written.get())),
            d,
            "B",
            "docs/cost-model.md §5: every byte read or written crosses main memory once",
        ),
        qty(
            "arithmetic intensity",
            "I",
            "F / D",
            format!("{} / {}", pn(f), pn(d)),
            i,
            "FLOP/B",
            ROOFLINE_SOURCE,
        ),
        qty(
            "peak that applies",
            "P",
            peak_what,
            pn(peak),
            peak,
            "FLOP/s",
            peak_src,
        ),
        qty(
            "main-memory bandwidth",
            "W",
            format!("peak bandwidth of {mem_name}"),
            pn(w),
            w,
            "B/s",
            bw_src,
        ),
        qty(
            "ridge point",
            "R",
            "P / W",
            format!("{} / {}", pn(peak), pn(w)),
            r,
            "FLOP/B",
            ROOFLINE_SOURCE,
        ),
    ]
}

/// Compute- or memory-bound, from the intensity and the ridge.
fn bound_step(row: &OpRow) -> Step {
    let p = &row.point();
    let d = row.cost.bytes().get();
    let (i, r) = (p.intensity.get(), p.ridge.get());
    let pn = plain_number;
    let (cmp, verdict) = match p.bound {
        Bound::Compute if d == 0.0 => ("no bytes moved".to_string(), "compute-bound"),
        Bound::Compute => (format!("I = {} ≥ R = {}", pn(i), pn(r)), "compute-bound"),
        Bound::Memory => (format!("I = {} < R = {}", pn(i), pn(r)), "memory-bound"),
        Bound::Network => ("transfer > latency".to_string(), "network-bound"),
        Bound::Latency => ("latency > transfer".to_string(), "latency-bound"),
    };
    Step {
        quantity: "bound".into(),
        symbol: "bound".into(),
        formula: "compute-bound if I ≥ R, else memory-bound".into(),
        substituted: cmp,
        outcome: Outcome::Verdict {
            text: verdict.into(),
        },
        source: ROOFLINE_SOURCE.into(),
    }
}

/// Attainable performance, compute time, memory time and time.
fn time_steps(row: &OpRow, bw: BytesPerSec) -> [Step; 4] {
    let c = &row.cost;
    let p = &row.point();
    let (f, d) = (c.flops.get(), c.bytes().get());
    let (peak, w) = (row.peak().get(), bw.get());
    let i = p.intensity.get();
    let pn = plain_number;
    [
        qty(
            "attainable performance",
            "A",
            "min(P, I·W)",
            format!("min({}, {}·{})", pn(peak), pn(i), pn(w)),
            p.attainable.get(),
            "FLOP/s",
            ROOFLINE_SOURCE,
        ),
        qty(
            "compute time",
            "t_c",
            "F / P",
            format!("{} / {}", pn(f), pn(peak)),
            p.compute_time.get(),
            "s",
            ROOFLINE_SOURCE,
        ),
        qty(
            "memory time",
            "t_m",
            "D / W",
            format!("{} / {}", pn(d), pn(w)),
            p.memory_time.get(),
            "s",
            ROOFLINE_SOURCE,
        ),
        qty(
            "time",
            "t",
            "max(t_c, t_m)",
            format!(
                "max({}, {})",
                pn(p.compute_time.get()),
                pn(p.memory_time.get())
            ),
            p.time.get(),
            "s",
            ROOFLINE_SOURCE,
        ),
    ]
}

/// How many times the intensity must grow to reach the ridge, or how far above it it is.
fn distance_step(row: &OpRow) -> Step {
    let p = &row.point();
    let f = row.cost.flops.get();
    let (i, r) = (p.intensity.get(), p.ridge.get());
    let pn = plain_number;
    let dist = RidgeDistance::of(p);
    let movement = || Step {
        quantity: "distance from the ridge".into(),
        symbol: String::new(),
        formula: "R / I".into(),
        substituted: format!("{} / 0", pn(r)),
        outcome: Outcome::Verdict {
            text: "no FLOPs: pure data movement, bound by bandwidth at any intensity".into(),
        },
        source: ROOFLINE_SOURCE.into(),
    };
    match dist.bound {
        _ if f == 0.0 => movement(),
        Bound::Network | Bound::Latency => movement(),
        Bound::Memory => qty(
            "distance below the ridge (how many times the intensity must grow to reach it)",
            "",
            "R / I",
            format!("{} / {}", pn(r), pn(i)),
            dist.factor,
            "×",
            ROOFLINE_SOURCE,
        ),
        Bound::Compute => qty(
            "distance above the ridge",
            "",
            "I / R",
            format!("{} / {}", pn(i), pn(r)),
            dist.factor,
            "×",
            ROOFLINE_SOURCE,
        ),
    }
}
