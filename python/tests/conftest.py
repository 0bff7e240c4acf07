# SPDX-License-Identifier: MIT
"""Shared fixtures of the Python module's tests: fresh random inputs each run
(the seed is printed; ES_TEST_SEED=N replays it), the test data and the CLI."""

import functools
import os
import random
import shutil
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SEED = int(os.environ.get("ES_TEST_SEED") or random.SystemRandom().randrange(2**32))
print(f"# python tests: ES_TEST_SEED={SEED}", file=sys.stderr)


def pytest_report_header(config):
    return f"ES_TEST_SEED={SEED}"


@pytest.fixture
def rng(request):
    """A generator seeded by the run's seed and the test's name."""
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


@functools.cache
def pinned_backends():
    """The backends a comparison bit for bit runs on, each side named: "cpu", and
    "cuda" where CUDA is usable. An automatic engine chooses per call (by size,
    and by whether CUDA is open yet), and the CPU and CUDA results differ in
    the last bits (DESIGN.md's 1e-5), so two calls, two processes or two
    engines compared byte for byte must not be left to choose. Asked once a
    run: an automatic engine opens CUDA to answer."""
    import entroscope

    return ["cpu"] + (["cuda"] if entroscope.Engine().backend == "cuda" else [])


def pytest_generate_tests(metafunc):
    if "drop_in_backend" in metafunc.fixturenames:
        metafunc.parametrize("drop_in_backend", pinned_backends(), indirect=True)


@pytest.fixture
def drop_in_backend(request, monkeypatch):
    """The drop-ins' engine (`entroscope.default_engine`) pinned to each of
    pinned_backends() in turn, so that a check of scikit-image's semantics
    runs on both backends every run, not on the one an automatic engine
    happens to pick for its size."""
    import entroscope

    pinned = entroscope.default_engine(request.param)
    monkeypatch.setattr(entroscope, "default_engine", lambda backend="auto": pinned)
    return request.param


@pytest.fixture(scope="session")
def testdata():
    return Path(os.environ.get("ES_TESTDATA") or ROOT / "tests" / "data")


@pytest.fixture(scope="session")
def sample():
    return Path(os.environ.get("ES_SAMPLE") or ROOT / "data" / "camera.png")


@pytest.fixture(scope="session")
def cli():
    """entroscope-cli of the same build (meson sets ES_CLI)."""
    path = os.environ.get("ES_CLI") or shutil.which("entroscope-cli")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("entroscope-cli not found (ES_CLI)")
    return path


def awkward_sizes():
    """1×1, 1×N, N×1, primes and sizes just past a block (DESIGN.md §5)."""
    return [(1, 1), (1, 37), (29, 1), (2, 2), (31, 17), (33, 65), (64, 129), (127, 61)]
