//! The GPU measurement through cudarc (driver API, cuBLAS, cuBLASLt, NVRTC), all loaded at run
//! time. Every library is checked for presence before its first call (cudarc panics on a
//! missing library), and the whole run is guarded by `catch_unwind`, so a broken install is an
//! error, never a crash.
//!
//! - Peaks: cuBLAS `gemm_ex` on N × N × N (N = 8192, 4096 with `--quick`) in fp64, fp32, tf32
//!   (`CUBLAS_COMPUTE_32F_FAST_TF32`), bf16 and fp16 (fp32 accumulate), int8 (int32
//!   accumulate); fp8 (e4m3, `TN`, bf16 out) through cuBLASLt on compute capability ≥ 8.9. A
//!   GEMM is 2·N³ FLOP (one multiply-add per (i, j, k)). Plus NVRTC FMA kernels for fp32 and
//!   fp64: 8 independent `fma` chains per thread, 2 FLOP per `fma` per thread.
//! - Bandwidth: a read kernel (16-byte `float4` loads cached in L2 only, `__ldcg`, so a small
//!   working set read again is an L2 hit and not an L1 hit; four loads in flight per thread,
//!   grid-stride) swept over working sets from 1 MiB to 4 GiB (1 GiB with `--quick`); the L2
//!   from the driver's L2 size, device memory beyond 4 × L2.
//! - Driver attributes: SM count, shared memory per SM, L2 size, SM clock, memory clock and bus
//!   width (theoretical bandwidth = 2 × memory clock × bus width / 8, double data rate).
//! - Timing with CUDA events; repetitions as [`crate::method::Method`].

#![allow(unsafe_code)]

use super::GpuOptions;
use crate::host::CacheLevel;
use crate::limits::FAULT_TOLERANCE;
use crate::method::Method;
use crate::sweep::{place_levels, sweep_sizes};
use crate::{MeasureError, Progress};
use cudarc::cublas::{result as blas_result, sys as blas, CudaBlas};
use cudarc::cublaslt::{result as lt_result, sys as lt};
use cudarc::driver::sys::{CUdevice_attribute as Attr, CUevent_flags};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use roofline_core::device::MemoryKind;
use roofline_core::measured::{BandwidthKernel, BandwidthPoint, MeasuredPeak, Measurement, Stat};
use roofline_core::precision::Precision;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Instant;

type R<T> = Result<T, MeasureError>;

fn fail<E: std::fmt::Debug>(what: &'static str) -> impl FnOnce(E) -> MeasureError {
    move |e| MeasureError::new(format!("CUDA: {what} failed: {e:?}"), None)
}

/// Loads-or-fails: each library the caller uses (the driver, cuBLAS, NVRTC, and cuBLASLt when
/// `cublaslt`) must be present before cudarc touches it. Shared by the roofline measurement and
/// the kernel suite.
pub(crate) fn check_libraries(cublaslt: bool) -> R<()> {
    // SAFETY: each `is_culib_present` only tries `dlopen` on the library's candidate names and
    // closes what it opened; no CUDA function is called.
    let (driver, cublas, cublaslt, nvrtc) = unsafe {
        (
            cudarc::driver::sys::is_culib_present(),
            cudarc::cublas::sys::is_culib_present(),
            !cublaslt || cudarc::cublaslt::sys::is_culib_present(),
            cudarc::nvrtc::sys::is_culib_present(),
        )
    };
    let missing: Vec<&str> = [
        (driver, "the CUDA driver (libcuda.so)"),
        (cublas, "cuBLAS (libcublas.so)"),
        (cublaslt, "cuBLASLt (libcublasLt.so)"),
        (nvrtc, "NVRTC (libnvrtc.so)"),
    ]
    .iter()
    .filter(|(ok, _)| !ok)
    .map(|(_, n)| *n)
    .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(MeasureError::new(
            format!("cannot load {}", missing.join(", ")),
            Some(
                "install the NVIDIA driver and the CUDA 12 runtime libraries, or add their folder to LD_LIBRARY_PATH"
                    .into(),
            ),
        ))
    }
}

/// Runs the measurement; any panic inside a CUDA library binding becomes an error.
pub(super) fn measure(opts: &GpuOptions, progress: &mut dyn Progress) -> R<Measurement> {
    check_libraries(true)?;
    catching_panics(|| run(opts, progress))
}

/// Runs `f`; a panic inside a CUDA library binding (they panic on some driver errors) becomes
/// an error naming it, as the measurement and the kernel suite both need.
pub(crate) fn catching_panics<T>(f: impl FnOnce() -> R<T>) -> R<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(MeasureError::new(
                format!("a CUDA library call failed: {msg}"),
                Some("check the driver and CUDA libraries (`nvidia-smi`)".into()),
            ))
        }
    }
}

