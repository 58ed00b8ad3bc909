#!/usr/bin/env python3
"""Generate the embedded chip catalog from the shared accelerator spec table.

Reads ``../shared/hardware/hardware.csv`` (line 1 header, line 2 units row, then one device per
line) and the numbered flags of ``../shared/hardware/README.md`` section 4, and writes one file
per device to ``crates/inputs/catalog/hardware/<id>.toml`` in the schema that
``roofline_inputs::hardware::parse_device`` reads.

Every number is written in SI base units (FLOP/s or OP/s, B/s, bytes, seconds) as a table
``{ value = ..., source = "..." }``. Conventions:

* decimal prefixes: 1 TFLOP/s = 1e12 FLOP/s, 1 GB/s = 1e9 B/s, memory "GB" = 1e9 bytes unless
  the vendor says GiB; cache sizes "MB" as published are read as binary MiB (2^20 bytes);
  1 KiB = 1024 bytes;
* peaks are DENSE only: the csv already halved every 2:4-sparse datasheet figure (its
  ``sparsity_note`` keeps the printed value, which the source string repeats);
* ``fp64`` is the FP64 tensor/matrix figure where the chip has one (what a GEMM gets), else
  the vector figure; ``fp32`` is the vector FP32 column;
* a cell that is ``n/a``, ``not published``, ``none`` or empty is omitted;
* a cell that is not a plain number must have an entry in ``CELL`` below (a value with its
  derivation, or an omission with the reason) -- the script stops otherwise, so a new kind of
  cell always gets a human decision;
* a value that the csv or the README flags (derived, conflicting, unverified) carries the word
  FLAG in its source string, and the flag text goes into ``notes``.

Run from the repository root: ``python3 scripts/gen_catalog.py``. Standard library only.
"""

from __future__ import annotations

import csv
import re
import sys
import tomllib
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CSV_PATH = ROOT / ".." / "shared" / "hardware" / "hardware.csv"
README_PATH = ROOT / ".." / "shared" / "hardware" / "README.md"
OUT_DIR = ROOT / "crates" / "inputs" / "catalog" / "hardware"

MIB = 1 << 20
GIB = 1 << 30
KIB = 1024

# csv `device` column -> catalog id (csv order).
IDS = {
    "NVIDIA H100 SXM5 80GB": "h100-sxm",
    "NVIDIA H100 PCIe 80GB": "h100-pcie",
    "NVIDIA H100 NVL 94GB (per GPU)": "h100-nvl",
    "NVIDIA H200 SXM 141GB": "h200",
    "NVIDIA B200 (HGX B200, per GPU)": "b200",
    "NVIDIA GB200 (per Blackwell GPU, NVL72)": "gb200",
    "NVIDIA A100 SXM4 40GB": "a100-sxm-40gb",
    "NVIDIA A100 SXM4 80GB": "a100-sxm-80gb",
    "NVIDIA A100 PCIe 80GB": "a100-pcie-80gb",
    "NVIDIA A100 PCIe 40GB": "a100-pcie-40gb",
    "NVIDIA RTX A6000": "a6000",
    "NVIDIA L40S": "l40s",
    "NVIDIA L4": "l4",
    "NVIDIA A10": "a10",
    "NVIDIA GeForce RTX 4090": "rtx-4090",
    "NVIDIA GeForce RTX 3090": "rtx-3090",
    "NVIDIA V100 SXM2": "v100",
    "NVIDIA T4": "t4",
    "AMD Instinct MI300X": "mi300x",
    "AMD Instinct MI325X": "mi325x",
    "AMD Instinct MI250X": "mi250x",
    "Google TPU v4": "tpu-v4",
    "Google TPU v5e": "tpu-v5e",
    "Google TPU v5p": "tpu-v5p",
    "Intel Gaudi 2": "gaudi2",
    "Intel Gaudi 3": "gaudi3",
    "Apple M1 Max": "m1-max",
    "Apple M2 Ultra": "m2-ultra",
    "Apple M3 Max": "m3-max",
}

# Which numbered flags of README section 4 concern which chip. Flag 16 (power labels) concerns
# no field of the schema (power is not modelled) and is left out.
README_FLAGS = {
    "h100-sxm": [18],
    "h100-pcie": [6],
    "h100-nvl": [5],
    "b200": [1, 2, 4],
    "gb200": [2, 3],
    "a6000": [7],
    "rtx-4090": [8],
    "rtx-3090": [8],
    "l40s": [9],
    "l4": [9],
    "a10": [9],
    "t4": [10],
    "mi250x": [11],
    "mi325x": [12],
    "tpu-v4": [13],
    "tpu-v5e": [13],
    "tpu-v5p": [13],
    "gaudi3": [14],
    "m1-max": [15],
    "m2-ultra": [15],
    "m3-max": [15],
    "v100": [17],
}

# --- documents, per chip --------------------------------------------------------------------
# peaks / mem / arch (SM count, L2) / smem (shared memory per SM) / link / host

_H100 = "NVIDIA H100 product page/datasheet (nvidia.com/en-us/data-center/h100/)"
_HOPPER_WP = "NVIDIA H100 Tensor Core GPU Architecture (Hopper) whitepaper"
_HOPPER_TG = "Hopper Tuning Guide (docs.nvidia.com/cuda/hopper-tuning-guide)"
_HGX = "NVIDIA HGX B200 spec table (nvidia.com/en-us/data-center/hgx/), per GPU"
_NVL72 = "NVIDIA GB200 NVL72 spec table (nvidia.com/en-us/data-center/gb200-nvl72/), per GPU"
_BW_TG = "Blackwell Tuning Guide (docs.nvidia.com/cuda/blackwell-tuning-guide)"
_A100 = "NVIDIA A100 datasheet (nvidia.com/en-us/data-center/a100/)"
_A100_WP = "NVIDIA A100 Tensor Core GPU Architecture whitepaper"
_AMP_TG = "NVIDIA Ampere Tuning Guide"
_GA102_WP = "NVIDIA Ampere GA102 GPU Architecture whitepaper"
_ADA_TG = "NVIDIA Ada Tuning Guide"
_ROCM_SPECS = "AMD ROCm GPU hardware specifications table (rocm.docs.amd.com reference/gpu-specs)"
_ROCM_MI300 = ("AMD ROCm MI300 microarchitecture page, peak-performance table "
               "(FLOPS/clock/CU x 304 CUs x 2.1 GHz)")
_GAUDI2 = "Intel Gaudi 2 white paper (intel.com content-details 839363) / Habana 'Gaudi Architecture' docs"
_GAUDI3 = "Intel Gaudi 3 white paper (intel.com content-details 817486)"
_APPLE_21 = "Apple newsroom press release (M1 Pro/M1 Max, Oct 2021)"
_APPLE_23U = "Apple newsroom press release (M2 Ultra, Jun 2023)"
_APPLE_23 = "Apple newsroom press release (M3 family, Oct 2023)"


def _docs(peaks, mem=None, arch=None, smem=None, link=None, host=None):
    return {
        "peaks": peaks,
        "mem": mem or peaks,
        "arch": arch or peaks,
        "smem": smem or arch or peaks,
        "link": link or peaks,
        "host": host or peaks,
    }


