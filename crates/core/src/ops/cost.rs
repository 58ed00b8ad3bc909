//! The cost of a kernel: FLOPs, bytes read, bytes written. Costs add.

use crate::formula::Arith;
use crate::units::{Bytes, Flop, FlopPerByte};
use serde::Serialize;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Mul};

/// FLOPs and main-memory traffic of a kernel (or a sum of kernels).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, schemars::JsonSchema)]
pub struct Cost {
    /// Operations, one multiply-add = 2 FLOP.
    pub flops: Flop,
    /// Bytes read from main memory.
    pub bytes_read: Bytes,
    /// Bytes written to main memory.
    pub bytes_written: Bytes,
}

impl Cost {
    /// A cost from raw FLOPs, bytes read and bytes written.
    #[inline]
    pub fn new(flops: f64, bytes_read: f64, bytes_written: f64) -> Self {
        Self {
            flops: Flop(flops),
            bytes_read: Bytes(bytes_read),
            bytes_written: Bytes(bytes_written),
        }
    }

    /// Bytes read plus bytes written.
    #[inline]
    pub fn bytes(&self) -> Bytes {
        self.bytes_read + self.bytes_written
    }

    /// Arithmetic intensity: FLOPs / bytes moved, in FLOP/byte (Williams et al. 2009).
    /// Zero when no bytes move.
    #[inline]
    pub fn intensity(&self) -> FlopPerByte {
        let b = self.bytes();
        if b.get() > 0.0 {
            self.flops / b
        } else {
            FlopPerByte(0.0)
        }
    }
}

/// The three cost figures of a kernel in any [`Arith`]metic: `f64` for [`Cost`], a recorded
/// [`crate::formula::Sym`] for the formulas a derivation prints. Each operator writes its cost
/// once, as a function returning this.
#[derive(Debug, Clone, Copy)]
pub struct CostTerms<A> {
    /// Operations, one multiply-add = 2 FLOP.
    pub flops: A,
    /// Bytes read from main memory.
    pub bytes_read: A,
    /// Bytes written to main memory.
    pub bytes_written: A,
}

impl From<CostTerms<f64>> for Cost {
    #[inline(always)]
    fn from(t: CostTerms<f64>) -> Cost {
        Cost::new(t.flops, t.bytes_read, t.bytes_written)
    }
}

impl<A: Arith> CostTerms<A> {
    /// No FLOPs and no bytes (an operator whose work is on another roof, such as a collective).
    pub fn zero(cx: A::Cx) -> Self
    where
        A::Cx: Copy,
    {
        Self {
            flops: A::num(cx, 0.0),
            bytes_read: A::num(cx, 0.0),
            bytes_written: A::num(cx, 0.0),
        }
    }

    /// The three figures as f64.
    pub fn cost(&self) -> Cost {
        Cost::new(
            self.flops.value(),
            self.bytes_read.value(),
            self.bytes_written.value(),
        )
    }
}

impl Add for Cost {
    type Output = Cost;
    #[inline]
    fn add(self, r: Cost) -> Cost {
        Cost {
            flops: self.flops + r.flops,
            bytes_read: self.bytes_read + r.bytes_read,
            bytes_written: self.bytes_written + r.bytes_written,
        }
    }
}
impl AddAssign for Cost {
    #[inline]
    fn add_assign(&mut self, r: Cost) {
        *self = *self + r;
    }
}
/// `cost * n`: the cost of running the same kernel n times.
impl Mul<f64> for Cost {
    type Output = Cost;
    #[inline]
    fn mul(self, n: f64) -> Cost {
        Cost {
            flops: self.flops * n,
            bytes_read: self.bytes_read * n,
            bytes_written: self.bytes_written * n,
        }
    }
}
impl Sum for Cost {
    fn sum<I: Iterator<Item = Cost>>(iter: I) -> Cost {
        iter.fold(Cost::default(), |a, b| a + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_add_and_scale() {
        let a = Cost::new(10.0, 2.0, 3.0);
        let b = Cost::new(1.0, 1.0, 1.0);
        assert_eq!(a + b, Cost::new(11.0, 3.0, 4.0));
        assert_eq!(a * 2.0, Cost::new(20.0, 4.0, 6.0));
        assert_eq!([a, b].into_iter().sum::<Cost>(), Cost::new(11.0, 3.0, 4.0));
        assert_eq!(a.intensity().get(), 2.0);
        assert_eq!(Cost::default().intensity().get(), 0.0);
    }
}
