//! The benchmark kernels, chosen by runtime feature detection, behind safe functions.
//!
//! | kernel | instruction | FLOP (OP) per instruction |
//! |---|---|---|
//! | fp64 FMA, AVX-512 | `vfmadd231pd zmm` | 8 lanes × 2 = 16 |
//! | fp64 FMA, AVX2 | `vfmadd231pd ymm` | 4 lanes × 2 = 8 |
//! | fp32 FMA, AVX-512 | `vfmadd231ps zmm` | 16 lanes × 2 = 32 |
//! | fp32 FMA, AVX2 | `vfmadd231ps ymm` | 8 lanes × 2 = 16 |
//! | fp16 FMA, AVX512-FP16 | `vfmadd213ph zmm` | 32 lanes × 2 = 64 |
//! | bf16 dot, AVX512-BF16 | `vdpbf16ps zmm` | 16 lanes × 2 pairs × 2 = 64 |
//! | bf16 tiles, AMX-BF16 | `tdpbf16ps` | 16 × 16 × 32 multiply-adds × 2 = 16,384 |
//! | int8 dot, AVX512-VNNI | `vpdpbusd zmm` | 16 lanes × 4 products × 2 = 128 |
//! | int8 tiles, AMX-INT8 | `tdpbssd` | 16 × 16 × 64 multiply-adds × 2 = 32,768 |
//! | int8 dot, AVX2 | `vpmaddubsw` + `vpmaddwd` + `vpaddd` ymm | 32 products × 2 = 64 per sequence |
//! | scalar (no AVX2/FMA, or not x86-64) | `mul` + `add` | 2 per pair |
//!
//! Sources: Intel 64 and IA-32 Architectures Software Developer's Manual, vol. 2 (each
//! instruction's operation); AMD64 Architecture Programmer's Manual, vol. 4. A fused
//! multiply-add is counted as 2 FLOP, as every vendor's peak figure counts it.
//!
//! The x86-64 kernels (`x86`) are the only code with `unsafe`: `#[target_feature]` functions,
//! which the wrappers here call only after `is_x86_feature_detected!` says the CPU has the
//! feature, and raw-pointer SIMD loads and stores whose bounds each block states.

#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
mod x86;

use roofline_core::measured::BandwidthKernel;
use roofline_core::precision::Precision;
use std::hint::black_box;

/// Independent accumulator chains of the AVX2 and scalar compute kernels (one instruction each
/// per iteration).
pub const CHAINS: usize = 12;

/// Independent accumulator chains of the AVX-512 dot products and fp16 FMA (24 of the 32 zmm
/// registers: enough for their longer latency at two per cycle).
pub const CHAINS_512: usize = 24;

/// Accumulator tiles of the AMX kernels (2 × 2 blocking: four `tdp*` per iteration).
pub const AMX_TILES: usize = 4;

/// Whether this CPU has `edx_bit` of CPUID leaf 7 (x86-64 only).
#[cfg(target_arch = "x86_64")]
fn cpuid7(edx_bit: u32) -> bool {
    x86::cpuid7_edx() & (1 << edx_bit) != 0
}

/// Whether the AMX kernels can run: the CPU has AMX-TILE (CPUID.7.0:EDX[24]) and Linux gave
/// this process the tile data state (asked once, with `arch_prctl`).
#[cfg(target_arch = "x86_64")]
fn amx_usable() -> bool {
    static GRANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *GRANTED.get_or_init(|| cpuid7(24) && x86::request_amx_permission())
}

/// Why AMX is not measured on a CPU that has it, or `None` (no AMX, or it can be used).
pub fn amx_refused() -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    if cpuid7(24) && !amx_usable() {
        return Some(
            "the CPU has AMX, but the kernel refused the tile data permission (arch_prctl ARCH_REQ_XCOMP_PERM needs Linux 5.16 or later): AMX not measured"
                .into(),
        );
    }
    None
}

/// The widest vector instruction set the bandwidth kernels use on this CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simd {
    /// AVX-512F, 64-byte vectors.
    Avx512,
    /// AVX2 with FMA, 32-byte vectors.
    Avx2,
    /// Plain Rust loops (the compiler may vectorise them with the baseline SSE2).
    Scalar,
}

