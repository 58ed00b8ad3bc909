"""Roofline analysis of transformer models on chips, from Python.

Every function runs one ``roofline`` command in this process (the Rust library behind the
CLI, with the interpreter lock released) and returns the document that
``roofline <command> … --format json`` prints, as a :class:`Document` (a ``dict``).

Models are preset ids (``"llama-3.1-8b"``, see :func:`models`), paths to a Hugging Face
``config.json`` (or a folder holding one), or dicts of such a config. Chips are ids
(``"h100-sxm"``, see :func:`hardware_list`), paths to a chip ``.toml`` in the catalog's
format, or dicts of one. :func:`analyze` hands its settings to the typed API as one request
(``docs/schema/requests/analyze.schema.json``), a dict model or chip inline, no file written;
the other commands write a dict to a temporary file for the call and remove it after.

Keyword arguments beyond the named ones map to the command's flags: ``seq_len=2048`` is
``--seq-len 2048``, ``flash_attention=True`` is ``--flash-attention`` (``False`` and ``None``
leave a flag out), a list or tuple is comma-separated (``batch=[1, 8, 32]`` is
``--batch 1,8,32``) and a dict of shares is ``name=value`` pairs
(``efficiency={"matmul": 0.74}`` is ``--efficiency matmul=0.74``).

Errors are the CLI's: :class:`RooflineError` (a ``ValueError``: bad input, exit code 2) or
:class:`RooflineInternalError` (a ``RuntimeError``: an internal fault, exit code 1), each
with ``message``, ``hint`` (or ``None``) and ``code``; ``str(e)`` is the ``error:`` and
``hint:`` lines the CLI prints.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Union

from ._roofline import RooflineError, RooflineInternalError
from ._roofline import analyze as _analyze
from ._roofline import run as _run

if TYPE_CHECKING:
    import pandas

__all__ = [
    "Document",
    "RooflineError",
    "RooflineInternalError",
    "analyze",
    "fuse",
    "generate",
    "hardware_list",
    "hardware_show",
    "mbu",
    "mfu",
    "models",
    "op",
    "plan",
    "run",
    "to_toml",
    "sweep",
    "train",
]

__version__ = "0.1.0"

#: A preset id, a path to a config.json (or a folder holding one), or a config as a dict.
Model = Union[str, "os.PathLike[str]", Mapping[str, Any]]
#: A chip id, a path to a chip .toml, or a chip as a dict (the .toml's tables and keys).
Chip = Union[str, "os.PathLike[str]", Mapping[str, Any]]

# Flags whose dict value is a model config (written as config.json) or a chip or system file
# (written as TOML); any other dict value is `name=value` pairs.
_MODEL_FLAGS = frozenset({"model", "draft"})
_TOML_FLAGS = frozenset({"hardware", "system"})


class Document(Dict[str, Any]):
    """A command's JSON document as Python objects (a ``dict``)."""

    def to_pandas(self) -> "pandas.DataFrame":
        """The document's table as a pandas DataFrame, one row a record.

        An ``analyze`` or ``generate`` document gives one row per operator of each stage (a
        ``stage`` column first); ``op`` one row per kernel; ``models`` and ``hardware_list``
        one row per model or chip. Nested fields are flattened to ``parent.child`` columns.

        Raises ImportError when pandas is not installed, ValueError when the document has no
        such table.
        """
        try:
            import pandas
        except ImportError as e:
            raise ImportError(
                "Document.to_pandas() needs pandas: pip install pandas "
                "(or pip install 'roofline[pandas]')"
            ) from e
        return pandas.DataFrame.from_records(self.rows())

    def rows(self) -> List[Dict[str, Any]]:
        """The records :meth:`to_pandas` tabulates, as flat dicts (no pandas needed)."""
        stages = self.get("stages")
        if isinstance(stages, list) and all(
            isinstance(s, dict) and "ops" in s for s in stages
        ):
            return [
                {"stage": s.get("stage"), **_flatten(o)} for s in stages for o in s["ops"]
            ]
        for key in ("kernels", "models", "hardware"):
            table = self.get(key)
            if isinstance(table, list) and all(isinstance(r, dict) for r in table):
                return [_flatten(r) for r in table]
        raise ValueError(
            "this document has no operator table (analyze, generate and op have one; "
            "models and hardware_list a row per entry): read its fields as a dict"
        )


