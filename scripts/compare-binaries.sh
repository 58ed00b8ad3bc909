#!/usr/bin/env bash
# Run two roofline binaries on the same long list of CLI invocations and compare everything they
# produce: stdout, stderr, the exit code, and every file the command writes (plots, HTML reports,
# chip files). Meant for refactors that must not change the output.
#
# Usage: scripts/compare-binaries.sh OLD NEW [OUTDIR]
#
#   OLD, NEW  the two `roofline` executables (paths, or names on $PATH)
#   OUTDIR    where the outputs go (created; must be empty if it exists). Default: a fresh
#             `mktemp -d` folder, removed at the end when every case is identical (KEEP=1 keeps it).
#
# Environment:
#   ONLY=REGEX        run only the cases whose command line (as printed, without `roofline `)
#                     matches the extended regular expression REGEX (bash =~)
#   QUIET=1           print only the cases that differ (and the final count)
#   LIST=1            print the numbered cases and exit, running nothing
#   DIFF_LINES=40     lines of unified diff printed per differing case (the full diff is kept
#                     in OUTDIR/diffs/NNNN.diff)
#   CASE_TIMEOUT=120  seconds one invocation may run (a timeout is recorded as exit code 124
#                     and compared like any other)
#   SHARED=DIR        the shared data folder (default: ../shared beside the repository)
#   TMPDIR=DIR        where the mktemp -d folder goes (default /tmp). The outputs are about
#                     70 MB in 8,000 small files: on a busy disk TMPDIR=/dev/shm saves the
#                     half minute that writing and removing them can take.
#
# Each case runs twice, once per binary, in its own empty working folder
# OUTDIR/{old,new}/NNNN/files (so relative output paths such as `--plot roofline.svg` land there),
# with stdin from /dev/null; OUTDIR/{old,new}/NNNN/{stdout,stderr,exit} hold the rest. A case
# "differs" when `diff -ruN old/NNNN new/NNNN` finds anything. A failing invocation (exit 2, a
# clap usage error, even a crash) is a result like any other: its exit code and stderr are
# compared, it is never a script error.
#
# Normalisation (the only things rewritten before comparing; nothing else is):
#   - both binaries are run through a symlink named `roofline` (OUTDIR/bin/{old,new}/roofline),
#     so the program name clap prints in usage lines and errors is the same for both;
#   - in every text file of a case (stdout, stderr, written files), the case's absolute working
#     folder is replaced by `<cwd>`, the symlink folder by `<bin>`, and OUTDIR by `<out>`
#     (absolute paths only appear where an input file under OUTDIR/in is named).
# With OLD = NEW (the same release binary) every case is identical: the commands print no date,
# host, timing or random value (`measure` and `measure kernels` do, and are not run: they time
# this machine). Only `measure --help` is run for them.
#
# Exit: 0 when every case is identical, 1 when any differs, 2 on a usage error of this script.
#
# The cases are at the end of this file, one invocation per line, grouped by command; a few
# lines sit in small loops over presets, chips or workloads. To add one: `c ARGS...` (ARGS as
# after `roofline`), or `cseed NAME ARGS...` to start the case with a file NAME already in its
# working folder (to test that outputs are not overwritten without --force).
set -u

