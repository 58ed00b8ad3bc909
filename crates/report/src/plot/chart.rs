//! The data of a roofline plot ([`RooflineChart`]): chips' roofs and operators' points, built
//! from core values.

use super::comm::CommChart;
use crate::units::{human_bytes, human_seconds};
use crate::units::{human_bytes_per_s, human_flops, human_flops_per_s, human_intensity};
use roofline_core::analysis::{OpRow, StageAnalysis};
use roofline_core::comm::System;
use roofline_core::device::{Device, DeviceError};
use roofline_core::model::Transformer;
use roofline_core::one_op::RidgeDistance;
use roofline_core::ops::Compute;
use roofline_core::parallel::ParallelStage;
use roofline_core::precision::Precision;
use roofline_core::roofline::Bound;
use roofline_core::workload::{Stage, Workload};

/// How a point is drawn: which stage it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Series {
    /// A prefill operator: circle.
    Prefill,
    /// A decode operator: triangle.
    Decode,
    /// A lone operator (`roofline op`): diamond.
    Operator,
    /// A fused prefill kernel (`--fusion`): square.
    FusedPrefill,
    /// A fused decode kernel (`--fusion`): square.
    FusedDecode,
    /// A collective of a prefill step, on the communication panel ([`super::CommChart`]): a
    /// four-pointed star, a shape no operator has.
    PrefillCollective,
    /// A collective of a decode step, on the communication panel: a four-pointed star.
    DecodeCollective,
}

impl Series {
    /// The name written in `data-stage` and the legend.
    pub fn name(self) -> &'static str {
        match self {
            Series::Prefill => "prefill",
            Series::Decode => "decode",
            Series::Operator => "operator",
            Series::FusedPrefill => "fused prefill",
            Series::FusedDecode => "fused decode",
            Series::PrefillCollective => "prefill collective",
            Series::DecodeCollective => "decode collective",
        }
    }
    pub(crate) fn color(self) -> &'static str {
        match self {
            Series::Prefill => "#1f6fb4",
            Series::Decode => "#d9480f",
            Series::Operator => "#2b8a3e",
            Series::FusedPrefill => "#5f3dc4",
            Series::FusedDecode => "#c2255c",
            // A stage's collectives in the stage's colour; the shape tells them apart.
            Series::PrefillCollective => "#1f6fb4",
            Series::DecodeCollective => "#d9480f",
        }
    }
    fn from_stage(s: Stage) -> Self {
        match s {
            Stage::Prefill => Series::Prefill,
            // Decode, and a stage added later, as decode's triangles.
            _ => Series::Decode,
        }
    }
}

/// One operator as a point.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartPoint {
    /// Short label (`q_proj`).
    pub label: String,
    /// Its series.
    pub series: Series,
    /// Arithmetic intensity, FLOP/byte (> 0 to be drawn on log axes).
    pub intensity: f64,
    /// Attainable performance, FLOP/s (> 0).
    pub attainable: f64,
    /// Tooltip lines (the operator's numbers).
    pub tooltip: Vec<String>,
    /// Its share (0 to 1) of its stage's time, all its instances together: the marker's area
    /// is drawn in proportion. `None`: drawn at the usual size.
    pub share: Option<f64>,
}

/// One compute roof: a dense peak shared by one or more precisions.
#[derive(Debug, Clone, PartialEq)]
pub struct ComputeRoof {
    /// Precisions with this peak (`bf16/fp16`).
    pub label: String,
    /// The peak, FLOP/s (OP/s for integer formats).
    pub peak: f64,
    /// Drawn bold: the peak the plotted operators are held against.
    pub emphasis: bool,
}

/// One chip's roofline: its memory roof and compute roofs.
#[derive(Debug, Clone, PartialEq)]
pub struct ChipRoofline {
    /// Chip name.
    pub name: String,
    /// Main-memory bandwidth, B/s: the memory roof.
    pub bandwidth: f64,
    /// Compute roofs, lowest peak first.
    pub roofs: Vec<ComputeRoof>,
}

impl ChipRoofline {
    /// The chip's roofs: one per distinct dense peak (precisions with equal peaks share it), in
    /// rising order; roofs of a precision in `emphasis` are drawn bold.
    ///
    /// # Errors
    /// [`DeviceError::NoBandwidth`] when the chip has no main-memory bandwidth.
    pub fn from_device(d: &Device, emphasis: &[Precision]) -> Result<Self, DeviceError> {
        let bandwidth = d.bandwidth()?.get();
        let mut groups: Vec<(Vec<Precision>, f64)> = Vec::new();
        for (p, c) in &d.peaks {
            let v = c.value.get();
            match groups
                .iter_mut()
                .find(|(_, peak)| (peak - v).abs() <= 1e-9 * v.abs())
            {
                Some((ps, _)) => ps.push(*p),
                None => groups.push((vec![*p], v)),
            }
        }
        groups.sort_by(|a, b| a.1.total_cmp(&b.1));
        let roofs = groups
            .into_iter()
            .filter(|(_, v)| *v > 0.0)
            .map(|(ps, peak)| ComputeRoof {
                label: ps.iter().map(|p| p.name()).collect::<Vec<_>>().join("/"),
                emphasis: ps.iter().any(|p| emphasis.contains(p)),
                peak,
            })
            .collect();
        Ok(Self {
            name: d.name.clone(),
            bandwidth,
            roofs,
        })
    }
}

