# SPDX-License-Identifier: MIT
"""entroscope.dask with entropy definitions (DESIGN.md §1): every border mode,
rectangles, disks, footprints, masks, presets and minmax binning, chunk by
chunk on awkward chunk sizes, equal to one entroscope.entropy() of the whole."""

import numpy as np
import pytest

import entroscope

da = pytest.importorskip("dask.array")
edask = pytest.importorskip("entroscope.dask")

BORDERS = ["clip", "symmetric", "mirror", "replicate", "constant:200"]
# Chunks that do not divide the image, smaller than the window's reach in one
# axis (dask merges them), single rows of chunks, one chunk.
CHUNKS = [(7, 9), (13, 40), (61, 11), (8, 83)]


def footprint_of(rng):
    """A lopsided footprint: wider than tall, its corners empty."""
    cells = rng.integers(0, 3, (5, 11)) > 0
    cells[2, 5] = True
    cells[0, 0] = cells[-1, -1] = False
    return cells


def check(image, chunks, **keywords):
    want = entroscope.entropy(image, **keywords)
    got = edask.entropy(da.from_array(image, chunks=chunks), **keywords).compute(scheduler="threads")
    assert got.dtype == np.float32 and got.shape == image.shape
    bad = ~((got == want) | (np.isnan(got) & np.isnan(want)))
    assert not bad.any(), f"{bad.sum()} pixels differ, first at {np.argwhere(bad)[0]}"


@pytest.mark.parametrize("border", BORDERS)
@pytest.mark.parametrize("shape", ["rect", "disk", "footprint"])
def test_every_border_and_shape(rng, border, shape):
    image = rng.integers(0, 256, (61, 83), dtype=np.uint8)
    image[20:40, 30:70] = 17  # flat areas: exact zeros must agree too
    window = {"rect": {"rect": (3, 9)}, "disk": {"disk": 4}, "footprint": {"footprint": footprint_of(rng)}}[shape]
    for chunks in CHUNKS:
        check(image, chunks, border=border, **window)


@pytest.mark.parametrize("border", BORDERS)
def test_windows_wider_than_the_image(rng, border):
    """Windows that reach past the image repeat the border's pattern over the
    whole image (numpy's rule): the axis has to be one chunk."""
    image = rng.integers(0, 256, (19, 45), dtype=np.uint8)
    check(image, (5, 8), rect=(41, 3), border=border)
    check(image, (6, 6), rect=(1, 101), border=border, binning="exact")


def test_masks_numpy_and_dask(rng):
    image = rng.integers(0, 4096, (70, 57), dtype=np.uint16)
    mask = rng.integers(0, 5, image.shape) > 0
    mask[10:25, 5:30] = False  # windows that count nothing: NaN
    for border in BORDERS:
        check(image, (16, 13), mask=mask, disk=3, border=border.replace("200", "3000"), depth=12)
    # A dask mask of other chunks is cut into the image's chunks.
    lazy_mask = da.from_array(mask, chunks=(9, 31))
    want = entroscope.entropy(image, mask=mask, rect=(5, 3), units="normalized")
    got = edask.entropy(da.from_array(image, chunks=(16, 13)), mask=lazy_mask, rect=(5, 3), units="normalized")
    assert np.array_equal(got.compute(), want, equal_nan=True)
    with pytest.raises(ValueError, match="mask of shape"):
        edask.entropy(da.from_array(image), mask=mask[1:])


def test_presets_units_and_whole_image_binning(rng):
    image = rng.integers(0, 65536, (47, 66), dtype=np.uint16)
    image[::7] = 0
    for keywords in ({"like": "matlab"}, {"like": "fiji"}, {"like": "skimage", "disk": 2},
                     {"like": "matlab", "window": 5, "units": "nats"},
                     {"binning": "minmax", "levels": 9, "border": "mirror", "units": "normalized"},
                     {"binning": "range:1000:40000", "levels": 300, "rect": (7, 1), "units": "bits"},
                     {"binning": "byte", "levels": 256, "window": 3}):
        check(image, (10, 17), **keywords)
    # minmax takes the whole image's range, not each chunk's.
    narrow = (image // 64).astype(np.uint16) + 500
    check(narrow, (11, 66), binning="minmax", levels=33)


def test_run_and_errors(rng):
    image = rng.integers(0, 256, (40, 50), dtype=np.uint8)
    array = da.from_array(image, chunks=(9, 11))
    assert np.array_equal(edask.run("entropy", array, disk=3, border="symmetric").compute(),
                          entroscope.run("entropy", image, disk=3, border="symmetric"))
    with pytest.raises(ValueError, match="border='wrap'"):
        edask.entropy(array, border="wrap")
    with pytest.raises(TypeError, match="give one of rect, disk, footprint, box and ball"):
        edask.entropy(array, disk=3, rect=(3, 3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'disk'"):
        edask.run("sharpen", array, disk=3)
