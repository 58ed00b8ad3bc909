//! `roofline generate`: one request whole (TTFT, TPOT, E2E), the roofline bound beside an
//! estimate, and what fits; chunked prefill, speculative decoding and disaggregated pools when
//! asked.

use super::analyze::precisions_of;
use super::analyze_parallel::{check_layout, layout_flags, parallel_error, system_of, Flags};
use crate::args::GenerateArgs;
use crate::error::CliError;
use roofline_core::comm::System;
use roofline_core::memory::Reserve;
use roofline_core::model::Transformer;
use roofline_core::parallel::{Layout, ParallelAnalysisError};
use roofline_core::pricing::Estimate;
use roofline_core::serve::capacity::{max_batch, max_context};
use roofline_core::serve::chunked::chunked_prefill;
use roofline_core::serve::disaggregate::disaggregate;
use roofline_core::serve::generate::{decode_workload, prefill_workload};
use roofline_core::serve::speculative::{speculative, MAX_DRAFT_LEN};
use roofline_core::serve::{generate, Request, StepModel};
use roofline_core::workload::{Workload, WorkloadError};
use roofline_inputs::config::load_model;
use roofline_report::generate::{write_generate, Capacity, GenerateReport, SpeculativeRun};
use std::io::Write;

/// The flag that sets a request or workload field.
fn request_flag(quantity: &str) -> &'static str {
    match quantity {
        "prompt" | "seq_len" => "--prompt",
        "generate" | "context" => "--generate",
        "cached_prefix" | "cached" => "--cached-prefix",
        "batch" => "--batch",
        _ => "--prompt",
    }
}

fn request_error(e: &WorkloadError) -> CliError {
    let flag = request_flag(e.quantity);
    CliError::bad_input(
        format!("`{flag}`: {}", e.message),
        Some(match flag {
            "--cached-prefix" => "give --cached-prefix below --prompt".to_string(),
            "--batch" => "lower --batch".to_string(),
            _ => "lower --batch, --prompt or --generate".to_string(),
        }),
    )
}

/// The system: `--system`, or `--devices` of `--hardware` in its node; one chip alone when the
/// layout uses one device of a chip sold in no node the catalog describes.
fn system_for(a: &GenerateArgs, flags: &Flags<'_>, layout: &Layout) -> Result<System, CliError> {
    let p = &a.parallel;
    let mut system = if p.system.is_none() && p.devices.is_none() && layout.devices() == 1 {
        let chip = roofline_inputs::hardware::find_device(&a.hardware)?;
        match System::of_chip(&chip, 1) {
            Ok(s) => s,
            Err(_) => System::single(&chip),
        }
    } else {
        system_of(flags, layout.devices())?
    };
    if let Some(l) = a.launch_overhead {
        system.chip.launch_overhead =
            roofline_core::cited::Cited::new(roofline_core::units::Seconds(l), "--launch-overhead");
    }
    Ok(system)
}