DOCS = {
    "h100-sxm": _docs(_H100 + ", SXM column", arch=_HOPPER_WP, smem=_HOPPER_TG),
    "h100-pcie": _docs(
        "NVIDIA H100 datasheet (2022 edition, PCIe column)",
        mem="NVIDIA H100 PCIe Product Brief PB-11133-001",
        arch="NVIDIA Hopper whitepaper",
        smem=_HOPPER_TG,
    ),
    "h100-nvl": _docs(
        _H100 + ", H100 NVL column (per GPU) / H100 NVL datasheet (PNY-hosted NVIDIA PDF)",
        arch="GH100 configuration of the Hopper whitepaper (not on the H100 NVL datasheet)",
        smem=_HOPPER_TG,
    ),
    "h200": _docs(
        "NVIDIA H200 product page/datasheet (nvidia.com/en-us/data-center/h200/)",
        arch="H100 SXM5 GH100 configuration of the Hopper whitepaper (not restated on the H200 datasheet)",
        smem=_HOPPER_TG,
    ),
    "b200": _docs(
        _HGX,
        mem="NVIDIA DGX B200 datasheet (64 TB/s per 8 GPUs) and HGX B200 spec table",
        arch=_BW_TG,
        host="NVIDIA HGX B200 docs",
    ),
    "gb200": _docs(_NVL72, arch=_BW_TG),
    "a100-sxm-40gb": _docs(_A100, mem=_A100 + " (40GB-era edition)", arch=_A100_WP, smem=_AMP_TG),
    "a100-sxm-80gb": _docs(_A100, arch=_A100_WP, smem=_AMP_TG),
    "a100-pcie-80gb": _docs(_A100, arch=_A100_WP, smem=_AMP_TG),
    "a100-pcie-40gb": _docs(_A100, mem=_A100 + " (40GB-era edition)", arch=_A100_WP, smem=_AMP_TG),
    "a6000": _docs("NVIDIA RTX A6000 datasheet", arch=_GA102_WP, smem=_GA102_WP),
    "l40s": _docs(
        "NVIDIA L40S product page/datasheet (nvidia.com/en-us/data-center/l40s/)",
        arch="Ada architecture docs / third-party copies (not on the L40S datasheet)",
        smem=_ADA_TG,
    ),
    "l4": _docs(
        "NVIDIA L4 datasheet (nvidia.com/en-us/data-center/l4/)",
        arch="Ada whitepaper / third-party copies (not on the L4 datasheet)",
        smem=_ADA_TG,
    ),
    "a10": _docs(
        "NVIDIA A10 datasheet (nvidia.com/en-us/data-center/products/a10-gpu/)",
        arch="GA102 docs (not on the A10 datasheet)",
        smem=_AMP_TG + " (GA10x)",
    ),
    "rtx-4090": _docs(
        "NVIDIA Ada GPU Architecture whitepaper (Appendix, GeForce RTX 4090)", smem=_ADA_TG
    ),
    "rtx-3090": _docs(_GA102_WP + " (Appendix A, RTX 3090)", smem=_AMP_TG + " (GA10x)"),
    "v100": _docs(
        "NVIDIA V100 datasheet (SXM2 column)",
        arch="NVIDIA Volta V100 whitepaper",
        smem="NVIDIA Volta Tuning Guide",
    ),
    "t4": _docs(
        "NVIDIA T4 datasheet (nvidia.com/en-us/data-center/tesla-t4/)",
        arch="Turing TU104 configuration as tabulated (not on the T4 datasheet)",
        smem="NVIDIA Turing Tuning Guide",
    ),
    "mi300x": _docs(
        _ROCM_MI300,
        mem="AMD ROCm MI300 microarchitecture page / AMD MI300X product page",
        arch=_ROCM_SPECS,
        link="Bekman ml-engineering network tables (7 XGMI links x 64 GB/s per direction; "
        "AMD markets 128 GB/s per link)",
        host="AMD MI300X product page",
    ),
    "mi325x": _docs(
        "AMD MI325X product page ('same as MI300X'), figures of the ROCm MI300 peak table",
        mem="AMD MI325X product page",
        arch=_ROCM_SPECS,
        link="Bekman ml-engineering network tables (7 XGMI links x 64 GB/s per direction)",
        host="AMD MI325X product page",
    ),
    "mi250x": _docs(
        "derived from the AMD ROCm MI250 microarchitecture page per-CU rates x 220 CUs x 1.7 GHz "
        "(match the AMD MI250X product page values as recalled)",
        mem="AMD ROCm MI250 page (1.6 TB/s per GCD) / AMD MI250X product page",
        arch=_ROCM_SPECS,
        link="AMD MI250X product page",
        host="AMD MI250X product page",
    ),
    "tpu-v4": _docs("Google Cloud TPU docs (docs.cloud.google.com/tpu/docs/v4)"),
    "tpu-v5e": _docs("Google Cloud TPU docs (docs.cloud.google.com/tpu/docs/v5e)"),
    "tpu-v5p": _docs("Google Cloud TPU docs (docs.cloud.google.com/tpu/docs/v5p)"),
    "gaudi2": _docs(_GAUDI2),
    "gaudi3": _docs(_GAUDI3),
    "m1-max": _docs(_APPLE_21),
    "m2-ultra": _docs(_APPLE_23U),
    "m3-max": _docs(_APPLE_23),
}

# --- how the peaks were printed ---------------------------------------------------------------
# "halved": the datasheet printed only 2:4-sparse tensor figures; the csv halved them. PRINTED
#           gives the printed figure for the source string.
# "pair":   the datasheet printed "dense | sparse*" pairs; the dense one is used.
# "dense":  no sparsity on this chip / vendor publishes dense peaks (AMD, Google, Intel).
MODE = {
    "h100-sxm": "halved", "h100-pcie": "halved", "h100-nvl": "halved", "h200": "halved",
    "b200": "halved", "gb200": "halved", "a6000": "halved", "l4": "halved",
    "a100-sxm-40gb": "pair", "a100-sxm-80gb": "pair", "a100-pcie-80gb": "pair",
    "a100-pcie-40gb": "pair", "l40s": "pair", "a10": "pair", "rtx-4090": "pair",
    "rtx-3090": "pair",
}

_H100_PRINTED = {
    "tf32_tflops": "989 TFLOP/s", "bf16_tflops": "1,979 TFLOP/s", "fp16_tflops": "1,979 TFLOP/s",
    "fp8_tflops": "3,958 TFLOP/s", "int8_tops": "3,958 TOP/s",
}
PRINTED = {
    "h100-sxm": _H100_PRINTED,
    "h200": _H100_PRINTED,
    "h100-pcie": {
        "tf32_tflops": "756 TFLOP/s", "bf16_tflops": "1,513 TFLOP/s", "fp16_tflops": "1,513 TFLOP/s",
        "fp8_tflops": "3,026 TFLOP/s", "int8_tops": "3,026 TOP/s",
    },
    "h100-nvl": {
        "tf32_tflops": "835 TFLOP/s", "bf16_tflops": "1,671 TFLOP/s",
        "fp16_tflops": "1,671 TFLOP/s", "fp8_tflops": "3,341 TFLOP/s", "int8_tops": "3,341 TOP/s",
    },
    "b200": {
        "tf32_tflops": "2.2 PFLOP/s", "bf16_tflops": "4.5 PFLOP/s", "fp16_tflops": "4.5 PFLOP/s",
        "fp8_tflops": "9 PFLOP/s", "int8_tops": "9 POP/s",
    },
    "gb200": {
        "tf32_tflops": "2.5 PFLOP/s", "bf16_tflops": "5 PFLOP/s", "fp16_tflops": "5 PFLOP/s",
        "fp8_tflops": "10 PFLOP/s", "int8_tops": "10 POP/s",
    },
    "l4": {
        "tf32_tflops": "120 TFLOP/s", "bf16_tflops": "242 TFLOP/s", "fp16_tflops": "242 TFLOP/s",
        "fp8_tflops": "485 TFLOP/s", "int8_tops": "485 TOP/s",
    },
}

