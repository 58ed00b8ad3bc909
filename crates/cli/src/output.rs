//! Output files (`--plot FILE`, `--out FILE`): never overwritten without `--force`, and a path in
//! a folder that does not exist is a clear error, not an I/O message.

use crate::error::{CliError, Kind};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

/// An I/O failure of ours or the environment's (exit code 1).
fn internal(message: String) -> CliError {
    CliError {
        kind: Kind::Internal,
        message,
        hint: None,
    }
}

/// Checks that `path` can be written before any work is done: its folder exists and is a folder,
/// and the file does not exist yet unless `force`. `flag` names the option in messages
/// (`--plot`), `example` a file name it takes (`roofline.svg`).
///
/// # Errors
/// A bad-input [`CliError`] (exit code 2) naming the path and the fix.
pub(crate) fn check_output(
    path: &Path,
    force: bool,
    flag: &str,
    example: &str,
) -> Result<(), CliError> {
    let shown = path.display();
    if path.as_os_str().is_empty() {
        return Err(CliError::bad_input(
            format!("`{flag}` needs a file path"),
            Some(format!("for example `{flag} {example}`")),
        ));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.exists() {
            return Err(CliError::bad_input(
                format!(
                    "cannot write `{shown}`: the folder `{}` does not exist",
                    parent.display()
                ),
                Some(format!(
                    "create it first (`mkdir -p {}`) or choose a path in an existing folder",
                    parent.display()
                )),
            ));
        }
        if !parent.is_dir() {
            return Err(CliError::bad_input(
                format!(
                    "cannot write `{shown}`: `{}` is not a folder",
                    parent.display()
                ),
                Some("choose a path in an existing folder".into()),
            ));
        }
    }
    if path.is_dir() {
        return Err(CliError::bad_input(
            format!("cannot write `{shown}`: it is a folder"),
            Some(format!(
                "give `{flag}` a file name, such as `{shown}/{example}`"
            )),
        ));
    }
    if path.exists() && !force {
        return Err(CliError::bad_input(
            format!("`{shown}` already exists; it is not overwritten"),
            Some("pass --force to overwrite it, or choose another path".into()),
        ));
    }
    Ok(())
}

/// Creates the output file `path`: a new file, or truncates an existing one only when `force`.
///
/// # Errors
/// The errors of [`check_output`]; a file that appeared since (without `--force`); a path that
/// cannot hold a file (permissions, a read-only or virtual file system) as bad input; any other
/// I/O failure (a full disk) as an internal error naming the path.
pub(crate) fn create_output(path: &Path, force: bool) -> Result<File, CliError> {
    check_output(path, force, "output", "roofline.svg")?;
    let mut opts = OpenOptions::new();
    opts.write(true);
    if force {
        opts.create(true).truncate(true);
    } else {
        opts.create_new(true);
    }
    opts.open(path).map_err(|e| {
        use std::io::ErrorKind;
        if e.kind() == ErrorKind::AlreadyExists {
            CliError::bad_input(
                format!("`{}` already exists; it is not overwritten", path.display()),
                Some("pass --force to overwrite it, or choose another path".into()),
            )
        } else if matches!(
            e.kind(),
            ErrorKind::PermissionDenied | ErrorKind::NotFound | ErrorKind::ReadOnlyFilesystem
        ) {
            // The path the user named cannot hold a file: their input, not our fault.
            CliError::bad_input(
                format!("cannot create `{}`: {e}", path.display()),
                Some("choose a path in a folder you can write to".into()),
            )
        } else {
            internal(format!("cannot write `{}`: {e}", path.display()))
        }
    })
}

/// Writes `bytes` to a new output file `path` (see [`create_output`]).
///
/// # Errors
/// As [`create_output`], or a failed write.
pub(crate) fn write_output(path: &Path, force: bool, bytes: &[u8]) -> Result<(), CliError> {
    let mut f = create_output(path, force)?;
    f.write_all(bytes)
        .and_then(|_| f.flush())
        .map_err(|e| internal(format!("cannot write `{}`: {e}", path.display())))
}

/// Whether two output paths name the same file: equal as given, or the same file name in the
/// same folder once the folders are resolved (`out/a.svg` and `./out/../out/a.svg`).
fn same_file(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    let folder = |p: &Path| {
        let parent = p.parent().filter(|q| !q.as_os_str().is_empty());
        parent
            .unwrap_or(Path::new("."))
            .canonicalize()
            .ok()
            .map(|d| (d, p.file_name().map(|n| n.to_os_string())))
    };
    matches!((folder(a), folder(b)), (Some(x), Some(y)) if x == y)
}

/// Checks that the output files of one command are distinct: two outputs on one path would
/// leave only the one written last.
///
/// # Errors
/// A bad-input [`CliError`] naming both flags and the path.
pub(crate) fn distinct_outputs(outputs: &[(&str, &Path)]) -> Result<(), CliError> {
    for (i, (flag_a, a)) in outputs.iter().enumerate() {
        for (flag_b, b) in &outputs[i + 1..] {
            if same_file(a, b) {
                return Err(CliError::bad_input(
                    format!(
                        "`{flag_a}` and `{flag_b}` name the same file `{}`: one output would overwrite the other",
                        b.display()
                    ),
                    Some(format!("give `{flag_b}` a path of its own")),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_to_overwrite_without_force_and_names_missing_folder(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let p = dir.path().join("a.svg");
        write_output(&p, false, b"one").map_err(|e| format!("{e:?}"))?;
        let e = write_output(&p, false, b"two").unwrap_err();
        assert_eq!(e.kind, Kind::BadInput);
        assert!(e
            .hint
            .ok_or("expected a value, got None")?
            .contains("--force"));
        assert_eq!(std::fs::read(&p)?, b"one");
        write_output(&p, true, b"two").map_err(|e| format!("{e:?}"))?;
        assert_eq!(std::fs::read(&p)?, b"two");
        let missing = dir.path().join("nope/a.svg");
        let e = check_output(&missing, false, "--plot", "roofline.svg").unwrap_err();
        assert!(e.message.contains("does not exist"), "{}", e.message);
        assert!(e
            .hint
            .ok_or("expected a value, got None")?
            .contains("mkdir -p"));
        Ok(())
    }

    #[test]
    fn two_outputs_on_one_path_are_refused() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let a = dir.path().join("r.html");
        let same = dir.path().join(".").join("r.html");
        let e = distinct_outputs(&[("--out", &a), ("--plot", &same)]).unwrap_err();
        assert_eq!(e.kind, Kind::BadInput);
        assert!(
            e.message
                .contains("`--out` and `--plot` name the same file"),
            "{}",
            e.message
        );
        distinct_outputs(&[("--out", &a), ("--plot", &dir.path().join("r.svg"))])
            .map_err(|e| e.message)?;
        Ok(())
    }
}
