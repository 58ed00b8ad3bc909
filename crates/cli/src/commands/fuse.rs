//! `roofline fuse --chain …`.

use crate::args::FuseArgs;
use crate::error::CliError;
use roofline_core::fusion::{compare_chain, ChainSpec};
use roofline_inputs::hardware::find_device;
use roofline_report::fusion::write_chain;
use std::io::Write;

pub fn run(a: &FuseArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let device = find_device(&a.hardware)?;
    let launch = a
        .launch_overhead
        .map(roofline_core::units::Seconds)
        .unwrap_or(device.kernel_launch());
    let spec = ChainSpec {
        ops: a.chain.clone(),
        tokens: a.tokens,
        hidden: a.hidden,
        intermediate: a.intermediate,
        precision: a.precision,
    };
    let c = compare_chain(&spec, &device, launch).map_err(|e| {
        CliError::bad_input(e.to_string(), Some("see `roofline fuse --help`".into()))
    })?;
    write_chain(&c, a.precision.bytes(), a.format.format.into(), out)?;
    Ok(())
}
