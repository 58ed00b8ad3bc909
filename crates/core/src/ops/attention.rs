//! Fused attention (FlashAttention, Dao et al. 2022, arXiv:2205.14135; FlashAttention-2, Dao
//! 2023, arXiv:2307.08691).
//!
//! Unfused attention is three kernels in the graph: a [`super::BatchedMatmul`] for QKᵀ, a
//! [`super::Softmax`] and a [`super::BatchedMatmul`] for S·V; the score matrix crosses main
//! memory twice each way. The fused kernel keeps scores on chip and writes only the output.

use super::cost::{Cost, CostTerms};
use super::elementwise::{SCALE_MASK_FLOPS_PER_ELEMENT, SOFTMAX_FLOPS_PER_ELEMENT};
use crate::formula::Arith;
use crate::precision::Precision;
use crate::units::to_f64;
use serde::Serialize;

/// How the diagonal block of a causal mask is counted: the s × s block where the queries meet
/// their own positions (all of a prefill's score matrix).
///
/// The literature counts it two ways. Both agree off the diagonal block (the s·(L − s) pairs of
/// the keys before the queries, which every query sees) and differ by s/2 pairs on it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum CausalCount {
    /// The pairs the mask leaves, the diagonal included: query i of the block sees i + 1 of its
    /// keys, s·(s + 1)/2 in all. What a kernel that skips only fully masked blocks computes, to
    /// the block; the decoder's count.
    #[default]
    Exact,
    /// Half the square, s²/2: FlashAttention's benchmark FLOP count (`flops(…, causal=True)`
    /// divides 4·batch·seqlen²·heads·head_dim by 2; Dao 2023, arXiv:2307.08691, §4.1) and
    /// Megatron-LM's (`num_floating_point_operations`: "only half of the attention matrix is
    /// non-zero").
    Half,
}

impl CausalCount {
    /// Short id as the CLI spells it (`exact`, `half`).
    pub fn id(self) -> &'static str {
        match self {
            CausalCount::Exact => "exact",
            CausalCount::Half => "half",
        }
    }

    /// The pairs of the diagonal block in words, as reports print the convention.
    pub fn describe(self) -> &'static str {
        match self {
            CausalCount::Exact => "counted exactly, diagonal included: s·(s+1)/2",
            CausalCount::Half => {
                "counted as half the square, as FlashAttention and Megatron-LM do: s²/2"
            }
        }
    }
}

/// Number of (query, key) pairs a causal mask leaves for `q_len` queries that are the last
/// `q_len` positions of a sequence of `kv_len` keys, the diagonal included
/// ([`CausalCount::Exact`]): query i (0-based) sees `kv_len − q_len + i + 1` keys, so the total
/// is `q_len·(kv_len − q_len) + q_len·(q_len + 1)/2`. Prefill (q_len = kv_len = s): s·(s+1)/2.
/// Decode (q_len = 1): kv_len. `kv_len` is raised to `q_len` if smaller.
#[inline]
pub fn causal_pairs(q_len: u64, kv_len: u64) -> f64 {
    causal_pairs_of::<f64>((), q_len, kv_len, CausalCount::Exact)
}

/// The causal (query, key) pairs in any [`Arith`]metic, with the diagonal block counted by
/// `count`: `s·(L − s) + s·(s + 1)/2` ([`CausalCount::Exact`]) or `s·(L − s) + s·s/2`
/// ([`CausalCount::Half`]), with s = `q_len` and L = `kv_len` (raised to `q_len` if smaller).
/// The one formula both the decoder and `roofline op attention` count causal attention with.
#[inline(always)]
pub fn causal_pairs_of<A: Arith>(cx: A::Cx, q_len: u64, kv_len: u64, count: CausalCount) -> A {
    let q = A::sym(cx, "s", to_f64(q_len));
    let kv = A::sym(cx, "L", to_f64(kv_len.max(q_len)));
    let diagonal = match count {
        CausalCount::Exact => q * (q + A::num(cx, 1.0)),
        CausalCount::Half => q * q,
    };
    q * (kv - q) + diagonal / A::num(cx, 2.0)
}

