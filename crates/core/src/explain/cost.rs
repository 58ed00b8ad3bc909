//! An operator's givens and cost steps, read off its recorded cost formula.
//!
//! The formula is the operator's own ([`Op::cost_terms`]), recorded on a [`Tape`]: the givens
//! are its symbols in the order it makes them, the steps its named intermediate quantities
//! (the attention's pairs `P`) and its FLOPs, bytes read and bytes written, each printed in
//! symbols and with the values put in ([`exact_number`], so the arithmetic redone gives the
//! value to the last bit). What this file adds is words: what each symbol means and where each
//! formula comes from.

use super::{exact_number, qty, Given, Step};
use crate::formula::{Sym, Tape};
use crate::ops::{CausalCount, Op};
use crate::precision::Precision;

const GEMM_SOURCE: &str = "GEMM cost (roofline-core ops::Gemm; docs/cost-model.md §2): one \
multiply-add = 2 FLOP (Kaplan et al. 2020 §2.1); each operand crosses main memory once";
const BMM_SOURCE: &str = "batched matmul cost (ops::BatchedMatmul; docs/cost-model.md §2, \
attention unfused): one multiply-add = 2 FLOP; G query heads share one K/V head, read once \
(grouped-query attention, Ainslie et al. 2023)";
const ELEMENTWISE_SOURCE: &str = "elementwise cost (ops::Elementwise; docs/cost-model.md §3): \
each input read once, the output written once";
const SOFTMAX_SOURCE: &str = "softmax cost (ops::Softmax; docs/cost-model.md §3): max, \
subtract, exp, sum, divide = 5 FLOP per score";
const RMSNORM_SOURCE: &str = "RMSNorm cost (ops::RmsNorm; Zhang and Sennrich 2019; \
docs/cost-model.md §3): square, accumulate, ×1/rms, ×weight = 4 FLOP per element; the weight \
vector is read once";
const LAYERNORM_SOURCE: &str = "LayerNorm cost (ops::LayerNorm; Ba et al. 2016; \
docs/cost-model.md §3): 7 FLOP per element; weight and bias read once";
const ROTARY_SOURCE: &str = "rotary embedding cost (ops::Rotary; Su et al. 2021; \
docs/cost-model.md §2-3): x·cos + rotate_half(x)·sin = 3 FLOP per element; cos and sin tables \
of one row per token";
const EMBEDDING_SOURCE: &str = "embedding gather (ops::Embedding; docs/cost-model.md §2): no \
arithmetic; int64 token ids (8 B) and only the rows used are read";
const KV_WRITE_SOURCE: &str = "KV-cache write (ops::KvCacheWrite; docs/cost-model.md §2): keys \
and values of the new tokens copied into the cache; no FLOPs counted";
const EXPERT_SOURCE: &str = "mixture-of-experts grouped GEMM (ops::ExpertGemm; \
docs/cost-model.md §MoE): 2 FLOP per multiply-add over the T·k routed rows; only the experts \
some token chose are read, U = E·(1 − (1 − k/E)^T) expected under uniform routing";
const FLASH_SOURCE: &str = "fused attention cost (ops::FlashAttention; Dao et al. 2022 §3.3, \
arXiv:2205.14135; docs/cost-model.md §2): 4·e FLOP per (query, key) pair for QKᵀ and S·V, + 5 \
softmax + 2 scale/mask; scores stay on chip, Q, K, V read once, O written once";
const FLASH_VARIANT_SOURCE: &str = "fused attention cost (ops::FlashAttention; Dao et al. 2022, \
arXiv:2205.14135; sliding window: Jiang et al. 2023 (Mistral 7B); MLA: DeepSeek-V2 \
arXiv:2405.04434 §2.1): 2·e FLOP per pair for QKᵀ, 2·e_v for S·V, + φ; K and V read once per \
kv head (once in all when they are MLA's shared latent); O written once";

