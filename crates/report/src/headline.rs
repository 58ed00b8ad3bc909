//! The serving headline in words, as a JSON object and as HTML: TTFT, TPOT and tokens/s
//! ([`roofline_core::serve::headline`] computes them), each the roofline bound with the launch
//! and host overhead beside it.

use crate::units::human_seconds;
use roofline_core::serve::headline::Headline;
use schemars::JsonSchema;
use serde::Serialize;

/// What every headline figure is: the bound, launches beside it.
pub const BOUND_LABEL: &str = "roofline bound: every kernel at its roof, every collective at its α–β bound, no launch cost; `roofline generate` gives an estimate beside it";

/// A rate in tokens/s with three significant figures at most (`46.4`, `8386`).
pub fn rate(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        _ => format!("{v:.2}"),
    }
}

/// The figures of the headline, each `name value`, in the order the line prints them.
fn parts(h: &Headline) -> Vec<String> {
    let per_device = |v: f64| {
        if h.devices > 1 {
            format!(" ({} per device, {} devices)", rate(v), h.devices)
        } else {
            String::new()
        }
    };
    let mut parts = Vec::new();
    if let Some(p) = &h.prefill {
        parts.push(format!(
            "TTFT {} (+ launch and host {})",
            human_seconds(p.ttft.get()),
            human_seconds(p.launch_and_host.get())
        ));
        if h.decode.is_none() {
            parts.push(format!(
                "{} prompt tokens/s{}",
                rate(p.prompt_tokens_per_s),
                per_device(p.prompt_tokens_per_s_per_device)
            ));
        }
    }
    if let Some(d) = &h.decode {
        parts.push(format!(
            "TPOT {} (+ launch and host {})",
            human_seconds(d.tpot.get()),
            human_seconds(d.launch_and_host.get())
        ));
        parts.push(format!(
            "{} output tokens/s{}",
            rate(d.output_tokens_per_s),
            per_device(d.output_tokens_per_s_per_device)
        ));
    }
    parts
}

/// The headline as one line: `serving: TTFT 244.23 ms · TPOT 21.54 ms · 46.43 output
/// tokens/s (roofline time + one launch per kernel, …)`.
pub fn headline_line(h: &Headline) -> String {
    format!("serving: {} ({BOUND_LABEL})", parts(h).join(" · "))
}

/// The headline as an HTML section, before the per-operator tables.
pub fn headline_html(h: &Headline) -> String {
    let items: String = parts(h)
        .iter()
        .map(|p| format!("<li>{}</li>", crate::plot::xml_escape(p)))
        .collect();
    format!(
        "<section id=\"headline\">\n<h2>Serving headline</h2>\n<ul class=\"headline\">{items}</ul>\n\
         <p class=\"note\">TTFT: the prefill pass of the prompt; TPOT: one decode step; output \
         tokens/s = batch ÷ TPOT. Each is the {BOUND_LABEL}.</p>\n</section>\n"
    )
}

/// The prefill half of the headline.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PrefillHeadlineDoc {
    /// Time to first token: the prefill pass's roofline bound, seconds.
    pub ttft_s: f64,
    /// The prefill's launch and host overhead, seconds (beside the bound, not in it).
    pub launch_and_host_s: f64,
    /// Prompt tokens in the pass (batch × seq_len).
    pub prompt_tokens: u64,
    /// prompt_tokens ÷ ttft_s, tokens/s.
    pub prompt_tokens_per_s: f64,
    /// prompt_tokens_per_s ÷ devices, tokens/s.
    pub prompt_tokens_per_s_per_device: f64,
}

/// The decode half of the headline.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DecodeHeadlineDoc {
    /// Time per output token: one decode step's roofline bound, seconds.
    pub tpot_s: f64,
    /// The decode step's launch and host overhead, seconds (beside the bound, not in it).
    pub launch_and_host_s: f64,
    /// Sequences, each emitting one token per step.
    pub batch: u64,
    /// batch ÷ tpot_s, tokens/s.
    pub output_tokens_per_s: f64,
    /// output_tokens_per_s ÷ devices, tokens/s.
    pub output_tokens_per_s_per_device: f64,
}

/// The serving headline: the roofline bound of each step, its launch and host overhead beside
/// it; a stage not analysed is `null`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HeadlineDoc {
    /// Devices of one replica (1 on one chip).
    pub devices: u64,
    /// From the prefill pass.
    pub prefill: Option<PrefillHeadlineDoc>,
    /// From the decode step.
    pub decode: Option<DecodeHeadlineDoc>,
}

impl HeadlineDoc {
    /// The headline object of `h`.
    pub fn of(h: &Headline) -> Self {
        HeadlineDoc {
            devices: h.devices,
            prefill: h.prefill.map(|p| PrefillHeadlineDoc {
                ttft_s: p.ttft.get(),
                launch_and_host_s: p.launch_and_host.get(),
                prompt_tokens: p.prompt_tokens,
                prompt_tokens_per_s: p.prompt_tokens_per_s,
                prompt_tokens_per_s_per_device: p.prompt_tokens_per_s_per_device,
            }),
            decode: h.decode.map(|d| DecodeHeadlineDoc {
                tpot_s: d.tpot.get(),
                launch_and_host_s: d.launch_and_host.get(),
                batch: d.batch,
                output_tokens_per_s: d.output_tokens_per_s,
                output_tokens_per_s_per_device: d.output_tokens_per_s_per_device,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_core::serve::headline::{headline, StageStep};
    use roofline_core::units::Seconds;
    use roofline_core::workload::Stage;

    fn step(stage: Stage, batch: u64, tokens: u64, step: f64, devices: u64) -> StageStep {
        StageStep {
            stage,
            batch,
            tokens,
            step: Seconds(step),
            launch_and_host: Seconds(step / 100.0),
            devices,
        }
    }

    #[test]
    fn both_stages_give_ttft_tpot_and_output_rate() {
        let h = headline(&[
            step(Stage::Prefill, 1, 2048, 0.25, 1),
            step(Stage::Decode, 1, 1, 0.02, 1),
        ]);
        // 1 token every 20 ms = 50 tokens/s.
        assert_eq!(
            headline_line(&h),
            format!(
                "serving: TTFT 250.00 ms (+ launch and host 2.50 ms) · TPOT 20.00 ms (+ launch \
                 and host 200.0 µs) · 50.0 output tokens/s ({BOUND_LABEL})"
            )
        );
    }

    #[test]
    fn one_stage_gives_its_own_figures_and_devices_divide() {
        // 4 · 1024 tokens in 0.5 s = 8192 tokens/s; 1024 per device on 8.
        let h = headline(&[step(Stage::Prefill, 4, 4096, 0.5, 8)]);
        assert_eq!(
            headline_line(&h),
            format!(
                "serving: TTFT 500.00 ms (+ launch and host 5.00 ms) · 8192 prompt tokens/s (1024 \
                 per device, 8 devices) \
                 ({BOUND_LABEL})"
            )
        );
    }
}
