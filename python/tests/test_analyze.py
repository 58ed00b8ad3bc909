"""`roofline.analyze` against `roofline analyze --format json`, for every preset."""

import pytest

import roofline


def _rows_equal(doc, expected):
    """Every operator row's FLOPs, bytes and time, and every stage's totals, equal."""
    assert [s["stage"] for s in doc["stages"]] == [s["stage"] for s in expected["stages"]]
    for stage, ref in zip(doc["stages"], expected["stages"]):
        assert [o["name"] for o in stage["ops"]] == [o["name"] for o in ref["ops"]]
        for o, r in zip(stage["ops"], ref["ops"]):
            for field in ("flops", "bytes", "time_s", "arithmetic_intensity", "count"):
                assert o[field] == r[field], (stage["stage"], o["name"], field)
        assert stage["totals"] == ref["totals"], stage["stage"]
    assert doc == expected


def test_decode_of_every_preset(cli, preset):
    doc = roofline.analyze(preset, "h100-sxm", stage="decode", batch=8, context=4096)
    expected = cli.json(
        ["analyze", preset, "--hardware", "h100-sxm", "--stage", "decode",
         "--batch", "8", "--context", "4096"]
    )
    assert isinstance(doc, roofline.Document)
    _rows_equal(doc, expected)


def test_prefill_of_every_preset(cli, preset):
    doc = roofline.analyze(preset, "h100-sxm", stage="prefill", batch=2, seq_len=1024)
    # A prefill takes no context: `context` (4096 here by default) is not sent with it.
    expected = cli.json(
        ["analyze", preset, "--hardware", "h100-sxm", "--stage", "prefill",
         "--batch", "2", "--seq-len", "1024"]
    )
    _rows_equal(doc, expected)


def test_defaults_are_llama_3_1_8b_decoding_on_h100(cli):
    expected = cli.json(
        ["analyze", "llama-3.1-8b", "--hardware", "h100-sxm", "--stage", "decode",
         "--batch", "8", "--context", "4096", "--tp", "1"]
    )
    assert roofline.analyze() == expected


def test_flags_map_to_the_cli(cli):
    doc = roofline.analyze(
        "llama-3.1-70b", "h200", stage="both", batch=4, context=8192, tp=4,
        seq_len=512, flash_attention=True, precision="fp8", kv_precision="bf16",
        memory_reserve="2GB", sequence_parallel=False, advice=None,
    )
    expected = cli.json(
        ["analyze", "llama-3.1-70b", "--hardware", "h200", "--stage", "both", "--batch", "4",
         "--context", "8192", "--tp", "4", "--seq-len", "512", "--flash-attention",
         "--precision", "fp8", "--kv-precision", "bf16", "--memory-reserve", "2GB"]
    )
    assert doc == expected


def test_paths_as_strings_and_pathlike(cli):
    from pathlib import Path

    from conftest import REPO

    config = REPO / "crates/inputs/catalog/models/llama-2-7b.json"
    chip = REPO / "crates/inputs/catalog/hardware/a100-sxm-80gb.toml"
    expected = cli.json(["analyze", config, "--hardware", chip, "--stage", "decode",
                         "--batch", "8", "--context", "4096"])
    assert roofline.analyze(config, chip) == expected
    assert roofline.analyze(str(config), str(chip)) == expected
    assert isinstance(config, Path)


@pytest.mark.parametrize("stage", ["decode", "prefill", "both"])
def test_to_pandas_has_one_row_per_operator(stage):
    import pandas

    doc = roofline.analyze("llama-3.1-8b", "h100-sxm", stage=stage, seq_len=512)
    df = doc.to_pandas()
    assert isinstance(df, pandas.DataFrame)
    ops = [(s["stage"], o) for s in doc["stages"] for o in s["ops"]]
    assert len(df) == len(ops)
    for column in ("stage", "name", "kind", "flops", "bytes", "time_s",
                   "arithmetic_intensity", "attainable_flops_per_s", "bound"):
        assert column in df.columns, column
    assert list(df["stage"]) == [s for s, _ in ops]
    assert list(df["name"]) == [o["name"] for _, o in ops]
    assert list(df["flops"]) == [o["flops"] for _, o in ops]
    assert list(df["bytes"]) == [o["bytes"] for _, o in ops]
    assert list(df["time_s"]) == [o["time_s"] for _, o in ops]
    assert "span.kind" in df.columns  # nested fields flattened


def test_to_pandas_of_a_document_without_a_table_says_so():
    with pytest.raises(ValueError, match="no operator table"):
        roofline.mbu("llama-3.1-8b", "h100-sxm", tpot="10ms").to_pandas()
