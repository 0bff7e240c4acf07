# SPDX-License-Identifier: MIT
"""The CUDA path, on a GPU machine: every kernel variant against the CPU. Skipped where CUDA is not usable."""

import numpy as np
import pytest

import entroscope
from conftest import awkward_sizes


@pytest.fixture(scope="module")
def gpu():
    engine = entroscope.Engine()
    if engine.backend != "cuda":
        pytest.skip(f"CUDA is not usable here: {engine.cuda_reason}")
    return engine


@pytest.fixture(scope="module")
def cpu():
    return entroscope.Engine("cpu")


@pytest.mark.parametrize("op", ["quantize", "entropy", "equalize", "sharpen"])
def test_every_variant_equals_the_cpu(gpu, cpu, rng, op):
    shapes = awkward_sizes() + [(257, 513), (1000, 1300)]
    for variant in entroscope.variants(op):
        # Entropy's volume variants compute 3-D windows only: they are checked
        # on volumes with a ball, the others on images.
        volume_only = op == "entropy" and variant.id.startswith("volume")
        for shape in shapes:
            dtype = np.uint16 if shape[0] % 2 else np.uint8
            if volume_only:
                shape = (3,) + tuple(min(side, 40) for side in shape)
            image = rng.integers(0, np.iinfo(dtype).max + 1, shape, dtype=dtype)
            window = {"ball": 1} if volume_only else {}
            got, timing = gpu.run(op, image, variant=variant.id, return_timing=True, **window)
            want = cpu.run(op, image, **window)
            assert timing.backend == "cuda" and timing.variant == variant.id, timing
            if op == "entropy":
                assert np.abs(got - want).max() <= 1e-5, (variant.id, shape)
            else:
                assert np.array_equal(got, want), (variant.id, shape)


def test_cuda_engine_and_devices(gpu, rng):
    engine = entroscope.Engine("cuda", devices=[0])
    assert engine.backend == "cuda" and engine.devices == (0,)
    assert engine.description.startswith("CUDA: ")
    image = rng.integers(0, 256, (300, 400), dtype=np.uint8)
    values, timing = engine.entropy(image, 9, return_timing=True)
    assert timing.upload_ms > 0 and timing.download_ms > 0
    metrics = timing.metrics
    assert metrics["read_bytes"] > 0 and metrics["datasheet_gbs"] > 0 and metrics["host_memory"] != "none"
    main = [k for k in metrics["kernels"] if k["main"]]
    assert len(main) == 1 and main[0]["registers"] > 0 and 0 < main[0]["occupancy"] <= 1, metrics["kernels"]
    assert np.abs(values - entroscope.Engine("cpu").entropy(image, 9)).max() <= 1e-5
    assert entroscope.info("cuda")["why"] == "requested with backend='cuda'"


def test_cuda_counters(gpu, rng):
    """With Engine.counters on, a CUDA run's metrics carry what the hardware counted, or why not."""
    engine = entroscope.Engine("cuda", devices=[0])
    engine.counters = True
    image = rng.integers(1, 256, (1024, 1024), dtype=np.uint8)
    values, timing = engine.sharpen(image, return_timing=True)
    metrics = timing.metrics
    if metrics["counters"] is None:
        pytest.skip("no hardware counters here: " + metrics["counters_note"])
    counters = metrics["counters"]
    assert counters["launches"] >= 1 and counters["dram_read_bytes"] > 0 and counters["dram_write_bytes"] > 0
    assert 0 <= counters["l2_hit_rate"] <= 1 and 0 < counters["achieved_occupancy"] <= 1
    assert any(k["counters"] is not None for k in metrics["kernels"])
    assert np.array_equal(values, entroscope.Engine("cpu").sharpen(image))


def test_cuda_counters_of_a_volume(gpu, rng):
    """A 3-D window's run in one band is counted too: its binning and sliding kernels."""
    engine = entroscope.Engine("cuda", devices=[0])
    engine.counters = True
    volume = rng.integers(1, 256, (40, 200, 300), dtype=np.uint8)
    values, timing = engine.entropy(volume, ball=2, return_timing=True)
    metrics = timing.metrics
    if metrics["counters"] is None:
        pytest.skip("no hardware counters here: " + metrics["counters_note"])
    counters = metrics["counters"]
    assert counters["launches"] == 2 and counters["dram_read_bytes"] > 0 and counters["dram_write_bytes"] > 0
    assert 0 <= counters["l2_hit_rate"] <= 1 and 0 < counters["achieved_occupancy"] <= 1
    assert sum(k["counters"] is not None for k in metrics["kernels"]) == 2, metrics["kernels"]
    assert np.abs(values - entroscope.Engine("cpu").entropy(volume, ball=2)).max() <= 1e-5


def test_page_locked_buffers(gpu, rng):
    image = rng.integers(0, 256, (600, 700), dtype=np.uint8)
    pinned = gpu.zeros(image.shape, np.uint8)
    pinned[...] = image
    out = gpu.zeros(image.shape, np.float32)
    assert gpu.entropy(pinned, out=out) is out
    assert np.array_equal(out, gpu.entropy(image))


def test_new_results_are_page_locked(gpu, rng):  # noqa: ARG001 (gpu: skips without CUDA)
    """A result the engine allocates (1 MiB or more, 2-D or a volume) comes
    from its pool of page-locked buffers, so that the download goes by DMA
    straight into it rather than through staging into fresh pageable pages."""
    cuda = entroscope.Engine("cuda")  # auto could give a job this small to the CPU
    image = rng.integers(0, 256, (1024, 1024), dtype=np.uint8)
    values, timing = cuda.entropy(image, return_timing=True)
    assert type(values.base).__name__ == "PyCapsule"
    assert timing.metrics["host_memory"] == "mixed"  # the NumPy input staged, the result by DMA
    assert np.array_equal(values, cuda.entropy(image, out=np.empty(image.shape, np.float32)))
    volume = np.stack([image[:256, :512]] * 3)
    assert type(cuda.entropy(volume).base).__name__ == "PyCapsule"


def test_threads_on_one_gpu(gpu, rng):
    import threading
    images = [rng.integers(0, 256, (200 + i, 300), dtype=np.uint8) for i in range(8)]
    want = [gpu.entropy(im) for im in images]
    errors = []

    def work():
        try:
            for _ in range(10):
                for im, w in zip(images, want):
                    assert np.array_equal(entroscope.entropy(im), w)
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_results_are_page_locked_reused_and_outlive_the_engine(gpu, rng):
    engine = entroscope.Engine("cuda")
    image = rng.integers(0, 256, (1024, 1024), dtype=np.uint8)
    want = entroscope.Engine("cpu").entropy(image)
    first = engine.entropy(image)
    address = first.ctypes.data
    del first
    second = engine.entropy(image)  # the freed result's buffer comes back
    assert second.ctypes.data == address
    assert np.abs(second - want).max() <= 1e-5
    kept = [engine.entropy(image) for _ in range(6)] + [engine.sharpen(image)]
    engine.close()
    for values in kept[:-1]:
        assert np.abs(values - want).max() <= 1e-5
    assert np.array_equal(kept[-1], entroscope.Engine("cpu").sharpen(image))
    del kept, second
