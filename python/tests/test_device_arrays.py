# SPDX-License-Identifier: MIT
"""Device arrays (CuPy, PyTorch) read and written where they lie: results equal the host path's, the same kind of
array comes back on the same device, streams are honoured, nothing leaks, and a CPU engine refuses them. The
GPU tests skip, saying why, where CUDA, CuPy or PyTorch is missing."""

import math

import numpy as np
import pytest

import entroscope


@pytest.fixture(scope="module")
def gpu():
    """A CUDA engine: its host path runs the same kernels as the device path (an automatic engine would give
    small host images to the CPU, whose results differ within DESIGN.md's 1e-5)."""
    engine = entroscope.Engine()
    if engine.backend != "cuda":
        pytest.skip(f"CUDA is not usable here: {engine.cuda_reason}")
    return entroscope.Engine("cuda")


@pytest.fixture(scope="module")
def cp(gpu):
    return pytest.importorskip("cupy", reason="CuPy is not installed here")


@pytest.fixture(scope="module")
def torch(gpu):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed here")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


class FakeDeviceArray:
    """What a device library exposes, over memory that no GPU holds: enough for a CPU engine to refuse it."""

    def __init__(self, shape=(4, 5), typestr="|u1"):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (4096, False),
                                         "strides": None, "version": 3}


def test_a_cpu_engine_refuses_device_arrays():
    engine = entroscope.Engine("cpu")
    with pytest.raises(RuntimeError, match="CUDA device array.*never copied through the host"):
        engine.entropy(FakeDeviceArray())
    with pytest.raises(RuntimeError, match="CUDA device array"):
        entroscope.equalize(FakeDeviceArray(), backend="cpu")


class CpuTensorLike:
    """What a PyTorch CPU tensor shows: its type has the CUDA interface, a property that raises for this one, and
    DLPack says the CPU."""

    @property
    def __cuda_array_interface__(self):
        raise AttributeError("not a CUDA tensor")

    def __dlpack_device__(self):
        return (1, 0)


def test_a_host_object_whose_type_has_the_cuda_interface():
    # Read as a host image (which this one is not: it has no buffer), never as a device array.
    with pytest.raises(TypeError, match="buffer protocol"):
        entroscope.Engine("cpu").entropy(CpuTensorLike())


def awkward_shapes():
    return [(1, 1), (1, 17), (17, 1), (31, 33), (64, 64), (257, 513)]


@pytest.mark.parametrize("op", ["quantize", "entropy", "equalize", "sharpen", "clahe"])
def test_cupy_results_equal_the_host_path(gpu, cp, rng, op):
    for shape in awkward_shapes():
        for dtype in (np.uint8, np.uint16):
            image = rng.integers(0, np.iinfo(dtype).max + 1, shape, dtype=dtype)
            device = cp.asarray(image)
            got, timing = gpu.run(op, device, return_timing=True)
            want = gpu.run(op, image)
            assert isinstance(got, cp.ndarray) and got.device.id == device.device.id
            assert got.dtype == want.dtype and got.shape == want.shape
            assert timing.backend == "cuda" and not timing.input_copied
            np.testing.assert_array_equal(cp.asnumpy(got), want, err_msg=f"{op} {shape} {dtype.__name__}")


def test_definitions_on_the_device(gpu, cp, rng):
    image = rng.integers(0, 4096, (300, 411), dtype=np.uint16)
    mask = rng.random(image.shape) < 0.8
    device, device_mask = cp.asarray(image), cp.asarray(mask)
    cases = [
        dict(window=9, levels=256),
        dict(disk=4, border="symmetric"),
        dict(like="skimage", footprint=np.ones((5, 7), bool)),
        dict(like="matlab"),
        dict(binning="minmax"),
        dict(binning="exact", window=3),
        dict(units="bits"),
        dict(units="normalized", window=7),
    ]
    for case in cases:
        got = gpu.entropy(device, **case)
        want = gpu.entropy(image, **case)
        np.testing.assert_allclose(cp.asnumpy(got), want, rtol=0, atol=1e-6, err_msg=str(case))
    got = gpu.entropy(device, 7, mask=device_mask)
    want = gpu.entropy(image, 7, mask=mask)
    np.testing.assert_array_equal(np.isnan(cp.asnumpy(got)), np.isnan(want))
    np.testing.assert_allclose(cp.asnumpy(got), want, atol=1e-6)