/// (query, key) pairs of causal attention with a sliding window of `window` keys: query i
/// (position `kv_len − q_len + i`) sees min(position + 1, window) keys.
pub fn windowed_pairs(q_len: u64, kv_len: u64, window: u64) -> f64 {
    let kv = kv_len.max(q_len);
    let off = kv - q_len;
    let w = window.max(1);
    // Positions p = off … kv − 1 see min(p + 1, w): those below w − 1 see p + 1, the rest w.
    let full_from = w.saturating_sub(1).max(off).min(kv);
    let ramp: f64 = if full_from > off {
        // Σ_{p=off}^{full_from−1} (p + 1)
        let (a, z) = (to_f64(off) + 1.0, to_f64(full_from));
        (a + z) * (z - a + 1.0) / 2.0
    } else {
        0.0
    };
    ramp + to_f64(kv - full_from) * to_f64(w)
}

/// One fused attention kernel over `batch` sequences, `heads` query heads sharing `kv_heads`
/// key/value heads (GQA), `q_len` queries and `kv_len` keys per sequence.
///
/// - pairs P = q_len·kv_len, or [`causal_pairs_of`] when causal (masked blocks are skipped),
///   its diagonal block counted by `causal_count`; with a window, [`windowed_pairs`] (exact).
/// - FLOPs = batch·heads·P·(4·head_dim + 5 + 2): 2·head_dim for QKᵀ and 2·head_dim for S·V per
///   pair (FlashAttention paper §3.3 counts the 4·N²·d matmul term), plus softmax
///   ([`SOFTMAX_FLOPS_PER_ELEMENT`]) and scale/mask ([`SCALE_MASK_FLOPS_PER_ELEMENT`]) per score;
///   with a value head size of its own, 2·head_dim + 2·v_head_dim per pair.
/// - bytes read = Q (batch·q_len·heads·head_dim·a) + K and V (2·batch·kv_heads·R·head_dim·kv;
///   R·(head_dim + v_head_dim) with a value head size of its own, R·head_dim when K and V are
///   one tensor), where R is the number of key rows read per kv head: kv_len when `block_q` is
///   `None` (each K and V read once, the ideal), else the FlashAttention-2 IO model: every
///   block of `block_q` queries streams the keys it can see (all kv_len, or up to its last
///   query when causal).
/// - bytes written = O (batch·q_len·heads·v_head_dim·a): the output, never a score matrix.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
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
    /// How the diagonal block of the causal mask is counted (ignored without `causal`, and
    /// with a `window`, which is counted exactly).
    pub causal_count: CausalCount,
    /// Sliding window: each query sees at most this many most recent keys (Mistral), the rest
    /// are skipped. `None`: no window.
    pub window: Option<u64>,
    /// Value head size when it differs from the query/key head size (MLA: 128 vs 192 in prefill,
    /// 512 vs 576 in absorbed decode). `None`: `head_dim`.
    pub v_head_dim: Option<u64>,
    /// K and V are one tensor (MLA's cached latent: V is the first `v_head_dim` elements of each
    /// key row), read once.
    pub kv_shared: bool,
    /// Queries per thread block for the IO model, or `None` for K and V read once.
    pub block_q: Option<u64>,
    /// Precision of Q, O and the computation.
    pub act: Precision,
    /// Precision of K and V (the KV cache).
    pub kv: Precision,
}

impl FlashAttention {
    /// Key (and value) rows read per (sequence, kv head): see the type's documentation.
    pub fn key_rows_read(&self) -> f64 {
        let Some(br) = self.block_q.filter(|&b| b > 0) else {
            return to_f64(self.kv_len);
        };
        let (q, kv) = (self.q_len, self.kv_len.max(self.q_len));
        let blocks = q.div_ceil(br);
        if !self.causal {
            return to_f64(blocks) * to_f64(kv);
        }
        let off = kv - q;
        // Block j's queries sit at positions off + j·br … off + min((j+1)·br, q) − 1; it streams
        // keys 0 … last (or, with a window w, last − w + 1 … last, from the first query's window).
        let mut rows = 0.0;
        for j in 0..blocks {
            let first = off + j * br;
            let last = off + ((j + 1) * br).min(q) - 1;
            let start = match self.window {
                Some(w) => (first + 1).saturating_sub(w),
                None => 0,
            };
            rows += to_f64(last + 1 - start);
        }
        rows
    }

