//! The bodies of the vector kernels (one chunk or one row each), compiled twice and chosen at run
//! time: for the x86-64 baseline (SSE2, what the crate is built for) and for AVX2 + FMA where the
//! CPU has them (`is_x86_feature_detected!`), as libraries ship SIMD kernels. The exponential is
//! a polynomial ([`exp_with`]), about twenty vector operations per element: without AVX2 and FMA,
//! SiLU and softmax run out of instructions before DRAM runs out of bandwidth, and the roofline
//! (which counts e^x as one FLOP) would not apply to them.
//!
//! Every function here is safe to call; the only unsafe code is the call into the AVX2 + FMA
//! copies after the check.

#![allow(unsafe_code)]

const LOG2E: f32 = std::f32::consts::LOG2_E;
/// ln 2 split in a part exact in fp32 and the rest (Cody and Waite), for the range reduction.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// 1.5 · 2²³: adding it rounds a float below 2²² to an integer, held in the low mantissa bits.
const ROUND_MAGIC: f32 = 12_582_912.0;

/// `a·b + c`: one fused instruction when `F` (inside an FMA-enabled function), else two.
#[inline(always)]
fn fma<const F: bool>(a: f32, b: f32, c: f32) -> f32 {
    if F {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// e^x in fp32, branch-free so loops over it vectorise: clamp x to [−87, 88] (beyond, e^x
/// under- or overflows fp32), n = round(x·log₂e), r = x − n·ln 2 (|r| ≤ ln 2 / 2), e^r by the
/// degree-6 polynomial of Cephes' `expf` (S. Moshier), times 2ⁿ built in the exponent bits.
/// Relative error below 2·10⁻⁷ (tested against `f64::exp`). `F`: with fused multiply-adds.
#[inline(always)]
pub fn exp_with<const F: bool>(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    let t = fma::<F>(x, LOG2E, ROUND_MAGIC);
    let n = t - ROUND_MAGIC;
    let r = fma::<F>(n, -LN2_LO, fma::<F>(n, -LN2_HI, x));
    let z = r * r;
    let mut p = 1.987_569_1e-4f32;
    p = fma::<F>(p, r, 1.398_199_9e-3);
    p = fma::<F>(p, r, 8.333_452e-3);
    p = fma::<F>(p, r, 4.166_579_6e-2);
    p = fma::<F>(p, r, 1.666_666_5e-1);
    p = fma::<F>(p, r, 0.5);
    let y = fma::<F>(p, z, r) + 1.0;
    // t's bits are 0x4B40_0000 + n (two's complement in the mantissa) for |n| < 2²²: n + 127
    // shifted into the exponent field is 2ⁿ.
    let bits = t
        .to_bits()
        .wrapping_sub(0x4B40_0000)
        .wrapping_add(127)
        .wrapping_shl(23);
    y * f32::from_bits(bits)
}

#[inline(always)]
fn silu_with<const F: bool>(x: f32) -> f32 {
    x / (1.0 + exp_with::<F>(-x))
}

#[inline(always)]
fn silu_mul_body<const F: bool>(g: &[f32], u: &[f32], out: &mut [f32]) {
    for ((o, g), u) in out.iter_mut().zip(g).zip(u) {
        *o = silu_with::<F>(*g) * u;
    }
}

#[inline(always)]
fn silu_body<const F: bool>(x: &[f32], out: &mut [f32]) {
    for (o, x) in out.iter_mut().zip(x) {
        *o = silu_with::<F>(*x);
    }
}

#[inline(always)]
fn silu_in_place_body<const F: bool>(x: &mut [f32]) {
    for v in x.iter_mut() {
        *v = silu_with::<F>(*v);
    }
}

/// Σ x², in 16 partial sums (so the loop vectorises).
#[inline(always)]
fn sum_squares<const F: bool>(x: &[f32]) -> f32 {
    let mut acc = [0.0f32; 16];
    let chunks = x.chunks_exact(16);
    let rest: f32 = chunks.remainder().iter().map(|v| v * v).sum();
    for c in chunks {
        for (s, v) in acc.iter_mut().zip(c) {
            *s = fma::<F>(*v, *v, *s);
        }
    }
    acc.iter().sum::<f32>() + rest
}

#[inline(always)]
fn rmsnorm_body<const F: bool>(x: &[f32], w: &[f32], out: &mut [f32], eps: f32) {
    let n = x.len().max(1) as f32;
    let inv = 1.0 / (sum_squares::<F>(x) / n + eps).sqrt();
    for ((o, x), w) in out.iter_mut().zip(x).zip(w) {
        *o = x * inv * w;
    }
}

/// Largest element, in 16 partial maxima; −∞ for none.
#[inline(always)]
fn max_of(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; 16];
    let chunks = x.chunks_exact(16);
    let rest = chunks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m });
    for c in chunks {
        for (m, &v) in acc.iter_mut().zip(c) {
            *m = if v > *m { v } else { *m };
        }
    }
    acc.iter().fold(rest, |m, &v| if v > m { v } else { m })
}

