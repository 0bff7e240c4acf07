# SPDX-License-Identifier: MIT
"""entroscope.skimage against scikit-image itself, on random images and
volumes of awkward sizes: even footprints, shifts, masks, uint8 and uint16,
out=, and what is refused."""

import inspect
import sys
import threading
import warnings

import numpy as np
import pytest

skimage_rank = pytest.importorskip("skimage.filters.rank")
skimage_exposure = pytest.importorskip("skimage.exposure")

import skimage.morphology  # noqa: E402
import skimage.util.dtype  # noqa: E402

import entroscope  # noqa: E402
import entroscope.skimage  # noqa: E402
from entroscope.skimage.exposure import equalize_adapthist, equalize_hist  # noqa: E402
from entroscope.skimage.filters.rank import entropy  # noqa: E402

# Entroscope's float32 against scikit-image's float64 (DESIGN.md §1).
FLOAT32 = dict(rtol=0, atol=2e-6)


def _quiet(function, *args, **kwargs):
    # scikit-image's own warnings (precision loss, many bins) are not what is compared here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def _image(rng, shape, dtype):
    high = 256 if dtype == np.uint8 else int(rng.choice([5, 300, 4096, 65536]))
    return rng.integers(0, high, shape, dtype=dtype)


def _footprint(rng, ndim):
    sides = rng.integers(1, 7 if ndim == 3 else 9, ndim)
    cells = rng.random(sides) < 0.7
    cells.flat[rng.integers(cells.size)] = True
    return cells.astype(rng.choice([np.uint8, np.float64, np.bool_]))


