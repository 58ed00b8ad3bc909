//! x86-64 kernels: AVX2 + FMA and AVX-512 intrinsics, and the clock chain in inline assembly.
//!
//! Every function here is `#[target_feature]`: calling it on a CPU without the feature is
//! undefined behaviour, so the only callers are the safe wrappers in [`super`], which check
//! `is_x86_feature_detected!` first. FLOPs per instruction are from the Intel SDM (vol. 2,
//! instruction reference) and agree with AMD's APM vol. 4: one FMA is a multiply and an add,
//! 2 FLOP per lane.
//!
//! Compute kernels keep independent accumulators, each updated by one instruction per
//! iteration: [`CHAINS`] (12) for the fp64 and fp32 FMAs, enough to cover an FMA's latency
//! (4–5 cycles) times its throughput (2 per cycle) on Intel since Haswell and AMD since Zen 2;
//! [`CHAINS_512`] (24) of the 32 zmm registers for the AVX-512 dot products and fp16 FMA, which
//! covers their longer latency (`vdpbf16ps`, `vpdpbusd`, `vfmadd*ph`: up to 6–8 cycles at 2 per
//! cycle). The loop then runs at the throughput limit. The accumulator is always an operand,
//! so the compiler cannot hoist or fold the work. The AMX kernels keep four accumulator tiles
//! (2 × 2 blocking, as oneDNN's kernels do): four independent `tdp*` per iteration.

use core::arch::asm;
use core::arch::x86_64::*;

/// Independent accumulator chains of the AVX2 kernels (12 × 4-cycle latency ≥ 2 per cycle × 5).
pub const CHAINS: usize = 12;

/// Independent accumulator chains of the AVX-512 kernels (24 ≥ 2 per cycle × 8-cycle latency;
/// two of the 32 zmm registers hold the operands).
pub const CHAINS_512: usize = 24;

