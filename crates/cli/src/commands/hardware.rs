//! `roofline hardware list|show` and `roofline models`.

use crate::args::HardwareCommand;
use crate::error::CliError;
use roofline_inputs::config::{load_model, preset_ids};
use roofline_inputs::hardware::{catalog, find_device};
use roofline_report::hardware::{write_list, write_show};
use roofline_report::Format;
use std::io::Write;

pub fn run(cmd: HardwareCommand, out: &mut dyn Write) -> Result<(), CliError> {
    match cmd {
        HardwareCommand::List(f) => write_list(&catalog()?, f.format.into(), out)?,
        HardwareCommand::Show { name, format } => {
            write_show(&find_device(&name)?, format.format.into(), out)?
        }
    }
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