def _flatten(record: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    """`{"span": {"kind": "x"}}` as `{"span.kind": "x"}`; lists are kept as values."""
    flat: Dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def run(args: Sequence[Union[str, "os.PathLike[str]"]]) -> str:
    """Runs ``roofline ARGS…`` (without the program name) and returns what it prints.

    Any command and format: ``run(["analyze", "gpt2", "--format", "csv"])``.
    """
    return _run([os.fspath(a) for a in args])


# ---------------------------------------------------------------------------------------------
# Inputs written to temporary files, and flags


class _Inputs:
    """Temporary files for the dicts of one call, removed when the call ends."""

    def __init__(self) -> None:
        self._dir: Optional[tempfile.TemporaryDirectory[str]] = None
        self._count = 0

    def __enter__(self) -> "_Inputs":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._dir is not None:
            self._dir.cleanup()

    def _path(self, folder: str, name: str) -> str:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="roofline-")
        self._count += 1
        d = os.path.join(self._dir.name, str(self._count), folder)
        os.makedirs(d)
        return os.path.join(d, name)

    def model(self, config: Mapping[str, Any]) -> str:
        """`config` as `<tmp>/<name>/config.json`: the CLI names a config by its folder, so
        the folder is the config's `_name_or_path` (its last part), or `model`."""
        name = str(config.get("_name_or_path") or "model").rstrip("/").split("/")[-1]
        folder = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "model"
        path = self._path(folder, "config.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(config, f)
        return path

    def toml(self, table: Mapping[str, Any]) -> str:
        """`table` as a TOML file (a chip or a system)."""
        name = re.sub(r"[^A-Za-z0-9._-]", "_", str(table.get("id") or "chip")) or "chip"
        path = self._path("chip", f"{name}.toml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(to_toml(table))
        return path

    def value(self, flag: str, value: Any) -> str:
        """One flag's value as the CLI reads it."""
        if isinstance(value, Mapping):
            if flag in _MODEL_FLAGS:
                return self.model(value)
            if flag in _TOML_FLAGS:
                return self.toml(value)
            return ",".join(f"{k}={_scalar(v)}" for k, v in value.items())
        if isinstance(value, (list, tuple)):
            return ",".join(self.value(flag, v) for v in value)
        return _scalar(value)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, os.PathLike):
        return str(os.fspath(value))
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _bad_input(message: str, hint: str) -> RooflineError:
    """A :class:`RooflineError` raised here, before the CLI runs, shaped as the CLI's."""
    e = RooflineError(f"error: {message}\nhint: {hint}")
    e.message, e.hint, e.code = message, hint, 2
    return e


def _flags(inputs: _Inputs, flags: Mapping[str, Any]) -> List[str]:
    """`seq_len=2048` as `--seq-len 2048`; `True` a bare flag; `False` and `None` left out."""
    argv: List[str] = []
    for key, value in flags.items():
        if value is None or value is False:
            continue
        if key == "format":
            raise TypeError("format is always json here: use roofline.run for another")
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        else:
            # `--flag=value`: a value that starts with `-` stays the flag's value.
            argv.append(f"{flag}={inputs.value(key, value)}")
    return argv


def _document(command: Sequence[str], model: Any = None, **flags: Any) -> Document:
    """Runs `roofline COMMAND [MODEL] FLAGS… --format json` and parses the document."""
    with _Inputs() as inputs:
        argv = list(command)
        if model is not None:
            name = inputs.value("model", model)
            if name.startswith("-"):
                raise _bad_input(
                    f"model `{name}`: a model is a preset id, a path or a dict, not a flag",
                    "pass flags as keyword arguments (seq_len=2048)",
                )
            argv.append(name)
        argv += _flags(inputs, flags)
        argv += ["--format", "json"]
        out = _run(argv)
    try:
        return Document(json.loads(out))
    except json.JSONDecodeError as e:
        raise ValueError(
            f"`roofline {' '.join(command)}` printed text, not JSON (a flag such as "
            "explain prints a derivation): use roofline.run for it"
        ) from e


# ---------------------------------------------------------------------------------------------
# TOML, for chip and system dicts


def to_toml(table: Mapping[str, Any]) -> str:
    """A dict as TOML: scalars and arrays first, then sub-tables (``[a.b]``) and arrays of
    tables (``[[a.b]]``); ``None`` values are left out (TOML has no null)."""
    lines: List[str] = []
    _toml_table(table, [], lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def _toml_table(table: Mapping[str, Any], path: List[str], lines: List[str]) -> None:
    tables = []
    for key, value in table.items():
        if value is None:
            continue
        if isinstance(value, Mapping):
            tables.append((key, value))
        elif _is_table_array(value):
            tables.append((key, value))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    for key, value in tables:
        sub = path + [key]
        header = ".".join(_toml_key(k) for k in sub)
        if isinstance(value, Mapping):
            lines += ["", f"[{header}]"]
            _toml_table(value, sub, lines)
        else:
            for item in value:
                lines += ["", f"[[{header}]]"]
                _toml_table(item, sub, lines)


def _is_table_array(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(isinstance(v, Mapping) for v in value)
    )


def _toml_key(key: Any) -> str:
    key = str(key)
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, os.PathLike):
        return json.dumps(os.fspath(value), ensure_ascii=False)
    if isinstance(value, Mapping):
        items = ", ".join(
            f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items() if v is not None
        )
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as TOML")


# ---------------------------------------------------------------------------------------------
# The commands


def analyze(
    model: Model = "llama-3.1-8b",
    hardware: Chip = "h100-sxm",
    stage: str = "decode",
    batch: int = 8,
    context: int = 4096,
    tp: int = 1,
    *,
    seq_len: Optional[int] = None,
    precision: Optional[str] = None,
    weight_precision: Optional[str] = None,
    kv_precision: Optional[str] = None,
    flash_attention: bool = True,
    logits: Optional[str] = None,
    system: Optional[Chip] = None,
    devices: Optional[int] = None,
    pp: Optional[int] = None,
    ep: Optional[int] = None,
    cp: Optional[int] = None,
    fusion: Optional[str] = None,
    advice: bool = False,
    **flags: Any,
) -> Document:
    """``roofline analyze``: every operator of a forward step on a chip, and the totals.

    Args:
        model: preset id, config.json path (or folder), or config dict.
        hardware: chip id, chip .toml path, or chip dict.
        stage: ``"prefill"``, ``"decode"`` or ``"both"``.
        batch: sequences processed together.
        context: decode: tokens already in the KV cache per sequence (not sent with a prefill).
        tp: tensor-parallel degree.
        seq_len: prefill: prompt tokens per sequence (CLI default 2048).
        precision: weights, activations and KV cache (``"bf16"``, ``"fp8"``, ``"int4"``, …).
        weight_precision, kv_precision: override ``precision`` for weights or the KV cache.
        flash_attention: attention as one fused FlashAttention kernel (the CLI's default);
            ``False`` is ``--no-flash-attention``.
        logits: prefill: ``"last"`` (default) or ``"all"`` positions through lm_head.
        system, devices, pp, ep, cp: a multi-device system and layout.
        fusion: also report kernel fusion: ``"eager"``, ``"compiled"`` or ``"max"``.
        advice: also rank what to change.
        **flags: any other field of the analyze request (``memory_reserve="2GB"``,
            ``w8a8=True``, ``group_size=128``, ``launch_overhead="7us"``, …); an unknown one
            raises :class:`RooflineError` naming it (its ``field``). ``explain``, ``plot`` and
            ``profile`` run the command line instead.

    The settings go to the typed API as one request (a dict model or chip inline, no file
    written), computed as ``roofline analyze`` computes them.

    Returns the ``analyze --format json`` document: ``stages[i].ops`` are the operator rows
    (:meth:`Document.to_pandas` tabulates them), ``stages[i].totals`` the totals.
    """
    named = dict(
        hardware=hardware, stage=stage, batch=batch, context=context, tp=tp, seq_len=seq_len,
        precision=precision, weight_precision=weight_precision, kv_precision=kv_precision,
        logits=logits, system=system, devices=devices, pp=pp, ep=ep, cp=cp, fusion=fusion,
        advice=advice,
    )
    if "format" in flags:
        raise TypeError("format is always json here: use roofline.run for another")
    if stage == "prefill":
        # A prefill takes no context: the CLI refuses a decode length without a decode stage.
        named.pop("context")
    if _ANALYZE_ARGV_ONLY.intersection(flags) or isinstance(system, Mapping):
        # Output flags (a derivation, a plot, a profile join) and a system given as a dict:
        # the command line, as before the typed call.
        return _document(
            ["analyze"], model, no_flash_attention=not flash_attention, **named, **flags
        )
    request: Dict[str, Any] = {"model": _request_value(model)}
    for key, value in {**named, **flags}.items():
        if value is not None:
            request[key] = _request_value(value)
    request["flash_attention"] = bool(flash_attention)
    return Document(json.loads(_analyze(json.dumps(request))))


# `analyze` keywords that only the command line takes: what it writes besides the document.
_ANALYZE_ARGV_ONLY = frozenset({"explain", "plot", "force", "all_roofs", "profile", "help"})


def _request_value(value: Any) -> Any:
    """A value as the typed request takes it: a path as its string, a mapping as an object
    (a config.json or a chip, inline), anything else as JSON has it."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): _request_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_request_value(v) for v in value]
    return value


def op(
    kind: str,
    hardware: Optional[Chip] = None,
    *,
    precision: Optional[str] = None,
    **flags: Any,
) -> Document:
    """``roofline op KIND``: one operator on one chip.

    Args:
        kind: ``"gemm"``, ``"attention"``, ``"softmax"``, ``"rmsnorm"``, ``"layernorm"``,
            ``"elementwise"``, or a collective: ``"all-reduce"``, ``"reduce-scatter"``,
            ``"all-gather"``, ``"all-to-all"``, ``"broadcast"``, ``"send-recv"``.
        hardware: chip id, path or dict; ``h100-sxm`` when neither it nor ``system`` is given.
        precision: of every tensor and of the computation (compute operators).
        **flags: the operator's own: ``m=, n=, k=, bias=`` (gemm); ``batch=, heads=,
            kv_heads=, head_dim=, q_len=, kv_len=, causal=, fused=`` (attention);
            ``rows=, cols=`` (softmax, norms); ``inputs=, elements=, flops_per_element=``
            (elementwise); ``bytes=, devices=, nodes=, system=, algorithm=`` (collectives).

    Returns the ``op … --format json`` document (``kernels``, ``total``, ``hardware``).
    """
    if hardware is None and flags.get("system") is None:
        hardware = "h100-sxm"
    return _document(["op", kind], hardware=hardware, precision=precision, **flags)


def sweep(
    model: Model = "llama-3.1-8b",
    hardware: Union[Chip, Sequence[Chip]] = "h100-sxm",
    stage: str = "decode",
    batch: Union[int, str, Sequence[int]] = "1..1024",
    *,
    seq_len: Union[int, str, Sequence[int], None] = None,
    context: Union[int, str, Sequence[int], None] = None,
    precision: Union[str, Sequence[str], None] = None,
    flash_attention: bool = True,
    tp: Union[int, str, Sequence[int], None] = None,
    pareto: bool = False,
    **flags: Any,
) -> Document:
    """``roofline sweep``: each operator's bound and crossover batch over a grid.

    Args:
        model: preset id, config.json path, or config dict.
        hardware: one chip or a list of chips (ids, paths or dicts).
        stage: ``"decode"`` sweeps ``context``, ``"prefill"`` sweeps ``seq_len``.
        batch: a list of batches, or the CLI's ranges (``"1..1024"`` doubles, ``"1..256:8"``
            steps, ``"1..256*4"`` multiplies).
        seq_len, context: prompt lengths and cached tokens, as ``batch`` takes them.
        precision: one precision or a list (``["bf16", "fp8"]``).
        flash_attention: attention as one fused kernel (the default); ``False`` is
            ``--no-flash-attention``.
        tp: tensor-parallel degrees to sweep (a list or ranges).
        pareto: throughput against latency, the Pareto front marked.
        **flags: any other ``roofline sweep`` flag (``generate=256``, ``slo_tpot="50ms"``, …).
    """
    return _document(
        ["sweep"],
        model,
        hardware=hardware,
        stage=stage,
        batch=batch,
        seq_len=seq_len,
        context=context,
        precision=precision,
        no_flash_attention=not flash_attention,
        tp=tp,
        pareto=pareto,
        **flags,
    )


def mfu(
    model: Optional[Model] = None,
    hardware: Optional[Chip] = None,
    *,
    params: Union[float, str, None] = None,
    tokens: Union[float, str, None] = None,
    time: Union[float, str, None] = None,
    tokens_per_s: Union[float, str, None] = None,
    step_time: Union[float, str, None] = None,
    global_batch: Optional[int] = None,
    seq_len: Optional[int] = None,
    devices: Optional[int] = None,
    precision: Optional[str] = None,
    peak: Union[float, str, None] = None,
    recompute: Optional[str] = None,
    **flags: Any,
) -> Document:
    """``roofline mfu``: training MFU and HFU by four FLOP conventions, time to train.

    Args:
        model: preset id, config.json path, or config dict; or give ``params``.
        hardware: chip whose dense peak for ``precision`` is the peak.
        params: parameters N (``70e9``, ``"70B"``) without a model.
        tokens, time: tokens trained on and the time they took (``"30d"``, ``"720h"``).
        tokens_per_s: global training throughput.
        step_time, global_batch, seq_len: one optimizer step's time and its shape.
        devices: devices the run used.
        precision: precision trained in.
        peak: dense peak of one device in FLOP/s, overriding the chip's.
        recompute: ``"none"``, ``"selective"``, ``"full"`` or ``"partial=F"``.
        **flags: any other ``roofline mfu`` flag (``target_mfu=45``, ``no_causal=True``, …).
    """
    return _document(
        ["mfu"],
        model,
        hardware=hardware,
        params=params,
        tokens=tokens,
        time=time,
        tokens_per_s=tokens_per_s,
        step_time=step_time,
        global_batch=global_batch,
        seq_len=seq_len,
        devices=devices,
        precision=precision,
        peak=peak,
        recompute=recompute,
        **flags,
    )


def mbu(
    model: Optional[Model] = None,
    hardware: Optional[Chip] = None,
    *,
    tpot: Union[float, str, None] = None,
    tokens_per_s: Union[float, str, None] = None,
    batch: Optional[int] = None,
    context: Optional[int] = None,
    precision: Optional[str] = None,
    devices: Optional[int] = None,
    params: Union[float, str, None] = None,
    bandwidth: Union[float, str, None] = None,
    **flags: Any,
) -> Document:
    """``roofline mbu``: inference MBU (and MFU) of a measured decode step.

    Args:
        model: preset id, config.json path, or config dict (counts the KV cache); or give
            ``params``.
        hardware: chip (bandwidth and dense peak).
        tpot: time per output token (``"14ms"``, ``0.014``); or ``tokens_per_s``.
        batch: sequences decoded together.
        context: tokens already in the KV cache per sequence.
        precision: weights, activations and KV cache.
        devices: devices the model is split over.
        params: parameters N, without a model.
        bandwidth: main-memory bandwidth of one device in B/s, overriding the chip's.
        **flags: any other ``roofline mbu`` flag (``peak=``, ``kv_precision=``, …).
    """
    return _document(
        ["mbu"],
        model,
        hardware=hardware,
        tpot=tpot,
        tokens_per_s=tokens_per_s,
        batch=batch,
        context=context,
        precision=precision,
        devices=devices,
        params=params,
        bandwidth=bandwidth,
        **flags,
    )


def fuse(
    chain: Union[str, Sequence[str]],
    tokens: int,
    hidden: int,
    intermediate: int,
    hardware: Chip = "h100-sxm",
    *,
    precision: Optional[str] = None,
    launch_overhead: Union[float, str, None] = None,
    **flags: Any,
) -> Document:
    """``roofline fuse``: a chain of operators priced as separate kernels and as one.

    Args:
        chain: operators in order (``["rmsnorm", "linear", "silu"]`` or ``"rmsnorm,linear"``):
            rmsnorm, layernorm, linear, silu, gelu, relu.
        tokens: tokens T (rows of every tensor).
        hidden: hidden size d.
        intermediate: intermediate size f.
        hardware: chip id, path or dict.
        precision: of every tensor.
        launch_overhead: per kernel, overriding the chip's (``"7us"``, ``5e-6``).
    """
    return _document(
        ["fuse"],
        chain=chain,
        tokens=tokens,
        hidden=hidden,
        intermediate=intermediate,
        hardware=hardware,
        precision=precision,
        launch_overhead=launch_overhead,
        **flags,
    )


def train(
    model: Model,
    global_batch: int,
    hardware: Chip = "h100-sxm",
    devices: Optional[int] = None,
    *,
    system: Optional[Chip] = None,
    seq_len: Optional[int] = None,
    precision: Optional[str] = None,
    recompute: Optional[str] = None,
    tp: Optional[int] = None,
    pp: Optional[int] = None,
    dp: Optional[int] = None,
    cp: Optional[int] = None,
    ep: Optional[int] = None,
    micro_batch: Optional[int] = None,
    zero: Optional[int] = None,
    tokens: Union[float, str, None] = None,
    measured_step: Union[float, str, None] = None,
    **flags: Any,
) -> Document:
    """``roofline train``: one training step on many devices, bound beside an estimate.

    Args:
        model: preset id, config.json path, or config dict.
        global_batch: sequences per optimizer step over every replica.
        hardware: chip (with ``devices``, that many in its default node).
        devices: devices of ``hardware``; defaults to tp × pp × cp × ep × dp.
        system: a system id, file or dict instead.
        seq_len: tokens per sequence.
        precision: of the forward and backward.
        recompute: ``"none"``, ``"selective"`` or ``"full"``.
        tp, pp, dp, cp, ep: parallel degrees.
        micro_batch: sequences per micro-batch on each device.
        zero: ZeRO stage 0–3.
        tokens: tokens to train for (``"1T"``).
        measured_step: a measured step time (``"20.1s"``).
        **flags: any other ``roofline train`` flag (``schedule="interleaved"``,
            ``sequence_parallel=True``, ``efficiency={"matmul": 0.74}``, …).
    """
    return _document(
        ["train"],
        model,
        global_batch=global_batch,
        hardware=hardware,
        devices=devices,
        system=system,
        seq_len=seq_len,
        precision=precision,
        recompute=recompute,
        tp=tp,
        pp=pp,
        dp=dp,
        cp=cp,
        ep=ep,
        micro_batch=micro_batch,
        zero=zero,
        tokens=tokens,
        measured_step=measured_step,
        **flags,
    )


def generate(
    model: Model = "llama-3.1-8b",
    hardware: Chip = "h100-sxm",
    prompt: int = 2048,
    generate: int = 256,
    batch: int = 1,
    *,
    precision: Optional[str] = None,
    tp: Optional[int] = None,
    system: Optional[Chip] = None,
    devices: Optional[int] = None,
    cached_prefix: Optional[int] = None,
    max_batch: bool = False,
    max_context: bool = False,
    chunk: Optional[int] = None,
    draft: Optional[Model] = None,
    cuda_graphs: bool = False,
    **flags: Any,
) -> Document:
    """``roofline generate``: one request whole: TTFT, TPOT, end-to-end latency, tokens/s.

    Args:
        model: preset id, config.json path, or config dict.
        hardware: chip id, path or dict.
        prompt: prompt tokens per sequence (P).
        generate: tokens generated per sequence (N).
        batch: sequences served together (B).
        precision: weights, activations and KV cache.
        tp, system, devices: tensor parallelism, a system, its devices.
        cached_prefix: prompt tokens already in the KV cache.
        max_batch, max_context: also find the largest batch, the longest context that fit.
        chunk: chunked prefill, tokens per chunk.
        draft: speculative decoding's draft model (preset, path or dict).
        cuda_graphs: the estimate launches each step once.
        **flags: any other ``roofline generate`` flag (``draft_len=4``, ``acceptance=0.8``,
            ``disaggregate="2:6"``, ``no_flash_attention=True``, …).
    """
    return _document(
        ["generate"],
        model,
        hardware=hardware,
        prompt=prompt,
        generate=generate,
        batch=batch,
        precision=precision,
        tp=tp,
        system=system,
        devices=devices,
        cached_prefix=cached_prefix,
        max_batch=max_batch,
        max_context=max_context,
        chunk=chunk,
        draft=draft,
        cuda_graphs=cuda_graphs,
        **flags,
    )


def plan(
    model: Model,
    hardware: Chip = "h100-sxm",
    devices: Optional[int] = None,
    stage: str = "decode",
    *,
    system: Optional[Chip] = None,
    batch: Optional[int] = None,
    global_batch: Optional[int] = None,
    seq_len: Optional[int] = None,
    context: Optional[int] = None,
    precision: Optional[str] = None,
    top: Optional[int] = None,
    **flags: Any,
) -> Document:
    """``roofline plan``: every parallel layout of a model over a system's devices, ranked.

    Args:
        model: preset id, config.json path, or config dict.
        hardware: chip id (with ``devices``: that many in its default node).
        devices: devices of ``hardware`` to plan over.
        stage: ``"prefill"``, ``"decode"`` or ``"train"`` (needs ``global_batch``).
        system: a system id, file or dict instead.
        batch: sequences one replica serves together.
        global_batch: train: sequences per step over every replica.
        seq_len, context: prompt tokens, cached tokens.
        precision: weights, activations and KV cache.
        top: plans in each ranking.
        **flags: any other ``roofline plan`` flag (``policies="megatron-2021"``, …).
    """
    return _document(
        ["plan"],
        model,
        hardware=hardware,
        devices=devices,
        stage=stage,
        system=system,
        batch=batch,
        global_batch=global_batch,
        seq_len=seq_len,
        context=context,
        precision=precision,
        top=top,
        **flags,
    )


def models() -> Document:
    """``roofline models``: the embedded model presets (``doc["models"]``, one dict each)."""
    return _document(["models"])


def hardware_list(systems: bool = False) -> Document:
    """``roofline hardware list``: the chip catalog (``doc["hardware"]``); with ``systems``,
    the systems catalog."""
    return _document(["hardware", "list"], systems=systems)


def hardware_show(chip: Chip) -> Document:
    """``roofline hardware show CHIP``: every figure of one chip (an id, path or dict) or
    system, its source and its ridge points."""
    with _Inputs() as inputs:
        name = inputs.value("hardware", chip)
        return _document(["hardware", "show", name])
