//! System files: nodes of one catalog chip and the fabric that joins them
//! (`catalog/systems/*.toml`), read into a [`System`] ([`parse_system`], [`load_system`]).
//!
//! ```toml
//! id = "dgx-h100"                         # required, non-empty
//! name = "NVIDIA DGX H100"                # required
//! chip = "h100-sxm"                       # a catalog chip id (or alias), or a chip file path
//! gpus_per_node = { value = 8, source = "..." }   # 1 ..= 2^20
//! nodes = { value = 1, source = "..." }           # 1 ..= 2^20, devices in all ≤ 2^20
//! notes = ["..."]                         # optional
//!
//! [fabric]                                # optional: the chip's [platform] links otherwise
//! in_network_reduction = { value = false, source = "..." }   # optional
//! topology = "..."                                          # optional
//! [fabric.scale_out]                      # each tier given replaces the chip's
//! name = "..."
//! bandwidth_bytes_per_s = { value = 50e9, source = "..." }  # per GPU, per direction
//! latency_s = { value = 14e-6, source = "..." }
//! ```

use super::find_device;
use super::parse::FileCited;
use super::platform::{checked_count, checked_fabric, FabricFile};
use crate::embedded::SYSTEM_FILES;
use crate::error::InputError;
use roofline_core::comm::{Fabric, System};
use serde::Deserialize;

const SCHEMA_HINT: &str =
    "see an embedded system file (crates/inputs/catalog/systems/dgx-h100.toml) \
     for the schema: `id`, `name`, `chip`, `gpus_per_node` and `nodes` as \
     `{ value = ..., source = \"...\" }`, an optional [fabric]";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SystemFile {
    id: String,
    name: String,
    chip: String,
    gpus_per_node: FileCited<u32>,
    nodes: FileCited<u32>,
    #[serde(default)]
    notes: Vec<String>,
    fabric: Option<FabricFile>,
}

/// Parses and validates one system file; `origin` names it in error messages.
///
/// The chip is looked up with [`find_device`] (a catalog id or alias, or a chip file). The
/// fabric is the chip's platform fabric ([`roofline_core::device::Device::platform`]) with each
/// tier the file's `[fabric]` gives replacing the chip's (and `in_network_reduction`,
/// `topology` where given).
///
/// # Errors
///
/// An [`InputError`] naming `origin` and the field, with a hint, when the text is not TOML in
/// this schema (the parser's message kept), `id` or `chip` is empty, the chip is unknown,
/// `gpus_per_node` or `nodes` is outside 1..=2^20 or their product is above 2^20, a source is
/// empty, a tier's bandwidth is outside 1e6..=1e15 B/s or its latency outside 1 ns..=10 ms, or
/// neither the file nor the chip gives a link inside a node of more than one GPU.
pub fn parse_system(text: &str, origin: &str) -> Result<System, InputError> {
    let file: SystemFile = toml::from_str(text).map_err(|e| {
        InputError::new(format!("{origin}: {}", e.to_string().trim_end())).with_hint(SCHEMA_HINT)
    })?;
    if file.id.trim().is_empty() {
        return Err(InputError::new(format!("{origin}: field `id` is empty"))
            .with_hint("give the system a short lowercase id, e.g. `id = \"my-cluster\"`"));
    }
    if file.chip.trim().is_empty() {
        return Err(InputError::new(format!("{origin}: field `chip` is empty"))
            .with_hint("name a catalog chip (`roofline hardware list`) or a chip file"));
    }
    let chip = find_device(&file.chip).map_err(|e| {
        let hint = e.hint.clone().unwrap_or_default();
        InputError::new(format!("{origin}: field `chip`: {}", e.message)).with_hint(hint)
    })?;
    let gpus_per_node = checked_count(
        origin,
        "gpus_per_node",
        file.gpus_per_node,
        "GPUs in one node (one scale-up domain)",
    )?;
    let nodes = checked_count(origin, "nodes", file.nodes, "nodes")?;
    let base = chip
        .platform
        .as_ref()
        .map(|p| p.fabric.clone())
        .unwrap_or_default();
    let fabric = match file.fabric {
        Some(f) => checked_fabric(origin, "fabric", f, base)?,
        None => base,
    };
    check_links(origin, &chip.id, gpus_per_node.value, nodes.value, &fabric)?;
    let mut system = System::new(
        file.id,
        file.name,
        chip,
        u64::from(gpus_per_node.value),
        u64::from(nodes.value),
        fabric,
    )
    .map_err(|e| {
        InputError::new(format!("{origin}: fields `gpus_per_node` × `nodes`: {e}"))
            .with_hint("a system holds at most 2^20 devices: fewer nodes or fewer GPUs per node")
    })?;
    system.gpus_per_node_source = gpus_per_node.source;
    system.nodes_source = nodes.source;
    system.notes = file.notes;
    Ok(system)
}

/// A node of several GPUs needs a link inside it; several nodes need one between them.
fn check_links(
    origin: &str,
    chip: &str,
    gpus_per_node: u32,
    nodes: u32,
    fabric: &Fabric,
) -> Result<(), InputError> {
    if gpus_per_node > 1 && fabric.intra_node().is_none() {
        return Err(InputError::new(format!(
            "{origin}: field `fabric`: {gpus_per_node} GPUs per node, and neither the file nor \
             chip `{chip}` gives a link inside a node"
        ))
        .with_hint(
            "add [fabric.scale_up] or [fabric.pcie] with name, bandwidth_bytes_per_s and latency_s",
        ));
    }
    if nodes > 1 && fabric.scale_out.is_none() {
        return Err(InputError::new(format!(
            "{origin}: field `fabric.scale_out`: {nodes} nodes, and neither the file nor chip \
             `{chip}` gives a network between nodes"
        ))
        .with_hint("add [fabric.scale_out] (one NIC's bandwidth per GPU, per direction) or use `nodes = 1`"));
    }
    Ok(())
}