impl Simd {
    /// The widest set this CPU has (runtime detection).
    pub fn detect() -> Simd {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Simd::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Simd::Avx2;
            }
        }
        Simd::Scalar
    }

    /// Whether this CPU can run it.
    pub fn available(self) -> bool {
        match self {
            Simd::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Bytes per vector register: 64, 32, or 16 for scalar code (an SSE2 register, the most the
    /// compiler can make of it).
    pub fn vector_bytes(self) -> f64 {
        match self {
            Simd::Avx512 => 64.0,
            Simd::Avx2 => 32.0,
            Simd::Scalar => 16.0,
        }
    }

    /// Name (`avx2`).
    pub fn name(self) -> &'static str {
        match self {
            Simd::Avx512 => "avx512",
            Simd::Avx2 => "avx2",
            Simd::Scalar => "scalar",
        }
    }
}

/// The instruction-set extensions of this CPU the kernels can use, space-separated
/// (`avx2 fma`).
pub fn features() -> String {
    let mut out: Vec<&str> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        for (name, has) in [
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("fma", std::arch::is_x86_feature_detected!("fma")),
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
            (
                "avx512bf16",
                std::arch::is_x86_feature_detected!("avx512bf16"),
            ),
            (
                "avx512vnni",
                std::arch::is_x86_feature_detected!("avx512vnni"),
            ),
            (
                "avx512fp16",
                std::arch::is_x86_feature_detected!("avx512fp16"),
            ),
            ("amx-bf16", cpuid7(22) && cpuid7(24)),
            ("amx-int8", cpuid7(25) && cpuid7(24)),
        ] {
            if has {
                out.push(name);
            }
        }
    }
    if out.is_empty() {
        "scalar".into()
    } else {
        out.join(" ")
    }
}

/// A compute kernel: one instruction (or named sequence) in [`ComputeKernel::chains`]
/// independent chains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputeKernel {
    /// `vfmadd231pd zmm`: 16 FLOP.
    Fp64Avx512,
    /// `vfmadd231pd ymm`: 8 FLOP.
    Fp64Avx2,
    /// `mulsd` + `addsd`: 2 FLOP.
    Fp64Scalar,
    /// `vfmadd231ps zmm`: 32 FLOP.
    Fp32Avx512,
    /// `vfmadd231ps ymm`: 16 FLOP.
    Fp32Avx2,
    /// `mulss` + `addss`: 2 FLOP.
    Fp32Scalar,
    /// `vfmadd213ph zmm`: 64 FLOP.
    Fp16Avx512,
    /// `vdpbf16ps zmm`: 64 FLOP.
    Bf16Avx512,
    /// `tdpbf16ps`: 16,384 FLOP.
    Bf16Amx,
    /// `vpdpbusd zmm`: 128 OP.
    Int8Vnni512,
    /// `tdpbssd`: 32,768 OP.
    Int8Amx,
    /// `vpmaddubsw` + `vpmaddwd` + `vpaddd` ymm: 64 OP.
    Int8Avx2,
}

impl ComputeKernel {
    /// The kernels this CPU can run: the widest vector kernel per precision (fp64, fp32
    /// always; fp16 with AVX512-FP16, never a copy of another precision's figure; bf16 with
    /// AVX512-BF16; int8 with AVX512-VNNI, else AVX2), and the AMX tile kernels beside them
    /// where the CPU and the OS allow.
    pub fn available() -> Vec<ComputeKernel> {
        let all = [
            [
                ComputeKernel::Fp64Avx512,
                ComputeKernel::Fp64Avx2,
                ComputeKernel::Fp64Scalar,
            ]
            .as_slice(),
            &[
                ComputeKernel::Fp32Avx512,
                ComputeKernel::Fp32Avx2,
                ComputeKernel::Fp32Scalar,
            ],
            &[ComputeKernel::Fp16Avx512],
            &[ComputeKernel::Bf16Avx512],
            &[ComputeKernel::Bf16Amx],
            &[ComputeKernel::Int8Vnni512, ComputeKernel::Int8Avx2],
            &[ComputeKernel::Int8Amx],
        ];
        all.iter()
            .filter_map(|group| group.iter().copied().find(|k| k.supported()))
            .collect()
    }

