//! Fuzzing of the `roofline` binary: structure-aware mutations of model configs, chip files and
//! every profile format, and edge values of the command-line flags, each run as a process with
//! a time limit against these oracles:
//!
//! - no panic (exit 101, `panicked` on stderr), no death by a signal, no hang (killed after
//!   `FUZZ_TIMEOUT_S`, 10 s by default);
//! - exit 0, or exit 2 with nothing on stdout, a line starting `error:` and one starting `hint:`
//!   on stderr (exit 1, an internal fault, is a failure on any of these inputs);
//! - on success with `--format json`: one JSON document, valid against its committed schema
//!   (`docs/schema/`; a non-finite number is written as `null`, which the schema rejects where a
//!   number is due), with no negative number but under the keys of [`SIGNED_KEYS`]; on success
//!   in a table or CSV: no `NaN` or `inf` printed;
//! - an output file that existed before the run (`--plot`, `--out`, `--write-chip`) keeps its
//!   bytes unless the run had `--force`; an output the run names is written when it succeeds;
//! - a control case (a seed input, unmutated, with valid flags) exits 0.
//!
//! The cases are a deterministic function of the seed: `FUZZ_SEED` (default below), `FUZZ_CASES`
//! (default [`DEFAULT_CASES`]), `FUZZ_ONLY=N` (the one case N), `FUZZ_THREADS`,
//! `FUZZ_TIMEOUT_S`, `FUZZ_BIN` (another build of the binary), `FUZZ_LOG` (a file: one line per
//! process run). Every failing case is listed with
//! its command line and a folder holding its input files (kept under the target folder), and the
//! test fails once, after all cases ran.

mod common;
#[path = "fuzz/gen.rs"]
mod gen;

use gen::{Arg, Case, Seeds, Step};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Cases a plain `cargo test` runs: about 20–40 s of debug-build processes on two busy cores.
const DEFAULT_CASES: u64 = 1000;
const DEFAULT_SEED: u64 = 0x5EED_F00D_2026;

/// JSON keys whose numbers may be negative: signed differences, left unclamped by the code.
/// - `bytes_saved` (`fuse`): bytes of the separate kernels − bytes of the fused one.
/// - `roofline_saved_s`, `launch_saved_s` (`analyze --fusion`): time (or launches × overhead)
///   before − after fusion; `FusionSaving::None` is the regime of a saving ≤ 0, and with no
///   saving the difference of two sums of the same terms can round to −ε.
///
/// Every other number is a count, size, rate, time, intensity, share or ratio: never negative.
/// `time_lost_s` (measured − roofline time of an imported kernel) is clamped at 0 by the code,
/// so it is not here.
const SIGNED_KEYS: &[&str] = &["bytes_saved", "launch_saved_s", "roofline_saved_s"];

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => {
            let v = v.trim();
            let parsed = match v.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => v.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{name}={v} is not a whole number"))
        }
        Err(_) => default,
    }
}

/// What one process did.
struct Outcome {
    code: Option<i32>,
    timed_out: bool,
    stdout: Vec<u8>,
    stderr: String,
    elapsed: Duration,
}

/// Runs `bin args` in `dir` with stdout and stderr to files, killing it after `limit`.
fn run(bin: &Path, args: &[String], dir: &Path, limit: Duration) -> Outcome {
    let out_path = dir.join(".stdout");
    let err_path = dir.join(".stderr");
    let stdout = std::fs::File::create(&out_path).expect("stdout file");
    let stderr = std::fs::File::create(&err_path).expect("stderr file");
    let start = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .env("NO_COLOR", "1")
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let mut timed_out = false;
    let status = loop {
        match child.try_wait().expect("wait on the child") {
            Some(s) => break s,
            None if start.elapsed() > limit => {
                timed_out = true;
                let _ = child.kill();
                break child.wait().expect("wait on the killed child");
            }
            None => std::thread::sleep(Duration::from_millis(3)),
        }
    };
    let elapsed = start.elapsed();
    let stdout = std::fs::read(&out_path).unwrap_or_default();
    let stderr =
        String::from_utf8_lossy(&std::fs::read(&err_path).unwrap_or_default()).into_owned();
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    Outcome {
        code: status.code(),
        timed_out,
        stdout,
        stderr,
        elapsed,
    }
}

