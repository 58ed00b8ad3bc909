//! Case generation for the fuzz test: a small deterministic PRNG, the seed inputs (embedded
//! presets, the real configs in `../shared/models`, the chip catalog, the profiler samples), the
//! structure-aware mutators of each format, and the command lines that feed the mutated files
//! and edge-case flag values to the binary.

use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// SplitMix64: tiny, fast, deterministic; each case gets its own stream from (seed, index), so
/// one case can be replayed alone.
pub struct Rng(u64);

impl Rng {
    pub fn for_case(seed: u64, index: u64) -> Self {
        let mut r = Rng(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next();
        r
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The input files every case can start from, read once.
pub struct Seeds {
    /// (name, config.json text): the embedded presets, the configs in `../shared/models`, the
    /// small Llama of `scripts/small-llama`.
    pub models: Vec<(String, String)>,
    /// (name, TOML text): the embedded chip catalog and the measured `this-cpu.toml`.
    pub chips: Vec<(String, String)>,
    /// (name, text, format) of every profiler and microbenchmark sample.
    pub profiles: Vec<(String, String, ProfileFormat)>,
    /// `scripts/small-llama/config.json`, `scripts/small-llama/this-cpu.toml` (absolute paths).
    pub small_llama: PathBuf,
    pub this_cpu: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileFormat {
    Ncu,
    Torch,
    Mixbench,
    ErtJson,
    ErtSum,
    ErtTry,
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("fuzz seed input {}: {e}", path.display()))
}

/// Files of `dir` whose name ends in `ext`, sorted (a deterministic order for the PRNG).
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("fuzz seed folder {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    v.sort();
    v
}

impl Seeds {
    /// Reads every seed; panics (fails the test) when one is missing, so the test never runs
    /// on less than it claims.
    pub fn load(repo: &Path, shared: &Path) -> Self {
        let mut models = Vec::new();
        for p in files(&repo.join("crates/inputs/catalog/models"), ".json") {
            let name = format!("preset {}", p.file_stem().unwrap().to_string_lossy());
            models.push((name, read(&p)));
        }
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(shared.join("models"))
            .unwrap_or_else(|e| panic!("{}: {e}", shared.join("models").display()))
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.join("config.json").is_file())
            .collect();
        dirs.sort();
        for d in &dirs {
            let name = format!("shared {}", d.file_name().unwrap().to_string_lossy());
            models.push((name, read(&d.join("config.json"))));
        }
        let small_llama = repo.join("scripts/small-llama/config.json");
        models.push(("small-llama".into(), read(&small_llama)));
        assert!(
            models.len() >= 20,
            "expected the 11 presets and the shared configs, found {} model seeds",
            models.len()
        );

        let mut chips = Vec::new();
        for p in files(&repo.join("crates/inputs/catalog/hardware"), ".toml") {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            chips.push((name, read(&p)));
        }
        let this_cpu = repo.join("scripts/small-llama/this-cpu.toml");
        chips.push(("this-cpu.toml".into(), read(&this_cpu)));
        assert!(chips.len() >= 29, "found {} chip seeds", chips.len());

        let samples = shared.join("refs/samples");
        let fixtures = repo.join("crates/inputs/tests/fixtures");
        let small_trace = read(&fixtures.join("SYNTHETIC_small_llama_cpu_trace.json"));
        let profiles = vec![
            (
                "SYNTHETIC_ncu_csv_format_illustration.csv".to_string(),
                read(&samples.join("SYNTHETIC_ncu_csv_format_illustration.csv")),
                ProfileFormat::Ncu,
            ),
            (
                "torch_profiler_trace_excerpt_hta_backward_thread.json".into(),
                read(&samples.join("torch_profiler_trace_excerpt_hta_backward_thread.json")),
                ProfileFormat::Torch,
            ),
            (
                "SYNTHETIC_small_llama_cpu_trace.json".into(),
                small_trace.clone(),
                ProfileFormat::Torch,
            ),
            (
                "mixbench_cuda_ro_GTX-1060.log".into(),
                read(&samples.join("mixbench_cuda_ro_GTX-1060.log")),
                ProfileFormat::Mixbench,
            ),
            (
                "ert_roofline.json".into(),
                read(&samples.join("ert_roofline.json")),
                ProfileFormat::ErtJson,
            ),
            (
                "ert_sum_FLOPS001_MPI0001_OpenMP0001.txt".into(),
                read(&samples.join("ert_sum_FLOPS001_MPI0001_OpenMP0001.txt")),
                ProfileFormat::ErtSum,
            ),
            (
                "ert_try001_head_FLOPS001_MPI0001_OpenMP0001.txt".into(),
                read(&samples.join("ert_try001_head_FLOPS001_MPI0001_OpenMP0001.txt")),
                ProfileFormat::ErtTry,
            ),
        ];
        Seeds {
            models,
            chips,
            profiles,
            small_llama,
            this_cpu,
        }
    }
}

/// One argument of a command line: literal text, or the path of a file in the case's folder
/// (an input the case writes before the run, or an output the run is to write).
#[derive(Debug, Clone)]
pub enum Arg {
    Lit(String),
    File { name: String },
}

/// A file the case writes into its folder before the run.
#[derive(Debug, Clone)]
pub struct InputFile {
    pub name: String,
    pub content: Vec<u8>,
}

/// One process to run and what is known about it.
#[derive(Debug, Clone)]
pub struct Step {
    pub args: Vec<Arg>,
    /// `--format json` was given: stdout on success is one JSON document, checked.
    pub json: bool,
    /// Output files this run names (by file name in the case folder): when one existed before
    /// and the run has no `--force`, its bytes must be unchanged afterwards.
    pub outputs: Vec<String>,
    pub force: bool,
    /// The step runs only when the previous one exited 0 (a chip written, then read).
    pub after_success: bool,
}

/// A generated case: the files it writes, the processes it runs, and a one-line account of
/// what was mutated (printed with a failure).
#[derive(Debug, Clone)]
pub struct Case {
    pub index: u64,
    pub what: String,
    pub files: Vec<InputFile>,
    pub steps: Vec<Step>,
    /// A seed input with valid flags and no mutation: it must succeed (exit 0).
    pub control: bool,
}

fn lit(s: impl Into<String>) -> Arg {
    Arg::Lit(s.into())
}

fn lits(v: &[&str]) -> Vec<Arg> {
    v.iter().map(|s| lit(*s)).collect()
}

fn file(name: &str) -> Arg {
    Arg::File { name: name.into() }
}

// ---------------------------------------------------------------------------------------------
// Value pools: the edges every parser and every formula should survive.

/// Whole-number flag values (u64 flags with and without a range check).
const INTS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "64",
    "4096",
    "16777216",
    "16777217",
    "4294967296",
    "1099511627776",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "1e3",
    "0.5",
    "abc",
    "",
    "NaN",
    "inf",
    "-0",
    "+5",
    " 8",
    "1_000",
];

/// Counts and rates (`--params`, `--tokens`, `--peak`, `--bandwidth`, `--tokens-per-s`).
const COUNTS: &[&str] = &[
    "70e9", "70B", "1.4T", "312T", "2T", "1P", "7_000", "1k", "1M", "1G", "0", "-1", "-70B", "NaN",
    "inf", "-inf", "1e308", "1e309", "1e-300", "5e-324", "1e300", "1e20P", "abc", "", "B", "0.5",
];

/// Durations of any length (`--time`, `--tpot`, `--step-time`).
const TIMES: &[&str] = &[
    "30d", "720h", "90m", "90min", "3600s", "14ms", "5us", "5µs", "1ns", "0", "0s", "-1h", "NaNs",
    "infd", "1e300d", "1e-300", "5e-324ms", "1e400", "abc", "d", "", "1e-9ns",
];

/// Short durations (`--launch-overhead`).
const SMALL_TIMES: &[&str] = &[
    "5us", "0", "0.5ms", "1", "1s", "1.5", "-1us", "NaN", "inf", "1e-300", "5e-324s", "abc", "",
    "0ns",
];

/// `--target-mfu`.
const PERCENTS: &[&str] = &[
    "40", "40%", "0", "100", "100.0001", "1e-300", "NaN", "-5", "abc", "", "inf",
];

/// `--memory-reserve`.
const RESERVES: &[&str] = &[
    "10%", "0", "0%", "99%", "99.9999%", "100%", "-1%", "NaN%", "inf%", "1e-300%", "2GB", "1.5GiB",
    "1e300GB", "-2GB", "NaNGB", "infTB", "0.9", "abc", "5XB", "1e400B", "80GB", "1000TB", "",
];

const PRECISIONS: &[&str] = &[
    "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp64", "BF16", "fp4", "int3", "",
    "float16", "e4m3",
];

/// Lists of whole numbers (`sweep --batch`, `--seq-len`, `--context`).
const LISTS: &[&str] = &[
    "1,8",
    "1..64",
    "1..1024",
    "0",
    "0..4",
    "1,0,2",
    "1..18446744073709551615",
    "5..3",
    "1,,2",
    "",
    "18446744073709551615",
    "9223372036854775808",
    "4294967296",
    "1..",
    "x",
    "1..16,1..16",
    "16777216",
    "-1",
];

/// `mfu --recompute`.
const RECOMPUTES: &[&str] = &[
    "none",
    "selective",
    "full",
    "partial=0.75",
    "partial=0",
    "partial=1",
    "partial=NaN",
    "partial=-0.5",
    "partial=2",
    "partial=",
    "some",
];

const STAGES: &[&str] = &["prefill", "decode", "both"];

const PRESETS: &[&str] = &[
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "mixtral-8x7b",
    "qwen3-30b-a3b",
    "deepseek-v3",
    "gpt2",
    "gpt2-xl",
    "opt-6.7b",
];

/// Catalog chips a command is run on: mostly ones with every common precision, a few with
/// only some (whose missing peak is itself an error path).
const CHIPS: &[&str] = &[
    "h100-sxm",
    "h100-sxm",
    "h200",
    "a100-sxm-80gb",
    "mi300x",
    "b200",
    "l40s",
    "a6000",
    "tpu-v5e",
    "m2-ultra",
];

// ---------------------------------------------------------------------------------------------
// Model configs (JSON).

/// Fields the config reader knows, the ones a mutation aims at first.
const MODEL_FIELDS: &[&str] = &[
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "max_position_embeddings",
    "hidden_act",
    "tie_word_embeddings",
    "attention_bias",
    "mlp_bias",
    "sliding_window",
    "use_sliding_window",
    "num_local_experts",
    "num_experts",
    "num_experts_per_tok",
    "moe_intermediate_size",
    "n_routed_experts",
    "n_shared_experts",
    "first_k_dense_replace",
    "moe_layer_freq",
    "decoder_sparse_step",
    "mlp_only_layers",
    "kv_lora_rank",
    "q_lora_rank",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "v_head_dim",
    "topk_method",
    "n_embd",
    "n_head",
    "n_inner",
    "n_layer",
    "n_positions",
    "ffn_dim",
    "word_embed_proj_dim",
    "do_layer_norm_before",
    "enable_bias",
    "activation_function",
    "architectures",
    "model_type",
    "torch_dtype",
];

/// A JSON value from the edge pool; `huge` admits the multi-megabyte ones.
fn json_edge(rng: &mut Rng, huge: bool) -> (Value, String) {
    let n = if huge { 26 } else { 24 };
    let v = match rng.below(n) {
        0 => json!(0),
        1 => json!(-1),
        2 => json!(1u64 << 24),
        3 => json!((1u64 << 24) + 1),
        4 => json!(1u64 << 40),
        5 => json!((1u64 << 53) + 1),
        6 => json!(1u64 << 63),
        7 => json!(u64::MAX),
        8 => json!(i64::MIN),
        9 => json!(1e300),
        10 => json!(-1e300),
        11 => json!(1e-300),
        12 => json!(0.5),
        13 => json!(1.5),
        14 => json!(4096.0),
        15 => json!("4096"),
        16 => json!("abc"),
        17 => json!(""),
        18 => Value::Null,
        19 => json!(true),
        20 => json!([]),
        21 => json!({}),
        22 => json!(-0.0),
        23 => json!(2),
        24 => Value::Array(vec![json!(0); 200_000]),
        _ => Value::String("x".repeat(1 << 20)),
    };
    let shown = match &v {
        Value::Array(a) if a.len() > 8 => format!("[0; {}]", a.len()),
        Value::String(s) if s.len() > 40 => format!("\"x\" × {}", s.len()),
        other => other.to_string(),
    };
    (v, shown)
}

fn set(obj: &mut Map<String, Value>, key: &str, v: Value, log: &mut Vec<String>) {
    log.push(format!("{key} = {}", short(&v)));
    obj.insert(key.to_string(), v);
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 60 {
        format!("{}…", &s[..60])
    } else {
        s
    }
}

/// Mixture-of-experts, latent-attention and shape fields set against each other.
fn inconsistent(rng: &mut Rng, obj: &mut Map<String, Value>, log: &mut Vec<String>) {
    let get = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_u64);
    let layers = get(obj, "num_hidden_layers").unwrap_or(32);
    let heads = get(obj, "num_attention_heads").unwrap_or(32);
    match rng.below(16) {
        0 => {
            set(obj, "num_local_experts", json!(8), log);
            set(obj, "num_experts_per_tok", json!(9), log);
        }
        1 => {
            set(obj, "num_local_experts", json!(0), log);
            set(obj, "num_experts_per_tok", json!(2), log);
        }
        2 => {
            set(obj, "n_routed_experts", json!(0), log);
            set(obj, "num_experts_per_tok", json!(8), log);
            set(obj, "moe_intermediate_size", json!(2048), log);
        }
        3 => set(obj, "first_k_dense_replace", json!(layers + 1000), log),
        4 => set(obj, "moe_layer_freq", json!(0), log),
        5 => {
            set(obj, "num_experts", json!(4), log);
            set(obj, "decoder_sparse_step", json!(0), log);
        }
        6 => set(obj, "mlp_only_layers", json!([layers + 5, -1, 0, 0]), log),
        7 => {
            set(obj, "kv_lora_rank", json!(0), log);
            set(obj, "qk_rope_head_dim", json!(64), log);
        }
        8 => {
            set(obj, "kv_lora_rank", json!(512), log);
            set(obj, "qk_nope_head_dim", json!(0), log);
            set(obj, "qk_rope_head_dim", json!(0), log);
        }
        9 => set(obj, "num_key_value_heads", json!(heads + 1), log),
        10 => set(obj, "num_key_value_heads", json!(3), log),
        11 => {
            let h = get(obj, "hidden_size").unwrap_or(4096);
            set(obj, "hidden_size", json!(h + 1), log);
            obj.remove("head_dim");
            log.push("head_dim removed".into());
        }
        12 => {
            set(obj, "use_sliding_window", json!(true), log);
            set(obj, "sliding_window", json!(0), log);
        }
        13 => {
            set(obj, "num_local_experts", json!(8), log);
            set(obj, "num_experts_per_tok", json!(2), log);
            set(obj, "moe_intermediate_size", json!(0), log);
        }
        14 => {
            set(obj, "q_lora_rank", json!(1536), log);
            set(obj, "kv_lora_rank", json!(512), log);
            set(obj, "v_head_dim", json!(1u64 << 40), log);
        }
        _ => {
            set(obj, "num_experts_per_tok", json!(u64::MAX), log);
            set(obj, "n_routed_experts", json!(256), log);
        }
    }
}