    /// Whether this CPU has the instructions.
    pub fn supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            match self {
                ComputeKernel::Fp64Scalar | ComputeKernel::Fp32Scalar => true,
                ComputeKernel::Fp64Avx2 | ComputeKernel::Fp32Avx2 => has!("avx2") && has!("fma"),
                ComputeKernel::Fp64Avx512 | ComputeKernel::Fp32Avx512 => has!("avx512f"),
                ComputeKernel::Fp16Avx512 => {
                    has!("avx512f") && has!("avx512bw") && has!("avx512fp16")
                }
                ComputeKernel::Bf16Avx512 => has!("avx512f") && has!("avx512bf16"),
                ComputeKernel::Bf16Amx => cpuid7(22) && amx_usable(),
                ComputeKernel::Int8Vnni512 => has!("avx512f") && has!("avx512vnni"),
                ComputeKernel::Int8Amx => cpuid7(25) && amx_usable(),
                ComputeKernel::Int8Avx2 => has!("avx2"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            matches!(self, ComputeKernel::Fp64Scalar | ComputeKernel::Fp32Scalar)
        }
    }

    /// The precision it computes in.
    pub fn precision(self) -> Precision {
        match self {
            ComputeKernel::Fp64Avx512 | ComputeKernel::Fp64Avx2 | ComputeKernel::Fp64Scalar => {
                Precision::Fp64
            }
            ComputeKernel::Fp32Avx512 | ComputeKernel::Fp32Avx2 | ComputeKernel::Fp32Scalar => {
                Precision::Fp32
            }
            ComputeKernel::Fp16Avx512 => Precision::Fp16,
            ComputeKernel::Bf16Avx512 | ComputeKernel::Bf16Amx => Precision::Bf16,
            ComputeKernel::Int8Vnni512 | ComputeKernel::Int8Avx2 | ComputeKernel::Int8Amx => {
                Precision::Int8
            }
        }
    }

