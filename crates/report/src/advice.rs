//! "What to change" ([`roofline_core::serve::advice`] prices each change): per stage the
//! changes ranked by the time they save, each with the `roofline analyze` command line that
//! shows it, and the changes that do not apply with the reason; as a table, a JSON member and
//! an HTML section.

use crate::units::human_seconds;
use crate::{align_right_from, new_table, WriteError};
use roofline_core::serve::advice::{Change, StageAdvice};
use roofline_core::workload::Stage;
use schemars::JsonSchema;
use serde::Serialize;
use std::io::Write;

/// One word of the current command line: a flag (`--batch`) with its value (`8`), a switch
/// (`--flash-attention`, no value), or, with an empty flag, the positional model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The flag, or empty for the positional model.
    pub flag: String,
    /// Its value, or `None` for a switch.
    pub value: Option<String>,
}

impl Arg {
    /// A flag with a value.
    pub fn value(flag: &str, value: impl ToString) -> Self {
        Arg {
            flag: flag.into(),
            value: Some(value.to_string()),
        }
    }

    /// A switch.
    pub fn switch(flag: &str) -> Self {
        Arg {
            flag: flag.into(),
            value: None,
        }
    }

    /// The positional model.
    pub fn model(model: &str) -> Self {
        Arg {
            flag: String::new(),
            value: Some(model.into()),
        }
    }
}

