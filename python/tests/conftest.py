"""The reference for every test: the `roofline` binary, run as a subprocess.

The binary is `$ROOFLINE_BIN`, else `target/release/roofline` or `target/debug/roofline` under
`$CARGO_TARGET_DIR` or the repository. A test that needs it fails (it is not skipped) when
there is none: build it with `cargo build -p roofline-cli`.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _binary():
    env = os.environ.get("ROOFLINE_BIN")
    if env:
        return Path(env)
    targets = [Path(os.environ["CARGO_TARGET_DIR"])] if os.environ.get("CARGO_TARGET_DIR") else []
    targets.append(REPO / "target")
    for target in targets:
        for profile in ("release", "debug"):
            path = target / profile / "roofline"
            if path.is_file():
                return path
    return None


BIN = _binary()


class Cli:
    """The `roofline` program."""

    def __init__(self, path):
        self.path = path

    def run(self, args):
        return subprocess.run(
            [str(self.path), *map(str, args)], capture_output=True, text=True, check=False
        )

    def json(self, args):
        """The document `roofline ARGS… --format json` prints."""
        p = self.run([*args, "--format", "json"])
        assert p.returncode == 0, f"roofline {' '.join(map(str, args))}: {p.stderr}"
        return json.loads(p.stdout)

    def error(self, args):
        """The exit code and the `error:` and `hint:` lines of a command that fails."""
        p = self.run([*args, "--format", "json"])
        assert p.returncode != 0, f"roofline {' '.join(map(str, args))} succeeded"
        lines = p.stderr.splitlines()
        message = next(l[len("error: "):] for l in lines if l.startswith("error: "))
        hints = [l[len("hint: "):] for l in lines if l.startswith("hint: ")]
        return p.returncode, message, hints[0] if hints else None


@pytest.fixture(scope="session")
def cli():
    if BIN is None or not BIN.is_file():
        pytest.fail(
            f"no roofline binary (ROOFLINE_BIN={os.environ.get('ROOFLINE_BIN')!r}, nor "
            "target/release/roofline or target/debug/roofline): cargo build -p roofline-cli",
            pytrace=False,
        )
    return Cli(BIN)


def _presets():
    if BIN is None or not BIN.is_file():
        return ["(no roofline binary)"]
    p = subprocess.run([str(BIN), "models", "--format", "json"], capture_output=True, text=True)
    if p.returncode != 0:
        return ["(roofline models failed)"]
    return [m["name"] for m in json.loads(p.stdout)["models"]]


def pytest_generate_tests(metafunc):
    if "preset" in metafunc.fixturenames:
        metafunc.parametrize("preset", _presets())
