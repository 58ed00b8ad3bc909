//! The largest batch and the longest context that fit on a device, by the one memory model
//! ([`crate::memory`]: weights + KV cache + activations + the runtime's reserve ≤ capacity).
//!
//! A paged KV cache (Kwon et al. 2023, "Efficient Memory Management for Large Language Model
//! Serving with PagedAttention") holds each sequence in blocks of `kv_block` tokens (vLLM's
//! default `--block-size` is 16): a sequence of L tokens takes ⌈L / block⌉ blocks, so the cache
//! a step needs is the memory model's × ⌈L / block⌉·block / L.
//!
//! Memory grows with the batch and with the context, so both answers are found by bisection
//! over the same analyses every other command makes.

use super::generate::{decode_workload, prefill_workload, Request};
use crate::comm::System;
use crate::memory::{MemoryFootprint, Reserve};
use crate::model::Transformer;
use crate::parallel::analysis::{analyze_parallel, ParallelAnalysisError};
use crate::parallel::Layout;
use crate::units::Bytes;
use crate::workload::{Workload, MAX_BATCH, MAX_TOKENS};
use serde::Serialize;

/// vLLM's default KV block, tokens (`--block-size 16`).
pub const DEFAULT_KV_BLOCK: u64 = 16;
/// The largest block accepted, tokens (vLLM allows up to 256; beyond 2^16 a value is taken for
/// a typo).
pub const MAX_KV_BLOCK: u64 = 1 << 16;

/// The memory of a step whose sequences hold `kv_len` tokens each, with the cache in blocks of
/// `block` tokens: the footprint with its KV cache × ⌈kv_len / block⌉·block / kv_len.
pub fn in_blocks(m: &MemoryFootprint, kv_len: u64, block: u64) -> MemoryFootprint {
    let block = block.max(1);
    let padded = kv_len.div_ceil(block) * block;
    let scale = if kv_len == 0 {
        1.0
    } else {
        padded as f64 / kv_len as f64
    };
    MemoryFootprint {
        kv_cache: Bytes(m.kv_cache.get() * scale),
        ..*m
    }
}

/// What fits, and the memory at the answer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fit {
    /// The largest value that fits (batch, or tokens per sequence), `None` when even the
    /// smallest does not.
    pub largest: Option<u64>,
    /// The footprint at the largest value (at the smallest when none fits).
    pub memory: MemoryFootprint,
    /// The search stopped at the largest value accepted (the batch or length limit), not at
    /// the memory.
    pub at_limit: bool,
}

/// The largest batch for which every step of `r` (its prefill and its last decode, the KV
/// cache in `kv_block`-token blocks) fits on one device of `system` under `layout`; `r.batch`
/// is ignored. `None` capacity (unknown) answers the limit [`MAX_BATCH`].
///
/// # Errors
/// What [`analyze_parallel`] refuses.
pub fn max_batch(
    model: &Transformer,
    base: &Workload,
    r: &Request,
    system: &System,
    layout: Layout,
    reserve: Reserve,
    kv_block: u64,
) -> Result<Fit, ParallelAnalysisError> {
    let probe = |b: u64| -> Result<(bool, MemoryFootprint), ParallelAnalysisError> {
        let r = Request { batch: b, ..*r };
        let p = analyze_parallel(model, &prefill_workload(base, &r), system, layout, reserve)?;
        let pm = in_blocks(&p.memory, r.prompt, kv_block);
        if pm.fits() == Some(false) {
            return Ok((false, pm));
        }
        if r.generate < 2 {
            return Ok((true, pm));
        }
        let w = decode_workload(base, &r, r.last_context());
        let d = analyze_parallel(model, &w, system, layout, reserve)?;
        let dm = in_blocks(&d.memory, w.kv_len(), kv_block);
        let m = if dm.total() > pm.total() { dm } else { pm };
        Ok((dm.fits() != Some(false), m))
    };
    largest(1, max_batch_for(r), probe)
}

/// The batch limit for a request: [`MAX_BATCH`], and no more sequences than keep a pass within
/// [`crate::workload::MAX_PASS_TOKENS`].
fn max_batch_for(r: &Request) -> u64 {
    let per_seq = r.final_kv_tokens().max(r.prompt).max(1);
    MAX_BATCH
        .min(crate::workload::MAX_PASS_TOKENS / per_seq)
        .max(1)
}

/// The most tokens a sequence may hold (its context + 1: prompt and generated) for a decode
/// step of `batch` sequences to fit on one device, the KV cache in `kv_block`-token blocks.
///
/// # Errors
/// What [`analyze_parallel`] refuses.
pub fn max_context(
    model: &Transformer,
    base: &Workload,
    batch: u64,
    system: &System,
    layout: Layout,
    reserve: Reserve,
    kv_block: u64,
) -> Result<Fit, ParallelAnalysisError> {
    let r = Request {
        prompt: 1,
        generate: 2,
        batch,
        cached_prefix: 0,
    };
    let probe = |tokens: u64| -> Result<(bool, MemoryFootprint), ParallelAnalysisError> {
        let w = decode_workload(base, &r, tokens - 1);
        let d = analyze_parallel(model, &w, system, layout, reserve)?;
        let m = in_blocks(&d.memory, tokens, kv_block);
        Ok((m.fits() != Some(false), m))
    };
    let limit = MAX_TOKENS.min(crate::workload::MAX_PASS_TOKENS / batch.max(1));
    largest(1, limit.max(1), probe)
}

