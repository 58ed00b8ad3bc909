//! `roofline sweep --pareto`: every batch, tensor-parallel degree, precision and chip serving
//! one request shape; tokens/s per device against TPOT, the front and the best under targets.

use super::analyze_parallel::{check_layout, layout_flags, parallel_error, system_of, Flags};
use crate::args::SweepArgs;
use crate::error::{CliError, Kind};
use crate::output::{check_output, write_output};
use roofline_core::comm::System;
use roofline_core::parallel::Layout;
use roofline_core::pricing::Estimate;
use roofline_core::serve::pareto::{sweep_serving, Config};
use roofline_core::serve::Request;
use roofline_core::workload::{Precisions, Workload};
use roofline_inputs::config::load_model;
use roofline_inputs::hardware::find_device;
use roofline_report::pareto::{write_pareto, ParetoReport};
use roofline_report::plot::pareto::render_pareto;
use roofline_report::plot::PlotFormat;
use std::io::Write;

/// The most configurations × batches one sweep prices (each a whole request).
const MAX_POINTS: usize = 4096;

pub fn run(a: &SweepArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let plot = match &a.plot.plot {
        Some(path) => {
            let format = PlotFormat::from_path(path).ok_or_else(|| {
                CliError::bad_input(
                    format!(
                        "`--plot {}`: the Pareto plot is written as SVG or PNG",
                        path.display()
                    ),
                    Some("end the file name in `.svg` or `.png`".into()),
                )
            })?;
            check_output(path, a.plot.force, "--plot", "pareto.svg")?;
            Some((path, format))
        }
        None => None,
    };
    if a.seq_len.0.len() > 1 {
        return Err(CliError::bad_input(
            "`--pareto` serves one request shape: --seq-len names several prompt lengths",
            Some("give one --seq-len (the prompt) and --generate (the output)".into()),
        ));
    }
    let model = load_model(&a.model)?;
    let prompt = a.seq_len.0.first().copied().unwrap_or(2048);
    let request = Request {
        prompt,
        generate: a.generate.unwrap_or(256),
        batch: 1,
        cached_prefix: 0,
    };
    request.validate().map_err(|e| {
        let flag = if e.quantity == "prompt" {
            "--seq-len"
        } else {
            "--generate"
        };
        CliError::bad_input(
            format!("`{flag}`: {}", e.message),
            Some("lower --seq-len or --generate".into()),
        )
    })?;
    let tps: Vec<u32> = match &a.tp {
        Some(l) => {
            l.0.iter()
                .map(|&t| {
                    u32::try_from(t)
                        .ok()
                        .filter(|t| (1..=roofline_core::comm::system::MAX_DEVICES).contains(t))
                        .ok_or_else(|| {
                            CliError::bad_input(
                                format!("`--tp`: {t} is not a degree"),
                                Some("give degrees such as 1,2,4,8".into()),
                            )
                        })
                })
                .collect::<Result<_, _>>()?
        }
        None => vec![1],
    };
    let base_layout = Layout {
        pp: a.pp.unwrap_or(1),
        ep: a.ep.unwrap_or(1),
        expert_imbalance: a.expert_imbalance.unwrap_or(1.0),
        sequence_parallel: a.sequence_parallel,
        ..Layout::SINGLE
    };
    if a.cp.is_some() {
        return Err(CliError::bad_input(
            "`--cp` splits prompts: a served request decodes, which context parallelism does not",
            Some("drop --cp with --pareto".into()),
        ));
    }
    let chips: Vec<String> = if a.system.is_some() {
        vec![String::new()]
    } else {
        a.hardware.clone()
    };
    let mut configs = Vec::new();
    let mut names = Vec::new();
    for hw in &chips {
        for &p in &a.precision {
            let precisions = Precisions::new(
                a.weight_precision.unwrap_or(p),
                p,
                a.kv_precision.unwrap_or(p),
            );
            for &tp in &tps {
                let layout = Layout { tp, ..base_layout };
                check_layout(&layout, &model)?;
                let lay = layout_flags(&layout);
                let flags = Flags {
                    system: a.system.as_deref(),
                    devices: None,
                    hardware: if hw.is_empty() {
                        crate::args::common::DEFAULT_CHIP
                    } else {
                        hw
                    },
                    hardware_default: crate::args::common::DEFAULT_CHIP,
                    takes_devices: false,
                    layout: &lay,
                };
                let system = if a.system.is_none() && layout.devices() == 1 {
                    let chip = find_device(hw)?;
                    System::of_chip(&chip, 1).unwrap_or_else(|_| System::single(&chip))
                } else {
                    system_of(&flags, layout.devices())?
                };
                names.push(format!(
                    "{} {}{} TP {tp}",
                    system.chip.id,
                    p,
                    if precisions.weight != p {
                        format!(" (weights {})", precisions.weight)
                    } else {
                        String::new()
                    }
                ));
                let base = Workload::decode(1, 1)
                    .with_precisions(precisions)
                    .flash_attention(a.attention.on());
                configs.push((
                    Config {
                        system,
                        layout,
                        base,
                    },
                    lay,
                ));
            }
        }
    }
    let points_asked = configs.len() * a.batch.0.len();
    if points_asked > MAX_POINTS {
        return Err(CliError::bad_input(
            format!(
                "`--pareto`: {} configurations × {} batches = {points_asked} requests to price, \
                 beyond the most in one sweep ({MAX_POINTS})",
                configs.len(),
                a.batch.0.len()
            ),
            Some("give fewer batches (`--batch 1..256*2`), degrees, precisions or chips".into()),
        ));
    }
    let mut points = Vec::with_capacity(points_asked);
    for (i, (c, lay)) in configs.iter().enumerate() {
        let eff = Estimate::on(&c.system.chip).with_cuda_graphs(a.cuda_graphs);
        let flags = Flags {
            system: a.system.as_deref(),
            devices: None,
            hardware: &c.system.chip.id,
            hardware_default: crate::args::common::DEFAULT_CHIP,
            takes_devices: false,
            layout: lay,
        };
        let mut p = sweep_serving(
            &model,
            std::slice::from_ref(c),
            &request,
            &a.batch.0,
            a.reserve.memory_reserve,
            &eff,
        )
        .map_err(|e| parallel_error(e, &flags, &c.system))?;
        for x in &mut p {
            x.config = i;
        }
        points.extend(p);
    }
    let report = ParetoReport {
        model: &model,
        request,
        configs: names,
        points: &points,
        slo_tpot: a.slo_tpot,
        slo_ttft: a.slo_ttft,
    };
    if let Some((path, format)) = plot {
        let bytes = render_pareto(&report.chart(), format).map_err(|e| CliError {
            kind: Kind::Internal,
            message: e.to_string(),
            hint: None,
        })?;
        write_output(path, a.plot.force, &bytes)?;
    }
    write_pareto(&report, a.format.format.into(), out)?;
    Ok(())
}
