"""examples/roofline_plot.py runs top to bottom and writes a real PNG."""

import os
import struct
import subprocess
import sys

import matplotlib  # noqa: F401  (the example needs it: missing is a failure, not a skip)

from conftest import REPO

EXAMPLE = REPO / "examples" / "roofline_plot.py"


def _run(args, cwd):
    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, str(EXAMPLE), *args], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return p


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return len(data), width, height


def test_the_example_writes_the_png_it_is_given(tmp_path):
    out = tmp_path / "plot.png"
    p = _run([str(out)], tmp_path)
    assert f"wrote {out}" in p.stdout
    size, width, height = _png_size(out)
    assert size > 20_000, size  # axes, roofs and points, not an empty canvas
    assert width >= 800 and height >= 500


def test_the_example_defaults_to_roofline_png(tmp_path):
    _run([], tmp_path)
    size, _, _ = _png_size(tmp_path / "roofline.png")
    assert size > 20_000
