//! `roofline op all-reduce|reduce-scatter|all-gather|all-to-all|broadcast|send-recv`: one
//! collective over a group of chips in the chip's default node (`--hardware`, `--devices`,
//! `--nodes`).

use crate::args::op::CollectiveArgs;
use crate::error::CliError;
use roofline_core::comm::{collective_cost, Collective, CollectiveError, System, SystemError};
use roofline_core::explain::explain_collective;
use roofline_inputs::hardware::{find_device, load_system};
use roofline_report::collective::{write_collective, CollectiveReport};
use std::io::Write;

/// `64 MiB` for a whole number of MiB or GiB, else the bytes.
fn size_words(bytes: f64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if bytes >= 1024.0 * MIB && (bytes / (1024.0 * MIB)).fract() == 0.0 {
        format!("{} GiB", bytes / (1024.0 * MIB))
    } else if bytes >= MIB && (bytes / MIB).fract() == 0.0 {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} B")
    }
}

fn system_error(e: SystemError, hardware: &str) -> CliError {
    if let SystemError::TooFewDevices { needed, available } = e {
        return CliError::bad_input(
            format!("`--devices {needed}`: the system has {available} devices"),
            Some(format!(
                "give at most --devices {available}, or a larger --system"
            )),
        );
    }
    let hint = match &e {
        SystemError::NoPlatform { .. } => format!(
            "the chip file or catalog entry for `{hardware}` needs a [platform] section (its node and links)"
        ),
        SystemError::PartialNode { gpus_per_node, .. } => format!(
            "give a multiple of {gpus_per_node} devices, or --nodes to split them evenly"
        ),
        _ => "see `roofline op all-reduce --help`".into(),
    };
    CliError::bad_input(e.to_string(), Some(hint))
}

fn collective_error(e: CollectiveError) -> CliError {
    let hint = match &e {
        CollectiveError::Unsupported { .. } => "use --algorithm auto for the fastest that can run",
        CollectiveError::NoLink { .. } => "the chip's platform lacks that tier of links",
        _ => "see `roofline op all-reduce --help`",
    };
    CliError::bad_input(e.to_string(), Some(hint.into()))
}

/// Devices of a group given by `--hardware` without `--devices`: one HGX/DGX node's worth.
const DEFAULT_DEVICES: u64 = 8;

/// The system `--hardware CHIP --devices D [--nodes N]` describes: the chip's default node
/// ([`System::of_chip`]), or N nodes of D/N devices each.
fn chip_system(a: &CollectiveArgs) -> Result<System, CliError> {
    let chip = find_device(&a.hardware)?;
    let devices = a.devices.unwrap_or(DEFAULT_DEVICES);
    Ok(match a.nodes {
        None => System::of_chip(&chip, devices).map_err(|e| system_error(e, &a.hardware))?,
        Some(nodes) => {
            if !devices.is_multiple_of(nodes) {
                return Err(CliError::bad_input(
                    format!("`--devices {devices}` do not split evenly over `--nodes {nodes}`"),
                    Some("give --devices a multiple of --nodes".into()),
                ));
            }
            let per_node = devices / nodes;
            let platform = chip.platform.clone().ok_or_else(|| {
                system_error(
                    SystemError::NoPlatform {
                        chip: chip.id.clone(),
                    },
                    &a.hardware,
                )
            })?;
            let most = u64::from(platform.gpus_per_node.value);
            if per_node > most {
                return Err(CliError::bad_input(
                    format!(
                        "{per_node} devices per node is more than a {} holds ({most})",
                        platform.name
                    ),
                    Some(format!("use at least {} nodes", devices.div_ceil(most))),
                ));
            }
            System::new(
                format!("{}x{devices}", chip.id),
                format!("{nodes} × {per_node} {} ({})", chip.name, platform.name),
                chip.clone(),
                per_node,
                nodes,
                platform.fabric,
            )
            .map_err(|e| system_error(e, &a.hardware))?
        }
    })
}

/// Runs collective `c` with flags `a`.
pub fn run(c: Collective, a: &CollectiveArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let system = match &a.system {
        Some(name) => load_system(name)?,
        None => chip_system(a)?,
    };
    let devices = a.devices.unwrap_or(match a.system {
        Some(_) => system.devices(),
        None => DEFAULT_DEVICES,
    });
    let group = system
        .group(devices)
        .map_err(|e| system_error(e, &a.hardware))?;
    let cost = collective_cost(
        c,
        roofline_core::units::Bytes(a.bytes),
        group,
        &system.fabric,
        a.algorithm,
    )
    .map_err(collective_error)?;
    let title = format!(
        "{c} of {} over {} ranks ({} node{} × {})",
        size_words(a.bytes),
        group.ranks,
        group.nodes(),
        if group.nodes() == 1 { "" } else { "s" },
        group.ranks_per_node
    );
    let link = cost
        .tier
        .link(&system.fabric)
        .map(|l| l.name.clone())
        .unwrap_or_default();
    let derivation = a
        .explain
        .then(|| explain_collective(title.clone(), &cost, &system.fabric));
    write_collective(
        &CollectiveReport {
            title: &title,
            system: &system.name,
            link: &link,
            choice: a.algorithm,
            cost: &cost,
            derivation: derivation.as_ref(),
        },
        a.format.format.into(),
        out,
    )?;
    Ok(())
}
