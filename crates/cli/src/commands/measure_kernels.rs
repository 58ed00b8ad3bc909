//! `roofline measure kernels`: real kernels timed on this machine beside the time its measured
//! roofline predicts (DRAM-only and hierarchical), the error per kernel and its median, the fused
//! chain's measured and predicted speedup; a table/JSON/CSV and a plot of both points per kernel.

use super::measure::{measure_machine, short_model, today_utc, Bar};
use crate::args::MeasureKernelsArgs;
use crate::error::{CliError, Kind};
use crate::output::write_output;
use roofline_core::device::Device;
use roofline_core::prediction::{device_with_best_bandwidths, level_mixes, LevelMix};
use roofline_inputs::hardware::find_device;
use roofline_measure::suite::{check_only, run_cpu, run_gpu, SuiteOptions};
use roofline_measure::CpuOptions;
use roofline_report::suite::{write_suite, SuiteContext};
use roofline_report::suite_plot::{render, SuiteChart};
use std::io::Write;

pub fn run(a: &MeasureKernelsArgs, out: &mut dyn Write) -> Result<(), CliError> {
    // Every flag is checked before the minute of measuring.
    let plot_format = match &a.plot.plot {
        Some(p) => Some(super::plot::check_plot_path(p, a.plot.force)?),
        None => None,
    };
    let only: Vec<String> = a.only.iter().map(|s| s.trim().to_string()).collect();
    check_only(&only, a.gpu, a.quick)?;
    let given = match &a.hardware {
        Some(h) => Some(find_device(h)?),
        None => None,
    };

    let mut bar = Bar(None);
    let (device, source, mix): (Device, String, Vec<LevelMix>) = match given {
        Some(d) => {
            let src = format!("roofline of `{}`", a.hardware.as_deref().unwrap_or(""));
            (d, src, Vec::new())
        }
        None => {
            let cpu = CpuOptions {
                quick: a.quick,
                threads: None,
                max_working_set: None,
                date: today_utc(),
            };
            let m = measure_machine(a.gpu.then_some(a.device), cpu, &mut bar)?;
            let name = format!("{} (measured on {})", short_model(&m.processor), m.host);
            (
                device_with_best_bandwidths(&m, "host", &name),
                format!(
                    "roofline measured now{}, each level's roof its best of read/copy/triad; hierarchical: each launch at its own mix of loads and stores",
                    if a.quick { " with --quick" } else { "" }
                ),
                level_mixes(&m),
            )
        }
    };

    let opts = SuiteOptions {
        quick: a.quick,
        only,
        device: a.device as usize,
    };
    let mut run = if a.gpu {
        run_gpu(&opts, &mut bar)?
    } else {
        run_cpu(&opts, &mut bar)?
    };
    run.ceilings.mix = mix;
    let check = run.check(&device).map_err(|e| {
        CliError::bad_input(
            format!("cannot predict the kernels from `{}`: {e}", device.id),
            Some(
                "the chip needs an fp32 peak and a main-memory bandwidth; measure this machine with `roofline measure --out host.toml`"
                    .into(),
            ),
        )
    })?;
    let target = if a.gpu {
        format!("GPU {}, {} SMs", a.device, run.threads)
    } else {
        format!("CPU, {} threads", run.threads)
    };
    if let (Some(path), Some(format)) = (&a.plot.plot, plot_format) {
        let chart = SuiteChart::new(&check, &device, &format!("{target} · {source}"));
        let bytes = render(&chart, format).map_err(|e| CliError {
            kind: Kind::Internal,
            message: e.to_string(),
            hint: None,
        })?;
        write_output(path, a.plot.force, &bytes)?;
    }
    let mut notes = run.notes.clone();
    if a.hardware.is_some() && !a.gpu && device.sm_count.is_some() {
        notes.push(format!(
            "`{}` describes a GPU (it has SMs) but the kernels ran on this CPU: the predictions hold CPU kernels against a GPU's roofs; pass a chip file of this machine (`roofline measure --out host.toml`), or leave --hardware out to measure it now",
            device.id
        ));
    }
    let cx = SuiteContext {
        device: &device,
        roofline_source: source,
        target,
        method: run.method.clone(),
        notes,
    };
    write_suite(&check, &cx, a.format.format.into(), out)?;
    Ok(())
}
