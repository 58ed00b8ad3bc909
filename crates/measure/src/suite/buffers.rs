//! An entry made runnable on the CPU ([`build_cpu`]): its buffers, allocated and filled
//! ([`filled`], [`zeros`]), and one execution of its kernels.

use super::cpu::{self};
use super::matmul;
use super::spec::f32_bytes;
use super::spec::{mib, Spec};
use super::{CHAIN_BLOCK, FLASH_BLOCK};
use crate::MeasureError;
use rayon::prelude::*;
use roofline_core::prediction::Launch;

/// `n` deterministic values in [−1, 1) (a 64-bit LCG per 64 KiB chunk, Knuth's MMIX
/// constants), written in parallel so the pages are touched by the threads that use them.
///
/// # Errors
/// Not enough memory.
pub fn filled(n: usize, seed: u64) -> Result<Vec<f32>, MeasureError> {
    let mut v = zeros(n)?;
    v.par_chunks_mut(cpu::CHUNK).enumerate().for_each(|(i, c)| {
        let mut s = (seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1;
        for x in c {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            *x = ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0;
        }
    });
    Ok(v)
}

/// `n` zeros, every page written.
///
/// # Errors
/// Not enough memory.
pub fn zeros(n: usize) -> Result<Vec<f32>, MeasureError> {
    let mut v: Vec<f32> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        MeasureError::new(
            format!("cannot allocate {} for the kernel suite", mib(f32_bytes(n))),
            Some("free some memory, or pass --quick".into()),
        )
    })?;
    v.resize(n, 0.0);
    Ok(v)
}

/// An entry ready to run: its launches and one execution of them.
pub struct Built {
    /// The launches, with their costs.
    pub launches: Vec<Launch>,
    /// One execution of every launch, in order.
    pub run: Box<dyn FnMut() -> Result<(), MeasureError>>,
}

/// Allocates and fills `spec`'s buffers on the CPU and returns it ready to run.
///
/// # Errors
/// Not enough memory.
pub fn build_cpu(spec: &Spec) -> Result<Built, MeasureError> {
    use cpu::*;
    let launches = spec.launches()?;
    let run: Box<dyn FnMut() -> Result<(), MeasureError>> = match *spec {
        Spec::Gemm { m, n, k, .. } => gemm_kernel((m, n, k), 1)?,
        Spec::Add { n, .. } => {
            let (a, b, mut o) = (filled(n, 1)?, filled(n, 2)?, zeros(n)?);
            Box::new(move || {
                add(&a, &b, &mut o);
                Ok(())
            })
        }
        Spec::SiluMul { n } => {
            let (g, u, mut o) = (filled(n, 1)?, filled(n, 2)?, zeros(n)?);
            Box::new(move || {
                silu_mul(&g, &u, &mut o);
                Ok(())
            })
        }
        Spec::RmsNorm { rows, cols, .. } => {
            let (x, w, mut o) = (
                filled(rows * cols, 1)?,
                filled(cols, 2)?,
                zeros(rows * cols)?,
            );
            Box::new(move || {
                rmsnorm(&x, &w, &mut o, cols);
                Ok(())
            })
        }
        Spec::Softmax { rows, cols } => {
            let (x, mut o) = (filled(rows * cols, 1)?, zeros(rows * cols)?);
            Box::new(move || {
                softmax(&x, &mut o, cols, 1.0, None);
                Ok(())
            })
        }
        Spec::AttentionMaterialised(a) => {
            let (q, k, v) = (
                filled(a.qkv_len(), 1)?,
                filled(a.qkv_len(), 2)?,
                filled(a.qkv_len(), 3)?,
            );
            let (mut s, mut p, mut o) = (
                zeros(a.scores_len())?,
                zeros(a.scores_len())?,
                zeros(a.qkv_len())?,
            );
            Box::new(move || attention_materialised(a, &q, &k, &v, &mut s, &mut p, &mut o))
        }
        Spec::AttentionFlash(a) => {
            let (q, k, v) = (
                filled(a.qkv_len(), 1)?,
                filled(a.qkv_len(), 2)?,
                filled(a.qkv_len(), 3)?,
            );
            let mut o = zeros(a.qkv_len())?;
            Box::new(move || flash_attention(a, &q, &k, &v, &mut o, FLASH_BLOCK, FLASH_BLOCK))
        }
        Spec::ChainSeparate(c) | Spec::ChainFused(c) => {
            let (t, d, f) = (c.tokens, c.hidden, c.intermediate);
            let x = filled(t * d, 1)?;
            let norm = filled(d, 2)?;
            // Weights scaled by 1/√fan-in, as initialisers do, so activations stay O(1).
            let mut w1 = filled(d * f, 3)?;
            let mut w2 = filled(f * d, 4)?;
            w1.iter_mut().for_each(|v| *v /= (d as f32).sqrt());
            w2.iter_mut().for_each(|v| *v /= (f as f32).sqrt());
            let mut out = zeros(t * d)?;
            if matches!(spec, Spec::ChainFused(_)) {
                Box::new(move || {
                    let w = ChainWeights {
                        norm: &norm,
                        w1: &w1,
                        w2: &w2,
                    };
                    chain_fused(c, &x, w, &mut out, CHAIN_BLOCK)
                })
            } else {
                let (mut y, mut h, mut a) = (zeros(t * d)?, zeros(t * f)?, zeros(t * f)?);
                Box::new(move || {
                    let w = ChainWeights {
                        norm: &norm,
                        w1: &w1,
                        w2: &w2,
                    };
                    chain_separate(c, &x, w, &mut y, &mut h, &mut a, &mut out)
                })
            }
        }
    };
    Ok(Built { launches, run })
}

/// One execution of `C = A·B`, `m × n × k` fp32 row-major, through the suite's GEMM door with
/// every thread; A and B filled from `seed` and `seed + 1`.
pub(super) fn gemm_kernel(
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<Box<dyn FnMut() -> Result<(), MeasureError>>, MeasureError> {
    use matmul::{matmul, Threads, View};
    let (a, b, mut c) = (
        filled(m * k, seed)?,
        filled(k * n, seed + 1)?,
        zeros(m * n)?,
    );
    Ok(Box::new(move || {
        matmul(
            &mut c,
            n,
            View::row_major(&a, m, k),
            View::row_major(&b, k, n),
            false,
            Threads::All,
        )
    }))
}
