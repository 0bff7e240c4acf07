# SPDX-License-Identifier: MIT
"""examples/ome_zarr_entropy.py on its small sample: an OME-Zarr volume in,
the entropy's OME-Zarr multiscale image out, with NGFF 0.4 metadata."""

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT

zarr = pytest.importorskip("zarr")
pytest.importorskip("dask.array")

import entroscope  # noqa: E402

EXAMPLE = ROOT / "examples" / "ome_zarr_entropy.py"


def _run(*args):
    done = subprocess.run([sys.executable, str(EXAMPLE), *map(str, args)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_ome_zarr_in_and_out(tmp_path):
    source, target = tmp_path / "in.zarr", tmp_path / "out.zarr"
    _run(source, "--sample")
    _run(source, target, "--ball", "1", "--units", "bits")

    image = json.loads((target / ".zattrs").read_text())["multiscales"][0]
    assert image["version"] == "0.4"
    assert [axis["name"] for axis in image["axes"]] == ["z", "y", "x"]
    assert image["metadata"]["entroscope"]["ball"] == 1
    volume = zarr.open(str(source / "0"))[...]
    expected = entroscope.entropy(volume, ball=1, units="bits")
    levels = [zarr.open(str(target / level["path"])) for level in image["datasets"]]
    assert len(levels) == 3
    # Level 0: the entropy itself, in the input's chunks, '/' between chunk indices.
    assert levels[0].chunks == zarr.open(str(source / "0")).chunks
    assert (target / "0" / "0" / "0" / "0").is_file()
    np.testing.assert_array_equal(levels[0][...], expected)
    for i, (level, dataset) in enumerate(zip(levels, image["datasets"])):
        scale, translation = dataset["coordinateTransformations"]
        assert scale == {"type": "scale", "scale": [2.0, 0.5 * 2**i, 0.5 * 2**i]}
        assert translation == {"type": "translation", "translation": [0.0, 0.25 * (2**i - 1), 0.25 * (2**i - 1)]}
        assert level.shape == (8, 300 >> i, 260 >> i)
    # Level 1: means of 2×2 pixels.
    means = expected.reshape(8, 150, 2, 130, 2).mean(axis=(2, 4), dtype=np.float64).astype(np.float32)
    np.testing.assert_allclose(levels[1][...], means, rtol=1e-6)


def test_refuses_channels(tmp_path):
    source = tmp_path / "in.zarr"
    group = zarr.open_group(str(source), mode="w")
    group.create_dataset("0", data=np.zeros((2, 10, 10), np.uint8))
    group.attrs["multiscales"] = [{"version": "0.4", "axes": [{"name": "c", "type": "channel"},
                                                               {"name": "y", "type": "space"},
                                                               {"name": "x", "type": "space"}],
                                   "datasets": [{"path": "0"}]}]
    done = subprocess.run([sys.executable, str(EXAMPLE), str(source), str(tmp_path / "out.zarr")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "take one time point and channel first" in done.stderr
