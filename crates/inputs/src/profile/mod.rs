//! Profiles and empirical roofs from files: what people already have, into core values.
//!
//! | file | reader | becomes |
//! |---|---|---|
//! | `ncu --csv` export (long or wide `--page raw` layout) | [`ncu`] | [`Profile`]: kernels with counters |
//! | PyTorch profiler Chrome trace (`export_chrome_trace`) | [`torch`] | [`Profile`]: kernels (GPU) or operators (CPU) costed by shape |
//! | mixbench log | [`mixbench`] | [`EmpiricalRoof`] |
//! | ERT `roofline.json`, `sum` file, `try.NNN` file | [`ert`] | [`EmpiricalRoof`] |
//!
//! [`load`] reads a file and tells which it is by its content, not its name. Every error is an
//! [`InputError`] naming the file, the line (or the JSON field) and the fix.

pub mod ert;
pub mod mixbench;
pub mod ncu;
pub mod torch;

use crate::error::InputError;
use roofline_core::profile::{EmpiricalRoof, Profile, ProfiledKernel};
use std::path::Path;

/// What a file held.
#[derive(Debug, Clone, PartialEq)]
pub enum Imported {
    /// Measured kernels.
    Profile(Profile),
    /// An empirical roof.
    Roof(EmpiricalRoof),
}

/// The formats [`parse`] recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Nsight Compute CSV.
    Ncu,
    /// PyTorch profiler trace.
    Torch,
    /// mixbench log.
    Mixbench,
    /// ERT `roofline.json`.
    ErtJson,
    /// ERT `sum` file.
    ErtSum,
    /// ERT `try.NNN` file.
    ErtTrials,
}

impl Kind {
    /// What a file of this kind is, for messages: `a mixbench log`.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Ncu => "an Nsight Compute CSV export (a profile)",
            Kind::Torch => "a PyTorch profiler trace (a profile)",
            Kind::Mixbench => "a mixbench log (an empirical roof)",
            Kind::ErtJson => "an ERT roofline.json (an empirical roof)",
            Kind::ErtSum => "an ERT sum file (an empirical roof)",
            Kind::ErtTrials => "an ERT try file (an empirical roof)",
        }
    }

    /// Whether a file of this kind is an empirical roof (mixbench, ERT), not a profile.
    pub fn is_roof(self) -> bool {
        !matches!(self, Kind::Ncu | Kind::Torch)
    }
}

/// When `text` (the file `shown`, given where a chip file is expected) is a profile or an
/// empirical roof: the error saying which, and how to turn a roof into a chip file.
pub fn not_a_chip_file(text: &str, shown: &str) -> Option<InputError> {
    let kind = detect(text)?;
    let message = format!("`{shown}` is {}, not a chip file", kind.describe());
    // The chip file in the working folder (the roof's own folder may not be writable).
    let chip = Path::new(shown)
        .file_stem()
        .map_or("chip".into(), |s| s.to_string_lossy())
        + ".toml";
    Some(InputError::new(message).with_hint(if kind.is_roof() {
        format!(
            "convert it once: `roofline import {shown} --write-chip {chip}`, then pass \
             `--hardware {chip}`"
        )
    } else {
        format!(
            "give a chip id (`roofline hardware list`) or chip file; place the profile's kernels \
             with `roofline import {shown} --hardware CHIP`"
        )
    }))
}

/// The formats, one line, for hints.
pub const FORMATS: &str = "an `ncu --csv` export, a PyTorch profiler trace (.json with \
                           `traceEvents`), a mixbench log, or an ERT roofline.json, sum or try file";