/// A mutated config.json: (bytes, account of the mutation).
pub fn mutate_model(rng: &mut Rng, seeds: &Seeds) -> (Vec<u8>, String) {
    let (name, text) = rng.pick(&seeds.models);
    // Whole-file damage, one case in eight.
    if rng.chance(0.125) {
        let (bytes, what) = damage_text(rng, text);
        return (bytes, format!("{name}: {what}"));
    }
    let mut v: Value = serde_json::from_str(text).expect("seed config parses");
    let obj = v.as_object_mut().expect("config is an object");
    let mut log = Vec::new();
    let n = 1 + rng.below(3);
    for _ in 0..n {
        match rng.below(10) {
            0..=4 => {
                // A known field, present or not, set to an edge value.
                let key = *rng.pick(MODEL_FIELDS);
                let huge = rng.chance(0.1);
                let (val, _) = json_edge(rng, huge);
                set(obj, key, val, &mut log);
            }
            5 => {
                // A field of the file removed.
                let keys: Vec<String> = obj.keys().cloned().collect();
                if let Some(k) = keys.get(rng.below(keys.len().max(1))) {
                    obj.remove(k);
                    log.push(format!("{k} removed"));
                }
            }
            6 | 7 => inconsistent(rng, obj, &mut log),
            8 => {
                // A field of the file set to an edge value.
                let keys: Vec<String> = obj.keys().cloned().collect();
                if let Some(k) = keys.get(rng.below(keys.len().max(1))).cloned() {
                    let (val, _) = json_edge(rng, false);
                    set(obj, &k, val, &mut log);
                }
            }
            _ => {
                // A numeric field of the file scaled to a large or tiny size.
                let keys: Vec<String> = obj
                    .iter()
                    .filter(|(_, v)| v.is_u64())
                    .map(|(k, _)| k.clone())
                    .collect();
                if !keys.is_empty() {
                    let k = rng.pick(&keys).clone();
                    let val = *rng.pick(&[1u64, 2, 1 << 20, 1 << 24, 1 << 31, 1 << 32]);
                    set(obj, &k, json!(val), &mut log);
                }
            }
        }
    }
    let bytes = if rng.chance(0.05) {
        // The same document, the top level wrapped in an array.
        serde_json::to_vec(&Value::Array(vec![v])).unwrap()
    } else {
        serde_json::to_vec_pretty(&v).unwrap()
    };
    (bytes, format!("{name}: {}", log.join(", ")))
}

