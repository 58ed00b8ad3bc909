//! Rendering of `roofline serve-sim`: the configuration, what each step's time is, the
//! latency percentiles (TTFT, TPOT, end to end, queueing), throughput over the makespan and
//! preemptions; as JSON the summary ([`crate::doc::serve_sim::ServeSimDoc`]); as CSV one row
//! per request.

use crate::doc::serve_sim::ServeSimDoc;
use crate::units::human_duration;
use crate::{align_right_from, new_table, Format, WriteError};
use roofline_core::comm::System;
use roofline_core::model::Transformer;
use roofline_core::parallel::Layout;
use roofline_core::serve::sim::{Arrivals, Dist, EngineConfig, Percentiles, Simulation};
use roofline_core::workload::Precisions;
use std::io::Write;

/// Where the requests came from.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestSource {
    /// Generated from a seeded stream.
    Generated {
        /// Arrival process.
        arrivals: Arrivals,
        /// Prompt lengths.
        prompt: Dist,
        /// Output lengths.
        output: Dist,
        /// Seed.
        seed: u64,
    },
    /// Read from a trace file.
    Trace {
        /// Its path, as given.
        path: String,
    },
}

/// Everything `roofline serve-sim` reports.
#[derive(Debug, Clone, Copy)]
pub struct ServeSimReport<'a> {
    /// The model.
    pub model: &'a Transformer,
    /// The system.
    pub system: &'a System,
    /// The parallel layout of one engine replica.
    pub layout: Layout,
    /// Number formats of weights, activations and KV cache.
    pub precisions: Precisions,
    /// Whether attention runs as one FlashAttention kernel.
    pub flash_attention: bool,
    /// The engine's limits.
    pub config: &'a EngineConfig,
    /// Tokens of KV cache that fit beside weights, activations and the reserve.
    pub kv_capacity_tokens: Option<u64>,
    /// The requests' source.
    pub source: &'a RequestSource,
    /// What each step's time is, in words.
    pub step_time: &'a str,
    /// The simulation.
    pub sim: &'a Simulation,
    /// Caveats.
    pub warnings: &'a [String],
}

/// Writes `report` in `format` to `out`.
///
/// # Errors
/// A failed write.
pub fn write_serve_sim(
    report: &ServeSimReport<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => write_table(report, out),
        Format::Json => crate::doc::write_json(&ServeSimDoc::of(report), out),
        Format::Csv => write_csv(report, out),
    }
}

/// `1234567` → `1,234,567`.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn layout_words(l: &Layout) -> String {
    let mut parts = vec![format!("TP {}", l.tp), format!("PP {}", l.pp)];
    if l.ep > 1 {
        parts.push(format!("EP {}", l.ep));
    }
    if l.cp > 1 {
        parts.push(format!("CP {}", l.cp));
    }
    let n = l.devices();
    format!(
        "{} = {n} device{}",
        parts.join(" × "),
        if n == 1 { "" } else { "s" }
    )
}

/// A rate with four significant digits: `5067`, `19.79`, `0.001000`.
fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = 3 - v.abs().log10().floor() as i32;
    format!("{v:.*}", digits.clamp(0, 12) as usize)
}

