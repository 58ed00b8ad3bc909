//! A node's place in the forward pass: how often it runs, its time per pass and its share.

use super::{plain_number, qty, Step};
use crate::analysis::{OpRow, StageAnalysis};
use crate::graph::Span;

/// Executions per forward pass (from the node's span), time per forward pass, and share of the
/// stage's roofline time.
pub(super) fn pass_steps(span: Span, row: &OpRow, stage: &StageAnalysis) -> [Step; 3] {
    let blocks_formula;
    let (count_formula, count_src) = match span {
        Span::Blocks { first, last } if first == 0 && last + 1 == stage.graph.layers => (
            "n_L (once in every decoder block)",
            "docs/cost-model.md §2: nodes inside a block run n_L times per forward pass",
        ),
        Span::Blocks { first, last } => {
            blocks_formula =
                format!("{last} − {first} + 1 (once in each of blocks {first}–{last})");
            (
                blocks_formula.as_str(),
                "docs/cost-model.md: nodes of a block kind that only some blocks have (dense or MoE MLP) run that many times",
            )
        }
        Span::Prologue | Span::Epilogue => (
            "1 (once per forward pass)",
            "docs/cost-model.md §2: embed_tokens, norm and lm_head run once",
        ),
        Span::StageBoundaries { .. } => (
            "p − 1 (once between each two pipeline stages)",
            "docs/parallelism.md: activations cross each stage boundary once per step",
        ),
    };
    let count = row.count as f64;
    let t = row.point().time.get();
    let per_pass = t * count;
    let total = stage.totals.time.get();
    [
        qty(
            "executions per forward pass",
            "n",
            count_formula,
            plain_number(count),
            count,
            "",
            count_src,
        ),
        qty(
            "time per forward pass",
            "t_pass",
            "n·t",
            format!("{}·{}", plain_number(count), plain_number(t)),
            per_pass,
            "s",
            "docs/cost-model.md §5: totals multiply each row by its count",
        ),
        qty(
            "share of the stage's roofline time",
            "share",
            "n·t / Σ n·t (every operator of the forward pass)",
            format!("{} / {}", plain_number(per_pass), plain_number(total)),
            if total > 0.0 {
                per_pass / total * 100.0
            } else {
                0.0
            },
            "%",
            "docs/cost-model.md §5 (launch overhead, 1 kernel per execution, is reported \
             separately)",
        ),
    ]
}
