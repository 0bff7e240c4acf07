# SPDX-License-Identifier: MIT
"""CLAHE's presets: like='skimage' against scikit-image's equalize_adapthist
(float, within 1e-6) and like='matlab' against the NumPy transcription of
adapthisteq's documentation in matlab_adapthisteq.py (exact), on images of
awkward sizes, 8- and 16-bit (DESIGN.md §1)."""

import numpy as np
import pytest

import entroscope
from matlab_adapthisteq import adapthisteq

exposure = pytest.importorskip("skimage.exposure")

# Sizes that the default kernel (side // 8) and the grids do not divide.
SIZES = [(1, 1), (2, 3), (13, 5), (64, 64), (100, 77), (3, 200), (257, 129)]


def contrasty(rng, shape, dtype):
    """Random samples with a dark half, so that tiles differ."""
    image = rng.integers(0, np.iinfo(dtype).max + 1, shape).astype(dtype)
    image[: shape[0] // 2] //= 3
    return image


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("shape", SIZES)
def test_skimage_within_1e6(rng, shape, dtype):
    image = contrasty(rng, shape, dtype)
    cases = [{}, {"kernel_size": 7, "clip_limit": 0.03, "nbins": 128}, {"kernel_size": (5, 9), "clip_limit": 0.0},
             {"clip_limit": 0.001, "nbins": 1000}]
    for keywords in cases:
        got = entroscope.clahe(image, like="skimage", **keywords)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, exposure.equalize_adapthist(image, **keywords), rtol=0, atol=1e-6,
                                   err_msg=f"{shape} {dtype.__name__} {keywords}")


def test_skimage_tile_grid_sets_the_kernel(rng):
    """tile_grid (columns, rows) gives kernel_size (rows // rows', columns // columns')."""
    image = contrasty(rng, (90, 120), np.uint8)
    got = entroscope.clahe(image, 0.02, (6, 4), like="skimage")
    np.testing.assert_allclose(got, exposure.equalize_adapthist(image, (90 // 4, 120 // 6), 0.02), atol=1e-6)


def test_skimage_test_images(testdata):
    paths = sorted((testdata / "images").glob("*.png"))[:4]
    if not paths:
        pytest.skip(f"no test images under {testdata} (ES_TESTDATA)")
    for path in paths:
        image = np.asarray(entroscope.load(str(path)))
        np.testing.assert_allclose(entroscope.clahe(image, like="skimage"), exposure.equalize_adapthist(image),
                                   atol=1e-6, err_msg=path.name)


def test_skimage_constant_image():
    for value in (0, 1, 200):
        image = np.full((20, 30), value, np.uint8)
        np.testing.assert_allclose(entroscope.clahe(image, like="skimage"), exposure.equalize_adapthist(image),
                                   atol=1e-6)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("shape", SIZES)
def test_matlab_exact(rng, shape, dtype):
    image = contrasty(rng, shape, dtype)
    for (rows, columns), clip, nbins in (((8, 8), 0.01, 256), ((3, 5), 0.2, 64), ((2, 2), 0.0, 256),
                                         ((8, 8), 1.0, 256)):
        got = entroscope.clahe(image, clip, (columns, rows), like="matlab", nbins=nbins)
        assert got.dtype == image.dtype
        np.testing.assert_array_equal(got, adapthisteq(image, (rows, columns), clip, nbins),
                                      err_msg=f"{shape} {dtype.__name__} {rows}x{columns} {clip} {nbins}")


def test_matlab_defaults(rng):
    image = contrasty(rng, (120, 90), np.uint8)
    np.testing.assert_array_equal(entroscope.clahe(image, like="matlab"), adapthisteq(image))


def test_preset_keywords_are_checked():
    image = np.zeros((8, 8), np.uint8)
    with pytest.raises(ValueError, match="expected skimage or matlab"):
        entroscope.clahe(image, like="fiji")
    with pytest.raises(ValueError, match="kernel size"):
        entroscope.clahe(image, like="matlab", kernel_size=3)
    with pytest.raises(ValueError, match="no kernel size"):
        entroscope.clahe(image, kernel_size=3)
    with pytest.raises(TypeError, match="equalize has no like"):
        entroscope.run("equalize", image, like="skimage")
