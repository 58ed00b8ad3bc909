//! The kernel suite on an NVIDIA GPU, through cudarc (driver API, cuBLAS, NVRTC; all loaded at
//! run time, so this builds without CUDA): the CPU suite's entries ([`super::gpu_suite`]) with
//! the same costs, as CUDA C kernels compiled by NVRTC (elementwise, RMSNorm, softmax, a
//! flash-style attention, the fused chain) and cuBLAS `sgemm` for every GEMM (fp32, no tensor
//! cores: the fp32 peak applies). Before anything is timed, every kernel is run on small inputs
//! and checked against the CPU kernels of [`super::cpu`]; a disagreement is an error.
//!
//! Timing: CUDA events around back-to-back executions, repeated by the suite's method.
//!
//! Row-major GEMMs through column-major cuBLAS: a row-major `X` (r × c) is the column-major
//! `Xᵀ` (c × r, leading dimension c), so `C = A·B` is computed as `Cᵀ = Bᵀ·Aᵀ`.

#![allow(unsafe_code)]

use super::cpu::{self, AttentionShape, ChainShape, ChainWeights};
use super::suites::selected;
use super::{filled, gpu_suite, kernel_method, Spec, SuiteOptions, SuiteRun};
use crate::method::Method;
use crate::{MeasureError, Progress};
use cudarc::cublas::{sys as blas, CudaBlas, Gemm, GemmConfig, StridedBatchedConfig};
use cudarc::driver::sys::{CUdevice_attribute as Attr, CUevent_flags};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use roofline_core::measured::Stat;
use roofline_core::prediction::SuiteKernel;
use std::sync::Arc;
use std::time::Instant;

type R<T> = Result<T, MeasureError>;

fn fail<E: std::fmt::Debug>(what: &'static str) -> impl FnOnce(E) -> MeasureError {
    move |e| MeasureError::new(format!("CUDA: {what} failed: {e:?}"), None)
}

/// Head size the CUDA flash kernel is compiled for (the suite's).
const HD: usize = 64;
/// Queries per block of the CUDA flash kernel (one thread each) and keys per shared-memory tile.
const BR: usize = 64;
/// Tokens per block of the CUDA fused chain (the intermediate `BM × f` in shared memory).
const CHAIN_BM: usize = 8;

const SOURCE: &str = r#"
#define HD 64
#define BR 64
#define BC 64
#define CHAIN_BM 8
typedef unsigned long long u64;

__device__ float silu_f(float x) { return x / (1.0f + __expf(-x)); }

__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
__device__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    return v;
}
// Block-wide sum/max for blocks of whole warps (≤ 1024 threads); every thread gets the result.
__device__ float block_sum(float v) {
    __shared__ float part[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) part[w] = v;
    __syncthreads();
    float t = lane < nw ? part[lane] : 0.0f;
    return warp_sum(t);
}
__device__ float block_max(float v) {
    __shared__ float part[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) part[w] = v;
    __syncthreads();
    float t = lane < nw ? part[lane] : __int_as_float(0xff800000);
    return warp_max(t);
}