TENSOR_COLS = ["tf32_tflops", "bf16_tflops", "fp16_tflops", "fp8_tflops", "int8_tops", "int4_tops"]

# --- per-cell decisions -----------------------------------------------------------------------
# (id, column) -> {"value": float in SI base units, "source": "..."} or {"omit": "reason"}.
# "value" may be omitted when the cell is a plain number; then only "flag" (a FLAG text added to
# the source) or "how"/"doc" (replacing the default wording/document) apply.

_GPU_FP64_DERIVED = "FLAG derived, not printed: FP32 {fp32} TFLOP/s x 1/{rate} (FP64 rate of {arch})"
_RECALLED_4090 = ("FLAG: whitepaper values recalled and cross-checked only against third-party "
                  "copies, re-verify against the PDF")
_RECALLED_3090 = ("FLAG: whitepaper values recalled; FP16/FP32-accumulate split confirmed by "
                  "third-party copies only")

CELL: dict[tuple[str, str], dict] = {
    # ---- Hopper
    ("h100-nvl", "sm_or_cu_count"): {"flag": "FLAG UNVERIFIED: 132 SMs assumed from the GH100 SXM5 "
                                     "configuration, not stated on the NVL datasheet"},
    ("h100-nvl", "l2_cache_mb"): {"flag": "FLAG UNVERIFIED: assumed from GH100, not on the NVL datasheet"},
    ("h200", "sm_or_cu_count"): {"flag": "FLAG: assumed identical to H100 SXM, not restated on the H200 datasheet"},
    ("h200", "l2_cache_mb"): {"flag": "FLAG: assumed identical to H100 SXM, not restated on the H200 datasheet"},
    ("h100-pcie", "bf16_tflops"): {"how": "printed 1,513 TFLOP/s with 2:4 structured sparsity (*), halved to "
                                   "756.5 and tabulated as 756 (Bekman ml-engineering table: 756)"},
    ("h100-pcie", "fp16_tflops"): {"how": "printed 1,513 TFLOP/s with 2:4 structured sparsity (*), halved to "
                                   "756.5 and tabulated as 756 (Bekman ml-engineering table: 756)"},
    ("h100-pcie", "memory_bw_gbs"): {"how": "'>2,000 GBps' (HBM2e); the lower bound 2,000 GB/s is used"},
    # ---- Blackwell
    ("b200", "memory_gb"): {"value": 180e9, "source": _HGX + ": 180 GB HBM3e usable, decimal GB; "
                            "FLAG: some NVIDIA docs list 192 GB (physical)"},
    ("b200", "memory_bw_gbs"): {"flag": "FLAG CONFLICT: DGX B200 datasheet 64 TB/s per 8 GPUs = 8 TB/s "
                                "(used) vs current HGX B200 page 62 TB/s total = 7.7 TB/s per GPU"},
    ("b200", "tf32_tflops"): {"flag": "FLAG CONFLICT: older sheet 18 PF sparse per 8 GPUs gives 1,125 TFLOP/s dense"},
    ("b200", "fp64_tensor_tflops"): {"how": "FP64 Tensor Core, 37 TFLOP/s per GPU (= DGX B200 datasheet "
                                     "296 TF per 8 GPUs); equal to the FP64 vector figure"},
    ("b200", "fp32_tflops"): {"how": "FP32 vector, 75 TFLOP/s per GPU (= DGX B200 datasheet 600 TF per 8 GPUs)"},
    ("b200", "l2_cache_mb"): {"value": 126 * MIB, "source": _BW_TG + ": 126 MB L2 (read as MiB); "
                              "FLAG: this is the guide's GB200 example, B200-specific L2 is not published"},
    ("b200", "sm_or_cu_count"): {"value": 148, "source": "FLAG unofficial: 148 SMs is widely reported "
                                 "but not published by NVIDIA"},
    ("gb200", "fp64_tensor_tflops"): {"flag": "FLAG CONFLICT: the launch NVL72 datasheet gave 45 TFLOP/s "
                                      "per GPU (3,240 TF per 72 GPUs)"},
    ("gb200", "memory_gb"): {"flag": "FLAG: the launch superchip datasheet listed 384 GB per superchip (192 per GPU)"},
    ("gb200", "l2_cache_mb"): {"doc": _BW_TG, "flag": "FLAG: the guide's GB200 example, not a spec-table figure"},
    ("gb200", "sm_or_cu_count"): {"omit": "not published"},
    ("gb200", "host_bw_gbs"): {"value": 900e9, "source": _NVL72 + ": NVLink-C2C 900 GB/s bidirectional per "
                               "superchip (1 Grace + 2 GPUs); FLAG: the per-GPU share is not stated"},
    # ---- Ampere
    ("a100-sxm-40gb", "memory_bw_gbs"): {"flag": "FLAG: 40GB-era datasheet figure cross-checked with third-party copies"},
    ("a100-pcie-40gb", "memory_bw_gbs"): {"flag": "FLAG: 40GB-era datasheet figure cross-checked with third-party copies"},
    ("a100-sxm-40gb", "int4_tops"): {"doc": _A100_WP, "how": "dense figure of the whitepaper's 1,248 | 2,496* pair"},
    ("a100-sxm-80gb", "int4_tops"): {"doc": _A100_WP, "how": "dense figure of the whitepaper's 1,248 | 2,496* pair"},
    ("a100-pcie-80gb", "int4_tops"): {"doc": _A100_WP, "how": "dense figure of the whitepaper's 1,248 | 2,496* pair"},
    ("a100-pcie-40gb", "int4_tops"): {"doc": _A100_WP, "how": "dense figure of the whitepaper's 1,248 | 2,496* pair"},
    ("a6000", "fp64_tflops"): {"value": 0.6e12, "source": _GA102_WP + ": " + _GPU_FP64_DERIVED.format(
        fp32="38.7", rate="64", arch="GA102") + " = 0.605, tabulated as ~0.6; FP64 vector (no FP64 tensor cores)"},
    ("a6000", "tf32_tflops"): {"doc": _GA102_WP, "how": "FLAG DERIVED from GA102 per-SM rates (84 SMs, 1.80 GHz), "
                               "dense; not printed on the A6000 datasheet"},
    ("a6000", "int8_tops"): {"doc": _GA102_WP, "how": "FLAG DERIVED from GA102 per-SM rates (84 SMs, 1.80 GHz), "
                             "dense; not printed on the A6000 datasheet"},
    ("a6000", "int4_tops"): {"doc": _GA102_WP, "how": "FLAG DERIVED from GA102 per-SM rates (84 SMs, 1.80 GHz), "
                             "dense; not printed on the A6000 datasheet"},
    ("a6000", "bf16_tflops"): {"how": "'Tensor Performance 309.7 TFLOPS' is FP16 with 2:4 sparsity, halved to "
                               "154.85 and tabulated as 154.8; professional GA102 runs FP32 accumulate at full rate"},
    ("a6000", "fp16_tflops"): {"how": "'Tensor Performance 309.7 TFLOPS' is FP16 with 2:4 sparsity, halved to "
                               "154.85 and tabulated as 154.8; professional GA102 runs FP32 accumulate at full rate"},
    # ---- Ada / consumer
    ("l40s", "fp64_tflops"): {"omit": "not published"},
    ("l4", "fp64_tflops"): {"omit": "not published"},
    ("a10", "fp64_tflops"): {"omit": "not published"},
    ("l40s", "sm_or_cu_count"): {"flag": "FLAG: from Ada architecture docs/third-party, not on the L40S datasheet"},
    ("l40s", "l2_cache_mb"): {"flag": "FLAG: from Ada architecture docs/third-party, not on the L40S datasheet"},
    ("l4", "sm_or_cu_count"): {"flag": "FLAG UNVERIFIED: not on the L4 datasheet (third-party/Ada whitepaper)"},
    ("l4", "l2_cache_mb"): {"flag": "FLAG UNVERIFIED: not on the L4 datasheet (third-party/Ada whitepaper)"},
    ("a10", "sm_or_cu_count"): {"flag": "FLAG UNVERIFIED: not on the A10 datasheet, from GA102 docs"},
    ("a10", "l2_cache_mb"): {"flag": "FLAG UNVERIFIED: not on the A10 datasheet, from GA102 docs"},
    ("rtx-4090", "fp64_tflops"): {"value": 1.3e12, "source": "NVIDIA Ada GPU Architecture whitepaper: "
                                  + _GPU_FP64_DERIVED.format(fp32="82.6", rate="64", arch="AD102")
                                  + " = 1.29, tabulated as ~1.3; FP64 vector (no FP64 tensor cores)"},
    ("rtx-3090", "fp64_tflops"): {"value": 0.56e12, "source": _GA102_WP + ": "
                                  + _GPU_FP64_DERIVED.format(fp32="35.6", rate="64", arch="GA102")
                                  + " = 0.556, tabulated as ~0.56; FP64 vector (no FP64 tensor cores)"},
    ("rtx-3090", "interconnect_bw_gbs"): {"flag": "FLAG: NVLink figure recalled"},
    # ---- Volta / Turing
    ("v100", "int8_tops"): {"omit": "no INT8 tensor cores (DP4A INT8 is not a datasheet figure)"},
    ("v100", "memory_gb"): {"value": 32e9, "source": "NVIDIA V100 datasheet (SXM2 column): 16 GB or 32 GB HBM2; "
                            "the 32 GB part is used, decimal GB (for the 16 GB part write a chip file)"},
    ("v100", "fp16_tflops"): {"how": "'Tensor Performance' 125 TFLOP/s (FP16 in, FP32 accumulate); no sparsity on Volta"},
    ("t4", "fp64_tflops"): {"value": 0.25e12, "source": "NVIDIA T4 datasheet: " + _GPU_FP64_DERIVED.format(
        fp32="8.1", rate="32", arch="TU104") + " = 0.253, tabulated as ~0.25; FP64 vector (no FP64 tensor cores)"},
    ("t4", "fp16_tflops"): {"how": "'Mixed Precision (FP16/FP32)' 65 TFLOP/s; no sparsity on Turing"},
    ("t4", "memory_bw_gbs"): {"how": "printed '320+ GB/s'; 320 GB/s used",
                              "flag": "FLAG: some cloud docs quote 300 GB/s"},
    ("t4", "sm_or_cu_count"): {"doc": "NVIDIA T4 datasheet", "how": "40 SMs (the datasheet's 2,560 CUDA cores / 64 per Turing SM)"},
    # ---- AMD
    ("mi300x", "l2_cache_mb"): {"value": 32 * MIB, "source": _ROCM_SPECS + ": 32 MB L2 (4 MB per XCD x 8; read as MiB)"},
    ("mi325x", "l2_cache_mb"): {"value": 32 * MIB, "source": _ROCM_SPECS + ": 32 MB L2 (4 MB per XCD x 8; read as MiB)"},
    ("mi300x", "last_level_cache_mb"): {"value": 256 * MIB, "source": _ROCM_SPECS + ": 256 MB Infinity Cache (read as MiB)"},
    ("mi325x", "last_level_cache_mb"): {"value": 256 * MIB, "source": _ROCM_SPECS + ": 256 MB Infinity Cache (read as MiB)"},
    ("mi250x", "l2_cache_mb"): {"value": 16 * MIB, "source": _ROCM_SPECS + ": 16 MB L2 for the OAM "
                                "(8 MB per GCD; read as MiB)"},
    ("mi250x", "sm_or_cu_count"): {"value": 220, "source": _ROCM_SPECS + ": 220 CUs for the OAM (110 per GCD)"},
    ("mi250x", "interconnect_bw_gbs"): {"value": 800e9, "source": "AMD MI250X product page: 'up to 800 GB/s' "
                                        "Infinity Fabric (8 links x 50 GB/s per direction, bidirectional aggregate); "
                                        "FLAG CONFLICT: 700 GB/s peer bandwidth (7 links) per Bekman"},
    ("mi250x", "host_bw_gbs"): {"flag": "FLAG: the link is per GCD while this row is per OAM"},
    ("mi250x", "memory_bw_gbs"): {"how": "3,276.8 GB/s for the OAM (2 GCDs x 1,638.4 GB/s)"},
    # ---- Google
    ("tpu-v4", "fp32_tflops"): {"omit": "not published"},
    ("tpu-v5e", "fp32_tflops"): {"omit": "not published"},
    ("tpu-v5p", "fp32_tflops"): {"omit": "not published"},
    ("tpu-v4", "memory_gb"): {"value": 32 * GIB, "source": "Google Cloud TPU docs (v4): 32 GiB HBM2 (vendor says GiB: 32 x 2^30 bytes)"},
    ("tpu-v4", "last_level_cache_mb"): {"value": 128 * MIB, "source": "Jouppi et al. 2023, 'TPU v4' (ISCA): 128 MiB CMEM; "
                                        "FLAG: not confirmed from the primary text"},
    ("tpu-v4", "sm_or_cu_count"): {"value": 2, "source": "Google Cloud TPU docs (v4): 2 TensorCores per chip (4 MXUs each); "
                                   "counts TensorCores, not SMs"},
    ("tpu-v5e", "sm_or_cu_count"): {"value": 1, "source": "Google Cloud TPU docs (v5e): 1 TensorCore per chip (4 MXUs); "
                                    "counts TensorCores, not SMs"},
    ("tpu-v5p", "sm_or_cu_count"): {"value": 2, "source": "Google Cloud TPU docs (v5p): 2 TensorCores per chip (4 MXUs each); "
                                    "counts TensorCores, not SMs"},
    ("tpu-v4", "interconnect_bw_gbs"): {"omit": "per-chip ICI bandwidth is not in the Cloud doc"},
    ("tpu-v5e", "interconnect_bw_gbs"): {"value": 400e9, "source": "Google Cloud TPU docs (v5e): ICI 1,600 Gbps = "
                                         "400 GB/s bidirectional per chip"},
    ("tpu-v5p", "interconnect_bw_gbs"): {"value": 600e9, "source": "Google Cloud TPU docs (v5p): ICI 4,800 Gbps = 600 GB/s "
                                         "per chip; FLAG: whether this is bidirectional is not stated"},
    ("tpu-v5e", "memory_bw_gbs"): {"flag": "FLAG CONFLICT between doc revisions: '819 GBps' (used) vs '800 GiBps'"},
    ("tpu-v5e", "int8_tops"): {"flag": "FLAG CONFLICT between doc revisions: 393 vs 394 TOP/s (394 = 2 x 197 used)"},
    ("tpu-v5p", "int8_tops"): {"doc": "Google Cloud blog (v5p announcement) / Bekman ml-engineering table",
                               "flag": "FLAG UNVERIFIED: 918 TOP/s is not in the v5p doc table"},
    # ---- Intel
    ("gaudi2", "fp32_tflops"): {"omit": "not published"},
    ("gaudi2", "tf32_tflops"): {"omit": "not published"},
    ("gaudi2", "fp16_tflops"): {"omit": "not published"},
    ("gaudi2", "int8_tops"): {"omit": "not published"},
    ("gaudi3", "int8_tops"): {"omit": "not published"},
    ("gaudi2", "bf16_tflops"): {"how": "dense MME peak (2 MMEs x 256x256 MACs x 2 x 1.65 GHz = 432)"},
    ("gaudi3", "bf16_tflops"): {"how": "dense MME peak at the white paper's planned 1.75 GHz",
                                "flag": "FLAG CONFLICT: shipping parts run 1.6 GHz -> 1,677 TFLOP/s (Bekman)"},
    ("gaudi3", "fp8_tflops"): {"how": "dense MME peak at the white paper's planned 1.75 GHz",
                               "flag": "FLAG CONFLICT: shipping parts run 1.6 GHz -> 1,677 TFLOP/s (Bekman)"},
    ("gaudi3", "fp16_tflops"): {"how": "dense, as published (MME FP16 is 1/4 of the BF16 rate)"},
    ("gaudi2", "l2_cache_mb"): {"value": 48 * MIB, "source": _GAUDI2 + ": 48 MB on-die SRAM, software-managed (read as MiB)"},
    ("gaudi3", "l2_cache_mb"): {"value": 96 * MIB, "source": _GAUDI3 + ": 96 MB on-die SRAM (configurable as "
                                "4 x 24 MB L2 or 1 x 96 MB L3; read as MiB)"},
    ("gaudi2", "sm_or_cu_count"): {"omit": "24 TPCs + 2 MMEs: two kinds of engine, no single SM-like count"},
    ("gaudi3", "sm_or_cu_count"): {"omit": "64 TPCs + 8 MMEs: two kinds of engine, no single SM-like count"},
    ("gaudi2", "interconnect_bw_gbs"): {"value": 600e9, "source": _GAUDI2 + ": 24 x 100 GbE RoCE v2 = 2.4 Tb/s = "
                                       "300 GB/s per direction, doubled to the bidirectional aggregate (21 ports intra-node)"},
    ("gaudi3", "interconnect_bw_gbs"): {"value": 1200e9, "source": _GAUDI3 + ": 24 x 200 GbE RoCE v2 = 4.8 Tb/s = "
                                       "600 GB/s per direction, doubled to the bidirectional aggregate"},
    # ---- Apple
    ("m1-max", "fp32_tflops"): {"value": 10.4e12, "source": "Apple M1 Max launch event (Oct 2021): 10.4 TFLOPS GPU "
                                "(32-core GPU, FP32 vector); FLAG: event figure, not in the press-release text"},
    ("m2-ultra", "fp32_tflops"): {"value": 27.2e12, "source": "FLAG DERIVED (third-party), not published by Apple: "
                                  "76 GPU cores x 128 FP32 lanes x 2 FLOP x ~1.4 GHz = ~27.2 TFLOP/s (FP32 vector)"},
    ("m3-max", "fp32_tflops"): {"omit": "not published (third-party estimates ~14-16 TFLOP/s only): measure it"},
    ("m1-max", "fp16_tflops"): {"omit": "not published"},
    ("m2-ultra", "fp16_tflops"): {"omit": "not published"},
    ("m3-max", "fp16_tflops"): {"omit": "not published"},
    ("m1-max", "sm_or_cu_count"): {"value": 32, "source": _APPLE_21 + ": 32-core GPU (max config); counts Apple GPU cores"},
    ("m2-ultra", "sm_or_cu_count"): {"value": 76, "source": _APPLE_23U + ": 76-core GPU (max config); counts Apple GPU cores"},
    ("m3-max", "sm_or_cu_count"): {"value": 40, "source": _APPLE_23 + ": 40-core GPU (max config); counts Apple GPU cores"},
    ("m3-max", "memory_bw_gbs"): {"how": "400 GB/s for the 16-CPU/40-GPU part (the binned 30-GPU part is 300 GB/s)"},
}