/// Damage to any text file: truncation, emptiness, a BOM, CRLF, garbage, a line duplicated or
/// deleted, bytes that are not UTF-8.
fn damage_text(rng: &mut Rng, text: &str) -> (Vec<u8>, String) {
    match rng.below(9) {
        0 => {
            let cut = rng.below(text.len().max(1));
            let mut b = text.as_bytes()[..cut].to_vec();
            // Cut on a byte: it may split a UTF-8 sequence, on purpose.
            if rng.chance(0.5) {
                b.truncate(cut);
            }
            (b, format!("truncated at byte {cut} of {}", text.len()))
        }
        1 => (Vec::new(), "empty file".into()),
        2 => (
            format!("\u{feff}{text}").into_bytes(),
            "UTF-8 byte-order mark prepended".into(),
        ),
        3 => (
            text.replace('\n', "\r\n").into_bytes(),
            "CRLF line endings".into(),
        ),
        4 => (
            vec![0xff, 0xfe, 0x00, 0x41, 0x80],
            "bytes that are not UTF-8".into(),
        ),
        5 => {
            let lines: Vec<&str> = text.lines().collect();
            let i = rng.below(lines.len().max(1));
            let times = *rng.pick(&[2usize, 10, 5000]);
            let mut out = String::new();
            for (j, l) in lines.iter().enumerate() {
                let k = if j == i { times } else { 1 };
                for _ in 0..k {
                    out.push_str(l);
                    out.push('\n');
                }
            }
            (
                out.into_bytes(),
                format!("line {} repeated {times}×", i + 1),
            )
        }
        6 => {
            let lines: Vec<&str> = text.lines().collect();
            let i = rng.below(lines.len().max(1));
            let out: String = lines
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, l)| format!("{l}\n"))
                .collect();
            (out.into_bytes(), format!("line {} deleted", i + 1))
        }
        7 => (b"\x00\x00\x00\x00".to_vec(), "four NUL bytes".into()),
        _ => {
            let mut t = text.to_string();
            t.push_str("\n}}]]garbage\"\n");
            (t.into_bytes(), "garbage appended".into())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Chip files (TOML), mutated as text: every number is `{ value = …, source = "…" }`.

/// Literals put in place of a `value = …`.
const TOML_VALUES: &[&str] = &[
    "0",
    "0.0",
    "-0.0",
    "-1",
    "-1e12",
    "1e-300",
    "5e-324",
    "1e300",
    "1e18",
    "1e19",
    "1e16",
    "nan",
    "inf",
    "-inf",
    "\"NaN\"",
    "\"abc\"",
    "\"1e12\"",
    "true",
    "[]",
    "{}",
    "9223372036854775807",
    "18446744073709551615",
    "1",
    "3.5",
];

/// A mutated chip file: (bytes, account).
pub fn mutate_chip(rng: &mut Rng, seeds: &Seeds) -> (Vec<u8>, String) {
    let (name, text) = rng.pick(&seeds.chips);
    if rng.chance(0.1) {
        let (b, what) = damage_text(rng, text);
        return (b, format!("{name}: {what}"));
    }
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut log = Vec::new();
    let n = 1 + rng.below(3);
    for _ in 0..n {
        let valued: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].contains("value = "))
            .collect();
        match rng.below(10) {
            0..=5 if !valued.is_empty() => {
                // Prefer the quantities the roofline divides by: peaks, bandwidth, capacity.
                let key_lines: Vec<usize> = valued
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let l = &lines[i];
                        rng.chance(0.3)
                            || l.starts_with("bandwidth")
                            || l.starts_with("capacity")
                            || l.starts_with("fp")
                            || l.starts_with("bf16")
                            || l.starts_with("int")
                            || l.starts_with("tf32")
                    })
                    .collect();
                let pool = if key_lines.is_empty() {
                    &valued
                } else {
                    &key_lines
                };
                let i = *rng.pick(pool);
                let new = *rng.pick(TOML_VALUES);
                let l = &lines[i];
                let start = l.find("value = ").unwrap() + "value = ".len();
                let end = l[start..].find(',').map_or(l.len(), |e| start + e);
                let key = l.split('=').next().unwrap_or("").trim().to_string();
                log.push(format!("line {} `{key}` value = {new}", i + 1));
                lines[i] = format!("{}{}{}", &l[..start], new, &l[end..]);
            }
            6 if !valued.is_empty() => {
                let i = *rng.pick(&valued);
                log.push(format!("line {} removed: {}", i + 1, trunc(&lines[i], 50)));
                lines.remove(i);
            }
            7 => {
                // A whole section (`[[memory]]`, `[compute]`, `[peak_flops_per_s]`) removed.
                let heads: Vec<usize> = (0..lines.len())
                    .filter(|&i| lines[i].starts_with('['))
                    .collect();
                if let Some(&h) = heads.get(rng.below(heads.len().max(1))) {
                    let end = (h + 1..lines.len())
                        .find(|&j| lines[j].starts_with('['))
                        .unwrap_or(lines.len());
                    log.push(format!("section {} removed", lines[h]));
                    lines.drain(h..end);
                }
            }
            8 => {
                // Every peak removed, or every bandwidth.
                let what = if rng.chance(0.5) { "fp" } else { "bandwidth" };
                let before = lines.len();
                lines.retain(|l| {
                    !(l.starts_with(what)
                        || (what == "fp" && l.starts_with("bf16"))
                        || (what == "fp" && l.starts_with("int"))
                        || (what == "fp" && l.starts_with("tf32")))
                });
                log.push(format!(
                    "every `{what}…` line removed ({})",
                    before - lines.len()
                ));
            }
            _ => {
                // The main level renamed or duplicated.
                if let Some(i) = lines.iter().position(|l| l.trim() == "level = \"main\"") {
                    let new = *rng.pick(&["\"l9\"", "\"\"", "\"l2\"", "3", "\"MAIN\""]);
                    log.push(format!("main level renamed to {new}"));
                    lines[i] = format!("level = {new}");
                } else if let Some(i) = valued.first() {
                    lines.insert(*i, lines[*i].clone());
                    log.push(format!("line {} duplicated", i + 1));
                }
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    (out.into_bytes(), format!("{name}: {}", log.join(", ")))
}

fn trunc(s: &str, n: usize) -> String {
    if s.chars().count() > n {
        format!("{}…", s.chars().take(n).collect::<String>())
    } else {
        s.to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// Profiles: text formats mutated number by number and line by line; JSON formats as trees.

/// Number tokens put in place of one in a text profile.
const NUMBERS: &[&str] = &[
    "-1",
    "0",
    "-0",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "1e309",
    "1e-320",
    "abc",
    "",
    "1,234,567.89",
    "99999999999999999999",
    "18446744073709551616",
    "0.000",
    "-165.91",
];

const NON_FINITE: &[&str] = &["NaN", "nan", "inf", "-inf"];

/// A line of numbers: digits, separators and exponents only, or one number and its label (an
/// ERT `sum` line, `11.03 GFLOPs`).
fn numeric_line(line: &str) -> bool {
    let t = line.trim();
    let numbers_only = t
        .chars()
        .all(|c| c.is_ascii_digit() || " \t.,-+eE".contains(c));
    let labelled = {
        let mut w = t.split_whitespace();
        matches!((w.next(), w.next(), w.next()), (Some(n), Some(_), None) if n.parse::<f64>().is_ok())
    };
    !t.is_empty() && (numbers_only || labelled)
}

/// Replaces one number-like token of `line` by `new`.
fn replace_number(line: &str, rng: &mut Rng, new: &str) -> Option<String> {
    let bytes = line.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let s = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            spans.push((s, i));
        } else {
            i += 1;
        }
    }
    if spans.is_empty() {
        return None;
    }
    let (s, e) = *rng.pick(&spans);
    Some(format!("{}{}{}", &line[..s], new, &line[e..]))
}

