//! `run_captured`, the in-process entry the Python bindings and the local page call, answers
//! with the very bytes and errors the `roofline` program prints.

use assert_cmd::Command;
use std::ffi::OsString;

fn argv(words: &[&str]) -> Vec<OsString> {
    std::iter::once("roofline")
        .chain(words.iter().copied())
        .map(OsString::from)
        .collect()
}

#[test]
fn output_is_the_programs_stdout() -> Result<(), Box<dyn std::error::Error>> {
    for words in [
        &[
            "analyze",
            "llama-3.1-8b",
            "--stage",
            "decode",
            "--batch",
            "8",
            "--format",
            "json",
        ][..],
        &[
            "op", "gemm", "--m", "1", "--n", "4096", "--k", "4096", "--format", "json",
        ],
        &["models"],
    ] {
        let mut out = Vec::new();
        roofline_cli::run_captured(&argv(words), &mut out)?;
        let cli = Command::cargo_bin("roofline")?.args(words).output()?;
        assert!(cli.status.success(), "{words:?}");
        assert_eq!(out, cli.stdout, "{words:?}");
    }
    Ok(())
}

#[test]
fn errors_are_the_programs_error_and_hint() -> Result<(), Box<dyn std::error::Error>> {
    for words in [
        &["analyze", "--batch", "0"][..],
        &["analyze", "no-such-model"],
        &["analyze", "--bogus"],
    ] {
        let mut out = Vec::new();
        let Err(f) = roofline_cli::run_captured(&argv(words), &mut out) else {
            return Err(format!("{words:?} succeeded").into());
        };
        let cli = Command::cargo_bin("roofline")?.args(words).output()?;
        assert_eq!(Some(i32::from(f.code)), cli.status.code(), "{words:?}");
        assert_eq!(f.code, 2);
        let stderr = String::from_utf8(cli.stderr)?;
        let error = stderr
            .lines()
            .find(|l| l.starts_with("error: "))
            .ok_or("no error line")?;
        let hint = stderr
            .lines()
            .find(|l| l.starts_with("hint: "))
            .ok_or("no hint line")?;
        assert_eq!(format!("error: {}", f.message), error, "{words:?}");
        assert_eq!(
            f.hint.map(|h| format!("hint: {h}")).as_deref(),
            Some(hint),
            "{words:?}"
        );
    }
    Ok(())
}
