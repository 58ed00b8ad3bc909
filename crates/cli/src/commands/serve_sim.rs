//! `roofline serve-sim`: a stream of requests (generated or a trace) through a
//! continuous-batching engine whose every step takes the roofline bound of its batch
//! ([`roofline_core::serve::StepModel`]).

use super::analyze::precisions_of;
use super::analyze_parallel::{check_layout, layout_flags, parallel_error, system_of, Flags};
use crate::args::ServeSimArgs;
use crate::error::CliError;
use roofline_core::comm::System;
use roofline_core::serve::sim::{generate, simulate, Arrivals, EngineConfig, Request, SimError};
use roofline_core::serve::StepModel;
use roofline_core::workload::Workload;
use roofline_inputs::config::load_model;
use roofline_report::serve_sim::{write_serve_sim, RequestSource, ServeSimReport};
use std::io::Write;

/// What each step's time is, in the report.
const STEP_TIME: &str = "roofline bound: a lower bound on every step, so latencies are lower \
                         bounds too (and throughput an upper bound)";

pub fn run(a: &ServeSimArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let model = load_model(&a.model)?;
    let p = &a.parallel;
    let layout = p.layout();
    if layout.cp > 1 {
        return Err(CliError::bad_input(
            format!(
                "`--cp {}`: context parallelism splits whole prompts over devices; engine steps \
                 that mix prefill chunks and decodes are not modelled with it",
                layout.cp
            ),
            Some("drop --cp: split the model with --tp, --pp or --ep".into()),
        ));
    }
    check_layout(&layout, &model)?;
    let lay = layout_flags(&layout);
    let flags = Flags {
        system: p.system.as_deref(),
        devices: p.devices,
        hardware: &a.hardware,
        hardware_default: crate::args::common::DEFAULT_CHIP,
        takes_devices: true,
        layout: &lay,
    };
    // One device needs no node: a chip the catalog sells in none (a measured chip file) runs
    // alone.
    let system = if layout.devices() == 1 && p.system.is_none() && p.devices.is_none() {
        let chip = roofline_inputs::hardware::find_device(&a.hardware)?;
        System::of_chip(&chip, 1).unwrap_or_else(|_| System::single(&chip))
    } else {
        system_of(&flags, layout.devices())?
    };

    let (requests, source) = match &a.trace {
        Some(path) => (
            roofline_inputs::trace::read(path)?,
            RequestSource::Trace {
                path: path.display().to_string(),
            },
        ),
        None => {
            let arrivals = if a.rate.is_finite() {
                Arrivals::Poisson { rate: a.rate }
            } else {
                Arrivals::AllAtOnce
            };
            let reqs = generate(a.requests, arrivals, a.prompt_dist, a.output_dist, a.seed)
                .map_err(|e| sim_error(&e, &[]))?;
            (
                reqs,
                RequestSource::Generated {
                    arrivals,
                    prompt: a.prompt_dist,
                    output: a.output_dist,
                    seed: a.seed,
                },
            )
        }
    };

    let precisions = precisions_of(&a.precisions)?;
    let base = Workload::decode(1, 1)
        .with_precisions(precisions)
        .flash_attention(a.attention.on());
    let step = StepModel::new(&model, &base, &system, layout, a.reserve.memory_reserve)
        .map_err(|e| parallel_error(e, &flags, &system))?;
    // The engine sizes its cache after profiling a step of its whole token budget.
    let kv_tokens = step
        .kv_capacity_tokens_for(a.max_batched_tokens)
        .ok_or_else(|| {
            CliError::bad_input(
                format!(
                    "`--hardware`: the memory capacity of `{}` is not known, so neither is the KV \
                 cache",
                    system.chip.id
                ),
                Some("give a chip file with the memory capacity (`--hardware chip.toml`)".into()),
            )
        })?;
    let kv_blocks = kv_tokens / a.kv_block;
    if kv_blocks == 0 {
        return Err(CliError::bad_input(
            format!(
                "`{}` on {} ({lay}): no room for a KV block of {} tokens beside the weights \
                 ({:.1} GB a device), the activations of a step of {} tokens and the memory reserve",
                model.name,
                system.chip.id,
                a.kv_block,
                step.weights().get() / 1e9,
                a.max_batched_tokens
            ),
            Some(
                "split the model over more devices (--tp, --pp), quantize it \
                 (--weight-precision int4), or lower --memory-reserve"
                    .into(),
            ),
        ));
    }
    let config = EngineConfig {
        max_seqs: a.max_seqs,
        max_batched_tokens: a.max_batched_tokens,
        kv_blocks,
        block_tokens: a.kv_block,
        chunked_prefill: !a.no_chunked_prefill,
    };

    let mut warnings = Vec::new();
    if step.fit_error() > 1e-3 {
        warnings.push(format!(
            "the step times are fitted from analyses of the graph, and differ from an analysis \
             by up to {:.2} % at the check steps (a sliding window, experts or overlap are not \
             linear in the step)",
            100.0 * step.fit_error()
        ));
    }
    if let Some(max) = model.max_position_embeddings {
        let over = requests
            .iter()
            .filter(|r| r.prompt.saturating_add(r.output) > max)
            .count();
        if over > 0 {
            warnings.push(format!(
                "{over} of {} requests have prompt + output over the model's \
                 max_position_embeddings ({max})",
                requests.len()
            ));
        }
    }

    let sim = simulate(&requests, &config, &|m| step.bound(m).get())
        .map_err(|e| sim_error(&e, &requests))?;
    let report = ServeSimReport {
        model: &model,
        system: &system,
        layout,
        precisions,
        flash_attention: a.attention.on(),
        config: &config,
        kv_capacity_tokens: Some(kv_tokens),
        source: &source,
        step_time: STEP_TIME,
        sim: &sim,
        warnings: &warnings,
    };
    write_serve_sim(&report, a.format.format.into(), out)?;
    Ok(())
}

/// A simulation that could not run, naming the flag at fault.
fn sim_error(e: &SimError, requests: &[Request]) -> CliError {
    match e {
        SimError::NeverFits { index, reason } => {
            let r = requests.get(*index);
            let what = r.map_or(String::new(), |r| {
                format!(
                    " (arrival {:.3} s, prompt {}, output {})",
                    r.arrival, r.prompt, r.output
                )
            });
            CliError::bad_input(
                format!("request {index}{what} can never run: {reason}"),
                Some(if reason.contains("chunked") {
                    "raise --max-batched-tokens to the longest prompt, or drop \
                     --no-chunked-prefill"
                        .into()
                } else {
                    "shorten the prompts or outputs (--prompt-dist, --output-dist), or make \
                     room for the KV cache: more devices (--tp, --pp), a smaller \
                     --kv-precision, a lower --memory-reserve"
                        .into()
                }),
            )
        }
        SimError::BadStream { field, reason } => CliError::bad_input(
            format!("`--{}`: {reason}", field.replace('_', "-")),
            Some("see `roofline serve-sim --help`".into()),
        ),
        SimError::RequestCount { count } => CliError::bad_input(
            format!("`--requests`: {count} requests; a simulation takes 1 to 10^7"),
            Some("give --requests from 1 to 10000000".into()),
        ),
        other => CliError {
            kind: crate::error::Kind::Internal,
            message: other.to_string(),
            hint: None,
        },
    }
}
