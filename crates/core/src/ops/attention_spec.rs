//! The one description of an attention's kernels ([`AttentionSpec`]): `roofline op attention`
//! ([`crate::one_op`]) and the decoder graph ([`crate::decoder`]) both build their kernels
//! from it, so a shape gives the same operators in both.

use super::{BatchedMatmul, CausalCount, FlashAttention, Op, Softmax};
use crate::precision::Precision;
use serde::Serialize;
use std::fmt;

/// Largest size accepted for any dimension of a single operator (2^24); beyond it a value
/// is taken for a typo.
pub const MAX_DIM: u64 = 1 << 24;

/// A shape field that cannot be used, naming it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError {
    /// The [`AttentionSpec`] field at fault (`kv_heads`; the `roofline op` flag is the same
    /// with dashes: `--kv-heads`).
    pub quantity: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.quantity, self.message)
    }
}
impl std::error::Error for ShapeError {}

/// Attention over `batch` sequences with `heads` query heads sharing `kv_heads` key/value heads,
/// `q_len` queries attending to `kv_len` keys per sequence, query and key heads of `head_dim`
/// elements and value heads of `head_dim_v` (MLA's `v_head_dim`; `head_dim` when `None`).
///
/// The one description of the attention kernels: `roofline op attention` and the decoder graph
/// ([`crate::decoder`]) both build their kernels from it.
///
/// - `fused`: one [`FlashAttention`] kernel (causal pairs only, when `causal`, their diagonal
///   block counted by `causal_count`; scores never reach main memory; K and V read once).
/// - not fused: [`BatchedMatmul`] QKᵀ (`qk_matmul`: batch·heads products of q_len × head_dim by
///   head_dim × kv_len, `heads / kv_heads` query heads sharing one K), [`Softmax`] with scale and
///   mask (`softmax`: batch·heads·q_len rows of kv_len) and S·V (`sv_matmul`: q_len × kv_len by
///   kv_len × head_dim_v). Eager attention computes every score, masked or not (Hugging Face
///   `eager_attention_forward`), so `causal` does not change its cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AttentionSpec {
    /// Sequences.
    pub batch: u64,
    /// Query heads.
    pub heads: u64,
    /// Key/value heads (a divisor of `heads`).
    pub kv_heads: u64,
    /// Elements per query and key head (the score matmul's reduction).
    pub head_dim: u64,
    /// Elements per value head, when it differs from `head_dim` (MLA: 128 beside 192 in
    /// DeepSeek-V3's prefill), or `None` for `head_dim`. S·V and the output use it.
    pub head_dim_v: Option<u64>,
    /// Queries per sequence.
    pub q_len: u64,
    /// Keys per sequence.
    pub kv_len: u64,
    /// Causal mask.
    pub causal: bool,
    /// How the fused kernel counts the diagonal block of the causal mask.
    pub causal_count: CausalCount,
    /// Sliding window of the fused kernel: each query sees at most this many most recent keys.
    pub window: Option<u64>,
    /// K and V are one tensor read once (MLA's cached latent, V its first `head_dim_v`
    /// elements).
    pub kv_shared: bool,
    /// One fused kernel (FlashAttention) instead of three.
    pub fused: bool,
    /// Precision of Q, scores, output and the computation.
    pub act: Precision,
    /// Precision of K and V.
    pub kv: Precision,
}

impl AttentionSpec {
    /// Elements per value head: `head_dim_v`, or `head_dim`.
    #[inline(always)]
    pub fn v_dim(&self) -> u64 {
        self.head_dim_v.unwrap_or(self.head_dim)
    }

