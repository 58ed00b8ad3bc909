//! Parsers of flag values: precisions, sizes, counts, durations, percentages, lists.

use roofline_core::precision::Precision;

pub fn parse_preset(s: &str) -> Result<roofline_core::fusion::Preset, String> {
    s.parse()
}

/// A short duration: a number with an optional unit s, ms, us, µs or ns (seconds by default).
pub fn parse_duration_small(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = [
        ("ms", 1e-3),
        ("us", 1e-6),
        ("µs", 1e-6),
        ("ns", 1e-9),
        ("s", 1.0),
    ]
    .iter()
    .find_map(|(u, k)| t.strip_suffix(u).map(|n| (n, *k)))
    .unwrap_or((t, 1.0));
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a duration: use e.g. 5us, 0.01ms or 5e-6"))?;
    let secs = v * scale;
    if !secs.is_finite() || !(0.0..=1.0).contains(&secs) {
        return Err(format!("`{s}` must be between 0 and 1 s"));
    }
    Ok(secs)
}

/// `--memory-reserve`: `10%` (a share of capacity), or a size in bytes with an optional
/// decimal (`kB`, `MB`, `GB`, `TB`) or binary (`KiB`, `MiB`, `GiB`, `TiB`) unit.
pub fn parse_reserve(s: &str) -> Result<roofline_core::memory::Reserve, String> {
    use roofline_core::memory::Reserve;
    use roofline_core::units::Bytes;
    let t = s.trim();
    let bad = || {
        format!(
            "`{}` is not a share (`10%`) or a size (`2GB`, `1.5GiB`, `0`)",
            t.chars().take(40).collect::<String>()
        )
    };
    let r = if let Some(pct) = t.strip_suffix('%') {
        Reserve::Fraction(pct.trim().parse::<f64>().map_err(|_| bad())? / 100.0)
    } else {
        let split = t
            .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let scale = match unit.trim() {
            // A bare number is a size only when it is 0: `0.9` is far likelier a share meant
            // as vLLM's --gpu-memory-utilization than 0.9 bytes.
            "" if num.trim().parse::<f64>() == Ok(0.0) => 1.0,
            "" => {
                return Err(format!(
                    "`{}` has no unit: give a share (`10%`) or a size with its unit (`2GB`)",
                    t.chars().take(40).collect::<String>()
                ))
            }
            u => size_unit(u).ok_or_else(bad)?,
        };
        Reserve::Bytes(Bytes(num.trim().parse::<f64>().map_err(|_| bad())? * scale))
    };
    r.validate()?;
    Ok(r)
}

/// Bytes in one `unit` of a size: `B`; decimal `kB` (or `KB`), `MB`, `GB`, `TB`; binary
/// `KiB`, `MiB`, `GiB`, `TiB`.
fn size_unit(unit: &str) -> Option<f64> {
    Some(match unit {
        "B" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0f64.powi(4),
        _ => return None,
    })
}

/// `--bytes`: a size with a binary (`KiB`, `MiB`, `GiB`, `TiB`) or decimal (`kB`, `MB`, `GB`,
/// `TB`) unit, or bare bytes (`4096`), from 0 to 2^50 B (1 PiB; the core's
/// [`roofline_core::comm::collective::MAX_BYTES`]).
pub fn parse_bytes(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let shown: String = t.chars().take(40).collect();
    let bad = || format!("`{shown}` is not a size (`64MiB`, `1GB`, `4096`)");
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" => 1.0,
        u => size_unit(u).ok_or_else(bad)?,
    };
    let v = num.trim().parse::<f64>().map_err(|_| bad())? * scale;
    let max = roofline_core::comm::collective::MAX_BYTES;
    if !v.is_finite() || v < 0.0 || v > max {
        return Err(format!("`{shown}` is outside 0 to 1 PiB (2^50 B)"));
    }
    Ok(v)
}