/// Everything a roofline plot shows.
#[derive(Debug, Clone, PartialEq)]
pub struct RooflineChart {
    /// Title: model, chip, workload.
    pub title: String,
    /// A second line under the title.
    pub subtitle: String,
    /// One or more chips.
    pub chips: Vec<ChipRoofline>,
    /// Operators.
    pub points: Vec<ChartPoint>,
    /// Operators left out because they have no FLOPs (no place on log axes), by label.
    pub omitted: Vec<String>,
    /// The collectives of a parallel step, drawn as a communication panel under the roofline;
    /// `None` (no panel, the plot as for one chip) when the rows hold none.
    pub comm: Option<CommChart>,
}

fn precisions_used(rows: &[OpRow], act: Precision) -> Vec<Precision> {
    let mut out = Vec::new();
    for r in rows {
        let p = match r.compute {
            Compute::Matrix(p) => p,
            Compute::Vector => Precision::Fp32,
            // A collective has no compute roof.
            Compute::Network => continue,
        };
        if !out.contains(&p) {
            out.push(p);
        }
    }
    if out.is_empty() {
        out.push(act);
    }
    out
}

/// The tooltip of one operator: its numbers, one per line.
pub fn tooltip(prefix: &str, row: &OpRow) -> Vec<String> {
    let p = &row.point();
    let dist = RidgeDistance::of(p);
    let side = match (dist.bound, row.cost.flops.get() == 0.0) {
        (Bound::Network, _) => "a collective, bound by the link's bandwidth".to_string(),
        (Bound::Latency, _) => "a collective, bound by the link's latency".to_string(),
        (_, true) => "no FLOPs".to_string(),
        (Bound::Memory, _) => format!("memory-bound, {:.1}× below the ridge", dist.factor),
        (Bound::Compute, _) => format!("compute-bound, {:.2}× above the ridge", dist.factor),
    };
    let mut lines = vec![
        format!(
            "{prefix}{} ({}){}",
            row.name,
            row.kind,
            if row.count > 1 {
                format!(", ×{} per forward pass", row.count)
            } else {
                String::new()
            }
        ),
        format!(
            "FLOPs {} · bytes {}",
            human_flops(row.cost.flops.get()),
            human_bytes(row.cost.bytes().get())
        ),
        format!(
            "AI {} FLOP/B · ridge {} FLOP/B",
            human_intensity(p.intensity.get()),
            human_intensity(p.ridge.get())
        ),
        side,
        format!(
            "attainable {} of {}",
            human_flops_per_s(p.attainable.get()),
            human_flops_per_s(row.peak().get())
        ),
    ];
    if row.count > 1 {
        lines.push(format!(
            "time {} (×{} = {})",
            human_seconds(p.time.get()),
            row.count,
            human_seconds(p.time.get() * row.count as f64)
        ));
    } else {
        lines.push(format!("time {}", human_seconds(p.time.get())));
    }
    lines
}

fn push_rows(
    points: &mut Vec<ChartPoint>,
    omitted: &mut Vec<String>,
    rows: &[OpRow],
    series: Series,
    prefix: &str,
) {
    let step: f64 = rows
        .iter()
        .map(|r| r.point().time.get() * r.count as f64)
        .sum();
    for r in rows {
        let p = r.point();
        let time = p.time.get() * r.count as f64;
        let (i, a) = (p.intensity.get(), p.attainable.get());
        if i > 0.0 && a > 0.0 && i.is_finite() && a.is_finite() {
            points.push(ChartPoint {
                label: r.name.to_string(),
                series,
                intensity: i,
                attainable: a,
                tooltip: tooltip(prefix, r),
                share: (step > 0.0 && time.is_finite()).then(|| time / step),
            });
        } else if !omitted.iter().any(|o| o == r.name) {
            omitted.push(r.name.to_string());
        }
    }
}