    /// The instruction it repeats (`avx2 vfmadd231ps ymm`).
    pub fn name(self) -> &'static str {
        match self {
            ComputeKernel::Fp64Avx512 => "avx512 vfmadd231pd zmm",
            ComputeKernel::Fp64Avx2 => "avx2 vfmadd231pd ymm",
            ComputeKernel::Fp64Scalar => "scalar mul+add f64",
            ComputeKernel::Fp32Avx512 => "avx512 vfmadd231ps zmm",
            ComputeKernel::Fp32Avx2 => "avx2 vfmadd231ps ymm",
            ComputeKernel::Fp32Scalar => "scalar mul+add f32",
            ComputeKernel::Fp16Avx512 => "avx512-fp16 vfmadd213ph zmm",
            ComputeKernel::Bf16Avx512 => "avx512-bf16 vdpbf16ps zmm",
            ComputeKernel::Bf16Amx => "amx-bf16 tdpbf16ps",
            ComputeKernel::Int8Vnni512 => "avx512-vnni vpdpbusd zmm",
            ComputeKernel::Int8Amx => "amx-int8 tdpbssd",
            ComputeKernel::Int8Avx2 => "avx2 vpmaddubsw+vpmaddwd+vpaddd ymm",
        }
    }

    /// FLOPs (OPs) per instruction, or per sequence for `Int8Avx2` and per mul+add pair for the
    /// scalar kernels; see the module table.
    pub fn flop_per_instruction(self) -> f64 {
        match self {
            ComputeKernel::Fp64Avx512 => 16.0,
            ComputeKernel::Fp64Avx2 => 8.0,
            ComputeKernel::Fp64Scalar | ComputeKernel::Fp32Scalar => 2.0,
            ComputeKernel::Fp32Avx512 => 32.0,
            ComputeKernel::Fp32Avx2 => 16.0,
            ComputeKernel::Fp16Avx512 | ComputeKernel::Bf16Avx512 => 64.0,
            ComputeKernel::Int8Vnni512 => 128.0,
            ComputeKernel::Int8Avx2 => 64.0,
            ComputeKernel::Bf16Amx => 16.0 * 16.0 * 32.0 * 2.0,
            ComputeKernel::Int8Amx => 16.0 * 16.0 * 64.0 * 2.0,
        }
    }

    /// Independent chains (accumulators) per iteration: [`CHAINS_512`] for the AVX-512 dot
    /// products and fp16 FMA, [`AMX_TILES`] for AMX, [`CHAINS`] for the others (12 reach the
    /// fp64 and fp32 FMAs' throughput; 24 of them ran slower on Zen 4).
    pub fn chains(self) -> usize {
        match self {
            ComputeKernel::Fp16Avx512 | ComputeKernel::Bf16Avx512 | ComputeKernel::Int8Vnni512 => {
                CHAINS_512
            }
            ComputeKernel::Bf16Amx | ComputeKernel::Int8Amx => AMX_TILES,
            _ => CHAINS,
        }
    }

    /// The most instructions (sequences, pairs) one core can retire per cycle: the theoretical
    /// limit's "FMA units". Two for the vector FMA and dot-product instructions (two FMA pipes:
    /// Intel since Haswell, AMD since Zen 2; the most any x86 core has); one `Int8Avx2` sequence
    /// (its two multiplies on the two vector-multiply pipes); for scalar code, the SSE2
    /// vectorisation the compiler may apply (2 or 4 lanes) on two pipes; an AMX `tdp*` every 8
    /// cycles (twice the one per 16 cycles of Sapphire Rapids' tile unit, 1,024 bf16 FLOP and
    /// 2,048 int8 OP per cycle: Intel Optimization Reference Manual, ch. 20).
    pub fn max_per_cycle(self) -> f64 {
        match self {
            ComputeKernel::Bf16Amx | ComputeKernel::Int8Amx => 1.0 / 8.0,
            ComputeKernel::Int8Avx2 => 1.0,
            ComputeKernel::Fp64Scalar => 2.0 * 2.0,
            ComputeKernel::Fp32Scalar => 2.0 * 4.0,
            _ => 2.0,
        }
    }

    /// FLOPs of one iteration: [`ComputeKernel::chains`] instructions.
    pub fn flop_per_iteration(self) -> f64 {
        self.chains() as f64 * self.flop_per_instruction()
    }

    /// Runs `iters` iterations with the benchmark's operands (kept opaque to the compiler) and
    /// returns a checksum. Falls back to the scalar kernel of the same precision if the CPU lacks
    /// the instructions (never the case for kernels from [`ComputeKernel::available`]).
    pub fn run(self, iters: u64) -> f64 {
        let iters = black_box(iters);
        match self.precision() {
            Precision::Int8 => self.run_with(iters, black_box(1.0), black_box(1.0)),
            // acc = acc · 0.5 + 1 converges to 2: no overflow, no denormals, however long.
            _ => self.run_with(iters, black_box(0.5), black_box(1.0)),
        }
    }

    /// Runs `iters` iterations with operands `a`, `b`: for FMA kernels every lane computes
    /// `acc = acc · a + b` from 0; for bf16, `acc += a·b + a·b` (operands rounded to bf16); for
    /// int8 VNNI, `acc += 4 · u8(a) · i8(b)`; for int8 AVX2, see `x86::dot_int8_avx2` (bytes of
    /// the accumulator times `i8(b)`, accumulators starting with every byte `u8(a)`). Returns the
    /// sum over every lane of every chain.
    pub fn run_with(self, iters: u64, a: f64, b: f64) -> f64 {
        #[cfg(target_arch = "x86_64")]
        if self.supported() {
            // SAFETY: `supported()` has just checked that this CPU has the target features the
            // called function enables.
            return unsafe {
                match self {
                    ComputeKernel::Fp64Avx512 => x86::fma_f64_avx512(iters, a, b),
                    ComputeKernel::Fp64Avx2 => x86::fma_f64_avx2(iters, a, b),
                    ComputeKernel::Fp32Avx512 => x86::fma_f32_avx512(iters, a as f32, b as f32),
                    ComputeKernel::Fp32Avx2 => x86::fma_f32_avx2(iters, a as f32, b as f32),
                    ComputeKernel::Fp16Avx512 => {
                        let lanes = x86::fma_f16_avx512(iters, f16_bits(a), f16_bits(b));
                        lanes.iter().map(|&h| f16_value(h)).sum::<f64>() * CHAINS_512 as f64
                    }
                    ComputeKernel::Bf16Avx512 => x86::dot_bf16_avx512(iters, a as f32, b as f32),
                    ComputeKernel::Bf16Amx => {
                        let (ta, tb) = (bf16_tile(a), bf16_tile(b));
                        let c = x86::amx_bf16(iters, &ta, &tb);
                        c.iter()
                            .flatten()
                            .map(|&v| f64::from(f32::from_bits(v)))
                            .sum()
                    }
                    ComputeKernel::Int8Vnni512 => x86::dot_int8_vnni512(iters, a as u8, b as i8),
                    ComputeKernel::Int8Amx => {
                        let ta = [a as i8 as u8; 1024];
                        let tb = [b as i8 as u8; 1024];
                        let c = x86::amx_int8(iters, &ta, &tb);
                        c.iter().flatten().map(|&v| f64::from(v as i32)).sum()
                    }
                    ComputeKernel::Int8Avx2 => x86::dot_int8_avx2(iters, a as u8, b as i8),
                    ComputeKernel::Fp64Scalar => scalar_f64(iters, a, b),
                    ComputeKernel::Fp32Scalar => scalar_f32(iters, a as f32, b as f32),
                }
            };
        }
        match self.precision() {
            Precision::Fp32 | Precision::Bf16 | Precision::Fp16 => {
                scalar_f32(iters, a as f32, b as f32)
            }
            _ => scalar_f64(iters, a, b),
        }
    }
}

