//! Nsight Compute CSV exports (`ncu --csv …`) into measured kernels.
//!
//! Two layouts are read:
//! - **long** (`--page details`, the default, and `--metrics …`): one row per (kernel, metric)
//!   with the columns `ID`, `Kernel Name`, `Metric Name`, `Metric Unit`, `Metric Value`;
//! - **wide** (`--page raw`): one row per kernel, one column per metric, and a second row of
//!   units (its `ID` cell empty).
//!
//! Lines that do not start with `"` (ncu's `==PROF==` progress lines, the application's own
//! output) are skipped. Values may carry thousands separators (`"16,777,216"`); units are
//! auto-scaled per value by ncu (`byte`/`Kbyte`/`Mbyte`/`Gbyte`, decimal as ncu prints them: 1
//! Kbyte = 1000 bytes; `nsecond`/`usecond`/`msecond`/`second`; `inst`) and normalised here.
//!
//! Metrics read, per kernel (the roofline set of Nsight Compute's own
//! `SpeedOfLight_RooflineChart` section):
//!
//! | metric | becomes |
//! |---|---|
//! | `gpu__time_duration.sum` (or `Duration`) | duration |
//! | `dram__bytes_read.sum`, `dram__bytes_write.sum` (or `dram__bytes.sum`, all read) | main-memory bytes |
//! | `lts__t_bytes.sum` | L2 bytes |
//! | `sm__sass_thread_inst_executed_op_{f,d,h}{add,mul,fma}_pred_on.sum` | FLOPs in fp32, fp64, fp16: add + mul + 2 × fma |
//! | `sm__inst_executed_pipe_tensor*.sum` | tensor-pipe instructions (not FLOPs) |
//!
//! A kernel without FLOP counters or without DRAM bytes keeps its duration and is not placed
//! on a roofline (the profile's notes say which metrics were missing).

use super::{at_line, parse_number};
use crate::error::InputError;
use roofline_core::precision::Precision;
use roofline_core::profile::{CostSource, Profile, ProfileFormat, ProfiledKernel};
use roofline_core::units::{Bytes, Flop, Seconds};

/// The metrics the roofline needs, for the hint of a kernel that lacks them.
pub const METRICS: &str = "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,\
lts__t_bytes.sum,sm__sass_thread_inst_executed_op_fadd_pred_on.sum,\
sm__sass_thread_inst_executed_op_fmul_pred_on.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,\
sm__sass_thread_inst_executed_op_dadd_pred_on.sum,sm__sass_thread_inst_executed_op_dmul_pred_on.sum,\
sm__sass_thread_inst_executed_op_dfma_pred_on.sum,sm__inst_executed_pipe_tensor.sum";

/// What a metric measures, and so which units it may carry.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
    Duration,
    DramRead,
    DramWrite,
    DramTotal,
    L2,
    /// FLOP instructions of `precision`, each worth `weight` FLOPs (fma = 2).
    Flop(Precision, f64),
    Tensor,
}

fn metric(name: &str) -> Option<Metric> {
    const PREFIX: &str = "sm__sass_thread_inst_executed_op_";
    if let Some(rest) = name
        .strip_prefix(PREFIX)
        .and_then(|r| r.strip_suffix("_pred_on.sum"))
    {
        let (p, op) = rest.split_at(1);
        let precision = match p {
            "f" => Precision::Fp32,
            "d" => Precision::Fp64,
            "h" => Precision::Fp16,
            _ => return None,
        };
        let weight = match op {
            "add" | "mul" => 1.0,
            "fma" => 2.0,
            _ => return None,
        };
        return Some(Metric::Flop(precision, weight));
    }
    if name.starts_with("sm__inst_executed_pipe_tensor") && name.ends_with(".sum") {
        return Some(Metric::Tensor);
    }
    Some(match name {
        "gpu__time_duration.sum" | "Duration" => Metric::Duration,
        "dram__bytes_read.sum" => Metric::DramRead,
        "dram__bytes_write.sum" => Metric::DramWrite,
        "dram__bytes.sum" => Metric::DramTotal,
        "lts__t_bytes.sum" => Metric::L2,
        _ => return None,
    })
}

