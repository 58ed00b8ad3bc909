//! Every worked derivation redone by an evaluator written here, for every operator of every
//! embedded preset, in prefill and decode, unquantized (bf16) and quantized (int4 weights with an
//! fp16 scale per 128, fp8 KV cache), with and without FlashAttention.
//!
//! For each step with a number:
//! - its `substituted` string, parsed and evaluated here, gives its value. The operator's cost
//!   steps write every number exactly, so they must agree to a relative 1e-9; the roofline steps
//!   quote earlier results at four significant figures (`min(989.5e12, 0.9995·3.35e12)`), so each
//!   number there stands for the interval its printed digits round from, and the value must lie
//!   in the interval the expression spans (widened by 1e-9).
//! - its `formula`, evaluated with the givens' values and the values of the steps before it,
//!   gives its value to a relative 1e-9 (required for the cost steps and the roofline arithmetic;
//!   a formula in words, such as the peak's description, is not an expression).
//!
//! And the FLOPs, bytes read and bytes written steps are the analysis row's cost, bit for bit.

use roofline_core::analysis::analyze;
use roofline_core::device::Device;
use roofline_core::explain::{explain_node, explain_op, Derivation, Outcome};
use roofline_core::ops::{ExpertGemm, FlashAttention, Gemm, Op};
use roofline_core::precision::Precision;
use roofline_core::workload::{Precisions, Stage, Workload};
use roofline_inputs::config::{load_model, preset_ids};
use roofline_inputs::hardware::find_device;
use std::collections::HashMap;

/// A closed interval of reals, the value a printed number may stand for.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Iv {
    lo: f64,
    hi: f64,
}

impl Iv {
    fn exact(x: f64) -> Iv {
        Iv { lo: x, hi: x }
    }
    fn add(self, r: Iv) -> Iv {
        Iv {
            lo: self.lo + r.lo,
            hi: self.hi + r.hi,
        }
    }
    fn sub(self, r: Iv) -> Iv {
        Iv {
            lo: self.lo - r.hi,
            hi: self.hi - r.lo,
        }
    }
    fn mul(self, r: Iv) -> Iv {
        let p = [
            self.lo * r.lo,
            self.lo * r.hi,
            self.hi * r.lo,
            self.hi * r.hi,
        ];
        Iv {
            lo: p.iter().copied().fold(f64::INFINITY, f64::min),
            hi: p.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
    fn div(self, r: Iv) -> Result<Iv, String> {
        if r.lo <= 0.0 && r.hi >= 0.0 {
            return Err("division by an interval holding 0".into());
        }
        Ok(self.mul(Iv {
            lo: 1.0 / r.hi,
            hi: 1.0 / r.lo,
        }))
    }
}

/// How numbers are read: exactly as written, or as the interval their digits round from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Digits {
    Exact,
    Rounded,
}

/// A recursive-descent evaluator of the derivations' notation: numbers with thousands commas
/// (`33,570,816`) and exponents (`154.8e12`, `43.71e-6`), symbols (`m`, `s_b`, `φ`), `+`, `−`,
/// `·`, `×`, `/`, brackets, `min(a, b)` and `max(a, b)`. It stops at the first text that
/// continues no expression (a note in brackets after a formula) and returns the rest.
struct Parser<'a> {
    s: &'a [char],
    i: usize,
    digits: Digits,
    vars: &'a HashMap<String, f64>,
}