    /// FLOPs and bytes, as in the type's documentation.
    #[inline]
    pub fn cost(&self) -> Cost {
        self.cost_terms::<f64>(()).into()
    }

    /// The cost formula, in any [`Arith`]metic, as in the type's documentation: the pairs `P`
    /// (named: `s·(L − s) + s·(s + 1)/2` causal, `s·(L − s) + s·s/2` causal by halves, `s·L`
    /// otherwise, [`windowed_pairs`] as a
    /// value with a window), `B·h·P·(4·e + φ)` (`2·e + 2·e_v + φ` with a value head size of its
    /// own), `B·s·h·e·a + 2·B·g·L·e·c` (`R_k` key rows instead of `L` with a query block;
    /// `B·g·L·(e + e_v)·c` with a value head size, `B·g·L·e·c` for a shared latent),
    /// `B·s·h·e_v·a`.
    ///
    /// All terms are integers (counts times power-of-two byte sizes) below 2^53 for any shape
    /// the decoder accepts, so their f64 products are exact in any order.
    #[inline(always)]
    pub fn cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        let s = |name, v: f64| A::sym(cx, name, v);
        let (b, h, kvh) = (
            s("B", to_f64(self.batch)),
            s("h", to_f64(self.heads)),
            s("g", to_f64(self.kv_heads)),
        );
        let d = s("e", to_f64(self.head_dim));
        let dv = self.v_head_dim.map(|v| s("e_v", to_f64(v)));
        let (q, kv) = (s("s", to_f64(self.q_len)), s("L", to_f64(self.kv_len)));
        let pairs = match (self.causal, self.window) {
            (true, Some(w)) => s("P", windowed_pairs(self.q_len, self.kv_len, w)),
            (true, None) => {
                causal_pairs_of::<A>(cx, self.q_len, self.kv_len, self.causal_count).named("P")
            }
            _ => (q * kv).named("P"),
        };
        let rows = match self.block_q.filter(|&b| b > 0) {
            Some(_) => s("R_k", self.key_rows_read()),
            None => kv,
        };
        let (a, c) = (s("a", self.act.bytes()), s("c", self.kv.bytes()));
        let phi = s(
            "φ",
            SOFTMAX_FLOPS_PER_ELEMENT + SCALE_MASK_FLOPS_PER_ELEMENT,
        );
        let two = A::num(cx, 2.0);
        let per_pair = match dv {
            Some(dv) => two * d + two * dv + phi,
            None => A::num(cx, 4.0) * d + phi,
        };
        let kv_read = match (self.kv_shared, dv) {
            (true, _) => b * kvh * rows * d * c,
            (false, Some(dv)) => b * kvh * rows * (d + dv) * c,
            (false, None) => two * b * kvh * rows * d * c,
        };
        let rows_q = b * q * h;
        CostTerms {
            flops: b * h * pairs * per_pair,
            bytes_read: rows_q * d * a + kv_read,
            bytes_written: rows_q * dv.unwrap_or(d) * a,
        }
    }
}

/// FLOPs per score of the backward kernel besides its matmuls: the scores rescaled and masked
/// again (2, [`SCALE_MASK_FLOPS_PER_ELEMENT`]), P = exp(S − LSE) from the kept log-sum-exp
/// (subtract 1, exp 1), dS = P ∘ (dP − D) (subtract 1, multiply 1) and its 1/√d scale (1) = 7
/// (FlashAttention-2, Dao 2023, arXiv:2307.08691, Algorithm 2, lines 11–14).
pub const ATTENTION_BACKWARD_FLOPS_PER_SCORE: f64 = 7.0;

