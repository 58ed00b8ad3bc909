//! The suite's CPU kernels, fp32, parallel over rows or chunks with rayon; plain loops the
//! compiler vectorises (several partial sums so reductions vectorise too), GEMMs through
//! [`super::matmul`]. Each is checked against a plain reference in the tests below.
//!
//! | kernel | what it computes | reads, writes (each element once) |
//! |---|---|---|
//! | [`add`] | `out = a + b` | a, b; out |
//! | [`silu_mul`] | `out = silu(g) · u` (SwiGLU) | g, u; out |
//! | [`silu`] | `out = silu(x)` | x; out |
//! | [`rmsnorm`] | `out = x / √(mean(x²) + ε) · w` per row | x, w; out |
//! | [`softmax`] | row softmax of `scale · x` (causal mask optional) | x; out |
//! | [`attention_materialised`] | `S = QKᵀ`, `P = softmax(S/√d, causal)`, `O = P·V` | Q, K, V, S, P; S, P, O |
//! | [`flash_attention`] | the same, tiled: S and P stay in a `br × bc` block | Q, K and V per query block; O |
//! | [`chain_separate`] | RMSNorm → Linear → SiLU → Linear as 4 kernels | every intermediate |
//! | [`chain_fused`] | the same chain per block of `bm` tokens | x, weights; out |

use super::matmul::{matmul, Threads, View};
use crate::MeasureError;
use rayon::prelude::*;

/// Elements per rayon task of the streaming kernels (64 KiB of fp32).
pub const CHUNK: usize = 1 << 14;

/// ε of RMSNorm (Llama's `rms_norm_eps`).
pub const RMS_EPS: f32 = 1e-5;

pub use super::vector::exp;
use super::vector::{online_softmax_step, rmsnorm_row, silu_in_place, softmax_row};

/// `out[i] = a[i] + b[i]` (over the shortest of the three).
pub fn add(a: &[f32], b: &[f32], out: &mut [f32]) {
    out.par_chunks_mut(CHUNK)
        .zip(a.par_chunks(CHUNK))
        .zip(b.par_chunks(CHUNK))
        .for_each(|((o, a), b)| {
            for ((o, a), b) in o.iter_mut().zip(a).zip(b) {
                *o = a + b;
            }
        });
}

/// `out[i] = silu(g[i]) · u[i]`: Llama's SwiGLU after the gate and up projections.
pub fn silu_mul(g: &[f32], u: &[f32], out: &mut [f32]) {
    out.par_chunks_mut(CHUNK)
        .zip(g.par_chunks(CHUNK))
        .zip(u.par_chunks(CHUNK))
        .for_each(|((o, g), u)| super::vector::silu_mul(g, u, o));
}

/// `out[i] = silu(x[i])`.
pub fn silu(x: &[f32], out: &mut [f32]) {
    out.par_chunks_mut(CHUNK)
        .zip(x.par_chunks(CHUNK))
        .for_each(|(o, x)| super::vector::silu(x, o));
}

/// RMSNorm over rows of `cols`: `out = x / √(mean(x²) + ε) · w`.
pub fn rmsnorm(x: &[f32], w: &[f32], out: &mut [f32], cols: usize) {
    let cols = cols.max(1);
    out.par_chunks_mut(cols)
        .zip(x.par_chunks(cols))
        .for_each(|(o, x)| rmsnorm_row(x, w, o, RMS_EPS));
}

/// Row softmax of `scale · x` (rows of `cols`, `scale` > 0). `causal = Some(q)`: row r is query
/// `r mod q` of a causal attention over `cols` keys, seeing keys `0 ..= r mod q` (the rest are
/// masked to 0); `None`: every key.
pub fn softmax(x: &[f32], out: &mut [f32], cols: usize, scale: f32, causal: Option<usize>) {
    let cols = cols.max(1);
    out.par_chunks_mut(cols)
        .zip(x.par_chunks(cols))
        .enumerate()
        .for_each(|(r, (o, x))| {
            let visible = causal.map_or(cols, |q| r % q.max(1) + 1);
            softmax_row(x, o, scale, visible);
        });
}

