//! `roofline analyze` on many devices: `--system`, `--devices`, `--tp`, `--pp`, `--ep`,
//! `--expert-imbalance`, `--cp`, `--sequence-parallel`.

use crate::args::AnalyzeArgs;
use crate::error::CliError;
use roofline_core::comm::collective::{CollectiveError, Tier};
use roofline_core::comm::{System, SystemError};
use roofline_core::model::Transformer;
use roofline_core::parallel::{Layout, LayoutError, ParallelAnalysisError, ParallelError};
use roofline_core::workload::Workload;
use roofline_inputs::hardware::find_device;
use roofline_report::parallel::write_parallel;
use std::io::Write;

/// The flags a parallel analysis does not combine with yet.
pub(crate) fn refuse_single_device_flags(a: &AnalyzeArgs) -> Result<(), CliError> {
    let unsupported = [
        ("--fusion", a.fusion.is_some()),
        ("--profile", a.profile.is_some()),
        ("--explain", a.explain.is_some()),
        ("--advice", a.advice),
    ];
    match unsupported.iter().find(|(_, on)| *on) {
        Some((flag, _)) => Err(CliError::bad_input(
            format!(
                "`{flag}` does not combine with --system, --devices, --tp, --pp, --ep or --cp yet"
            ),
            Some(format!(
                "drop {flag}, or analyse one device (no parallel flags)"
            )),
        )),
        None => Ok(()),
    }
}

/// Where a parallel command's devices come from, to name the flag at fault in an error.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Flags<'a> {
    /// `--system`.
    pub system: Option<&'a str>,
    /// `--devices`.
    pub devices: Option<u32>,
    /// `--hardware`.
    pub hardware: &'a str,
    /// `--hardware`'s default for the command: another value beside `--system` is a conflict.
    pub hardware_default: &'a str,
    /// Whether the command takes `--devices` (analyze and plan do, sweep does not).
    pub takes_devices: bool,
    /// The layout flags as typed (`--tp 4 --pp 3`), or what sets the devices (`--tp 16`).
    pub layout: &'a str,
}

/// The layout flags of `l` as typed: each degree above 1 (`--tp 4 --pp 2 --cp 2`), `--tp 1`
/// with none.
pub(crate) fn layout_flags(l: &Layout) -> String {
    let flags: Vec<String> = [
        ("--tp", l.tp),
        ("--pp", l.pp),
        ("--ep", l.ep),
        ("--cp", l.cp),
    ]
    .iter()
    .filter(|(_, v)| *v > 1)
    .map(|(f, v)| format!("{f} {v}"))
    .collect();
    if flags.is_empty() {
        "--tp 1".into()
    } else {
        flags.join(" ")
    }
}

/// Checks `layout` against `model` before any system is built, so that an error names the
/// degree at fault (`--tp 3` on 64 heads) rather than the devices it would take.
pub(crate) fn check_layout(layout: &Layout, model: &Transformer) -> Result<(), CliError> {
    layout
        .validate(model)
        .map_err(|e| layout_error(&e, layout, model))
}

/// Checks `layout` against `model` and `workload` ([`Layout::validate_for`]): context
/// parallelism in decode, or on a prompt too short for its chunks, names `--cp`.
pub(crate) fn check_workload(
    layout: &Layout,
    model: &Transformer,
    workload: &Workload,
) -> Result<(), CliError> {
    layout
        .validate_for(model, workload)
        .map_err(|e| layout_error(&e, layout, model))
}

