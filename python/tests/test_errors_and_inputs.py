"""Errors are the CLI's (message, hint, exit code); dict models and chips are the files'."""

import glob
import json
import os
import tempfile
import threading

import pytest
import tomllib

import roofline
from conftest import REPO

CATALOG = REPO / "crates" / "inputs" / "catalog"


@pytest.mark.parametrize(
    "kwargs, argv",
    [
        # an unknown preset: the closest names in the hint
        ({"model": "llama-3.1-8"}, ["analyze", "llama-3.1-8"]),
        # an unknown chip
        ({"hardware": "h100-sxn"}, ["analyze", "--hardware", "h100-sxn"]),
        # a batch the workload refuses
        ({"batch": 0}, ["analyze", "--batch", "0"]),
        # a model that does not fit its layout
        ({"model": "llama-3.1-8b", "tp": 3}, ["analyze", "llama-3.1-8b", "--tp", "3"]),
    ],
)
def test_bad_input_raises_the_cli_message_and_hint(cli, kwargs, argv):
    with pytest.raises(roofline.RooflineError) as info:
        roofline.analyze(**kwargs)
    e = info.value
    code, message, hint = cli.error(argv)
    assert code == 2
    assert isinstance(e, ValueError)
    assert (e.message, e.hint, e.code) == (message, hint, code)
    assert str(e) == f"error: {message}" + (f"\nhint: {hint}" if hint else "")


@pytest.mark.parametrize(
    "kwargs, field",
    [
        # a value of the wrong type, a negative count, an unknown keyword, an unknown name
        ({"batch": "eight"}, "batch"),
        ({"batch": -1}, "batch"),
        ({"no_such_flag": 3}, "no_such_flag"),
        ({"precision": "fp7"}, "precision"),
        ({"tp": 0}, "tp"),
    ],
)
def test_a_refused_field_is_named(kwargs, field):
    """The typed request refuses what the command line would, naming the keyword."""
    with pytest.raises(roofline.RooflineError) as info:
        roofline.analyze(**kwargs)
    e = info.value
    assert isinstance(e, ValueError)
    assert e.field == field
    assert f"`{field}`" in e.message
    assert e.code == 2 and e.hint
    assert str(e) == f"error: {e.message}\nhint: {e.hint}"


def test_a_dict_model_and_chip_write_no_file(monkeypatch, cli):
    """A dict model and a dict chip go inline in the request: no temporary file is made."""
    def refuse(*args, **kwargs):
        raise AssertionError("a temporary file was made")

    for name in ("NamedTemporaryFile", "mkstemp", "mkdtemp", "TemporaryDirectory"):
        monkeypatch.setattr(tempfile, name, refuse)
    config = json.loads((CATALOG / "models" / "llama-2-7b.json").read_text())
    table = tomllib.loads((CATALOG / "hardware" / "a6000.toml").read_text())
    doc = roofline.analyze(config, table, stage="decode")
    expected = cli.json(["analyze", "llama-2-7b", "--hardware", "a6000", "--stage", "decode",
                         "--batch", "8", "--context", "4096"])
    assert doc["stages"] == expected["stages"]
    assert doc["headline"] == expected["headline"]
    # A config the reader refuses names the keyword, not a file.
    with pytest.raises(roofline.RooflineError) as info:
        roofline.analyze({"hidden_size": 64})
    assert info.value.field == "model"
    assert "`model`" in info.value.message


def test_a_missing_required_flag(cli):
    with pytest.raises(roofline.RooflineError) as info:
        roofline.run(["fuse", "--tokens", "8", "--format", "json"])
    code, message, hint = cli.error(["fuse", "--tokens", "8"])
    assert (info.value.message, info.value.hint, info.value.code) == (message, hint, code)


def test_a_missing_file(cli, tmp_path):
    missing = tmp_path / "absent" / "config.json"
    with pytest.raises(roofline.RooflineError) as info:
        roofline.analyze(missing)
    code, message, hint = cli.error(["analyze", missing])
    assert (info.value.message, info.value.hint, info.value.code) == (message, hint, code)


def test_internal_errors_are_runtime_errors_with_the_same_attributes():
    assert issubclass(roofline.RooflineInternalError, RuntimeError)
    assert not issubclass(roofline.RooflineInternalError, ValueError)
    assert issubclass(roofline.RooflineError, ValueError)


def _temp_files():
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "roofline-*")))


