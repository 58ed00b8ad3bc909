//! Rendering of `roofline op`: the kernels of one operator on one chip, each with FLOPs, bytes,
//! arithmetic intensity, ridge point, bound, attainable FLOP/s, time and its distance from the
//! ridge; a total when the operator runs as several kernels (unfused attention).

use crate::units::{human_bytes, human_bytes_per_s, human_flops, human_flops_per_s};
use crate::units::{human_intensity, human_seconds};
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::analysis::OpRow;
use roofline_core::device::Device;
use roofline_core::one_op::{total_time, RidgeDistance};
use roofline_core::ops::{Cost, Op};
use roofline_core::roofline::Bound;
use std::io::Write;

/// What `roofline op` reports.
#[derive(Debug, Clone, Copy)]
pub struct OpReport<'a> {
    /// The operator in words (`gemm m=1 n=4096 k=4096 (bf16)`).
    pub title: &'a str,
    /// The kernels' operators with their shapes, in the order of `rows`, for JSON.
    pub ops: &'a [Op],
    /// The chip.
    pub device: &'a Device,
    /// One row per kernel.
    pub rows: &'a [OpRow],
}

/// `201.7× below` or `4.62× above`: how far from the ridge, and on which side.
pub fn ridge_distance_text(row: &OpRow) -> String {
    if row.cost.flops.get() == 0.0 {
        return "no FLOPs".into();
    }
    let d = RidgeDistance::of(&row.point());
    let f = d.factor;
    let n = if f >= 100.0 {
        format!("{f:.1}")
    } else {
        format!("{f:.2}")
    };
    match d.bound {
        Bound::Memory => format!("{n}× below"),
        Bound::Compute => format!("{n}× above"),
        Bound::Network | Bound::Latency => "on the link".into(),
    }
}

/// Writes `r` in `format` to `out`.
///
/// # Errors
/// A failed write.
pub fn write_op(r: &OpReport<'_>, format: Format, out: &mut dyn Write) -> Result<(), WriteError> {
    let total: Cost = r.rows.iter().map(|x| x.cost * x.count as f64).sum();
    let time = total_time(r.rows);
    match format {
        Format::Json => {
            crate::doc::write_json(&crate::doc::op::OpReportDoc::of(r), out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "hardware",
                "name",
                "kind",
                "flops",
                "bytes_read",
                "bytes_written",
                "arithmetic_intensity",
                "ridge_point",
                "bound",
                "attainable_flops_per_s",
                "time_s",
                "ridge_distance",
            ])?;
            for x in r.rows {
                let head = [r.device.id.clone(), x.name.to_string(), x.kind.to_string()];
                // No FLOPs (or no bytes): no finite distance, an empty field as JSON's null.
                let factor = RidgeDistance::of(&x.point()).factor;
                let distance = if factor.is_finite() {
                    factor.to_string()
                } else {
                    String::new()
                };
                w.write_record(
                    head.into_iter()
                        .chain(roofline_csv_fields(x))
                        .chain([distance]),
                )?;
            }
            w.flush()?;
        }
        Format::Table => {
            let bw = r.device.bandwidth().map(|b| b.get()).unwrap_or(f64::NAN);
            writeln!(
                out,
                "{} on {} ({}) · bandwidth {}",
                r.title,
                r.device.name,
                r.device.id,
                human_bytes_per_s(bw)
            )?;
            let mut t = new_table(&[
                "kernel",
                "peak",
                "FLOPs",
                "bytes",
                "AI (FLOP/B)",
                "ridge",
                "bound",
                "attainable",
                "time",
                "from ridge",
            ]);
            for x in r.rows {
                let p = x.point();
                t.add_row(vec![
                    x.name.to_string(),
                    format!(
                        "{} {}",
                        human_flops_per_s(x.peak().get()),
                        crate::doc::op::compute_name(x.compute)
                    ),
                    human_flops(x.cost.flops.get()),
                    human_bytes(x.cost.bytes().get()),
                    human_intensity(p.intensity.get()),
                    format!("{:.1}", p.ridge.get()),
                    format!("{}-bound", p.bound),
                    human_flops_per_s(p.attainable.get()),
                    human_seconds(p.time.get()),
                    ridge_distance_text(x),
                ]);
            }
            align_right_from(&mut t, 1);
            writeln!(out, "{t}")?;
            if r.rows.len() > 1 {
                writeln!(
                    out,
                    "total: {} kernels · {} · {} · AI {} FLOP/B · time {} (kernels back to back)",
                    r.rows.len(),
                    human_flops(total.flops.get()),
                    human_bytes(total.bytes().get()),
                    human_intensity(total.intensity().get()),
                    human_seconds(time.get())
                )?;
            }
            writeln!(
                out,
                "ridge point = peak / bandwidth; from ridge = ridge / AI below it (memory-bound), AI / ridge above it (compute-bound). `--explain` derives every number."
            )?;
        }
    }
    Ok(())
}

/// The CSV columns of one execution of `row` on its roof, in the order `analyze` and `op` write
/// them: flops, bytes_read, bytes_written, arithmetic_intensity, ridge_point, bound,
/// attainable_flops_per_s, time_s (base units).
pub(crate) fn roofline_csv_fields(row: &OpRow) -> [String; 8] {
    let p = row.point();
    [
        row.cost.flops.get().to_string(),
        row.cost.bytes_read.get().to_string(),
        row.cost.bytes_written.get().to_string(),
        p.intensity.get().to_string(),
        p.ridge.get().to_string(),
        p.bound.to_string(),
        p.attainable.get().to_string(),
        p.time.get().to_string(),
    ]
}