/// The IEEE binary16 bits of `v` for the values the kernels use (0, ±2^k · m with a short
/// mantissa), rounding toward zero: sign, 5-bit exponent (bias 15), 10-bit mantissa.
pub fn f16_bits(v: f64) -> u16 {
    let f = v as f32;
    let bits = f.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    if f == 0.0 || exp <= 0 {
        return sign;
    }
    if exp >= 31 {
        return sign | 0x7c00;
    }
    sign | ((exp as u16) << 10) | ((bits >> 13) & 0x3ff) as u16
}

/// The value of IEEE binary16 bits (normal numbers, zero and infinity; subnormals as zero).
pub fn f16_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let man = f64::from(h & 0x3ff);
    match exp {
        0 => 0.0 * sign,
        31 => sign * f64::INFINITY,
        e => sign * (1.0 + man / 1024.0) * 2f64.powi(e - 15),
    }
}

/// A 1 KiB AMX tile with every bf16 element `v` (bf16 = the top half of the fp32 bits).
fn bf16_tile(v: f64) -> [u8; 1024] {
    let h = ((v as f32).to_bits() >> 16) as u16;
    let mut t = [0u8; 1024];
    for pair in t.chunks_exact_mut(2) {
        pair.copy_from_slice(&h.to_le_bytes());
    }
    t
}

/// Scalar fp64: `acc = acc · a + b` in [`CHAINS`] chains (a multiply and an add, 2 FLOP).
fn scalar_f64(iters: u64, a: f64, b: f64) -> f64 {
    let mut acc = [0.0f64; CHAINS];
    for _ in 0..iters {
        for c in acc.iter_mut() {
            *c = *c * a + b;
        }
    }
    acc.iter().sum()
}

/// Scalar fp32: as [`scalar_f64`].
fn scalar_f32(iters: u64, a: f32, b: f32) -> f64 {
    let mut acc = [0.0f32; CHAINS];
    for _ in 0..iters {
        for c in acc.iter_mut() {
            *c = *c * a + b;
        }
    }
    acc.iter().map(|&v| f64::from(v)).sum()
}

/// A dependency chain of one instruction whose latency the vendors document: the core clock is
/// the instructions run × that latency / the seconds they took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockChain {
    /// `imul r64, r64`: 3 cycles (Intel since Nehalem, AMD since Zen; Agner Fog, instruction
    /// tables; uops.info).
    Imul,
    /// `add r64, r64`: 1 cycle (every x86-64 core; a register operand, so no renamer can fold
    /// it as Golden Cove folds `add reg, imm`).
    Add,
}

impl ClockChain {
    /// Both chains, the multiply first.
    pub const ALL: [ClockChain; 2] = [ClockChain::Imul, ClockChain::Add];

    /// Cycles of latency per instruction.
    pub fn latency_cycles(self) -> f64 {
        match self {
            ClockChain::Imul => 3.0,
            ClockChain::Add => 1.0,
        }
    }

    /// The instruction (`imul r64, r64`).
    pub fn instruction(self) -> &'static str {
        match self {
            ClockChain::Imul => "imul r64, r64",
            ClockChain::Add => "add r64, r64",
        }
    }
}

/// Runs `iters` × 128 dependent instructions of `chain` and returns how many ran
/// (`128 × max(iters, 1)`), or `None` where there is no such kernel (not x86-64). The caller
/// times it: clock = count × latency / seconds.
pub fn clock_chain(chain: ClockChain, iters: u64) -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        Some(match chain {
            ClockChain::Imul => x86::imul_chain(black_box(iters)),
            ClockChain::Add => x86::add_chain(black_box(iters)),
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (chain, iters);
        None
    }
}

