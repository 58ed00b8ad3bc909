//! On-chip feasibility: the working set of one tile of a fused kernel against the shared memory
//! one SM can use (the catalog's `shared_memory_per_sm_bytes`).

use crate::precision::Precision;
use crate::units::Bytes;
use serde::Serialize;

/// Bytes of one fp32 accumulator or statistic.
const FP32: f64 = 4.0;
/// Elements per thread block of a streaming (elementwise) kernel.
pub const STREAM_BLOCK: u64 = 1024;
/// Smallest M of a tensor-core MMA instruction (mma.sync m16n8k16, Ampere and Hopper).
pub const MIN_MMA_M: u64 = 16;

/// The tile a fused kernel works on, its on-chip working set, and whether it fits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TilePlan {
    /// The tile, in words (`BM×BN×BK = 128×128×64, 2 stages`).
    pub tile: String,
    /// Bytes of shared memory one tile needs.
    pub working_set: Bytes,
    /// Shared memory one SM can use, if the chip file gives it.
    pub capacity: Option<Bytes>,
    /// Whether the working set fits (true when the capacity is unknown: not checked).
    pub fits: bool,
    /// Queries per block, for a flash-attention kernel.
    pub block_q: Option<u64>,
}

impl TilePlan {
    fn check(
        tile: String,
        working_set: f64,
        capacity: Option<Bytes>,
        block_q: Option<u64>,
    ) -> Self {
        let fits = capacity.is_none_or(|c| working_set <= c.get());
        TilePlan {
            tile,
            working_set: Bytes(working_set),
            capacity,
            fits,
            block_q,
        }
    }
}

/// A GEMM tile BM×BN×BK with `stages` buffers of A and B in shared memory:
/// working set = stages·(BM·BK + BK·BN)·a, plus BM fp32 row sums for a folded norm, plus a
/// BM×BN tile of each extra epilogue input. Tries 128×128×64, then 128×128×32, then 64×64×32.
pub fn gemm_tile(
    a: Precision,
    norm_prologue: bool,
    epilogue_inputs: u32,
    capacity: Option<Bytes>,
) -> TilePlan {
    let stages = 2.0;
    let mut last = None;
    for (bm, bn, bk) in [(128u64, 128u64, 64u64), (128, 128, 32), (64, 64, 32)] {
        let (m, n, k) = (bm as f64, bn as f64, bk as f64);
        let ws = stages * (m * k + k * n) * a.bytes()
            + if norm_prologue { m * FP32 } else { 0.0 }
            + epilogue_inputs as f64 * m * n * a.bytes();
        let plan = TilePlan::check(
            format!("GEMM tile BM×BN×BK = {bm}×{bn}×{bk}, 2 stages"),
            ws,
            capacity,
            None,
        );
        if plan.fits {
            return plan;
        }
        last = Some(plan);
    }
    last.unwrap_or_else(|| TilePlan::check(String::new(), 0.0, capacity, None))
}

/// A streaming kernel over rows of `row` elements (a norm needs a whole row; an elementwise
/// chain streams blocks of [`STREAM_BLOCK`]): working set = tensors·row·4 bytes (fp32 staging).
pub fn stream_tile(row: u64, tensors: u32, capacity: Option<Bytes>) -> TilePlan {
    let ws = tensors as f64 * row as f64 * FP32;
    TilePlan::check(
        format!("{row} elements per block × {tensors} tensors in fp32"),
        ws,
        capacity,
        None,
    )
}

/// FlashAttention block sizes from shared memory (Dao et al. 2022, Alg. 1 line 1):
/// Bc = ⌈M / 4d⌉, Br = min(Bc, d), M the shared memory in elements of `a`; rounded down to a
/// power of two (as kernels are compiled) and at most 128. Working set = (Br·d + 2·Bc·d)·a
/// (Q, K, V tiles) + Br·Bc·4 (the fp32 score tile); halved until it fits, down to 16.
pub fn flash_tile(head_dim: u64, a: Precision, capacity: Option<Bytes>) -> TilePlan {
    let d = head_dim.max(1) as f64;
    let elems = capacity
        .map(|c| c.get() / a.bytes())
        .unwrap_or(228.0 * 1024.0 / 2.0);
    let bc_paper = (elems / (4.0 * d)).ceil().max(1.0) as u64;
    let pow2 = |x: u64| {
        if x == 0 {
            1
        } else {
            1u64 << (63 - x.leading_zeros())
        }
    };
    let mut bc = pow2(bc_paper).min(128);
    let mut br = bc.min(pow2(head_dim.max(1)));
    loop {
        let ws = (br as f64 * d + 2.0 * bc as f64 * d) * a.bytes() + br as f64 * bc as f64 * FP32;
        let plan = TilePlan::check(
            format!("Br×Bc = {br}×{bc} (Q, K, V tiles of head_dim {head_dim}, fp32 scores)"),
            ws,
            capacity,
            Some(br),
        );
        if plan.fits || (br <= 16 && bc <= 16) {
            return plan;
        }
        bc = (bc / 2).max(16);
        br = (br / 2).max(16);
    }
}