/// `--devices`, `--nodes`: a whole number from 1 to 2^20 (the core's
/// [`roofline_core::comm::system::MAX_DEVICES`]).
pub fn parse_devices(s: &str) -> Result<u64, String> {
    let max = u64::from(roofline_core::comm::system::MAX_DEVICES);
    match s.trim().parse::<u64>() {
        Ok(v) if (1..=max).contains(&v) => Ok(v),
        Ok(v) => Err(format!("{v} is outside 1 to {max}")),
        Err(_) => Err(format!(
            "`{}` is not a whole number of at least 1",
            s.trim().chars().take(40).collect::<String>()
        )),
    }
}

/// `--algorithm`: `auto`, `ring`, `tree`, `nvls`, `hierarchical`, `direct`.
pub fn parse_algorithm(s: &str) -> Result<roofline_core::comm::AlgorithmChoice, String> {
    s.parse()
        .map_err(|e: roofline_core::comm::collective::UnknownName| e.to_string())
}

pub fn parse_precision(s: &str) -> Result<Precision, String> {
    s.parse::<Precision>().map_err(|e| e.to_string())
}

/// A whole number of at least 1 and at most 2^24 (a larger size is taken for a typo).
pub fn parse_positive(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(v) if v > roofline_core::one_op::MAX_DIM => Err(format!(
            "{v} is beyond the largest accepted size ({})",
            roofline_core::one_op::MAX_DIM
        )),
        Ok(v) => Ok(v),
        Err(_) => Err(format!(
            "`{s}` is not a whole number: give a count such as 4096"
        )),
    }
}

/// A count or rate: a number (`70e9`, `7000000000`, `7_000_000_000`) with an optional decimal
/// suffix k/K (1e3), M (1e6), B or G (1e9), T (1e12), P (1e15): `70B`, `1.4T`, `312T`.
pub fn parse_count(s: &str) -> Result<f64, String> {
    let t = s.trim().replace('_', "");
    let (num, scale) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        Some('B' | 'G') => (&t[..t.len() - 1], 1e9),
        Some('T') => (&t[..t.len() - 1], 1e12),
        Some('P') => (&t[..t.len() - 1], 1e15),
        _ => (t.as_str(), 1.0),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number: use e.g. 70e9, 70B or 1.4T"))?;
    let v = v * scale;
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("`{s}` must be a positive number"));
    }
    Ok(v)
}

/// A duration of any length: `30d`, `720h`, `90m` (or `90min`), `3600s`, `14ms`, `5us`, or a
/// bare number of seconds.
pub fn parse_time(s: &str) -> Result<f64, String> {
    let t = s.trim();
    const UNITS: [(&str, f64); 9] = [
        ("min", 60.0),
        ("ms", 1e-3),
        ("us", 1e-6),
        ("µs", 1e-6),
        ("ns", 1e-9),
        ("d", 86_400.0),
        ("h", 3_600.0),
        ("m", 60.0),
        ("s", 1.0),
    ];
    let (num, scale) = UNITS
        .iter()
        .find_map(|(u, k)| t.strip_suffix(u).map(|n| (n, *k)))
        .unwrap_or((t, 1.0));
    let v: f64 = num.trim().parse().map_err(|_| {
        format!(
            "`{s}` is not a duration: use a number with d, h, m, s, ms or us (30d, 720h, 90m, \
             3600s, 14ms), or a bare number of seconds"
        )
    })?;
    let secs = v * scale;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!("`{s}` must be a positive duration"));
    }
    Ok(secs)
}

/// Shortest time accepted for one step (`--tpot`, `--step-time`) or a run (`--time`): 1 µs,
/// 2,000× below the fastest published decode step (≈ 0.5 ms per token, Cerebras and Groq
/// serving Llama 3 70B).
pub const MIN_STEP_S: f64 = 1e-6;
/// Longest time accepted for one step (`--tpot`, `--step-time`): a day.
pub const MAX_STEP_S: f64 = 86_400.0;
/// Longest training run accepted (`--time`): 100 years of 365.25 days, a human lifetime.
pub const MAX_RUN_S: f64 = 100.0 * 365.25 * 86_400.0;
/// Fewest parameters accepted (`--params`, `--sizes`): 10^6, under 1 % of GPT-2 small's
/// 124 M; a bare `--params 7` is then refused rather than read as seven parameters.
pub const MIN_PARAMS: f64 = 1e6;
/// Most output tokens per second accepted (`--tokens-per-s`): the largest batch (2^24
/// sequences) at the shortest step (1 µs), ≈ 1.7·10^13.
pub const MAX_TOKENS_PER_S: f64 = roofline_core::workload::MAX_BATCH as f64 / MIN_STEP_S;
/// Fewest output tokens per second accepted: one per [`MAX_STEP_S`], a token a day.
pub const MIN_TOKENS_PER_S: f64 = 1.0 / MAX_STEP_S;

