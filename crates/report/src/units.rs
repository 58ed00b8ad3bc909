//! Human-readable numbers: decimal SI prefixes (1 GFLOP = 1e9 FLOP, 1 MB = 1e6 bytes), four
//! significant figures at most, and the unit.

/// `value` with a decimal SI prefix and `unit`: `human(68.72e9, "FLOP")` → `68.7 GFLOP`.
/// Two decimal places below 10, else one.
pub fn human(value: f64, unit: &str) -> String {
    if !value.is_finite() {
        return format!("{value} {unit}");
    }
    if value == 0.0 {
        return format!("0 {unit}");
    }
    const PREFIXES: [(f64, &str); 7] = [
        (1e18, "E"),
        (1e15, "P"),
        (1e12, "T"),
        (1e9, "G"),
        (1e6, "M"),
        (1e3, "k"),
        (1.0, ""),
    ];
    let a = value.abs();
    for (scale, p) in PREFIXES {
        if a >= scale * 0.99995 {
            let x = value / scale;
            return if x.abs() < 9.995 {
                format!("{x:.2} {p}{unit}")
            } else {
                format!("{x:.1} {p}{unit}")
            };
        }
    }
    format!("{value:.3} {unit}")
}

/// FLOP with a prefix: `68.7 GFLOP`.
pub fn human_flops(v: f64) -> String {
    human(v, "FLOP")
}

/// Bytes with a decimal prefix: `67.1 MB`.
pub fn human_bytes(v: f64) -> String {
    human(v, "B")
}

/// FLOP/s with a prefix: `154.8 TFLOP/s`.
pub fn human_flops_per_s(v: f64) -> String {
    human(v, "FLOP/s")
}

/// Bandwidth with a prefix: `768.0 GB/s`.
pub fn human_bytes_per_s(v: f64) -> String {
    human(v, "B/s")
}

/// Seconds as s, ms, µs or ns: `443.8 µs`.
pub fn human_seconds(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0 s".into()
    } else if a >= 1.0 {
        format!("{v:.2} s")
    } else if a >= 1e-3 {
        format!("{:.2} ms", v * 1e3)
    } else if a >= 1e-6 {
        format!("{:.1} µs", v * 1e6)
    } else {
        format!("{:.1} ns", v * 1e9)
    }
}

/// A duration of any length: days (`30.00 d`), hours (`17.28 h`), minutes (`12.50 min`), or
/// [`human_seconds`] below a minute. A day is 86,400 s.
pub fn human_duration(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        format!("{v} s")
    } else if a >= 86_400.0 {
        format!("{:.2} d", v / 86_400.0)
    } else if a >= 3_600.0 {
        format!("{:.2} h", v / 3_600.0)
    } else if a >= 60.0 {
        format!("{:.2} min", v / 60.0)
    } else {
        human_seconds(v)
    }
}

/// A fraction as a percentage with `decimals` places: `percent(0.46229, 1)` → `46.2 %`.
pub fn percent(fraction: f64, decimals: usize) -> String {
    format!("{:.*} %", decimals, fraction * 100.0)
}

/// Arithmetic intensity: `1024.0` / `0.99` / `12.3` (FLOP/byte implied by the column).
pub fn human_intensity(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_decimal() {
        assert_eq!(human_flops(68_719_476_736.0), "68.7 GFLOP");
        assert_eq!(human_bytes(67_108_864.0), "67.1 MB");
        assert_eq!(human_bytes(999.0), "999.0 B");
        assert_eq!(human_flops_per_s(154.8e12), "154.8 TFLOP/s");
        assert_eq!(human_bytes_per_s(3.35e12), "3.35 TB/s");
        assert_eq!(human(0.0, "B"), "0 B");
    }

    #[test]
    fn durations_reach_days() {
        assert_eq!(human_duration(30.0 * 86_400.0), "30.00 d");
        assert_eq!(human_duration(2.0 * 3_600.0), "2.00 h");
        assert_eq!(human_duration(90.0), "1.50 min");
        assert_eq!(human_duration(0.014), "14.00 ms");
        assert_eq!(percent(0.462_29, 1), "46.2 %");
    }

    #[test]
    fn seconds_pick_a_unit() {
        assert_eq!(human_seconds(443.8e-6), "443.8 µs");
        assert_eq!(human_seconds(0.0125), "12.50 ms");
        assert_eq!(human_seconds(2.5), "2.50 s");
        assert_eq!(human_seconds(5e-9), "5.0 ns");
    }
}
