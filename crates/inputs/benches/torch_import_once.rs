//! One import of a synthetic trace of N events (`N` the first argument, default 100,000), for
//! instruction counts that do not depend on the machine's load:
//!
//! ```sh
//! cargo bench -p roofline-inputs --bench torch_import_once --no-run
//! valgrind --tool=cachegrind --cache-sim=no target/release/deps/torch_import_once-* 1000000
//! valgrind --tool=cachegrind --cache-sim=no target/release/deps/torch_import_once-* 1000000 generate
//! ```
//!
//! The second run only generates the trace: the difference is the import's instructions.

#![allow(missing_docs)]

mod synthetic;

use roofline_inputs::profile::torch::parse;
use std::hint::black_box;

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let events: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(100_000);
    let text = synthetic::trace(events / 6);
    if args.next().as_deref() == Some("generate") {
        black_box(&text);
        return;
    }
    match parse(black_box(&text), "bench.json") {
        Ok(p) => {
            black_box(p.kernels.len());
        }
        Err(e) => panic!("{}", e.message),
    }
}
