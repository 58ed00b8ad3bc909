//! Human-readable numbers: decimal SI prefixes (1 GFLOP = 1e9 FLOP, 1 MB = 1e6 bytes), four
//! significant figures at most, and the unit. Past the largest prefix (exa, 1e18) and below the
//! smallest unit shown, scientific notation (`1.51e23 FLOP`, `2.40e7 s`): never a number of
//! hundreds of digits.

/// Scientific notation with three significant figures: `1.51e23`.
fn sci(v: f64) -> String {
    format!("{v:.2e}")
}

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
    // Past 999.95 E (the last value exa prints in four figures), or below a thousandth.
    if !(1e-3..999.95e18).contains(&a) {
        return format!("{} {unit}", sci(value));
    }
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

/// Seconds as s, ms, µs or ns: `443.8 µs`; scientific from 10^6 s (`2.40e7 s`) and below
/// 0.05 ns.
pub fn human_seconds(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0 s".into()
    } else if !v.is_finite() {
        format!("{v} s")
    } else if !(5e-11..1e6).contains(&a) {
        format!("{} s", sci(v))
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
    } else if a >= 1e5 * 86_400.0 {
        format!("{} d", sci(v / 86_400.0))
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
/// From 10^6 % on, scientific: `percent(1e300, 1)` → `1.00e302 %`.
pub fn percent(fraction: f64, decimals: usize) -> String {
    let v = fraction * 100.0;
    if v.is_finite() && v.abs() >= 1e6 {
        return format!("{} %", sci(v));
    }
    format!("{:.*} %", decimals, v)
}

/// Arithmetic intensity: `1024.0` / `0.99` / `12.3` (FLOP/byte implied by the column).
/// From 10^6 on, scientific (`1.00e9`).
pub fn human_intensity(v: f64) -> String {
    if v.is_finite() && v >= 1e6 {
        sci(v)
    } else if v >= 100.0 {
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
    fn past_exa_and_below_the_units_is_scientific() {
        // 151,115.7 EFLOP (an unfused qk_matmul at 64 Mi tokens) = 1.511157e23 FLOP.
        assert_eq!(human_flops(1.511157e23), "1.51e23 FLOP");
        assert_eq!(human_bytes(1e300), "1.00e300 B");
        assert_eq!(human_flops_per_s(1e-300), "1.00e-300 FLOP/s");
        // 999.9 E still has its prefix; 1,000 E does not.
        assert_eq!(human_bytes(999.9e18), "999.9 EB");
        assert_eq!(human_bytes(1e21), "1.00e21 B");
        // 24,030,926.14 s (an analyze time past a year) and 1e300 s.
        assert_eq!(human_seconds(24_030_926.14), "2.40e7 s");
        assert_eq!(human_seconds(1e300), "1.00e300 s");
        assert_eq!(human_seconds(999_999.0), "999999.00 s");
        assert_eq!(human_seconds(1e-300), "1.00e-300 s");
        // 1e5 days = 8.64e9 s and more.
        assert_eq!(human_duration(8.64e9), "1.00e5 d");
        assert_eq!(human_duration(99_999.0 * 86_400.0), "99999.00 d");
        assert_eq!(percent(1e300, 1), "1.00e302 %");
        assert_eq!(percent(9_999.0, 1), "999900.0 %");
        assert_eq!(human_intensity(1e9), "1.00e9");
        // No output is longer than a few characters, whatever the magnitude.
        for e in -300..=300 {
            let v = 10f64.powi(e);
            for s in [
                human_bytes(v),
                human_seconds(v),
                human_duration(v),
                percent(v, 1),
            ] {
                assert!(s.len() <= 14, "{s}");
            }
        }
    }

    #[test]
    fn seconds_pick_a_unit() {
        assert_eq!(human_seconds(443.8e-6), "443.8 µs");
        assert_eq!(human_seconds(0.0125), "12.50 ms");
        assert_eq!(human_seconds(2.5), "2.50 s");
        assert_eq!(human_seconds(5e-9), "5.0 ns");
    }
}