/// Which format `text` is in, by its content: JSON with `traceEvents` (trace) or `empirical`
/// (ERT); a mixbench banner or `CSV data` rule; quoted CSV or `==PROF==` lines (ncu); `GFLOPs`
/// or `META_DATA` lines (ERT sum); rows of five numbers (ERT try).
pub fn detect(text: &str) -> Option<Kind> {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.starts_with('{') || body.starts_with('[') {
        // Look at the start only: a trace can be hundreds of MB.
        let head: String = body.chars().take(4096).collect();
        if head.contains("\"traceEvents\"") || head.contains("\"ph\"") {
            return Some(Kind::Torch);
        }
        if head.contains("\"empirical\"") {
            return Some(Kind::ErtJson);
        }
        return None;
    }
    let lines: Vec<&str> = body.lines().take(40).collect();
    if lines
        .iter()
        .any(|l| l.starts_with("mixbench") || l.contains("CSV data") || l.contains("Compute iters"))
    {
        return Some(Kind::Mixbench);
    }
    // ncu quotes every field: a quoted CSV line is taken for an ncu export (whose reader then
    // names a missing column).
    if lines
        .iter()
        .any(|l| l.starts_with("==PROF==") || l.starts_with('"'))
    {
        return Some(Kind::Ncu);
    }
    if lines.iter().any(|l| {
        let t = l.trim();
        t == "META_DATA" || t.ends_with(" GFLOPs") || t.ends_with(" DRAM")
    }) {
        return Some(Kind::ErtSum);
    }
    let numeric = |l: &&str| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() == 5 && f.iter().all(|x| x.parse::<f64>().is_ok())
    };
    let non_empty: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.trim().is_empty())
        .collect();
    if !non_empty.is_empty() && non_empty.iter().all(numeric) {
        return Some(Kind::ErtTrials);
    }
    None
}

/// Parses `text` (from `origin`, named in errors) in whichever format [`detect`] finds.
///
/// # Errors
/// An unrecognised format (naming the ones known), or the reader's error.
pub fn parse(text: &str, origin: &str) -> Result<Imported, InputError> {
    match detect(text) {
        Some(Kind::Ncu) => ncu::parse(text, origin).map(Imported::Profile),
        Some(Kind::Torch) => torch::parse(text, origin).map(Imported::Profile),
        Some(Kind::Mixbench) => mixbench::parse(text, origin).map(Imported::Roof),
        Some(Kind::ErtJson) => ert::parse_json(text, origin).map(Imported::Roof),
        Some(Kind::ErtSum) => ert::parse_sum(text, origin).map(Imported::Roof),
        Some(Kind::ErtTrials) => ert::parse_trials(text, origin).map(Imported::Roof),
        None if text.trim().is_empty() => {
            Err(InputError::new(format!("{origin}: the file is empty"))
                .with_hint(format!("give {FORMATS}")))
        }
        None => Err(
            InputError::new(format!("{origin}: line 1: not a format roofline imports"))
                .with_hint(format!("give {FORMATS}")),
        ),
    }
}

/// Reads and parses the file at `path` ([`parse`]).
///
/// # Errors
/// The file cannot be read (see [`crate::read::read_bytes`]: not a regular file, over
/// [`crate::read::PROFILE_LIMIT`]) or is not UTF-8 (naming the path), or [`parse`]'s errors.
pub fn load(path: &Path) -> Result<Imported, InputError> {
    let text = crate::read::read_text(
        path,
        "",
        crate::read::PROFILE_LIMIT,
        &format!("give the path of {FORMATS}"),
        "export the profile as text: `ncu --csv`, or the trace as .json (not .gz or .pt.trace.json.gz: gunzip it first)",
    )?;
    parse(&text, &path.display().to_string())
}

/// Notes for the kernels whose figures divide by zero, saying which field is null and why: a
/// duration of 0 s leaves the fraction of roof null (roofline time ÷ 0 s) and the achieved
/// rates at 0; 0 bytes moved leave the intensity null (FLOPs ÷ 0 bytes).
pub(crate) fn zero_division_notes(kernels: &[ProfiledKernel]) -> Vec<String> {
    let list = |ks: Vec<&ProfiledKernel>| {
        let mut names: Vec<String> = ks
            .iter()
            .take(3)
            .map(|k| format!("#{} `{}`", k.index, k.name))
            .collect();
        if ks.len() > 3 {
            names.push(format!("and {} more", ks.len() - 3));
        }
        (ks.len(), names.join(", "))
    };
    let mut notes = Vec::new();
    let instant: Vec<&ProfiledKernel> =
        kernels.iter().filter(|k| k.duration.get() == 0.0).collect();
    if !instant.is_empty() {
        let (n, names) = list(instant);
        notes.push(format!(
            "{n} kernel(s) last 0 s ({names}): their fraction of roof is null (roofline time ÷ \
             0 s) and their achieved FLOP/s and bandwidth read 0"
        ));
    }
    let no_bytes: Vec<&ProfiledKernel> = kernels
        .iter()
        .filter(|k| k.bytes().is_some_and(|b| b.get() == 0.0))
        .collect();
    if !no_bytes.is_empty() {
        let (n, names) = list(no_bytes);
        notes.push(format!(
            "{n} kernel(s) move 0 bytes ({names}): their intensity is null (FLOPs ÷ 0 bytes)"
        ));
    }
    notes
}

