#!/usr/bin/env bash
# `roofline measure` side by side with likwid-bench on this machine.
#
# Runs both, alternately, ROUNDS times (default 5), and prints for each figure each tool's best
# and median over the rounds and the ratio roofline / likwid-bench of each:
#   fp32 FMA peak, fp64 FMA peak         likwid-bench peakflops_sp_avx_fma / peakflops_avx_fma, 32 kB
#   L1, L2, L3, DRAM load bandwidth      likwid-bench load_avx at 32 kB, 512 kB, L3_SIZE
#                                        (default 8 MB), 2 GB
#   DRAM copy and triad bandwidth        likwid-bench copy_avx (A = B), triad_avx (A = B·C + D)
#                                        at 2 GB
# likwid-bench has no bf16, fp16, int8 or AMX kernel: roofline's figures for those are printed
# below the table, unpaired.
# (the _avx512 / _avx512_fma kernels on a CPU with AVX-512). All with THREADS threads (default:
# every logical CPU), the working set split between them, as `-W N:<size>:<threads>` does.
# The bar: every ratio of the best figures at least 0.95. Best of the rounds, because work from
# other processes only ever lowers a figure (on a shared machine the median of a few rounds
# mostly measures who else was running); the medians are printed beside them.
#
# roofline's figures are its all-threads peaks and its sweep points at the same working sets
# (read at 32 KiB and 512 KiB; read and triad at its largest, 1 GiB, for DRAM); the chip file's
# level figures (the median of the points inside each level, see README "Measure") are printed
# beside them. Both tools count bytes the same way: loads and stores named, no write-allocate.
#
# Usage: scripts/likwid-compare.sh [ROUNDS]
#   env: THREADS, QUICK=1 (roofline --quick), L3_SIZE (likwid's -W size inside L3, e.g. 8MB), ROOFLINE_BIN (a built binary: skip the build),
#        OUT (folder for the logs and JSON), WAIT_IDLE=SECONDS (before each run, wait up to
#        that long for the CPUs to be ≥ 90 % idle over 2 s: for a machine others share)
# Needs: cargo, python3, likwid (installed with apt-get if missing). likwid-bench pins its own
# threads; where it cannot run (no permission, unknown CPU) its rows say so and the script goes on.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-${ROUNDS:-5}}
THREADS=${THREADS:-$(nproc)}
QUICK=${QUICK:-0}
L3_SIZE=${L3_SIZE:-8MB}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"

if ! command -v likwid-bench >/dev/null 2>&1; then
  echo "likwid-bench not found: installing the Debian package likwid" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y likwid >/dev/null || { apt-get update >/dev/null && apt-get install -y likwid >/dev/null; }
  else
    sudo apt-get install -y likwid >/dev/null
  fi
fi
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON" >&2; exit 1; }

if [ -n "${ROOFLINE_BIN:-}" ]; then
  ROOFLINE=$ROOFLINE_BIN
else
  echo "building roofline (release)" >&2
  cargo build --release -q -p roofline-cli
  ROOFLINE=target/release/roofline
fi

load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
if python3 -c "import sys; sys.exit(0 if float('$load') > 0.5 * $THREADS else 1)"; then
  echo "warning: load average $load on $THREADS CPUs: other work will lower both tools' figures" >&2
fi

if grep -qw avx512f /proc/cpuinfo; then
  FP32=peakflops_sp_avx512_fma; FP64=peakflops_avx512_fma; LOAD=load_avx512; TRIAD=triad_avx512_fma
  COPY=copy_avx512
else
  FP32=peakflops_sp_avx_fma; FP64=peakflops_avx_fma; LOAD=load_avx; TRIAD=triad_avx; COPY=copy_avx
fi

WAIT_IDLE=${WAIT_IDLE:-0}
# Waits up to WAIT_IDLE seconds until /proc/stat shows the CPUs ≥ 90 % idle over 2 s.
quiet() {
  local deadline=$(( $(date +%s) + WAIT_IDLE )) a b
  while [ "$WAIT_IDLE" -gt 0 ] && [ "$(date +%s)" -lt "$deadline" ]; do
    a=$(awk '/^cpu /{print $2+$3+$4+$5+$6+$7+$8+$9, $5}' /proc/stat)
    sleep 2
    b=$(awk '/^cpu /{print $2+$3+$4+$5+$6+$7+$8+$9, $5}' /proc/stat)
    if awk -v a="$a" -v b="$b" 'BEGIN {split(a, x); split(b, y); exit !((y[2]-x[2]) >= 0.9 * (y[1]-x[1]))}'; then
      return 0
    fi
  done
}

# likwid-bench KERNEL SIZE FIELD -> the figure (MFlops/s or MByte/s), or "nan".
lb() {
  quiet
  local log="$OUT/likwid-$1-$2-$r.log"
  if likwid-bench -t "$1" -W "N:$2:$THREADS" >"$log" 2>&1; then
    awk -v f="$3" -F'[: \t]+' '$0 ~ "^"f":" {print $NF; found=1} END {if (!found) print "nan"}' "$log"
  else
    echo "likwid-bench -t $1 -W N:$2:$THREADS failed (see $log)" >&2
    echo nan
  fi
}