/// Per-SM, per-cycle rates by compute capability, for the theoretical roofs: (fp32 lanes,
/// fp64 lanes, dense tensor bf16/fp16 FLOP per cycle). Sources: the CUDA C++ Programming Guide,
/// "Arithmetic Instructions" throughput table (fp32/fp64 results per clock per SM); tensor rates
/// from the A100 and H100 whitepapers (312 TFLOP/s = 108 SMs × 1.41 GHz × 2048; 989.4 =
/// 132 × 1.83 GHz × 4096). `None`: not tabulated.
fn rates(cc: (i32, i32)) -> (Option<f64>, Option<f64>, Option<f64>) {
    match cc {
        (6, 0) => (Some(64.0), Some(32.0), None),
        (6, _) => (Some(128.0), Some(4.0), None),
        (7, 0) | (7, 2) => (Some(64.0), Some(32.0), None),
        (7, 5) => (Some(64.0), Some(2.0), None),
        (8, 0) => (Some(64.0), Some(32.0), Some(2048.0)),
        (8, _) => (Some(128.0), Some(2.0), None),
        (9, 0) => (Some(128.0), Some(64.0), Some(4096.0)),
        (10, _) | (12, _) => (Some(128.0), None, None),
        _ => (None, None, None),
    }
}

struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
}

impl Gpu {
    fn attr(&self, a: Attr) -> Option<i64> {
        self.ctx.attribute(a).ok().map(i64::from)
    }

    /// Repeats `launch(units)` (asynchronous work on the stream) timed by events until the
    /// method is satisfied; `work_per_unit` is the FLOPs or bytes of one unit.
    fn time(
        &self,
        method: &Method,
        launch: &mut dyn FnMut(u64) -> R<()>,
        work_per_unit: f64,
    ) -> R<Option<Stat>> {
        let started = Instant::now();
        let mut timed = |units: u64| -> R<f64> {
            let start = self
                .ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(fail("cuEventCreate"))?;
            let end = self
                .ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(fail("cuEventCreate"))?;
            start.record(&self.stream).map_err(fail("cuEventRecord"))?;
            launch(units)?;
            end.record(&self.stream).map_err(fail("cuEventRecord"))?;
            let ms = start.elapsed_ms(&end).map_err(fail("cuEventElapsedTime"))?;
            Ok(f64::from(ms) / 1e3)
        };
        let mut units = 1u64;
        let mut secs = timed(units)?;
        while secs < method.target_rep / 4.0 && units < 1 << 40 {
            units = method.units_for(units, secs).max(units * 2);
            secs = timed(units)?;
        }
        units = method.units_for(units, secs);
        timed(units)?;
        let mut samples = Vec::new();
        loop {
            let s = timed(units)?;
            if s > 0.0 {
                samples.push(work_per_unit * units as f64 / s);
            }
            let elapsed = started.elapsed().as_secs_f64();
            if let Some(stat) = method.done(&samples, elapsed) {
                return Ok(Some(stat));
            }
            if samples.is_empty() && elapsed > method.max_task_secs {
                return Ok(None);
            }
        }
    }
}

const KERNELS: &str = r#"
extern "C" __global__ void fma_f32(float* out, int iters, float a, float b) {
    float x0 = threadIdx.x * 1e-3f, x1 = x0 + 1.f, x2 = x0 + 2.f, x3 = x0 + 3.f;
    float x4 = x0 + 4.f, x5 = x0 + 5.f, x6 = x0 + 6.f, x7 = x0 + 7.f;
    #pragma unroll 8
    for (int i = 0; i < iters; ++i) {
        x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
        x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
    }
    float s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
    if (s == -1.0f) out[0] = s;
}
extern "C" __global__ void fma_f64(double* out, int iters, double a, double b) {
    double x0 = threadIdx.x * 1e-3, x1 = x0 + 1.0, x2 = x0 + 2.0, x3 = x0 + 3.0;
    double x4 = x0 + 4.0, x5 = x0 + 5.0, x6 = x0 + 6.0, x7 = x0 + 7.0;
    #pragma unroll 8
    for (int i = 0; i < iters; ++i) {
        x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b); x3 = fma(x3, a, b);
        x4 = fma(x4, a, b); x5 = fma(x5, a, b); x6 = fma(x6, a, b); x7 = fma(x7, a, b);
    }
    double s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
    if (s == -1.0) out[0] = s;
}
extern "C" __global__ void read_f4(const float4* __restrict__ a, unsigned long long n,
                                   int passes, float* out) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int p = 0; p < passes; ++p) {
        unsigned long long i = first;
        for (; i + 3 * stride < n; i += 4 * stride) {
            float4 v0 = __ldcg(a + i), v1 = __ldcg(a + i + stride);
            float4 v2 = __ldcg(a + i + 2 * stride), v3 = __ldcg(a + i + 3 * stride);
            acc += (v0.x + v0.y + v0.z + v0.w) + (v1.x + v1.y + v1.z + v1.w)
                 + (v2.x + v2.y + v2.z + v2.w) + (v3.x + v3.y + v3.z + v3.w);
        }
        for (; i < n; i += stride) {
            float4 v = __ldcg(a + i);
            acc += v.x + v.y + v.z + v.w;
        }
    }
    if (acc == -1.0f) out[0] = acc;
}
extern "C" __global__ void empty() {}
"#;

