# SPDX-License-Identifier: MIT
"""What the functions accept: layouts, dtypes, colour, out=, parameters, sizes."""

import math
import time
import tracemalloc

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import entroscope
import reference


def image8(rng, shape=(40, 50)):
    return rng.integers(0, 256, shape, dtype=np.uint8)


# ---- layouts: zero-copy, one copy ---------------------------------------------


def test_contiguous_and_row_strided_inputs_are_not_copied(rng):
    big = image8(rng, (60, 80))
    for view in (big, big[5:50], big[5:50, 7:70], big[:, 3:4], big[10:11]):
        _, timing = entroscope.entropy(view, return_timing=True)
        assert not timing.input_copied, view.strides
        assert np.array_equal(entroscope.entropy(view), entroscope.entropy(view.copy()))


@pytest.mark.parametrize("make", [
    lambda a: np.asfortranarray(a),
    lambda a: a.T,
    lambda a: a[::2, ::3],
    lambda a: a[::-1],
    lambda a: a[:, ::-1],
    lambda a: np.repeat(a[:, :, None], 2, axis=2)[:, :, 0],
])
def test_other_layouts_are_copied_once(rng, make):
    for dtype in (np.uint8, np.uint16):
        base = rng.integers(0, np.iinfo(dtype).max + 1, (41, 53), dtype=dtype)
        view = make(base)
        got, timing = entroscope.entropy(view, return_timing=True)
        assert timing.input_copied
        assert np.array_equal(got, entroscope.entropy(np.ascontiguousarray(view)))
        assert np.array_equal(entroscope.sharpen(view), entroscope.sharpen(np.ascontiguousarray(view)))


def test_read_only_input(rng):
    image = image8(rng)
    image.setflags(write=False)
    assert np.abs(entroscope.entropy(image) - reference.entropy(image)).max() <= 1e-5
    assert np.array_equal(entroscope.equalize(image), reference.equalize(image))


def test_byte_swapped_uint16(rng):
    native = rng.integers(0, 65536, (33, 35), dtype=np.uint16)
    swapped = native.astype(native.dtype.newbyteorder())
    got, timing = entroscope.quantize(swapped, 256, return_timing=True)
    assert timing.input_copied
    assert np.array_equal(got, entroscope.quantize(native, 256))


def test_other_buffer_exporters(rng):
    image = image8(rng, (12, 16))
    view = memoryview(bytearray(image.tobytes())).cast("B", (12, 16))
    assert np.array_equal(entroscope.equalize(view), entroscope.equalize(image))
    readonly = memoryview(image.tobytes()).cast("B", (12, 16))
    assert np.array_equal(entroscope.sharpen(readonly), entroscope.sharpen(image))


def test_unaligned_uint16(rng):
    raw = np.zeros(2 * 20 * 30 + 1, np.uint8)
    unaligned = raw[1:].view(np.uint16).reshape(20, 30)
    unaligned[...] = rng.integers(0, 65536, (20, 30))
    got, timing = entroscope.quantize(unaligned, 256, return_timing=True)
    assert timing.input_copied
    assert np.array_equal(got, reference.quantize(np.array(unaligned), 256))


# ---- colour -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("channels", [3, 4])
def test_colour_is_reduced_with_bt709(rng, dtype, channels):
    top = np.iinfo(dtype).max
    rgb = rng.integers(0, top + 1, (23, 29, channels), dtype=dtype)
    gray = reference.luma(rgb)
    bits = 8 * np.dtype(dtype).itemsize
    assert np.array_equal(entroscope.quantize(rgb, 256, depth=bits if bits == 8 else None, channel_axis=-1),
                          entroscope.quantize(gray, 256))
    assert np.array_equal(entroscope.entropy(rgb, channel_axis=-1), entroscope.entropy(gray))
    # Alpha is ignored.
    if channels == 4:
        other = rgb.copy()
        other[..., 3] = 0
        assert np.array_equal(entroscope.equalize(other, channel_axis=-1), entroscope.equalize(rgb, channel_axis=-1))


def test_colour_edges_round_half_away_from_zero():
    rgb = np.array([[[255, 255, 255], [0, 0, 0], [1, 0, 0], [0, 1, 0], [3, 0, 0], [7, 0, 0]]], np.uint8)
    gray = entroscope.quantize(rgb, 256, channel_axis=-1)
    assert gray.tolist() == reference.luma(rgb).tolist()
    assert gray[0, 0] == 255 and gray[0, 1] == 0


# ---- wrong inputs ---------------------------------------------------------------


@pytest.mark.parametrize("dtype,name", [
    (np.float32, "float32"), (np.float64, "float64"), (np.int8, "int8"), (np.int16, "int16"),
    (np.int32, "int32"), (np.int64, "int64"), (np.uint32, "uint32"), (np.bool_, "bool"),
])
def test_wrong_dtypes(dtype, name):
    image = np.zeros((4, 4), dtype)
    with pytest.raises(TypeError, match=f"^{name} input cannot be processed; gray uint8 or uint16 is needed"):
        entroscope.entropy(image)


