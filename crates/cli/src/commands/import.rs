//! `roofline import FILE`: a profile's kernels on the roofline, or an empirical roof; and the
//! profile side of `analyze --profile` and `report --profile`.

use crate::args::ImportArgs;
use crate::error::CliError;
use crate::output::{check_output, distinct_outputs, write_output};
use roofline_core::analysis::{AnalysisError, StageAnalysis};
use roofline_core::device::Device;
use roofline_core::profile::join::{join, Join};
use roofline_core::profile::place::{place_all, Placement};
use roofline_core::profile::{EmpiricalRoof, Profile, ProfileFormat};
use roofline_inputs::hardware::{device_to_toml, find_device, parse_device};
use roofline_inputs::profile::{load, Imported};
use roofline_report::profile::{
    html_section, insert_section, profile_chart, roof_chart, write_joins, write_profiled,
    write_roof, ProfileReport,
};
use roofline_report::Format;
use std::io::Write;
use std::path::Path;

/// Kernels in the HTML report's ranking.
const HTML_TOP: usize = 15;

pub fn run(a: &ImportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let force = a.plot.force;
    if let Some(p) = &a.plot.plot {
        super::plot::check_plot_path(p, force)?;
    }
    if let Some(c) = &a.write_chip {
        check_output(c, force, "--write-chip", "chip.toml")?;
        if let Some(p) = &a.plot.plot {
            distinct_outputs(&[("--write-chip", c), ("--plot", p)])?;
        }
    }
    let shown = a.file.display().to_string();
    match load(&a.file)? {
        Imported::Profile(profile) => {
            if a.write_chip.is_some() {
                return Err(CliError::bad_input(
                    format!("`--write-chip`: `{shown}` is a profile, not an empirical roof"),
                    Some("--write-chip takes a mixbench log or an ERT roofline.json, sum or try file".into()),
                ));
            }
            let device = a.hardware.as_deref().map(resolve_roof).transpose()?;
            let placements = place_all(&profile.kernels, device.as_ref());
            if let Some(path) = &a.plot.plot {
                let Some(d) = &device else {
                    return Err(CliError::bad_input(
                        "`--plot` needs a roof to draw the kernels under",
                        Some("pass --hardware ID, a chip file or a mixbench/ERT output".into()),
                    ));
                };
                let chart = profile_chart(&profile, &placements, d).map_err(AnalysisError::from)?;
                super::plot::write_plot(path, force, a.plot.all_roofs, &chart)?;
            }
            write_profiled(
                &ProfileReport {
                    profile: &profile,
                    placements: &placements,
                    device: device.as_ref(),
                    top: a.top,
                },
                a.format.format.into(),
                out,
            )?;
        }
        Imported::Roof(roof) => {
            if let Some(h) = &a.hardware {
                return Err(CliError::bad_input(
                    format!("`--hardware {h}`: `{shown}` is an empirical roof, not a profile"),
                    Some("an empirical roof is the roof itself: give it to a profile as `roofline import PROFILE --hardware ROOF`".into()),
                ));
            }
            let device = roof_device(&roof, &a.file)?;
            if let Some(c) = &a.write_chip {
                write_output(c, force, device_to_toml(&device).as_bytes())?;
            }
            if let Some(path) = &a.plot.plot {
                let chart = roof_chart(&roof, &device).map_err(AnalysisError::from)?;
                super::plot::write_plot(path, force, a.plot.all_roofs, &chart)?;
            }
            write_roof(&roof, &device, a.format.format.into(), out)?;
        }
    }
    Ok(())
}

/// A chip id from a file name: `mixbench_cuda_ro_GTX-1060.log` → `mixbench-cuda-ro-gtx-1060`.
fn id_from(path: &Path) -> String {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("measured");
    let id: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let id = id.trim_matches('-').to_string();
    if id.is_empty() {
        "measured".into()
    } else {
        id
    }
}

/// The chip of an empirical roof, checked as `--hardware FILE.toml` checks a chip file (its
/// TOML read back by [`parse_device`]): what `--write-chip` writes, `--hardware` reads.
fn roof_device(roof: &EmpiricalRoof, path: &Path) -> Result<Device, CliError> {
    let shown = path.display();
    let device = roof.to_device(&id_from(path)).map_err(|e| {
        CliError::bad_input(
            format!("`{shown}`: {e}"),
            Some("the roof file needs a DRAM (main-memory) bandwidth".into()),
        )
    })?;
    parse_device(
        &device_to_toml(&device),
        &format!("the chip made from `{shown}`"),
    )
    .map_err(|e| {
        CliError::bad_input(
            e.message,
            Some(format!(
                "a chip file with this value would be refused by `--hardware`; check the \
                     measurement in `{shown}` ({})",
                e.hint.unwrap_or_default()
            )),
        )
    })?;
    Ok(device)
}

/// The roof behind `--hardware NAME`: a mixbench or ERT output when NAME is such a file, else a
/// catalog chip or chip file ([`find_device`]).
pub(crate) fn resolve_roof(name: &str) -> Result<Device, CliError> {
    let path = Path::new(name);
    if path.is_file() && !name.ends_with(".toml") {
        return match load(path)? {
            Imported::Roof(r) => roof_device(&r, path),
            Imported::Profile(_) => Err(CliError::bad_input(
                format!("`--hardware {name}` is a profile, not a roof"),
                Some("give a chip id, a chip file, or a mixbench/ERT output".into()),
            )),
        };
    }
    Ok(find_device(name)?)
}

/// Reads `--profile FILE` as a PyTorch trace.
fn load_trace(path: &Path) -> Result<Profile, CliError> {
    let shown = path.display();
    match load(path)? {
        Imported::Profile(p) if p.format == ProfileFormat::TorchTrace => Ok(p),
        Imported::Profile(_) => Err(CliError::bad_input(
            format!("`--profile {shown}`: an ncu CSV has no operator shapes to match the model's operators by"),
            Some("export a PyTorch profiler trace (record_shapes=True) of the run; `roofline import` still places the ncu kernels".into()),
        )),
        Imported::Roof(_) => Err(CliError::bad_input(
            format!("`--profile {shown}` is an empirical roof, not a profile"),
            Some("give it to `--hardware` instead".into()),
        )),
    }
}

/// The joins of a trace to each analysed stage.
pub(crate) fn profile_joins(
    path: &Path,
    analyses: &[StageAnalysis],
) -> Result<(Profile, Vec<Join>), CliError> {
    let profile = load_trace(path)?;
    let joins = analyses.iter().map(|s| join(s, &profile)).collect();
    Ok((profile, joins))
}

/// `analyze --profile FILE`: predicted beside measured per operator.
pub(crate) fn write_profile_join(
    path: &Path,
    analyses: &[StageAnalysis],
    format: Format,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let (profile, joins) = profile_joins(path, analyses)?;
    write_joins(&joins, &profile.origin, format, out)?;
    Ok(())
}

/// `report --profile FILE`: the report's HTML with the profile section before its footer.
pub(crate) fn with_profile_section(
    html: String,
    path: &Path,
    device: &Device,
    analyses: &[StageAnalysis],
) -> Result<String, CliError> {
    let (profile, joins) = profile_joins(path, analyses)?;
    let placements: Vec<Placement> = place_all(&profile.kernels, Some(device));
    Ok(insert_section(
        &html,
        &html_section(&profile, &placements, &joins, HTML_TOP),
    ))
}