flags=(--format json --threads "$THREADS")
[ "$QUICK" = 1 ] && flags+=(--quick)
for r in $(seq 1 "$ROUNDS"); do
  echo "round $r/$ROUNDS: likwid-bench" >&2
  {
    echo "fp32 $(lb "$FP32" 32kB MFlops/s)"
    echo "fp64 $(lb "$FP64" 32kB MFlops/s)"
    echo "l1 $(lb "$LOAD" 32kB MByte/s)"
    echo "l2 $(lb "$LOAD" 512kB MByte/s)"
    echo "l3 $(lb "$LOAD" "$L3_SIZE" MByte/s)"
    echo "dram $(lb "$LOAD" 2GB MByte/s)"
    echo "copy $(lb "$COPY" 2GB MByte/s)"
    echo "triad $(lb "$TRIAD" 2GB MByte/s)"
  } >"$OUT/likwid-$r.txt"
  echo "round $r/$ROUNDS: roofline measure ${flags[*]}" >&2
  quiet
  "$ROOFLINE" measure "${flags[@]}" >"$OUT/roofline-$r.json"
done

python3 - "$OUT" "$ROUNDS" "$THREADS" "$FP32 $FP64 $LOAD $COPY $TRIAD" "$L3_SIZE" <<'EOF'
import json, math, re, statistics, sys
out, rounds, threads, kernels, l3 = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
num, unit = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kMG]?)B", l3).groups()
l3_bytes = float(num) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[unit]
rows = [("fp32", "fp32 FMA peak", "GFLOP/s"), ("fp64", "fp64 FMA peak", "GFLOP/s"),
        ("l1", "L1 load (32 kB)", "GB/s"), ("l2", "L2 load (512 kB)", "GB/s"),
        ("l3", f"L3 load ({l3})", "GB/s"),
        ("dram", "DRAM load (2 GB / 1 GiB)", "GB/s"),
        ("copy", "DRAM copy (2 GB / 1 GiB)", "GB/s"),
        ("triad", "DRAM triad (2 GB / 1 GiB)", "GB/s")]
unpaired = {}
lik = {k: [] for k, _, _ in rows}
ours = {k: [] for k, _, _ in rows}
levels = {k: [] for k, _, _ in rows}
for r in range(1, rounds + 1):
    for line in open(f"{out}/likwid-{r}.txt"):
        k, v = line.split()
        lik[k].append(float(v) / 1e3)  # MFlops/s, MByte/s (1e6) -> G (1e9)
    m = json.load(open(f"{out}/roofline-{r}.json"))
    t = m["threads"]
    def peak(p):
        v = [x["value"]["median"] for x in m["peaks"] if x["precision"] == p and x["threads"] == t]
        return max(v) / 1e9 if v else math.nan
    def level(kind, field):
        v = [l[field] for l in m["levels"] if l["kind"] == kind and l.get(field) is not None]
        return v[0] / 1e9 if v else math.nan
    def point(kernel, ws):
        pts = [p for p in m["sweep"] if p["kernel"] == kernel]
        if not pts:
            return math.nan
        if ws is None:
            ws = max(p["working_set"] for p in pts)
        near = min(pts, key=lambda p: abs(math.log(p["working_set"] / ws)))
        return near["bandwidth"]["median"] / 1e9
    for k, v in [("fp32", peak("fp32")), ("fp64", peak("fp64")), ("l1", point("read", 32768)),
                 ("l2", point("read", 524288)), ("l3", point("read", l3_bytes)),
                 ("dram", point("read", None)), ("copy", point("copy", None)),
                 ("triad", point("triad", None))]:
        ours[k].append(v)
    for k, v in [("fp32", peak("fp32")), ("fp64", peak("fp64")), ("l1", level("l1", "read")),
                 ("l2", level("l2", "read")), ("l3", level("l3", "read")),
                 ("dram", level("main", "read")), ("copy", level("main", "copy")),
                 ("triad", level("main", "triad"))]:
        levels[k].append(v)
    for x in m["peaks"]:
        if x["precision"] in ("bf16", "fp16", "int8") and x["threads"] == t:
            unpaired.setdefault(f'{x["precision"]} {x["kernel"]} ({x["flop_per_instruction"]:g} per instruction)', []).append(x["value"]["median"] / 1e9)
def clean(v):
    return [x for x in v if not math.isnan(x)]
def med(v):
    v = clean(v)
    return statistics.median(v) if v else math.nan
def best(v):
    v = clean(v)
    return max(v) if v else math.nan
def ratio(a, b):
    return a / b if b and not math.isnan(a) and not math.isnan(b) else math.nan
print(f"roofline measure vs likwid-bench ({kernels}), {threads} threads, {rounds} rounds")
print(f"{'figure':<27}{'unit':>8} {'roofline':>9} {'likwid':>9} {'ratio':>6}   "
      f"{'median:':<8}{'roofline':>9} {'likwid':>9} {'ratio':>6}  bar 0.95   chip file (best)")
worst = math.inf
for k, name, unit in rows:
    a, b = best(ours[k]), best(lik[k])
    r = ratio(a, b)
    am, bm = med(ours[k]), med(lik[k])
    verdict = "n/a" if math.isnan(r) else ("ok" if r >= 0.95 else "BELOW")
    if not math.isnan(r):
        worst = min(worst, r)
    lv = best(levels[k])
    print(f"{name:<27}{unit:>8} {a:>9.1f} {b:>9.1f} {r:>6.3f}   {'':<8}{am:>9.1f} {bm:>9.1f} "
          f"{ratio(am, bm):>6.3f}  {verdict:<8}   {lv:>7.1f} ({ratio(lv, b):.3f})")
for name, v in sorted(unpaired.items()):
    print(f"{name}: best {best(v):.1f} G/s (no likwid-bench kernel to compare)")
print(f"lowest ratio (best of {rounds}): {worst:.3f}" if worst != math.inf
      else "no ratio could be computed")
print(f"(logs and JSON in {out})")
EOF
