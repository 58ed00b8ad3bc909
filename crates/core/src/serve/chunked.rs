//! Chunked prefill in a continuous batch: a new prompt enters the running batch in chunks of
//! at most C tokens, each chunk sharing a step with the running sequences' decodes (Agrawal
//! et al. 2024, "Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve";
//! vLLM's `--enable-chunked-prefill` with `--max-num-batched-tokens`).
//!
//! The prompt's TTFT is the sum of its ⌈(P − cached)/C⌉ mixed steps; the running sequences
//! wait one step per token, so each of those steps is the time between their tokens while the
//! prompt goes in. Without chunks the whole prompt runs in one step with the decodes, and the
//! running sequences stall for all of it. Each step is priced by [`StepModel`].

use super::mix::Mix;
use super::step_model::StepModel;
use crate::pricing::Estimate;
use crate::units::Seconds;
use serde::Serialize;

/// A prompt prefilled beside running decodes, chunked and whole.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ChunkedPrefill {
    /// C: the chunk, tokens.
    pub chunk: u64,
    /// Steps the prompt takes in chunks.
    pub steps: u64,
    /// Running sequences decoding beside it.
    pub running: u64,
    /// Their context, tokens.
    pub context: u64,
    /// TTFT of the prompt in chunks: Σ of its mixed steps, bound, seconds.
    pub ttft: Seconds,
    /// The longest mixed step: the running sequences' time between tokens while the prompt goes
    /// in, bound, seconds.
    pub stall: Seconds,
    /// TTFT of the prompt whole, in one step with the decodes, bound, seconds.
    pub ttft_whole: Seconds,
    /// That step: the running sequences' stall without chunks, bound, seconds.
    pub stall_whole: Seconds,
    /// A decode step of the running sequences alone, bound, seconds.
    pub decode_alone: Seconds,
    /// TTFT in chunks at the estimate's shares and launches, seconds.
    pub ttft_estimate: Seconds,
    /// The longest mixed step at the estimate, seconds.
    pub stall_estimate: Seconds,
    /// TTFT whole at the estimate, seconds.
    pub ttft_whole_estimate: Seconds,
    /// The stall without chunks at the estimate, seconds.
    pub stall_whole_estimate: Seconds,
}

/// A prompt of `prompt` tokens (`cached` of them already cached) prefilled in chunks of
/// `chunk` beside `running` sequences decoding at `context`.
pub fn chunked_prefill(
    model: &StepModel,
    prompt: u64,
    cached: u64,
    chunk: u64,
    running: u64,
    context: u64,
    eff: &Estimate,
) -> ChunkedPrefill {
    let chunk = chunk.max(1);
    let decodes = if running > 0 {
        Mix::decode(running, context)
    } else {
        Mix::EMPTY
    };
    let todo = prompt.saturating_sub(cached).max(1);
    let steps = todo.div_ceil(chunk);
    let (mut ttft, mut stall, mut ttft_e, mut stall_e) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut done = cached;
    for k in 0..steps {
        let q = chunk.min(prompt - done);
        let last = k + 1 == steps;
        let m = decodes + Mix::sequences(1, q, done, last);
        let (b, e) = (model.bound(&m).get(), model.estimate(&m, eff).get());
        ttft += b;
        ttft_e += e;
        stall = stall.max(b);
        stall_e = stall_e.max(e);
        done += q;
    }
    let whole = decodes + Mix::sequences(1, todo, cached, true);
    let (wb, we) = (model.bound(&whole), model.estimate(&whole, eff));
    ChunkedPrefill {
        chunk,
        steps,
        running,
        context,
        ttft: Seconds(ttft),
        stall: Seconds(stall),
        ttft_whole: wb,
        stall_whole: wb,
        decode_alone: model.bound(&decodes),
        ttft_estimate: Seconds(ttft_e),
        stall_estimate: Seconds(stall_e),
        ttft_whole_estimate: we,
        stall_whole_estimate: we,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Reserve;
    use crate::parallel::Layout;
    use crate::workload::Workload;

    #[test]
    fn chunks_trade_ttft_for_shorter_stalls() -> Result<(), crate::parallel::ParallelAnalysisError>
    {
        let m = crate::fixtures::llama2_7b();
        let mut sys = crate::parallel::tests::dgx(1);
        sys.gpus_per_node = 1;
        let base = Workload::decode(1, 1).flash_attention(true);
        let s = StepModel::new(&m, &base, &sys, Layout::SINGLE, Reserve::DEFAULT)?;
        let eff = Estimate::published();
        let c = chunked_prefill(&s, 4096, 0, 512, 31, 2048, &eff);
        assert_eq!(c.steps, 8);
        // Each of the 8 steps reads the weights again: TTFT is longer than whole.
        assert!(c.ttft > c.ttft_whole);
        // The running sequences' worst step is far shorter than the whole prompt's: both read
        // the 31 caches of 2,048 tokens (33 GB, ~10 ms), but 512 prompt tokens are ~7 ms of
        // GEMMs where 4,096 are ~55 ms.
        assert!(c.stall.get() < 0.5 * c.stall_whole.get());
        assert!(c.stall > c.decode_alone);
        // A chunk as large as the prompt is the whole prompt.
        let one = chunked_prefill(&s, 4096, 0, 4096, 31, 2048, &eff);
        assert_eq!(one.steps, 1);
        assert_eq!(one.ttft, one.ttft_whole);
        // Hand: the first step is the 31 decodes and 512 prompt tokens after none cached.
        let first = Mix::decode(31, 2048) + Mix::sequences(1, 512, 0, false);
        assert!(c.stall >= s.bound(&first));
        Ok(())
    }
}