    /// Checks that every size is positive and `kv_heads` divides `heads`.
    ///
    /// # Errors
    /// A [`ShapeError`] naming the field.
    pub fn validate(&self) -> Result<(), ShapeError> {
        for (quantity, v) in [
            ("batch", self.batch),
            ("heads", self.heads),
            ("kv_heads", self.kv_heads),
            ("head_dim", self.head_dim),
            ("head_dim_v", self.v_dim()),
            ("q_len", self.q_len),
            ("kv_len", self.kv_len),
        ] {
            if v == 0 {
                return Err(ShapeError {
                    quantity,
                    message: "must be at least 1".into(),
                });
            }
        }
        for (quantity, v) in [
            ("batch", self.batch),
            ("heads", self.heads),
            ("head_dim", self.head_dim),
            ("head_dim_v", self.v_dim()),
            ("q_len", self.q_len),
            ("kv_len", self.kv_len),
        ] {
            if v > MAX_DIM {
                return Err(ShapeError {
                    quantity,
                    message: format!("{v} is beyond the largest accepted ({MAX_DIM})"),
                });
            }
        }
        if self.causal && self.q_len > self.kv_len {
            return Err(ShapeError {
                quantity: "q_len",
                message: format!(
                    "{} queries cannot be the last positions of {} keys: under a causal mask \
                     the queries must not outnumber the keys",
                    self.q_len, self.kv_len
                ),
            });
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(ShapeError {
                quantity: "kv_heads",
                message: format!(
                    "{} key/value heads do not divide {} query heads evenly; grouped-query \
                     attention needs heads to be a multiple of kv-heads",
                    self.kv_heads, self.heads
                ),
            });
        }
        Ok(())
    }

    /// The fused kernel: one [`FlashAttention`].
    #[inline(always)]
    pub fn fused_kernel(&self) -> Op {
        let v = self.v_dim();
        Op::FlashAttention(FlashAttention {
            batch: self.batch,
            heads: self.heads,
            kv_heads: self.kv_heads,
            head_dim: self.head_dim,
            q_len: self.q_len,
            kv_len: self.kv_len,
            causal: self.causal,
            causal_count: self.causal_count,
            window: self.window,
            v_head_dim: (v != self.head_dim).then_some(v),
            kv_shared: self.kv_shared,
            block_q: None,
            act: self.act,
            kv: self.kv,
        })
    }

    #[inline(always)]
    fn bmm(&self, m: u64, n: u64, k: u64) -> Op {
        Op::BatchedMatmul(BatchedMatmul {
            batch: self.batch * self.heads,
            shared: self.heads / self.kv_heads.max(1),
            m,
            n,
            k,
            a: self.act,
            b: self.kv,
            c: self.act,
            compute: self.act,
        })
    }

    /// Eager QKᵀ: batch·heads products of q_len × head_dim by head_dim × kv_len.
    #[inline(always)]
    pub fn qk_kernel(&self) -> Op {
        self.bmm(self.q_len, self.kv_len, self.head_dim)
    }

    /// Eager softmax with scale and mask: batch·heads·q_len rows of kv_len scores.
    #[inline(always)]
    pub fn softmax_kernel(&self) -> Op {
        Op::Softmax(Softmax {
            rows: self.batch * self.heads * self.q_len,
            cols: self.kv_len,
            scale_mask: true,
            precision: self.act,
        })
    }

    /// Eager S·V: batch·heads products of q_len × kv_len by kv_len × head_dim_v.
    #[inline(always)]
    pub fn sv_kernel(&self) -> Op {
        self.bmm(self.q_len, self.v_dim(), self.kv_len)
    }