/// `v` (parsed from `s`) within `min..=max` of `unit`, else a message naming both bounds.
fn within(s: &str, v: f64, (min, max): (f64, f64), unit: &str) -> Result<f64, String> {
    if !(min..=max).contains(&v) {
        return Err(format!(
            "`{}` is not plausible: give {min:e} to {max:e} {unit}",
            s.trim()
        ));
    }
    Ok(v)
}

/// `--tpot` and `--step-time`: a duration ([`parse_time`]) of 1 µs to a day.
pub fn parse_step_time(s: &str) -> Result<f64, String> {
    within(s, parse_time(s)?, (MIN_STEP_S, MAX_STEP_S), "s")
}

/// `--time`: a duration ([`parse_time`]) of 1 µs to 100 years.
pub fn parse_run_time(s: &str) -> Result<f64, String> {
    within(s, parse_time(s)?, (MIN_STEP_S, MAX_RUN_S), "s")
}

/// `--params`, `--sizes`: a count ([`parse_count`]) of 10^6 to 10^15 parameters (the core's
/// [`roofline_core::model::MAX_PARAMETERS`]).
pub fn parse_params(s: &str) -> Result<f64, String> {
    let max = roofline_core::model::MAX_PARAMETERS as f64;
    within(
        s,
        parse_count(s)?,
        (MIN_PARAMS, max),
        "parameters (7B = 7e9)",
    )
}

/// `--tokens-per-s`: a rate ([`parse_count`]) of one token a day to ≈ 1.7·10^13 tokens/s.
pub fn parse_tokens_per_s(s: &str) -> Result<f64, String> {
    let v = parse_count(s)?;
    within(s, v, (MIN_TOKENS_PER_S, MAX_TOKENS_PER_S), "tokens/s")
}

/// `--peak`: a dense peak ([`parse_count`]) of 1e6 to 1e18 FLOP/s, the range a chip file
/// accepts ([`roofline_core::device::limits`]).
pub fn parse_peak(s: &str) -> Result<f64, String> {
    use roofline_core::device::limits::{MAX_PEAK, MIN_PEAK};
    within(
        s,
        parse_count(s)?,
        (MIN_PEAK, MAX_PEAK),
        "FLOP/s (312T = 312e12)",
    )
}

/// `--bandwidth`: a bandwidth ([`parse_count`]) of 1e6 to 1e15 B/s, the range a chip file
/// accepts ([`roofline_core::device::limits`]).
pub fn parse_bandwidth(s: &str) -> Result<f64, String> {
    use roofline_core::device::limits::{MAX_BANDWIDTH, MIN_BANDWIDTH};
    within(
        s,
        parse_count(s)?,
        (MIN_BANDWIDTH, MAX_BANDWIDTH),
        "B/s (2T = 2e12)",
    )
}

/// `none`, `selective`, `full`, or `partial=F` (F in 0..=1: the fraction of non-attention forward
/// FLOPs recomputed, attention always; PaLM 540B is `partial=0.75`).
pub fn parse_recompute(s: &str) -> Result<roofline_core::mfu::Recompute, String> {
    use roofline_core::mfu::Recompute;
    match s.trim().to_ascii_lowercase().as_str() {
        "none" => Ok(Recompute::None),
        "selective" => Ok(Recompute::Selective),
        "full" => Ok(Recompute::Full),
        other => {
            let f = other
                .strip_prefix("partial=")
                .and_then(|f| f.parse::<f64>().ok())
                .filter(|f| (0.0..=1.0).contains(f))
                .ok_or_else(|| {
                    format!("`{s}`: use none, selective, full, or partial=F with F between 0 and 1")
                })?;
            Ok(Recompute::Partial(f))
        }
    }
}