fn mutate_text_profile(rng: &mut Rng, text: &str, format: ProfileFormat) -> (Vec<u8>, String) {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut log = Vec::new();
    for _ in 0..1 + rng.below(3) {
        match rng.below(10) {
            0..=5 => {
                // A number of a data line replaced; for ncu, the Metric Value column mostly.
                for _ in 0..8 {
                    let i = rng.below(lines.len());
                    let new = *rng.pick(NUMBERS);
                    if format == ProfileFormat::Ncu && lines[i].starts_with('"') && rng.chance(0.7)
                    {
                        if let Some(p) = lines[i].rfind(",\"") {
                            let quoted = if rng.chance(0.3) {
                                // The unit column instead.
                                let fields: Vec<&str> = lines[i].split("\",\"").collect();
                                if fields.len() > 2 {
                                    let mut f: Vec<String> =
                                        fields.iter().map(|s| s.to_string()).collect();
                                    let u = f.len() - 2;
                                    let unit = *rng.pick(&["Xbyte", "", "byte", "nsecond", "%"]);
                                    log.push(format!("line {} unit {} → {unit}", i + 1, f[u]));
                                    f[u] = unit.into();
                                    lines[i] = f.join("\",\"");
                                    break;
                                }
                                continue;
                            } else {
                                format!("{},\"{}\"", &lines[i][..p], new)
                            };
                            log.push(format!("line {} value → {new}", i + 1));
                            lines[i] = quoted;
                            break;
                        }
                    }
                    // A non-finite token goes only into a line of numbers: in a line of text
                    // (a device name, a kernel's launch shape) it would be echoed back as
                    // text, not read as a quantity.
                    let new = if NON_FINITE.contains(&new) && !numeric_line(&lines[i]) {
                        "1e308"
                    } else {
                        new
                    };
                    if let Some(l) = replace_number(&lines[i], rng, new) {
                        log.push(format!("line {} number → `{new}`", i + 1));
                        lines[i] = l;
                        break;
                    }
                }
            }
            6 => {
                // A data line duplicated, many times.
                let i = rng.below(lines.len());
                let times = *rng.pick(&[1usize, 3, 2000]);
                let l = lines[i].clone();
                for _ in 0..times {
                    lines.insert(i, l.clone());
                }
                log.push(format!("line {} duplicated {times}×", i + 1));
            }
            7 => {
                let i = rng.below(lines.len());
                log.push(format!("line {} deleted", i + 1));
                lines.remove(i);
                if lines.is_empty() {
                    lines.push(String::new());
                }
            }
            8 => {
                // Every line after a point dropped (a run cut short).
                let i = rng.below(lines.len());
                log.push(format!("cut after line {i}"));
                lines.truncate(i.max(1));
            }
            _ => {
                // One field of a comma-separated line dropped (a column missing).
                let i = rng.below(lines.len());
                let mut f: Vec<&str> = lines[i].split(',').collect();
                if f.len() > 1 {
                    let k = rng.below(f.len());
                    f.remove(k);
                    log.push(format!("line {} field {} dropped", i + 1, k + 1));
                    lines[i] = f.join(",");
                }
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    (out.into_bytes(), log.join(", "))
}

/// Every path to a leaf (or to a small container) of `v`, to pick a mutation target from.
fn paths(v: &Value, prefix: &mut Vec<PathPart>, out: &mut Vec<Vec<PathPart>>) {
    if out.len() > 20_000 {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                prefix.push(PathPart::Key(k.clone()));
                out.push(prefix.clone());
                paths(c, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                prefix.push(PathPart::Index(i));
                out.push(prefix.clone());
                paths(c, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

#[derive(Debug, Clone)]
enum PathPart {
    Key(String),
    Index(usize),
}

fn show_path(p: &[PathPart]) -> String {
    p.iter()
        .map(|q| match q {
            PathPart::Key(k) => format!(".{k}"),
            PathPart::Index(i) => format!("[{i}]"),
        })
        .collect()
}

fn at_mut<'a>(v: &'a mut Value, p: &[PathPart]) -> Option<&'a mut Value> {
    let mut cur = v;
    for q in p {
        cur = match q {
            PathPart::Key(k) => cur.get_mut(k.as_str())?,
            PathPart::Index(i) => cur.get_mut(*i)?,
        };
    }
    Some(cur)
}

/// Keys of a trace event and of an ERT roof worth aiming at.
const JSON_PROFILE_KEYS: &[&str] = &[
    "dur",
    "ts",
    "ph",
    "cat",
    "name",
    "args",
    "Input Dims",
    "Input type",
    "External id",
    "correlation",
    "data",
    "gbytes",
    "gflops",
    "traceEvents",
    "pid",
    "tid",
];

fn mutate_json_profile(rng: &mut Rng, text: &str) -> (Vec<u8>, String) {
    let Ok(mut v) = serde_json::from_str::<Value>(text) else {
        return damage_text(rng, text);
    };
    let mut all = Vec::new();
    paths(&v, &mut Vec::new(), &mut all);
    let mut log = Vec::new();
    for _ in 0..1 + rng.below(3) {
        // Prefer paths ending in a key the readers use.
        let aimed: Vec<&Vec<PathPart>> = all
            .iter()
            .filter(|p| {
                matches!(p.last(), Some(PathPart::Key(k)) if JSON_PROFILE_KEYS.contains(&k.as_str()))
                    || matches!(p.last(), Some(PathPart::Index(_)))
                        && p.iter().any(|q| matches!(q, PathPart::Key(k) if k == "Input Dims" || k == "data"))
            })
            .collect();
        let p = if !aimed.is_empty() && rng.chance(0.8) {
            (*rng.pick(&aimed)).clone()
        } else if !all.is_empty() {
            rng.pick(&all).clone()
        } else {
            break;
        };
        match rng.below(8) {
            0..=4 => {
                let huge = rng.chance(0.05);
                let (val, shown) = json_edge(rng, huge);
                if let Some(t) = at_mut(&mut v, &p) {
                    *t = val;
                    log.push(format!("{} = {shown}", show_path(&p)));
                }
            }
            5 => {
                // A key removed.
                if let (Some(PathPart::Key(k)), Some(parent)) =
                    (p.last(), at_mut(&mut v, &p[..p.len() - 1]))
                {
                    if let Some(m) = parent.as_object_mut() {
                        m.remove(k);
                        log.push(format!("{} removed", show_path(&p)));
                    }
                }
            }
            6 => {
                // An array element duplicated many times (duplicated events, rows, levels).
                if let Some(PathPart::Index(i)) = p.last() {
                    let i = *i;
                    if let Some(parent) = at_mut(&mut v, &p[..p.len() - 1]) {
                        if let Some(a) = parent.as_array_mut() {
                            let times = *rng.pick(&[1usize, 10, 3000]);
                            let e = a[i].clone();
                            for _ in 0..times {
                                a.insert(i, e.clone());
                            }
                            log.push(format!("{} duplicated {times}×", show_path(&p)));
                        }
                    }
                }
            }
            _ => {
                // A number negated or scaled up.
                if let Some(t) = at_mut(&mut v, &p) {
                    if let Some(x) = t.as_f64() {
                        let k = *rng.pick(&[-1.0, 1e12, 1e300, 1e-300]);
                        *t = json!(x * k);
                        log.push(format!("{} × {k:e}", show_path(&p)));
                    }
                }
            }
        }
    }
    (serde_json::to_vec(&v).unwrap(), log.join(", "))
}

/// A mutated profile: (file name to use, bytes, account, format).
pub fn mutate_profile(rng: &mut Rng, seeds: &Seeds) -> (String, Vec<u8>, String, ProfileFormat) {
    let (name, text, format) = rng.pick(&seeds.profiles).clone();
    let (bytes, what) = if rng.chance(0.12) {
        damage_text(rng, &text)
    } else {
        match format {
            ProfileFormat::Torch | ProfileFormat::ErtJson => mutate_json_profile(rng, &text),
            _ => mutate_text_profile(rng, &text, format),
        }
    };
    (name.clone(), bytes, format!("{name}: {what}"), format)
}

// ---------------------------------------------------------------------------------------------
// Command lines.

fn pick_format(rng: &mut Rng) -> (&'static str, bool) {
    match rng.below(10) {
        0 => ("table", false),
        1 => ("csv", false),
        _ => ("json", true),
    }
}

fn step(args: Vec<Arg>, json: bool) -> Step {
    Step {
        args,
        json,
        outputs: Vec::new(),
        force: false,
        after_success: false,
    }
}

/// Workload flags of `analyze`, `report` and `sweep`-like commands, valid or at an edge.
fn analyze_flags(rng: &mut Rng, edge: f64) -> Vec<Arg> {
    let mut a = Vec::new();
    let flag = |a: &mut Vec<Arg>, rng: &mut Rng, name: &str, valid: &[&str], pool: &[&str]| {
        let v = if rng.chance(edge) {
            *rng.pick(pool)
        } else {
            *rng.pick(valid)
        };
        a.push(lit(name));
        a.push(lit(v));
    };
    if rng.chance(0.7) {
        flag(
            &mut a,
            rng,
            "--stage",
            STAGES,
            &["prefill", "decode", "both", "train", ""],
        );
    }
    if rng.chance(0.6) {
        flag(&mut a, rng, "--batch", &["1", "8", "64"], INTS);
    }
    if rng.chance(0.5) {
        flag(&mut a, rng, "--seq-len", &["1", "128", "2048"], INTS);
    }
    if rng.chance(0.5) {
        flag(&mut a, rng, "--context", &["0", "1", "2048", "32768"], INTS);
    }
    if rng.chance(0.3) {
        flag(
            &mut a,
            rng,
            "--precision",
            &["bf16", "fp16", "fp8", "int8"],
            PRECISIONS,
        );
    }
    if rng.chance(0.25) {
        flag(
            &mut a,
            rng,
            "--weight-precision",
            &["int4", "int8", "fp8"],
            PRECISIONS,
        );
    }
    if rng.chance(0.25) {
        flag(&mut a, rng, "--kv-precision", &["fp8", "bf16"], PRECISIONS);
    }
    if rng.chance(0.15) {
        flag(&mut a, rng, "--group-size", &["32", "128"], INTS);
        if rng.chance(0.5) {
            flag(
                &mut a,
                rng,
                "--scale-precision",
                &["fp16", "bf16"],
                PRECISIONS,
            );
        }
        if rng.chance(0.3) {
            flag(
                &mut a,
                rng,
                "--zero-point-precision",
                &["int8", "fp16"],
                PRECISIONS,
            );
        }
    }
    if rng.chance(0.1) {
        a.push(lit("--w8a8"));
    }
    if rng.chance(0.3) {
        a.push(lit("--flash-attention"));
    }
    if rng.chance(0.3) {
        flag(
            &mut a,
            rng,
            "--memory-reserve",
            &["10%", "2GB", "0"],
            RESERVES,
        );
    }
    a
}

/// `analyze` and `report` only: launch overhead, fusion, explain.
fn analyze_extras(rng: &mut Rng, edge: f64) -> (Vec<Arg>, &'static str) {
    let mut a = Vec::new();
    let mut kind = "analyze";
    if rng.chance(0.2) {
        a.push(lit("--launch-overhead"));
        a.push(lit(if rng.chance(edge) {
            *rng.pick(SMALL_TIMES)
        } else {
            "5us"
        }));
    }
    if rng.chance(0.2) {
        a.push(lit("--fusion"));
        a.push(lit(
            *rng.pick(&["eager", "compiled", "max", "none", "MAX", ""])
        ));
        kind = "analyze-fusion";
    } else if rng.chance(0.1) {
        a.push(lit("--explain"));
        a.push(lit(*rng.pick(&[
            "q_proj",
            "lm_head",
            "softmax",
            "embed_tokens",
            "bogus",
            "",
        ])));
        kind = "explain";
    }
    (a, kind)
}

/// Where a model goes on a command line: a mutated file (as written in the case folder) or a
/// preset id.
fn model_arg(model: &Option<String>, rng: &mut Rng) -> Arg {
    match model {
        Some(name) => file(name),
        None => lit(*rng.pick(PRESETS)),
    }
}

fn hardware_arg(chip: &Option<String>, rng: &mut Rng) -> Arg {
    match chip {
        Some(name) => file(name),
        None => lit(*rng.pick(CHIPS)),
    }
}

/// A command that reads a model and a chip: the file under test is `model` or `chip` (the
/// other is a valid preset or catalog id); `edge` is the chance of each flag value being an
/// edge value.
fn model_command(rng: &mut Rng, model: &Option<String>, chip: &Option<String>, edge: f64) -> Step {
    let (fmt, json) = pick_format(rng);
    let m = model_arg(model, rng);
    let h = hardware_arg(chip, rng);
    match rng.below(15) {
        14 => serve_sim_command(rng, m, h, edge, fmt, json),
        12 | 13 => parallel_command(rng, m, h, edge, fmt, json),
        0..=5 => {
            let mut a = vec![lit("analyze"), m, lit("--hardware"), h];
            a.extend(analyze_flags(rng, edge));
            let (x, _) = analyze_extras(rng, edge);
            a.extend(x);
            let mut s = step(a, json);
            if rng.chance(0.05) {
                s.args.extend([lit("--plot"), file("plot.svg")]);
                s.outputs.push("plot.svg".into());
            }
            s.args.extend([lit("--format"), lit(fmt)]);
            s
        }
        6 | 7 => {
            let mut a = vec![lit("sweep"), m, lit("--hardware"), h];
            a.push(lit("--stage"));
            a.push(lit(*rng.pick(STAGES)));
            for f in ["--batch", "--seq-len", "--context"] {
                a.push(lit(f));
                a.push(lit(if rng.chance(edge) {
                    *rng.pick(LISTS)
                } else {
                    *rng.pick(&["1,8", "1..64", "2048", "1,4096"])
                }));
            }
            if rng.chance(0.3) {
                a.push(lit("--precision"));
                a.push(lit(*rng.pick(&["bf16,fp8", "int4", "bf16", "fp32,int8"])));
            }
            if rng.chance(0.3) {
                a.push(lit("--flash-attention"));
            }
            if rng.chance(0.2) {
                a.push(lit("--memory-reserve"));
                a.push(lit(*rng.pick(RESERVES)));
            }
            a.extend([lit("--format"), lit(fmt)]);
            step(a, json)
        }
        8 => {
            let mut a = vec![lit("mfu"), m, lit("--hardware"), h];
            a.extend(mfu_work(rng, edge, true));
            a.extend([lit("--format"), lit(fmt)]);
            step(a, json)
        }
        9 => {
            let mut a = vec![lit("mbu"), m, lit("--hardware"), h];
            a.extend(mbu_flags(rng, edge));
            a.extend([lit("--format"), lit(fmt)]);
            step(a, json)
        }
        _ => {
            // report writes HTML to --out and JSON to stdout.
            let mut a = vec![lit("report"), m, lit("--hardware"), h];
            a.extend(analyze_flags(rng, edge));
            if rng.chance(0.2) {
                a.push(lit("--explain"));
                a.push(lit(*rng.pick(&["q_proj", "lm_head", "bogus"])));
            }
            a.extend([lit("--out"), file("report.html")]);
            let mut s = step(a, true);
            s.args.extend([lit("--format"), lit("json")]);
            s.outputs.push("report.html".into());
            s
        }
    }
}

/// `serve-sim` with a few hundred requests at most (a valid run stays well inside the time
/// limit), each engine and stream flag at an edge with chance `edge`.
fn serve_sim_command(
    rng: &mut Rng,
    m: Arg,
    h: Arg,
    edge: f64,
    fmt: &'static str,
    json: bool,
) -> Step {
    let mut a = vec![lit("serve-sim"), m, lit("--hardware"), h];
    let flags: [(&str, &[&str], &[&str]); 8] = [
        (
            "--rate",
            &["4/s", "50", "inf", "0.01/s"],
            &["0", "-1", "nan", "1e7", "4/min", ""],
        ),
        (
            "--requests",
            &["1", "50", "300"],
            &["0", "10000001", "-5", "abc", ""],
        ),
        (
            "--prompt-dist",
            &[
                "fixed:512",
                "uniform:1..4096",
                "normal:1024,512",
                "lognormal:6,1",
            ],
            &[
                "fixed:0",
                "fixed:67108864",
                "uniform:9..3",
                "normal:0,1",
                "zipf:1",
                "512",
                "",
            ],
        ),
        (
            "--output-dist",
            &["fixed:1", "uniform:16..256", "normal:64,64"],
            &[
                "fixed:-1",
                "uniform:1..",
                "normal:1,nan",
                "lognormal:40,1",
                "",
            ],
        ),
        (
            "--max-seqs",
            &["1", "8", "256"],
            &["0", "-1", "1048577", "x"],
        ),
        (
            "--max-batched-tokens",
            &["1", "512", "8192"],
            &["0", "67108865", "-3"],
        ),
        ("--kv-block", &["1", "16", "256"], &["0", "65537", "1.5"]),
        (
            "--seed",
            &["0", "7", "18446744073709551615"],
            &["-1", "18446744073709551616", "s"],
        ),
    ];
    for (flag, good, bad) in flags {
        if rng.chance(0.5) || flag == "--requests" {
            a.push(lit(flag));
            a.push(lit(if rng.chance(edge) {
                *rng.pick(bad)
            } else if flag == "--requests" {
                *rng.pick(&["1", "50", "300"])
            } else {
                *rng.pick(good)
            }));
        }
    }
    if rng.chance(0.2) {
        a.push(lit("--no-chunked-prefill"));
    }
    if rng.chance(0.2) {
        a.push(lit("--tp"));
        a.push(lit(*rng.pick(&["1", "2", "8", "3", "0"])));
    }
    if rng.chance(0.2) {
        a.push(lit("--memory-reserve"));
        a.push(lit(*rng.pick(RESERVES)));
    }
    if rng.chance(0.2) {
        a.push(lit("--kv-precision"));
        a.push(lit(*rng.pick(&["fp8", "int4", "bf16", "fp99"])));
    }
    a.extend([lit("--format"), lit(fmt)]);
    step(a, json)
}

/// Systems of the catalog for `--system`, and names that are not.
const SYSTEMS: &[&str] = &[
    "dgx-h100",
    "dgx-h100",
    "dgx-a100",
    "hgx-h200",
    "mi300x-8",
    "gb200-nvl72",
    "tpu-v5p-64",
    "dgx-h100-su",
    "nope",
    "",
];

/// Degrees of `--tp`, `--pp`, `--ep` and counts of `--devices` at an edge: zero, one a model
/// does not take, beyond any system, not a number.
const DEGREES: &[&str] = &[
    "0", "3", "12", "16", "81", "1024", "1048576", "1048577", "-1", "abc", "", "2.5",
];

/// A command on many devices: `analyze` with a layout, `plan`, or `sweep --tp`, on a system
/// from the catalog or `--devices` of a chip's default node; bounded values, each at an edge
/// with chance `edge`.
fn parallel_command(
    rng: &mut Rng,
    m: Arg,
    h: Arg,
    edge: f64,
    fmt: &'static str,
    json: bool,
) -> Step {
    let val = |rng: &mut Rng, valid: &[&'static str]| -> Arg {
        lit(if rng.chance(edge) {
            *rng.pick(DEGREES)
        } else {
            *rng.pick(valid)
        })
    };
    let mut a = Vec::new();
    match rng.below(3) {
        0 => {
            a.extend([lit("analyze"), m, lit("--hardware"), h]);
            a.extend([lit("--tp"), val(rng, &["1", "2", "4", "8"])]);
            if rng.chance(0.3) {
                a.extend([lit("--pp"), val(rng, &["1", "2", "4"])]);
            }
            if rng.chance(0.3) {
                a.extend([lit("--ep"), val(rng, &["1", "2", "8"])]);
            }
            if rng.chance(0.2) {
                a.push(lit("--sequence-parallel"));
            }
            if rng.chance(0.15) {
                a.push(lit("--expert-imbalance"));
                a.push(lit(if rng.chance(edge) {
                    *rng.pick(&["0.5", "0", "NaN", "inf", "-1", "9", "abc"])
                } else {
                    *rng.pick(&["1", "1.5", "2"])
                }));
            }
            if rng.chance(0.4) {
                a.extend([lit("--system"), lit(*rng.pick(SYSTEMS))]);
            } else if rng.chance(0.3) {
                a.extend([lit("--devices"), val(rng, &["8", "16", "4"])]);
            }
            a.extend(analyze_flags(rng, edge));
        }
        1 => {
            a.extend([lit("plan"), m]);
            match rng.below(10) {
                0..=5 => a.extend([lit("--system"), lit(*rng.pick(SYSTEMS))]),
                6..=8 => a.extend([
                    lit("--devices"),
                    val(rng, &["1", "2", "4", "8", "16"]),
                    lit("--hardware"),
                    h,
                ]),
                _ => {}
            }
            a.extend([lit("--stage"), lit(*rng.pick(&["decode", "prefill"]))]);
            a.extend([
                lit("--batch"),
                lit(if rng.chance(edge) {
                    *rng.pick(INTS)
                } else {
                    *rng.pick(&["1", "16", "64"])
                }),
            ]);
            if rng.chance(0.3) {
                a.extend([lit("--seq-len"), lit(*rng.pick(&["128", "2048", "0"]))]);
            }
            if rng.chance(0.3) {
                a.extend([lit("--context"), lit(*rng.pick(&["0", "2048", "32768"]))]);
            }
            if rng.chance(0.2) {
                a.extend([lit("--top"), val(rng, &["1", "3", "10"])]);
            }
            if rng.chance(0.2) {
                a.extend([lit("--precision"), lit(*rng.pick(&["fp8", "bf16", "int8"]))]);
            }
            if rng.chance(0.2) {
                a.extend([lit("--memory-reserve"), lit(*rng.pick(RESERVES))]);
            }
        }
        _ => {
            a.extend([lit("sweep"), m, lit("--hardware"), h]);
            a.push(lit("--tp"));
            a.push(lit(if rng.chance(edge) {
                *rng.pick(&["1,3", "0,2", "1..8", "16", "1,2,4,8,16", "", "8..2"])
            } else {
                *rng.pick(&["1,2,4,8", "1,2", "2,4", "8"])
            }));
            a.extend([lit("--stage"), lit(*rng.pick(STAGES))]);
            a.extend([lit("--batch"), lit(*rng.pick(&["1,16", "1", "8"]))]);
            if rng.chance(0.3) {
                a.extend([lit("--seq-len"), lit(*rng.pick(&["128", "2048"]))]);
            }
            if rng.chance(0.3) {
                a.extend([lit("--context"), lit(*rng.pick(&["0", "4096"]))]);
            }
            if rng.chance(0.2) {
                a.extend([lit("--system"), lit(*rng.pick(SYSTEMS))]);
            }
        }
    }
    a.extend([lit("--format"), lit(fmt)]);
    step(a, json)
}

fn mfu_work(rng: &mut Rng, edge: f64, with_model: bool) -> Vec<Arg> {
    let mut a = Vec::new();
    let val = |rng: &mut Rng, valid: &'static [&'static str], pool: &'static [&'static str]| {
        lit(if rng.chance(edge) {
            *rng.pick(pool)
        } else {
            *rng.pick(valid)
        })
    };
    if !with_model && rng.chance(0.7) {
        a.extend([lit("--params"), val(rng, &["70e9", "7B", "175e9"], COUNTS)]);
    }
    match rng.below(3) {
        0 => {
            a.extend([lit("--tokens"), val(rng, &["100e9", "1e12"], COUNTS)]);
            a.extend([lit("--time"), val(rng, &["30d", "720h", "3600s"], TIMES)]);
        }
        1 => a.extend([lit("--tokens-per-s"), val(rng, &["30000", "3000"], COUNTS)]),
        _ => {
            a.extend([lit("--step-time"), val(rng, &["13.75s", "1s"], TIMES)]);
            a.extend([lit("--global-batch"), val(rng, &["64", "1"], INTS)]);
            a.extend([lit("--seq-len"), val(rng, &["2048", "4096"], INTS)]);
        }
    }
    if rng.chance(0.4) {
        a.extend([lit("--devices"), val(rng, &["1", "8", "1024"], INTS)]);
    }
    if rng.chance(0.3) {
        a.extend([lit("--peak"), val(rng, &["312T", "989.5e12"], COUNTS)]);
    }
    if rng.chance(0.3) {
        a.extend([lit("--recompute"), val(rng, &["none", "full"], RECOMPUTES)]);
    }
    if rng.chance(0.3) {
        a.extend([lit("--target-mfu"), val(rng, &["40", "55%"], PERCENTS)]);
    }
    if rng.chance(0.3) {
        a.extend([
            lit("--precision"),
            val(rng, &["bf16", "fp8", "tf32"], PRECISIONS),
        ]);
    }
    if !with_model && rng.chance(0.3) {
        a.extend([lit("--layers"), val(rng, &["96", "32"], INTS)]);
        a.extend([lit("--hidden"), val(rng, &["12288", "4096"], INTS)]);
        if rng.chance(0.5) {
            a.extend([lit("--vocab"), val(rng, &["51200"], INTS)]);
        }
        if rng.chance(0.3) {
            a.extend([lit("--heads"), val(rng, &["48"], INTS)]);
            a.extend([lit("--head-dim"), val(rng, &["256"], INTS)]);
        }
    }
    if !with_model && rng.chance(0.2) {
        a.extend([
            lit("--sizes"),
            lit(*rng.pick(&["1e9,7e9", "0", "1e9,,2e9", "NaN", "1e300", "1e9,-1", ""])),
        ]);
    }
    a
}

fn mbu_flags(rng: &mut Rng, edge: f64) -> Vec<Arg> {
    let mut a = Vec::new();
    let val = |rng: &mut Rng, valid: &'static [&'static str], pool: &'static [&'static str]| {
        lit(if rng.chance(edge) {
            *rng.pick(pool)
        } else {
            *rng.pick(valid)
        })
    };
    if rng.chance(0.7) {
        a.extend([lit("--tpot"), val(rng, &["14ms", "30ms"], TIMES)]);
    } else {
        a.extend([lit("--tokens-per-s"), val(rng, &["70", "1000"], COUNTS)]);
    }
    if rng.chance(0.4) {
        a.extend([lit("--batch"), val(rng, &["1", "8"], INTS)]);
    }
    if rng.chance(0.4) {
        a.extend([lit("--context"), val(rng, &["0", "2048"], INTS)]);
    }
    if rng.chance(0.3) {
        a.extend([lit("--devices"), val(rng, &["1", "8"], INTS)]);
    }
    if rng.chance(0.3) {
        a.extend([lit("--bandwidth"), val(rng, &["2T", "3.35e12"], COUNTS)]);
    }
    if rng.chance(0.3) {
        a.extend([lit("--peak"), val(rng, &["312T"], COUNTS)]);
    }
    if rng.chance(0.3) {
        a.extend([lit("--precision"), val(rng, &["bf16", "fp8"], PRECISIONS)]);
    }
    if rng.chance(0.2) {
        a.extend([lit("--weight-precision"), val(rng, &["int4"], PRECISIONS)]);
    }
    if rng.chance(0.2) {
        a.extend([lit("--kv-precision"), val(rng, &["fp8"], PRECISIONS)]);
    }
    a
}

/// A command that reads a chip file (the one under test) with valid other inputs.
fn chip_command(rng: &mut Rng, chip: &str) -> Step {
    let (fmt, json) = pick_format(rng);
    let h = file(chip);
    let mut s = match rng.below(10) {
        0..=2 => return model_command(rng, &None, &Some(chip.to_string()), 0.05),
        3 => step(vec![lit("hardware"), lit("show"), h], json),
        4 => step(
            vec![lit("hardware"), lit("compare"), h, lit(*rng.pick(CHIPS))],
            json,
        ),
        5 | 6 => {
            let mut a = vec![lit("op")];
            a.extend(op_args(rng, 0.05));
            a.extend([lit("--hardware"), h]);
            step(a, json)
        }
        7 => {
            let mut a = lits(&[
                "fuse",
                "--chain",
                "rmsnorm,linear,silu,linear",
                "--tokens",
                "2048",
            ]);
            a.extend(lits(&[
                "--hidden",
                "4096",
                "--intermediate",
                "11008",
                "--hardware",
            ]));
            a.push(h);
            step(a, json)
        }
        8 => step(
            vec![lit("import"), file("ncu.csv"), lit("--hardware"), h],
            json,
        ),
        _ => {
            let mut a = vec![lit("mfu"), lit(*rng.pick(PRESETS)), lit("--hardware"), h];
            a.extend(mfu_work(rng, 0.0, true));
            step(a, json)
        }
    };
    s.args.extend([lit("--format"), lit(fmt)]);
    s
}

/// `op SUBCOMMAND` flags, valid or at an edge.
fn op_args(rng: &mut Rng, edge: f64) -> Vec<Arg> {
    let mut a = Vec::new();
    let num = |a: &mut Vec<Arg>, rng: &mut Rng, name: &str, valid: &[&str]| {
        a.push(lit(name));
        a.push(lit(if rng.chance(edge) {
            *rng.pick(INTS)
        } else {
            *rng.pick(valid)
        }));
    };
    match rng.below(6) {
        0 => {
            a.push(lit("gemm"));
            num(&mut a, rng, "--m", &["1", "2048"]);
            num(&mut a, rng, "--n", &["4096", "11008"]);
            num(&mut a, rng, "--k", &["4096", "1"]);
            if rng.chance(0.3) {
                a.push(lit("--bias"));
            }
        }
        1 => {
            a.push(lit("attention"));
            num(&mut a, rng, "--heads", &["32", "128"]);
            if rng.chance(0.6) {
                num(&mut a, rng, "--kv-heads", &["8", "32"]);
            }
            num(&mut a, rng, "--head-dim", &["128", "64"]);
            num(&mut a, rng, "--q-len", &["1", "4096"]);
            if rng.chance(0.6) {
                num(&mut a, rng, "--kv-len", &["4096", "1"]);
            }
            if rng.chance(0.4) {
                num(&mut a, rng, "--batch", &["1", "16"]);
            }
            if rng.chance(0.4) {
                a.push(lit("--causal"));
            }
            if rng.chance(0.5) {
                a.push(lit("--fused"));
            }
            if rng.chance(0.2) {
                a.push(lit("--kv-precision"));
                a.push(lit(*rng.pick(PRECISIONS)));
            }
        }
        2 => {
            a.push(lit("softmax"));
            num(&mut a, rng, "--rows", &["4096", "1"]);
            num(&mut a, rng, "--cols", &["4096", "1"]);
            if rng.chance(0.3) {
                a.push(lit("--no-scale-mask"));
            }
        }
        3 => {
            a.push(lit(*rng.pick(&["rmsnorm", "layernorm"])));
            num(&mut a, rng, "--rows", &["2048", "1"]);
            num(&mut a, rng, "--cols", &["4096", "1"]);
        }
        _ => {
            a.push(lit("elementwise"));
            num(&mut a, rng, "--elements", &["1048576", "1"]);
            if rng.chance(0.5) {
                num(&mut a, rng, "--inputs", &["1", "2", "3"]);
            }
            if rng.chance(0.5) {
                a.push(lit("--flops-per-element"));
                a.push(lit(if rng.chance(edge) {
                    *rng.pick(&["0", "-1", "NaN", "inf", "1e308", "-0", "1e-300", "abc"])
                } else {
                    *rng.pick(&["1", "4"])
                }));
            }
        }
    }
    if rng.chance(0.3) {
        a.push(lit("--precision"));
        a.push(lit(if rng.chance(edge) {
            *rng.pick(PRECISIONS)
        } else {
            "bf16"
        }));
    }
    if rng.chance(0.1) {
        a.push(lit("--explain"));
    }
    a
}

/// Flag values at their edges on valid inputs.
fn flag_command(rng: &mut Rng) -> Step {
    let (fmt, json) = pick_format(rng);
    let edge = 0.5;
    let mut s = match rng.below(10) {
        0..=3 => return model_command(rng, &None, &None, edge),
        4 | 5 => {
            let mut a = vec![lit("op")];
            a.extend(op_args(rng, edge));
            a.extend([lit("--hardware"), lit(*rng.pick(CHIPS))]);
            step(a, json)
        }
        6 => {
            let mut a = vec![lit("mfu")];
            if rng.chance(0.2) {
                a.push(lit(*rng.pick(PRESETS)));
                a.extend(mfu_work(rng, edge, true));
            } else {
                a.extend(mfu_work(rng, edge, false));
            }
            if rng.chance(0.8) {
                a.extend([lit("--hardware"), lit(*rng.pick(CHIPS))]);
            }
            step(a, json)
        }
        7 => {
            let mut a = vec![lit("mbu")];
            if rng.chance(0.6) {
                a.push(lit(*rng.pick(PRESETS)));
            } else {
                a.extend([lit("--params"), lit(*rng.pick(COUNTS))]);
            }
            a.extend(mbu_flags(rng, edge));
            if rng.chance(0.8) {
                a.extend([lit("--hardware"), lit(*rng.pick(CHIPS))]);
            }
            step(a, json)
        }
        8 => {
            let chain = *rng.pick(&[
                "rmsnorm,linear,silu,linear",
                "layernorm,linear,gelu",
                "linear",
                "relu",
                "",
                "rmsnorm,,linear",
                "softmax",
                "linear,linear,linear,linear,linear,linear,linear,linear,linear,linear,linear",
            ]);
            let mut a = vec![lit("fuse"), lit("--chain"), lit(chain)];
            for (f, v) in [
                ("--tokens", "2048"),
                ("--hidden", "4096"),
                ("--intermediate", "11008"),
            ] {
                a.push(lit(f));
                a.push(lit(if rng.chance(edge) { *rng.pick(INTS) } else { v }));
            }
            if rng.chance(0.3) {
                a.extend([lit("--launch-overhead"), lit(*rng.pick(SMALL_TIMES))]);
            }
            if rng.chance(0.3) {
                a.extend([lit("--precision"), lit(*rng.pick(PRECISIONS))]);
            }
            a.extend([lit("--hardware"), lit(*rng.pick(CHIPS))]);
            step(a, json)
        }
        _ => {
            let name = *rng.pick(&[
                "h100-sxm",
                "H100",
                "a100",
                "4090",
                "mi300",
                "rtx_a6000",
                "nope",
                "",
                " ",
                "h100-sxm ",
                "../x.toml",
                "/nonexistent.toml",
                "a.toml",
            ]);
            if rng.chance(0.5) {
                step(vec![lit("hardware"), lit("show"), lit(name)], json)
            } else {
                step(
                    vec![
                        lit("hardware"),
                        lit("compare"),
                        lit(name),
                        lit(*rng.pick(CHIPS)),
                    ],
                    json,
                )
            }
        }
    };
    s.args.extend([lit("--format"), lit(fmt)]);
    s
}

/// An output path that already exists, named by a command with or without `--force`.
fn clobber_command(rng: &mut Rng, files: &mut Vec<InputFile>, seeds: &Seeds) -> (Step, String) {
    let force = rng.chance(0.3);
    let (mut a, out, what) = match rng.below(5) {
        0 => (
            lits(&[
                "analyze",
                "gpt2",
                "--hardware",
                "h100-sxm",
                "--stage",
                "decode",
                "--plot",
            ]),
            "existing.svg",
            "analyze --plot",
        ),
        1 => (
            lits(&["op", "gemm", "--m", "1", "--n", "64", "--k", "64", "--plot"]),
            "existing.svg",
            "op --plot",
        ),
        2 => (
            lits(&[
                "report",
                "gpt2",
                "--hardware",
                "h100-sxm",
                "--stage",
                "decode",
                "--out",
            ]),
            "existing.html",
            "report --out",
        ),
        3 => (
            lits(&["hardware", "show", "h100-sxm", "--plot"]),
            "existing.svg",
            "hardware show --plot",
        ),
        _ => {
            files.push(InputFile {
                name: "roof.log".into(),
                content: seeds.profiles[3].1.clone().into_bytes(),
            });
            (
                vec![lit("import"), file("roof.log"), lit("--write-chip")],
                "existing.toml",
                "import --write-chip",
            )
        }
    };
    files.push(InputFile {
        name: out.into(),
        content: b"sentinel: this file existed before the run\n".to_vec(),
    });
    a.push(file(out));
    if force {
        a.push(lit("--force"));
    }
    a.extend(lits(&["--format", "json"]));
    let mut s = step(a, true);
    s.outputs.push(out.into());
    s.force = force;
    (
        s,
        format!(
            "{what} onto an existing file{}",
            if force { ", --force" } else { "" }
        ),
    )
}

/// Joins `--flag value` into `--flag=value` when the value starts with `-` (which the parser
/// would otherwise take for a flag, never reaching the value parser) and in one pair of ten
/// otherwise, the other spelling the parser accepts.
fn join_values(rng: &mut Rng, args: Vec<Arg>) -> Vec<Arg> {
    let mut out: Vec<Arg> = Vec::with_capacity(args.len());
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        if let Arg::Lit(flag) = &a {
            if flag.starts_with("--") {
                if let Some(Arg::Lit(v)) = it.peek() {
                    let dash = v.starts_with('-') && !v.starts_with("--");
                    if dash || (!v.starts_with("--") && rng.chance(0.1)) {
                        let joined = format!("{flag}={v}");
                        it.next();
                        out.push(Arg::Lit(joined));
                        continue;
                    }
                }
            }
        }
        out.push(a);
    }
    out
}

