//! x86-64 kernels: AVX2 + FMA and AVX-512 intrinsics, and the clock chain in inline assembly.
//!
//! Every function here is `#[target_feature]`: calling it on a CPU without the feature is
//! undefined behaviour, so the only callers are the safe wrappers in [`super`], which check
//! `is_x86_feature_detected!` first. FLOPs per instruction are from the Intel SDM (vol. 2,
//! instruction reference) and agree with AMD's APM vol. 4: one FMA is a multiply and an add,
//! 2 FLOP per lane.
//!
//! Compute kernels keep [`CHAINS`] independent accumulators, each updated by one instruction per
//! iteration: enough to cover an FMA's latency (4–5 cycles) times its throughput (2 per cycle)
//! on Intel since Haswell and AMD since Zen 2, so the loop runs at the throughput limit. The
//! accumulator is always an operand, so the compiler cannot hoist or fold the work.

use core::arch::asm;
use core::arch::x86_64::*;

/// Independent accumulator chains per compute kernel (12 × 4-cycle latency ≥ 2 per cycle × 5).
pub const CHAINS: usize = 12;

/// Runs `iters` × 128 dependent `add reg, 1` (1 cycle latency each on every x86-64 core: Agner
/// Fog, instruction tables), returning the final count: `128 × max(iters, 1)`. The time it takes
/// is 128 × iters core clock cycles, which gives the clock.
pub fn add_chain(iters: u64) -> u64 {
    let mut x: u64 = 0;
    let mut n: u64 = iters.max(1);
    // SAFETY: register-only integer arithmetic and a backward branch inside the block; no memory
    // or stack access (`nomem, nostack`); the flags it changes are not preserved, as asm! assumes
    // by default.
    unsafe {
        asm!(
            "2:",
            ".rept 128",
            "add {x}, 1",
            ".endr",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            n = inout(reg) n,
            options(nomem, nostack),
        );
    }
    let _ = n;
    x
}

macro_rules! chains {
    ($init:expr) => {
        [$init; CHAINS]
    };
}

// ---- compute: fp64 / fp32 FMA ----------------------------------------------------------------

/// fp64 FMA, AVX2: `vfmadd231pd ymm` = 4 lanes × 2 = **8 FLOP** per instruction; `acc = acc·a + b`.
/// Returns the sum of every lane of every accumulator.
#[target_feature(enable = "avx2,fma")]
pub fn fma_f64_avx2(iters: u64, a: f64, b: f64) -> f64 {
    let va = _mm256_set1_pd(a);
    let vb = _mm256_set1_pd(b);
    let mut acc = chains!(_mm256_setzero_pd());
    for _ in 0..iters {
        for c in acc.iter_mut() {
            *c = _mm256_fmadd_pd(*c, va, vb);
        }
    }
    let mut lanes = [0.0f64; 4];
    let mut total = 0.0;
    for c in acc {
        // SAFETY: `lanes` holds 4 f64 = 32 bytes, the size of one ymm; unaligned store.
        unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), c) };
        total += lanes.iter().sum::<f64>();
    }
    total
}

/// fp32 FMA, AVX2: `vfmadd231ps ymm` = 8 lanes × 2 = **16 FLOP** per instruction.
#[target_feature(enable = "avx2,fma")]
pub fn fma_f32_avx2(iters: u64, a: f32, b: f32) -> f64 {
    let va = _mm256_set1_ps(a);
    let vb = _mm256_set1_ps(b);
    let mut acc = chains!(_mm256_setzero_ps());
    for _ in 0..iters {
        for c in acc.iter_mut() {
            *c = _mm256_fmadd_ps(*c, va, vb);
        }
    }
    let mut lanes = [0.0f32; 8];
    let mut total = 0.0;
    for c in acc {
        // SAFETY: `lanes` holds 8 f32 = 32 bytes, one ymm; unaligned store.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), c) };
        total += lanes.iter().map(|&v| f64::from(v)).sum::<f64>();
    }
    total
}

