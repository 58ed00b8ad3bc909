//! `roofline op KIND …`: one operator on one chip.

use crate::args::{OpArgs, OpCommand};
use crate::error::CliError;
use roofline_core::analysis::AnalysisError;
use roofline_core::explain::explain_op;
use roofline_core::one_op::{evaluate_ops, AttentionSpec};
use roofline_core::ops::{
    CausalCount, Compute, Elementwise, Gemm, LayerNorm, Op, RmsNorm, Softmax,
};
use roofline_inputs::hardware::find_device;
use roofline_report::explain::write_derivations;
use roofline_report::op::{write_op, OpReport};
use roofline_report::plot::RooflineChart;
use std::io::Write;

/// Named kernels, in the order they run.
type Kernels = Vec<(&'static str, Op)>;

/// The kernels an operator runs as, with a one-line description.
fn kernels(
    kind: &OpCommand,
    p: roofline_core::precision::Precision,
) -> Result<(String, Kernels), CliError> {
    Ok(match *kind {
        OpCommand::Gemm { m, n, k, bias, .. } => (
            format!(
                "gemm m={m} n={n} k={k}{} ({p})",
                if bias { " + bias" } else { "" }
            ),
            vec![(
                "gemm",
                Op::Gemm(Gemm {
                    bias,
                    ..Gemm::uniform(m, n, k, p)
                }),
            )],
        ),
        OpCommand::Attention {
            batch,
            heads,
            kv_heads,
            head_dim,
            head_dim_v,
            q_len,
            kv_len,
            causal,
            no_causal,
            causal_count,
            fused,
            kv_precision,
            ..
        } => {
            let causal = causal && !no_causal;
            let hint = || Some("see `roofline op attention --help`".into());
            if causal_count.is_some() && !causal {
                return Err(CliError::bad_input(
                    "`--causal-count`: counts the pairs a causal mask leaves; this attention has no mask",
                    Some("add --causal".into()),
                ));
            }
            if causal_count.is_some() && !fused {
                return Err(CliError::bad_input(
                    "`--causal-count`: eager attention computes every score, masked or not; the count applies to the fused kernel",
                    Some("add --fused".into()),
                ));
            }
            let count: CausalCount = causal_count.map(Into::into).unwrap_or_default();
            let spec = AttentionSpec {
                batch,
                heads,
                kv_heads: kv_heads.unwrap_or(heads),
                head_dim,
                head_dim_v,
                q_len,
                kv_len: kv_len.unwrap_or(q_len),
                causal,
                causal_count: count,
                window: None,
                kv_shared: false,
                fused,
                act: p,
                kv: kv_precision.unwrap_or(p),
            };
            spec.validate().map_err(|e| {
                CliError::bad_input(
                    format!("`{}`: {}", crate::error::flag(e.quantity), e.message),
                    hint(),
                )
            })?;
            let mask = match (causal, fused) {
                (false, _) => String::new(),
                (true, true) => format!(", causal (pairs {})", count.describe()),
                (true, false) => ", causal (eager: every score computed, masked or not)".into(),
            };
            (
                format!(
                    "attention batch={} heads={} kv-heads={} head-dim={}{} q-len={} kv-len={}{mask}, {} ({p}, KV {})",
                    spec.batch,
                    spec.heads,
                    spec.kv_heads,
                    spec.head_dim,
                    match head_dim_v {
                        Some(v) => format!(" head-dim-v={v}"),
                        None => String::new(),
                    },
                    spec.q_len,
                    spec.kv_len,
                    if fused {
                        "fused (FlashAttention)"
                    } else {
                        "unfused (QKᵀ, softmax, S·V)"
                    },
                    spec.kv
                ),
                spec.kernels(),
            )
        }
        OpCommand::Softmax {
            rows,
            cols,
            no_scale_mask,
            ..
        } => (
            format!(
                "softmax rows={rows} cols={cols}{} ({p})",
                if no_scale_mask {
                    ""
                } else {
                    " with scale and mask"
                }
            ),
            vec![(
                "softmax",
                Op::Softmax(Softmax {
                    rows,
                    cols,
                    scale_mask: !no_scale_mask,
                    precision: p,
                }),
            )],
        ),
        OpCommand::Rmsnorm { rows, cols, .. } => (
            format!("rmsnorm rows={rows} cols={cols} ({p})"),
            vec![(
                "rmsnorm",
                Op::RmsNorm(RmsNorm {
                    rows,
                    cols,
                    precision: p,
                    weight: p,
                }),
            )],
        ),
        OpCommand::Layernorm { rows, cols, .. } => (
            format!("layernorm rows={rows} cols={cols} ({p})"),
            vec![(
                "layernorm",
                Op::LayerNorm(LayerNorm {
                    rows,
                    cols,
                    precision: p,
                    weight: p,
                }),
            )],
        ),
        OpCommand::Elementwise {
            inputs,
            elements,
            flops_per_element,
            ..
        } => {
            if !flops_per_element.is_finite() || !(0.0..=1e6).contains(&flops_per_element) {
                return Err(CliError::bad_input(
                    format!(
                        "`--flops-per-element {flops_per_element}`: must be a number from 0 to 1e6"
                    ),
                    Some(
                        "1 for an add or a multiply, 4 for SiLU·mul (docs/cost-model.md §3)".into(),
                    ),
                ));
            }
            let inputs = u32::try_from(inputs).map_err(|_| {
                CliError::bad_input(
                    format!("`--inputs {inputs}`: too many input tensors"),
                    Some(
                        "an elementwise map reads a handful of tensors, such as 2 for an add"
                            .into(),
                    ),
                )
            })?;
            (
                format!(
                    "elementwise inputs={inputs} elements={elements} flops/element={flops_per_element} ({p})"
                ),
                vec![(
                    "elementwise",
                    Op::Elementwise(Elementwise {
                        elements,
                        inputs,
                        flops_per_element,
                        precision: p,
                    }),
                )],
            )
        }
        OpCommand::AllReduce(_)
        | OpCommand::ReduceScatter(_)
        | OpCommand::AllGather(_)
        | OpCommand::AllToAll(_)
        | OpCommand::Broadcast(_)
        | OpCommand::SendRecv(_) => {
            return Err(CliError::bad_input(
                "a collective has no kernels on one chip",
                None,
            ))
        }
    })
}

pub fn run(a: &OpArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if let Some((collective, args)) = a.op.collective() {
        return super::collective::run(collective, args, out);
    }
    let Some(c) = a.op.common() else {
        return Err(CliError::bad_input("an operator without flags", None));
    };
    if let Some(path) = &c.plot.plot {
        super::plot::check_plot_path(path, c.plot.force)?;
    }
    let device = find_device(&c.hardware)?;
    let (title, kernels) = kernels(&a.op, c.precision)?;
    let rows = evaluate_ops(&kernels, &device, c.precision).map_err(AnalysisError::from)?;
    if let Some(path) = &c.plot.plot {
        let peaks: Vec<String> = rows
            .iter()
            .map(|r| match r.compute {
                Compute::Matrix(p) => format!("{}: {p} matrix peak", r.name),
                Compute::Vector => format!("{}: fp32 vector peak", r.name),
                Compute::Network => format!("{}: link bandwidth", r.name),
            })
            .collect();
        let chart = RooflineChart::for_ops(&title, &peaks.join(" · "), &device, &rows, c.precision)
            .map_err(AnalysisError::from)?;
        super::plot::write_plot(path, c.plot.force, c.plot.all_roofs, &chart)?;
    }
    if c.explain {
        let ds = kernels
            .iter()
            .map(|(name, op)| explain_op(name, op, &device, c.precision).map(|d| (None, d)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(AnalysisError::from)?;
        write_derivations(&ds, c.format.format.into(), out)?;
        return Ok(());
    }
    let ops: Vec<Op> = kernels.into_iter().map(|(_, o)| o).collect();
    write_op(
        &OpReport {
            title: &title,
            ops: &ops,
            device: &device,
            rows: &rows,
        },
        c.format.format.into(),
        out,
    )?;
    Ok(())
}
