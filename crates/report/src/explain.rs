//! Rendering of worked derivations (`--explain`): a text that reads like a worked exercise,
//! JSON (the derivation's data and its conclusion), CSV (one row per step) and an HTML fragment
//! for the report.

use crate::plot::xml_escape;
use crate::units::{human, human_bytes, human_bytes_per_s, human_flops_per_s};
use crate::units::{human_flops, human_seconds};
use crate::{Format, WriteError};
use roofline_core::explain::{exact_number, plain_number, Derivation, Outcome, Step};
use roofline_core::roofline::Bound;
use std::io::Write;

/// A result as written after `=`: the exact value with its unit, and the human form in
/// parentheses where it helps (`33,554,432 FLOP (33.55 MFLOP)`, `43.71e-6 s (43.71 µs)`).
pub fn result_text(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Verdict { text } => text.clone(),
        Outcome::Quantity { value, unit } => {
            let v = *value;
            let exact = plain_number(v);
            let human_form = match *unit {
                "FLOP" if v >= 1e4 => Some(human_flops(v)),
                "B" if v >= 1e4 => Some(human_bytes(v)),
                "FLOP/s" => Some(human_flops_per_s(v)),
                "B/s" => Some(human_bytes_per_s(v)),
                "s" => Some(human_seconds(v)),
                _ => None,
            };
            let base = match *unit {
                "" => exact,
                "×" => format!("{}×", human_ratio(v)),
                "%" => format!("{v:.1} %"),
                u => format!("{exact} {u}"),
            };
            match human_form {
                Some(h) if !base.starts_with(&h) => format!("{base} ({h})"),
                _ => base,
            }
        }
    }
}