/// Shapes of one causal self-attention: `heads` heads of `seq` tokens and `head_dim`, each
/// tensor laid out `[head][token][head_dim]`, no batch, no GQA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttentionShape {
    /// Heads.
    pub heads: usize,
    /// Tokens (queries = keys: prefill).
    pub seq: usize,
    /// Elements per head.
    pub head_dim: usize,
}

impl AttentionShape {
    /// Elements of Q (= K = V = O).
    pub fn qkv_len(&self) -> usize {
        self.heads * self.seq * self.head_dim
    }
    /// Elements of the score matrix.
    pub fn scores_len(&self) -> usize {
        self.heads * self.seq * self.seq
    }
    /// The softmax scale, 1/√head_dim.
    pub fn scale(&self) -> f32 {
        1.0 / (self.head_dim.max(1) as f32).sqrt()
    }
}

fn too_short(what: &str) -> MeasureError {
    MeasureError::new(
        format!("internal: attention buffer `{what}` too short"),
        None,
    )
}

/// Unfused causal attention, three kernels as eager PyTorch runs them: `S = Q·Kᵀ` per head
/// (into `scores`), `P = softmax(S/√d)` with the causal mask (into `probs`), `O = P·V`.
///
/// # Errors
/// A buffer shorter than the shape needs.
pub fn attention_materialised(
    sh: AttentionShape,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    scores: &mut [f32],
    probs: &mut [f32],
    out: &mut [f32],
) -> Result<(), MeasureError> {
    let s = sh.seq;
    if q.len() < sh.qkv_len() || k.len() < sh.qkv_len() || v.len() < sh.qkv_len() {
        return Err(too_short("q, k or v"));
    }
    if scores.len() < sh.scores_len() || probs.len() < sh.scores_len() {
        return Err(too_short("scores"));
    }
    if out.len() < sh.qkv_len() {
        return Err(too_short("out"));
    }
    qk_matmul(sh, q, k, scores)?;
    softmax(
        &scores[..sh.scores_len()],
        &mut probs[..sh.scores_len()],
        s,
        sh.scale(),
        Some(s),
    );
    sv_matmul(sh, probs, v, out)
}

/// `S_h = Q_h · K_hᵀ` for every head (parallel over heads).
pub fn qk_matmul(
    sh: AttentionShape,
    q: &[f32],
    k: &[f32],
    scores: &mut [f32],
) -> Result<(), MeasureError> {
    let (s, d) = (sh.seq, sh.head_dim);
    let hd = s * d;
    scores[..sh.scores_len()]
        .par_chunks_mut(s * s)
        .enumerate()
        .try_for_each(|(h, sc)| {
            let qh = q.get(h * hd..(h + 1) * hd).ok_or_else(|| too_short("q"))?;
            let kh = k.get(h * hd..(h + 1) * hd).ok_or_else(|| too_short("k"))?;
            matmul(
                sc,
                s,
                View::row_major(qh, s, d),
                View::row_major(kh, s, d).t(),
                false,
                Threads::One,
            )
        })
}

/// `O_h = P_h · V_h` for every head (parallel over heads).
pub fn sv_matmul(
    sh: AttentionShape,
    probs: &[f32],
    v: &[f32],
    out: &mut [f32],
) -> Result<(), MeasureError> {
    let (s, d) = (sh.seq, sh.head_dim);
    let hd = s * d;
    out[..sh.qkv_len()]
        .par_chunks_mut(hd)
        .enumerate()
        .try_for_each(|(h, oh)| {
            let ph = probs
                .get(h * s * s..(h + 1) * s * s)
                .ok_or_else(|| too_short("probs"))?;
            let vh = v.get(h * hd..(h + 1) * hd).ok_or_else(|| too_short("v"))?;
            matmul(
                oh,
                d,
                View::row_major(ph, s, s),
                View::row_major(vh, s, d),
                false,
                Threads::One,
            )
        })
}