/// The schema of a successful JSON document, from the command line and the document.
fn schema_kind(args: &[String], doc: &Value) -> Option<&'static str> {
    let has = |f: &str| {
        args.iter()
            .any(|a| a == f || a.strip_prefix(f).is_some_and(|r| r.starts_with('=')))
    };
    let positional = |i: usize| args.get(i).map(String::as_str);
    Some(match positional(0)? {
        // On many devices (a layout flag, --system or --devices): its own document.
        "analyze" if doc.get("system_devices").is_some() => "analyze-parallel",
        "analyze" if has("--explain") => "explain",
        "analyze" if has("--profile") => "join",
        "analyze" if has("--fusion") => "analyze-fusion",
        "analyze" => "analyze",
        "report" => "report",
        "sweep" if has("--tp") => "sweep-tp",
        "sweep" => "sweep",
        "plan" => "plan",
        "serve-sim" => "serve-sim",
        "mbu" => "mbu",
        "mfu" if doc.get("sizes").is_some() => "mfu-by-size",
        "mfu" => "mfu",
        "fuse" => "fuse",
        "models" => "models",
        "op" if has("--explain") => "explain",
        "op" => "op",
        "import" if doc.get("kind").and_then(Value::as_str) == Some("roof") => "import-roof",
        "import" => "import-profile",
        "hardware" => match positional(1)? {
            "show" if doc.get("devices").is_some() => "hardware-show-system",
            "show" => "hardware-show",
            "compare" => "hardware-compare",
            "list" if has("--systems") => "hardware-list-systems",
            "list" => "hardware-list",
            _ => return None,
        },
        _ => return None,
    })
}

/// Compiled schemas, shared by the worker threads.
struct Schemas(Mutex<HashMap<&'static str, std::sync::Arc<jsonschema::Validator>>>);

impl Schemas {
    fn errors(&self, kind: &'static str, doc: &Value) -> Vec<String> {
        let v = {
            let mut m = self.0.lock().unwrap();
            m.entry(kind)
                .or_insert_with(|| {
                    let s = common::schema(kind);
                    std::sync::Arc::new(jsonschema::draft202012::new(&s).unwrap_or_else(|e| {
                        panic!("docs/schema/{kind}.schema.json does not compile: {e}")
                    }))
                })
                .clone()
        };
        v.iter_errors(doc)
            .take(3)
            .map(|e| format!("at `{}`: {}", e.instance_path(), trunc(&e.to_string(), 160)))
            .collect()
    }
}

/// Every number of `v` that is negative under a key not in [`SIGNED_KEYS`], as `path = value`.
fn negatives(v: &Value, path: &mut String, key: Option<&str>, out: &mut Vec<String>) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                if x < 0.0 && !key.is_some_and(|k| SIGNED_KEYS.contains(&k)) {
                    out.push(format!("{path} = {n}"));
                }
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                negatives(c, path, key, out);
                path.truncate(len);
            }
        }
        Value::Object(m) => {
            for (k, c) in m {
                let len = path.len();
                path.push('.');
                path.push_str(k);
                negatives(c, path, Some(k), out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Whether `text` prints a non-finite number: a word `NaN`, `inf`, `-inf` or `Infinity`.
fn non_finite_word(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '+' || c == '.'))
            .map(|w| w.trim_start_matches(['-', '+']).trim_end_matches('.'))
            .find(|w| matches!(*w, "NaN" | "nan" | "inf" | "Infinity" | "infinity"))
            .map(|_| trunc(l.trim(), 160))
    })
}

fn trunc(s: &str, n: usize) -> String {
    if s.chars().count() > n {
        format!("{}…", s.chars().take(n).collect::<String>())
    } else {
        s.to_string()
    }
}

