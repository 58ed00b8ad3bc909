//! Helpers shared by the end-to-end tests of the `roofline` binary; each test file says
//! `mod common;`.

// Every test file is its own test binary and uses only some of these helpers, so each binary
// would otherwise warn about the ones it leaves unused.
#![allow(dead_code)]

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::ffi::OsStr;
use std::path::PathBuf;

/// The `roofline` binary of this crate, ready to take arguments.
pub fn roofline() -> Command {
    Command::cargo_bin("roofline").expect("binary builds")
}

/// Runs `roofline` with `args` and `--format json`, asserts it succeeds, and parses its stdout.
pub fn json_of(args: &[&str]) -> Value {
    let out = roofline()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// Runs `roofline` with `args` and asserts bad input: exit 2, nothing on stdout, and an
/// `error: ` line naming `needle` followed by a `hint: `.
pub fn bad_input<S: AsRef<OsStr>>(args: &[S], needle: &str) {
    roofline()
        .args(args)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::starts_with("error: "))
        .stderr(predicate::str::contains(needle))
        .stderr(predicate::str::contains("hint: "));
}

/// Whether `a` is within `rel` of `b`, relative to `b`.
pub fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

/// A path under the shared data folder beside the repository.
pub fn shared(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(path)
}

/// Llama-2-7B's config.json, the file the catalog embeds (`crates/inputs/catalog/models`).
pub const LLAMA2_7B_CONFIG: &str = include_str!("../../../inputs/catalog/models/llama-2-7b.json");

/// This machine's roofline as `roofline measure --quick` wrote it (committed with the repo).
pub fn this_cpu() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/small-llama/this-cpu.toml")
}

/// The committed JSON Schema of a document kind (`docs/schema/{kind}.schema.json`).
pub fn schema(kind: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schema")
        .join(format!("{kind}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Asserts that `doc` is valid against the committed schema of `kind`; `what` (the command
/// line) names it in the failure, with every violation and where it is.
pub fn assert_valid(kind: &str, doc: &Value, what: &str) {
    let s = schema(kind);
    let validator = jsonschema::draft202012::new(&s)
        .unwrap_or_else(|e| panic!("docs/schema/{kind}.schema.json does not compile: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("at `{}`: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "`{what}` does not match docs/schema/{kind}.schema.json:\n  {}",
        errors.join("\n  ")
    );
}