struct Kernels {
    fma_f32: CudaFunction,
    fma_f64: CudaFunction,
    read_f4: CudaFunction,
    empty: CudaFunction,
}

fn load_kernels(gpu: &Gpu) -> R<Kernels> {
    let ptx = compile_ptx_with_opts(
        KERNELS,
        CompileOptions {
            fmad: Some(true),
            ..Default::default()
        },
    )
    .map_err(fail("NVRTC compile of the benchmark kernels"))?;
    let module = gpu.ctx.load_module(ptx).map_err(fail("cuModuleLoadData"))?;
    let f = |name: &'static str| {
        module
            .load_function(name)
            .map_err(fail("cuModuleGetFunction"))
    };
    Ok(Kernels {
        fma_f32: f("fma_f32")?,
        fma_f64: f("fma_f64")?,
        read_f4: f("read_f4")?,
        empty: f("empty")?,
    })
}

/// Deterministic pseudo-random values in [0.5, 1) (a 64-bit LCG, Knuth MMIX constants), so the
/// tensor cores see non-zero data (zeros draw less power and would flatter the clock).
fn values(n: usize) -> impl Iterator<Item = f64> {
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n).map(move |_| {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        0.5 + (s >> 11) as f64 / (1u64 << 53) as f64 / 2.0
    })
}

/// bf16 bits of `v` (truncating f32; exact enough for benchmark data).
fn bf16_bits(v: f64) -> u16 {
    ((v as f32).to_bits() >> 16) as u16
}

/// fp16 bits of `v` in [0.5, 1): exponent 14 (bias 15), 10 mantissa bits.
fn fp16_bits(v: f64) -> u16 {
    (14u16 << 10) | (((v * 2.0 - 1.0) * 1024.0) as u16 & 0x3ff)
}

/// fp8 e4m3 bits of `v` in [0.5, 1): exponent 6 (bias 7), 3 mantissa bits.
fn fp8_bits(v: f64) -> u8 {
    (6u8 << 3) | (((v * 2.0 - 1.0) * 8.0) as u8 & 0x7)
}

/// One GEMM precision: its cuBLAS types and its device buffers.
enum Operands {
    F64(CudaSlice<f64>, CudaSlice<f64>, CudaSlice<f64>),
    F32(CudaSlice<f32>, CudaSlice<f32>, CudaSlice<f32>),
    Half(CudaSlice<u16>, CudaSlice<u16>, CudaSlice<u16>),
    I8(CudaSlice<i8>, CudaSlice<i8>, CudaSlice<i32>),
}

fn operands(gpu: &Gpu, p: Precision, n: usize) -> R<Operands> {
    let nn = n * n;
    let s = &gpu.stream;
    Ok(match p {
        Precision::Fp64 => {
            let v: Vec<f64> = values(nn).collect();
            Operands::F64(
                s.clone_htod(&v).map_err(fail("cuMemcpyHtoD"))?,
                s.clone_htod(&v).map_err(fail("cuMemcpyHtoD"))?,
                s.alloc_zeros(nn).map_err(fail("cuMemAlloc"))?,
            )
        }
        Precision::Fp32 | Precision::Tf32 => {
            let v: Vec<f32> = values(nn).map(|x| x as f32).collect();
            Operands::F32(
                s.clone_htod(&v).map_err(fail("cuMemcpyHtoD"))?,
                s.clone_htod(&v).map_err(fail("cuMemcpyHtoD"))?,
                s.alloc_zeros(nn).map_err(fail("cuMemAlloc"))?,
            )
        }
        Precision::Int8 => {
            let v: Vec<i8> = values(nn).map(|x| (x * 100.0) as i8).collect();
            Operands::I8(
                s.clone_htod(&v).map_err(fail("cuMemcpyHtoD"))?,
                s.clone_htod(&v).map_err(fail("cuMemcpyHtoD"))?,
                s.alloc_zeros(nn).map_err(fail("cuMemAlloc"))?,
            )
        }
        _ => {
            let bits = if p == Precision::Fp16 {
                fp16_bits
            } else {
                bf16_bits
            };
            let v: Vec<u16> = values(nn).map(bits).collect();
            Operands::Half(
                s.clone_htod(&v).map_err(fail("cuMemcpyHtoD"))?,
                s.clone_htod(&v).map_err(fail("cuMemcpyHtoD"))?,
                s.alloc_zeros(nn).map_err(fail("cuMemAlloc"))?,
            )
        }
    })
}

