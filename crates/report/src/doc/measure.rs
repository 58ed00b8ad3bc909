//! `roofline measure` (this machine's roofline) and `roofline measure kernels` (real kernels,
//! measured against predicted).

use super::hardware::HardwareDoc;
use super::SchemaVersion;
use crate::suite::SuiteContext;
use roofline_core::device::Device;
use roofline_core::measured::Measurement;
use roofline_core::prediction::SuiteCheck;
use schemars::JsonSchema;
use serde::Serialize;

/// `roofline measure`: every figure the run measured, and the chip it makes.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MeasureDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The measurement (host, clocks, peaks, the working-set sweep, memory levels).
    #[serde(flatten)]
    pub measurement: Measurement,
    /// The chip the measurement makes.
    pub device: HardwareDoc,
}

impl MeasureDoc {
    /// The document of `m` and the chip `device` made from it.
    pub fn of(m: &Measurement, device: &Device) -> Self {
        MeasureDoc {
            schema_version: SchemaVersion,
            measurement: m.clone(),
            device: HardwareDoc::of(device),
        }
    }
}

/// The roofline the predictions of `measure kernels` use.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RooflineSourceDoc {
    /// How it was obtained (`measured now (--quick)`, `chip file host.toml`).
    pub source: String,
    /// The chip.
    pub device: HardwareDoc,
}

/// `roofline measure kernels`: each kernel of the suite measured beside its predictions.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct KernelsCheckDoc {
    /// The schema version.
    pub schema_version: SchemaVersion,
    /// The check: rows, speedups, median errors, ceilings.
    #[serde(flatten)]
    pub check: SuiteCheck,
    /// The roofline predicted from.
    pub roofline: RooflineSourceDoc,
    /// Where the kernels ran (`CPU, 2 threads`).
    pub target: String,
    /// The timing method.
    pub method: String,
    /// Caveats.
    pub notes: Vec<String>,
}

impl KernelsCheckDoc {
    /// The document of `check` in the context `cx`.
    pub fn of(check: &SuiteCheck, cx: &SuiteContext<'_>) -> Self {
        KernelsCheckDoc {
            schema_version: SchemaVersion,
            check: check.clone(),
            roofline: RooflineSourceDoc {
                source: cx.roofline_source.clone(),
                device: HardwareDoc::of(cx.device),
            },
            target: cx.target.clone(),
            method: cx.method.clone(),
            notes: cx.notes.clone(),
        }
    }
}
