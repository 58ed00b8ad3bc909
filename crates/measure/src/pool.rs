//! Pinned benchmark threads that run one job together per round.
//!
//! Each worker pins itself to its own logical CPU, then allocates and first-touches its own
//! buffer (so its pages live on its NUMA node). A round: the driver posts a job and releases the
//! workers through a barrier; each times its own share with [`Instant`]; a second barrier ends
//! the round. The round's time is the slowest worker's, so a rate computed from it never counts
//! work that was not yet done.

use crate::bench_kernels::{self, ComputeKernel, Simd};
use roofline_core::measured::BandwidthKernel;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex, PoisonError};
use std::time::Instant;

/// What every worker does in one round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Job {
    /// `iters` × 128 dependent instructions of a clock chain.
    Clock {
        chain: bench_kernels::ClockChain,
        iters: u64,
    },
    /// `iters` iterations of a compute kernel.
    Compute { kernel: ComputeKernel, iters: u64 },
    /// A bandwidth kernel over `n` elements per stream, streams `stride` elements apart.
    Bandwidth {
        kernel: BandwidthKernel,
        n: usize,
        stride: usize,
        passes: u64,
    },
    /// Nothing: the round measures fork/join.
    Empty,
    /// Leave.
    Exit,
}

/// One round's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Round {
    /// The slowest worker's time, seconds.
    pub slowest: f64,
    /// The driver's time from release to the end of the round, seconds.
    pub wall: f64,
}

/// 1 MiB in f64 elements: the alignment of every worker's streams.
const ALIGN_ELEMS: usize = (1 << 20) / 8;

struct Shared {
    job: Mutex<Job>,
    start: Barrier,
    end: Barrier,
    times: Mutex<Vec<f64>>,
    failed: AtomicUsize,
    pinned: AtomicUsize,
}

/// Posts jobs to the workers of [`with_pool`].
pub(crate) struct Driver<'a> {
    shared: &'a Shared,
    threads: usize,
}

impl Driver<'_> {
    /// Runs `job` on every worker; returns the round's times.
    pub(crate) fn round(&mut self, job: Job) -> Round {
        *self
            .shared
            .job
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = job;
        let t0 = Instant::now();
        self.shared.start.wait();
        self.shared.end.wait();
        let wall = t0.elapsed().as_secs_f64();
        let times = self
            .shared
            .times
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Round {
            slowest: times.iter().copied().fold(0.0, f64::max),
            wall,
        }
    }

    /// Workers in the pool.
    pub(crate) fn threads(&self) -> usize {
        self.threads
    }
}

/// Outcome of setting up the workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PoolInfo {
    /// Workers that could pin themselves to their CPU.
    pub pinned: usize,
    /// Workers that could not allocate their buffer.
    pub failed: usize,
}

/// Starts `threads` workers, pinned to `cpus[i]` (none pinned when `cpus` is empty), each with
/// a buffer of `buffer_elems` f64 (1 MiB aligned, values in [1, 2) that differ per element),
/// and runs `drive` with a
/// [`Driver`]. The workers leave when `drive` returns. `drive` gets the [`PoolInfo`] and should
/// not post jobs that need a buffer if `failed > 0`.
pub(crate) fn with_pool<R>(
    threads: usize,
    cpus: &[core_affinity::CoreId],
    buffer_elems: usize,
    simd: Simd,
    drive: impl FnOnce(&mut Driver<'_>, PoolInfo) -> R,
) -> R {
    let threads = threads.max(1);
    let shared = Shared {
        job: Mutex::new(Job::Empty),
        start: Barrier::new(threads + 1),
        end: Barrier::new(threads + 1),
        times: Mutex::new(vec![0.0; threads]),
        failed: AtomicUsize::new(0),
        pinned: AtomicUsize::new(0),
    };
    let ready = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        for tid in 0..threads {
            let (shared, ready) = (&shared, &ready);
            let cpu = cpus.get(tid).copied();
            s.spawn(move || worker(tid, cpu, buffer_elems, simd, shared, ready));
        }
        ready.wait();
        let info = PoolInfo {
            pinned: shared.pinned.load(Ordering::SeqCst),
            failed: shared.failed.load(Ordering::SeqCst),
        };
        let mut driver = Driver {
            shared: &shared,
            threads,
        };
        let out = drive(&mut driver, info);
        driver.round(Job::Exit);
        out
    })
}