/// `count` GEMMs C = A·B of N × N in precision `p`, queued on the stream.
fn gemms(
    blas: &CudaBlas,
    gpu: &Gpu,
    p: Precision,
    ops: &mut Operands,
    n: i32,
    count: u64,
) -> R<()> {
    use blas::cublasComputeType_t as C;
    use blas::cudaDataType_t as D;
    let op = blas::cublasOperation_t::CUBLAS_OP_N;
    // int8 (IMMA) kernels want A transposed (`TN`); for square operands the FLOPs are the same.
    let op_a = if matches!(ops, Operands::I8(..)) {
        blas::cublasOperation_t::CUBLAS_OP_T
    } else {
        op
    };
    let algo = blas::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT;
    let (one64, zero64) = (1.0f64, 0.0f64);
    let (one32, zero32) = (1.0f32, 0.0f32);
    let (one_i, zero_i) = (1i32, 0i32);
    let s = &gpu.stream;
    let (a, b, c, ab_type, c_type, compute, alpha, beta): (
        u64,
        u64,
        u64,
        D,
        D,
        C,
        *const c_void,
        *const c_void,
    );
    // The pointers stay valid while `ops` is borrowed; the SyncOnDrop guards are kept alive in
    // `_g` until the calls below are queued.
    let _g;
    match ops {
        Operands::F64(x, y, z) => {
            let (pa, ga) = x.device_ptr(s);
            let (pb, gb) = y.device_ptr(s);
            let (pc, gc) = z.device_ptr_mut(s);
            _g = (ga, gb, gc);
            (a, b, c) = (pa, pb, pc);
            (ab_type, c_type, compute) = (D::CUDA_R_64F, D::CUDA_R_64F, C::CUBLAS_COMPUTE_64F);
            alpha = (&one64 as *const f64).cast();
            beta = (&zero64 as *const f64).cast();
        }
        Operands::F32(x, y, z) => {
            let (pa, ga) = x.device_ptr(s);
            let (pb, gb) = y.device_ptr(s);
            let (pc, gc) = z.device_ptr_mut(s);
            _g = (ga, gb, gc);
            (a, b, c) = (pa, pb, pc);
            compute = if p == Precision::Tf32 {
                C::CUBLAS_COMPUTE_32F_FAST_TF32
            } else {
                C::CUBLAS_COMPUTE_32F
            };
            (ab_type, c_type) = (D::CUDA_R_32F, D::CUDA_R_32F);
            alpha = (&one32 as *const f32).cast();
            beta = (&zero32 as *const f32).cast();
        }
        Operands::Half(x, y, z) => {
            let (pa, ga) = x.device_ptr(s);
            let (pb, gb) = y.device_ptr(s);
            let (pc, gc) = z.device_ptr_mut(s);
            _g = (ga, gb, gc);
            (a, b, c) = (pa, pb, pc);
            let t = if p == Precision::Fp16 {
                D::CUDA_R_16F
            } else {
                D::CUDA_R_16BF
            };
            (ab_type, c_type, compute) = (t, t, C::CUBLAS_COMPUTE_32F);
            alpha = (&one32 as *const f32).cast();
            beta = (&zero32 as *const f32).cast();
        }
        Operands::I8(x, y, z) => {
            let (pa, ga) = x.device_ptr(s);
            let (pb, gb) = y.device_ptr(s);
            let (pc, gc) = z.device_ptr_mut(s);
            _g = (ga, gb, gc);
            (a, b, c) = (pa, pb, pc);
            (ab_type, c_type, compute) = (D::CUDA_R_8I, D::CUDA_R_32I, C::CUBLAS_COMPUTE_32I);
            alpha = (&one_i as *const i32).cast();
            beta = (&zero_i as *const i32).cast();
        }
    }
    for _ in 0..count {
        // SAFETY: a, b, c are device allocations of n × n elements of the types named (made
        // by `operands` for this precision), column-major with leading dimension n; alpha and
        // beta point to host scalars of the compute type that outlive the call (cuBLAS reads
        // them before it returns in host pointer mode, the default).
        unsafe {
            blas_result::gemm_ex(
                *blas.handle(),
                op_a,
                op,
                n,
                n,
                n,
                alpha,
                a as *const c_void,
                ab_type,
                n,
                b as *const c_void,
                ab_type,
                n,
                beta,
                c as *mut c_void,
                c_type,
                n,
                compute,
                algo,
            )
        }
        .map_err(fail("cublasGemmEx"))?;
    }
    Ok(())
}

/// fp8 (e4m3) GEMMs through cuBLASLt: D (bf16) = Aᵀ·B, the `TN` layout FP8 requires.
struct Fp8 {
    handle: lt::cublasLtHandle_t,
    desc: lt::cublasLtMatmulDesc_t,
    la: lt::cublasLtMatrixLayout_t,
    lb: lt::cublasLtMatrixLayout_t,
    ld: lt::cublasLtMatrixLayout_t,
    pref: lt::cublasLtMatmulPreference_t,
    algo: lt::cublasLtMatmulAlgo_t,
    a: CudaSlice<u8>,
    b: CudaSlice<u8>,
    d: CudaSlice<u16>,
    work: CudaSlice<u8>,
}