/// An error at `line` (1-based) of `origin`.
pub(crate) fn at_line(origin: &str, line: usize, message: impl AsRef<str>) -> InputError {
    InputError::new(format!("{origin}: line {line}: {}", message.as_ref()))
}

/// A number as the tools print it: `16,777,216`, `1,215,000,000.00`, `52.10`, or the European
/// `1.215.000,5` / `52,10`. Commas followed by exactly three digits each are thousands
/// separators; a lone comma followed by another count of digits, or a comma after the last dot,
/// is the decimal mark. `None` for `n/a`, empty, or not a number.
pub fn parse_number(s: &str) -> Option<f64> {
    let t = s.trim().trim_matches('"').trim();
    if t.is_empty() || t.eq_ignore_ascii_case("n/a") || t == "-" {
        return None;
    }
    let (commas, dots) = (t.matches(',').count(), t.matches('.').count());
    let normalized = if commas == 0 {
        t.to_string()
    } else if dots > 0 && t.rfind(',') > t.rfind('.') {
        // `1.215.000,5`: dots group, the comma is the decimal mark.
        t.replace('.', "").replace(',', ".")
    } else {
        let int_part = t.split('.').next().unwrap_or(t);
        let groups: Vec<&str> = int_part.split(',').collect();
        let thousands = groups.len() > 1
            && !groups[0].trim_start_matches(['-', '+']).is_empty()
            && groups[1..].iter().all(|g| g.len() == 3);
        if thousands {
            t.replace(',', "")
        } else if commas == 1 && dots == 0 {
            t.replace(',', ".")
        } else {
            return None;
        }
    };
    normalized.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_with_separators() {
        assert_eq!(parse_number("16,777,216"), Some(16_777_216.0));
        assert_eq!(parse_number("1,215,000,000.00"), Some(1.215e9));
        assert_eq!(parse_number("52.10"), Some(52.10));
        assert_eq!(parse_number("\"134.22\""), Some(134.22));
        assert_eq!(parse_number("1.215.000,5"), Some(1_215_000.5));
        assert_eq!(parse_number("52,10"), Some(52.10));
        assert_eq!(parse_number("0"), Some(0.0));
        assert_eq!(parse_number("n/a"), None);
        assert_eq!(parse_number(""), None);
        assert_eq!(parse_number("12,34,5"), None);
        assert_eq!(parse_number("abc"), None);
    }

    #[test]
    fn detects_by_content() {
        assert_eq!(detect("{\"traceEvents\": []}"), Some(Kind::Torch));
        assert_eq!(detect("{\"empirical\": {}}"), Some(Kind::ErtJson));
        assert_eq!(
            detect("==PROF== Connected\n\"ID\",\"Kernel Name\""),
            Some(Kind::Ncu)
        );
        assert_eq!(detect("mixbench/read-only (v0.02)\n"), Some(Kind::Mixbench));
        assert_eq!(
            detect("   11.03 GFLOPs\n\n   18.30 DRAM\n"),
            Some(Kind::ErtSum)
        );
        assert_eq!(
            detect("  8  1  0.804  16  1\n  8  2  0.348  32  2\n"),
            Some(Kind::ErtTrials)
        );
        assert_eq!(detect("hello world\n"), None);
        assert_eq!(detect("id = \"x\"\n[peak_flops_per_s]\n"), None);
        assert_eq!(detect("{\"a\": 1}"), None);
    }

    #[test]
    fn unknown_and_empty_files_say_which_formats_work() -> Result<(), Box<dyn std::error::Error>> {
        let e = parse("hello\n", "x.txt").unwrap_err();
        assert!(e.message.contains("x.txt: line 1"), "{}", e.message);
        assert!(e
            .hint
            .ok_or("expected a value, got None")?
            .contains("mixbench"));
        let e = parse("  \n", "x.txt").unwrap_err();
        assert!(e.message.contains("empty"), "{}", e.message);
        Ok(())
    }
}