impl Parser<'_> {
    fn skip_spaces(&mut self) {
        while self.s.get(self.i) == Some(&' ') {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<char> {
        self.skip_spaces();
        self.s.get(self.i).copied()
    }
    fn expr(&mut self) -> Result<Iv, String> {
        let mut v = self.term()?;
        loop {
            match self.peek() {
                Some('+') => {
                    self.i += 1;
                    v = v.add(self.term()?);
                }
                Some('−') | Some('-') => {
                    self.i += 1;
                    v = v.sub(self.term()?);
                }
                _ => return Ok(v),
            }
        }
    }
    fn term(&mut self) -> Result<Iv, String> {
        let mut v = self.factor()?;
        loop {
            match self.peek() {
                Some('·') | Some('×') => {
                    self.i += 1;
                    v = v.mul(self.factor()?);
                }
                Some('/') => {
                    self.i += 1;
                    v = v.div(self.factor()?)?;
                }
                _ => return Ok(v),
            }
        }
    }
    fn factor(&mut self) -> Result<Iv, String> {
        match self.peek() {
            Some('(') => {
                self.i += 1;
                let v = self.expr()?;
                self.expect(')')?;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() => self.number(),
            Some(c) if c.is_alphabetic() => self.name(),
            other => Err(format!("unexpected {other:?} at {}", self.i)),
        }
    }
    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected {c:?} at {}", self.i))
        }
    }
    fn name(&mut self) -> Result<Iv, String> {
        let start = self.i;
        while let Some(&c) = self.s.get(self.i) {
            if c.is_alphanumeric() || c == '_' {
                self.i += 1;
            } else {
                break;
            }
        }
        let name: String = self.s[start..self.i].iter().collect();
        if name == "min" || name == "max" {
            self.expect('(')?;
            let a = self.expr()?;
            self.expect(',')?;
            let b = self.expr()?;
            self.expect(')')?;
            return Ok(if name == "min" {
                Iv {
                    lo: a.lo.min(b.lo),
                    hi: a.hi.min(b.hi),
                }
            } else {
                Iv {
                    lo: a.lo.max(b.lo),
                    hi: a.hi.max(b.hi),
                }
            });
        }
        self.vars
            .get(&name)
            .map(|&v| Iv::exact(v))
            .ok_or(format!("unknown symbol {name}"))
    }
    /// A number; in `Rounded` mode, the interval of half a unit of its last digit either side
    /// unless it has thousands commas (the derivations write only counted integers with them).
    fn number(&mut self) -> Result<Iv, String> {
        let mut mantissa = String::new();
        let mut frac_digits = 0i32;
        let mut in_frac = false;
        let mut exponent = 0i32;
        let mut commas = false;
        while let Some(&c) = self.s.get(self.i) {
            match c {
                '0'..='9' => {
                    mantissa.push(c);
                    if in_frac {
                        frac_digits += 1;
                    }
                    self.i += 1;
                }
                // A thousands separator is a comma followed by exactly three digits.
                ',' if !in_frac
                    && self.s[self.i + 1..]
                        .iter()
                        .take(3)
                        .all(|d| d.is_ascii_digit())
                    && self.s.len() >= self.i + 4
                    && !self.s.get(self.i + 4).is_some_and(|d| d.is_ascii_digit()) =>
                {
                    commas = true;
                    self.i += 1;
                }
                '.' if !in_frac => {
                    in_frac = true;
                    self.i += 1;
                }
                'e' => {
                    self.i += 1;
                    let start = self.i;
                    if self.s.get(self.i) == Some(&'-') {
                        self.i += 1;
                    }
                    while self.s.get(self.i).is_some_and(|d| d.is_ascii_digit()) {
                        self.i += 1;
                    }
                    let e: String = self.s[start..self.i].iter().collect();
                    exponent = e.parse().map_err(|_| format!("bad exponent {e}"))?;
                    break;
                }
                _ => break,
            }
        }
        let scale = exponent - frac_digits;
        let value = format!("{mantissa}e{scale}")
            .parse::<f64>()
            .map_err(|e| e.to_string())?;
        // Any number may be a rounding (`1466` for 1466.2, `92209` for 92209.375, `0.9995`)
        // but one with thousands commas, which only counted integers are written with.
        if self.digits == Digits::Exact || commas {
            return Ok(Iv::exact(value));
        }
        let half_unit = 0.5 * 10f64.powi(scale);
        Ok(Iv {
            lo: value - half_unit,
            hi: value + half_unit,
        })
    }
}

/// `text` evaluated: the interval, and the text left after the expression.
fn evaluate(
    text: &str,
    digits: Digits,
    vars: &HashMap<String, f64>,
) -> Result<(Iv, String), String> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = Parser {
        s: &chars,
        i: 0,
        digits,
        vars,
    };
    let v = p.expr()?;
    let rest: String = chars[p.i..].iter().collect();
    Ok((v, rest))
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Steps whose formula is arithmetic over earlier symbols.
const ARITHMETIC_STEPS: [&str; 8] = ["D", "I", "R", "A", "t_c", "t_m", "t", "t_pass"];