def _shifts(rng, footprint):
    """Shifts that keep scikit-image's centre inside the footprint, by keyword."""
    names = ("shift_y", "shift_x") if footprint.ndim == 2 else ("shift_x", "shift_y", "shift_z")
    return {name: int(rng.integers(-(side // 2), side - side // 2)) for name, side in zip(names, footprint.shape)}


SHAPES_2D = [(1, 1), (1, 17), (13, 1), (2, 3), (31, 29), (64, 65)]
SHAPES_3D = [(1, 1, 1), (1, 9, 11), (5, 1, 7), (3, 12, 10), (9, 8, 13)]


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("shape", SHAPES_2D + SHAPES_3D, ids=str)
def test_random_footprints_shifts_and_masks(rng, shape, dtype, drop_in_backend):
    for _ in range(3):
        image = _image(rng, shape, dtype)
        footprint = _footprint(rng, len(shape))
        shifts = _shifts(rng, footprint)
        mask = rng.random(shape) < 0.6 if rng.random() < 0.5 else None
        expected = _quiet(skimage_rank.entropy, image, footprint, mask=mask, **shifts)
        got = _quiet(entropy, image, footprint, mask=mask, **shifts)
        assert got.dtype == np.float64 and got.shape == shape
        np.testing.assert_allclose(got, expected, **FLOAT32, err_msg=f"footprint {footprint.astype(int).tolist()}, "
                                   f"{shifts}, mask {mask is not None}, on {drop_in_backend}")


@pytest.mark.parametrize("out_dtype", [np.float32, np.float64])
def test_out(rng, out_dtype):
    image = _image(rng, (23, 37), np.uint8)
    footprint = np.ones((4, 6), np.uint8)
    expected = skimage_rank.entropy(image, footprint, out=np.empty(image.shape, out_dtype), shift_x=-2, shift_y=1)
    # In one piece (float32: the kernels write it), and every other column of a wider array.
    for out in (np.full(image.shape, -1, out_dtype), np.full((23, 74), -1, out_dtype)[:, ::2]):
        returned = entropy(image, footprint, out=out, shift_x=-2, shift_y=1)
        assert returned is out
        np.testing.assert_allclose(out, expected, **FLOAT32)


def test_mask_dtypes_follow_img_as_ubyte(rng):
    # scikit-image reads a mask through img_as_ubyte: a float 0.001 is 0, a uint16 1 is 0.
    image = _image(rng, (19, 21), np.uint8)
    for mask in [rng.random(image.shape) < 0.5, (rng.random(image.shape) < 0.5).astype(np.uint8),
                 rng.random(image.shape) * 0.01, rng.integers(0, 512, image.shape, dtype=np.uint16)]:
        np.testing.assert_allclose(_quiet(entropy, image, np.ones((3, 3)), mask=mask),
                                   _quiet(skimage_rank.entropy, image, np.ones((3, 3)), mask=mask), **FLOAT32)


def test_float_images_convert_as_scikit_image_does(rng):
    image = rng.random((17, 19))
    with pytest.warns(UserWarning, match="Possible precision loss"):
        got = entropy(image, np.ones((3, 2)))
    np.testing.assert_allclose(got, _quiet(skimage_rank.entropy, image, np.ones((3, 2))), **FLOAT32)


def test_refusals(rng):
    image = _image(rng, (8, 8), np.uint8)
    with pytest.raises(ValueError, match="bool"):
        entropy(image.astype(bool), np.ones((3, 3)))
    with pytest.raises(ValueError, match="dimensions"):
        entropy(image, np.ones((3, 3, 3)))
    with pytest.raises(ValueError, match="shift_x"):
        entropy(image, np.ones((3, 3)), shift_x=2)
    with pytest.raises(NotImplementedError):
        entropy(image, np.ones((3, 3)), out=image)
    with pytest.raises(TypeError, match="MaskedArray"):
        entropy(np.ma.array(image, mask=image > 100), np.ones((3, 3)))
    with pytest.raises(TypeError, match="float32 or float64"):
        entropy(image, np.ones((3, 3)), out=np.empty(image.shape, np.uint8))


def test_image_dimensions_refused_as_scikit_image_0_26_does(rng):
    for image in (np.arange(10), _image(rng, (2, 3, 4, 5), np.uint8)):
        with pytest.raises(ValueError) as caught:
            entropy(image, np.ones((3,) * max(2, min(image.ndim, 3)), np.uint8))
        assert str(caught.value) == f"`image` must have 2 or 3 dimensions, got {image.ndim}."


def test_footprint_sequences_refused(rng):
    # scikit-image's decomposed footprints, (array, repeats) pairs, which its rank filters refuse too.
    image = _image(rng, (9, 9), np.uint8)
    square = np.ones((3, 3), np.uint8)
    sequences = [((square, 2),), [(square, 1), (np.ones((1, 3), np.uint8), 2)]]
    try:
        sequences.append(skimage.morphology.diamond(3, decomposition="sequence"))
    except TypeError:  # scikit-image 0.19 has no decompositions
        pass
    for footprint in sequences:
        with pytest.raises(ValueError) as caught:
            entropy(image, footprint)
        assert str(caught.value) == "footprint sequences are not currently supported by rank filters"


def test_shifts_default_to_int_zero():
    for name in ("shift_x", "shift_y", "shift_z"):
        default = inspect.signature(entropy).parameters[name].default
        assert default == 0 and type(default) is int


@pytest.mark.parametrize("shift_value", [False, True, np.bool_(True)])
@pytest.mark.parametrize("shift_name", ["shift_x", "shift_y", "shift_z"])
@pytest.mark.parametrize("ndim", [2, 3])
def test_boolean_shift_warns_at_the_callers_line(rng, ndim, shift_name, shift_value):
    # scikit-image 0.26's warning, naming the caller's line (through renamed_keyword's frame); a 2-D
    # image has no shift_z, and ignores it, as 0.26 does.
    image = _image(rng, (6,) * ndim, np.uint8)
    footprint = np.ones((3,) * ndim, np.uint8)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        got = entropy(image, footprint, **{shift_name: shift_value})
        lineno = inspect.currentframe().f_lineno - 1
    np.testing.assert_allclose(got, entropy(image, footprint, **{shift_name: int(shift_value)}), rtol=0, atol=0)
    if ndim == 2 and shift_name == "shift_z":
        assert record == []
        return
    assert [str(w.message) for w in record] == [f"Parameter `{shift_name}` is boolean and will be interpreted as "
                                                "int. This is not officially supported, use int instead."]
    assert record[0].category is UserWarning
    assert (record[0].filename, record[0].lineno) == (__file__, lineno)


def test_warnings_name_the_callers_line(rng):
    image = _image(rng, (8, 8), np.uint8)
    calls = [lambda: entropy(image.astype(np.float64) / 255, np.ones((3, 3))),                   # precision loss
             lambda: entropy(image.astype(np.uint16) * 64, np.ones((3, 3))),                     # many bins
             lambda: entropy(image, selem=np.ones((3, 3))),                                      # selem
             lambda: entropy(image, np.ones((3, 3)), shift_x=True, shift_y=False)]               # two shifts
    for call, count in zip(calls, (1, 1, 1, 2)):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            call()
        ours = [w for w in record if w.filename != skimage.util.dtype.__file__]
        assert len(ours) == count, [str(w.message) for w in record]
        assert {(w.filename, w.lineno) for w in ours} == {(__file__, call.__code__.co_firstlineno)}


def test_masked_footprint_limits(rng):
    image = _image(rng, (70, 70), np.uint8)
    mask = rng.random(image.shape) < 0.5
    np.testing.assert_allclose(entropy(image, np.ones((63, 2)), mask=mask, shift_x=-1),
                               skimage_rank.entropy(image, np.ones((63, 2)), mask=mask, shift_x=-1), **FLOAT32)
    with pytest.raises(ValueError, match="up to 63 cells a side and 31 planes"):
        entropy(image, np.ones((64, 3)), mask=mask)
    with pytest.raises(ValueError, match="31 planes"):
        entropy(image[None].repeat(3, 0), np.ones((33, 3, 3)), mask=mask[None].repeat(3, 0))


def test_empty_footprint_is_zero(rng):
    image = _image(rng, (6, 7), np.uint8)
    np.testing.assert_array_equal(entropy(image, np.zeros((3, 3))), skimage_rank.entropy(image, np.zeros((3, 3))))


def test_signatures_match_scikit_image():
    assert (inspect.signature(entropy).parameters.keys()
            == inspect.signature(skimage_rank.entropy).parameters.keys())
    assert (inspect.signature(equalize_hist).parameters.keys()
            == inspect.signature(skimage_exposure.equalize_hist).parameters.keys())
    assert (inspect.signature(equalize_adapthist).parameters.keys()
            == inspect.signature(skimage_exposure.equalize_adapthist).parameters.keys())


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("shape", [(1, 1), (7, 300), (40, 33), (4, 9, 10)], ids=str)
def test_equalize_hist_exact(rng, shape, dtype):
    image = _image(rng, shape, dtype)
    np.testing.assert_array_equal(equalize_hist(image), skimage_exposure.equalize_hist(image))
    mask = rng.random(shape) < 0.3
    mask.flat[0] = True
    np.testing.assert_array_equal(equalize_hist(image, mask=mask), skimage_exposure.equalize_hist(image, mask=mask))


def test_equalize_hist_refuses_floats(rng):
    with pytest.raises(TypeError, match="float64"):
        equalize_hist(rng.random((5, 5)))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_equalize_adapthist(rng, dtype):
    image = _image(rng, (67, 90), dtype)
    for keywords in [{}, {"kernel_size": 9, "clip_limit": 0.03}, {"kernel_size": (20, 7), "nbins": 64}]:
        got = equalize_adapthist(image, **keywords)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, skimage_exposure.equalize_adapthist(image, **keywords), rtol=0, atol=1e-6)


def test_equalize_adapthist_refusals(rng):
    with pytest.raises(ValueError, match="colour"):
        equalize_adapthist(_image(rng, (10, 10, 3), np.uint8))
    with pytest.raises(TypeError, match="float64"):
        equalize_adapthist(rng.random((10, 10)))


def test_the_package_layout():
    assert entroscope.skimage.filters.rank.entropy is entropy
    assert entroscope.skimage.exposure.equalize_hist is equalize_hist


class _StandInCupy:
    """What the drop-in calls on CuPy to read a footprint, over host memory: it counts the blocking reads
    (`get`), the reads beside the call's kernels (`memcpyAsync`, on a stream of their own) and the waits for
    them (that stream's, never the current one, on which the call's kernels are queued)."""

    def __init__(self):
        import ctypes
        import types

        counts = self.counts = {"get": 0, "async": 0, "waits": 0}

        class Stage(bytearray):
            @property
            def ptr(self):
                return ctypes.addressof((ctypes.c_char * len(self)).from_buffer(self))

        class Event:
            def __init__(self, disable_timing=False):
                pass

            def record(self, stream):
                self.stream = stream

        class Stream:
            ptr = 0

            def __init__(self, non_blocking=False):
                pass

            def wait_event(self, event):
                # The read comes after the work queued on the current stream before the call.
                assert event.stream is stream and self is not stream

            def synchronize(self):
                counts["waits"] += 1

        class NDArray:
            def __init__(self, cells):
                self.cells = np.ascontiguousarray(cells)
                self.device = types.SimpleNamespace(id=0)
                self.data = types.SimpleNamespace(ptr=self.cells.ctypes.data, device_id=0)
                for name in ("shape", "strides", "dtype", "size", "nbytes", "ndim", "flags"):
                    setattr(self, name, getattr(self.cells, name))

            def get(self):
                counts["get"] += 1
                return self.cells.copy()

        def memcpy_async(destination, source, size, kind, stream):
            counts["async"] += 1
            ctypes.memmove(destination, source, size)

        stream = Stream()
        self.ndarray = NDArray
        self.cuda = types.SimpleNamespace(
            alloc_pinned_memory=Stage, get_current_stream=lambda: stream, Event=Event, Stream=Stream,
            runtime=types.SimpleNamespace(getDevice=lambda: 0, memcpyAsync=memcpy_async, memcpyDeviceToHost=2))


def test_a_device_footprint_read_before_is_checked_not_waited_for(rng, monkeypatch):
    # The drop-in's speculative read of a CuPy footprint, here on a stand-in for CuPy: the first call waits for
    # its cells, a later one takes them as read and checks them once its kernels are queued, a change is computed
    # again with the new cells, and a call that fails still checks them (the cells kept are the latest).
    from entroscope.skimage import _arrays
    cupy = _StandInCupy()
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setattr(_arrays, "_DEVICE_FOOTPRINTS", type(_arrays._DEVICE_FOOTPRINTS)())
    monkeypatch.setattr(_arrays, "_READING_STREAMS", {})
    monkeypatch.setattr(_arrays, "_CALL_EVENTS", threading.local())
    image = _image(rng, (40, 37), np.uint8)
    footprint = cupy.ndarray(np.ones((3, 3), np.uint8))
    want = _quiet(skimage_rank.entropy, image, np.ones((3, 3), np.uint8))
    for _ in range(2):
        np.testing.assert_allclose(entropy(image, footprint), want, **FLOAT32)
    assert cupy.counts == {"get": 1, "async": 1, "waits": 1}
    footprint.cells[0, 0] = 0
    np.testing.assert_allclose(entropy(image, footprint), _quiet(skimage_rank.entropy, image, footprint.cells),
                               **FLOAT32)
    assert cupy.counts == {"get": 1, "async": 2, "waits": 2}
    with pytest.raises(ValueError, match="mask of shape"):
        entropy(image, footprint, mask=np.ones((3, 3), bool))
    assert cupy.counts == {"get": 1, "async": 3, "waits": 3}