/// Causal attention as one tiled kernel (FlashAttention-2, Dao 2023, Algorithm 1): per head and
/// block of `br` queries, the blocks of `bc` keys it can see are streamed; each `br × bc` score
/// block lives in a scratch buffer (L1/L2) and is folded into the output with the online
/// softmax (running row maximum m and sum l, earlier terms rescaled by e^(m_old − m_new)).
/// Parallel over (head, query block). Blocks wholly above the diagonal are skipped.
///
/// # Errors
/// A buffer shorter than the shape needs.
pub fn flash_attention(
    sh: AttentionShape,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    out: &mut [f32],
    br: usize,
    bc: usize,
) -> Result<(), MeasureError> {
    let (s, d) = (sh.seq, sh.head_dim);
    let (br, bc) = (br.max(1), bc.max(1));
    let hd = s * d;
    if q.len() < sh.qkv_len() || k.len() < sh.qkv_len() || v.len() < sh.qkv_len() {
        return Err(too_short("q, k or v"));
    }
    if out.len() < sh.qkv_len() || hd == 0 {
        return Err(too_short("out"));
    }
    let scale = sh.scale();
    out[..sh.qkv_len()]
        .par_chunks_mut(hd)
        .enumerate()
        .flat_map(|(h, oh)| {
            oh.par_chunks_mut(br * d)
                .enumerate()
                .map(move |(b, ob)| (h, b, ob))
        })
        .try_for_each_init(
            || (vec![0.0f32; br * bc], vec![0.0f32; br], vec![0.0f32; br]),
            |(sblk, m, l), (h, b, ob)| {
                let rows = ob.len() / d;
                let q0 = b * br;
                let qh = &q[h * hd..(h + 1) * hd];
                let (kh, vh) = (&k[h * hd..(h + 1) * hd], &v[h * hd..(h + 1) * hd]);
                let qv = View::row_major(&qh[q0 * d..(q0 + rows) * d], rows, d);
                m[..rows].fill(f32::NEG_INFINITY);
                l[..rows].fill(0.0);
                ob.fill(0.0);
                let last = q0 + rows; // keys 0 .. last are visible to some query of the block
                let mut kb = 0;
                while kb < last {
                    let cols = bc.min(s - kb);
                    let sb = &mut sblk[..rows * cols];
                    matmul(
                        sb,
                        cols,
                        qv,
                        View::row_major(&kh[kb * d..(kb + cols) * d], cols, d).t(),
                        false,
                        Threads::One,
                    )?;
                    for r in 0..rows {
                        let i = q0 + r;
                        let row = &mut sb[r * cols..(r + 1) * cols];
                        // Keys kb .. kb + visible are at or before query i.
                        let visible = (i + 1).saturating_sub(kb).min(cols);
                        if visible == 0 {
                            row.fill(0.0);
                            continue;
                        }
                        let step = online_softmax_step(row, visible, scale, m[r]);
                        let corr = step.corr;
                        l[r] = l[r] * corr + step.sum;
                        m[r] = step.m;
                        for o in &mut ob[r * d..(r + 1) * d] {
                            *o *= corr;
                        }
                    }
                    matmul(
                        ob,
                        d,
                        View::row_major(sb, rows, cols),
                        View::row_major(&vh[kb * d..(kb + cols) * d], cols, d),
                        true,
                        Threads::One,
                    )?;
                    kb += cols;
                }
                for r in 0..rows {
                    let inv = if l[r] > 0.0 { 1.0 / l[r] } else { 0.0 };
                    for o in &mut ob[r * d..(r + 1) * d] {
                        *o *= inv;
                    }
                }
                Ok(())
            },
        )
}

/// Shapes of the RMSNorm → Linear → SiLU → Linear chain: `tokens` rows, `hidden` d,
/// `intermediate` f; weights `w1` d × f and `w2` f × d, row-major (in × out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainShape {
    /// Tokens T.
    pub tokens: usize,
    /// Hidden size d.
    pub hidden: usize,
    /// Intermediate size f.
    pub intermediate: usize,
}

