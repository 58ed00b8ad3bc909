#!/usr/bin/env bash
# A long fuzz run of the `roofline` binary (crates/cli/tests/fuzz.rs), beyond the bounded run
# of `cargo test`: scripts/fuzz.sh [CASES] [SEED ...]
#   scripts/fuzz.sh                   # 20000 cases under the test's default seed
#   scripts/fuzz.sh 5000 1 2 0xbeef   # 5000 cases under each of the seeds 1, 2 and 0xbeef
# Every seed runs to the end. The failing cases of a seed are listed, each with its command line
# and the folder that keeps its input files, in the failures.txt its summary names (under the
# target folder's tmp/fuzz-SEED/). FUZZ_TIMEOUT_S, FUZZ_THREADS, FUZZ_BIN and FUZZ_LOG pass
# through (see the test's header). Exits 1 when any seed found a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
cases=${1:-20000}
shift || true
seeds=("$@")
[ ${#seeds[@]} -eq 0 ] && seeds=(default)
cargo test -p roofline-cli --test fuzz --no-run || exit 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
for seed in "${seeds[@]}"; do
  vars=(FUZZ_CASES="$cases")
  [ "$seed" != default ] && vars+=(FUZZ_SEED="$seed")
  if env "${vars[@]}" cargo test -q -p roofline-cli --test fuzz fuzz_inputs_and_flags >"$log" 2>&1; then
    grep -m1 '^fuzz:' "$log"
  else
    status=1
    grep -m1 '^fuzz:' "$log" || tail -20 "$log"
    grep -o 'also in [^)]*' "$log" | head -1
  fi
done
exit $status