/// fp64 FMA, AVX-512: `vfmadd231pd zmm` = 8 lanes × 2 = **16 FLOP** per instruction.
#[target_feature(enable = "avx512f")]
pub fn fma_f64_avx512(iters: u64, a: f64, b: f64) -> f64 {
    let va = _mm512_set1_pd(a);
    let vb = _mm512_set1_pd(b);
    let mut acc = chains!(_mm512_setzero_pd());
    for _ in 0..iters {
        for c in acc.iter_mut() {
            *c = _mm512_fmadd_pd(*c, va, vb);
        }
    }
    acc.iter().map(|&c| _mm512_reduce_add_pd(c)).sum()
}

/// fp32 FMA, AVX-512: `vfmadd231ps zmm` = 16 lanes × 2 = **32 FLOP** per instruction.
#[target_feature(enable = "avx512f")]
pub fn fma_f32_avx512(iters: u64, a: f32, b: f32) -> f64 {
    let va = _mm512_set1_ps(a);
    let vb = _mm512_set1_ps(b);
    let mut acc = chains!(_mm512_setzero_ps());
    for _ in 0..iters {
        for c in acc.iter_mut() {
            *c = _mm512_fmadd_ps(*c, va, vb);
        }
    }
    acc.iter()
        .map(|&c| f64::from(_mm512_reduce_add_ps(c)))
        .sum()
}

// ---- compute: bf16 and int8 dot products -----------------------------------------------------

/// bf16, AVX512-BF16: `vdpbf16ps zmm` = 16 fp32 lanes, each adding two bf16 products:
/// 16 × (2 multiplies + 2 adds) = **64 FLOP** per instruction. `x` and `y` are converted to
/// bf16 once (`vcvtne2ps2bf16`), outside the loop.
#[target_feature(enable = "avx512f,avx512bf16")]
pub fn dot_bf16_avx512(iters: u64, x: f32, y: f32) -> f64 {
    let vx = _mm512_cvtne2ps_pbh(_mm512_set1_ps(x), _mm512_set1_ps(x));
    let vy = _mm512_cvtne2ps_pbh(_mm512_set1_ps(y), _mm512_set1_ps(y));
    let mut acc = chains!(_mm512_setzero_ps());
    for _ in 0..iters {
        for c in acc.iter_mut() {
            *c = _mm512_dpbf16_ps(*c, vx, vy);
        }
    }
    acc.iter()
        .map(|&c| f64::from(_mm512_reduce_add_ps(c)))
        .sum()
}

/// int8, AVX512-VNNI: `vpdpbusd zmm` = 16 int32 lanes, each adding four u8 × i8 products:
/// 64 multiplies + 64 adds = **128 OP** per instruction. Every byte of `u` (unsigned) and `s`
/// (signed) is the given value. Returns the sum of every lane.
#[target_feature(enable = "avx512f,avx512vnni")]
pub fn dot_int8_vnni512(iters: u64, u: u8, s: i8) -> f64 {
    let vu = _mm512_set1_epi8(u as i8);
    let vs = _mm512_set1_epi8(s);
    let mut acc = chains!(_mm512_setzero_si512());
    for _ in 0..iters {
        for c in acc.iter_mut() {
            *c = _mm512_dpbusd_epi32(*c, vu, vs);
        }
    }
    acc.iter().map(|&c| _mm512_reduce_add_epi32(c) as f64).sum()
}

