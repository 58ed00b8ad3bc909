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
/// (`--plot`).
///
/// # Errors
/// A bad-input [`CliError`] (exit code 2) naming the path and the fix.
pub(crate) fn check_output(path: &Path, force: bool, flag: &str) -> Result<(), CliError> {
    let shown = path.display();
    if path.as_os_str().is_empty() {
        return Err(CliError::bad_input(
            format!("`{flag}` needs a file path"),
            Some(format!("for example `{flag} roofline.svg`")),
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
                "give `{flag}` a file name, such as `{shown}/roofline.svg`"
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
    check_output(path, force, "output")?;
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
        let e = check_output(&missing, false, "--plot").unwrap_err();
        assert!(e.message.contains("does not exist"), "{}", e.message);
        assert!(e
            .hint
            .ok_or("expected a value, got None")?
            .contains("mkdir -p"));
        Ok(())
    }
}