# Row-wide FLAG added to every value taken from the row's main document.
ROW_FLAG = {
    "rtx-4090": _RECALLED_4090,
    "rtx-3090": _RECALLED_3090,
    "mi250x": "FLAG: derived, not read from a datasheet table",
    "mi325x": "FLAG: 'same as MI300X' per the AMD product page, not re-read",
}
ROW_FLAG_FIELDS = {
    "rtx-4090": {"peaks", "mem", "arch"},
    "rtx-3090": {"peaks"},
    "mi250x": {"peaks"},
    "mi325x": {"peaks"},
}

# Extra notes per chip: omissions and conventions that matter when reading the file.
EXTRA_NOTES = {
    "h100-sxm": ["fp64 is the FP64 Tensor Core peak (67 TFLOP/s); the FP64 vector peak is 34 TFLOP/s.",
                 "Whitepaper dense figures at 1830 MHz boost: TF32 494.7, BF16/FP16 989.4, FP8 1978.9 TFLOP/s; "
                 "the datasheet halves (989.5 BF16) are used, as in MosaicML's published MFUs."],
    "h100-pcie": ["fp64 is the FP64 Tensor Core peak (51 TFLOP/s); the FP64 vector peak is 26 TFLOP/s."],
    "h100-nvl": ["Per GPU. The 2023 launch datasheet described H100 NVL as a 2-GPU pair (188 GB, 7.8 TB/s, "
                 "doubled FLOPs): do not mix with these per-GPU values.",
                 "fp64 is the FP64 Tensor Core peak (60 TFLOP/s); the FP64 vector peak is 30 TFLOP/s."],
    "h200": ["fp64 is the FP64 Tensor Core peak (67 TFLOP/s); the FP64 vector peak is 34 TFLOP/s."],
    "b200": ["Per GPU of an HGX B200 board (dual-die Blackwell).",
             "Dense FP4 (NVFP4) 9,000 TFLOP/s per GPU (board '144 | 72 PFLOPS' sparse | dense) is not stored: "
             "the schema has no fp4 key.",
             "Power: 1,000 W max TGP (DGX default set point 700 W) - not modelled."],
    "gb200": ["Per Blackwell GPU: a GB200 superchip is 1 Grace CPU + 2 GPUs; an NVL72 rack is 72 GPUs.",
              "Dense FP4 (NVFP4) 10,000 TFLOP/s per GPU (rack '1,440 | 720 PFLOPS' sparse | dense) is not stored: "
              "the schema has no fp4 key.",
              "SM count is not published: sm_count is omitted."],
    "a100-sxm-40gb": ["fp64 is the FP64 Tensor Core peak (19.5 TFLOP/s); the FP64 vector peak is 9.7 TFLOP/s. "
                      "No FP8 on Ampere."],
    "a100-sxm-80gb": ["fp64 is the FP64 Tensor Core peak (19.5 TFLOP/s); the FP64 vector peak is 9.7 TFLOP/s. "
                      "No FP8 on Ampere."],
    "a100-pcie-80gb": ["fp64 is the FP64 Tensor Core peak (19.5 TFLOP/s); the FP64 vector peak is 9.7 TFLOP/s. "
                       "No FP8 on Ampere."],
    "a100-pcie-40gb": ["fp64 is the FP64 Tensor Core peak (19.5 TFLOP/s); the FP64 vector peak is 9.7 TFLOP/s. "
                       "No FP8 on Ampere."],
    "a6000": ["Only FP32 38.7 and 'Tensor Performance 309.7 TFLOPS' (sparse FP16) are printed; fp64, tf32, "
              "int8 and int4 are derived and marked FLAG in their sources (kept: they follow from the "
              "published GA102 per-SM rates)."],
    "l40s": ["FP64 is not published: no fp64 peak."],
    "l4": ["FP64 is not published: no fp64 peak. INT4 has no figure."],
    "a10": ["FP64 is not published: no fp64 peak. No FP8 on Ampere."],
    "rtx-4090": ["GeForce halves the FP32-accumulate tensor rate: bf16/fp16 are the FP32-accumulate figures "
                 "(165.2); FP16 with FP16 accumulate is 330.3 dense, FP8 with FP16 accumulate 660.6.",
                 "fp64 is derived (1/64 of FP32) and marked FLAG; kept as a rough figure."],
    "rtx-3090": ["GeForce halves the FP32-accumulate tensor rate: bf16/fp16 are the FP32-accumulate figures "
                 "(71); FP16 with FP16 accumulate is 142 dense.",
                 "fp64 is derived (1/64 of FP32) and marked FLAG; kept as a rough figure."],
    "v100": ["fp64 is the FP64 vector peak (Volta has no FP64 tensor cores).",
             "Memory: the 32 GB SXM2 part; a 16 GB part exists.",
             "No BF16, TF32 or INT8 tensor cores on Volta: no bf16/tf32/int8 peak (use fp16)."],
    "t4": ["fp64 is derived (1/32 of FP32) and marked FLAG; kept as a rough figure.",
           "No BF16 or TF32 on Turing: no bf16/tf32 peak (use fp16)."],
    "mi300x": ["fp64 is the FP64 matrix peak (163.4 TFLOP/s); the FP64 vector peak is 81.7 TFLOP/s. "
               "FP32 matrix is also 163.4.",
               "AMD also publishes structured-sparsity figures at exactly 2x (FP16 2,614.9, FP8 5,229.8): not used."],
    "mi325x": ["fp64 is the FP64 matrix peak (163.4 TFLOP/s); the FP64 vector peak is 81.7 TFLOP/s."],
    "mi250x": ["Whole OAM: 2 GCDs that the OS sees as 2 devices - halve every figure for one device.",
               "fp64 is the FP64 matrix peak (95.7 TFLOP/s); the FP64 vector peak is 47.9 TFLOP/s. "
               "FP32 matrix / packed FP32 is 95.7; fp32 is the vector figure (47.9).",
               "Host link is PCIe Gen4 x16 per GCD (FLAG: the row is per OAM)."],
    "tpu-v4": ["FP32 peak is not published: only bf16 and int8 peaks.",
               "ICI per-chip bandwidth is not in the Cloud doc: the interconnect has no bandwidth.",
               "sm_count counts TensorCores (2), not SM-like units.",
               "launch_overhead is a placeholder, paid once per step (XLA runs a step as one compiled program, no per-kernel host launch)."],
    "tpu-v5e": ["FP32 peak is not published: only bf16 and int8 peaks.",
                "sm_count counts TensorCores (1), not SM-like units.",
                "launch_overhead is a placeholder, paid once per step (XLA runs a step as one compiled program, no per-kernel host launch)."],
    "tpu-v5p": ["FP32 peak is not published: only bf16 and int8 peaks.",
                "sm_count counts TensorCores (2), not SM-like units.",
                "launch_overhead is a placeholder, paid once per step (XLA runs a step as one compiled program, no per-kernel host launch)."],
    "gaudi2": ["Only BF16/FP8 MME peaks are published: no fp32/tf32/fp16/int8 peak.",
               "The 48 MB on-die SRAM is software-managed (level sram). sm_count omitted: 24 TPCs + 2 MMEs.",
               "RoCE bandwidth is published per direction (300 GB/s); stored doubled as the bidirectional aggregate.",
               "launch_overhead is a placeholder, paid once per step (graph-compiled execution), not measured."],
    "gaudi3": ["bf16/fp8 use the spec 1,835 TFLOP/s (1.75 GHz); shipping parts at 1.6 GHz give 1,677 - "
               "measure or write a chip file for the as-shipped figure.",
               "The 96 MB on-die SRAM is stored as level sram. sm_count omitted: 64 TPCs + 8 MMEs.",
               "RoCE bandwidth is published per direction (600 GB/s); stored doubled as the bidirectional aggregate.",
               "launch_overhead is a placeholder, paid once per step (graph-compiled execution), not measured."],
    "m1-max": ["Only an FP32 GPU peak (launch-event figure, FLAG); Neural Engine ~11 TOPS is a separate "
               "engine with unstated precision and is not used.",
               "Unified LPDDR5 memory; no separate host link.",
               "launch_overhead is a placeholder for Metal dispatch, not measured."],
    "m2-ultra": ["Only an FP32 GPU peak, derived by a third party (FLAG); Neural Engine 31.6 TOPS is a separate "
                 "engine and is not used.",
                 "UltraFusion (die-to-die, 2.5 TB/s) joins the two dies inside the package; it is not a "
                 "chip-to-chip fabric and is not stored as the interconnect.",
                 "Unified LPDDR5 memory; no separate host link.",
                 "launch_overhead is a placeholder for Metal dispatch, not measured."],
    "m3-max": ["No GPU peak at all: Apple does not publish GPU TFLOPS (third-party ~14-16 TFLOP/s estimates "
               "are not used). Measure the chip before a roofline.",
               "Neural Engine 18 TOPS is a separate engine and is not used.",
               "Unified LPDDR5 memory; no separate host link.",
               "launch_overhead is a placeholder for Metal dispatch, not measured."],
}