/// The chain's weights.
#[derive(Debug, Clone, Copy)]
pub struct ChainWeights<'a> {
    /// RMSNorm weight, d.
    pub norm: &'a [f32],
    /// First linear, d × f.
    pub w1: &'a [f32],
    /// Second linear, f × d.
    pub w2: &'a [f32],
}

/// The chain as four kernels, each intermediate written to memory: `y = rmsnorm(x)` (T × d),
/// `h = y·W1` (T × f), `a = silu(h)` (T × f), `out = a·W2` (T × d).
///
/// # Errors
/// A buffer shorter than the shape needs.
pub fn chain_separate(
    sh: ChainShape,
    x: &[f32],
    w: ChainWeights<'_>,
    y: &mut [f32],
    h: &mut [f32],
    a: &mut [f32],
    out: &mut [f32],
) -> Result<(), MeasureError> {
    let (t, d, f) = (sh.tokens, sh.hidden, sh.intermediate);
    rmsnorm(x, w.norm, y, d);
    matmul(
        h,
        f,
        View::row_major(y, t, d),
        View::row_major(w.w1, d, f),
        false,
        Threads::All,
    )?;
    silu(h, a);
    matmul(
        out,
        d,
        View::row_major(a, t, f),
        View::row_major(w.w2, f, d),
        false,
        Threads::All,
    )
}