/// Degrees as `1, 2, 4`.
fn listed(degrees: impl Iterator<Item = u64>) -> String {
    degrees
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A layout `model` does not take, naming its flag, with the values it takes.
fn layout_error(e: &LayoutError, layout: &Layout, model: &Transformer) -> CliError {
    if let LayoutError::Devices { .. } = e {
        return CliError::bad_input(
            format!("`{}`: {e}", layout_flags(layout)),
            Some("lower --tp, --pp, --ep or --cp".into()),
        );
    }
    let hint = match *e {
        LayoutError::Heads { .. } => {
            format!(
                "`{}` takes --tp {}",
                model.name,
                listed(Layout::tp_degrees(model))
            )
        }
        LayoutError::Stages { layers, .. } => {
            format!("give --pp of at most {layers}, the model's blocks")
        }
        LayoutError::Experts { experts: 0, .. } => format!(
            "drop --ep: `{}` is a dense model; split it with --tp or --pp",
            model.name
        ),
        LayoutError::Experts { .. } => {
            format!(
                "`{}` takes --ep {}",
                model.name,
                listed(Layout::ep_degrees(model))
            )
        }
        LayoutError::Imbalance { ep, .. } if ep <= 1 => "--expert-imbalance skews the routing \
             under expert parallelism: give --ep (a mixture of experts) with it, or drop it"
            .into(),
        LayoutError::Imbalance { ep, .. } => {
            format!("give --expert-imbalance between 1 (balanced) and {ep}")
        }
        LayoutError::ContextStage { .. } => "context parallelism splits a prompt over devices: \
             give --stage prefill with --cp, or drop --cp (split a decode step with --tp, --pp \
             or --ep)"
            .into(),
        LayoutError::ContextLength { seq_len, .. } => format!(
            "give --cp of at most {} (2 chunks of at least one token per device), or a longer \
             --seq-len",
            (seq_len / 2).max(1)
        ),
        LayoutError::ContextUnsupported { .. } => {
            format!("drop --cp: split `{}` with --tp, --pp or --ep", model.name)
        }
        LayoutError::Degree { .. } => format!(
            "give a degree from 1 to {}",
            roofline_core::comm::system::MAX_DEVICES
        ),
        _ => "`roofline models` shows the heads, KV heads, experts and blocks".into(),
    };
    CliError::bad_input(format!("`--{}`: {e}", e.quantity()), Some(hint))
}

/// The system the flags describe: `--system` (an id or file), or `--devices` (else
/// `default_devices`) of chip `--hardware` in its default node.
pub(crate) fn system_of(f: &Flags<'_>, default_devices: u64) -> Result<System, CliError> {
    if let Some(name) = f.system {
        if f.hardware != f.hardware_default {
            return Err(CliError::bad_input(
                format!(
                    "`--hardware {}` and `--system {name}` both name the chip",
                    f.hardware
                ),
                Some("a system fixes its chip: drop --hardware".into()),
            ));
        }
        if f.devices.is_some() {
            return Err(CliError::bad_input(
                "`--devices` and `--system` both give the devices",
                Some("a system file fixes its devices: drop --devices".into()),
            ));
        }
        return load_system(name);
    }
    let chip = find_device(f.hardware)?;
    system_with(f, Some(chip), default_devices)
}

/// As [`system_of`], with the chip of `--hardware` already read (`None` with `--system`).
pub(crate) fn system_with(
    f: &Flags<'_>,
    chip: Option<roofline_core::device::Device>,
    default_devices: u64,
) -> Result<System, CliError> {
    let chip = match (f.system, chip) {
        (None, Some(chip)) => chip,
        _ => return system_of(f, default_devices),
    };
    let devices = f.devices.map_or(default_devices, u64::from);
    System::of_chip(&chip, devices).map_err(|e| system_error(&e, f, None))
}

/// A system from the catalog or a file; an error names `--system`.
fn load_system(name: &str) -> Result<System, CliError> {
    roofline_inputs::hardware::load_system(name).map_err(|e| {
        let mut e = CliError::from(e);
        if !e.message.contains("--system") {
            e.message = format!("`--system`: {}", e.message);
        }
        e
    })
}

fn system_error(e: &SystemError, f: &Flags<'_>, system: Option<&System>) -> CliError {
    let lay = f.layout;
    match *e {
        SystemError::NoPlatform { .. } => CliError::bad_input(
            format!("`--hardware`: {e}"),
            Some(format!(
                "`{}` has no default node in the catalog: give --system (`roofline hardware \
                 list --systems`) or a chip with one",
                f.hardware
            )),
        ),
        SystemError::PartialNode {
            devices,
            gpus_per_node: g,
        } if f.devices.is_none() => CliError::bad_input(
            format!(
                "`{lay}`: the layout's {devices} devices do not fill whole {} nodes of {g}",
                f.hardware
            ),
            Some(if f.takes_devices {
                format!(
                    "give --devices {} (whole nodes, some devices idle), or a layout of at most \
                     {g} devices or a multiple of {g}",
                    u64::from(devices).next_multiple_of(u64::from(g))
                )
            } else {
                format!("sweep degrees of at most {g}, or multiples of {g}")
            }),
        ),
        SystemError::PartialNode {
            gpus_per_node: g, ..
        } => CliError::bad_input(
            format!("`--devices`: {e}"),
            Some(format!(
                "give a multiple of {g} devices, or at most {g} (one node)"
            )),
        ),
        SystemError::TooFewDevices { needed, available } => match (f.system, system) {
            (Some(_), Some(s)) => CliError::bad_input(
                format!(
                    "`{lay}`: the layout needs {needed} devices, and system `{}` has {available}",
                    s.id
                ),
                Some(format!(
                    "lower --tp, --pp, --ep or --cp to {available} devices in all, or give a larger \
                     --system (`roofline hardware list --systems`)"
                )),
            ),
            _ => CliError::bad_input(
                format!(
                    "`--devices`: the layout ({lay}) needs {needed} devices, and --devices gives \
                     {available}"
                ),
                Some(format!(
                    "give --devices {needed} or more, or lower --tp, --pp, --ep or --cp"
                )),
            ),
        },
        _ => CliError::bad_input(
            format!("`--devices`: {e}"),
            Some(format!(
                "give between 1 and {} devices",
                roofline_core::comm::system::MAX_DEVICES
            )),
        ),
    }
}

/// A link tier in words.
fn tier_words(t: Tier) -> &'static str {
    match t {
        Tier::ScaleUp => "scale-up (NVLink, xGMI, ICI)",
        Tier::ScaleOut => "scale-out (a network between nodes)",
        Tier::Pcie => "PCIe",
        Tier::Local => "local",
    }
}

