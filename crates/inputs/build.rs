//! Embeds every file of `catalog/hardware/*.toml`, `catalog/systems/*.toml` and
//! `catalog/models/*.json` into the binary,
//! so that the catalog grows by adding a file, with no code change.

use std::fmt::Write as _;
use std::path::Path;

fn list(dir: &str, ext: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let path = Path::new(dir);
    println!("cargo:rerun-if-changed={dir}");
    let Ok(entries) = std::fs::read_dir(path) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().and_then(|x| x.to_str()) == Some(ext) {
            let stem = p
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            let abs = std::fs::canonicalize(&p).unwrap_or(p.clone());
            println!("cargo:rerun-if-changed={}", abs.display());
            out.push((stem, abs.display().to_string()));
        }
    }
    out.sort();
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut code = String::new();
    for (name, dir, ext) in [
        ("HARDWARE_FILES", "catalog/hardware", "toml"),
        ("SYSTEM_FILES", "catalog/systems", "toml"),
        ("MODEL_FILES", "catalog/models", "json"),
    ] {
        let files = list(dir, ext);
        let _ = writeln!(
            code,
            "/// Embedded `{dir}/*.{ext}` files: (file stem, text)."
        );
        let _ = writeln!(code, "pub static {name}: &[(&str, &str)] = &[");
        for (stem, abs) in files {
            let _ = writeln!(code, "    ({stem:?}, include_str!({abs:?})),");
        }
        let _ = writeln!(code, "];");
    }
    // Cargo always sets OUT_DIR for build scripts; a failure here fails the build with the
    // error printed, not a panic.
    let out = std::env::var("OUT_DIR")?;
    std::fs::write(Path::new(&out).join("embedded.rs"), code)?;
    Ok(())
}