/// The case of index `index` under `seed`.
pub fn case(seed: u64, index: u64, seeds: &Seeds) -> Case {
    let mut c = raw_case(seed, index, seeds);
    let mut rng = Rng::for_case(seed ^ 0xA5A5, index);
    for s in &mut c.steps {
        s.args = join_values(&mut rng, std::mem::take(&mut s.args));
    }
    c
}

fn raw_case(seed: u64, index: u64, seeds: &Seeds) -> Case {
    let mut rng = Rng::for_case(seed, index);
    let mut files = Vec::new();
    // Every 40th case is a control: a seed input, valid flags, no mutation.
    if index.is_multiple_of(40) {
        return control(&mut rng, index, seeds);
    }
    let (what, steps) = match rng.below(100) {
        0..=29 => {
            let (bytes, what) = mutate_model(&mut rng, seeds);
            files.push(InputFile {
                name: "config.json".into(),
                content: bytes,
            });
            let s = model_command(&mut rng, &Some("config.json".into()), &None, 0.15);
            (what, vec![s])
        }
        30..=49 => {
            let (bytes, what) = mutate_chip(&mut rng, seeds);
            files.push(InputFile {
                name: "chip.toml".into(),
                content: bytes,
            });
            files.push(InputFile {
                name: "ncu.csv".into(),
                content: seeds.profiles[0].1.clone().into_bytes(),
            });
            let s = chip_command(&mut rng, "chip.toml");
            (what, vec![s])
        }
        50..=71 => {
            let (name, bytes, what, format) = mutate_profile(&mut rng, seeds);
            files.push(InputFile {
                name: name.clone(),
                content: bytes,
            });
            (
                what,
                profile_steps(&mut rng, &name, format, seeds, &mut files),
            )
        }
        72..=95 => (
            "flag values on valid inputs".into(),
            vec![flag_command(&mut rng)],
        ),
        _ => {
            let (s, what) = clobber_command(&mut rng, &mut files, seeds);
            (what, vec![s])
        }
    };
    Case {
        index,
        what,
        files,
        steps,
        control: false,
    }
}