/// An MFU in percent, `40` or `40%`, as a fraction (0.40).
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v: f64 = t
        .strip_suffix('%')
        .unwrap_or(t)
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a percentage: use e.g. 40 or 40%"))?;
    if !(v > 0.0 && v <= 100.0) {
        return Err(format!("`{s}` must be above 0 and at most 100"));
    }
    Ok(v / 100.0)
}

/// A target MFU in percent, as [`parse_percent`], refusing a bare number below 1 (`0.45`), which
/// reads as a fraction: the error asks for the percent.
pub fn parse_target_percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    if !t.ends_with('%') && t.parse::<f64>().is_ok_and(|v| v > 0.0 && v < 1.0) {
        // The percent it probably means, rounded to undo binary noise (0.57 × 100 = 56.99…).
        let pct = (t.parse::<f64>().unwrap_or(0.0) * 1e8).round() / 1e6;
        return Err(format!(
            "`{s}` looks like a fraction; the value is a percent: write {pct} for {pct} %, or {s}% for {s} %"
        ));
    }
    parse_percent(s)
}

/// Whole numbers: a comma-separated list whose items are numbers or ranges, merged into one
/// list sorted ascending without repeats:
///
/// - `a..b` doubles from a up to b: `1..1024` is 1, 2, 4, …, 1024;
/// - `a..b:s` steps by s from a: `1..256:8` is 1, 9, 17, …, 249; b is in the list only when it
///   is on the grid (a + k·s), never added when it is not;
/// - `a..b*f` multiplies by a whole factor f ≥ 2 from a: `1..256*4` is 1, 4, 16, 64, 256 (b,
///   again, only when on the grid).
///
/// `a..=b` is read as `a..b` (b is always the inclusive bound). At most [`MAX_LIST`] values.
/// Examples: `1,8,32,128`, `1..1024`, `3,16..64`, `1..64:16`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UintList(pub Vec<u64>);

/// The most values one list may hold: each is a full analysis, and a sweep's table has a row
/// for each.
pub const MAX_LIST: usize = 4096;

/// How a range `a..b` steps.
#[derive(Debug, Clone, Copy)]
enum RangeStep {
    /// a, a + s, a + 2s, …
    Linear(u64),
    /// a, a·f, a·f², …
    Factor(u64),
}

/// Parses a [`UintList`].
pub fn parse_uint_list(s: &str) -> Result<UintList, String> {
    let mut out: Vec<u64> = Vec::new();
    let too_many = |item: &str, n: usize| {
        format!(
            "`{item}`: the list would hold {n} values, more than {MAX_LIST}: use a larger step \
             (`a..b:s`), a factor (`a..b*f`), or a shorter range"
        )
    };
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let num = |x: &str| {
            x.trim().replace('_', "").parse::<u64>().map_err(|_| {
                format!(
                    "`{x}` in `{item}` is not a whole number: give numbers and ranges such as \
                     `1,8,32`, `1..1024`, `1..256:8` or `1..256*4`"
                )
            })
        };
        let Some((a, rest)) = item.split_once("..") else {
            out.push(num(item)?);
            if out.len() > MAX_LIST {
                return Err(too_many(item, out.len()));
            }
            continue;
        };
        let (b, step) = if let Some((b, st)) = rest.split_once(':') {
            (b, RangeStep::Linear(num(st)?))
        } else if let Some((b, f)) = rest.split_once('*') {
            (b, RangeStep::Factor(num(f)?))
        } else {
            (rest, RangeStep::Factor(2))
        };
        let (a, b) = (num(a)?, num(b.trim_start_matches('='))?);
        if a == 0 || b < a {
            return Err(format!(
                "`{item}`: a range a..b needs 1 ≤ a ≤ b: e.g. `1..1024` (doubling), `1..256:8` \
                 (step 8) or `1..256*4` (factor 4)"
            ));
        }
        match step {
            RangeStep::Linear(0) => {
                return Err(format!(
                    "`{item}`: the step of a..b:s must be at least 1: e.g. `1..256:8` is 1, 9, \
                     17, …, 249"
                ))
            }
            RangeStep::Linear(st) => {
                let n = (b - a) / st + 1;
                let total = out.len() as u64 + n;
                if total > MAX_LIST as u64 {
                    return Err(too_many(item, usize::try_from(total).unwrap_or(usize::MAX)));
                }
                out.extend((0..n).map(|k| a + k * st));
            }
            RangeStep::Factor(f) if f < 2 => {
                return Err(format!(
                    "`{item}`: the factor of a..b*f must be a whole number of at least 2: e.g. \
                     `1..256*4` is 1, 4, 16, 64, 256 (`a..b:s` steps by adding s)"
                ))
            }
            RangeStep::Factor(f) => {
                let mut v = a;
                while v <= b {
                    out.push(v);
                    match v.checked_mul(f) {
                        Some(n) => v = n,
                        None => break,
                    }
                }
                if out.len() > MAX_LIST {
                    return Err(too_many(item, out.len()));
                }
            }
        }
    }
    if out.is_empty() {
        return Err(format!(
            "`{s}`: give at least one number, e.g. `8` or `1..1024`"
        ));
    }
    out.sort_unstable();
    out.dedup();
    Ok(UintList(out))
}

