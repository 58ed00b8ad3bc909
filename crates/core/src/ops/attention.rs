//! Fused attention (FlashAttention, Dao et al. 2022, arXiv:2205.14135; FlashAttention-2, Dao
//! 2023, arXiv:2307.08691).
//!
//! Unfused attention is three kernels in the graph: a [`super::BatchedMatmul`] for QKᵀ, a
//! [`super::Softmax`] and a [`super::BatchedMatmul`] for S·V; the score matrix crosses main
//! memory twice each way. The fused kernel keeps scores on chip and writes only the output.

use super::cost::Cost;
use super::elementwise::{SCALE_MASK_FLOPS_PER_ELEMENT, SOFTMAX_FLOPS_PER_ELEMENT};
use crate::precision::Precision;
use serde::Serialize;

/// Number of (query, key) pairs a causal mask leaves for `q_len` queries that are the last
/// `q_len` positions of a sequence of `kv_len` keys: query i (0-based) sees
/// `kv_len − q_len + i + 1` keys, so the total is `q_len·(kv_len − q_len) + q_len·(q_len + 1)/2`.
/// Prefill (q_len = kv_len = s): s·(s+1)/2. Decode (q_len = 1): kv_len. `kv_len` is raised to
/// `q_len` if smaller.
#[inline]
pub fn causal_pairs(q_len: u64, kv_len: u64) -> f64 {
    let q = q_len as f64;
    let kv = kv_len.max(q_len) as f64;
    q * (kv - q) + q * (q + 1.0) / 2.0
}

/// One fused attention kernel over `batch` sequences, `heads` query heads sharing `kv_heads`
/// key/value heads (GQA), `q_len` queries and `kv_len` keys per sequence.
///
/// - pairs P = q_len·kv_len, or [`causal_pairs`] when causal (masked blocks are skipped).
/// - FLOPs = batch·heads·P·(4·head_dim + 5 + 2): 2·head_dim for QKᵀ and 2·head_dim for S·V per
///   pair (FlashAttention paper §3.3 counts the 4·N²·d matmul term), plus softmax
///   ([`SOFTMAX_FLOPS_PER_ELEMENT`]) and scale/mask ([`SCALE_MASK_FLOPS_PER_ELEMENT`]) per score.
/// - bytes read = Q (batch·q_len·heads·head_dim·a) + K and V (2·batch·kv_heads·R·head_dim·kv),
///   where R is the number of key rows read per kv head: kv_len when `block_q` is `None` (each
///   K and V read once, the ideal), else the FlashAttention-2 IO model: every block of
///   `block_q` queries streams the keys it can see (all kv_len, or up to its last query when
///   causal).
/// - bytes written = O (batch·q_len·heads·head_dim·a): the output, never a score matrix.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FlashAttention {
    /// Sequences.
    pub batch: u64,
    /// Query heads (`num_attention_heads`).
    pub heads: u64,
    /// Key/value heads (`num_key_value_heads`).
    pub kv_heads: u64,
    /// Elements per head.
    pub head_dim: u64,
    /// Queries per sequence (prefill: sequence length; decode: 1).
    pub q_len: u64,
    /// Keys per sequence (prefill: sequence length; decode: context + 1).
    pub kv_len: u64,
    /// Causal mask: masked blocks are skipped.
    pub causal: bool,
    /// Queries per thread block for the IO model, or `None` for K and V read once.
    pub block_q: Option<u64>,
    /// Precision of Q, O and the computation.
    pub act: Precision,
    /// Precision of K and V (the KV cache).
    pub kv: Precision,
}

impl FlashAttention {
    /// (query, key) pairs computed per (sequence, head).
    #[inline]
    pub fn pairs(&self) -> f64 {
        if self.causal {
            causal_pairs(self.q_len, self.kv_len)
        } else {
            self.q_len as f64 * self.kv_len as f64
        }
    }

    /// Key (and value) rows read per (sequence, kv head): see the type's documentation.
    pub fn key_rows_read(&self) -> f64 {
        let Some(br) = self.block_q.filter(|&b| b > 0) else {
            return self.kv_len as f64;
        };
        let (q, kv) = (self.q_len, self.kv_len.max(self.q_len));
        let blocks = q.div_ceil(br);
        if !self.causal {
            return blocks as f64 * kv as f64;
        }
        let off = kv - q;
        // Block j's last query sits at position off + min((j+1)·br, q) − 1.
        let mut rows = 0.0;
        for j in 0..blocks {
            rows += (off + ((j + 1) * br).min(q)) as f64;
        }
        rows
    }

    /// FLOPs and bytes, as in the type's documentation.
    #[inline]
    pub fn cost(&self) -> Cost {
        let (b, h, kvh, d) = (
            self.batch as f64,
            self.heads as f64,
            self.kv_heads as f64,
            self.head_dim as f64,
        );
        let per_pair = 4.0 * d + SOFTMAX_FLOPS_PER_ELEMENT + SCALE_MASK_FLOPS_PER_ELEMENT;
        let q_elems = b * self.q_len as f64 * h * d;
        Cost::new(
            b * h * self.pairs() * per_pair,
            q_elems * self.act.bytes() + 2.0 * b * kvh * self.key_rows_read() * d * self.kv.bytes(),
            q_elems * self.act.bytes(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llama7b(q_len: u64, kv_len: u64, causal: bool) -> FlashAttention {
        FlashAttention {
            batch: 1,
            heads: 32,
            kv_heads: 32,
            head_dim: 128,
            q_len,
            kv_len,
            causal,
            block_q: None,
            act: Precision::Fp16,
            kv: Precision::Fp16,
        }
    }

    #[test]
    fn causal_pairs_by_hand() {
        assert_eq!(causal_pairs(4, 4), 10.0); // 1+2+3+4
        assert_eq!(causal_pairs(1, 2049), 2049.0);
        assert_eq!(causal_pairs(2, 5), 4.0 + 5.0);
    }

    #[test]
    fn fused_causal_prefill_counts_half_and_writes_output_only() {
        let s = 2048.0;
        let c = llama7b(2048, 2048, true).cost();
        let pairs = s * (s + 1.0) / 2.0;
        assert_eq!(c.flops.get(), 32.0 * pairs * (4.0 * 128.0 + 7.0));
        // Output is batch·tokens·heads·head_dim, not tokens × keys.
        assert_eq!(c.bytes_written.get(), 2048.0 * 32.0 * 128.0 * 2.0);
        // Q, K, V each read once.
        assert_eq!(c.bytes_read.get(), 3.0 * 2048.0 * 32.0 * 128.0 * 2.0);
    }

    #[test]
    fn gqa_reads_kv_heads_only() {
        let mut a = llama7b(1, 4096, true);
        a.kv_heads = 8;
        let c = a.cost();
        assert_eq!(
            c.bytes_read.get(),
            32.0 * 128.0 * 2.0 + 2.0 * 8.0 * 4096.0 * 128.0 * 2.0
        );
    }

    #[test]
    fn io_model_reads_kv_once_per_query_block() {
        // 256 queries in blocks of 128, not causal: K and V are streamed twice.
        let mut a = llama7b(256, 256, false);
        a.block_q = Some(128);
        assert_eq!(a.key_rows_read(), 512.0);
        // Causal: block 0 sees 128 keys, block 1 sees 256.
        a.causal = true;
        assert_eq!(a.key_rows_read(), 384.0);
        // Decode: one block reading every key once.
        let mut d = llama7b(1, 2049, true);
        d.block_q = Some(128);
        assert_eq!(d.key_rows_read(), 2049.0);
    }
}
