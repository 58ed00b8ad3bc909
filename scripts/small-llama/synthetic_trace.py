#!/usr/bin/env python3
"""Write SYNTHETIC_small_llama_cpu_trace.json: a PyTorch-profiler-shaped CPU trace of one
prefill of the small Llama in `config.json`, for format and join tests. NOT MEASURED.

No torch is needed. The operators, their nesting, `Input Dims` and `Input type` follow what
Hugging Face's eager `LlamaForCausalLM` (fp32, batch 1, 64 tokens, `logits_to_keep=1`) calls
and what torch.profiler records for them with `record_shapes=True`; the durations are
INVENTED: one fixed number of microseconds per operator, chosen distinct (q_proj 100, o_proj 90,
input_layernorm pieces 5+6+3+2+7+8, post_attention_layernorm 5+6+3+2+7+9, final norm
5+6+3+2+7+10, ...) so that a test can tell by hand which model operator each one was matched to.
The real trace comes from `profile_cpu.py` on a machine with torch.

    python3 scripts/small-llama/synthetic_trace.py \
        > crates/inputs/tests/fixtures/SYNTHETIC_small_llama_cpu_trace.json
"""

import json
import sys

B, S, D, H, G, E, F, V, L = 1, 64, 256, 4, 2, 64, 688, 1000, 4
FLOAT = "float"


class Trace:
    def __init__(self):
        self.events = []
        self.t = 1000  # µs
        self.ext = 1

    def op(self, name, dims, types, dur, children=(), values=None):
        """A cpu_op of `dur` µs starting now; `children` (name, dims, types, dur) nested inside."""
        start = self.t
        args = {"External id": self.ext, "Input Dims": dims, "Input type": types}
        if values is not None:
            args["Concrete Inputs"] = values
        self.ext += 1
        self.events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1,
                            "ts": start, "dur": dur, "args": args})
        inner = start + 1
        for (cn, cd, ct, cdur) in children:
            self.events.append({"ph": "X", "cat": "cpu_op", "name": cn, "pid": 1, "tid": 1,
                                "ts": inner, "dur": cdur,
                                "args": {"External id": self.ext, "Input Dims": cd, "Input type": ct}})
            self.ext += 1
            inner += cdur
        self.t = start + dur + 1


def linear(tr, k, n, dur, rows=S):
    x, w = [B, rows, k], [n, k]
    tr.op("aten::linear", [x, w, []], [FLOAT, FLOAT, ""], dur, children=[
        ("aten::t", [w], [FLOAT], 1),
        ("aten::matmul", [x, [k, n]], [FLOAT, FLOAT], dur - 3),
    ])


def rmsnorm(tr, last_mul):
    x, r = [B, S, D], [B, S, 1]
    tr.op("aten::to", [x, [], [], [], []], [FLOAT, "Scalar", "Scalar", "Scalar", ""], 1)
    tr.op("aten::pow", [x, []], [FLOAT, "Scalar"], 5)
    tr.op("aten::mean", [x, [], [], []], [FLOAT, "ScalarList", "Scalar", ""], 6)
    tr.op("aten::add", [r, [], []], [FLOAT, "Scalar", "Scalar"], 3)
    tr.op("aten::rsqrt", [r], [FLOAT], 2)
    tr.op("aten::mul", [x, r], [FLOAT, FLOAT], 7)
    tr.op("aten::to", [x, [], [], [], []], [FLOAT, "Scalar", "Scalar", "Scalar", ""], 1)
    tr.op("aten::mul", [[D], x], [FLOAT, FLOAT], last_mul)