fn profile_steps(
    rng: &mut Rng,
    name: &str,
    format: ProfileFormat,
    seeds: &Seeds,
    files: &mut Vec<InputFile>,
) -> Vec<Step> {
    let (fmt, json) = pick_format(rng);
    let is_roof = matches!(
        format,
        ProfileFormat::Mixbench
            | ProfileFormat::ErtJson
            | ProfileFormat::ErtSum
            | ProfileFormat::ErtTry
    );
    let mut first = match rng.below(10) {
        0..=4 => {
            let mut a = vec![lit("import"), file(name)];
            if !is_roof && rng.chance(0.7) {
                a.push(lit("--hardware"));
                a.push(if rng.chance(0.3) {
                    lit(seeds.this_cpu.to_string_lossy().into_owned())
                } else {
                    lit(*rng.pick(CHIPS))
                });
            }
            if rng.chance(0.2) {
                a.extend([
                    lit("--top"),
                    lit(*rng.pick(&["1", "0", "-1", "abc", "18446744073709551616", "5"])),
                ]);
            }
            step(a, json)
        }
        5 | 6 if is_roof => {
            // The mutated roof as the chip a good profile is held against.
            files.push(InputFile {
                name: "ncu.csv".into(),
                content: seeds.profiles[0].1.clone().into_bytes(),
            });
            step(
                vec![
                    lit("import"),
                    file("ncu.csv"),
                    lit("--hardware"),
                    file(name),
                ],
                json,
            )
        }
        7 | 8 if is_roof => {
            // Written as a chip file, then read back by analyze.
            let mut s = step(
                vec![
                    lit("import"),
                    file(name),
                    lit("--write-chip"),
                    file("written.toml"),
                ],
                json,
            );
            s.outputs.push("written.toml".into());
            s.args.extend([lit("--format"), lit(fmt)]);
            let mut second = step(
                vec![
                    lit("analyze"),
                    lit("gpt2"),
                    lit("--hardware"),
                    file("written.toml"),
                    lit("--precision"),
                    lit("fp32"),
                ],
                true,
            );
            second.args.extend([lit("--format"), lit("json")]);
            second.after_success = true;
            return vec![s, second];
        }
        _ if format == ProfileFormat::Torch => {
            // Joined against the small Llama's graph.
            let a = vec![
                lit("analyze"),
                lit(seeds.small_llama.to_string_lossy().into_owned()),
                lit("--precision"),
                lit("fp32"),
                lit("--stage"),
                lit("prefill"),
                lit("--seq-len"),
                lit("64"),
                lit("--hardware"),
                lit(seeds.this_cpu.to_string_lossy().into_owned()),
                lit("--profile"),
                file(name),
            ];
            step(a, json)
        }
        _ => step(vec![lit("import"), file(name)], json),
    };
    first.args.extend([lit("--format"), lit(fmt)]);
    vec![first]
}

