//! Request traces for `roofline serve-sim --trace`: a CSV with a header row naming the columns
//! `arrival_s` (seconds from the start of the run, finite, ≥ 0), `prompt` and `output` (tokens,
//! whole numbers ≥ 1), in any order, other columns ignored; one request per row, rows in any
//! order of arrival.
//!
//! ```text
//! arrival_s,prompt,output
//! 0.0,2048,128
//! 0.25,512,64
//! ```

use crate::error::InputError;
use crate::read::{read_text, PROFILE_LIMIT};
use roofline_core::serve::sim::{Request, MAX_REQUESTS};
use std::path::Path;

const HINT: &str = "a trace is a CSV with the header `arrival_s,prompt,output` and one request \
                    per row: arrival in seconds (≥ 0), prompt and output in tokens (≥ 1)";

/// Reads the trace at `path` ([module docs](self)).
///
/// # Errors
/// As [`read_text`] (up to [`PROFILE_LIMIT`] bytes), then as [`parse`].
pub fn read(path: &Path) -> Result<Vec<Request>, InputError> {
    let text = read_text(
        path,
        "trace ",
        PROFILE_LIMIT,
        "give the path of a CSV trace file",
        HINT,
    )?;
    parse(&text, &path.display().to_string())
}

/// Parses a trace's text; `origin` names it in errors.
///
/// # Errors
/// An [`InputError`] naming the file, line and field: a column missing from the header, a row
/// that is not valid CSV or lacks a field, an arrival that is not a finite number ≥ 0, a prompt
/// or output that is not a whole number ≥ 1; no rows, or more than [`MAX_REQUESTS`].
pub fn parse(text: &str, origin: &str) -> Result<Vec<Request>, InputError> {
    let mut rdr = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = rdr
        .headers()
        .map_err(|e| InputError::new(format!("`{origin}` line 1: {e}")).with_hint(HINT))?
        .clone();
    let column = |name: &str| {
        header.iter().position(|h| h == name).ok_or_else(|| {
            InputError::new(format!(
                "`{origin}` line 1: no `{name}` column in the header `{}`",
                cut(&header.iter().collect::<Vec<_>>().join(","))
            ))
            .with_hint(HINT)
        })
    };
    let (ia, ip, io) = (column("arrival_s")?, column("prompt")?, column("output")?);
    let mut out = Vec::new();
    for record in rdr.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            InputError::new(format!("`{origin}` line {line}: {e}")).with_hint(HINT)
        })?;
        let line = record.position().map_or(0, |p| p.line());
        if record.iter().all(str::is_empty) {
            continue;
        }
        if out.len() == MAX_REQUESTS {
            return Err(InputError::new(format!(
                "`{origin}` line {line}: more than {MAX_REQUESTS} requests"
            ))
            .with_hint("simulate a part of the trace: a simulation takes at most 10^7 requests"));
        }
        let field = |i: usize, name: &str| {
            record.get(i).ok_or_else(|| {
                InputError::new(format!("`{origin}` line {line}: no `{name}` field"))
                    .with_hint(HINT)
            })
        };
        let bad = |name: &str, v: &str, want: &str| {
            InputError::new(format!(
                "`{origin}` line {line}, field `{name}`: `{}` is not {want}",
                cut(v)
            ))
            .with_hint(HINT)
        };
        let a = field(ia, "arrival_s")?;
        let arrival = match a.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => x,
            _ => return Err(bad("arrival_s", a, "a finite number of seconds ≥ 0")),
        };
        let tokens = |i: usize, name: &str| {
            let v = field(i, name)?;
            match v.parse::<u64>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => Err(bad(name, v, "a whole number of tokens ≥ 1")),
            }
        };
        out.push(Request {
            arrival,
            prompt: tokens(ip, "prompt")?,
            output: tokens(io, "output")?,
        });
    }
    if out.is_empty() {
        return Err(
            InputError::new(format!("`{origin}`: no requests after the header")).with_hint(HINT),
        );
    }
    Ok(out)
}

/// `s` cut to 80 characters.
fn cut(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_reads_in_any_column_order_with_extra_columns() -> Result<(), InputError> {
        let t = "prompt, output ,arrival_s,id\n2048,128,0.0,a\n512,64,0.25,b\n\n";
        let r = parse(t, "t.csv")?;
        assert_eq!(
            r,
            vec![
                Request {
                    arrival: 0.0,
                    prompt: 2048,
                    output: 128
                },
                Request {
                    arrival: 0.25,
                    prompt: 512,
                    output: 64
                },
            ]
        );
        Ok(())
    }

    #[test]
    fn errors_name_the_file_line_and_field() {
        let cases = [
            (
                "arrival,prompt,output\n0,1,1\n",
                "line 1: no `arrival_s` column",
            ),
            (
                "arrival_s,prompt,output\n0,1,1\n-1,1,1\n",
                "line 3, field `arrival_s`: `-1`",
            ),
            (
                "arrival_s,prompt,output\n0,x,1\n",
                "line 2, field `prompt`: `x`",
            ),
            (
                "arrival_s,prompt,output\n0,1,0\n",
                "line 2, field `output`: `0`",
            ),
            (
                "arrival_s,prompt,output\n0,1,2.5\n",
                "line 2, field `output`: `2.5`",
            ),
            (
                "arrival_s,prompt,output\n0,1\n",
                "line 2: no `output` field",
            ),
            (
                "arrival_s,prompt,output\ninf,1,1\n",
                "line 2, field `arrival_s`: `inf`",
            ),
            ("arrival_s,prompt,output\n", "no requests"),
        ];
        for (text, want) in cases {
            let e = parse(text, "t.csv").unwrap_err();
            assert!(e.message.starts_with("`t.csv`"), "{}", e.message);
            assert!(e.message.contains(want), "{} lacks {want}", e.message);
            assert!(e.hint.is_some());
        }
    }
}
