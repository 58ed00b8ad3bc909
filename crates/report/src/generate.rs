//! `roofline generate`: one request's TTFT, TPOT (both conventions), E2E and tokens/s, the
//! roofline bound beside the estimate; the memory at every step; and, when asked, what fits,
//! chunked prefill, speculative decoding and disaggregated pools.

use crate::doc::generate::GenerateDoc;
use crate::parallel::{layout_line, write_stage_tables, ParallelReport};
use crate::units::{human_bytes, human_seconds};
use crate::{Format, WriteError};
use roofline_core::comm::System;
use roofline_core::device::LaunchModel;
use roofline_core::model::Transformer;
use roofline_core::serve::capacity::Fit;
use roofline_core::serve::chunked::ChunkedPrefill;
use roofline_core::serve::disaggregate::{Bottleneck, Disaggregated};
use roofline_core::serve::speculative::Speculative;
use roofline_core::serve::{Generation, Latency};
use std::io::Write;

/// What fits, as `--max-batch` and `--max-context` ask.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Capacity {
    /// Tokens per KV block.
    pub kv_block: u64,
    /// The largest batch for which every step of the request fits.
    pub max_batch: Option<Fit>,
    /// The most tokens a sequence may hold for a decode at the batch to fit.
    pub max_context: Option<Fit>,
    /// The model's trained context, when its config gives one.
    pub max_position_embeddings: Option<u64>,
}

/// A speculative decode with the draft's name.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeculativeRun {
    /// The draft model.
    pub draft: String,
    /// The result.
    pub result: Speculative,
}

/// Everything `roofline generate` prints.
#[derive(Debug, Clone)]
pub struct GenerateReport<'a> {
    /// The model.
    pub model: &'a Transformer,
    /// The system.
    pub system: &'a System,
    /// The request priced.
    pub generation: &'a Generation,
    /// `--max-batch`, `--max-context`.
    pub capacity: Option<Capacity>,
    /// `--chunk`.
    pub chunked: Option<ChunkedPrefill>,
    /// `--draft`.
    pub speculative: Option<SpeculativeRun>,
    /// `--disaggregate`.
    pub disaggregated: Option<Disaggregated>,
    /// The step model's fit error, when one was built.
    pub step_fit_error: Option<f64>,
}

/// Writes `r` in `format` to `out`.
///
/// # Errors
/// A failed write.
pub fn write_generate(
    r: &GenerateReport<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    match format {
        Format::Table => write_table(r, out),
        Format::Json => crate::doc::write_json(&GenerateDoc::of(r), out),
        Format::Csv => write_csv(r, out),
    }
}

/// The metric rows: label, bound, estimate (seconds or tokens/s), unit.
fn metrics(g: &Generation) -> Vec<(String, f64, f64, &'static str)> {
    let r = &g.request;
    let (b, e) = (&g.bound, &g.estimate);
    let tpot = |l: &Latency| l.tpot.map_or(f64::NAN, |t| t.get());
    let todo = r.prompt - r.cached_prefix;
    vec![
        (
            if r.cached_prefix > 0 {
                format!(
                    "TTFT (prefill of {todo} tokens after {} cached)",
                    r.cached_prefix
                )
            } else {
                format!("TTFT (prefill of {} tokens)", r.prompt)
            },
            b.ttft.get(),
            e.ttft.get(),
            "s",
        ),
        (
            "TPOT = (E2E − TTFT) / (N − 1)".into(),
            tpot(b),
            tpot(e),
            "s",
        ),
        (
            "E2E / N".into(),
            b.e2e_per_token.get(),
            e.e2e_per_token.get(),
            "s",
        ),
        (
            format!("E2E ({} tokens)", r.generate),
            b.e2e.get(),
            e.e2e.get(),
            "s",
        ),
        (
            "output tokens/s per sequence".into(),
            b.tokens_per_s_per_sequence,
            e.tokens_per_s_per_sequence,
            "tokens/s",
        ),
        (
            format!("output tokens/s (batch {})", r.batch),
            b.tokens_per_s,
            e.tokens_per_s,
            "tokens/s",
        ),
        (
            "output tokens/s per device".into(),
            b.tokens_per_s_per_device,
            e.tokens_per_s_per_device,
            "tokens/s",
        ),
    ]
}

