//! The suite's one door to the `gemm` crate (sarah-quinones; pure Rust, runtime SIMD dispatch,
//! rayon-parallel): a checked, safe `C = A·B` (or `C += A·B`) on fp32 strided views.
//!
//! Every bound is checked before the unsafe call, so a mis-sized operand is an error, never an
//! out-of-bounds access. `gemm` computes `dst := alpha·dst + beta·lhs·rhs` (alpha only read with
//! `read_dst`); rows of C are `ldc` elements apart, columns adjacent.
//!
//! One change of schedule: `gemm` runs a GEMV (m = 1, a decode projection) on one thread, so with
//! [`Threads::All`] the columns of B and C are split over the rayon threads, each a GEMV of its
//! own slice; a single token's projection then streams the weights with every core, as a decode
//! kernel should.

#![allow(unsafe_code)]

use crate::MeasureError;
use rayon::prelude::*;

/// A read-only fp32 matrix view: element (i, j) at `data[i·rs + j·cs]`.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// The elements.
    pub data: &'a [f32],
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Row stride, elements.
    pub rs: usize,
    /// Column stride, elements.
    pub cs: usize,
}

impl<'a> View<'a> {
    /// `rows × cols`, row-major (`rs = cols`, `cs = 1`).
    pub fn row_major(data: &'a [f32], rows: usize, cols: usize) -> Self {
        View {
            data,
            rows,
            cols,
            rs: cols,
            cs: 1,
        }
    }

    /// The transpose, without moving data.
    pub fn t(self) -> Self {
        View {
            rows: self.cols,
            cols: self.rows,
            rs: self.cs,
            cs: self.rs,
            ..self
        }
    }

    /// Whether every element lies inside `data`.
    fn in_bounds(&self) -> bool {
        if self.rows == 0 || self.cols == 0 {
            return true;
        }
        (self.rows - 1)
            .checked_mul(self.rs)
            .and_then(|r| (self.cols - 1).checked_mul(self.cs).map(|c| (r, c)))
            .and_then(|(r, c)| r.checked_add(c))
            .is_some_and(|last| last < self.data.len())
    }

    /// Columns `from..from + n` as a view of their own.
    fn columns(self, from: usize, n: usize) -> Option<Self> {
        let off = from.checked_mul(self.cs)?;
        Some(View {
            data: self.data.get(off..)?,
            cols: n,
            ..self
        })
    }
}

/// How many threads one GEMM may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// The calling thread only (inside a kernel that is already parallel over its tiles).
    One,
    /// Every thread of the current rayon pool.
    All,
}

fn shape_error(what: &str) -> MeasureError {
    MeasureError::new(
        format!("internal: GEMM operands do not fit their views ({what})"),
        None,
    )
}

/// `C = A·B` (`accumulate`: `C += A·B`), C `a.rows × b.cols` row-major with row stride `ldc`.
///
/// # Errors
/// A [`MeasureError`] when the inner dimensions differ or a view or C is too short.
pub fn matmul(
    c: &mut [f32],
    ldc: usize,
    a: View<'_>,
    b: View<'_>,
    accumulate: bool,
    threads: Threads,
) -> Result<(), MeasureError> {
    let (m, n, k) = (a.rows, b.cols, a.cols);
    if b.rows != k {
        return Err(shape_error("inner dimensions differ"));
    }
    if m == 1 && threads == Threads::All && n >= 256 {
        let parts = rayon::current_num_threads().max(1);
        let chunk = n.div_ceil(parts).next_multiple_of(64);
        let c = c.get_mut(..n).ok_or_else(|| shape_error("C"))?;
        return c.par_chunks_mut(chunk).enumerate().try_for_each(|(i, cc)| {
            let bb = b
                .columns(i * chunk, cc.len())
                .ok_or_else(|| shape_error("B columns"))?;
            let width = cc.len();
            gemm_checked(cc, width, a, bb, accumulate, gemm::Parallelism::None)
        });
    }
    let par = match threads {
        Threads::One => gemm::Parallelism::None,
        Threads::All => gemm::Parallelism::Rayon(0),
    };
    gemm_checked(c, ldc, a, b, accumulate, par)
}