extern "C" __global__ void add_k(const float* a, const float* b, float* o, u64 n) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        o[i] = a[i] + b[i];
}
extern "C" __global__ void silu_mul_k(const float* g, const float* u, float* o, u64 n) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        o[i] = silu_f(g[i]) * u[i];
}
extern "C" __global__ void silu_k(const float* x, float* o, u64 n) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        o[i] = silu_f(x[i]);
}
// One block per row.
extern "C" __global__ void rmsnorm_k(const float* x, const float* w, float* o, int cols, float eps) {
    const float* xr = x + (u64)blockIdx.x * cols;
    float* orow = o + (u64)blockIdx.x * cols;
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) { float v = xr[j]; s += v * v; }
    s = block_sum(s);
    float inv = rsqrtf(s / cols + eps);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) orow[j] = xr[j] * inv * w[j];
}
// One block per row of scale·x; causal_q > 0: row r sees keys 0 ..= r mod causal_q.
extern "C" __global__ void softmax_k(const float* x, float* o, int cols, float scale, int causal_q) {
    const float* xr = x + (u64)blockIdx.x * cols;
    float* orow = o + (u64)blockIdx.x * cols;
    int vis = causal_q > 0 ? (int)(blockIdx.x % causal_q) + 1 : cols;
    if (vis > cols) vis = cols;
    float m = __int_as_float(0xff800000);
    for (int j = threadIdx.x; j < vis; j += blockDim.x) m = fmaxf(m, xr[j] * scale);
    m = block_max(m);
    float s = 0.0f;
    for (int j = threadIdx.x; j < vis; j += blockDim.x) { float e = __expf(xr[j] * scale - m); orow[j] = e; s += e; }
    s = block_sum(s);
    float inv = 1.0f / s;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) orow[j] = j < vis ? orow[j] * inv : 0.0f;
}
// Causal flash-style attention, [head][token][HD] layout: one block of BR threads per (query
// block, head), one query row per thread (q and the output accumulator in registers); key and
// value tiles of BC rows in shared memory; the online softmax per row.
extern "C" __global__ void flash_k(const float* q, const float* k, const float* v, float* o, int s, float scale) {
    __shared__ float ks[BC][HD];
    __shared__ float vs[BC][HD];
    int q0 = blockIdx.x * BR;
    int i = q0 + threadIdx.x;
    u64 base = (u64)blockIdx.y * s * HD;
    bool live = i < s;
    float qr[HD], acc[HD];
    for (int d = 0; d < HD; ++d) { qr[d] = live ? q[base + (u64)i * HD + d] * scale : 0.0f; acc[d] = 0.0f; }
    float m = __int_as_float(0xff800000), l = 0.0f;
    int last = q0 + BR < s ? q0 + BR : s;
    for (int kb = 0; kb < last; kb += BC) {
        int cols = s - kb < BC ? s - kb : BC;
        for (int e = threadIdx.x; e < cols * HD; e += blockDim.x) {
            ks[e / HD][e % HD] = k[base + (u64)kb * HD + e];
            vs[e / HD][e % HD] = v[base + (u64)kb * HD + e];
        }
        __syncthreads();
        if (live) {
            int vis = i + 1 - kb < cols ? i + 1 - kb : cols;
            for (int j = 0; j < vis; ++j) {
                float sc = 0.0f;
                for (int d = 0; d < HD; ++d) sc += qr[d] * ks[j][d];
                if (sc > m) {
                    float c = __expf(m - sc);
                    l *= c;
                    for (int d = 0; d < HD; ++d) acc[d] *= c;
                    m = sc;
                }
                float p = __expf(sc - m);
                l += p;
                for (int d = 0; d < HD; ++d) acc[d] += p * vs[j][d];
            }
        }
        __syncthreads();
    }
    if (live) for (int d = 0; d < HD; ++d) o[base + (u64)i * HD + d] = acc[d] / l;
}
// RMSNorm → Linear (d × f) → SiLU → Linear (f × d), one block per CHAIN_BM tokens; the normed
// rows and the intermediate stay in shared memory (dynamic: CHAIN_BM·(d + f) floats).
extern "C" __global__ void chain_fused_k(const float* x, const float* wn, const float* w1, const float* w2,
                                         float* out, int t, int d, int f, float eps) {
    extern __shared__ float sm[];
    float* y = sm;
    float* h = sm + CHAIN_BM * d;
    int r0 = blockIdx.x * CHAIN_BM;
    int rows = t - r0 < CHAIN_BM ? t - r0 : CHAIN_BM;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    for (int r = warp; r < CHAIN_BM; r += nw) {
        if (r >= rows) { for (int j = lane; j < d; j += 32) y[r * d + j] = 0.0f; continue; }
        const float* xr = x + (u64)(r0 + r) * d;
        float s = 0.0f;
        for (int j = lane; j < d; j += 32) { float v = xr[j]; s += v * v; }
        s = warp_sum(s);
        float inv = rsqrtf(s / d + eps);
        for (int j = lane; j < d; j += 32) y[r * d + j] = xr[j] * inv * wn[j];
    }
    __syncthreads();
    for (int c = threadIdx.x; c < f; c += blockDim.x) {
        float a[CHAIN_BM];
        for (int r = 0; r < CHAIN_BM; ++r) a[r] = 0.0f;
        for (int i = 0; i < d; ++i) {
            float w = w1[(u64)i * f + c];
            for (int r = 0; r < CHAIN_BM; ++r) a[r] += y[r * d + i] * w;
        }
        for (int r = 0; r < CHAIN_BM; ++r) h[r * f + c] = silu_f(a[r]);
    }
    __syncthreads();
    for (int c = threadIdx.x; c < d; c += blockDim.x) {
        float a[CHAIN_BM];
        for (int r = 0; r < CHAIN_BM; ++r) a[r] = 0.0f;
        for (int j = 0; j < f; ++j) {
            float w = w2[(u64)j * d + c];
            for (int r = 0; r < CHAIN_BM; ++r) a[r] += h[r * f + j] * w;
        }
        for (int r = 0; r < rows; ++r) out[(u64)(r0 + r) * d + c] = a[r];
    }
}
"#;