/// What turns a value in `unit` into the metric's base unit (seconds, bytes, count): multiply
/// by the first factor, divide by the second (so that `52.10 usecond` is `52.10 / 1e6` s,
/// exactly as written, not `52.10 × 1e-6`).
fn scale(m: Metric, unit: &str) -> Option<(f64, f64)> {
    let u = unit.trim();
    let mul = |k: f64| Some((k, 1.0));
    match m {
        Metric::Duration => Some(match u {
            "nsecond" | "ns" => (1.0, 1e9),
            "usecond" | "us" | "µs" => (1.0, 1e6),
            "msecond" | "ms" => (1.0, 1e3),
            "second" | "s" => (1.0, 1.0),
            _ => return None,
        }),
        Metric::DramRead | Metric::DramWrite | Metric::DramTotal | Metric::L2 => match u {
            "byte" | "bytes" | "B" => mul(1.0),
            "Kbyte" | "KB" | "kB" => mul(1e3),
            "Mbyte" | "MB" => mul(1e6),
            "Gbyte" | "GB" => mul(1e9),
            "Tbyte" | "TB" => mul(1e12),
            "Kibyte" | "KiB" => mul(1024.0),
            "Mibyte" | "MiB" => mul(1024.0 * 1024.0),
            "Gibyte" | "GiB" => mul(1024.0 * 1024.0 * 1024.0),
            _ => None,
        },
        Metric::Flop(..) | Metric::Tensor => match u {
            "" | "inst" | "instruction" | "instructions" => mul(1.0),
            "Kinst" => mul(1e3),
            "Minst" => mul(1e6),
            "Ginst" => mul(1e9),
            _ => None,
        },
    }
}

fn unit_hint(m: Metric) -> &'static str {
    match m {
        Metric::Duration => "nsecond, usecond, msecond or second",
        Metric::Flop(..) | Metric::Tensor => "inst (or none)",
        _ => "byte, Kbyte, Mbyte, Gbyte or Tbyte",
    }
}

/// One kernel as the rows accumulate.
#[derive(Debug, Default)]
struct Acc {
    id: String,
    name: String,
    line: usize,
    duration: Option<f64>,
    dram_read: Option<f64>,
    dram_write: Option<f64>,
    dram_total: Option<f64>,
    l2: Option<f64>,
    flops: Vec<(Precision, f64)>,
    flop_metrics: bool,
    tensor: Option<f64>,
}

impl Acc {
    fn add(&mut self, m: Metric, v: f64) {
        match m {
            Metric::Duration => self.duration = Some(v),
            Metric::DramRead => self.dram_read = Some(v),
            Metric::DramWrite => self.dram_write = Some(v),
            Metric::DramTotal => self.dram_total = Some(v),
            Metric::L2 => self.l2 = Some(v),
            Metric::Flop(p, w) => {
                self.flop_metrics = true;
                match self.flops.iter_mut().find(|(q, _)| *q == p) {
                    Some((_, f)) => *f += v * w,
                    None => self.flops.push((p, v * w)),
                }
            }
            Metric::Tensor => *self.tensor.get_or_insert(0.0) += v,
        }
    }
}

/// A value and its unit at `line`, normalised, or the error naming both.
fn value(
    origin: &str,
    line: usize,
    name: &str,
    m: Metric,
    raw: &str,
    unit: &str,
) -> Result<Option<f64>, InputError> {
    let Some(v) = parse_number(raw) else {
        if raw.trim().is_empty() || raw.trim().eq_ignore_ascii_case("n/a") {
            return Ok(None);
        }
        return Err(at_line(
            origin,
            line,
            format!("metric `{name}`: value `{raw}` is not a number"),
        )
        .with_hint("export with `ncu --csv` unmodified; numbers may use thousands separators"));
    };
    let Some((k, div)) = scale(m, unit) else {
        return Err(at_line(
            origin,
            line,
            format!("metric `{name}`: unknown unit `{unit}`"),
        )
        .with_hint(format!(
            "expected {}; re-export with `--print-units base` if ncu printed another",
            unit_hint(m)
        )));
    };
    if v < 0.0 {
        return Err(at_line(
            origin,
            line,
            format!("metric `{name}`: negative value {raw}"),
        )
        .with_hint(
            "ncu's counters, bytes and times are never negative: re-export with `ncu --csv` \
             and give the file unedited",
        ));
    }
    let x = v * k / div;
    if x.is_nan() || x > MAX_COUNTER {
        return Err(at_line(
            origin,
            line,
            format!(
                "metric `{name}`: value {raw} is beyond the largest accepted ({MAX_COUNTER:e} \
                 in base units: bytes, FLOP or seconds)"
            ),
        )
        .with_hint("re-export with `ncu --csv` and give the file unedited"));
    }
    if m == Metric::Duration && x > MAX_DURATION {
        return Err(at_line(
            origin,
            line,
            format!(
                "metric `{name}`: a duration of {raw} {unit} is over {MAX_DURATION:e} s (11 days)"
            ),
        )
        .with_hint("re-export with `ncu --csv` and give the file unedited"));
    }
    if m == Metric::Duration && x > 0.0 && x < MIN_DURATION {
        return Err(at_line(
            origin,
            line,
            format!("metric `{name}`: a duration of {raw} {unit} is below 1 ns, ncu's resolution"),
        )
        .with_hint("re-export with `ncu --csv` and give the file unedited"));
    }
    Ok(Some(x))
}

