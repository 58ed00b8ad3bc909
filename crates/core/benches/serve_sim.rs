//! 100,000 requests through the serving simulator: Poisson arrivals at 20/s, prompts of 1024
//! tokens, 256 output tokens, at most 256 running sequences, 8192 tokens a step with chunked
//! prefill, 7000 KV blocks of 16 tokens. The step time is a roofline of Llama-2-7B in bf16 on an
//! H100 SXM written as a closure (13.5 GB of weights and 512 KiB of KV cache per token read at
//! 3.35 TB/s, against 2 FLOP per parameter and token plus the attention's pairs at 989 TFLOP/s),
//! so the figure is the simulator's own cost. The bar: well under 5 s for the whole run.
//!
//! `cargo bench -p roofline-core --bench serve_sim`

#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use roofline_core::serve::sim::{generate, simulate, Arrivals, Dist, EngineConfig};
use roofline_core::serve::Mix;
use std::hint::black_box;
use std::time::Duration;

fn step(m: &Mix) -> f64 {
    let bytes = 13.5e9 + 524_288.0 * (m.cached + m.tokens);
    let flops = 1.35e10 * m.tokens + 4.0 * 4096.0 * 32.0 * (m.cross_pairs + m.diagonal_pairs);
    (bytes / 3.35e12).max(flops / 989e12)
}

fn bench(c: &mut Criterion) {
    let n = 100_000;
    let requests = match generate(
        n,
        Arrivals::Poisson { rate: 20.0 },
        Dist::Fixed(1024),
        Dist::Fixed(256),
        1,
    ) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    let config = EngineConfig {
        max_seqs: 256,
        max_batched_tokens: 8192,
        kv_blocks: 7000,
        block_tokens: 16,
        chunked_prefill: true,
    };
    let mut group = c.benchmark_group("serve_sim");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("100k requests, rate 20/s, 1024 in, 256 out", |b| {
        b.iter(|| match simulate(black_box(&requests), &config, &step) {
            Ok(s) => s.summary.steps,
            Err(e) => panic!("{e}"),
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
