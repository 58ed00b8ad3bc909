//! The README works as written: every `roofline` command in its `sh` blocks runs (outputs
//! redirected to a temporary folder), and the output it quotes under a command (`# …` lines)
//! is what the command prints: every figure of a quoted line appears in the output.
//!
//! Left out, with their own tests: `roofline measure` (a minute of timing the machine) and
//! `roofline ui` (a server). Lines that are not `roofline` commands (cargo, python, pip) are
//! not run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One command of the README and the output lines it quotes after it.
struct Example {
    args: Vec<String>,
    quoted: Vec<String>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `roofline` commands of every ```sh block, continuation lines joined, trailing comments
/// dropped, `$VAR`s set earlier in the block expanded.
fn examples(readme: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    for block in readme.split("```sh\n").skip(1) {
        let body = block.split("```").next().unwrap_or("");
        let mut vars: HashMap<String, String> = HashMap::new();
        let mut lines = body.lines().peekable();
        // Whether the quoted lines that follow belong to a command we ran.
        let mut collecting = false;
        while let Some(first) = lines.next() {
            let mut line = first.to_string();
            while line.ends_with('\\') {
                line.pop();
                match lines.next() {
                    Some(next) => line.push_str(&format!(" {}", next.trim())),
                    None => break,
                }
            }
            if let Some(q) = line.strip_prefix("# ") {
                if collecting {
                    if let Some(last) = out.last_mut() {
                        last.quoted.push(q.to_string());
                    }
                }
                continue;
            }
            let code = line.split("  #").next().unwrap_or("").trim().to_string();
            if let Some((k, v)) = code.split_once('=').filter(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            }) {
                vars.insert(k.to_string(), v.to_string());
                continue;
            }
            collecting = false;
            let Some(rest) = code.strip_prefix("roofline ") else {
                continue;
            };
            let args: Vec<String> = rest
                .split_whitespace()
                .map(|w| {
                    let mut w = w.to_string();
                    for (k, v) in &vars {
                        w = w.replace(&format!("${k}"), v);
                    }
                    w
                })
                .collect();
            if matches!(args.first().map(String::as_str), Some("measure" | "ui")) {
                continue;
            }
            collecting = true;
            out.push(Example {
                args,
                quoted: Vec::new(),
            });
        }
    }
    out
}

/// `args` with each output file (`--out`, `--plot`, `--html`, `--write-chip`) moved into `dir`.
fn redirected(args: &[String], dir: &Path) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut next_is_output = false;
    for a in args {
        if next_is_output {
            let name = Path::new(a).file_name().map(|n| n.to_os_string());
            out.push(
                dir.join(name.unwrap_or_else(|| "out".into()))
                    .display()
                    .to_string(),
            );
            next_is_output = false;
            continue;
        }
        next_is_output = matches!(a.as_str(), "--out" | "--plot" | "--html" | "--write-chip");
        out.push(a.clone());
    }
    out
}

#[test]
fn every_readme_command_runs_and_prints_what_the_readme_quotes(
) -> Result<(), Box<dyn std::error::Error>> {
    let readme = std::fs::read_to_string(root().join("README.md"))?;
    let all = examples(&readme);
    assert!(all.len() >= 40, "only {} commands found", all.len());
    let mut quoted_lines = 0;
    for (i, ex) in all.iter().enumerate() {
        let dir = tempfile::tempdir()?;
        let args = redirected(&ex.args, dir.path());
        let out = assert_cmd::Command::cargo_bin("roofline")?
            .args(&args)
            .current_dir(root())
            .output()?;
        assert!(
            out.status.success(),
            "README command {i} failed: roofline {}\n{}",
            ex.args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout)?;
        let stderr = String::from_utf8(out.stderr)?;
        for q in &ex.quoted {
            quoted_lines += 1;
            // Every figure of the quoted line, and its first word, where the command printed.
            let figures = q
                .split_whitespace()
                .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
                .map(|w| w.trim_end_matches([',', ';', ':']));
            for f in figures.chain(q.split_whitespace().take(1)) {
                assert!(
                    stdout.contains(f) || stderr.contains(f),
                    "`roofline {}`: the README quotes `{f}` (in `{q}`), which it does not print",
                    ex.args.join(" ")
                );
            }
        }
    }
    assert!(
        quoted_lines >= 10,
        "only {quoted_lines} quoted output lines checked"
    );
    Ok(())
}