/// Largest counter accepted, in base units (bytes, FLOP, seconds): 10^24, a kernel that would
/// run 11 days at 10^18 FLOP/s (100× the fastest chip). Beyond it a value is corrupt, and its
/// rates would overflow.
const MAX_COUNTER: f64 = 1e24;

/// Longest kernel duration accepted, seconds: 10^6 (11 days); ncu replays each kernel many
/// times, so a real one is shorter by far.
const MAX_DURATION: f64 = 1e6;

/// Shortest non-zero kernel duration accepted, seconds: 1 ns, the resolution of
/// `gpu__time_duration` (a rate over a shorter time would overflow).
const MIN_DURATION: f64 = 1e-9;

/// Reads the quoted CSV lines of `text`, with their line numbers in the file.
fn records(text: &str, origin: &str) -> Result<Vec<(usize, Vec<String>)>, InputError> {
    let kept: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with('"'))
        .map(|(i, l)| (i + 1, l))
        .collect();
    let mut out = Vec::with_capacity(kept.len());
    for (line, l) in kept {
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(l.as_bytes());
        let mut rec = csv::StringRecord::new();
        match rdr.read_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => return Err(at_line(origin, line, format!("malformed CSV: {e}"))),
        }
        if l.matches('"').count() % 2 == 1 {
            return Err(at_line(
                origin,
                line,
                "a quoted field is not closed: the line is cut short (a truncated file?)",
            )
            .with_hint("export the profile again; ncu writes every field quoted"));
        }
        out.push((line, rec.iter().map(|s| s.to_string()).collect()));
    }
    Ok(out)
}