fn worker(
    tid: usize,
    cpu: Option<core_affinity::CoreId>,
    buffer_elems: usize,
    simd: Simd,
    shared: &Shared,
    ready: &Barrier,
) {
    if let Some(c) = cpu {
        if core_affinity::set_for_current(c) {
            shared.pinned.fetch_add(1, Ordering::SeqCst);
        }
    }
    // The buffer, allocated and first-touched on the pinned thread.
    let mut buf: Vec<f64> = Vec::new();
    // One extra MiB, so that the streams can start on a 1 MiB boundary (below).
    let want = if buffer_elems > 0 {
        buffer_elems + ALIGN_ELEMS
    } else {
        0
    };
    if buf.try_reserve_exact(want).is_ok() {
        // Values that differ from element to element (1 + i·2⁻²⁰ mod 2, all normal numbers),
        // a precaution: pages of identical bytes can be merged into one physical page by a
        // hypervisor's same-page merging.
        buf.extend((0..want).map(|i| 1.0 + (i & 0xF_FFFF) as f64 * (1.0 / 1_048_576.0)));
    } else {
        shared.failed.fetch_add(1, Ordering::SeqCst);
    }
    // The streams start on a 1 MiB boundary. AMD Zen's L1D predicts the way from a µtag, an
    // XOR fold of linear-address bits 12–27 (Lipp et al., "Take A Way", AsiaCCS 2020); two pages
    // with the same fold evict each other's lines from the prediction. A large `Vec` is an mmap
    // whose first page sits just below a 512 MiB boundary, and that page and the next one fold
    // alike: an L1-sized read across them ran at two thirds of its speed (half with 2 threads).
    // Within one 1 MiB-aligned megabyte, bits 20–27 are fixed, so every page's µtag differs.
    let off = buf.as_ptr().align_offset(1 << 20).min(ALIGN_ELEMS);
    ready.wait();
    let mut sink = 0.0;
    loop {
        shared.start.wait();
        let job = *shared.job.lock().unwrap_or_else(PoisonError::into_inner);
        let t0 = Instant::now();
        match job {
            Job::Exit => {
                shared.end.wait();
                break;
            }
            Job::Empty => {}
            Job::Clock { chain, iters } => {
                sink += bench_kernels::clock_chain(chain, iters).unwrap_or(0) as f64
            }
            Job::Compute { kernel, iters } => sink += kernel.run(iters),
            Job::Bandwidth {
                kernel,
                n,
                stride,
                passes,
            } => {
                let need = kernel.streams() as usize * stride;
                if let Some(slice) = buf.get_mut(off..off + need) {
                    sink += bench_kernels::run_bandwidth(kernel, simd, slice, n, stride, passes);
                }
            }
        }
        let dt = t0.elapsed().as_secs_f64();
        if let Some(t) = shared
            .times
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(tid)
        {
            *t = dt;
        }
        shared.end.wait();
    }
    black_box(sink);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_worker_runs_every_round() {
        // Two workers, a tiny buffer; a triad round and an empty round complete, and the
        // slowest time is non-negative (no timing assertion beyond that).
        let r = with_pool(2, &[], 4 * 80, Simd::detect(), |d, info| {
            assert_eq!(info.failed, 0);
            assert_eq!(info.pinned, 0);
            assert_eq!(d.threads(), 2);
            let a = d.round(Job::Bandwidth {
                kernel: BandwidthKernel::Triad,
                n: 64,
                stride: 80,
                passes: 2,
            });
            let b = d.round(Job::Empty);
            (a, b)
        });
        assert!(r.0.slowest >= 0.0 && r.1.wall >= 0.0);
    }
}