fn gemm_checked(
    c: &mut [f32],
    ldc: usize,
    a: View<'_>,
    b: View<'_>,
    accumulate: bool,
    par: gemm::Parallelism,
) -> Result<(), MeasureError> {
    let (m, n, k) = (a.rows, b.cols, a.cols);
    if m == 0 || n == 0 {
        return Ok(());
    }
    if !a.in_bounds() || !b.in_bounds() {
        return Err(shape_error("A or B"));
    }
    let c_fits = (m - 1)
        .checked_mul(ldc)
        .and_then(|r| r.checked_add(n))
        .is_some_and(|end| end <= c.len() && ldc >= n);
    if !c_fits {
        return Err(shape_error("C"));
    }
    let stride = |s: usize| isize::try_from(s).map_err(|_| shape_error("stride"));
    let (ldc, a_rs, a_cs, b_rs, b_cs) = (
        stride(ldc)?,
        stride(a.rs)?,
        stride(a.cs)?,
        stride(b.rs)?,
        stride(b.cs)?,
    );
    // SAFETY: A's elements (i, l) for i < m, l < k lie at a.data[i·rs + l·cs], inside a.data
    // (`in_bounds`); likewise B's (l, j) for l < k, j < n inside b.data; C's (i, j) at
    // c[i·ldc + j] with (m − 1)·ldc + n ≤ c.len() and n ≤ ldc, so every write is inside `c`,
    // and rows do not overlap. `c` is borrowed mutably, A and B shared: no aliasing. gemm reads
    // C only when `read_dst` (accumulate), and then alpha = 1; beta = 1 scales A·B by one.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            ldc,
            accumulate,
            a.data.as_ptr(),
            a_cs,
            a_rs,
            b.data.as_ptr(),
            b_cs,
            b_rs,
            1.0f32,
            1.0f32,
            false,
            false,
            false,
            par,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schoolbook triple loop.
    fn reference(a: View<'_>, b: View<'_>) -> Vec<f32> {
        let mut c = vec![0.0f32; a.rows * b.cols];
        for i in 0..a.rows {
            for j in 0..b.cols {
                let mut s = 0.0f64;
                for l in 0..a.cols {
                    s += f64::from(a.data[i * a.rs + l * a.cs] * b.data[l * b.rs + j * b.cs]);
                }
                c[i * b.cols + j] = s as f32;
            }
        }
        c
    }

    fn values(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| (((i as u32).wrapping_mul(2_654_435_761) ^ seed) % 1000) as f32 / 500.0 - 1.0)
            .collect()
    }

    #[test]
    fn two_by_two_by_hand() -> Result<(), Box<dyn std::error::Error>> {
        // [1 2; 3 4] · [5 6; 7 8] = [19 22; 43 50]; accumulated once more: [38 44; 86 100].
        let (a, b) = ([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]);
        let mut c = [0.0f32; 4];
        let (va, vb) = (View::row_major(&a, 2, 2), View::row_major(&b, 2, 2));
        matmul(&mut c, 2, va, vb, false, Threads::All)?;
        assert_eq!(c, [19.0, 22.0, 43.0, 50.0]);
        matmul(&mut c, 2, va, vb, true, Threads::One)?;
        assert_eq!(c, [38.0, 44.0, 86.0, 100.0]);
        // Aᵀ·B = [1 3; 2 4] · [5 6; 7 8] = [26 30; 38 44].
        matmul(&mut c, 2, va.t(), vb, false, Threads::One)?;
        assert_eq!(c, [26.0, 30.0, 38.0, 44.0]);
        Ok(())
    }

    #[test]
    fn agrees_with_the_triple_loop_for_every_schedule() -> Result<(), Box<dyn std::error::Error>> {
        // Shapes that hit the GEMV split (m = 1, n ≥ 256, n not a multiple of the chunk), the
        // parallel GEMM, and a transposed B (QKᵀ).
        for (m, n, k) in [(1, 300, 70), (1, 1000, 33), (37, 29, 50), (64, 64, 64)] {
            let a = values(m * k, 1);
            let b = values(k * n, 2);
            let (va, vb) = (View::row_major(&a, m, k), View::row_major(&b, k, n));
            let want = reference(va, vb);
            for th in [Threads::One, Threads::All] {
                let mut c = vec![f32::NAN; m * n];
                matmul(&mut c, n, va, vb, false, th)?;
                for (x, y) in c.iter().zip(&want) {
                    assert!(
                        (x - y).abs() <= 1e-4 * (1.0 + y.abs()),
                        "{m}×{n}×{k}: {x} {y}"
                    );
                }
            }
            let bt = values(n * k, 3);
            let vbt = View::row_major(&bt, n, k).t();
            let want = reference(va, vbt);
            let mut c = vec![0.0; m * n];
            matmul(&mut c, n, va, vbt, false, Threads::All)?;
            for (x, y) in c.iter().zip(&want) {
                assert!((x - y).abs() <= 1e-4 * (1.0 + y.abs()));
            }
        }
        Ok(())
    }

    #[test]
    fn mis_sized_operands_are_errors_not_crashes() {
        let a = [1.0f32; 6];
        let mut c = [0.0f32; 4];
        // A claims 3 × 3 but holds 6 elements.
        let e = matmul(
            &mut c,
            2,
            View::row_major(&a, 3, 3),
            View::row_major(&a, 3, 2),
            false,
            Threads::One,
        )
        .unwrap_err();
        assert!(e.message.contains("GEMM"), "{}", e.message);
        // Inner dimensions differ.
        assert!(matmul(
            &mut c,
            2,
            View::row_major(&a, 2, 3),
            View::row_major(&a, 2, 3),
            false,
            Threads::One
        )
        .is_err());
        // C too short for 3 × 2.
        assert!(matmul(
            &mut c,
            2,
            View::row_major(&a, 3, 2),
            View::row_major(&a, 2, 2),
            false,
            Threads::One
        )
        .is_err());
    }
}
