//! Physical quantities as `f64` newtypes, so that a unit mix-up does not compile.
//!
//! Every quantity is stored in its SI base unit: FLOP, bytes, seconds. Decimal prefixes only
//! (1 TFLOP/s = 1e12 FLOP/s, 1 GB/s = 1e9 B/s). Division between quantities gives the derived
//! quantity the roofline model needs:
//!
//! | expression | result |
//! |---|---|
//! | `Flop / Bytes` | [`FlopPerByte`] (arithmetic intensity) |
//! | `Flop / FlopPerSec` | [`Seconds`] |
//! | `Bytes / BytesPerSec` | [`Seconds`] |
//! | `FlopPerSec / BytesPerSec` | [`FlopPerByte`] (ridge point) |
//! | `FlopPerByte * BytesPerSec` | [`FlopPerSec`] (memory roof at that intensity) |
//! | `Flop / Seconds` | [`FlopPerSec`] |
//! | `Bytes / Seconds` | [`BytesPerSec`] |

use serde::{Deserialize, Serialize};
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, Mul, Sub};

macro_rules! quantity {
    ($(#[$doc:meta])* $name:ident, $unit:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(transparent)]
        pub struct $name(pub f64);

        impl $name {
            /// Zero of this quantity.
            pub const ZERO: Self = Self(0.0);
            /// The unit symbol, as printed.
            pub const UNIT: &'static str = $unit;
            /// The raw value in base units.
            #[inline]
            pub fn get(self) -> f64 {
                self.0
            }
        }
        impl Add for $name {
            type Output = Self;
            #[inline]
            fn add(self, rhs: Self) -> Self {
                Self(self.0 + rhs.0)
            }
        }
        impl Sub for $name {
            type Output = Self;
            #[inline]
            fn sub(self, rhs: Self) -> Self {
                Self(self.0 - rhs.0)
            }
        }
        impl AddAssign for $name {
            #[inline]
            fn add_assign(&mut self, rhs: Self) {
                self.0 += rhs.0;
            }
        }
        impl Mul<f64> for $name {
            type Output = Self;
            #[inline]
            fn mul(self, rhs: f64) -> Self {
                Self(self.0 * rhs)
            }
        }
        impl Div<f64> for $name {
            type Output = Self;
            #[inline]
            fn div(self, rhs: f64) -> Self {
                Self(self.0 / rhs)
            }
        }
        /// Ratio of two values of the same quantity (dimensionless).
        impl Div for $name {
            type Output = f64;
            #[inline]
            fn div(self, rhs: Self) -> f64 {
                self.0 / rhs.0
            }
        }
        impl Sum for $name {
            fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
                Self(iter.map(|x| x.0).sum())
            }
        }
    };
}

quantity!(
    /// Floating-point (or integer) operations. One multiply-add is 2 FLOP.
    Flop, "FLOP"
);
quantity!(
    /// Bytes moved or stored.
    Bytes, "B"
);
quantity!(
    /// Time in seconds.
    Seconds, "s"
);
quantity!(
    /// Compute throughput in FLOP/s.
    FlopPerSec, "FLOP/s"
);
quantity!(
    /// Memory bandwidth in bytes per second.
    BytesPerSec, "B/s"
);
quantity!(
    /// Arithmetic intensity (or a ridge point) in FLOP per byte.
    FlopPerByte, "FLOP/B"
);

impl Div<Bytes> for Flop {
    type Output = FlopPerByte;
    #[inline]
    fn div(self, rhs: Bytes) -> FlopPerByte {
        FlopPerByte(self.0 / rhs.0)
    }
}
impl Div<FlopPerSec> for Flop {
    type Output = Seconds;
    #[inline]
    fn div(self, rhs: FlopPerSec) -> Seconds {
        Seconds(self.0 / rhs.0)
    }
}
impl Div<Seconds> for Flop {
    type Output = FlopPerSec;
    #[inline]
    fn div(self, rhs: Seconds) -> FlopPerSec {
        FlopPerSec(self.0 / rhs.0)
    }
}
impl Div<BytesPerSec> for Bytes {
    type Output = Seconds;
    #[inline]
    fn div(self, rhs: BytesPerSec) -> Seconds {
        Seconds(self.0 / rhs.0)
    }
}
impl Div<Seconds> for Bytes {
    type Output = BytesPerSec;
    #[inline]
    fn div(self, rhs: Seconds) -> BytesPerSec {
        BytesPerSec(self.0 / rhs.0)
    }
}
impl Div<BytesPerSec> for FlopPerSec {
    type Output = FlopPerByte;
    #[inline]
    fn div(self, rhs: BytesPerSec) -> FlopPerByte {
        FlopPerByte(self.0 / rhs.0)
    }
}
impl Mul<BytesPerSec> for FlopPerByte {
    type Output = FlopPerSec;
    #[inline]
    fn mul(self, rhs: BytesPerSec) -> FlopPerSec {
        FlopPerSec(self.0 * rhs.0)
    }
}
impl Mul<Seconds> for FlopPerSec {
    type Output = Flop;
    #[inline]
    fn mul(self, rhs: Seconds) -> Flop {
        Flop(self.0 * rhs.0)
    }
}
impl Mul<Seconds> for BytesPerSec {
    type Output = Bytes;
    #[inline]
    fn mul(self, rhs: Seconds) -> Bytes {
        Bytes(self.0 * rhs.0)
    }
}

impl Seconds {
    /// The larger of two durations.
    #[inline]
    pub fn max(self, other: Self) -> Self {
        Self(self.0.max(other.0))
    }
}
impl FlopPerSec {
    /// The smaller of two throughputs.
    #[inline]
    pub fn min(self, other: Self) -> Self {
        Self(self.0.min(other.0))
    }
}

/// `n` as f64: equal to `n as f64` below 2^63 (every size and count a validated model has, far
/// below that), saturating above. Through i64, which x86-64 converts in one instruction where
/// u64 takes seven; the cost formulas convert a few hundred sizes an analysis.
#[inline(always)]
pub(crate) fn to_f64(n: u64) -> f64 {
    #[allow(clippy::cast_possible_wrap)] // at most i64::MAX
    let signed = n.min(i64::MAX as u64) as i64;
    signed as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ridge_of_h100_sxm_bf16() {
        // 989.5e12 / 3.35e12 = 295.37 FLOP/byte (H100 datasheet, dense BF16 and HBM3 bandwidth).
        let ridge = FlopPerSec(989.5e12) / BytesPerSec(3.35e12);
        assert!((ridge.get() - 295.373).abs() < 1e-3);
    }

    #[test]
    fn derived_quantities() {
        assert_eq!((Flop(10.0) / Bytes(4.0)).get(), 2.5);
        assert_eq!((Flop(1e12) / FlopPerSec(1e12)).get(), 1.0);
        assert_eq!((Bytes(2e9) / BytesPerSec(1e9)).get(), 2.0);
        assert_eq!((FlopPerByte(2.0) * BytesPerSec(3.0)).get(), 6.0);
        let s: Bytes = [Bytes(1.0), Bytes(2.0)].into_iter().sum();
        assert_eq!(s, Bytes(3.0));
    }
}