impl Drop for Fp8 {
    fn drop(&mut self) {
        // SAFETY: each handle was created by the matching cuBLASLt create call in `Fp8::new`
        // and is destroyed exactly once, here; failures at teardown are ignored.
        unsafe {
            let _ = lt_result::destroy_matmul_pref(self.pref);
            let _ = lt_result::destroy_matrix_layout(self.la);
            let _ = lt_result::destroy_matrix_layout(self.lb);
            let _ = lt_result::destroy_matrix_layout(self.ld);
            let _ = lt_result::destroy_matmul_desc(self.desc);
            let _ = lt_result::destroy_handle(self.handle);
        }
    }
}

impl Fp8 {
    const WORKSPACE: usize = 32 << 20;

    fn new(gpu: &Gpu, n: usize) -> R<Fp8> {
        use lt::cublasComputeType_t as C;
        use lt::cudaDataType_t as D;
        let s = &gpu.stream;
        let v: Vec<u8> = values(n * n).map(fp8_bits).collect();
        let a = s.clone_htod(&v).map_err(fail("cuMemcpyHtoD"))?;
        let b = s.clone_htod(&v).map_err(fail("cuMemcpyHtoD"))?;
        let d = s.alloc_zeros::<u16>(n * n).map_err(fail("cuMemAlloc"))?;
        let work = s
            .alloc_zeros::<u8>(Self::WORKSPACE)
            .map_err(fail("cuMemAlloc"))?;
        let handle = lt_result::create_handle().map_err(fail("cublasLtCreate"))?;
        let nn = n as u64;
        let ld = n as i64;
        let desc = lt_result::create_matmul_desc(C::CUBLAS_COMPUTE_32F, D::CUDA_R_32F)
            .map_err(fail("cublasLtMatmulDescCreate"))?;
        let la = lt_result::create_matrix_layout(D::CUDA_R_8F_E4M3, nn, nn, ld)
            .map_err(fail("cublasLtMatrixLayoutCreate"))?;
        let lb = lt_result::create_matrix_layout(D::CUDA_R_8F_E4M3, nn, nn, ld)
            .map_err(fail("cublasLtMatrixLayoutCreate"))?;
        let ldl = lt_result::create_matrix_layout(D::CUDA_R_16BF, nn, nn, ld)
            .map_err(fail("cublasLtMatrixLayoutCreate"))?;
        let pref =
            lt_result::create_matmul_pref().map_err(fail("cublasLtMatmulPreferenceCreate"))?;
        let mut me = Fp8 {
            handle,
            desc,
            la,
            lb,
            ld: ldl,
            pref,
            // SAFETY: `cublasLtMatmulAlgo_t` is a plain C struct of integers, valid when
            // zeroed; it is overwritten by the heuristic below before use.
            algo: unsafe { std::mem::zeroed() },
            a,
            b,
            d,
            work,
        };
        // cublasOperation_t is a 4-byte C enum; CUBLAS_OP_T = 1 (cublas_api.h).
        let trans: i32 = 1;
        let ws = Self::WORKSPACE as u64;
        // SAFETY: the descriptor and preference are live (created above); the attribute buffers
        // are host values of the size each attribute expects (cublasOperation_t, uint64_t).
        unsafe {
            lt_result::set_matmul_desc_attribute(
                me.desc,
                lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                (&trans as *const i32).cast(),
                std::mem::size_of::<i32>(),
            )
            .map_err(fail("cublasLtMatmulDescSetAttribute"))?;
            lt_result::set_matmul_pref_attribute(
                me.pref,
                lt::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&ws as *const u64).cast(),
                std::mem::size_of::<u64>(),
            )
            .map_err(fail("cublasLtMatmulPreferenceSetAttribute"))?;
        }
        // SAFETY: every handle is live; D doubles as C (beta = 0).
        let h = unsafe {
            lt_result::get_matmul_algo_heuristic(
                me.handle, me.desc, me.la, me.lb, me.ld, me.ld, me.pref,
            )
        }
        .map_err(fail("cublasLtMatmulAlgoGetHeuristic (fp8)"))?;
        me.algo = h.algo;
        Ok(me)
    }

    fn run(&mut self, gpu: &Gpu, count: u64) -> R<()> {
        let s = &gpu.stream;
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (pa, _ga) = self.a.device_ptr(s);
        let (pb, _gb) = self.b.device_ptr(s);
        let (pd, _gd) = self.d.device_ptr_mut(s);
        let (pw, _gw) = self.work.device_ptr_mut(s);
        for _ in 0..count {
            // SAFETY: the handles and algo come from `new` for exactly these layouts; A, B are
            // n × n e4m3 device buffers, D an n × n bf16 buffer (also C, with beta = 0), the
            // workspace has the size the preference promised; alpha/beta are host f32 (the
            // scale type).
            unsafe {
                lt_result::matmul(
                    self.handle,
                    self.desc,
                    (&alpha as *const f32).cast(),
                    (&beta as *const f32).cast(),
                    pa as *const c_void,
                    self.la,
                    pb as *const c_void,
                    self.lb,
                    pd as *const c_void,
                    self.ld,
                    pd as *mut c_void,
                    self.ld,
                    &self.algo,
                    pw as *mut c_void,
                    Self::WORKSPACE,
                    s.cu_stream() as *mut _,
                )
            }
            .map_err(fail("cublasLtMatmul (fp8)"))?;
        }
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
fn push_peak(
    peaks: &mut Vec<MeasuredPeak>,
    rejected: &mut Vec<String>,
    precision: Precision,
    kernel: String,
    flop_per_instruction: f64,
    sms: u32,
    stat: Option<Stat>,
    theoretical: Option<f64>,
) {
    let Some(stat) = stat else {
        rejected.push(format!("{kernel}: could not be timed"));
        return;
    };
    if let Some(t) = theoretical {
        if stat.median > t * FAULT_TOLERANCE {
            rejected.push(format!(
                "{kernel}: {:.1} TFLOP/s is above the theoretical {:.1} TFLOP/s; rejected",
                stat.median / 1e12,
                t / 1e12
            ));
            return;
        }
    }
    peaks.push(MeasuredPeak {
        precision,
        kernel,
        flop_per_instruction,
        threads: sms,
        value: stat,
        theoretical,
    });
}

fn run(opts: &GpuOptions, progress: &mut dyn Progress) -> R<Measurement> {
    let count = CudaContext::device_count().map_err(fail("cuDeviceGetCount"))?;
    if opts.device >= count.max(0) as usize {
        return Err(MeasureError::usage(
            format!(
                "`--device {}`: this machine has {count} CUDA devices",
                opts.device
            ),
            Some("device ordinals start at 0 (`nvidia-smi -L` lists them)".into()),
        ));
    }
    let ctx = CudaContext::new(opts.device).map_err(fail("cuCtxCreate"))?;
    let stream = ctx.default_stream();
    let gpu = Gpu { ctx, stream };
    let name = gpu.ctx.name().map_err(fail("cuDeviceGetName"))?;
    let cc = gpu
        .ctx
        .compute_capability()
        .map_err(fail("cuDeviceGetAttribute"))?;
    let sms = gpu
        .attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .unwrap_or(1)
        .max(1) as u32;
    let smem = gpu.attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    let l2 = gpu.attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    let clock = gpu
        .attr(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
        .map(|khz| khz as f64 * 1e3);
    let mem_clock = gpu
        .attr(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
        .map(|khz| khz as f64 * 1e3);
    let bus = gpu.attr(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    let total_mem = gpu.ctx.total_mem().ok().map(|b| b as f64);
    let method = if opts.quick {
        Method::quick()
    } else {
        Method::standard()
    }
    .for_peaks();
    let n: usize = if opts.quick { 4096 } else { 8192 };
    let kernels = load_kernels(&gpu)?;
    let blas = CudaBlas::new(gpu.stream.clone()).map_err(fail("cublasCreate"))?;

    let mut gemm_precisions = vec![
        Precision::Fp64,
        Precision::Fp32,
        Precision::Tf32,
        Precision::Bf16,
        Precision::Fp16,
        Precision::Int8,
    ];
    if cc < (8, 0) {
        gemm_precisions.retain(|p| !matches!(p, Precision::Tf32 | Precision::Bf16));
    }
    let fp8 = cc >= (8, 9);
    let max_ws = if opts.quick { 1u64 << 30 } else { 4u64 << 30 };
    let sizes = sweep_sizes(1048576.0, max_ws as f64, if opts.quick { 1 } else { 2 });
    progress.start(gemm_precisions.len() as u64 + u64::from(fp8) + 3 + sizes.len() as u64);

    let (lanes32, lanes64, tensor) = rates(cc);
    let sm_clock =
        |per_cycle: Option<f64>| -> Option<f64> { Some(f64::from(sms) * clock? * per_cycle?) };
    let theo = |p: Precision| -> Option<f64> {
        match p {
            Precision::Fp64 if cc == (8, 0) || cc == (9, 0) => sm_clock(tensor.map(|t| t / 16.0)),
            Precision::Fp64 => sm_clock(lanes64.map(|l| 2.0 * l)),
            Precision::Fp32 => sm_clock(lanes32.map(|l| 2.0 * l)),
            Precision::Tf32 => sm_clock(tensor.map(|t| t / 2.0)),
            Precision::Bf16 | Precision::Fp16 => sm_clock(tensor),
            Precision::Fp8 if cc == (9, 0) => sm_clock(tensor.map(|t| 2.0 * t)),
            Precision::Int8 => sm_clock(tensor.map(|t| 2.0 * t)),
            _ => None,
        }
    };

    let mut peaks = Vec::new();
    let mut rejected = Vec::new();
    let flops = 2.0 * (n as f64).powi(3);
    for &p in &gemm_precisions {
        progress.step(&format!("{p} GEMM"));
        // A precision the chip or the library cannot do is a line in `rejected`, not the end.
        let stat = match operands(&gpu, p, n).and_then(|mut ops| {
            gpu.time(
                &method,
                &mut |count| gemms(&blas, &gpu, p, &mut ops, n as i32, count),
                flops,
            )
        }) {
            Ok(s) => s,
            Err(e) => {
                rejected.push(format!("{p} GEMM not run: {}", e.message));
                continue;
            }
        };
        push_peak(
            &mut peaks,
            &mut rejected,
            p,
            format!("cuBLAS gemm_ex {p} {n}³ (2 FLOP per multiply-add)"),
            2.0,
            sms,
            stat,
            theo(p),
        );
    }
    if fp8 {
        progress.step("fp8 GEMM");
        match Fp8::new(&gpu, n) {
            Ok(mut f) => match gpu.time(&method, &mut |count| f.run(&gpu, count), flops) {
                Err(e) => rejected.push(format!("fp8 GEMM not run: {}", e.message)),
                Ok(stat) => push_peak(
                    &mut peaks,
                    &mut rejected,
                    Precision::Fp8,
                    format!("cuBLASLt matmul fp8 e4m3 TN {n}³, bf16 out"),
                    2.0,
                    sms,
                    stat,
                    theo(Precision::Fp8),
                ),
            },
            Err(e) => rejected.push(format!("fp8 GEMM not run: {}", e.message)),
        }
    }

    // FMA kernels: 8 blocks of 256 threads per SM, 8 chains each.
    let (blocks, threads) = (8 * sms, 256u32);
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut sink64 = gpu
        .stream
        .alloc_zeros::<f64>(1)
        .map_err(fail("cuMemAlloc"))?;
    let mut sink32 = gpu
        .stream
        .alloc_zeros::<f32>(1)
        .map_err(fail("cuMemAlloc"))?;
    for p in [Precision::Fp32, Precision::Fp64] {
        progress.step(&format!("{p} FMA kernel"));
        let iters: i32 = 4096;
        let per_launch = f64::from(blocks) * f64::from(threads) * f64::from(iters) * 8.0 * 2.0;
        let mut launch = |count: u64| -> R<()> {
            for _ in 0..count {
                let mut b;
                if p == Precision::Fp32 {
                    let (a, c) = (0.5f32, 1.0f32);
                    b = gpu.stream.launch_builder(&kernels.fma_f32);
                    b.arg(&mut sink32).arg(&iters).arg(&a).arg(&c);
                    // SAFETY: fma_f32(float*, int, float, float) gets a 1-element device
                    // buffer (written only if the sum is −1, which 0.5·x + 1 chains never
                    // reach) and three scalars of the declared types.
                    unsafe { b.launch(cfg) }.map_err(fail("cuLaunchKernel fma_f32"))?;
                } else {
                    let (a, c) = (0.5f64, 1.0f64);
                    b = gpu.stream.launch_builder(&kernels.fma_f64);
                    b.arg(&mut sink64).arg(&iters).arg(&a).arg(&c);
                    // SAFETY: as above, for fma_f64(double*, int, double, double).
                    unsafe { b.launch(cfg) }.map_err(fail("cuLaunchKernel fma_f64"))?;
                }
            }
            Ok(())
        };
        let stat = gpu.time(&method, &mut launch, per_launch)?;
        let lanes = if p == Precision::Fp32 {
            lanes32
        } else {
            lanes64
        };
        push_peak(
            &mut peaks,
            &mut rejected,
            p,
            format!(
                "NVRTC fma kernel {p}, 8 chains × {blocks} × {threads} threads (2 FLOP per fma)"
            ),
            2.0,
            sms,
            stat,
            sm_clock(lanes.map(|l| 2.0 * l)),
        );
    }

    // Launch overhead: host time per launch of an empty kernel, 2000 launches.
    progress.step("launch overhead");
    let empty_cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut per_launch = Vec::new();
    for _ in 0..5 {
        gpu.stream
            .synchronize()
            .map_err(fail("cuStreamSynchronize"))?;
        let t0 = Instant::now();
        for _ in 0..2000 {
            let mut b = gpu.stream.launch_builder(&kernels.empty);
            // SAFETY: `empty()` takes no arguments and touches no memory.
            unsafe { b.launch(empty_cfg) }.map_err(fail("cuLaunchKernel empty"))?;
        }
        gpu.stream
            .synchronize()
            .map_err(fail("cuStreamSynchronize"))?;
        per_launch.push(t0.elapsed().as_secs_f64() / 2000.0);
    }
    let launch_overhead = Stat::of(&per_launch, true);

    // The read sweep.
    let bw_method = if opts.quick {
        Method::quick()
    } else {
        Method::standard()
    };
    let buf = gpu
        .stream
        .alloc_zeros::<f32>((max_ws / 4) as usize)
        .map_err(fail("cuMemAlloc (sweep buffer)"))?;
    let read_cfg = LaunchConfig {
        grid_dim: (4 * sms, 1, 1),
        block_dim: (512, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut sweep = Vec::new();
    for &size in &sizes {
        progress.step(&format!("read {:.0} MiB", size / 1048576.0));
        let n4 = (size as u64) / 16;
        let bytes = (n4 * 16) as f64;
        let mut launch = |passes: u64| -> R<()> {
            let passes = i32::try_from(passes).unwrap_or(i32::MAX);
            let mut b = gpu.stream.launch_builder(&kernels.read_f4);
            b.arg(&buf).arg(&n4).arg(&passes).arg(&mut sink32);
            // SAFETY: read_f4(const float4*, unsigned long long, int, float*) reads the first
            // n4 float4 = size bytes of `buf` (max_ws bytes long, size ≤ max_ws) and writes
            // the 1-element sink only if the sum of zeros is −1 (never).
            unsafe { b.launch(read_cfg) }
                .map(|_| ())
                .map_err(fail("cuLaunchKernel read_f4"))
        };
        if let Some(stat) = gpu.time(&bw_method, &mut launch, bytes)? {
            sweep.push(BandwidthPoint {
                kernel: BandwidthKernel::Read,
                working_set: bytes,
                bandwidth: stat,
            });
        }
    }
    progress.finish();

    let caches: Vec<CacheLevel> = l2
        .filter(|v| *v > 0)
        .map(|v| CacheLevel {
            level: 2,
            instance_size: v as u64,
            instances: 1,
            capacity: v as f64,
        })
        .into_iter()
        .collect();
    let placement = place_levels(&sweep, &caches, total_mem, crate::cpu::PLATEAU_TOLERANCE);
    let mut levels = placement.levels;
    let mut notes = placement.notes;
    let theoretical_bw = match (mem_clock, bus) {
        (Some(c), Some(b)) if c > 0.0 && b > 0 => Some(2.0 * c * b as f64 / 8.0),
        _ => None,
    };
    for l in &mut levels {
        if l.kind == MemoryKind::Main {
            l.name = "device memory".into();
            if let (Some(t), Some(c), Some(b)) = (theoretical_bw, mem_clock, bus) {
                l.theoretical = Some(t);
                l.theoretical_source = Some(format!(
                    "2 × {:.0} MHz memory clock × {b}-bit bus / 8 (driver attributes)",
                    c / 1e6
                ));
            }
        }
    }
    notes.push(format!(
        "compute capability {}.{}; {} SMs; shared memory per SM {}; L2 {}; SM clock {}",
        cc.0,
        cc.1,
        sms,
        smem.map(|v| format!("{v} B"))
            .unwrap_or_else(|| "unknown".into()),
        l2.map(|v| format!("{v} B"))
            .unwrap_or_else(|| "unknown".into()),
        clock
            .map(|c| format!("{:.0} MHz", c / 1e6))
            .unwrap_or_else(|| "unknown".into())
    ));
    let _ = (&sink64, &sink32);
    let mut m = Measurement {
        host: crate::host::host_info().hostname,
        processor: name,
        vendor: "NVIDIA".into(),
        date: opts.date.clone(),
        isa: format!("CUDA sm_{}{}", cc.0, cc.1),
        threads: sms,
        pinned: false,
        clock_hz: clock,
        clock_all_hz: clock,
        clock_source: "the driver's CU_DEVICE_ATTRIBUTE_CLOCK_RATE (the boost clock)".into(),
        unsettled: vec![],
        peaks,
        sweep,
        levels,
        launch_overhead,
        rejected,
        notes,
        method: format!("CUDA events around each repetition; {}", method.describe()),
    };
    m.unsettled = m.unsettled_figures();
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_and_fp8_bits_by_hand() {
        // 0.75 in fp16: exponent 14 (2^-1), mantissa 0.5 × 1024 = 512: 0x3A00.
        assert_eq!(fp16_bits(0.75), 0x3A00);
        // 0.75 in bf16: f32 0x3F400000 → 0x3F40.
        assert_eq!(bf16_bits(0.75), 0x3F40);
        // 0.75 in e4m3: exponent 6 (2^-1), mantissa 0.5 × 8 = 4: 0b0_0110_100 = 0x34.
        assert_eq!(fp8_bits(0.75), 0x34);
        assert!(values(100).all(|v| (0.5..1.0).contains(&v)));
    }

    #[test]
    fn tensor_rates_reproduce_the_datasheets() -> Result<(), Box<dyn std::error::Error>> {
        // A100: 108 SMs × 1.41 GHz × 2048 = 311.9 TFLOP/s (datasheet 312 dense bf16).
        let (_, _, t) = rates((8, 0));
        assert!((108.0 * 1.41e9 * t.ok_or("no tensor rate")? / 1e12 - 311.9).abs() < 0.1);
        // H100 SXM: 132 × 1.83 GHz × 4096 = 989.4 TFLOP/s (datasheet 989.5 dense bf16).
        let (l32, _, t) = rates((9, 0));
        assert!((132.0 * 1.83e9 * t.ok_or("no tensor rate")? / 1e12 - 989.4).abs() < 0.1);
        assert_eq!(l32, Some(128.0));
        Ok(())
    }
}