/// A count of at least 1.
pub fn parse_positive_usize(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(v) => Ok(v),
        Err(_) => Err(format!(
            "`{s}` is not a whole number: give a count such as 20"
        )),
    }
}

/// A degree of parallelism or a device count: 1 to 2^20 (`roofline_core::comm::system::MAX_DEVICES`).
pub fn parse_degree(s: &str) -> Result<u32, String> {
    let max = roofline_core::comm::system::MAX_DEVICES;
    match s.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(v) if v > u64::from(max) => Err(format!("{v} is more than {max} devices")),
        Ok(v) => Ok(v as u32),
        // Digits too many for any count: too large, not malformed.
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
            Err(format!("{} is more than {max} devices", s.trim()))
        }
        Err(_) => Err(format!(
            "`{s}` is not a whole number: give a count such as 8"
        )),
    }
}

/// `--rate`: requests per second, `4/s` or `4` (finite, above 0, at most 10^6), or `inf`
/// (every request at time 0).
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let shown: String = t.chars().take(40).collect();
    let num = t.strip_suffix("/s").unwrap_or(t).trim();
    if num == "inf" {
        return Ok(f64::INFINITY);
    }
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{shown}` is not a rate: give requests per second, e.g. 4/s"))?;
    if !(v.is_finite() && v > 0.0 && v <= 1e6) {
        return Err(format!(
            "`{shown}` must be above 0 and at most 10^6 requests/s (`inf`: all at once)"
        ));
    }
    Ok(v)
}

/// `--requests`: a whole number from 1 to 10^7.
pub fn parse_requests(s: &str) -> Result<usize, String> {
    let max = roofline_core::serve::sim::MAX_REQUESTS;
    let shown: String = s.trim().chars().take(40).collect();
    match s.trim().replace('_', "").parse::<usize>() {
        Ok(v) if (1..=max).contains(&v) => Ok(v),
        Ok(v) => Err(format!("{v} is outside 1 to 10^7 requests")),
        Err(_) => Err(format!("`{shown}` is not a whole number of requests")),
    }
}

/// A length distribution: `fixed:N`, `uniform:A..B`, `normal:MEAN,SD`, `lognormal:MU,SIGMA`;
/// lengths from 1 to 2^26 tokens (a normal's mean likewise, its sd at least 0).
pub fn parse_dist(s: &str) -> Result<roofline_core::serve::sim::Dist, String> {
    use roofline_core::serve::sim::Dist;
    let max = roofline_core::workload::MAX_TOKENS;
    let t = s.trim();
    let shown: String = t.chars().take(40).collect();
    let usage = "give fixed:N, uniform:A..B, normal:MEAN,SD or lognormal:MU,SIGMA";
    let (kind, rest) = t
        .split_once(':')
        .ok_or_else(|| format!("`{shown}` is not a distribution: {usage}"))?;
    let tokens = |v: &str| match v.trim().parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{shown}`: `{}` is not a whole number of tokens from 1 to 2^26",
            v.trim()
        )),
    };
    let pair = |sep: &str| {
        let (a, b) = rest
            .split_once(sep)
            .ok_or_else(|| format!("`{shown}`: {usage}"))?;
        let num = |v: &str| {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("`{shown}`: `{}` is not a number", v.trim()))
        };
        Ok::<_, String>((num(a)?, num(b)?))
    };
    match kind.trim() {
        "fixed" => Ok(Dist::Fixed(tokens(rest)?)),
        "uniform" => {
            let (a, b) = rest
                .split_once("..")
                .ok_or_else(|| format!("`{shown}`: write uniform:A..B, e.g. uniform:64..512"))?;
            let (lo, hi) = (tokens(a)?, tokens(b)?);
            if lo > hi {
                return Err(format!(
                    "`{shown}`: the lower end {lo} is above the upper {hi}"
                ));
            }
            Ok(Dist::Uniform { lo, hi })
        }
        "normal" => {
            let (mean, sd) = pair(",")?;
            if !(1.0..=max as f64).contains(&mean) || sd < 0.0 {
                return Err(format!(
                    "`{shown}`: needs a mean from 1 to 2^26 tokens and an sd of at least 0"
                ));
            }
            Ok(Dist::Normal { mean, sd })
        }
        "lognormal" => {
            let (mu, sigma) = pair(",")?;
            if !(0.0..=(max as f64).ln()).contains(&mu) || sigma < 0.0 {
                return Err(format!(
                    "`{shown}`: needs mu (of ln tokens) from 0 to ln 2^26 ≈ 18 and sigma of at \
                     least 0"
                ));
            }
            Ok(Dist::LogNormal { mu, sigma })
        }
        other => Err(format!(
            "`{}` is not a distribution: {usage}",
            other.chars().take(40).collect::<String>()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_core::mfu::Recompute;

    #[test]
    fn times_take_days_hours_minutes_seconds() {
        assert_eq!(parse_time("30d"), Ok(2_592_000.0));
        assert_eq!(parse_time("720h"), Ok(2_592_000.0));
        assert_eq!(parse_time("90m"), Ok(5_400.0));
        assert_eq!(parse_time("90min"), Ok(5_400.0));
        assert_eq!(parse_time("3600s"), Ok(3_600.0));
        assert_eq!(parse_time("3600"), Ok(3_600.0));
        assert!(parse_time("14ms").is_ok_and(|t| (t - 0.014).abs() < 1e-15));
        let e = parse_time("30x").unwrap_err();
        assert!(e.contains("`30x`") && e.contains("30d"), "{e}");
        assert!(parse_time("0s").is_err() && parse_time("-1h").is_err());
    }

    #[test]
    fn counts_take_exponents_and_suffixes() {
        assert_eq!(parse_count("70e9"), Ok(70e9));
        assert_eq!(parse_count("70B"), Ok(70e9));
        assert_eq!(parse_count("1.4T"), Ok(1.4e12));
        assert_eq!(parse_count("7_000"), Ok(7000.0));
        assert!(parse_count("seventy").is_err() && parse_count("0").is_err());
    }

    #[test]
    fn floats_are_bounded_both_ways() {
        // 1e-300 (every `--plot` spun forever on it) and 1e300 are refused, naming the range.
        for parse in [
            parse_peak,
            parse_bandwidth,
            parse_params,
            parse_tokens_per_s,
        ] {
            for v in ["1e-300", "1e300"] {
                let e = parse(v).unwrap_err();
                assert!(e.contains("not plausible") && e.contains(v), "{e}");
            }
        }
        // H100 SXM: 989.5 TFLOP/s dense bf16, 3.35 TB/s (datasheet).
        assert_eq!(parse_peak("989.5T"), Ok(989.5e12));
        assert_eq!(parse_bandwidth("3.35T"), Ok(3.35e12));
        assert!(parse_peak("2e18").is_err() && parse_bandwidth("2e15").is_err());
        // Llama-2-70B: 70B parameters; `7` alone is far below any language model.
        assert_eq!(parse_params("70B"), Ok(70e9));
        assert!(parse_params("7").is_err() && parse_params("2e15").is_err());
        // Databricks's worked example: TPOT 14 ms; a step of 1 ns or of two days is refused.
        assert!(parse_step_time("14ms").is_ok_and(|t| (t - 0.014).abs() < 1e-15));
        assert!(parse_step_time("1ns").is_err() && parse_step_time("2d").is_err());
        // A 30-day run is accepted, 200 years (6.3e9 s) is not.
        assert_eq!(parse_run_time("30d"), Ok(2_592_000.0));
        assert!(parse_run_time("73050d").is_err());
        // 2^24 sequences at 1 µs: 16,777,216 / 1e-6 ≈ 1.68e13 tokens/s is the most.
        assert!(parse_tokens_per_s("1.6e13").is_ok() && parse_tokens_per_s("1.7e13").is_err());
    }

    #[test]
    fn sizes_take_binary_and_decimal_units() {
        assert_eq!(parse_bytes("64MiB"), Ok(67_108_864.0));
        assert_eq!(parse_bytes("1GB"), Ok(1e9));
        assert_eq!(parse_bytes("1.5 KiB"), Ok(1536.0));
        assert_eq!(parse_bytes("4096"), Ok(4096.0));
        assert_eq!(parse_bytes("2kB"), Ok(2000.0));
        assert_eq!(parse_bytes("0"), Ok(0.0));
        for bad in ["", "MiB", "64 mb", "-1MiB", "2PiB", "1e300", "nan", "64XB"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_devices("8"), Ok(8));
        assert!(parse_devices("0").is_err());
        assert!(parse_devices("2000000").is_err());
        assert!(parse_algorithm("nvls").is_ok());
        assert!(parse_algorithm("rings").is_err());
    }

    #[test]
    fn recompute_percent_and_lists() {
        assert_eq!(parse_recompute("full"), Ok(Recompute::Full));
        assert_eq!(
            parse_recompute("partial=0.75"),
            Ok(Recompute::Partial(0.75))
        );
        assert!(parse_recompute("partial=2").is_err() && parse_recompute("some").is_err());
        assert_eq!(parse_percent("40"), Ok(0.4));
        assert_eq!(parse_percent("55%"), Ok(0.55));
        assert!(parse_percent("0").is_err() && parse_percent("120").is_err());
        // 0.45 is refused with the percent it probably means; 0.45% and 45 are not ambiguous.
        let e = parse_target_percent("0.45").unwrap_err();
        assert!(e.contains("write 45 for 45 %"), "{e}");
        assert!(parse_target_percent("0.45%").is_ok_and(|v| (v - 0.0045).abs() < 1e-15));
        assert_eq!(parse_target_percent("45"), Ok(0.45));
        assert_eq!(parse_target_percent("1"), Ok(0.01));
        assert!(parse_target_percent("0.57")
            .unwrap_err()
            .contains("write 57 for 57 %"));
        assert_eq!(
            parse_uint_list("1,8,32,128"),
            Ok(UintList(vec![1, 8, 32, 128]))
        );
        assert_eq!(parse_uint_list("1..1024").map(|l| l.0.len()), Ok(11));
        assert_eq!(
            parse_uint_list("3,16..64"),
            Ok(UintList(vec![3, 16, 32, 64]))
        );
        assert!(parse_uint_list("8..2").is_err() && parse_uint_list("x").is_err());
    }

    #[test]
    fn rates_requests_and_distributions_parse_and_bad_ones_are_refused() {
        use roofline_core::serve::sim::Dist;
        assert_eq!(parse_rate("4/s"), Ok(4.0));
        assert_eq!(parse_rate(" 0.5 "), Ok(0.5));
        assert_eq!(parse_rate("inf"), Ok(f64::INFINITY));
        for bad in ["0", "-1/s", "nan", "4/min", "1e7", ""] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_requests("100_000"), Ok(100_000));
        for bad in ["0", "10000001", "1.5", "x"] {
            assert!(parse_requests(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_dist("fixed:2048"), Ok(Dist::Fixed(2048)));
        assert_eq!(
            parse_dist("uniform:64..512"),
            Ok(Dist::Uniform { lo: 64, hi: 512 })
        );
        assert_eq!(
            parse_dist("normal:1024,256"),
            Ok(Dist::Normal {
                mean: 1024.0,
                sd: 256.0
            })
        );
        assert_eq!(
            parse_dist("lognormal:6,0.5"),
            Ok(Dist::LogNormal {
                mu: 6.0,
                sigma: 0.5
            })
        );
        for bad in [
            "fixed:0",
            "fixed:x",
            "fixed:67108865",
            "uniform:512..64",
            "uniform:64-512",
            "normal:1024",
            "normal:0,1",
            "normal:100,-1",
            "zipf:1",
            "2048",
        ] {
            assert!(parse_dist(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn linear_ranges_step_and_keep_b_only_on_the_grid() {
        // 1 + 8k ≤ 256 for k = 0..=31: 1, 9, …, 249 (256 is not 1 + 8k).
        let want: Vec<u64> = (0..32).map(|k| 1 + 8 * k).collect();
        assert_eq!(want.last(), Some(&249));
        assert_eq!(parse_uint_list("1..256:8"), Ok(UintList(want)));
        // 1, 17, 33, 49 (65 > 64).
        assert_eq!(
            parse_uint_list("1..64:16"),
            Ok(UintList(vec![1, 17, 33, 49]))
        );
        // b on the grid: 0·4 + 4 … 16 = 4, 8, 12, 16.
        assert_eq!(parse_uint_list("4..16:4"), Ok(UintList(vec![4, 8, 12, 16])));
        assert_eq!(parse_uint_list("5..5:3"), Ok(UintList(vec![5])));
    }

    #[test]
    fn geometric_ranges_multiply() {
        assert_eq!(
            parse_uint_list("1..256*4"),
            Ok(UintList(vec![1, 4, 16, 64, 256]))
        );
        // 3, 9, 27, 81 (243 > 100).
        assert_eq!(
            parse_uint_list("3..100*3"),
            Ok(UintList(vec![3, 9, 27, 81]))
        );
        // Doubling stays the default.
        assert_eq!(
            parse_uint_list("3..100"),
            Ok(UintList(vec![3, 6, 12, 24, 48, 96]))
        );
    }

    #[test]
    fn merged_lists_are_sorted_without_repeats() {
        // 64, 1, 2, 4, 8, 16, 32, 64, 8, 16, 24, 32 → sorted, each once.
        assert_eq!(
            parse_uint_list("64,1..64,8..32:8"),
            Ok(UintList(vec![1, 2, 4, 8, 16, 24, 32, 64]))
        );
    }

    #[test]
    fn bad_ranges_name_the_value_and_give_a_hint() {
        for (bad, says) in [
            ("1..256:0", "step of a..b:s must be at least 1"),
            (
                "1..256*1",
                "factor of a..b*f must be a whole number of at least 2",
            ),
            ("1..256*x", "`x` in `1..256*x` is not a whole number"),
            ("0..8:2", "needs 1 ≤ a ≤ b"),
            ("1..5000:1", "would hold 5000 values, more than 4096"),
            ("1..4096:1,5000", "would hold 4097 values"),
        ] {
            let e = parse_uint_list(bad).err().unwrap_or_default();
            assert!(e.contains(says), "{bad}: {e}");
            let hint = ["e.g.", "such as", "use "].iter().any(|h| e.contains(h));
            assert!(hint, "{bad}: no hint in {e}");
        }
        // 4096 values are allowed: 1, 2, …, 4096.
        assert_eq!(parse_uint_list("1..4096:1").map(|l| l.0.len()), Ok(4096));
    }
}
