//! The embedded catalog (`catalog/hardware/*.toml`) and lookup by id, alias or path
//! ([`find_device`]).

use super::parse_device;
use crate::embedded::HARDWARE_FILES;
use crate::error::InputError;
use roofline_core::device::Device;

/// Extra names accepted by [`find_device`] (lowercase, `-` separated) and the id they mean.
pub(super) const ALIASES: &[(&str, &str)] = &[
    ("h100", "h100-sxm"),
    ("h100-sxm5", "h100-sxm"),
    ("h100-sxm-80gb", "h100-sxm"),
    ("h100-pcie-80gb", "h100-pcie"),
    ("h100-nvl-94gb", "h100-nvl"),
    ("h200-sxm", "h200"),
    ("a100", "a100-sxm-80gb"),
    ("a100-sxm", "a100-sxm-80gb"),
    ("a100-80gb", "a100-sxm-80gb"),
    ("a100-40gb", "a100-sxm-40gb"),
    ("a100-pcie", "a100-pcie-80gb"),
    ("rtx-a6000", "a6000"),
    ("4090", "rtx-4090"),
    ("rtx4090", "rtx-4090"),
    ("3090", "rtx-3090"),
    ("rtx3090", "rtx-3090"),
    ("v100-sxm2", "v100"),
    ("mi300", "mi300x"),
    ("mi325", "mi325x"),
    ("tpuv4", "tpu-v4"),
    ("tpuv5e", "tpu-v5e"),
    ("tpuv5p", "tpu-v5p"),
    ("gaudi-2", "gaudi2"),
    ("gaudi-3", "gaudi3"),
];

fn parse_embedded(stem: &str, text: &str) -> Result<Device, InputError> {
    let origin = format!("catalog/hardware/{stem}.toml");
    let device = parse_device(text, &origin)?;
    if device.id != stem {
        return Err(InputError::new(format!(
            "{origin}: field `id` = `{}` differs from the file name `{stem}`",
            device.id
        ))
        .with_hint("a catalog file is named after its id: rename the file or change the id"));
    }
    Ok(device)
}

/// Every chip of the embedded catalog (`catalog/hardware/*.toml`), sorted by id.
///
/// # Errors
///
/// An [`InputError`] naming the catalog file if one of them does not parse or validate (see
/// [`parse_device`]), or if a file's `id` differs from its file name. The unit tests check that
/// this never happens for the shipped catalog.
pub fn catalog() -> Result<Vec<Device>, InputError> {
    let mut out = HARDWARE_FILES
        .iter()
        .map(|(stem, text)| parse_embedded(stem, text))
        .collect::<Result<Vec<_>, _>>()?;
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// The ids of the embedded catalog (the file stems), sorted.
pub fn catalog_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = HARDWARE_FILES.iter().map(|(stem, _)| *stem).collect();
    ids.sort_unstable();
    ids
}

pub(super) fn looks_like_path(s: &str) -> bool {
    s.to_ascii_lowercase().ends_with(".toml")
        || s.contains('/')
        || s.contains('\\')
        || s.contains(std::path::MAIN_SEPARATOR)
}

/// Lowercase, with `_` and spaces as `-`.
fn normalize(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '_' | ' ' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The `n` catalog ids closest to `name` (Jaro-Winkler similarity), best first.
fn closest_ids(name: &str, n: usize) -> Vec<&'static str> {
    let mut scored: Vec<(f64, &'static str)> = catalog_ids()
        .into_iter()
        .map(|id| (strsim::jaro_winkler(name, id), id))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(n).map(|(_, id)| id).collect()
}

/// A chip by catalog id or from a file.
///
/// - If `name_or_path` ends in `.toml` or contains a path separator, the file is read and parsed
///   with [`parse_device`] (its path is the origin in error messages).
/// - Otherwise it is looked up in the embedded catalog by id, case-insensitively (`_` and spaces
///   read as `-`), also accepting a few aliases: `h100` → `h100-sxm`, `a100` → `a100-sxm-80gb`,
///   `rtx-a6000` → `a6000`, `mi300` → `mi300x`, `4090` → `rtx-4090`, ….
///
/// # Errors
///
/// An [`InputError`] when the file cannot be read (naming the path) or does not parse (see
/// [`parse_device`]), or when no catalog chip has that id: "unknown chip `X`", with a hint
/// listing the three closest ids and `roofline hardware list`.
pub fn find_device(name_or_path: &str) -> Result<Device, InputError> {
    let given = name_or_path.trim();
    if looks_like_path(given) {
        let text = crate::read::read_text(
            std::path::Path::new(given),
            "chip file ",
            crate::read::TEXT_LIMIT,
            "give the path of a TOML chip file, or a catalog id (`roofline hardware list`)",
            "a chip file is UTF-8 TOML text",
        )?;
        return parse_device(&text, given)
            .map_err(|e| crate::profile::not_a_chip_file(&text, given).unwrap_or(e));
    }
    let key = normalize(given);
    let id = ALIASES
        .iter()
        .find(|(alias, _)| *alias == key)
        .map_or(key.as_str(), |(_, id)| *id);
    if let Some((stem, text)) = HARDWARE_FILES.iter().find(|(stem, _)| *stem == id) {
        return parse_embedded(stem, text);
    }
    // `--hardware mixbench.log`, `--hardware fifo`: a file in the working folder, named
    // without a path.
    let path = std::path::Path::new(given);
    if path.exists() && !path.is_dir() {
        let text = crate::read::read_text(
            path,
            "chip file ",
            crate::read::PROFILE_LIMIT,
            "give the path of a TOML chip file, or a catalog id (`roofline hardware list`)",
            "a chip file is UTF-8 TOML text",
        )?;
        if let Some(e) = crate::profile::not_a_chip_file(&text, given) {
            return Err(e);
        }
    }
    let close: Vec<String> = closest_ids(&key, 3)
        .into_iter()
        .map(|id| format!("`{id}`"))
        .collect();
    Err(
        InputError::new(format!("unknown chip `{given}`")).with_hint(format!(
            "closest catalog ids: {}; `roofline hardware list` shows all {} chips; \
             a path to a .toml chip file also works",
            close.join(", "),
            HARDWARE_FILES.len()
        )),
    )
}