LAUNCH = {
    "gpu": (5e-6, "typical CUDA/HIP kernel launch overhead, 5-10 µs per launch (roofline seed); lower end"),
    "tpu": (5e-6, "placeholder, not measured: TPUs run a step as one XLA-compiled program (no per-kernel host "
                  "launch), charged once per step; the CUDA/HIP seed's lower end (5 µs) stands for that one "
                  "dispatch - FLAG, measure for real numbers"),
    "gaudi": (5e-6, "placeholder, not measured: Gaudi runs a step as one graph-compiled recipe (SynapseAI), "
                    "charged once per step; the CUDA/HIP seed's lower end (5 µs) stands for that one launch - "
                    "FLAG, measure for real numbers"),
    "apple": (5e-6, "placeholder, not measured: Metal compute dispatch; the CUDA/HIP seed's lower end "
                    "(5 µs per launch) is used - FLAG, measure for real numbers"),
}

OMIT_WORDS = ("n/a", "not published", "none", "not in cloud doc")

PEAK_COLS = [  # (toml key, csv column)
    ("fp64", None),  # chosen below: tensor if present, else vector
    ("fp32", "fp32_tflops"),
    ("tf32", "tf32_tflops"),
    ("bf16", "bf16_tflops"),
    ("fp16", "fp16_tflops"),
    ("fp8", "fp8_tflops"),
    ("int8", "int8_tops"),
    ("int4", "int4_tops"),
]