def test_volumes_on_the_device(gpu, cp, rng):
    volume = rng.integers(0, 256, (9, 40, 33), dtype=np.uint8)
    device = cp.asarray(volume)
    for case in (dict(ball=2), dict(box=(3, 5, 5), levels=256), dict(window=5)):
        got = gpu.entropy(device, **case)
        assert got.shape == volume.shape
        np.testing.assert_allclose(cp.asnumpy(got), gpu.entropy(volume, **case), atol=1e-6, err_msg=str(case))
    # Planes one by one run on the device; so does equalize's one histogram of the whole volume, its planes end to
    # end being one tall image. A device array is never handed to the CPU.
    np.testing.assert_array_equal(cp.asnumpy(gpu.sharpen(device)), gpu.sharpen(volume))
    cpu = entroscope.Engine("cpu")
    np.testing.assert_array_equal(cp.asnumpy(gpu.equalize(device)), cpu.equalize(volume))
    deep = rng.integers(0, 4096, (5, 31, 17), dtype=np.uint16)
    np.testing.assert_array_equal(cp.asnumpy(gpu.equalize(cp.asarray(deep), depth=12)), cpu.equalize(deep, depth=12))
    with pytest.raises(RuntimeError, match="planes lie end to end"):
        gpu.equalize(device[:, 5:30])


def test_strided_device_arrays(gpu, cp, rng):
    image = rng.integers(0, 256, (200, 300), dtype=np.uint8)
    device = cp.asarray(image)
    # Rows at a step of their own, columns next to each other: read in place.
    for view, host in ((device[:, 7:250], image[:, 7:250]), (device[3::2], image[3::2]), (device[::-1][::-1], image)):
        np.testing.assert_array_equal(cp.asnumpy(gpu.quantize(view, 16)), gpu.quantize(np.ascontiguousarray(host), 16))
    # The rank kernel (3×3 squares) reads rows in 4-byte words: a view off a word's start takes another kernel.
    square = dict(like="skimage", footprint=np.ones((3, 3), bool))
    for view, host in ((device[:, 7:250], image[:, 7:250]), (device[:, 8:250], image[:, 8:250])):
        np.testing.assert_allclose(cp.asnumpy(gpu.entropy(view, **square)),
                                   gpu.entropy(np.ascontiguousarray(host), **square), rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="contiguous on the device"):
        gpu.entropy(device[:, ::2])
    with pytest.raises(ValueError, match="contiguous on the device"):
        gpu.entropy(device[::-1])


def test_skimage_dropin_on_the_device(gpu, cp, rng):
    # A cuCIM user's call: CuPy in, CuPy out, scikit-image's semantics (even footprints, shifts, masks, 3-D).
    from entroscope.skimage.filters.rank import entropy
    cases = [((67, 90), np.uint8, np.ones((3, 3), bool), {}, False),
             ((67, 90), np.uint8, np.ones((4, 6), bool), dict(shift_x=-2, shift_y=1), True),
             ((50, 41), np.uint16, np.ones((5, 5), bool), {}, True),
             ((7, 30, 33), np.uint8, np.ones((3, 4, 3), bool), dict(shift_z=1), False)]
    for shape, dtype, footprint, shifts, masked in cases:
        image = rng.integers(0, 300 if dtype == np.uint16 else 256, shape, dtype=dtype)
        mask = rng.random(shape) < 0.7 if masked else None
        want = entropy(image, footprint, mask=mask, **shifts)
        got = entropy(cp.asarray(image), footprint, mask=None if mask is None else cp.asarray(mask), **shifts)
        # cuCIM's dtype for a device array, scikit-image's values.
        assert isinstance(got, cp.ndarray) and got.dtype == np.float32 and got.shape == shape
        assert got.flags.c_contiguous
        np.testing.assert_allclose(cp.asnumpy(got), want, rtol=0, atol=2e-6, err_msg=f"{shape} {shifts} {masked}")
        for out_dtype in (np.float32, np.float64):
            out = cp.full(shape, -1, out_dtype)
            assert entropy(cp.asarray(image), footprint, out=out, **shifts) is out
            np.testing.assert_allclose(cp.asnumpy(out), entropy(image, footprint, **shifts), rtol=0, atol=2e-6)