/// One change to a command line.
enum Edit {
    /// Set the flag (replacing its value, or appending it).
    Set(Arg),
    /// Drop the flag.
    Remove(&'static str),
}

/// The flags that show `change` on `stage`.
fn edits(change: &Change, stage: Stage) -> Vec<Edit> {
    use Edit::{Remove, Set};
    match *change {
        Change::Fuse => vec![Set(Arg::value("--fusion", "max"))],
        Change::Batch { batch } => vec![Set(Arg::value("--batch", batch))],
        Change::WeightOnly {
            weight,
            group_size: None,
        } => vec![
            Set(Arg::value("--weight-precision", weight)),
            Remove("--group-size"),
            Remove("--zero-point-precision"),
        ],
        Change::WeightOnly {
            weight,
            group_size: Some(g),
        } => vec![
            Set(Arg::value("--weight-precision", weight)),
            Set(Arg::value("--group-size", g)),
            Set(Arg::value("--scale-precision", "fp16")),
            Remove("--zero-point-precision"),
        ],
        Change::Fp8 { kv } => vec![
            Set(Arg::value("--precision", "fp8")),
            Set(Arg::value("--kv-precision", kv)),
            Remove("--weight-precision"),
            Remove("--w8a8"),
            Remove("--group-size"),
            Remove("--scale-precision"),
            Remove("--zero-point-precision"),
        ],
        Change::TensorParallel { tp } => vec![Set(Arg::value("--tp", tp))],
        // FlashAttention is the default: the command drops the switch that turned it off.
        Change::FlashAttention => vec![Remove("--no-flash-attention")],
        Change::CudaGraphs {
            launch_per_kernel, ..
        } => vec![
            Set(Arg::value("--stage", stage)),
            Set(Arg::value(
                "--launch-overhead",
                format!("{:e}", launch_per_kernel.get()),
            )),
        ],
    }
}

/// A word quoted for a POSIX shell when it holds anything but safe characters.
fn shell_word(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=+,%@".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// `roofline analyze` with `base` and the flags that show `change` on `stage`.
pub fn command_line(base: &[Arg], change: &Change, stage: Stage) -> String {
    let mut args: Vec<Arg> = base.to_vec();
    for e in edits(change, stage) {
        match e {
            Edit::Remove(flag) => args.retain(|a| a.flag != flag),
            Edit::Set(new) => match args.iter_mut().find(|a| a.flag == new.flag) {
                Some(old) => *old = new,
                None => args.push(new),
            },
        }
    }
    let mut words = vec!["roofline".to_string(), "analyze".to_string()];
    for a in &args {
        if !a.flag.is_empty() {
            words.push(a.flag.clone());
        }
        if let Some(v) = &a.value {
            words.push(shell_word(v));
        }
    }
    words.join(" ")
}

/// What a change does, in words.
pub fn change_words(change: &Change) -> String {
    match *change {
        Change::Fuse => "fuse kernels (every rule: --fusion max)".into(),
        Change::Batch { batch } => format!("batch {batch} (per-token time)"),
        Change::WeightOnly {
            weight,
            group_size: None,
        } => format!("{weight} weight-only"),
        Change::WeightOnly {
            weight,
            group_size: Some(g),
        } => format!("{weight} weight-only, an fp16 scale per {g} weights"),
        Change::Fp8 { kv } => format!("fp8 weights and activations (KV cache {kv})"),
        Change::TensorParallel { tp } => format!("tensor parallel {tp} (on {tp} devices)"),
        Change::FlashAttention => "FlashAttention".into(),
        Change::CudaGraphs { kernels, .. } => {
            format!("CUDA graphs (1 launch instead of {kernels})")
        }
    }
}

/// A priced change in words, marked when its run does not fit the chip's memory.
fn priced_words(p: &roofline_core::serve::advice::Priced) -> String {
    match p.fits {
        Some(false) => format!("{} (does not fit)", change_words(&p.change)),
        _ => change_words(&p.change),
    }
}

/// The heading of a stage's advice: `prefill (TTFT 244.23 ms)`.
fn stage_heading(a: &StageAdvice) -> String {
    let what = match a.stage {
        Stage::Decode => "TPOT",
        _ => "TTFT",
    };
    format!("{} ({what} {})", a.stage, human_seconds(a.step.get()))
}

/// The saving as a share of the step: `12.3%`.
fn share(saving: f64, step: f64) -> String {
    format!("{:.1}%", saving / step * 100.0)
}

/// Writes the advice of every stage: a table (rank, change, step after, saving, its share of
/// the step), the command line of each rank under it, then the changes that do not apply.
///
/// # Errors
/// A failed write.
pub fn write_advice_table(
    advice: &[StageAdvice],
    base: &[Arg],
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    for a in advice {
        writeln!(out)?;
        writeln!(
            out,
            "what to change · {} · each change priced by the same analysis, ranked by the time it saves",
            stage_heading(a)
        )?;
        let mut t = new_table(&[
            "#",
            "change",
            "step after",
            "saves",
            "share",
            "tokens/s after",
        ]);
        for (i, p) in a.ranked.iter().enumerate() {
            t.add_row(vec![
                (i + 1).to_string(),
                priced_words(p),
                human_seconds(p.step.get()),
                human_seconds(p.saving.get()),
                share(p.saving.get(), a.step.get()),
                crate::headline::rate(p.tokens_per_s),
            ]);
        }
        align_right_from(&mut t, 2);
        writeln!(out, "{t}")?;
        for (i, p) in a.ranked.iter().enumerate() {
            writeln!(
                out,
                "{:>3}  {}",
                i + 1,
                command_line(base, &p.change, a.stage)
            )?;
        }
        for n in &a.not_applicable {
            writeln!(
                out,
                "not applicable: {}: {}",
                change_words(&n.change),
                n.reason
            )?;
        }
    }
    writeln!(
        out,
        "batch: the saving is the current tokens' time at the doubled batch's per-token rate; \
         CUDA graphs: one launch per step instead of one per kernel (NVIDIA, \"Getting Started \
         with CUDA Graphs\", 2019)."
    )?;
    Ok(())
}

/// The advice as an HTML section.
pub fn advice_html(advice: &[StageAdvice], base: &[Arg]) -> String {
    use crate::plot::xml_escape as esc;
    let mut h = String::from(
        "<section id=\"advice\">\n<h2>What to change</h2>\n<p class=\"note\">Each change is \
         priced by the same analysis as the step above and ranked by the time it saves on that \
         step; the command shows it. Batch: the current tokens' time at the doubled batch's \
         per-token rate. CUDA graphs: one launch per step instead of one per kernel (NVIDIA, \
         \"Getting Started with CUDA Graphs\", 2019).</p>\n",
    );
    for a in advice {
        h.push_str(&format!("<h3>{}</h3>\n<table>\n<thead><tr><th>#</th><th class=\"text\">change</th><th>step after</th><th>saves</th><th>share</th><th>tokens/s after</th><th class=\"text\">command</th></tr></thead>\n<tbody>\n", esc(&stage_heading(a))));
        for (i, p) in a.ranked.iter().enumerate() {
            h.push_str(&format!(
                "<tr><td>{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"text\"><code>{}</code></td></tr>\n",
                i + 1,
                esc(&priced_words(p)),
                esc(&human_seconds(p.step.get())),
                esc(&human_seconds(p.saving.get())),
                esc(&share(p.saving.get(), a.step.get())),
                esc(&crate::headline::rate(p.tokens_per_s)),
                esc(&command_line(base, &p.change, a.stage)),
            ));
        }
        h.push_str("</tbody>\n</table>\n");
        if !a.not_applicable.is_empty() {
            h.push_str("<ul class=\"not-applicable\">\n");
            for n in &a.not_applicable {
                h.push_str(&format!(
                    "<li>not applicable: {}: {}</li>\n",
                    esc(&change_words(&n.change)),
                    esc(&n.reason)
                ));
            }
            h.push_str("</ul>\n");
        }
    }
    h.push_str("</section>\n");
    h
}

/// One priced change.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PricedDoc {
    /// The change (`fuse`, `batch × 2`, `int8 weight-only`, `int4 weight-only`, `fp8`,
    /// `tensor parallel × 2`, `FlashAttention`, `CUDA graphs`).
    pub change: &'static str,
    /// The change in words.
    pub description: String,
    /// The changed run's step, launch overhead included, seconds.
    pub step_s: f64,
    /// Time saved on the current step's tokens, seconds (negative: it costs time).
    pub saving_s: f64,
    /// Devices the changed run takes.
    pub devices: u64,
    /// Whether the changed run fits the chip's memory (`null`: capacity unknown); a change
    /// that does not fit where the current run does is not applicable instead.
    pub fits: Option<bool>,
    /// The changed run's tokens ÷ its step, tokens/s (one replica).
    pub tokens_per_s: f64,
    /// The `roofline analyze` command line that shows it.
    pub command: String,
}

/// A change that does not apply.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NotApplicableDoc {
    /// The change.
    pub change: &'static str,
    /// Why it does not apply.
    pub reason: String,
}