/// The chain as one kernel: per block of `bm` tokens (parallel over blocks), RMSNorm into a
/// `bm × d` scratch, the first GEMM into a `bm × f` scratch, SiLU in place, the second GEMM
/// straight into the output. The intermediates never leave the core's caches; the weights are
/// read once per block (from L2/L3 when they fit there).
///
/// # Errors
/// A buffer shorter than the shape needs.
pub fn chain_fused(
    sh: ChainShape,
    x: &[f32],
    w: ChainWeights<'_>,
    out: &mut [f32],
    bm: usize,
) -> Result<(), MeasureError> {
    let (t, d, f) = (sh.tokens, sh.hidden, sh.intermediate);
    let bm = bm.max(1);
    if x.len() < t * d || out.len() < t * d || d == 0 {
        return Err(MeasureError::new(
            "internal: chain buffers too short".into(),
            None,
        ));
    }
    out[..t * d]
        .par_chunks_mut(bm * d)
        .enumerate()
        .try_for_each_init(
            || (vec![0.0f32; bm * d], vec![0.0f32; bm * f]),
            |(ybuf, hbuf), (b, ob)| {
                let rows = ob.len() / d;
                let xb = &x[b * bm * d..(b * bm + rows) * d];
                let yb = &mut ybuf[..rows * d];
                for (yr, xr) in yb.chunks_exact_mut(d).zip(xb.chunks_exact(d)) {
                    rmsnorm_row(xr, w.norm, yr, RMS_EPS);
                }
                let hb = &mut hbuf[..rows * f];
                matmul(
                    hb,
                    f,
                    View::row_major(yb, rows, d),
                    View::row_major(w.w1, d, f),
                    false,
                    Threads::One,
                )?;
                silu_in_place(hb);
                matmul(
                    ob,
                    d,
                    View::row_major(hb, rows, f),
                    View::row_major(w.w2, f, d),
                    false,
                    Threads::One,
                )
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    fn close(got: &[f32], want: &[f64], tol: f64) {
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (f64::from(*g) - w).abs() <= tol * (1.0 + w.abs()),
                "at {i}: {g} vs {w}"
            );
        }
    }

    #[test]
    fn elementwise_kernels_by_hand() {
        // 1 + 2 = 3 over 40,000 elements (three chunks, the last partial).
        let n = 40_000;
        let (a, b) = (vec![1.0f32; n], vec![2.0f32; n]);
        let mut out = vec![0.0f32; n];
        add(&a, &b, &mut out);
        assert!(out.iter().all(|&v| v == 3.0));
        // silu(0) = 0; silu(2) = 2 / (1 + e^−2) = 1.761594156; × 3 = 5.284782468.
        let g: Vec<f32> = (0..n).map(|i| if i % 2 == 0 { 0.0 } else { 2.0 }).collect();
        let u = vec![3.0f32; n];
        silu_mul(&g, &u, &mut out);
        for (i, v) in out.iter().enumerate() {
            let want = if i % 2 == 0 { 0.0 } else { 5.284_782_5 };
            assert!((v - want).abs() < 1e-5, "{i}: {v}");
        }
        let x = values(1000, 3);
        let mut o = vec![0.0; 1000];
        silu(&x, &mut o);
        let want: Vec<f64> = x
            .iter()
            .map(|&v| f64::from(v) / (1.0 + (-f64::from(v)).exp()))
            .collect();
        close(&o, &want, 1e-6);
    }

    #[test]
    fn rmsnorm_by_hand_and_against_the_reference() {
        // Row [3, 4]: mean of squares 12.5, 1/√(12.5 + 1e-5) = 0.28284258; weights [1, 2]:
        // [0.84852774, 2.26274064].
        let mut out = [0.0f32; 2];
        rmsnorm(&[3.0, 4.0], &[1.0, 2.0], &mut out, 2);
        assert!((out[0] - 0.848_527_7).abs() < 1e-6 && (out[1] - 2.262_740_6).abs() < 1e-6);
        let (rows, cols) = (7, 333);
        let x = values(rows * cols, 1);
        let w = values(cols, 2);
        let mut o = vec![0.0; rows * cols];
        rmsnorm(&x, &w, &mut o, cols);
        let mut want = Vec::new();
        for r in 0..rows {
            let row = &x[r * cols..(r + 1) * cols];
            let ms = row.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / cols as f64;
            let inv = 1.0 / (ms + 1e-5).sqrt();
            want.extend(
                row.iter()
                    .zip(&w)
                    .map(|(&v, &w)| f64::from(v) * inv * f64::from(w)),
            );
        }
        close(&o, &want, 1e-5);
    }

    fn softmax_ref(x: &[f32], scale: f64, visible: usize) -> Vec<f64> {
        let m = x[..visible]
            .iter()
            .map(|&v| f64::from(v) * scale)
            .fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(j, &v)| {
                if j < visible {
                    (f64::from(v) * scale - m).exp()
                } else {
                    0.0
                }
            })
            .collect();
        let s: f64 = e.iter().sum();
        e.iter().map(|v| v / s).collect()
    }

    #[test]
    fn softmax_by_hand_and_with_the_causal_mask() {
        // [0, ln 2, ln 3]: e^x = 1, 2, 3 over 6.
        let mut o = [0.0f32; 3];
        softmax(&[0.0, 2f32.ln(), 3f32.ln()], &mut o, 3, 1.0, None);
        close(&o, &[1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0], 1e-6);
        // 2 heads × 5 queries over 5 keys, causal: row r sees r mod 5 + 1 keys.
        let (rows, cols) = (10, 5);
        let x = values(rows * cols, 4);
        let mut out = vec![f32::NAN; rows * cols];
        softmax(&x, &mut out, cols, 0.5, Some(5));
        for r in 0..rows {
            let want = softmax_ref(&x[r * cols..(r + 1) * cols], 0.5, r % 5 + 1);
            close(&out[r * cols..(r + 1) * cols], &want, 1e-6);
        }
        // A long row (several 16-wide chunks and a remainder).
        let x = values(1000, 5);
        let mut out = vec![0.0; 1000];
        softmax(&x, &mut out, 1000, 3.0, None);
        close(&out, &softmax_ref(&x, 3.0, 1000), 1e-6);
    }

    /// Causal attention by the definition, in f64.
    fn attention_ref(sh: AttentionShape, q: &[f32], k: &[f32], v: &[f32]) -> Vec<f64> {
        let (s, d) = (sh.seq, sh.head_dim);
        let scale = 1.0 / (d as f64).sqrt();
        let mut out = vec![0.0; sh.qkv_len()];
        for h in 0..sh.heads {
            let base = h * s * d;
            for i in 0..s {
                let sc: Vec<f64> = (0..=i)
                    .map(|j| {
                        (0..d)
                            .map(|x| {
                                f64::from(q[base + i * d + x]) * f64::from(k[base + j * d + x])
                            })
                            .sum::<f64>()
                            * scale
                    })
                    .collect();
                let m = sc.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = sc.iter().map(|x| (x - m).exp()).collect();
                let z: f64 = e.iter().sum();
                for x in 0..d {
                    out[base + i * d + x] = (0..=i)
                        .map(|j| e[j] / z * f64::from(v[base + j * d + x]))
                        .sum();
                }
            }
        }
        out
    }

    #[test]
    fn both_attentions_match_the_definition() -> Result<(), Box<dyn std::error::Error>> {
        // 3 heads, 37 tokens (not a multiple of the blocks), head_dim 16.
        let sh = AttentionShape {
            heads: 3,
            seq: 37,
            head_dim: 16,
        };
        let (q, k, v) = (
            values(sh.qkv_len(), 7),
            values(sh.qkv_len(), 8),
            values(sh.qkv_len(), 9),
        );
        let want = attention_ref(sh, &q, &k, &v);
        let mut scores = vec![0.0; sh.scores_len()];
        let mut probs = vec![0.0; sh.scores_len()];
        let mut out = vec![0.0; sh.qkv_len()];
        attention_materialised(sh, &q, &k, &v, &mut scores, &mut probs, &mut out)?;
        close(&out, &want, 1e-5);
        for (br, bc) in [(8, 8), (16, 5), (64, 64), (1, 37)] {
            let mut out = vec![f32::NAN; sh.qkv_len()];
            flash_attention(sh, &q, &k, &v, &mut out, br, bc)?;
            close(&out, &want, 1e-5);
        }
        // A short buffer is an error.
        assert!(flash_attention(sh, &q[..10], &k, &v, &mut out, 8, 8).is_err());
        Ok(())
    }

    #[test]
    fn fused_chain_equals_the_four_kernels_and_the_reference(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let sh = ChainShape {
            tokens: 45,
            hidden: 24,
            intermediate: 40,
        };
        let (t, d, f) = (sh.tokens, sh.hidden, sh.intermediate);
        let x = values(t * d, 11);
        let norm = values(d, 12);
        let w1 = values(d * f, 13);
        let w2 = values(f * d, 14);
        let w = ChainWeights {
            norm: &norm,
            w1: &w1,
            w2: &w2,
        };
        // Reference in f64.
        let mut want = vec![0.0f64; t * d];
        for r in 0..t {
            let row = &x[r * d..(r + 1) * d];
            let ms = row.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / d as f64;
            let inv = 1.0 / (ms + 1e-5).sqrt();
            let y: Vec<f64> = row
                .iter()
                .zip(&norm)
                .map(|(&v, &g)| f64::from(v) * inv * f64::from(g))
                .collect();
            let a: Vec<f64> = (0..f)
                .map(|j| {
                    let h: f64 = (0..d).map(|i| y[i] * f64::from(w1[i * f + j])).sum();
                    h / (1.0 + (-h).exp())
                })
                .collect();
            for c in 0..d {
                want[r * d + c] = (0..f).map(|j| a[j] * f64::from(w2[j * d + c])).sum();
            }
        }
        let (mut y, mut h, mut a, mut out) = (
            vec![0.0; t * d],
            vec![0.0; t * f],
            vec![0.0; t * f],
            vec![0.0; t * d],
        );
        chain_separate(sh, &x, w, &mut y, &mut h, &mut a, &mut out)?;
        close(&out, &want, 1e-4);
        for bm in [1, 8, 64] {
            let mut fused = vec![f32::NAN; t * d];
            chain_fused(sh, &x, w, &mut fused, bm)?;
            close(&fused, &want, 1e-4);
        }
        Ok(())
    }
}