/// The largest x in [lo, hi] with `probe(x)` true, for a probe true then false: doubling from
/// lo, then bisection.
fn largest(
    lo: u64,
    hi: u64,
    mut probe: impl FnMut(u64) -> Result<(bool, MemoryFootprint), ParallelAnalysisError>,
) -> Result<Fit, ParallelAnalysisError> {
    let (ok, m) = probe(lo)?;
    if !ok {
        return Ok(Fit {
            largest: None,
            memory: m,
            at_limit: false,
        });
    }
    let (mut good, mut good_m) = (lo, m);
    // Double until a probe fails or the limit is reached.
    let mut bad = None;
    while good < hi {
        let next = good.saturating_mul(2).min(hi);
        let (ok, m) = probe(next)?;
        if ok {
            good = next;
            good_m = m;
        } else {
            bad = Some(next);
            break;
        }
    }
    let Some(mut bad) = bad else {
        return Ok(Fit {
            largest: Some(good),
            memory: good_m,
            at_limit: true,
        });
    };
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        let (ok, m) = probe(mid)?;
        if ok {
            good = mid;
            good_m = m;
        } else {
            bad = mid;
        }
    }
    Ok(Fit {
        largest: Some(good),
        memory: good_m,
        at_limit: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::llama2_7b;

    fn one_h100() -> System {
        let mut s = crate::parallel::tests::dgx(1);
        s.gpus_per_node = 1;
        s
    }

    #[test]
    fn blocks_round_each_sequence_up() {
        let m = MemoryFootprint {
            kv_cache: Bytes(1000.0),
            ..MemoryFootprint::EMPTY
        };
        // 100 tokens in blocks of 16: 7 blocks = 112 tokens.
        assert_eq!(in_blocks(&m, 100, 16).kv_cache.get(), 1120.0);
        assert_eq!(in_blocks(&m, 112, 16).kv_cache.get(), 1000.0);
    }

    #[test]
    fn the_largest_batch_by_hand() -> Result<(), ParallelAnalysisError> {
        // Llama-2-7B bf16 on an 80 GB H100, 10 % reserve: 72 GB − 13,476,831,232 B of weights
        // leaves 58,523,168,768 B. A 2,048-token prompt generating 256 ends at 2,303 tokens a
        // sequence, 2,304 in blocks of 16, at 524,288 B a token: 1,207,959,552 B a sequence,
        // so the last decode fits 48 sequences (48.4). The prefill of 48 prompts at once
        // holds 48 × 2,048 tokens of cache (51.5 GB) and their activations besides (the MLP's
        // 98,304 × 11,008 bf16 tensors, 2.2 GB each): it does not fit, and 47 do.
        let (m, sys) = (llama2_7b(), one_h100());
        let base = Workload::decode(1, 1).flash_attention(true);
        let r = Request {
            prompt: 2048,
            generate: 256,
            batch: 1,
            cached_prefix: 0,
        };
        let prefill_fits = |b: u64| {
            let w = Workload::prefill(b, 2048).flash_attention(true);
            crate::analysis::analyze(&m, &w, &sys.chip, Reserve::DEFAULT)
                .map(|a| a.memory.fits() == Some(true))
        };
        assert!(prefill_fits(47).map_err(ParallelAnalysisError::Analysis)?);
        assert!(!prefill_fits(48).map_err(ParallelAnalysisError::Analysis)?);
        let fit = max_batch(&m, &base, &r, &sys, Layout::SINGLE, Reserve::DEFAULT, 16)?;
        assert_eq!(fit.largest, Some(47));
        assert!(!fit.at_limit);
        // A 16-token prompt has no such prefill: the decode bounds it, 58,523,168,768 B over
        // 272 tokens (17 blocks) × 524,288 B = 410 sequences (410.4).
        let short = Request { prompt: 16, ..r };
        let fit = max_batch(
            &m,
            &base,
            &short,
            &sys,
            Layout::SINGLE,
            Reserve::DEFAULT,
            16,
        )?;
        assert_eq!(fit.largest, Some(410));
        // Blocks of 2,048 take 4,096 tokens a sequence at the last decode: 58.5e9 /
        // 2,147,483,648 = 27 (27.25); the prefill of 27 fits.
        let fit = max_batch(&m, &base, &r, &sys, Layout::SINGLE, Reserve::DEFAULT, 2048)?;
        assert_eq!(fit.largest, Some(27));
        Ok(())
    }

    #[test]
    fn the_longest_context_by_hand() -> Result<(), ParallelAnalysisError> {
        // At batch 1: 58,523,168,768 B / 524,288 B = 111,624.09 tokens; 111,624 leave 45,056 B,
        // less than the decode's activations (270 kB), so 111,623; in blocks of 16, 111,616
        // (6,976 blocks).
        let (m, sys) = (llama2_7b(), one_h100());
        let base = Workload::decode(1, 1).flash_attention(true);
        let fit = max_context(&m, &base, 1, &sys, Layout::SINGLE, Reserve::DEFAULT, 16)?;
        assert_eq!(fit.largest, Some(111_616));
        let fit = max_context(&m, &base, 1, &sys, Layout::SINGLE, Reserve::DEFAULT, 1)?;
        assert_eq!(fit.largest, Some(111_623));
        Ok(())
    }
}