/// The subtitle of a model's plot: batch, stages, precisions, attention, and the chip's memory
/// roof, from the first workload.
fn subtitle_of(workloads: &[Workload], chip: &ChipRoofline, device: &Device) -> String {
    let stage_words: Vec<String> = workloads
        .iter()
        .map(|w| match w.stage {
            Stage::Prefill => format!("prefill {} tokens", w.seq_len),
            Stage::Decode => format!("decode at context {}", w.context),
            other => other.to_string(),
        })
        .collect();
    workloads
        .first()
        .map(|w| {
            let p = w.precisions;
            format!(
                "batch {} · {} · weights {}, activations {}, KV cache {} · attention {} · {} {}",
                w.batch,
                stage_words.join(", "),
                p.weight,
                p.act,
                p.kv,
                if w.flash_attention {
                    "fused"
                } else {
                    "unfused"
                },
                human_bytes_per_s(chip.bandwidth),
                device
                    .main_memory()
                    .map(|m| m.name.as_str())
                    .unwrap_or("main memory"),
            )
        })
        .unwrap_or_default()
}

impl RooflineChart {
    /// Keeps, on each chip, only the roofs drawn bold (those of the precisions the plotted
    /// operators compute in); a chip with no bold roof keeps them all.
    pub fn keep_roofs_in_use(&mut self) {
        for c in &mut self.chips {
            if c.roofs.iter().any(|r| r.emphasis) {
                c.roofs.retain(|r| r.emphasis);
            }
        }
    }