def test_a_dict_model_gives_the_numbers_of_its_config_json(cli):
    path = CATALOG / "models" / "llama-3.1-8b.json"
    config = json.loads(path.read_text())
    before = _temp_files()
    for stage in ("decode", "prefill"):
        from_dict = roofline.analyze(config, "h100-sxm", stage=stage)
        from_path = roofline.analyze(path, "h100-sxm", stage=stage)
        # A prefill takes no context (the CLI refuses a decode length without a decode).
        context = ["--context", "4096"] if stage == "decode" else []
        expected = cli.json(["analyze", path, "--hardware", "h100-sxm", "--stage", stage,
                             "--batch", "8", *context])
        assert from_path == expected
        # The CLI names a config by its folder: everything else is the file's.
        assert from_dict["stages"] == expected["stages"]
        assert from_dict["headline"] == expected["headline"]
        model = dict(from_dict["model"], name=expected["model"]["name"])
        assert model == expected["model"]
        # …and equal to the preset's numbers.
        preset = roofline.analyze("llama-3.1-8b", "h100-sxm", stage=stage)
        assert preset["stages"] == from_dict["stages"]
    assert _temp_files() == before, "temporary config left behind"


def test_a_dict_model_is_named_by_its_name_or_path():
    config = json.loads((CATALOG / "models" / "llama-2-7b.json").read_text())
    config["_name_or_path"] = "meta-llama/Llama-2-7b-hf"
    assert roofline.analyze(config)["model"]["name"] == "Llama-2-7b-hf"


def test_a_dict_chip_gives_the_numbers_of_its_toml(cli):
    before = _temp_files()
    for chip in ("h100-sxm", "mi300x", "tpu-v5e"):
        path = CATALOG / "hardware" / f"{chip}.toml"
        table = tomllib.loads(path.read_text())
        assert tomllib.loads(roofline.to_toml(table)) == table
        for stage in ("decode", "prefill"):
            context = ["--context", "4096"] if stage == "decode" else []
            expected = cli.json(["analyze", "llama-3.1-8b", "--hardware", path, "--stage",
                                 stage, "--batch", "8", *context])
            assert roofline.analyze("llama-3.1-8b", table, stage=stage) == expected
            assert roofline.analyze("llama-3.1-8b", chip, stage=stage) == expected
        assert roofline.hardware_show(table) == cli.json(["hardware", "show", path])
    assert _temp_files() == before, "temporary chip file left behind"


def test_a_dict_chip_edited(cli, tmp_path):
    table = tomllib.loads((CATALOG / "hardware" / "h100-sxm.toml").read_text())
    table["id"] = "h100-faster"
    table["memory"][0]["bandwidth_bytes_per_s"]["value"] = 6.7e12
    path = tmp_path / "h100-faster.toml"
    path.write_text(roofline.to_toml(table))
    expected = cli.json(["analyze", "llama-3.1-8b", "--hardware", path, "--stage", "decode",
                         "--batch", "8", "--context", "4096"])
    doc = roofline.analyze(hardware=table)
    assert doc == expected
    assert doc["hardware"]["bandwidth_bytes_per_s"] == 6.7e12


def test_dicts_in_lists_and_other_flags(cli):
    table = tomllib.loads((CATALOG / "hardware" / "l40s.toml").read_text())
    doc = roofline.sweep("gpt2", ["h100-sxm", table], batch=[1, 16])
    expected = cli.json(["sweep", "gpt2", "--hardware",
                         f"h100-sxm,{CATALOG / 'hardware' / 'l40s.toml'}", "--stage", "decode",
                         "--batch", "1,16"])
    assert doc == expected
    draft = json.loads((CATALOG / "models" / "llama-3.1-8b.json").read_text())
    doc = roofline.generate("llama-3.1-70b", tp=4, draft=draft)
    expected = cli.json(["generate", "llama-3.1-70b", "--hardware", "h100-sxm", "--tp", "4",
                         "--draft", CATALOG / "models" / "llama-3.1-8b.json"])
    # the draft is named by its folder, the rest is the file's
    assert doc["speculative"]["draft_model"] == "model"
    assert dict(doc["speculative"], draft_model="models") == expected["speculative"]
    assert doc["bound"] == expected["bound"]


def test_calls_from_threads_agree():
    expected = roofline.sweep("llama-3.1-8b", batch="1..256")
    results = [None] * 4

    def work(i):
        results[i] = roofline.sweep("llama-3.1-8b", batch="1..256")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expected for r in results)


def test_the_interpreter_lock_is_released_while_a_command_runs():
    """A long sweep in one thread; this thread keeps running meanwhile: no pause of it comes
    near the sweep's length, as it would if the command held the lock."""
    import time

    args = ["sweep", "llama-3.1-405b", "--batch", "1..4096:1", "--context", "1024..65536",
            "--format", "csv"]
    start = time.perf_counter()
    roofline.run(args)
    duration = time.perf_counter() - start
    assert duration > 0.1, "the sweep is too short to tell"

    done = threading.Event()
    worker = threading.Thread(target=lambda: (roofline.run(args), done.set()))
    ticks = [time.perf_counter()]
    worker.start()
    while not done.is_set():
        time.sleep(0.001)
        ticks.append(time.perf_counter())
    worker.join()
    longest = max(b - a for a, b in zip(ticks, ticks[1:]))
    assert longest < duration / 2, (longest, duration)