fn parse_embedded(stem: &str, text: &str) -> Result<System, InputError> {
    let origin = format!("catalog/systems/{stem}.toml");
    let system = parse_system(text, &origin)?;
    if system.id != stem {
        return Err(InputError::new(format!(
            "{origin}: field `id` = `{}` differs from the file name `{stem}`",
            system.id
        ))
        .with_hint("a catalog file is named after its id: rename the file or change the id"));
    }
    Ok(system)
}

/// The ids of the embedded systems catalog (`catalog/systems/*.toml`, the file stems), sorted.
pub fn system_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = SYSTEM_FILES.iter().map(|(stem, _)| *stem).collect();
    ids.sort_unstable();
    ids
}

/// Every system of the embedded catalog, sorted by id.
///
/// # Errors
/// An [`InputError`] naming the catalog file if one does not parse (see [`parse_system`]) or
/// its `id` differs from its file name; the unit tests check that this never happens.
pub fn systems() -> Result<Vec<System>, InputError> {
    let mut out = SYSTEM_FILES
        .iter()
        .map(|(stem, text)| parse_embedded(stem, text))
        .collect::<Result<Vec<_>, _>>()?;
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// Whether `name` is an id of the systems catalog (case-insensitive, `_` and spaces as `-`).
pub fn is_system_id(name: &str) -> bool {
    let key = normalize(name);
    SYSTEM_FILES.iter().any(|(stem, _)| *stem == key)
}

fn normalize(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '_' | ' ' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// A system by catalog id (`dgx-h100`, case-insensitive) or from a file (a name ending in
/// `.toml` or containing a path separator), parsed with [`parse_system`].
///
/// # Errors
/// An [`InputError`] when the file cannot be read or does not parse, or "unknown system `X`"
/// with a hint listing the catalog's system ids.
pub fn load_system(name_or_path: &str) -> Result<System, InputError> {
    let given = name_or_path.trim();
    if super::catalog::looks_like_path(given) {
        let text = crate::read::read_text(
            std::path::Path::new(given),
            "system file ",
            crate::read::TEXT_LIMIT,
            "give the path of a TOML system file, or a catalog id (`roofline hardware list --systems`)",
            "a system file is UTF-8 TOML text",
        )?;
        return parse_system(&text, given);
    }
    let key = normalize(given);
    if let Some((stem, text)) = SYSTEM_FILES.iter().find(|(stem, _)| *stem == key) {
        return parse_embedded(stem, text);
    }
    let ids = system_ids();
    let close = crate::closest(&key, &ids, 1);
    let closest = close
        .first()
        .map(|c| format!("closest: `{c}`; "))
        .unwrap_or_default();
    Err(
        InputError::new(format!("unknown system `{given}`")).with_hint(format!(
            "{closest}catalog systems: {}; `roofline hardware list --systems` shows them; \
             a path to a .toml system file also works",
            ids.join(", ")
        )),
    )
}

/// What `roofline hardware show NAME` names: a chip or a system.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ChipOrSystem {
    /// A chip (catalog id, alias or chip file).
    Chip(Box<roofline_core::device::Device>),
    /// A system (catalog id or system file).
    System(Box<System>),
}

/// A chip or a system by name: a systems catalog id gives the system; a `.toml` file with a
/// top-level `chip = "..."` key is read as a system file, any other file as a chip file; any
/// other name is looked up as a chip ([`find_device`]).
///
/// # Errors
/// The errors of [`load_system`] or [`find_device`]; an unknown name's hint also points at
/// `roofline hardware list --systems`.
pub fn find_chip_or_system(name: &str) -> Result<ChipOrSystem, InputError> {
    let given = name.trim();
    if is_system_id(given) {
        return load_system(given).map(|s| ChipOrSystem::System(Box::new(s)));
    }
    if super::catalog::looks_like_path(given) && is_system_file(std::path::Path::new(given)) {
        return load_system(given).map(|s| ChipOrSystem::System(Box::new(s)));
    }
    find_device(given)
        .map(|d| ChipOrSystem::Chip(Box::new(d)))
        .map_err(|e| {
            if e.message.starts_with("unknown chip") {
                let hint = e.hint.clone().unwrap_or_default();
                let ids = system_ids();
                let closest = crate::closest(&normalize(given), &ids, 1)
                    .first()
                    .map(|c| format!("closest system: `{c}`; "))
                    .unwrap_or_default();
                InputError::new(format!("unknown chip or system `{given}`")).with_hint(format!(
                    "{hint}; {closest}systems: {} (`roofline hardware list --systems`)",
                    ids.join(", ")
                ))
            } else {
                e
            }
        })
}

/// Whether the file at `path` reads as TOML with a top-level string key `chip` (a system
/// file). A file that cannot be read or parsed is not: the chip reader then reports why.
fn is_system_file(path: &std::path::Path) -> bool {
    let Ok(text) = crate::read::read_text(path, "file ", crate::read::TEXT_LIMIT, "", "") else {
        return false;
    };
    toml::from_str::<toml::Table>(&text)
        .map(|t| t.get("chip").is_some_and(toml::Value::is_str))
        .unwrap_or(false)
}