/// Parses an `ncu --csv` export. `origin` names the file in errors.
///
/// # Errors
/// An [`InputError`] naming the line when: there is no header row (`"ID"`, `"Kernel Name"`);
/// the header lacks a column the layout needs (named); a row has fewer fields than the header
/// (a truncated file); a value is not a number; a metric the roofline uses has a unit not in the
/// tables above; a kernel has no duration; or no kernel rows follow the header.
pub fn parse(text: &str, origin: &str) -> Result<Profile, InputError> {
    let recs = records(text, origin)?;
    let Some((hline, header)) = recs.first().cloned() else {
        return Err(InputError::new(format!(
            "{origin}: no CSV rows (lines starting with `\"`): not an `ncu --csv` export"
        ))
        .with_hint("export with `ncu --csv --metrics … ./app > profile.csv` (or --log-file)"));
    };
    let col = |name: &str| header.iter().position(|h| h == name);
    let need = |name: &str| {
        col(name).ok_or_else(|| {
            at_line(
                origin,
                hline,
                format!(
                    "the header has no `{name}` column (columns: {})",
                    header.join(", ")
                ),
            )
            .with_hint("this is not an `ncu --csv` export, or its header row is missing")
        })
    };
    let id_col = need("ID")?;
    let name_col = need("Kernel Name")?;
    let long = col("Metric Name").is_some();
    let mut kernels: Vec<Acc> = Vec::new();
    let width = header.len();
    let check_width = |line: usize, rec: &Vec<String>| {
        if rec.len() < width {
            Err(at_line(
                origin,
                line,
                format!(
                    "{} fields where the header (line {hline}) has {width}: the row is cut short (a truncated file?)",
                    rec.len()
                ),
            )
            .with_hint("export the profile again"))
        } else {
            Ok(())
        }
    };
    let kernel_of = |kernels: &mut Vec<Acc>, id: &str, name: &str, line: usize| -> usize {
        match kernels.iter().position(|k| k.id == id) {
            Some(i) => i,
            None => {
                kernels.push(Acc {
                    id: id.to_string(),
                    name: name.to_string(),
                    line,
                    ..Acc::default()
                });
                kernels.len() - 1
            }
        }
    };
    if long {
        let (mn, mu, mv) = (
            need("Metric Name")?,
            need("Metric Unit")?,
            need("Metric Value")?,
        );
        for (line, rec) in &recs[1..] {
            if rec.get(id_col).is_some_and(|v| v == "ID") {
                continue; // a header repeated (two exports concatenated)
            }
            check_width(*line, rec)?;
            let k = kernel_of(&mut kernels, &rec[id_col], &rec[name_col], *line);
            let name = rec[mn].as_str();
            if let Some(m) = metric(name) {
                if let Some(v) = value(origin, *line, name, m, &rec[mv], &rec[mu])? {
                    kernels[k].add(m, v);
                }
            }
        }
    } else {
        let metric_cols: Vec<(usize, Metric)> = header
            .iter()
            .enumerate()
            .filter_map(|(i, h)| metric(h).map(|m| (i, m)))
            .collect();
        if metric_cols.is_empty() {
            return Err(at_line(
                origin,
                hline,
                "no metric the roofline uses: neither `Metric Name` (long layout) nor a column such as `gpu__time_duration.sum` (wide layout)",
            )
            .with_hint(format!("export with `ncu --csv --page raw --metrics {METRICS}`")));
        }
        let mut units: Vec<String> = vec![String::new(); width];
        for (line, rec) in &recs[1..] {
            check_width(*line, rec)?;
            if rec[id_col].trim().is_empty() {
                units = rec.clone(); // the units row
                continue;
            }
            let k = kernel_of(&mut kernels, &rec[id_col], &rec[name_col], *line);
            for &(i, m) in &metric_cols {
                if let Some(v) = value(origin, *line, &header[i], m, &rec[i], &units[i])? {
                    kernels[k].add(m, v);
                }
            }
        }
    }
    if kernels.is_empty() {
        return Err(at_line(
            origin,
            hline,
            "a header and no kernel rows: the export is empty or truncated",
        )
        .with_hint("check that ncu profiled a kernel (`==PROF==` lines say which)"));
    }
    let mut notes = Vec::new();
    let mut out = Vec::with_capacity(kernels.len());
    let mut no_flops = Vec::new();
    for (i, k) in kernels.into_iter().enumerate() {
        let Some(d) = k.duration else {
            return Err(at_line(
                origin,
                k.line,
                format!(
                    "kernel ID {} (`{}`) has no `gpu__time_duration.sum`",
                    k.id, k.name
                ),
            )
            .with_hint(format!("export with `ncu --csv --metrics {METRICS}`")));
        };
        let (read, write) = match (k.dram_read, k.dram_write, k.dram_total) {
            (None, None, Some(t)) => (Some(t), Some(0.0)),
            (r, w, _) => (r, w),
        };
        let costed = k.flop_metrics && (read.is_some() || write.is_some());
        if !costed {
            no_flops.push(k.id.clone());
        }
        if k.tensor.is_some_and(|t| t > 0.0) {
            notes.push(format!(
                "kernel ID {} (`{}`): {} tensor-pipe instructions; tensor-core FLOPs are not in \
                 the SASS FLOP counters, so its FLOPs are a lower bound",
                k.id,
                k.name,
                k.tensor.unwrap_or(0.0)
            ));
        }
        out.push(ProfiledKernel {
            name: k.name,
            index: k.id.parse().unwrap_or(i),
            duration: Seconds(d),
            flops: k
                .flops
                .into_iter()
                .filter(|(_, f)| *f > 0.0)
                .map(|(p, f)| (p, Flop(f)))
                .collect(),
            tensor_instructions: k.tensor,
            bytes_read: read.map(Bytes),
            bytes_written: write.map(Bytes),
            l2_bytes: k.l2.map(Bytes),
            compute: None,
            cost_source: if costed {
                CostSource::Counters
            } else {
                CostSource::Unknown
            },
            op: None,
            shaped_as: None,
        });
    }
    if !no_flops.is_empty() {
        notes.push(format!(
            "{} kernel(s) (ID {}) lack FLOP counters or DRAM bytes and are not placed on the \
             roofline; profile with `--metrics {METRICS}`",
            no_flops.len(),
            no_flops.join(", ")
        ));
    }
    notes.extend(super::zero_division_notes(&out));
    Ok(Profile {
        format: ProfileFormat::NcuCsv,
        origin: origin.to_string(),
        total_time: out.iter().map(|k| k.duration).sum(),
        kernels: out,
        steps: 1,
        uncosted: Vec::new(),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"";

    fn long(rows: &[&str]) -> String {
        let mut s = format!("==PROF== Connected to process 1\n{HEADER}\n");
        for r in rows {
            s.push_str(r);
            s.push('\n');
        }
        s
    }

    #[test]
    fn long_layout_with_units_and_separators() -> Result<(), Box<dyn std::error::Error>> {
        let text = long(&[
            "\"0\",\"k\",\"gpu__time_duration.sum\",\"msecond\",\"1.5\"",
            "\"0\",\"k\",\"dram__bytes_read.sum\",\"Gbyte\",\"1,000.5\"",
            "\"0\",\"k\",\"dram__bytes_write.sum\",\"Kbyte\",\"2\"",
            "\"0\",\"k\",\"sm__sass_thread_inst_executed_op_dfma_pred_on.sum\",\"inst\",\"10\"",
            "\"0\",\"k\",\"sm__sass_thread_inst_executed_op_fadd_pred_on.sum\",\"inst\",\"3\"",
            "\"0\",\"k\",\"achieved_occupancy\",\"%\",\"50\"",
        ]);
        let p = parse(&text, "t.csv")?;
        let k = &p.kernels[0];
        assert_eq!(k.duration, Seconds(1.5e-3));
        assert_eq!(k.bytes_read, Some(Bytes(1000.5e9)));
        assert_eq!(k.bytes_written, Some(Bytes(2e3)));
        // dfma counts 2: 20 fp64 FLOP; fadd 1: 3 fp32 FLOP.
        assert_eq!(
            k.flops,
            vec![(Precision::Fp64, Flop(20.0)), (Precision::Fp32, Flop(3.0))]
        );
        assert_eq!(k.cost_source, CostSource::Counters);
        Ok(())
    }

    #[test]
    fn wide_layout_reads_the_units_row() -> Result<(), Box<dyn std::error::Error>> {
        let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes_read.sum\",\"dram__bytes_write.sum\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\"\n\
                    \"\",\"\",\"usecond\",\"Mbyte\",\"byte\",\"inst\"\n\
                    \"0\",\"a\",\"10\",\"1\",\"500\",\"1,000\"\n\
                    \"1\",\"b\",\"20\",\"2\",\"0\",\"0\"\n";
        let p = parse(text, "w.csv")?;
        assert_eq!(p.kernels.len(), 2);
        assert_eq!(p.kernels[0].duration, Seconds(10e-6));
        assert_eq!(p.kernels[0].bytes_read, Some(Bytes(1e6)));
        assert_eq!(p.kernels[0].total_flops(), Flop(2000.0));
        assert_eq!(p.kernels[1].name, "b");
        assert!((p.total_time.get() - 30e-6).abs() < 1e-18);
        Ok(())
    }

    #[test]
    fn zero_time_and_zero_bytes_say_which_field_is_null() -> Result<(), Box<dyn std::error::Error>>
    {
        // Kernel 1 lasts 0 µs and moves 0 bytes: 0/0 for its rates and its intensity.
        let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes_read.sum\",\"dram__bytes_write.sum\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\"\n\
                    \"\",\"\",\"usecond\",\"byte\",\"byte\",\"inst\"\n\
                    \"0\",\"a\",\"10\",\"1\",\"500\",\"1,000\"\n\
                    \"1\",\"b\",\"0\",\"0\",\"0\",\"0\"\n";
        let p = parse(text, "w.csv")?;
        let said = |needle: &str| p.notes.iter().any(|n| n.contains(needle));
        assert!(
            said("1 kernel(s) last 0 s (#1 `b`): their fraction of roof is null"),
            "{:?}",
            p.notes
        );
        assert!(
            said("1 kernel(s) move 0 bytes (#1 `b`): their intensity is null"),
            "{:?}",
            p.notes
        );
        Ok(())
    }

    #[test]
    fn bad_files_name_the_line_and_the_fix() -> Result<(), Box<dyn std::error::Error>> {
        // Unknown unit on a metric we use.
        let e = parse(
            &long(&["\"0\",\"k\",\"gpu__time_duration.sum\",\"fortnight\",\"1\""]),
            "u.csv",
        )
        .unwrap_err();
        assert!(
            e.message.contains("u.csv: line 3") && e.message.contains("`fortnight`"),
            "{}",
            e.message
        );
        assert!(e
            .hint
            .ok_or("expected a value, got None")?
            .contains("usecond"));
        // A row cut short.
        let e = parse(&long(&["\"0\",\"k\",\"gpu__time_duration.sum\""]), "t.csv").unwrap_err();
        assert!(
            e.message.contains("line 3") && e.message.contains("cut short"),
            "{}",
            e.message
        );
        // A quote never closed (the file ends mid-field).
        let e = parse(&long(&["\"0\",\"k\",\"gpu__time_dur"]), "t.csv").unwrap_err();
        assert!(e.message.contains("line 3"), "{}", e.message);
        // Wrong columns.
        let e = parse("\"Kernel\",\"Time\"\n\"a\",\"1\"\n", "c.csv").unwrap_err();
        assert!(
            e.message.contains("line 1") && e.message.contains("`ID`"),
            "{}",
            e.message
        );
        // A kernel without a duration.
        let e = parse(
            &long(&["\"0\",\"k\",\"dram__bytes_read.sum\",\"byte\",\"1\""]),
            "d.csv",
        )
        .unwrap_err();
        assert!(
            e.message.contains("gpu__time_duration.sum"),
            "{}",
            e.message
        );
        // Counters past 10^24 base units (1e308 bytes), durations over 10^6 s (1e25 ns = 1e16 s)
        // and under 1 ns are refused: the rates over them would overflow.
        for (row, says) in [
            (
                "\"0\",\"k\",\"dram__bytes_read.sum\",\"byte\",\"1e308\"",
                "value 1e308 is beyond the largest accepted",
            ),
            (
                "\"0\",\"k\",\"gpu__time_duration.sum\",\"nsecond\",\"1e25\"",
                "is over 1e6 s",
            ),
            (
                "\"0\",\"k\",\"gpu__time_duration.sum\",\"nsecond\",\"0.001\"",
                "below 1 ns",
            ),
        ] {
            let e = parse(&long(&[row]), "c.csv").unwrap_err();
            assert!(e.message.contains(says), "{row}: {}", e.message);
            assert!(e.hint.is_some());
        }
        // Header only.
        let e = parse(&long(&[]), "h.csv").unwrap_err();
        assert!(e.message.contains("no kernel rows"), "{}", e.message);
        // Not a number.
        let e = parse(
            &long(&["\"0\",\"k\",\"gpu__time_duration.sum\",\"usecond\",\"fast\""]),
            "n.csv",
        )
        .unwrap_err();
        assert!(
            e.message.contains("`fast` is not a number"),
            "{}",
            e.message
        );
        // A negative counter: the line, and how to get a clean export.
        let e = parse(
            &long(&["\"0\",\"k\",\"dram__bytes_read.sum\",\"byte\",\"-5\""]),
            "m.csv",
        )
        .unwrap_err();
        assert!(
            e.message
                .contains("m.csv: line 3: metric `dram__bytes_read.sum`: negative value -5"),
            "{}",
            e.message
        );
        assert!(e.hint.ok_or("no hint")?.contains("ncu --csv"));
        Ok(())
    }

    #[test]
    fn kernel_without_flop_counters_is_kept_but_not_costed(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let p = parse(
            &long(&["\"0\",\"k\",\"gpu__time_duration.sum\",\"usecond\",\"1\""]),
            "t.csv",
        )?;
        assert_eq!(p.kernels[0].cost_source, CostSource::Unknown);
        assert!(p.notes[0].contains("lack FLOP counters"), "{:?}", p.notes);
        Ok(())
    }
}