/// What a symbol of an operator's formula is.
enum Meaning {
    /// A count or a FLOPs-per-element figure: its unit and what it is.
    Plain(&'static str, &'static str),
    /// Bytes per element of a tensor stored in a precision.
    Bytes(&'static str, Precision),
    /// Group-wise scale bytes per weight.
    Scale,
}

/// The meaning of `symbol` in `op`'s cost formula, `None` for a symbol it does not have.
fn meaning(op: &Op, symbol: &str) -> Option<Meaning> {
    use Meaning::{Bytes, Plain};
    let m = match (op, symbol) {
        (Op::Gemm(_) | Op::ExpertGemm(_), "s_b") => Meaning::Scale,
        (Op::Gemm(_), "m") => Plain("", "rows of A and C (tokens)"),
        (Op::Gemm(_), "n") => Plain("", "columns of B and C (output features)"),
        (Op::Gemm(_), "k") => Plain("", "reduction dimension (input features)"),
        (Op::Gemm(g), "a") => Bytes("A, the activations", g.a),
        (Op::Gemm(g), "b") => Bytes("B, the weights", g.b),
        (Op::Gemm(g), "c") => Bytes("C, the output", g.c),
        (Op::BatchedMatmul(_), "N") => Plain("", "independent products (batch × query heads)"),
        (Op::BatchedMatmul(_), "G") => Plain(
            "",
            "products sharing one B (query heads per key/value head)",
        ),
        (Op::BatchedMatmul(_), "m") => Plain("", "rows of each A and C"),
        (Op::BatchedMatmul(_), "n") => Plain("", "columns of each B and C"),
        (Op::BatchedMatmul(_), "k") => Plain("", "reduction dimension"),
        (Op::BatchedMatmul(g), "a") => Bytes("A", g.a),
        (Op::BatchedMatmul(g), "b") => Bytes("B (the KV cache)", g.b),
        (Op::BatchedMatmul(g), "c") => Bytes("C", g.c),
        (Op::Elementwise(_), "E") => Plain("", "elements per tensor"),
        (Op::Elementwise(_), "i") => Plain("", "input tensors"),
        (Op::Elementwise(_), "φ") => {
            Plain("FLOP", "FLOPs per output element (docs/cost-model.md §3)")
        }
        (Op::Elementwise(e), "p") => Bytes("every input and the output", e.precision),
        (Op::Softmax(_), "r") => Plain("", "rows (independent softmaxes)"),
        (Op::Softmax(_), "n") => Plain("", "elements per row"),
        (Op::Softmax(_), "φ") => Plain("FLOP", "FLOPs per element"),
        (Op::Softmax(s), "p") => Bytes("input and output", s.precision),
        (Op::RmsNorm(_) | Op::LayerNorm(_), "r") => Plain("", "rows (tokens)"),
        (Op::RmsNorm(_) | Op::LayerNorm(_), "n") => Plain("", "elements per row (hidden size)"),
        (Op::RmsNorm(o), "p") => Bytes("input and output", o.precision),
        (Op::RmsNorm(o), "w") => Bytes("the weight", o.weight),
        (Op::LayerNorm(o), "p") => Bytes("input and output", o.precision),
        (Op::LayerNorm(o), "w") => Bytes("weight and bias", o.weight),
        (Op::Rotary(_), "T") => Plain("", "tokens"),
        (Op::Rotary(_), "H") => Plain("", "heads rotated (query + key heads)"),
        (Op::Rotary(_), "e") => Plain("", "elements per head"),
        (Op::Rotary(o), "p") => Bytes("q, k and the tables", o.precision),
        (Op::Embedding(_), "T") => Plain("", "tokens looked up"),
        (Op::Embedding(_), "d") => Plain("", "row width (hidden size)"),
        (Op::Embedding(o), "w") => Bytes("the table", o.weight),
        (Op::Embedding(o), "a") => Bytes("the output", o.act),
        (Op::KvCacheWrite(_), "T") => Plain("", "new tokens"),
        (Op::KvCacheWrite(_), "g") => Plain("", "key/value heads"),
        (Op::KvCacheWrite(_), "e") => Plain("", "elements per head"),
        (Op::KvCacheWrite(o), "a") => Bytes("the new keys and values", o.act),
        (Op::KvCacheWrite(o), "c") => Bytes("the cache", o.kv),
        (Op::ExpertGemm(_), "T") => Plain("", "tokens routed"),
        (Op::ExpertGemm(_), "k") => Plain("", "experts per token"),
        (Op::ExpertGemm(_), "E") => Plain("", "experts"),
        (Op::ExpertGemm(_), "n") => Plain("", "output features of one expert"),
        (Op::ExpertGemm(_), "K") => Plain("", "input features"),
        (Op::ExpertGemm(_), "U") => Plain("", "expected distinct experts read"),
        (Op::ExpertGemm(o), "a") => Bytes("the token rows", o.a),
        (Op::ExpertGemm(o), "b") => Bytes("the expert weights", o.b),
        (Op::ExpertGemm(o), "c") => Bytes("the output", o.c),
        (Op::FlashAttention(o) | Op::FlashAttentionBackward(o), _) => {
            return flash_meaning(o, symbol)
        }
        _ => return None,
    };
    Some(m)
}

/// The meaning of `symbol` in fused attention's cost formula.
fn flash_meaning(o: &crate::ops::FlashAttention, symbol: &str) -> Option<Meaning> {
    use Meaning::{Bytes, Plain};
    Some(match symbol {
        "B" => Plain("", "sequences"),
        "h" => Plain("", "query heads"),
        "g" => Plain("", "key/value heads"),
        "e" if o.v_head_dim.is_some() => Plain("", "query/key elements per head"),
        "e" => Plain("", "elements per head"),
        "e_v" => Plain("", "value elements per head"),
        "s" => Plain("", "queries per sequence"),
        "L" => Plain("", "keys per sequence"),
        "P" => Plain(
            "",
            "(query, key) pairs per head (causal; windowed when a window is set)",
        ),
        "R_k" => Plain("", "key rows read per kv head"),
        "φ" => Plain("FLOP", "softmax (5) + scale and mask (2) per score"),
        "a" => Bytes("Q and O", o.act),
        "c" => Bytes("K and V", o.kv),
        _ => return None,
    })
}

/// Where `op`'s cost formula comes from.
fn source(op: &Op) -> &'static str {
    match op {
        Op::Communication(_) => {
            "a collective (comm::collective; docs/parallelism.md): no FLOPs and no main-memory \
             bytes of its own, its time on the link"
        }
        Op::Gemm(_) => GEMM_SOURCE,
        Op::BatchedMatmul(_) => BMM_SOURCE,
        Op::Elementwise(_) => ELEMENTWISE_SOURCE,
        Op::Softmax(s) if s.scale_mask => {
            "softmax cost (ops::Softmax; docs/cost-model.md §3): max, subtract, exp, sum, \
             divide = 5 FLOP per score, plus scale by 1/√e and mask = 2 in the same kernel"
        }
        Op::Softmax(_) => SOFTMAX_SOURCE,
        Op::RmsNorm(_) => RMSNORM_SOURCE,
        Op::LayerNorm(_) => LAYERNORM_SOURCE,
        Op::Rotary(_) => ROTARY_SOURCE,
        Op::Embedding(_) => EMBEDDING_SOURCE,
        Op::KvCacheWrite(_) => KV_WRITE_SOURCE,
        Op::ExpertGemm(_) => EXPERT_SOURCE,
        Op::FlashAttention(o) if o.window.is_some() || o.v_head_dim.is_some() || o.kv_shared => {
            FLASH_VARIANT_SOURCE
        }
        Op::FlashAttention(_) => FLASH_SOURCE,
        Op::FlashAttentionBackward(_) => {
            "FlashAttention-2 backward (ops::FlashAttention::backward_cost; Dao 2023, \
             arXiv:2307.08691, §3.1.2 and Algorithm 2): five matmuls a (query, key) pair with \
             the scores recomputed on chip, 2.5 × the forward's matmul FLOPs (§4.1)"
        }
    }
}