/// `s += a[i]` over `a`, `passes` times; returns the sum.
pub fn read(simd: Simd, a: &[f64], passes: u64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if simd != Simd::Scalar && simd.available() {
        // SAFETY: `available()` has just checked the CPU has the target features.
        return unsafe {
            match simd {
                Simd::Avx512 => x86::read_avx512(a, passes),
                _ => x86::read_avx2(a, passes),
            }
        };
    }
    let _ = simd;
    let mut rest = 0.0;
    // Eight partial sums, kept across passes, so that the adds do not serialise.
    let mut acc = [0.0f64; 8];
    for _ in 0..passes {
        let a = black_box(a);
        let chunks = a.chunks_exact(8);
        rest += chunks.remainder().iter().sum::<f64>();
        for ch in chunks {
            for (s, v) in acc.iter_mut().zip(ch) {
                *s += v;
            }
        }
    }
    acc.iter().sum::<f64>() + rest
}

/// `b[i] = a[i]` over the shorter of the two, `passes` times.
pub fn copy(simd: Simd, a: &[f64], b: &mut [f64], passes: u64) {
    #[cfg(target_arch = "x86_64")]
    if simd != Simd::Scalar && simd.available() {
        // SAFETY: `available()` has just checked the CPU has the target features.
        unsafe {
            match simd {
                Simd::Avx512 => x86::copy_avx512(a, b, passes),
                _ => x86::copy_avx2(a, b, passes),
            }
        }
        return;
    }
    let _ = simd;
    for _ in 0..passes {
        let n = a.len().min(b.len());
        for (d, s) in b[..n].iter_mut().zip(black_box(&a[..n])) {
            *d = *s;
        }
        black_box(&mut *b);
    }
}

/// `a[i] = b[i] + c[i] · d[i]` over the shortest slice, `passes` times.
pub fn triad(simd: Simd, a: &mut [f64], b: &[f64], c: &[f64], d: &[f64], passes: u64) {
    #[cfg(target_arch = "x86_64")]
    if simd != Simd::Scalar && simd.available() {
        // SAFETY: `available()` has just checked the CPU has the target features.
        unsafe {
            match simd {
                Simd::Avx512 => x86::triad_avx512(a, b, c, d, passes),
                _ => x86::triad_avx2(a, b, c, d, passes),
            }
        }
        return;
    }
    let _ = simd;
    for _ in 0..passes {
        let b = black_box(b);
        for (((x, y), z), w) in a.iter_mut().zip(b).zip(c).zip(d) {
            *x = y + z * w;
        }
        black_box(&mut *a);
    }
}

