//! Theoretical limits: what the hardware could do at most, from the measured clock. A measured
//! figure above its limit is a measurement fault (a loop the compiler folded, a clock that
//! changed under us) and is rejected, never reported.
//!
//! Compute: `threads × clock × FLOP per instruction × instructions per cycle` (for FMA kernels
//! that is cores × clock × lanes × FMA units × 2). Bandwidth: `threads × clock × bytes per
//! cycle`, with bytes per cycle from the load/store ports (L1) or the cache's line width per
//! cycle, as each source states.

use crate::bench_kernels::{ComputeKernel, Simd};
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

/// What the theoretical (datasheet-style) roofs assume about one core: FMA instructions and
/// bytes per cycle. From the CPUID vendor, family and model where a known core differs from the
/// general case; the fault bounds above stay generic, so a CPU that misreports its model (a VM)
/// can at worst show a figure above its dotted roof, never lose it.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreWidths {
    /// Vector FMA (or dot-product) instructions per cycle.
    pub fma_per_cycle: f64,
    /// Bytes per cycle from L1 into registers (vector loads).
    pub l1_bytes_per_cycle: f64,
    /// Bytes per cycle from L2 into L1.
    pub l2_bytes_per_cycle: f64,
    /// Bytes per cycle from L3 into L2.
    pub l3_bytes_per_cycle: f64,
    /// Which core this is taken to be, and the source.
    pub source: String,
}

/// The widths of a core: AMD Zen and Zen+ (family 17h, models below 30h) split every 256-bit
/// operation into two 128-bit halves (Software Optimization Guide for AMD Family 17h Processors,
/// §2.11: four 128-bit FP pipes, two of them with FMA), so one 256-bit FMA and 32 bytes of loads
/// per cycle, and L2 and L3 move 32 bytes per cycle to the core (§2.6). AMD Zen 4 (family 19h
/// with AVX-512) runs each 512-bit operation on its two 256-bit FMA pipes together (Software
/// Optimization Guide for AMD Family 19h Processors, §2.11), so one zmm FMA or dot product per
/// cycle and two 256-bit loads (64 B); 64 B per cycle from L2, 32 from L3 (§2.6). Every other
/// core: two FMA units and two vector loads per cycle (Intel since Haswell, AMD since Zen 2),
/// 64 B/cycle from L2 (Intel; AMD Zen 2/3 move 32, so an upper bound there) and 32 from L3.
pub fn core_widths(vendor: &str, family_model: Option<(u32, u32)>, simd: Simd) -> CoreWidths {
    let w = simd.vector_bytes();
    match (vendor, family_model) {
        ("AMD", Some((0x17, m))) if m < 0x30 => CoreWidths {
            fma_per_cycle: if simd == Simd::Avx2 { 1.0 } else { 2.0 },
            l1_bytes_per_cycle: 32.0,
            l2_bytes_per_cycle: 32.0,
            l3_bytes_per_cycle: 32.0,
            source: format!(
                "AMD Zen/Zen+ (family 17h, model {m:#x}): 256-bit operations as two 128-bit halves"
            ),
        },
        ("AMD", Some((0x19, m))) if simd == Simd::Avx512 => CoreWidths {
            fma_per_cycle: 1.0,
            l1_bytes_per_cycle: 64.0,
            l2_bytes_per_cycle: 64.0,
            l3_bytes_per_cycle: 32.0,
            source: format!(
                "AMD Zen 4 (family 19h, model {m:#x}): 512-bit operations on two 256-bit pipes, one per cycle"
            ),
        },
        _ => CoreWidths {
            fma_per_cycle: 2.0,
            l1_bytes_per_cycle: 2.0 * w,
            l2_bytes_per_cycle: 64.0,
            l3_bytes_per_cycle: 32.0,
            source: "two FMA units and two vector loads per cycle (Intel since Haswell, AMD since Zen 2)"
                .into(),
        },
    }
}

/// The datasheet-style peak of `kernel` on `threads` cores at `clock_hz`, FLOP/s: the vector
/// FMA and dot-product kernels at `widths.fma_per_cycle` instructions per cycle (they issue to
/// the FMA pipes), the AMX kernels at one `tdp*` per 16 cycles (Sapphire Rapids: 1,024 bf16
/// FLOP, 2,048 int8 OP per cycle per core; Intel Optimization Reference Manual, ch. 20), the
/// others at their [`ComputeKernel::max_per_cycle`].
pub fn peak_theoretical(
    kernel: ComputeKernel,
    widths: &CoreWidths,
    threads: u32,
    clock_hz: f64,
) -> f64 {
    let per_cycle = match kernel {
        ComputeKernel::Fp64Avx2
        | ComputeKernel::Fp32Avx2
        | ComputeKernel::Fp64Avx512
        | ComputeKernel::Fp32Avx512
        | ComputeKernel::Fp16Avx512
        | ComputeKernel::Bf16Avx512
        | ComputeKernel::Int8Vnni512 => widths.fma_per_cycle,
        ComputeKernel::Bf16Amx | ComputeKernel::Int8Amx => 1.0 / 16.0,
        _ => kernel.max_per_cycle(),
    };
    f64::from(threads) * clock_hz * kernel.flop_per_instruction() * per_cycle
}