fn show(v: f64, unit: &str) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    match unit {
        "s" => human_seconds(v),
        _ => format!("{v:.1}"),
    }
}

/// Where the estimate's shares come from: the chip's ([`roofline_core::device::Device::efficiency_source`])
/// or `--efficiency`.
pub(crate) fn efficiency_source(
    g: &roofline_core::serve::Generation,
    chip: &roofline_core::device::Device,
) -> String {
    if g.efficiency.efficiency == chip.efficiency() {
        chip.efficiency_source().to_string()
    } else {
        "--efficiency".to_string()
    }
}

fn launch_words(r: &GenerateReport<'_>) -> String {
    let g = r.generation;
    let chip = &r.system.chip;
    let per = human_seconds(chip.launch_overhead.value.get());
    let kernels = g.prefill.totals.kernels;
    match (chip.launch_model, g.efficiency.launches.cuda_graphs) {
        (LaunchModel::PerProgram, _) => {
            format!("one launch a step ({per}: the chip runs a step as one compiled program)")
        }
        (_, true) => format!("one launch a step ({per}; CUDA graphs)"),
        _ => format!("{per} per kernel ({kernels} kernels a step; --cuda-graphs launches once)"),
    }
}

fn write_table(r: &GenerateReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let g = r.generation;
    let q = &g.request;
    writeln!(
        out,
        "generate · {} on {} ({}) · {} · batch {}, prompt {}{}, generate {} · {}",
        r.model.name,
        r.system.name,
        r.system.id,
        layout_line(&g.prefill, r.model.layers),
        q.batch,
        q.prompt,
        if q.cached_prefix > 0 {
            format!(" ({} cached)", q.cached_prefix)
        } else {
            String::new()
        },
        q.generate,
        precisions_words(g),
    )?;
    let mut t = crate::new_table(&["per request", "bound", "estimate"]);
    for (label, b, e, unit) in metrics(g) {
        t.add_row(vec![label, show(b, unit), show(e, unit)]);
    }
    crate::align_right_from(&mut t, 1);
    writeln!(out, "{t}")?;
    let eff = &g.efficiency.efficiency;
    writeln!(
        out,
        "bound: the roofline time of every step (each kernel at max(FLOPs/peak, bytes/bandwidth), \
         each collective at its α–β bound, no launch cost): no run is faster."
    )?;
    writeln!(
        out,
        "estimate: η_matmul {:.3} (fp8 {:.3}, attention {:.3}), η_vector {:.3}, η_memory {:.3}, \
         η_network {:.3} ({}); launch and host: {}.",
        eff.matmul,
        eff.matmul_fp8,
        eff.attention,
        eff.vector,
        eff.memory,
        eff.network,
        efficiency_source(g, &r.system.chip),
        launch_words(r),
    )?;
    if let (Some(f), Some(l)) = (&g.first_decode, &g.last_decode) {
        writeln!(
            out,
            "decode: {} steps at contexts {}–{}, from {} (first) to {} (last), bound; summed exactly \
             ({} steps analysed, the rest in closed form on the segments where the step time is linear)",
            q.generate - 1,
            q.prompt,
            q.last_context(),
            human_seconds(f.schedule.step.get()),
            human_seconds(l.schedule.step.get()),
            g.decode_steps_analysed,
        )?;
    }
    let m = &g.peak_memory;
    let cap = m
        .capacity
        .map_or("unknown".into(), |c| human_bytes(c.get()));
    writeln!(
        out,
        "memory per device: KV cache at the end {} ({} sequences × {} tokens); the largest step: \
         weights {} + KV cache {} + activations {} + reserve {} = {} of {}: {}",
        human_bytes(g.kv_at_end.get()),
        q.batch,
        q.final_kv_tokens(),
        human_bytes(m.weights.get()),
        human_bytes(m.kv_cache.get()),
        human_bytes(m.activations.get()),
        human_bytes(m.reserve.get()),
        human_bytes(m.total().get()),
        cap,
        match (g.fits, g.first_overflow) {
            (Some(true), _) => "fits at every step".to_string(),
            (Some(false), Some(1)) => "the prefill does not fit".to_string(),
            (Some(false), Some(k)) => format!("does not fit from generated token {k} on"),
            (Some(false), None) => "does not fit".to_string(),
            (None, _) => "capacity unknown".to_string(),
        }
    )?;
    for w in &g.warnings {
        writeln!(out, "warning: {w}")?;
    }
    if let Some(c) = &r.capacity {
        write_capacity(c, g, out)?;
    }
    if let Some(c) = &r.chunked {
        write_chunked(c, out)?;
    }
    if let Some(s) = &r.speculative {
        write_speculative(s, out)?;
    }
    if let Some(d) = &r.disaggregated {
        write_disaggregated(d, g, out)?;
    }
    if let Some(e) = r.step_fit_error {
        writeln!(
            out,
            "step model: mixed steps priced from nine analyses of the graph; largest relative \
             difference from a direct analysis at three check steps {:.1e}",
            e
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "per-phase tables (one device): the prefill (TTFT) and the last decode step"
    )?;
    let mut stages = vec![g.prefill.clone()];
    if let Some(l) = &g.last_decode {
        stages.push(l.clone());
    }
    write_stage_tables(
        &ParallelReport {
            model: r.model,
            system: r.system,
            stages: &stages,
        },
        out,
    )
}

pub(crate) fn precisions_words(g: &Generation) -> String {
    let p = g.prefill.workload.precisions;
    format!(
        "weights {}, activations {}, KV cache {}, FlashAttention {}",
        p.weight,
        p.act,
        p.kv,
        if g.prefill.workload.flash_attention {
            "on"
        } else {
            "off"
        }
    )
}

fn write_capacity(c: &Capacity, g: &Generation, out: &mut dyn Write) -> Result<(), WriteError> {
    let q = &g.request;
    writeln!(out)?;
    writeln!(
        out,
        "capacity (KV cache in blocks of {} tokens, runtime reserve {}):",
        c.kv_block,
        human_bytes(g.peak_memory.reserve.get())
    )?;
    if let Some(f) = &c.max_batch {
        match f.largest {
            Some(b) => writeln!(
                out,
                "  largest batch for prompt {} + {} generated: {b}{} (its largest step: {} of {})",
                q.prompt,
                q.generate,
                if f.at_limit {
                    " (the largest accepted, not the memory's limit)"
                } else {
                    ""
                },
                human_bytes(f.memory.total().get()),
                f.memory
                    .capacity
                    .map_or("unknown".into(), |c| human_bytes(c.get())),
            )?,
            None => writeln!(
                out,
                "  largest batch: none; one sequence needs {} of {}",
                human_bytes(f.memory.total().get()),
                f.memory
                    .capacity
                    .map_or("unknown".into(), |c| human_bytes(c.get())),
            )?,
        }
    }
    if let Some(f) = &c.max_context {
        let trained = c
            .max_position_embeddings
            .map_or(String::new(), |m| format!("; the model was trained to {m}"));
        match f.largest {
            Some(t) => writeln!(
                out,
                "  longest context at batch {}: {t} tokens a sequence{}{trained}",
                q.batch,
                if f.at_limit {
                    " (the largest accepted)"
                } else {
                    ""
                }
            )?,
            None => writeln!(out, "  longest context at batch {}: none fits", q.batch)?,
        }
    }
    Ok(())
}

fn write_chunked(c: &ChunkedPrefill, out: &mut dyn Write) -> Result<(), WriteError> {
    writeln!(out)?;
    writeln!(
        out,
        "chunked prefill: the prompt in {} steps of at most {} tokens beside {} running decodes at \
         context {}:",
        c.steps, c.chunk, c.running, c.context
    )?;
    let mut t = crate::new_table(&[
        "",
        "TTFT bound",
        "TTFT estimate",
        "running decodes' step, bound",
        "estimate",
    ]);
    t.add_row(vec![
        format!("in chunks of {}", c.chunk),
        human_seconds(c.ttft.get()),
        human_seconds(c.ttft_estimate.get()),
        human_seconds(c.stall.get()),
        human_seconds(c.stall_estimate.get()),
    ]);
    t.add_row(vec![
        "whole (one step)".into(),
        human_seconds(c.ttft_whole.get()),
        human_seconds(c.ttft_whole_estimate.get()),
        human_seconds(c.stall_whole.get()),
        human_seconds(c.stall_whole_estimate.get()),
    ]);
    crate::align_right_from(&mut t, 1);
    writeln!(out, "{t}")?;
    if c.running > 0 {
        writeln!(
            out,
            "a decode step of the running sequences alone: {} (bound)",
            human_seconds(c.decode_alone.get())
        )?;
    }
    Ok(())
}

fn write_speculative(s: &SpeculativeRun, out: &mut dyn Write) -> Result<(), WriteError> {
    let x = &s.result;
    writeln!(out)?;
    let verdict = |v: f64| {
        if v >= 1.0 {
            format!("{v:.2}× faster")
        } else {
            format!("{:.2}× slower", 1.0 / v)
        }
    };
    writeln!(
        out,
        "speculative decoding: draft {} proposes γ = {} tokens, each accepted with α = {}: \
         E = (1 − α^(γ+1))/(1 − α) = {:.2} tokens a verification (Leviathan et al. 2023), {:.1} \
         iterations",
        s.draft, x.draft_len, x.acceptance, x.expected_tokens, x.iterations
    )?;
    writeln!(
        out,
        "  TPOT bound: {} with speculation (draft {}, verify {}) against {} plain: {}",
        human_seconds(x.tpot.get()),
        human_seconds(x.draft.get()),
        human_seconds(x.verify.get()),
        human_seconds(x.plain_tpot.get()),
        verdict(x.speedup)
    )?;
    writeln!(
        out,
        "  TPOT estimate: {} against {}: {}",
        human_seconds(x.tpot_estimate.get()),
        human_seconds(x.plain_tpot_estimate.get()),
        verdict(x.speedup_estimate)
    )?;
    Ok(())
}

fn write_disaggregated(
    d: &Disaggregated,
    g: &Generation,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    writeln!(out)?;
    writeln!(
        out,
        "disaggregated: {} prefill + {} decode devices ({} and {} replicas of {} devices), bound; \
         requests of {} sequences per second:",
        d.prefill_devices,
        d.decode_devices,
        d.prefill_replicas,
        d.decode_replicas,
        g.devices,
        g.request.batch
    )?;
    let mut t = crate::new_table(&["part", "requests/s", ""]);
    let mark = |b: Bottleneck| if d.bottleneck == b { "bottleneck" } else { "" };
    t.add_row(vec![
        "prefill pool".into(),
        format!("{:.2}", d.prefill_rate),
        mark(Bottleneck::Prefill).to_string(),
    ]);
    t.add_row(vec![
        "decode pool".into(),
        format!("{:.2}", d.decode_rate),
        mark(Bottleneck::Decode).to_string(),
    ]);
    t.add_row(vec![
        format!(
            "KV transfer ({} a device in {})",
            human_bytes(d.kv_per_device.get()),
            human_seconds(d.transfer.get())
        ),
        format!("{:.2}", d.transfer_rate),
        mark(Bottleneck::Transfer).to_string(),
    ]);
    t.add_row(vec![
        "sustained".into(),
        format!("{:.2}", d.rate),
        String::new(),
    ]);
    t.add_row(vec![
        "the same devices colocated".into(),
        format!("{:.2}", d.colocated_rate),
        String::new(),
    ]);
    crate::align_right_from(&mut t, 1);
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "  TTFT with the transfer: {} (bound)",
        human_seconds(d.ttft.get())
    )?;
    Ok(())
}

fn write_csv(r: &GenerateReport<'_>, out: &mut dyn Write) -> Result<(), WriteError> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(["metric", "bound", "estimate", "unit"])?;
    for (label, b, e, unit) in metrics(r.generation) {
        let num = |v: f64| {
            if v.is_finite() {
                v.to_string()
            } else {
                String::new()
            }
        };
        w.write_record([label, num(b), num(e), unit.to_string()])?;
    }
    w.flush()?;
    Ok(())
}
