//! `roofline sweep --pareto`: each configuration and batch serving one request shape, tokens/s
//! per device against TPOT and TTFT, bound and estimate, the Pareto front marked and the best
//! under the latency targets named.

use crate::plot::pareto::{ParetoChart, ParetoDot};
use crate::units::human_seconds;
use crate::{Format, WriteError};
use roofline_core::model::Transformer;
use roofline_core::serve::pareto::{best_under, front, Operating, ServingPoint};
use roofline_core::serve::Request;
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;

/// Everything `sweep --pareto` prints.
#[derive(Debug, Clone)]
pub struct ParetoReport<'a> {
    /// The model.
    pub model: &'a Transformer,
    /// The request shape (its batch is each point's).
    pub request: Request,
    /// Each configuration's name (`h100-sxm bf16 TP 2`).
    pub configs: Vec<String>,
    /// The points.
    pub points: &'a [ServingPoint],
    /// The TPOT target, seconds.
    pub slo_tpot: Option<f64>,
    /// The TTFT target, seconds.
    pub slo_ttft: Option<f64>,
}

/// The front and the best point under each pricing.
#[derive(Debug, Clone, PartialEq)]
pub struct Fronts {
    /// On the bound's front.
    pub bound: Vec<bool>,
    /// On the estimate's front.
    pub estimate: Vec<bool>,
    /// The best under the targets at the bound.
    pub best_bound: Option<usize>,
    /// The best under the targets at the estimate.
    pub best_estimate: Option<usize>,
}

impl ParetoReport<'_> {
    /// The fronts and the best points.
    pub fn fronts(&self) -> Fronts {
        let usable: Vec<bool> = self.points.iter().map(|p| p.fits != Some(false)).collect();
        let b: Vec<Operating> = self.points.iter().map(|p| p.bound).collect();
        let e: Vec<Operating> = self.points.iter().map(|p| p.estimate).collect();
        Fronts {
            bound: front(&b, &usable),
            estimate: front(&e, &usable),
            best_bound: best_under(&b, &usable, self.slo_tpot, self.slo_ttft),
            best_estimate: best_under(&e, &usable, self.slo_tpot, self.slo_ttft),
        }
    }

    /// The picture of the estimate's points and front.
    pub fn chart(&self) -> ParetoChart {
        let f = self.fronts();
        ParetoChart {
            title: format!(
                "throughput against latency · {} · prompt {}, {} generated",
                self.model.name, self.request.prompt, self.request.generate
            ),
            subtitle: "estimate at published shares (the bound's front is in the table); one point per configuration and batch".into(),
            series: self.configs.clone(),
            dots: self
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| ParetoDot {
                    tpot: p.estimate.tpot,
                    tokens_per_s_per_device: p.estimate.tokens_per_s_per_device,
                    series: p.config,
                    front: f.estimate[i],
                    fits: p.fits != Some(false),
                    batch: p.batch,
                })
                .collect(),
            slo_tpot: self.slo_tpot,
        }
    }
}

/// One point in the JSON document.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ParetoPointDoc {
    /// The configuration's name.
    pub config: String,
    /// Sequences served together.
    pub batch: u64,
    /// Devices of one replica.
    pub devices: u64,
    /// At the roofline bound.
    pub bound: Operating,
    /// At the estimate.
    pub estimate: Operating,
    /// Whether every step fits (`null`: capacity unknown).
    pub fits: Option<bool>,
    /// On the bound's Pareto front.
    pub front_bound: bool,
    /// On the estimate's Pareto front.
    pub front_estimate: bool,
}

/// The `command` of the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ParetoCommand {
    /// `roofline sweep --pareto`.
    SweepPareto,
}

/// `roofline sweep --pareto --format json`: TPOT is (E2E − TTFT)/(N − 1), seconds; rates in
/// output tokens per second per device.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ParetoDoc {
    /// Schema version.
    pub schema_version: crate::doc::SchemaVersion,
    /// `sweep_pareto`.
    pub command: ParetoCommand,
    /// Model name.
    pub model: String,
    /// The request shape (batch: each point's).
    pub request: Request,
    /// The TPOT target, seconds.
    pub slo_tpot_s: Option<f64>,
    /// The TTFT target, seconds.
    pub slo_ttft_s: Option<f64>,
    /// Every point.
    pub points: Vec<ParetoPointDoc>,
    /// Index in `points` of the best under the targets at the bound.
    pub best_bound: Option<usize>,
    /// Index of the best under the targets at the estimate.
    pub best_estimate: Option<usize>,
}