fn human_ratio(v: f64) -> String {
    if !v.is_finite() {
        "∞".into()
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The one-sentence answer the derivation arrives at.
pub fn conclusion(d: &Derivation) -> String {
    let r = &d.row;
    let p = &r.point();
    if r.cost.flops.get() == 0.0 {
        return format!(
            "{} does no arithmetic: it is pure data movement, {} at {}, {}.",
            d.name,
            human_bytes(r.cost.bytes().get()),
            human_bytes_per_s(d.bandwidth.get()),
            human_seconds(p.time.get())
        );
    }
    let share = p.attainable.get() / r.peak().get() * 100.0;
    match p.bound {
        Bound::Memory => format!(
            "{} is memory-bound: its arithmetic intensity, {} FLOP/B, is {}× below the ridge point \
             ({} FLOP/B); it attains {} of the {} peak ({share:.2} %) and takes {}, the time to move \
             {} at {}.",
            d.name,
            plain_number(p.intensity.get()),
            human_ratio(d.distance.factor),
            plain_number(p.ridge.get()),
            human_flops_per_s(p.attainable.get()),
            human_flops_per_s(r.peak().get()),
            human_seconds(p.time.get()),
            human_bytes(r.cost.bytes().get()),
            human_bytes_per_s(d.bandwidth.get())
        ),
        Bound::Compute => format!(
            "{} is compute-bound: its arithmetic intensity, {} FLOP/B, is {}× above the ridge \
             point ({} FLOP/B); it runs at the {} peak and takes {}, the time to do {}.",
            d.name,
            plain_number(p.intensity.get()),
            human_ratio(d.distance.factor),
            plain_number(p.ridge.get()),
            human_flops_per_s(r.peak().get()),
            human_seconds(p.time.get()),
            human(r.cost.flops.get(), "FLOP")
        ),
        Bound::Network | Bound::Latency => format!(
            "{} is a collective: no FLOPs, {} on the link, {} ({}-bound).",
            d.name,
            human_bytes(r.link().map_or(0.0, |l| l.transfer.get() * r.roof.bandwidth.get())),
            human_seconds(p.time.get()),
            p.bound
        ),
    }
}

/// The lines of one step: `symbol = formula`, `= values`, `= result` (a line is left out when
/// it would repeat the one before); a verdict reads `formula`, then `values ⇒ verdict`.
pub fn step_lines(s: &Step) -> Vec<String> {
    let result = result_text(&s.outcome);
    if let Outcome::Verdict { text } = &s.outcome {
        return vec![s.formula.clone(), format!("{}  ⇒  {text}", s.substituted)];
    }
    let mut lines = if s.symbol.is_empty() {
        vec![s.formula.clone()]
    } else {
        vec![format!("{} = {}", s.symbol, s.formula)]
    };
    if s.substituted != s.formula && !result.starts_with(&s.substituted) {
        lines.push(format!("= {}", s.substituted));
    }
    lines.push(format!("= {result}"));
    lines
}

/// Writes step `i` (numbered from 1) with its lines and source (`as above` when it repeats
/// `previous_source`).
pub(crate) fn write_step(
    out: &mut dyn Write,
    i: usize,
    s: &Step,
    previous_source: Option<&str>,
) -> Result<(), WriteError> {
    writeln!(out, "{:>2}. {}", i + 1, s.quantity)?;
    let pad = if s.symbol.is_empty() {
        2
    } else {
        s.symbol.chars().count() + 1
    };
    for (j, line) in step_lines(s).iter().enumerate() {
        if j == 0 || matches!(s.outcome, Outcome::Verdict { .. }) {
            writeln!(out, "    {line}")?;
        } else {
            writeln!(out, "    {}{line}", " ".repeat(pad))?;
        }
    }
    if previous_source == Some(s.source.as_str()) {
        writeln!(out, "    source: as above")?;
    } else {
        writeln!(out, "    source: {}", s.source)?;
    }
    Ok(())
}

/// Writes one derivation as a worked exercise: setting, given values, numbered steps (formula,
/// values put in, result, source) and the conclusion.
///
/// # Errors
/// A failed write.
pub fn write_text(d: &Derivation, out: &mut dyn Write) -> Result<(), WriteError> {
    writeln!(out, "{} ({}) on {}", d.name, d.kind, d.device)?;
    for c in &d.context {
        writeln!(out, "  {c}")?;
    }
    writeln!(out)?;
    writeln!(out, "Given")?;
    let w = d
        .given
        .iter()
        .map(|g| g.symbol.chars().count() + 3 + given_value(g).chars().count())
        .max()
        .unwrap_or(0);
    for g in &d.given {
        let lhs = format!("{} = {}", g.symbol, given_value(g));
        let origin = g
            .origin
            .as_ref()
            .map(|o| format!("; here {o}"))
            .unwrap_or_default();
        writeln!(
            out,
            "  {lhs}{}  {}{origin}",
            " ".repeat(w.saturating_sub(lhs.chars().count())),
            g.meaning
        )?;
    }
    writeln!(out)?;
    let mut previous: Option<&str> = None;
    for (i, s) in d.steps.iter().enumerate() {
        write_step(out, i, s, previous)?;
        previous = Some(s.source.as_str());
    }
    writeln!(out)?;
    writeln!(out, "So: {}", conclusion(d))?;
    Ok(())
}

/// A given as its formulas use it: exactly ([`exact_number`]), so that `s_b = 0.015625 B` reads
/// as the substituted formula does.
fn given_value(g: &roofline_core::explain::Given) -> String {
    if g.unit.is_empty() {
        exact_number(g.value)
    } else {
        format!("{} {}", exact_number(g.value), g.unit)
    }
}

/// Writes derivations in `format`: text separated by a blank line, JSON
/// (`{"schema_version": 2, "derivations": [...]}` with each derivation's data and conclusion),
/// or CSV (one row per step).
///
/// # Errors
/// A failed write.
pub fn write_derivations(
    ds: &[(Option<String>, Derivation)],
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => {
            for (i, (stage, d)) in ds.iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                    writeln!(out, "{}", "─".repeat(72))?;
                }
                if let Some(s) = stage {
                    writeln!(out, "[{s}]")?;
                }
                write_text(d, out)?;
            }
        }
        Format::Json => {
            let doc = crate::doc::explain::ExplainDoc {
                schema_version: crate::doc::SchemaVersion,
                derivations: ds
                    .iter()
                    .map(|(stage, d)| crate::doc::explain::DerivationDoc::of(stage.clone(), d))
                    .collect(),
            };
            crate::doc::write_json(&doc, out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "stage",
                "operator",
                "step",
                "quantity",
                "symbol",
                "formula",
                "substituted",
                "value",
                "unit",
                "verdict",
                "source",
            ])?;
            for (stage, d) in ds {
                for (i, s) in d.steps.iter().enumerate() {
                    let (value, unit, verdict) = match &s.outcome {
                        Outcome::Quantity { value, unit } => {
                            (value.to_string(), unit.to_string(), String::new())
                        }
                        Outcome::Verdict { text } => (String::new(), String::new(), text.clone()),
                    };
                    w.write_record([
                        stage.clone().unwrap_or_default(),
                        d.name.clone(),
                        (i + 1).to_string(),
                        s.quantity.clone(),
                        s.symbol.clone(),
                        s.formula.clone(),
                        s.substituted.clone(),
                        value,
                        unit,
                        verdict,
                        s.source.clone(),
                    ])?;
                }
            }
            w.flush()?;
        }
    }
    Ok(())
}