/// A seed input, unmutated, through a command that must succeed.
fn control(rng: &mut Rng, index: u64, seeds: &Seeds) -> Case {
    let mut files = Vec::new();
    let k = (index / 40) as usize;
    let (what, steps) = match k % 4 {
        0 => {
            let (name, text) = &seeds.models[k / 4 % seeds.models.len()];
            files.push(InputFile {
                name: "config.json".into(),
                content: text.clone().into_bytes(),
            });
            let mut a = vec![lit("analyze"), file("config.json")];
            a.extend(lits(&[
                "--hardware",
                "h100-sxm",
                "--batch",
                "2",
                "--seq-len",
                "128",
                "--context",
                "512",
                "--format",
                "json",
            ]));
            let s = step(a, true);
            (format!("control: {name} unmutated"), vec![s])
        }
        1 => {
            let (name, text) = &seeds.chips[k / 4 % seeds.chips.len()];
            files.push(InputFile {
                name: "chip.toml".into(),
                content: text.clone().into_bytes(),
            });
            // A precision the chip has a peak for (the first of its file), or only its figures
            // when it publishes no peak.
            let precision = text
                .lines()
                .skip_while(|l| l.trim() != "[peak_flops_per_s]")
                .skip(1)
                .take_while(|l| !l.starts_with('['))
                .find_map(|l| l.split_once(" = {").map(|(k, _)| k.trim().to_string()));
            let mut a = match &precision {
                Some(p) => {
                    let mut a = lits(&["analyze", "gpt2", "--precision", p, "--hardware"]);
                    a.push(file("chip.toml"));
                    a
                }
                None => vec![lit("hardware"), lit("show"), file("chip.toml")],
            };
            a.extend(lits(&["--format", "json"]));
            (format!("control: {name} unmutated"), vec![step(a, true)])
        }
        2 => {
            let (name, text, format) = &seeds.profiles[k / 4 % seeds.profiles.len()];
            files.push(InputFile {
                name: name.clone(),
                content: text.clone().into_bytes(),
            });
            let mut a = vec![lit("import"), file(name)];
            if *format == ProfileFormat::Ncu || *format == ProfileFormat::Torch {
                a.extend(lits(&["--hardware", "h100-sxm"]));
            }
            a.extend(lits(&["--format", "json"]));
            (format!("control: {name} unmutated"), vec![step(a, true)])
        }
        _ => {
            let _ = rng;
            let a = lits(&[
                "mfu",
                "--params",
                "70e9",
                "--tokens",
                "100e9",
                "--time",
                "30d",
                "--devices",
                "1024",
                "--hardware",
                "h100-sxm",
                "--format",
                "json",
            ]);
            (
                "control: the seed's MFU exercise".to_string(),
                vec![step(a, true)],
            )
        }
    };
    Case {
        index,
        what,
        files,
        steps,
        control: true,
    }
}
