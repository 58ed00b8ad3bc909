//! `roofline op`: the kernels of one operator on one chip.

use super::analyze::RooflineRowDoc;
use super::hardware::HardwareDoc;
use super::{num_or_null, Num, SchemaVersion};
use crate::op::OpReport;
use roofline_core::analysis::OpRow;
use roofline_core::one_op::{total_time, RidgeDistance};
use roofline_core::ops::{Compute, Cost, Op, OpKind};
use schemars::JsonSchema;
use serde::Serialize;

/// One kernel of the operator, ONE execution.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OpKernelDoc {
    /// Kernel name.
    pub name: &'static str,
    /// Operator type.
    pub kind: OpKind,
    /// The units it runs on (`bf16 matrix`, `fp32 vector`).
    pub compute: String,
    /// The kernel on the roofline.
    #[serde(flatten)]
    pub roofline: RooflineRowDoc,
    /// How many times below (memory-bound) or above (compute-bound) the ridge; `null` for a
    /// kernel with no FLOPs.
    pub ridge_distance: Option<f64>,
    /// The operator and its shape (`type` and the shape's fields).
    pub shape: Option<Op>,
}

/// Sums over the kernels, run back to back.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OpTotalDoc {
    /// FLOPs.
    pub flops: f64,
    /// Bytes read + written.
    pub bytes: f64,
    /// FLOP/byte.
    #[schemars(schema_with = "num_or_null")]
    pub arithmetic_intensity: Num,
    /// Roofline time, seconds.
    pub time_s: f64,
    /// Kernels.
    pub kernels: usize,
}

/// `roofline op`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct OpReportDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The operator in words (`gemm m=1 n=4096 k=4096 (bf16)`).
    pub operator: String,
    /// The chip.
    pub hardware: HardwareDoc,
    /// One per kernel.
    pub kernels: Vec<OpKernelDoc>,
    /// Sums over the kernels.
    pub total: OpTotalDoc,
}

/// The name of the units a kernel runs on, as `op` writes it.
pub fn compute_name(c: Compute) -> String {
    match c {
        Compute::Matrix(p) => format!("{p} matrix"),
        Compute::Vector => "fp32 vector".into(),
        Compute::Network => "link".into(),
    }
}

impl OpKernelDoc {
    /// The kernel object of `r` with its operator `shape`.
    pub fn of(r: &OpRow, shape: Option<Op>) -> Self {
        let p = r.point();
        let d = RidgeDistance::of(&p);
        OpKernelDoc {
            name: r.name,
            kind: r.kind,
            compute: compute_name(r.compute),
            roofline: RooflineRowDoc::of(r),
            ridge_distance: d.factor.is_finite().then_some(d.factor),
            shape,
        }
    }
}

impl OpReportDoc {
    /// The document of `r`.
    pub fn of(r: &OpReport<'_>) -> Self {
        let total: Cost = r.rows.iter().map(|x| x.cost * x.count as f64).sum();
        OpReportDoc {
            schema_version: SchemaVersion,
            operator: r.title.to_string(),
            hardware: HardwareDoc::of(r.device),
            kernels: r
                .rows
                .iter()
                .enumerate()
                .map(|(i, x)| OpKernelDoc::of(x, r.ops.get(i).cloned()))
                .collect(),
            total: OpTotalDoc {
                flops: total.flops.get(),
                bytes: total.bytes().get(),
                arithmetic_intensity: total.intensity().get(),
                time_s: total_time(r.rows).get(),
                kernels: r.rows.len(),
            },
        }
    }
}
