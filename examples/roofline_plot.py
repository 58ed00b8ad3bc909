# %% [markdown]
# # The roofline of Llama-3.1-8B on an H100
#
# Each operator of a decode step and of a prefill, at its arithmetic intensity (FLOP per byte
# of memory traffic) and the FLOP/s it attains at its roofline bound, under the chip's roofs:
# the memory roof (bandwidth × intensity) and a compute roof per unit the operators use.
#
# Run it as a script: `python examples/roofline_plot.py [out.png]` (needs `pip install ./python
# matplotlib`).

# %%
import math
import sys

import matplotlib

if "ipykernel" not in sys.modules:
    matplotlib.use("Agg")  # a script writes the PNG; no window
import matplotlib.pyplot as plt

import roofline

out = sys.argv[1] if len(sys.argv) > 1 else "roofline.png"
model, chip = "llama-3.1-8b", "h100-sxm"

# %% The analyses: one decode step (8 sequences, 4096 cached tokens), one prefill
decode = roofline.analyze(model, chip, stage="decode", batch=8, context=4096)
prefill = roofline.analyze(model, chip, stage="prefill", batch=1, seq_len=2048)
hardware = roofline.hardware_show(chip)

frames = [decode.to_pandas(), prefill.to_pandas()]
for df in frames:
    print(df[["stage", "name", "flops", "bytes", "arithmetic_intensity", "time_s", "bound"]]
          .sort_values("time_s", ascending=False).head(5).to_string(index=False))

# %% The roofs: main-memory bandwidth, and the peak of each compute unit the operators run on
bandwidth = decode["hardware"]["bandwidth_bytes_per_s"]  # B/s
peaks = {}  # FLOP/s -> compute unit
for df in frames:
    for unit, peak in zip(df["compute"], df["peak_flops_per_s"]):
        if peak > 0:
            peaks.setdefault(peak, unit)
# The chip's faster peaks too, from its own document (fp8: what quantizing would reach)
for precision, peak in hardware["peak_flops_per_s"].items():
    if peak > max(peaks):
        peaks.setdefault(peak, f"{precision} peak")

# %% The plot: log-log, each operator at (intensity, attained FLOP/s)
fig, ax = plt.subplots(figsize=(10, 6.5))
lo, hi = 1e-2, 1e5
top = max(peaks)
ax.plot([lo, top / bandwidth], [lo * bandwidth, top], color="black", lw=2,
        label=f"memory roof: {bandwidth / 1e12:.2f} TB/s")
for peak, unit in sorted(peaks.items(), reverse=True):
    ax.plot([peak / bandwidth, hi], [peak, peak], color="black", lw=1.5 if unit in
            set(frames[0]["compute"]) | set(frames[1]["compute"]) else 0.8, ls="-")
    ax.annotate(f"{unit}: {peak / 1e12:.0f} TFLOP/s", (hi, peak), ha="right", va="bottom",
                fontsize=8)

markers = {"decode": ("o", "tab:blue"), "prefill": ("s", "tab:orange")}
for df in frames:
    rows = df[(df["flops"] > 0) & (df["time_s"] > 0)].copy()
    rows["attained"] = rows["flops"] / rows["time_s"]
    stage = rows["stage"].iloc[0]
    marker, colour = markers[stage]
    ax.scatter(rows["arithmetic_intensity"], rows["attained"], marker=marker, color=colour,
               alpha=0.8, label=f"{stage} operators", zorder=3)
    # Name the operators that take the most time; those at one point (within 2 %) share a label
    named = rows.nlargest(5, "time_s")
    points = {}
    for _, row in named.iterrows():
        x, y = row["arithmetic_intensity"], row["attained"]
        key = (round(math.log10(x), 2), round(math.log10(y), 2))
        points.setdefault(key, (x, y, []))[2].append(row["name"])
    for x, y, names in points.values():
        ax.annotate(", ".join(names), (x, y), textcoords="offset points", xytext=(6, -12),
                    fontsize=7, color=colour)

ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlim(lo, hi)
ax.set_ylim(1e9, top * 3)
ax.set_xlabel("arithmetic intensity (FLOP/byte)")
ax.set_ylabel("attained performance (FLOP/s)")
ax.set_title(f"{model} on {decode['hardware']['name']}: decode (batch 8, 4096 cached) "
             "and prefill (2048 tokens)", fontsize=10)
ax.grid(True, which="both", lw=0.3, alpha=0.5)
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=120)
print(f"wrote {out}")
