//! `scripts/gpu-check.sh` stops at once, before any build, on a machine without an NVIDIA GPU.

#![allow(clippy::print_stderr)]

use std::path::Path;
use std::process::Command;

#[test]
fn gpu_check_stops_at_once_without_a_gpu() -> Result<(), Box<dyn std::error::Error>> {
    let has_gpu = std::fs::read_dir("/dev")?.filter_map(Result::ok).any(|e| {
        let n = e.file_name();
        let n = n.to_string_lossy();
        n.starts_with("nvidia") && n[6..].chars().next().is_some_and(|c| c.is_ascii_digit())
    });
    if has_gpu {
        eprintln!(
            "this machine has an NVIDIA GPU: the no-GPU path of gpu-check.sh is not exercised here"
        );
        return Ok(());
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = tempfile::tempdir()?;
    let r = Command::new("bash")
        .arg(root.join("scripts/gpu-check.sh"))
        .env("OUT", out.path().join("gpu-check"))
        // No nvidia-smi on PATH, whatever the machine has installed.
        .env("PATH", "/usr/bin:/bin")
        .output()?;
    let stderr = String::from_utf8(r.stderr)?;
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no NVIDIA GPU"), "{stderr}");
    assert!(!stderr.contains("building"), "{stderr}");
    assert!(!out.path().join("gpu-check").exists(), "nothing written");
    Ok(())
}