/// Runs one bandwidth kernel over the streams of `buf` (`streams` consecutive arrays of `n`
/// elements each, at `stride` elements from one another), `passes` times; returns a checksum.
pub(crate) fn run_bandwidth(
    kernel: BandwidthKernel,
    simd: Simd,
    buf: &mut [f64],
    n: usize,
    stride: usize,
    passes: u64,
) -> f64 {
    match kernel {
        BandwidthKernel::Read => read(simd, &buf[..n], passes),
        BandwidthKernel::Copy => {
            let (a, rest) = buf.split_at_mut(stride);
            copy(simd, &a[..n], &mut rest[..n], passes);
            rest[n / 2]
        }
        BandwidthKernel::Triad => {
            let (a, rest) = buf.split_at_mut(stride);
            let (b, rest) = rest.split_at_mut(stride);
            let (c, d) = rest.split_at_mut(stride);
            triad(simd, &mut a[..n], &b[..n], &c[..n], &d[..n], passes);
            a[n / 2]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_simd() -> Vec<Simd> {
        [Simd::Avx512, Simd::Avx2, Simd::Scalar]
            .into_iter()
            .filter(|s| s.available())
            .collect()
    }

    #[test]
    fn fma_kernels_compute_acc_times_a_plus_b() {
        // With a = 1, b = 1 every lane counts the iterations: after n iterations each lane is n,
        // so the checksum is n × lanes × 12 chains. Lanes = FLOP per instruction / 2.
        for k in [
            ComputeKernel::Fp64Avx512,
            ComputeKernel::Fp64Avx2,
            ComputeKernel::Fp32Avx512,
            ComputeKernel::Fp32Avx2,
        ] {
            if !k.supported() {
                continue;
            }
            let lanes = k.flop_per_instruction() / 2.0;
            let chains = 12.0;
            assert_eq!(k.chains() as f64, chains, "{k:?}");
            assert_eq!(k.run_with(10, 1.0, 1.0), 10.0 * lanes * chains, "{k:?}");
            // a = 0.5, b = 1 from 0: 1, 1.5, 1.75 after three iterations (exact in binary).
            assert_eq!(k.run_with(3, 0.5, 1.0), 1.75 * lanes * chains, "{k:?}");
        }
        // fp16 (only where AVX512-FP16 is): 1.75 in 32 lanes of accumulator 0, counted for
        // each of the 24 chains.
        if ComputeKernel::Fp16Avx512.supported() {
            assert_eq!(
                ComputeKernel::Fp16Avx512.run_with(3, 0.5, 1.0),
                1.75 * 32.0 * 24.0
            );
        }
        // Scalar: one lane per chain.
        assert_eq!(ComputeKernel::Fp64Scalar.run_with(10, 1.0, 1.0), 120.0);
        assert_eq!(ComputeKernel::Fp32Scalar.run_with(3, 0.5, 1.0), 1.75 * 12.0);
    }

    #[test]
    fn dot_kernels_by_hand() {
        // vdpbf16ps: each of 16 lanes adds 2 products of 1.5 × 2 (exact in bf16) = 6 per
        // iteration; 4 iterations × 6 × 16 lanes × 24 chains = 9216.
        if ComputeKernel::Bf16Avx512.supported() {
            assert_eq!(ComputeKernel::Bf16Avx512.run_with(4, 1.5, 2.0), 9216.0);
        }
        // vpdpbusd: each of 16 lanes adds 4 products u8 3 × i8 −2 = −24 per iteration;
        // 5 iterations × −24 × 16 × 24 = −46080.
        if ComputeKernel::Int8Vnni512.supported() {
            assert_eq!(ComputeKernel::Int8Vnni512.run_with(5, 3.0, -2.0), -46080.0);
        }
        // tdpbf16ps (only with AMX): each of the 16 × 16 fp32 of a tile adds 32 products of
        // 1.5 × 2 = 96 per iteration; 3 iterations × 96 × 256 elements × 4 tiles = 294912.
        if ComputeKernel::Bf16Amx.supported() {
            assert_eq!(ComputeKernel::Bf16Amx.run_with(3, 1.5, 2.0), 294_912.0);
        }
        // tdpbssd: 64 products of 3 × −2 = −384 per element per iteration; × 2 × 256 × 4.
        if ComputeKernel::Int8Amx.supported() {
            assert_eq!(ComputeKernel::Int8Amx.run_with(2, 3.0, -2.0), -786_432.0);
        }
        // AVX2 sequence, one iteration, every byte of the accumulator 1, signed operand 2:
        // vpmaddubsw: 1·2 + 1·2 = 4 per i16; vpmaddwd with ones: 4 + 4 = 8 per i32; vpaddd:
        // 0x01010101 + 8 = 16843009 + 8 = 16843017 per lane; × 8 lanes × 12 chains.
        if ComputeKernel::Int8Avx2.supported() {
            assert_eq!(
                ComputeKernel::Int8Avx2.run_with(1, 1.0, 2.0),
                16_843_017.0 * 96.0
            );
            // Two iterations: lane bytes (little-endian) 9, 1, 1, 1 (16843017 = 0x01010109):
            // vpmaddubsw pairs: 9·2 + 1·2 = 20 and 1·2 + 1·2 = 4; vpmaddwd: 24;
            // 16843017 + 24 = 16843041 per lane.
            assert_eq!(
                ComputeKernel::Int8Avx2.run_with(2, 1.0, 2.0),
                16_843_041.0 * 96.0
            );
        }
    }

    #[test]
    fn available_kernels_cover_fp64_and_fp32() {
        let ks = ComputeKernel::available();
        assert!(ks.iter().any(|k| k.precision() == Precision::Fp64));
        assert!(ks.iter().any(|k| k.precision() == Precision::Fp32));
        for k in ks {
            assert!(k.supported());
        }
    }

    #[test]
    fn flop_per_instruction_is_lanes_times_two() {
        // 256-bit fp32 FMA: 256 / 32 = 8 lanes × 2 = 16; 512-bit fp64: 512 / 64 × 2 = 16.
        assert_eq!(ComputeKernel::Fp32Avx2.flop_per_instruction(), 16.0);
        assert_eq!(ComputeKernel::Fp64Avx512.flop_per_instruction(), 16.0);
        // vpdpbusd zmm: 512 / 8 = 64 byte products, each a multiply and an add.
        assert_eq!(ComputeKernel::Int8Vnni512.flop_per_instruction(), 128.0);
        assert_eq!(ComputeKernel::Fp32Avx2.flop_per_iteration(), 16.0 * 12.0);
        // vfmadd213ph zmm: 512 / 16 = 32 lanes × 2 = 64, as many as vdpbf16ps's 16 × 2 × 2.
        assert_eq!(ComputeKernel::Fp16Avx512.flop_per_instruction(), 64.0);
        assert_eq!(ComputeKernel::Bf16Avx512.flop_per_iteration(), 64.0 * 24.0);
        // tdpbf16ps: M = 16 rows, N = 16 fp32 columns, K = 64 bytes / 2 = 32 bf16: 8192
        // multiply-adds; tdpbssd: K = 64 int8, 16384 multiply-adds.
        assert_eq!(ComputeKernel::Bf16Amx.flop_per_instruction(), 16_384.0);
        assert_eq!(ComputeKernel::Int8Amx.flop_per_instruction(), 32_768.0);
        assert_eq!(ComputeKernel::Int8Amx.flop_per_iteration(), 4.0 * 32_768.0);
    }

    #[test]
    fn f16_bits_of_the_kernel_operands() {
        // 1.0 = 0x3C00, 0.5 = 0x3800, 1.75 = 0x3F00, −2 = 0xC000 (IEEE 754 binary16).
        assert_eq!(f16_bits(1.0), 0x3C00);
        assert_eq!(f16_bits(0.5), 0x3800);
        assert_eq!(f16_bits(1.75), 0x3F00);
        assert_eq!(f16_bits(-2.0), 0xC000);
        assert_eq!(f16_bits(0.0), 0);
        for v in [1.0, 0.5, 1.75, -2.0, 2.0, 65504.0] {
            assert_eq!(f16_value(f16_bits(v)), v, "{v}");
        }
        assert_eq!(f16_value(f16_bits(1e6)), f64::INFINITY);
    }

    #[test]
    fn clock_chains_count_their_instructions() {
        for c in ClockChain::ALL {
            if let Some(n) = clock_chain(c, 3) {
                assert_eq!(n, 3 * 128, "{c:?}");
            }
        }
    }

    #[test]
    fn read_sums_every_element_every_pass() {
        // 1 + 2 + … + 1000 = 1000 · 1001 / 2 = 500500; 1000 is not a multiple of the unroll, so
        // the tail is covered too; 3 passes.
        let a: Vec<f64> = (1..=1000).map(f64::from).collect();
        for s in all_simd() {
            assert_eq!(read(s, &a, 3), 3.0 * 500_500.0, "{s:?}");
        }
    }

    #[test]
    fn copy_and_triad_write_what_they_should() {
        let n = 203;
        let src: Vec<f64> = (0..n).map(|i| i as f64).collect();
        for s in all_simd() {
            let mut dst = vec![-1.0; n];
            copy(s, &src, &mut dst, 2);
            assert_eq!(dst, src, "{s:?}");
            // a = b + c·d with b = i, c = 2, d = 3: i + 6.
            let mut a = vec![0.0; n];
            let c = vec![2.0; n];
            let d = vec![3.0; n];
            triad(s, &mut a, &src, &c, &d, 2);
            for (i, v) in a.iter().enumerate() {
                assert_eq!(*v, i as f64 + 6.0, "{s:?} at {i}");
            }
        }
    }

    #[test]
    fn run_bandwidth_uses_the_streams_of_the_buffer() {
        // Triad over a buffer of 4 streams of 64 elements at stride 70: b = 1, c = 2, d = 5.
        let (n, stride) = (64, 70);
        let mut buf = vec![0.0; 4 * stride];
        buf[stride..2 * stride].fill(1.0);
        buf[2 * stride..3 * stride].fill(2.0);
        buf[3 * stride..].fill(5.0);
        let v = run_bandwidth(
            BandwidthKernel::Triad,
            Simd::detect(),
            &mut buf,
            n,
            stride,
            1,
        );
        assert_eq!(v, 11.0);
        assert!(buf[..n].iter().all(|&x| x == 11.0));
        assert_eq!(buf[n], 0.0, "the padding is not written");
        // Read of the first stream: 64 × 11.
        let r = run_bandwidth(
            BandwidthKernel::Read,
            Simd::detect(),
            &mut buf,
            n,
            stride,
            1,
        );
        assert_eq!(r, 704.0);
    }
}