/// The advice for one stage.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct StageAdviceDoc {
    /// `prefill` (TTFT) or `decode` (TPOT).
    pub stage: Stage,
    /// The current step, launch overhead included, seconds.
    pub step_s: f64,
    /// The priced changes, largest saving first.
    pub ranked: Vec<PricedDoc>,
    /// The changes that do not apply.
    pub not_applicable: Vec<NotApplicableDoc>,
}

impl StageAdviceDoc {
    /// The object of `a`, commands built from `base`.
    pub fn of(a: &StageAdvice, base: &[Arg]) -> Self {
        StageAdviceDoc {
            stage: a.stage,
            step_s: a.step.get(),
            ranked: a
                .ranked
                .iter()
                .map(|p| PricedDoc {
                    change: p.change.name(),
                    description: change_words(&p.change),
                    step_s: p.step.get(),
                    saving_s: p.saving.get(),
                    devices: p.devices,
                    fits: p.fits,
                    tokens_per_s: p.tokens_per_s,
                    command: command_line(base, &p.change, a.stage),
                })
                .collect(),
            not_applicable: a
                .not_applicable
                .iter()
                .map(|n| NotApplicableDoc {
                    change: n.change.name(),
                    reason: n.reason.clone(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_core::precision::Precision;
    use roofline_core::units::Seconds;

    fn base() -> Vec<Arg> {
        vec![
            Arg::model("llama-2-7b"),
            Arg::value("--hardware", "h100-sxm"),
            Arg::value("--batch", 4),
            Arg::value("--weight-precision", "int8"),
            Arg::value("--group-size", 64),
        ]
    }

    #[test]
    fn a_change_replaces_appends_and_drops_flags() {
        let b = base();
        assert_eq!(
            command_line(&b, &Change::Batch { batch: 8 }, Stage::Decode),
            "roofline analyze llama-2-7b --hardware h100-sxm --batch 8 --weight-precision int8 --group-size 64"
        );
        assert_eq!(
            command_line(&b, &Change::Fp8 { kv: Precision::Bf16 }, Stage::Decode),
            "roofline analyze llama-2-7b --hardware h100-sxm --batch 4 --precision fp8 --kv-precision bf16"
        );
        let mut eager = base();
        eager.push(Arg::switch("--no-flash-attention"));
        assert_eq!(
            command_line(&eager, &Change::FlashAttention, Stage::Prefill),
            "roofline analyze llama-2-7b --hardware h100-sxm --batch 4 --weight-precision int8 --group-size 64"
        );
        // 5 µs over 400 kernels: 12.5 ns a kernel, written in seconds.
        let g = Change::CudaGraphs {
            kernels: 400,
            launch_per_kernel: Seconds(12.5e-9),
        };
        assert!(command_line(&b, &g, Stage::Decode)
            .ends_with("--stage decode --launch-overhead 1.25e-8"));
    }

    #[test]
    fn a_model_path_with_spaces_is_quoted() {
        let b = vec![Arg::model("my models/config.json")];
        assert_eq!(
            command_line(&b, &Change::Fuse, Stage::Decode),
            "roofline analyze 'my models/config.json' --fusion max"
        );
    }
}