pub fn run(a: &GenerateArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let model = load_model(&a.model)?;
    let layout = a.parallel.layout();
    check_layout(&layout, &model)?;
    if layout.cp > 1 {
        return Err(CliError::bad_input(
            "`--cp`: generation decodes, and context parallelism splits prompts only",
            Some("drop --cp (context parallelism is for `analyze --stage prefill`)".into()),
        ));
    }
    let lay = layout_flags(&layout);
    let flags = Flags {
        system: a.parallel.system.as_deref(),
        devices: a.parallel.devices,
        hardware: &a.hardware,
        hardware_default: crate::args::common::DEFAULT_CHIP,
        takes_devices: true,
        layout: &lay,
    };
    let precisions = precisions_of(&a.precisions)?;
    let base = Workload::decode(1, 1)
        .with_precisions(precisions)
        .flash_attention(a.attention.on());
    let r = Request {
        prompt: a.prompt,
        generate: a.generate,
        batch: a.batch,
        cached_prefix: a.cached_prefix,
    };
    r.validate().map_err(|e| request_error(&e))?;
    for w in [
        prefill_workload(&base, &r),
        decode_workload(&base, &r, r.last_context()),
    ] {
        w.validate().map_err(|e| request_error(&e))?;
    }
    if a.draft.is_none() {
        if let Some(flag) = [
            ("--draft-len", a.draft_len.is_some()),
            ("--acceptance", a.acceptance.is_some()),
        ]
        .iter()
        .find_map(|(f, on)| on.then_some(*f))
        {
            return Err(CliError::bad_input(
                format!("`{flag}` prices speculative decoding: it goes with `--draft`"),
                Some(format!(
                    "add --draft MODEL (a smaller model of the same vocabulary) with {flag}"
                )),
            ));
        }
    }
    let draft_len = a.draft_len.unwrap_or(4);
    let acceptance = a.acceptance.unwrap_or(0.8);
    if draft_len > MAX_DRAFT_LEN {
        return Err(CliError::bad_input(
            format!("`--draft-len`: {draft_len} is beyond the most accepted ({MAX_DRAFT_LEN})"),
            Some("drafts propose 2 to 8 tokens in published setups".into()),
        ));
    }
    let system = system_for(a, &flags, &layout)?;
    let reserve: Reserve = a.reserve.memory_reserve;
    let mut eff = Estimate::on(&system.chip).with_cuda_graphs(a.cuda_graphs);
    if let Some(o) = &a.efficiency {
        eff.efficiency = o.apply(eff.efficiency);
    }
    eff.efficiency.validate().map_err(|e| {
        CliError::bad_input(
            format!("`--efficiency`: {e}"),
            Some(
                "give each share in [0.01, 1]: --efficiency matmul=0.8,memory=0.83,network=0.8"
                    .into(),
            ),
        )
    })?;
    let perr = |e: ParallelAnalysisError| parallel_error(e, &flags, &system);
    let g = generate(&model, &base, &r, &system, layout, reserve, &eff).map_err(perr)?;
    let capacity = if a.max_batch || a.max_context {
        let mb = if a.max_batch {
            Some(max_batch(&model, &base, &r, &system, layout, reserve, a.kv_block).map_err(perr)?)
        } else {
            None
        };
        let mc = if a.max_context {
            Some(
                max_context(&model, &base, r.batch, &system, layout, reserve, a.kv_block)
                    .map_err(perr)?,
            )
        } else {
            None
        };
        Some(Capacity {
            kv_block: a.kv_block,
            max_batch: mb,
            max_context: mc,
            max_position_embeddings: model.max_position_embeddings,
        })
    } else {
        None
    };
    let needs_steps = a.chunk.is_some();
    let steps = if needs_steps {
        Some(StepModel::new(&model, &base, &system, layout, reserve).map_err(perr)?)
    } else {
        None
    };
    let chunked = match (a.chunk, &steps) {
        (Some(c), Some(s)) => Some(chunked_prefill(
            s,
            r.prompt,
            r.cached_prefix,
            c,
            r.batch - 1,
            r.prompt + r.generate / 2,
            &eff,
        )),
        _ => None,
    };
    let spec = match &a.draft {
        Some(d) => {
            let draft_model = load_model(d).map_err(|mut e| {
                e.message = format!("`--draft`: {}", e.message);
                e
            })?;
            check_draft(&model, &draft_model, d)?;
            check_layout(&layout, &draft_model).map_err(|mut e| {
                e.message = format!("`--draft`: {}", e.message);
                e
            })?;
            speculative(
                &g,
                &draft_model,
                &model,
                &base,
                &system,
                reserve,
                &eff,
                draft_len,
                acceptance,
            )
            .map_err(perr)?
            .map(|s| SpeculativeRun {
                draft: draft_model.name.clone(),
                result: s,
            })
        }
        None => None,
    };
    let disagg = match a.disaggregate {
        Some(p) => {
            let total = p.prefill + p.decode;
            if total > system.devices() {
                return Err(CliError::bad_input(
                    format!(
                        "`--disaggregate {}:{}`: {total} devices, and the system has {}",
                        p.prefill,
                        p.decode,
                        system.devices()
                    ),
                    Some(format!(
                        "give --devices {total} (or a --system with as many), or smaller pools"
                    )),
                ));
            }
            match disaggregate(&g, &system, p.prefill, p.decode).map_err(|e| {
                CliError::bad_input(
                    format!("`--disaggregate`: {e}"),
                    Some("give a --system whose fabric links the two pools".into()),
                )
            })? {
                Some(d) => Some(d),
                None => {
                    return Err(CliError::bad_input(
                        format!(
                            "`--disaggregate {}:{}`: each pool needs at least one replica of the \
                             layout ({} devices)",
                            p.prefill, p.decode, g.devices
                        ),
                        Some(format!(
                            "give each pool a multiple of {} devices",
                            g.devices
                        )),
                    ))
                }
            }
        }
        None => None,
    };
    let report = GenerateReport {
        model: &model,
        system: &system,
        generation: &g,
        capacity,
        chunked,
        speculative: spec,
        disaggregated: disagg,
        step_fit_error: steps.as_ref().map(StepModel::fit_error),
    };
    write_generate(&report, a.format.format.into(), out)?;
    Ok(())
}

/// A draft must share the target's vocabulary (it proposes the target's tokens).
fn check_draft(target: &Transformer, draft: &Transformer, name: &str) -> Result<(), CliError> {
    if draft.vocab != target.vocab {
        return Err(CliError::bad_input(
            format!(
                "`--draft {name}`: its vocabulary has {} tokens, the target's {}",
                draft.vocab, target.vocab
            ),
            Some("a draft proposes the target's tokens: give a model of the same family".into()),
        ));
    }
    Ok(())
}
