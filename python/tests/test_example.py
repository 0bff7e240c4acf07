# SPDX-License-Identifier: MIT
"""examples/entropy_stack.py runs and writes its figure (or its numbers without matplotlib)."""

import subprocess
import sys

from conftest import ROOT


def test_entropy_stack_example(tmp_path, testdata):
    figure = tmp_path / "stack.png"
    images = sorted(str(p) for p in (testdata / "images").glob("*.png"))
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "entropy_stack.py"), *images, "-o", str(figure),
                           "--window", "7"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{len(images)} images in" in done.stdout
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in done.stdout
    else:
        assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