def test_float_message_says_how():
    with pytest.raises(TypeError, match=r"no definition here.*np\.uint16"):
        entroscope.equalize(np.zeros((4, 4), np.float32))


@pytest.mark.parametrize("shape", [(10,), (2, 3, 4, 5), (1, 6, 7, 2, 5), ()])
def test_wrong_shapes(shape):
    with pytest.raises(ValueError, match=r"expected a 2-D image \(rows, columns\) or a 3-D volume \(planes, rows, "
                                         r"columns\), with channel_axis for colour"):
        entroscope.entropy(np.zeros(shape, np.uint8))


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0)])
def test_empty(shape):
    with pytest.raises(ValueError, match="is empty"):
        entroscope.quantize(np.zeros(shape, np.uint8))


def test_not_a_buffer():
    with pytest.raises(TypeError, match="expected an image"):
        entroscope.entropy([[1, 2], [3, 4]])
    with pytest.raises(TypeError, match="expected an image"):
        entroscope.entropy(None)


def test_huge_shapes_are_refused_before_allocation():
    """Zero-stride views claim terabytes; they must be refused from the
    shape alone, before any copy or result is allocated."""
    one = np.zeros(1, np.uint8)
    tracemalloc.start()
    try:
        for shape, message in [((1_000_001, 3), "a side is over the limit of 1000000 pixels"),
                               ((3, 2_000_000), "a side is over the limit"),
                               ((100_000, 100_000), "over the limit of 1073741824 pixels"),
                               ((1_000_000, 1_000_000), "over the limit")]:
            huge = as_strided(one, shape=shape, strides=(0, 0))
            start = time.perf_counter()
            with pytest.raises(ValueError, match=message):
                entroscope.entropy(huge)
            assert time.perf_counter() - start < 0.5
            colour = as_strided(one, shape=shape + (3,), strides=(0, 0, 0))
            with pytest.raises(ValueError, match="over the limit"):
                entroscope.equalize(colour, channel_axis=-1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_max_pixels_is_the_cli_budget(rng):
    image = image8(rng, (100, 100))
    before = entroscope.get_max_pixels()
    try:
        entroscope.set_max_pixels(9999)
        with pytest.raises(ValueError, match="100×100 is over the limit of 9999 pixels"):
            entroscope.entropy(image)
        entroscope.set_max_pixels(10000)
        entroscope.entropy(image)
        with pytest.raises(ValueError, match="positive integer"):
            entroscope.set_max_pixels(0)
    finally:
        entroscope.set_max_pixels(before)


def test_samples_above_the_depth_are_refused(rng):
    image = rng.integers(0, 4096, (20, 20), dtype=np.uint16)
    image[7, 9] = 5000
    with pytest.raises(ValueError, match=r"row 7, column 9: sample 5000 does not fit depth 12 \(0\.\.4095\)"):
        entroscope.entropy(image, depth=12)
    with pytest.raises(ValueError, match="depth 9 does not fit uint8 samples"):
        entroscope.entropy(np.zeros((3, 3), np.uint8), depth=9)
    with pytest.raises(ValueError, match="depth 0 is out of range"):
        entroscope.entropy(np.zeros((3, 3), np.uint8), depth=0)


# ---- parameters: the CLI's ranges and messages ---------------------------------


@pytest.mark.parametrize("call,exc,message", [
    (lambda im: entroscope.entropy(im, 4), ValueError, r"^window 4 is out of range: odd, 3\.\.255 \(default 5\)$"),
    (lambda im: entroscope.entropy(im, 257), ValueError, r"^window 257 is out of range"),
    (lambda im: entroscope.entropy(im, 1), ValueError, r"^window 1 is out of range"),
    (lambda im: entroscope.entropy(im, 5.0), TypeError, "window must be an integer, not float"),
    (lambda im: entroscope.entropy(im, True), TypeError, "window must be a number, not bool"),
    (lambda im: entroscope.entropy(im, levels=1), ValueError, r"^levels 1 is out of range: 2\.\.65536 \(default 16\)$"),
    (lambda im: entroscope.entropy(im, levels=65537), ValueError, "levels 65537 is out of range"),
    (lambda im: entroscope.entropy(im, levels=10**30), ValueError, "levels .* is out of range"),
    (lambda im: entroscope.quantize(im, 300), ValueError, "levels 300 is out of range"),
    (lambda im: entroscope.sharpen(im, -0.5), ValueError, r"^amount -0\.5 is out of range: 0\.\.10 \(default 1\)$"),
    (lambda im: entroscope.sharpen(im, 10.5), ValueError, "amount 10.5 is out of range"),
    (lambda im: entroscope.sharpen(im, math.nan), ValueError, "amount nan is out of range"),
    (lambda im: entroscope.sharpen(im, "1"), TypeError, "amount must be a number, not str"),
    (lambda im: entroscope.entropy(im, units="grams"), ValueError, r"units='grams': expected nats, bits or normalized"),
    (lambda im: entroscope.entropy(im, variant="nope"), ValueError, r"variant='nope'"),
    (lambda im: entroscope.equalize(im, window=5), TypeError, "unexpected keyword argument 'window'"),
    (lambda im: entroscope.sharpen(im, units="bits"), TypeError, "unexpected keyword argument 'units'"),
    (lambda im: entroscope.default_engine().entropy(im, 5, 16, 3), TypeError, "at most 3 positional"),
    (lambda im: entroscope.default_engine().entropy(im, 5, window=5), TypeError, "multiple values for argument"),
    (lambda im: entroscope.default_engine().entropy(im, colour=1), TypeError, "unexpected keyword argument 'colour'"),
    (lambda im: entroscope.default_engine().entropy(), TypeError, "missing its image"),
    (lambda im: entroscope.entropy(im, backend="gpu"), ValueError, r"backend='gpu': expected auto, cpu or cuda"),
])
def test_parameter_errors(call, exc, message):
    with pytest.raises(exc, match=message):
        call(np.zeros((8, 8), np.uint8))


def test_numpy_scalars_are_accepted(rng):
    image = image8(rng)
    assert np.array_equal(entroscope.entropy(image, np.int64(7), np.uint16(8)), entroscope.entropy(image, 7, 8))
    assert np.array_equal(entroscope.sharpen(image, np.float32(0.5)), entroscope.sharpen(image, 0.5))


def test_params_table():
    table = entroscope.params()
    assert table["window"]["min"] == 3 and table["window"]["max"] == 255 and table["window"]["odd"]
    assert table["levels"]["default"] == 16
    assert table["amount"]["max"] == 10
    ops = entroscope.ops()
    assert list(ops) == ["quantize", "entropy", "equalize", "sharpen", "clahe"]
    assert ops["entropy"]["params"] == ("window", "levels") and ops["entropy"]["dtype"] == "float32"
    assert entroscope.halo("entropy", window=9) == 4 and entroscope.halo("sharpen") == 1
    assert entroscope.halo("equalize") == 0 and ops["equalize"]["whole_image"]


# ---- out= ---------------------------------------------------------------------


def test_out(rng):
    image = image8(rng)
    out = np.empty(image.shape, np.float32)
    result, timing = entroscope.entropy(image, out=out, return_timing=True)
    assert result is out and not timing.output_copied
    assert np.array_equal(out, entroscope.entropy(image))
    u8 = np.empty(image.shape, np.uint8)
    assert entroscope.equalize(image, out=u8) is u8
    assert np.array_equal(u8, entroscope.equalize(image))


def test_out_non_contiguous(rng):
    image = image8(rng)
    fortran = np.zeros(image.shape, np.float32, order="F")
    result, timing = entroscope.entropy(image, out=fortran, return_timing=True)
    assert result is fortran and timing.output_copied
    assert np.array_equal(fortran, entroscope.entropy(image))
    wide = np.zeros((image.shape[0], image.shape[1] * 2), np.uint8)
    entroscope.sharpen(image, out=wide[:, ::2])
    assert np.array_equal(wide[:, ::2], entroscope.sharpen(image))
    assert not wide[:, 1::2].any()
    rows = np.zeros((image.shape[0] + 4, image.shape[1]), np.uint8)
    _, timing = entroscope.quantize(image, out=rows[2:-2], return_timing=True)
    assert not timing.output_copied and not rows[:2].any() and not rows[-2:].any()


def test_in_place(rng):
    image = image8(rng, (64, 64))
    want = entroscope.sharpen(image, 2.0)
    result, timing = entroscope.sharpen(image, 2.0, out=image, return_timing=True)
    assert result is image and timing.output_copied
    assert np.array_equal(image, want)


@pytest.mark.parametrize("make,exc,message", [
    (lambda s: np.empty(s, np.float64), TypeError, "out= must be a float32 array in native byte order, not float64"),
    (lambda s: np.empty(s, np.uint8), TypeError, "out= must be a float32 array"),
    (lambda s: np.empty((s[0] + 1, s[1]), np.float32), ValueError,
     r"out= has shape \(41, 50\); the result needs \(40, 50\)"),
    (lambda s: np.empty(s, np.dtype(">f4")), TypeError, "byte-swapped"),
    (lambda s: 5, TypeError, "out= must be a writable float32 array, not int"),
])
def test_out_errors(rng, make, exc, message):
    image = image8(rng)
    with pytest.raises(exc, match=message):
        entroscope.entropy(image, out=make(image.shape))


def test_out_read_only(rng):
    image = image8(rng)
    out = np.zeros(image.shape, np.float32)
    out.setflags(write=False)
    with pytest.raises(ValueError, match="out= is read-only"):
        entroscope.entropy(image, out=out)
    assert not out.any()
