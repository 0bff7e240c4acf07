# SPDX-License-Identifier: MIT
"""entroscope.dask: chunked results identical to one in-memory call, on dask's
threads and on a distributed LocalCluster of two worker processes reading zarr."""

import numpy as np
import pytest

import entroscope
from conftest import pinned_backends

da = pytest.importorskip("dask.array")
edask = pytest.importorskip("entroscope.dask")


def cases(image, backend):
    """(name, dask call, one call) on one named backend each (conftest.pinned_backends)."""
    on = {"backend": backend}
    return [
        ("entropy", lambda a: edask.entropy(a, **on), lambda i: entroscope.entropy(i, **on)),
        ("entropy 31/256 bits", lambda a: edask.entropy(a, 31, 256, units="bits", **on),
         lambda i: entroscope.entropy(i, 31, 256, units="bits", **on)),
        ("sharpen", lambda a: edask.sharpen(a, 2.5, **on), lambda i: entroscope.sharpen(i, 2.5, **on)),
        ("quantize", lambda a: edask.quantize(a, 7, **on), lambda i: entroscope.quantize(i, 7, **on)),
        ("equalize", lambda a: edask.equalize(a, **on), lambda i: entroscope.equalize(i, **on)),
        ("run", lambda a: edask.run("entropy", a, window=9, **on), lambda i: entroscope.entropy(i, 9, **on)),
        ("entropy 3x9 symmetric", lambda a: edask.entropy(a, rect=(3, 9), border="symmetric", **on),
         lambda i: entroscope.entropy(i, rect=(3, 9), border="symmetric", **on)),
    ]


@pytest.mark.parametrize("shape,chunks", [((1000, 1300), (256, 300)), ((100, 130), (7, 9)),
                                          ((1000, 1300), (1000, 1300)), ((1000, 1300), (333, 1300))])
def test_threads_scheduler(rng, shape, chunks):
    image = rng.integers(0, 256, shape, dtype=np.uint8)
    array = da.from_array(image, chunks=chunks)
    for backend in pinned_backends():
        for name, lazy, eager in cases(image, backend):
            result = lazy(array)
            assert result.chunks == array.chunks, name
            assert np.array_equal(result.compute(scheduler="threads"), eager(image)), f"{name} on {backend}"


@pytest.mark.parametrize("shape,chunks,job", [
    ((100, 90), ((30, 30, 40), (50, 40)), {"window": 9}),                  # uneven chunks
    ((100, 90), (3, 4), {"window": 31}),                                  # chunks thinner than the halo
    ((100, 90), (30, 40), {"disk": 60}),                                  # a window past the whole image
    ((10, 100, 90), ((1, 4, 5), (30, 30, 40), 45), {"ball": 3}),          # a volume, uneven and thin
    ((100, 90), (30, 40), {"op": "clahe", "tile_grid": (4, 4)}),          # CLAHE's whole planes
])
def test_result_has_the_input_chunks(tmp_path, rng, shape, chunks, job):
    # The halo may regroup chunks on the way; the result comes back in the
    # input's chunks, so that a zarr input can be written back as zarr.
    zarr = pytest.importorskip("zarr")
    image = rng.integers(0, 256, shape, dtype=np.uint8)
    array = da.from_array(image, chunks=chunks)
    job = dict(job)
    op = job.pop("op", "entropy")
    result = getattr(edask, op)(array, **job)
    assert result.chunks == array.chunks
    eager = getattr(entroscope, op)(image, **job)
    assert np.array_equal(result.compute(scheduler="threads"), eager, equal_nan=True)
    if all(len(set(c[:-1])) <= 1 and c[-1] <= c[0] for c in array.chunks):
        # Chunks that zarr can hold: to_zarr works and reads back the same values.
        result.to_zarr(str(tmp_path / "out.zarr"))
        assert np.array_equal(zarr.open(str(tmp_path / "out.zarr"))[...], eager, equal_nan=True)


def test_depth_and_colour(rng):
    twelve = rng.integers(0, 4096, (300, 400), dtype=np.uint16)
    array = da.from_array(twelve, chunks=(64, 100))
    assert np.array_equal(edask.entropy(array, depth=12).compute(), entroscope.entropy(twelve, depth=12))
    assert np.array_equal(edask.equalize(array, depth=12).compute(), entroscope.equalize(twelve, depth=12))
    rgb = rng.integers(0, 256, (300, 400, 4), dtype=np.uint8)
    colour = da.from_array(rgb, chunks=(100, 128, 2))
    assert np.array_equal(edask.gray(colour, channel_axis=-1).compute(), entroscope.gray(rgb, channel_axis=-1))
    assert np.array_equal(edask.sharpen(colour, channel_axis=-1).compute(), entroscope.sharpen(rgb, channel_axis=-1))


def test_errors_come_before_computing(rng):
    array = da.zeros((100, 100), dtype=np.uint8, chunks=50)
    with pytest.raises(ValueError, match="window 4 is out of range"):
        edask.entropy(array, 4)
    with pytest.raises(ValueError, match="amount 11 is out of range"):
        edask.sharpen(array, 11)
    with pytest.raises(TypeError, match="float32 input cannot be processed"):
        edask.entropy(da.zeros((10, 10), dtype=np.float32))
    with pytest.raises(TypeError, match="unexpected keyword argument 'window'"):
        edask.run("sharpen", array, window=5)
    with pytest.raises(ValueError, match="unknown operation 'blur'"):
        edask.run("blur", array)


def test_distributed_cluster_on_zarr(tmp_path, rng):
    distributed = pytest.importorskip("distributed")
    zarr = pytest.importorskip("zarr")
    image = rng.integers(0, 256, (1500, 1100), dtype=np.uint8)
    store = str(tmp_path / "image.zarr")
    zarr.save_array(store, image, chunks=(400, 300))
    array = da.from_zarr(store)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  memory_limit=0) as cluster, distributed.Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        # The workers' own CPU engines (their processes open no CUDA context).
        for name, lazy, eager in cases(image, "cpu"):
            assert np.array_equal(lazy(array).compute(), eager(image)), name
        # Every worker computed with its own engine, kept between chunks.
        engines = client.run(lambda: __import__("entroscope")._engines.get("cpu") is not None)
        assert all(engines.values()) and len(engines) == 2
        out = str(tmp_path / "entropy.zarr")
        edask.entropy(array, 9, backend="cpu").to_zarr(out)
        assert np.array_equal(zarr.open(out)[:], entroscope.entropy(image, 9, backend="cpu"))
        binding = edask.bind_workers_to_gpus(client, devices=[0])
        assert sorted(binding.values()) == [0, 0]
        # Levels are integers, the same on every backend: the bound workers' own choice.
        assert np.array_equal(edask.quantize(array).compute(), entroscope.quantize(image))