/// Redoes every step of `d`; `what` names it in failures. Returns the number of steps checked.
fn check(d: &Derivation, what: &str) -> Result<usize, String> {
    let mut vars: HashMap<String, f64> = HashMap::new();
    for g in &d.given {
        if g.meaning.is_empty() {
            return Err(format!("{what}: given {} has no meaning", g.symbol));
        }
        vars.insert(g.symbol.clone(), g.value);
    }
    let mut checked = 0;
    let roofline_from = d
        .steps
        .iter()
        .position(|s| s.symbol == "D")
        .ok_or("a derivation without its D step")?;
    for (i, s) in d.steps.iter().enumerate() {
        let Outcome::Quantity { value, unit } = s.outcome else {
            continue;
        };
        let expect = if unit == "%" { value / 100.0 } else { value };
        let cost_step = i < roofline_from;
        let at = |e: String| format!("{what}: step {} ({}): {e}", s.symbol, s.quantity);
        // The substitution.
        let digits = if cost_step {
            Digits::Exact
        } else {
            Digits::Rounded
        };
        let (iv, rest) = evaluate(&s.substituted, digits, &HashMap::new()).map_err(at)?;
        if !rest.trim().is_empty() {
            return Err(at(format!("`{}` left over in {}", rest, s.substituted)));
        }
        let slack = 1e-9 * expect.abs();
        let inside = iv.lo - slack <= expect && expect <= iv.hi + slack;
        if (cost_step && !close(iv.lo, expect)) || !inside {
            return Err(at(format!(
                "{} evaluates to [{}, {}], the step says {expect}",
                s.substituted, iv.lo, iv.hi
            )));
        }
        // The formula, over the givens and the steps before.
        let symbolic = cost_step
            || ARITHMETIC_STEPS.contains(&s.symbol.as_str())
            || s.quantity.starts_with("distance");
        let formula = evaluate(&s.formula, Digits::Exact, &vars);
        match formula {
            Ok((f, rest))
                if symbolic
                    && (rest.is_empty() || rest.starts_with('('))
                    && !close(f.lo, expect) =>
            {
                return Err(at(format!(
                    "formula {} evaluates to {}, the step says {expect}",
                    s.formula, f.lo
                )));
            }
            Ok((_, rest)) if symbolic && !(rest.is_empty() || rest.starts_with('(')) => {
                return Err(at(format!("`{rest}` left over in formula {}", s.formula)))
            }
            Err(e) if symbolic => return Err(at(format!("formula {}: {e}", s.formula))),
            _ => {}
        }
        if !s.symbol.is_empty() {
            vars.insert(s.symbol.clone(), value);
        }
        checked += 1;
    }
    Ok(checked)
}

fn value(d: &Derivation, symbol: &str) -> Option<f64> {
    match d.step(symbol)?.outcome {
        Outcome::Quantity { value, .. } => Some(value),
        Outcome::Verdict { .. } => None,
    }
}

fn workloads() -> Vec<(String, Workload)> {
    let bf16 = Precisions::uniform(Precision::Bf16);
    // int4 weights with one fp16 scale (2 B) per group of 128 weights and no zero point:
    // 2/128 B per weight; the KV cache in fp8.
    let int4 = Precisions::new(Precision::Int4, Precision::Bf16, Precision::Fp8)
        .with_weight_scale_bytes(2.0 / 128.0);
    let mut out = Vec::new();
    for stage in [Stage::Prefill, Stage::Decode] {
        for (pname, p) in [("bf16", bf16), ("int4-g128 fp8-kv", int4)] {
            for flash in [false, true] {
                let w = Workload::new(stage, 1, 2048, 2048)
                    .with_precisions(p)
                    .flash_attention(flash);
                out.push((format!("{stage} {pname} flash={flash}"), w));
            }
        }
    }
    out
}

#[test]
fn every_step_of_every_operator_of_every_preset_redoes() -> Result<(), Box<dyn std::error::Error>> {
    let devices: Vec<Device> = vec![find_device("h100-sxm")?, find_device("gaudi2")?];
    let (mut derivations, mut steps) = (0usize, 0usize);
    for preset in preset_ids() {
        let model = load_model(preset)?;
        for (wname, w) in workloads() {
            for device in &devices {
                let stage = analyze(&model, &w, device, roofline_core::memory::Reserve::DEFAULT)?;
                for row in &stage.rows {
                    let what = format!("{preset} {wname} {} {}", device.id, row.name);
                    let d = explain_node(&model, &stage, device, row.name)?;
                    steps += check(&d, &what)?;
                    derivations += 1;
                    // The cost steps are the analysis row's cost, bit for bit.
                    assert_eq!(value(&d, "F"), Some(row.cost.flops.get()), "{what}");
                    assert_eq!(value(&d, "D_r"), Some(row.cost.bytes_read.get()), "{what}");
                    assert_eq!(
                        value(&d, "D_w"),
                        Some(row.cost.bytes_written.get()),
                        "{what}"
                    );
                }
            }
        }
    }
    // 11 presets × 8 workloads × 2 chips, each with its 20-odd to 40-odd operators.
    assert!(derivations > 11 * 8 * 2 * 20, "{derivations} derivations");
    assert!(steps > derivations * 15, "{steps} steps");
    Ok(())
}