struct Kernels {
    add: CudaFunction,
    silu_mul: CudaFunction,
    silu: CudaFunction,
    rmsnorm: CudaFunction,
    softmax: CudaFunction,
    flash: CudaFunction,
    chain: CudaFunction,
}

struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    blas: CudaBlas,
    k: Kernels,
    sms: u32,
}

type Buf = CudaSlice<f32>;

/// Runs the GPU suite; a panic inside a CUDA library binding becomes an error.
pub(super) fn run(opts: &SuiteOptions, progress: &mut dyn Progress) -> R<SuiteRun> {
    crate::gpu::cuda::check_libraries(false)?;
    crate::gpu::cuda::catching_panics(|| run_inner(opts, progress))
}

fn setup(device: usize) -> R<Gpu> {
    let count = CudaContext::device_count().map_err(fail("cuDeviceGetCount"))?;
    if device >= count.max(0) as usize {
        return Err(MeasureError::usage(
            format!("`--device {device}`: this machine has {count} CUDA devices"),
            Some("device ordinals start at 0 (`nvidia-smi -L` lists them)".into()),
        ));
    }
    let ctx = CudaContext::new(device).map_err(fail("cuCtxCreate"))?;
    let stream = ctx.default_stream();
    let ptx = compile_ptx_with_opts(
        SOURCE,
        CompileOptions {
            fmad: Some(true),
            use_fast_math: Some(false),
            ..Default::default()
        },
    )
    .map_err(fail("NVRTC compile of the suite's kernels"))?;
    let module = ctx.load_module(ptx).map_err(fail("cuModuleLoadData"))?;
    let f = |name: &'static str| {
        module
            .load_function(name)
            .map_err(fail("cuModuleGetFunction"))
    };
    let k = Kernels {
        add: f("add_k")?,
        silu_mul: f("silu_mul_k")?,
        silu: f("silu_k")?,
        rmsnorm: f("rmsnorm_k")?,
        softmax: f("softmax_k")?,
        flash: f("flash_k")?,
        chain: f("chain_fused_k")?,
    };
    let blas = CudaBlas::new(stream.clone()).map_err(fail("cublasCreate"))?;
    let sms = ctx
        .attribute(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map(|v| v.max(1) as u32)
        .unwrap_or(1);
    Ok(Gpu {
        ctx,
        stream,
        blas,
        k,
        sms,
    })
}

impl Gpu {
    fn upload(&self, host: &[f32]) -> R<Buf> {
        self.stream.clone_htod(host).map_err(fail("cuMemcpyHtoD"))
    }
    fn filled(&self, n: usize, seed: u64) -> R<Buf> {
        self.upload(&filled(n, seed)?)
    }
    fn zeros(&self, n: usize) -> R<Buf> {
        self.stream
            .alloc_zeros::<f32>(n)
            .map_err(fail("cuMemAlloc"))
    }
    fn download(&self, b: &Buf) -> R<Vec<f32>> {
        self.stream.clone_dtoh(b).map_err(fail("cuMemcpyDtoH"))
    }

