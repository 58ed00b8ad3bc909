#!/usr/bin/env python3
"""Profile one prefill of a small Llama on this CPU with torch.profiler, for `roofline import`.

The model is `LlamaForCausalLM` from Hugging Face transformers, built from `config.json` beside
this script (hidden 256, 4 layers, 4 heads, 2 kv heads, intermediate 688, vocab 1000) with random
weights (seed 0), in fp32, eager attention (QK^T, softmax, S.V as separate operators, as
`roofline analyze` models them without --flash-attention), `logits_to_keep=1` (lm_head on the last
position only, as the cost model counts it).

    python3 -m venv .venv && . .venv/bin/activate
    pip install torch transformers        # PyPI's Linux torch wheel pulls its CUDA libraries too
    python3 scripts/small-llama/profile_cpu.py --seq-len 64 \
        --out crates/inputs/tests/fixtures/small-llama-cpu-trace.json

It runs `--warmup` (3) passes unprofiled, then `--passes` (10) profiler cycles of one warm-up
and one profiled pass each (`schedule(wait=0, warmup=1, active=1, repeat=10)`), and keeps the
shortest profiled pass: the one least disturbed by the rest of the machine. With
`record_shapes=True` every operator carries `Input Dims` and `Input type`. The profiler clears
its events at the end of each cycle, so each cycle's trace is exported from `on_trace_ready`,
inside the cycle (exporting after the `with` block writes an empty trace). The kept trace is
trimmed to what `roofline import` reads: the `cpu_op` and `user_annotation` events of the
profiled step (`ProfilerStep#N`), their name, thread, times (from the step's start, µs to the
ns) and the args `Input Dims`, `Input type`, `Concrete Inputs`, `External id`, so the committed
fixture stays a few hundred KB (about 275 KB at 64 tokens).

Run it on an idle machine (it warns when the load average is above 0.5): with 2 threads on 2
cores, another busy process stretches every operator, and the roofline file it is held against
was measured idle.

Then, on the same machine:

    roofline measure --quick --out scripts/small-llama/this-cpu.toml
    roofline import crates/inputs/tests/fixtures/small-llama-cpu-trace.json \
        --hardware scripts/small-llama/this-cpu.toml
    roofline analyze scripts/small-llama/config.json --hardware scripts/small-llama/this-cpu.toml \
        --precision fp32 --stage prefill --seq-len 64 \
        --profile crates/inputs/tests/fixtures/small-llama-cpu-trace.json
"""

import argparse
import inspect
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KEEP_ARGS = ("Input Dims", "Input type", "Concrete Inputs", "External id")


def steps_of(trace):
    return [
        e
        for e in trace.get("traceEvents", [])
        if e.get("ph") == "X"
        and e.get("cat") == "user_annotation"
        and str(e.get("name", "")).startswith("ProfilerStep#")
    ]


def step_time(trace):
    """The duration (µs) of the trace's last profiler step, None without one."""
    s = steps_of(trace)
    return max(s, key=lambda e: e["ts"])["dur"] if s else None