usage() {
  awk 'NR > 1 && /^# Each case/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2
  exit 2
}
[ $# -ge 2 ] && [ $# -le 3 ] || usage

resolve_bin() {
  local p
  p=$(command -v -- "$1") || { echo "error: \`$1\` is not an executable" >&2; exit 2; }
  [ -x "$p" ] && [ -f "$p" ] || { echo "error: \`$1\` is not an executable file" >&2; exit 2; }
  (cd "$(dirname -- "$p")" && printf '%s/%s\n' "$(pwd -P)" "$(basename -- "$p")")
}
OLD=$(resolve_bin "$1") || exit 2
NEW=$(resolve_bin "$2") || exit 2

REPO=$(cd "$(dirname -- "$0")/.." && pwd -P)
SHARED=${SHARED:-$(cd "$REPO/../shared" 2>/dev/null && pwd -P)}
[ -n "$SHARED" ] && [ -d "$SHARED/refs/samples" ] || {
  echo "error: shared data folder not found (looked for $REPO/../shared/refs/samples)" >&2
  echo "hint: set SHARED=/path/to/shared" >&2
  exit 2
}
SAMPLES=$SHARED/refs/samples
FIXTURES=$REPO/crates/inputs/tests/fixtures
SMALL=$REPO/scripts/small-llama
ONLY=${ONLY:-}
QUIET=${QUIET:-0}
DIFF_LINES=${DIFF_LINES:-40}
CASE_TIMEOUT=${CASE_TIMEOUT:-120}
KEEP=${KEEP:-0}
LIST=${LIST:-0}

if [ $# -eq 3 ]; then
  OUT=$3
  if [ -e "$OUT" ] && [ -n "$(ls -A -- "$OUT" 2>/dev/null)" ]; then
    echo "error: OUTDIR \`$OUT\` exists and is not empty" >&2
    echo "hint: give a new or empty folder, or none (a mktemp -d folder is used)" >&2
    exit 2
  fi
  mkdir -p -- "$OUT" || exit 2
  OUT=$(cd "$OUT" && pwd -P)
  KEEP=1
else
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/compare-binaries.XXXXXX") || exit 2
  OUT=$(cd "$OUT" && pwd -P)
fi
case "$OUT/" in
  "$REPO"/*) echo "warning: OUTDIR is inside the repository ($OUT)" >&2 ;;
esac

mkdir -p "$OUT/bin/old" "$OUT/bin/new" "$OUT/old" "$OUT/new" "$OUT/diffs" "$OUT/in"
ln -s "$OLD" "$OUT/bin/old/roofline"
ln -s "$NEW" "$OUT/bin/new/roofline"
trap 'echo "interrupted; outputs so far in $OUT" >&2; exit 130' INT TERM

# ---------------------------------------------------------------------------------------------
# Bad inputs, made here (never in the repository or in shared/).
IN=$OUT/in
printf '{"hidden_size": 4096, "num_hidden_layers": 32,' >"$IN/truncated-config.json"
llama_config_with() { # a Llama-2-7B config with one field changed: $1 = sed expression
  sed -e "$1" "$SHARED/models/meta-llama--Llama-2-7b-hf/config.json"
}
llama_config_with 's/"num_attention_heads": *[0-9]*/"num_attention_heads": 0/' >"$IN/zero-heads-config.json"
llama_config_with '/"hidden_size"/d' >"$IN/no-hidden-config.json"
mkdir -p "$IN/model-folder" && cp "$SHARED/models/meta-llama--Llama-2-7b-hf/config.json" "$IN/model-folder/"
head -c 1500 "$SAMPLES/SYNTHETIC_ncu_csv_format_illustration.csv" >"$IN/truncated-ncu.csv"
sed 's/"Metric Value"/"Metric Valu"/' "$SAMPLES/SYNTHETIC_ncu_csv_format_illustration.csv" >"$IN/wrong-columns-ncu.csv"
sed 's/"nsecond"/"parsec"/; s/"usecond"/"parsec"/; s/"msecond"/"parsec"/' \
  "$SAMPLES/SYNTHETIC_ncu_csv_format_illustration.csv" >"$IN/unknown-unit-ncu.csv"
printf '{"traceEvents": []}\n' >"$IN/no-kernels-trace.json"
head -c 2000 "$SAMPLES/torch_profiler_trace_excerpt_hta_backward_thread.json" >"$IN/truncated-trace.json"
head -n 20 "$SAMPLES/mixbench_cuda_ro_GTX-1060.log" >"$IN/truncated-mixbench.log"
: >"$IN/empty.txt"
sed 's/^bandwidth_bytes_per_s = .*$/bandwidth_bytes_per_s = "fast"/' \
  "$REPO/crates/inputs/catalog/hardware/h100-sxm.toml" >"$IN/bad-chip.toml"
printf 'id = "half"\nname = "half a chip"\n' >"$IN/incomplete-chip.toml"

# ---------------------------------------------------------------------------------------------
# Case registry.
CASES=()
SEEDS=()
LABELS=()
c() {
  local q="" a l=""
  [ $# -eq 0 ] || printf -v q '%q ' "$@"
  for a in "$@"; do # the printed form: plain words as they are, the rest shell-quoted
    if [[ $a =~ ^[][A-Za-z0-9_./,=:+@%-]+$ ]]; then l+="$a "; else printf -v l '%s%q ' "$l" "$a"; fi
  done
  CASES+=("$q"); SEEDS+=(""); LABELS+=("${l% }")
}
cseed() { local seed=$1; shift; c "$@"; SEEDS[${#SEEDS[@]} - 1]=$seed; }

# Printed form of a case, into $label: the long paths shortened to their variable names.
show() {
  local s=$1
  s=${s//"$IN"/\$IN}
  s=${s//"$SAMPLES"/\$SAMPLES}
  s=${s//"$FIXTURES"/\$FIXTURES}
  s=${s//"$SMALL"/\$SMALL}
  s=${s//"$SHARED"/\$SHARED}
  s=${s//"$REPO"/\$REPO}
  label=$s
}

# sed pattern for a literal string
lit() { printf '%s' "$1" | sed 's/[][\.*^$|/]/\\&/g'; }

run_case() { # run_case NNNN SEED ARGS...: both binaries, then the normalisation
  local n=$1 seed=$2 side d f files; shift 2
  mkdir -p "$OUT/old/$n/files" "$OUT/new/$n/files"
  for side in old new; do
    d=$OUT/$side/$n
    if [ -n "$seed" ]; then printf 'existing file, not written by roofline\n' >"$d/files/$seed"; fi
    cd "$d/files" || exit 2
    timeout "$CASE_TIMEOUT" "$OUT/bin/$side/roofline" "$@" >"$d/stdout" 2>"$d/stderr" </dev/null
    printf '%s\n' "$?" >"$d/exit"
  done
  cd "$OUT" || exit 2
  files=$(grep -rlIF -- "$OUT" "$OUT/old/$n" "$OUT/new/$n" 2>/dev/null) || return 0
  while IFS= read -r f; do
    case $f in "$OUT/old/"*) side=old ;; *) side=new ;; esac
    sed -i -e "s|$(lit "$OUT/$side/$n/files")|<cwd>|g" -e "s|$(lit "$OUT/bin/$side")|<bin>|g" \
      -e "s|$(lit "$OUT")|<out>|g" "$f"
  done <<<"$files"
}

# ---------------------------------------------------------------------------------------------
# The cases.
PRESETS="llama-2-7b llama-2-13b llama-2-70b llama-3.1-8b llama-3.1-70b mixtral-8x7b qwen3-30b-a3b deepseek-v3 gpt2 gpt2-xl opt-6.7b"
CHIPS="a10 a100-pcie-40gb a100-pcie-80gb a100-sxm-40gb a100-sxm-80gb a6000 b200 gaudi2 gaudi3 gb200 h100-nvl h100-pcie h100-sxm h200 l4 l40s m1-max m2-ultra m3-max mi250x mi300x mi325x rtx-3090 rtx-4090 t4 tpu-v4 tpu-v5e tpu-v5p v100"
CONFIGS="Qwen--Qwen3-30B-A3B deepseek-ai--DeepSeek-V3 facebook--opt-6.7b meta-llama--Llama-2-13b-hf meta-llama--Llama-2-70b-chat-hf meta-llama--Llama-2-7b-hf meta-llama--Meta-Llama-3.1-70B meta-llama--Meta-Llama-3.1-8B mistralai--Mixtral-8x7B-v0.1 openai-community--gpt2 openai-community--gpt2-xl"

# Every operator of both stages (prefill and decode names, in forward order, once each).
OPS_LLAMA="embed_tokens input_layernorm q_proj k_proj v_proj rotary_emb kv_cache_write qk_matmul softmax sv_matmul o_proj attn_residual_add post_attention_layernorm gate_proj up_proj act_fn act_mul down_proj mlp_residual_add norm lm_head"
# DeepSeek-V3's MLA has kv_b_proj in prefill only and q_absorb, o_absorb in decode only (below).
OPS_DEEPSEEK_BOTH="embed_tokens input_layernorm q_a_proj q_a_layernorm q_b_proj kv_a_proj_with_mqa kv_a_layernorm rotary_emb kv_cache_write qk_matmul softmax sv_matmul o_proj attn_residual_add post_attention_layernorm gate_proj up_proj act_fn act_mul down_proj gate router_topk experts.gate_proj experts.up_proj experts.act_fn experts.act_mul experts.down_proj shared_experts.gate_proj shared_experts.up_proj shared_experts.act_fn shared_experts.act_mul shared_experts.down_proj moe_combine mlp_residual_add norm lm_head"
# A selection for the other presets: their own operator names and the kinds they have.
explain_ops() {
  case $1 in
    llama-2-13b|llama-2-70b|llama-3.1-8b|llama-3.1-70b) echo "q_proj k_proj kv_cache_write qk_matmul softmax gate_proj down_proj lm_head" ;;
    mixtral-8x7b) echo "q_proj qk_matmul gate router_topk experts.w1 experts.w3 experts.act_mul experts.w2 moe_combine lm_head" ;;
    qwen3-30b-a3b) echo "q_proj q_norm k_norm qk_matmul router_topk experts.gate_proj experts.down_proj moe_combine lm_head" ;;
    gpt2|gpt2-xl) echo "wte wpe embed_add input_layernorm c_attn qk_matmul attn.c_proj mlp.c_fc act_fn mlp.c_proj lm_head" ;;
    opt-6.7b) echo "embed_tokens embed_positions embed_add q_proj out_proj fc1 act_fn fc2 lm_head" ;;
  esac
}

# --- the binary itself: help and version (the help text is part of the interface) -------------
c --help
c --version
c help
c help analyze
for sub in analyze hardware models op report fuse measure mfu mbu sweep import; do
  c "$sub" --help
done
c measure kernels --help
for sub in list show compare; do c hardware "$sub" --help; done
for kind in gemm attention softmax rmsnorm layernorm elementwise; do c op "$kind" --help; done
c                                   # no command: usage, exit 2
c frobnicate                        # unknown command
c op                                # missing op kind

# --- models -----------------------------------------------------------------------------------
c models
c models --format json
c models --format csv

# --- hardware list / show / compare -----------------------------------------------------------
c hardware list
c hardware list --format json
c hardware list --format csv
for chip in $CHIPS; do
  c hardware show "$chip"
done
for chip in a6000 h100-sxm h200 mi300x tpu-v5e m3-max t4; do
  c hardware show "$chip" --format json
  c hardware show "$chip" --format csv
  c hardware show "$chip" --plot chip.svg
done
c hardware show h100-sxm --plot chip.png
c hardware show "$REPO/crates/inputs/catalog/hardware/h100-sxm.toml"
c hardware show "$SMALL/this-cpu.toml"
c hardware show "$SMALL/this-cpu.toml" --format json --plot chip.svg
c hardware compare a100-sxm-80gb h100-sxm h200
c hardware compare a100-sxm-80gb h100-sxm h200 --format json
c hardware compare a100-sxm-80gb h100-sxm h200 --format csv
c hardware compare a100-sxm-80gb h100-sxm h200 --plot chips.svg
c hardware compare a100-sxm-80gb h100-sxm h200 --plot chips.png
c hardware compare a6000 h100-sxm h200 mi300x --precision bf16,fp8 --plot chips.svg
c hardware compare mi300x mi325x tpu-v5p gaudi3 --format json
c hardware compare a6000 "$SMALL/this-cpu.toml"
c hardware show nope-gpu                                   # unknown chip: did you mean
c hardware show h100                                       # near miss
c hardware show "$IN/bad-chip.toml"                        # malformed chip file
c hardware show "$IN/incomplete-chip.toml"                 # missing fields
c hardware show "$IN/missing-chip.toml"                    # no such file
c hardware compare h100-sxm                                # one chip only: usage error
c hardware compare h100-sxm h200 --precision fp5 --plot chips.svg
cseed chip.svg hardware show h100-sxm --plot chip.svg      # exists: not overwritten
cseed chip.svg hardware show h100-sxm --plot chip.svg --force
c hardware show h100-sxm --plot chip.pdf                   # unknown plot extension

# --- analyze: every preset, both stages, workloads, formats, precisions, chips ----------------
c analyze
c analyze --format json
c analyze --format csv
for m in $PRESETS; do
  c analyze "$m"
  c analyze "$m" --format json
  c analyze "$m" --format csv
  # prefill: batch x prompt length (JSON: every number at full precision)
  for b in 1 8 64; do
    for s in 512 2048 32768; do
      c analyze "$m" --stage prefill --batch "$b" --seq-len "$s" --format json
    done
  done
  # decode: batch x context
  for b in 1 8 64; do
    for ctx in 2048 8192; do
      c analyze "$m" --stage decode --batch "$b" --context "$ctx" --format json
    done
  done
  c analyze "$m" --stage prefill --batch 8 --seq-len 32768
  c analyze "$m" --stage decode --batch 64 --context 8192 --format csv
  c analyze "$m" --stage both --batch 8 --seq-len 512 --context 8192 --format csv
  # chips
  for chip in h100-sxm h200 mi300x; do
    c analyze "$m" --hardware "$chip" --format json
  done
  c analyze "$m" --hardware h100-sxm --stage decode --batch 8 --context 8192
  c analyze "$m" --hardware a100-sxm-80gb --stage prefill --seq-len 512 --format csv
  # attention, quantization, precisions
  c analyze "$m" --flash-attention
  c analyze "$m" --flash-attention --stage prefill --batch 1 --seq-len 32768 --format json
  c analyze "$m" --flash-attention --stage decode --batch 64 --context 8192 --format json
  c analyze "$m" --weight-precision int4 --group-size 128
  c analyze "$m" --weight-precision int4 --group-size 128 --format json
  c analyze "$m" --weight-precision int4 --group-size 128 --hardware h100-sxm --stage decode --batch 8 --format json
  c analyze "$m" --weight-precision int4 --group-size 128 --scale-precision bf16 --zero-point-precision int4 --format json
  c analyze "$m" --weight-precision int8 --format json
  c analyze "$m" --kv-precision fp8 --hardware h100-sxm
  c analyze "$m" --kv-precision fp8 --hardware h100-sxm --stage decode --batch 64 --context 8192 --format json
  c analyze "$m" --kv-precision fp8 --format json                       # a6000: no fp8 peak
  c analyze "$m" --weight-precision int4 --kv-precision fp8 --hardware h100-sxm --format json
  c analyze "$m" --w8a8
  c analyze "$m" --w8a8 --hardware h100-sxm --format json
  c analyze "$m" --w8a8 --flash-attention --stage prefill --batch 8 --format json
  c analyze "$m" --precision fp32 --format json
  c analyze "$m" --precision fp16 --hardware mi300x --format json
  c analyze "$m" --precision fp8 --hardware h100-sxm --format json
  c analyze "$m" --launch-overhead 7us --format json
  # fusion
  for f in eager compiled max; do
    c analyze "$m" --hardware h100-sxm --fusion "$f"
  done
  c analyze "$m" --hardware h100-sxm --fusion max --format json
  c analyze "$m" --hardware h100-sxm --fusion compiled --format csv
  c analyze "$m" --fusion max --flash-attention --stage decode --batch 8 --launch-overhead 0.5ms
  # plots
  c analyze "$m" --plot roofline.svg
  c analyze "$m" --hardware h100-sxm --stage decode --batch 64 --plot roofline.svg --format json
  # explain: a selection of operators
  for op in $(explain_ops "$m"); do
    c analyze "$m" --explain "$op"
  done
  c analyze "$m" --flash-attention --explain attention
done
# explain: every operator of Llama-2-7B and DeepSeek-V3, both stages
for op in $OPS_LLAMA; do
  c analyze llama-2-7b --explain "$op"
done
for op in $OPS_DEEPSEEK_BOTH; do
  c analyze deepseek-v3 --explain "$op"
done
c analyze deepseek-v3 --stage prefill --explain kv_b_proj                   # prefill only
c analyze deepseek-v3 --stage decode --explain q_absorb                     # decode only (absorbed MLA)
c analyze deepseek-v3 --stage decode --explain o_absorb
c analyze deepseek-v3 --explain q_absorb                                    # both stages: not in prefill
c analyze --stage decode --explain q_proj                                  # README
c analyze llama-2-7b --stage prefill --batch 8 --seq-len 512 --explain qk_matmul
c analyze llama-2-7b --hardware h100-sxm --weight-precision int4 --group-size 128 --explain q_proj
c analyze llama-2-7b --hardware h100-sxm --kv-precision fp8 --stage decode --explain kv_cache_write
c analyze llama-2-7b --w8a8 --explain down_proj
c analyze llama-2-7b --fusion max --explain q_proj
c analyze llama-2-7b --explain q_proj --format json
c analyze deepseek-v3 --hardware h200 --stage decode --batch 64 --context 8192 --explain experts.gate_proj
c analyze deepseek-v3 --flash-attention --stage prefill --seq-len 32768 --explain attention
c analyze deepseek-v3 --explain q_proj                                     # not in MLA: did you mean
# README examples, verbatim
c analyze "$SHARED/models/meta-llama--Llama-2-7b-hf/config.json" --hardware a6000 --stage prefill --seq-len 2048
c analyze llama-3.1-8b --hardware h100-sxm --stage decode --batch 8 --context 4096 --flash-attention
c analyze llama-2-70b --hardware h100-sxm --weight-precision int4 --kv-precision fp8 --format json
c analyze llama-2-7b --hardware h100-sxm --fusion max
c analyze --plot roofline.svg
c analyze --plot roofline.png
c analyze --plot docs-plot.svg --stage both --hardware a6000 --format csv
# every real config.json, as a file and as a folder
for cfg in $CONFIGS; do
  c analyze "$SHARED/models/$cfg/config.json"
  c analyze "$SHARED/models/$cfg" --hardware h100-sxm --format json
done
c analyze "$IN/model-folder" --stage decode
# chip files
c analyze llama-2-7b --hardware "$SMALL/this-cpu.toml"
c analyze llama-2-7b --hardware "$REPO/crates/inputs/catalog/hardware/mi300x.toml" --format json
c analyze "$SMALL/config.json" --hardware "$SMALL/this-cpu.toml" --precision fp32 --stage prefill --seq-len 64
c analyze "$SMALL/config.json" --hardware "$SMALL/this-cpu.toml" --precision fp32 --stage prefill --seq-len 64 --format json
# every chip once (defaults), in JSON; the chips without a bf16 peak fail (exit 2), and run in
# a precision they have
for chip in $CHIPS; do
  c analyze llama-2-7b --hardware "$chip" --format json
done
c analyze llama-2-7b --hardware m1-max --precision fp32
c analyze llama-2-7b --hardware m2-ultra --precision fp32 --format json
c analyze llama-2-7b --hardware t4 --precision fp16 --format json
c analyze llama-2-7b --hardware v100 --precision fp16
# bad input: one error line, a hint, exit 2
c analyze nope-model
c analyze llama-2-8b                                                       # near miss
c analyze llama-2-7b --hardware nope-gpu
c analyze llama-2-7b --hardware "$IN/bad-chip.toml"
c analyze llama-2-7b --hardware "$IN/incomplete-chip.toml"
c analyze llama-2-7b --batch 0
c analyze llama-2-7b --seq-len 0 --stage prefill
c analyze llama-2-7b --context 0 --stage decode
c analyze llama-2-7b --batch -1
c analyze llama-2-7b --precision fp5
c analyze llama-2-7b --weight-precision int3
c analyze llama-2-7b --group-size 0 --weight-precision int4
c analyze llama-2-7b --stage sideways
c analyze llama-2-7b --format yaml
c analyze llama-2-7b --fusion extreme
c analyze llama-2-7b --launch-overhead 7parsecs
c analyze llama-2-7b --explain nope
c analyze llama-2-7b --profile "$IN/missing-trace.json"
c analyze "$IN/truncated-config.json"
c analyze "$IN/zero-heads-config.json"
c analyze "$IN/no-hidden-config.json"
c analyze "$IN/empty.txt"
c analyze "$IN/no-such-config.json"
c analyze llama-2-7b --plot roofline.pdf
cseed roofline.svg analyze --plot roofline.svg
cseed roofline.svg analyze --plot roofline.svg --force

# --- report --out html ------------------------------------------------------------------------
c report --out report.html
for m in $PRESETS; do
  c report "$m" --out report.html
done
c report llama-3.1-8b --hardware h100-sxm --out report.html             # README
c report llama-2-7b --stage decode --batch 8 --context 8192 --hardware h200 --out report.html
c report llama-2-7b --explain qk_matmul --out report.html
c report llama-2-7b --fusion max --hardware h100-sxm --out report.html
c report llama-2-7b --flash-attention --weight-precision int4 --group-size 128 --kv-precision fp8 --hardware h100-sxm --out report.html
c report mixtral-8x7b --w8a8 --hardware mi300x --stage prefill --seq-len 32768 --out report.html
c report deepseek-v3 --hardware h200 --fusion compiled --explain experts.down_proj --out report.html
c report llama-2-7b --out report.html --plot roofline.svg
c report "$SMALL/config.json" --hardware "$SMALL/this-cpu.toml" --precision fp32 --stage prefill --seq-len 64 --profile "$FIXTURES/small-llama-cpu-trace.json" --out report.html
c report llama-2-7b                                                       # --out missing
c report llama-2-7b --explain nope --out report.html
cseed report.html report --out report.html
cseed report.html report --out report.html --force

# --- sweep ------------------------------------------------------------------------------------
for m in $PRESETS; do
  c sweep "$m"
  c sweep "$m" --format json
  c sweep "$m" --stage both --batch 1,8,64 --seq-len 512,2048,32768 --context 2048,8192 --format json
  c sweep "$m" --stage prefill --batch 1..64 --seq-len 512..32768
  c sweep "$m" --stage decode --batch 1,8,64 --context 2048,8192 --format csv
  c sweep "$m" --precision bf16,fp8 --hardware h100-sxm,h200,mi300x --batch 1,8,64 --format json
  c sweep "$m" --weight-precision int4 --kv-precision fp8 --batch 1,8,64 --format json
  c sweep "$m" --flash-attention --stage both --batch 1,8,64 --format json
  c sweep "$m" --stage both --batch 1,64 --plot sweep.svg
done
c sweep llama-2-7b --hardware h100-sxm --stage decode --batch 1,8,32,128 --plot sweep.svg   # README
c sweep llama-2-7b --hardware h100-sxm --stage decode --batch 1,8,32,128 --plot sweep.png
c sweep llama-2-7b --hardware a6000,a100-sxm-80gb,h100-sxm,h200,mi300x,b200 --stage both --format json
c sweep llama-2-7b --precision fp32,bf16,fp16,fp8,int8 --hardware h100-sxm --format json
c sweep llama-2-7b --batch 1..1024 --context 1024..32768 --format csv
c sweep llama-2-7b --hardware "$SMALL/this-cpu.toml" --precision fp32 --batch 1,2,4
c sweep "$SHARED/models/mistralai--Mixtral-8x7B-v0.1/config.json" --batch 1..256 --format json
c sweep llama-2-7b --batch 0
c sweep llama-2-7b --batch 8..1
c sweep llama-2-7b --batch one
c sweep llama-2-7b --hardware h100-sxm,nope-gpu
c sweep llama-2-7b --hardware a6000 --precision fp8                     # no fp8 peak
c sweep llama-2-7b --precision bf16,fp5
cseed sweep.svg sweep --plot sweep.svg
cseed sweep.svg sweep --plot sweep.svg --force

# --- op: every kind, with the README's flags, --explain, formats, plots --------------------------
c op gemm --m 1 --n 4096 --k 4096 --precision bf16 --hardware h100-sxm     # README
c op gemm --m 1 --n 4096 --k 4096 --precision bf16 --hardware h100-sxm --explain
c op gemm --m 1 --n 4096 --k 4096 --precision bf16 --hardware h100-sxm --format json
c op gemm --m 1 --n 4096 --k 4096 --precision bf16 --hardware h100-sxm --format csv
c op gemm --m 1 --n 4096 --k 4096 --precision bf16 --hardware h100-sxm --plot op.svg
c op gemm --m 1 --n 4096 --k 4096 --plot op.png
c op gemm --m 2048 --n 11008 --k 4096
c op gemm --m 2048 --n 11008 --k 4096 --bias --explain
c op gemm --m 2048 --n 11008 --k 4096 --bias --format json
for p in fp32 tf32 bf16 fp16 fp8 int8 int4; do   # int4: no H100 peak, exit 2
  c op gemm --m 512 --n 4096 --k 4096 --precision "$p" --hardware h100-sxm --format json
done
c op gemm --m 512 --n 4096 --k 4096 --precision int4 --hardware a6000 --explain
c op gemm --m 512 --n 4096 --k 4096 --precision int4 --hardware a6000 --format json
c op gemm --m 64 --n 8192 --k 8192 --hardware "$SMALL/this-cpu.toml" --precision fp32 --explain
c op gemm --m 1 --n 4096 --k 4096 --precision fp8 --hardware a6000        # no fp8 peak
c op gemm --m 0 --n 4096 --k 4096
c op gemm --m 1 --n 4096                                                  # --k missing
c op gemm --m 1 --n 4096 --k 4096 --precision fp5
c op attention --heads 32 --kv-heads 8 --head-dim 128 --q-len 1 --kv-len 4096 --causal --fused   # README
c op attention --heads 32 --kv-heads 8 --head-dim 128 --q-len 1 --kv-len 4096 --causal --fused --explain
c op attention --heads 32 --kv-heads 8 --head-dim 128 --q-len 1 --kv-len 4096 --causal --fused --format json
c op attention --heads 32 --kv-heads 8 --head-dim 128 --q-len 1 --kv-len 4096
c op attention --heads 32 --kv-heads 8 --head-dim 128 --q-len 1 --kv-len 4096 --explain
c op attention --heads 32 --head-dim 128 --q-len 2048 --causal
c op attention --heads 32 --head-dim 128 --q-len 2048 --causal --fused --explain
c op attention --heads 32 --head-dim 128 --q-len 2048 --causal --fused --format csv
c op attention --batch 8 --heads 64 --kv-heads 8 --head-dim 128 --q-len 1 --kv-len 8192 --kv-precision fp8 --hardware h100-sxm --fused --format json
c op attention --batch 8 --heads 64 --kv-heads 8 --head-dim 128 --q-len 1 --kv-len 8192 --kv-precision fp8 --hardware h100-sxm --explain
c op attention --heads 128 --head-dim 192 --q-len 32768 --causal --fused --hardware h200 --plot op.svg
c op attention --heads 32 --kv-heads 5 --head-dim 128 --q-len 1                  # heads not a multiple
c op attention --heads 0 --head-dim 128 --q-len 1
c op softmax --rows 32768 --cols 2048
c op softmax --rows 32768 --cols 2048 --explain
c op softmax --rows 32768 --cols 2048 --no-scale-mask --explain
c op softmax --rows 32768 --cols 2048 --no-scale-mask --format json
c op softmax --rows 4096 --cols 4096 --precision fp32 --hardware mi300x --plot op.svg
c op softmax --rows 0 --cols 2048
c op rmsnorm --rows 2048 --cols 4096
c op rmsnorm --rows 2048 --cols 4096 --explain
c op rmsnorm --rows 2048 --cols 4096 --format json
c op rmsnorm --rows 1 --cols 8192 --precision fp32 --hardware h100-sxm --format csv --plot op.svg
c op layernorm --rows 2048 --cols 4096
c op layernorm --rows 2048 --cols 4096 --explain
c op layernorm --rows 2048 --cols 1600 --precision fp16 --hardware a100-sxm-80gb --format json
c op layernorm --rows 2048 --cols 4096 --plot op.svg
c op elementwise --elements 8388608
c op elementwise --elements 8388608 --explain
c op elementwise --inputs 1 --elements 16777216 --flops-per-element 4 --explain
c op elementwise --elements 16777217                                             # above the limit
c op elementwise --inputs 3 --elements 1048576 --precision fp32 --hardware h200 --format json
c op elementwise --elements 8388608 --format csv --plot op.svg
c op elementwise --elements 0
c op elementwise --inputs 0 --elements 8
cseed op.svg op rmsnorm --rows 2048 --cols 4096 --plot op.svg
cseed op.svg op rmsnorm --rows 2048 --cols 4096 --plot op.svg --force

# --- fuse -------------------------------------------------------------------------------------
c fuse --chain rmsnorm,linear,silu,linear --tokens 2048 --hidden 4096 --intermediate 11008 --hardware h100-sxm   # README
c fuse --chain rmsnorm,linear,silu,linear --tokens 2048 --hidden 4096 --intermediate 11008 --precision bf16 --hardware h100-sxm --format json
c fuse --chain rmsnorm,linear,silu,linear --tokens 2048 --hidden 4096 --intermediate 11008 --hardware h100-sxm --format csv
c fuse --chain rmsnorm,linear,silu,linear --tokens 8192 --hidden 256 --intermediate 688 --precision fp32 --hardware "$SMALL/this-cpu.toml"
c fuse --chain layernorm,linear,gelu,linear --tokens 1024 --hidden 768 --intermediate 3072 --hardware a6000
c fuse --chain layernorm,linear,relu,linear --tokens 2048 --hidden 4096 --intermediate 16384 --format json
c fuse --chain rmsnorm,linear --tokens 16 --hidden 4096 --intermediate 11008
c fuse --chain linear,silu --tokens 1 --hidden 4096 --intermediate 11008 --launch-overhead 7us
c fuse --chain rmsnorm,linear,silu,linear --tokens 2048 --hidden 4096 --intermediate 11008 --precision fp8 --hardware h200 --format json
c fuse --chain rmsnorm,linear,silu,linear --tokens 2048 --hidden 4096 --intermediate 11008 --launch-overhead 5e-6
c fuse --chain rmsnorm,conv,linear --tokens 2048 --hidden 4096 --intermediate 11008   # unknown op
c fuse --chain rmsnorm,linear --tokens 0 --hidden 4096 --intermediate 11008
c fuse --chain rmsnorm,linear --tokens 16 --hidden 4096                            # missing flag
c fuse --chain "" --tokens 16 --hidden 4096 --intermediate 11008

# --- mfu: every mode of its --help ------------------------------------------------------------
c mfu --params 70e9 --tokens 100e9 --time 30d --devices 1024 --hardware h100-sxm   # README
c mfu --params 70e9 --tokens 100e9 --time 30d --devices 1024 --hardware h100-sxm --format json
c mfu --params 70e9 --tokens 100e9 --time 30d --devices 1024 --hardware h100-sxm --format csv
c mfu --params 70B --tokens 100e9 --time 720h --devices 1024 --hardware h100-sxm
c mfu --params 70e9 --tokens 100e9 --time 43200m --devices 1024 --hardware h100-sxm --format json
c mfu --params 70e9 --tokens 100e9 --time 2592000s --devices 1024 --hardware h100-sxm --format json
c mfu --params 70e9 --tokens 100e9 --time 2592000 --devices 1024 --hardware h100-sxm --target-mfu 50
c mfu llama-2-7b --seq-len 4096 --tokens-per-s 30000 --devices 8 --hardware a100-sxm-80gb --recompute selective   # README
for r in none selective full partial=0.75; do
  c mfu llama-2-7b --seq-len 4096 --tokens-per-s 30000 --devices 8 --hardware a100-sxm-80gb --recompute "$r" --format json
done
c mfu --params 175e9 --layers 96 --hidden 12288 --vocab 51200 --seq-len 2048 --step-time 13.75s --global-batch 64 --devices 64 --hardware a100-sxm-80gb --recompute selective   # README
c mfu --params 175e9 --layers 96 --hidden 12288 --vocab 51200 --seq-len 2048 --step-time 13.75s --global-batch 64 --devices 64 --hardware a100-sxm-80gb --recompute selective --format json
c mfu --params 540e9 --layers 118 --hidden 18432 --heads 48 --head-dim 256 --vocab 256000 --seq-len 2048 --tokens-per-s 238300 --devices 6144 --peak 275T --recompute partial=0.75 --format json
c mfu --tokens 100e9 --time 30d --devices 1024 --hardware h100-sxm                 # README: MFU vs N
c mfu --tokens 100e9 --time 30d --devices 1024 --hardware h100-sxm --sizes 1e9,7e9,70e9 --format json
c mfu --tokens 100e9 --time 30d --devices 1024 --hardware h100-sxm --format csv
c mfu --tokens-per-s 1e6 --devices 256 --peak 312e12
for m in $PRESETS; do
  c mfu "$m" --seq-len 4096 --tokens-per-s 30000 --devices 8 --hardware a100-sxm-80gb --format json
done
c mfu llama-2-70b --tokens 2e12 --hardware h100-sxm                                 # time to train alone
c mfu llama-2-70b --tokens 2e12                                                     # no peak
c mfu llama-2-70b --tokens 2e12 --hardware h100-sxm --devices 2048 --target-mfu 45
c mfu llama-3.1-8b --seq-len 8192 --tokens-per-s 1e6 --devices 128 --hardware h100-sxm --precision fp8
c mfu mixtral-8x7b --seq-len 4096 --step-time 2.5s --global-batch 512 --devices 64 --hardware h100-sxm --recompute full
c mfu "$SHARED/models/meta-llama--Meta-Llama-3.1-8B/config.json" --seq-len 8192 --tokens-per-s 1e6 --devices 128 --hardware h100-sxm
c mfu --params 70e9 --tokens 100e9 --time 30d --devices 1024                      # no chip, no peak
c mfu --params 70e9 --tokens 100e9 --time 0 --devices 1024 --hardware h100-sxm
c mfu --params 70e9 --tokens 100e9 --time 30 days --devices 1024 --hardware h100-sxm   # stray word
c mfu --params 70e9 --tokens 100e9 --time 30d --devices 0 --hardware h100-sxm
c mfu --params 70e9 --tokens-per-s 30000 --hardware h100-sxm --recompute sometimes
c mfu --params 70e9 --tokens-per-s 30000 --hardware h100-sxm --recompute partial=1.5
c mfu --params 70e9 --step-time 13.75s --devices 64 --hardware a100-sxm-80gb     # no --global-batch
c mfu nope-model --tokens-per-s 30000 --hardware h100-sxm

# --- mbu --------------------------------------------------------------------------------------
c mbu llama-2-7b --tpot 14ms --hardware h100-sxm                                   # README
c mbu llama-2-7b --tpot 14ms --hardware h100-sxm --format json
c mbu llama-2-7b --tpot 14ms --hardware h100-sxm --format csv
c mbu --params 7e9 --tpot 14ms --bandwidth 2T                                      # Databricks
c mbu --params 7e9 --tpot 0.014 --bandwidth 2e12 --peak 312e12 --format json
for m in $PRESETS; do
  c mbu "$m" --tpot 20ms --hardware h100-sxm --format json
done
c mbu llama-2-7b --tokens-per-s 2000 --batch 32 --context 8192 --hardware h200
c mbu llama-2-70b --tpot 30ms --devices 8 --hardware h100-sxm --batch 8 --context 4096 --format json
c mbu llama-2-70b --tpot 15ms --weight-precision int4 --kv-precision fp8 --hardware h100-sxm --format json
c mbu llama-3.1-8b --tpot 10ms --precision fp8 --hardware mi300x
c mbu mixtral-8x7b --tpot 12ms --batch 64 --hardware h100-sxm --format json
c mbu llama-2-7b --hardware h100-sxm                                               # no tpot
c mbu llama-2-7b --tpot 0 --hardware h100-sxm
c mbu llama-2-7b --tpot 14ms                                                       # no chip, no bandwidth
c mbu llama-2-7b --tpot fast --hardware h100-sxm

# --- import: every sample in shared/refs/samples, each format ---------------------------------
for f in "$SAMPLES/SYNTHETIC_ncu_csv_format_illustration.csv" \
         "$SAMPLES/torch_profiler_trace_excerpt_hta_backward_thread.json" \
         "$SAMPLES/mixbench_cuda_ro_GTX-1060.log" \
         "$SAMPLES/ert_roofline.json" \
         "$SAMPLES/ert_sum_FLOPS001_MPI0001_OpenMP0001.txt" \
         "$SAMPLES/ert_try001_head_FLOPS001_MPI0001_OpenMP0001.txt"; do
  c import "$f"
  c import "$f" --format json
  c import "$f" --format csv
  c import "$f" --plot import.svg        # a profile with no roof to plot under: exit 2
done
# profiles against a chip, a chip file and an empirical roof
for f in "$SAMPLES/SYNTHETIC_ncu_csv_format_illustration.csv" \
         "$SAMPLES/torch_profiler_trace_excerpt_hta_backward_thread.json"; do
  c import "$f" --hardware h100-sxm
  c import "$f" --hardware h100-sxm --format json
  c import "$f" --hardware h100-sxm --format csv
  c import "$f" --hardware a100-sxm-80gb --top 2
  c import "$f" --hardware h200 --plot import.svg
  c import "$f" --hardware "$SAMPLES/mixbench_cuda_ro_GTX-1060.log"
  c import "$f" --hardware "$SAMPLES/ert_roofline.json" --format json
  c import "$f" --hardware "$SMALL/this-cpu.toml"
done
c import "$SAMPLES/SYNTHETIC_ncu_csv_format_illustration.csv" --hardware "$SAMPLES/ert_sum_FLOPS001_MPI0001_OpenMP0001.txt"
c import "$SAMPLES/SYNTHETIC_ncu_csv_format_illustration.csv" --hardware "$SAMPLES/ert_try001_head_FLOPS001_MPI0001_OpenMP0001.txt" --format json
# empirical roofs as chip files
c import "$SAMPLES/mixbench_cuda_ro_GTX-1060.log" --write-chip gtx1060.toml       # README
c import "$SAMPLES/ert_roofline.json" --write-chip ert.toml
c import "$SAMPLES/ert_sum_FLOPS001_MPI0001_OpenMP0001.txt" --write-chip ert-sum.toml --format json
c import "$SAMPLES/ert_try001_head_FLOPS001_MPI0001_OpenMP0001.txt" --write-chip ert-try.toml --plot roof.svg
c import "$SAMPLES/mixbench_cuda_ro_GTX-1060.log" --plot roof.png
cseed gtx1060.toml import "$SAMPLES/mixbench_cuda_ro_GTX-1060.log" --write-chip gtx1060.toml
cseed gtx1060.toml import "$SAMPLES/mixbench_cuda_ro_GTX-1060.log" --write-chip gtx1060.toml --force
# the small Llama's CPU traces (real and synthetic) and the join with analyze
for t in "$FIXTURES/small-llama-cpu-trace.json" "$FIXTURES/SYNTHETIC_small_llama_cpu_trace.json"; do
  c import "$t" --hardware "$SMALL/this-cpu.toml"
  c import "$t" --hardware "$SMALL/this-cpu.toml" --format json
  c import "$t" --hardware "$SMALL/this-cpu.toml" --format csv --top 5
  c import "$t" --hardware "$SMALL/this-cpu.toml" --plot import.svg
  c analyze "$SMALL/config.json" --hardware "$SMALL/this-cpu.toml" --precision fp32 --stage prefill --seq-len 64 --profile "$t"
  c analyze "$SMALL/config.json" --hardware "$SMALL/this-cpu.toml" --precision fp32 --stage prefill --seq-len 64 --profile "$t" --format json
  c analyze "$SMALL/config.json" --hardware "$SMALL/this-cpu.toml" --precision fp32 --stage prefill --seq-len 64 --profile "$t" --format csv
done
c analyze "$SMALL/config.json" --hardware "$SMALL/this-cpu.toml" --precision fp32 --stage both --seq-len 64 --profile "$FIXTURES/small-llama-cpu-trace.json"
c analyze llama-2-7b --profile "$FIXTURES/small-llama-cpu-trace.json"                 # wrong model
c analyze "$SMALL/config.json" --precision fp32 --stage prefill --seq-len 64 --profile "$SAMPLES/mixbench_cuda_ro_GTX-1060.log"
# bad files
c import "$SAMPLES/mixbench_cuda_ro_GTX-1060.log" --hardware h100-sxm                # a roof is not a profile
c import "$SAMPLES/ert_roofline.json" --hardware h100-sxm
c import "$SAMPLES/SYNTHETIC_ncu_csv_format_illustration.csv" --write-chip chip.toml # a profile is not a roof
c import "$SAMPLES/SYNTHETIC_ncu_csv_format_illustration.csv" --hardware nope-gpu
c import "$IN/truncated-ncu.csv" --hardware h100-sxm
c import "$IN/wrong-columns-ncu.csv" --hardware h100-sxm
c import "$IN/unknown-unit-ncu.csv" --hardware h100-sxm
c import "$IN/no-kernels-trace.json" --hardware h100-sxm
c import "$IN/truncated-trace.json" --hardware h100-sxm
c import "$IN/truncated-mixbench.log"
c import "$IN/empty.txt"
c import "$IN/no-such-file.csv"
c import "$SAMPLES/README.md"
c import                                                                          # no file
c import "$SAMPLES/SYNTHETIC_ncu_csv_format_illustration.csv" --top 0

# ---------------------------------------------------------------------------------------------
# Run.
cd "$OUT" || exit 2
start=$(date +%s)
total=0 same=0 differ=0 exitdiff=0
for i in "${!CASES[@]}"; do
  line=${CASES[$i]}
  show "${LABELS[$i]}"
  if [ -n "$ONLY" ] && ! [[ $label =~ $ONLY ]]; then continue; fi
  printf -v n '%04d' $((i + 1))
  if [ "$LIST" = 1 ]; then printf '%s  roofline %s\n' "$n" "$label"; continue; fi
  eval "args=($line)"
  run_case "$n" "${SEEDS[$i]}" ${args[@]+"${args[@]}"}
  total=$((total + 1))
  if diff -rq "old/$n" "new/$n" >/dev/null 2>&1; then
    same=$((same + 1))
    [ "$QUIET" = 1 ] || printf 'identical  %s  roofline %s\n' "$n" "$label"
  else
    differ=$((differ + 1))
    # the full diff, without the file times in its headers (they always differ)
    diff -ruN "old/$n" "new/$n" 2>&1 | sed -E 's/^(---|\+\+\+) ([^\t]*)\t.*$/\1 \2/' >"diffs/$n.diff"
    rc_old=$(cat "$OUT/old/$n/exit") rc_new=$(cat "$OUT/new/$n/exit")
    if [ "$rc_old" = "$rc_new" ]; then
      rcs="exit $rc_old"
    else
      rcs="exit $rc_old -> $rc_new"
      exitdiff=$((exitdiff + 1))
    fi
    printf 'DIFFERS    %s  roofline %s   (%s)\n' "$n" "$label" "$rcs"
    lines=$(wc -l <"$OUT/diffs/$n.diff")
    head -n "$DIFF_LINES" "$OUT/diffs/$n.diff" | sed 's/^/    /'
    if [ "$lines" -gt "$DIFF_LINES" ]; then
      printf '    ... %s more lines in %s\n' "$((lines - DIFF_LINES))" "$OUT/diffs/$n.diff"
    fi
  fi
done
elapsed=$(($(date +%s) - start))
if [ "$LIST" = 1 ]; then
  if [ $# -eq 3 ]; then rm -rf -- "${OUT:?}"/*; else rm -rf -- "$OUT"; fi
  exit 0
fi

echo
echo "old: $OLD"
echo "new: $NEW"
printf 'compare-binaries: %d invocations, %d identical, %d differ (%d with a different exit code), %d s\n' \
  "$total" "$same" "$differ" "$exitdiff" "$elapsed"
if [ "$differ" -eq 0 ] && [ "$KEEP" != 1 ]; then
  rm -rf -- "$OUT"
else
  echo "outputs: $OUT (per case: {old,new}/NNNN/{stdout,stderr,exit,files/}; diffs/NNNN.diff)"
fi
[ "$differ" -eq 0 ]