    /// A grid-stride launch over `n` elements.
    fn stream_cfg(&self, n: usize) -> LaunchConfig {
        let blocks = n.div_ceil(256).clamp(1, 32 * self.sms as usize) as u32;
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    fn add(&self, a: &Buf, b: &Buf, o: &mut Buf, n: usize) -> R<()> {
        let n64 = n as u64;
        let mut l = self.stream.launch_builder(&self.k.add);
        l.arg(a).arg(b).arg(o).arg(&n64);
        // SAFETY: add_k(const float*, const float*, float*, u64) over n elements; the three
        // buffers hold at least n floats (allocated for this n by the caller).
        unsafe { l.launch(self.stream_cfg(n)) }.map_err(fail("cuLaunchKernel add_k"))?;
        Ok(())
    }

    fn silu_mul(&self, g: &Buf, u: &Buf, o: &mut Buf, n: usize) -> R<()> {
        let n64 = n as u64;
        let mut l = self.stream.launch_builder(&self.k.silu_mul);
        l.arg(g).arg(u).arg(o).arg(&n64);
        // SAFETY: silu_mul_k(const float*, const float*, float*, u64); buffers of ≥ n floats.
        unsafe { l.launch(self.stream_cfg(n)) }.map_err(fail("cuLaunchKernel silu_mul_k"))?;
        Ok(())
    }

    fn silu(&self, x: &Buf, o: &mut Buf, n: usize) -> R<()> {
        let n64 = n as u64;
        let mut l = self.stream.launch_builder(&self.k.silu);
        l.arg(x).arg(o).arg(&n64);
        // SAFETY: silu_k(const float*, float*, u64); buffers of ≥ n floats.
        unsafe { l.launch(self.stream_cfg(n)) }.map_err(fail("cuLaunchKernel silu_k"))?;
        Ok(())
    }

    fn rmsnorm(&self, x: &Buf, w: &Buf, o: &mut Buf, rows: usize, cols: usize) -> R<()> {
        let (c, eps) = (cols as i32, cpu::RMS_EPS);
        let mut l = self.stream.launch_builder(&self.k.rmsnorm);
        l.arg(x).arg(w).arg(o).arg(&c).arg(&eps);
        let cfg = LaunchConfig {
            grid_dim: (rows as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: rmsnorm_k(const float*, const float*, float*, int, float): one block per
        // row of `cols`; x and o hold rows·cols floats, w holds cols.
        unsafe { l.launch(cfg) }.map_err(fail("cuLaunchKernel rmsnorm_k"))?;
        Ok(())
    }

    fn softmax(
        &self,
        x: &Buf,
        o: &mut Buf,
        rows: usize,
        cols: usize,
        scale: f32,
        causal_q: usize,
    ) -> R<()> {
        let (c, q) = (cols as i32, causal_q as i32);
        let mut l = self.stream.launch_builder(&self.k.softmax);
        l.arg(x).arg(o).arg(&c).arg(&scale).arg(&q);
        let cfg = LaunchConfig {
            grid_dim: (rows as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: softmax_k(const float*, float*, int, float, int): one block per row of
        // `cols`; x and o hold rows·cols floats.
        unsafe { l.launch(cfg) }.map_err(fail("cuLaunchKernel softmax_k"))?;
        Ok(())
    }

    /// Row-major `C[m,n] = A[m,k] · B[k,n]` by cuBLAS (`Cᵀ = Bᵀ·Aᵀ` column-major).
    fn gemm(&self, a: &Buf, b: &Buf, c: &mut Buf, m: usize, n: usize, k: usize) -> R<()> {
        let cfg = GemmConfig {
            transa: blas::cublasOperation_t::CUBLAS_OP_N,
            transb: blas::cublasOperation_t::CUBLAS_OP_N,
            m: n as i32,
            n: m as i32,
            k: k as i32,
            alpha: 1.0f32,
            lda: n as i32,
            ldb: k as i32,
            beta: 0.0f32,
            ldc: n as i32,
        };
        // SAFETY: b is k × n (column-major n × k, ld n), a is m × k (column-major k × m,
        // ld k), c is m × n (column-major n × m, ld n): the caller allocated each for these
        // sizes.
        unsafe { self.blas.gemm(cfg, b, a, c) }.map_err(fail("cublasSgemm"))
    }

    /// `S_h = Q_h · K_hᵀ` for every head (strided batched: `S_hᵀ = K_h · Q_hᵀ`).
    fn qk(&self, sh: AttentionShape, q: &Buf, k: &Buf, s: &mut Buf) -> R<()> {
        let (n, d) = (sh.seq as i32, sh.head_dim as i32);
        let cfg = StridedBatchedConfig {
            gemm: GemmConfig {
                transa: blas::cublasOperation_t::CUBLAS_OP_T,
                transb: blas::cublasOperation_t::CUBLAS_OP_N,
                m: n,
                n,
                k: d,
                alpha: 1.0f32,
                lda: d,
                ldb: d,
                beta: 0.0f32,
                ldc: n,
            },
            batch_size: sh.heads as i32,
            stride_a: (sh.seq * sh.head_dim) as i64,
            stride_b: (sh.seq * sh.head_dim) as i64,
            stride_c: (sh.seq * sh.seq) as i64,
        };
        // SAFETY: K and Q hold heads × seq × head_dim floats, S heads × seq × seq; per head,
        // op(A) = (K as column-major head_dim × seq)ᵀ, B = Q as column-major head_dim × seq.
        unsafe { self.blas.gemm_strided_batched(cfg, k, q, s) }
            .map_err(fail("cublasSgemmStridedBatched (QKᵀ)"))
    }

    /// `O_h = P_h · V_h` for every head (`O_hᵀ = V_hᵀ · P_hᵀ`).
    fn sv(&self, sh: AttentionShape, p: &Buf, v: &Buf, o: &mut Buf) -> R<()> {
        let (n, d) = (sh.seq as i32, sh.head_dim as i32);
        let cfg = StridedBatchedConfig {
            gemm: GemmConfig {
                transa: blas::cublasOperation_t::CUBLAS_OP_N,
                transb: blas::cublasOperation_t::CUBLAS_OP_N,
                m: d,
                n,
                k: n,
                alpha: 1.0f32,
                lda: d,
                ldb: n,
                beta: 0.0f32,
                ldc: d,
            },
            batch_size: sh.heads as i32,
            stride_a: (sh.seq * sh.head_dim) as i64,
            stride_b: (sh.seq * sh.seq) as i64,
            stride_c: (sh.seq * sh.head_dim) as i64,
        };
        // SAFETY: V and O hold heads × seq × head_dim floats, P heads × seq × seq.
        unsafe { self.blas.gemm_strided_batched(cfg, v, p, o) }
            .map_err(fail("cublasSgemmStridedBatched (S·V)"))
    }

    fn attention_materialised(
        &self,
        sh: AttentionShape,
        (q, k, v): (&Buf, &Buf, &Buf),
        s: &mut Buf,
        p: &mut Buf,
        o: &mut Buf,
    ) -> R<()> {
        self.qk(sh, q, k, s)?;
        self.softmax(s, p, sh.heads * sh.seq, sh.seq, sh.scale(), sh.seq)?;
        self.sv(sh, p, v, o)
    }

    fn flash(&self, sh: AttentionShape, (q, k, v): (&Buf, &Buf, &Buf), o: &mut Buf) -> R<()> {
        if sh.head_dim != HD {
            return Err(MeasureError::new(
                format!("internal: the CUDA flash kernel is compiled for head_dim {HD}"),
                None,
            ));
        }
        let (s, scale) = (sh.seq as i32, sh.scale());
        let mut l = self.stream.launch_builder(&self.k.flash);
        l.arg(q).arg(k).arg(v).arg(o).arg(&s).arg(&scale);
        let cfg = LaunchConfig {
            grid_dim: (sh.seq.div_ceil(BR) as u32, sh.heads as u32, 1),
            block_dim: (BR as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: flash_k(const float* q, k, v, float* o, int s, float scale) reads and writes
        // heads × s × 64 floats of each buffer (allocated so by the caller); its shared tiles
        // are static (2 × 64 × 64 floats = 32 KiB).
        unsafe { l.launch(cfg) }.map_err(fail("cuLaunchKernel flash_k"))?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn chain_separate(
        &self,
        c: ChainShape,
        x: &Buf,
        w: (&Buf, &Buf, &Buf),
        y: &mut Buf,
        h: &mut Buf,
        a: &mut Buf,
        out: &mut Buf,
    ) -> R<()> {
        let (t, d, f) = (c.tokens, c.hidden, c.intermediate);
        self.rmsnorm(x, w.0, y, t, d)?;
        self.gemm(y, w.1, h, t, f, d)?;
        self.silu(h, a, t * f)?;
        self.gemm(a, w.2, out, t, d, f)
    }

    fn chain_fused(&self, c: ChainShape, x: &Buf, w: (&Buf, &Buf, &Buf), out: &mut Buf) -> R<()> {
        let (t, d, f) = (c.tokens as i32, c.hidden as i32, c.intermediate as i32);
        let eps = cpu::RMS_EPS;
        let smem = (CHAIN_BM * (c.hidden + c.intermediate) * 4) as u32;
        if smem > 48 * 1024 {
            return Err(MeasureError::new(
                format!("internal: the fused chain's tile needs {smem} B of shared memory (48 KiB without opt-in)"),
                None,
            ));
        }
        let mut l = self.stream.launch_builder(&self.k.chain);
        l.arg(x)
            .arg(w.0)
            .arg(w.1)
            .arg(w.2)
            .arg(out)
            .arg(&t)
            .arg(&d)
            .arg(&f)
            .arg(&eps);
        let cfg = LaunchConfig {
            grid_dim: (c.tokens.div_ceil(CHAIN_BM) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: smem,
        };
        // SAFETY: chain_fused_k(x, wn, w1, w2, out, t, d, f, eps): x and out hold t × d floats,
        // wn d, w1 d × f, w2 f × d; the dynamic shared memory is CHAIN_BM · (d + f) floats, as
        // the kernel indexes it, and within the 48 KiB every device allows.
        unsafe { l.launch(cfg) }.map_err(fail("cuLaunchKernel chain_fused_k"))?;
        Ok(())
    }

    /// Seconds per execution of `run`, by CUDA events around back-to-back executions.
    fn time(&self, method: &Method, run: &mut dyn FnMut() -> R<()>) -> R<Stat> {
        let event = || {
            self.ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(fail("cuEventCreate"))
        };
        let mut timed = |units: u64| -> R<f64> {
            let (start, end) = (event()?, event()?);
            start.record(&self.stream).map_err(fail("cuEventRecord"))?;
            for _ in 0..units {
                run()?;
            }
            end.record(&self.stream).map_err(fail("cuEventRecord"))?;
            let ms = start.elapsed_ms(&end).map_err(fail("cuEventElapsedTime"))?;
            Ok(f64::from(ms) / 1e3)
        };
        timed(1)?;
        let started = Instant::now();
        let units = method.units_for(1, timed(1)?);
        let mut rates = Vec::new();
        loop {
            let s = timed(units)?;
            if s > 0.0 {
                rates.push(units as f64 / s);
            }
            if let Some(r) = method.done(&rates, started.elapsed().as_secs_f64()) {
                return Ok(r.reciprocal());
            }
            if rates.is_empty() && started.elapsed().as_secs_f64() > 10.0 {
                return Err(MeasureError::new(
                    "CUDA events measured no time for a kernel".into(),
                    None,
                ));
            }
        }
    }
}

/// Largest |gpu − cpu| / (1 + |cpu|).
fn max_error(gpu: &[f32], cpu: &[f32]) -> f64 {
    gpu.iter()
        .zip(cpu)
        .map(|(g, c)| f64::from((g - c).abs()) / (1.0 + f64::from(c.abs())))
        .fold(
            if gpu.len() == cpu.len() {
                0.0
            } else {
                f64::INFINITY
            },
            f64::max,
        )
}

/// Runs every GPU kernel on small inputs and compares with the CPU kernels; returns one note.
fn check_against_cpu(g: &Gpu) -> R<String> {
    let mut worst: Vec<(&str, f64)> = Vec::new();
    let host = |n, seed| filled(n, seed);
    // Elementwise and rows.
    let n = 1000;
    let (a, b) = (host(n, 1)?, host(n, 2)?);
    let (da, db) = (g.upload(&a)?, g.upload(&b)?);
    let mut o = g.zeros(n)?;
    let mut want = vec![0.0; n];
    g.add(&da, &db, &mut o, n)?;
    cpu::add(&a, &b, &mut want);
    worst.push(("add", max_error(&g.download(&o)?, &want)));
    g.silu_mul(&da, &db, &mut o, n)?;
    cpu::silu_mul(&a, &b, &mut want);
    worst.push(("silu·mul", max_error(&g.download(&o)?, &want)));
    let (rows, cols) = (4, 250);
    let w = host(cols, 3)?;
    g.rmsnorm(&da, &g.upload(&w)?, &mut o, rows, cols)?;
    cpu::rmsnorm(&a, &w, &mut want, cols);
    worst.push(("rmsnorm", max_error(&g.download(&o)?, &want)));
    g.softmax(&da, &mut o, rows, cols, 0.7, 0)?;
    cpu::softmax(&a, &mut want, cols, 0.7, None);
    worst.push(("softmax", max_error(&g.download(&o)?, &want)));
    // GEMM 33 × 47 × 29.
    let (m, nn, k) = (33, 47, 29);
    let (ga, gb) = (host(m * k, 4)?, host(k * nn, 5)?);
    let mut gc = g.zeros(m * nn)?;
    g.gemm(&g.upload(&ga)?, &g.upload(&gb)?, &mut gc, m, nn, k)?;
    let mut wc = vec![0.0; m * nn];
    super::matmul::matmul(
        &mut wc,
        nn,
        super::matmul::View::row_major(&ga, m, k),
        super::matmul::View::row_major(&gb, k, nn),
        false,
        super::matmul::Threads::One,
    )?;
    worst.push(("gemm", max_error(&g.download(&gc)?, &wc)));
    // Attention: 2 heads × 70 tokens × 64.
    let sh = AttentionShape {
        heads: 2,
        seq: 70,
        head_dim: HD,
    };
    let (q, kk, v) = (
        host(sh.qkv_len(), 6)?,
        host(sh.qkv_len(), 7)?,
        host(sh.qkv_len(), 8)?,
    );
    let (dq, dk, dv) = (g.upload(&q)?, g.upload(&kk)?, g.upload(&v)?);
    let mut want = vec![0.0; sh.qkv_len()];
    let (mut s, mut p) = (vec![0.0; sh.scores_len()], vec![0.0; sh.scores_len()]);
    cpu::attention_materialised(sh, &q, &kk, &v, &mut s, &mut p, &mut want)?;
    let (mut ds, mut dp, mut dout) = (
        g.zeros(sh.scores_len())?,
        g.zeros(sh.scores_len())?,
        g.zeros(sh.qkv_len())?,
    );
    g.attention_materialised(sh, (&dq, &dk, &dv), &mut ds, &mut dp, &mut dout)?;
    worst.push((
        "attention, materialised",
        max_error(&g.download(&dout)?, &want),
    ));
    g.flash(sh, (&dq, &dk, &dv), &mut dout)?;
    worst.push(("attention, flash", max_error(&g.download(&dout)?, &want)));
    // Chain: 21 tokens, d 32, f 48.
    let c = ChainShape {
        tokens: 21,
        hidden: 32,
        intermediate: 48,
    };
    let (t, d, f) = (c.tokens, c.hidden, c.intermediate);
    let (x, wn, w1, w2) = (
        host(t * d, 9)?,
        host(d, 10)?,
        host(d * f, 11)?,
        host(f * d, 12)?,
    );
    let mut want = vec![0.0; t * d];
    cpu::chain_fused(
        c,
        &x,
        ChainWeights {
            norm: &wn,
            w1: &w1,
            w2: &w2,
        },
        &mut want,
        4,
    )?;
    let (dx, dw) = (
        g.upload(&x)?,
        (g.upload(&wn)?, g.upload(&w1)?, g.upload(&w2)?),
    );
    let (mut y, mut h, mut a2, mut out) = (
        g.zeros(t * d)?,
        g.zeros(t * f)?,
        g.zeros(t * f)?,
        g.zeros(t * d)?,
    );
    g.chain_separate(
        c,
        &dx,
        (&dw.0, &dw.1, &dw.2),
        &mut y,
        &mut h,
        &mut a2,
        &mut out,
    )?;
    worst.push(("chain, 4 kernels", max_error(&g.download(&out)?, &want)));
    g.chain_fused(c, &dx, (&dw.0, &dw.1, &dw.2), &mut out)?;
    worst.push(("chain, fused", max_error(&g.download(&out)?, &want)));

    // fp32 with __expf and a different summation order: agreement to 1e-3 relative.
    if let Some((name, e)) = worst.iter().find(|(_, e)| e.is_nan() || *e > 1e-3) {
        return Err(MeasureError::new(
            format!("the GPU kernel `{name}` disagrees with the CPU reference (largest error {e:.2e})"),
            Some("this is a bug in roofline's CUDA kernels; please report it with `nvidia-smi` output".into()),
        ));
    }
    let max = worst.iter().map(|(_, e)| *e).fold(0.0, f64::max);
    Ok(format!(
        "every GPU kernel agrees with its CPU reference on small inputs (largest |Δ| / (1 + |x|) = {max:.1e})"
    ))
}

type Run<'a> = Box<dyn FnMut() -> R<()> + 'a>;

/// Allocates `spec`'s device buffers and returns one execution of it.
fn build<'a>(g: &'a Gpu, spec: &Spec) -> R<Run<'a>> {
    Ok(match *spec {
        Spec::Gemm { m, n, k, .. } => {
            let (a, b, mut c) = (g.filled(m * k, 1)?, g.filled(k * n, 2)?, g.zeros(m * n)?);
            Box::new(move || g.gemm(&a, &b, &mut c, m, n, k))
        }
        Spec::Add { n, .. } => {
            let (a, b, mut o) = (g.filled(n, 1)?, g.filled(n, 2)?, g.zeros(n)?);
            Box::new(move || g.add(&a, &b, &mut o, n))
        }
        Spec::SiluMul { n } => {
            let (a, b, mut o) = (g.filled(n, 1)?, g.filled(n, 2)?, g.zeros(n)?);
            Box::new(move || g.silu_mul(&a, &b, &mut o, n))
        }
        Spec::RmsNorm { rows, cols, .. } => {
            let (x, w, mut o) = (
                g.filled(rows * cols, 1)?,
                g.filled(cols, 2)?,
                g.zeros(rows * cols)?,
            );
            Box::new(move || g.rmsnorm(&x, &w, &mut o, rows, cols))
        }
        Spec::Softmax { rows, cols } => {
            let (x, mut o) = (g.filled(rows * cols, 1)?, g.zeros(rows * cols)?);
            Box::new(move || g.softmax(&x, &mut o, rows, cols, 1.0, 0))
        }
        Spec::AttentionMaterialised(sh) => {
            let (q, k, v) = (
                g.filled(sh.qkv_len(), 1)?,
                g.filled(sh.qkv_len(), 2)?,
                g.filled(sh.qkv_len(), 3)?,
            );
            let (mut s, mut p, mut o) = (
                g.zeros(sh.scores_len())?,
                g.zeros(sh.scores_len())?,
                g.zeros(sh.qkv_len())?,
            );
            Box::new(move || g.attention_materialised(sh, (&q, &k, &v), &mut s, &mut p, &mut o))
        }
        Spec::AttentionFlash(sh) => {
            let (q, k, v) = (
                g.filled(sh.qkv_len(), 1)?,
                g.filled(sh.qkv_len(), 2)?,
                g.filled(sh.qkv_len(), 3)?,
            );
            let mut o = g.zeros(sh.qkv_len())?;
            Box::new(move || g.flash(sh, (&q, &k, &v), &mut o))
        }
        Spec::ChainSeparate(c) | Spec::ChainFused(c) => {
            let (t, d, f) = (c.tokens, c.hidden, c.intermediate);
            let x = g.filled(t * d, 1)?;
            let wn = g.filled(d, 2)?;
            let mut w1h = filled(d * f, 3)?;
            let mut w2h = filled(f * d, 4)?;
            w1h.iter_mut().for_each(|v| *v /= (d as f32).sqrt());
            w2h.iter_mut().for_each(|v| *v /= (f as f32).sqrt());
            let (w1, w2) = (g.upload(&w1h)?, g.upload(&w2h)?);
            let mut out = g.zeros(t * d)?;
            if matches!(spec, Spec::ChainFused(_)) {
                Box::new(move || g.chain_fused(c, &x, (&wn, &w1, &w2), &mut out))
            } else {
                let (mut y, mut h, mut a) = (g.zeros(t * d)?, g.zeros(t * f)?, g.zeros(t * f)?);
                Box::new(move || {
                    g.chain_separate(c, &x, (&wn, &w1, &w2), &mut y, &mut h, &mut a, &mut out)
                })
            }
        }
    })
}

fn run_inner(opts: &SuiteOptions, progress: &mut dyn Progress) -> R<SuiteRun> {
    let g = setup(opts.device)?;
    let suite = selected(gpu_suite(opts.quick), &opts.only);
    let method = kernel_method(opts.quick);
    progress.start(1 + suite.specs.len() as u64);
    progress.step("checking the GPU kernels against the CPU");
    let checked = check_against_cpu(&g)?;
    let mut timings = Vec::with_capacity(suite.specs.len());
    for spec in &suite.specs {
        progress.step(&spec.name());
        let launches = spec.launches()?;
        let time = {
            let mut run = build(&g, spec)?;
            g.time(&method, &mut *run)?
        };
        g.stream
            .synchronize()
            .map_err(fail("cuStreamSynchronize"))?;
        timings.push(SuiteKernel {
            name: spec.name(),
            family: spec.family().to_string(),
            note: spec.note(),
            launches,
            time,
            caveat: None,
        });
    }
    progress.finish();
    let name = g.ctx.name().unwrap_or_else(|_| "GPU".into());
    Ok(SuiteRun {
        timings,
        pairs: suite.pairs,
        threads: g.sms as usize,
        method: format!(
            "{name}: CUDA events around back-to-back executions; {}",
            method.describe()
        ),
        notes: vec![
            checked,
            "GEMMs are cuBLAS sgemm (fp32, no tensor cores); the flash and fused-chain kernels are plain CUDA C (fp32 FMA, shared-memory tiles), far from tuned".into(),
        ],
        ceilings: roofline_core::prediction::Ceilings::NONE,
    })
}