/// A clock chain: `iters` × 128 dependent `$insn {x}, {y}` with `y` = `$y` in a register (so
/// no renamer can fold it as Golden Cove folds `add reg, imm`), returning `128 × max(iters, 1)`:
/// the instructions run.
macro_rules! clock_chain {
    ($(#[$doc:meta])* $name:ident, $insn:literal, $x0:expr, $y:expr) => {
        $(#[$doc])*
        pub fn $name(iters: u64) -> u64 {
            let mut x: u64 = $x0;
            let y: u64 = core::hint::black_box($y);
            let mut n: u64 = iters.max(1);
            // SAFETY: register-only integer arithmetic and a backward branch inside the block;
            // no memory or stack access (`nomem, nostack`); the flags it changes are not
            // preserved, as asm! assumes by default.
            unsafe {
                asm!(
                    "2:",
                    ".rept 128",
                    concat!($insn, " {x}, {y}"),
                    ".endr",
                    "dec {n}",
                    "jnz 2b",
                    x = inout(reg) x,
                    y = in(reg) y,
                    n = inout(reg) n,
                    options(nomem, nostack),
                );
            }
            let _ = (x, n);
            128 * iters.max(1)
        }
    };
}

clock_chain!(
    /// 128 × iters dependent `imul r64, r64` (`x = x · 3`): 3 cycles of latency on every x86-64
    /// core since Intel Nehalem and AMD Zen (Agner Fog, instruction tables; uops.info); a
    /// multiplier has no shortcut for a register operand.
    imul_chain,
    "imul",
    1,
    3
);
clock_chain!(
    /// 128 × iters dependent `add r64, r64` (`x = x + 1`, the 1 in a register): 1 cycle of
    /// latency on every x86-64 core.
    add_chain,
    "add",
    0,
    1
);

macro_rules! chains {
    ($init:expr) => {
        [$init; CHAINS]
    };
}

macro_rules! chains512 {
    ($init:expr) => {
        [$init; CHAINS_512]
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
    let mut acc = chains512!(_mm512_setzero_ps());
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
    let mut acc = chains512!(_mm512_setzero_si512());
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

/// fp16, AVX512-FP16: `vfmadd213ph zmm` = 32 fp16 lanes × 2 = **64 FLOP** per instruction;
/// `acc = acc · a + b` in [`CHAINS_512`] accumulators (zmm0–zmm23), `a` and `b` (fp16 bit
/// patterns) broadcast into zmm30 and zmm31. In inline assembly: the fp16 intrinsics are not
/// stable Rust. Returns every lane of accumulator 0 as fp16 bits.
#[target_feature(enable = "avx512f,avx512bw")]
pub fn fma_f16_avx512(iters: u64, a: u16, b: u16) -> [u16; 32] {
    let mut lanes = [0u16; 32];
    let mut n = iters.max(1);
    // SAFETY: the caller checked AVX512-FP16 (and AVX-512F/BW, for the broadcasts). The block
    // writes only the registers it declares and the 64 bytes of `lanes` (one zmm store).
    unsafe {
        asm!(
            "vpbroadcastw zmm30, {a:e}",
            "vpbroadcastw zmm31, {b:e}",
            ".irp r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23",
            "vpxord zmm\\r, zmm\\r, zmm\\r",
            ".endr",
            "2:",
            ".irp r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23",
            "vfmadd213ph zmm\\r, zmm30, zmm31",
            ".endr",
            "dec {n}",
            "jnz 2b",
            "vmovdqu16 [{out}], zmm0",
            a = in(reg) u32::from(a),
            b = in(reg) u32::from(b),
            n = inout(reg) n,
            out = in(reg) lanes.as_mut_ptr(),
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("zmm4") _,
            out("zmm5") _, out("zmm6") _, out("zmm7") _, out("zmm8") _, out("zmm9") _,
            out("zmm10") _, out("zmm11") _, out("zmm12") _, out("zmm13") _, out("zmm14") _,
            out("zmm15") _, out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _, out("zmm30") _,
            out("zmm31") _,
            options(nostack),
        );
    }
    let _ = n;
    lanes
}

/// Accumulator tiles of the AMX kernels.
pub const AMX_TILES: usize = 4;

/// The AMX tile configuration (palette 1): tiles 0–7 of 16 rows × 64 bytes. Accumulators
/// tmm0–tmm3 (16 × 16 fp32 or int32), A tiles tmm4–tmm5 (16 rows × 32 bf16 or 64 int8), B tiles
/// tmm6–tmm7 (16 rows of 16 bf16 pairs or int8 quadruples): Intel SDM vol. 1, ch. 18.
fn amx_config() -> [u8; 64] {
    let mut cfg = [0u8; 64];
    cfg[0] = 1;
    for t in 0..8 {
        cfg[16 + 2 * t] = 64;
        cfg[48 + t] = 16;
    }
    cfg
}

macro_rules! amx_kernel {
    ($name:ident, $insn:literal, $doc:literal) => {
        #[doc = $doc]
        pub fn $name(iters: u64, a: &[u8; 1024], b: &[u8; 1024]) -> [[u32; 256]; AMX_TILES] {
            let cfg = amx_config();
            let mut c = [[0u32; 256]; AMX_TILES];
            let mut n = iters.max(1);
            // SAFETY: the caller checked AMX (CPUID) and obtained the Linux permission to use
            // the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM). The block reads the 64-byte
            // `cfg` and the 1 KiB tiles `a` and `b` (16 rows of 64 bytes, stride 64), writes the
            // four 1 KiB accumulators of `c`, and releases the tiles before it ends.
            unsafe {
                asm!(
                    "ldtilecfg [{cfg}]",
                    "tilezero tmm0",
                    "tilezero tmm1",
                    "tilezero tmm2",
                    "tilezero tmm3",
                    "tileloadd tmm4, [{a} + {stride}*1]",
                    "tileloadd tmm5, [{a} + {stride}*1]",
                    "tileloadd tmm6, [{b} + {stride}*1]",
                    "tileloadd tmm7, [{b} + {stride}*1]",
                    "2:",
                    concat!($insn, " tmm0, tmm4, tmm6"),
                    concat!($insn, " tmm1, tmm4, tmm7"),
                    concat!($insn, " tmm2, tmm5, tmm6"),
                    concat!($insn, " tmm3, tmm5, tmm7"),
                    "dec {n}",
                    "jnz 2b",
                    "tilestored [{c0} + {stride}*1], tmm0",
                    "tilestored [{c1} + {stride}*1], tmm1",
                    "tilestored [{c2} + {stride}*1], tmm2",
                    "tilestored [{c3} + {stride}*1], tmm3",
                    "tilerelease",
                    cfg = in(reg) cfg.as_ptr(),
                    a = in(reg) a.as_ptr(),
                    b = in(reg) b.as_ptr(),
                    stride = in(reg) 64usize,
                    n = inout(reg) n,
                    c0 = in(reg) c[0].as_mut_ptr(),
                    c1 = in(reg) c[1].as_mut_ptr(),
                    c2 = in(reg) c[2].as_mut_ptr(),
                    c3 = in(reg) c[3].as_mut_ptr(),
                    options(nostack),
                );
            }
            let _ = n;
            c
        }
    };
}

amx_kernel!(
    amx_bf16,
    "tdpbf16ps",
    "bf16, AMX: `tdpbf16ps` = a 16 × 32 bf16 tile times a 32 × 16 one into 16 × 16 fp32: \
     16 · 16 · 32 multiply-adds = **16,384 FLOP** per instruction; four independent \
     accumulators per iteration. Returns the accumulators' bits (fp32)."
);
amx_kernel!(
    amx_int8,
    "tdpbssd",
    "int8, AMX: `tdpbssd` = a 16 × 64 int8 tile times a 64 × 16 one into 16 × 16 int32: \
     16 · 16 · 64 multiply-adds = **32,768 OP** per instruction. Returns the accumulators \
     (int32 bits)."
);

/// CPUID leaf 7, subleaf 0, EDX: bit 22 AMX-BF16, 23 AVX512-FP16, 24 AMX-TILE, 25 AMX-INT8
/// (Intel SDM vol. 2, CPUID).
pub fn cpuid7_edx() -> u32 {
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86-64 processor; leaf 7 is below the maximum leaf of every
    // processor with AVX2, and reads as zero bits (no feature) where it is not.
    let r = unsafe { __cpuid_count(7, 0) };
    r.edx
}

/// Asks Linux for permission to use AMX's tile data state (`arch_prctl(ARCH_REQ_XCOMP_PERM,
/// XFEATURE_XTILEDATA)`, Linux 5.16+, Documentation/arch/x86/xstate.rst); true when granted.
/// Elsewhere (not Linux) false.
pub fn request_amx_permission() -> bool {
    #[cfg(target_os = "linux")]
    {
        const SYS_ARCH_PRCTL: u64 = 158;
        const ARCH_REQ_XCOMP_PERM: u64 = 0x1023;
        const XFEATURE_XTILEDATA: u64 = 18;
        let mut ret: u64 = SYS_ARCH_PRCTL;
        // SAFETY: the arch_prctl system call with two integer arguments; it touches no memory of
        // ours. `syscall` clobbers rcx and r11, declared.
        unsafe {
            asm!(
                "syscall",
                inout("rax") ret,
                in("rdi") ARCH_REQ_XCOMP_PERM,
                in("rsi") XFEATURE_XTILEDATA,
                out("rcx") _,
                out("r11") _,
                options(nostack),
            );
        }
        ret == 0
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
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