/// The given of `symbol` = `value` in `op`'s formula, with its meaning.
fn given(op: &Op, symbol: &str, value: f64) -> Given {
    let (unit, meaning) = match meaning(op, symbol) {
        Some(Meaning::Plain(unit, what)) => (unit, what.to_string()),
        Some(Meaning::Bytes(what, p)) => ("B", format!("bytes per element of {what} ({p})")),
        Some(Meaning::Scale) => (
            "B",
            "group-wise scale (and zero-point) bytes per weight".to_string(),
        ),
        None => ("", String::new()),
    };
    Given {
        symbol: symbol.into(),
        value,
        unit,
        meaning,
        origin: None,
    }
}

/// The step deriving the named intermediate quantity `name` (the attention's pairs `P`).
fn definition_step(op: &Op, tape: &Tape, name: &str, expr: Sym<'_>) -> Step {
    let formula = tape.formula(expr);
    let causal = match op {
        Op::FlashAttention(o) if o.causal && o.window.is_none() => Some(o.causal_count),
        _ => None,
    };
    let (quantity, formula, source) = match name {
        "P" if causal == Some(CausalCount::Half) => (
            "(query, key) pairs per head",
            format!("{formula} (causal, diagonal block counted as half the square: s²/2)"),
            "ops::causal_pairs_of, CausalCount::Half (FlashAttention-2 §4.1, Megatron-LM)",
        ),
        "P" if causal.is_some() => (
            "(query, key) pairs per head",
            format!("{formula} (causal: query i sees L − s + i + 1 keys)"),
            "ops::causal_pairs; docs/cost-model.md §2 (masked blocks are skipped)",
        ),
        "P" => (
            "(query, key) pairs per head",
            formula,
            "every query attends to every key",
        ),
        _ => (name, formula, source(op)),
    };
    let sub = tape.substituted(expr, &exact_number);
    qty(quantity, name, formula, sub, expr.value(), "", source)
}