/// A command line as it can be pasted into a shell, run from the case folder.
fn shell_line(bin: &Path, args: &[String]) -> String {
    let quote = |s: &str| {
        if !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=,:%+".contains(c))
        {
            s.to_string()
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    };
    std::iter::once(bin.display().to_string())
        .chain(args.iter().map(|a| quote(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The oracles of one step; each broken one is a line of the failure.
fn check_step(
    step: &Step,
    args: &[String],
    out: &Outcome,
    before: &BTreeMap<String, Option<Vec<u8>>>,
    dir: &Path,
    control: bool,
    schemas: &Schemas,
) -> Vec<String> {
    let mut bad = Vec::new();
    let first_err = out
        .stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(|l| trunc(l, 200))
        .unwrap_or_default();
    if out.timed_out {
        bad.push(format!(
            "hang: killed after {:.1} s",
            out.elapsed.as_secs_f64()
        ));
        return bad;
    }
    if out.code == Some(101) || out.stderr.contains("panicked") {
        let line = out
            .stderr
            .lines()
            .find(|l| l.contains("panicked"))
            .map(|l| {
                // The message is on the next line in recent Rust versions.
                let next = out
                    .stderr
                    .lines()
                    .skip_while(|x| *x != l)
                    .nth(1)
                    .unwrap_or("");
                format!("{} {}", l.trim(), next.trim())
            })
            .unwrap_or_else(|| first_err.clone());
        bad.push(format!(
            "panic (exit {:?}): {}",
            out.code,
            trunc(&line, 240)
        ));
        return bad;
    }
    match out.code {
        None => bad.push("killed by a signal".into()),
        Some(0) => {
            let text = String::from_utf8_lossy(&out.stdout);
            if step.json {
                match serde_json::from_slice::<Value>(&out.stdout) {
                    Err(e) => bad.push(format!(
                        "exit 0 but stdout is not one JSON document: {e}: {}",
                        trunc(&text, 120)
                    )),
                    Ok(doc) => {
                        match schema_kind(args, &doc) {
                            Some(kind) => {
                                let errs = schemas.errors(kind, &doc);
                                if !errs.is_empty() {
                                    bad.push(format!(
                                        "JSON does not match docs/schema/{kind}.schema.json: {}",
                                        errs.join("; ")
                                    ));
                                }
                            }
                            None => bad.push("no schema known for this command".into()),
                        }
                        let mut neg = Vec::new();
                        negatives(&doc, &mut String::new(), None, &mut neg);
                        if !neg.is_empty() {
                            let n = neg.len();
                            neg.truncate(4);
                            bad.push(format!(
                                "negative quantity in JSON ({n}): {}",
                                neg.join(", ")
                            ));
                        }
                    }
                }
            } else if let Some(line) = non_finite_word(&text) {
                bad.push(format!("non-finite number printed: {line}"));
            }
            for name in &step.outputs {
                let existed = before.get(name).cloned().flatten();
                if existed.is_none() {
                    match std::fs::metadata(dir.join(name)) {
                        Ok(m) if m.len() > 0 => {}
                        _ => bad.push(format!("exit 0 but the output `{name}` was not written")),
                    }
                }
            }
        }
        Some(2) => {
            let lines: Vec<&str> = out.stderr.lines().collect();
            let has_error = lines.iter().any(|l| l.starts_with("error:"));
            let has_hint = lines.iter().any(|l| l.starts_with("hint:"));
            if !has_error || !has_hint {
                bad.push(format!(
                    "exit 2 without {}: {first_err}",
                    match (has_error, has_hint) {
                        (false, false) => "an `error:` and a `hint:` line",
                        (false, true) => "an `error:` line",
                        _ => "a `hint:` line",
                    }
                ));
            }
            if !out.stdout.is_empty() {
                bad.push(format!(
                    "exit 2 with output on stdout ({} bytes): {}",
                    out.stdout.len(),
                    trunc(&String::from_utf8_lossy(&out.stdout), 80)
                ));
            }
        }
        Some(c) => bad.push(format!("exit {c}: {first_err}")),
    }
    if control && out.code != Some(0) {
        bad.push(format!("control case failed: {first_err}"));
    }
    // No clobbered file, whatever the exit code.
    if !step.force {
        for name in &step.outputs {
            if let Some(Some(old)) = before.get(name) {
                let now = std::fs::read(dir.join(name)).ok();
                if now.as_deref() != Some(old.as_slice()) {
                    bad.push(format!(
                        "clobbered: `{name}` existed and was changed without --force"
                    ));
                }
            }
        }
    }
    bad
}

/// One failing case, as printed.
struct Failure {
    index: u64,
    text: String,
}

fn resolve(args: &[Arg], dir: &Path) -> Vec<String> {
    args.iter()
        .map(|a| match a {
            Arg::Lit(s) => s.clone(),
            Arg::File { name } => dir.join(name).to_string_lossy().into_owned(),
        })
        .collect()
}

/// Runs one case in `dir`; `None` when every oracle holds.
fn run_case(
    case: &Case,
    bin: &Path,
    dir: &Path,
    limit: Duration,
    schemas: &Schemas,
    tally: &Tally,
) -> Option<String> {
    std::fs::create_dir_all(dir).expect("case folder");
    for f in &case.files {
        std::fs::write(dir.join(&f.name), &f.content).expect("case input");
    }
    let mut report = Vec::new();
    let mut previous_ok = true;
    for (i, step) in case.steps.iter().enumerate() {
        if step.after_success && !previous_ok {
            break;
        }
        let args = resolve(&step.args, dir);
        let before: BTreeMap<String, Option<Vec<u8>>> = step
            .outputs
            .iter()
            .map(|n| (n.clone(), std::fs::read(dir.join(n)).ok()))
            .collect();
        let out = run(bin, &args, dir, limit);
        tally.count(&out);
        if let Some(log) = &tally.log {
            let first = out.stderr.lines().next().unwrap_or("");
            let _ = writeln!(
                log.lock().unwrap(),
                "{}\t{}\t{:?}\t{}\t{}",
                case.index,
                case.what.replace('\t', " "),
                out.code,
                trunc(first, 200),
                args.join(" ")
            );
        }
        let bad = check_step(step, &args, &out, &before, dir, case.control, schemas);
        previous_ok = out.code == Some(0);
        if !bad.is_empty() {
            report.push(format!(
                "  step {}: {}\n    {}",
                i + 1,
                shell_line(bin, &args),
                bad.join("\n    ")
            ));
        }
    }
    if report.is_empty() {
        None
    } else {
        let inputs: Vec<String> = case
            .files
            .iter()
            .map(|f| dir.join(&f.name).display().to_string())
            .collect();
        Some(format!(
            "case {} ({}){}\n  input: {}\n{}",
            case.index,
            case.what,
            if case.control { " [control]" } else { "" },
            if inputs.is_empty() {
                "(none)".to_string()
            } else {
                inputs.join(" ")
            },
            report.join("\n")
        ))
    }
}

/// Exit codes seen, to show the cases reached both the success and the error paths.
#[derive(Default)]
struct Tally {
    ok: AtomicUsize,
    bad_input: AtomicUsize,
    other: AtomicUsize,
    /// `FUZZ_LOG=FILE`: one line per process (case, mutation, exit code, first stderr line,
    /// command), for a long run's statistics.
    log: Option<Mutex<std::fs::File>>,
}

impl Tally {
    fn count(&self, out: &Outcome) {
        match out.code {
            Some(0) => &self.ok,
            Some(2) => &self.bad_input,
            _ => &self.other,
        }
        .fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn fuzz_inputs_and_flags() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let seeds = Seeds::load(&repo, &common::shared(""));
    let seed = env_u64("FUZZ_SEED", DEFAULT_SEED);
    let cases = env_u64("FUZZ_CASES", DEFAULT_CASES);
    let only = std::env::var("FUZZ_ONLY")
        .ok()
        .map(|_| env_u64("FUZZ_ONLY", 0));
    let limit = Duration::from_secs_f64(env_u64("FUZZ_TIMEOUT_S", 10) as f64);
    let threads = env_u64(
        "FUZZ_THREADS",
        std::thread::available_parallelism()
            .map_or(2, |n| n.get() as u64)
            .clamp(2, 16),
    ) as usize;
    let bin = std::env::var_os("FUZZ_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_roofline")));
    assert!(bin.is_file(), "no binary at {}", bin.display());

    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(match only {
        Some(n) => format!("fuzz-{seed:#x}-case-{n}"),
        None => format!("fuzz-{seed:#x}"),
    });
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("fuzz folder");

    let indices: Vec<u64> = match only {
        Some(n) => vec![n],
        None => (0..cases).collect(),
    };
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::<Failure>::new());
    let schemas = Schemas(Mutex::new(HashMap::new()));
    let tally = Tally {
        log: std::env::var_os("FUZZ_LOG")
            .map(|p| Mutex::new(std::fs::File::create(p).expect("FUZZ_LOG file"))),
        ..Tally::default()
    };
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&index) = indices.get(i) else { break };
                let case = gen::case(seed, index, &seeds);
                let dir = root.join(format!("case-{index}"));
                match run_case(&case, &bin, &dir, limit, &schemas, &tally) {
                    None => {
                        let _ = std::fs::remove_dir_all(&dir);
                    }
                    Some(text) => failures.lock().unwrap().push(Failure { index, text }),
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort_by_key(|f| f.index);
    let (ok, bad, other) = (
        tally.ok.load(Ordering::Relaxed),
        tally.bad_input.load(Ordering::Relaxed),
        tally.other.load(Ordering::Relaxed),
    );
    let summary = format!(
        "fuzz: seed {seed:#x}, {} case(s) in {:.1} s on {threads} thread(s): {ok} exit 0, {bad} \
         exit 2, {other} other; {} failing case(s)",
        indices.len(),
        start.elapsed().as_secs_f64(),
        failures.len()
    );
    let mut log = std::fs::File::create(root.join("failures.txt")).expect("failure log");
    let _ = writeln!(log, "{summary}");
    for f in &failures {
        let _ = writeln!(log, "{}\n", f.text);
    }
    let _ = writeln!(std::io::stderr(), "{summary}");
    if only.is_none() && cases >= 100 {
        // The cases reach both paths: a harness that only ever fed bad input (or only good)
        // would check half of what it claims.
        assert!(
            ok * 10 >= indices.len() && bad * 10 >= indices.len(),
            "{summary}: the cases should reach success and bad input alike (≥ 10 % each)"
        );
    }
    assert!(
        failures.is_empty(),
        "{summary} (also in {}); replay one with FUZZ_SEED={seed:#x} FUZZ_ONLY=N; each \
         command runs from its case folder, which keeps the inputs:\n\n{}",
        root.join("failures.txt").display(),
        failures
            .iter()
            .map(|f| f.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

/// The oracles themselves: what they flag and what they let through.
#[test]
fn oracles_flag_what_they_should_and_nothing_else() {
    let doc: Value = serde_json::json!({
        "time_s": 1.0,
        "rows": [{"bytes": -3.0, "bytes_saved": -2.0}, {"flops": 0, "zero": -0.0}],
        "list": [1, 2],
        "fusion": {"roofline_saved_s": -1e-6, "launch_saved_s": -5e-6, "speedup": 1.2},
        "note": "-1"
    });
    let mut neg = Vec::new();
    negatives(&doc, &mut String::new(), None, &mut neg);
    assert_eq!(neg, vec![".rows[0].bytes = -3.0".to_string()]);

    assert!(non_finite_word("time  inf s").is_some());
    assert!(non_finite_word("a,NaN,b").is_some());
    assert!(non_finite_word("-inf B/s").is_some());
    assert!(non_finite_word("infeasible: the tile does not fit; info").is_none());
    assert!(non_finite_word("1.5 TFLOP/s, 3 µs").is_none());

    let line = shell_line(
        Path::new("/bin/roofline"),
        &["op".into(), " 8".into(), "".into(), "a'b".into()],
    );
    assert_eq!(line, r"/bin/roofline op ' 8' '' 'a'\''b'");

    let a: Vec<String> = ["analyze", "x.json", "--explain=q_proj"]
        .map(String::from)
        .to_vec();
    assert_eq!(schema_kind(&a, &serde_json::json!({})), Some("explain"));
    let a: Vec<String> = ["analyze", "--fusion", "max"].map(String::from).to_vec();
    assert_eq!(
        schema_kind(&a, &serde_json::json!({})),
        Some("analyze-fusion")
    );
    let a: Vec<String> = ["analyze", "m", "--tp", "2"].map(String::from).to_vec();
    assert_eq!(
        schema_kind(&a, &serde_json::json!({"system_devices": 2})),
        Some("analyze-parallel")
    );
    let a: Vec<String> = ["sweep", "m", "--tp=1,2"].map(String::from).to_vec();
    assert_eq!(schema_kind(&a, &serde_json::json!({})), Some("sweep-tp"));
    let a: Vec<String> = ["plan", "m"].map(String::from).to_vec();
    assert_eq!(schema_kind(&a, &serde_json::json!({})), Some("plan"));
    let a: Vec<String> = ["import", "f.log"].map(String::from).to_vec();
    assert_eq!(
        schema_kind(&a, &serde_json::json!({"kind": "roof"})),
        Some("import-roof")
    );
}

/// The same seed gives the same cases: a failure printed by CI replays here.
#[test]
fn cases_are_a_function_of_the_seed() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let seeds = Seeds::load(&repo, &common::shared(""));
    for i in [1u64, 7, 41, 99] {
        let a = gen::case(DEFAULT_SEED, i, &seeds);
        let b = gen::case(DEFAULT_SEED, i, &seeds);
        assert_eq!(format!("{:?}", a.steps), format!("{:?}", b.steps));
        assert_eq!(a.what, b.what);
        assert_eq!(
            a.files.iter().map(|f| &f.content).collect::<Vec<_>>(),
            b.files.iter().map(|f| &f.content).collect::<Vec<_>>()
        );
    }
    let differ = (1..20).any(|i| {
        format!("{:?}", gen::case(1, i, &seeds).steps)
            != format!("{:?}", gen::case(2, i, &seeds).steps)
    });
    assert!(differ, "another seed should give other cases");
}