/// A parallel analysis that failed, naming the flag at fault (`f`) on `system`.
pub(crate) fn parallel_error(e: ParallelAnalysisError, f: &Flags<'_>, system: &System) -> CliError {
    match e {
        ParallelAnalysisError::Analysis(e) => e.into(),
        ParallelAnalysisError::Parallel(ParallelError::Layout(e)) => CliError::bad_input(
            format!("`--{}`: {e}", e.quantity()),
            Some("`roofline models` shows the heads, KV heads, experts and blocks".into()),
        ),
        ParallelAnalysisError::Parallel(ParallelError::System(e)) => {
            system_error(&e, f, Some(system))
        }
        ParallelAnalysisError::Parallel(ParallelError::Collective(CollectiveError::NoLink {
            tier,
            why,
        })) => {
            let within = format!(
                "keep tp × pp × ep × cp within one node ({} devices of {})",
                system.gpus_per_node, system.chip.id
            );
            match f.system {
                Some(_) => CliError::bad_input(
                    format!(
                        "`--system`: the layout ({}) needs a {} link ({why}), and system `{}` has none",
                        f.layout,
                        tier_words(tier),
                        system.id
                    ),
                    Some(format!(
                        "{within}, or give a system that has one (`roofline hardware list \
                         --systems`)"
                    )),
                ),
                None => CliError::bad_input(
                    format!(
                        "`{}`: the layout needs a {} link ({why}), and {} has none",
                        f.layout,
                        tier_words(tier),
                        system.name
                    ),
                    Some(format!(
                        "{within}, or give --system with one (`roofline hardware list --systems`)"
                    )),
                ),
            }
        }
        other => CliError::bad_input(
            other.to_string(),
            Some("see `roofline analyze --help`".into()),
        ),
    }
}

pub fn run(a: &AnalyzeArgs, out: &mut dyn Write) -> Result<(), CliError> {
    refuse_single_device_flags(a)?;
    if let Some(path) = &a.plot.plot {
        super::plot::check_plot_path(path, a.plot.force)?;
    }
    // One computation for every front end: the typed API's.
    let p = crate::api::analyze::parallel(&super::analyze::request(a))?;
    if let Some(path) = &a.plot.plot {
        super::plot::plot_parallel(
            path,
            (a.plot.force, a.plot.all_roofs),
            &p.model,
            &p.system,
            &p.analyses,
        )?;
    }
    match a.format.format.into() {
        roofline_report::Format::Json => roofline_report::doc::write_json(&p.document(), out)?,
        format => write_parallel(&p.report(), format, out)?,
    }
    Ok(())
}

/// Reads the model and the system the flags give and analyses each stage on it under the
/// layout: what `analyze` and `report` with the parallel flags work from.
pub(crate) fn prepare(
    a: &AnalyzeArgs,
) -> Result<
    (
        Transformer,
        System,
        Vec<roofline_core::parallel::ParallelStage>,
    ),
    CliError,
> {
    let p = crate::api::analyze::parallel(&super::analyze::request(a))?;
    Ok((p.model, p.system, p.analyses))
}