    /// Adds the fused kernels (two or more operators) of a fusion plan as their own points:
    /// squares, beside the operators they replace, at their (higher) intensity.
    pub fn add_fused_kernels(
        &mut self,
        stage: Stage,
        comparison: &roofline_core::fusion::FusionComparison,
    ) {
        let series = match stage {
            Stage::Prefill => Series::FusedPrefill,
            // Decode, and a stage added later, as decode's series.
            _ => Series::FusedDecode,
        };
        for (k, p) in comparison.plan.kernels.iter().zip(&comparison.after.points) {
            let (i, a) = (p.intensity.get(), p.attainable.get());
            if k.nodes.len() < 2 || !(i > 0.0 && a > 0.0 && i.is_finite() && a.is_finite()) {
                continue;
            }
            self.points.push(ChartPoint {
                label: k.name.clone(),
                series,
                intensity: i,
                attainable: a,
                tooltip: vec![
                    format!(
                        "{stage} fused kernel ({}): {}",
                        comparison.preset.name(),
                        k.name
                    ),
                    format!(
                        "rules: {}",
                        k.rules
                            .iter()
                            .map(|r| r.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    format!(
                        "{} FLOP, {} B, AI {:.3} FLOP/B, {}-bound, {:.3e} s",
                        k.cost.flops.get(),
                        k.cost.bytes().get(),
                        i,
                        p.bound,
                        p.time.get()
                    ),
                ],
                share: None,
            });
        }
    }

    /// The plot of `roofline analyze`: every operator of every stage of `model` on `device`,
    /// the device's roofs (bold: the precisions the operators compute in).
    ///
    /// # Errors
    /// [`DeviceError::NoBandwidth`] when the chip has no main-memory bandwidth.
    pub fn for_analysis(
        model: &Transformer,
        device: &Device,
        stages: &[StageAnalysis],
    ) -> Result<Self, DeviceError> {
        let act = stages
            .first()
            .map(|s| s.workload.precisions.act)
            .unwrap_or(Precision::Bf16);
        let all_rows: Vec<OpRow> = stages.iter().flat_map(|s| s.rows.clone()).collect();
        let chip = ChipRoofline::from_device(device, &precisions_used(&all_rows, act))?;
        let mut points = Vec::new();
        let mut omitted = Vec::new();
        for s in stages {
            let series = Series::from_stage(s.workload.stage);
            push_rows(
                &mut points,
                &mut omitted,
                &s.rows,
                series,
                &format!("{} · ", s.workload.stage),
            );
        }
        let workloads: Vec<Workload> = stages.iter().map(|s| s.workload).collect();
        let subtitle = subtitle_of(&workloads, &chip, device);
        Ok(Self {
            title: format!(
                "{} on {}: {}",
                model.name,
                device.name,
                stages
                    .iter()
                    .map(|s| s.workload.stage.to_string())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            subtitle,
            chips: vec![chip],
            points,
            omitted,
            comm: None,
        })
    }

    /// The plot of a parallel `roofline analyze`: one device's operators of every stage on the
    /// chip's roofline (bold: the precisions they compute in), and its collectives on a
    /// communication panel under it ([`CommChart`]: message size against bus bandwidth, each
    /// link tier's roof, each algorithm's latency roof). A step without collectives has no
    /// panel.
    ///
    /// # Errors
    /// [`DeviceError::NoBandwidth`] when the chip has no main-memory bandwidth.
    pub fn for_parallel(
        model: &Transformer,
        system: &System,
        stages: &[ParallelStage],
    ) -> Result<Self, DeviceError> {
        let device = &system.chip;
        let act = stages
            .first()
            .map(|s| s.workload.precisions.act)
            .unwrap_or(Precision::Bf16);
        let compute_rows = |s: &ParallelStage| -> Vec<OpRow> {
            s.rows
                .iter()
                .filter(|r| r.compute != Compute::Network)
                .copied()
                .collect()
        };
        let all_rows: Vec<OpRow> = stages.iter().flat_map(compute_rows).collect();
        let chip = ChipRoofline::from_device(device, &precisions_used(&all_rows, act))?;
        let mut points = Vec::new();
        let mut omitted = Vec::new();
        let mut comm = CommChart::new(
            format!(
                "Communication on {}: one device's collectives on its links (α–β model)",
                system.id
            ),
            "S: bytes as nccl-tests counts them · bus bandwidth S·f/t, f nccl-tests' bus \
             factor, t = t_α + t_β · roofs: each link's bandwidth, each algorithm's latency \
             S·f/t_α",
        );
        for s in stages {
            let stage = s.workload.stage;
            let prefix = format!("{stage} · ");
            push_rows(
                &mut points,
                &mut omitted,
                &compute_rows(s),
                Series::from_stage(stage),
                &prefix,
            );
            let series = match stage {
                Stage::Prefill => Series::PrefillCollective,
                // Decode, and a stage added later, as decode's.
                _ => Series::DecodeCollective,
            };
            for (i, r) in s.rows.iter().enumerate() {
                if let Some(c) = s.communication(i) {
                    comm.push(&system.fabric, series, &prefix, r.name, r.count, c);
                }
            }
        }
        let workloads: Vec<Workload> = stages.iter().map(|s| s.workload).collect();
        let subtitle = subtitle_of(&workloads, &chip, device);
        let layout = stages.first().map(|s| {
            let l = s.layout;
            let mut words = format!("TP {} × PP {}", l.tp, l.pp);
            if l.ep > 1 {
                words.push_str(&format!(" × EP {}", l.ep));
            }
            if l.cp > 1 {
                words.push_str(&format!(" × CP {}", l.cp));
            }
            if l.sequence_parallel {
                words.push_str(" (SP)");
            }
            format!("{words}, one of {} devices", s.devices)
        });
        Ok(Self {
            title: format!(
                "{} on {} ({}): {}",
                model.name,
                system.id,
                layout.unwrap_or_default(),
                stages
                    .iter()
                    .map(|s| s.workload.stage.to_string())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            subtitle,
            chips: vec![chip],
            points,
            omitted,
            comm: (!comm.points.is_empty() || !comm.omitted.is_empty()).then_some(comm),
        })
    }

    /// The plot of `roofline op`: the kernels of one operator on `device`.
    ///
    /// # Errors
    /// [`DeviceError::NoBandwidth`] when the chip has no main-memory bandwidth.
    pub fn for_ops(
        title: &str,
        subtitle: &str,
        device: &Device,
        rows: &[OpRow],
        act: Precision,
    ) -> Result<Self, DeviceError> {
        let chip = ChipRoofline::from_device(device, &precisions_used(rows, act))?;
        let mut points = Vec::new();
        let mut omitted = Vec::new();
        push_rows(&mut points, &mut omitted, rows, Series::Operator, "");
        Ok(Self {
            title: format!("{title} on {}", device.name),
            subtitle: subtitle.to_string(),
            chips: vec![chip],
            points,
            omitted,
            comm: None,
        })
    }

    /// The roofline of one or more chips, without operators (`hardware show`,
    /// `hardware compare`); roofs of precisions in `emphasis` are drawn bold.
    ///
    /// # Errors
    /// [`DeviceError::NoBandwidth`] for a chip without main-memory bandwidth.
    pub fn for_devices(devices: &[Device], emphasis: &[Precision]) -> Result<Self, DeviceError> {
        let chips = devices
            .iter()
            .map(|d| ChipRoofline::from_device(d, emphasis))
            .collect::<Result<Vec<_>, _>>()?;
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        let title = if devices.len() == 1 {
            format!("Roofline of the {}", names.join(""))
        } else {
            format!("Rooflines: {}", names.join(" vs "))
        };
        let subtitle = chips
            .iter()
            .map(|c| format!("{}: {}", c.name, human_bytes_per_s(c.bandwidth)))
            .collect::<Vec<_>>()
            .join(" · ")
            + " · dense peaks; ridge point = peak / bandwidth";
        Ok(Self {
            title,
            subtitle,
            chips,
            points: Vec::new(),
            omitted: Vec::new(),
            comm: None,
        })
    }
}
