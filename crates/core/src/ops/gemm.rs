//! Matrix multiplies: a GEMM `C[m,n] = A[m,k] · B[k,n] (+ bias[n])` and batches of them.

use super::cost::{Cost, CostTerms};
use crate::formula::Arith;
use crate::precision::Precision;
use crate::units::to_f64;
use serde::Serialize;

/// `C[m,n] = A[m,k] · B[k,n] (+ bias[n])`, one kernel.
///
/// In a linear layer A is the activation (m = tokens, k = input features), B the weight
/// (k × n = in × out) and C the output.
///
/// - FLOPs = 2·m·n·k (one multiply-add = 2 FLOP), plus m·n for the bias add.
/// - bytes read = m·k·a + k·n·(b + s_b) (+ n·b for the bias), bytes written = m·n·c,
///   where a, b, c are the bytes per element of A, B and C and s_b the group-wise scale bytes
///   per weight (0 for plain formats): each operand crosses main memory once, the ideal a tiled
///   GEMM approaches when its tiles fit on chip.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Gemm {
    /// Rows of A and C (tokens).
    pub m: u64,
    /// Columns of B and C (output features).
    pub n: u64,
    /// Columns of A, rows of B (input features, the reduction dimension).
    pub k: u64,
    /// Whether a bias of n elements (at B's precision) is added.
    pub bias: bool,
    /// Extra bytes read per element of B for group-wise quantization scales and zero points
    /// (0 for a plain format).
    pub b_scale: f64,
    /// Precision of A (activations).
    pub a: Precision,
    /// Precision of B (weights).
    pub b: Precision,
    /// Precision of C (output).
    pub c: Precision,
    /// Precision the multiply runs in; its dense peak applies.
    pub compute: Precision,
}

impl Gemm {
    /// A GEMM with every operand and the computation in one precision, no bias.
    pub fn uniform(m: u64, n: u64, k: u64, p: Precision) -> Self {
        Self {
            m,
            n,
            k,
            bias: false,
            b_scale: 0.0,
            a: p,
            b: p,
            c: p,
            compute: p,
        }
    }

    /// FLOPs and bytes, as in the type's documentation.
    #[inline]
    pub fn cost(&self) -> Cost {
        self.cost_terms::<f64>(()).into()
    }

    /// The cost formula, in any [`Arith`]metic: `2·m·n·k (+ m·n)`, `m·k·a + k·n·(b + s_b)
    /// (+ n·b)`, `m·n·c`.
    #[inline(always)]
    pub fn cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        let s = |name, v: f64| A::sym(cx, name, v);
        let (m, n, k) = (
            s("m", to_f64(self.m)),
            s("n", to_f64(self.n)),
            s("k", to_f64(self.k)),
        );
        let (a, b, c) = (
            s("a", self.a.bytes()),
            s("b", self.b.bytes()),
            s("c", self.c.bytes()),
        );
        let scale = A::optional(cx, "s_b", self.b_scale);
        let bias = A::switch(cx, self.bias);
        CostTerms {
            flops: A::num(cx, 2.0) * m * n * k + bias * m * n,
            bytes_read: m * k * a + k * n * (b + scale) + bias * n * b,
            bytes_written: m * n * c,
        }
    }
}

/// `batch` independent matrix multiplies `C_i[m,n] = A_i[m,k] · B_j[k,n]`, where `shared`
/// consecutive A matrices use the same B (grouped-query attention: the query heads of one group
/// share their key/value head, Ainslie et al. 2023).
///
/// - FLOPs = 2·batch·m·n·k.
/// - bytes read = batch·m·k·a + (batch / shared)·k·n·b; bytes written = batch·m·n·c.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BatchedMatmul {
    /// Number of A matrices (batch × query heads in attention).
    pub batch: u64,
    /// How many A matrices share one B (query heads per key/value head; 1 for none).
    pub shared: u64,
    /// Rows of each A and C.
    pub m: u64,
    /// Columns of each B and C.
    pub n: u64,
    /// Reduction dimension.
    pub k: u64,
    /// Precision of A.
    pub a: Precision,
    /// Precision of B.
    pub b: Precision,
    /// Precision of C.
    pub c: Precision,
    /// Precision the multiply runs in.
    pub compute: Precision,
}