/// A fused chain whose intermediate of `width` elements per token stays on chip (the seed's
/// RMSNorm → Linear → SiLU → Linear): the kernel holds a BM-token × width slice of the
/// intermediate (a, bytes per element) plus double-buffered 64×64 weight tiles. BM is the
/// largest power of two that fits; the fusion is feasible only if BM ≥ [`MIN_MMA_M`], the
/// smallest tile a tensor-core MMA can work on.
pub fn chain_tile(width: u64, a: Precision, capacity: Option<Bytes>) -> TilePlan {
    let weights = 2.0 * 2.0 * 64.0 * 64.0 * a.bytes();
    let per_token = width as f64 * a.bytes();
    let Some(cap) = capacity else {
        return TilePlan::check(
            format!("{MIN_MMA_M} tokens × {width} intermediate (capacity unknown)"),
            MIN_MMA_M as f64 * per_token + weights,
            None,
            None,
        );
    };
    let max_bm = ((cap.get() - weights) / per_token).floor().max(0.0) as u64;
    let bm = if max_bm == 0 {
        0
    } else {
        1u64 << (63 - max_bm.leading_zeros())
    };
    let bm_used = bm.max(MIN_MMA_M);
    let ws = bm_used as f64 * per_token + weights;
    TilePlan {
        tile: format!(
            "{bm_used} tokens × {width} intermediate × {} B + 2×2 weight tiles 64×64 (largest tile that fits: {bm} tokens; tensor cores need ≥ {MIN_MMA_M})",
            a.bytes()
        ),
        working_set: Bytes(ws),
        capacity: Some(cap),
        fits: bm >= MIN_MMA_M,
        block_q: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100_SMEM: Bytes = Bytes(228.0 * 1024.0);

    #[test]
    fn gemm_tile_fits_on_hopper_and_ampere() {
        // 2·(128·64 + 64·128)·2 B = 65,536 B < 228 KiB and < 100 KiB.
        let p = gemm_tile(Precision::Bf16, false, 0, Some(H100_SMEM));
        assert_eq!(p.working_set.get(), 65_536.0);
        assert!(p.fits);
        let p = gemm_tile(Precision::Bf16, true, 0, Some(Bytes(100.0 * 1024.0)));
        assert_eq!(p.working_set.get(), 65_536.0 + 128.0 * 4.0);
        assert!(p.fits);
    }

    #[test]
    fn flash_blocks_from_the_paper_rule() {
        // H100: M = 233,472 B / 2 = 116,736 bf16 elements; Bc = ⌈116736 / 512⌉ = 228 → 128;
        // Br = min(128, 128) = 128. Working set (128·128 + 2·128·128)·2 + 128·128·4 = 163,840 B.
        let p = flash_tile(128, Precision::Bf16, Some(H100_SMEM));
        assert_eq!(p.block_q, Some(128));
        assert_eq!(p.working_set.get(), 163_840.0);
        assert!(p.fits);
        // A6000, 100 KiB: Bc = ⌈51200/512⌉ = 100 → 64; Br = 64: (64·128·3)·2 + 64·64·4 = 65,536.
        let p = flash_tile(128, Precision::Bf16, Some(Bytes(100.0 * 1024.0)));
        assert_eq!(p.block_q, Some(64));
        assert_eq!(p.working_set.get(), 65_536.0);
    }

    #[test]
    fn seed_chain_intermediate_does_not_fit_h100() {
        // f = 11008 in bf16: 22,016 B per token. (233,472 − 32,768) / 22,016 = 9.1 → 8 tokens,
        // below the 16-row MMA minimum: a 16-token tile needs 16·22,016 + 32,768 = 385,024 B.
        let p = chain_tile(11008, Precision::Bf16, Some(H100_SMEM));
        assert!(!p.fits);
        assert_eq!(p.working_set.get(), 385_024.0);
        // A narrow intermediate (f = 1024) fits: (233,472 − 32,768)/2048 = 98 → 64 tokens.
        assert!(chain_tile(1024, Precision::Bf16, Some(H100_SMEM)).fits);
    }
}