/// Operators no preset has: a sliding window, the FlashAttention-2 IO model, MLA's shared
/// latent, a GEMM with a bias and scales, experts touched a fractional number of times.
#[test]
fn operators_beyond_the_presets_redo_too() -> Result<(), Box<dyn std::error::Error>> {
    let device = find_device("h100-sxm")?;
    let attention = FlashAttention {
        batch: 2,
        heads: 32,
        kv_heads: 8,
        head_dim: 128,
        q_len: 1000,
        kv_len: 1000,
        causal: true,
        causal_count: roofline_core::ops::CausalCount::Exact,
        window: None,
        v_head_dim: None,
        kv_shared: false,
        block_q: None,
        act: Precision::Bf16,
        kv: Precision::Fp8,
    };
    let mut gemm = Gemm::uniform(7, 300, 500, Precision::Bf16);
    gemm.bias = true;
    gemm.b = Precision::Int4;
    gemm.b_scale = (2.0 + 0.5) / 64.0;
    let ops = [
        Op::FlashAttention(FlashAttention {
            window: Some(256),
            ..attention
        }),
        Op::FlashAttention(FlashAttention {
            block_q: Some(128),
            ..attention
        }),
        Op::FlashAttention(FlashAttention {
            block_q: Some(64),
            window: Some(300),
            ..attention
        }),
        Op::FlashAttention(FlashAttention {
            causal: false,
            q_len: 1,
            kv_len: 4097,
            ..attention
        }),
        Op::FlashAttention(FlashAttention {
            heads: 128,
            kv_heads: 1,
            head_dim: 576,
            v_head_dim: Some(512),
            kv_shared: true,
            q_len: 1,
            kv_len: 4097,
            ..attention
        }),
        Op::Gemm(gemm),
        Op::ExpertGemm(ExpertGemm {
            tokens: 3,
            top_k: 2,
            experts: 8,
            n: 14336,
            k: 4096,
            a: Precision::Bf16,
            b: Precision::Int4,
            b_scale: 2.0 / 128.0,
            c: Precision::Bf16,
            compute: Precision::Bf16,
        }),
    ];
    for (i, op) in ops.iter().enumerate() {
        let d = explain_op("op", op, &device, Precision::Bf16)?;
        let what = format!("op {i} {:?}", op.kind());
        check(&d, &what)?;
        let c = op.cost();
        assert_eq!(value(&d, "F"), Some(c.flops.get()), "{what}");
        assert_eq!(value(&d, "D_r"), Some(c.bytes_read.get()), "{what}");
        assert_eq!(value(&d, "D_w"), Some(c.bytes_written.get()), "{what}");
    }
    Ok(())
}

/// The evaluator against hand arithmetic, so that a wrong evaluator cannot pass the checks above.
#[test]
fn the_evaluator_reads_the_notation() -> Result<(), String> {
    let none = HashMap::new();
    let exact = |t: &str| evaluate(t, Digits::Exact, &none).map(|(v, _)| v.lo);
    assert_eq!(exact("2·1·4096·4096")?, 33_554_432.0);
    assert_eq!(
        exact("33,554,432 / 33,570,816")?,
        33_554_432.0 / 33_570_816.0
    );
    assert_eq!(
        exact("2048·(2048 − 2048) + 2048·(2048 + 1)/2")?,
        2_098_176.0
    );
    assert_eq!(exact("(32/4)·128·100·2")?, 204_800.0);
    assert_eq!(exact("max(216.8e-9, 11.29e-6)")?, 11.29e-6);
    assert_eq!(exact("min(154.8e12, 3.871·768e9)")?, 3.871 * 768e9);
    assert_eq!(exact("1·4096·2 + 4096·4096·(0.5 + 0.015625)")?, 8_658_944.0);
    // Rounded: 0.9995 stands for [0.99945, 0.99955], 100,000 for itself.
    let (iv, _) = evaluate("0.9995·100,000", Digits::Rounded, &none)?;
    assert!((iv.lo - 99_945.0).abs() < 1e-9 && (iv.hi - 99_955.0).abs() < 1e-9);
    // 1466 for [1465.5, 1466.5]; a note after a formula is left over.
    let (iv, _) = evaluate("33,570,816 + 1466", Digits::Rounded, &none)?;
    assert_eq!((iv.lo, iv.hi), (33_572_281.5, 33_572_282.5));
    let vars: HashMap<String, f64> = [("s".to_string(), 3.0), ("L".to_string(), 5.0)].into();
    let (iv, rest) = evaluate("s·(L − s) + s·(s + 1)/2 (causal: …)", Digits::Exact, &vars)?;
    assert_eq!((iv.lo, iv.hi), (12.0, 12.0));
    assert_eq!(rest, "(causal: …)");
    Ok(())
}