def rotary(tr, heads):
    x, cs, half = [B, heads, S, E], [B, 1, S, E], [B, heads, S, E // 2]
    tr.op("aten::mul", [x, cs], [FLOAT, FLOAT], 4)
    tr.op("aten::slice", [x, [], [], [], []], [FLOAT, "Scalar", "Scalar", "Scalar", "Scalar"], 1)
    tr.op("aten::slice", [x, [], [], [], []], [FLOAT, "Scalar", "Scalar", "Scalar", "Scalar"], 1)
    tr.op("aten::neg", [half], [FLOAT], 2)
    tr.op("aten::cat", [[half, half], []], ["TensorList", "Scalar"], 5)
    tr.op("aten::mul", [x, cs], [FLOAT, FLOAT], 4)
    tr.op("aten::add", [x, x, []], [FLOAT, FLOAT, "Scalar"], 3)


def layer(tr):
    rmsnorm(tr, 8)                                        # input_layernorm: 5+6+3+2+7+8 = 31
    linear(tr, D, H * E, 100)                             # q_proj
    linear(tr, D, G * E, 60)                              # k_proj
    linear(tr, D, G * E, 61)                              # v_proj
    for shape in ([B, S, H * E], [B, S, G * E], [B, S, G * E]):
        tr.op("aten::view", [shape, []], [FLOAT, "ScalarList"], 1)
        tr.op("aten::transpose", [shape + [], [], []], [FLOAT, "Scalar", "Scalar"], 1)
    rotary(tr, H)
    rotary(tr, G)
    for _ in range(2):                                    # repeat_kv: expand, then a copy
        tr.op("aten::expand", [[B, G, 1, S, E], [], []], [FLOAT, "ScalarList", "Scalar"], 1)
        tr.op("aten::reshape", [[B, G, H // G, S, E], []], [FLOAT, "ScalarList"], 7, children=[
            ("aten::clone", [[B, G, H // G, S, E], []], [FLOAT, ""], 6),
        ])
    q, kt = [B, H, S, E], [B, H, E, S]
    tr.op("aten::transpose", [[B, H, S, E], [], []], [FLOAT, "Scalar", "Scalar"], 1)
    tr.op("aten::matmul", [q, kt], [FLOAT, FLOAT], 40, children=[   # qk_matmul
        ("aten::expand", [q, []], [FLOAT, "ScalarList"], 1),
        ("aten::reshape", [q, []], [FLOAT, "ScalarList"], 1),
        ("aten::bmm", [[B * H, S, E], [B * H, E, S]], [FLOAT, FLOAT], 35),
    ])
    tr.op("aten::mul", [[B, H, S, S], []], [FLOAT, "Scalar"], 9)     # * scaling
    tr.op("aten::slice", [[B, 1, S, S], [], [], [], []], [FLOAT, "Scalar", "Scalar", "Scalar", "Scalar"], 1)
    tr.op("aten::add", [[B, H, S, S], [B, 1, S, S], []], [FLOAT, FLOAT, "Scalar"], 10)  # + mask
    tr.op("aten::softmax", [[B, H, S, S], [], []], [FLOAT, "Scalar", "ScalarType"], 25, children=[
        ("aten::_softmax", [[B, H, S, S], [], []], [FLOAT, "Scalar", "Scalar"], 22),
    ])
    tr.op("aten::to", [[B, H, S, S], [], [], [], []], [FLOAT, "Scalar", "Scalar", "Scalar", ""], 1)
    tr.op("aten::dropout", [[B, H, S, S], [], []], [FLOAT, "Scalar", "Scalar"], 1)
    tr.op("aten::matmul", [[B, H, S, S], [B, H, S, E]], [FLOAT, FLOAT], 41, children=[  # sv_matmul
        ("aten::bmm", [[B * H, S, S], [B * H, S, E]], [FLOAT, FLOAT], 37),
    ])
    tr.op("aten::transpose", [[B, H, S, E], [], []], [FLOAT, "Scalar", "Scalar"], 1)
    tr.op("aten::contiguous", [[B, S, H, E], []], [FLOAT, ""], 8, children=[
        ("aten::clone", [[B, S, H, E], []], [FLOAT, ""], 7),
    ])
    tr.op("aten::reshape", [[B, S, H, E], []], [FLOAT, "ScalarList"], 1)
    linear(tr, H * E, D, 90)                              # o_proj
    tr.op("aten::add", [[B, S, D], [B, S, D], []], [FLOAT, FLOAT, "Scalar"], 11)  # attn residual
    rmsnorm(tr, 9)                                        # post_attention_layernorm: 32
    linear(tr, D, F, 200)                                 # gate_proj
    linear(tr, D, F, 201)                                 # up_proj
    tr.op("aten::silu", [[B, S, F]], [FLOAT], 33)         # act_fn
    tr.op("aten::mul", [[B, S, F], [B, S, F]], [FLOAT, FLOAT], 22)  # act_mul
    linear(tr, F, D, 190)                                 # down_proj
    tr.op("aten::add", [[B, S, D], [B, S, D], []], [FLOAT, FLOAT, "Scalar"], 12)  # mlp residual


def main():
    tr = Trace()
    start = tr.t
    tr.t += 1
    tr.op("aten::embedding", [[V, D], [B, S], [], [], []],
          [FLOAT, "long int", "Scalar", "Bool", "Bool"], 20)
    # LlamaRotaryEmbedding: inv_freq @ positions, cat, cos, sin
    tr.op("aten::matmul", [[B, E // 2, 1], [B, 1, S]], [FLOAT, FLOAT], 6)
    tr.op("aten::cat", [[[B, S, E // 2], [B, S, E // 2]], []], ["TensorList", "Scalar"], 3)
    tr.op("aten::cos", [[B, S, E]], [FLOAT], 2)
    tr.op("aten::sin", [[B, S, E]], [FLOAT], 2)
    tr.op("aten::full", [[], [], [], [], [], []], ["ScalarList", "Scalar", "ScalarType", "", "Device", ""], 3)
    tr.op("aten::triu", [[S, S], []], [FLOAT, "Scalar"], 4)
    for _ in range(L):
        layer(tr)
    rmsnorm(tr, 10)                                       # norm: 33
    tr.op("aten::slice", [[B, S, D], [], [], [], []], [FLOAT, "Scalar", "Scalar", "Scalar", "Scalar"], 1)
    linear(tr, D, V, 30, rows=1)                          # lm_head on the last position
    step = {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1,
            "ts": start, "dur": tr.t - start, "args": {"External id": 0}}
    out = {
        "schemaVersion": 1,
        "traceName": "SYNTHETIC: shapes as HF eager LlamaForCausalLM records them; durations invented",
        "traceEvents": [step] + tr.events,
    }
    json.dump(out, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