def test_skimage_dropin_sees_a_device_footprint_change(gpu, cp, rng):
    # The drop-in takes a CuPy footprint it has read before as it was and checks it after the call: a change made
    # in place, by the host or by work queued on the stream before the call, still gives the new footprint's values.
    from entroscope.skimage.filters.rank import entropy
    image = rng.integers(0, 256, (70, 93), dtype=np.uint8)
    device_image = cp.asarray(image)
    footprint = cp.ones((3, 3), cp.uint8)
    for _ in range(2):
        np.testing.assert_allclose(cp.asnumpy(entropy(device_image, footprint)), entropy(image, np.ones((3, 3))),
                                   rtol=0, atol=2e-6)
    with pytest.raises(ValueError, match="mask of shape"):  # a failed call waits for its footprint's read too
        entropy(device_image, footprint, mask=cp.ones((3, 3), bool))
    footprint[0, 0] = 0
    want = entropy(image, cp.asnumpy(footprint))
    np.testing.assert_allclose(cp.asnumpy(entropy(device_image, footprint)), want, rtol=0, atol=2e-6)
    cp.cuda.Device().synchronize()
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        # A copy on this stream, queued just before the call.
        footprint[1:, :] = cp.asarray(np.array([[1, 0, 1], [0, 1, 0]], np.uint8))
        got = entropy(device_image, footprint)
        want = entropy(image, cp.asnumpy(footprint))
        np.testing.assert_allclose(cp.asnumpy(got), want, rtol=0, atol=2e-6)
        out = cp.empty(image.shape, cp.float32)
        footprint[0, 0] = 1
        assert entropy(device_image, footprint, out=out) is out
        np.testing.assert_allclose(cp.asnumpy(out), entropy(image, cp.asnumpy(footprint)), rtol=0, atol=2e-6)
    stream.synchronize()


def test_out_on_the_device(gpu, cp, rng):
    image = cp.asarray(rng.integers(0, 256, (128, 160), dtype=np.uint8))
    out = cp.full(image.shape, -1, cp.float32)
    result = gpu.entropy(image, 5, out=out)
    assert result is out
    np.testing.assert_array_equal(cp.asnumpy(out), gpu.entropy(cp.asnumpy(image), 5))
    wide = cp.zeros((128, 200), cp.float32)
    gpu.entropy(image, 5, out=wide[:, 20:180])
    np.testing.assert_array_equal(cp.asnumpy(wide[:, 20:180]), cp.asnumpy(out))
    assert not cp.asnumpy(wide[:, :20]).any() and not cp.asnumpy(wide[:, 180:]).any()
    with pytest.raises(TypeError, match="device array"):
        gpu.entropy(image, out=np.zeros((128, 160), np.float32))
    with pytest.raises(ValueError, match="shape"):
        gpu.entropy(image, out=cp.zeros((128, 161), cp.float32))
    with pytest.raises(ValueError, match="overlaps"):
        gpu.sharpen(image, out=image)
    with pytest.raises(ValueError, match="same CUDA device|host memory"):
        gpu.entropy(image, mask=np.ones((128, 160), bool))


def test_errors_on_the_device(gpu, cp):
    with pytest.raises(TypeError, match="float32 input"):
        gpu.entropy(cp.zeros((8, 8), cp.float32))
    with pytest.raises(TypeError, match="colour device arrays"):
        gpu.entropy(cp.zeros((8, 8, 3), cp.uint8), channel_axis=-1)
    with pytest.raises(ValueError, match="does not fit depth"):
        gpu.entropy(cp.full((8, 8), 300, cp.uint16), depth=8)
    with pytest.raises(RuntimeError, match="on its device only"):
        gpu.clahe(cp.zeros((64, 64), cp.uint8), like="skimage")


def test_torch_tensors(gpu, torch, rng):
    image = rng.integers(0, 256, (250, 333), dtype=np.uint8)
    tensor = torch.from_numpy(image).cuda()
    got = gpu.entropy(tensor, 7)
    assert isinstance(got, torch.Tensor) and got.is_cuda and got.dtype == torch.float32
    np.testing.assert_array_equal(got.cpu().numpy(), gpu.entropy(image, 7))
    np.testing.assert_array_equal(gpu.equalize(tensor).cpu().numpy(), gpu.equalize(image))


def test_dlpack_only_producers(gpu, cp, rng):
    """An object that offers DLPack alone is read through it, on the engine's stream."""

    class DLPackOnly:
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, stream=None):
            return self.array.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    image = rng.integers(0, 256, (99, 130), dtype=np.uint8)
    out = cp.empty(image.shape, cp.float32)
    gpu.entropy(DLPackOnly(cp.asarray(image)), 5, out=out)
    np.testing.assert_array_equal(cp.asnumpy(out), gpu.entropy(image, 5))


def test_the_producers_stream_is_honoured(gpu, cp, rng):
    """Work queued on a non-blocking stream (CAI's stream key) completes before the engine reads the array."""
    image = rng.integers(0, 256, (2048, 2048), dtype=np.uint8)
    want = gpu.entropy(image, 5)
    stream = cp.cuda.Stream(non_blocking=True)
    for _ in range(5):
        with stream:
            device = cp.zeros(image.shape, cp.uint8)
            for _ in range(20):  # long enough to still be running when entropy starts
                device = cp.bitwise_xor(device, 0)
            device += cp.asarray(image)
            got = gpu.entropy(device, 5)
        np.testing.assert_array_equal(cp.asnumpy(got), want)