/// The datasheet-style read bandwidth of a memory level on `threads` cores at `clock_hz`, B/s,
/// and how it was derived; `None` for main memory (the DIMMs' speed and channels are not
/// visible to a program, least of all in a VM).
///
/// Bytes per cycle per core from [`core_widths`] (Golden Cove loads three 256-bit vectors per
/// cycle, so it can beat the L1 roof; the L2 and L3 figures are upper bounds where a vendor
/// moves less).
pub fn level_theoretical(
    kind: MemoryKind,
    widths: &CoreWidths,
    threads: u32,
    clock_hz: f64,
) -> Option<(f64, String)> {
    let (bpc, what) = match kind {
        MemoryKind::L1 => (widths.l1_bytes_per_cycle, "loads from L1"),
        MemoryKind::L2 => (widths.l2_bytes_per_cycle, "from L2"),
        MemoryKind::L3 => (widths.l3_bytes_per_cycle, "from L3"),
        // Main memory, SRAM (and a level added later) have no per-core load width.
        _ => return None,
    };
    let t = f64::from(threads);
    Some((
        t * clock_hz * bpc,
        format!(
            "{t} cores × {:.3} GHz × {bpc} B/cycle {what}; {}",
            clock_hz / 1e9,
            widths.source
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
    fn l1_roof_two_loads_per_cycle() -> Result<(), Box<dyn std::error::Error>> {
        // An Intel core: 2 cores × 3.5 GHz × 2 × 32 B = 448 GB/s.
        let intel = core_widths("Intel", Some((6, 85)), Simd::Avx2);
        let (v, why) = level_theoretical(MemoryKind::L1, &intel, 2, 3.5e9)
            .ok_or("expected a value, got None")?;
        assert!((v - 448e9).abs() < 1.0, "{v}");
        assert!(why.contains("3.500 GHz"), "{why}");
        assert!(level_theoretical(MemoryKind::Main, &intel, 2, 3.5e9).is_none());
        Ok(())
    }

    #[test]
    fn zen1_splits_256_bit_operations() -> Result<(), Box<dyn std::error::Error>> {
        // Zen (family 17h = 23, model 1): one 256-bit FMA per cycle, 32 B/cycle from L1.
        let zen = core_widths("AMD", Some((23, 1)), Simd::Avx2);
        // 2 cores × 2.5 GHz × 16 FLOP × 1 = 80 GFLOP/s fp32.
        let p = peak_theoretical(ComputeKernel::Fp32Avx2, &zen, 2, 2.5e9);
        assert!((p - 80e9).abs() < 1.0, "{p}");
        let (l1, _) = level_theoretical(MemoryKind::L1, &zen, 2, 2.5e9)
            .ok_or("expected a value, got None")?;
        assert!((l1 - 160e9).abs() < 1.0, "{l1}");
        // Zen 2 (family 17h, model 31h) has two full-width FMA units: 160 GFLOP/s.
        let zen2 = core_widths("AMD", Some((23, 0x31)), Simd::Avx2);
        assert!((peak_theoretical(ComputeKernel::Fp32Avx2, &zen2, 2, 2.5e9) - 160e9).abs() < 1.0);
        // The fault bound stays generic (two units) whatever the model says.
        assert!((peak_limit(ComputeKernel::Fp32Avx2, 2, 2.5e9) - 160e9).abs() < 1.0);
        Ok(())
    }

    #[test]
    fn zen4_runs_one_zmm_fma_per_cycle_and_amx_one_tile_product_per_16() {
        // Zen 4 (family 19h = 25, model 11h, as this file's Genoa): 1 core × 3.5 GHz × 32 FLOP
        // × 1 = 112 GFLOP/s fp32 with AVX-512; its L1 roof 64 B × 3.5 GHz = 224 GB/s.
        let zen4 = core_widths("AMD", Some((25, 0x11)), Simd::Avx512);
        let p = peak_theoretical(ComputeKernel::Fp32Avx512, &zen4, 1, 3.5e9);
        assert!((p - 112e9).abs() < 1.0, "{p}");
        // Its AVX2 kernels keep two per cycle (the generic widths).
        let zen4_avx2 = core_widths("AMD", Some((25, 0x11)), Simd::Avx2);
        assert_eq!(zen4_avx2.fma_per_cycle, 2.0);
        // AMX on 2 Sapphire Rapids cores at 2 GHz: 2 × 2e9 × 16384 / 16 = 4.096 TFLOP/s bf16,
        // twice that in int8; the fault bound allows one per 8 cycles.
        let spr = core_widths("Intel", Some((6, 0x8f)), Simd::Avx512);
        let amx = peak_theoretical(ComputeKernel::Bf16Amx, &spr, 2, 2e9);
        assert!((amx - 4.096e12).abs() < 1.0, "{amx}");
        let int8 = peak_theoretical(ComputeKernel::Int8Amx, &spr, 2, 2e9);
        assert!((int8 - 8.192e12).abs() < 1.0, "{int8}");
        assert!((peak_limit(ComputeKernel::Bf16Amx, 2, 2e9) - 8.192e12).abs() < 1.0);
        // vdpbf16ps on the two FMA pipes: 2 × 64 × 2e9 = 256 GFLOP/s per core, twice fp32's
        // FMA (2 × 32 × 2e9 = 128): bf16 below fp32 is a measurement short of its chains.
        let dp = peak_theoretical(ComputeKernel::Bf16Avx512, &spr, 1, 2e9);
        let fma = peak_theoretical(ComputeKernel::Fp32Avx512, &spr, 1, 2e9);
        assert_eq!(dp, 2.0 * fma);
        assert!((dp - 256e9).abs() < 1.0);
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
