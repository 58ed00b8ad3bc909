//! The one reader of every input file (models, chips, profiles): a regular file, read to its end
//! only up to a size limit, so that `/dev/zero`, a FIFO or a huge file is an error naming the
//! path instead of a run out of memory or a wait for a writer that never comes.

use crate::error::InputError;
use std::io::Read;
use std::path::Path;

/// The largest profile or roof file read: 1 GiB. Twice the largest JSON text Chrome's trace
/// viewer can open (a V8 string holds at most 2^29 − 24 characters, about 512 MiB), so every
/// trace that the PyTorch profiler's users can view imports; mixbench logs and ERT files are
/// kilobytes (ERT's raw `try` files a few hundred KB).
pub const PROFILE_LIMIT: u64 = 1 << 30;

/// The largest `config.json` or chip file read: 16 MiB. A Hugging Face `config.json` is a few
/// KB (DeepSeek-V3's, among the longest, is under 2 KB) and a chip file about as small: 16 MiB is
/// thousands of times the largest real one, and still a small read.
pub const TEXT_LIMIT: u64 = 16 << 20;

/// Reads the file at `path`, of at most `limit` bytes. `what` names the file in errors
/// (`"chip file "`, or `""`), `hint` says which file to give instead.
///
/// # Errors
/// The path cannot be opened (the OS's message); it is a folder, a FIFO, a device or a socket
/// (not a regular file: reading it may never end); or it holds more than `limit` bytes.
pub fn read_bytes(path: &Path, what: &str, limit: u64, hint: &str) -> Result<Vec<u8>, InputError> {
    let shown = path.display();
    let cannot = |e: std::io::Error| {
        InputError::new(format!("cannot read {what}`{shown}`: {e}")).with_hint(hint)
    };
    // `metadata` (stat) does not block on a FIFO, where `open` would wait for a writer.
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if meta.is_dir() {
        return Err(
            InputError::new(format!("cannot read {what}`{shown}`: it is a folder")).with_hint(hint),
        );
    }
    if !meta.is_file() {
        return Err(InputError::new(format!(
            "cannot read {what}`{shown}`: not a regular file (a FIFO, device or socket), whose \
             reading may never end"
        ))
        .with_hint("save the data to a file first (`cmd > file`) and give that file's path"));
    }
    let too_large = |size: String| {
        InputError::new(format!(
            "cannot read {what}`{shown}`: {size} bytes, over the {} limit for this input",
            human(limit)
        ))
        .with_hint(if limit >= PROFILE_LIMIT {
            "a trace of a few profiler steps is far smaller: profile fewer steps \
             (`torch.profiler.schedule(active=1)`) or check that the path names the profile"
        } else {
            "a config.json or chip file is a few KB: check that the path names one"
        })
    };
    if meta.len() > limit {
        return Err(too_large(meta.len().to_string()));
    }
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow after `metadata`: never read more than one byte past the limit.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(format!("more than {limit}")));
    }
    Ok(bytes)
}

/// [`read_bytes`] as UTF-8 text.
///
/// # Errors
/// As [`read_bytes`], or the bytes are not UTF-8 (naming the first bad byte); `not_utf8` is the
/// hint for that case.
pub fn read_text(
    path: &Path,
    what: &str,
    limit: u64,
    hint: &str,
    not_utf8: &str,
) -> Result<String, InputError> {
    let bytes = read_bytes(path, what, limit, hint)?;
    String::from_utf8(bytes).map_err(|e| {
        InputError::new(format!(
            "`{}`: not UTF-8 text (byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
        .with_hint(not_utf8)
    })
}

/// `1 GiB`, `16 MiB`.
fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b => format!("{b}-byte"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_folders_and_large_files_are_errors_not_reads(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let e = read_bytes(dir.path(), "", 10, "h").unwrap_err();
        assert!(e.message.contains("it is a folder"), "{}", e.message);
        if Path::new("/dev/zero").exists() {
            let e = read_bytes(Path::new("/dev/zero"), "", 10, "h").unwrap_err();
            assert!(e.message.contains("not a regular file"), "{}", e.message);
        }
        let big = dir.path().join("big");
        std::fs::File::create(&big)?.set_len(11)?;
        let e = read_bytes(&big, "", 10, "h").unwrap_err();
        assert!(
            e.message.contains("11 bytes, over the 10-byte limit"),
            "{}",
            e.message
        );
        assert_eq!(read_bytes(&big, "", 11, "h")?.len(), 11);
        let e = read_bytes(&dir.path().join("none"), "chip file ", 10, "h").unwrap_err();
        assert!(
            e.message.starts_with("cannot read chip file `"),
            "{}",
            e.message
        );
        assert_eq!(e.hint.as_deref(), Some("h"));
        Ok(())
    }
}
