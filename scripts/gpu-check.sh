#!/usr/bin/env bash
# The GPU measurement on a machine with an NVIDIA GPU, in under 5 minutes, against a datasheet.
#
# Builds roofline with `--features cuda` (CUDA is loaded at run time: the driver, cuBLAS,
# cuBLASLt and NVRTC libraries must be installed, no toolkit is needed to build), runs
# `roofline measure --gpu`, writes gpu.toml / gpu.svg / gpu.json into OUT (default ./gpu-check),
# and prints each measured figure beside the datasheet's. Default datasheet: NVIDIA H200 SXM
# (4.8 TB/s HBM3e; 989.5 TFLOP/s dense bf16/fp16, 494.7 tf32, 1979 fp8 and int8, 67 fp64,
# 67 fp32 — https://www.nvidia.com/en-us/data-center/h200/, sparse figures halved); set
# DATASHEET_BW (B/s) and DATASHEET_BF16 (FLOP/s) for another chip.
#
# Usage: scripts/gpu-check.sh [--quick]      (env: DEVICE=0, OUT=gpu-check)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-check}
DEVICE=${DEVICE:-0}
DATASHEET_BW=${DATASHEET_BW:-4.8e12}
DATASHEET_BF16=${DATASHEET_BF16:-989.5e12}

# No GPU, no build: stop at once, before minutes of compiling.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  nvidia-smi -L
elif ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  echo "nvidia-smi does not answer, but /dev/nvidia* exists: trying" >&2
else
  echo "gpu-check: no NVIDIA GPU on this machine (nvidia-smi finds none, no /dev/nvidia*): nothing to measure" >&2
  exit 1
fi
mkdir -p "$OUT"
echo "building roofline --features cuda (release)" >&2
cargo build --release -q -p roofline-cli --features cuda
start=$(date +%s)
timeout 290 target/release/roofline measure --gpu --device "$DEVICE" "$@" \
  --out "$OUT/gpu.toml" --plot "$OUT/gpu.svg" --force --format json >"$OUT/gpu.json"
target/release/roofline hardware show "$OUT/gpu.toml" || true
echo "measured in $(( $(date +%s) - start )) s" >&2

# The kernel suite on the GPU (CUDA C by NVRTC, cuBLAS GEMMs), predicted from the roofline just
# measured: per kernel measured vs predicted time and error, the median error, the fused chain.
echo "timing the kernel suite on the GPU" >&2
timeout 290 target/release/roofline measure kernels --gpu --device "$DEVICE" --hardware "$OUT/gpu.toml" "$@" \
  --plot "$OUT/kernels.svg" --force | tee "$OUT/kernels.txt" || echo "measure kernels --gpu failed" >&2

python3 - "$OUT/gpu.json" "$DATASHEET_BW" "$DATASHEET_BF16" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
bw_ds, bf16_ds = float(sys.argv[2]), float(sys.argv[3])
print(f"{m['processor']}: {m['threads']} SMs, clock {m['clock_hz']/1e6:.0f} MHz, {m['isa']}")
print(f"{'figure':<58} {'measured':>14} {'theoretical':>14}")
for p in m["peaks"]:
    t = p["theoretical"]
    print(f"{p['kernel']:<58} {p['value']['median']/1e12:>9.1f} TFLOP/s {t/1e12 if t else float('nan'):>9.1f}")
for l in m["levels"]:
    t = l.get("theoretical")
    print(f"{l['name'] + ' read':<58} {l['read']/1e12:>10.3f} TB/s {t/1e12 if t else float('nan'):>10.3f}")
main = [l for l in m["levels"] if l["kind"] == "main"]
bf16 = [p["value"]["median"] for p in m["peaks"] if p["precision"] == "bf16"]
print()
if main:
    print(f"HBM read {main[0]['read']/1e12:.3f} TB/s = {100*main[0]['read']/bw_ds:.1f} % of the datasheet's {bw_ds/1e12:.2f} TB/s")
if bf16:
    print(f"bf16 GEMM {max(bf16)/1e12:.1f} TFLOP/s = {100*max(bf16)/bf16_ds:.1f} % of the datasheet's {bf16_ds/1e12:.1f} TFLOP/s dense")
for r in m["rejected"]:
    print("rejected:", r)
for n in m["notes"]:
    print("note:", n)
EOF
