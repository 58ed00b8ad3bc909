#!/usr/bin/env bash
# Instructions per both-stage analysis of Llama-2-7B on the RTX A6000, for each analysis path:
# cachegrind's instruction count at 40,000 iterations minus that at 20,000, over 20,000. The
# count does not depend on the host's load, so it compares builds on a busy machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p roofline-core --example instructions
bin=target/release/examples/instructions
count() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 |
    sed -n 's/.*I *refs: *//p' | tr -d ','
}
paths=("$@"); [ ${#paths[@]} -gt 0 ] || paths=(analyze analyze_into evaluate evaluate_totals)
for p in "${paths[@]}"; do
  a=$(count "$p" 20000)
  b=$(count "$p" 40000)
  echo "$p: $(( (b - a) / 20000 )) instructions per both-stage analysis"
done