def test_a_call_on_cupy_arrays_is_ordered_on_their_stream(gpu, cp, rng):
    """A call on CuPy arrays returns without waiting for its work: the arrays' stream waits for it on the device,
    so what follows on that stream sees the result, and memory given back to it is not reused too early."""
    image = rng.integers(0, 256, (4096, 4096), dtype=np.uint8)
    footprint = np.ones((31, 31), bool)
    want = gpu.entropy(image, like="skimage", footprint=footprint)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        device = cp.zeros(image.shape, cp.uint8)
        for _ in range(20):  # the engine's work waits behind these
            device = cp.bitwise_xor(device, 0)
        device += cp.asarray(image)
        got = gpu.entropy(device, like="skimage", footprint=footprint)
        # Returned before its work, which waits behind the stream's, ran.
        assert not stream.done
        del device
        cp.full(image.shape, 7, cp.uint8)  # on the image's memory, given back to this stream
        host = cp.asnumpy(got, stream=stream)
    np.testing.assert_array_equal(host, want)


def test_calls_queued_without_waiting_keep_their_own_results(gpu, cp, rng):
    """Calls queued one after another on one stream, of growing sizes (the engine's buffers grow, and the older
    ones are freed only once the calls using them are done), each equal the host path's."""
    stream = cp.cuda.Stream(non_blocking=True)
    cases = []
    for side, window in [(300, 5), (1100, 9), (300, 7), (2500, 5), (700, 15)]:
        image = rng.integers(0, 256, (side, side + 13), dtype=np.uint8)
        cases.append((image, window, gpu.entropy(image, window, levels=256)))
    with stream:
        results = [gpu.entropy(cp.asarray(image), window, levels=256) for image, window, _ in cases]
        hosts = [cp.asnumpy(result, stream=stream) for result in results]
    for host, (_, _, want) in zip(hosts, cases):
        np.testing.assert_array_equal(host, want)


def test_a_timed_call_waits_for_its_kernels(gpu, cp, rng):
    device = cp.asarray(rng.integers(0, 256, (1000, 1000), dtype=np.uint8))
    got, timing = gpu.entropy(device, 9, return_timing=True)
    assert math.isfinite(timing.kernel_ms) and timing.kernel_ms > 0
    np.testing.assert_array_equal(cp.asnumpy(got), gpu.entropy(cp.asnumpy(device), 9))


def test_another_gpu_runs_there(gpu, cp, rng):
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("one GPU here: the second device's run needs two")
    engine = entroscope.Engine("cuda", devices=[0, 1])
    image = rng.integers(0, 256, (500, 600), dtype=np.uint8)
    with cp.cuda.Device(1):
        device = cp.asarray(image)
    got = engine.entropy(device, 9)
    assert got.device.id == 1
    np.testing.assert_array_equal(cp.asnumpy(got), gpu.entropy(image, 9))
    only_first = entroscope.Engine("cuda", devices=[0])
    with pytest.raises(RuntimeError, match="device 1"):
        only_first.entropy(device, 9)


def test_no_leaks_over_ten_thousand_calls(gpu, cp, torch, rng):
    image = cp.asarray(rng.integers(0, 256, (256, 256), dtype=np.uint8))
    tensor = torch.as_tensor(image, device="cuda")
    pool = cp.get_default_memory_pool()
    for _ in range(50):  # warm up: the engine's buffers and the pools reach their sizes
        gpu.entropy(image, 5), gpu.entropy(tensor, 5)
    cp.cuda.Device().synchronize()
    pool_before, torch_before = pool.used_bytes(), torch.cuda.memory_allocated()
    free_before = cp.cuda.runtime.memGetInfo()[0]
    for _ in range(5000):
        gpu.entropy(image, 5)
        gpu.entropy(tensor, 5)
    cp.cuda.Device().synchronize()
    assert pool.used_bytes() == pool_before
    assert torch.cuda.memory_allocated() == torch_before
    # The engine's own device memory: no growth beyond the pools' rounding.
    assert cp.cuda.runtime.memGetInfo()[0] >= free_before - (64 << 20)


def test_bits_scale_on_the_device(gpu, cp, rng):
    image = cp.asarray(rng.integers(0, 256, (100, 100), dtype=np.uint8))
    nats, bits = gpu.entropy(image, 5), gpu.entropy(image, 5, units="bits")
    np.testing.assert_allclose(cp.asnumpy(bits), cp.asnumpy(nats) / math.log(2), rtol=1e-6)