/// int8, AVX2: the sequence int8 GEMMs use without VNNI (oneDNN, FBGEMM):
/// `vpmaddubsw` (32 u8 × i8 products, added in pairs into i16, saturating), `vpmaddwd` with
/// ones (pairs of i16 added into i32), `vpaddd` into the accumulator: 32 multiplies + 32 adds =
/// **64 OP** per three-instruction sequence (the widening adds are counted once, as VNNI counts
/// them). The unsigned operand is the accumulator itself (its bytes), so the sequence cannot be
/// hoisted out of the loop; `s` fills the signed operand. Accumulators start with every byte
/// `init`. Returns the sum of every int32 lane as f64.
#[target_feature(enable = "avx2")]
pub fn dot_int8_avx2(iters: u64, init: u8, s: i8) -> f64 {
    let vs = _mm256_set1_epi8(s);
    let ones = _mm256_set1_epi16(1);
    let mut acc = chains!(_mm256_set1_epi8(init as i8));
    for _ in 0..iters {
        for c in acc.iter_mut() {
            let t = _mm256_maddubs_epi16(*c, vs);
            let w = _mm256_madd_epi16(t, ones);
            *c = _mm256_add_epi32(*c, w);
        }
    }
    let mut lanes = [0i32; 8];
    let mut total = 0.0;
    for c in acc {
        // SAFETY: `lanes` holds 8 i32 = 32 bytes, one ymm; unaligned store.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), c) };
        total += lanes.iter().map(|&v| f64::from(v)).sum::<f64>();
    }
    total
}

// ---- bandwidth: read, copy, triad ------------------------------------------------------------

/// Read, AVX2: `s += a[i]`, 8 `vaddpd ymm, [mem]` per 256 bytes into 8 accumulators (one 32-byte
/// load each; the adds hide behind the loads). Returns the sum over all passes.
#[target_feature(enable = "avx2,fma")]
pub fn read_avx2(a: &[f64], passes: u64) -> f64 {
    let n = a.len() / 32 * 32;
    let mut total = 0.0;
    // The accumulators live across passes: a horizontal sum per pass would cost as much as
    // the loads of a small (L1-sized) array.
    let mut acc = [_mm256_setzero_pd(); 8];
    for _ in 0..passes {
        let p = core::hint::black_box(a.as_ptr());
        let mut i = 0;
        while i < n {
            for (k, c) in acc.iter_mut().enumerate() {
                // SAFETY: i + 4k + 3 < i + 32 ≤ n ≤ a.len(): every load is inside `a`.
                *c = _mm256_add_pd(*c, unsafe { _mm256_loadu_pd(p.add(i + 4 * k)) });
            }
            i += 32;
        }
        total += a[n..].iter().sum::<f64>();
    }
    let mut lanes = [0.0f64; 4];
    for c in acc {
        // SAFETY: `lanes` holds 4 f64, one ymm.
        unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), c) };
        total += lanes.iter().sum::<f64>();
    }
    total
}

/// Copy, AVX2: `b[i] = a[i]`, 4 × (32-byte load + 32-byte store) per 128 bytes.
#[target_feature(enable = "avx2,fma")]
pub fn copy_avx2(a: &[f64], b: &mut [f64], passes: u64) {
    let len = a.len().min(b.len());
    let n = len / 16 * 16;
    for _ in 0..passes {
        let src = core::hint::black_box(a.as_ptr());
        let dst = core::hint::black_box(b.as_mut_ptr());
        let mut i = 0;
        while i < n {
            for k in 0..4 {
                // SAFETY: i + 4k + 3 < i + 16 ≤ n ≤ min(a.len(), b.len()): inside both slices,
                // which do not overlap (one is borrowed shared, the other exclusively).
                unsafe {
                    _mm256_storeu_pd(dst.add(i + 4 * k), _mm256_loadu_pd(src.add(i + 4 * k)))
                };
            }
            i += 16;
        }
        b[n..len].copy_from_slice(&a[n..len]);
        core::hint::black_box(b.as_mut_ptr());
    }
}