fn write_table(r: &ServeSimReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let s = &r.sim.summary;
    let c = r.config;
    let p = &r.precisions;
    writeln!(
        out,
        "serve-sim · {} on {} ({}) · {} · weights {}, activations {}, KV cache {}{} · {}",
        r.model.name,
        r.system.name,
        r.system.id,
        layout_words(&r.layout),
        p.weight,
        p.gemm_act.unwrap_or(p.act),
        p.kv,
        if p.gemm_act.is_some() { " (W8A8)" } else { "" },
        if r.flash_attention {
            "FlashAttention"
        } else {
            "unfused attention"
        }
    )?;
    let requests = match r.source {
        RequestSource::Generated {
            arrivals,
            prompt,
            output,
            seed,
        } => {
            let when = match arrivals {
                Arrivals::Poisson { rate } => format!("Poisson arrivals at {rate}/s"),
                Arrivals::AllAtOnce => "all at once".to_string(),
            };
            format!("{when}, prompt {prompt}, output {output}, seed {seed}")
        }
        RequestSource::Trace { path } => format!("trace `{path}`"),
    };
    writeln!(out, "requests: {} · {requests}", grouped(s.count as u64))?;
    let kv = match r.kv_capacity_tokens {
        Some(t) => format!(
            " ({} tokens fit beside the weights, activations and reserve)",
            grouped(t)
        ),
        None => format!(
            " = {} tokens",
            grouped(c.kv_blocks.saturating_mul(c.block_tokens))
        ),
    };
    writeln!(
        out,
        "engine: at most {} sequences, {} tokens a step, {} · KV cache {} blocks of {} tokens{kv}",
        grouped(c.max_seqs),
        grouped(c.max_batched_tokens),
        if c.chunked_prefill {
            "chunked prefill"
        } else {
            "whole prefills"
        },
        grouped(c.kv_blocks),
        c.block_tokens,
    )?;
    writeln!(out, "step time: {}", r.step_time)?;
    for w in r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    writeln!(out)?;

    let mut t = new_table(&["latency", "p50", "p90", "p99", "mean"]);
    let mut row = |name: &str, p: Option<&Percentiles>| {
        let cells = match p {
            Some(p) => [p.p50, p.p90, p.p99, p.mean].map(human_duration).to_vec(),
            None => vec!["—".to_string(); 4],
        };
        let mut v = vec![name.to_string()];
        v.extend(cells);
        t.add_row(v);
    };
    row("TTFT", Some(&s.ttft));
    row("TPOT", s.tpot.as_ref());
    row("end to end", Some(&s.e2e));
    row("queueing", Some(&s.queue));
    align_right_from(&mut t, 1);
    writeln!(out, "{t}")?;
    writeln!(out)?;
    writeln!(
        out,
        "throughput: {} output tokens/s, {} requests/s ({} output tokens over a makespan of {})",
        sig(s.output_tokens_per_s),
        sig(s.requests_per_s),
        grouped(s.output_tokens),
        human_duration(s.makespan)
    )?;
    writeln!(
        out,
        "steps: {}, {:.1} sequences a step on average (decodes and prefill chunks)",
        grouped(s.steps),
        s.mean_batch
    )?;
    writeln!(
        out,
        "queueing: mean {} from arrival to admission, p99 {}",
        human_duration(s.queue.mean),
        human_duration(s.queue.p99)
    )?;
    writeln!(
        out,
        "preemptions: {} (by recomputation: the sequence's KV blocks freed, its prompt and \
         tokens so far prefilled again)",
        grouped(s.preemptions)
    )?;
    Ok(())
}

fn write_csv(r: &ServeSimReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "index",
        "arrival_s",
        "prompt",
        "output",
        "admitted_s",
        "first_token_s",
        "finish_s",
        "ttft_s",
        "tpot_s",
        "e2e_s",
        "queue_s",
        "preemptions",
    ])?;
    for m in &r.sim.requests {
        w.write_record([
            m.index.to_string(),
            m.arrival.to_string(),
            m.prompt.to_string(),
            m.output.to_string(),
            m.admitted.to_string(),
            m.first_token.to_string(),
            m.finish.to_string(),
            m.ttft.to_string(),
            m.tpot.map(|t| t.to_string()).unwrap_or_default(),
            m.e2e.to_string(),
            m.queue.to_string(),
            m.preemptions.to_string(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{grouped, sig};

    #[test]
    fn rates_keep_four_significant_digits() {
        assert_eq!(sig(5066.8), "5067");
        assert_eq!(sig(19.792), "19.79");
        assert_eq!(sig(0.001), "0.001000");
        assert_eq!(sig(0.0), "0");
    }

    #[test]
    fn counts_group_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }
}