NUM_RE = re.compile(r"^-?\d+(\.\d+)?$")


class CellError(Exception):
    pass


def is_omitted(cell: str) -> bool:
    c = cell.strip().lower()
    return c == "" or any(c == w or c.startswith(w + " ") or c.startswith(w + "(") for w in OMIT_WORDS)


def plain(cell: str):
    c = cell.strip()
    return float(c) if NUM_RE.match(c) else None


def eng(x: float) -> str:
    """A TOML float in engineering notation (mantissa in [1, 1000), exponent a multiple of 3)."""
    if x == 0:
        return "0.0"
    d = Decimal(repr(float(x)))
    e = d.adjusted()
    e3 = (e // 3) * 3
    m = d.scaleb(-e3).normalize()
    ms = format(m, "f")
    return ms if e3 == 0 and "." in ms else f"{ms}e{e3}"


def q(s: str) -> str:
    """A TOML basic string."""
    out = ['"']
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def cited(value, source: str, integer: bool = False) -> str:
    v = str(int(value)) if integer else eng(value)
    return f"{{ value = {v}, source = {q(source)} }}"


def add_flag(source: str, flag: str | None) -> str:
    return f"{source}; {flag}" if flag else source


class Row:
    def __init__(self, rec: dict, readme_flags: dict[int, str]):
        self.rec = rec
        self.id = IDS.get(rec["device"])
        if self.id is None:
            raise CellError(f"csv device {rec['device']!r} has no id in IDS")
        self.docs = DOCS[self.id]
        self.readme_flags = readme_flags
        self.omitted: list[str] = []

    def cell(self, col: str, *, kind: str, scale: float, default_how: str, integer: bool = False,
             field: str = "peaks"):
        """(value, source) for a column, or None when omitted. Raises on an undecided text cell."""
        raw = self.rec[col]
        dec = CELL.get((self.id, col), {})
        if "omit" in dec:
            self.omitted.append(f"{col} ({dec['omit']})")
            return None
        if "value" in dec:
            return dec["value"], dec["source"]
        num = plain(raw)
        if num is None:
            if is_omitted(raw):
                return None
            raise CellError(f"{self.id}: cell {col} = {raw!r} is not a plain number and has no CELL decision")
        doc = dec.get("doc", self.docs[field])
        how = dec.get("how", default_how)
        source = f"{doc}: {how}"
        if self.id in ROW_FLAG and field in ROW_FLAG_FIELDS[self.id] and "doc" not in dec:
            source = add_flag(source, ROW_FLAG[self.id])
        source = add_flag(source, dec.get("flag"))
        value = int(num) if integer else num * scale
        return value, source

    # --- peaks
    def peak_how(self, key: str, col: str) -> str:
        unit = "TOP/s" if col.endswith("_tops") else "TFLOP/s"
        raw = self.rec[col].strip()
        mode = MODE.get(self.id, "dense")
        if col in ("fp64_tflops", "fp64_tensor_tflops", "fp32_tflops"):
            what = {"fp64_tflops": "FP64 vector (no FP64 tensor/matrix path)",
                    "fp64_tensor_tflops": "FP64 tensor/matrix peak (what a GEMM gets)",
                    "fp32_tflops": "FP32 vector (non-tensor)"}[col]
            return f"{what}, {raw} {unit}"
        if mode == "halved" and col in PRINTED.get(self.id, {}):
            return (f"printed {PRINTED[self.id][col]} with 2:4 structured sparsity (*), halved to dense "
                    f"{raw} {unit}")
        if mode == "pair":
            acc = " (FP32 accumulate)" if col in ("bf16_tflops", "fp16_tflops") else ""
            return f"dense {raw} {unit}{acc}, the dense figure of the printed dense | sparse* pair"
        if self.id.startswith("mi"):
            return f"dense {raw} {unit} (AMD's 2x structured-sparsity figure not used)"
        return f"dense {raw} {unit} as published (no sparsity)"

    def peaks(self):
        out = []
        for key, col in PEAK_COLS:
            if key == "fp64":
                tensor = self.rec["fp64_tensor_tflops"]
                col = "fp64_tensor_tflops" if (plain(tensor) is not None
                                               or (self.id, "fp64_tensor_tflops") in CELL) \
                    else "fp64_tflops"
                if col == "fp64_tensor_tflops" and not is_omitted(self.rec["fp64_tflops"]) \
                        and plain(self.rec["fp64_tflops"]) is None:
                    raise CellError(f"{self.id}: fp64 vector cell is text while the tensor cell is used")
            r = self.cell(col, kind="peak", scale=1e12, default_how=self.peak_how(key, col))
            if r is not None:
                out.append((key, r))
        for col in ("fp4_tflops",):
            raw = self.rec[col].strip()
            if not is_omitted(raw):
                self.omitted.append(f"{col} ({raw} TFLOP/s dense; no fp4 key in the schema)")
        return out

    # --- memory
    def memory(self):
        levels = []
        cap = self.cell("memory_gb", kind="cap", scale=1e9, field="mem",
                        default_how=f"{self.rec['memory_gb'].strip()} GB {self.rec['memory_type'].strip()} "
                                    "(decimal GB, 1e9 bytes)")
        bw = self.cell("memory_bw_gbs", kind="bw", scale=1e9, field="mem",
                       default_how=f"{self.rec['memory_bw_gbs'].strip()} GB/s peak "
                                   f"{self.rec['memory_type'].strip()} bandwidth (1 GB/s = 1e9 B/s)")
        if bw is None:
            raise CellError(f"{self.id}: no main-memory bandwidth")
        levels.append({"level": "main", "name": self.rec["memory_type"].strip(), "bw": bw, "cap": cap,
                       "cap_int": self.id == "tpu-v4"})
        l2 = self.cell("l2_cache_mb", kind="cap", scale=MIB, field="arch", integer=False,
                       default_how=f"{self.rec['l2_cache_mb'].strip()} MB L2 (read as MiB, 2^20 bytes)")
        if l2 is not None:
            if self.id.startswith("gaudi"):
                name = "SRAM (software-managed)" if self.id == "gaudi2" else "SRAM (configurable as L2 or L3)"
                levels.append({"level": "sram", "name": name, "bw": None, "cap": l2, "cap_int": True})
            else:
                levels.append({"level": "l2", "name": "L2", "bw": None, "cap": l2, "cap_int": True})
        l3 = self.cell("last_level_cache_mb", kind="cap", scale=MIB, field="arch",
                       default_how=f"{self.rec['last_level_cache_mb'].strip()} MB (read as MiB)")
        if l3 is not None:
            name = "CMEM" if self.id.startswith("tpu") else "Infinity Cache"
            levels.append({"level": "l3", "name": name, "bw": None, "cap": l3, "cap_int": True})
        return levels

    # --- compute
    def compute(self):
        sm = self.cell("sm_or_cu_count", kind="count", scale=1, integer=True, field="arch",
                       default_how=f"{self.rec['sm_or_cu_count'].strip()} "
                                   + ("CUs" if self.rec["vendor"] == "AMD" else "SMs"))
        smem = None
        raw = self.rec["l1_smem_per_sm_kb"].strip()
        m_nv = re.match(r"^(\d+) \(up to (\d+) shared\)$", raw)
        m_amd = re.match(r"^(\d+) LDS \+ (\d+) L1 per CU$", raw)
        if m_nv:
            kib = int(m_nv.group(2))
            smem = (kib * KIB, f"{self.docs['smem']}: {m_nv.group(1)} KiB combined L1/shared per SM, "
                               f"up to {kib} KiB configurable as shared memory ({kib} x 1024 bytes)")
        elif m_amd:
            kib = int(m_amd.group(1))
            smem = (kib * KIB, f"{self.docs['arch']}: {kib} KiB LDS per CU ({kib} x 1024 bytes); "
                               f"L1 {m_amd.group(2)} KiB not counted")
        elif not is_omitted(raw):
            raise CellError(f"{self.id}: l1_smem_per_sm_kb = {raw!r} not understood")
        fam = ("tpu" if self.id.startswith("tpu") else "gaudi" if self.id.startswith("gaudi")
               else "apple" if self.id.startswith("m") and self.rec["vendor"] == "Apple" else "gpu")
        return sm, smem, LAUNCH[fam]

    def link(self, name_col: str, bw_col: str, field: str):
        name = self.rec[name_col].strip()
        if is_omitted(name):
            bw_raw = self.rec[bw_col].strip()
            if not is_omitted(bw_raw):
                raise CellError(f"{self.id}: {bw_col} without {name_col}")
            return None
        if self.id == "m2-ultra" and name_col == "scale_up_interconnect":
            self.omitted.append(f"{name_col} ({name}: die-to-die inside the package)")
            return None
        bw = self.cell(bw_col, kind="bw", scale=1e9, field=field,
                       default_how=f"{self.rec[bw_col].strip()} GB/s, bidirectional aggregate per device")
        return name, bw

    def notes(self):
        notes = []
        for n in README_FLAGS.get(self.id, []):
            notes.append(f"README flag {n}: {self.readme_flags[n]}")
        flags = self.rec["flags"].strip()
        if flags:
            notes.append(f"csv flags: {flags}")
        notes.extend(EXTRA_NOTES.get(self.id, []))
        notes.append("Values whose source contains FLAG are derived, conflicting or unverified.")
        return notes

    def render(self) -> str:
        peaks = self.peaks()
        memory = self.memory()
        sm, smem, launch = self.compute()
        link = self.link("scale_up_interconnect", "interconnect_bw_gbs", "link")
        host = self.link("host_interface", "host_bw_gbs", "host")
        notes = self.notes()
        if self.omitted:
            notes.append("Omitted cells: " + "; ".join(self.omitted) + ".")
        name = self.rec["device"].strip()
        lines = [
            f"# {name}. Generated by scripts/gen_catalog.py from shared/hardware/hardware.csv; "
            "every number carries its source.",
            f"id = {q(self.id)}",
            f"name = {q(name)}",
            f"vendor = {q(self.rec['vendor'].strip())}",
            "notes = [",
        ]
        lines += [f"    {q(n)}," for n in notes]
        lines += ["]", "", "[peak_flops_per_s]"]
        for key, (v, s) in peaks:
            lines.append(f"{key} = {cited(v, s)}")
        for m in memory:
            lines += ["", "[[memory]]", f"level = {q(m['level'])}", f"name = {q(m['name'])}"]
            if m["bw"] is not None:
                lines.append(f"bandwidth_bytes_per_s = {cited(*m['bw'])}")
            if m["cap"] is not None:
                v, s = m["cap"]
                lines.append(f"capacity_bytes = {cited(v, s, integer=m['cap_int'])}")
        lines += ["", "[compute]"]
        if sm is not None:
            lines.append(f"sm_count = {cited(sm[0], sm[1], integer=True)}")
        if smem is not None:
            lines.append(f"shared_memory_per_sm_bytes = {cited(smem[0], smem[1], integer=True)}")
        lines.append(f"launch_overhead_s = {cited(*launch)}")
        if self.id.startswith("tpu") or self.id.startswith("gaudi"):
            # one compiled program per step: the launch is paid once per step, not per kernel
            lines.append('launch_model = "per_program"')
        for table, lk in (("interconnect", link), ("host", host)):
            if lk is None:
                continue
            lname, bw = lk
            lines += ["", f"[{table}]", f"name = {q(lname)}"]
            if bw is not None:
                lines.append(f"bandwidth_bytes_per_s = {cited(*bw)}")
        return "\n".join(lines) + "\n"


def read_readme_flags() -> dict[int, str]:
    text = README_PATH.read_text(encoding="utf-8")
    sec = text.split("## 4.", 1)
    if len(sec) != 2:
        raise CellError("README has no section 4")
    flags: dict[int, str] = {}
    cur = None
    for line in sec[1].splitlines()[1:]:
        if line.startswith("## "):
            break
        m = re.match(r"^(\d+)\. (.*)$", line)
        if m:
            cur = int(m.group(1))
            flags[cur] = m.group(2).strip()
        elif cur is not None and line.startswith((" ", "\t")) and line.strip():
            flags[cur] += " " + line.strip()
    for k in flags:
        flags[k] = flags[k].replace("**", "")
    if sorted(flags) != list(range(1, 19)):
        raise CellError(f"README section 4: expected flags 1-18, found {sorted(flags)}")
    return flags


def platform_tail(path: Path) -> str:
    """The ``[platform]`` section of the existing file and what follows it, kept as written.

    The platform (the node a chip is sold in, its links per GPU per direction and their
    latencies) and the chip's own measured ``[efficiency]`` shares are not in the csv: they
    are written by hand, with their sources, at the end of the file, and survive
    regeneration."""
    if not path.exists():
        return ""
    old = path.read_text(encoding="utf-8")
    if "\n[platform]\n" not in old:
        return ""
    return "\n[platform]\n" + old.split("\n[platform]\n", 1)[1]


def check(path: Path, text: str, dev_id: str) -> None:
    """Parses the written file back with tomllib and checks the schema and the value ranges."""
    doc = tomllib.loads(text)
    assert doc["id"] == dev_id == path.stem, path
    allowed = {"id", "name", "vendor", "notes", "peak_flops_per_s", "memory", "compute", "interconnect", "host", "platform", "efficiency"}
    assert set(doc) <= allowed, (path, set(doc) - allowed)

    def pos(c, what, hi):
        assert set(c) == {"value", "source"}, (path, what)
        v = c["value"]
        assert isinstance(v, (int, float)) and 0 < v <= hi, (path, what, v)
        assert c["source"].strip(), (path, what)

    for k, c in doc["peak_flops_per_s"].items():
        assert k in {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4"}, (path, k)
        pos(c, k, 1e18)
        assert c["value"] >= 1e9, (path, k, "not in FLOP/s?")
    assert doc["memory"][0]["level"] == "main" and "bandwidth_bytes_per_s" in doc["memory"][0], path
    for m in doc["memory"]:
        assert m["level"] in {"main", "l2", "l3", "l1", "sram"}, path
        if "bandwidth_bytes_per_s" in m:
            pos(m["bandwidth_bytes_per_s"], "memory bandwidth", 1e15)
        if "capacity_bytes" in m:
            pos(m["capacity_bytes"], "capacity", 1e15)
    pos(doc["compute"]["launch_overhead_s"], "launch", 1.0)
    for t in ("interconnect", "host"):
        if t in doc and "bandwidth_bytes_per_s" in doc[t]:
            pos(doc[t]["bandwidth_bytes_per_s"], t, 1e15)


def main() -> int:
    readme_flags = read_readme_flags()
    with CSV_PATH.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        recs = list(reader)
    units, recs = recs[0], recs[1:]
    if units["device"].strip():
        raise CellError("line 2 of the csv is expected to be the units row")
    if len(recs) != 29:
        raise CellError(f"expected 29 device rows, found {len(recs)}")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    written = []
    for rec in recs:
        rec = {k: (v or "") for k, v in rec.items()}
        row = Row(rec, readme_flags)
        text = row.render()
        path = OUT_DIR / f"{row.id}.toml"
        text += platform_tail(path)
        check(path, text, row.id)
        path.write_text(text, encoding="utf-8")
        written.append(row.id)
    if sorted(written) != sorted(IDS.values()):
        raise CellError("not every id was written")
    # Leftover files of ids that no longer exist would still be embedded: report them.
    stale = sorted(p.name for p in OUT_DIR.glob("*.toml") if p.stem not in written)
    for s in stale:
        print(f"warning: stale catalog file {s} (not in the csv)", file=sys.stderr)
    print(f"wrote {len(written)} files to {OUT_DIR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CellError as e:
        print(f"gen_catalog: {e}", file=sys.stderr)
        sys.exit(1)
