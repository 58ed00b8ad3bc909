//! Number formats: bytes per element, and which peak of a chip applies.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A number format used for weights, activations, the KV cache or a computation.
///
/// Its [`Precision::bytes`] give storage size; when a GEMM computes in it, the chip's dense peak
/// for it applies. `Tf32` is an fp32 storage format computed on tensor cores (4 bytes per element).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Precision {
    /// IEEE 754 binary64, 8 bytes.
    Fp64,
    /// IEEE 754 binary32, 4 bytes.
    Fp32,
    /// NVIDIA TensorFloat-32: fp32 storage (4 bytes), 10-bit mantissa on tensor cores.
    Tf32,
    /// bfloat16, 2 bytes.
    Bf16,
    /// IEEE 754 binary16, 2 bytes.
    Fp16,
    /// 8-bit float (E4M3 or E5M2), 1 byte.
    Fp8,
    /// 8-bit integer, 1 byte.
    Int8,
    /// 4-bit integer, half a byte.
    Int4,
}

impl Precision {
    /// Every precision, widest first.
    pub const ALL: [Precision; 8] = [
        Precision::Fp64,
        Precision::Fp32,
        Precision::Tf32,
        Precision::Bf16,
        Precision::Fp16,
        Precision::Fp8,
        Precision::Int8,
        Precision::Int4,
    ];

    /// Storage size of one element in bytes (0.5 for int4).
    #[inline(always)]
    pub fn bytes(self) -> f64 {
        // A table in declaration order (one load, no branches: the decoder calls this for every
        // tensor); a test checks it against the per-variant sizes.
        const BYTES: [f64; Precision::ALL.len()] = [8.0, 4.0, 4.0, 2.0, 2.0, 1.0, 1.0, 0.5];
        BYTES[self as usize]
    }

    /// The lowercase name used in files and flags (`bf16`).
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp64 => "fp64",
            Precision::Fp32 => "fp32",
            Precision::Tf32 => "tf32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
            Precision::Fp8 => "fp8",
            Precision::Int8 => "int8",
            Precision::Int4 => "int4",
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A precision name that is not one of [`Precision::ALL`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnknownPrecision(pub String);

impl fmt::Display for UnknownPrecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown precision `{}`: use one of fp64, fp32, tf32, bf16, fp16, fp8, int8, int4",
            self.0
        )
    }
}
impl std::error::Error for UnknownPrecision {}

impl FromStr for Precision {
    type Err = UnknownPrecision;
    /// Parses a name, case-insensitively; `float16`, `bfloat16`, `float32` and `float64` (the
    /// `torch_dtype` spellings in Hugging Face configs) are accepted too.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "fp64" | "float64" | "f64" | "double" => Precision::Fp64,
            "fp32" | "float32" | "f32" | "float" => Precision::Fp32,
            "tf32" => Precision::Tf32,
            "bf16" | "bfloat16" => Precision::Bf16,
            "fp16" | "float16" | "f16" | "half" => Precision::Fp16,
            "fp8" | "float8" | "e4m3" | "e5m2" | "float8_e4m3fn" => Precision::Fp8,
            "int8" | "i8" => Precision::Int8,
            "int4" | "i4" => Precision::Int4,
            _ => return Err(UnknownPrecision(s.to_string())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_per_element() {
        assert_eq!(Precision::Bf16.bytes(), 2.0);
        assert_eq!(Precision::Int4.bytes(), 0.5);
        assert_eq!(Precision::Tf32.bytes(), 4.0);
        // Every variant, by its storage format's width in bits.
        for (p, bits) in [
            (Precision::Fp64, 64.0),
            (Precision::Fp32, 32.0),
            (Precision::Tf32, 32.0),
            (Precision::Bf16, 16.0),
            (Precision::Fp16, 16.0),
            (Precision::Fp8, 8.0),
            (Precision::Int8, 8.0),
            (Precision::Int4, 4.0),
        ] {
            assert_eq!(p.bytes(), bits / 8.0, "{p:?}");
        }
        assert_eq!(Precision::ALL.len(), 8);
    }

    #[test]
    fn parse_names_and_round_trip() -> Result<(), Box<dyn std::error::Error>> {
        for p in Precision::ALL {
            assert_eq!(p.name().parse::<Precision>()?, p);
        }
        assert_eq!("bfloat16".parse::<Precision>()?, Precision::Bf16);
        let err = "fp12".parse::<Precision>().unwrap_err().to_string();
        assert!(err.contains("`fp12`") && err.contains("bf16"));
        Ok(())
    }
}