impl BatchedMatmul {
    /// FLOPs and bytes, as in the type's documentation.
    #[inline]
    pub fn cost(&self) -> Cost {
        self.cost_terms::<f64>(()).into()
    }

    /// The cost formula, in any [`Arith`]metic: `2·N·m·n·k`, `N·m·k·a + (N/G)·k·n·b`,
    /// `N·m·n·c` with N = `batch`, G = `shared` (at least 1).
    #[inline(always)]
    pub fn cost_terms<A: Arith>(&self, cx: A::Cx) -> CostTerms<A> {
        let s = |name, v: f64| A::sym(cx, name, v);
        let bt = s("N", to_f64(self.batch));
        let g = s("G", to_f64(self.shared.max(1)));
        let (m, n, k) = (
            s("m", to_f64(self.m)),
            s("n", to_f64(self.n)),
            s("k", to_f64(self.k)),
        );
        let (a, b, c) = (
            s("a", self.a.bytes()),
            s("b", self.b.bytes()),
            s("c", self.c.bytes()),
        );
        CostTerms {
            flops: A::num(cx, 2.0) * bt * m * n * k,
            bytes_read: bt * m * k * a + bt / g * k * n * b,
            bytes_written: bt * m * n * c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_gemm_bf16_intensity_is_n_over_3() {
        // 2·n³ FLOP over 3·n²·2 bytes = n/3 FLOP/byte; for n = 4096: 1365.33.
        let c = Gemm::uniform(4096, 4096, 4096, Precision::Bf16).cost();
        assert_eq!(c.flops.get(), 2.0 * 4096f64.powi(3));
        assert_eq!(c.bytes().get(), 3.0 * 4096f64 * 4096.0 * 2.0);
        assert!((c.intensity().get() - 4096.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn gemv_intensity_is_about_one() {
        // 1×4096×4096 in bf16: 2·4096² / (2·(4096 + 4096² + 4096)) = 0.99951 FLOP/byte.
        let c = Gemm::uniform(1, 4096, 4096, Precision::Bf16).cost();
        let expect = 2.0 * 4096f64.powi(2) / (2.0 * (4096.0 + 4096f64.powi(2) + 4096.0));
        assert!((c.intensity().get() - expect).abs() < 1e-12);
        assert!((c.intensity().get() - 0.9995).abs() < 1e-4);
    }

    #[test]
    fn bias_adds_one_flop_per_output_and_n_weights() {
        let mut g = Gemm::uniform(2, 3, 4, Precision::Fp32);
        g.bias = true;
        let c = g.cost();
        assert_eq!(c.flops.get(), 2.0 * 2.0 * 3.0 * 4.0 + 6.0);
        assert_eq!(c.bytes_read.get(), (2.0 * 4.0 + 4.0 * 3.0 + 3.0) * 4.0);
    }

    #[test]
    fn batched_matmul_reads_shared_b_once_per_group() {
        // 32 query heads sharing 8 kv heads (group 4): B is read 8 times, not 32.
        let bm = BatchedMatmul {
            batch: 32,
            shared: 4,
            m: 1,
            n: 100,
            k: 128,
            a: Precision::Bf16,
            b: Precision::Bf16,
            c: Precision::Bf16,
            compute: Precision::Bf16,
        };
        let c = bm.cost();
        assert_eq!(c.flops.get(), 2.0 * 32.0 * 100.0 * 128.0);
        assert_eq!(
            c.bytes_read.get(),
            32.0 * 128.0 * 2.0 + 8.0 * 128.0 * 100.0 * 2.0
        );
        assert_eq!(c.bytes_written.get(), 32.0 * 100.0 * 2.0);
    }
}