/// `x[j] ← e^(scale·x[j] − m)` in place, returning their sum (16 partial sums).
#[inline(always)]
fn exp_shifted_in_place<const F: bool>(x: &mut [f32], scale: f32, m: f32) -> f32 {
    let mut acc = [0.0f32; 16];
    let mut chunks = x.chunks_exact_mut(16);
    for c in &mut chunks {
        for (v, s) in c.iter_mut().zip(acc.iter_mut()) {
            *v = exp_with::<F>(fma::<F>(*v, scale, -m));
            *s += *v;
        }
    }
    let mut rest = 0.0;
    for v in chunks.into_remainder() {
        *v = exp_with::<F>(fma::<F>(*v, scale, -m));
        rest += *v;
    }
    acc.iter().sum::<f32>() + rest
}

#[inline(always)]
fn softmax_body<const F: bool>(x: &[f32], out: &mut [f32], scale: f32, visible: usize) {
    let v = visible.min(x.len()).min(out.len());
    let (ov, masked) = out.split_at_mut(v);
    masked.fill(0.0);
    if v == 0 {
        return;
    }
    // scale > 0, so max(scale·x) = scale·max(x).
    let m = max_of(&x[..v]) * scale;
    ov.copy_from_slice(&x[..v]);
    let sum = exp_shifted_in_place::<F>(ov, scale, m);
    let inv = 1.0 / sum;
    for o in ov.iter_mut() {
        *o *= inv;
    }
}

#[inline(always)]
fn online_body<const F: bool>(row: &mut [f32], visible: usize, scale: f32, m_old: f32) -> Online {
    let v = visible.min(row.len());
    let (live, masked) = row.split_at_mut(v);
    masked.fill(0.0);
    if v == 0 {
        return Online {
            m: m_old,
            corr: 1.0,
            sum: 0.0,
        };
    }
    let m = m_old.max(max_of(live) * scale);
    let corr = exp_with::<F>(m_old - m);
    let sum = exp_shifted_in_place::<F>(live, scale, m);
    Online { m, corr, sum }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Online;
    // Each function is its generic body compiled with AVX2 and FMA enabled.

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn silu_mul(g: &[f32], u: &[f32], out: &mut [f32]) {
        super::silu_mul_body::<true>(g, u, out)
    }
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn silu(x: &[f32], out: &mut [f32]) {
        super::silu_body::<true>(x, out)
    }
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn silu_in_place(x: &mut [f32]) {
        super::silu_in_place_body::<true>(x)
    }
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn rmsnorm(x: &[f32], w: &[f32], out: &mut [f32], eps: f32) {
        super::rmsnorm_body::<true>(x, w, out, eps)
    }
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn softmax(x: &[f32], out: &mut [f32], scale: f32, visible: usize) {
        super::softmax_body::<true>(x, out, scale, visible)
    }
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn online(row: &mut [f32], visible: usize, scale: f32, m_old: f32) -> Online {
        super::online_body::<true>(row, visible, scale, m_old)
    }
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn exp(x: f32) -> f32 {
        super::exp_with::<true>(x)
    }
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn exp_in_place(x: &mut [f32], scale: f32, m: f32) -> f32 {
        super::exp_shifted_in_place::<true>(x, scale, m)
    }
}

/// Whether this CPU runs the AVX2 + FMA copies.
pub fn fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Calls the AVX2 + FMA copy when the CPU has both, else the baseline body.
macro_rules! dispatch {
    ($fast:ident ( $($arg:expr),* ), $body:ident) => {{
        #[cfg(target_arch = "x86_64")]
        if fast() {
            // SAFETY: `fast()` has just checked that this CPU has AVX2 and FMA, the only
            // target features the called copy enables; its arguments are plain slices and
            // floats, valid in any instruction set.
            return unsafe { avx2::$fast($($arg),*) };
        }
        $body::<false>($($arg),*)
    }};
}

/// e^x ([`exp_with`]) with fused multiply-adds where the CPU has them.
pub fn exp(x: f32) -> f32 {
    dispatch!(exp(x), exp_with)
}

/// `x[j] ← e^(scale·x[j] − m)` in place, returning their sum: softmax's exponential pass, alone
/// (the calibration kernel of the e^x ceiling).
pub fn exp_in_place(x: &mut [f32], scale: f32, m: f32) -> f32 {
    dispatch!(exp_in_place(x, scale, m), exp_shifted_in_place)
}

/// `out[i] = silu(g[i]) · u[i]` over the shortest of the three.
pub fn silu_mul(g: &[f32], u: &[f32], out: &mut [f32]) {
    dispatch!(silu_mul(g, u, out), silu_mul_body)
}

