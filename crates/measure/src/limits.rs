//! Theoretical limits: what the hardware could do at most, from the measured clock. A measured
//! figure above its limit is a measurement fault (a loop the compiler folded, a clock that
//! changed under us) and is rejected, never reported.
//!
//! Compute: `threads × clock × FLOP per instruction × instructions per cycle` (for FMA kernels
//! that is cores × clock × lanes × FMA units × 2). Bandwidth: `threads × clock × bytes per
//! cycle`, with bytes per cycle from the load/store ports (L1) or the cache's line width per
//! cycle, as each source states.

use crate::kernels::{ComputeKernel, Simd};
use roofline_core::device::MemoryKind;
use roofline_core::measured::BandwidthKernel;

/// A figure may exceed its limit by this factor before it is rejected (the clock is measured
/// once, and may be a little higher by the time a kernel runs).
pub const FAULT_TOLERANCE: f64 = 1.05;

/// Clock assumed for the fault check when it could not be measured, Hz: above any shipping
/// CPU's boost clock (6.2 GHz in 2024), so it rejects only the absurd.
pub const FALLBACK_CLOCK_HZ: f64 = 7e9;

/// Theoretical peak of `kernel` on `threads` cores at `clock_hz`, FLOP/s (OP/s).
pub fn peak_limit(kernel: ComputeKernel, threads: u32, clock_hz: f64) -> f64 {
    f64::from(threads) * clock_hz * kernel.flop_per_instruction() * kernel.max_per_cycle()
}

/// Most bytes per cycle per core a bandwidth kernel can count (the fault bound, not a roof):
/// three loads and two stores of a vector each per cycle (Intel Golden Cove, the widest x86 core
/// in 2024, issues three 256-bit loads and two stores per cycle); the read kernel only loads.
pub fn bandwidth_bytes_per_cycle_bound(kernel: BandwidthKernel, simd: Simd) -> f64 {
    let w = simd.vector_bytes();
    match kernel {
        BandwidthKernel::Read => 3.0 * w,
        BandwidthKernel::Copy | BandwidthKernel::Triad => 5.0 * w,
    }
}

/// The fault bound of a bandwidth figure on `threads` cores at `clock_hz`, B/s.
pub fn bandwidth_limit(kernel: BandwidthKernel, simd: Simd, threads: u32, clock_hz: f64) -> f64 {
    f64::from(threads) * clock_hz * bandwidth_bytes_per_cycle_bound(kernel, simd)
}

/// The datasheet-style read bandwidth of a memory level on `threads` cores at `clock_hz`, B/s,
/// and how it was derived; `None` for main memory (the DIMMs' speed and channels are not
/// visible to a program, least of all in a VM).
///
/// - L1: two vector loads per cycle per core (Intel since Haswell, AMD since Zen 2; Golden Cove
///   does three 256-bit loads, so it can beat this roof).
/// - L2: one 64-byte line per cycle per core into L1 (Intel Skylake; AMD Zen 2/3 move 32 bytes,
///   so there this is twice the real limit: an upper bound).
/// - L3: 32 bytes per cycle per core (AMD Zen's L3-to-L2 path; an upper bound elsewhere).
pub fn level_theoretical(
    kind: MemoryKind,
    simd: Simd,
    threads: u32,
    clock_hz: f64,
) -> Option<(f64, String)> {
    let (bpc, why) = match kind {
        MemoryKind::L1 => (
            2.0 * simd.vector_bytes(),
            format!(
                "2 × {}-byte loads per cycle per core (Intel since Haswell, AMD since Zen 2)",
                simd.vector_bytes()
            ),
        ),
        MemoryKind::L2 => (
            64.0,
            "one 64-byte line per cycle per core from L2 (Intel; AMD Zen 2/3: 32 B, so an upper bound)"
                .to_string(),
        ),
        MemoryKind::L3 => (
            32.0,
            "32 bytes per cycle per core from L3 (AMD Zen; an upper bound)".to_string(),
        ),
        MemoryKind::Main | MemoryKind::Sram => return None,
    };
    let t = f64::from(threads);
    Some((
        t * clock_hz * bpc,
        format!(
            "{t} cores × {:.3} GHz × {bpc} B/cycle: {why}",
            clock_hz / 1e9
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp32_avx2_peak_of_two_cores_by_hand() {
        // 2 cores × 3.5 GHz × 8 lanes × 2 FMA units × 2 FLOP = 224 GFLOP/s.
        let l = peak_limit(ComputeKernel::Fp32Avx2, 2, 3.5e9);
        assert!((l - 224e9).abs() < 1.0, "{l}");
        // fp64: half the lanes, 112 GFLOP/s.
        assert!((peak_limit(ComputeKernel::Fp64Avx2, 2, 3.5e9) - 112e9).abs() < 1.0);
        // AVX-512 fp32 on one core at 2 GHz: 16 lanes × 2 × 2 × 2e9 = 128 GFLOP/s.
        assert!((peak_limit(ComputeKernel::Fp32Avx512, 1, 2e9) - 128e9).abs() < 1.0);
    }

    #[test]
    fn l1_roof_two_loads_per_cycle() {
        // 2 cores × 3.5 GHz × 2 × 32 B = 448 GB/s.
        let (v, why) = level_theoretical(MemoryKind::L1, Simd::Avx2, 2, 3.5e9).unwrap();
        assert!((v - 448e9).abs() < 1.0, "{v}");
        assert!(why.contains("3.500 GHz"), "{why}");
        assert!(level_theoretical(MemoryKind::Main, Simd::Avx2, 2, 3.5e9).is_none());
    }

    #[test]
    fn bandwidth_fault_bound() {
        // Read, AVX2: 3 × 32 B per cycle; 1 core at 4 GHz: 384 GB/s.
        let l = bandwidth_limit(BandwidthKernel::Read, Simd::Avx2, 1, 4e9);
        assert!((l - 384e9).abs() < 1.0);
        // Triad: 5 × 32 B = 160 B per cycle.
        assert_eq!(
            bandwidth_bytes_per_cycle_bound(BandwidthKernel::Triad, Simd::Avx2),
            160.0
        );
    }
}