/// Given values and the cost steps of one operator: its named intermediate quantities, then
/// FLOPs `F`, bytes read `D_r` and bytes written `D_w`, all from its recorded cost formula.
pub(super) fn cost_steps(op: &Op) -> (Vec<Given>, Vec<Step>) {
    let tape = Tape::default();
    let terms = op.cost_terms::<Sym>(&tape);
    let mut givens: Vec<Given> = tape
        .symbols()
        .into_iter()
        .map(|s| given(op, s.name, s.value))
        .collect();
    if let Op::Gemm(g) = op {
        if g.bias {
            givens.push(Given {
                symbol: "bias".into(),
                value: g.n as f64,
                unit: "",
                meaning: "bias of n elements at b".into(),
                origin: None,
            });
        }
    }
    let mut steps: Vec<Step> = tape
        .definitions()
        .into_iter()
        .map(|d| definition_step(op, &tape, d.name, d.expr))
        .collect();
    let src = source(op);
    let step = |quantity, symbol, x: Sym<'_>, unit, note: &str| {
        let formula = format!("{}{note}", tape.formula(x));
        let sub = tape.substituted(x, &exact_number);
        qty(quantity, symbol, formula, sub, x.value(), unit, src)
    };
    // The IO model's key rows are explained where the formula uses them (a standard variant).
    let read_note = match op {
        Op::FlashAttention(o) if o.block_q.is_some_and(|b| b > 0) => {
            " (R_k key rows streamed per kv head)"
        }
        _ => "",
    };
    steps.extend([
        step("FLOPs", "F", terms.flops, "FLOP", ""),
        step("bytes read", "D_r", terms.bytes_read, "B", read_note),
        step("bytes written", "D_w", terms.bytes_written, "B", ""),
    ]);
    (givens, steps)
}

#[cfg(test)]
mod tests {
    use crate::analysis::analyze;
    use crate::device::tests::h100_sxm;
    use crate::explain::{explain_node, Outcome};
    use crate::model::tests::llama2_7b;
    use crate::precision::Precision;
    use crate::workload::{Precisions, Stage, Workload};

    fn decode(precisions: Precisions) -> Workload {
        Workload {
            stage: Stage::Decode,
            batch: 1,
            seq_len: 2048,
            context: 2048,
            cached: 0,
            precisions,
            flash_attention: false,
            logits: crate::workload::Logits::Last,
        }
    }

    #[test]
    fn int4_q_proj_decode_reads_its_group_scales() -> Result<(), Box<dyn std::error::Error>> {
        // GPTQ-style int4 with one fp16 scale (2 B) and no zero point per 128 weights:
        // Precisions::weight_scale_bytes = (scale bytes + zero-point bytes) / group size.
        let s = (2.0 + 0.0) / 128.0;
        let p = Precisions {
            weight: Precision::Int4,
            weight_scale_bytes: s,
            ..Precisions::uniform(Precision::Bf16)
        };
        let (m, dev) = (llama2_7b(), h100_sxm());
        let stage = analyze(&m, &decode(p), &dev, crate::memory::Reserve::DEFAULT)?;
        let d = explain_node(&m, &stage, &dev, "q_proj")?;
        let read = d.step("D_r").ok_or("no D_r")?;
        assert_eq!(read.formula, "m·k·a + k·n·(b + s_b)");
        assert_eq!(read.substituted, "1·4096·2 + 4096·4096·(0.5 + 0.015625)");
        // 8192 + 16,777,216·0.515625 = 8192 + 8,650,752.
        let expect = 1.0 * 4096.0 * 2.0 + 4096.0 * 4096.0 * (0.5 + s);
        assert_eq!(expect, 8_658_944.0);
        assert_eq!(
            read.outcome,
            Outcome::Quantity {
                value: expect,
                unit: "B"
            }
        );
        let sb = d.given.iter().find(|g| g.symbol == "s_b").ok_or("no s_b")?;
        assert_eq!((sb.value, sb.unit), (s, "B"));
        Ok(())
    }

    #[test]
    fn an_unquantized_gemm_shows_no_scale_term() -> Result<(), Box<dyn std::error::Error>> {
        let (m, dev) = (llama2_7b(), h100_sxm());
        let stage = analyze(
            &m,
            &decode(Precisions::uniform(Precision::Bf16)),
            &dev,
            crate::memory::Reserve::DEFAULT,
        )?;
        let d = explain_node(&m, &stage, &dev, "q_proj")?;
        let read = d.step("D_r").ok_or("no D_r")?;
        assert_eq!(read.formula, "m·k·a + k·n·b");
        assert_eq!(read.substituted, "1·4096·2 + 4096·4096·2");
        assert!(d.given.iter().all(|g| g.symbol != "s_b"));
        let symbols: Vec<&str> = d.given.iter().map(|g| g.symbol.as_str()).collect();
        assert_eq!(symbols, ["m", "n", "k", "a", "b", "c"]);
        Ok(())
    }
}
