//! Numbers as a derivation writes them.

/// A number as a person would write it in a derivation: counted integers exactly (thousands
/// separated by commas from 100,000: `33,570,816`), other values with four significant figures,
/// round figures from a million up and very large or small values in engineering notation
/// (`154.8e12`, `768e9`, `43.71e-6`).
pub fn plain_number(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "NaN".into()
        } else {
            "∞".into()
        };
    }
    if x == 0.0 {
        return "0".into();
    }
    let a = x.abs();
    // Counted integers exactly; round figures from 1e6 up (datasheet peaks, bandwidths) below.
    let round_figure = a >= 1e6 && {
        let mut i = a as u64;
        while i.is_multiple_of(10) {
            i /= 10;
        }
        i < 10_000
    };
    if x.fract() == 0.0 && a < 1e15 && !round_figure {
        let digits = format!("{}", a as u64);
        let body = if a >= 1e5 {
            let mut out = String::new();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 3 == 0 {
                    out.push(',');
                }
                out.push(c);
            }
            out
        } else {
            digits
        };
        return if x < 0.0 { format!("-{body}") } else { body };
    }
    if (1e-2..1e5).contains(&a) {
        let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{x:.decimals$}");
        return trim_zeros(&s);
    }
    // Engineering notation: exponent a multiple of 3, mantissa with 4 significant figures.
    let exp = (a.log10().floor() as i32).div_euclid(3) * 3;
    let mant = x / 10f64.powi(exp);
    let decimals = (3 - mant.abs().log10().floor() as i32).max(0) as usize;
    let m = trim_zeros(&format!("{mant:.decimals$}"));
    format!("{m}e{exp}")
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// A number written so that it reads back as exactly `x`: [`plain_number`] when that is exact
/// (`4096`, `33,570,816`, `0.5`), else the shortest decimal that parses to the same f64
/// (`0.015625`). The substituted formulas of an operator's cost use it, so that redoing the
/// arithmetic gives the printed value to the last bit.
pub fn exact_number(x: f64) -> String {
    let plain = plain_number(x);
    if plain.replace(',', "").parse::<f64>().ok() == Some(x) {
        plain
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_numbers_read_like_hand_arithmetic() {
        assert_eq!(plain_number(4096.0), "4096");
        assert_eq!(plain_number(33_570_816.0), "33,570,816");
        assert_eq!(plain_number(0.99951), "0.9995");
        assert_eq!(plain_number(201.5625), "201.6");
        assert_eq!(plain_number(154.8e12), "154.8e12");
        assert_eq!(plain_number(768e9), "768e9");
        assert_eq!(plain_number(4.3712e-5), "43.71e-6");
        assert_eq!(plain_number(0.0013987), "1.399e-3");
        assert_eq!(plain_number(2.0), "2");
        assert_eq!(plain_number(0.5), "0.5");
        assert_eq!(plain_number(1365.3333), "1365");
    }

    #[test]
    fn exact_numbers_read_back_exactly() {
        // fp16 scale per 128 weights: 2/128 = 0.015625, which four figures write as 0.01562
        // (the tie rounds to even).
        assert_eq!(plain_number(2.0 / 128.0), "0.01562");
        assert_eq!(exact_number(2.0 / 128.0), "0.015625");
        // Exact already: unchanged.
        assert_eq!(exact_number(33_570_816.0), "33,570,816");
        assert_eq!(exact_number(0.5), "0.5");
        assert_eq!(exact_number(154.8e12), "154.8e12");
        // 8·(1 − (6/8)^3) = 4.625 is exact; 8·(1 − (7/8)^3) = 2.640625 too.
        assert_eq!(exact_number(2.640625), "2.640625");
        let third = 1.0 / 3.0;
        assert_eq!(exact_number(third).parse::<f64>(), Ok(third));
    }
}