/// `out[i] = silu(x[i]) = x[i] / (1 + e^−x[i])`.
pub fn silu(x: &[f32], out: &mut [f32]) {
    dispatch!(silu(x, out), silu_body)
}

/// `x[i] ← silu(x[i])`.
pub fn silu_in_place(x: &mut [f32]) {
    dispatch!(silu_in_place(x), silu_in_place_body)
}

/// One row of RMSNorm: `out = x / √(mean(x²) + eps) · w`.
pub fn rmsnorm_row(x: &[f32], w: &[f32], out: &mut [f32], eps: f32) {
    dispatch!(rmsnorm(x, w, out, eps), rmsnorm_body)
}

/// One row of softmax of `scale · x` (`scale` > 0) over its first `visible` elements; the rest
/// of `out` (masked) is 0.
pub fn softmax_row(x: &[f32], out: &mut [f32], scale: f32, visible: usize) {
    dispatch!(softmax(x, out, scale, visible), softmax_body)
}

/// One step of the online softmax (FlashAttention-2, Algorithm 1) on a row of raw scores:
/// with the running maximum `m_old` (of scaled scores; −∞ at the start), the new maximum
/// m = max(m_old, scale · max(row[..visible])); the row becomes e^(scale·s − m) (0 past
/// `visible`, the causal mask); returns m, the factor e^(m_old − m) that rescales the earlier
/// terms, and the row's sum.
pub fn online_softmax_step(row: &mut [f32], visible: usize, scale: f32, m_old: f32) -> Online {
    dispatch!(online(row, visible, scale, m_old), online_body)
}

/// What [`online_softmax_step`] returns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Online {
    /// The new running maximum.
    pub m: f32,
    /// e^(m_old − m): the factor for the earlier sum and output.
    pub corr: f32,
    /// Σ of the row's new terms.
    pub sum: f32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_f64_to_two_ulp_in_both_builds() {
        for i in -8700..=8800 {
            let x = i as f32 / 100.0;
            let want = f64::from(x).exp();
            for got in [exp_with::<false>(x), exp(x)] {
                let got = f64::from(got);
                assert!((got - want).abs() <= 2e-7 * want, "{x}: {got} vs {want}");
            }
        }
        assert_eq!(exp_with::<false>(0.0), 1.0);
        // Clamped far out: no inf, no NaN.
        assert!(exp(-1000.0) > 0.0 && exp(-1000.0) < 1e-37);
        assert!(exp(1000.0).is_finite());
    }

    #[test]
    fn exp_in_place_by_hand() {
        // [0, ln 2, ln 3 + 1] with scale 1 and m = 1: e^(−1), 2/e, 3; 17 elements so the
        // remainder path runs too (16 per chunk).
        let mut x = [0.0f32; 17];
        x[1] = 2f32.ln();
        x[16] = 3f32.ln() + 1.0;
        let sum = exp_in_place(&mut x, 1.0, 1.0);
        let e = std::f32::consts::E;
        assert!((x[0] - 1.0 / e).abs() < 1e-7 && (x[1] - 2.0 / e).abs() < 1e-6);
        assert!((x[16] - 3.0).abs() < 1e-6);
        // 15 zeros → e^(−1) each, plus 2/e, plus 3.
        let want = 15.0 / e + 2.0 / e + 3.0;
        assert!((sum - want).abs() < 1e-5, "{sum} vs {want}");
    }

    #[test]
    fn online_step_by_hand() {
        // Row [0, ln 2, 9] with 2 visible, scale 1, from m = −∞: m = ln 2, terms e^(0 − ln 2)
        // = 0.5 and 1, sum 1.5, the masked 9 becomes 0; corr = e^(−∞) ≈ 0.
        let mut row = [0.0, 2f32.ln(), 9.0];
        let o = online_softmax_step(&mut row, 2, 1.0, f32::NEG_INFINITY);
        assert!((o.m - 2f32.ln()).abs() < 1e-7);
        assert!((o.sum - 1.5).abs() < 1e-6 && o.corr < 1e-30);
        assert!((row[0] - 0.5).abs() < 1e-7 && row[2] == 0.0);
        // A later block with a larger maximum rescales: m_old = ln 2, new max ln 4:
        // corr = e^(ln 2 − ln 4) = 0.5.
        let mut row = [4f32.ln()];
        let o = online_softmax_step(&mut row, 1, 1.0, 2f32.ln());
        assert!((o.corr - 0.5).abs() < 1e-6 && (o.sum - 1.0).abs() < 1e-6);
        // Nothing visible: nothing changes.
        let mut row = [1.0f32; 4];
        let o = online_softmax_step(&mut row, 0, 1.0, 3.0);
        assert_eq!((o.m, o.corr, o.sum), (3.0, 1.0, 0.0));
        assert_eq!(row, [0.0; 4]);
    }
}