/// Triad, AVX2: `a[i] = b[i] + c[i] · d[i]`, one `vfmadd` per 4 elements (3 loads, 1 store).
#[target_feature(enable = "avx2,fma")]
pub fn triad_avx2(a: &mut [f64], b: &[f64], c: &[f64], d: &[f64], passes: u64) {
    let len = a.len().min(b.len()).min(c.len()).min(d.len());
    let n = len / 16 * 16;
    for _ in 0..passes {
        let pa = core::hint::black_box(a.as_mut_ptr());
        let (pb, pc, pd) = (b.as_ptr(), c.as_ptr(), d.as_ptr());
        let mut i = 0;
        while i < n {
            for k in 0..4 {
                let j = i + 4 * k;
                // SAFETY: j + 3 < i + 16 ≤ n ≤ every slice's length; `a` is exclusive, the others
                // shared, so the store does not alias a load.
                unsafe {
                    let v = _mm256_fmadd_pd(
                        _mm256_loadu_pd(pc.add(j)),
                        _mm256_loadu_pd(pd.add(j)),
                        _mm256_loadu_pd(pb.add(j)),
                    );
                    _mm256_storeu_pd(pa.add(j), v);
                }
            }
            i += 16;
        }
        for j in n..len {
            a[j] = c[j].mul_add(d[j], b[j]);
        }
        core::hint::black_box(a.as_mut_ptr());
    }
}

/// Read, AVX-512: 8 `vaddpd zmm, [mem]` per 512 bytes into 8 accumulators.
#[target_feature(enable = "avx512f")]
pub fn read_avx512(a: &[f64], passes: u64) -> f64 {
    let n = a.len() / 64 * 64;
    let mut total = 0.0;
    let mut acc = [_mm512_setzero_pd(); 8];
    for _ in 0..passes {
        let p = core::hint::black_box(a.as_ptr());
        let mut i = 0;
        while i < n {
            for (k, c) in acc.iter_mut().enumerate() {
                // SAFETY: i + 8k + 7 < i + 64 ≤ n ≤ a.len().
                *c = _mm512_add_pd(*c, unsafe { _mm512_loadu_pd(p.add(i + 8 * k)) });
            }
            i += 64;
        }
        total += a[n..].iter().sum::<f64>();
    }
    total + acc.iter().map(|&c| _mm512_reduce_add_pd(c)).sum::<f64>()
}

/// Copy, AVX-512: 4 × (64-byte load + 64-byte store) per 256 bytes.
#[target_feature(enable = "avx512f")]
pub fn copy_avx512(a: &[f64], b: &mut [f64], passes: u64) {
    let len = a.len().min(b.len());
    let n = len / 32 * 32;
    for _ in 0..passes {
        let src = core::hint::black_box(a.as_ptr());
        let dst = core::hint::black_box(b.as_mut_ptr());
        let mut i = 0;
        while i < n {
            for k in 0..4 {
                // SAFETY: i + 8k + 7 < i + 32 ≤ n ≤ both lengths; the slices do not overlap.
                unsafe {
                    _mm512_storeu_pd(dst.add(i + 8 * k), _mm512_loadu_pd(src.add(i + 8 * k)))
                };
            }
            i += 32;
        }
        b[n..len].copy_from_slice(&a[n..len]);
        core::hint::black_box(b.as_mut_ptr());
    }
}

/// Triad, AVX-512: `a[i] = b[i] + c[i] · d[i]`, one `vfmadd` per 8 elements.
#[target_feature(enable = "avx512f")]
pub fn triad_avx512(a: &mut [f64], b: &[f64], c: &[f64], d: &[f64], passes: u64) {
    let len = a.len().min(b.len()).min(c.len()).min(d.len());
    let n = len / 32 * 32;
    for _ in 0..passes {
        let pa = core::hint::black_box(a.as_mut_ptr());
        let (pb, pc, pd) = (b.as_ptr(), c.as_ptr(), d.as_ptr());
        let mut i = 0;
        while i < n {
            for k in 0..4 {
                let j = i + 8 * k;
                // SAFETY: j + 7 < i + 32 ≤ n ≤ every slice's length; `a` does not alias the others.
                unsafe {
                    let v = _mm512_fmadd_pd(
                        _mm512_loadu_pd(pc.add(j)),
                        _mm512_loadu_pd(pd.add(j)),
                        _mm512_loadu_pd(pb.add(j)),
                    );
                    _mm512_storeu_pd(pa.add(j), v);
                }
            }
            i += 32;
        }
        for j in n..len {
            a[j] = c[j].mul_add(d[j], b[j]);
        }
        core::hint::black_box(a.as_mut_ptr());
    }
}