/// Bytes per element of the log-sum-exp the forward kernel keeps for the backward (fp32,
/// one per query row and head: FlashAttention-2's `softmax_lse`).
pub const LSE_BYTES: f64 = 4.0;

impl FlashAttention {
    /// FLOPs and bytes of the backward kernel of this attention (FlashAttention-2, Dao 2023,
    /// arXiv:2307.08691, §3.1.2 and Algorithm 2).
    ///
    /// - FLOPs = B·h·P·(6·e + 4·e_v + 7) + 2·B·s·h·e_v: five matmuls per pair, with the scores
    ///   recomputed on chip: S = QKᵀ (2·e), dV = Pᵀ·dO (2·e_v), dP = dO·Vᵀ (2·e_v),
    ///   dQ = dS·K (2·e), dK = dSᵀ·Q (2·e). With e_v = e that is 10·e per pair, 2.5 times the
    ///   forward's 4·e: FlashAttention-2 §4.1 counts the backward as 2.5 × the forward's matmul
    ///   FLOPs ("2 matmuls in the forward pass and 5 matmuls in the backward pass, due to
    ///   recomputation"). Plus [`ATTENTION_BACKWARD_FLOPS_PER_SCORE`] per pair, and
    ///   D = rowsum(dO ∘ O) (2·e_v per query row and head). P counts the pairs as the forward
    ///   does (causal, windowed, [`CausalCount`]).
    /// - bytes read = Q (B·s·h·e·a), O and dO (2·B·s·h·e_v·a), K and V as the forward reads
    ///   them with every key row read once (`block_q` is not applied: the backward's loop
    ///   order, K/V blocks outside and queries inside, re-reads Q, dO and dQ instead, not yet
    ///   modelled), and the log-sum-exp (B·h·s·4).
    /// - bytes written = dQ (B·s·h·e·a), dK and dV (B·g·L·(e + e_v)·a; B·g·L·e·a for a shared
    ///   latent), in the activation precision.
    #[inline]
    pub fn backward_cost(&self) -> Cost {
        self.backward_cost_terms::<f64>(()).into()
    }

