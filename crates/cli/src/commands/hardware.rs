//! `roofline hardware list|show` (chips and systems) and `roofline models`.

use crate::args::HardwareCommand;
use crate::error::CliError;
use roofline_inputs::config::{load_model, preset_ids};
use roofline_inputs::hardware::{catalog, find_chip_or_system, find_device, systems, ChipOrSystem};
use roofline_report::hardware::{
    write_list, write_show_sources, write_system_list, write_system_show_sources,
};
use roofline_report::Format;
use std::io::Write;

pub fn run(cmd: HardwareCommand, out: &mut dyn Write) -> Result<(), CliError> {
    match cmd {
        HardwareCommand::List(a) if a.systems => {
            write_system_list(&systems()?, a.format.format.into(), out)?
        }
        HardwareCommand::List(a) => write_list(&catalog()?, a.format.format.into(), out)?,
        HardwareCommand::Show {
            name,
            sources,
            plot,
            format,
        } => {
            if let Some(p) = &plot.plot {
                super::plot::check_plot_path(p, plot.force)?;
            }
            // A system shows its own document; `--plot` draws its chip's roofline.
            let (device, system) = match find_chip_or_system(&name)? {
                ChipOrSystem::Chip(d) => (*d, None),
                ChipOrSystem::System(s) => (s.chip.clone(), Some(s)),
                _ => {
                    return Err(CliError::bad_input(
                        format!("`{name}` is neither a chip nor a system"),
                        None,
                    ))
                }
            };
            if let Some(p) = &plot.plot {
                let chart = roofline_report::plot::RooflineChart::for_devices(
                    std::slice::from_ref(&device),
                    &roofline_core::precision::Precision::ALL,
                )
                .map_err(roofline_core::analysis::AnalysisError::from)?;
                super::plot::write_plot(p, plot.force, plot.all_roofs, &chart)?;
            }
            match system {
                Some(s) => write_system_show_sources(&s, format.format.into(), sources, out)?,
                None => write_show_sources(&device, format.format.into(), sources, out)?,
            }
        }
        HardwareCommand::Compare(a) => compare(&a, out)?,
    }
    Ok(())
}

/// `hardware compare A B …`: the chips side by side, and their rooflines overlaid with `--plot`.
fn compare(a: &crate::args::CompareArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if let Some(p) = &a.plot.plot {
        super::plot::check_plot_path(p, a.plot.force)?;
    }
    let devices = a
        .names
        .iter()
        .map(|n| find_device(n))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(p) = &a.plot.plot {
        let emphasis: &[roofline_core::precision::Precision] = if a.precision.is_empty() {
            &roofline_core::precision::Precision::ALL
        } else {
            &a.precision
        };
        let chart = roofline_report::plot::RooflineChart::for_devices(&devices, emphasis)
            .map_err(roofline_core::analysis::AnalysisError::from)?;
        super::plot::write_plot(p, a.plot.force, a.plot.all_roofs, &chart)?;
    }
    roofline_report::compare::write_compare(&devices, a.format.format.into(), out)?;
    Ok(())
}

pub fn models(format: Format, out: &mut dyn Write) -> Result<(), CliError> {
    let models = preset_ids()
        .into_iter()
        .map(load_model)
        .collect::<Result<Vec<_>, _>>()?;
    roofline_report::models::write_models(&models, format, out)?;
    Ok(())
}