impl ParetoDoc {
    /// The document of `r`.
    pub fn of(r: &ParetoReport<'_>) -> Self {
        let f = r.fronts();
        ParetoDoc {
            schema_version: crate::doc::SchemaVersion,
            command: ParetoCommand::SweepPareto,
            model: r.model.name.clone(),
            request: r.request,
            slo_tpot_s: r.slo_tpot,
            slo_ttft_s: r.slo_ttft,
            points: r
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| ParetoPointDoc {
                    config: r.configs.get(p.config).cloned().unwrap_or_default(),
                    batch: p.batch,
                    devices: p.devices,
                    bound: p.bound,
                    estimate: p.estimate,
                    fits: p.fits,
                    front_bound: f.bound[i],
                    front_estimate: f.estimate[i],
                })
                .collect(),
            best_bound: f.best_bound,
            best_estimate: f.best_estimate,
        }
    }
}

/// Writes `r` in `format`.
///
/// # Errors
/// A failed write.
pub fn write_pareto(
    r: &ParetoReport<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => write_table(r, out),
        Format::Json => crate::doc::write_json(&ParetoDoc::of(r), out),
        Format::Csv => {
            let doc = ParetoDoc::of(r);
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "config",
                "batch",
                "devices",
                "ttft_bound_s",
                "tpot_bound_s",
                "tokens_per_s_per_device_bound",
                "ttft_estimate_s",
                "tpot_estimate_s",
                "tokens_per_s_per_device_estimate",
                "fits",
                "front_bound",
                "front_estimate",
            ])?;
            for p in &doc.points {
                w.write_record([
                    p.config.clone(),
                    p.batch.to_string(),
                    p.devices.to_string(),
                    p.bound.ttft.to_string(),
                    p.bound.tpot.to_string(),
                    p.bound.tokens_per_s_per_device.to_string(),
                    p.estimate.ttft.to_string(),
                    p.estimate.tpot.to_string(),
                    p.estimate.tokens_per_s_per_device.to_string(),
                    p.fits.map_or(String::new(), |f| f.to_string()),
                    p.front_bound.to_string(),
                    p.front_estimate.to_string(),
                ])?;
            }
            w.flush()?;
            Ok(())
        }
    }
}

fn write_table(r: &ParetoReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let f = r.fronts();
    writeln!(
        out,
        "throughput against latency · {} · prompt {}, {} generated · TPOT = (E2E − TTFT)/(N − 1)",
        r.model.name, r.request.prompt, r.request.generate
    )?;
    let mut t = crate::new_table(&[
        "configuration",
        "batch",
        "TTFT bound",
        "TPOT bound",
        "tok/s/dev bound",
        "TTFT est.",
        "TPOT est.",
        "tok/s/dev est.",
        "fits",
        "front",
    ]);
    for (i, p) in r.points.iter().enumerate() {
        let mark = match (f.bound[i], f.estimate[i]) {
            (true, true) => "both",
            (true, false) => "bound",
            (false, true) => "estimate",
            _ => "",
        };
        t.add_row(vec![
            r.configs.get(p.config).cloned().unwrap_or_default(),
            p.batch.to_string(),
            human_seconds(p.bound.ttft),
            human_seconds(p.bound.tpot),
            format!("{:.1}", p.bound.tokens_per_s_per_device),
            human_seconds(p.estimate.ttft),
            human_seconds(p.estimate.tpot),
            format!("{:.1}", p.estimate.tokens_per_s_per_device),
            match p.fits {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => "?".into(),
            },
            mark.into(),
        ]);
    }
    crate::align_right_from(&mut t, 1);
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "bound: the roofline time of every step, no launch cost (no run is faster); estimate: \
         published achievable shares and launches. front: no other point that fits is as fast \
         per token and gives as many tokens/s per device."
    )?;
    let targets = match (r.slo_tpot, r.slo_ttft) {
        (None, None) => None,
        (a, b) => Some(
            [
                a.map(|t| format!("TPOT ≤ {}", human_seconds(t))),
                b.map(|t| format!("TTFT ≤ {}", human_seconds(t))),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", "),
        ),
    };
    if let Some(targets) = targets {
        for (name, best, estimate) in [
            ("estimate", f.best_estimate, true),
            ("bound", f.best_bound, false),
        ] {
            match best.and_then(|i| r.points.get(i)) {
                Some(p) => {
                    let o = if estimate { p.estimate } else { p.bound };
                    writeln!(
                        out,
                        "best under {targets} ({name}): {} at batch {}: {:.1} tokens/s per device, \
                         TPOT {}, TTFT {}",
                        r.configs.get(p.config).cloned().unwrap_or_default(),
                        p.batch,
                        o.tokens_per_s_per_device,
                        human_seconds(o.tpot),
                        human_seconds(o.ttft)
                    )?;
                }
                None => writeln!(
                    out,
                    "best under {targets} ({name}): no configuration that fits meets them"
                )?,
            }
        }
    }
    Ok(())
}
