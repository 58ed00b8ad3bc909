//! The matrix library's and the exponential's ceilings of the hierarchical prediction, each
//! measured on a calibration shape outside the suite.

use super::buffers::filled;
use super::buffers::gemm_kernel;
use super::timing::time_kernel;
use super::vector;
use super::PRECISION;
use crate::method::Method;
use crate::MeasureError;
use rayon::prelude::*;
use roofline_core::cited::Cited;
use roofline_core::measured::Stat;
use roofline_core::ops::{Cost, Gemm};
use roofline_core::units::{BytesPerSec, FlopPerSec, Seconds};

/// The calibration GEMM of the GEMM ceiling, n × n × n fp32: a square shape none of the
/// suite's entries has (their squares are 512 and 2048).
pub const CEILING_GEMM: usize = 1024;

/// The calibration GEMV of the GEMV ceiling, 1 × n × k fp32 (256 MiB of weights, from main
/// memory): a shape none of the suite's decode projections has (4096 and 11008 wide).
pub const CEILING_GEMV: (usize, usize) = (8192, 8192);

/// Times `m × n × k` through the suite's GEMM door with every thread (the suite's method):
/// the cost model's FLOPs and bytes of it, and its median seconds.
fn time_calibration(
    method: &Method,
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> Result<(Cost, Stat), MeasureError> {
    let mut run = gemm_kernel((m, n, k), seed)?;
    let time = time_kernel(method, &mut *run)?;
    Ok((
        Gemm::uniform(m as u64, n as u64, k as u64, PRECISION).cost(),
        time,
    ))
}

fn calibration_source(what: &str, (m, n, k): (usize, usize, usize), time: &Stat) -> String {
    format!(
        "the gemm crate on a {m}×{n}×{k} fp32 {what} (a calibration shape outside the suite), {} threads, median of {} repetitions: {:.3} ms",
        rayon::current_num_threads(),
        time.samples,
        time.median * 1e3
    )
}

/// The GEMM ceiling: the FLOP/s of the `gemm` crate on the [`CEILING_GEMM`]³ calibration
/// shape (2·n³ / median time), with how it was measured.
///
/// # Errors
/// Not enough memory for the operands.
pub fn gemm_ceiling(method: &Method) -> Result<Cited<FlopPerSec>, MeasureError> {
    let shape = (CEILING_GEMM, CEILING_GEMM, CEILING_GEMM);
    let (cost, time) = time_calibration(method, shape, 5)?;
    Ok(Cited::new(
        FlopPerSec(cost.flops.get() / time.median),
        calibration_source("GEMM", shape, &time),
    ))
}

/// The GEMV ceiling: the bytes/s the `gemm` crate's GEMV draws on the 1 × [`CEILING_GEMV`]
/// calibration shape (the cost model's bytes / median time), with how it was measured.
///
/// # Errors
/// Not enough memory for the operands.
pub fn gemv_ceiling(method: &Method) -> Result<Cited<BytesPerSec>, MeasureError> {
    let shape = (1, CEILING_GEMV.0, CEILING_GEMV.1);
    let (cost, time) = time_calibration(method, shape, 7)?;
    Ok(Cited::new(
        BytesPerSec(cost.bytes().get() / time.median),
        calibration_source("GEMV", shape, &time),
    ))
}

/// Elements of the e^x ceiling's calibration row: 16 KiB of fp32, in L1.
pub const CEILING_EXP_ROW: usize = 4096;

/// The e^x ceiling: e^x evaluations per second of the suite's exponential (softmax's
/// exponential pass, [`vector::exp_in_place`]) on one L1-resident row of [`CEILING_EXP_ROW`]
/// elements per thread, passed over 256 times per execution on every thread (about 1.6 ms: long enough that waking
/// the other threads is not part of the figure).
///
/// # Errors
/// Not enough memory (it needs a row per thread).
pub fn exp_ceiling(method: &Method) -> Result<Cited<f64>, MeasureError> {
    const PASSES: usize = 256;
    let threads = rayon::current_num_threads().max(1);
    let mut rows = Vec::with_capacity(threads);
    for t in 0..threads {
        rows.push(filled(CEILING_EXP_ROW, 11 + t as u64)?);
    }
    let time = time_kernel(method, &mut || {
        let sum: f32 = rows
            .par_iter_mut()
            .map(|row| {
                let mut s = 0.0;
                for _ in 0..PASSES {
                    // Scale 1/64, shift 1: values stay near e^−1, never overflow.
                    s += vector::exp_in_place(row, 1.0 / 64.0, 1.0);
                }
                s
            })
            .sum();
        std::hint::black_box(sum);
        Ok(())
    })?;
    let exps = (threads * PASSES * CEILING_EXP_ROW) as f64;
    Ok(Cited::new(
        exps / time.median,
        format!(
            "softmax's exponential pass over a {CEILING_EXP_ROW}-element row in L1, {PASSES} passes on each of {threads} threads ({}), median of {} repetitions: {:.3} ms",
            if vector::fast() { "AVX2 + FMA" } else { "SSE2" },
            time.samples,
            time.median * 1e3
        ),
    ))
}

/// Empty tasks per launch of the launch ceiling: one per thread, each too small to be worth
/// stealing, so the figure is the pool's wake-up, split and join.
fn empty_region(threads: usize) {
    (0..threads).into_par_iter().for_each(|i| {
        std::hint::black_box(i);
    });
}

/// The launch ceiling: seconds of one empty parallel region over every thread of the suite's
/// rayon pool (a `par_iter` of one empty task per thread), timed back to back as the kernels
/// are: what every launch pays before its work.
///
/// # Errors
/// None in practice (the closure cannot fail); the timing method's errors pass through.
pub fn launch_ceiling(method: &Method) -> Result<Cited<Seconds>, MeasureError> {
    let threads = rayon::current_num_threads().max(1);
    let time = time_kernel(method, &mut || {
        empty_region(threads);
        Ok(())
    })?;
    Ok(Cited::new(
        Seconds(time.median),
        format!(
            "an empty rayon parallel region over {threads} threads, back to back, median of {} repetitions",
            time.samples
        ),
    ))
}