/// The derivation as an HTML fragment (a `<section class="derivation">` with a given-values
/// list and an ordered list of steps), every text escaped.
pub fn to_html(d: &Derivation) -> String {
    let e = xml_escape;
    let mut h = String::new();
    h.push_str(&format!(
        "<section class=\"derivation\" id=\"derivation-{}\">\n<h3>{} ({}) on {}</h3>\n",
        e(&d.name),
        e(&d.name),
        e(d.kind.as_str()),
        e(&d.device)
    ));
    for c in &d.context {
        h.push_str(&format!("<p class=\"context\">{}</p>\n", e(c)));
    }
    h.push_str("<h4>Given</h4>\n<table class=\"given\"><tbody>\n");
    for g in &d.given {
        h.push_str(&format!(
            "<tr><td class=\"sym\">{} = {}</td><td>{}{}</td></tr>\n",
            e(&g.symbol),
            e(&given_value(g)),
            e(&g.meaning),
            g.origin
                .as_ref()
                .map(|o| format!("; here {}", e(o)))
                .unwrap_or_default()
        ));
    }
    h.push_str("</tbody></table>\n<ol class=\"steps\">\n");
    for s in &d.steps {
        let lines: Vec<String> = step_lines(s).iter().map(|l| e(l)).collect();
        let (body, last) = lines.split_at(lines.len().saturating_sub(1));
        h.push_str(&format!(
            "<li><span class=\"quantity\">{}</span><div class=\"math\">{}{}<strong>{}</strong></div><div class=\"source\">source: {}</div></li>\n",
            e(&s.quantity),
            body.join("<br>"),
            if body.is_empty() { "" } else { "<br>" },
            last.join(""),
            e(&s.source)
        ));
    }
    h.push_str(&format!(
        "</ol>\n<p class=\"conclusion\">So: {}</p>\n</section>\n",
        e(&conclusion(d))
    ));
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_carry_units_and_human_forms() {
        let q = |value, unit| Outcome::Quantity { value, unit };
        assert_eq!(
            result_text(&q(33_554_432.0, "FLOP")),
            "33,554,432 FLOP (33.6 MFLOP)"
        );
        assert_eq!(result_text(&q(4.3712e-5, "s")), "43.71e-6 s (43.7 µs)");
        assert_eq!(result_text(&q(201.5625, "FLOP/B")), "201.6 FLOP/B");
        assert_eq!(result_text(&q(201.66, "×")), "201.7×");
        assert_eq!(result_text(&q(32.0, "")), "32");
    }
}