    /// The kernels this attention runs as, with their names: `attention` when fused, else
    /// `qk_matmul`, `softmax`, `sv_matmul`.
    pub fn kernels(&self) -> Vec<(&'static str, Op)> {
        if self.fused {
            return vec![("attention", self.fused_kernel())];
        }
        vec![
            ("qk_matmul", self.qk_kernel()),
            ("softmax", self.softmax_kernel()),
            ("sv_matmul", self.sv_kernel()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfused_attention_is_three_kernels_with_gqa_sharing() {
        let spec = AttentionSpec {
            batch: 1,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            head_dim_v: None,
            q_len: 1,
            kv_len: 4096,
            causal: true,
            causal_count: CausalCount::Exact,
            window: None,
            kv_shared: false,
            fused: false,
            act: Precision::Bf16,
            kv: Precision::Bf16,
        };
        let k = spec.kernels();
        let names: Vec<&str> = k.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["qk_matmul", "softmax", "sv_matmul"]);
        // QKᵀ: 2·32·1·4096·128 FLOP; reads Q 32·128·2 and K 8·4096·128·2.
        let c = k[0].1.cost();
        assert_eq!(c.flops.get(), 2.0 * 32.0 * 4096.0 * 128.0);
        assert_eq!(
            c.bytes_read.get(),
            32.0 * 128.0 * 2.0 + 8.0 * 4096.0 * 128.0 * 2.0
        );
        let fused = AttentionSpec {
            fused: true,
            ..spec
        };
        assert_eq!(fused.kernels().len(), 1);
    }

    #[test]
    fn value_head_size_of_its_own_sizes_s_v_and_the_output_by_hand() {
        // DeepSeek-V3's prefill attention (config.json: 128 heads, qk_nope_head_dim 128 +
        // qk_rope_head_dim 64 = 192, v_head_dim 128), 2048 tokens, bf16: the scores use 192,
        // S·V and the output 128.
        let spec = AttentionSpec {
            batch: 1,
            heads: 128,
            kv_heads: 128,
            head_dim: 192,
            head_dim_v: Some(128),
            q_len: 2048,
            kv_len: 2048,
            causal: true,
            causal_count: CausalCount::Exact,
            window: None,
            kv_shared: false,
            fused: false,
            act: Precision::Bf16,
            kv: Precision::Bf16,
        };
        let (h, s) = (128.0, 2048.0);
        let k = spec.kernels();
        let (qk, sv) = (k[0].1.cost(), k[2].1.cost());
        // QKᵀ: 2·h·s·L·192; reads Q and K (h·s·192·2 B each); writes the h·s·L scores.
        assert_eq!(qk.flops.get(), 2.0 * h * s * s * 192.0);
        assert_eq!(qk.bytes_read.get(), 2.0 * h * s * 192.0 * 2.0);
        assert_eq!(qk.bytes_written.get(), h * s * s * 2.0);
        // S·V: 2·h·s·L·128; reads the probabilities and V (h·L·128·2 B); writes h·s·128·2 B.
        assert_eq!(sv.flops.get(), 2.0 * h * s * s * 128.0);
        assert_eq!(sv.bytes_read.get(), h * s * s * 2.0 + h * s * 128.0 * 2.0);
        assert_eq!(sv.bytes_written.get(), h * s * 128.0 * 2.0);
        // Fused and causal: s·(s+1)/2 pairs of 2·192 + 2·128 + 7 FLOP; reads Q (192 wide),
        // K (192) and V (128) once; writes O (128 wide).
        let fused = AttentionSpec {
            fused: true,
            ..spec
        };
        let c = fused.kernels()[0].1.cost();
        let pairs = s * (s + 1.0) / 2.0;
        assert_eq!(c.flops.get(), h * pairs * (2.0 * 192.0 + 2.0 * 128.0 + 7.0));
        assert_eq!(
            c.bytes_read.get(),
            s * h * 192.0 * 2.0 + h * s * (192.0 + 128.0) * 2.0
        );
        assert_eq!(c.bytes_written.get(), s * h * 128.0 * 2.0);
        // A value head of the query/key size is the same attention as none given.
        let same = AttentionSpec {
            head_dim_v: Some(192),
            ..fused
        };
        let none = AttentionSpec {
            head_dim_v: None,
            ..fused
        };
        assert_eq!(same.kernels(), none.kernels());
        let zero = AttentionSpec {
            head_dim_v: Some(0),
            ..fused
        };
        assert_eq!(zero.validate().unwrap_err().quantity, "head_dim_v");
    }

    #[test]
    fn kv_heads_must_divide_heads() {
        let spec = AttentionSpec {
            batch: 1,
            heads: 32,
            kv_heads: 5,
            head_dim: 128,
            head_dim_v: None,
            q_len: 1,
            kv_len: 1,
            causal: false,
            causal_count: CausalCount::Exact,
            window: None,
            kv_shared: false,
            fused: true,
            act: Precision::Bf16,
            kv: Precision::Bf16,
        };
        let e = spec.validate().unwrap_err();
        assert_eq!(e.quantity, "kv_heads");
        let zero = AttentionSpec {
            head_dim: 0,
            kv_heads: 8,
            ..spec
        };
        assert_eq!(zero.validate().unwrap_err().quantity, "head_dim");
    }
}