    /// [`FlashAttention::backward_cost`] in any [`Arith`]metic.
    #[inline(always)]
    pub fn backward_cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        let s = |name, v: f64| A::sym(cx, name, v);
        let (b, h, kvh) = (
            s("B", to_f64(self.batch)),
            s("h", to_f64(self.heads)),
            s("g", to_f64(self.kv_heads)),
        );
        let d = s("e", to_f64(self.head_dim));
        let dv = match self.v_head_dim {
            Some(v) => s("e_v", to_f64(v)),
            None => d,
        };
        let (q, kv) = (s("s", to_f64(self.q_len)), s("L", to_f64(self.kv_len)));
        let pairs = match (self.causal, self.window) {
            (true, Some(w)) => s("P", windowed_pairs(self.q_len, self.kv_len, w)),
            (true, None) => {
                causal_pairs_of::<A>(cx, self.q_len, self.kv_len, self.causal_count).named("P")
            }
            _ => (q * kv).named("P"),
        };
        let (a, c) = (s("a", self.act.bytes()), s("c", self.kv.bytes()));
        let two = A::num(cx, 2.0);
        let phi = s("φ_b", ATTENTION_BACKWARD_FLOPS_PER_SCORE);
        let per_pair = A::num(cx, 6.0) * d + A::num(cx, 4.0) * dv + phi;
        let rows_q = b * q * h;
        let (kv_read, kv_written) = if self.kv_shared {
            (b * kvh * kv * d * c, b * kvh * kv * d * a)
        } else {
            (b * kvh * kv * (d + dv) * c, b * kvh * kv * (d + dv) * a)
        };
        CostTerms {
            flops: b * h * pairs * per_pair + two * rows_q * dv,
            bytes_read: rows_q * d * a
                + two * rows_q * dv * a
                + kv_read
                + rows_q * A::num(cx, LSE_BYTES),
            bytes_written: rows_q * d * a + kv_written,
        }
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
            causal_count: CausalCount::Exact,
            window: None,
            v_head_dim: None,
            kv_shared: false,
            block_q: None,
            act: Precision::Fp16,
            kv: Precision::Fp16,
        }
    }

    #[test]
    fn windowed_pairs_by_hand() {
        // 6 queries over 6 keys, window 3: 1 + 2 + 3 + 3 + 3 + 3 = 15.
        assert_eq!(windowed_pairs(6, 6, 3), 15.0);
        // Decode at 4097 keys, window 4096: 4096.
        assert_eq!(windowed_pairs(1, 4097, 4096), 4096.0);
        // A window wider than the sequence is plain causal.
        assert_eq!(windowed_pairs(4, 4, 100), causal_pairs(4, 4));
    }

    #[test]
    fn mla_decode_reads_the_latent_once() {
        // DeepSeek-V3 absorbed decode: 128 heads, one latent of 576 (K) whose first 512 are V.
        let a = FlashAttention {
            batch: 1,
            heads: 128,
            kv_heads: 1,
            head_dim: 576,
            q_len: 1,
            kv_len: 4097,
            causal: true,
            causal_count: CausalCount::Exact,
            window: None,
            v_head_dim: Some(512),
            kv_shared: true,
            block_q: None,
            act: Precision::Bf16,
            kv: Precision::Bf16,
        };
        let c = a.cost();
        assert_eq!(
            c.flops.get(),
            128.0 * 4097.0 * (2.0 * 576.0 + 2.0 * 512.0 + 7.0)
        );
        assert_eq!(c.bytes_read.get(), (128.0 * 576.0 + 4097.0 * 576.0) * 2.0);
        assert_eq!(c.bytes_written.get(), 128.0 * 512.0 * 2.0);
    }

    #[test]
    fn causal_pairs_by_hand() {
        assert_eq!(causal_pairs(4, 4), 10.0); // 1+2+3+4
        assert_eq!(causal_pairs(1, 2049), 2049.0);
        assert_eq!(causal_pairs(2, 5), 4.0 + 5.0);
    }

    #[test]
    fn causal_count_half_is_half_the_square_by_hand() {
        let half = |q, kv| causal_pairs_of::<f64>((), q, kv, CausalCount::Half);
        let exact = |q, kv| causal_pairs_of::<f64>((), q, kv, CausalCount::Exact);
        // Prefill of 4: exactly 1 + 2 + 3 + 4 = 10 pairs; half the 4 × 4 square, 8.
        assert_eq!((exact(4, 4), half(4, 4)), (10.0, 8.0));
        // 2 queries after 3 cached keys: 2·3 off the diagonal block, then 1 + 2 = 3 on it
        // exactly, 2·2/2 = 2 by halves.
        assert_eq!((exact(2, 5), half(2, 5)), (9.0, 8.0));
        // FlashAttention-2 §4.1 counts a causal forward pass as 4·seqlen²·head_dim·heads / 2;
        // with the same convention our matmul term 4·e per pair gives exactly that, and the
        // 7 softmax/scale/mask FLOPs per score ride on the same pairs.
        let (s, h, e) = (2048.0, 32.0, 128.0);
        let a = FlashAttention {
            causal_count: CausalCount::Half,
            ..llama7b(2048, 2048, true)
        };
        assert_eq!(
            a.cost().flops.get(),
            4.0 * s * s * e * h / 2.0 + 7.0 * h * s * s / 2.0
        );
        // The exact count is s/2 pairs per head more: 32·1024·(4·128 + 7) FLOP.
        let d = llama7b(2048, 2048, true).cost().flops.get() - a.cost().flops.get();
        assert_eq!(d, h * (s / 2.0) * (4.0 * e + 7.0));
        // Bytes do not depend on the count (K and V read once either way).
        assert_eq!(
            a.cost().bytes_read,
            llama7b(2048, 2048, true).cost().bytes_read
        );
        // Without a mask the count is not used: every one of the s² pairs.
        let full = FlashAttention {
            causal_count: CausalCount::Half,
            ..llama7b(2048, 2048, false)
        };
        assert_eq!(full.cost().flops.get(), h * s * s * (4.0 * e + 7.0));
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
