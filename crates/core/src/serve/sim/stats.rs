//! Aggregates of a simulation: throughput over the makespan and latency percentiles.

use super::RequestMetrics;
use serde::Serialize;

/// Percentiles and mean of one latency, seconds.
///
/// Percentiles are nearest-rank: the p-th of n sorted values is the ⌈p·n/100⌉-th (1-based), a
/// value that occurred (no interpolation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Arithmetic mean.
    pub mean: f64,
}

impl Percentiles {
    /// The percentiles of `values` (sorted in place); none for no values.
    ///
    /// ```
    /// use roofline_core::serve::sim::Percentiles;
    /// let mut v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
    /// let p = Percentiles::of(&mut v).ok_or("empty")?;
    /// assert_eq!((p.p50, p.p90, p.p99, p.mean), (50.0, 90.0, 99.0, 50.5));
    /// # Ok::<(), &str>(())
    /// ```
    pub fn of(values: &mut [f64]) -> Option<Percentiles> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let rank = |p: usize| {
            let r = (p * n).div_ceil(100).max(1);
            values[r - 1]
        };
        Some(Percentiles {
            p50: rank(50),
            p90: rank(90),
            p99: rank(99),
            mean: values.iter().sum::<f64>() / n as f64,
        })
    }
}

/// What a simulation adds up to.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// Requests.
    pub count: usize,
    /// Last finish − first arrival, seconds.
    pub makespan: f64,
    /// Output tokens generated.
    pub output_tokens: u64,
    /// Output tokens per second over the makespan.
    pub output_tokens_per_s: f64,
    /// Requests per second over the makespan.
    pub requests_per_s: f64,
    /// Time to first token.
    pub ttft: Percentiles,
    /// Time per output token after the first, over requests with output > 1; none without.
    pub tpot: Option<Percentiles>,
    /// End to end.
    pub e2e: Percentiles,
    /// Queueing delay (first admission − arrival).
    pub queue: Percentiles,
    /// Mean sequences per step (decodes and prefill chunks).
    pub mean_batch: f64,
    /// Engine steps.
    pub steps: u64,
    /// Preemptions (by recomputation), all requests together.
    pub preemptions: u64,
}

/// The summary of `m` (non-empty) after `steps` steps that held `batch_sum` sequences in all.
pub(super) fn summarise(
    m: &[RequestMetrics],
    steps: u64,
    batch_sum: u64,
    preemptions: u64,
) -> Summary {
    let start = m.iter().map(|r| r.arrival).fold(f64::INFINITY, f64::min);
    let end = m.iter().map(|r| r.finish).fold(f64::NEG_INFINITY, f64::max);
    let makespan = end - start;
    let output_tokens: u64 = m.iter().map(|r| r.output).sum();
    let mut buf: Vec<f64> = Vec::with_capacity(m.len());
    let mut pct = |f: &dyn Fn(&RequestMetrics) -> Option<f64>| {
        buf.clear();
        buf.extend(m.iter().filter_map(f));
        Percentiles::of(&mut buf)
    };
    let zero = Percentiles {
        p50: 0.0,
        p90: 0.0,
        p99: 0.0,
        mean: 0.0,
    };
    let ttft = pct(&|r| Some(r.ttft)).unwrap_or(zero);
    let tpot = pct(&|r| r.tpot);
    let e2e = pct(&|r| Some(r.e2e)).unwrap_or(zero);
    let queue = pct(&|r| Some(r.queue)).unwrap_or(zero);
    let per_s = |x: f64| if makespan > 0.0 { x / makespan } else { 0.0 };
    Summary {
        count: m.len(),
        makespan,
        output_tokens,
        output_tokens_per_s: per_s(output_tokens as f64),
        requests_per_s: per_s(m.len() as f64),
        ttft,
        tpot,
        e2e,
        queue,
        mean_batch: if steps > 0 {
            batch_sum as f64 / steps as f64
        } else {
            0.0
        },
        steps,
        preemptions,
    }
}