def write_trace(trace, f):
    """Compact JSON, one event a line: greppable, and a rerun's diff is per event."""
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    f.write("{\n")
    for k, v in trace.items():
        if k != "traceEvents":
            f.write(f"{json.dumps(k)}:{json.dumps(v, **compact)},\n")
    f.write('"traceEvents":[\n')
    f.write(",\n".join(json.dumps(e, **compact) for e in trace["traceEvents"]))
    f.write("\n]}\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seq-len", type=int, default=64, help="prompt tokens (prefill)")
    ap.add_argument("--batch", type=int, default=1, help="sequences")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads")
    ap.add_argument("--warmup", type=int, default=3, help="unprofiled passes first")
    ap.add_argument("--passes", type=int, default=10, help="profiled passes; the shortest is kept")
    ap.add_argument("--config", default=os.path.join(HERE, "config.json"))
    ap.add_argument("--out", required=True, help="the trimmed trace (.json)")
    a = ap.parse_args()

    try:
        import torch
        import transformers
        from torch.profiler import ProfilerActivity, profile, schedule
        from transformers import LlamaConfig, LlamaForCausalLM
    except ImportError as e:  # pragma: no cover - a message, not a stack trace
        print(f"error: {e}\nhint: pip install torch transformers", file=sys.stderr)
        return 2

    torch.manual_seed(0)
    torch.set_num_threads(a.threads)
    with open(a.config) as f:
        cfg = json.load(f)
    config = LlamaConfig(
        **{k: v for k, v in cfg.items() if k not in ("architectures", "model_type", "torch_dtype")},
        attn_implementation="eager",
    )
    config._attn_implementation = "eager"
    model = LlamaForCausalLM(config).eval().to(torch.float32)
    if model.config._attn_implementation != "eager":
        impl = model.config._attn_implementation
        print(f"error: attention is {impl!r}, not eager", file=sys.stderr)
        return 2
    ids = torch.randint(0, config.vocab_size, (a.batch, a.seq_len))
    params = inspect.signature(model.forward).parameters
    if "logits_to_keep" in params:
        keep = {"logits_to_keep": 1}
    elif "num_logits_to_keep" in params:  # transformers 4.45 to 4.49
        keep = {"num_logits_to_keep": 1}
    else:  # older: lm_head runs on every position, which the cost model does not count
        keep = {}
        print("warning: no logits_to_keep: lm_head runs on all positions", file=sys.stderr)

    load = os.getloadavg()[0]
    if load > 0.5:
        print(
            f"warning: load average {load:.1f}: other processes share the CPU, the timings will "
            "be slower than the roofline file measured on an idle machine",
            file=sys.stderr,
        )

    with torch.no_grad():
        for _ in range(a.warmup):  # not profiled: thread pools, allocator, oneDNN primitives
            model(input_ids=ids, **keep)

    with tempfile.TemporaryDirectory() as tmp:
        exported = []

        def on_trace_ready(p):
            # The profiler clears its events at the end of each cycle: export inside the cycle.
            path = os.path.join(tmp, f"cycle{len(exported)}.json")
            p.export_chrome_trace(path)
            exported.append(path)

        with torch.no_grad(), profile(
            activities=[ProfilerActivity.CPU],
            record_shapes=True,
            schedule=schedule(wait=0, warmup=1, active=1, repeat=a.passes),
            on_trace_ready=on_trace_ready,
        ) as prof:
            for _ in range(2 * a.passes):
                model(input_ids=ids, **keep)
                prof.step()
        if not exported:
            print("error: the profiler exported no trace", file=sys.stderr)
            return 2
        # One profiled pass per cycle: keep the shortest, the one least disturbed by the rest
        # of the machine.
        best, times = None, []
        for path in exported:
            with open(path) as f:
                t = json.load(f)
            d = step_time(t)
            if d is None:
                continue
            times.append(d)
            if best is None or d < best[0]:
                best = (d, t)
        if best is None:
            print("error: no profiled pass has a ProfilerStep# annotation", file=sys.stderr)
            return 2
        trace = best[1]
        print(
            f"profiled {len(times)} pass(es): {', '.join(f'{d / 1e3:.1f}' for d in times)} ms; "
            f"kept the shortest, {best[0] / 1e3:.1f} ms"
        )

    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
    s = max(steps_of(trace), key=lambda e: e["ts"])  # the last (profiled) step only
    lo, hi = s["ts"], s["ts"] + s["dur"]
    kept = []
    for e in events:
        if e.get("cat") not in ("cpu_op", "user_annotation") or not lo <= e["ts"] <= hi:
            continue
        args = {k: v for k, v in (e.get("args") or {}).items() if k in KEEP_ARGS}
        ev = {k: e[k] for k in ("ph", "cat", "name", "pid", "tid") if k in e}
        # Times from the step's start, to the ns: the fixture reads by hand.
        ev["ts"] = round(e["ts"] - lo, 3)
        ev["dur"] = round(e["dur"], 3)
        kept.append(ev | {"args": args})
    ops = sum(1 for e in kept if e["cat"] == "cpu_op")
    if ops == 0:
        print("error: the profiled step holds no cpu_op event", file=sys.stderr)
        return 2
    out = {
        "schemaVersion": trace.get("schemaVersion", 1),
        "deviceProperties": [],
        "traceEvents": kept,
        "traceName": "small-llama prefill on CPU, "
        f"torch {torch.__version__}, transformers {transformers.__version__}, batch {a.batch}, "
        f"seq {a.seq_len}, fp32, eager attention, {a.threads} threads, "
        f"shortest of {len(times)} profiled passes, load average {load:.2f} before profiling",
    }
    with open(a.out, "w") as f:
        write_trace(out, f)
    size = os.path.getsize(a.out)
    print(f"wrote {a.out}: {len(kept)} events ({ops} cpu_op), {size} bytes")
    if size > 500_000:
        print("warning: over 500 KB, too large for a fixture", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
